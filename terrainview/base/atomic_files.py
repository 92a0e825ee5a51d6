"""Safe output files: never overwrite without force, never leave a half-written file behind.

Each output is written to a hidden ``.NAME.terrainview-PID.XXXX.part`` beside it and renamed when complete; a
folder of outputs (a video's frames) is filled as a hidden part folder named the same way. Several files written
together (an OBJ and its companions) are renamed only after every destination has been checked, so they appear
all or none. SIGTERM and SIGHUP remove the parts before the process ends; parts left by a process that is gone
(SIGKILL, a crash) are removed by the next write into the same folder, but only what terrainview alone names so
(the ``terrainview-PID`` marker), and a part folder only while it holds nothing but what terrainview writes
there: another program's ``.notes.2024.v2.part`` is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path


class OutputError(Exception):
    """An output path that cannot be written; the message is meant for the user as it is."""


PART_MARKER = "terrainview"
_PART = re.compile(rf"\..+\.{PART_MARKER}-(\d+)\.[A-Za-z0-9_]+\.part")
# What terrainview writes into a part folder: a video's numbered frames (and their own parts).
PART_FOLDER_ENTRY = re.compile(r"frame-\d+\.png")
# the signals that end a writer, removing its parts first
CLEANUP_SIGNALS = (signal.SIGTERM, signal.SIGHUP) if hasattr(signal, "SIGHUP") else (signal.SIGTERM,)
_live_parts: set[Path] = set()
_previous_handlers: dict[int, object] = {}
_lock = threading.Lock()


def check_output_path(path: str | os.PathLike, force: bool, extensions: Iterable[str], role: str = "") -> Path:
    """Validate an output path before any work is done: known extension, writable folder, no clobbering.

    ``role`` says what the file is for in messages about it (``the texture of X.obj``).
    """
    path = Path(path)
    allowed = tuple(extensions)
    if path.suffix.lower() not in allowed:
        raise OutputError(f"{path}: unknown file type {path.suffix or '(none)'!r}; use one of {', '.join(allowed)}")
    check_output_parent(path)
    if path.is_dir():
        raise OutputError(f"{path} is a folder")
    if os.path.lexists(path) and not force:  # a dangling symlink is an existing file too
        raise OutputError(f"{path}{_role(role)} already exists; pass --force to overwrite it")
    return path


def check_output_parent(path: Path) -> None:
    """The folder that ``path`` (a file or a folder to write) goes into exists and is writable."""
    folder = path.parent
    if not folder.is_dir():
        raise OutputError(f"{path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: folder {folder} is not writable")


def _role(role: str) -> str:
    return f" ({role})" if role else ""


def check_free_space(path: Path, needed: int) -> None:
    """Refuse up front, in one line with the size, an output the disk cannot hold."""
    folder = path.parent
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise OutputError(f"{path}: needs about {_size(needed)} but {folder} has {_size(free)} free")


def _size(count: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} TB"


@contextlib.contextmanager
def atomic_outputs(paths: Mapping[Path, str], force: bool) -> Iterator[dict[Path, Path]]:
    """Yield {final path: temporary path} for files written together (path -> its role, '' for the main one).

    On success every destination is checked before any is renamed, so they all appear or none does; on
    failure (or a signal) the temporary files are removed. A replaced file keeps its mode; a new one gets
    the umask's.
    """
    finals = list(paths)
    temporaries: dict[Path, Path] = {}
    try:
        for final in finals:
            remove_stale_parts(final.parent)
            temporaries[final] = _new_part(final)
        try:
            yield temporaries
        except OSError as error:
            raise _naming_the_file(error, temporaries) from None
        for final in finals:  # all destinations first: nothing is renamed when one is taken
            if os.path.lexists(final) and not force:
                raise OutputError(f"{final}{_role(paths[final])} appeared while it was being written; "
                                  "pass --force to overwrite it")
        for final in finals:
            os.chmod(temporaries[final], _mode_for(final, 0o666))
        for final in finals:
            os.replace(temporaries[final], final)
            _forget(temporaries[final])
    finally:
        for temporary in temporaries.values():
            temporary.unlink(missing_ok=True)
            _forget(temporary)


@contextlib.contextmanager
def atomic_output(path: Path, force: bool) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it is renamed over ``path``, on failure removed."""
    with atomic_outputs({path: ""}, force) as temporaries:
        yield temporaries[path]


@contextlib.contextmanager
def atomic_folder(folder: Path, force: bool) -> Iterator[Path]:
    """Yield a hidden part folder beside ``folder`` to fill; on success it becomes ``folder``, on failure it goes.

    An empty ``folder`` is replaced, keeping its mode (a new one gets the umask's). One that holds files (which
    only ``force`` allows) receives the new files instead, replacing those of the same names.
    """
    remove_stale_parts(folder.parent)
    temporary = _new_part(folder, is_folder=True)
    try:
        try:
            yield temporary
        except OSError as error:  # a full disk, say: named by the folder asked for, not the hidden part folder
            raise OutputError(f"{folder}: not written: {error.strerror or error}") from None
        mode = _mode_for(folder, 0o777)
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        if not folder.exists():
            os.chmod(temporary, mode)
            os.replace(temporary, folder)
        elif not force:
            raise OutputError(f"{folder} filled up while it was being written; pass --force to write into it")
        else:
            for entry in sorted(temporary.iterdir()):
                os.replace(entry, folder / entry.name)
    finally:
        _remove_part(temporary)
        _forget(temporary)


