"""Level-of-detail figures on this machine's GL (llvmpipe when there is no GPU): frame time, terrain primitives
and node selection time at 1280x720 for iterations 8/10/12 x tile 1/3/8/endless in rendered and lines mode, the full
mesh where it still draws, the picture difference against the full mesh, and the 4K supersampled shot."""

from __future__ import annotations

import functools
import statistics
import time

import numpy as np

from bench import median_ms, verdict
from terrainview.kernels import fractal, lod
from terrainview.render.offscreen import TiledRender, create_headless_context, render_pixels
from terrainview.render.renderer import Frame, FrameStats, Renderer, tile_reach
from terrainview.scene import camera
from terrainview.scene.settings import SceneSettings

SIZE = (1280, 720)
CASES = tuple((iterations, tile) for iterations in (8, 10, 12) for tile in (1, 3, 8, "endless"))
FULL_MESH_LIMIT = 5_000_000  # the full mesh is timed up to this many primitives (about a second a frame)
FRAME_TARGET_MS = 50.0
FRAME_REPEATS = 9  # frames of a shared machine wander by 20-30%: a median of 3 moved a case across the target
SHOT_SIZE, SHOT_SUPERSAMPLE = (3840, 2160), 2


def _frame_ms(ctx, renderer: Renderer, settings: SceneSettings, framebuffer,
              repeats: int) -> tuple[float, float, FrameStats]:
    """Median wall and CPU milliseconds of a whole frame (selection, drawing, GPU finished), and its FrameStats.
    CPU time counts llvmpipe's threads too: it says what a frame costs whatever else runs on the machine."""
    frame = Frame(SIZE)
    stats = renderer.draw(settings, framebuffer, frame)  # warm-up: shader variants, buffers
    ctx.finish()
    wall, cpu = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        stats = renderer.draw(settings, framebuffer, frame)
        ctx.finish()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu), stats


def _selection_ms(renderer: Renderer, settings: SceneSettings, lines: bool) -> float:
    frame = Frame(SIZE)
    view, projection = camera.view_matrix(settings), frame.perspective()
    layout = camera.tile_layout(settings, tile_reach(lines))
    return median_ms(lambda: renderer.lod.select(settings, view, projection, SIZE[1], frame.field_of_view_y, lines,
                                                 layout), repeats=50)


def _table(ctx, renderer: Renderer, framebuffer) -> None:
    print(f"frames at {SIZE[0]}x{SIZE[1]}, default camera, --lod-error {lod.DEFAULT_ERROR_PIXELS:g} "
          f"(median of {FRAME_REPEATS} frames; full mesh: 1 frame, up to {FULL_MESH_LIMIT / 1e6:g}M primitives)")
    print(f"  {'mode':8s} {'iter':>4s} {'tile':>7s} {'frame ms':>9s} {'cpu ms':>7s} {'drawn':>8s} {'of full':>10s} "
          f"{'select ms':>9s} {'full ms':>8s}  targets")
    for mode in ("rendered", "lines"):
        budget = lod.SEGMENT_BUDGET if mode == "lines" else lod.TRIANGLE_BUDGET
        frame_ms = {}
        for iterations, tile in CASES:
            settings = SceneSettings(mode=mode, iterations=iterations, tile=tile)
            renderer.update(settings)
            ms, cpu_ms, stats = _frame_ms(ctx, renderer, settings, framebuffer, FRAME_REPEATS)
            frame_ms[iterations, tile] = ms
            uses_lod = stats.terrain < stats.terrain_full
            select_ms = f"{_selection_ms(renderer, settings, mode == 'lines'):9.3f}" if uses_lod else f"{'-':>9s}"
            full_ms = f"{'=':>8s}"
            if uses_lod and stats.terrain_full <= FULL_MESH_LIMIT:
                full_ms = f"{_frame_ms(ctx, renderer, settings.replace(lod='off'), framebuffer, 1)[0]:8.0f}"
            elif uses_lod:
                full_ms = f"{'-':>8s}"
            # The budget binds level-of-detail frames; the full mesh (the original's own) is drawn whole.
            drawn = f"drawn<={budget // 1000}k {verdict(stats.terrain <= budget)}" if uses_lod else "full mesh"
            targets = f"frame<={FRAME_TARGET_MS:g} {verdict(ms <= FRAME_TARGET_MS)}, {drawn}"
            print(f"  {mode:8s} {iterations:4d} {tile!s:>7s} {ms:9.1f} {cpu_ms:7.1f} {stats.terrain:8d} "
                  f"{stats.terrain_full:10d} {select_ms} {full_ms}  {targets}", flush=True)
        ratio = frame_ms[12, 8] / frame_ms[8, 1]
        print(f"  {mode}: iterations 12 tile 8 takes {ratio:.2f}x the frame time of iterations 8 tile 1 "
              f"(target <= 1.5x: {verdict(ratio <= 1.5)})")


def _difference(renderer: Renderer) -> None:
    settings = SceneSettings(mode="rendered", iterations=10, tile=1)
    renderer.update(settings)
    for size in (SIZE, (3840, 2160)):
        detailed = render_pixels(renderer, settings, size).astype(np.int16)
        full = render_pixels(renderer, settings.replace(lod="off"), size).astype(np.int16)
        difference = float(np.abs(detailed - full).mean())
        print(f"level of detail against the full mesh, rendered, iterations 10, tile 1, {size[0]}x{size[1]}: "
              f"mean absolute difference {difference:.2f}/255 (target <= 2: {verdict(difference <= 2.0)})",
              flush=True)


def _screenshot(renderer: Renderer) -> None:
    settings = SceneSettings(mode="rendered", iterations=10, tile=3)
    renderer.update(settings)
    for lod_setting in ("off", "on"):
        started = time.perf_counter()
        job = TiledRender(renderer, settings.replace(lod=lod_setting), SHOT_SIZE, supersample=SHOT_SUPERSAMPLE)
        while not job.finished:
            job.step()
        job.result()
        job.release()
        print(f"{SHOT_SIZE[0]}x{SHOT_SIZE[1]} x{SHOT_SUPERSAMPLE} supersampled, rendered, iterations 10, tile 3, "
              f"--lod {lod_setting}: {time.perf_counter() - started:.1f} s ({job.stats.terrain_summary()} "
              f"over {len(job.tiles)} tiles)", flush=True)


def _pyramid() -> None:
    for iterations in (10, 12):
        heights = fractal.diamond_square(iterations, 0)
        ms = median_ms(functools.partial(lod.LodSurface.from_heights, heights), repeats=5)
        print(f"min/max pyramid (once per surface upload), iterations {iterations}: {ms:.1f} ms")


def run() -> None:
    _pyramid()
    ctx = create_headless_context()
    print(f"renderer: {ctx.info['GL_RENDERER']}")
    framebuffer = ctx.simple_framebuffer(SIZE)
    renderer = Renderer(ctx)
    try:
        _table(ctx, renderer, framebuffer)
        _difference(renderer)
        _screenshot(renderer)
    finally:
        renderer.release()
        framebuffer.release()
        ctx.release()
