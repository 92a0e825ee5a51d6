"""The process's memory: freed pages handed back, numpy's huge pages, long-lived objects out of the collector's way."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import importlib
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's malloc_trim (glibc's), or None where it has none (musl, macOS, Windows)."""
    try:
        return ctypes.CDLL(None).malloc_trim  # the process's own symbols, the C library's among them
    except (OSError, AttributeError, TypeError):  # TypeError: no process symbols to open (Windows)
        return None


def give_back_freed_memory() -> None:
    """Return the C heap's free pages to the system, where the C library can.

    Large maps and textures freed by the renderer's driver and the worker threads leave their pages in the heap
    (glibc serves blocks of a size it has seen freed from the heap, not from pages of their own): leaving the
    endless world after a minute's flight at iterations 10 kept about 280 MiB of the process that it no longer
    used.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def use_huge_pages(enabled: bool) -> bool:
    """Whether numpy asks Linux for huge pages for the large arrays it allocates from now on; returns the last setting.

    numpy does by default (4 MiB and larger), which makes first touching a new map several times cheaper, but Linux
    then zeroes each 2 MiB page at its first touch as one piece of work. Where numpy has no such switch, nothing
    changes (and True is returned).
    """
    switch = _numpy_huge_page_switch()
    return True if switch is None else bool(switch(enabled))


@functools.cache
def _numpy_huge_page_switch() -> Callable[[bool], bool] | None:
    """The switch numpy has for it (``_set_madvise_hugepage``, in numpy 2's module or 1.26's), or None."""
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        with contextlib.suppress(ImportError):
            return getattr(importlib.import_module(module), "_set_madvise_hugepage", None)
    return None


def freeze_what_starting_made() -> None:
    """Collect once, then put every object alive out of the garbage collector's reach (gc.freeze).

    What starting made (the imports alone are 95,000 objects, kept all session) is walked by every full
    collection: 60 ms on two cores, within a frame, a frame over 50 ms now and then while flying. The window calls
    this once its first frame is drawn; the bench's flight does what the window does.
    """
    gc.collect()
    gc.freeze()
