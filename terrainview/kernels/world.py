"""The endless world: diamond-square on an unbounded lattice, any rectangle of it on demand. No GL here.

Region (rx, rz) is the 2-unit square x in [2 rx - 1, 2 rx + 1], z likewise: at iterations n it is 2**n cells per
side, like one tile of the repeated surface, and region (0, 0) sits where that tile does. Lattice points are
addressed in cells of the finest level there is (``MAX_ITERATIONS_2D``), so a point keeps its address at every
resolution. Above the region the lattice goes on for ``octaves`` coarser levels: the top level's points take
hashed values, and each pass below sets the diamond centres, then the square-step points, from their four
neighbours plus a hashed offset, as the tile's passes do but with no wrap (the neighbours are always there).
A point's value so depends only on the seed, H, the height scale, the octaves and its address: any rectangle
computed alone equals the same rectangle cut from a bigger one, neighbouring regions agree along their shared
edges whatever the order they are made in, and iterations n + 1 sampled every second point is iterations n.

To compute a rectangle, each coarser level is computed over the window the next finer one needs: a point's
parents lie at most one cell of the coarser level outside it, so the windows shrink to the rectangle and the
work is about the rectangle's own points (plus a ring of one cell per level).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from terrainview.kernels.kernel_common import hash32, scaled_offset
from terrainview.kernels.lattice import (
    MAX_ITERATIONS_2D,
    QUARTER,
    check_common,
    check_int,
    stream_key,
)

__all__ = ["MAX_OCTAVES", "MAX_WORLD_CELLS", "region_cells", "world_heights", "world_region"]

MAX_OCTAVES = 8  # coarser levels above one region: landforms up to 2**8 regions (512 units) across
# The farthest lattice index (at iterations 12) a rectangle may reach: a million units from the origin, far
# beyond any flight, and well inside the int64 addresses and the 32-bit hash words.
MAX_WORLD_CELLS = 1 << 31
_DOMAIN_WORLD = 0x510E527F
_LOW_WORD = 0xFFFFFFFF


@njit(cache=True, inline="always")
def _column_terms(columns, key, bits, high):
    """What a point's hash takes from its column alone (``columns``: finest-level addresses), once per column.

    The first of its three hashes into ``bits``, and its high word's share of the third into ``high``.
    """
    for k in range(columns.shape[0]):
        bits[k] = hash32(np.uint32(columns[k] & _LOW_WORD) ^ key)
        high[k] = (columns[k] >> 32) * 65599


@njit(cache=True, inline="always")
def _row_offsets(offsets, bits, high, row, scale):
    """Scale * r for a row's points (finest-level address ``row``), r uniform in [-0.5, 0.5).

    Their columns' ``_column_terms`` given: a contiguous loop, which the compiler vectorizes.
    """
    row_low, row_high = np.uint32(row & _LOW_WORD), row >> 32
    for k in range(offsets.shape[0]):
        hashed = hash32(bits[k] ^ row_low)
        hashed = hash32(hashed ^ np.uint32((high[k] + row_high) & _LOW_WORD))
        offsets[k] = scaled_offset(hashed, scale)


@njit(cache=True, nogil=True)
def _refine(coarse, coarse_column, coarse_row, fine, first_column, first_row, shift, scale, key):
    """One pass: ``fine`` from ``coarse``, the level above.

    ``fine``'s first point is at first_column, first_row (its finest-level address: those << shift);
    ``coarse``'s at coarse_column, coarse_row of its own level. Each step goes in loops of its own over the
    points it sets, so no point tests its parity: the coarse points copied, the diamond centres (odd row, odd
    column) from the four coarse corners, then the square-step points from the four around them, which are
    coarse points and centres only. ``fine``'s outer ring holds the coarse points and centres the square step
    reads at the edge; its square-step points are never set. Offsets are hashed a row at a time, for the
    even-indexed or the odd-indexed columns (``side`` 0 or 1).
    """
    rows, columns = fine.shape
    per_side = (columns + 1) // 2
    bits = np.empty((2, per_side), dtype=np.uint32)
    high = np.empty((2, per_side), dtype=np.int64)
    offsets = np.empty(per_side, dtype=np.float32)
    for side in range(2):
        count = (columns - side + 1) // 2
        addresses = (first_column + side + 2 * np.arange(count)) << shift
        _column_terms(addresses, key, bits[side, :count], high[side, :count])
    even_row, even_column = first_row & 1, first_column & 1  # the first even row and column (0 or 1)
    odd_row, odd_column = 1 - even_row, 1 - even_column
    for j in range(even_row, rows, 2):
        source = coarse[((first_row + j) >> 1) - coarse_row]
        left = ((first_column + even_column) >> 1) - coarse_column
        for k in range((columns - even_column + 1) // 2):
            fine[j, even_column + 2 * k] = source[left + k]
    centres = (columns - odd_column + 1) // 2
    for j in range(odd_row, rows, 2):
        up = coarse[((first_row + j) >> 1) - coarse_row]
        down = coarse[((first_row + j) >> 1) - coarse_row + 1]
        left = ((first_column + odd_column) >> 1) - coarse_column
        _row_offsets(offsets[:centres], bits[odd_column, :centres], high[odd_column, :centres],
                     (first_row + j) << shift, scale)
        for k in range(centres):
            fine[j, odd_column + 2 * k] = ((up[left + k] + up[left + k + 1] + down[left + k] + down[left + k + 1])
                                           * QUARTER + offsets[k])
    for j in range(1, rows - 1):
        side = (1 + first_row + j + first_column) & 1  # of the columns where (row + column) is odd
        count = (columns - 2 - side) // 2 + 1  # up to the column before the last
        _row_offsets(offsets[:count], bits[side, :count], high[side, :count], (first_row + j) << shift, scale)
        for k in range(1 - side, count):  # from the column after the first
            i = side + 2 * k
            fine[j, i] = ((fine[j - 1, i] + fine[j + 1, i] + fine[j, i - 1] + fine[j, i + 1]) * QUARTER
                          + offsets[k])


@njit(cache=True, nogil=True)
def _world_kernel(windows, shifts, scales, top_scale, key, out, last, before_last):
    """The last level's window of the lattice, written into ``out``.

    ``windows[level]``: first column, last column, first row, last row of that level's window (level 0 the
    top); ``shifts[level]``: log2 of its cell in finest-level cells; ``scales[level]``: the offset scale of the
    pass that refines level into level + 1. Each pass writes one cell more on every side (the diamond centres
    the square step reads at the window's edge) into ``last`` or ``before_last``, by turns, the last pass into
    ``last``; they come from numpy, which asks Linux for huge pages (see fractal_numba) unless
    ``base.heap.hold_small_pages`` holds (while the window's paced world is asked for: any thread's arrays).
    """
    passes = windows.shape[0] - 1
    buffers = (last, before_last)  # level w is in buffers[(passes - w) % 2]
    first_column, last_column, first_row, last_row = windows[0]
    size = (last_row - first_row + 1, last_column - first_column + 1)
    coarse = buffers[passes % 2][:size[0] * size[1]].reshape(size)
    bits = np.empty(size[1], dtype=np.uint32)
    high = np.empty(size[1], dtype=np.int64)
    _column_terms((first_column + np.arange(size[1])) << shifts[0], key, bits, high)
    for j in range(size[0]):
        _row_offsets(coarse[j], bits, high, (first_row + j) << shifts[0], top_scale)
    for level in range(passes):
        first_column, last_column, first_row, last_row = windows[level + 1]
        size = (last_row - first_row + 3, last_column - first_column + 3)
        fine = buffers[(passes - 1 - level) % 2][:size[0] * size[1]].reshape(size)
        _refine(coarse, windows[level, 0], windows[level, 2], fine, first_column - 1, first_row - 1,
                shifts[level + 1], scales[level], key)
        coarse = fine[1:-1, 1:-1]
    out[:, :] = coarse


def _windows(iterations: int, octaves: int, column0: int, row0: int, columns: int, rows: int) -> np.ndarray:
    """Each level's window, top first: what the level below needs of it (see _world_kernel)."""
    windows = [(column0, column0 + columns - 1, row0, row0 + rows - 1)]
    for _ in range(iterations + octaves):
        first_column, last_column, first_row, last_row = windows[-1]
        # A fine point 2i needs coarse i - 1 .. i + 1 (through the centres beside it), 2i + 1 needs i .. i + 1.
        windows.append(((first_column - 1) >> 1, (last_column >> 1) + 1, (first_row - 1) >> 1, (last_row >> 1) + 1))
    return np.array(windows[::-1], dtype=np.int64)


def _scales(octaves: int, iterations: int, h: float, height_scale: float) -> tuple[np.ndarray, np.float32]:
    """The offset scale of each pass from the top level down, and of the top level's own values.

    Pass k (k = 0 sets a region's centre, k < 0 the larger landforms) scales by height_scale * 2**(-H (k + 1)),
    as the tile's passes do, computed from k alone so that it is the same at every resolution.
    """
    passes = np.arange(-octaves, iterations, dtype=np.float64)
    scales = (height_scale * 2.0 ** (-h * (passes + 1.0))).astype(np.float32)
    return scales, np.float32(height_scale * 2.0 ** (h * octaves))


def world_heights(iterations: int, column0: int, row0: int, columns: int, rows: int, seed: int = 0,
                  h: float = 0.7, height_scale: float = 1.0, octaves: int = 2,
                  out: np.ndarray | None = None) -> np.ndarray:
    """Heights of the world's lattice at ``iterations``: ``rows`` x ``columns`` points from (column0, row0).

    Point (c, r) is at world x = 2 c / 2**iterations - 1, z = 2 r / 2**iterations - 1. Float32, rows are Z.
    Written into ``out`` if given (a C-contiguous float32 array of that shape, such as rows of a larger map).
    """
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    octaves = check_int("octaves", octaves, 0, MAX_OCTAVES)
    seed, h, height_scale = check_common(seed, h, height_scale)
    reach = MAX_WORLD_CELLS >> (MAX_ITERATIONS_2D - iterations)
    column0, row0 = check_int("column0", column0, -reach, reach), check_int("row0", row0, -reach, reach)
    columns = check_int("columns", columns, 1, reach - column0 + 1)
    rows = check_int("rows", rows, 1, reach - row0 + 1)
    windows = _windows(iterations, octaves, column0, row0, columns, rows)
    shifts = np.arange(MAX_ITERATIONS_2D + octaves, MAX_ITERATIONS_2D - iterations - 1, -1, dtype=np.int64)
    scales, top_scale = _scales(octaves, iterations, h, height_scale)
    # The levels' arrays take turns in two, the last level in ``last``; each is sized with a ring of one point
    # (the top level has none: it is only smaller).
    sizes = (windows[:, 1] - windows[:, 0] + 3) * (windows[:, 3] - windows[:, 2] + 3)
    last = np.empty(sizes[::-1][::2].max(), dtype=np.float32)
    before_last = np.empty(sizes[::-1][1::2].max(), dtype=np.float32)
    if out is None:
        out = np.empty((rows, columns), dtype=np.float32)
    elif out.shape != (rows, columns) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float32 array of {rows} x {columns}")
    _world_kernel(windows, shifts, scales, top_scale, stream_key(seed, _DOMAIN_WORLD), out, last, before_last)
    return out


def region_cells(iterations: int) -> int:
    """Cells per side of one region (2 units) at ``iterations``."""
    return 1 << iterations


def world_region(iterations: int, region_x: int, region_z: int, seed: int = 0, h: float = 0.7,
                 height_scale: float = 1.0, octaves: int = 2) -> np.ndarray:
    """Region (region_x, region_z): the (2**iterations + 1)**2 map of x in [2 region_x - 1, 2 region_x + 1].

    Z likewise. Its last row and column are the first of the regions beyond.
    """
    cells = region_cells(check_int("iterations", iterations, 1, MAX_ITERATIONS_2D))
    return world_heights(iterations, region_x * cells, region_z * cells, cells + 1, cells + 1, seed, h,
                         height_scale, octaves)
