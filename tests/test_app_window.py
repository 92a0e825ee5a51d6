"""The viewer window on a private Xvfb server: key handling in-process, then the real program end to end
(xdotool presses keys, ImageMagick's ``import`` grabs the screen)."""

from __future__ import annotations

import gc
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import names, wait_for
from PIL import Image

from terrainview.cli import main

pytestmark = [pytest.mark.gl, pytest.mark.xvfb]


pytest_plugins = ["gl_fixtures"]

START_CAMERA = {"yrot": 0.0, "ytrans": -0.5, "ztrans": -3.0, "pitch": 0.0}


# --- in-process: TerrainApp's handlers with a real pyglet window ------------------------------------------


@pytest.fixture(scope="class")
def app(xvfb_display):
    """One TerrainApp in a pyglet window for the class (pyglet makes one shadow window per process)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DISPLAY", xvfb_display)
        patch.delenv("WAYLAND_DISPLAY", raising=False)
        import moderngl_window  # pyglet is imported by the window backend below, with DISPLAY set

        from terrainview.window import generation_feed
        from terrainview.window.app import TerrainApp

        # A new terrain reaches the GPU within the frame that takes it, however long a slice stalls on a busy
        # machine: these tests draw one frame after each generation (settle), and test nothing of the slicing.
        patch.setattr(generation_feed, "UPLOAD_SECONDS", 60.0)
        instance = moderngl_window.create_window_config_instance(
            TerrainApp, args=["--window", "pyglet", "--iterations", "4"])
        instance.input_clock = lambda: 0.0  # keys go down as the frames' (given) time steps are taken
        gc.unfreeze()  # so what is frozen below is this window's doing (test_what_starting_made_...)
        try:
            assert instance.feed.wait_idle(60.0), "the first generation did not finish"
            instance.on_render(0.0, 1 / 60)
            assert instance.ready
            yield instance
            assert instance.ctx.error == "GL_NO_ERROR"
        finally:
            instance.wnd.close()
            instance.on_close()
            instance.wnd.destroy()
            gc.unfreeze()  # the window froze the test process's objects too: the collector gets them back


def modifiers(shift: bool = False, ctrl: bool = False):
    from moderngl_window.context.base import KeyModifiers

    mods = KeyModifiers()
    mods.shift, mods.ctrl, mods.alt = shift, ctrl, False
    return mods


def press(app, key, mods=None) -> None:
    app.on_key_event(key, app.wnd.keys.ACTION_PRESS, mods or modifiers())


def release(app, key, mods=None) -> None:
    app.on_key_event(key, app.wnd.keys.ACTION_RELEASE, mods or modifiers())


def tap(app, key, mods=None, times: int = 1) -> None:
    for _ in range(times):
        press(app, key, mods)
        release(app, key, mods)


def frames_until(app, condition, limit: int = 20, seconds: float | None = None) -> bool:
    """Draw frames until ``condition()`` holds (True), or ``limit`` frames have passed, or with ``seconds`` that
    long (what waits for the world's worker: under SCHED_IDLE it may wait long for a core on a busy machine)."""
    deadline = None if seconds is None else time.perf_counter() + seconds
    drawn = 0
    while True:
        app.on_render(0.0, 1 / 60)
        drawn += 1
        if condition():
            return True
        if (drawn >= limit) if deadline is None else (time.perf_counter() >= deadline):
            return False


def settle(app) -> None:
    """Generate for the app's current settings and let the result reach the GPU before drawing."""
    app.feed.request(app.settings)
    assert app.feed.wait_idle(60.0)
    app.on_render(0.0, 1 / 60)


@pytest.fixture
def fresh(app):
    """The app back at its start camera, in lines mode, nothing held, no text field active."""
    app.flight.release_all()
    app.settings = app.settings.replace(mode="lines", **app.start_camera)  # every camera field, mode included
    settle(app)
    from imgui_bundle import imgui

    assert not imgui.get_io().want_text_input
    return app


def click_panel_item(app, monkeypatch, function: str, label: str, frame_between: bool = True) -> None:
    """Click the middle of the panel's ``function`` widget labelled ``label``, found by recording where the panel
    draws it; a frame between the press and the release unless ``frame_between`` is False (a quick click)."""
    from imgui_bundle import imgui

    import terrainview.window.panel

    rectangles = {}

    class RecordingImgui:
        def __getattr__(self, name):
            real = getattr(imgui, name)
            if name != function:
                return real

            def recorded(item_label, *args, **kwargs):
                result = real(item_label, *args, **kwargs)
                low, high = imgui.get_item_rect_min(), imgui.get_item_rect_max()
                rectangles[item_label] = (low.x, low.y, high.x, high.y)
                return result
            return recorded

    monkeypatch.setattr(terrainview.window.panel, "imgui", RecordingImgui())
    app.on_render(0.0, 1 / 60)
    x0, y0, x1, y1 = rectangles[label]
    x, y = int((x0 + x1) / 2), int((y0 + y1) / 2)
    app.on_mouse_position_event(x, y, 0, 0)
    app.on_render(0.0, 1 / 60)
    app.on_mouse_press_event(x, y, app.wnd.mouse.left)
    if frame_between:
        app.on_render(0.0, 1 / 60)
    app.on_mouse_release_event(x, y, app.wnd.mouse.left)


@pytest.mark.xvfb
class TestKeysInProcess:
    def test_window_is_real(self, fresh):
        assert fresh.wnd.buffer_size == (1280, 720)
        assert fresh.settings.iterations == 4
        assert fresh.renderer.gpu.surface_grid_size == 2 ** 4 + 1

    def test_what_starting_made_is_kept_out_of_full_garbage_collections(self, fresh):
        """Once the first frame is drawn, the objects made while starting are frozen (gc.freeze): a full
        collection walks only what was made since, not the imports' 95,000 objects within a frame. (The fixture
        thaws everything before the window starts.) Once: later frames freeze nothing more, which would keep
        their garbage for good."""
        frozen = gc.get_freeze_count()
        assert frozen > 50_000
        for _ in range(3):
            fresh.on_render(0.0, 1 / 60)
        assert gc.get_freeze_count() == frozen

    def test_a_camera_standing_still_over_the_same_ground_is_checked_once(self, fresh, monkeypatch):
        """The camera's bound samples the ground nine times (1-2 ms over the endless world): frames that change
        neither the settings nor the ground check it no more; a new setting checks it again. (The ground was
        made anew every frame, so the check ran every frame.)"""
        import terrainview.window.app as app_module

        checked = []
        real = app_module.camera.given_fly_eye_in_bounds

        def counted(settings, ground):
            checked.append(settings)
            return real(settings, ground)

        monkeypatch.setattr(app_module.camera, "given_fly_eye_in_bounds", counted)
        fresh.settings = fresh.settings.replace(mode="rendered", camera="fly")
        for _ in range(5):
            fresh.on_render(0.0, 1 / 60)
        assert len(checked) == 1
        fresh.settings = fresh.settings.replace(pitch=fresh.settings.pitch + 5.0)
        fresh.on_render(0.0, 1 / 60)
        assert len(checked) == 2

    def test_ten_left_taps_turn_30_degrees(self, fresh):
        tap(fresh, fresh.wnd.keys.LEFT, times=10)
        assert fresh.settings.yrot == 30.0
        tap(fresh, fresh.wnd.keys.RIGHT, times=4)
        assert fresh.settings.yrot == 18.0

    def test_up_moves_z_and_shift_up_moves_y(self, fresh):
        keys = fresh.wnd.keys
        tap(fresh, keys.UP)
        assert fresh.settings.ztrans == pytest.approx(-2.95, abs=1e-9)
        assert fresh.settings.ytrans == -0.5
        tap(fresh, keys.UP, modifiers(shift=True))
        assert fresh.settings.ytrans == pytest.approx(-0.45, abs=1e-9)
        assert fresh.settings.ztrans == pytest.approx(-2.95, abs=1e-9), "Shift+Up leaves Z alone"
        tap(fresh, keys.DOWN, modifiers(shift=True), times=2)
        assert fresh.settings.ytrans == pytest.approx(-0.55, abs=1e-9)

    @pytest.mark.parametrize("fps", [20, 90])
    def test_holding_up_one_second_is_30_steps(self, fresh, fps):
        keys = fresh.wnd.keys
        press(fresh, keys.UP)
        for frame in range(fps):
            fresh.on_render(frame / fps, 1 / fps)
        release(fresh, keys.UP)
        assert fresh.settings.ztrans == pytest.approx(-3.0 + 30 * 0.05, abs=1e-9)
        fresh.on_render(1.0, 1 / fps)
        assert fresh.settings.ztrans == pytest.approx(-1.5, abs=1e-9), "released: no more steps"

    def test_a_quick_tap_at_17_fps_is_one_step(self, fresh, monkeypatch):
        # The key goes down 40 ms into a 59 ms frame and comes up 10 ms after the next time step: held 29 ms.
        clock = [0.0]
        monkeypatch.setattr(fresh, "input_clock", lambda: clock[0])
        fresh.on_render(0.0, 1 / 17)
        clock[0] = 0.040
        press(fresh, fresh.wnd.keys.UP)
        clock[0] = 1 / 17
        fresh.on_render(1 / 17, 1 / 17)
        release(fresh, fresh.wnd.keys.UP)
        fresh.on_render(2 / 17, 1 / 17)
        assert fresh.settings.ztrans == pytest.approx(-2.95, abs=1e-9)

    def test_a_loaded_fly_eye_above_the_ceiling_is_lowered_with_a_message(self, fresh):
        fresh.settings = fresh.settings.replace(camera="fly", eye_x=0.0, eye_y=8.0, eye_z=0.0)
        fresh.on_render(0.0, 1 / 60)
        assert fresh.settings.eye_y < 4.0 and "was lowered" in fresh.message[0]
        fresh.message = ("", 0.0)
        fresh.on_render(0.0, 1 / 60)
        assert fresh.message[0] == "", "once in bounds it stays, with no more messages"
        said = []
        fresh.show_message = said.append
        for height in (9.0, 12.0, -5.0, -6.0, 10.0):  # a slider dragged about: each notice once a session
            fresh.settings = fresh.settings.replace(eye_y=height)
            fresh.on_render(0.0, 1 / 60)
        del fresh.show_message
        assert said == ["The fly camera was raised to stay above the ground"], said
        assert not any(character.isdigit() for character in fresh.message[0] + "".join(said))

    def test_the_ground_is_the_terrain_drawn_until_the_new_one_is_adopted(self, fresh):
        from terrainview.scene import camera

        drawn = fresh.renderer.surface_heights
        fresh.settings = fresh.settings.replace(h=0.2)
        fresh.feed.request(fresh.settings)
        assert fresh.feed.wait_idle(60.0) and fresh.renderer.arrays.surface.value is not drawn
        fresh._update_ground()  # the new map is generated but not taken yet
        assert fresh.flight.ground(0.3, 0.1) == camera.ground_height(drawn, fresh.settings.tile)(0.3, 0.1)
        settle(fresh)
        new = fresh.renderer.surface_heights
        assert new is not drawn and fresh.flight.ground(0.3, 0.1) == camera.ground_height(new, 1)(0.3, 0.1)

    def test_home_resets_the_camera(self, fresh):
        keys = fresh.wnd.keys
        tap(fresh, keys.LEFT, times=3)
        tap(fresh, keys.UP, times=2)
        tap(fresh, keys.UP, modifiers(shift=True))
        fresh.settings = fresh.settings.replace(pitch=20.0)
        tap(fresh, keys.HOME)
        assert {name: getattr(fresh.settings, name) for name in START_CAMERA} == START_CAMERA

    def test_p_toggles_rendered_and_lines(self, fresh):
        keys = fresh.wnd.keys
        tap(fresh, keys.P)
        assert fresh.settings.mode == "rendered"
        settle(fresh)
        assert fresh.frame_stats.kind == "triangles"
        tap(fresh, keys.P)
        assert fresh.settings.mode == "lines"
        settle(fresh)
        assert fresh.frame_stats.kind == "line segments"

    def test_p_after_a_change_in_lines_mode_draws_the_new_terrain_at_once(self, fresh):
        # Lines mode keeps the arrays of the other modes current too: P needs no generation.
        seed = fresh.settings.seed
        fresh.settings = fresh.settings.replace(seed=seed + 1)
        settle(fresh)
        requested = fresh.feed.requested_key
        try:
            tap(fresh, fresh.wnd.keys.P)
            fresh.on_render(0.0, 1 / 60)
            assert fresh.drawn_settings == fresh.settings and fresh.settings.mode == "rendered"
            assert fresh.frame_stats.kind == "triangles"
            assert fresh.feed.requested_key == requested, "the switch asked for a generation"
        finally:
            fresh.settings = fresh.settings.replace(seed=seed)
            settle(fresh)

    def test_ctrl_o_toggles_the_panel(self, fresh):
        keys = fresh.wnd.keys
        assert fresh.panel.visible
        tap(fresh, keys.O, modifiers(ctrl=True))
        assert not fresh.panel.visible
        tap(fresh, keys.O, modifiers(ctrl=True))
        assert fresh.panel.visible

    def test_keys_typed_into_a_panel_field_do_not_fly(self, fresh, monkeypatch):
        """Click into the panel's Seed field (found by recording where the panel draws it), then type."""
        from imgui_bundle import imgui

        click_panel_item(fresh, monkeypatch, "input_text", "Seed")
        # ImGui takes queued input a few events per frame (earlier keys may still be queued): a few frames.
        assert frames_until(fresh, lambda: imgui.get_io().want_text_input), "the Seed field took the keyboard"

        keys = fresh.wnd.keys
        before = fresh.settings
        for key in (keys.LEFT, keys.UP, keys.W, keys.A, keys.P, keys.HOME):
            press(fresh, key)
            fresh.on_render(0.0, 1 / 60)
            release(fresh, key)
        fresh.on_render(0.0, 1 / 60)
        assert fresh.settings == before, "typing moved the camera or changed the scene"
        # Escape leaves the field, not the program; then the keys fly again.
        press(fresh, keys.ESCAPE)
        fresh.on_render(0.0, 1 / 60)
        release(fresh, keys.ESCAPE)
        assert frames_until(fresh, lambda: not imgui.get_io().want_text_input)
        assert not fresh.wnd.is_closing
        tap(fresh, keys.LEFT)
        assert fresh.settings.yrot == 3.0


    def test_a_key_right_after_a_click_into_a_field_is_typed_not_a_shortcut(self, fresh, monkeypatch):
        """At a few frames a second a key can follow a click before ImGui has taken the click in: P typed then is
        the Seed field's, not the wireframe's. A click on the view, away from the panel, leaves P a shortcut."""
        from imgui_bundle import imgui

        keys = fresh.wnd.keys
        before = fresh.settings
        # Pressed and released within a frame: not taken in yet. Then a frame between them: taken in, the field
        # active in that frame, and ImGui's own answer still the frame before's.
        for frame_between in (False, True):
            click_panel_item(fresh, monkeypatch, "input_text", "Seed", frame_between=frame_between)
            tap(fresh, keys.P)
            assert fresh.settings.mode == before.mode, "P toggled the wireframe while the click was on its way"
            assert frames_until(fresh, lambda: imgui.get_io().want_text_input), "the Seed field took the keyboard"
            press(fresh, keys.ESCAPE)
            fresh.on_render(0.0, 1 / 60)
            release(fresh, keys.ESCAPE)
            assert frames_until(fresh, lambda: not imgui.get_io().want_text_input)
        width, height = fresh.wnd.size
        fresh.on_mouse_position_event(width - 20, height // 2, 0, 0)
        fresh.on_mouse_press_event(width - 20, height // 2, fresh.wnd.mouse.left)
        fresh.on_mouse_release_event(width - 20, height // 2, fresh.wnd.mouse.left)
        tap(fresh, keys.P)
        assert fresh.settings.mode != before.mode, "a click on the view leaves P the wireframe's"

    def test_a_click_on_the_panel_holds_the_keys_only_until_imgui_has_it(self, fresh):
        """A click on the panel's margin (no widget there), then the wheel turned while the mouse moves over the
        view, frame after frame (ImGui takes such events in a few a frame, so its queue stays full): P is the
        wireframe's again once the click itself is taken in, not only once the queue empties (it stayed full for
        70 frames)."""
        from imgui_bundle import imgui

        keys, mouse = fresh.wnd.keys, fresh.wnd.mouse
        fresh.on_render(0.0, 1 / 60)
        left, top, _, bottom = fresh.panel.rect
        x, y = int(left + 3), int((top + bottom) / 2)
        fresh.on_mouse_position_event(x, y, 0, 0)
        fresh.on_mouse_press_event(x, y, mouse.left)
        fresh.on_mouse_release_event(x, y, mouse.left)
        width, height = fresh.wnd.size
        for frame in range(10):
            for step in range(4):
                fresh.on_mouse_position_event(width - 40 - step, height // 2 + frame, 0, 0)
                fresh.on_mouse_scroll_event(0.0, 1.0)
            fresh.on_render(0.0, 1 / 60)
        before = fresh.settings.mode
        tap(fresh, keys.P)
        assert fresh.settings.mode != before
        assert not imgui.is_popup_open("", imgui.PopupFlags_.any_popup_id), "the click opened nothing"
        # What ImGui has still queued would hold back the next test's clicks.
        assert frames_until(fresh, lambda: not len(imgui.get_current_context().input_events_queue), limit=300)

    def test_a_loaded_scene_does_not_inherit_the_last_scenes_tile_count(self, fresh, tmp_path):
        """Five tiles, then a scene repeated without end: switching it to tiles gives one, not the five."""
        from terrainview.scene.scene_file import save_scene_toml

        fresh.settings = fresh.settings.replace(tile=5)
        fresh.on_render(0.0, 1 / 60)
        assert fresh.panel.tiles == 5
        path = tmp_path / "repeated.toml"
        save_scene_toml(fresh.settings.replace(tile="repeat"), path)
        fresh.load_scene_file(path)
        fresh.on_render(0.0, 1 / 60)
        assert fresh.settings.tile == "repeat" and fresh.panel.tiles == 1

    def test_dropping_a_png_or_toml_loads_its_scene(self, fresh, tmp_path):
        from terrainview.scene.scene_file import save_scene_toml

        wanted = fresh.settings.replace(seed=42, iterations=5, yrot=12.0)
        path = tmp_path / "dropped.toml"
        save_scene_toml(wanted, path)
        fresh.on_files_dropped_event(10, 10, [str(path)])
        assert fresh.settings == wanted
        shot = tmp_path / "shot.png"
        assert main(["render", "-o", str(shot), "--size", "32x32", "--seed", "77", "--mode", "clouds"]) == 0
        fresh.on_files_dropped_event(10, 10, [str(shot)])
        assert (fresh.settings.seed, fresh.settings.mode) == (77, "clouds")
        (tmp_path / "foreign.png").write_bytes(shot.read_bytes()[:40])  # a damaged PNG: a message, no change
        fresh.on_files_dropped_event(10, 10, [str(tmp_path / "foreign.png")])
        assert fresh.settings.seed == 77
        assert "foreign.png" in fresh.message[0]
        fresh.settings = fresh.settings.replace(seed=0, iterations=4, mode="lines")
        settle(fresh)

    def test_escape_closes_the_help_first_and_asks_before_losing_changes(self, fresh, monkeypatch):
        closed = []
        monkeypatch.setattr(fresh.wnd, "close", lambda: closed.append(True))
        keys = fresh.wnd.keys
        start = fresh.settings
        tap(fresh, keys.F1)
        assert fresh.panel.help_visible
        tap(fresh, keys.ESCAPE)
        assert not fresh.panel.help_visible and closed == [], "Escape closed the help, not the window"
        fresh.kept_settings = fresh.settings
        fresh.show_message("Saved scene-1.toml")
        tap(fresh, keys.ESCAPE)
        assert closed == [] and fresh.message[0] == "", "Escape dismissed the message, not the window"
        tap(fresh, keys.ESCAPE)
        assert closed == [True], "nothing unsaved: Escape quits at once"
        closed.clear()
        fresh.settings = fresh.settings.replace(h=0.42)
        tap(fresh, keys.ESCAPE)
        assert closed == [] and "press Escape again" in fresh.message[0]
        tap(fresh, keys.ESCAPE)
        assert closed == [True], "the second Escape quits"
        fresh.settings, fresh.quit_asked_at = start, None
        settle(fresh)

    def test_escape_closes_an_open_list_and_nothing_else(self, fresh, monkeypatch):
        """Click the Render type list open (found by recording where the panel draws it), then Escape: the list
        closes, the window stays (ImGui itself left the list open)."""
        from imgui_bundle import imgui

        closed = []
        monkeypatch.setattr(fresh.wnd, "close", lambda: closed.append(True))
        fresh.panel.help_visible = True  # under the list: Escape closes the list, not the help as well
        click_panel_item(fresh, monkeypatch, "combo", "Render type")
        assert frames_until(fresh, lambda: imgui.is_popup_open("", imgui.PopupFlags_.any_popup_id)), "the list opened"
        tap(fresh, fresh.wnd.keys.ESCAPE)
        assert frames_until(fresh, lambda: not imgui.is_popup_open("", imgui.PopupFlags_.any_popup_id)), \
            "Escape closed the list"
        assert closed == [] and fresh.panel.help_visible
        fresh.panel.help_visible = False

    def test_a_message_that_fits_beside_the_panel_is_shown_there(self, fresh, monkeypatch):
        """Centred on the view the panel leaves free, not over the panel's own text (the quit question was)."""
        import terrainview.window.app
        from terrainview.window.panel import overlay_width

        placed = []
        real = terrainview.window.app.overlay
        monkeypatch.setattr(terrainview.window.app, "overlay",
                            lambda lines, anchor, *args: placed.append((lines, anchor)) or real(lines, anchor, *args))
        fresh.panel.visible = True
        fresh.on_render(0.0, 1 / 60)
        fresh.show_message("Changes since the last save: press Escape again to quit without them")
        fresh.on_render(0.0, 1 / 60)
        lines, (middle, _) = placed[-1]
        assert middle - overlay_width(lines) / 2 >= fresh.panel.rect[2], "right of the panel"
        fresh.message = ("", 0.0)

    def test_a_failed_change_does_not_count_toward_the_next_ones_wait(self, fresh, tmp_path, monkeypatch):
        """"change shown after" counted from a seed image that failed to load 20 s before the good one."""
        start = fresh.settings
        fresh.settings = start.replace(seed_image=str(tmp_path / "nosuch.png"))
        settle(fresh)
        assert fresh.status.error, "the missing seed image is reported"
        monkeypatch.setattr(time, "perf_counter", lambda real=time.perf_counter: real() + 20.0)  # 20 s later
        fresh.settings = start.replace(seed=7)
        settle(fresh)
        monkeypatch.undo()
        assert fresh.status.change_seconds is not None and fresh.status.change_seconds < 15.0
        fresh.settings = start
        settle(fresh)

    def test_a_new_terrain_goes_up_in_slices_while_the_old_one_is_drawn(self, fresh, monkeypatch):
        """Each frame copies slices of a new terrain to the GPU for at most UPLOAD_SECONDS and draws the old one;
        the next frame goes on where it stopped. (The other tests let a frame take the whole upload.)"""
        from terrainview.window import generation_feed

        start = fresh.settings
        monkeypatch.setattr(generation_feed, "UPLOAD_SECONDS", 0.0)  # a slice a frame
        fresh.settings = start.replace(seed=start.seed + 1)
        fresh.feed.request(fresh.settings)
        assert fresh.feed.wait_idle(60.0)
        frames = 0
        while not fresh.feed.is_current(fresh.settings) and frames < 50:
            fresh.on_render(0.0, 1 / 60)
            frames += 1
        assert fresh.feed.is_current(fresh.settings) and frames >= 2, frames
        monkeypatch.setattr(generation_feed, "UPLOAD_SECONDS", 60.0)
        fresh.settings = start
        settle(fresh)

    def test_a_preset_chosen_in_the_panel_starts_afresh(self, fresh, monkeypatch):
        """Nothing of the scene before stays: the preset's own settings over the defaults, as --preset gives."""
        from terrainview.scene.presets import load_preset, preset_names
        from terrainview.window.panel import Panel

        start = fresh.settings
        fresh.settings = fresh.settings.replace(seed=14, h=0.75, invert=True)
        name = "endless-flight"
        assert name in preset_names()

        def choose(panel, actions):
            actions.preset = name

        monkeypatch.setattr(Panel, "_presets", choose)
        fresh.on_render(0.0, 1 / 60)
        monkeypatch.undo()
        assert fresh.settings == load_preset(name)
        fresh.settings = fresh.kept_settings = start
        settle(fresh)

    def test_large_shot_is_drawn_over_frames_and_can_be_cancelled(self, fresh, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        fresh.start_screenshot((3840, 2160), 2)  # 7680 x 4320 drawn: 15 x 9 tiles of 512, one per frame
        fresh.on_render(0.0, 1 / 60)
        fresh.on_render(0.0, 1 / 60)
        job = fresh.screenshots.job
        assert 0.0 < job.progress < 0.05 and fresh.status.shot_progress == job.progress
        fresh.show_message("Saved scene-1.toml")  # a message showing too: the shot is what Escape stops
        tap(fresh, fresh.wnd.keys.ESCAPE)  # Escape cancels the shot, not the program
        assert fresh.screenshots.job is None and not fresh.wnd.is_closing
        assert "Cancelled" in fresh.message[0]
        assert not (tmp_path / "screenshots").exists() or not any((tmp_path / "screenshots").iterdir())

    def test_the_panels_camera_fields_keep_the_eye_above_the_ground(self, fresh, monkeypatch):
        """Dragging the orbit camera's Y in the panel took the eye under the land (its underside showed)."""
        from terrainview.scene import camera
        from terrainview.window.panel import PanelActions

        start = fresh.settings
        fresh.settings = start.replace(mode="rendered", tile=3)
        settle(fresh)
        under = fresh.settings.replace(ytrans=0.3, ztrans=-0.5)  # the eye at y = -0.3, over the middle tile
        monkeypatch.setattr(fresh.panel, "draw", lambda settings, status, history=None: (under, PanelActions()))
        fresh.on_render(0.0, 1 / 60)
        monkeypatch.undo()
        x, y, z = camera.eye_position(fresh.settings)
        assert y >= camera.floor_under(fresh.flight.ground, x, z) - 1e-6 and y > -0.3
        assert fresh.settings.ztrans == -0.5, "only raised"
        fresh.settings = start
        settle(fresh)

    def test_a_preset_chosen_in_the_panel_becomes_the_scene(self, fresh, monkeypatch):
        from terrainview.window.panel import PanelActions

        start = fresh.settings
        chosen = PanelActions(preset="archipelago")
        monkeypatch.setattr(fresh.panel, "draw", lambda settings, status, history=None: (settings, chosen))
        fresh.on_render(0.0, 1 / 60)
        monkeypatch.undo()
        assert fresh.settings.look == "natural" and fresh.settings.water_level is not None
        assert "archipelago" in fresh.message[0]
        fresh.settings = start
        settle(fresh)

    def test_ctrl_z_undoes_and_ctrl_y_redoes_a_change(self, fresh):
        keys = fresh.wnd.keys
        start = fresh.settings
        fresh.settings = fresh.settings.replace(h=0.45)
        fresh.on_render(0.0, 1 / 60)  # the change settles into a step
        fresh.settings = fresh.settings.replace(yrot=fresh.settings.yrot + 30.0)  # a camera move: no step
        fresh.on_render(0.0, 1 / 60)
        tap(fresh, keys.Z, modifiers(ctrl=True))
        assert fresh.settings.h == start.h and fresh.settings.yrot == start.yrot + 30.0
        assert fresh.message[0] == "Undo: H 0.70 to 0.45"
        tap(fresh, keys.Y, modifiers(ctrl=True))
        assert fresh.settings.h == 0.45
        tap(fresh, keys.Z, modifiers(ctrl=True))
        tap(fresh, keys.Z, modifiers(shift=True, ctrl=True))
        assert fresh.settings.h == 0.45, "Ctrl+Shift+Z redoes"
        fresh.settings = start
        settle(fresh)

    def test_brackets_step_diamond_square_pass_by_pass(self, fresh):
        keys = fresh.wnd.keys
        start = fresh.settings
        fresh.settings = fresh.settings.replace(iterations=4)
        tap(fresh, keys.LEFT_BRACKET)
        assert fresh.settings.passes == 7 and "a diamond step" in fresh.message[0]
        tap(fresh, keys.LEFT_BRACKET, times=7)
        assert fresh.settings.passes == 0 and "the four corners" in fresh.message[0]
        tap(fresh, keys.LEFT_BRACKET)
        assert fresh.settings.passes == 0, "no further back than the corners"
        settle(fresh)
        assert fresh.renderer.gpu.surface_grid_size == 3, "the corners, drawn as a 3 x 3 grid"
        tap(fresh, keys.RIGHT_BRACKET, times=8)
        assert fresh.settings.passes is None and "the finished map" in fresh.message[0]
        fresh.settings = start
        settle(fresh)

    def test_the_window_says_once_what_the_endless_world_ignores(self, fresh):
        from terrainview.window.app import WORLD_IGNORES

        start = fresh.settings
        fresh.told.discard(WORLD_IGNORES)
        fresh.settings = start.replace(tile="endless")
        fresh.on_render(0.0, 1 / 60)
        assert WORLD_IGNORES not in fresh.message[0], "plain diamond-square: nothing ignored"
        fresh.settings = start.replace(tile="endless", erosion="thermal")
        fresh.on_render(0.0, 1 / 60)
        assert fresh.message[0] == WORLD_IGNORES
        fresh.message = ("", 0.0)
        fresh.on_render(0.0, 1 / 60)
        assert fresh.message[0] == "", "said once a session"
        fresh.settings = start
        settle(fresh)

    def test_leaving_the_endless_world_tells_the_region_worker_once(self, fresh, monkeypatch):
        from terrainview.window import world_feed

        start = fresh.settings
        make = world_feed.region_map
        # Regions made slowly, so that some are still to make when a frame counts them (a quick worker, or maps
        # held from an earlier visit, left none to count).
        monkeypatch.setattr(world_feed, "region_map", lambda *args: time.sleep(0.05) or make(*args))
        fresh.settings = start.replace(tile="endless", seed=start.seed + 1)
        assert frames_until(fresh, lambda: fresh.world_feed._asked[0] is not None), "the world asked for regions"
        assert frames_until(fresh, lambda: (fresh.status.regions_pending or 0) > 0), "the status line counts them"
        monkeypatch.undo()
        forgotten = []
        monkeypatch.setattr(fresh.world_feed, "forget", lambda: forgotten.append(True))
        fresh.settings = start.replace(tile=1)
        for _ in range(3):
            fresh.on_render(0.0, 1 / 60)
        assert forgotten == [True], "on the frame that leaves, not on every frame of tiles"
        assert fresh.status.regions_pending is None, "over tiles: the map's generation time again"
        monkeypatch.undo()
        fresh.world_feed.forget()
        fresh.settings = start
        settle(fresh)

    def test_f2_shows_the_status_line_over_the_view(self, fresh):
        assert not fresh.panel.status_line_visible
        tap(fresh, fresh.wnd.keys.F2)
        assert fresh.panel.status_line_visible
        fresh.on_render(0.0, 1 / 60)  # drawn over the view, panel or not
        tap(fresh, fresh.wnd.keys.F2)
        assert not fresh.panel.status_line_visible

    def test_a_message_goes_above_the_status_line_not_over_it(self, fresh, monkeypatch):
        """A message as wide as the quit prompt, with the status line shown (F2): its box sits above the status
        line's (both were anchored near the bottom right, the message drawn over the figures)."""
        import terrainview.window.app

        boxes = []
        real_overlay = terrainview.window.app.overlay
        monkeypatch.setattr(terrainview.window.app, "overlay", lambda *args: boxes.append(real_overlay(*args)))
        tap(fresh, fresh.wnd.keys.F2)
        try:
            fresh.show_message("Changes since the last save: press Escape again within 4 seconds to quit anyway")
            fresh.on_render(0.0, 1 / 60)
            message, status = boxes[-1], fresh.panel.status_rect
            assert status is not None
            assert message[2] > status[0], "the boxes share columns"
            assert message[3] <= status[1], "the message's bottom is above the status line's top"
        finally:
            fresh.message = ("", 0.0)
            tap(fresh, fresh.wnd.keys.F2)

    def test_the_natural_look_drafts_while_the_view_moves_and_is_whole_at_rest(self, fresh, monkeypatch):
        from terrainview.window.app import DRAFT_REST_SECONDS

        clock = [100.0]
        monkeypatch.setattr(fresh, "input_clock", lambda: clock[0])
        width, height = fresh.wnd.buffer_size
        draft_line = f", draft {round(width / 2)}x{round(height / 2)} while moving"

        def window_sharpness() -> float:  # the view right of the panel: its change from one pixel to the next
            resolved = fresh.ctx.simple_framebuffer((width, height))  # the window's may be multisampled
            fresh.ctx.copy_framebuffer(resolved, fresh.wnd.fbo)
            pixels = np.frombuffer(resolved.read(), dtype=np.uint8).reshape(height, width, 3)
            resolved.release()
            return float(np.abs(np.diff(pixels[:, width // 2:].astype(np.int16), axis=1)).mean())

        try:
            fresh.settings = fresh.settings.replace(mode="rendered", look="natural", ztrans=-2.0, pitch=20.0)
            settle(fresh)
            assert fresh.status.drawn.endswith(draft_line), "a change: a draft"
            clock[0] += DRAFT_REST_SECONDS + 0.1
            fresh.on_render(0.0, 1 / 60)
            assert "draft" not in fresh.status.drawn, "at rest: the whole frame"
            whole = window_sharpness()
            tap(fresh, fresh.wnd.keys.LEFT)  # the view turns
            fresh.on_render(0.0, 1 / 60)
            assert fresh.status.drawn.endswith(draft_line)
            assert window_sharpness() < 0.8 * whole, "drawn at half size, stretched"
            fresh.panel.draft_while_moving = False  # the panel's "Draft while moving" unticked
            tap(fresh, fresh.wnd.keys.LEFT)
            fresh.on_render(0.0, 1 / 60)
            assert "draft" not in fresh.status.drawn
        finally:
            fresh.panel.draft_while_moving = True
            fresh.settings = fresh.settings.replace(look="original")

    def test_f12_saves_an_antialiased_shot_of_the_window(self, fresh, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        tap(fresh, fresh.wnd.keys.F12)
        job = fresh.screenshots.job
        assert job is not None and job.supersample == 2 and job.size == fresh.wnd.buffer_size
        fresh.screenshots.cancel()

    def test_screenshots_never_overwrite(self, fresh, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        for _ in range(2):
            fresh.start_screenshot((64, 36), path=None)
            while fresh.screenshots.job is not None:
                fresh.on_render(0.0, 1 / 60)
        shots = names(tmp_path / "screenshots")
        assert len(shots) == 2
        assert all(name.startswith("terrainview-") and "-seed0" in name for name in shots)

    def test_panel_saves_and_loads_scenes(self, fresh, tmp_path):
        path = tmp_path / "saved.toml"
        fresh.settings = fresh.settings.replace(seed=11, h=0.4)
        fresh.save_scene_file(path)
        assert path.exists() and "Saved scene" in fresh.message[0]
        fresh.settings = fresh.settings.replace(seed=0, h=0.7)
        fresh.load_scene_file(path)
        assert (fresh.settings.seed, fresh.settings.h) == (11, 0.4)
        fresh.load_scene_file(tmp_path / "missing.toml")
        assert "no such scene file" in fresh.message[0] and fresh.settings.seed == 11
        fresh.settings = fresh.settings.replace(seed=0, h=0.7)
        settle(fresh)

    def test_save_scene_writes_new_files_in_their_own_folder(self, fresh, tmp_path, monkeypatch):
        """The panel's Save: a new time-stamped file in ./scenes/ each time, never over another, its name in the
        Scene file field, from where Load reads it back."""
        monkeypatch.chdir(tmp_path)
        fresh.settings = fresh.settings.replace(seed=12)
        fresh.save_scene_file()
        fresh.save_scene_file()
        saved = sorted((tmp_path / "scenes").iterdir())
        assert len(saved) == 2 and all(path.suffix == ".toml" and "-seed12" in path.name for path in saved)
        assert list(tmp_path.iterdir()) == [tmp_path / "scenes"], "nothing written beside ./scenes/"
        assert Path(fresh.panel.scene_path).name in {path.name for path in saved}
        fresh.settings = fresh.settings.replace(seed=0)
        fresh.load_scene_file(Path(fresh.panel.scene_path))
        assert fresh.settings.seed == 12
        fresh.settings = fresh.settings.replace(seed=0)
        settle(fresh)

    def test_p_from_a_deep_1d_profile_comes_down_to_the_2d_limit(self, fresh):
        fresh.settings = fresh.settings.replace(mode="1d", iterations=14)
        tap(fresh, fresh.wnd.keys.P)
        assert (fresh.settings.mode, fresh.settings.iterations) == ("rendered", 12)
        fresh.settings = fresh.settings.replace(mode="lines", iterations=4)
        settle(fresh)

    def test_no_screenshot_while_the_terrain_failed_to_generate(self, fresh, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        fresh.settings = fresh.settings.replace(seed_image=str(tmp_path / "missing.png"))
        settle(fresh)
        assert "missing.png" in fresh.status.error
        tap(fresh, fresh.wnd.keys.F12)
        assert fresh.screenshots.job is None and fresh.screenshots.pending is None
        assert fresh.message[0].startswith("Screenshot not taken")
        fresh.settings = fresh.settings.replace(seed_image="")
        settle(fresh)
        assert fresh.status.error is None

    def test_switching_between_1d_and_2d_modes_keeps_drawing(self, fresh):
        """The panel's render-type combo changes ``app.settings``; the next frames must draw (the previous
        picture or the new one) while the worker generates the other kind of surface."""
        try:
            for mode in ("1d", "lines", "1d", "rendered", "clouds", "1d", "teximage", "lines"):
                fresh.settings = fresh.settings.replace(mode=mode)
                fresh.on_render(0.0, 1 / 60)
                settle(fresh)
                assert fresh.settings.mode == mode
                assert fresh.frame_stats.kind == ("line segments" if mode in ("1d", "lines") else "triangles")
        finally:
            fresh.settings = fresh.settings.replace(mode="lines")
            settle(fresh)

    def test_f12_right_after_a_change_shoots_the_new_scene(self, fresh, tmp_path, monkeypatch):
        """A PNG carries its scene; its pixels must be that scene even when F12 follows a change at once."""
        monkeypatch.chdir(tmp_path)
        keys = fresh.wnd.keys

        def shoot() -> Path:
            """Press F12 and keep the frames coming (the worker may finish meanwhile) until the PNG is saved."""
            folder = tmp_path / "screenshots"
            before = set(folder.glob("*.png")) if folder.is_dir() else set()
            tap(fresh, keys.F12)
            for _ in range(100):
                written = set(folder.glob("*.png")) - before if folder.is_dir() else set()
                if written and fresh.screenshots.job is None:
                    assert len(written) == 1
                    return written.pop()
                fresh.feed.wait_idle(60.0)
                fresh.on_render(0.0, 1 / 60)
            pytest.fail("F12 wrote no screenshot")

        from terrainview.scene.scene_file import load_scene

        fresh.settings = fresh.settings.replace(seed=5)  # as the panel's Seed field does
        hasty = shoot()
        settle(fresh)
        patient = shoot()
        assert load_scene(hasty)[0].seed == load_scene(patient)[0].seed == 5
        with Image.open(hasty) as first, Image.open(patient) as second:
            assert np.array_equal(np.asarray(first), np.asarray(second)), "the shot shows another terrain"
        fresh.settings = fresh.settings.replace(seed=0)
        settle(fresh)

    def test_fly_keys_wheel_speed_and_home(self, fresh):
        keys = fresh.wnd.keys
        fresh.settings = fresh.settings.replace(camera="fly", yrot=90.0, eye_y=1.5)  # heading +x, high up
        fresh.on_render(0.0, 1 / 60)
        tap(fresh, keys.UP)
        assert (fresh.settings.eye_x, fresh.settings.eye_z) == pytest.approx((0.05, 3.0), abs=1e-9)
        from imgui_bundle import imgui

        def pointer_over_the_terrain() -> bool:  # the X pointer may still send its own position: repeat ours
            fresh.on_mouse_position_event(1200, 650, 0, 0)
            return not imgui.get_io().want_capture_mouse

        assert frames_until(fresh, pointer_over_the_terrain)
        fresh.on_mouse_scroll_event(0.0, 1.0)
        assert fresh.flight.speed == pytest.approx(1.25)
        # The pointer moved onto the panel and scrolled at once, within one frame: the panel takes it all.
        fresh.on_mouse_position_event(60, 200, 0, 0)
        fresh.on_mouse_scroll_event(0.0, 1.0)
        assert fresh.flight.speed == pytest.approx(1.25)
        fresh.on_render(0.0, 1 / 60)
        tap(fresh, keys.UP)
        assert fresh.settings.eye_x == pytest.approx(0.05 + 0.0625, abs=1e-9)
        tap(fresh, keys.LEFT)
        assert fresh.settings.yrot == 87.0, "left turns the eye left"
        press(fresh, keys.HOME)
        release(fresh, keys.HOME)
        assert fresh.settings.camera == "orbit" and fresh.flight.speed == 1.0
        assert {name: getattr(fresh.settings, name) for name in START_CAMERA} == START_CAMERA

    def test_the_endless_worlds_change_is_shown_after_its_regions_are_made(self, fresh, monkeypatch):
        """An iterations change in the endless world is timed until a frame shows every region it asked for (the
        world generates no map: the map's generation time said nothing of it, and stayed as it was). Meanwhile the
        region worker is held from each frame's buffer swap to the next frame's start, and free while it draws."""
        from terrainview.render.gpu import software_rasterizer

        original = fresh.settings
        fresh.settings = original.replace(mode="rendered", iterations=5, tile="endless", seed=original.seed + 3)
        held_as_frames_start, held_as_lent, held_as_drawn, steps = [], [], [], []
        start_frame, take_generated = fresh.world_feed.start_frame, fresh._take_generated
        lend, take, ask_for = fresh.world_feed.lend, fresh.world_feed.take, fresh.world_feed.ask_for
        monkeypatch.setattr(fresh.world_feed, "start_frame", lambda cache: held_as_frames_start.append(
            fresh.world_feed.held) or start_frame(cache))
        monkeypatch.setattr(fresh, "_take_generated", lambda: steps.append("heightmaps") or take_generated())
        monkeypatch.setattr(fresh.world_feed, "lend", lambda: held_as_lent.append(fresh.world_feed.held)
                            or steps.append("lend") or lend())
        monkeypatch.setattr(fresh.world_feed, "take", lambda cache: steps.append("take") or take(cache))
        monkeypatch.setattr(fresh.world_feed, "ask_for", lambda *args: held_as_drawn.append(fresh.world_feed.held)
                            or ask_for(*args))  # (after the frame's draws)
        draw_ui = fresh._draw_ui  # (the panel, last before the buffer swap)
        monkeypatch.setattr(fresh, "_draw_ui", lambda *args: held_as_drawn.append(fresh.world_feed.held)
                            or draw_ui(*args))
        try:
            assert frames_until(fresh, lambda: not fresh.world_feed.pending and not fresh.renderer.world.missing,
                                seconds=120.0)
            # The worker is held from the end of a frame (its pixels drawn at the buffer swap) to the next's start,
            # and paces its large maps where llvmpipe draws the pixels on the same cores. Each frame's start lets it
            # go and lends it the core if the frames left it none (under SCHED_IDLE), before the frame takes what
            # it made.
            assert fresh.world_feed.held and all(held_as_frames_start)
            assert len(held_as_frames_start) > 1 and held_as_drawn and not any(held_as_lent + held_as_drawn)
            assert steps == ["lend", "take", "heightmaps"] * len(held_as_frames_start), \
                "a lend at each frame's start, before the take"
            assert fresh.world_feed._paced is software_rasterizer(fresh.renderer.ctx)
            for iterations in (6, 5):
                fresh.status.change_seconds = None
                fresh.settings = fresh.settings.replace(iterations=iterations)
                assert frames_until(fresh, lambda: fresh.status.change_seconds is not None, seconds=120.0)
                assert not fresh.renderer.world.cache.requests(fresh.renderer.world.wanted), "nothing left to make"
                assert fresh.status.change_seconds > 0.0
                assert fresh.renderer.world.changed_at is None and fresh.renderer.world.shows_all_wanted()
            # A change left before it was all shown, then the world again: timed from the return, not before.
            fresh.settings = fresh.settings.replace(iterations=8)  # (not made before: not shown in one frame)
            fresh.on_render(0.0, 1 / 60)
            assert fresh.renderer.world.changed_at is not None
            fresh.settings = fresh.settings.replace(tile=3)
            fresh.on_render(0.0, 1 / 60)
            time.sleep(1.0)
            fresh.status.change_seconds = None
            returned = time.perf_counter()
            fresh.settings = fresh.settings.replace(tile="endless")
            assert frames_until(fresh, lambda: fresh.status.change_seconds is not None, seconds=120.0)
            assert 0.0 < fresh.status.change_seconds <= time.perf_counter() - returned
        finally:
            fresh.world_feed.forget()
            fresh.settings = original
            settle(fresh)

    def test_status_shows_the_change_latency_and_the_full_mesh(self, fresh):
        fresh.status.change_seconds = None
        fresh.settings = fresh.settings.replace(iterations=5)
        fresh.feed.request(fresh.settings)
        assert fresh.feed.wait_idle(60.0)
        assert frames_until(fresh, lambda: fresh.status.change_seconds is not None)
        assert fresh.status.change_seconds > 0.0
        assert fresh.status.drawn == "2112 of 2112 line segments", "lines, iterations 5: 2 * 33 * 32, the full mesh"
        fresh.settings = fresh.settings.replace(iterations=4)
        settle(fresh)

    def test_the_video_export_message_is_drawn_over_the_panel(self, fresh, tmp_path, monkeypatch):
        """The message stays in front when the panel is clicked (it went behind it as the panel came forward)."""
        import terrainview.window.app as app_module
        from terrainview.scene.flythrough import Flythrough, Keyframe, save_flight

        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(app_module, "MESSAGE_SECONDS", 600.0)  # shown throughout, however slow the frames
        flight_path = tmp_path / f"flight-{'long-name-' * 10}.toml"  # a message wider than the gap beside the panel
        save_flight(Flythrough(fresh.settings, (Keyframe(0.0, {}), Keyframe(600.0, {"yrot": 90.0}))), flight_path)
        fresh.message = ("", 0.0)

        width, height = fresh.wnd.buffer_size
        copy = fresh.ctx.framebuffer([fresh.ctx.texture((width, height), 3)])

        def drawn() -> np.ndarray:
            """A frame, copied out of the window (reading the window's own framebuffer is a GL error here)."""
            fresh.on_render(0.0, 1 / 60)
            fresh.ctx.copy_framebuffer(copy, fresh.wnd.fbo)
            return np.frombuffer(copy.read(components=3), np.uint8).reshape(height, width, 3)[::-1]

        try:
            fresh.panel.visible = False
            plain = drawn()
            fresh.flythrough.start_export(flight_path, fresh.wnd.buffer_size)
            drawn()  # an auto-sized ImGui window shows from its second frame
            alone = drawn()
            rows, columns = np.nonzero((alone != plain).any(axis=2))  # the message's box, over the scene alone
            text = np.zeros(plain.shape[:2], bool)
            text[rows.min():rows.max() + 1, columns.min():columns.max() + 1] = True
            text &= (alone > 200).all(axis=2)
            fresh.panel.visible = True
            drawn()
            left, top, right, bottom = fresh.panel.rect
            x, y = right - 20, bottom - 10  # the status lines: a click there only brings the panel forward
            fresh.on_mouse_position_event(x, y, 0, 0)
            drawn()
            fresh.on_mouse_press_event(x, y, fresh.wnd.mouse.left)
            drawn()
            fresh.on_mouse_release_event(x, y, fresh.wnd.mouse.left)
            drawn()
            shown = drawn()
            assert fresh.message[0].startswith("Exporting videos/flight-long-name-")
            text[:, round(right):] = False  # where the panel is
            text[:, :round(left)] = False
            assert text.sum() > 200, "the message's text reaches across the panel"
            assert (shown[text] > 200).all(axis=1).mean() > 0.95, "the message's text shows over the panel"
        finally:
            copy.color_attachments[0].release()
            copy.release()
            fresh.flythrough.cancel_export()
            fresh.flythrough.export.process.join(timeout=60)
            fresh.on_render(0.0, 1 / 60)  # reports the cancelled export gone
            fresh.message = ("", 0.0)  # (shown for MESSAGE_SECONDS as patched here: not into the next tests)

    def test_camera_section_draws_both_modes(self, fresh):
        from imgui_bundle import imgui

        from terrainview.window.panel import Panel

        for mode in ("orbit", "fly"):
            imgui.new_frame()
            imgui.begin("camera section")
            settings = Panel._camera(fresh.settings.replace(camera=mode), fresh.status)
            tiles = Panel()._tile(settings.replace(tile="endless"))
            imgui.end()
            imgui.end_frame()
            assert settings.camera == mode and tiles.tile == "endless", "nothing clicked: nothing changed"


# --- end to end: the program in a subprocess ---------------------------------------------------------------


def x_env(display: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "WAYLAND_DISPLAY"}
    env["DISPLAY"] = display
    return env


def grab(display: str, geometry: str = "1280x720+0+0") -> np.ndarray:
    result = subprocess.run(["import", "-window", "root", "-crop", geometry, "png:-"], env=x_env(display),
                            capture_output=True, timeout=30, check=True)
    with Image.open(io.BytesIO(result.stdout)) as image:
        return np.asarray(image.convert("RGB"))


def find_window(display: str, process: subprocess.Popen) -> str | None:
    if process.poll() is not None:
        pytest.fail(f"terrainview exited early with status {process.returncode}: {process.communicate()}")
    result = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^terrainview$"],
                            env=x_env(display), capture_output=True, text=True, timeout=10)
    ids = result.stdout.split()
    return ids[-1] if ids else None


def key(display: str, window: str, *names: str) -> None:
    subprocess.run(["xdotool", "key", "--window", window, *names], env=x_env(display), capture_output=True,
                   timeout=10)
    # A window that closes on a press never gets its release, and the server would keep that key down for the
    # next window: release every key named, in the server itself.
    subprocess.run(["xdotool", "keyup", *names], env=x_env(display), capture_output=True, timeout=10)


SCENE_AREA = (slice(0, 720), slice(450, 1280))  # right of the options panel
PANEL_AREA = (slice(0, 300), slice(0, 420))


def lines_drawn(pixels: np.ndarray) -> bool:
    """Black mesh lines on the white background in the scene area."""
    scene = pixels[SCENE_AREA].astype(int).mean(axis=2)
    return (scene == 255).mean() > 0.8 and (scene < 100).mean() > 0.002


@pytest.mark.xvfb
def test_viewer_end_to_end(xvfb_display, screen_grabber, tmp_path):
    display = xvfb_display
    process = subprocess.Popen([sys.executable, "-m", "terrainview.cli", "--mode", "lines", "--iterations", "5"],
                               cwd=tmp_path, env=x_env(display), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        window = wait_for(lambda: find_window(display, process), 60, "the terrainview window")
        first = wait_for(lambda: (lambda pixels: pixels if lines_drawn(pixels) else None)(grab(display)), 60,
                         "the first frame of lines")
        assert first.shape == (720, 1280, 3)
        panel = first[PANEL_AREA].astype(int)
        assert (panel.mean(axis=2) < 128).mean() > 0.5, "the dark options panel is open at the top left"

        key(display, window, *["Left"] * 5)
        turned = wait_for(lambda: (lambda pixels: pixels if np.any(pixels[SCENE_AREA] != first[SCENE_AREA])
                                   and lines_drawn(pixels) else None)(grab(display)), 20, "the view to turn")
        assert np.any(turned[SCENE_AREA] != first[SCENE_AREA])

        key(display, window, "ctrl+o")

        def panel_gone():
            pixels = grab(display)
            return pixels if (pixels[PANEL_AREA] == 255).all(axis=2).mean() > 0.95 else None

        hidden = wait_for(panel_gone, 20, "Ctrl+O to hide the panel")
        assert (hidden[PANEL_AREA] == 255).all(axis=2).mean() > 0.95, "the white scene shows where the panel was"

        key(display, window, "bracketleft")  # the real [ key: one half-pass back, a diamond step
        key(display, window, "F12")
        shots = tmp_path / "screenshots"
        shot = wait_for(lambda: sorted(shots.glob("*.png")) or None, 30, "the F12 screenshot")
        key(display, window, "Escape")  # at once, while the shot's "Saved ..." message shows: it goes first
        time.sleep(0.5)
        assert process.poll() is None, "Escape dismissed the message, not the window"
        assert len(shot) == 1
        from terrainview.scene.scene_file import load_scene

        settings, warnings = load_scene(shot[0])
        assert settings.mode == "lines" and settings.iterations == 5
        # Five Left taps, a 3 degree step each; a frame drawn between a tap's press and release (more than 33 ms
        # apart on a busy machine) steps it again as a held key. The exact tap: test_arrow_keys, and
        # test_a_quick_tap_at_17_fps_is_one_step above.
        assert settings.yrot % 3.0 == 0.0 and settings.yrot >= 15.0, "the shot carries the camera"
        assert settings.passes == 9, "[ stepped back one half-pass"
        with Image.open(shot[0]) as image:
            assert image.size == (1280, 720) and image.text["terrainview.supersample"] == "2", "antialiased"
            pixels = np.asarray(image.convert("RGB"))
        assert (pixels[PANEL_AREA] == 255).all(axis=2).mean() > 0.95, "no panel in the shot"

        key(display, window, "Escape")  # the camera moved: the window asks, a second Escape quits
        time.sleep(0.5)
        assert process.poll() is None, "the window asked first"
        key(display, window, "Escape")
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("Escape did not close the viewer within 10 s")
        stdout, stderr = process.communicate()
        assert status == 0, stderr
        assert "Traceback" not in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_viewer_without_a_display_exits_2_with_one_line(tmp_path, run_cli):
    env = {key: value for key, value in os.environ.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = run_cli("--mode", "lines", cwd=tmp_path, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("terrainview: error:") and "DISPLAY" in lines[0]
    assert "Traceback" not in result.stderr
    assert list(Path(tmp_path).iterdir()) == [], "nothing written"
