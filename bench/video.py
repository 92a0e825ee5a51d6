"""Video export figures: frames per second of ``terrainview video`` at 1280x720 and 1920x1080, supersampled 1x
and 2x, rendered mode, iterations 10, tile 3; and each stage alone (drawing, read-back, filtering + H.264
encoding), to show the overlapped export is never slower than their sum."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from terrainview.output.video_encoding import Mp4Sink, VideoPlan, export
from terrainview.render.offscreen import create_headless_context, line_scale_for
from terrainview.render.renderer import Frame, Renderer
from terrainview.scene.flythrough import Flythrough, Keyframe
from terrainview.scene.settings import SceneSettings

CASES = (((1280, 720), 1), ((1920, 1080), 1), ((1280, 720), 2), ((1920, 1080), 2))
FPS = 30
EXPORT_SECONDS = 6.0  # about how long each case's export runs: 4 to 40 frames, by the stages' speed
STAGE_FRAMES = 4  # after one warm-up frame
# Other processes share the two cores and slow llvmpipe down at random, so every figure is the least time
# seen: the one closest to what the work itself costs, for the export and its stages alike.


def _flight(frames: int) -> Flythrough:
    scene = SceneSettings(mode="rendered", iterations=10, tile=3)
    end = Keyframe((frames - 1) / FPS, {"yrot": 0.2 * frames, "ztrans": -3.0 + 0.01 * frames})
    return Flythrough(scene, (end,) if frames == 1 else (Keyframe(0.0, {"yrot": 0.0, "ztrans": -3.0}), end))


def _stages(flight: Flythrough, size: tuple[int, int], supersample: int, folder: Path) -> tuple:
    """Seconds per frame of drawing (GPU finished), read-back, and filtering + encoding, each on its own."""
    # A context of its own: export() makes its own current, and draws into a context not current do nothing.
    ctx = create_headless_context()
    renderer = Renderer(ctx)
    full = (size[0] * supersample, size[1] * supersample)
    framebuffer = ctx.simple_framebuffer(full)
    frame = Frame(full, line_scale=line_scale_for(size[1]) * supersample)
    draws, reads, images = [], [], []
    for k in range(STAGE_FRAMES + 1):
        settings = flight.at(k / FPS)
        renderer.update(settings)
        started = time.perf_counter()
        renderer.draw(settings, framebuffer, frame)
        ctx.finish()
        drawn = time.perf_counter()
        pixels = np.frombuffer(framebuffer.read(components=3), np.uint8).reshape(full[1], full[0], 3)[::-1]
        read_done = time.perf_counter()
        if k:  # the first frame warms up shader variants and caches
            draws.append(drawn - started)
            reads.append(read_done - drawn)
        images.append(np.ascontiguousarray(pixels))
    sink = Mp4Sink(folder / "stages.mp4", size, FPS, flight)
    encodes = []
    for k, pixels in enumerate(images):
        started = time.perf_counter()
        if supersample > 1:
            pixels = np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.LANCZOS))
        sink.write(k, k / FPS, flight.scene, pixels)
        encodes.append(time.perf_counter() - started)
    started = time.perf_counter()
    sink.close()  # the encoder's look-ahead frames: spread over the frames encoded
    flush = (time.perf_counter() - started) / len(images)
    framebuffer.release()
    renderer.release()
    ctx.release()
    return min(draws), min(reads), min(encodes[1:]) + flush


def _export_fps(size: tuple[int, int], supersample: int, frames: int, folder: Path) -> float:
    """Frames per second of the export: a ``frames``-frame export less a one-frame export (context, terrain
    generation, the encoder's start), each the least of two runs."""
    seconds = []
    for count in (1, frames):
        runs = []
        for _ in range(2):
            started = time.perf_counter()
            export(VideoPlan(_flight(count), size, FPS, supersample), folder / "export.mp4", force=True)
            runs.append(time.perf_counter() - started)
        seconds.append(min(runs))
    return (frames - 1) / (seconds[1] - seconds[0])


def run() -> None:
    flight = _flight(STAGE_FRAMES + 1)
    print("H.264 export, rendered mode, iterations 10, tile 3; each stage alone in ms per frame "
          "(encode: Lanczos filtering when supersampled, then H.264); least times seen")
    print(f"  {'size':>9s} {'ss':>3s} {'frames':>6s} {'export fps':>10s} {'draw':>7s} {'read':>7s} {'encode':>7s} "
          f"{'sum fps':>8s}")
    with tempfile.TemporaryDirectory() as folder:
        for size, supersample in CASES:
            draw, read, encode = _stages(flight, size, supersample, Path(folder))
            total = draw + read + encode
            frames = max(4, min(40, round(EXPORT_SECONDS / total)))
            fps = _export_fps(size, supersample, frames, Path(folder))
            print(f"  {size[0]:>4d}x{size[1]:<4d} {supersample:>3d} {frames:>6d} {fps:>10.2f} {draw * 1000:>7.0f} "
                  f"{read * 1000:>7.0f} {encode * 1000:>7.0f} {1 / total:>8.2f}"
                  f"{'' if fps >= 1 / total else '  SLOWER than the stages in sequence'}", flush=True)
    # Other processes on the same cores slow llvmpipe down at random: say how busy the machine was.
    print(f"  load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
