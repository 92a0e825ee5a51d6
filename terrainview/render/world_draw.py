"""Drawing the endless world: each region around the eye with its own height texture and level of detail.

The regions' maps come from a ``RegionCache`` (scene/world_regions.py). Offscreen renders make the maps a frame
needs before drawing it; the window streams them from its worker instead (``streaming``), and a frame draws the
finest map of each region it holds, never waiting for the worker (it makes coarse stand-ins of land in view with
none itself, for a few milliseconds at most). Each region is a quadtree root of its own, selected with the
ranges and the slab of heights every region shares, so neighbours meet with the same levels and morphs.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import moderngl
import numpy as np
from pyglm import glm

from terrainview.base.heap import give_back_freed_memory
from terrainview.kernels import lighting, lod
from terrainview.render.gpu import (
    HEIGHT_UNIT,
    SLOPE_POINTS_PER_FRAME,
    SLOPE_UNIT,
    GpuResources,
    HeightArrayPool,
    HeightBands,
    LightMapsTexture,
    uniform,
)
from terrainview.render.lod_draw import (
    draw_selection,
    finest_within_budget,
    least_step_growth,
    lod_uniforms,
    once_per_ranges,
)
from terrainview.render.world_atlas import ATLAS_LAYERS, ATLAS_MAX_SIDE, RegionAtlas
from terrainview.scene import camera, world_regions
from terrainview.scene.settings import SceneSettings
from terrainview.scene.world_regions import RegionCache, RegionKey, World

_NO_NODES = np.zeros((0, lod.INSTANCE_FIELDS), dtype=np.float32)  # a region drawn otherwise: no nodes here
PREFETCH = 2.0  # regions are made this far (one region) beyond the reach, before they come into view
LIGHT_UNIT = 0  # the texture unit of the natural look's light maps (renderer._draw_natural)
ATLAS_HEIGHTS_UNIT = HEIGHT_UNIT  # an atlas's heights (its slope maps on SLOPE_UNIT, its light on LIGHT_UNIT)
# Height arrays kept for reuse: RESERVED_MAPS's 160 MiB at iterations 12; in the natural look their slope maps too,
# which take as many bytes as the heights (four a point).
POOL_BYTES = 176 << 20
NATURAL_POOL_BYTES = 2 * POOL_BYTES
STAND_IN_SECONDS = 0.006  # a streaming frame makes stand-ins of land in view with no map for this long from its first
MAX_UPLOAD_BYTES = 12 << 20  # a streaming frame uploads at most this much of new maps (2.5 ms to write on llvmpipe)
# From this detail up, a map's height arrays cost a frame 11 ms (detail 11) to 46 ms (12) to allocate, and its
# slope map in the natural look 40-170 ms at detail 12: a streaming world (the window's) allocates two maps' at each
# such detail (one drawn, the next made finer) with its first frame, and the pool recycles them. (An offscreen
# render makes and uploads its maps in one frame anyway.)
RESERVED_DETAIL = 11
RESERVED_MAPS = 2


@dataclass
class _Resident:
    """A region's map on the GPU, its pyramid for selection, and its light maps once traced."""

    key: RegionKey
    heights: HeightBands
    surface: lod.LodSurface | None  # None below lod.PATCH_QUADS cells: drawn as its full mesh
    light: LightMapsTexture | None = None
    # The natural look's: a small map lit has a layer of its size's atlas, drawn from there. It keeps its own
    # textures too, which the other looks and modes draw (and the natural look, where an atlas is full).
    atlas_layer: tuple[RegionAtlas, int] | None = None

    @property
    def slopes_ready(self) -> bool:
        """Its slope map is worked out whole: its atlas layer's, or else its own (``HeightBands.advance_slopes``)."""
        return self.atlas_layer is not None or self.heights.slopes_ready

    def release(self) -> None:
        """Release its textures, and its layer."""
        self.heights.release()
        if self.light is not None:
            self.light.release()
        if self.atlas_layer is not None:
            atlas, layer = self.atlas_layer
            atlas.give_back(layer)
            self.atlas_layer = None


