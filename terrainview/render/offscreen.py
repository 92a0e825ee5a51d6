"""Offscreen rendering to images: the library behind ``terrainview render``, screenshots and the tests' frames.

Images of any size up to 8192 per side are drawn in tiles no larger than the GL limits and stitched, so the
result does not depend on the driver; supersampled shots are drawn larger and reduced with a Lanczos filter.
Lines are drawn wider in proportion to the output height, so a 4K shot looks like the window.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import moderngl
import numpy as np
from PIL import Image

from terrainview.base.atomic_files import OutputError, atomic_output
from terrainview.render.renderer import FIELD_OF_VIEW_Y, REFERENCE_HEIGHT, Frame, FrameStats, Renderer, tile_window
from terrainview.scene.image_size import MAX_TILE_SIDE, check_supersample
from terrainview.scene.scene_file import png_text_chunks
from terrainview.scene.settings import SceneSettings


def create_headless_context() -> moderngl.Context:
    """A standalone GL 3.3+ context with no window: EGL on Linux (works without a display or GPU)."""
    try:
        ctx = moderngl.create_standalone_context(require=330, backend="egl") if sys.platform.startswith(  # type: ignore[arg-type]  # noqa: E501
            "linux") else moderngl.create_standalone_context(require=330)
    except Exception as error:  # the driver's own message says what is missing
        raise OutputError(f"cannot create an OpenGL 3.3 context for offscreen rendering ({error}); "
                          "on Debian install libegl1 libgl1 libgl1-mesa-dri") from None
    return ctx


def drawn_surface_texture(settings: SceneSettings) -> np.ndarray:
    """The texture the GPU draws on the surface (the teximage), read back from a headless context.

    RGB uint8 in the heightmap's row order; the OBJ export writes it beside the mesh.
    """
    ctx = create_headless_context()
    renderer = Renderer(ctx)
    try:
        renderer.update(settings)
        return renderer.gpu.surface_texture_rgb()
    finally:
        renderer.release()
        ctx.release()


def max_tile_side(ctx: moderngl.Context) -> int:
    """The largest framebuffer side this context renders in one piece."""
    viewport_limit = min(ctx.info["GL_MAX_VIEWPORT_DIMS"])
    return min(ctx.info["GL_MAX_RENDERBUFFER_SIZE"], ctx.info["GL_MAX_TEXTURE_SIZE"], viewport_limit, MAX_TILE_SIDE)


def line_scale_for(height: int) -> float:
    """Lines as thick, relative to the image, as a 720-pixel-high window draws them."""
    return max(1.0, height / REFERENCE_HEIGHT)


def _tiles(width: int, height: int, side: int) -> Iterator[tuple[int, int, int, int]]:
    for y0 in range(0, height, side):
        for x0 in range(0, width, side):
            yield x0, y0, min(side, width - x0), min(side, height - y0)


def _tile_rectangles(ctx: moderngl.Context, width: int, height: int,
                     tile_side: int | None = None) -> list[tuple[int, int, int, int]]:
    """The tiles an image of width x height is drawn in: at most ``tile_side`` (and the context's limit) a side."""
    return list(_tiles(width, height, min(tile_side or max_tile_side(ctx), max_tile_side(ctx))))


def tile_count(ctx: moderngl.Context, size: tuple[int, int], supersample: int = 1) -> int:
    """The tiles ``render_pixels`` draws an image of ``size`` in (supersampled), one after another."""
    return len(_tile_rectangles(ctx, size[0] * supersample, size[1] * supersample))


class TiledRender:
    """One image drawn tile by tile: ``step()`` draws the next tile.

    A window can so spread a large shot over many frames (with progress and cancel), while ``render_pixels``
    simply runs it to the end.

    ``renderer`` must be up to date with ``settings``. Tiles are at most ``tile_side`` pixels (default and
    upper bound: the context's limit). Lines scale with the output height unless ``line_scale`` is given.
    """

    def __init__(self, renderer: Renderer, settings: SceneSettings, size: tuple[int, int], *, supersample: int = 1,
                 tile_side: int | None = None, field_of_view_y: float = FIELD_OF_VIEW_Y,
                 line_scale: float | None = None) -> None:
        check_supersample(size, supersample)
        self.renderer, self.settings, self.size, self.supersample = renderer, settings, size, supersample
        self.field_of_view_y = field_of_view_y
        ctx = renderer.ctx
        self.full_size = (size[0] * supersample, size[1] * supersample)
        width, height = self.full_size
        self.line_scale = (line_scale or line_scale_for(size[1])) * supersample
        self.pixels = np.empty((height, width, 3), dtype=np.uint8)
        self.tiles = _tile_rectangles(ctx, width, height, tile_side)
        self.done_tiles = 0
        # What the tiles drew, summed; the full mesh is the whole image's, the same whatever the tiling.
        self.stats = FrameStats(0, "")
        color = ctx.renderbuffer(self.tiles[0][2:], 4)  # the first tile is a whole one: the largest
        depth = ctx.depth_renderbuffer(color.size)
        self._gl_objects = (ctx.framebuffer([color], depth), depth, color)

    @property
    def progress(self) -> float:
        """The fraction of the tiles drawn, 0 to 1."""
        return self.done_tiles / len(self.tiles)

    @property
    def finished(self) -> bool:
        """Every tile has been drawn."""
        return self.done_tiles == len(self.tiles)

    def step(self) -> None:
        """Draw the next tile into the image."""
        framebuffer = self._gl_objects[0]
        width, height = self.full_size
        x0, y0, tile_width, tile_height = self.tiles[self.done_tiles]
        framebuffer.viewport = (0, 0, tile_width, tile_height)
        # The level of detail is chosen for the output image, not the supersampled drawing.
        frame = Frame(self.full_size, tile_window(self.full_size, (x0, y0, tile_width, tile_height)),
                      self.line_scale, self.field_of_view_y, detail_height=self.size[1])
        drawn = self.renderer.draw(self.settings, framebuffer, frame)
        self.stats = FrameStats(self.stats.primitives + drawn.primitives, drawn.kind,
                                self.stats.terrain + drawn.terrain, max(self.stats.terrain_full, drawn.terrain_full))
        raw = framebuffer.read(viewport=(0, 0, tile_width, tile_height), components=3)
        tile = np.frombuffer(raw, dtype=np.uint8).reshape(tile_height, tile_width, 3)[::-1]
        self.pixels[height - y0 - tile_height:height - y0, x0:x0 + tile_width] = tile
        self.done_tiles += 1

    def result(self) -> np.ndarray:
        """The finished image as RGB uint8 rows, top row first, filtered down when supersampled."""
        return self.pixels if self.supersample == 1 else reduce(self.pixels, self.size)

    def release(self) -> None:
        """Release the framebuffer and its renderbuffers."""
        for gl_object in self._gl_objects:
            gl_object.release()


def reduce(pixels: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A supersampled image filtered down to ``size`` (Lanczos)."""
    return np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.LANCZOS))


def render_pixels(renderer: Renderer, settings: SceneSettings, size: tuple[int, int], *,
                  progress: Callable[[float], None] | None = None, stats: list[FrameStats] | None = None,
                  filtered: bool = True, **options) -> np.ndarray:
    """Draw the scene at ``size`` and return RGB uint8 rows, top row first (options as for TiledRender).

    ``stats`` receives what was drawn, summed over the tiles. With ``filtered=False`` a supersampled drawing
    comes back at its full size, for a caller that filters it elsewhere (video's encoder process).
    """
    job = TiledRender(renderer, settings, size, **options)
    try:
        while not job.finished:
            job.step()
            if progress is not None:
                progress(job.progress)
        if stats is not None:
            stats.append(job.stats)
        return job.result() if filtered else job.pixels
    finally:
        job.release()


def save_png(pixels: np.ndarray, path: Path, settings: SceneSettings, force: bool,
             extra: dict[str, str] | None = None) -> None:
    """Write pixels as a PNG carrying the whole scene, atomically."""
    with atomic_output(path, force) as temporary:
        Image.fromarray(pixels).save(temporary, format="PNG", pnginfo=png_text_chunks(settings, extra))
