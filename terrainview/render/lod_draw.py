"""Drawing the surface with level of detail.

Per frame, select nodes (terrainview/lod.py) and draw them as instanced grid patches with the looks' patch
programs (``terrain_lod`` and its other shadings, ``natural_terrain_lod``, ``grid_lines_lod``). The renderer's
rendered and lines modes call this when the full mesh would exceed its budget; otherwise they draw the full mesh.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TypeVar

import moderngl
import numpy as np
from pyglm import glm

from terrainview.kernels import lod
from terrainview.render.gpu import MAX_LOD_LEVELS, SURFACE_FOG, GpuResources, uniform
from terrainview.scene import camera
from terrainview.scene.settings import LevelOfDetail, SceneSettings

ERROR_GROWTH = 1.5  # a selection over budget is made again with this much more error, ...
MAX_RETRIES = 8  # ... this many times at most
# The finest error a frame's budget may buy: a grid step of one output pixel, or in lines mode four (finer, the
# wireframe would fill in black).
FINEST_ERROR_PIXELS = 1.0
FINEST_LINES_ERROR_PIXELS = 4.0
# What a step finer is taken to multiply a view's count by where its ranges grow by the whole step (2.25 by
# 1 / error**2; 1.8 to 2.1 measured): a step that would then be over the budget is not tried (a frame's selection
# is most of its search's cost, and the default views all fit at the cap and never a step finer). Where the
# ranges' floor holds them back, ``least_step_growth`` takes less. A view whose nodes are all of the finest level
# already draws the same a step finer; it keeps the cap's morph zones.
LEAST_STEP_GROWTH = 1.75


class LodTerrain:
    """The CPU half of level of detail: the current surface's min/max pyramid, and each frame's selection."""

    def __init__(self) -> None:
        self.surface: lod.LodSurface | None = None


    def select(self, settings: SceneSettings, view: glm.mat4, projection: glm.mat4, detail_height: int,
               field_of_view_y: float, lines: bool, layout: camera.TileLayout,
               image_projection: glm.mat4 | None = None, reach: float = SURFACE_FOG[1]) -> lod.Selection | None:
        """The nodes to draw, or None when the full mesh is drawn.

        The full mesh is drawn with level of detail off, or with the full mesh small enough
        (lod.FULL_MESH_TRIANGLES, FULL_MESH_SEGMENTS: the original's exact look). Rendered mode selects nothing
        beyond ``reach`` (the fog's end; the natural look's haze reaches farther). A view that would exceed the
        budget (an eye low over a large surface) is drawn with a larger error instead; when ``projection`` shows
        one tile of a larger image, ``image_projection`` (the whole image's) decides that error, so every tile
        uses the same. The quadtrees' roots are the tiles of ``layout`` (camera.tile_layout's, which the
        renderer takes once a frame), the same tiles the full mesh draws: for ``--tile endless`` the ring around
        the eye, which frustum culling trims.
        """
        surface = self.surface
        if settings.lod is LevelOfDetail.OFF or surface is None:
            return None
        tiles, origin = layout
        if lines:
            budget, full = lod.SEGMENT_BUDGET, lod.full_mesh_segments(surface.iterations, tiles)
            if full <= lod.FULL_MESH_SEGMENTS:
                return None
        else:
            budget, full = lod.TRIANGLE_BUDGET, lod.full_mesh_triangles(surface.iterations, tiles)
            if full <= lod.FULL_MESH_TRIANGLES:
                return None
        view_rows = np.array(view, dtype=np.float64)  # numpy gets pyglm matrices row by row

        def planes(matrix: glm.mat4) -> np.ndarray:
            view_projection = np.array(matrix * view, dtype=np.float64)
            return lod.frustum_planes(view_projection, None if lines else reach, view_rows)

        eye = np.array(camera.eye_position(settings))
        roots = lod.tile_roots(tiles) + origin
        image_planes = planes(image_projection if image_projection is not None else projection)
        limit = budget * max(1.0, (detail_height / lod.BUDGET_HEIGHT) ** 2)

        def select(ranges: np.ndarray) -> tuple[lod.Selection, int]:
            selection = lod.select_nodes(surface, roots, image_planes, eye, ranges)
            return selection, selection.segments() if lines else selection.triangles()

        ranges_of = functools.partial(lod.lod_ranges, surface, detail_height, field_of_view_y)
        ranges, selection = finest_within_budget(once_per_ranges(ranges_of, select), settings.lod_error, limit,
                                                 lines, functools.partial(least_step_growth, ranges_of))
        if image_projection is None or image_projection == projection:
            return selection
        return lod.select_nodes(surface, roots, planes(projection), eye, ranges)


Chosen = TypeVar("Chosen")


def once_per_ranges(ranges_of: Callable[[float], np.ndarray], select: Callable[[np.ndarray], tuple[Chosen, int]]
                    ) -> Callable[[float], tuple[tuple[np.ndarray, Chosen], int]]:
    """``finest_within_budget``'s ``select`` from the ranges an error gives and a selection for ranges.

    Each distinct ranges is selected once: past their floor (MAX_NODE_EXTENT in lod.grid_ranges) coarser errors
    give the same ranges, and selecting is most of the search's cost.
    """
    tried: list[tuple[tuple[np.ndarray, Chosen], int]] = []

    def select_at(error: float) -> tuple[tuple[np.ndarray, Chosen], int]:
        ranges = ranges_of(error)
        for earlier in tried:
            if np.array_equal(earlier[0][0], ranges):
                return earlier
        chosen, count = select(ranges)
        tried.append(((ranges, chosen), count))
        return tried[-1]

    return select_at


def least_step_growth(ranges_of: Callable[[float], np.ndarray], error: float) -> float:
    """What a step finer than ``error`` is taken to multiply a view's count by (LEAST_STEP_GROWTH).

    Less, by the square of how much less the ranges grow than the step, where their floor (MAX_NODE_EXTENT in
    lod.grid_ranges) holds them back at ``error``.
    """
    coarse, fine = ranges_of(error), ranges_of(error / ERROR_GROWTH)
    finite = np.isfinite(coarse) & np.isfinite(fine)
    grown = float(np.min(fine[finite] / coarse[finite])) if finite.any() else ERROR_GROWTH
    return LEAST_STEP_GROWTH * (grown / ERROR_GROWTH) ** 2


def finest_within_budget(select: Callable[[float], tuple[Chosen, int]], cap: float, limit: float, lines: bool,
                         step_growth: Callable[[float], float]) -> Chosen:
    """What ``select(error)`` gives for the finest error the budget ``limit`` allows.

    From FINEST_ERROR_PIXELS (FINEST_LINES_ERROR_PIXELS for ``lines``) up to ``cap`` (--lod-error); past the cap
    only while even the cap is over the budget and a coarser error draws less.
    ``select`` returns its choice and what it draws, and may be asked again for an error it has answered (wrap it in
    ``once_per_ranges``, which answers from memory). The drawn count goes about as 1 / error**2, so one try at the
    cap says how much finer to try; errors are whole steps of ERROR_GROWTH below the cap, so a moving eye does
    not change the error every frame. A step is not tried where ``step_growth`` (``least_step_growth``) of the
    error before it says it would be over the budget.
    """
    chosen, count = select(cap)
    error = cap
    if count > limit:  # even the cap is too fine: coarser until it fits, or until coarser draws no less
        for _ in range(MAX_RETRIES - 1):
            error *= ERROR_GROWTH
            coarser, coarser_count = select(error)
            if coarser_count >= count:
                # Taken as the floor: past an error that grows with the image's height the ranges stop shrinking
                # (MAX_NODE_EXTENT in lod.grid_ranges), so coarser errors select the same nodes. (The endless
                # world's far regions then take half-size patches, grid_ranges's coarser_top: its natural view,
                # 143 regions within reach, draws 54k triangles where a whole patch each made 101k.)
                break
            chosen, count = coarser, coarser_count
            if count <= limit:
                break
        return chosen
    finest = FINEST_LINES_ERROR_PIXELS if lines else FINEST_ERROR_PIXELS
    if count == 0 or cap <= finest or count * step_growth(cap) > limit:
        return chosen
    finest_step = math.floor(math.log(cap / finest) / math.log(ERROR_GROWTH) + 1e-9)
    # The count goes about as 1 / error**2: start where it would meet the limit, then walk to the finest that fits.
    estimate = max(finest, cap * math.sqrt(count / limit))
    step = min(finest_step, max(1, math.floor(math.log(cap / estimate) / math.log(ERROR_GROWTH))))
    fitting: tuple[int, Chosen] = (0, chosen)
    while 0 < step <= finest_step:  # it may come back to a step that did not fit: once_per_ranges answers again
        finer, finer_count = select(cap / ERROR_GROWTH ** step)
        if finer_count <= limit:
            fitting = (step, finer)
            if finer_count * step_growth(cap / ERROR_GROWTH ** step) > limit:
                break  # the next step cannot fit
            step += 1
        elif fitting[0] >= step - 1 and fitting[0] > 0:
            break  # the step before fitted: it is the finest
        else:
            step -= 1
    return fitting[1]


def lod_uniforms(program: moderngl.Program, selection: lod.Selection) -> None:
    """The level-of-detail program's per-frame uniforms: each level's morph zone and the eye they are measured from."""
    zones = np.zeros((MAX_LOD_LEVELS, 2), dtype="f4")
    morph = selection.morph_zones()
    zones[:len(morph)] = morph
    uniform(program, "morph_zones").write(zones.tobytes())
    uniform(program, "lod_eye").value = tuple(float(value) for value in selection.eye)


def draw_selection(gpu: GpuResources, selection: lod.Selection, lines: bool, program_name: str,
                   buffer_prefix: str = "") -> int:
    """Draw the selected nodes as grid lines or triangles with the patch program ``program_name``.

    The program's other uniforms are set. Its nodes go to the instance buffers named ``buffer_prefix`` and the part.
    Returns the triangles or line segments drawn.
    """
    program = gpu.programs[program_name]
    lod_uniforms(program, selection)
    for part, rows, quads in (("whole", selection.whole, selection.patch),
                              ("quarters", selection.quarters, selection.patch // 2)):
        if not len(rows):
            continue
        uniform(program, "patch_quads").value = quads
        vertex_array = gpu.lod_vertex_array(program_name, buffer_prefix + part, rows, quads, lines)
        vertex_array.render(moderngl.TRIANGLES, instances=len(rows))  # as many vertices as its index buffer holds
    return selection.segments() if lines else selection.triangles()
