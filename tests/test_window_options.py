"""Window options on a real (Xvfb) display: --fullscreen opens, --samples the display cannot give and a display
that does not answer end in one line, and the panel comes back inside the window after a resize to 1x1."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from helpers import wait_for
from test_app_window import find_window, key, x_env

pytest_plugins = ["gl_fixtures"]


def window_geometry(display: str, window: str) -> tuple[int, int]:
    result = subprocess.run(["xdotool", "getwindowgeometry", window], env=x_env(display), capture_output=True,
                            text=True, timeout=10)
    size = next(line for line in result.stdout.splitlines() if "Geometry:" in line).split()[-1]
    width, height = size.split("x")
    return int(width), int(height)


@pytest.mark.xvfb
def test_fullscreen_opens_a_window_as_large_as_the_screen(private_display, tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "terrainview.cli", "--fullscreen", "--iterations", "3"],
                               cwd=tmp_path, env=x_env(private_display), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        window = wait_for(lambda: find_window(private_display, process), 60, "the full-screen window")
        assert wait_for(lambda: window_geometry(private_display, window) == (1600, 1000), 20,
                        "the window to fill the 1600x1000 screen")
        time.sleep(1.0)  # a few frames drawn full-screen
        key(private_display, window, "Escape")
        status = process.wait(timeout=20)
        _, stderr = process.communicate()
        assert status == 0 and "Traceback" not in stderr, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.xvfb
def test_samples_the_display_cannot_give_end_in_one_line(private_display, tmp_path):
    try:
        result = subprocess.run([sys.executable, "-m", "terrainview.cli", "--samples", "16"], cwd=tmp_path,
                                env=x_env(private_display), capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.skip("this display gives 16 samples")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--samples" in lines[0] and "Traceback" not in result.stderr, result.stderr


def test_a_display_with_no_x_server_is_named_in_one_line(tmp_path):
    from gl_fixtures import _free_display_number

    display = f":{_free_display_number(400)}"
    result = subprocess.run([sys.executable, "-m", "terrainview.cli"], cwd=tmp_path, env=x_env(display),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"cannot open the X display '{display}'" in lines[0] and "xvfb-run" in lines[0]
    assert list(tmp_path.iterdir()) == []


# The scripts' own frames() draws frames; this waits, drawing, until the X server has resized the window.
RESIZED = """
def resized(size):  # however busy the machine
    app.wnd.size = size
    deadline = time.monotonic() + 30.0
    while tuple(app.wnd.buffer_size) != size and time.monotonic() < deadline:
        time.sleep(0.05)
        frames(1)
"""

RESIZE_SCRIPT = """
import json, time
import moderngl_window
from imgui_bundle import imgui
from terrainview.window.app import TerrainApp

app = moderngl_window.create_window_config_instance(TerrainApp, args=["--window", "pyglet", "--iterations", "4"])
assert app.feed.wait_idle(60.0)

def frames(count=6):
    for _ in range(count):
        app.wnd.swap_buffers()  # also delivers pyglet's events, resizes included
        app.on_render(0.0, 1 / 60)
    panel = imgui.internal.find_window_by_name("View Options (Ctrl+O)")
    return [app.wnd.buffer_size, [panel.pos.x, panel.pos.y], app.panel.seed_text, str(app.settings.seed)]
""" + RESIZED + """
report = [frames()]
for size in ((1, 1), (1280, 720)):
    resized(size)
    report.append(frames())
print(json.dumps(report))
app.wnd.close()
app.on_close()
"""


@pytest.mark.xvfb
def test_the_panel_comes_back_inside_after_a_1x1_window(private_display, tmp_path):
    """In a process of its own: the window shrinks to 1x1 and grows back; the panel must be inside the window
    (ImGui left it shifted off the left edge, with the Seed field's text out of sight)."""
    result = subprocess.run([sys.executable, "-c", RESIZE_SCRIPT], cwd=tmp_path, env=x_env(private_display),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    start, tiny, back = json.loads(result.stdout.strip().splitlines()[-1])
    assert (start[0], tiny[0], back[0]) == ([1280, 720], [1, 1], [1280, 720])
    assert start[1][0] >= 0 and back[1][0] >= 0 and back[1][1] >= 0, (start, back)
    assert back[2] == back[3], "the Seed field shows the seed"


GROW_SCRIPT = """
import json, time
import numpy as np
import moderngl_window
from terrainview.window.app import TerrainApp

app = moderngl_window.create_window_config_instance(
    TerrainApp, args=["--window", "pyglet", "--size", "480x320", "--mode", "lines", "--iterations", "4"])
assert app.feed.wait_idle(60.0)

def frames(count=6):
    for _ in range(count):
        app.wnd.swap_buffers()  # also delivers pyglet's events, resizes included
        app.on_render(0.0, 1 / 60)
""" + RESIZED + """
frames()
resized((800, 560))
frames()
width, height = app.wnd.buffer_size
pixels = np.frombuffer(app.wnd.fbo.read(viewport=(0, 0, width, height)), dtype=np.uint8).reshape(height, width, 3)
grown = pixels[320:, 480:]  # GL rows bottom first: the part beyond the first size, up and to the right
print(json.dumps([[width, height], float(grown.mean())]))
app.wnd.close()
app.on_close()
"""


@pytest.mark.xvfb
def test_a_window_made_larger_draws_its_whole_area(private_display, tmp_path):
    """In a process of its own: a 480x320 window of lines (white ground) grows to 800x560; the scene must fill it
    (the panel's scissor, reset to the window's first size, clipped every later frame to that corner)."""
    result = subprocess.run([sys.executable, "-c", GROW_SCRIPT], cwd=tmp_path, env=x_env(private_display),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    size, grown_mean = json.loads(result.stdout.strip().splitlines()[-1])
    assert size == [800, 560]
    assert grown_mean > 200, grown_mean  # the white ground; black where nothing was drawn
