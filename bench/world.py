"""The endless world: how long a region takes (quiet and with two busy processes), whether a region made alone is
bit for bit the window of a larger map, and a minute's flight at 1280x720 for iterations 10 and 12 in each look
with the window's own streaming (regions on a worker, frames never waiting; the natural look's light maps too,
and its frames drafts as the window draws them while the view moves): the slowest frame, the frames over 50 ms,
the land in view that had no map yet, the memory the regions held and what is left of it once the view shows
tiles again (WORLD_FLIGHT_SECONDS shortens the flight for a quick look)."""

from __future__ import annotations

import gc
import heapq
import os
import time

import numpy as np

from bench import busy_machine, median_ms, verdict
from terrainview.base.heap import freeze_what_starting_made, hold_small_pages, numpy_huge_pages
from terrainview.kernels import world
from terrainview.render.draft import DraftTarget, draft_size
from terrainview.render.offscreen import create_headless_context
from terrainview.render.renderer import Frame, Renderer
from terrainview.scene import world_regions
from terrainview.scene.settings import CameraMode, Look, SceneSettings
from terrainview.scene.world_regions import RegionKey, World
from terrainview.window.arrow_keys import MOVE_STEP, STEPS_PER_SECOND
from terrainview.window.world_feed import BAND_ROWS, WorldFeed

REGION_TARGET_MS = 20.0
FRAME_TARGET_MS = 50.0
FLIGHT_SECONDS = float(os.environ.get("WORLD_FLIGHT_SECONDS", 60.0))
SIZE = (1280, 720)
FLY_SPEED = MOVE_STEP * STEPS_PER_SECOND  # units a second with the Up key held (the speed the window starts at)
CLEARANCE = 0.35  # the eye flies this high over the highest ground near it
SLOW_FRAMES_SHOWN = 5  # the slowest frames over the target, each with what it spent its time on


