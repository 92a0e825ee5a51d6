"""Command-line plumbing shared by the window and the subcommands.

One-line usage errors and the scene options (``SceneSettings``' fields plus ``--scene FILE``).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from dataclasses import dataclass, field
from typing import NoReturn

from terrainview.base.messages import say
from terrainview.base.parsing import join_option_values
from terrainview.scene.presets import LIST, preset_list, preset_path
from terrainview.scene.scene_file import SceneError, load_scene_with_extras
from terrainview.scene.seed_image import file_problem
from terrainview.scene.settings import SceneSettings
from terrainview.scene.world_regions import world_conflict


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` (a new one, or moderngl-window's) with one-line usage errors and '-' values kept.

    A usage error is one line, ``PROG: error: MESSAGE``, with exit status 2, and an unknown option near a known
    one says which was meant; options are never abbreviated (``--iteration`` is not ``--iterations``); values
    that start with '-' reach their option (``join_option_values``).
    """
    parser.allow_abbrev = False

    def error(message: str) -> NoReturn:
        parser.exit(2, f"{parser.prog}: error: {message}{_did_you_mean(parser, message)}\n")

    parser.error = error  # type: ignore[method-assign]  # this parser's own handler
    parse_known = parser.parse_known_args

    def parse_known_args(args=None, namespace=None):
        parsed, extras = parse_known(join_option_values(parser, sys.argv[1:] if args is None else list(args)),
                                     namespace)
        for action in parser._actions:  # a NUL in a path would fail deep in the OS, naming no option
            value = getattr(parsed, action.dest, None)
            if isinstance(value, str) and "\x00" in value and action.option_strings:
                error(f"argument {action.option_strings[-1]}: a NUL character is not allowed in a value")
        return parsed, extras

    parser.parse_known_args = parse_known_args  # type: ignore[method-assign]
    return parser


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """For an unrecognized option close to a known one: "; did you mean --iterations?"."""
    prefix = "unrecognized arguments: "
    if not message.startswith(prefix):
        return ""
    known = [option for action in parser._actions for option in action.option_strings if option.startswith("--")]
    for word in message[len(prefix):].split():
        if word.startswith("--"):
            close = difflib.get_close_matches(word.split("=")[0], known, n=1, cutoff=0.75)
            if close:
                return f"; did you mean {close[0]}?"
    return ""


def add_scene_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--scene FILE`` and an option for each of ``SceneSettings``' fields."""
    parser.add_argument("--scene", metavar="FILE", help="load a scene (TOML, or a PNG written by terrainview); "
                        "options given here override it")
    parser.add_argument("--preset", metavar="NAME", help="start from a preset scene shipped with terrainview "
                        "(options given here override it); --preset list shows them")
    SceneSettings.add_arguments(parser)


@dataclass(frozen=True)
class SceneArguments:
    """The scene a command line asks for, and what a PNG scene carries besides its settings (its picture size)."""

    settings: SceneSettings
    extras: dict[str, str] = field(default_factory=dict)


def scene_from_args(args: argparse.Namespace, base: SceneSettings | None = None) -> SceneArguments:
    """The scene file's settings (or ``base``, or the defaults) with the command line's options applied.

    The file is read once: its extras come back with the settings, so a command need not read it again.
    """
    scene = getattr(args, "scene", None)
    preset = getattr(args, "preset", None)
    if scene == "":
        raise SceneError("--scene: no file name given")
    if preset == LIST:
        print(preset_list())
        raise SystemExit(0)
    if preset is not None:
        if scene is not None:
            raise SceneError("--preset and --scene: give one scene to start from, not both")
        scene = preset_path(preset)
    extras: dict[str, str] = {}
    if scene is not None:
        base, warnings, extras = load_scene_with_extras(scene)
        for warning in warnings:
            say(f"warning: {warning}")
    settings = SceneSettings.from_namespace(args, base)
    typed = getattr(args, "seed_image", None)
    problem = file_problem(typed) if typed else None  # said now and naming the option, not after generating
    if problem:
        raise SceneError(f"--seed-image: {typed}: {problem}")
    conflict = world_conflict(settings)
    if conflict:
        raise SceneError(conflict)
    return SceneArguments(settings, extras)
