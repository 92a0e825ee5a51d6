"""The endless world's regions around the eye: which are wanted, at what detail, and a bounded cache of them.

A region is a 2-unit square of the world (kernels/world.py), the same size and place as one tile. Far regions are
held at a coarser detail, which is exactly the full map sampled coarsely: the level of detail never needs their
finer points, and a region comes nearer it is made again finer, the same shape with more points. Each map carries
a one-point apron from the regions around it, so slopes at its edges are those of the world, not of the region.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from collections.abc import Generator
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import numpy as np

from terrainview.kernels import lighting, lod, texturing, world
from terrainview.scene import camera
from terrainview.scene.settings import ENDLESS, SceneSettings

Made = TypeVar("Made")  # what a generator of steps makes

MIN_DETAIL = 4  # a region is held with at least 16 cells a side: one level-of-detail patch
APRON = 1  # points around each region's map, from its neighbours
CACHE_BYTES = 256 << 20  # the maps kept, besides those wanted now
STAND_IN_DETAIL = 6  # a region with no map yet gets one this coarse first (65 x 65 points: well under a millisecond)
SHADING_ERROR_PIXELS = 2.0  # the natural look's normals: map points at most this far apart on screen
LIGHT_COARSER = 2  # horizons are soft (shadows, occlusion): traced four times coarser than the heights ...
LIGHT_DETAIL = 8  # the natural look's horizons of a region are traced at most this fine (256 cells a side)


@dataclass(frozen=True)
class World:
    """What makes one endless world: the same for every region of it."""

    seed: int
    h: float
    height_scale: float
    octaves: int

    @classmethod
    def of(cls, settings: SceneSettings) -> World | None:
        """The world ``settings`` show, or None when they show tiles."""
        if settings.tile != ENDLESS:
            return None
        return cls(settings.seed, settings.h, settings.height_scale, settings.world_octaves)


class RegionKey(NamedTuple):
    """One region's map: its place (x, z: the square centred on world (2x, 2z)) and detail (iterations).

    A named tuple, not a dataclass: the window's every frame hashes and compares hundreds of them, and a tuple's
    hash and comparison run in C (a frozen dataclass's ran in Python: 1.2 ms of a frame's CPU, iterations 10).
    """

    x: int
    z: int
    detail: int


def map_side(detail: int) -> int:
    """Points per side of a region's map at ``detail``: 2**detail + 1, and its apron either side."""
    return world.region_cells(detail) + 1 + 2 * APRON


def region_map(world_: World, key: RegionKey, first_row: int = 0, rows: int | None = None,
               out: np.ndarray | None = None) -> np.ndarray:
    """The region's map_side(detail)**2 heights: rows are Z, the apron around them.

    Or ``rows`` of them from ``first_row``: exactly those rows of the whole map (any window of the world is).
    Written into ``out`` if given (``world.world_heights``).
    """
    cells, side = world.region_cells(key.detail), map_side(key.detail)
    rows = side - first_row if rows is None else rows
    return world.world_heights(key.detail, key.x * cells - APRON, key.z * cells - APRON + first_row, side, rows,
                               world_.seed, world_.h, world_.height_scale, world_.octaves, out)


def region_map_in_steps(world_: World, key: RegionKey,
                        band_rows: int) -> Generator[None, None, tuple[np.ndarray, lod.LodSurface | None]]:
    """The region's map and pyramid (``region_map``, ``region_pyramid``), the same bit for bit, made in steps.

    A band of at most ``band_rows`` rows at a time: yields between bands, and returns both. For a worker that
    paces its work between steps (window/world_feed.py).
    """
    side = map_side(key.detail)
    heights = np.empty((side, side), dtype=np.float32)
    pyramid = _pyramid_rows(side)
    for rows in _bands(side, band_rows):
        region_map(world_, key, rows.start, len(rows), heights[rows.start:rows.stop])
        if pyramid is not None:  # the band's rows of the map within the apron
            pyramid.add(heights[max(rows.start, APRON):min(rows.stop, side - APRON), APRON:-APRON])
        if rows.stop < side:
            yield
    return heights, None if pyramid is None else pyramid.surface()


