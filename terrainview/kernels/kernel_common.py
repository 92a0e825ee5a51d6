"""What every numba kernel module shares: the compiled hash and the rules for launching a kernel in parallel.

The lattice, the limits and the argument checks, which need no compiler, are ``lattice``'s.

No GL and no settings here. The kernel modules that hash or run in parallel (``fractal_numba``, ``generators``,
``texturing``, ``erosion``, ``lighting``, ``world``) import these names.
"""

from __future__ import annotations

import os

# Parallel kernels share two cores with the renderer's threads and whatever else runs. GNU OpenMP's
# default is to spin at every barrier; called from a non-main thread (the viewer's generation worker)
# with the cores busy, each parallel pass then waits out a scheduler time slice (8 ms), so iterations 8
# took 16 ms instead of 0.08. So: waiting threads sleep (set here, before numba starts its threading
# layer, which reads it once); work is handed out in small chunks so a thread that does get a core takes
# what the other has not started; calls too small to repay waking a second thread run a serial build of
# the same kernel (``row_kernels``, ``run_rows``); and so do calls made while other tasks hold the cores
# (``free_threads``): a second thread would then wait at every barrier for a core, which made iterations 12
# slower on two threads than on one with two busy processes beside it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import types  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from numba import config, get_num_threads, njit, parallel_chunksize  # noqa: E402

from terrainview.kernels.lattice import (  # noqa: E402
    FRACTION_SHIFT,
    HASH_MIX_1,
    HASH_MIX_2,
    HASH_SHIFT_15,
    HASH_SHIFT_16,
    INV_2_24,
    offset_from_bits,
)

# The layer measured and tuned here; TBB and workqueue remain fallbacks where OpenMP is missing.
config.THREADING_LAYER_PRIORITY = ["omp", "tbb", "workqueue"]  # type: ignore[attr-defined]  # set at run time

# Bands per thread of a parallel loop: enough that a thread kept off its core costs little of the total.
BANDS_PER_THREAD = 8
# Below this much work (nanoseconds on one core, as each call site estimates it) a call runs serially. Every
# parallel region ends at a barrier that waits for the other thread to be scheduled, a millisecond or more on
# a busy machine: only regions of about 20 ms or more repay that for certain. A kernel made of many short
# regions in a row (erosion's droplet phases) may set a lower bar of its own (``run_rows``'s ``min_work``): its
# second thread is then already awake, and a busy machine still gets the serial build (``free_threads``).
PARALLEL_MIN_WORK = 20_000_000


@njit(cache=True, inline="always")
def hash32(x):
    """A bijective, well-avalanched 32-bit integer hash (Wellons' lowbias32 constants); lattice.hash32_array in numpy.

    numba widens integer arithmetic to 64 bits, so every step is cast back to uint32 to wrap.
    """
    x = np.uint32(x ^ (x >> HASH_SHIFT_16))
    x = np.uint32(x * HASH_MIX_1)
    x = np.uint32(x ^ (x >> HASH_SHIFT_15))
    x = np.uint32(x * HASH_MIX_2)
    return np.uint32(x ^ (x >> HASH_SHIFT_16))


@njit(cache=True, inline="always")
def hash_fraction(x):
    """A uniform float64 in [0, 1) from ``x``: the top 24 bits of its hash over 2**24."""
    return np.float64(hash32(x) >> FRACTION_SHIFT) * np.float64(INV_2_24)


# lattice.offset_from_bits compiled: a lattice point's offset from its hash, as fractal_numpy computes it on arrays.
scaled_offset = njit(cache=True, inline="always")(offset_from_bits)


def parallel_bands(threads: int) -> int:
    """How many bands a parallel kernel cuts its rows into for ``threads`` numba threads (1: run serially)."""
    return 1 if threads <= 1 else BANDS_PER_THREAD * threads


def row_kernels(function: Callable) -> tuple[Callable, Callable]:
    """A kernel whose outer loop is a ``prange`` over rows, compiled twice: serial and parallel.

    The serial build is a copy under another name, so numba's cache keeps the two apart (its index does not
    tell them apart by their flags). It is not just the parallel one on one thread: that still goes through
    the parallel launch and loses vectorization (cloud colours of 1025^2: 0.4 ms serial, 1.2 ms so).
    """
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__ + "_serial",
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = function.__qualname__ + "_serial"
    return njit(cache=True, nogil=True)(copy), njit(cache=True, nogil=True, parallel=True)(function)


def runnable_tasks() -> int | None:
    """The tasks runnable on the machine at this instant, the caller included (Linux's /proc/loadavg), or None."""
    try:
        with open("/proc/loadavg", "rb") as load:
            return int(load.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def free_threads() -> int:
    """The numba threads a parallel call can use now: those with a core that no other runnable task holds.

    Where the runnable tasks cannot be counted, every numba thread is assumed free.
    """
    threads, runnable = get_num_threads(), runnable_tasks()
    if runnable is None:
        return threads
    idle_cores = (os.cpu_count() or 1) - (runnable - 1)
    return max(1, min(threads, idle_cores))


_every_call_parallel = False  # set by every_call_parallel


@contextmanager
def every_call_parallel() -> Iterator[None]:
    """Within the block, every ``run_rows`` call runs the parallel build, whatever its work and the machine's load.

    Warm-up so compiles the parallel builds, which its tiny maps would otherwise never reach.
    """
    global _every_call_parallel
    _every_call_parallel = True
    try:
        yield
    finally:
        _every_call_parallel = False


def run_rows(kernels: tuple[Callable, Callable], rows: int, work: int, *args: Any,
             min_work: int = PARALLEL_MIN_WORK) -> Any:
    """Run a ``row_kernels`` pair on ``args``, serially or in parallel.

    Serially below ``min_work`` of ``work`` (or with one numba thread free, or one row), else in parallel with the
    ``rows`` handed out in small chunks as threads come free, rather than one fixed half per thread (a thread
    kept off its core would hold up the whole call).
    """
    serial, parallel = kernels
    threads = get_num_threads() if _every_call_parallel else free_threads() if work >= min_work and rows > 1 else 1
    if threads == 1:
        return serial(*args)
    with parallel_chunksize(max(1, rows // parallel_bands(threads))):
        return parallel(*args)
