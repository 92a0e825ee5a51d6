"""The ``terrainview`` command: the viewer (default), ``render`` and ``export``.

Every command shares the scene options of ``SceneSettings`` and ``--scene FILE``; options given on the
command line override the scene file. Bad input ends with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Callable, Sequence

from . import __version__
from .files import OutputError
from .parsing import join_option_values
from .scene import SceneError, load_scene
from .settings import SceneSettings

# What bad input raises (SettingsError and the kernels' argument checks are ValueErrors): one line, exit 2.
USAGE_ERRORS = (ValueError, OutputError, SceneError)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is a single line (``terrainview: error: ...``) and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        argv = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args(join_option_values(self, argv), namespace)


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give an existing parser (moderngl-window's) OneLineParser's error behaviour and value handling."""
    parser.error = functools.partial(OneLineParser.error, parser)  # type: ignore[method-assign]
    parse_known = parser.parse_known_args
    parser.parse_known_args = lambda args=None, namespace=None: parse_known(  # type: ignore[method-assign]
        join_option_values(parser, sys.argv[1:] if args is None else list(args)), namespace)
    return parser


def add_scene_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scene", metavar="FILE", help="load a scene (TOML, or a PNG written by terrainview); "
                        "options given here override it")
    SceneSettings.add_arguments(parser)


def settings_from_args(args: argparse.Namespace) -> SceneSettings:
    """The scene file's settings (or the defaults) with the command line's options applied."""
    base = None
    scene = getattr(args, "scene", None)
    if scene == "":
        raise SceneError("--scene: no file name given")
    if scene is not None:
        base, warnings = load_scene(scene)
        for warning in warnings:
            print(f"terrainview: warning: {warning}", file=sys.stderr)
    return SceneSettings.from_namespace(args, base)


def _subcommand(name: str, description: str, module: str) -> Callable[[Sequence[str]], int]:
    """A subcommand whose module has ``add_<name>_arguments(parser)`` and ``<name>_command(args, settings)``."""
    def run(argv: Sequence[str]) -> int:
        implementation = importlib.import_module(module, __package__)
        parser = OneLineParser(prog=f"terrainview {name}", description=description)
        getattr(implementation, f"add_{name}_arguments")(parser)
        add_scene_arguments(parser)
        args = parser.parse_args(argv)
        return getattr(implementation, f"{name}_command")(args, settings_from_args(args))

    run.__doc__ = description  # the viewer's --help lists it
    return run


def _view(argv: Sequence[str]) -> int:
    from .app import run_viewer

    return run_viewer(list(argv))


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "render": _subcommand("render", "Render one frame to a PNG, no display needed.", ".render"),
    "export": _subcommand("export", "Write the surface heightmap or mesh to a file.", ".export"),
}


def commands_help() -> str:
    """The commands besides the viewer, one line each, for the viewer's --help (every entry of COMMANDS)."""
    lines = [f"  terrainview {name} ...".ljust(30) + (command.__doc__ or "").strip().split("\n")[0]
             for name, command in COMMANDS.items()]
    return "commands (each has its own --help):\n" + "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--version"], ["-V"]):
        print(f"terrainview {__version__}")
        return 0
    command = COMMANDS.get(argv[0]) if argv else None
    try:
        return command(argv[1:]) if command else _view(argv)
    except USAGE_ERRORS as error:
        print(f"terrainview: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a disk that fills up, a file that vanishes: the output was not written
        where = f"{error.filename}: " if error.filename else ""
        print(f"terrainview: error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except MemoryError:
        print("terrainview: error: out of memory; try fewer --iterations or a smaller --tile or --size",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("terrainview: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
