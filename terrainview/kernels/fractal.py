"""Fractal heightmap kernels: diamond-square (2D), midpoint displacement (1D) and the cloud colouring.

Pure numpy/numba, no GL. Each public function validates its arguments and calls a private ``@njit`` kernel.

Determinism: the random offset of a point is a counter-based hash of (seed, the point's position on a fixed
lattice of 2**16 cells per side), never a sequential generator. A point therefore gets the same offset at
every resolution and on every thread, so ``diamond_square(n) == diamond_square(n + 1)[::2, ::2]`` bit for bit
and raising the iterations adds detail to the same terrain.
"""

from __future__ import annotations

import numpy as np
from numba import njit, parallel_chunksize, prange

from terrainview.kernels.kernel_common import (
    LATTICE_BITS,
    MAX_HEIGHT_SCALE,
    MAX_ITERATIONS_2D,
    MAX_SEED,
    check_common,
    check_heightmap,
    check_int,
    free_threads,
    hash32,
    parallel_bands,
    stream_key,
)

__all__ = ["LATTICE_BITS", "MAX_HEIGHT_SCALE", "MAX_ITERATIONS_1D", "MAX_ITERATIONS_2D", "MAX_SEED",
           "cloud_colors", "diamond_square", "diamond_square_passes", "diamond_square_seeded", "half_pass_points",
           "midpoint_1d", "passes_grid_side"]

MAX_ITERATIONS_1D = 16

# Domain constants keep the 1D and 2D offset streams independent for one seed.
_DOMAIN_2D = 0x3C6EF372
_DOMAIN_1D = 0xA54FF53A
# kernel_common.hash_fraction in float32: the same values (24 bits over 2**24 are exact in both), but
# diamond-square's inner loop is 15% faster without the float64 round trip.
_U8 = np.uint32(8)
_QUARTER = np.float32(0.25)
_HALF = np.float32(0.5)
_INV_2_24 = np.float32(1.0 / (1 << 24))


@njit(cache=True, inline="always")
def _offset(index, stream_key, scale):
    """Scale * r for the lattice point index; r uniform in [-0.5, 0.5).

    Two rounds of the hash over (index ^ key): with one, offsets of related lattice points (such as (0, c)
    and (c, 0)) correlate across seeds and the terrain's spread drifts from the original algorithm's.
    """
    bits = hash32(hash32(np.uint32(index ^ stream_key)))
    return (np.float32(np.int32(bits >> _U8)) * _INV_2_24 - _HALF) * scale


@njit(cache=True, inline="always")
def _fill_offsets(offsets, count, stream_key, first_index, index_step, scale):
    """offsets[i] = _offset of lattice point first_index + i * index_step, for i < count."""
    index = np.uint32(first_index)
    step = np.uint32(index_step)
    for i in range(count):
        offsets[i] = _offset(index, stream_key, scale)
        index = np.uint32(index + step)


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
    return np.uint32(((z << lattice_shift) << LATTICE_BITS) + (x << lattice_shift))


# The 2D kernel works level by level: level L is the (2**L + 1)**2 grid of points fixed after L passes, stored
# compactly, and pass L refines it into level L + 1. Fine row 2j / column 2i is coarse row j / column i; the
# fine rows in between hold the diamond centres (odd columns) and square-step points (even columns), and the
# odd columns of even fine rows are square-step points too. Every fine row is written in one contiguous
# sweep from contiguous coarse rows, which LLVM vectorizes (the strided in-place updates of a single array
# did not). Offsets depend only on lattice positions, so level L of diamond_square(n) is diamond_square(L).


@njit(cache=True, inline="always")
def _diamonds(up, down, out, first_index, index_step, stream_key, scale):
    """out[i] = diamond centre of the coarse cell between columns i, i + 1 of coarse rows up and down."""
    up_right, down_right = up[1:], down[1:]  # [i + 1] would keep numba's negative-index check, which blocks SIMD
    index = first_index
    for i in range(out.shape[0]):
        offset = _offset(index, stream_key, scale)
        out[i] = (up[i] + up_right[i] + down[i] + down_right[i]) * _QUARTER + offset
        index = np.uint32(index + index_step)


@njit(cache=True, inline="always")
def _odd_row(row, up, down, diamonds, first_index, index_step, stream_key, scale):
    """The fine row between coarse rows up and down: diamonds at odd columns, square step at even ones.

    The left neighbour of column 0 wraps around to the last diamond; the last column repeats the first.
    """
    cells = diamonds.shape[0]
    offset = _offset(first_index, stream_key, scale)
    row[0] = (diamonds[cells - 1] + diamonds[0] + up[0] + down[0]) * _QUARTER + offset
    row[1] = diamonds[0]
    index = np.uint32(first_index + index_step)
    for i in range(1, cells):
        offset = _offset(index, stream_key, scale)
        row[2 * i] = (diamonds[i - 1] + diamonds[i] + up[i] + down[i]) * _QUARTER + offset
        row[2 * i + 1] = diamonds[i]
        index = np.uint32(index + index_step)
    row[2 * cells] = row[0]


