"""terrainview.base.heap: freed memory handed back to the system."""

from __future__ import annotations

import subprocess
import sys

import pytest

from terrainview.base import heap

# A child allocates 320 MiB in 16 KiB blocks (from the heap, not pages of their own), keeps the last one so the
# heap cannot simply shrink from its top, frees the rest and reports its resident memory before and after the
# call.
CHILD = """
import ctypes, ctypes.util, os, sys
from terrainview.base import heap

def resident_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(16384) for _ in range(20481)]
for block in blocks:
    ctypes.memset(block, 1, 16384)
for block in blocks[:-1]:  # the last, above the others, stays
    libc.free(block)
before = resident_mib()
if sys.argv[1] == "give back":
    heap.give_back_freed_memory()
print(before, resident_mib())
"""


@pytest.mark.skipif(heap._malloc_trim() is None or sys.platform != "linux", reason="glibc's malloc_trim only")
@pytest.mark.parametrize("call, least_returned_mib", [("give back", 250.0), ("keep", None)])
def test_freed_heap_pages_go_back_to_the_system(call, least_returned_mib):
    result = subprocess.run([sys.executable, "-c", CHILD, call], capture_output=True, text=True, timeout=60,
                            check=True)
    before, after = map(float, result.stdout.split())
    if least_returned_mib is None:
        assert before - after < 50.0, "without the call the pages stay: the case tests something"
    else:
        assert before - after > least_returned_mib


@pytest.mark.skipif(heap._set_huge_pages is None, reason="numpy has no switch for its huge-page advice")
@pytest.mark.parametrize("numpy_before", [True, False])
def test_small_pages_are_held_by_count_and_numpys_setting_comes_back(numpy_before):
    """Holders nest in any order; the last to let go puts back what numpy had, whatever that was."""
    set_advice = heap._set_huge_pages
    was = set_advice(numpy_before)
    try:
        heap.hold_small_pages(True)
        heap.hold_small_pages(True)
        assert not heap.numpy_huge_pages()
        heap.hold_small_pages(False)
        assert not heap.numpy_huge_pages(), "one holder left"
        heap.hold_small_pages(False)
        assert heap.numpy_huge_pages() is numpy_before
        with pytest.raises(RuntimeError, match="more often than held"):
            heap.hold_small_pages(False)
        assert heap.numpy_huge_pages() is numpy_before
    finally:
        set_advice(was)
