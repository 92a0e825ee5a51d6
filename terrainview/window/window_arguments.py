"""The viewer's window options checked before any window opens, and the display checked before pyglet tries it.

The options are moderngl-window's own: --size, --size_mult, --samples, --fullscreen, --window.

moderngl-window parses these with ``int()`` and ``float()`` and passes them on unchecked, so ``--size 0x0``
divides by zero, ``--size 99999x99999`` crashes the X client and ``--samples 16`` fails deep in pyglet.
Here each gets the one number rule of ``parsing`` and a range, and a bad one is one line naming the option.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import importlib
import os
import sys

from terrainview.base.atomic_files import OutputError
from terrainview.base.parsing import argument_type, bounded_argument, parse_integer
from terrainview.scene.image_size import MAX_IMAGE_SIDE, parse_size
from terrainview.scene.settings import SettingsError

MAX_WINDOW_SIDE = MAX_IMAGE_SIDE  # --size is parsed as a picture size is
MAX_SIZE_MULT = 16.0
SAMPLE_COUNTS = (0, 1, 2, 4, 8, 16)
HEADLESS_HINT = ("without a display, run it under a virtual one (xvfb-run -s '-screen 0 1600x1000x24' "
                 "terrainview) or make an image with `terrainview render -o FILE.png`")


def parse_window_size(text: str) -> tuple[int, int]:
    """'WxH' -> (W, H) by the rule of every size (``image_size.parse_size``), for argparse."""
    try:
        return parse_size(text)
    except SettingsError as error:  # argparse names the option itself
        raise argparse.ArgumentTypeError(str(error).removeprefix("--size: ")) from None


parse_size_mult = bounded_argument(0.0, MAX_SIZE_MULT, low_exclusive=True)  # a window size multiplier


def parse_samples(text: str) -> int:
    """A multisampling sample count: one of SAMPLE_COUNTS."""
    expected = f"one of {', '.join(map(str, SAMPLE_COUNTS))}"
    value = argument_type(parse_integer, expected)(text)
    if value not in SAMPLE_COUNTS:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return int(value)


def strict_window_options(parser: argparse.ArgumentParser) -> None:
    """Swap moderngl-window's lenient converters for the checked ones above (same option names)."""
    types = {"--size": parse_window_size, "--size_mult": parse_size_mult, "--samples": parse_samples}
    for action in parser._actions:  # argparse has no public way to change an option's type
        for option, convert in types.items():
            if option in action.option_strings:
                action.type = convert


def group_window_options(parser: argparse.ArgumentParser) -> None:
    """Put moderngl-window's own options under a heading of their own in --help, apart from the scene options."""
    group = parser.add_argument_group("window options (moderngl-window)")
    general = parser._optionals  # argparse has no public way to move an option to another group
    for action in list(general._group_actions):
        if "-h" not in action.option_strings:
            general._group_actions.remove(action)
            group._group_actions.append(action)


def check_window_options(args: argparse.Namespace, default_size: tuple[int, int]) -> None:
    """The window size after --size_mult must still be a window: 1 to MAX_WINDOW_SIDE pixels per side."""
    base = args.size or default_size
    size = tuple(int(side * args.size_mult) for side in base)
    if not all(1 <= side <= MAX_WINDOW_SIDE for side in size):
        raise OutputError(f"--size_mult: {args.size_mult:g} times {base[0]}x{base[1]} makes a "
                          f"{size[0]}x{size[1]} window; each side must be 1 to {MAX_WINDOW_SIDE}")


def check_window_backend(window: str | None) -> None:
    """``--window glfw`` (or sdl2, pyqt5...) needs its library: say so in one line rather than an ImportError."""
    import moderngl_window

    if window in (None, "pyglet"):
        return  # a dependency; importing it here would already open pyglet's hidden window
    try:
        moderngl_window.get_local_window_cls(window)
    except ImportError as error:
        raise OutputError(f"--window {window}: its library is not installed ({error.name or error}); "
                          "the default, pyglet, is") from None


def check_display(window: str | None) -> None:
    """On Linux, an X display the window can be opened on, or one line saying which and what to do instead."""
    if not sys.platform.startswith("linux") or window not in (None, "pyglet", "glfw"):
        return
    display = os.environ.get("DISPLAY")
    if not display:
        if os.environ.get("WAYLAND_DISPLAY"):
            return  # the window library may speak Wayland itself
        raise OutputError(f"no display to open a window on (DISPLAY is not set); {HEADLESS_HINT}")
    library = ctypes.util.find_library("X11")
    if library is None:
        return  # cannot check here; the window library will say what is wrong
    xlib = ctypes.CDLL(library)
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    connection = xlib.XOpenDisplay(display.encode())
    if not connection:
        raise OutputError(f"cannot open the X display {display!r} (from DISPLAY): no X server answers there; "
                          f"{HEADLESS_HINT}")
    xlib.XCloseDisplay(connection)


def patch_pyglet_fullscreen() -> None:
    """Give ``pyglet.display`` its old name ``pyglet.canvas``, so --fullscreen works with either pyglet.

    moderngl-window 3.1.1 opens a full-screen window through ``pyglet.canvas``, which pyglet 2.1 renamed
    ``pyglet.display``.
    """
    pyglet = importlib.import_module("pyglet")
    if not hasattr(pyglet, "canvas"):
        setattr(pyglet, "canvas", pyglet.display)  # noqa: B010  (a name pyglet's own type hints do not have)