@njit(cache=True, inline="always")
def _even_row(row, coarse_row, diamonds_above, diamonds_below, first_index, index_step, stream_key, scale):
    """The fine row of coarse_row: its values at even columns, the square step at odd ones."""
    cells = diamonds_above.shape[0]
    right = coarse_row[1:]
    index = first_index
    for i in range(cells):
        offset = _offset(index, stream_key, scale)
        row[2 * i] = coarse_row[i]
        row[2 * i + 1] = (coarse_row[i] + right[i] + diamonds_above[i] + diamonds_below[i]) * _QUARTER + offset
        index = np.uint32(index + index_step)
    row[2 * cells] = coarse_row[cells]


@njit(cache=True, nogil=True)
def _refine_rows(coarse, fine, first_row, end_row, scale, stream_key, lattice_shift):
    """Fine rows 2j and 2j + 1 for coarse rows first_row <= j < end_row (not the last fine row).

    Each odd fine row's diamonds serve it and the even rows on both sides; the band's first even row needs
    the diamonds of the odd row above it (the last odd row for row 0), computed once more here.
    """
    cells = coarse.shape[0] - 1
    step = np.uint32(2 << lattice_shift)
    above = np.empty(cells, dtype=np.float32)
    below = np.empty(cells, dtype=np.float32)
    j = first_row - 1 if first_row > 0 else cells - 1
    _diamonds(coarse[j], coarse[j + 1], above, _lattice_index(2 * j + 1, 1, lattice_shift), step, stream_key,
              scale)
    for j in range(first_row, end_row):
        up, down = coarse[j], coarse[j + 1]
        _diamonds(up, down, below, _lattice_index(2 * j + 1, 1, lattice_shift), step, stream_key, scale)
        _odd_row(fine[2 * j + 1], up, down, below, _lattice_index(2 * j + 1, 0, lattice_shift), step, stream_key,
                 scale)
        _even_row(fine[2 * j], up, above, below, _lattice_index(2 * j, 1, lattice_shift), step, stream_key, scale)
        above, below = below, above


@njit(cache=True, nogil=True)
def _diamond_centres(coarse, scale, stream_key, lattice_shift):
    """The diamond step alone of the pass that refines level ``coarse``: centres[j, i] of each coarse cell.

    The same ``_diamonds`` and lattice indices as ``_refine_rows``, so the centres are those the full pass sets.
    """
    cells = coarse.shape[0] - 1
    centres = np.empty((cells, cells), dtype=np.float32)
    step = np.uint32(2 << lattice_shift)
    for j in range(cells):
        _diamonds(coarse[j], coarse[j + 1], centres[j], _lattice_index(2 * j + 1, 1, lattice_shift), step,
                  stream_key, scale)
    return centres


# Levels with fewer coarse rows than this are refined on one thread: a pass in parallel ends at a barrier that
# waits for the other thread to be scheduled (see kernel_common), which only passes of 5 ms or more repay.
_PARALLEL_ROWS = 1024


@njit(cache=True, parallel=True, nogil=True)
def _diamond_square_kernel(heights, coarse, scratch, scales, first_pass, stream_key, bands):
    """Passes first_pass.. of diamond-square: refine coarse (level first_pass) up to heights.

    heights and scratch (the intermediate levels, one after another) come from numpy, which asks Linux for
    huge pages on large arrays; numba's allocator does not, and first-touching 4 KiB pages is several times
    slower (about 25 ms instead of 6 ms for the 67 MB of iterations 12 on two cores).
    """
    used = 0
    for pass_index in range(first_pass, scales.shape[0]):
        if pass_index == scales.shape[0] - 1:
            fine = heights
        else:
            size = (2 << pass_index) + 1
            fine = scratch[used:used + size * size].reshape((size, size))
            used += size * size
        rows = coarse.shape[0] - 1
        lattice_shift = LATTICE_BITS - (pass_index + 1)
        if rows < _PARALLEL_ROWS or bands == 1:
            # np.int64: a literal 0 would compile a second specialization of _refine_rows
            _refine_rows(coarse, fine, np.int64(0), rows, scales[pass_index], stream_key, lattice_shift)
        else:
            for band in prange(bands):
                _refine_rows(coarse, fine, band * rows // bands, (band + 1) * rows // bands,
                             scales[pass_index], stream_key, lattice_shift)
        fine[2 * rows] = fine[0]
        coarse = fine
    return heights


