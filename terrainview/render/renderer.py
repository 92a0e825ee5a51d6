"""Drawing one frame of a scene in any of the five render types, into any framebuffer.

The same code serves the window and headless renders. A frame may be a sub-rectangle of a larger image
(tiled high-resolution shots): ``ndc_window`` maps the whole image's normalised device coordinates to the
part being drawn, and ``image_size`` is the whole image's size, so the result does not depend on tiling.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import moderngl
import numpy as np
from pyglm import glm

from terrainview.kernels import fractal, lod, texturing
from terrainview.render.gpu import FOG_COLOR, SLOPE_UNIT, SURFACE_FOG, GpuResources, HeightBands, uniform
from terrainview.render.lod_draw import LodTerrain, draw_selection
from terrainview.render.world_draw import LIGHT_UNIT, SurfacePrograms, WorldTerrain
from terrainview.scene import camera, catalog
from terrainview.scene.derived_arrays import DerivedArrays, shown_half_passes
from terrainview.scene.settings import ENDLESS, Look, SceneSettings
from terrainview.scene.world_regions import World, world_band_limits, world_snow_height

FIELD_OF_VIEW_Y = 60.0
WATER_UNIT = 3  # the natural look's erosion maps (the surface's wetness and deposit)
SEA_FLOOR_UNIT = 3  # the ground under the sea, in the natural look's water program
STRETCH_UNIT = SLOPE_UNIT + 1  # draw_texture's: no program samples it
PLACES_UNIT = STRETCH_UNIT + 1  # the tiles' natural look: its first pass's places, for its second
NOISE_UNIT, DETAIL_UNIT = PLACES_UNIT + 1, PLACES_UNIT + 2  # the natural look's broad variation and detail
NEAR_PLANE = 0.1
FAR_PLANE = 15.0
# The natural look sees farther: land out to NATURAL_REACH fades into the haze, the sea to the far plane.
NATURAL_REACH = 24.0
NATURAL_FAR_PLANE = 80.0
HAZE_TRANSMITTANCE_AT_REACH = 0.03  # what the haze leaves of land at NATURAL_REACH: it meets the sky there
REFERENCE_HEIGHT = 720  # a frame this tall draws 1-pixel lines; taller images scale them up


@dataclass(frozen=True)
class Frame:
    """What a frame is drawn for: the whole image's size, the part of it being drawn, and the line scale."""

    image_size: tuple[int, int]
    ndc_window: glm.mat4 = field(default_factory=lambda: glm.mat4(1.0))
    line_scale: float = 1.0
    field_of_view_y: float = FIELD_OF_VIEW_Y
    detail_height: int | None = None  # the output image's height the level of detail is chosen for
    # The framebuffer holds several samples a pixel (a window's --samples, which moderngl does not tell of the
    # window's own framebuffer): the tiles' natural look is shaded in one pass there.
    multisampled: bool = False

    @property
    def detail_image_height(self) -> int:
        """The height the level of detail is chosen for: ``detail_height``, else the image's own."""
        return self.detail_height or self.image_size[1]

    @property
    def aspect(self) -> float:
        """The whole image's width over its height."""
        return self.image_size[0] / self.image_size[1]

    def perspective(self, far: float = FAR_PLANE) -> glm.mat4:
        """The perspective projection of the whole image, mapped to the part of it being drawn."""
        return camera.compose(self.ndc_window, projection_matrix(self.aspect, self.field_of_view_y, far))


@dataclass(frozen=True)
class FrameStats:
    """What a frame drew of the terrain (sky and water not counted), and what the full mesh would be."""

    primitives: int
    kind: str  # "triangles" or "line segments"
    terrain: int = 0  # of which the surface's (no sky, no water) ...
    terrain_full: int = 0  # ... and what the full mesh would have drawn

    def terrain_summary(self) -> str:
        """What the surface drew against its full mesh, e.g. "312k of 33.5M triangles"."""
        return f"{_count(self.terrain)} of {_count(self.terrain_full)} {self.kind}"

    def summary(self) -> str:
        """The status line's figure: the surface against its full mesh, or what the frame drew."""
        return self.terrain_summary() if self.terrain_full else f"{_count(self.primitives)} {self.kind}"


def _count(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1e6:.1f}M"
    return f"{value / 1e3:.0f}k" if value >= 10_000 else str(value)


def tile_reach(lines: bool) -> float:
    """How far from the eye endless tiles reach: past the fog's end, or the far plane in lines mode (no fog)."""
    return FAR_PLANE if lines else SURFACE_FOG[1]