def _regions() -> None:
    world_ = World(0, 0.7, 1.0, 2)
    places = iter(range(10_000))

    def region() -> None:  # a new place each call, as a flight asks for them
        index = next(places)
        world_regions.region_map(world_, RegionKey(index % 97, index // 97, 10))

    quiet = median_ms(region, 30)
    with busy_machine(2):
        busy = median_ms(region, 30)
    finest = median_ms(lambda: world_regions.region_map(world_, RegionKey(next(places), 5, 12)), 5, warmups=1)

    def in_steps() -> None:  # as the window's worker makes it beside a software rasterizer (window/world_feed.py)
        world_regions.run_steps(world_regions.region_map_in_steps(world_, RegionKey(next(places), 5, 12),
                                                                  BAND_ROWS))

    numpy_default = "huge pages" if numpy_huge_pages() else "numpy's own pages (it asks for no huge ones here)"
    in_default_pages = median_ms(in_steps, 5, warmups=1)
    hold_small_pages(True)
    try:
        in_small_pages = median_ms(in_steps, 5, warmups=1)
    finally:
        hold_small_pages(False)
    light = median_ms(lambda: world_regions.region_light(world_, RegionKey(next(places), 3, 10)), 5, warmups=1)
    print(f"a new region at iterations 10 (1027^2 with its apron, one core): {quiet:.1f} ms quiet, {busy:.1f} ms with "
          f"two busy processes; target < {REGION_TARGET_MS:g} ms: {verdict(quiet < REGION_TARGET_MS)}")
    print(f"a new region at iterations 12 (4099^2, one core, quiet): {finest:.0f} ms; in steps with its "
          f"level-of-detail bounds, {in_default_pages:.0f} ms in {numpy_default}, and {in_small_pages:.0f} ms in "
          "small pages, as the "
          "window's worker makes it beside a software rasterizer")
    print(f"its natural-look light maps (257^2 horizons, the unit of land around it casting shadows too): "
          f"{light:.0f} ms")
    alone = world.world_region(10, 3, -2, seed=5)
    larger = world.world_heights(10, 2 * 1024, -3 * 1024, 3 * 1024 + 1, 3 * 1024 + 1, seed=5)
    same = np.array_equal(alone, larger[1024:2049, 1024:2049])
    print(f"a region made alone equals the same window of a 3 x 3 regions' map, bit for bit: {verdict(same)}")


def _flight(iterations: int, look: Look) -> None:
    ctx = create_headless_context()
    renderer = Renderer(ctx)
    feed = WorldFeed(paced=renderer.gpu.software_rasterizer)  # as the window's
    renderer.world.streaming = True
    framebuffer = ctx.simple_framebuffer(SIZE)
    draft = DraftTarget(ctx)  # the window draws the natural look's frames as drafts while the view moves
    settings = SceneSettings(mode="rendered", look=look, tile="endless", iterations=iterations,
                             camera=CameraMode.FLY, eye_y=2.0, pitch=8.0)
    renderer.update(settings)
    world_ = World.of(settings)
    assert world_ is not None
    ground = world_regions.world_ground(world_, iterations)
    freeze_what_starting_made()  # as the window does once its first frame is drawn
    times, missing, coarser, held_bytes, frames = [], [], [], 0, 0
    slow: list[tuple[float, str]] = []  # what each frame over the target spent its time on
    collection_started, collecting_seconds = 0.0, 0.0  # (the interpreter runs one collection at a time)

    def time_collections(phase: str, _info: dict) -> None:
        nonlocal collection_started, collecting_seconds
        if phase == "start":
            collection_started = time.perf_counter()
        else:
            collecting_seconds += time.perf_counter() - collection_started

    gc.callbacks.append(time_collections)
    started = last = time.perf_counter()
    eye_z = 0.0
    try:
        while (now := time.perf_counter()) - started < FLIGHT_SECONDS:
            eye_z -= FLY_SPEED * (now - last)  # forward: yaw 0 looks toward -z
            last = now
            highest = max(ground(x, eye_z + dz) for x in (-0.3, 0.0, 0.3) for dz in (-0.6, -0.3, 0.0))
            settings = settings.replace(eye_z=eye_z, eye_y=highest + CLEARANCE)
            frame_started, frame_cpu, collected_before = time.perf_counter(), time.thread_time(), collecting_seconds
            feed.start_frame(renderer.world.cache)  # the window's frame step, with its worker
            framebuffer.use()
            lit = renderer.draws_natural(settings)  # as the window: regions lit by their own light maps
            if lit:
                draft.draw(renderer, settings, framebuffer, Frame(SIZE))
            else:
                renderer.draw(settings, framebuffer, Frame(SIZE))
            drawn = time.perf_counter()
            wanted = renderer.world.wanted
            feed.ask_for(world_, renderer.world.cache, wanted, lit)
            asked = time.perf_counter()
            feed.hold(True)  # as the window holds it over its buffer swap, where llvmpipe draws the pixels
            ctx.finish()
            ended, ended_cpu = time.perf_counter(), time.thread_time()
            frames += 1
            if frames > 30:  # the first half second fills the view from nothing
                frame_ms = 1000 * (ended - frame_started)
                times.append(frame_ms)
                missing.append(renderer.world.missing)
                coarser.append(len(renderer.world.cache.missing(wanted, lit)) / max(len(wanted), 1))
                if frame_ms > FRAME_TARGET_MS:
                    slow.append((frame_ms, f"{frame_ms:.0f} ms (frame {frames}: {1000 * (drawn - frame_started):.0f} "
                                 f"ms taking and drawing, {1000 * (asked - drawn):.0f} ms asking the worker, "
                                 f"{1000 * (ended - asked):.0f} ms finishing the pixels; "
                                 f"{1000 * (ended_cpu - frame_cpu):.0f} ms of the window thread's CPU, "
                                 f"{1000 * (collecting_seconds - collected_before):.0f} ms collecting garbage on any "
                                 "thread, in collections that ended within it)"))
            held_bytes = max(held_bytes, renderer.world.cache.bytes)
        # The window leaves the world (tiles again, the worker told so): its maps and textures are freed.
        flying = _resident_mib()
        feed.forget()
        tiles = settings.replace(tile=3, iterations=6)  # small tiles: what is left is what the world kept
        renderer.update(tiles)
        renderer.draw(tiles, framebuffer, Frame(SIZE))
        ctx.finish()
        left = _resident_mib()
    finally:
        gc.callbacks.remove(time_collections)
        feed.stop()
        draft.release()
        renderer.release()
        ctx.release()
        gc.unfreeze()  # what this flight froze goes back to the collector, not into the next flight's figures
    slowest, over = max(times), sum(1 for value in times if value > FRAME_TARGET_MS)
    print(f"  {look.value} look, iterations {iterations}: {len(times)} frames over {eye_z:+.0f} units, median "
          f"{np.median(times):.0f} ms, slowest {slowest:.0f} ms, {over} over {FRAME_TARGET_MS:g} ms "
          f"({verdict(over == 0)}); regions in view without a map: at most {max(missing)} in a frame, in "
          f"{sum(1 for count in missing if count)} frames ({verdict(max(missing) == 0)}); regions wanted (to a region "
          f"past the view, a detail finer than drawn) whose map is not made or lit yet: {100 * np.mean(coarser):.0f}% "
          f"on average, none in "
          f"{100 * np.mean(np.equal(coarser, 0)):.0f}% of the frames; the worker lent a core {feed.lends} times; "
          f"maps held at most "
          f"{held_bytes / 2**20:.0f} MiB (bound {world_regions.CACHE_BYTES / 2**20:.0f} MiB plus those in view); the "
          f"process's memory {flying:.0f} MiB at the end of the flight, {left:.0f} MiB once it shows tiles again")
    for _, line in heapq.nlargest(SLOW_FRAMES_SHOWN, slow):
        print(f"    over {FRAME_TARGET_MS:g} ms: {line}")


def _resident_mib() -> float:
    """This process's resident memory (llvmpipe's textures are in it too)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run() -> None:
    _regions()
    print(f"flying forward for {FLIGHT_SECONDS:g} s at {FLY_SPEED:g} units/s (the Up key held), {SIZE[0]}x{SIZE[1]}, "
          "regions streamed from a worker; the natural look drawn as the window draws it while the view moves "
          f"(drafts, {draft_size(SIZE)[0]}x{draft_size(SIZE)[1]} stretched), regions lit as they come:")
    for look in (Look.ORIGINAL, Look.NATURAL):
        for iterations in (10, 12):
            _flight(iterations, look)
