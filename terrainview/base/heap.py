"""The process's memory: freed pages handed back, numpy's huge pages, long-lived objects out of the collector's way."""

from __future__ import annotations

import ctypes
import functools
import gc
import threading
from collections.abc import Callable

try:
    from numpy._core import multiarray  # numpy 2
except ImportError:
    from numpy.core import multiarray  # type: ignore[no-redef]  # numpy 1.26


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


# numpy's huge-page advice: its read and its set (None where numpy has none)
_read_huge_pages: Callable[[], bool] | None = getattr(multiarray, "_get_madvise_hugepage", None)
_set_huge_pages: Callable[[bool], bool] | None = getattr(multiarray, "_set_madvise_hugepage", None)

_small_pages_lock = threading.Lock()
_small_page_holders = 0  # how many want small pages (hold_small_pages)
_huge_pages_before = False  # numpy's setting as the first of them came


def hold_small_pages(held: bool) -> None:
    """One holder more (``held``) or one fewer wanting numpy's large arrays in small pages; as before once none does.

    numpy asks Linux for huge pages (2 MiB) for arrays of 4 MiB and more, which makes first touching a new map about
    four times cheaper (fractal_numba), but Linux then zeroes each huge page at its first touch as one piece of
    work. Where Linux gives huge pages only to memory that asks for them (transparent_hugepage "madvise"), new arrays
    then come in small pages (memory asked before keeps its advice). Where numpy has no such switch, nothing changes.
    """
    global _small_page_holders, _huge_pages_before
    if _set_huge_pages is None:
        return
    with _small_pages_lock:
        if held:
            _small_page_holders += 1
            if _small_page_holders == 1:
                _huge_pages_before = bool(_set_huge_pages(False))
        else:
            if _small_page_holders == 0:
                raise RuntimeError("small pages let go of more often than held")
            _small_page_holders -= 1
            if _small_page_holders == 0:
                _set_huge_pages(_huge_pages_before)


def numpy_huge_pages() -> bool:
    """Whether numpy asks Linux for huge pages for the large arrays it allocates now (False where it cannot)."""
    return _read_huge_pages is not None and bool(_read_huge_pages())


def freeze_what_starting_made() -> None:
    """Collect once, then put every object alive out of the garbage collector's reach (gc.freeze).

    What starting made (the imports alone are 95,000 objects, kept all session) is walked by every full
    collection: 60 ms on two cores, within a frame, a frame over 50 ms now and then while flying. The window calls
    this once its first frame is drawn; the bench's flight does what the window does.
    """
    gc.collect()
    gc.freeze()