def projection_matrix(aspect: float, field_of_view_y: float = FIELD_OF_VIEW_Y, far: float = FAR_PLANE) -> glm.mat4:
    """The perspective projection for ``aspect`` and the vertical field of view in degrees, NEAR_PLANE..far."""
    return glm.perspective(glm.radians(field_of_view_y), aspect, NEAR_PLANE, far)


def sun_direction(settings: SceneSettings) -> tuple[float, float, float]:
    """The unit vector toward the sun: from its compass bearing (0 north, -z; 90 east, +x) and elevation."""
    azimuth, elevation = math.radians(settings.sun_azimuth), math.radians(settings.sun_elevation)
    return (math.sin(azimuth) * math.cos(elevation), math.sin(elevation), -math.cos(azimuth) * math.cos(elevation))


def fov_keeping_framing(reference_aspect: float, aspect: float, field_of_view_y: float = FIELD_OF_VIEW_Y) -> float:
    """Vertical field of view that shows at least the reference view's whole frame at another aspect ratio.

    A wider image keeps the vertical field of view (and shows more at the sides); a narrower one widens
    it until the reference view's horizontal extent fits.
    """
    if aspect >= reference_aspect:
        return field_of_view_y
    half_width = math.tan(math.radians(field_of_view_y) / 2.0) * reference_aspect
    return math.degrees(2.0 * math.atan(half_width / aspect))


def tile_window(image_size: tuple[int, int], tile: tuple[int, int, int, int]) -> glm.mat4:
    """NDC transform from the whole image to the tile (x0, y0, width, height), y0 counted from the bottom."""
    width, height = image_size
    x0, y0, tile_width, tile_height = tile
    scale_x, scale_y = width / tile_width, height / tile_height
    offset_x = (width - 2.0 * x0) / tile_width - 1.0
    offset_y = (height - 2.0 * y0) / tile_height - 1.0
    return camera.compose(glm.translate(glm.vec3(offset_x, offset_y, 0.0)), glm.scale(glm.vec3(scale_x, scale_y, 1.0)))


def _to_rays(settings: SceneSettings, projection: glm.mat4) -> glm.mat4:
    """From normalized device coordinates to world directions (shaders/far_plane_rays.glsl).

    The inverse of the camera's rotation and projection.
    """
    return cast(glm.mat4, glm.inverse(projection * camera.rotation_matrix(settings)))  # pyglm types it loosely


def _iterations_of(grid_size: int) -> int:
    """The iterations of a (2**n + 1)-point grid side."""
    return (grid_size - 1).bit_length() - 1


DrawFunction = Callable[["Renderer", SceneSettings, moderngl.Framebuffer, Frame], FrameStats]
# Each render type of the catalog, and the function that draws a frame of it (registered below by _draws).
DRAWERS: dict[catalog.RenderType, DrawFunction] = {}


def _draws(name: str) -> Callable[[DrawFunction], DrawFunction]:
    """Register the decorated ``Renderer`` method as the drawing of the catalog's render type ``name``."""
    def register(function: DrawFunction) -> DrawFunction:
        DRAWERS[catalog.RENDER_TYPES[name]] = function
        return function
    return register


