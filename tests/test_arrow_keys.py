"""Arrow-key flight (SPEC "Camera and keys"): the original's steps, a tap is one step, a held key repeats at
30 steps per second whatever the frame rate. Pure Python: no window, no GL."""

from __future__ import annotations

import math

import pytest

from terrainview.scene import camera
from terrainview.scene.settings import SceneSettings
from terrainview.window import arrow_keys
from terrainview.window.arrow_keys import ArrowKeyCamera, Key

START = SceneSettings()


def tap(state: ArrowKeyCamera, settings: SceneSettings, key: Key, times: int = 1) -> SceneSettings:
    for _ in range(times):
        settings = state.press(settings, key)
        state.release(key)
    return settings


def test_start_camera_is_the_originals():
    assert (START.yrot, START.ytrans, START.ztrans) == (0.0, -0.5, -3.0)


def test_ten_left_taps_turn_30_degrees():
    settings = tap(ArrowKeyCamera(), START, Key.LEFT, 10)
    assert settings.yrot == 30.0
    assert (settings.ytrans, settings.ztrans) == (START.ytrans, START.ztrans)


def test_right_turns_minus_3_degrees_per_tap():
    state = ArrowKeyCamera()
    settings = START
    for count in range(1, 5):
        settings = tap(state, settings, Key.RIGHT)
        assert settings.yrot == -3.0 * count


def test_up_and_down_move_along_z():
    state = ArrowKeyCamera()
    up = tap(state, START, Key.UP)
    assert up.ztrans == pytest.approx(-2.95, abs=1e-12)
    assert up.ytrans == START.ytrans and up.yrot == START.yrot
    down = tap(state, START, Key.DOWN, 2)
    assert down.ztrans == pytest.approx(-3.1, abs=1e-12)


def test_shift_moves_along_y_not_z():
    state = ArrowKeyCamera(shift=True)
    up = tap(state, START, Key.UP)
    assert up.ytrans == pytest.approx(-0.45, abs=1e-12)
    assert up.ztrans == START.ztrans
    down = tap(state, START, Key.DOWN)
    assert down.ytrans == pytest.approx(-0.55, abs=1e-12)
    assert down.ztrans == START.ztrans
    # Shift does not change turning.
    assert tap(state, START, Key.LEFT).yrot == 3.0


def test_a_tap_is_exactly_one_step():
    state = ArrowKeyCamera()
    settings = state.press(START, Key.LEFT)
    state.release(Key.LEFT)
    assert settings.yrot == 3.0
    # Time passing after the release moves nothing.
    assert state.advance(settings, 1.0) == settings


@pytest.mark.parametrize(("fps", "into_frame", "steps"), [(17, 0.04, 1), (17, 0.0, 2), (10, 0.09, 1), (10, 0.02, 3)])
def test_the_time_before_a_press_is_not_held(fps, into_frame, steps):
    # A frame's time step counts from the frame before; the key went down into_frame seconds into it.
    state = ArrowKeyCamera()
    settings = state.press(START, Key.LEFT, into_frame)
    settings = state.advance(settings, 1.0 / fps)
    assert settings.yrot == 3.0 * steps


@pytest.mark.parametrize("fps", [10, 24, 30, 60, 144, 1000])
def test_holding_left_one_second_makes_30_steps_at_any_frame_rate(fps):
    state = ArrowKeyCamera()
    settings = state.press(START, Key.LEFT)
    for _ in range(fps):
        settings = state.advance(settings, 1.0 / fps)
    state.release(Key.LEFT)
    assert settings.yrot == 90.0
    assert state.advance(settings, 1.0).yrot == 90.0


@pytest.mark.parametrize("fps", [24, 60])
def test_holding_up_two_seconds_makes_60_steps(fps):
    state = ArrowKeyCamera()
    settings = state.press(START, Key.UP)
    for _ in range(2 * fps):
        settings = state.advance(settings, 1.0 / fps)
    assert settings.ztrans == pytest.approx(START.ztrans + 60 * 0.05, abs=1e-9)


def test_half_a_second_held_is_15_steps():
    state = ArrowKeyCamera()
    settings = state.press(START, Key.RIGHT)
    for _ in range(30):
        settings = state.advance(settings, 1.0 / 60)
    assert settings.yrot == -45.0


