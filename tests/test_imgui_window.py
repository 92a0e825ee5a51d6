"""The real viewer on Xvfb with ``--ui-scale 2``: the panel is twice as wide, and a real Ctrl+click (xdotool,
through pyglet's modifier flags) opens a slider's text field, where a typed value applies."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from helpers import wait_for
from test_app_window import find_window, grab, key, x_env

from terrainview.scene.scene_file import load_scene
from terrainview.window.panel import PANEL_WIDTH

pytest_plugins = ["gl_fixtures"]
pytestmark = [pytest.mark.gl, pytest.mark.xvfb]

# Where the panel puts the Iterations slider at UI scale 1 (window coordinates); UI scale 2 doubles it.
ITERATIONS_SLIDER = (120, 138)


def panel_width(pixels) -> int:
    """Columns of a row through the panel's upper part that are not the white lines-mode sky."""
    return int((pixels[150] != 255).any(axis=1).sum())


def test_ui_scale_2_and_ctrl_click_typing_in_the_real_window(private_display, screen_grabber, tmp_path):
    display = private_display  # not the session's: a late event of another test's window must not reach this one
    process = subprocess.Popen([sys.executable, "-m", "terrainview.cli", "--mode", "lines", "--iterations", "3",
                                "--ui-scale", "2"], cwd=tmp_path, env=x_env(display), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        window = wait_for(lambda: find_window(display, process), 60, "the terrainview window")

        def wide_panel() -> int | None:
            """The panel's width once the white scene is drawn beside it."""
            pixels = grab(display)
            width = panel_width(pixels)
            scene_drawn = (pixels[150, -40:] == 255).all()  # the white sky at the row's far end, not "Generating"
            return width if scene_drawn and PANEL_WIDTH < width < pixels.shape[1] else None

        width = wait_for(wide_panel, 60, "the panel at UI scale 2")
        assert abs(width - 2 * PANEL_WIDTH) <= 8, width

        x, y = (2 * coordinate for coordinate in ITERATIONS_SLIDER)
        env = x_env(display)
        shots = tmp_path / "screenshots"
        # A loaded machine can drop a frame between the synthetic events; the click is tried a few times, and a
        # window where Ctrl+click never types fails every time.
        iterations: list[int] = []
        seen: set = set()
        for attempt in range(3):
            for command in (["mousemove", "--window", window, str(x), str(y)], ["keydown", "ctrl"], ["click", "1"],
                            ["keyup", "ctrl"]):
                subprocess.run(["xdotool", *command], env=env, capture_output=True, timeout=10)
                time.sleep(0.3 * (attempt + 1))
            key(display, window, "ctrl+a", "BackSpace", "5", "Return")
            time.sleep(1.0 * (attempt + 1))
            key(display, window, "F12")
            new = wait_for(lambda taken=frozenset(seen): set(shots.glob("*.png")) - taken or None, 30, "the F12 shot")
            seen |= new
            iterations.append(load_scene(new.pop())[0].iterations)
            if iterations[-1] == 5:
                break
        assert iterations[-1] == 5, f"Ctrl+click, 5, Enter set the Iterations slider (shots: {iterations})"

        key(display, window, "Escape")  # the shot's "Saved ..." message goes first
        time.sleep(0.5)
        key(display, window, "Escape")  # iterations changed: the window asks, a second Escape quits
        time.sleep(0.5)
        key(display, window, "Escape")
        assert process.wait(timeout=10) == 0
        assert "Traceback" not in process.communicate()[1]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