@dataclass
class _Staging:
    """A finer map of a region on its way to the GPU, ``next_row`` rows written so far."""

    key: RegionKey
    bands: HeightBands
    next_row: int = 0


@dataclass(frozen=True)
class SurfacePrograms:
    """The programs a look draws its surface with, and how to set one up for a frame."""

    full_mesh: str  # the full grid of one region (iterations below one level-of-detail patch)
    patches: str  # level-of-detail patches
    setup: Callable[[moderngl.Program], None]
    lit: bool = False  # the natural look's programs: each region's light maps on LIGHT_UNIT
    atlas: str | None = None  # level-of-detail patches of the small regions, all at once (world_atlas.py)


class WorldTerrain:
    """The endless world's regions for drawing: the maps, their GPU copies, and each frame's selection."""

    def __init__(self, gpu: GpuResources) -> None:
        self.gpu = gpu
        self.cache = RegionCache()
        self.streaming = False  # True: draw what is held (the window's worker fills the cache; the frame stand-ins)
        self._resident: dict[tuple[int, int], _Resident] = {}
        self._arrays = HeightArrayPool(gpu.ctx, POOL_BYTES)  # regions left behind: height arrays, slope maps
        self._staging: dict[tuple[int, int], _Staging] = {}
        self._slab = (np.inf, -np.inf)  # the lowest and highest heights of every map uploaded
        self.wanted: list[RegionKey] = []  # the last frame's regions, nearest first, at the detail they need
        # When a frame first drew another world or full detail (the earliest of changes in a row), until a frame
        # shows all of it (``change_shown_seconds``); None meanwhile and after leaving the world.
        self.changed_at: float | None = None
        self._lit = False  # the last frame drew the natural look (regions lit by their own maps)
        self._showed_all = False  # the last frame drew all it wanted (``shows_all_wanted`` before its slope work)
        self.missing = 0  # regions in view the last frame had no map of
        self._iterations = 0  # the full detail the resident pyramids are for
        # What the pool holds for this world (when streaming): None nothing yet, False RESERVED_MAPS's height
        # arrays, True their slope maps too (the natural look's).
        self._reserved: bool | None = None
        self._unlit: LightMapsTexture | None = None  # light maps of open sky, for a region not traced yet
        self._atlases: dict[tuple[int, int], RegionAtlas] = {}  # by the side of their maps and of their light maps
        self._sea_floor_key: tuple | None = None  # the world and whole-unit centre the GPU's sea floor is of
        self.sea_floor_rect = (0.0, 0.0, 0.0)  # its west and north edges and its side, in world units

    def release(self) -> None:
        """Release every region's textures."""
        self._forget()
        self._arrays.release()
        if self._unlit is not None:
            self._unlit.release()
            self._unlit = None
        for atlas in self._atlases.values():
            atlas.release()
        self._atlases.clear()

    def leave(self) -> None:
        """The view has left the endless world: free its maps, their textures and the spare height arrays.

        Several hundred MiB at iterations 12, kept otherwise for as long as the window is open. Coming back
        streams the regions again, and times them afresh.
        """
        self.changed_at = None
        if self.cache.world is None and not self._resident and not self._arrays.bytes and not self._atlases:
            return  # nothing held
        self.release()
        self.cache.adopt(None)
        self.wanted = []
        give_back_freed_memory()  # else the process keeps the pages they were in

    def _forget(self) -> None:
        """Let go of every region's textures (arrays and slope maps to the pool, for the next world)."""
        for resident in self._resident.values():
            resident.release()
        self._resident.clear()
        for place in list(self._staging):
            self._stop_staging(place)
        self._sea_floor_key = None
        self._slab = (np.inf, -np.inf)

    def shows_all_wanted(self) -> bool:
        """Whether every region the last frame wanted is on the GPU from the map it wanted.

        With its light maps and slopes too, when lit: nothing left to make, upload or work out for this view. (Slopes
        the window works out after a frame's draws count here, but that frame drew without them: ``_showed_all``.)
        """
        for key in self.wanted:
            resident = self._resident.get((key.x, key.z))
            if resident is None or resident.key != key:
                return False
            if self._lit and (resident.light is None or not resident.slopes_ready):
                return False
        return True

    def change_shown_seconds(self) -> float | None:
        """Seconds from the first frame that drew a change of world or full detail until now.

        Once the last frame showed all of it (``shows_all_wanted`` as it drew); None before, and until the next change.
        The window's: None while not streaming.
        """
        if self.changed_at is None or not self._showed_all:
            return None
        seconds = time.perf_counter() - self.changed_at
        self.changed_at = None
        return seconds

    def slope_points_per_frame(self) -> int:
        """How many points of the natural look's slope maps a frame works out.

        A share in the window (streaming), so that no frame waits; all of them for a render, which must be exact.
        """
        return SLOPE_POINTS_PER_FRAME if self.streaming else 1 << 62

    def _adopt(self, settings: SceneSettings, lit: bool | None = None) -> World:
        """Take up the settings' world; with ``lit`` (whether the frame draws the natural look), fit the pool to it."""
        world_ = World.of(settings)
        assert world_ is not None
        if world_ != self.cache.world or settings.iterations != self._iterations:
            self._forget()  # another world, or pyramids for another full detail
            if self.changed_at is None:
                self.changed_at = time.perf_counter()
            self.cache.adopt(world_)
            self._iterations = settings.iterations
            self._reserved = None
        if not self.streaming or lit is None or lit == self._reserved:
            return world_
        self._arrays.keep_slopes(lit, NATURAL_POOL_BYTES if lit else POOL_BYTES)
        if lit or self._reserved is None:  # (back to the original look, the arrays reserved are there)
            for detail in range(RESERVED_DETAIL, settings.iterations + 1):  # coarser first: the pool keeps the last
                side = world_regions.map_side(detail)
                self._arrays.reserve(side, side, RESERVED_MAPS, slopes=lit)
        self._reserved = lit
        return world_

    def sea_floor(self, settings: SceneSettings, eye_x: float, eye_z: float) -> moderngl.Texture:
        """The world's heights under the sea around the eye (``world_regions.sea_floor``) as a texture.

        Remade when the eye reaches another whole unit (about 4-5 ms); ``sea_floor_rect`` says where it lies.
        """
        world_ = self._adopt(settings)
        centre = (round(eye_x), round(eye_z))
        if self._sea_floor_key != (world_, centre) or not self.gpu.has("texture:sea_floor"):
            heights, west, north, side = world_regions.sea_floor(world_, *centre)
            self.gpu.upload_sea_floor(heights)
            self._sea_floor_key, self.sea_floor_rect = (world_, centre), (west, north, side)
        return self.gpu.get("texture:sea_floor")

    def fill(self, world_: World, keys: list[RegionKey], light: bool = False) -> None:
        """Make the maps of ``keys`` not held yet (with ``light``, their light maps too), here and now."""
        for key in self.cache.missing(keys, light):
            heights = None if key in self.cache else world_regions.region_map(world_, key)
            self.cache.put(world_, key, heights, world_regions.region_light(world_, key) if light else None)

    def _resident_for(self, key: RegionKey, iterations: int, budget: _FrameBudget, lit: bool) -> _Resident | None:
        """The region's map on the GPU: the finest held up to ``key.detail``, uploaded while the budget lasts.

        A finer map on its way there that is no longer the one to show (the eye went on before it was whole) is let
        go, textures and all: a flight at iterations 12 in the natural look had left up to seven detail-12 maps
        half staged, 128 MiB each with their slope maps.
        """
        place = (key.x, key.z)
        resident = self._resident.get(place)
        staging = self._staging.get(place)
        if resident is not None and resident.key == key and (resident.light is not None or not lit):
            if staging is not None:
                self._stop_staging(place)
            return resident  # all there is to have
        best = self.cache.best(key.x, key.z, key.detail)
        if staging is not None and (best is None or staging.key != best[0]):
            self._stop_staging(place)  # not the map to show (any more): a finer one comes in afresh below
            staging = None
        if best is None:
            return resident
        best_key, maps = best
        if resident is not None and resident.key == best_key:
            if resident.light is None and maps.light is not None and budget.upload_bytes > 0:
                budget.upload_bytes -= maps.light.nbytes
                resident.light = self._light_texture(maps.light)
            return resident
        if resident is None:  # nothing drawn there yet: up it goes whole, now (a first map is a small stand-in)
            budget.upload_bytes -= maps.nbytes
            bands = HeightBands(self.gpu.ctx, maps.heights.shape[1], maps.heights.shape[0], self._arrays)
            bands.write(maps.heights)
            return self._make_resident(place, best_key, maps, bands, iterations)
        # A finer map: staged a band of rows per frame within the budget while the one there keeps drawing.
        if staging is None:
            rows, columns = maps.heights.shape
            bands = HeightBands(self.gpu.ctx, columns, rows, self._arrays)
            staging = self._staging[place] = _Staging(best_key, bands)
        row_bytes = maps.heights.shape[1] * maps.heights.itemsize
        rows_now = min(max(budget.upload_bytes, 0) // row_bytes, maps.heights.shape[0] - staging.next_row)
        if rows_now > 0:
            staging.bands.write(maps.heights, staging.next_row, rows_now)
            staging.next_row += rows_now
            budget.upload_bytes -= rows_now * row_bytes
        if staging.next_row < maps.heights.shape[0]:
            return resident
        if lit and not staging.bands.slopes_ready:
            # Its slopes too, before it takes the place of the one drawn (else the shading softens meanwhile): the
            # window's after this frame's draws (``draw``), a render's now.
            if self.streaming:
                budget.slope_maps.append(staging.bands)
                return resident
            staging.bands.advance_slopes(world_regions.APRON, budget.slope_points)
        del self._staging[place]
        resident.release()
        return self._make_resident(place, best_key, maps, staging.bands, iterations)

    def _stop_staging(self, place: tuple[int, int]) -> None:
        staging = self._staging.pop(place, None)
        if staging is not None:
            staging.bands.release()

    def _make_resident(self, place: tuple[int, int], key: RegionKey, maps: world_regions.RegionMaps,
                       bands: HeightBands, iterations: int) -> _Resident:
        if maps.pyramid is not None:
            low, high = maps.pyramid.bottom, maps.pyramid.top
        else:
            inner = maps.heights[world_regions.APRON:-world_regions.APRON, world_regions.APRON:-world_regions.APRON]
            low, high = float(inner.min()), float(inner.max())
        self._slab = (min(self._slab[0], low), max(self._slab[1], high))
        surface = None if maps.pyramid is None else lod.LodSurface.of_region(maps.pyramid, iterations, low, high)
        light = None if maps.light is None else self._light_texture(maps.light)
        resident = self._resident[place] = _Resident(key, bands, surface, light)
        return resident

    def _light_texture(self, maps: np.ndarray) -> LightMapsTexture:
        return LightMapsTexture(self.gpu.ctx, maps, repeat=False)  # a region's own: its neighbours have theirs

    def _unlit_texture(self) -> LightMapsTexture:
        """Open sky on a plain everywhere (``lighting.open_sky_light_maps``)."""
        if self._unlit is None:
            self._unlit = self._light_texture(lighting.open_sky_light_maps())
        return self._unlit

    def draw(self, settings: SceneSettings, view: glm.mat4, projection: glm.mat4, image_projection: glm.mat4,
             detail_height: int, field_of_view_y: float, lines: bool, programs: SurfacePrograms,
             reach: float) -> tuple[int, int]:
        """Draw the regions within ``reach`` in view; returns the triangles (or segments) drawn and the full mesh's."""
        world_ = self._adopt(settings, programs.lit)
        iterations = settings.iterations
        ranges = world_regions.world_ranges(settings, detail_height, field_of_view_y, programs.lit)
        # One region past the reach too: made before it comes into view.
        self.wanted = world_regions.wanted_regions(settings, reach + PREFETCH, ranges)
        self._lit = programs.lit
        eye_x, _, eye_z = camera.eye_position(settings)
        places = np.array([(key.x, key.z) for key in self.wanted], dtype=np.int64).reshape(-1, 2)
        within = world_regions.region_distances(places[:, 0], places[:, 1], eye_x, eye_z) <= reach
        if not self.streaming:
            self.fill(world_, self.wanted, programs.lit)
        view_rows = np.array(view, dtype=np.float64)

        def planes(matrix: glm.mat4) -> np.ndarray:
            return lod.frustum_planes(np.array(matrix * view, dtype=np.float64), None if lines else reach, view_rows)

        image_planes, frame_planes = planes(image_projection), planes(projection)
        budget = _FrameBudget(MAX_UPLOAD_BYTES if self.streaming else 1 << 62, self.slope_points_per_frame())
        bottom, top = self._slab if self._slab[0] <= self._slab[1] else (-1e3, 1e3)  # no map yet: any height
        out_of_view_flags = _outside(frame_planes, self.wanted, bottom, top)
        residents, drawable = [], []
        # Land in view with no map: the window's frame makes a coarse stand-in of it, nearest first, for
        # STAND_IN_SECONDS from its first (one under way then ends past it), and draws it. The worker makes them too,
        # first of all, but below every other thread: while the natural look's frames kept the cores busy it took
        # seconds to get to them (entering the world at iterations 10, up to 90 regions in view missing for 3 s).
        stand_ins_until: float | None = None
        self.missing = 0
        for key, out_of_view, near in zip(self.wanted, out_of_view_flags, within, strict=True):
            resident = self._resident_for(key, iterations, budget, programs.lit)
            if resident is None and near and not out_of_view and self.streaming:
                now = time.perf_counter()
                if stand_ins_until is None:
                    stand_ins_until = now + STAND_IN_SECONDS
                if now < stand_ins_until:
                    self.fill(world_, [world_regions.stand_in(key)], programs.lit)
                    resident = self._resident_for(key, iterations, budget, programs.lit)
            if resident is not None:
                residents.append((key, resident))
                if programs.atlas is not None:  # (the ring beyond the reach too: its slopes come with the layer)
                    self._take_atlas_layer(resident, budget)
                if near:  # the ring beyond the reach is made and uploaded, not drawn
                    drawable.append((key, resident))
            elif near and not out_of_view:
                self.missing += 1  # land in view not drawn: no map of it yet
        if programs.lit:  # the slope maps of every region held, nearest first: those just beyond come in whole
            budget.slope_maps += [resident.heights for _, resident in residents if not resident.slopes_ready]
            if not self.streaming:  # a render's all before its regions are drawn: it is exact
                self._advance_slopes(budget)
        drawn_places = {(key.x, key.z) for key, _ in residents}
        for place in set(self._resident) - drawn_places:
            self._resident.pop(place).release()  # left behind: its textures go
        for place in set(self._staging) - drawn_places:
            self._stop_staging(place)
        # The maps drawn, and those on their way to the GPU (dropped, their staging would start over once made again).
        self.cache.trim({resident.key for _, resident in residents} | {staged.key for staged in self._staging.values()})

        eye = np.array(camera.eye_position(settings))
        bottom, top = self._slab

        def seen(entries: list[tuple[RegionKey, _Resident]], planes_: np.ndarray) -> list[tuple[RegionKey, _Resident]]:
            outside = _outside(planes_, [key for key, _ in entries], bottom, top)
            return [entry for entry, out_of_view in zip(entries, outside, strict=True) if not out_of_view]

        # The error is the whole image's, found over every region it shows, whichever tile of it this frame is.
        in_image = seen(drawable, image_planes)
        tiled = image_projection != projection  # this frame is one tile of a larger image
        in_view = seen(in_image, frame_planes) if tiled else in_image
        budget_scale = max(1.0, (detail_height / lod.BUDGET_HEIGHT) ** 2)
        limit = (lod.SEGMENT_BUDGET if lines else lod.TRIANGLE_BUDGET) * budget_scale

        def select(ranges: np.ndarray) -> tuple[list[lod.Selection | None], int]:
            chosen = self._select(in_image, image_planes, eye, ranges, bottom, top)
            return chosen, sum(_count(selection, lines) for selection in chosen if selection is not None)

        ranges_of = functools.partial(lod.grid_ranges, iterations, detail_height, field_of_view_y, coarser_top=True)
        patch_ranges, selections = finest_within_budget(once_per_ranges(ranges_of, select), settings.lod_error,
                                                        limit, lines, functools.partial(least_step_growth, ranges_of))
        if tiled:  # the whole image's error, this tile's nodes
            selections = self._select(in_view, frame_planes, eye, patch_ranges, bottom, top)

        grid_size = (1 << iterations) + 1
        drawn = 0
        set_up: set[str] = set()
        # The regions with an atlas layer are drawn together, after the others (with the programs' atlas: the other
        # looks and modes draw every region alone).
        alone = [programs.atlas is None or resident.atlas_layer is None for _, resident in in_view]
        instances = self._upload_instances([selection if by_itself else None
                                            for selection, by_itself in zip(selections, alone, strict=True)],
                                           programs.patches, lines)
        for index, ((key, resident), selection) in enumerate(zip(in_view, selections, strict=True)):
            if not alone[index]:
                continue
            name = programs.full_mesh if selection is None else programs.patches
            program = self.gpu.programs[name]
            if name not in set_up:
                _set_up_regions(program, programs)
                if selection is not None:
                    lod_uniforms(program, selection)  # the same ranges and eye for every region
                    uniform(program, "grid_size").value = grid_size
                else:  # each region's full grid, its own map's points
                    uniform(program, "cell_shift").value = 0
                    uniform(program, "tiles").value = 1
                set_up.add(name)
            resident.heights.bind(program)
            if programs.lit:
                light = resident.light or self._unlit_texture()
                light.for_sun(settings.sun_azimuth).use(LIGHT_UNIT)
                uniform(program, "light_texels").value = light.side
                self.gpu.bind_slopes(program, resident.heights)
            if selection is None:  # a tiny world: each region's full grid
                uniform(program, "grid_size").value = resident.heights.size[0] - 2 * world_regions.APRON
                uniform(program, "tile_origin").value = world_regions.region_centre(key.x, key.z)
                drawn += _draw_full_mesh(self.gpu, name, resident.heights.size[0] - 2 * world_regions.APRON, lines)
            else:
                uniform(program, "cell_shift").value = iterations - resident.key.detail
                drawn += _draw_patches(program, instances, index, selection, lines)
        drawn += self._draw_atlases(settings, programs, in_view, selections, grid_size, iterations)
        # Whether this frame drew all it wanted, while the window times a change (slopes made whole below: the next
        # frame's). A render times nothing, and makes all it wants before it draws.
        self._showed_all = self.streaming and self.changed_at is not None and self.shows_all_wanted()
        # The window's share of slope maps, for the next frames (a render's were worked out whole before its draws).
        self._advance_slopes(budget)
        full_per_region = (lod.full_mesh_segments if lines else lod.full_mesh_triangles)(iterations, 1)
        # Every region within reach, as the tiles' ring counts.
        return drawn, full_per_region * int(np.count_nonzero(within))

    def _take_atlas_layer(self, resident: _Resident, budget: _FrameBudget) -> None:
        """A layer of its size's atlas for a small region drawn as patches, lit by its light maps, if it has none.

        Its slope map, worked out whole as it takes the layer, comes out of the frame's budget of slope points.
        A large map, one not lit yet, or one whose atlas is full (or the budget spent) is drawn alone.
        """
        side = resident.heights.size[0]
        if (resident.atlas_layer is not None or resident.light is None or resident.surface is None
                or side > ATLAS_MAX_SIDE or budget.slope_points < side * side):
            return
        heights = resident.heights.values
        assert heights is not None, "a resident's bands hold the map written into them"
        size = (side, resident.light.side)
        atlas = self._atlases.get(size)
        if atlas is None:
            atlas = self._atlases[size] = RegionAtlas(self.gpu.ctx, *size, ATLAS_LAYERS)
        layer = atlas.take(heights, resident.light.maps, world_regions.APRON)
        if layer is not None:
            resident.atlas_layer = atlas, layer
            budget.slope_points -= side * side

    def _draw_atlases(self, settings: SceneSettings, programs: SurfacePrograms,
                      in_view: list[tuple[RegionKey, _Resident]], selections: list[lod.Selection | None],
                      grid_size: int, iterations: int) -> int:
        """Draw the regions with an atlas layer: one selection of them all for each atlas (``draw_selection``)."""
        if programs.atlas is None:  # (a look without one: every region is drawn alone)
            return 0
        by_atlas: dict[RegionAtlas, list[tuple[int, _Resident, lod.Selection]]] = {}
        for (_, resident), selection in zip(in_view, selections, strict=True):
            if resident.atlas_layer is not None and selection is not None:
                atlas, layer = resident.atlas_layer
                by_atlas.setdefault(atlas, []).append((layer, resident, selection))
        if not by_atlas:
            return 0
        program = self.gpu.programs[programs.atlas]
        _set_up_regions(program, programs)
        uniform(program, "grid_size").value = grid_size
        uniform(program, "atlas_heights").value = ATLAS_HEIGHTS_UNIT
        uniform(program, "slopes").value = SLOPE_UNIT
        drawn = 0
        for atlas, members in by_atlas.items():
            atlas.for_sun(settings.sun_azimuth)
            atlas.heights.use(ATLAS_HEIGHTS_UNIT)
            atlas.slopes.use(SLOPE_UNIT)
            atlas.light.use(LIGHT_UNIT)
            uniform(program, "light_texels").value = atlas.light_side
            regions = np.array([(layer, iterations - resident.key.detail) for layer, resident, _ in members],
                               dtype=np.float32)
            selected = [selection for _, _, selection in members]
            first = selected[0]  # the same patch, ranges and eye for every region
            together = lod.Selection(_with_regions(selected, "whole", regions),
                                     _with_regions(selected, "quarters", regions), first.patch, first.ranges,
                                     first.eye)
            # Buffers of each atlas's own: rewriting one between draws would make the driver wait.
            drawn += draw_selection(self.gpu, together, False, programs.atlas,
                                    buffer_prefix=f"atlas{atlas.side}x{atlas.light_side}-")
        return drawn

    def _advance_slopes(self, budget: _FrameBudget) -> None:
        """Work out what the budget allows of the slope maps it lists, in turn."""
        for heights in budget.slope_maps:
            budget.slope_points -= heights.advance_slopes(world_regions.APRON, budget.slope_points)
        budget.slope_maps.clear()

    def _upload_instances(self, selections: list[lod.Selection | None], program_name: str,
                          lines: bool) -> dict[str, _Instances]:
        """The nodes of the regions drawn alone in one instance buffer per part, written once a frame.

        ``selections``: a region's, or None for one drawn otherwise. Rewriting one buffer between the regions' draws
        would make the driver wait for each draw to finish.
        """
        instances: dict[str, _Instances] = {}
        chosen = [selection for selection in selections if selection is not None]
        if not chosen:
            return instances
        for part, quads in (("whole", chosen[0].patch), ("quarters", chosen[0].patch // 2)):
            rows = [getattr(selection, part) if selection is not None else _NO_NODES for selection in selections]
            starts = np.concatenate([[0], np.cumsum([len(part_rows) for part_rows in rows])])
            if not starts[-1]:
                continue
            buffer_part = f"world-{part}"  # its own buffer and vertex arrays: the tiles' keep offset 0
            vertex_array = self.gpu.lod_vertex_array(program_name, buffer_part, np.concatenate(rows), quads, lines)
            instances[part] = _Instances(vertex_array, self.gpu.lod_instances(buffer_part), starts, quads)
        return instances

    def _select(self, in_view: list[tuple[RegionKey, _Resident]], planes: np.ndarray, eye: np.ndarray,
                ranges: np.ndarray, bottom: float, top: float) -> list[lod.Selection | None]:
        held = [(key, resident.surface) for key, resident in in_view if resident.surface is not None]
        roots = np.array([world_regions.region_centre(key.x, key.z) for key, _ in held]).reshape(-1, 2)
        chosen = iter(lod.select_regions([surface for _, surface in held], roots, planes, eye, ranges, bottom, top))
        # A tiny world's regions have no pyramid: each draws its full grid (None).
        return [None if resident.surface is None else next(chosen) for _, resident in in_view]


@dataclass
class _FrameBudget:
    """What one frame may still do for the regions: bytes of maps to upload, points of slope maps to work out.

    With the slope maps to work them out of: a render's before its regions are drawn, the window's after.
    """

    upload_bytes: int
    slope_points: int
    # To work out in turn (``_advance_slopes``): finer maps on their way first, then those drawn, each nearest first.
    slope_maps: list[HeightBands] = field(default_factory=list)


@dataclass(frozen=True)
class _Instances:
    """One part's nodes of every region in one buffer: region i's are rows starts[i] .. starts[i + 1]."""

    vertex_array: moderngl.VertexArray
    buffer: moderngl.Buffer
    starts: np.ndarray
    quads: int


def _draw_patches(program: moderngl.Program, instances: dict[str, _Instances], index: int,
                  selection: lod.Selection, lines: bool) -> int:
    """Draw region ``index``'s nodes from the frame's instance buffers; returns what it drew."""
    stride = 4 * lod.INSTANCE_FIELDS
    node, node_info = (cast(moderngl.Attribute, program[name]).location for name in ("node", "node_info"))
    for part in instances.values():
        first, count = int(part.starts[index]), int(part.starts[index + 1] - part.starts[index])
        if not count:
            continue
        part.vertex_array.bind(node, "f", part.buffer, "4f", offset=first * stride, stride=stride, divisor=1)
        part.vertex_array.bind(node_info, "f", part.buffer, "2f", offset=first * stride + 16, stride=stride,
                               divisor=1)
        uniform(program, "patch_quads").value = part.quads
        part.vertex_array.render(moderngl.TRIANGLES, instances=count)  # as many vertices as its index buffer holds
    return _count(selection, lines)


def _with_regions(selections: list[lod.Selection], part: str, regions: np.ndarray) -> np.ndarray:
    """The selections' nodes of one part, each with its region's row of ``regions`` after (atlas_region)."""
    rows = [getattr(selection, part) for selection in selections]
    return np.hstack([np.concatenate(rows), np.repeat(regions, [len(part_rows) for part_rows in rows], axis=0)])


def _set_up_regions(program: moderngl.Program, programs: SurfacePrograms) -> None:
    """What every region drawn with ``program`` shares: the look's uniforms, the apron of the regions' maps."""
    programs.setup(program)
    uniform(program, "apron").value = world_regions.APRON


def _count(selection: lod.Selection, lines: bool) -> int:
    return selection.segments() if lines else selection.triangles()


def _outside(planes: np.ndarray, keys: list[RegionKey], bottom: float, top: float) -> np.ndarray:
    """Per region, whether its box (its square, the world's slab of heights) is wholly outside a frustum plane."""
    if not keys:
        return np.zeros(0, dtype=bool)
    centres = np.array([world_regions.region_centre(key.x, key.z) for key in keys])
    low = np.column_stack([centres[:, 0] - 1.0, np.full(len(keys), bottom), centres[:, 1] - 1.0])
    high = np.column_stack([centres[:, 0] + 1.0, np.full(len(keys), top), centres[:, 1] + 1.0])
    # Each plane's farthest box corner along its normal: if even that is outside, the whole box is.
    farthest = np.where(planes[None, :, :3] > 0, high[:, None, :], low[:, None, :])
    return np.any(np.einsum("npk,pk->np", farthest, planes[:, :3]) + planes[:, 3] < 0.0, axis=1)


def _draw_full_mesh(gpu: GpuResources, program_name: str, size: int, lines: bool) -> int:
    """One tile's full grid with the program's attribute-less vertex array; returns what it drew."""
    if lines:
        gpu.draw_grid_lines(size, 1)
        return lod.full_mesh_segments(size.bit_length() - 1, 1)
    gpu.get(f"vao:{program_name}").render(moderngl.TRIANGLE_STRIP, vertices=2 * size, instances=size - 1)
    return lod.full_mesh_triangles(size.bit_length() - 1, 1)
