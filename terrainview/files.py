"""Safe output files: never overwrite without force, never leave a half-written file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path


class OutputError(Exception):
    """An output path that cannot be written; the message is meant for the user as it is."""


def check_output_path(path: str | os.PathLike, force: bool, extensions: Iterable[str]) -> Path:
    """Validate an output path before any work is done: known extension, writable folder, no clobbering."""
    path = Path(path)
    allowed = tuple(extensions)
    if path.suffix.lower() not in allowed:
        raise OutputError(f"{path}: unknown file type {path.suffix or '(none)'!r}; use one of {', '.join(allowed)}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"{path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: folder {folder} is not writable")
    if path.is_dir():
        raise OutputError(f"{path} is a folder")
    if path.exists() and not force:
        raise OutputError(f"{path} already exists; pass --force to overwrite it")
    return path


@contextlib.contextmanager
def atomic_output(path: Path, force: bool) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it is renamed over ``path``, on failure removed."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(descriptor)
    temporary_path = Path(temporary)
    try:
        yield temporary_path
        if path.exists() and not force:
            raise OutputError(f"{path} appeared while it was being written; pass --force to overwrite it")
        os.chmod(temporary_path, 0o644)
        os.replace(temporary_path, path)
    except BaseException:
        temporary_path.unlink(missing_ok=True)
        raise


def unique_path(folder: Path, stem: str, suffix: str) -> Path:
    """``folder/stem.suffix``, or ``stem-2``, ``stem-3``... when it is taken."""
    candidate = folder / f"{stem}{suffix}"
    counter = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{counter}{suffix}"
        counter += 1
    return candidate
