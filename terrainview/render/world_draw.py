"""Drawing the endless world: each region around the eye with its own height texture and level of detail.

The regions' maps come from a ``RegionCache`` (scene/world_regions.py). Offscreen renders make the maps a frame
needs before drawing it; the window streams them from its worker instead (``streaming``), and a frame draws the
finest map of each region it holds, never waiting. Each region is a quadtree root of its own, selected with the
ranges and the slab of heights every region shares, so neighbours meet with the same levels and morphs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import moderngl
import numpy as np
from pyglm import glm

from terrainview.kernels import lod
from terrainview.render.gpu import GpuResources, HeightBands, uniform
from terrainview.render.lod_draw import ERROR_GROWTH, MAX_RETRIES, draw_selection
from terrainview.scene import camera, world_regions
from terrainview.scene.settings import SceneSettings
from terrainview.scene.world_regions import RegionCache, RegionKey, World

MAX_UPLOAD_BYTES = 12 << 20  # a streaming frame uploads at most this much of new maps (about 10 ms on llvmpipe)


@dataclass
class _Resident:
    """A region's map on the GPU, and its pyramid for selection."""

    key: RegionKey
    heights: HeightBands
    surface: lod.LodSurface | None  # None below lod.PATCH_QUADS cells: drawn as its full mesh


@dataclass(frozen=True)
class SurfacePrograms:
    """The programs a look draws its surface with, and how to set one up for a frame."""

    full_mesh: str  # the full grid of one region (iterations below one level-of-detail patch)
    patches: str  # level-of-detail patches
    setup: Callable[[moderngl.Program], None]


