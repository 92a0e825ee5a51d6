"""``terrainview render``: one frame of a scene to a PNG, offscreen (no display needed)."""

from __future__ import annotations

import argparse

from terrainview.base.atomic_files import check_output_path
from terrainview.base.messages import report, say
from terrainview.base.parsing import argument_type, parse_integer
from terrainview.commands import Command
from terrainview.commands.stages import Stages, terrain_stages
from terrainview.render.offscreen import create_headless_context, reduce, render_pixels, save_png, tile_count
from terrainview.render.renderer import FrameStats, Renderer
from terrainview.scene import world_regions
from terrainview.scene.arguments import scene_from_args
from terrainview.scene.image_size import DEFAULT_SIZE, MAX_IMAGE_SIDE, check_supersample, parse_size
from terrainview.scene.scene_file import SceneError, picture_extras
from terrainview.scene.settings import SettingsError
from terrainview.scene.warmup import announce_compile


def add_render_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the render command's own options to ``parser``: --output, --size, --supersample and --force."""
    parser.add_argument("-o", "--output", required=True, metavar="FILE.png", help="the PNG to write")
    default_size = "x".join(map(str, DEFAULT_SIZE))
    parser.add_argument("--size", metavar="WxH",
                        help=f"image size, each side 1 to {MAX_IMAGE_SIDE} (default: a PNG scene's own size, "
                        f"else {default_size})")
    parser.add_argument("--supersample", type=argument_type(parse_integer, "one of 1, 2, 4"), metavar="{1,2,4}",
                        help="draw 1, 2 or 4 times larger and filter down (default: a PNG scene's own, else 1)")
    parser.add_argument("--force", action="store_true", help="overwrite FILE.png if it exists")


def picture_options(args: argparse.Namespace, scene_extras: dict[str, str]) -> tuple[tuple[int, int], int]:
    """--size and --supersample as given, else those a PNG scene was made with, else the defaults."""
    if args.size == "":
        raise SettingsError("--size: no size given; expected WIDTHxHEIGHT, such as 1920x1080")
    given = args.size is not None and args.supersample is not None
    extras = {} if given else scene_extras
    try:
        size = parse_size(args.size or extras.get("size") or "x".join(map(str, DEFAULT_SIZE)))
        supersample = args.supersample if args.supersample is not None else parse_integer(
            extras.get("supersample", "1"), "one of 1, 2, 4")
        check_supersample(size, supersample)
    except ValueError as error:
        if not extras:
            raise
        raise SceneError(f"{args.scene}: its picture size cannot be used ({error})") from None
    return size, supersample


def render_command(args: argparse.Namespace) -> int:
    """Render one frame of the scene offscreen to the PNG ``args.output``, say what was written, return 0."""
    scene = scene_from_args(args)
    settings = scene.settings
    size, supersample = picture_options(args, scene.extras)  # before any work
    path = check_output_path(args.output, args.force, (".png",))
    ctx = create_headless_context()
    renderer = Renderer(ctx)
    try:
        with Stages() as stages:
            announce_compile(settings)
            renderer.arrays.progress = terrain_stages(stages, lambda: renderer.arrays.eroding)
            renderer.update(settings)
            settings, moved = world_regions.camera_in_bounds(settings, renderer.surface_heights)
            if moved:
                say(f"warning: {moved}")
            drawn: list[FrameStats] = []
            tiles = tile_count(renderer.ctx, size, supersample)
            pixels = render_pixels(renderer, settings, size, supersample=supersample, stats=drawn,
                                   progress=stages.stage("drawing", tiles), filtered=False)
            if supersample > 1:
                stages.stage(f"filtering {supersample}x down")
                pixels = reduce(pixels, size)
            stages.stage("writing")
            save_png(pixels, path, settings, args.force, extra=picture_extras(size, supersample))
    finally:
        renderer.release()
        ctx.release()
    # Drawn is summed over the tiles (each draws what its part of the image shows), the full mesh counted once.
    over = f" over {tiles} tiles" if tiles > 1 else ""
    terrain = f", {drawn[0].terrain_summary()}{over}" if drawn[0].terrain_full else ""
    report(f"wrote {path} ({size[0]}x{size[1]}, {settings.mode} mode{terrain})")
    return 0


COMMAND = Command(add_render_arguments, render_command)
