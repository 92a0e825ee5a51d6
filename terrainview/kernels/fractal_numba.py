"""The numba builds of the fractal kernels: diamond-square's passes, midpoint displacement, cloud colours.

``fractal`` imports it on first use (importing numba takes about 0.4 s; the scene's catalog names it for the
warm-up). Its functions take checked arguments: call them through ``fractal``'s public functions.
"""

from __future__ import annotations

import numpy as np
from numba import njit, parallel_chunksize, prange

from terrainview.kernels.kernel_common import free_threads, hash32, parallel_bands, scaled_offset
from terrainview.kernels.lattice import HALF, LATTICE_BITS, QUARTER


@njit(cache=True, inline="always")
def _offset(index, stream_key, scale):
    """Scale * r for the lattice point index; r uniform in [-0.5, 0.5).

    Two rounds of the hash over (index ^ key): with one, offsets of related lattice points (such as (0, c)
    and (c, 0)) correlate across seeds and the terrain's spread drifts from the original algorithm's.
    """
    return scaled_offset(hash32(hash32(np.uint32(index ^ stream_key))), scale)


@njit(cache=True, inline="always")
def _fill_offsets(offsets, count, stream_key, first_index, index_step, scale):
    """offsets[i] = _offset of lattice point first_index + i * index_step, for i < count."""
    index = np.uint32(first_index)
    step = np.uint32(index_step)
    for i in range(count):
        offsets[i] = _offset(index, stream_key, scale)
        index = np.uint32(index + step)


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
        out[i] = (up[i] + up_right[i] + down[i] + down_right[i]) * QUARTER + offset
        index = np.uint32(index + index_step)


@njit(cache=True, inline="always")
def _odd_row(row, up, down, diamonds, first_index, index_step, stream_key, scale):
    """The fine row between coarse rows up and down: diamonds at odd columns, square step at even ones.

    The left neighbour of column 0 wraps around to the last diamond; the last column repeats the first.
    """
    cells = diamonds.shape[0]
    offset = _offset(first_index, stream_key, scale)
    row[0] = (diamonds[cells - 1] + diamonds[0] + up[0] + down[0]) * QUARTER + offset
    row[1] = diamonds[0]
    index = np.uint32(first_index + index_step)
    for i in range(1, cells):
        offset = _offset(index, stream_key, scale)
        row[2 * i] = (diamonds[i - 1] + diamonds[i] + up[i] + down[i]) * QUARTER + offset
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
        row[2 * i + 1] = (coarse_row[i] + right[i] + diamonds_above[i] + diamonds_below[i]) * QUARTER + offset
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
def diamond_centres(coarse, scale, stream_key, lattice_shift):
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
    huge pages on large arrays (unless ``base.heap.hold_small_pages`` holds); numba's allocator does not, and
    first-touching 4 KiB pages is several times slower (about 25 ms instead of 6 ms for the 67 MB of iterations 12
    on two cores).
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
def midpoint_1d_kernel(values, scales, stream_key, lattice_shift):
    """Midpoint displacement of values (ends set) in place, pass p displacing by scales[p]."""
    last = values.shape[0] - 1
    stride = last // 2
    offsets = np.empty(last // 2, dtype=np.float32)
    for pass_index in range(scales.shape[0]):
        count = last // (2 * stride)
        _fill_offsets(offsets, count, stream_key, stride << lattice_shift, (2 * stride) << lattice_shift,
                      scales[pass_index])
        for i in range(count):
            x = stride + 2 * stride * i
            values[x] = (values[x - stride] + values[x + stride]) * HALF + offsets[i]
        stride //= 2
    return values


# Serial: one pass over memory, which a second thread does not speed up (0.4 ms for 1025^2 on one core,
# 3 ms on two through the parallel launch).
@njit(cache=True, nogil=True)
def cloud_colors_kernel(heights, mean):
    """The original's sky colours of heights around their mean (fractal.cloud_colors)."""
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


def refine(coarse: np.ndarray, first_pass: int, scales: np.ndarray, key: np.uint32) -> np.ndarray:
    """Run passes first_pass..len(scales) - 1 on coarse, the level-first_pass grid (checked arguments)."""
    iterations = scales.shape[0]
    size = (1 << iterations) + 1
    heights = np.empty((size, size), dtype=np.float32)
    scratch = np.empty(sum(((2 << level) + 1) ** 2 for level in range(first_pass, iterations - 1)),
                       dtype=np.float32)
    threads = free_threads() if 1 << (iterations - 1) >= _PARALLEL_ROWS else 1
    with parallel_chunksize(1):
        return _diamond_square_kernel(heights, coarse, scratch, scales, first_pass, key, parallel_bands(threads))
