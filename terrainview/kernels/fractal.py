"""Fractal heightmap kernels: diamond-square (2D), midpoint displacement (1D) and the cloud colouring.

Pure numpy/numba, no GL. Each public function validates its arguments and calls a numba kernel of
``fractal_numba``, imported on first use; a process's first diamond-square map comes from ``fractal_numpy``
instead when numba is not loaded yet (the same map, without the 0.8 s of loading numba).

Determinism: the random offset of a point is a counter-based hash of (seed, the point's position on a fixed
lattice of 2**16 cells per side), never a sequential generator. A point therefore gets the same offset at
every resolution and on every thread, so ``diamond_square(n) == diamond_square(n + 1)[::2, ::2]`` bit for bit
and raising the iterations adds detail to the same terrain.
"""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np

from terrainview.kernels import fractal_numpy
from terrainview.kernels.lattice import (
    HALF,
    LATTICE_BITS,
    MAX_HEIGHT_SCALE,
    MAX_ITERATIONS_2D,
    MAX_SEED,
    check_common,
    check_heightmap,
    check_int,
    stream_key,
)

__all__ = ["LATTICE_BITS", "MAX_HEIGHT_SCALE", "MAX_ITERATIONS_1D", "MAX_ITERATIONS_2D", "MAX_SEED",
           "NUMPY_FIRST_MAP_MAX_ITERATIONS",
           "cloud_colors", "diamond_square", "diamond_square_passes", "diamond_square_seeded", "half_pass_points",
           "midpoint_1d", "passes_grid_side"]

MAX_ITERATIONS_1D = 16

# Domain constants keep the 1D and 2D offset streams independent for one seed.
_DOMAIN_2D = 0x3C6EF372
_DOMAIN_1D = 0xA54FF53A
# A process's first map, while nothing has loaded numba, is made by numpy (fractal_numpy, the same map bit for
# bit): importing numba and its first compiled call take about 0.8 s, numpy's map 15 ms at iterations 10 and
# 80 ms at 11. At 12 numpy takes as long as loading numba (0.7 s), whose kernel is then ready for the next map.
NUMPY_FIRST_MAP_MAX_ITERATIONS = 11
_first_map_made = False


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


def _compiled() -> ModuleType:
    """The numba builds (``fractal_numba``), imported on first use: importing numba takes about 0.4 s."""
    from terrainview.kernels import fractal_numba

    return fractal_numba


def _refine(coarse: np.ndarray, first_pass: int, iterations: int, seed: int, h: float,
            height_scale: float) -> np.ndarray:
    """The numba kernel's passes first_pass..iterations - 1 on coarse, from the settings (checked arguments)."""
    return _compiled().refine(coarse, first_pass, _pass_scales(iterations, h, height_scale),
                              stream_key(seed, _DOMAIN_2D))


def diamond_square(iterations: int, seed: int = 0, h: float = 0.7, height_scale: float = 1.0) -> np.ndarray:
    """Diamond-square heightmap, float32 of shape (2**iterations + 1,) * 2; rows are Z, columns are X.

    Faithful to Martz's fill2DFractArray: corners 0, scale = height_scale * 2**-h before the first pass and
    times 2**-h after each, offsets uniform in [-0.5, 0.5) * scale, square-step neighbours wrapped across
    the edges, last row/column equal to the first.
    """
    global _first_map_made
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    seed, h, height_scale = check_common(seed, h, height_scale)
    numpy_first = not _first_map_made and "numba" not in sys.modules and iterations <= NUMPY_FIRST_MAP_MAX_ITERATIONS
    _first_map_made = True
    if numpy_first:
        return fractal_numpy.diamond_square(_pass_scales(iterations, h, height_scale), stream_key(seed, _DOMAIN_2D))
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
    centres = _compiled().diamond_centres(coarse, scale, stream_key(seed, _DOMAIN_2D), LATTICE_BITS - (full + 1))
    side = 2 * coarse.shape[0] - 1
    fine = np.empty((side, side), dtype=np.float32)
    fine[::2, ::2] = coarse
    fine[1::2, 1::2] = centres
    fine[::2, 1::2] = (coarse[:, :-1] + coarse[:, 1:]) * HALF  # square-step points, not set yet
    fine[1::2, ::2] = (coarse[:-1, :] + coarse[1:, :]) * HALF
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
    return _compiled().midpoint_1d_kernel(values, scales, stream_key(seed, _DOMAIN_1D), LATTICE_BITS - iterations)


def cloud_colors(heights: np.ndarray) -> np.ndarray:
    """The original's sky texture from a heightmap: float32 RGB of shape heights.shape + (3,).

    Each value's deviation from the mean is clamped to +-0.2 and mapped to a shade in [0, 0.5];
    red = green = 0.4 + shade, blue = 0.9 (medium blue to white).
    """
    heights = check_heightmap(heights, finite=False)  # colours per value
    return _compiled().cloud_colors_kernel(heights, np.float32(heights.mean(dtype=np.float64)))
