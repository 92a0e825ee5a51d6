"""``terrainview video`` (issue 11): frames equal ``render``, MP4 and GIF decode, metadata, cancel, refusals."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import av
import numpy as np
import pytest
from helpers import names
from PIL import Image

from terrainview.base.atomic_files import OutputError
from terrainview.output import video_encoding
from terrainview.render import offscreen
from terrainview.scene.flythrough import Flythrough, Keyframe, load_flight, save_flight
from terrainview.scene.scene_file import load_scene
from terrainview.scene.settings import SceneSettings

pytestmark = pytest.mark.gl

SIZE = (64, 36)
FPS = 4
SCENE = SceneSettings(mode="rendered", iterations=4, seed=9, teximage_iterations=6, cloud_iterations=4)
FLIGHT = Flythrough(SCENE, (Keyframe(0.0, {"yrot": 0.0, "ztrans": -3.0}),
                        Keyframe(0.75, {"yrot": 40.0, "ztrans": -2.2, "h": 0.5}),
                        Keyframe(1.5, {"yrot": 70.0, "pitch": 10.0})))
FRAMES = 7  # 0, 0.25, ... 1.5 s at 4 fps


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The flight written once as PNG frames and once as MP4 (in-process, as the command runs)."""
    from terrainview.cli import main

    folder = tmp_path_factory.mktemp("exported")
    flight_path = folder / "flight.toml"
    save_flight(FLIGHT, flight_path)
    common = ["--flight", str(flight_path), "--size", f"{SIZE[0]}x{SIZE[1]}", "--fps", str(FPS), "--progress", "none"]
    assert main(["video", "--frames", str(folder / "frames"), *common]) == 0
    assert main(["video", "-o", str(folder / "clip.mp4"), *common]) == 0
    return folder


def decode(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def png(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def test_frame_count_and_times():
    assert video_encoding.VideoPlan(FLIGHT, SIZE, FPS, speed=1.0).frame_count == FRAMES
    assert video_encoding.VideoPlan(FLIGHT, SIZE, FPS, speed=2.0).frame_count == 4  # 0, 0.5, 1.0, 1.5
    assert video_encoding.VideoPlan(FLIGHT, SIZE, 30).frame_count == 46
    assert video_encoding.VideoPlan(FLIGHT, SIZE, FPS, speed=2.0).frame_time(3) == 1.5


def test_frames_equal_render_of_the_flights_scene_pixel_for_pixel(exported, call_main, tmp_path):
    frames = sorted((exported / "frames").iterdir())
    assert [path.name for path in frames] == [video_encoding.frame_name(k) for k in range(FRAMES)]
    for k in (0, 2, 3, 6):
        settings, warnings = load_scene(frames[k])
        assert warnings == [] and settings == FLIGHT.at(k / FPS), "each PNG carries the flight's scene at k/fps"
        with Image.open(frames[k]) as image:
            assert image.text["terrainview.frame"] == str(k)
            assert float(image.text["terrainview.flight-time"]) == k / FPS
        scene = tmp_path / f"scene{k}.toml"
        from terrainview.scene.scene_file import save_scene_toml

        save_scene_toml(FLIGHT.at(k / FPS), scene)
        status, _, err = call_main("render", "-o", tmp_path / f"render{k}.png", "--size", "64x36", "--scene", scene)
        assert status == 0, err
        assert np.array_equal(png(tmp_path / f"render{k}.png"), png(frames[k])), k
    assert not np.array_equal(png(frames[0]), png(frames[3])), "the camera moves"


def test_mp4_decodes_to_the_frames_within_codec_tolerance(exported):
    decoded = decode(exported / "clip.mp4")
    assert len(decoded) == FRAMES
    for k, frame in enumerate(decoded):
        assert frame.shape == (SIZE[1], SIZE[0], 3)
        reference = png(exported / "frames" / video_encoding.frame_name(k)).astype(float)
        error = np.abs(frame.astype(float) - reference)
        psnr = 10 * np.log10(255.0 ** 2 / np.mean(error ** 2))
        assert error.mean() < 4.0 and psnr > 28.0, (k, error.mean(), psnr)
    with av.open(str(exported / "clip.mp4")) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and stream.average_rate == FPS


def test_the_mp4_is_tagged_bt709_in_limited_range(exported):
    """Primaries, transfer and matrix BT.709, range limited ("tv"), in the container and in the H.264 stream."""
    bt709, limited = 1, 1  # the value of each of FFmpeg's BT.709 enums, and of AVCOL_RANGE_MPEG
    with av.open(str(exported / "clip.mp4")) as container:
        stream = container.streams.video[0]
        first = next(container.decode(video=0))
    for tagged in (stream.codec_context, first):
        assert (tagged.color_primaries, tagged.color_trc, tagged.colorspace) == (bt709, bt709, bt709), tagged
        assert tagged.color_range == limited, tagged


# Saturated colours, one per 16 x 16 macroblock, so chroma subsampling and blocks never mix two of them.
COLOURS = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0],
                    [0, 255, 255], [255, 0, 255], [255, 255, 255], [0, 0, 0]], np.uint8)