@njit(cache=True, nogil=True)
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


# Serial: one pass over memory, which a second thread does not speed up (0.4 ms for 1025^2 on one core,
# 3 ms on two through the parallel launch).
@njit(cache=True, nogil=True)
def _cloud_colors_kernel(heights, mean):
    rows, columns = heights.shape
    colors = np.empty((rows, columns, 3), dtype=np.float32)
    for z in range(rows):
        for x in range(columns):
            deviation = min(max(heights[z, x] - mean, -0.2), 0.2)
            shade = (deviation + 0.2) * 1.25  # [-0.2, 0.2] -> [0, 0.5]
            colors[z, x, 0] = 0.4 + shade
            colors[z, x, 1] = 0.4 + shade
            colors[z, x, 2] = 0.9
    return colors



def _refine(coarse: np.ndarray, first_pass: int, iterations: int, seed: int, h: float,
            height_scale: float) -> np.ndarray:
    """Run passes first_pass..iterations - 1 on coarse, the level-first_pass grid (checked arguments)."""
    size = (1 << iterations) + 1
    heights = np.empty((size, size), dtype=np.float32)
    scratch = np.empty(sum(((2 << level) + 1) ** 2 for level in range(first_pass, iterations - 1)),
                       dtype=np.float32)
    scales = _pass_scales(iterations, h, height_scale)
    threads = free_threads() if 1 << (iterations - 1) >= _PARALLEL_ROWS else 1
    with parallel_chunksize(1):
        return _diamond_square_kernel(heights, coarse, scratch, scales, first_pass, stream_key(seed, _DOMAIN_2D),
                                      parallel_bands(threads))


def diamond_square(iterations: int, seed: int = 0, h: float = 0.7, height_scale: float = 1.0) -> np.ndarray:
    """Diamond-square heightmap, float32 of shape (2**iterations + 1,) * 2; rows are Z, columns are X.

    Faithful to Martz's fill2DFractArray: corners 0, scale = height_scale * 2**-h before the first pass and
    times 2**-h after each, offsets uniform in [-0.5, 0.5) * scale, square-step neighbours wrapped across
    the edges, last row/column equal to the first.
    """
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    seed, h, height_scale = check_common(seed, h, height_scale)
    return _refine(np.zeros((2, 2), dtype=np.float32), 0, iterations, seed, h, height_scale)


def diamond_square_seeded(coarse: np.ndarray, iterations: int, seed: int = 0, h: float = 0.7,
                          height_scale: float = 1.0) -> np.ndarray:
    """Diamond-square continuing from given first passes, float32 of shape (2**iterations + 1,) * 2.

    coarse, of shape (2**k + 1,) * 2 with 1 <= k <= iterations, holds the points of the first k passes:
    ``result[::2**(iterations - k), ::2**(iterations - k)] == coarse``. Passes k..iterations - 1 then run as in
    diamond_square, with the same offsets and scales (pass p: height_scale * 2**(-h * (p + 1))). The last row
    and column of coarse are replaced by its first ones, so the map stays seamless.
    """
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    seed, h, height_scale = check_common(seed, h, height_scale)
    array = np.asarray(coarse)
    side = array.shape[0] if array.ndim == 2 else 0
    if array.shape != (side, side) or side < 3 or (side - 1) & (side - 2) or side > (1 << iterations) + 1:
        raise ValueError(f"coarse must be a square array of side 2**k + 1 with 1 <= k <= {iterations} "
                         f"(iterations), got shape {array.shape}")
    if array.dtype.kind not in "fiu":
        raise ValueError(f"coarse must hold real numbers, got dtype {array.dtype}")
    grid = np.array(array, dtype=np.float32, order="C")
    if not np.isfinite(grid).all():
        raise ValueError("coarse must hold finite float32 values, got NaN or infinity")
    grid[-1, :] = grid[0, :]
    grid[:, -1] = grid[:, 0]
    passes = (side - 1).bit_length() - 1
    if passes == iterations:
        return grid
    return _refine(grid, passes, iterations, seed, h, height_scale)


