"""Offscreen rendering to images: ``terrainview render``, screenshots, and the tests' frames.

Images of any size up to 8192 per side are drawn in tiles no larger than the GL limits and stitched, so the
result does not depend on the driver; supersampled shots are drawn larger and reduced with a Lanczos filter.
Lines are drawn wider in proportion to the output height, so a 4K shot looks like the window.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import moderngl
import numpy as np
from PIL import Image

from .files import OutputError, atomic_output, check_output_path
from .renderer import FIELD_OF_VIEW_Y, REFERENCE_HEIGHT, Frame, Renderer, tile_window
from .scene import png_text_chunks
from .settings import SceneSettings, SettingsError

MAX_IMAGE_SIDE = 8192
MAX_RENDER_SIDE = 16384  # supersampled drawing size: 16384**2 RGB is 805 MB, the most we allow in memory
SUPERSAMPLE_FACTORS = (1, 2, 4)
DEFAULT_SIZE = (1280, 720)
MAX_TILE_SIDE = 4096  # bounds the memory of one tile's framebuffer whatever the driver allows


def parse_size(text: str) -> tuple[int, int]:
    """'WxH' -> (W, H), each 1..8192."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not match:
        raise SettingsError(f"size: expected WIDTHxHEIGHT such as 1920x1080, got {text!r}")
    width, height = int(match[1]), int(match[2])
    for name, value in (("width", width), ("height", height)):
        if not 1 <= value <= MAX_IMAGE_SIDE:
            raise SettingsError(f"size: {name} must be from 1 to {MAX_IMAGE_SIDE}, got {value}")
    return width, height


def check_supersample(size: tuple[int, int], supersample: int) -> None:
    if supersample not in SUPERSAMPLE_FACTORS:
        raise SettingsError(f"supersample: expected one of 1, 2, 4, got {supersample!r}")
    if max(size) * supersample > MAX_RENDER_SIDE:
        raise SettingsError(f"supersample: {supersample}x of {size[0]}x{size[1]} would draw "
                            f"{max(size) * supersample} px per side; the most is {MAX_RENDER_SIDE}")


def create_headless_context() -> moderngl.Context:
    """A standalone GL 3.3+ context with no window: EGL on Linux (works without a display or GPU)."""
    import moderngl_window

    try:
        ctx = moderngl.create_standalone_context(require=330, backend="egl") if sys.platform.startswith(
            "linux") else moderngl.create_standalone_context(require=330)
    except Exception as error:  # the driver's own message says what is missing
        raise OutputError(f"cannot create an OpenGL 3.3 context for offscreen rendering ({error}); "
                          "on Debian install libegl1 libgl1 libgl1-mesa-dri") from None
    moderngl_window.activate_context(ctx=ctx)
    return ctx


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


class TiledRender:
    """One image drawn tile by tile: ``step()`` draws the next tile, so a window can spread a large shot over
    many frames (with progress and cancel) while ``render_pixels`` simply runs it to the end.

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
        side = min(tile_side or max_tile_side(ctx), max_tile_side(ctx))
        self.line_scale = (line_scale or line_scale_for(size[1])) * supersample
        self.pixels = np.empty((height, width, 3), dtype=np.uint8)
        self.tiles = list(_tiles(width, height, side))
        self.done_tiles = 0
        color = ctx.renderbuffer((min(side, width), min(side, height)), 4)
        depth = ctx.depth_renderbuffer(color.size)
        self._gl_objects = (ctx.framebuffer([color], depth), depth, color)

    @property
    def progress(self) -> float:
        return self.done_tiles / len(self.tiles)

    @property
    def finished(self) -> bool:
        return self.done_tiles == len(self.tiles)

    def step(self) -> None:
        """Draw the next tile into the image."""
        framebuffer = self._gl_objects[0]
        width, height = self.full_size
        x0, y0, tile_width, tile_height = self.tiles[self.done_tiles]
        framebuffer.viewport = (0, 0, tile_width, tile_height)
        frame = Frame(self.full_size, tile_window(self.full_size, (x0, y0, tile_width, tile_height)),
                      self.line_scale, self.field_of_view_y)
        self.renderer.draw(self.settings, framebuffer, frame)
        raw = framebuffer.read(viewport=(0, 0, tile_width, tile_height), components=3)
        tile = np.frombuffer(raw, dtype=np.uint8).reshape(tile_height, tile_width, 3)[::-1]
        self.pixels[height - y0 - tile_height:height - y0, x0:x0 + tile_width] = tile
        self.done_tiles += 1

    def result(self) -> np.ndarray:
        """The finished image as RGB uint8 rows, top row first, filtered down when supersampled."""
        if self.supersample == 1:
            return self.pixels
        return np.asarray(Image.fromarray(self.pixels).resize(self.size, Image.Resampling.LANCZOS))

    def release(self) -> None:
        for gl_object in self._gl_objects:
            gl_object.release()


def render_pixels(renderer: Renderer, settings: SceneSettings, size: tuple[int, int], *,
                  progress: Callable[[float], None] | None = None, **options) -> np.ndarray:
    """Draw the scene at ``size`` and return RGB uint8 rows, top row first (options as for TiledRender)."""
    job = TiledRender(renderer, settings, size, **options)
    try:
        while not job.finished:
            job.step()
            if progress is not None:
                progress(job.progress)
        return job.result()
    finally:
        job.release()


def save_png(pixels: np.ndarray, path: Path, settings: SceneSettings, force: bool,
             extra: dict[str, str] | None = None) -> None:
    """Write pixels as a PNG carrying the whole scene, atomically."""
    with atomic_output(path, force) as temporary:
        Image.fromarray(pixels).save(temporary, format="PNG", pnginfo=png_text_chunks(settings, extra))


def add_render_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", required=True, metavar="FILE.png", help="the PNG to write")
    default_size = "x".join(map(str, DEFAULT_SIZE))
    parser.add_argument("--size", default=default_size, metavar="WxH",
                        help=f"image size, each side 1 to {MAX_IMAGE_SIDE} (default: {default_size})")
    parser.add_argument("--supersample", type=int, default=1, metavar="{1,2,4}",
                        help="draw 1, 2 or 4 times larger and filter down (default: 1)")
    parser.add_argument("--force", action="store_true", help="overwrite FILE.png if it exists")


def render_command(args: argparse.Namespace, settings: SceneSettings) -> int:
    size = parse_size(args.size)
    check_supersample(size, args.supersample)  # before any work
    path = check_output_path(args.output, args.force, (".png",))
    ctx = create_headless_context()
    renderer = Renderer(ctx)
    try:
        renderer.update(settings)
        pixels = render_pixels(renderer, settings, size, supersample=args.supersample)
        save_png(pixels, path, settings, args.force,
                 extra={"size": f"{size[0]}x{size[1]}", "supersample": str(args.supersample)})
    finally:
        renderer.release()
        ctx.release()
    stats = renderer.last_stats
    terrain = stats is not None and settings.mode in ("1d", "lines", "rendered")
    drawn = f", {stats.primitives:,} terrain {stats.kind}" if terrain else ""
    print(f"wrote {path} ({size[0]}x{size[1]}, {settings.mode} mode{drawn})")
    return 0