def bt709_limited(rgb: np.ndarray) -> np.ndarray:
    """Y'CbCr of 8-bit RGB by BT.709's matrix in limited range (Y' 16-235, Cb and Cr 16-240)."""
    r, g, b = (rgb.astype(float) / 255.0).T
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return np.stack([16 + 219 * y, 128 + 224 * (b - y) / 1.8556, 128 + 224 * (r - y) / 1.5748], axis=-1)


def test_saturated_colours_round_trip_through_bt709(tmp_path):
    """The encoded Y'CbCr is BT.709's (BT.601's red would be Y' 81, not 63), and decodes back to the colours."""
    pixels = np.repeat(np.repeat(COLOURS[np.newaxis], 16, axis=0), 16, axis=1)  # 16 x 128, blocks side by side
    sink = video_encoding.Mp4Sink(tmp_path / "colours.mp4", (pixels.shape[1], pixels.shape[0]), FPS, FLIGHT)
    for index in range(3):
        sink.write(index, index / FPS, SCENE, pixels)
    sink.close()
    with av.open(str(tmp_path / "colours.mp4")) as container:
        frame = next(container.decode(video=0))
        yuv, rgb = frame.to_ndarray(format="yuv420p"), frame.to_ndarray(format="rgb24")
    luma, chroma = yuv[:16], yuv[16:].reshape(2, 8, 64)  # Cb then Cr, each 64 x 8 for the 128 x 16 frame
    encoded = np.stack([luma[8, 8::16], chroma[0, 4, 4::8], chroma[1, 4, 4::8]], axis=-1).astype(float)
    assert np.abs(encoded - bt709_limited(COLOURS)).max() < 3.0, encoded.round()
    assert np.abs(rgb[8, 8::16].astype(float) - COLOURS).max() < 6.0, rgb[8, 8::16]


def test_two_exports_decode_to_identical_frames(exported, call_main, tmp_path):
    status, _, err = call_main("video", "-o", tmp_path / "again.mp4", "--flight", exported / "clip.mp4",
                               "--size", "64x36", "--fps", FPS, "--progress", "none")
    assert status == 0, err
    first, second = decode(exported / "clip.mp4"), decode(tmp_path / "again.mp4")
    assert len(first) == len(second) == FRAMES
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))


def test_the_mp4_carries_the_flight(exported):
    flight, warnings = load_flight(exported / "clip.mp4")
    assert warnings == []
    assert flight.scene == FLIGHT.scene and flight.keyframes == FLIGHT.keyframes
    with av.open(str(exported / "clip.mp4")) as container:
        assert "terrainview flight" in container.metadata["comment"]


def test_gif_loops_with_its_flight(tmp_path, call_main):
    flight_path = tmp_path / "flight.toml"
    save_flight(FLIGHT, flight_path)
    status, out, err = call_main("video", "-o", tmp_path / "loop.gif", "--flight", flight_path, "--size", "33x21",
                                 "--fps", "2", "--progress", "none")
    assert status == 0, err
    with Image.open(tmp_path / "loop.gif") as image:
        assert image.size == (33, 21) and image.n_frames == 4 and image.info["loop"] == 0
        durations = []
        for k in range(image.n_frames):
            image.seek(k)
            durations.append(image.info["duration"])
        assert durations == [500] * 4, "2 fps: half a second a frame"
    assert load_flight(tmp_path / "loop.gif")[0].keyframes == FLIGHT.keyframes


