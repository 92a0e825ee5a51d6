"""``terrainview render``: one frame of a scene to a PNG, offscreen (no display needed)."""

from __future__ import annotations

import argparse

from ..files import check_output_path
from ..image_size import DEFAULT_SIZE, MAX_IMAGE_SIDE, check_supersample, parse_size
from ..offscreen import create_headless_context, render_pixels, save_png
from ..renderer import Renderer
from ..settings import SceneSettings


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
    print(f"wrote {path} ({size[0]}x{size[1]}, {settings.mode} mode)")
    return 0
