"""Recording a flight with keys in the window (issue 11), in the in-process harness of test_app_window.

Its own module, named to run before any test draws offscreen in this process: a window made after an
in-process headless render finds its default framebuffer incomplete (GL_INVALID_FRAMEBUFFER_OPERATION).
"""

from __future__ import annotations

import pytest
from helpers import camera
from test_app_window import app, modifiers, press, release, settle, tap  # noqa: F401 - app is a fixture

from terrainview.scene import flythrough
from terrainview.scene.flythrough import load_flight

pytest_plugins = ["gl_fixtures"]

# --- in the window -----------------------------------------------------------------------------------------


@pytest.mark.xvfb
class TestRecordingInTheWindow:
    def test_keys_record_and_the_flight_replays_the_same_camera(self, app, tmp_path, monkeypatch):  # noqa: F811
        monkeypatch.chdir(tmp_path)
        keys = app.wnd.keys
        app.flight.release_all()
        app.settings = app.settings.replace(mode="lines", yrot=0.0, ytrans=-0.5, ztrans=-3.0, pitch=0.0)
        settle(app)
        tap(app, keys.R)
        assert app.flythrough.recorder is not None
        seen = []

        def frames(count: int, seconds: float = 1 / 60) -> None:
            for _ in range(count):
                app.on_render(0.0, seconds)
                seen.append((app.flythrough.recorder.seconds, camera(app.settings)))

        frames(3)
        press(app, keys.LEFT)
        frames(20)
        release(app, keys.LEFT)
        frames(5, 1 / 24)
        tap(app, keys.UP, times=2)
        frames(4)
        press(app, keys.UP, modifiers(shift=True))
        frames(10, 1 / 90)
        release(app, keys.UP, modifiers(shift=True))
        app.settings = app.settings.replace(pitch=12.0)  # as a mouse drag does
        frames(6)
        assert app.status.recording_seconds == pytest.approx(seen[-1][0])
        tap(app, keys.R)
        assert app.flythrough.recorder is None
        written = sorted((tmp_path / "flights").glob("flight-*.toml"))
        assert len(written) == 1 and str(written[0].relative_to(tmp_path)) in app.message[0]
        assert app.flythrough.recent == [written[0].relative_to(tmp_path)]
        assert len({c for _, c in seen}) > 12, "the camera moved"

        flight, warnings = load_flight(written[0])
        assert warnings == []
        for when, wanted in seen:
            assert camera(flight.at(when)) == pytest.approx(wanted, abs=1e-6), when

        # Replaying in the window: the same camera at the same times; Space pauses, Right steps, Escape stops.
        app.settings = app.flythrough.play(flight)
        elapsed = 0.0
        for when, wanted in seen[:30]:
            app.on_render(0.0, when - elapsed)
            elapsed = when
            assert camera(app.settings) == pytest.approx(wanted, abs=1e-6)
        tap(app, keys.SPACE)
        tap(app, keys.LEFT, times=3)  # steps, not turns
        app.on_render(0.0, 1 / 60)
        assert app.flythrough.player.time == pytest.approx(elapsed - 3 * flythrough.STEP_SECONDS)
        assert camera(app.settings) == camera(flight.at(app.flythrough.player.time))
        assert "Saved flight" in app.message[0]
        tap(app, keys.ESCAPE)  # the replay stops, though a message shows
        assert app.flythrough.player is None and not app.wnd.is_closing
        stopped = app.settings.yrot
        tap(app, keys.LEFT)
        app.on_render(0.0, 1 / 60)
        assert app.settings.yrot == stopped + 3.0, "after the replay the keys fly again"

    def test_a_replay_that_goes_under_the_ground_is_drawn_above_it_as_its_video_is(self, app):  # noqa: F811
        """A flight written by hand takes the orbit camera, looking up, under the land: the replay draws each frame
        with the camera kept above the ground, as video and render do, and says so once."""
        start = app.settings.replace(camera="orbit", mode="rendered", ytrans=0.3, pitch=-20.0)
        flight = flythrough.Flythrough(start, (flythrough.Keyframe(0.0, {"ytrans": 0.3, "pitch": -20.0}),
                                               flythrough.Keyframe(1.0, {"ytrans": 0.35, "pitch": -25.0})))
        app.settings = app.flythrough.play(flight)
        try:
            for _ in range(4):
                app.on_render(0.0, 1 / 20)
                recorded = flight.at(app.flythrough.player.time)
                assert app.drawn_settings.ytrans < recorded.ytrans - 0.1, "drawn raised, not as the flight put it"
                assert app.drawn_settings.pitch == recorded.pitch
            assert "raised to stay above the ground" in app.message[0]
        finally:
            app.flythrough.stop_replay()  # not into the class's later tests
