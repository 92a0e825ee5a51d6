"""GL and Xvfb fixtures shared by the rendering, GPU-resource and window tests.

Load it from a test module with ``pytest_plugins = ["gl_fixtures"]`` (tests/conftest.py puts tests/ on
``sys.path``).

- ``gl_ctx``: one headless (EGL) moderngl context for the whole session.
- ``renderer``: a fresh ``Renderer`` per test, released afterwards; the test fails when it left a GL error.
- ``render_frame``: settings -> small RGB frame (rows top first) through ``render_pixels``.
- ``xvfb_display``: a private Xvfb server for the session; yields its DISPLAY string.
- ``private_display``: the same for one test module.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

SMALL_SIZE = (160, 90)
XVFB_SCREEN = "1600x1000x24"


# --- GL ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def gl_ctx():
    from terrainview.render.offscreen import create_headless_context

    ctx = create_headless_context()
    yield ctx
    ctx.release()


@pytest.fixture
def renderer(gl_ctx):
    """A fresh Renderer on the session context; it must leave no GL error behind."""
    from terrainview.render.renderer import Renderer

    # Another test (the window tests) may have made its own context current: make this one current.
    with gl_ctx:
        _ = gl_ctx.error  # reading it clears any error left by someone else
        renderer = Renderer(gl_ctx)
        try:
            yield renderer
            error = gl_ctx.error
        finally:
            renderer.release()
    assert error == "GL_NO_ERROR", f"the test left a GL error: {error}"


def render_frame(renderer, settings, size: tuple[int, int] = SMALL_SIZE) -> np.ndarray:
    """Bring ``renderer`` up to date with ``settings`` and draw one frame: uint8 RGB, top row first."""
    from terrainview.render.offscreen import render_pixels

    renderer.update(settings)
    pixels = render_pixels(renderer, settings, size)
    assert pixels.shape == (size[1], size[0], 3) and pixels.dtype == np.uint8
    return pixels


@pytest.fixture
def frame(renderer):
    """``frame(settings, size=(160, 90))`` -> RGB frame drawn by this test's renderer."""
    return lambda settings, size=SMALL_SIZE: render_frame(renderer, settings, size)


# --- Xvfb -------------------------------------------------------------------------------------------------


def _free_display_number(start: int = 90) -> int:
    for number in range(start, start + 200):
        if not (Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists()):
            return number
    raise RuntimeError("no free X display number")


def display_ready(display: str) -> bool:
    try:
        result = subprocess.run(["xdotool", "getdisplaygeometry"], env={**os.environ, "DISPLAY": display},
                                capture_output=True, timeout=5)
    except subprocess.TimeoutExpired:
        return False
    return result.returncode == 0


def require_tools(*tools: str) -> None:
    """Skip when a desktop tool is missing, except in CI, where `make test` has installed them: fail there."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        message = f"not installed: {', '.join(missing)} (scripts/bootstrap.sh installs them)"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)


@pytest.fixture(scope="session")
def screen_grabber() -> str:
    """ImageMagick's ``import``, which grabs the virtual screen."""
    require_tools("import")
    return "import"


@contextlib.contextmanager
def private_xvfb(first_number: int = 90) -> Iterator[str]:
    """Start ``Xvfb :N`` on a free display number, wait until it takes connections, yield ":N"."""
    require_tools("Xvfb", "xdotool")
    for attempt in range(3):
        number = _free_display_number(first_number + 7 * attempt)
        display = f":{number}"
        # -r: no key auto-repeat. A viewer that quits on a key press leaves that key down in the server, which
        # would repeat into the next test's window (and a loaded machine would turn slow key taps into repeats).
        server = subprocess.Popen(["Xvfb", display, "-screen", "0", XVFB_SCREEN, "-nolisten", "tcp", "-r"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and server.poll() is None:
            if Path(f"/tmp/.X11-unix/X{number}").exists() and display_ready(display):
                break
            time.sleep(0.1)
        if server.poll() is None and display_ready(display):
            break
        server.kill()
        server.wait()
    else:
        pytest.fail("Xvfb did not start")
    try:
        yield display
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="session")
def xvfb_display():
    """A private Xvfb server for the session; yields its DISPLAY string."""
    with private_xvfb() as display:
        yield display


@pytest.fixture(scope="module")
def private_display():
    """An X server for one test module: the session's has seen other windows come and go, and a late close or key
    event of an end-to-end test can reach a new window there."""
    with private_xvfb(300) as display:
        yield display
