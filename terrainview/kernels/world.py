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
def _offset(column, row, key, scale):
    """Scale * r for the lattice point at finest-level address (column, row); r uniform in [-0.5, 0.5)."""
    bits = hash32(np.uint32(column & _LOW_WORD) ^ key)
    bits = hash32(bits ^ np.uint32(row & _LOW_WORD))
    bits = hash32(bits ^ np.uint32(((column >> 32) * 65599 + (row >> 32)) & _LOW_WORD))
    return scaled_offset(bits, scale)


@njit(cache=True, nogil=True)
def _world_kernel(windows, shifts, scales, top_scale, key):
    """The last level's window of the lattice.

    ``windows[level]``: first column, last column, first row, last row of that level's window (level 0 the
    top); ``shifts[level]``: log2 of its cell in finest-level cells; ``scales[level]``: the offset scale of the
    pass that refines level into level + 1.
    """
    first_column, last_column, first_row, last_row = windows[0]
    coarse = np.empty((last_row - first_row + 1, last_column - first_column + 1), dtype=np.float32)
    for j in range(coarse.shape[0]):
        for i in range(coarse.shape[1]):
            coarse[j, i] = _offset((first_column + i) << shifts[0], (first_row + j) << shifts[0], key, top_scale)
    for level in range(windows.shape[0] - 1):
        coarse_column, coarse_row = windows[level, 0], windows[level, 2]
        first_column, last_column, first_row, last_row = windows[level + 1]
        shift, scale = shifts[level + 1], scales[level]
        # One cell more on every side for the diamond centres the square step reads at the window's edge.
        fine = np.empty((last_row - first_row + 3, last_column - first_column + 3), dtype=np.float32)
        for j in range(fine.shape[0]):
            row = first_row - 1 + j
            for i in range(fine.shape[1]):
                column = first_column - 1 + i
                if (row & 1) == 0 and (column & 1) == 0:  # a point of the coarser level
                    fine[j, i] = coarse[(row >> 1) - coarse_row, (column >> 1) - coarse_column]
                elif (row & 1) == 1 and (column & 1) == 1:  # diamond step: the centre of a coarse cell
                    up, left = (row >> 1) - coarse_row, (column >> 1) - coarse_column
                    fine[j, i] = ((coarse[up, left] + coarse[up, left + 1] + coarse[up + 1, left]
                                   + coarse[up + 1, left + 1]) * QUARTER
                                  + _offset(column << shift, row << shift, key, scale))
        for j in range(1, fine.shape[0] - 1):  # square step: the midpoints of the coarse cells' edges
            row = first_row - 1 + j
            for i in range(1, fine.shape[1] - 1):
                column = first_column - 1 + i
                if ((row + column) & 1) == 1:
                    fine[j, i] = ((fine[j - 1, i] + fine[j + 1, i] + fine[j, i - 1] + fine[j, i + 1]) * QUARTER
                                  + _offset(column << shift, row << shift, key, scale))
        coarse = fine[1:-1, 1:-1].copy()
    return coarse


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
                  h: float = 0.7, height_scale: float = 1.0, octaves: int = 2) -> np.ndarray:
    """Heights of the world's lattice at ``iterations``: ``rows`` x ``columns`` points from (column0, row0).

    Point (c, r) is at world x = 2 c / 2**iterations - 1, z = 2 r / 2**iterations - 1. Float32, rows are Z.
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
    return _world_kernel(windows, shifts, scales, top_scale, stream_key(seed, _DOMAIN_WORLD))


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