def _naming_the_file(error: OSError, temporaries: dict[Path, Path]) -> OSError | OutputError:
    """A write error (a full disk, say) reported with the file being written, not its temporary name."""
    by_temporary = {str(temporary): final for final, temporary in temporaries.items()}
    final = by_temporary.get(str(error.filename)) if error.filename else None
    if final is None and len(temporaries) == 1:
        final = next(iter(temporaries))
    if final is None:  # a write to an open file does not say which: name them all
        final = Path(", ".join(str(path) for path in temporaries))
    return OutputError(f"{final}: not written: {error.strerror or error}")


def _mode_for(final: Path, new: int) -> int:
    """The mode of the file or folder being replaced, else ``new`` (0o666, 0o777) under the current umask."""
    try:
        return os.stat(final).st_mode & 0o7777
    except OSError:
        return new & ~_umask()


def _umask() -> int:
    try:  # Linux says it without changing it (the os.umask round trip races with other threads)
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _new_part(final: Path, is_folder: bool = False) -> Path:
    """A new hidden part file (or folder) beside ``final``, named with this process so that it can be told stale."""
    prefix = f".{final.name}.{PART_MARKER}-{os.getpid()}."
    if is_folder:
        part = Path(tempfile.mkdtemp(dir=final.parent, prefix=prefix, suffix=".part"))
    else:
        descriptor, name = tempfile.mkstemp(dir=final.parent, prefix=prefix, suffix=".part")
        os.close(descriptor)
        part = Path(name)
    with _lock:
        _live_parts.add(part)
        _install_signal_handlers()
    return part


def _forget(part: Path) -> None:
    with _lock:
        _live_parts.discard(part)
        if not _live_parts:
            _restore_signal_handlers()


def remove_stale_parts(folder: Path) -> None:
    """Remove the parts terrainview left in ``folder`` when it was killed while writing.

    A part is named ``.NAME.terrainview-PID.XXXX.part`` by a process that is gone; a part folder goes only while
    it holds nothing but frames and parts, so whatever else someone put there stays.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = _PART.fullmatch(entry.name)
        if not match or _process_alive(int(match[1])):
            continue
        if entry.is_dir(follow_symlinks=False) and not _only_ours(Path(entry.path)):
            continue
        _remove_part(Path(entry.path))


def _only_ours(part_folder: Path) -> bool:
    """Whether a part folder holds only regular files terrainview writes there (frames and their parts)."""
    try:
        entries = list(os.scandir(part_folder))
    except OSError:
        return False
    return all(entry.is_file(follow_symlinks=False)
               and (PART_FOLDER_ENTRY.fullmatch(entry.name) or _PART.fullmatch(entry.name)) for entry in entries)


def _remove_part(part: Path) -> None:
    """Remove a part file, or a part folder with all it holds (never following a link); gone already is fine."""
    if part.is_dir() and not part.is_symlink():
        shutil.rmtree(part, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            part.unlink()


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or a number we cannot ask about): leave its file alone
    return True


def _install_signal_handlers() -> None:
    if _previous_handlers or threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; the window writes there too
    for number in CLEANUP_SIGNALS:
        if signal.getsignal(number) != signal.SIG_IGN:  # under nohup a hangup must not take the parts away
            _previous_handlers[number] = signal.signal(number, _remove_parts_and_resignal)


def _restore_signal_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for number, handler in _previous_handlers.items():
        signal.signal(number, handler)  # type: ignore[arg-type]
    _previous_handlers.clear()


def _remove_parts_and_resignal(number: int, frame) -> None:
    """SIGTERM/SIGHUP while writing: remove the parts, then end as the signal would have."""
    for part in list(_live_parts):
        _remove_part(part)
    previous = _previous_handlers.get(number, signal.SIG_DFL)
    if callable(previous):
        previous(number, frame)
        return
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)


def timestamped_path(folder: Path, prefix: str, suffix: str, tail: str = "") -> Path:
    """A new ``folder/PREFIXyyyymmdd-hhmmssTAIL.suffix`` (numbered when taken): screenshots, scenes, flights."""
    return unique_path(folder, f"{prefix}{datetime.now():%Y%m%d-%H%M%S}{tail}", suffix)


def unique_path(folder: Path, stem: str, suffix: str) -> Path:
    """``folder/stem.suffix``, or ``stem-2``, ``stem-3``... when it is taken."""
    candidate = folder / f"{stem}{suffix}"
    counter = 2
    while os.path.lexists(candidate):
        candidate = folder / f"{stem}-{counter}{suffix}"
        counter += 1
    return candidate
