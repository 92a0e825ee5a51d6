"""Flythroughs (issue 11): flight files, the documented interpolation, recording and replay in the window."""

from __future__ import annotations

import math
import os
import tomllib

import pytest
from helpers import CAMERA, camera, wait_for

from terrainview.base import resources
from terrainview.base.atomic_files import OutputError
from terrainview.scene import bounded_reader, flythrough, scene_file
from terrainview.scene.flythrough import (
    FlightError,
    Flythrough,
    Keyframe,
    Player,
    Recorder,
    flight_text,
    load_flight,
    save_flight,
)
from terrainview.scene.scene_file import load_scene
from terrainview.scene.settings import SceneSettings, SettingsError

pytest_plugins = ["gl_fixtures"]

START = SceneSettings(mode="lines", iterations=4, seed=3)

TWO_KEYFRAMES = """\
version = 1

[scene]
mode = "rendered"
iterations = 5
h = 0.7

[[keyframe]]
time = 0
yrot = 10
ztrans = -3

[[keyframe]]
time = 2
yrot = 100
ztrans = -2
h = 0.4
"""


def write(tmp_path, text: str, name: str = "flight.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- plain-Python reference: centripetal Catmull-Rom as a cubic Hermite segment ----------------------------


def hermite_reference(p0, p1, p2, p3, u):
    """The segment p1 -> p2 at fraction u, with the centripetal tangents written out (Hermite form).

    Coincident points (the duplicated end points) contribute no tangent term."""
    d01, d12, d23 = (math.dist(p0, p1) ** 0.5, math.dist(p1, p2) ** 0.5, math.dist(p2, p3) ** 0.5)

    def slope(a, b, length):
        return [0.0] * len(a) if length == 0 else [(y - x) / length for x, y in zip(a, b, strict=True)]

    def tangent(pa, pb, pc, da, db):
        first, whole, second = slope(pa, pb, da), slope(pa, pc, da + db), slope(pb, pc, db)
        return [d12 * (f - w + s) for f, w, s in zip(first, whole, second, strict=True)]

    m1, m2 = tangent(p0, p1, p2, d01, d12), tangent(p1, p2, p3, d12, d23)
    h00, h10 = 2 * u ** 3 - 3 * u ** 2 + 1, u ** 3 - 2 * u ** 2 + u
    h01, h11 = -2 * u ** 3 + 3 * u ** 2, u ** 3 - u ** 2
    return [h00 * a + h10 * b + h01 * c + h11 * d for a, b, c, d in zip(p1, m1, p2, m2, strict=True)]


# --- the documented behaviour of hand-written flights ------------------------------------------------------


def test_two_keyframes_ease_in_and_out_and_settings_hold(tmp_path):
    """Two keyframes: every camera field follows 3u^2 - 2u^3 between them; h switches at its keyframe."""
    flight, warnings = load_flight(write(tmp_path, TWO_KEYFRAMES))
    assert warnings == [] and flight.duration == 2.0
    assert camera(flight.at(0.0)) == (10.0, -0.5, -3.0, 0.0)
    for t in (0.25, 0.5, 1.0, 1.9):
        u = t / 2.0
        ease = 3 * u ** 2 - 2 * u ** 3
        settings = flight.at(t)
        assert settings.yrot == pytest.approx(10.0 + 90.0 * ease, abs=1e-9)
        assert settings.ztrans == pytest.approx(-3.0 + 1.0 * ease, abs=1e-9)
        assert settings.h == 0.7, "a setting holds until its keyframe"
    assert flight.at(2.0).h == 0.4 and camera(flight.at(2.0)) == (100.0, -0.5, -2.0, 0.0)
    assert flight.at(99.0) == flight.at(2.0), "held after the end"
    assert load_scene(tmp_path / "flight.toml")[0] == flight.scene == flight.at(0.0).replace(yrot=0.0)


def test_a_first_keyframe_after_time_0_starts_from_the_scenes_camera():
    flight = Flythrough(START, (Keyframe(1.0, {"yrot": 10.0}), Keyframe(3.0, {"yrot": 100.0})))
    assert flight.at(0.0).yrot == 0.0 and flight.at(1.0).yrot == 10.0
    padded = [[0.0], [0.0], [10.0], [100.0], [100.0]]
    for t in (0.5, 2.0):
        index = 0 if t < 1.0 else 1
        u = t if t < 1.0 else (t - 1.0) / 2.0
        assert flight.at(t).yrot == pytest.approx(hermite_reference(*padded[index:index + 4], u)[0], abs=1e-9)


def test_three_keyframes_follow_the_centripetal_hermite_reference():
    keys = [(0.0, {"ytrans": -0.5, "ztrans": -3.0}), (2.0, {"ytrans": -0.2, "ztrans": -1.0}),
            (3.0, {"ytrans": -0.6, "ztrans": -0.9})]
    flight = Flythrough(START, tuple(Keyframe(t, values) for t, values in keys))
    points = [[values["ytrans"], values["ztrans"]] for _, values in keys]
    padded = [points[0], *points, points[-1]]
    for t in (0.3, 1.0, 1.7, 2.2, 2.5, 2.95):
        index = 0 if t < 2.0 else 1
        u = (t - keys[index][0]) / (keys[index + 1][0] - keys[index][0])
        expected = hermite_reference(*padded[index:index + 4], u)
        settings = flight.at(t)
        assert [settings.ytrans, settings.ztrans] == pytest.approx(expected, abs=1e-9), t


def test_angles_unwrap_so_a_turn_continues_through_180():
    """A recorded yaw that wraps from 170 to -170 turns on through 180, not back through 0."""
    flight = Flythrough(START, (Keyframe(0.0, {"yrot": 170.0}), Keyframe(1.0, {"yrot": -170.0})))
    assert flight.at(0.5).yrot == pytest.approx(180.0, abs=1e-9)
    assert 170.0 < flight.at(0.25).yrot < 180.0
    assert flight.at(1.0).yrot == -170.0, "on a keyframe: the value as written"


def test_non_numeric_camera_fields_and_settings_switch_at_their_keyframe():
    flight = Flythrough(START, (Keyframe(0.0, {"mode": "lines"}), Keyframe(1.0, {"mode": "rendered", "tile": 2}),
                            Keyframe(2.0, {"yrot": 30.0})))
    assert (flight.at(0.999).mode, flight.at(0.999).tile) == ("lines", 1)
    assert (flight.at(1.0).mode, flight.at(1.0).tile) == ("rendered", 2)
    assert flight.at(1.5).mode == "rendered"


def test_pitch_never_leaves_its_range():
    flight = Flythrough(START, (Keyframe(0.0, {"pitch": 0.0}), Keyframe(1.0, {"pitch": 80.0}),
                            Keyframe(1.1, {"pitch": -80.0}), Keyframe(5.0, {"pitch": 80.0})))
    assert all(-80.0 <= flight.at(k / 100).pitch <= 80.0 for k in range(501))


def test_a_sunrise_through_north_comes_back_into_the_azimuths_range():
    """350 to 20 degrees turns through north: 5 degrees halfway (the unwrapped curve says 365)."""
    flight = Flythrough(START, (Keyframe(0.0, {"sun_azimuth": 350.0}), Keyframe(1.0, {"sun_azimuth": 20.0})))
    assert flight.at(0.5).sun_azimuth == pytest.approx(5.0, abs=1e-9)
    assert all(0.0 <= flight.at(k / 100).sun_azimuth <= 360.0 for k in range(101))


def test_overrides_fix_a_setting_for_the_whole_flight():
    flight = Flythrough(START, (Keyframe(1.0, {"tile": 2, "yrot": 5.0}), Keyframe(2.0, {"tile": 3})))
    fixed = flight.with_overrides({"tile": 4})
    assert all(fixed.at(t).tile == 4 for t in (0.0, 1.0, 2.0))
    assert fixed.duration == 2.0 and fixed.at(1.0).yrot == 5.0


# --- files -------------------------------------------------------------------------------------------------


def test_save_and_load_round_trip_and_scene_readers(tmp_path):
    flight = Flythrough(START.replace(water_level=0.1), (Keyframe(0.5, {"yrot": 3.25, "water_level": None}),
                                                      Keyframe(2.0 / 3.0, {"h": 0.5, "mode": "rendered"})))
    path = tmp_path / "round.toml"
    save_flight(flight, path)
    text = path.read_text()
    assert text.count("[[keyframe]]") == 2 and "water_level = false" in text
    loaded, warnings = load_flight(path)
    assert warnings == []
    assert loaded.scene == flight.scene and loaded.keyframes == flight.keyframes
    assert loaded.at(0.6).water_level is None
    assert load_scene(path) == (flight.scene, []), "--scene reads a flight file as its start scene"
    with pytest.raises(OutputError, match="already exists"):
        save_flight(flight, path)  # never over an existing file
    assert load_flight(path)[0].keyframes == flight.keyframes


def test_new_flight_paths_never_collide(tmp_path):
    taken = flythrough.new_flight_path(tmp_path / "flights")
    taken.write_text("")
    second = flythrough.new_flight_path(tmp_path / "flights")
    assert second != taken and second.name.startswith("flight-") and second.suffix == ".toml"


@pytest.mark.parametrize(("body", "fragments"), [
    ("[[keyframe]]\nyrot = 1\n", ("keyframe 1", "time")),
    ("[[keyframe]]\ntime = -1\n", ("keyframe 1", "time", "-1")),
    ("[[keyframe]]\ntime = nan\n", ("keyframe 1", "time", "nan")),
    ("[[keyframe]]\ntime = inf\n", ("keyframe 1", "time")),
    ("[[keyframe]]\ntime = true\n", ("keyframe 1", "time")),
    ("[[keyframe]]\ntime = '1'\n", ("keyframe 1", "time")),
    ("[[keyframe]]\ntime = 2\n[[keyframe]]\ntime = 1\n", ("keyframe 2", "time", "not after")),
    ("[[keyframe]]\ntime = 1\n[[keyframe]]\ntime = 1\n", ("keyframe 2", "time")),
    ("[[keyframe]]\ntime = 1\nyrot = 'left'\n", ("keyframe 1", "yrot")),
    ("[[keyframe]]\ntime = 1\npitch = 95\n", ("keyframe 1", "pitch", "95")),
    ("[[keyframe]]\ntime = 1\niterations = 30\n", ("keyframe 1", "iterations")),
    ("[[keyframe]]\ntime = 1\nmode = 'sideways'\n", ("keyframe 1", "mode")),
    ("[[keyframe]]\ntime = 1\ntile = 1.5\n", ("keyframe 1", "tile")),
    ("keyframe = 3\n", ("keyframe",)),
    ("keyframe = [1, 2]\n", ("keyframe",)),
    ("", ("no [[keyframe]]",)),
    ("[scene]\nh = 7\n[[keyframe]]\ntime = 1\n", ("h",)),
    ("[[keyframe]\ntime = 1\n", ("not valid TOML",)),
])
def test_bad_flight_files_name_the_file_and_key(tmp_path, body, fragments):
    path = write(tmp_path, "version = 1\n" + body)
    with pytest.raises(FlightError) as caught:
        load_flight(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message


def test_bad_keyframe_times_are_refused_by_the_flight_itself():
    for times, fragments in (((2.0, 1.0), ("keyframe 2", "not after", "2.0")), ((-1.0,), ("keyframe 1", "-1.0")),
                             ((math.inf,), ("keyframe 1", "inf")), ((True,), ("keyframe 1", "True"))):
        with pytest.raises(SettingsError) as caught:
            Flythrough(START, tuple(Keyframe(t, {}) for t in times))
        assert all(fragment in str(caught.value) for fragment in fragments), caught.value


def test_hostile_sizes_are_refused(tmp_path, monkeypatch):
    big = write(tmp_path, "version = 1\n" + "#" * flythrough.MAX_FLIGHT_BYTES, "big.toml")
    with pytest.raises(FlightError, match="larger than 4 MiB"):
        load_flight(big)
    # A long recording may be larger than a scene file may be.
    long = write(tmp_path, "#" * (2 * bounded_reader.MAX_TOML_BYTES) + "\nversion = 1\n[[keyframe]]\ntime = 1\n",
                 "long.toml")
    assert load_flight(long)[0].duration == 1.0
    many = write(tmp_path, "version = 1\n" + "".join(f"[[keyframe]]\ntime = {k}\n" for k in range(6)), "many.toml")
    monkeypatch.setattr(flythrough, "MAX_KEYFRAMES", 5)
    with pytest.raises(FlightError, match="6 keyframes; the most is 5"):
        load_flight(many)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(FlightError, match="not a flight file"):
        load_flight(binary)
    with pytest.raises(FlightError, match="no such flight file"):
        load_flight(tmp_path / "missing.toml")


def test_flights_pass_the_scene_files_boundary(tmp_path):
    """Folders, FIFOs (never waited on) and PNGs are refused as flights, in one line naming the file."""
    (tmp_path / "folder.toml").mkdir()
    os.mkfifo(tmp_path / "pipe.toml")
    (tmp_path / "shot.png").write_bytes(bounded_reader.PNG_SIGNATURE + b"\0\0\0\0IEND\xaeB`\x82")
    for name, fragment in (("folder.toml", "is a folder, not a flight file"), ("pipe.toml", "FIFO"),
                           ("shot.png", "not a flight file")):
        with pytest.raises(FlightError) as caught:
            load_flight(tmp_path / name)
        assert str(caught.value).startswith(str(tmp_path / name)) and fragment in str(caught.value)


def test_unknown_settings_are_warnings(tmp_path):
    flight, warnings = load_flight(write(tmp_path, "version = 1\n[[keyframe]]\ntime = 1\nwarp = 9\nh = 0.5\n"))
    assert flight.at(1.0).h == 0.5
    assert len(warnings) == 1 and "keyframe 1" in warnings[0] and "'warp'" in warnings[0]


def test_an_unknown_setting_is_one_warning_however_many_keyframes_name_it(tmp_path):
    body = "".join(f"[[keyframe]]\ntime = {k}\nwarp = {k}\n" for k in range(1, 5)) + "bend = 1\n"
    _, warnings = load_flight(write(tmp_path, "version = 1\n" + body))
    assert len(warnings) == 2, warnings
    warp, bend = warnings
    assert "keyframe 1" in warp and "'warp'" in warp and "3 more keyframes" in warp
    assert "keyframe 4" in bend and "'bend'" in bend and "more" not in bend


def test_a_seed_image_is_checked_once_however_many_keyframes_name_it(tmp_path, monkeypatch):
    """A recorded flight names the scene's image in every keyframe: it is opened once, when the scene is read."""
    (tmp_path / "seed.png").write_bytes((resources.assets_dir() / "sketch-island.png").read_bytes())
    body = "".join(f'[[keyframe]]\ntime = {k}\nseed_image = "{tmp_path / "seed.png"}"\n' for k in range(1, 5))
    path = write(tmp_path, f'version = 2\n[scene]\nseed_image = "{tmp_path / "seed.png"}"\n' + body)
    checked = []
    real = scene_file.file_problem
    monkeypatch.setattr(scene_file, "file_problem", lambda image: checked.append(image) or real(image))
    flight, _ = load_flight(path)
    assert flight.at(2.0).seed_image == str(tmp_path / "seed.png")
    assert len(checked) == 1, checked

# --- recording and replay ----------------------------------------------------------------------------------


def test_recorder_replays_every_sample_exactly():
    """Steps, holds, an H drag and a mode switch, sampled at an uneven frame rate."""
    recorder, settings, samples, time = Recorder(START), START, [], 0.0
    for frame in range(120):
        time += 1 / 60 if frame % 3 else 1 / 25
        if 10 <= frame < 30 or frame in (50, 51, 90):
            settings = settings.replace(yrot=settings.yrot + 3.0, ztrans=settings.ztrans + 0.01)
        if 60 <= frame < 70:
            settings = settings.replace(h=round(settings.h - 0.02, 6), pitch=settings.pitch + 1.5)
        if frame == 80:
            settings = settings.with_mode("rendered")
        recorder.feed(time, settings)
        samples.append((time, settings))
    flight = recorder.finish()
    assert flight.duration == time
    hs = {s.h for _, s in samples}
    assert len(hs) == 11 and sum(1 for k in flight.keyframes if "h" in k.values) == 10, "the drag is kept"
    for when, wanted in samples:
        replayed = flight.at(when)
        assert camera(replayed) == pytest.approx(camera(wanted), abs=1e-6), when
        assert replayed.replace(**dict(zip(CAMERA, camera(wanted), strict=True))) == wanted
    assert tomllib.loads(flight_text(flight))["keyframe"][-1]["time"] == time


def test_player_pauses_and_steps():
    flight = Flythrough(START, (Keyframe(0.0, {"yrot": 0.0}), Keyframe(2.0, {"yrot": 90.0})))
    player = Player(flight)
    assert player.advance(0.5).yrot == flight.at(0.5).yrot
    player.step(1)
    assert player.time == 0.5, "stepping only while paused"
    player.paused = True
    assert player.advance(1.0).yrot == flight.at(0.5).yrot
    player.step(1)
    player.step(1)
    player.step(-1)
    assert player.time == pytest.approx(0.5 + flythrough.STEP_SECONDS)
    player.paused = False
    player.advance(10.0)
    assert player.finished and player.time == 2.0


def test_bad_flight_for_the_viewer_is_one_line_exit_2(tmp_path, call_main, usage_error):
    bad = write(tmp_path, "version = 1\n[[keyframe]]\ntime = -2\n")
    status, _, err = call_main("--flight", str(bad))
    usage_error(status, err, "keyframe 1", "time")
    status, _, err = call_main("--flight", str(tmp_path / "none.toml"))
    usage_error(status, err, "no such flight file")


def test_a_replay_pauses_at_its_end_and_space_plays_it_again():
    from terrainview.window.flythrough_controls import FlythroughControls, ReplayKey

    messages: list[str] = []
    controls = FlythroughControls(messages.append)
    flight = Flythrough(START, (Keyframe(0.0, {"yrot": 0.0}), Keyframe(0.5, {"yrot": 30.0})))
    assert controls.play(flight).yrot == 0.0
    assert controls.advance(START, 0.25).yrot == flight.at(0.25).yrot
    assert controls.advance(START, 1.0).yrot == 30.0
    assert controls.player.paused and messages[-1].startswith("Replay finished")
    controls.key(ReplayKey.BACK)
    assert controls.advance(START, 1.0).yrot == flight.at(0.5 - flythrough.STEP_SECONDS).yrot
    controls.key(ReplayKey.FORWARD)
    controls.key(ReplayKey.PAUSE)
    assert controls.player.time == 0.0 and not controls.player.paused
    assert controls.escape() and controls.player is None and messages[-1] == "Replay stopped"


# --- the window's video export: a child process with progress, cancelled by Escape ---------------------------


@pytest.mark.gl
def test_window_export_runs_aside_reports_progress_and_cancels_cleanly(tmp_path, monkeypatch):
    from terrainview.window.flythrough_controls import FlythroughControls

    monkeypatch.chdir(tmp_path)
    short, long = tmp_path / "flights" / "short.toml", tmp_path / "flights" / "long.toml"
    short.parent.mkdir()
    save_flight(Flythrough(START, (Keyframe(0.0, {"yrot": 0.0}), Keyframe(0.2, {"yrot": 6.0}))), short)
    save_flight(Flythrough(START, (Keyframe(0.0, {"yrot": 0.0}), Keyframe(600.0, {"yrot": 90.0}))), long)
    messages: list[str] = []
    controls = FlythroughControls(messages.append)

    controls.start_export(long, (65, 37))  # the window's size, made even for H.264
    wait_for(lambda: controls.export.done >= 2, 120, "two frames exported", interval=0.05)
    assert controls.export.total == 18001 and 0.0 < controls.export.progress < 1.0
    assert controls.escape(), "Escape cancels the export"
    wait_for(lambda: controls.advance(START, 0.0) is not None and controls.export is None, 120,
             "the export to end", interval=0.05)
    assert messages[-1] == "Cancelled videos/long.mp4"
    assert list((tmp_path / "videos").iterdir()) == [], "no partial file"

    controls.start_export(short, (64, 36))
    wait_for(lambda: controls.advance(START, 0.0) is not None and controls.export is None, 120,
             "the export to end", interval=0.05)
    assert messages[-1] == "Exported videos/short.mp4"
    assert load_flight(tmp_path / "videos" / "short.mp4")[0].keyframes == load_flight(short)[0].keyframes
    assert not controls.escape(), "nothing left to cancel"


def test_window_export_refuses_a_flight_too_long_or_unreadable_at_once(tmp_path, monkeypatch):
    from terrainview.output import video_encoding
    from terrainview.window.flythrough_controls import FlythroughControls

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(video_encoding, "MAX_FRAMES", 50)
    long, broken = tmp_path / "long.toml", tmp_path / "broken.toml"
    save_flight(Flythrough(START, (Keyframe(0.0, {"yrot": 0.0}), Keyframe(2.0, {"yrot": 6.0}))), long)  # 61 frames
    broken.write_text("[scene\n")
    messages: list[str] = []
    controls = FlythroughControls(messages.append)
    for path, fragment in ((long, "make about 61 frames; the most is 50"), (broken, "broken.toml")):
        controls.start_export(path, (64, 36))
        assert controls.export is None and messages[-1].startswith("Video not exported: ")
        assert fragment in messages[-1]
    assert not (tmp_path / "videos").exists() or list((tmp_path / "videos").iterdir()) == []


def test_a_full_recorder_still_has_room_to_finish_a_valid_flight(monkeypatch):
    monkeypatch.setattr(flythrough, "MAX_KEYFRAMES", 8)
    recorder, settings, step = Recorder(START), START, 0
    while not recorder.full:  # a turn every third sample from the first: each later one adds a hold and a move
        step += 1
        if step % 3 == 1:
            settings = settings.replace(yrot=settings.yrot + 3.0)
        recorder.feed(step / 10, settings)
    flight = recorder.finish()  # the closing keyframe fits too
    assert 6 <= len(flight.keyframes) <= 8