class Renderer:
    """A scene's CPU arrays and GPU objects, kept in step with the settings, and the frame drawing."""

    def __init__(self, ctx: moderngl.Context) -> None:
        self.ctx = ctx
        self.gpu = GpuResources(ctx)
        self.arrays = DerivedArrays()
        self.teximage_band_limits = (0.0, 0.0)  # heights splitting the teximage's range in thirds
        self.surface_snow_height = 0.0  # the natural look's snow line on the surface (texturing.snow_height)
        self.lod = LodTerrain()
        self.world = WorldTerrain(self.gpu)
        self.surface_heights: np.ndarray | None = None  # the surface on the GPU: what frames draw

    def update(self, settings: SceneSettings) -> list[str]:
        """Regenerate what the settings changed and upload it, all on this thread; returns what changed."""
        changed = self.arrays.update(settings)
        self.upload(changed)
        return list(changed)

    def upload(self, changed: dict[str, np.ndarray | None], lod_surface: lod.LodSurface | None = None) -> None:
        """Move regenerated arrays (from ``DerivedArrays.update``, maybe on another thread) to the GPU.

        A new surface's level-of-detail pyramid is built here unless given (the window's worker builds it).
        """
        # The teximage's flow map goes up before the teximage is drawn with it.
        uploads: dict[str, Callable[[Any], None]] = {
            "surface": self.gpu.upload_surface, "surface_water": self.gpu.upload_surface_water,
            "clouds": self.gpu.upload_clouds, "teximage_flow": self.gpu.upload_teximage_flow,
            "teximage": self._draw_teximage_texture,
            "surface_texture": self.gpu.upload_surface_texture, "light": self.gpu.upload_light_maps}
        for name, upload in uploads.items():
            if name in changed:
                upload(changed[name])
        surface = changed.get("surface")
        if surface is not None:
            self.surface_heights = surface
            self.surface_snow_height = texturing.snow_height(surface) if surface.ndim == 2 else 0.0  # 1D: no snow
            self.lod.surface = lod_surface or lod.LodSurface.of(surface)

    def release(self) -> None:
        """Release the GPU objects."""
        self.world.release()
        self.gpu.release()

    def _draw_teximage_texture(self, heights: np.ndarray) -> None:
        """Draw the teximage heightmap top-down into the teximage texture (the original's glCopyTexImage)."""
        framebuffer = self.gpu.upload_teximage_heights(heights)
        low, high = float(heights.min()), float(heights.max())
        self.teximage_band_limits = (low + (high - low) / 3.0, low + 2.0 * (high - low) / 3.0)
        with self.ctx.scope(framebuffer, enable_only=moderngl.NOTHING):
            framebuffer.viewport = (0, 0, *framebuffer.size)
            framebuffer.clear(0.0, 0.0, 0.0, 1.0)
            self._draw_teximage_triangles(glm.mat4(1.0))
        self.gpu.get("texture:teximage").build_mipmaps()

    def _draw_teximage_triangles(self, placement: glm.mat4) -> int:
        """Draw the teximage heightmap as flat-shaded lit triangles seen from above; returns the triangle count.

        The square -1..1 is placed by ``placement``.
        """
        program, heights = self.gpu.programs["teximage"], self.gpu.get("heights:teximage")
        size = heights.size[0]
        uniform(program, "band_limits").value = self.teximage_band_limits
        uniform(program, "placement").write(placement)
        self._bind_grid(program, heights, size, 1)
        wet = self.gpu.has("texture:teximage_flow")
        uniform(program, "wet").value = wet
        uniform(program, "flow").value = 1
        if wet:
            self.gpu.get("texture:teximage_flow").use(1)
        self.gpu.get("vao:teximage").render(moderngl.TRIANGLE_STRIP, vertices=2 * size, instances=size - 1)
        return 2 * (size - 1) ** 2

    def can_draw(self, settings: SceneSettings) -> bool:
        """The GPU holds the kind of surface the render type draws (a 1D profile or a 2D heightmap)."""
        profile = catalog.render_type(settings).dimensions == 1
        return self.gpu.complete and self.gpu.has("vao:polyline" if profile else "heights:surface")

    # --- drawing --------------------------------------------------------------------------------------------

    def draw(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame) -> FrameStats:
        """Draw ``settings`` into ``framebuffer``, whose viewport is the part of the image being drawn."""
        draw = DRAWERS[catalog.render_type(settings)]
        if World.of(settings) is None:
            self.world.leave()
        with self.ctx.scope(framebuffer, enable_only=moderngl.NOTHING):
            return draw(self, settings, framebuffer, frame)

    def draws_natural(self, settings: SceneSettings) -> bool:
        """Whether a frame of ``settings`` shows the natural look: rendered mode, with light maps to draw it by.

        The tiles' light maps are traced after each new terrain; until the first arrive the original look is drawn.
        """
        natural = settings.look is Look.NATURAL and settings.mode == "rendered"
        return natural and (settings.tile == ENDLESS or self.gpu.has("light_maps"))

    def draw_texture(self, framebuffer: moderngl.Framebuffer, texture: moderngl.Texture) -> None:
        """Stretch ``texture`` over the whole of ``framebuffer`` (a draft over the window).

        From a texture unit no program samples: the next draft is drawn into that texture. No clear first: the
        quad covers every pixel.
        """
        with self.ctx.scope(framebuffer, enable_only=moderngl.NOTHING):
            self._draw_image(framebuffer, texture, (-1.0, -1.0, 1.0, 1.0), glm.mat4(1.0), STRETCH_UNIT)

    def _line_uniforms(self, program: moderngl.Program, settings: SceneSettings, framebuffer: moderngl.Framebuffer,
                       view: glm.mat4, projection: glm.mat4, frame: Frame) -> None:
        _, _, viewport_width, viewport_height = framebuffer.viewport
        uniform(program, "view").write(view)
        uniform(program, "projection").write(projection)
        uniform(program, "viewport_size").value = (viewport_width, viewport_height)
        uniform(program, "line_width").value = max(1.0, frame.line_scale)
        uniform(program, "antialias").value = settings.antialias
        uniform(program, "line_color").value = (1.0, 1.0, 1.0) if settings.invert else (0.0, 0.0, 0.0)

    def _clear_for_lines(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer) -> None:
        background = 0.0 if settings.invert else 1.0
        framebuffer.clear(background, background, background, 1.0)
        if settings.antialias:
            self.ctx.enable(moderngl.BLEND)
            self.ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA

    @_draws('1d')
    def draw_profile(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame) -> FrameStats:
        """Draw the 1D profile as a line strip, repeated side by side for the settings' tiles."""
        program = self.gpu.programs["polyline"]
        projection = camera.compose(frame.ndc_window, glm.ortho(-frame.aspect, frame.aspect, -1.0, 1.0, -1.0, 1.0))
        self._clear_for_lines(settings, framebuffer)
        self._line_uniforms(program, settings, framebuffer, glm.mat4(1.0), projection, frame)
        # Endless: enough copies to fill the image's width (the profile view does not move).
        tiles = camera.tile_layout(settings, frame.aspect)[0]
        uniform(program, "tiles").value = tiles
        uniform(program, "tile_spacing").value = 2.0
        self.gpu.get("vao:polyline").render(moderngl.LINE_STRIP, vertices=self.gpu.profile_length,
                                            instances=tiles)
        return FrameStats((self.gpu.profile_length - 1) * tiles, "line segments")

    def _surface_layout(self, settings: SceneSettings, view: glm.mat4, projection: glm.mat4, frame: Frame,
                        lines: bool, reach: float | None = None,
                        far: float = FAR_PLANE) -> tuple[camera.TileLayout, lod.Selection | None]:
        """The frame's tile layout (camera.tile_layout's, taken once a frame) and level-of-detail selection.

        ``reach``: how far land is drawn (by default the original's, ``tile_reach``). The selection is None when
        the full mesh is drawn.
        """
        reach = tile_reach(lines) if reach is None else reach
        layout = camera.tile_layout(settings, reach)
        detail_height = frame.detail_image_height
        image_projection = projection_matrix(frame.aspect, frame.field_of_view_y, far)
        selection = self.lod.select(settings, view, projection, detail_height, frame.field_of_view_y, lines,
                                    layout, image_projection, reach)
        return layout, selection

    @_draws('lines')
    def draw_lines(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame) -> FrameStats:
        """Draw the surface as grid lines: the full mesh's tiles, or the level-of-detail selection."""
        view, projection = camera.view_matrix(settings), frame.perspective()
        self._clear_for_lines(settings, framebuffer)
        if settings.tile == ENDLESS:
            programs = SurfacePrograms("grid_lines", "grid_lines_lod", lambda program: self._line_uniforms(
                program, settings, framebuffer, view, projection, frame))
            segments, full = self._draw_world(settings, view, frame, True, programs, tile_reach(True), FAR_PLANE)
            return FrameStats(segments, "line segments", segments, full)
        layout, selection = self._surface_layout(settings, view, projection, frame, lines=True)
        program = self.gpu.programs["grid_lines" if selection is None else "grid_lines_lod"]
        self._line_uniforms(program, settings, framebuffer, view, projection, frame)
        size = self.gpu.surface_grid_size
        self._bind_tiles(program, self.gpu.get("heights:surface"), size, layout, selection)
        tiles = layout[0]
        full = lod.full_mesh_segments(_iterations_of(size), tiles)
        if selection is None:
            self.gpu.draw_grid_lines(size, tiles ** 2)
            segments = full
        else:
            segments = draw_selection(self.gpu, selection, lines=True, program_name="grid_lines_lod")
        self._draw_pass_marks(settings, view, projection, frame, layout)
        return FrameStats(segments, "line segments", segments, full)

    def _draw_pass_marks(self, settings: SceneSettings, view: glm.mat4, projection: glm.mat4, frame: Frame,
                         layout: camera.TileLayout) -> None:
        """Mark the points the latest half-pass set, when the surface shows diamond-square's steps (--passes)."""
        half_passes = shown_half_passes(settings)
        if half_passes is None or fractal.passes_grid_side(half_passes) != self.gpu.surface_grid_size:
            return  # not stepping, or that surface not uploaded yet
        side = self.gpu.surface_grid_size
        program = self.gpu.programs["pass_marks"]
        uniform(program, "view").write(view)
        uniform(program, "projection").write(projection)
        uniform(program, "mark_scale").value = max(1.0, frame.line_scale)
        self._bind_tiles(program, self.gpu.get("heights:surface"), side, layout, None)
        self.ctx.enable(moderngl.PROGRAM_POINT_SIZE)
        vertex_array, marks = self.gpu.pass_marks(half_passes)
        vertex_array.render(moderngl.POINTS, vertices=marks, instances=layout[0] ** 2)

    def _draw_world(self, settings: SceneSettings, view: glm.mat4, frame: Frame, lines: bool,
                    programs: SurfacePrograms, reach: float, far: float) -> tuple[int, int]:
        """The endless world's regions in view (render/world_draw.py): what was drawn, and the full mesh's."""
        image_projection = projection_matrix(frame.aspect, frame.field_of_view_y, far)
        return self.world.draw(settings, view, frame.perspective(far), image_projection,
                               frame.detail_image_height, frame.field_of_view_y, lines, programs,
                               reach)

    @staticmethod
    def _bind_grid(program: moderngl.Program, heights: HeightBands, grid_size: int, tiles: int | None,
                   origin: tuple[float, float] = (0.0, 0.0)) -> None:
        """Bind the height texture and grid size, and the tiles of the full mesh.

        For the full mesh (``tiles`` not None) tiles x tiles copies centred on ``origin`` (world x, z); level of
        detail places its nodes itself.
        """
        heights.bind(program)
        Renderer._tile_grid_uniforms(program, grid_size, tiles, origin)

    @staticmethod
    def _tile_grid_uniforms(program: moderngl.Program, grid_size: int, tiles: int | None,
                            origin: tuple[float, float] = (0.0, 0.0)) -> None:
        """grid.glsl's uniforms for the tiles' map, but its heights: the grid size, and the tiles if given.

        The tiles' map has every point and no apron; a program that places no grid points (the natural look's
        second pass) is given no tiles, and so no tile origin.
        """
        uniform(program, "grid_size").value = grid_size
        for name in ("cell_shift", "apron"):
            if name in program:
                uniform(program, name).value = 0
        if tiles is not None:
            uniform(program, "tiles").value = tiles
            uniform(program, "tile_origin").value = origin

    def _bind_tiles(self, program: moderngl.Program, heights: HeightBands, grid_size: int,
                    layout: camera.TileLayout, selection: lod.Selection | None) -> None:
        """Bind the heightmap and, for the full mesh (no ``selection``), the frame's tile layout."""
        tiles, origin = layout
        self._bind_grid(program, heights, grid_size, tiles if selection is None else None, origin)

    @contextmanager
    def _depth_kept(self, framebuffer: moderngl.Framebuffer, test: str = "<") -> Iterator[None]:
        """Draw depth-tested by ``test``, writing no depth; after, the test is "<" again and depth is written.

        What is blended over the land, and the land's second pass.
        """
        framebuffer.depth_mask = False
        self.ctx.depth_func = test
        try:
            yield
        finally:
            self.ctx.depth_func = "<"
            framebuffer.depth_mask = True

    @contextmanager
    def _behind_the_surface(self) -> Iterator[None]:
        """Draw at the far plane's depth where the surface left the depth buffer clear (and facing either way)."""
        self.ctx.disable(moderngl.CULL_FACE)
        self.ctx.depth_func = "<="
        try:
            yield
        finally:
            self.ctx.depth_func = "<"

    @_draws('rendered')
    def draw_rendered(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame) -> FrameStats:
        """Draw the rendered scene: the sky pyramid, the textured and fogged surface, and the water if any.

        In the natural look: the daylight sky, the sunlit surface and the sea (``_draw_natural``).
        """
        if self.draws_natural(settings):
            return self._draw_natural(settings, framebuffer, frame)
        ctx, gpu = self.ctx, self.gpu
        view, projection = camera.view_matrix(settings), frame.perspective()
        framebuffer.clear(*FOG_COLOR, 1.0)
        filter_ = (moderngl.LINEAR_MIPMAP_LINEAR, moderngl.LINEAR) if settings.linear else (
            moderngl.NEAREST, moderngl.NEAREST)

        # The tiled surface: depth test and back-face culling, textured (the endless world by its own height
        # bands), fogged.
        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        world_ = World.of(settings)
        if world_ is None:
            texture = gpu.surface_texture()
            texture.filter = filter_
            texture.use(1)
        # The program by how the surface is coloured (gpu.TERRAIN_SHADINGS); each also with level of detail.
        shading = ("terrain_world" if world_ is not None else "terrain_slope" if settings.shading == "slope"
                   else "terrain")

        def setup(terrain: moderngl.Program) -> None:
            uniform(terrain, "view").write(view)
            uniform(terrain, "projection").write(projection)
            if world_ is not None:
                uniform(terrain, "band_limits").value = world_band_limits(world_)
            else:
                uniform(terrain, "surface_texture").value = 1

        if world_ is not None:
            layout = camera.tile_layout(settings, tile_reach(False))
            surface_triangles, full = self._draw_world(settings, view, frame, False,
                                                       SurfacePrograms(shading, f"{shading}_lod", setup),
                                                       tile_reach(False), FAR_PLANE)
        else:
            layout, selection = self._surface_layout(settings, view, projection, frame, lines=False)
            terrain = gpu.programs[shading if selection is None else f"{shading}_lod"]
            setup(terrain)
            size = gpu.surface_grid_size
            self._bind_tiles(terrain, gpu.get("heights:surface"), size, layout, selection)
            full = lod.full_mesh_triangles(_iterations_of(size), layout[0])
            if selection is None:
                gpu.get(f"vao:{shading}").render(moderngl.TRIANGLE_STRIP, vertices=2 * size,
                                                 instances=(size - 1) * layout[0] ** 2)
                surface_triangles = full
            else:
                surface_triangles = draw_selection(gpu, selection, lines=False, program_name=f"{shading}_lod")
        tiles, origin = layout
        triangles = 8 + surface_triangles

        # The sky pyramid around the eye (rotation only), at the far plane's depth: drawn after the surface,
        # it shades only the pixels the surface left (the same picture as drawing it first, for less work).
        with self._behind_the_surface():
            sky = gpu.programs["sky"]
            uniform(sky, "rotation").write(camera.rotation_matrix(settings))
            uniform(sky, "yaw_rotation").write(glm.rotate(glm.radians(settings.yrot), glm.vec3(0.0, 1.0, 0.0)))
            uniform(sky, "projection").write(projection)
            clouds = gpu.get("texture:clouds")
            clouds.filter = filter_
            clouds.use(0)
            uniform(sky, "clouds").value = 0
            gpu.get("vao:sky").render(moderngl.TRIANGLES)

        if settings.water_level is not None:
            # Translucent: blended over the surface, depth-tested against it, writing no depth.
            ctx.disable(moderngl.CULL_FACE)
            ctx.enable(moderngl.BLEND)
            ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            water = gpu.programs["water"]
            uniform(water, "view").write(view)
            uniform(water, "projection").write(projection)
            uniform(water, "level").value = settings.water_level
            uniform(water, "half_extent").value = float(tiles)
            uniform(water, "centre").value = origin
            with self._depth_kept(framebuffer):
                gpu.get("vao:water").render(moderngl.TRIANGLE_STRIP, vertices=4)
            triangles += 2
        return FrameStats(triangles, "triangles", surface_triangles, full)

    def _draw_natural(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame) -> FrameStats:
        """The natural look: sky per pixel, the surface lit by the sun and the sky through the haze, the sea."""
        ctx, gpu = self.ctx, self.gpu
        framebuffer.clear(0.0, 0.0, 0.0, 1.0)
        view, projection = camera.view_matrix(settings), frame.perspective(NATURAL_FAR_PLANE)
        rays = _to_rays(settings, projection)
        sun = sun_direction(settings)
        eye = camera.eye_position(settings)
        haze = math.log(1.0 / HAZE_TRANSMITTANCE_AT_REACH) / NATURAL_REACH ** 2  # per squared distance

        # The sky-view table first: the sky by direction, the sun's and the sky's light, the exposure, the haze's
        # light looking down.
        sky_constants = gpu.sky_table(sun)
        framebuffer.use()
        gpu.get("texture:sky_table").use(1)

        def sky_uniforms(program: moderngl.Program, lights_ground: bool = True) -> None:
            uniform(program, "sky_table").value = 1
            uniform(program, "sun_direction").value = sun
            for name, value in sky_constants.items():
                if lights_ground or name != "ambient_light":  # the sky lights no ground
                    uniform(program, name).value = value

        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        water_level = settings.water_level if settings.water_level is not None else -1e3
        # Where the surface's hydraulic erosion ran water (the endless world is never eroded).
        eroded = settings.tile != ENDLESS and gpu.has("texture:surface_water")
        world_ = World.of(settings)
        snow = self.surface_snow_height if world_ is None else world_snow_height(world_)
        values: dict[str, Any] = {"eye": eye, "sun_across": math.hypot(sun[0], sun[2]), "haze_density": haze,
                                  "height_scale": settings.height_scale, "snow_height": snow,
                                  "water_level": water_level, "eroded": eroded}
        gpu.get("texture:noise").use(NOISE_UNIT)
        gpu.get("texture:detail").use(DETAIL_UNIT)
        if eroded:
            gpu.get("texture:surface_water").use(WATER_UNIT)

        def shading_uniforms(program: moderngl.Program) -> None:  # natural_shading.glsl's
            for name, value in values.items():
                uniform(program, name).value = value
            sky_uniforms(program)
            uniform(program, "light_maps").value = LIGHT_UNIT
            uniform(program, "noise").value = NOISE_UNIT
            uniform(program, "detail_octaves").value = DETAIL_UNIT
            uniform(program, "water_maps").value = WATER_UNIT

        if settings.tile == ENDLESS:
            layout = camera.tile_layout(settings, NATURAL_REACH)

            def setup(program: moderngl.Program) -> None:
                uniform(program, "view").write(view)
                uniform(program, "projection").write(projection)
                shading_uniforms(program)

            programs = SurfacePrograms("natural_terrain", "natural_terrain_lod", setup, lit=True,
                                       atlas="natural_terrain_atlas")
            surface_triangles, full = self._draw_world(settings, view, frame, False, programs, NATURAL_REACH,
                                                       NATURAL_FAR_PLANE)
        else:
            layout, surface_triangles, full = self._draw_natural_tiles(settings, framebuffer, frame, view,
                                                                       projection, rays, eye, shading_uniforms)
        tiles, origin = layout
        triangles = 1 + surface_triangles

        # The sky where the land left the far plane: every pixel's direction, its light from the table.
        with self._behind_the_surface():
            sky = gpu.programs["natural_sky"]
            uniform(sky, "inverse_view_projection").write(rays)
            sky_uniforms(sky, lights_ground=False)
            gpu.get("vao:natural_sky").render(moderngl.TRIANGLES, vertices=3)

        if settings.water_level is not None:
            ctx.disable(moderngl.CULL_FACE)
            ctx.enable(moderngl.BLEND)
            ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            # The sea's depth is read from the tile's map (repeated without end, or within the tiles: its
            # tile_sea_floor); over the endless world, from its floor around the eye: a program each.
            water_program = "natural_water_world" if settings.tile == ENDLESS else "natural_water"
            water = gpu.programs[water_program]
            uniform(water, "view").write(view)
            uniform(water, "projection").write(projection)
            sky_uniforms(water)
            extent = 1e9 if isinstance(settings.tile, str) else float(tiles)
            values = {"eye": eye, "haze_density": haze, "level": settings.water_level,
                      "reach": NATURAL_FAR_PLANE, "land_centre": origin, "land_extent": (extent, extent)}
            if settings.tile == ENDLESS:
                self.world.sea_floor(settings, eye[0], eye[2]).use(SEA_FLOOR_UNIT)
                values["sea_floor_rect"] = self.world.sea_floor_rect
            else:
                gpu.tile_sea_floor().use(SEA_FLOOR_UNIT)
                values["corner_from_centre"] = camera.map_corner_from_centre(tiles)
            values["sea_floor"] = SEA_FLOOR_UNIT
            for name, value in values.items():
                uniform(water, name).value = value
            with self._depth_kept(framebuffer):
                gpu.get(f"vao:{water_program}").render(moderngl.TRIANGLE_STRIP, vertices=4)
            triangles += 2
        return FrameStats(triangles, "triangles", surface_triangles, full)

    def _draw_natural_tiles(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame,
                            view: glm.mat4, projection: glm.mat4, rays: glm.mat4, eye: tuple[float, float, float],
                            shading_uniforms: Callable[[moderngl.Program], None]) -> tuple[camera.TileLayout, int, int]:
        """The tiles' land in the natural look: the frame's tile layout, the triangles drawn and the full mesh's.

        Two passes (shaders/natural_surface.glsl). The mesh writes only its depth and its distance from the eye
        (into the colour, copied out into "texture:surface_places"); then each pixel in front of that depth is
        shaded once, from one triangle over the image (``rays``: _to_rays's; ``eye``: the eye's world position, in
        Python's double precision, which the map's places far from the origin need). llvmpipe shades whole blocks of
        pixels, so the mesh's small triangles, shaded as they were drawn, cost more than the pixels they cover. A
        multisampled framebuffer's samples would be mixed in the copy: there the mesh is shaded as it is drawn.
        ``shading_uniforms`` sets natural_shading.glsl's uniforms.
        """
        ctx, gpu = self.ctx, self.gpu
        layout, selection = self._surface_layout(settings, view, projection, frame, lines=False,
                                                 reach=NATURAL_REACH, far=NATURAL_FAR_PLANE)
        tiles, origin = layout
        size = gpu.surface_grid_size
        full = lod.full_mesh_triangles(_iterations_of(size), tiles)
        surface = gpu.get("heights:surface")
        surface.advance_slopes(0, self.world.slope_points_per_frame())
        gpu.light_maps_for_sun(settings.sun_azimuth).use(LIGHT_UNIT)

        def shaded(program: moderngl.Program) -> None:
            shading_uniforms(program)
            gpu.bind_slopes(program, surface)

        two_passes = not (framebuffer.samples or frame.multisampled)
        mesh = "natural_places" if two_passes else "natural_terrain"
        program_name = mesh if selection is None else f"{mesh}_lod"
        program = gpu.programs[program_name]
        uniform(program, "view").write(view)
        uniform(program, "projection").write(projection)
        if two_passes:
            uniform(program, "eye").value = eye
            uniform(program, "place_reach").value = NATURAL_FAR_PLANE
        else:
            shaded(program)
        self._bind_tiles(program, surface, size, layout, selection)
        if selection is None:
            gpu.get(f"vao:{mesh}").render(moderngl.TRIANGLE_STRIP, vertices=2 * size, instances=(size - 1) * tiles ** 2)
            triangles = full
        else:
            triangles = draw_selection(gpu, selection, lines=False, program_name=program_name)
        if not two_passes:
            return layout, triangles, full
        # To the part of the image drawn, from its origin (a window's own framebuffer keeps its first size).
        x, y, width, height = framebuffer.viewport
        places, places_framebuffer = gpu.surface_places((x + width, y + height))
        ctx.copy_framebuffer(places_framebuffer, framebuffer)

        shading = gpu.programs["natural_surface"]
        shaded(shading)
        places.use(PLACES_UNIT)
        self._tile_grid_uniforms(shading, size, None)  # it places no grid points: no tiles
        # The eye from the tiles' origin, in double precision: far from the origin, eye + ray * distance in floats
        # would misplace the map's place by cells.
        eye_from_origin = (eye[0] - origin[0], eye[2] - origin[1])
        for name, value in {"surface_places": PLACES_UNIT, "place_reach": NATURAL_FAR_PLANE,
                            "eye_from_origin": eye_from_origin,
                            "corner_from_centre": camera.map_corner_from_centre(tiles),
                            "first_pixel": (x, y), "last_pixel": (x + width - 1, y + height - 1)}.items():
            uniform(shading, name).value = value
        uniform(shading, "inverse_view_projection").write(rays)
        with self._depth_kept(framebuffer, ">"):  # on the far plane: in front of the land's depth, nowhere else
            gpu.get("vao:natural_surface").render(moderngl.TRIANGLES, vertices=3)
        return layout, triangles, full

    def _draw_image(self, framebuffer: moderngl.Framebuffer, texture: moderngl.Texture, rectangle: tuple,
                    ndc_window: glm.mat4, unit: int = 0) -> FrameStats:
        program = self.gpu.programs["screen_quad"]
        uniform(program, "rectangle").value = rectangle
        uniform(program, "ndc_window").write(ndc_window)
        texture.use(unit)
        uniform(program, "image").value = unit
        self.gpu.get("vao:screen_quad").render(moderngl.TRIANGLE_STRIP, vertices=4)
        return FrameStats(2, "triangles")

    @_draws('clouds')
    def draw_clouds(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame) -> FrameStats:
        """Draw the clouds texture over the whole image, unfiltered."""
        clouds = self.gpu.get("texture:clouds")
        clouds.filter = (moderngl.NEAREST, moderngl.NEAREST)
        framebuffer.clear(0.0, 0.0, 0.0, 1.0)
        return self._draw_image(framebuffer, clouds, (-1.0, -1.0, 1.0, 1.0), frame.ndc_window)

    @_draws('teximage')
    def draw_teximage(self, settings: SceneSettings, framebuffer: moderngl.Framebuffer, frame: Frame) -> FrameStats:
        """Draw the surface texture (a CPU-made one) or the teximage's triangles into a centred square."""
        # The largest power-of-two square that fits the image, centred.
        width, height = frame.image_size
        side = 1 << int(math.log2(max(1, min(width, height))))
        half_x, half_y = side / width, side / height
        framebuffer.clear(0.0, 0.0, 0.0, 1.0)  # black around the square
        if catalog.texture(settings).make is not None:  # a CPU-made texture is an image: show it
            texture = self.gpu.surface_texture()
            texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
            return self._draw_image(framebuffer, texture, (-half_x, -half_y, half_x, half_y), frame.ndc_window)
        # The teximage itself: its triangles drawn straight into the square, as the original drew them.
        placement = camera.compose(frame.ndc_window, glm.scale(glm.vec3(half_x, half_y, 1.0)))
        return FrameStats(self._draw_teximage_triangles(placement), "triangles")