def test_options_override_the_flight_for_its_whole_length(tmp_path, call_main):
    flight_path = tmp_path / "flight.toml"
    save_flight(FLIGHT, flight_path)
    status, _, err = call_main("video", "--frames", tmp_path / "frames", "--flight", flight_path, "--size", "32x18",
                               "--fps", "2", "--mode", "lines", "--h", "0.9", "--progress", "none")
    assert status == 0, err
    scenes = [load_scene(path)[0] for path in sorted((tmp_path / "frames").iterdir())]
    assert len(scenes) == 4 and all(s.mode == "lines" and s.h == 0.9 for s in scenes)
    assert scenes[-1].yrot == 70.0


def test_progress_bar_and_lines(tmp_path, run_cli):
    flight_path = tmp_path / "flight.toml"
    save_flight(FLIGHT, flight_path)
    result = run_cli("video", "-o", tmp_path / "a.mp4", "--flight", flight_path, "--size", "32x18", "--fps", "2")
    assert result.returncode == 0, result.stderr
    assert "4/4" in result.stderr and "frame/s" in result.stderr, "tqdm's bar: frames, rate"
    result = run_cli("video", "-o", tmp_path / "b.mp4", "--flight", flight_path, "--size", "32x18", "--fps", "2",
                     "--progress", "lines")
    assert result.stdout.splitlines()[:4] == [f"frame {k}/4" for k in range(1, 5)]