class WorldTerrain:
    """The endless world's regions for drawing: the maps, their GPU copies, and each frame's selection."""

    def __init__(self, gpu: GpuResources) -> None:
        self.gpu = gpu
        self.cache = RegionCache()
        self.streaming = False  # True: draw what is held (the window's worker fills the cache)
        self._resident: dict[tuple[int, int], _Resident] = {}
        self._slab = (np.inf, -np.inf)  # the lowest and highest heights of every map uploaded
        self.wanted: list[RegionKey] = []  # the last frame's regions, nearest first, at the detail they need
        self.missing = 0  # regions in view the last frame had no map of
        self._iterations = 0  # the full detail the resident pyramids are for

    def release(self) -> None:
        """Release every region's textures."""
        for resident in self._resident.values():
            resident.heights.release()
        self._resident.clear()
        self._slab = (np.inf, -np.inf)

    def _adopt(self, settings: SceneSettings) -> World:
        world_ = World.of(settings)
        assert world_ is not None
        if world_ != self.cache.world or settings.iterations != self._iterations:
            self.release()  # another world, or pyramids for another full detail
            self.cache.adopt(world_)
            self._iterations = settings.iterations
        return world_

    def fill(self, world_: World, keys: list[RegionKey]) -> None:
        """Make the maps of ``keys`` not held yet, here and now."""
        for key in self.cache.missing(keys):
            self.cache.put(world_, key, world_regions.region_map(world_, key))

    def _resident_for(self, key: RegionKey, iterations: int, budget: list[int]) -> _Resident | None:
        """The region's map on the GPU: the finest held up to ``key.detail``, uploaded while the budget lasts."""
        resident = self._resident.get((key.x, key.z))
        best = self.cache.best(key.x, key.z, key.detail)
        if best is None or (resident is not None and resident.key == best[0]):
            return resident
        best_key, heights = best
        if resident is not None and budget[0] <= 0:
            return resident  # the map already there stands in until a later frame
        budget[0] -= heights.nbytes
        if resident is not None:
            resident.heights.release()
        rows, columns = heights.shape
        bands = HeightBands(self.gpu.ctx, columns, rows)
        bands.write(heights)
        inner = heights[world_regions.APRON:-world_regions.APRON, world_regions.APRON:-world_regions.APRON]
        low, high = float(inner.min()), float(inner.max())
        self._slab = (min(self._slab[0], low), max(self._slab[1], high))
        surface = None
        if best_key.detail >= lod.PATCH_QUADS.bit_length() - 1:
            surface = lod.LodSurface.of_region(inner, iterations, low, high)
        resident = self._resident[(key.x, key.z)] = _Resident(best_key, bands, surface)
        return resident

    def draw(self, settings: SceneSettings, view: glm.mat4, projection: glm.mat4, image_projection: glm.mat4,
             detail_height: int, field_of_view_y: float, lines: bool, programs: SurfacePrograms,
             reach: float) -> tuple[int, int]:
        """Draw the regions within ``reach`` in view; returns the triangles (or segments) drawn and the full mesh's."""
        world_ = self._adopt(settings)
        iterations = settings.iterations
        ranges = world_regions.world_ranges(settings, detail_height, field_of_view_y)
        self.wanted = world_regions.wanted_regions(settings, reach, ranges)
        if not self.streaming:
            self.fill(world_, self.wanted)
        view_rows = np.array(view, dtype=np.float64)

        def planes(matrix: glm.mat4) -> np.ndarray:
            return lod.frustum_planes(np.array(matrix * view, dtype=np.float64), None if lines else reach, view_rows)

        image_planes, frame_planes = planes(image_projection), planes(projection)
        budget = [MAX_UPLOAD_BYTES if self.streaming else 1 << 62]
        residents, self.missing = [], 0
        for key in self.wanted:
            resident = self._resident_for(key, iterations, budget)
            if resident is None:
                self.missing += 1
            else:
                residents.append((key, resident))
        self.cache.trim({resident.key for _, resident in residents})
        for place in set(self._resident) - {(key.x, key.z) for key, _ in residents}:
            self._resident.pop(place).heights.release()  # left behind: its texture goes

        eye = np.array(camera.eye_position(settings))
        bottom, top = self._slab
        in_view = [(key, resident) for key, resident in residents
                   if not _outside(frame_planes, key, bottom, top)]
        budget_scale = max(1.0, (detail_height / lod.BUDGET_HEIGHT) ** 2)
        limit = (lod.SEGMENT_BUDGET if lines else lod.TRIANGLE_BUDGET) * budget_scale
        error = settings.lod_error
        for _ in range(MAX_RETRIES):
            patch_ranges = lod.grid_ranges(iterations, detail_height, field_of_view_y, error)
            selections = self._select(in_view, image_planes, eye, patch_ranges, bottom, top)
            total = sum(_count(selection, lines) for selection in selections if selection is not None)
            if total <= limit:
                break
            error *= ERROR_GROWTH
        if image_projection != projection:  # one tile of a larger image: the whole image's error, this tile's nodes
            selections = self._select(in_view, frame_planes, eye, patch_ranges, bottom, top)

        grid_size = (1 << iterations) + 1
        drawn = 0
        set_up: set[str] = set()
        for (key, resident), selection in zip(in_view, selections, strict=True):
            name = programs.full_mesh if selection is None else programs.patches
            program = self.gpu.programs[name]
            if name not in set_up:
                programs.setup(program)
                set_up.add(name)
            resident.heights.bind(program)
            uniform(program, "apron").value = world_regions.APRON
            if selection is None:  # a tiny world: each region's full grid
                uniform(program, "grid_size").value = resident.heights.size[0] - 2 * world_regions.APRON
                uniform(program, "cell_shift").value = 0
                uniform(program, "tiles").value = 1
                uniform(program, "tile_origin").value = world_regions.region_centre(key.x, key.z)
                drawn += _draw_full_mesh(self.gpu, name, resident.heights.size[0] - 2 * world_regions.APRON, lines)
            else:
                uniform(program, "grid_size").value = grid_size
                uniform(program, "cell_shift").value = iterations - resident.key.detail
                drawn += draw_selection(self.gpu, selection, lines, program_name=name)
        full_per_region = (lod.full_mesh_segments if lines else lod.full_mesh_triangles)(iterations, 1)
        return drawn, full_per_region * len(self.wanted)  # every region within reach, as the tiles' ring counts

    def _select(self, in_view: list[tuple[RegionKey, _Resident]], planes: np.ndarray, eye: np.ndarray,
                ranges: np.ndarray, bottom: float, top: float) -> list[lod.Selection | None]:
        selections: list[lod.Selection | None] = []
        for key, resident in in_view:
            if resident.surface is None:
                selections.append(None)
                continue
            surface = dataclasses.replace(resident.surface, bottom=bottom, top=top)
            roots = np.array([world_regions.region_centre(key.x, key.z)])
            selections.append(lod.select_nodes(surface, roots, planes, eye, ranges, outer_edges=0))
        return selections


def _count(selection: lod.Selection, lines: bool) -> int:
    return selection.segments() if lines else selection.triangles()


def _outside(planes: np.ndarray, key: RegionKey, bottom: float, top: float) -> bool:
    """Whether a region's box (its square, the world's slab of heights) is wholly outside one frustum plane."""
    x, z = world_regions.region_centre(key.x, key.z)
    low = np.array([x - 1.0, bottom, z - 1.0, 1.0])
    high = np.array([x + 1.0, top, z + 1.0, 1.0])
    farthest = np.where(planes[:, :3] > 0, high[:3], low[:3])
    return bool(np.any(np.einsum("ij,ij->i", planes[:, :3], farthest) + planes[:, 3] < 0.0))


def _draw_full_mesh(gpu: GpuResources, program_name: str, size: int, lines: bool) -> int:
    """One tile's full grid with the program's attribute-less vertex array; returns what it drew."""
    if lines:
        gpu.get("vao:grid_lines").render(moderngl.LINE_STRIP, vertices=size, instances=2 * size)
        return lod.full_mesh_segments(size.bit_length() - 1, 1)
    gpu.get(f"vao:{program_name}").render(moderngl.TRIANGLE_STRIP, vertices=2 * size, instances=size - 1)
    return lod.full_mesh_triangles(size.bit_length() - 1, 1)
