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


class _SmallPageHolders:
    """How many want small pages (``hold_small_pages``), and numpy's setting before the first did."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.huge_before = True


_small_page_holders = _SmallPageHolders()


def hold_small_pages(held: bool) -> None:
    """One holder more (``held``) or one fewer wanting numpy's large arrays in small pages; as before once none does.

    numpy asks Linux for huge pages (2 MiB) for arrays of 4 MiB and more, which makes first touching a new map about
    four times cheaper (fractal_numba), but Linux then zeroes each huge page at its first touch as one piece of
    work. Where Linux gives huge pages only to memory that asks for them (transparent_hugepage "madvise"), new arrays
    then come in small pages (memory asked before keeps its advice). Where numpy has no such switch, nothing changes.
    """
    switch = _numpy_switches()
    if switch is None:
        return
    holders = _small_page_holders
    with holders.lock:
        if held:
            holders.count += 1
            if holders.count == 1:
                holders.huge_before = bool(switch[1](False))
        else:
            if holders.count == 0:
                raise RuntimeError("small pages let go of more often than held")
            holders.count -= 1
            if holders.count == 0:
                switch[1](holders.huge_before)


def numpy_huge_pages() -> bool:
    """Whether numpy asks Linux for huge pages for the large arrays it allocates now (False where it cannot)."""
    switch = _numpy_switches()
    return switch is not None and bool(switch[0]())


@functools.cache
def _numpy_switches() -> tuple[Callable[[], bool], Callable[[bool], bool]] | None:
    """The read and the set of numpy's huge-page advice, or None where it has none."""
    read = getattr(multiarray, "_get_madvise_hugepage", None)
    write = getattr(multiarray, "_set_madvise_hugepage", None)
    return None if read is None or write is None else (read, write)


def freeze_what_starting_made() -> None:
    """Collect once, then put every object alive out of the garbage collector's reach (gc.freeze).

    What starting made (the imports alone are 95,000 objects, kept all session) is walked by every full
    collection: 60 ms on two cores, within a frame, a frame over 50 ms now and then while flying. The window calls
    this once its first frame is drawn; the bench's flight does what the window does.
    """
    gc.collect()
    gc.freeze()
