"""The ``terrainview`` command: the viewer (default), ``render``, ``export`` and ``video``.

Every command shares the scene options of ``SceneSettings`` and ``--scene FILE``; options given on the
command line override the scene file. Bad input ends with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from terrainview import __version__
from terrainview.base.atomic_files import OutputError
from terrainview.base.messages import say
from terrainview.commands import Command
from terrainview.scene.arguments import add_scene_arguments, one_line_errors
from terrainview.scene.scene_file import SceneError

# What bad input raises (SettingsError and the kernels' argument checks are ValueErrors): one line, exit 2.
USAGE_ERRORS = (ValueError, OutputError, SceneError)


def _subcommand(name: str, description: str, module: str) -> Callable[[Sequence[str]], int]:
    """A subcommand whose module's ``COMMAND`` adds its options and runs it; imported only when it runs."""
    def run(argv: Sequence[str]) -> int:
        command: Command = importlib.import_module(module).COMMAND
        parser = one_line_errors(argparse.ArgumentParser(prog=f"terrainview {name}", description=description))
        command.add_arguments(parser)
        add_scene_arguments(parser)
        return command.run(parser.parse_args(argv))

    run.__doc__ = description  # the viewer's --help lists it
    return run


def _view(argv: Sequence[str]) -> int:
    from terrainview.window.app import run_viewer

    return run_viewer(list(argv), epilog=commands_help())


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "render": _subcommand("render", "Render one frame to a PNG, no display needed.", "terrainview.commands.render"),
    "export": _subcommand("export", "Write the surface heightmap or mesh to a file.", "terrainview.commands.export"),
    "video": _subcommand("video", "Export a flight as an H.264 MP4, a GIF or PNG frames, no display needed.",
                         "terrainview.commands.video"),
}


def commands_help() -> str:
    """The commands besides the viewer, one line each, for the viewer's --help (every entry of COMMANDS)."""
    lines = [f"  terrainview {name} ...".ljust(30) + (command.__doc__ or "").strip().split("\n")[0]
             for name, command in COMMANDS.items()]
    return "commands (each has its own --help):\n" + "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command named first in ``argv`` (else the viewer) and return its exit status.

    ``--version`` or ``-V`` prints the version. Bad input, an OSError (the output was not written) and running
    out of memory print one line on stderr and return 2; an interrupt returns 130.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--version"], ["-V"]):
        print(f"terrainview {__version__}")
        return 0
    command = COMMANDS.get(argv[0]) if argv else None
    try:
        return command(argv[1:]) if command else _view(argv)
    except USAGE_ERRORS as error:
        say(f"error: {error}")
        return 2
    except OSError as error:  # a disk that fills up, a file that vanishes: the output was not written
        where = f"{error.filename}: " if error.filename else ""
        say(f"error: {where}{error.strerror or error}")
        return 2
    except MemoryError:
        say("error: out of memory; try fewer --iterations or a smaller --tile or --size")
        return 2
    except KeyboardInterrupt:
        say("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
