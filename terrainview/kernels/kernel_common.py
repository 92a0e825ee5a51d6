"""What every numba kernel module shares: the counter-based hash, the lattice, and argument checks.

No GL and no settings here. ``fractal``, ``generators``, ``texturing`` (and any later kernel module) import
these names; each kernel module owns its own limits and raises ``ValueError`` naming the argument.

Determinism: random values are never drawn from a sequential generator. A value is a hash of (a per-seed
stream key, a counter such as a lattice position or an item index), so it is the same on every thread and
at every resolution.
"""

from __future__ import annotations

import math
import numbers
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

# The layer measured and tuned here; TBB and workqueue remain fallbacks where OpenMP is missing.
config.THREADING_LAYER_PRIORITY = ["omp", "tbb", "workqueue"]  # type: ignore[attr-defined]  # set at run time

MAX_SEED = 2**32 - 1
MAX_ITERATIONS_2D = 12
MAX_HEIGHT_SCALE = 100.0
# Every position is expressed on a lattice of 2**LATTICE_BITS cells per side, whatever the resolution.
LATTICE_BITS = 16

# Bands per thread of a parallel loop: enough that a thread kept off its core costs little of the total.
BANDS_PER_THREAD = 8
# Below this much work (nanoseconds on one core, as each call site estimates it) a call runs serially. Every
# parallel region ends at a barrier that waits for the other thread to be scheduled, a millisecond or more on
# a busy machine: only regions of about 20 ms or more repay that for certain. A kernel made of many short
# regions in a row (erosion's droplet phases) may set a lower bar of its own (``run_rows``'s ``min_work``): its
# second thread is then already awake, and a busy machine still gets the serial build (``free_threads``).
PARALLEL_MIN_WORK = 20_000_000

_MIX_1 = np.uint32(0x7FEB352D)
_MIX_2 = np.uint32(0x846CA68B)
_U8 = np.uint32(8)
_U15 = np.uint32(15)
_INV_2_24 = 1.0 / (1 << 24)
_U16 = np.uint32(16)


@njit(cache=True, inline="always")
def hash32(x):
    """A bijective, well-avalanched 32-bit integer hash (Wellons' lowbias32 constants).

    numba widens integer arithmetic to 64 bits, so every step is cast back to uint32 to wrap.
    """
    x = np.uint32(x ^ (x >> _U16))
    x = np.uint32(x * _MIX_1)
    x = np.uint32(x ^ (x >> _U15))
    x = np.uint32(x * _MIX_2)
    return np.uint32(x ^ (x >> _U16))


@njit(cache=True, inline="always")
def hash_fraction(x):
    """A uniform float64 in [0, 1) from ``x``: the top 24 bits of its hash over 2**24."""
    return np.float64(hash32(x) >> _U8) * _INV_2_24


def stream_key(seed: int, domain: int) -> np.uint32:
    """Per-seed key of one random stream.

    The key is a bijection of the seed, so distinct seeds give distinct streams; ``domain`` keeps the streams
    of different kernels independent for one seed.
    """
    return np.uint32(hash32(np.uint32((seed ^ domain) & 0xFFFFFFFF)))


def check_int(name: str, value: object, low: int, high: int) -> int:
    """``value`` as an int, or ValueError naming ``name``, the value and the range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= int(value) <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return int(value)


def check_real(name: str, value: object, low: float, high: float, low_inclusive: bool = True) -> float:
    """``value`` as a finite float in [low, high] (or (low, high]), or ValueError naming it and the range."""
    number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    valid = math.isfinite(number) and (low <= number if low_inclusive else low < number) and number <= high
    if not valid:
        bracket = "[" if low_inclusive else "("
        raise ValueError(f"{name} must be a number in {bracket}{low:g}, {high:g}], got {value!r}")
    return number


def check_heightmap(heights: object, name: str = "heights", *, square: bool = False, grid: bool = False,
                    dtype: type = np.float32, finite: bool = True) -> np.ndarray:
    """``heights`` as a C-contiguous 2D array of finite reals in ``dtype``, or ValueError naming ``name``.

    Every kernel that takes a map checks it here: at least 2 x 2; ``square`` asks for as many rows as columns;
    ``grid`` for diamond-square's grid of 2**n + 1 points per side (n = 1 to ``MAX_ITERATIONS_2D``).
    ``finite=False`` skips the pass over every value, for a kernel that only takes a map's measure (a NaN makes
    no worse a result there, and the pass would cost as much as the kernel).
    """
    array = np.asarray(heights)
    if array.ndim != 2 or min(array.shape) < 2:
        raise ValueError(f"{name} must be a 2D array of at least 2 x 2, got shape {array.shape}")
    cells = array.shape[0] - 1
    if (square or grid) and array.shape[1] != array.shape[0]:
        raise ValueError(f"{name} must be square, got shape {array.shape}")
    if grid and (cells < 2 or cells & (cells - 1) or cells > 1 << MAX_ITERATIONS_2D):
        raise ValueError(f"{name} must have 2**n + 1 points per side (n = 1 to {MAX_ITERATIONS_2D}), got shape "
                         f"{array.shape}")
    if array.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be real numbers, got dtype {array.dtype}")
    array = np.ascontiguousarray(array, dtype=dtype)
    if finite and not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite")
    return array


def check_common(seed: object, h: object, height_scale: object) -> tuple[int, float, float]:
    """The seed, roughness and height scale every surface kernel takes."""
    return (
        check_int("seed", seed, 0, MAX_SEED),
        check_real("h", h, 0.0, 1.0),
        check_real("height_scale", height_scale, 0.0, MAX_HEIGHT_SCALE, low_inclusive=False),
    )


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