def _bands(rows: int, most: int | None) -> list[range]:
    """``rows`` split into bands of at most ``most`` rows (None: one band), as few as can be, of even size."""
    bands = 1 if most is None else -(-rows // most)
    each = -(-rows // bands)
    return [range(first, min(first + each, rows)) for first in range(0, rows, each)]


@functools.lru_cache(maxsize=8)
def _world_sample(world_: World) -> np.ndarray:
    """The world's heights over the 32 x 32 units around the origin (iterations 4), measured once.

    Its measures (band limits, snow line) come from these, so the colours never shift in flight.
    """
    return world.world_heights(4, -256, -256, 513, 513, world_.seed, world_.h, world_.height_scale, world_.octaves)


@functools.lru_cache(maxsize=8)
def world_band_limits(world_: World) -> tuple[float, float]:
    """Heights splitting the world's range in thirds, as the teximage's bands split its map's."""
    low, high = np.quantile(_world_sample(world_), [1.0 / 3.0, 2.0 / 3.0])
    return float(low), float(high)


@functools.lru_cache(maxsize=8)
def world_snow_height(world_: World) -> float:
    """The natural look's snow line over the world (``texturing.snow_height``)."""
    return texturing.snow_height(_world_sample(world_))


SEA_FLOOR_DETAIL = 7  # the sea floor's lattice: 2**7 points per 2 units (made in about 4-5 ms, 16 ms at 8)
SEA_FLOOR_REACH = 4  # units from the floor's centre to its edges


def sea_floor(world_: World, centre_x: int, centre_z: int) -> tuple[np.ndarray, float, float, float]:
    """The world's heights under the sea around whole-unit place (centre_x, centre_z), for the water's depth.

    Returns the map (float32, rows are Z) at SEA_FLOOR_DETAIL, reaching SEA_FLOOR_REACH units each way, and its
    west and north edges and side in world units. Its points are the world's own at that detail.
    """
    per_unit = (1 << SEA_FLOOR_DETAIL) // 2
    points = 2 * SEA_FLOOR_REACH * per_unit + 1
    # World x = 2 c / 2**detail - 1: the point on the floor's west edge is c = (x + 1) * per_unit.
    column0, row0 = (centre_x - SEA_FLOOR_REACH + 1) * per_unit, (centre_z - SEA_FLOOR_REACH + 1) * per_unit
    heights = world.world_heights(SEA_FLOOR_DETAIL, column0, row0, points, points, world_.seed, world_.h,
                                  world_.height_scale, world_.octaves)
    return heights, float(centre_x - SEA_FLOOR_REACH), float(centre_z - SEA_FLOOR_REACH), 2.0 * SEA_FLOOR_REACH


def region_light(world_: World, key: RegionKey) -> np.ndarray:
    """The natural look's light maps of a region (``lighting.light_maps``' layout): (layers, side, side, 4), uint8.

    Traced over a window reaching one unit (the horizons' reach) past each of the region's sides, so its
    shadows come from the land around it; the window's own wrap-around never reaches back into the region. Only
    the region's own cells are traced, a quarter of the window's (at detail 10, some 10 ms of a core).
    Points are every 2**LIGHT_COARSER-th of the region's (at most 2**LIGHT_DETAIL cells a side), rows are Z.
    """
    return run_steps(region_light_in_steps(world_, key, None))[1]


def run_steps(steps: Generator[None, None, Made]) -> tuple[int, Made]:
    """Run a generator of steps (``region_map_in_steps``, ``region_light_in_steps``) to its end, all at once.

    Returns how many times it yielded and what it made.
    """
    yields = 0
    while True:
        try:
            next(steps)
        except StopIteration as finished:
            return yields, finished.value
        yields += 1


def region_light_in_steps(world_: World, key: RegionKey,
                          band_rows: int | None) -> Generator[None, None, np.ndarray]:
    """The region's light maps (``region_light``), the same bit for bit, traced in steps.

    A band of at most ``band_rows`` rows at a time (None: all at once): yields between bands, and returns the maps.
    For a worker that paces its work (as ``region_map_in_steps``).
    """
    detail = max(min(key.detail - LIGHT_COARSER, LIGHT_DETAIL), MIN_DETAIL)
    cells = world.region_cells(detail)
    margin = cells // 2  # one unit
    window = world.world_heights(detail, key.x * cells - margin, key.z * cells - margin, 2 * cells + 1,
                                 2 * cells + 1, world_.seed, world_.h, world_.height_scale, world_.octaves)
    # Two cells short of the margin: no ray's last sample lands on the window's far edge, where it would wrap.
    reach = (margin - 2) * camera.TILE_SIZE / cells
    own = range(margin, margin + cells + 1)  # the window's rows and columns that are the region's

    def band(rows: range) -> np.ndarray:
        # Its heights are finer than this trace (but at the coarsest details): see lighting.NEAREST_FINER_CELLS.
        return lighting.light_maps(window, max_cells=2 * cells, span=2.0 * camera.TILE_SIZE, reach=reach,
                                   surface_finer=detail < key.detail, part=(rows, own))

    bands = []
    for rows in _bands(cells + 1, band_rows):
        bands.append(band(own[rows.start:rows.stop]))
        if rows.stop < cells + 1:
            yield
    return np.concatenate(bands, axis=1)


def region_centre(x: int, z: int) -> tuple[float, float]:
    """World (x, z) of a region's centre."""
    return camera.TILE_SIZE * x, camera.TILE_SIZE * z


def stand_in(key: RegionKey) -> RegionKey:
    """The coarse map a region with none yet is drawn from first: ``STAND_IN_DETAIL``'s, or its own if coarser."""
    return RegionKey(key.x, key.z, min(key.detail, STAND_IN_DETAIL))


def region_distances(x: np.ndarray, z: np.ndarray, eye_x: float, eye_z: float) -> np.ndarray:
    """Horizontal distance from the eye to the nearest point of each region (x, z: integer arrays)."""
    dx = np.maximum(np.abs(eye_x - camera.TILE_SIZE * x) - 1.0, 0.0)
    dz = np.maximum(np.abs(eye_z - camera.TILE_SIZE * z) - 1.0, 0.0)
    return np.hypot(dx, dz)


def wanted_regions(settings: SceneSettings, reach: float, ranges: np.ndarray) -> list[RegionKey]:
    """Every region within ``reach`` of the eye with the detail it needs, nearest first (ahead before behind).

    A region's detail: level of detail draws nothing finer than ranges allow at its distance, and one level finer
    than that is made, so that a region is refined before the eye reaches the next range.
    """
    eye_x, _, eye_z = camera.eye_position(settings)
    forward_x, forward_z = camera.heading(settings)
    span = math.ceil(reach / camera.TILE_SIZE) + 1
    centre_x, centre_z = round(eye_x / camera.TILE_SIZE), round(eye_z / camera.TILE_SIZE)
    rows, columns = np.mgrid[centre_z - span:centre_z + span + 1, centre_x - span:centre_x + span + 1]
    x, z = columns.ravel(), rows.ravel()
    distance = region_distances(x, z, eye_x, eye_z)
    near = distance <= reach
    x, z, distance = x[near], z[near], distance[near]
    behind = (camera.TILE_SIZE * x - eye_x) * forward_x + (camera.TILE_SIZE * z - eye_z) * forward_z < -1.5
    coarser = np.count_nonzero(ranges[None, :-1] < distance[:, None], axis=1)
    iterations = settings.iterations
    detail = np.maximum(min(iterations, MIN_DETAIL), iterations - np.maximum(coarser - 1, 0))
    order = np.lexsort((detail, z, x, distance, behind))  # the last key first: behind, distance, then the key
    return [RegionKey(int(x[index]), int(z[index]), int(detail[index])) for index in order]


def world_ranges(settings: SceneSettings, image_height: int, field_of_view_y: float, lit: bool = False) -> np.ndarray:
    """The ranges that choose each region's detail.

    The level of detail's for an image (lod.lod_ranges of a region), or with ``lit`` (the natural look, whose
    normals come from the map per pixel) those of an error of ``SHADING_ERROR_PIXELS``, so that a region's points
    are no farther apart on screen than that.
    """
    error = min(settings.lod_error, SHADING_ERROR_PIXELS) if lit else settings.lod_error
    return lod.grid_ranges(settings.iterations, image_height, field_of_view_y, error)


def region_pyramid(heights: np.ndarray) -> lod.LodSurface | None:
    """The level-of-detail pyramid of a region's map (``region_map``'s, apron and all), made off the UI thread.

    None for a map smaller than one patch, which is drawn as its full grid.
    """
    if not _has_pyramid(heights.shape[0]):
        return None
    return lod.LodSurface.from_heights(heights[APRON:-APRON, APRON:-APRON])


def _has_pyramid(side: int) -> bool:
    """Whether a region's map ``side`` points a side (apron and all) has a pyramid: not below one patch."""
    return side - 2 * APRON > lod.PATCH_QUADS


def _pyramid_rows(side: int) -> lod.PyramidRows | None:
    """The pyramid of a region's map ``side`` points a side (apron and all), to build band by band; None without."""
    return lod.PyramidRows(side - 2 * APRON - 1) if _has_pyramid(side) else None


@dataclass
class RegionMaps:
    """What is held of one region: its heights and their pyramid, and the natural look's light maps once traced."""

    heights: np.ndarray
    pyramid: lod.LodSurface | None
    light: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        """The bytes held."""
        return self.heights.nbytes + (0 if self.light is None else self.light.nbytes)


class RegionCache:
    """Regions' maps by key, the least recently used dropped past ``CACHE_BYTES`` (those in use never)."""

    def __init__(self, limit_bytes: int = CACHE_BYTES) -> None:
        self.world: World | None = None
        self.limit_bytes = limit_bytes
        self._maps: OrderedDict[RegionKey, RegionMaps] = OrderedDict()
        # A bit for each detail held of a place: ``best`` finds the finest at once (a frame of a flight looks up a
        # few hundred regions drawn coarser than wanted, each of up to a dozen details).
        self._details: dict[tuple[int, int], int] = {}
        self.bytes = 0

    def adopt(self, world_: World | None) -> None:
        """Show ``world_``: a different world empties the cache."""
        if world_ != self.world:
            self._maps.clear()
            self._details.clear()
            self.bytes = 0
            self.world = world_

    def put(self, world_: World, key: RegionKey, heights: np.ndarray | None, light: np.ndarray | None = None,
            pyramid: lod.LodSurface | None = None) -> None:
        """Keep what was made for ``world_`` (dropped if the cache has moved to another world meanwhile).

        The heights' pyramid is made here unless given (the window's worker makes it).
        """
        if world_ != self.world:
            return
        held = self._maps.get(key)
        if held is None:
            if heights is None:
                return
            held = self._maps[key] = RegionMaps(heights, pyramid or region_pyramid(heights))
            self._mark(key, held=True)
            self.bytes += heights.nbytes
        if light is not None and held.light is None:
            held.light = light
            self.bytes += light.nbytes

    def best(self, x: int, z: int, detail: int) -> tuple[RegionKey, RegionMaps] | None:
        """The finest maps held of region (x, z) no finer than ``detail`` (a coarser one stands in), if any."""
        held = self._details.get((x, z), 0) & ((2 << detail) - 1)  # those no finer than detail
        if not held:
            return None
        key = RegionKey(x, z, held.bit_length() - 1)
        self._maps.move_to_end(key)
        return key, self._maps[key]

    def missing(self, wanted: list[RegionKey], light: bool = False) -> list[RegionKey]:
        """The wanted maps not held yet (or, with ``light``, not lit yet), in the order given."""
        return [key for key in wanted
                if key not in self._maps or (light and self._maps[key].light is None)]

    def requests(self, wanted: list[RegionKey], light: bool = False) -> list[RegionKey]:
        """What to make next for ``wanted``, each group nearest first.

        First a quick coarse stand-in for every region with nothing held yet, far ones included (a far region
        needs no more than a stand-in, and it must not wait behind the near regions' fine maps, which take half a
        second each at iterations 12): no land is missing for long. Then the wanted maps themselves.
        """
        stand_ins = []
        for key in wanted:  # (``best`` moves what it finds to the end: wanted again, the last to be dropped)
            if self.best(key.x, key.z, key.detail) is None:
                stand_ins.append(stand_in(key))
        listed = set(stand_ins)
        return stand_ins + [key for key in self.missing(wanted, light) if key not in listed]

    def trim(self, in_use: set[RegionKey]) -> None:
        """Drop the least recently used maps not in use while over the limit."""
        for key in list(self._maps):
            if self.bytes <= self.limit_bytes:
                break
            if key not in in_use:
                self.bytes -= self._maps.pop(key).nbytes
                self._mark(key, held=False)

    def _mark(self, key: RegionKey, held: bool) -> None:
        """Set or clear the key's detail bit of its place (``best``'s look-up)."""
        place = key.x, key.z
        details = self._details.get(place, 0) & ~(1 << key.detail) | held << key.detail
        if details:
            self._details[place] = details
        else:
            del self._details[place]

    def __len__(self) -> int:
        return len(self._maps)

    def __contains__(self, key: RegionKey) -> bool:
        return key in self._maps


def world_ground(world_: World, iterations: int) -> camera.Ground:
    """The endless world's surface height at world (x, z): bilinear between its four nearest points."""
    cells = world.region_cells(iterations)

    def height(x: float, z: float) -> float:
        column, row = (x + 1.0) * cells / camera.TILE_SIZE, (z + 1.0) * cells / camera.TILE_SIZE
        c, r = math.floor(column), math.floor(row)
        corners = world.world_heights(iterations, c, r, 2, 2, world_.seed, world_.h, world_.height_scale,
                                      world_.octaves).astype(np.float64)
        fc, fr = column - c, row - r
        top = corners[0, 0] + (corners[0, 1] - corners[0, 0]) * fc
        bottom = corners[1, 0] + (corners[1, 1] - corners[1, 0]) * fc
        return float(top + (bottom - top) * fr)

    return height


def ground(settings: SceneSettings, heights: np.ndarray | None) -> camera.Ground | None:
    """The ground under the eye for ``settings``: the endless world's, or the tiled surface ``heights``'."""
    world_ = World.of(settings)
    if world_ is not None:
        return world_ground(world_, settings.iterations)
    return camera.ground_height(heights, settings.tile)


def camera_in_bounds(settings: SceneSettings, heights: np.ndarray | None) -> tuple[SceneSettings, str | None]:
    """``camera.given_fly_eye_in_bounds`` over ``ground``: how render and each video frame draw a given scene."""
    return camera.given_fly_eye_in_bounds(settings, ground(settings, heights))


def world_conflict(settings: SceneSettings) -> str | None:
    """Why the endless world cannot show ``settings`` as asked, in one line naming the option; None if it can.

    The world is plain diamond-square: erosion would need each region's neighbours' water (and a seam-free,
    order-free result), and the other generators, a seed image and the passes shape one surface, not a world.
    """
    if settings.tile != ENDLESS:
        return None
    other = "use --tile repeat (the one surface repeated) for it"
    if settings.erosion != "none":
        return f"--erosion: the endless world is not eroded (each region would need its neighbours' water); {other}"
    if settings.generator != "diamond-square":
        return f"--generator: the endless world is diamond-square; {other}"
    if settings.seed_image:
        return f"--seed-image: a sketch shapes one surface, not the endless world; {other}"
    if settings.passes is not None:
        return f"--passes: the endless world shows finished regions; {other}"
    return None
