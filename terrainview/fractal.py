"""Fractal heightmap kernels: diamond-square (2D), midpoint displacement (1D) and the cloud colouring.

Pure numpy/numba, no GL. Each public function validates its arguments and calls a private ``@njit`` kernel.

Determinism: the random offset of a point is a counter-based hash of (seed, the point's position on a fixed
lattice of 2**16 cells per side), never a sequential generator. A point therefore gets the same offset at
every resolution and on every thread, so ``diamond_square(n) == diamond_square(n + 1)[::2, ::2]`` bit for bit
and raising the iterations adds detail to the same terrain.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numba import get_num_threads, njit, prange

MAX_ITERATIONS_2D = 12
MAX_ITERATIONS_1D = 16
MAX_SEED = 2**32 - 1
MAX_HEIGHT_SCALE = 100.0

# Every position is expressed on a lattice of 2**LATTICE_BITS cells per side, whatever the resolution.
LATTICE_BITS = 16

# Domain constants keep the 1D and 2D offset streams independent for one seed.
_DOMAIN_2D = 0x3C6EF372
_DOMAIN_1D = 0xA54FF53A
_MIX_1 = np.uint32(0x7FEB352D)
_MIX_2 = np.uint32(0x846CA68B)
_U8 = np.uint32(8)
_U15 = np.uint32(15)
_U16 = np.uint32(16)
_QUARTER = np.float32(0.25)
_HALF = np.float32(0.5)
_INV_2_24 = np.float32(1.0 / (1 << 24))


@njit(cache=True, inline="always")
def _hash32(x):
    """A bijective, well-avalanched 32-bit integer hash (Wellons' lowbias32 constants).

    numba widens integer arithmetic to 64 bits, so every step is cast back to uint32 to wrap.
    """
    x = np.uint32(x ^ (x >> _U16))
    x = np.uint32(x * _MIX_1)
    x = np.uint32(x ^ (x >> _U15))
    x = np.uint32(x * _MIX_2)
    return np.uint32(x ^ (x >> _U16))


def _stream_key(seed: int, domain: int) -> np.uint32:
    """Per-seed key of one offset stream: a bijection of the seed, so distinct seeds give distinct streams."""
    return np.uint32(_hash32(np.uint32(seed ^ domain)))


@njit(cache=True, inline="always")
def _fill_offsets(offsets, count, stream_key, first_index, index_step, scale):
    """offsets[i] = scale * r for lattice points first_index + i * index_step; r uniform in [-0.5, 0.5).

    One round of the hash over (index ^ key) is enough because the key is itself a full hash of the seed.
    A contiguous loop of 32-bit integer arithmetic, so LLVM vectorizes it.
    """
    index = np.uint32(first_index)
    step = np.uint32(index_step)
    for i in range(count):
        bits = _hash32(np.uint32(index ^ stream_key))
        index = np.uint32(index + step)
        offsets[i] = (np.float32(np.int32(bits >> _U8)) * _INV_2_24 - _HALF) * scale


def _pass_scales(iterations: int, h: float, height_scale: float) -> np.ndarray:
    """Displacement scale of each pass: height_scale * 2**-h before the first, times 2**-h after each.

    The product is accumulated the same way for every total iteration count, so pass k has the same scale
    at every resolution (needed for the bit-exact resolution consistency).
    """
    ratio = 2.0 ** (-h)
    scales = np.empty(iterations, dtype=np.float32)
    scale = height_scale * ratio
    for index in range(iterations):
        scales[index] = scale
        scale *= ratio
    return scales


@njit(cache=True, inline="always")
def _lattice_index(z, x, lattice_shift):
    return ((z << lattice_shift) << LATTICE_BITS) + (x << lattice_shift)


@njit(cache=True, inline="always")
def _diamond_row(heights, z, stride, scale, stream_key, lattice_shift, offsets):
    """Diamond step on row z: every square centre = mean of its four corners + offset."""
    last = heights.shape[0] - 1
    above, row, below = heights[z - stride], heights[z], heights[z + stride]
    count = last // (2 * stride)
    _fill_offsets(offsets, count, stream_key, _lattice_index(z, stride, lattice_shift),
                  (2 * stride) << lattice_shift, scale)
    for i in range(count):
        x = stride + 2 * stride * i
        row[x] = (above[x - stride] + above[x + stride] + below[x - stride] + below[x + stride]) * _QUARTER + offsets[i]


@njit(cache=True, inline="always")
def _square_row(heights, z, stride, scale, stream_key, lattice_shift, offsets):
    """Square step on row z: every diamond centre = mean of its four neighbours + offset.

    Neighbours beyond an edge come from the opposite side (the last row/column repeats the first, so the
    opposite neighbour sits at last - stride); values on column 0 / row 0 are copied to the last ones.
    """
    last = heights.shape[0] - 1
    above = heights[z - stride] if z > 0 else heights[last - stride]
    row, below = heights[z], heights[z + stride]
    first = stride if (z // stride) % 2 == 0 else 0
    count = last // (2 * stride)
    _fill_offsets(offsets, count, stream_key, _lattice_index(z, first, lattice_shift),
                  (2 * stride) << lattice_shift, scale)
    start = 0
    if first == 0:  # column 0: the left neighbour wraps around
        row[0] = (row[last - stride] + row[stride] + above[0] + below[0]) * _QUARTER + offsets[0]
        row[last] = row[0]
        start = 1
    for i in range(start, count):
        x = first + 2 * stride * i
        row[x] = (row[x - stride] + row[x + stride] + above[x] + below[x]) * _QUARTER + offsets[i]
    if z == 0:
        heights[last, first:last:2 * stride] = row[first:last:2 * stride]


@njit(cache=True, parallel=True)
def _diamond_square_kernel(heights, scales, stream_key, lattice_shift, threads):
    """All passes, each as one sweep down the rows per thread band, so neighbouring rows stay in cache.

    Within a band, for each odd row (odd multiple of stride): its diamond step, its square step, then the
    square step of the even row above it, whose neighbours are now both done. The first even row of each
    band needs the previous band's last odd row, so those rows are finished after the bands (row 0 wraps
    to the last band). No point reads a value written in the same sweep by another band.
    """
    last = heights.shape[0] - 1
    stride = last // 2
    for pass_index in range(scales.shape[0]):
        scale = scales[pass_index]
        odd_rows = last // (2 * stride)
        bands = min(odd_rows, threads)
        for band in prange(bands):
            offsets = np.empty(odd_rows, dtype=np.float32)
            first_k, end_k = band * odd_rows // bands, (band + 1) * odd_rows // bands
            for k in range(first_k, end_k):
                z = (2 * k + 1) * stride
                _diamond_row(heights, z, stride, scale, stream_key, lattice_shift, offsets)
                _square_row(heights, z, stride, scale, stream_key, lattice_shift, offsets)
                if k > first_k:
                    _square_row(heights, z - stride, stride, scale, stream_key, lattice_shift, offsets)
        for band in prange(bands):
            offsets = np.empty(odd_rows, dtype=np.float32)
            z = 2 * (band * odd_rows // bands) * stride
            _square_row(heights, z, stride, scale, stream_key, lattice_shift, offsets)
        stride //= 2
    return heights


@njit(cache=True)
def _midpoint_1d_kernel(values, scales, stream_key, lattice_shift):
    last = values.shape[0] - 1
    stride = last // 2
    offsets = np.empty(last // 2, dtype=np.float32)
    for pass_index in range(scales.shape[0]):
        count = last // (2 * stride)
        _fill_offsets(offsets, count, stream_key, stride << lattice_shift, (2 * stride) << lattice_shift,
                      scales[pass_index])
        for i in range(count):
            x = stride + 2 * stride * i
            values[x] = (values[x - stride] + values[x + stride]) * _HALF + offsets[i]
        stride //= 2
    return values


@njit(cache=True, parallel=True)
def _cloud_colors_kernel(heights, mean):
    rows, columns = heights.shape
    colors = np.empty((rows, columns, 3), dtype=np.float32)
    for z in prange(rows):
        for x in range(columns):
            deviation = min(max(heights[z, x] - mean, -0.2), 0.2)
            shade = (deviation + 0.2) * 1.25  # [-0.2, 0.2] -> [0, 0.5]
            colors[z, x, 0] = 0.4 + shade
            colors[z, x, 1] = 0.4 + shade
            colors[z, x, 2] = 0.9
    return colors


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return int(value)


def _check_real(name: str, value: object, low: float, high: float, low_inclusive: bool = True) -> float:
    valid = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if valid:
        valid = (low <= value if low_inclusive else low < value) and value <= high
    if not valid:
        bracket = "[" if low_inclusive else "("
        raise ValueError(f"{name} must be a number in {bracket}{low:g}, {high:g}], got {value!r}")
    return float(value)


def _check_common(seed: object, h: object, height_scale: object) -> tuple[int, float, float]:
    return (
        _check_int("seed", seed, 0, MAX_SEED),
        _check_real("h", h, 0.0, 1.0),
        _check_real("height_scale", height_scale, 0.0, MAX_HEIGHT_SCALE, low_inclusive=False),
    )


def diamond_square(iterations: int, seed: int = 0, h: float = 0.7, height_scale: float = 1.0) -> np.ndarray:
    """Diamond-square heightmap, float32 of shape (2**iterations + 1,) * 2; rows are Z, columns are X.

    Faithful to Martz's fill2DFractArray: corners 0, scale = height_scale * 2**-h before the first pass and
    times 2**-h after each, offsets uniform in [-0.5, 0.5) * scale, square-step neighbours wrapped across
    the edges, last row/column equal to the first.
    """
    iterations = _check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    seed, h, height_scale = _check_common(seed, h, height_scale)
    size = (1 << iterations) + 1
    heights = np.zeros((size, size), dtype=np.float32)
    scales = _pass_scales(iterations, h, height_scale)
    return _diamond_square_kernel(
        heights, scales, _stream_key(seed, _DOMAIN_2D), LATTICE_BITS - iterations, get_num_threads()
    )


def midpoint_1d(iterations: int, seed: int = 0, h: float = 0.7, height_scale: float = 1.0) -> np.ndarray:
    """1D midpoint displacement, float32 of length 2**iterations + 1, ends at 0 (Martz's fill1DFractArray,
    with the scale reduced once per pass as his article says)."""
    iterations = _check_int("iterations", iterations, 1, MAX_ITERATIONS_1D)
    seed, h, height_scale = _check_common(seed, h, height_scale)
    values = np.zeros((1 << iterations) + 1, dtype=np.float32)
    scales = _pass_scales(iterations, h, height_scale)
    return _midpoint_1d_kernel(values, scales, _stream_key(seed, _DOMAIN_1D), LATTICE_BITS - iterations)


def cloud_colors(heights: np.ndarray) -> np.ndarray:
    """The original's sky texture from a heightmap: float32 RGB of shape heights.shape + (3,).

    Each value's deviation from the mean is clamped to +-0.2 and mapped to a shade in [0, 0.5];
    red = green = 0.4 + shade, blue = 0.9 (medium blue to white).
    """
    heights = np.asarray(heights)
    if heights.ndim != 2 or heights.size == 0:
        raise ValueError(f"heights must be a non-empty 2D array, got shape {heights.shape}")
    heights = np.ascontiguousarray(heights, dtype=np.float32)
    return _cloud_colors_kernel(heights, np.float32(heights.mean(dtype=np.float64)))
