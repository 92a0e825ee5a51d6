"""Sunlight on a seamless heightmap: horizon angles in fixed compass directions. Pure numba, no GL.

For every cell and each of ``HORIZON_DIRECTIONS`` directions, the horizon is the highest elevation angle at which
terrain is seen along that direction, looking across the map's edges (the map is a torus, as it tiles), so a
tiled or endless layout shows no seam. The GPU draws from it, for any sun, soft shadows (the sun is lit where it
stands above the horizon of its direction) and ambient occlusion (how much of the sky the horizons leave open).
A sun change traces nothing: the horizon toward its bearing is interpolated between the two nearest traced
directions (``sun_surface_layer``, a few milliseconds); only a new terrain is traced again, on the worker
thread, while the previous horizons keep drawing.

Units: the map spans ``SURFACE_SIZE`` (2) units across and its heights are as displayed, so a horizon is the
true angle of the surface as drawn. A map finer than ``MAX_HORIZON_CELLS`` per side is traced at every k-th
cell (its coarser diamond-square passes, exactly); shadows are soft, and per-pixel normals from the full
heightmap keep the shading sharp.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from terrainview.kernels.kernel_common import row_kernels, run_rows
from terrainview.kernels.lattice import check_heightmap, check_int, check_real

SURFACE_SIZE = 2.0
HORIZON_DIRECTIONS = 16  # compass directions traced per cell; the sun between two of them interpolates
# The light maps' layout (``light_maps``): RGBA layers, four directions' horizons a texel (direction d in layer
# d // 4, channel d % 4), then one layer of what the surface is like: its sky view and broad slope, and the horizon
# toward the sun, which ``sun_surface_layer`` writes for the sun's bearing. A pixel reads all it is lit by in that
# one layer's fetch (single-channel layers took five fetches a pixel, about 7% of a natural frame on llvmpipe; the
# two horizon layers either side of the sun, two fetches, another 8%).
CHANNELS = 4
SKY_VIEW_CHANNEL, BROAD_X_CHANNEL, BROAD_Z_CHANNEL, SUN_CHANNEL = 0, 1, 2, 3  # of the last layer
MAX_HORIZON_CELLS = 1024  # cells per side the horizons are traced at, at most
REACH = 0.5  # how far a horizon is looked for, as a fraction of the map's side (1 unit on a 2-unit map)
STEP_GROWTH = 1.18  # each sample along a direction is this much farther than the last (dense near, sparse far)
# A surface shaded finer than its horizons are traced (an iterations 11-12 map traced at every 2nd or 4th point;
# an endless-world region, traced four times coarser than its heights and more) has relief within a traced cell
# that its per-pixel normals show and the horizons do not. Traced from the next cell, the traced cells' roughness
# cast specks of shadow a cell or two wide over those finer facets, lit or not: black dashes and blotches on every
# rough slope. Such horizons look for occluders from NEAREST_FINER_CELLS traced cells away, leaving the relief
# nearer than that to the normals, but from no farther than NEAREST_FINER_REACH units: a far region's traced
# cells are wide, and three of them would hold shadows the land shows (and change them as the region refines).
# A map traced at its own points traces from the next cell.
NEAREST_FINER_CELLS = 3
NEAREST_FINER_REACH = 0.025  # a little over three cells of a region's finest trace (256 cells over 2 units)
# (Samples lie whole cells apart: a skip of 1.6 cells looks for occluders from the 2nd cell on.)
# The broad slope is the surface's over this many units either side (four cells of an iterations-10 surface): snow
# settles by it in fields on a rugged peak instead of on every facet that happens to face up, and far land, where
# a pixel spans several cells, is shaded by it instead of by whichever facet the pixel's centre falls on.
BROAD_SLOPE_RADIUS = 4 * SURFACE_SIZE / 1024


def _distances(reach_cells: float, nearest_cells: float) -> np.ndarray:
    """Sample distances along a direction, in cells, from ``nearest_cells`` (the next cell at the nearest).

    Every cell at first, then growing geometrically.
    """
    reach = max(2.0, reach_cells)
    steps, distance = [], 1.0
    while distance <= reach:
        steps.append(distance)
        distance = max(distance + 1.0, distance * STEP_GROWTH)
    kept = [step for step in steps if step >= nearest_cells] or steps[-1:]  # a short reach keeps its last
    return np.array(kept, dtype=np.float32)


def _horizon_rows(heights, offsets, inverse_distances, first_row, first_column, out):
    """Fill out[d, r, c] with the horizon's tangent along direction d at cell (first_row + r, first_column + c).

    Rows in prange; ``out`` may hold a part of the map.

    Samples are the nearest cells along each direction, every cell near and sparser far (``offsets``: d, k ->
    the (x, z) offset in cells; ``inverse_distances``: one over its length in surface units), wrapping across
    the edges. For one row, direction and sample the offset is the same for every column, so the inner loop
    runs along two contiguous runs of a source row (before and after the wrap, ``_raise_to``). A tangent below
    zero (the cell stands above all it sees) is kept, so a peak's sky is larger than a plain's.
    """
    side, count = heights.shape[0], out.shape[2]
    mask = side - 1
    for r in prange(out.shape[1]):
        row = first_row + r
        here = heights[row, first_column:first_column + count]
        best = np.empty(count, dtype=np.float32)
        for d in range(offsets.shape[0]):
            best[:] = -1e30
            for k in range(offsets.shape[1]):
                source = heights[(row + offsets[d, k, 1]) & mask]
                scale = inverse_distances[d, k]
                start = first_column + (offsets[d, k, 0] & mask)  # the source column of the part's first
                wrap = min(max(side - start, 0), count)  # the part's first column whose source wraps
                # Each run as views indexed from 0: no index can be negative, so no check of one, and the loops
                # vectorize (indexed as source[column + shift], a whole map's took 4.5 times as long).
                if wrap > 0:
                    _raise_to(best[:wrap], source[start:start + wrap], here[:wrap], scale)
                if wrap < count:
                    _raise_to(best[wrap:], source[start + wrap - side:start + count - side], here[wrap:], scale)
            out[d, r] = best
    return out


@njit(cache=True, inline="always")
def _raise_to(best, source, here, scale):
    """Raise each of ``best`` to (source - here) * scale where that is higher."""
    for c in range(best.shape[0]):
        best[c] = max(best[c], (source[c] - here[c]) * scale)


_HORIZON = row_kernels(_horizon_rows)


def compass_directions(count: int = HORIZON_DIRECTIONS) -> np.ndarray:
    """Unit steps (x, z) in cells toward each compass bearing k * 360 / count: 0 north (-z), 90 east (+x)."""
    bearings = np.radians(np.arange(count) * (360.0 / count))
    return np.stack([np.sin(bearings), -np.cos(bearings)], axis=1).astype(np.float32)


def torus(heights: np.ndarray, max_cells: int) -> np.ndarray:
    """The seamless map without its repeated last row and column, every k-th cell up to ``max_cells`` a side."""
    heights = check_heightmap(heights, grid=True)
    max_cells = check_int("max_cells", max_cells, 2, 1 << 16)
    stride = max(1, (heights.shape[0] - 1) // max_cells)
    return np.ascontiguousarray(heights[:-1:stride, :-1:stride])


def horizon_map(heights: np.ndarray, directions: int = HORIZON_DIRECTIONS,
                max_cells: int = MAX_HORIZON_CELLS, span: float = SURFACE_SIZE,
                reach: float = REACH * SURFACE_SIZE, surface_finer: bool | None = None) -> np.ndarray:
    """Horizon tangents, float32 of shape (directions, cells, cells), of a seamless (2**n + 1)-sided heightmap.

    Direction d is the compass bearing d * 360 / directions (0: north, toward -z; 90: east, toward +x); rows
    of the result are Z and columns X, like the heightmap's, without its repeated last row and column. The map
    spans ``span`` units; horizons are looked for ``reach`` units away (by default half a 2-unit surface), so a
    wider window around a place (an endless world's region) finds the same horizons there. ``surface_finer``:
    whether the surface is shaded finer than the map is traced (``NEAREST_FINER_CELLS``); by default, whether the
    map is traced at fewer cells than it has.
    """
    period = torus(heights, max_cells)
    return _horizons(period, directions, span, reach, _finer(heights, period, surface_finer), _whole(period))


def _finer(heights: np.ndarray, period: np.ndarray, surface_finer: bool | None) -> bool:
    """Whether the surface is shaded finer than it is traced: as told, or its map traced at fewer cells than it has."""
    return period.shape[0] < np.shape(heights)[0] - 1 if surface_finer is None else surface_finer


def nearest_occluder_cells(cell: float, finer: bool) -> float:
    """How many traced cells (``cell`` units wide) away occluders are looked for from (``NEAREST_FINER_CELLS``)."""
    return max(1.0, min(float(NEAREST_FINER_CELLS), NEAREST_FINER_REACH / cell)) if finer else 1.0


def _whole(torus: np.ndarray) -> tuple[range, range]:
    """The part of ``torus`` that is all of it: all its rows and columns."""
    return range(torus.shape[0]), range(torus.shape[1])


def _part(torus: np.ndarray, part: tuple[range, range] | None) -> tuple[range, range]:
    """The rows and the columns of ``torus`` lit: ``part``, checked; or the whole."""
    if part is None:
        return _whole(torus)
    if not (isinstance(part, tuple) and len(part) == 2):
        raise ValueError(f"the part's rows and columns must be two ranges, not {part!r}")
    for axis, cells in zip(("rows", "columns"), part, strict=True):
        if not (isinstance(cells, range) and cells.step == 1 and 0 <= cells.start < cells.stop <= torus.shape[0]):
            raise ValueError(f"the part's {axis} must be a range of step 1, not empty, within the {torus.shape[0]} "
                             f"traced cells, not {cells!r}")
    return part


def _horizons(torus: np.ndarray, directions: int, span: float, reach: float, finer: bool,
              part: tuple[range, range]) -> np.ndarray:
    directions = check_int("directions", directions, 1, 64)
    side = torus.shape[0]
    cell = check_real("span", span, 0.0, 1e6, low_inclusive=False) / side
    reach_cells = check_real("reach", reach, 0.0, 1e6, low_inclusive=False) / cell
    distances = _distances(reach_cells, nearest_occluder_cells(cell, finer))
    along = compass_directions(directions)[:, None, :] * distances[None, :, None]
    offsets = np.rint(along).astype(np.int64)  # d, k, (x, z)
    lengths = np.hypot(offsets[..., 0], offsets[..., 1]) * cell
    rows, columns = part
    out = np.empty((directions, len(rows), len(columns)), dtype=np.float32)
    work = out.size * offsets.shape[1]
    return run_rows(_HORIZON, len(rows), work, torus, offsets, (1.0 / lengths).astype(np.float32), rows.start,
                    columns.start, out)


def sky_view(horizons: np.ndarray) -> np.ndarray:
    """The share of the sky each cell sees (1: open plain, less in valleys and crevices), float32 (cells, cells).

    The sky is cosine-weighted above each direction's horizon: a horizon at elevation e leaves 1 - sin(e) of
    that direction's sky (a horizon below the plane counts as flat, as the ground hides what is below).
    """
    tangents = np.maximum(np.asarray(horizons, dtype=np.float32), 0.0)
    return (1.0 - (tangents / np.sqrt(1.0 + tangents * tangents)).mean(axis=0)).astype(np.float32)


@njit(cache=True, inline="always")
def _stored(slope):
    """A slope or a tangent s as a byte: (s / (1 + |s|) + 1) / 2 as 0 to 255 (monotone, no arctangent to pay for)."""
    return np.uint8(int((slope / (1.0 + abs(slope)) * 0.5 + 0.5) * 255.0 + 0.5))


def _encode_rows(horizons, maps):
    """Light maps from horizon tangents, a row at a time (rows in prange): the layout of ``light_maps``."""
    directions, rows, columns = horizons.shape
    surface = directions // CHANNELS
    for row in prange(rows):
        hidden = np.zeros(columns, dtype=np.float32)
        for d in range(directions):
            tangents = horizons[d, row]
            encoded = maps[d // CHANNELS, row, :, d % CHANNELS]
            for column in range(columns):
                tangent = tangents[column]
                encoded[column] = _stored(tangent)
                if tangent > 0.0:
                    hidden[column] += tangent / math.sqrt(1.0 + tangent * tangent)
        sky_view = maps[surface, row, :, SKY_VIEW_CHANNEL]
        for column in range(columns):
            sky_view[column] = np.uint8(int((1.0 - hidden[column] / directions) * 255.0 + 0.5))
    return maps


_ENCODE = row_kernels(_encode_rows)


def _broad_slope_rows(torus, radius, inverse_span, first_row, first_column, out):
    """Fill out[0 and 1, r, c] with the slopes along x and z at cell (first_row + r, first_column + c).

    Rows in prange. Central differences over ``radius`` cells either side, wrapping; ``inverse_span`` is one over
    that span in units; each slope is stored as the horizons are (``_stored``).
    """
    mask = torus.shape[0] - 1
    for r in prange(out.shape[1]):
        row = first_row + r
        back, front, here = torus[(row - radius) & mask], torus[(row + radius) & mask], torus[row]
        for c in range(out.shape[2]):
            column = first_column + c
            out[0, r, c] = _stored((here[(column + radius) & mask] - here[(column - radius) & mask]) * inverse_span)
            out[1, r, c] = _stored((front[column] - back[column]) * inverse_span)
    return out


_BROAD_SLOPE = row_kernels(_broad_slope_rows)


def broad_slope(heights: np.ndarray, max_cells: int = MAX_HORIZON_CELLS, span: float = SURFACE_SIZE,
                radius: float = BROAD_SLOPE_RADIUS) -> np.ndarray:
    """The surface's slope along x and along z over ``radius`` units either side: uint8 (2, cells, cells).

    At the cells ``horizon_map`` traces; each slope s as (s / (1 + |s|) + 1) / 2, 0 to 255 (flat: 128).
    """
    period = torus(heights, max_cells)
    return _broad_slope(period, span, radius, _whole(period))


def _broad_slope(torus: np.ndarray, span: float, radius: float, part: tuple[range, range]) -> np.ndarray:
    side = torus.shape[0]
    cell = check_real("span", span, 0.0, 1e6, low_inclusive=False) / side
    radius_cells = max(1, min(round(check_real("radius", radius, 0.0, 1e6) / cell), side // 2))
    rows, columns = part
    out = np.empty((2, len(rows), len(columns)), dtype=np.uint8)
    return run_rows(_BROAD_SLOPE, len(rows), len(rows) * len(columns), torus, radius_cells,
                    np.float32(1.0 / (2 * radius_cells * cell)), rows.start, columns.start, out)


def light_maps(heights: np.ndarray, directions: int = HORIZON_DIRECTIONS,
               max_cells: int = MAX_HORIZON_CELLS, span: float = SURFACE_SIZE,
               reach: float = REACH * SURFACE_SIZE, surface_finer: bool | None = None,
               part: tuple[range, range] | None = None) -> np.ndarray:
    """What the GPU lights and covers a surface with: uint8 (directions / 4 + 1, rows, columns, 4).

    Of every cell traced, or of ``part``'s.

    Horizon tangents t as (t / (1 + |t|) + 1) / 2, 0 to 255 (the GPU turns them back into elevations), four
    directions a texel (``horizon_channel``); the last layer holds the sky view (``sky_view``, 0 to 1 as 0 to
    255) and the broad slope along x and z (``broad_slope``): ``surface_channels``; its SUN_CHANNEL is 255 (a
    horizon straight up) until ``sun_surface_layer`` writes a sun's. ``surface_finer`` as for ``horizon_map``.

    ``part`` (rows, columns): only those of the traced cells, exactly that part of the whole result (the land
    around it still casts its shadows: a region traced within a wider window, a band of its rows at a time).
    """
    directions = check_int("directions", directions, CHANNELS, 64)
    if directions % CHANNELS:
        raise ValueError(f"directions must be a multiple of {CHANNELS}, not {directions}")
    period = torus(heights, max_cells)  # checked and strided once for both
    lit = _part(period, part)
    horizons = _horizons(period, directions, span, reach, _finer(heights, period, surface_finer), lit)
    rows, columns = horizons.shape[1:]
    maps = np.empty((directions // CHANNELS + 1, rows, columns, CHANNELS), dtype=np.uint8)
    run_rows(_ENCODE, rows, horizons.size, horizons, maps)
    broad = _broad_slope(period, span, BROAD_SLOPE_RADIUS, lit)
    maps[-1, :, :, BROAD_X_CHANNEL], maps[-1, :, :, BROAD_Z_CHANNEL] = broad[0], broad[1]
    maps[-1, :, :, SUN_CHANNEL] = 255
    return maps


def horizon_channel(maps: np.ndarray, direction: int) -> np.ndarray:
    """The stored horizons of one direction in ``light_maps``' result: (cells, cells)."""
    return maps[direction // CHANNELS, :, :, direction % CHANNELS]


def surface_channels(maps: np.ndarray) -> np.ndarray:
    """The sky view and the broad slope along x and z in ``light_maps``' result: (cells, cells, 3)."""
    return maps[-1, :, :, :3]


def open_sky_light_maps(directions: int = HORIZON_DIRECTIONS) -> np.ndarray:
    """Light maps of one texel: a plain under open sky (no horizon above it, all of the sky in view, flat).

    Its sun channel holds no horizon either, as ``sun_surface_layer`` would write for any bearing.
    """
    maps = np.zeros((directions // CHANNELS + 1, 1, 1, CHANNELS), dtype=np.uint8)
    maps[-1] = (255, 128, 128, 0)
    return maps


def sun_between(azimuth: float, directions: int = HORIZON_DIRECTIONS) -> tuple[int, int]:
    """Where a sun at compass bearing ``azimuth`` (degrees) lies among the traced directions.

    The direction at or before it, and the next one's weight in 256ths (0 to 255): bearings alike to 1/256 of a
    step read the same.
    """
    position = (azimuth % 360.0) / 360.0 * directions
    first = math.floor(position)
    toward_next = round((position - first) * 256.0)
    if toward_next == 256:  # as good as on the next direction
        return (first + 1) % directions, 0
    return first % directions, toward_next


def traced_directions(maps: np.ndarray) -> int:
    """How many directions ``maps`` (``light_maps``'s) hold horizons of: four to each layer but the last."""
    return (maps.shape[0] - 1) * CHANNELS


def sun_surface_layer(maps: np.ndarray, sun: tuple[int, int]) -> np.ndarray:
    """The surface layer of ``maps`` with the horizon toward the sun in SUN_CHANNEL.

    ``sun``: where the sun lies among the maps' directions (``sun_between`` of ``traced_directions(maps)``). A new
    uint8 array (cells, cells, 4), for the GPU's copy of the last layer. The stored horizons of the two traced
    directions either side of the bearing, weighed by nearness and rounded: as the GPU's linear filtering reads
    them from their own channels, within a level of 255.
    """
    directions = traced_directions(maps)
    first, toward_next = sun
    # Contiguous copies: one compiled signature whatever the maps' strides.
    below, above = (np.ascontiguousarray(horizon_channel(maps, direction % directions))
                    for direction in (first, first + 1))
    layer = maps[-1].copy()
    _write_sun_channel(below, above, toward_next, layer)
    return layer


@njit(cache=True)
def _write_sun_channel(below, above, toward_next, layer):
    """Write the sun channel from two directions' stored horizons, the second weighing toward_next 256ths."""
    for row in range(below.shape[0]):
        for column in range(below.shape[1]):
            mixed = int(below[row, column]) * (256 - toward_next) + int(above[row, column]) * toward_next
            layer[row, column, SUN_CHANNEL] = np.uint8((mixed + 128) >> 8)
