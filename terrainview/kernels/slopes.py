"""The natural look's fine slope map of a heightmap, as half floats. Pure numba, no GL.

Texel (c, r) holds the slope from point (c, r) to the next along x and along z, in height per unit: the two
channels of an RG16F texture that the natural look reads with linear filtering half a texel apart
(natural_shading.glsl ``map_slope``), which gives the slope between the midpoints interpolated in two fetches.
A map's last column has no next point along x, nor its last row along z: that slope is 0 (a region's apron holds
them, never drawn).

Worked out on the CPU a band of rows at a time (``slope_rows``) and written into the texture: drawn on the GPU it
cost llvmpipe 12-15 ns a point over both cores, and about three times that within a flight's frames, which waited
for it; here it is about 2.5 ns a point on one, the texture's write included.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from terrainview.kernels.lattice import check_heightmap, check_int
from terrainview.kernels.lighting import SURFACE_SIZE


@njit(cache=True, inline="always")
def _half_bits(bits):
    """The IEEE half float nearest to the float32 whose bits are ``bits`` (ties to even), as its 16 bits."""
    sign = (bits >> 16) & 0x8000
    magnitude = bits & 0x7FFFFFFF
    if 0x38800000 <= magnitude < 0x477FF000:  # a normal half (2**-14 up to 65504): the usual case, first
        # Adding just under half the dropped part, plus the kept part's last bit, rounds ties to even with no branch
        # (random slopes' ties and halves mispredicted, 4 ns a point); a carry out
        # of the mantissa steps the exponent, as it should. The exponent's bias goes from 127 to 15.
        return sign | (((magnitude + 0xFFF + ((magnitude >> 13) & 1)) >> 13) - (112 << 10))
    if magnitude >= 0x7F800000:  # infinity or NaN (a quiet NaN stays one)
        return sign | 0x7C00 | (0x200 if magnitude > 0x7F800000 else 0)
    if magnitude >= 0x477FF000:  # rounds past the largest half
        return sign | 0x7C00
    if magnitude <= 0x33000000:  # at most half the smallest subnormal half (2**-25): zero, ties to even
        return sign
    shift = 126 - (magnitude >> 23)  # a subnormal half: the mantissa and its hidden bit, shifted into place
    mantissa = (magnitude & 0x7FFFFF) | 0x800000
    return sign | ((mantissa + (1 << (shift - 1)) - 1 + ((mantissa >> shift) & 1)) >> shift)


@njit(cache=True, nogil=True)
def _slope_rows(heights, first_row, columns, cells_per_unit, out):
    last_row, last_column = heights.shape[0] - 1, heights.shape[1] - 1
    slopes = np.empty(2 * columns, dtype=np.float32)
    bits = slopes.view(np.uint32)
    for index in range(out.shape[0]):
        row = first_row + index
        below = min(row + 1, last_row)
        for column in range(columns):
            here = heights[row, column]
            slopes[2 * column] = (heights[row, min(column + 1, last_column)] - here) * cells_per_unit
            slopes[2 * column + 1] = (heights[below, column] - here) * cells_per_unit
        for value in range(2 * columns):
            out[index, value] = _half_bits(bits[value])


def slope_rows(heights: np.ndarray, first_row: int, rows: int, columns: int, apron: int) -> np.ndarray:
    """Rows ``first_row`` .. ``first_row + rows`` of the slope map of ``heights``, ``columns`` texels a row.

    ``heights`` (float32 as stored) spans ``SURFACE_SIZE`` units between its ``apron``-th points from either edge.
    Returns uint16 half-float bits, rows x (2 * columns): the x and z slope of each texel in turn.
    """
    heights = check_heightmap(heights, finite=False)  # a share of a map's rows: no pass over all of it
    check_int("apron", apron, 0, (min(heights.shape) - 2) // 2)
    check_int("first_row", first_row, 0, heights.shape[0] - 1)
    check_int("rows", rows, 0, heights.shape[0] - first_row)
    check_int("columns", columns, 1, heights.shape[1])
    cells_per_unit = np.float32((heights.shape[1] - 1 - 2 * apron) / SURFACE_SIZE)
    out = np.empty((rows, 2 * columns), dtype=np.uint16)
    _slope_rows(heights, first_row, columns, cells_per_unit, out)
    return out