def diamond_square_passes(iterations: int, half_passes: int, seed: int = 0, h: float = 0.7,
                          height_scale: float = 1.0) -> np.ndarray:
    """The map after the first ``half_passes`` half-passes of diamond-square (diamond, square, diamond, ...).

    After 2k half-passes it is the level-k grid, ``diamond_square(k)``, which is exactly every 2**(n - k)-th point
    of ``diamond_square(n)`` (0 half-passes: the four corners, drawn as a 3 x 3 grid of zeros). After 2k + 1 it is
    the level-(k + 1) grid with the diamond step of pass k + 1 done: the level-k points, the new cell centres,
    and the square-step points not yet set shown halfway between their two level-k neighbours. So the last
    step, 2 * iterations, is the finished map bit for bit.
    """
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    half_passes = check_int("half_passes", half_passes, 0, 2 * iterations)
    seed, h, height_scale = check_common(seed, h, height_scale)
    full, diamond_step = divmod(half_passes, 2)
    if full == 0 and not diamond_step:
        return np.zeros((3, 3), dtype=np.float32)
    coarse = diamond_square(full, seed, h, height_scale) if full else np.zeros((2, 2), dtype=np.float32)
    if not diamond_step:
        return coarse
    scale = _pass_scales(full + 1, h, height_scale)[full]
    centres = _diamond_centres(coarse, scale, stream_key(seed, _DOMAIN_2D), LATTICE_BITS - (full + 1))
    side = 2 * coarse.shape[0] - 1
    fine = np.empty((side, side), dtype=np.float32)
    fine[::2, ::2] = coarse
    fine[1::2, 1::2] = centres
    fine[::2, 1::2] = (coarse[:, :-1] + coarse[:, 1:]) * _HALF  # square-step points, not set yet
    fine[1::2, ::2] = (coarse[:-1, :] + coarse[1:, :]) * _HALF
    return fine


def passes_grid_side(half_passes: int) -> int:
    """Points per side of ``diamond_square_passes``' grid after ``half_passes`` (3 for the four corners alone)."""
    return (1 << max(1, (half_passes + 1) // 2)) + 1


# Kinds of point half_pass_points returns.
SET_BY_HALF_PASS = 0  # given its value by the latest half-pass
COPIED_ACROSS_EDGE = 1  # a square step's point on row 0 or column 0, copied to the last row or column (wrap)


def half_pass_points(half_passes: int) -> np.ndarray:
    """The points the latest of ``half_passes`` half-passes set, on ``diamond_square_passes``' grid of that count.

    Rows of (column, row, kind), int32. 0 half-passes: the four corners. A diamond step (odd count): the new
    cell centres. A square step (even count): the edge midpoints, whose missing neighbour on an outer edge is
    taken from the opposite side of the map; those on the last row and column are the copies of row 0 and
    column 0 (kind COPIED_ACROSS_EDGE), so the wrap-around shows as a pair of marks on opposite edges.
    """
    half_passes = check_int("half_passes", half_passes, 0, 2 * MAX_ITERATIONS_2D)
    if half_passes == 0:
        corners = np.array([[0, 0], [2, 0], [0, 2], [2, 2]], dtype=np.int32)
        return np.column_stack([corners, np.full(4, SET_BY_HALF_PASS, dtype=np.int32)])
    side = passes_grid_side(half_passes)
    rows, columns = np.mgrid[0:side, 0:side].astype(np.int32)
    centres = (rows % 2 == 1) & (columns % 2 == 1)  # a diamond step's; a square step's are the edge midpoints
    chosen = centres if half_passes % 2 else (rows + columns) % 2 == 1
    copied = (rows == side - 1) | (columns == side - 1)
    kinds = np.where(copied, COPIED_ACROSS_EDGE, SET_BY_HALF_PASS).astype(np.int32)
    return np.column_stack([columns[chosen], rows[chosen], kinds[chosen]])


def midpoint_1d(iterations: int, seed: int = 0, h: float = 0.7, height_scale: float = 1.0) -> np.ndarray:
    """1D midpoint displacement, float32 of length 2**iterations + 1, ends at 0.

    Martz's fill1DFractArray, with the scale reduced once per pass as his article says.
    """
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_1D)
    seed, h, height_scale = check_common(seed, h, height_scale)
    values = np.zeros((1 << iterations) + 1, dtype=np.float32)
    scales = _pass_scales(iterations, h, height_scale)
    return _midpoint_1d_kernel(values, scales, stream_key(seed, _DOMAIN_1D), LATTICE_BITS - iterations)


def cloud_colors(heights: np.ndarray) -> np.ndarray:
    """The original's sky texture from a heightmap: float32 RGB of shape heights.shape + (3,).

    Each value's deviation from the mean is clamped to +-0.2 and mapped to a shade in [0, 0.5];
    red = green = 0.4 + shade, blue = 0.9 (medium blue to white).
    """
    heights = check_heightmap(heights, finite=False)  # colours per value
    return _cloud_colors_kernel(heights, np.float32(heights.mean(dtype=np.float64)))