# --- nothing left behind -----------------------------------------------------------------------------------


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_cancel_and_leave_nothing(tmp_path, signal_number):
    """The window cancels with SIGTERM, a closed terminal sends SIGHUP: no video, no part file or part folder."""
    flight_path = tmp_path / "flight.toml"
    save_flight(Flythrough(SCENE, (Keyframe(0.0, {"yrot": 0.0}), Keyframe(60.0, {"yrot": 360.0}))), flight_path)
    for target, part in ((["-o", "long.mp4"], r"\.long\.mp4"), (["--frames", "long"], r"\.long")):
        process = subprocess.Popen([sys.executable, "-m", "terrainview.cli", "video", *target, "--flight",
                                    "flight.toml", "--size", "64x36", "--fps", "30", "--progress", "lines"],
                                   cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for line in process.stdout:
                if line.startswith("frame 3/"):
                    break
            hidden = [name for name in names(tmp_path) if name != "flight.toml"]
            pattern = rf"{part}\.terrainview-{process.pid}\.\w+\.part"
            assert len(hidden) == 1 and re.fullmatch(pattern, hidden[0]), hidden
            process.send_signal(signal_number)
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, err
        assert err.strip().splitlines()[-1] == "terrainview: interrupted" and "Traceback" not in err
        assert names(tmp_path) == ["flight.toml"]


@pytest.mark.parametrize(("target", "sink"), [("clip.mp4", "Mp4Sink"), ("loop.gif", "GifSink"),
                                            ("frames", "FramesSink")])
def test_a_failing_export_leaves_nothing(tmp_path, monkeypatch, target, sink):
    """A full disk on the second frame, in the encoder process (which inherits the patched sink)."""
    original = getattr(video_encoding, sink).write
    calls = []

    def failing_write(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        original(self, *args)

    monkeypatch.setattr(getattr(video_encoding, sink), "write", failing_write)
    with pytest.raises((OSError, OutputError), match="No space left"):  # OutputError names the file
        video_encoding.export(video_encoding.VideoPlan(FLIGHT, SIZE, FPS), tmp_path / target, force=False,
                     frames=target == "frames")
    assert list(tmp_path.iterdir()) == []


def test_a_crashing_encoder_is_one_error_and_leaves_nothing(tmp_path, monkeypatch):
    def crash(self, *args):
        os._exit(3)

    monkeypatch.setattr(video_encoding.Mp4Sink, "write", crash)
    with pytest.raises(OutputError, match="encoder stopped unexpectedly"):
        video_encoding.export(video_encoding.VideoPlan(FLIGHT, SIZE, FPS), tmp_path / "clip.mp4", force=False)
    assert list(tmp_path.iterdir()) == []


def test_a_stuck_job_queue_holds_neither_the_encoders_stop_nor_the_exit(tmp_path):
    """A KeyboardInterrupt (Ctrl+C; SIGTERM or SIGHUP in the command) inside the job queue's put can leave the
    queue's feeder thread asleep, jobs unsent (CPython's Condition.notify is not safe against it): stopping the
    encoder must not wait for a job, nor the process's exit for that thread. Here every wake-up is lost."""
    script = ("import time; from functools import partial; from pathlib import Path; import numpy as np\n"
              "from terrainview.output import video_encoding\n"
              "from terrainview.scene.settings import SceneSettings\n"
              "sink = partial(video_encoding.FramesSink, Path('.'), (8, 8), 4, 2, 1)\n"
              "encoder = video_encoding._Encoder(sink, (8, 8), (8, 8))\n"
              "frame = np.zeros((8, 8, 3), np.uint8)\n"
              "encoder.submit(0, 0.0, SceneSettings(), frame, print)\n"
              "encoder._answer(print)  # the feeder has sent frame 0 and sleeps\n"
              "encoder.jobs._notempty.notify = lambda n=1: None\n"
              "encoder.submit(1, 0.25, SceneSettings(), frame, print)\n"
              "start = time.monotonic()\n"
              "encoder.stop()\n"
              "print(f'stopped in {time.monotonic() - start:.1f} s')\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.split()[-2]) < 5, result.stdout
    assert names(tmp_path) == [video_encoding.frame_name(0, 5)], "frame 1 never reached the encoder"


def test_an_interrupted_export_leaves_nothing(tmp_path, monkeypatch):
    original = offscreen.TiledRender.step

    def interrupted(self):
        if self.settings.yrot > 20.0:
            raise KeyboardInterrupt
        original(self)

    monkeypatch.setattr(offscreen.TiledRender, "step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        video_encoding.export(video_encoding.VideoPlan(FLIGHT, SIZE, FPS), tmp_path / "clip.mp4", force=False)
    assert list(tmp_path.iterdir()) == []


def test_never_overwrites_without_force(tmp_path, call_main, usage_error):
    flight_path = tmp_path / "flight.toml"
    save_flight(FLIGHT, flight_path)
    (tmp_path / "clip.mp4").write_bytes(b"precious")
    args = ["--flight", flight_path, "--size", "32x18", "--fps", "2", "--progress", "none"]
    status, _, err = call_main("video", "-o", tmp_path / "clip.mp4", *args)
    usage_error(status, err, "already exists", "--force")
    assert (tmp_path / "clip.mp4").read_bytes() == b"precious"
    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "mine.txt").write_text("keep")
    status, _, err = call_main("video", "--frames", tmp_path / "frames", *args)
    usage_error(status, err, "not empty", "--force")
    assert [path.name for path in (tmp_path / "frames").iterdir()] == ["mine.txt"]
    assert call_main("video", "-o", tmp_path / "clip.mp4", *args, "--force")[0] == 0
    assert len(decode(tmp_path / "clip.mp4")) == 4
    assert call_main("video", "--frames", tmp_path / "frames", *args, "--force")[0] == 0
    assert len(list((tmp_path / "frames").iterdir())) == 5
    assert names(tmp_path) == ["clip.mp4", "flight.toml", "frames"]


@pytest.mark.parametrize(("args", "fragments"), [
    (["--size", "65x36"], ("size", "even", "66x36")),
    (["--size", "64x"], ("size",)),
    (["--size", "0x36"], ("size", "width")),
    (["--fps", "0"], ("fps",)),
    (["--fps", "500"], ("fps",)),
    (["--fps", "2.5"], ("fps", "integer")),
    (["--speed", "0"], ("speed",)),
    (["--speed", "nan"], ("speed",)),
    (["--speed", "fast"], ("speed",)),
    (["--fps", "30", "--speed", "0.5"], ("speed", "91 frames", "the most is 50")),
    (["--supersample", "3"], ("supersample",)),
    (["--iterations", "40"], ("iterations",)),
    (["--iterations", "14"], ("iterations", "rendered mode takes 1 to 12")),  # checked against the flight's scene
    (["--h", "2"], ("h", "0 to 1")),
    (["--scene", "flight.toml"], ("scene",)),
    (["--progress", "loud"], ("progress",)),
    (["--frames", "frames"], ("--frames", "not allowed")),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, call_main, usage_error, args, fragments):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(video_encoding, "MAX_FRAMES", 50)
    save_flight(FLIGHT, tmp_path / "flight.toml")
    status, _, err = call_main("video", "-o", "clip.mp4", "--flight", "flight.toml", "--progress", "none",
                               "--size", "32x18", *args)
    usage_error(status, err, *fragments)
    assert names(tmp_path) == ["flight.toml"]


@pytest.mark.parametrize(("args", "fragments"), [
    (["-o", "clip.avi", "--flight", "flight.toml"], (".avi",)),
    (["-o", "missing/clip.mp4", "--flight", "flight.toml"], ("does not exist",)),
    (["--frames", "missing/frames", "--flight", "flight.toml"], ("missing/frames: folder missing does not exist",)),
    (["--frames", "flight.toml", "--flight", "flight.toml"], ("flight.toml is a file, not a folder",)),
    (["-o", "clip.mp4"], ("--flight",)),
    (["--flight", "flight.toml"], ("-o", "--frames")),
    (["-o", "clip.mp4", "--flight", "none.toml"], ("none.toml", "no such flight file")),
    (["-o", "clip.mp4", "--flight", "bad.toml"], ("bad.toml", "keyframe 1", "time")),
    (["-o", "clip.mp4", "--flight", "junk.mp4"], ("junk.mp4",)),
    (["-o", "clip.mp4", "--flight", "plain.mp4"], ("plain.mp4", "no terrainview flight")),
])
def test_bad_targets_and_flights(tmp_path, monkeypatch, call_main, usage_error, args, fragments):
    monkeypatch.chdir(tmp_path)
    save_flight(FLIGHT, tmp_path / "flight.toml")
    (tmp_path / "bad.toml").write_text("version = 1\n[[keyframe]]\ntime = -1\n")
    (tmp_path / "junk.mp4").write_bytes(b"\x00\x00\x00\x18ftypisom" + b"\x00" * 64)
    with av.open(str(tmp_path / "plain.mp4"), "w") as container:  # an MP4 from elsewhere: no flight inside
        stream = container.add_stream("libx264", rate=1)
        stream.width, stream.height, stream.pix_fmt = 32, 18, "yuv420p"
        container.mux(stream.encode(av.VideoFrame.from_ndarray(np.zeros((18, 32, 3), np.uint8), format="rgb24")))
        container.mux(stream.encode(None))
    before = names(tmp_path)
    status, _, err = call_main("video", "--progress", "none", *args)
    usage_error(status, err, *fragments)
    assert names(tmp_path) == before


def test_a_flight_under_the_ground_is_drawn_as_render_draws_its_frames(tmp_path, call_main):
    """A flight written by hand that takes the orbit camera, looking up, under the land: each frame keeps the
    camera above the ground as render keeps a scene's (the underside never shows), carries where it was drawn
    from, and equals render of that scene; video says in how many frames it moved the camera."""
    flight = Flythrough(SceneSettings(mode="rendered", iterations=5, tile=3, seed=4),
                        (Keyframe(0.0, {"ytrans": 0.3, "pitch": -20.0}),
                         Keyframe(0.5, {"ytrans": 0.35, "pitch": -25.0})))
    flight_path = tmp_path / "under.toml"
    save_flight(flight, flight_path)
    status, _, err = call_main("video", "--frames", tmp_path / "frames", "--flight", flight_path, "--size", "64x36",
                               "--fps", "4", "--progress", "none")
    assert status == 0 and "warning: in 3 of 3 frames the camera, looking up, was raised" in err, err
    for frame in sorted((tmp_path / "frames").iterdir()):
        settings, _ = load_scene(frame)
        assert settings.ytrans < 0.3, "the scene the frame was drawn from, the camera raised"
        status, _, err = call_main("render", "-o", tmp_path / f"again-{frame.name}", "--size", "64x36", "--scene",
                                   frame)
        assert status == 0 and "warning" not in err, err
        assert np.array_equal(png(frame), png(tmp_path / f"again-{frame.name}"))


def test_supersampled_frames_equal_supersampled_render(tmp_path, call_main):
    """Filtering happens in the encoder process: still the render command's picture, pixel for pixel."""
    flight_path = tmp_path / "flight.toml"
    save_flight(FLIGHT, flight_path)
    status, _, err = call_main("video", "--frames", tmp_path / "frames", "--flight", flight_path, "--size", "40x24",
                               "--fps", "2", "--supersample", "2", "--progress", "none")
    assert status == 0, err
    frame = tmp_path / "frames" / video_encoding.frame_name(1)
    status, _, err = call_main("render", "-o", tmp_path / "render.png", "--size", "40x24", "--supersample", "2",
                               "--scene", frame)
    assert status == 0, err
    assert load_scene(frame)[0] == FLIGHT.at(0.5)
    assert np.array_equal(png(frame), png(tmp_path / "render.png"))


def test_frames_are_named_as_the_part_folder_cleanup_knows_them():
    from terrainview.base.atomic_files import PART_FOLDER_ENTRY

    assert all(PART_FOLDER_ENTRY.fullmatch(video_encoding.frame_name(k, digits)) for k in (0, 7, 99999)
               for digits in (5, 6))


@pytest.mark.parametrize("last_time, fragment", [(1e307, "uncountably many frames"), (1e6, "about 3e+07 frames")])
def test_a_flight_too_long_for_a_video_is_one_short_line(tmp_path, call_main, usage_error, last_time, fragment):
    flight = tmp_path / "long.toml"
    flight.write_text(f"version = 1\n[scene]\nmode = 'lines'\n[[keyframe]]\ntime = {last_time!r}\n")
    status, _, err = call_main("video", "-o", tmp_path / "long.mp4", "--flight", flight, "--size", "16x16")
    usage_error(status, err, "speed", fragment, "the most is 100,000")
    assert len(err) < 200 and "Overflow" not in err


def test_frames_into_a_link_are_refused_before_any_work(tmp_path, call_main, usage_error):
    flight = tmp_path / "flight.toml"
    save_flight(FLIGHT, flight)
    (tmp_path / "real").mkdir()
    (tmp_path / "to-folder").symlink_to(tmp_path / "real")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for link in ("to-folder", "dangling"):
        status, _, err = call_main("video", "--frames", tmp_path / link, "--flight", flight, "--size", "16x16")
        usage_error(status, err, link, "symbolic link")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dangling", "flight.toml", "real", "to-folder"]
    assert not any((tmp_path / "real").iterdir())


def test_a_full_disk_names_the_frames_folder_not_its_part(tmp_path, monkeypatch):
    def full(self, *args):
        raise OSError(28, "No space left on device", str(self.folder / "frame-00000.png"))

    monkeypatch.setattr(video_encoding.FramesSink, "write", full)
    with pytest.raises(OutputError) as refusal:
        video_encoding.export(video_encoding.VideoPlan(FLIGHT, SIZE, FPS), tmp_path / "frames", force=False,
                              frames=True)
    message = str(refusal.value)
    assert message.startswith(f"{tmp_path / 'frames'}: not written: No space") and ".part" not in message
    assert list(tmp_path.iterdir()) == []


def test_frames_into_a_mount_point_are_refused_before_any_work(tmp_path, call_main, usage_error):
    flight = tmp_path / "flight.toml"
    save_flight(FLIGHT, flight)
    mount = next((path for path in ("/proc", "/sys", "/dev") if os.path.ismount(path)), None)
    if mount is None:
        pytest.skip("no mount point to name")
    status, _, err = call_main("video", "--frames", mount, "--flight", flight, "--size", "16x16", "--force")
    usage_error(status, err, mount, "mount point")
