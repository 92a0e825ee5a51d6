"""Viewer figures on this machine's GL (llvmpipe when there is no GPU): frames per second at 1280x720 for
each render type, and the latency from an option change to the new frame."""

from __future__ import annotations

import statistics
import time

from terrainview.render.offscreen import create_headless_context
from terrainview.render.renderer import Frame, Renderer
from terrainview.scene.settings import MODES, SceneSettings

SIZE = (1280, 720)
CASES = ((8, 1), (10, 3))


def _frame_seconds(ctx, renderer, settings, framebuffer, repeats: int) -> float:
    frame = Frame(SIZE)
    renderer.draw(settings, framebuffer, frame)  # warm-up: shader variants, texture residency
    ctx.finish()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        renderer.draw(settings, framebuffer, frame)
        ctx.finish()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run() -> None:
    ctx = create_headless_context()
    print(f"renderer: {ctx.info['GL_RENDERER']}")
    framebuffer = ctx.simple_framebuffer(SIZE)
    renderer = Renderer(ctx)
    print(f"frames per second at {SIZE[0]}x{SIZE[1]} (median of timed frames, GPU finished each frame)")
    print(f"  {'mode':10s}" + "".join(f"  iter {n:2d} tile {t}" for n, t in CASES))
    for mode in MODES:
        row = f"  {mode:10s}"
        for iterations, tile in CASES:
            settings = SceneSettings(mode=mode, iterations=iterations, tile=tile)
            renderer.update(settings)
            seconds = _frame_seconds(ctx, renderer, settings, framebuffer, repeats=5 if iterations < 10 else 2)
            row += f"  {1.0 / seconds:14.1f}"
        print(row, flush=True)

    # Latency: a panel change (surface H) at iterations 10 until the new frame is finished.
    settings = SceneSettings(mode="rendered", iterations=10)
    renderer.update(settings)
    latencies = []
    for step in range(5):
        settings = settings.replace(h=0.5 + 0.05 * step)
        started = time.perf_counter()
        renderer.update(settings)
        renderer.draw(settings, framebuffer, Frame(SIZE))
        ctx.finish()
        latencies.append(time.perf_counter() - started)
    print(f"option change -> new frame, rendered mode, iterations 10, tile 1: "
          f"{statistics.median(latencies) * 1000:.0f} ms median")
    renderer.release()
    framebuffer.release()
    ctx.release()
