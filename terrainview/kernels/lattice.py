"""What the kernels share that needs no compiler: the lattice and its hash, the limits, the argument checks.

Importing numba takes about 0.4 s; this module imports only numpy, so a public function can check its arguments
and derive its random streams before (or without) loading any compiled kernel. The compiled side of the same
hash, and the parallel launch rules, are ``kernel_common``'s. Each kernel module owns its own limits and raises
``ValueError`` naming the argument, through the checks here.

Determinism: random values are never drawn from a sequential generator. A value is a hash of (a per-seed
stream key, a counter such as a lattice position or an item index), so it is the same on every thread and
at every resolution.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

MAX_SEED = 2**32 - 1
MAX_ITERATIONS_2D = 12
MAX_HEIGHT_SCALE = 100.0
# Every position is expressed on a lattice of 2**LATTICE_BITS cells per side, whatever the resolution.
LATTICE_BITS = 16

# Wellons' lowbias32 multipliers, shared by the compiled hash (kernel_common.hash32) and hash32_array.
HASH_MIX_1 = np.uint32(0x7FEB352D)
HASH_MIX_2 = np.uint32(0x846CA68B)
HASH_SHIFT_15 = np.uint32(15)
HASH_SHIFT_16 = np.uint32(16)
# A hash's top 24 bits as a fraction: (hash >> 8) / 2**24, exact in float32 (and float64).
FRACTION_SHIFT = np.uint32(8)
INV_2_24 = np.float32(1.0 / (1 << 24))
# Diamond-square's averages in float32, shared by its numba and numpy builds so they agree bit for bit.
QUARTER = np.float32(0.25)
HALF = np.float32(0.5)


def hash32_array(values: np.ndarray) -> np.ndarray:
    """kernel_common.hash32 of every element of a uint32 array, in numpy (uint32 arithmetic wraps)."""
    hashed = values ^ (values >> HASH_SHIFT_16)
    hashed *= HASH_MIX_1
    hashed ^= hashed >> HASH_SHIFT_15
    hashed *= HASH_MIX_2
    hashed ^= hashed >> HASH_SHIFT_16
    return hashed


def offset_from_bits(bits, scale):
    """Scale * r, r uniform in [-0.5, 0.5) from the top 24 bits of the hash ``bits``: a lattice point's offset.

    In float32 (diamond-square's inner loop is 15% faster without a float64 round trip), for one uint32 or a
    whole array of them: fractal_numpy calls it on arrays, and the compiled kernels inline this same function
    (``kernel_common.scaled_offset``), so both builds' maps agree bit for bit.
    """
    return (np.float32(np.int32(bits >> FRACTION_SHIFT)) * INV_2_24 - HALF) * scale


def stream_key(seed: int, domain: int) -> np.uint32:
    """Per-seed key of one random stream.

    The key is a bijection of the seed, so distinct seeds give distinct streams; ``domain`` keeps the streams
    of different kernels independent for one seed.
    """
    return np.uint32(hash32_array(np.array([(seed ^ domain) & 0xFFFFFFFF], dtype=np.uint32))[0])


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
