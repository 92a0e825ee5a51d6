"""``terrainview video``: a flight to an H.264 MP4, a GIF or numbered PNG frames, offscreen (no display needed)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from terrainview.base.atomic_files import OutputError, check_output_parent, check_output_path
from terrainview.base.messages import report, say
from terrainview.base.parsing import argument_type, bounded_argument, parse_integer
from terrainview.commands import Command
from terrainview.output.video_encoding import VideoPlan, export, gif_frame_ms
from terrainview.scene.arguments import scene_from_args
from terrainview.scene.flythrough import FlightError, load_flight
from terrainview.scene.image_size import DEFAULT_SIZE, check_supersample, parse_size
from terrainview.scene.settings import SceneSettings, SettingsError

VIDEO_EXTENSIONS = (".mp4", ".gif")
MAX_FPS = 120
MAX_SPEED = 100.0
MAX_GIF_PIXELS = 400_000_000  # a GIF is assembled in memory (one byte a pixel): at most this much in all
# GIF keeps a frame's delay in 16 bits of 1/100 s, and Pillow merges unchanging frames into one, adding their
# delays (each a whole number of milliseconds): a still picture longer than this cannot be written (it failed
# once every frame was drawn). Whether frames will be still is not known before they are drawn: a GIF is held
# to it whole.
MAX_GIF_CENTISECONDS = 65535


def add_video_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``terrainview video`` (the scene options are added by the CLI)."""
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("-o", "--output", metavar="FILE.mp4", help="the video to write: .mp4 (H.264) or .gif")
    target.add_argument("--frames", metavar="DIR", help="write numbered PNG frames (each carrying its scene) "
                        "into DIR instead of a video")
    parser.add_argument("--flight", required=True, metavar="FILE",
                        help="the flight: a flight TOML file or a video terrainview exported")
    default_size = "x".join(map(str, DEFAULT_SIZE))
    parser.add_argument("--size", default=default_size, metavar="WxH",
                        help=f"frame size; even sides for MP4 (default: {default_size})")
    parser.add_argument("--fps", type=bounded_argument(1, MAX_FPS, integer=True), default=30, metavar="N",
                        help=f"frames per second, 1 to {MAX_FPS} (default: 30)")
    parser.add_argument("--supersample", type=argument_type(parse_integer, "one of 1, 2, 4"), default=1,
                        metavar="{1,2,4}",
                        help="draw 1, 2 or 4 times larger and filter down (default: 1)")
    parser.add_argument("--speed", type=bounded_argument(0.01, MAX_SPEED), default=1.0, metavar="X",
                        help="flight seconds per video second, 0.01 to 100 (default: 1)")
    parser.add_argument("--force", action="store_true", help="overwrite the output if it exists")
    parser.add_argument("--progress", choices=("bar", "lines", "none"), default="bar",
                        help="a progress bar on stderr (default), 'frame K/N' lines on stdout, or nothing")


def video_command(args: argparse.Namespace) -> int:
    """Check everything before any work, then draw and write the frames; scene options fix those settings.

    The options given on the command line are checked against the flight's start scene.
    """
    if getattr(args, "scene", None):
        raise SettingsError("--scene: video takes its scene from --flight; give single options to change it")
    flight, warnings = load_flight(args.flight)
    settings = scene_from_args(args, flight.scene).settings
    size = parse_size(args.size)
    check_supersample(size, args.supersample)
    if args.output and Path(args.output).suffix.lower() == ".mp4" and (size[0] % 2 or size[1] % 2):
        raise SettingsError(f"--size: H.264 needs even sides, got {size[0]}x{size[1]}; "
                            f"try {size[0] + size[0] % 2}x{size[1] + size[1] % 2}")
    path = check_output_path(args.output, args.force, VIDEO_EXTENSIONS) if args.output else \
        _check_frames_folder(Path(args.frames), args.force)
    try:
        given = {name: getattr(settings, name) for name in vars(args) if name in SceneSettings.__dataclass_fields__}
        flight = flight.with_overrides(given) if given else flight
    except SettingsError as error:
        raise FlightError(f"{args.flight}: with the options given: {error}") from None
    for warning in warnings:
        say(f"warning: {warning}")
    plan = VideoPlan(flight, size, args.fps, args.supersample, args.speed)
    if (too_long := plan.too_long()) is not None:
        raise SettingsError(f"--speed: {too_long} (raise --speed)")
    count = plan.frame_count
    if args.output and path.suffix.lower() == ".gif":
        if count * size[0] * size[1] > MAX_GIF_PIXELS:
            raise SettingsError(f"--size: {count} frames of {size[0]}x{size[1]} is too much for a GIF; use .mp4")
        if count * gif_frame_ms(args.fps) // 10 > MAX_GIF_CENTISECONDS:  # Pillow's sum, in GIF's unit
            raise SettingsError(f"--speed: {count} frames of {gif_frame_ms(args.fps)} ms are too long for a GIF "
                                f"(at most {MAX_GIF_CENTISECONDS / 100:g} s); use .mp4 or raise --speed")
    export(plan, path, force=args.force, frames=args.frames is not None, progress=args.progress)
    report(f"wrote {path}: {count} frames of {size[0]}x{size[1]} at {args.fps} fps")
    return 0


COMMAND = Command(add_video_arguments, video_command)


def _check_frames_folder(folder: Path, force: bool) -> Path:
    """check_output_path for a folder of frames: it may exist, empty (or with files, given --force)."""
    check_output_parent(folder)
    if folder.is_symlink():  # dangling or not: the frames would go elsewhere, or nowhere, after all the work
        raise OutputError(f"{folder} is a symbolic link; name the folder itself")
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder} is a file, not a folder")
    if folder.is_dir() and os.path.ismount(folder):
        raise OutputError(f"{folder} is a mount point, which cannot be replaced; name a folder inside it")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise OutputError(f"{folder} is not empty; pass --force to write frames into it")
    return folder