def test_two_keys_held_together_both_repeat():
    state = ArrowKeyCamera()
    settings = state.press(START, Key.LEFT)
    settings = state.press(settings, Key.UP)
    for _ in range(60):
        settings = state.advance(settings, 1.0 / 60)
    assert settings.yrot == 90.0
    assert settings.ztrans == pytest.approx(START.ztrans + 1.5, abs=1e-9)


def test_release_all_stops_every_key():
    state = ArrowKeyCamera()
    settings = state.press(START, Key.LEFT)
    state.release_all()
    assert state.advance(settings, 1.0).yrot == 3.0


def test_drag_pitch_clamps_at_80_degrees():
    assert arrow_keys.drag(START, 0, 10_000).pitch == 80.0
    assert arrow_keys.drag(START, 0, -10_000).pitch == -80.0
    pitched = arrow_keys.drag(START, 0, 10)
    assert 0.0 < pitched.pitch < 80.0
    # Further drags stay within the clamp and never make invalid settings.
    settings = START
    for _ in range(50):
        settings = arrow_keys.drag(settings, 3, 40)
    assert settings.pitch == 80.0
    assert settings.yrot > 0.0, "horizontal drag turns"


def test_the_orbit_wheel_steps_along_z_like_up_and_down_even_with_shift_held():
    state = ArrowKeyCamera(shift=True)
    settings = state.wheel(START, 2.4)  # two notches: two of Up's steps
    assert settings.ztrans == pytest.approx(START.ztrans + 2 * arrow_keys.MOVE_STEP) and settings.ytrans == START.ytrans
    assert state.wheel(START, -0.2).ztrans == pytest.approx(START.ztrans - arrow_keys.MOVE_STEP), "at least one step"
    state.ground = lambda x, z: 1.0  # a plateau above the eye: the wheel keeps it over the ground, as keys do
    assert camera.eye_position(state.wheel(START, 1))[1] == pytest.approx(1.0 + camera.CLEARANCE)


@pytest.mark.parametrize("camera_mode, shift", [("fly", False), ("fly", True), ("orbit", False), ("orbit", True)])
def test_a_key_held_for_hours_stops_the_camera_at_the_edge_of_a_scene(camera_mode, shift):
    """At the fly camera's top speed the eye reached 10,000 units (the most a scene holds) in 104 s, and the
    next step made a scene that could not be: the window closed with a traceback."""
    state = ArrowKeyCamera()
    state.speed = arrow_keys.SPEED_RANGE[1]
    state.shift = shift
    settings = state.press(START.replace(camera=camera_mode), Key.UP)
    settings = state.advance(settings, 4 * 3600.0)  # every step due in four hours, at once
    settings = state.advance(settings, 1.0)
    moved = {"fly": "eye_y" if shift else "eye_z", "orbit": "ytrans" if shift else "ztrans"}[camera_mode]
    assert abs(getattr(settings, moved)) == 1e4
    settings = state.press(settings.replace(yrot=0.0), Key.LEFT)
    settings = state.advance(settings, 24 * 3600.0)  # turning for a day: 7.8 million degrees, past the range
    assert abs(settings.yrot) <= 180.0, "brought back by whole turns"
    assert abs(state.advance(settings, 1.0).yrot - settings.yrot) > 0.0, "and it still turns"


def test_the_ground_keeping_an_eye_at_the_edge_of_a_scene_keeps_it_there():
    """An orbit eye at the edge of a scene, pitched down over flat ground: one Shift+Up had the ground raise it
    past the 10,000 units a scene holds, and the window closed with a traceback (the edge was kept by the keys,
    not where every move of the eye goes)."""
    state = ArrowKeyCamera()
    state.ground = lambda x, z: 0.0
    state.shift = True
    edge = START.replace(camera="orbit", pitch=30.0, ztrans=-1e4, ytrans=9000.0)
    settings = state.advance(state.press(edge, Key.UP), 1.0)
    assert all(abs(getattr(settings, name)) <= 1e4 for name in ("xtrans", "ytrans", "ztrans"))
    assert settings.ztrans == -1e4, "the raise stopped at the edge"


def test_a_drag_stops_the_pitch_at_its_range_and_turns_the_yaw_on():
    assert arrow_keys.drag(START, 0.0, 10_000.0).pitch == 80.0
    assert arrow_keys.drag(START, 0.0, -10_000.0).pitch == -80.0
    assert arrow_keys.drag(START.replace(yrot=999_990.0), 100.0, 0.0).yrot == pytest.approx(
        math.remainder(999_990.0 + 100.0 * arrow_keys.DRAG_DEGREES_PER_PIXEL, 360.0))
