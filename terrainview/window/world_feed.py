"""The endless world's regions, made on a worker thread while the window keeps drawing.

Each frame the window asks for the regions its last frame lacked (nearest first; the newest list replaces the
last) and takes what the worker finished into the renderer's region cache, which the next frame draws. The
kernel releases the GIL, so the UI thread keeps drawing meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Generator

import numpy as np

from terrainview.base.heap import hold_small_pages
from terrainview.kernels.lod import LodSurface
from terrainview.render.gpu import spread_rasterizer_threads
from terrainview.scene.world_regions import (
    Made,
    RegionCache,
    RegionKey,
    World,
    region_light,
    region_light_in_steps,
    region_map,
    region_map_in_steps,
    region_pyramid,
)
from terrainview.window.worker_thread import WorkerThread

# The worker thread runs under Linux's SCHED_IDLE: only on a core no other thread wants, and any thread waking
# takes the core from it at once. Niced instead, a thread of llvmpipe's waking between the bins of a frame's pixels
# could wait out the worker's time slice: half a minute's natural-look flight at iterations 10 had 32-39 frames over
# 50 ms at nice 19, 7-16 under SCHED_IDLE (a minute's original-look flight at iterations 12: 5-9 at nice 10, 0-1 at
# 19). Where the policy is refused, the worker runs at WORKER_NICENESS, the lowest. (Made to wait while it holds
# the GIL, it would hold up the UI thread too: its kernels release the GIL, and what runs between them is short.)
WORKER_NICENESS = 19
# Even at the lowest priority, the worker making a map slows the frames it overlaps (on two cores it shares the
# caches and memory with llvmpipe's threads): a minute's flight at iterations 12 had 2-3 frames over 50 ms. Maps
# of PACED_DETAIL and finer (88-105 ms of a core at detail 12, with the pyramid) are made in steps of at most BAND_ROWS
# rows. Before each step the worker waits while the window draws a frame's pixels (``hold``), for at most
# HOLD_SECONDS so that it always gets on, and after it rests as long as the step took: half a core at most, and
# no frame overlaps much of it (the same flight: 0-1 frames over 50 ms). Only where a software rasterizer draws the
# pixels (``paced``): a GPU shares no core with the worker.
PACED_DETAIL = 11
BAND_ROWS = 512
HOLD_SECONDS = 0.03
# So are their light maps (257^2 horizons, 10 ms of a core), in bands of at most LIGHT_BAND_ROWS rows (2 ms or so).
# A detail-10 region's are as large, but traced whole: paced, an iterations-10 flight left 52% of the regions it
# wanted unlit instead of 5% (its maps are quick; at 12 the maps are what the worker spends its time on).
LIGHT_BAND_ROWS = 64
# Under SCHED_IDLE the worker gets no core while the frames keep both busy: small frames drawn back to back (the
# original look at iterations 8) left the view on its stand-ins for up to 3 s after a change, 82 maps of 0.2 ms
# each (at nice 19: 0.05-0.2 s). So when the worker has had less than STARVED_SHARE of a core over the last
# SHARE_WINDOW_SECONDS with work to do, the next frame lends it the window's core: it waits up to LEND_SECONDS
# before it starts, or until the worker has nothing left to make. (Flights rarely lend: 2-7 times a half-minute.)
SHARE_WINDOW_SECONDS = 0.1
STARVED_SHARE = 0.05
LEND_SECONDS = 0.005


class WorldFeed(WorkerThread):
    """A thread making regions' maps, always the first of the newest list asked for."""

    def __init__(self, paced: bool = False) -> None:
        super().__init__("world-regions")
        self._paced = paced  # large maps in paced steps: where the frames' pixels are drawn on the same cores
        if paced:  # and the rasterizer's threads kept apart, so the worker never leaves two of them one core
            spread_rasterizer_threads()
        self._asked: tuple[World | None, list[RegionKey], bool] = (None, [], False)
        self._made: list[tuple[World, RegionKey, np.ndarray, np.ndarray | None, LodSurface | None]] = []
        self._making: RegionKey | None = None
        self._held = False
        self._start()
        # (Set after the start, which gives the thread its clock: the worker itself never reads these.)
        self._cpu_clock: int | None = None  # the worker's own CPU time (where Linux tells it)
        if self._thread.ident is not None:
            with contextlib.suppress(OSError, AttributeError):
                self._cpu_clock = time.pthread_getcpuclockid(self._thread.ident)
        self._share_since: tuple[float, float | None] = (time.perf_counter(), self._worker_cpu_seconds())
        self.lends = 0  # how many frames lent the worker their core
        self._holds_small_pages = False  # (``hold_small_pages``): a world asked for, paced

    def _worker_cpu_seconds(self) -> float | None:
        """The CPU time the worker thread has had; None where unknown (then it is never lent a core)."""
        if self._cpu_clock is None:
            return None
        try:
            return time.clock_gettime(self._cpu_clock)
        except OSError:  # the thread has ended (stopped, or died): the frames draw on without it
            return None

    def lend(self) -> None:
        """At a frame's start: if the worker was starved of a core (STARVED_SHARE), wait for it a moment.

        (A paced map's rest counts as work: the worker resting half the time has its share, and is not lent.)
        """
        with self._condition:
            if not self._busy():
                return  # nothing owed (``request`` starts the count when work comes)
        now, cpu = time.perf_counter(), self._worker_cpu_seconds()
        since, cpu_since = self._share_since
        if cpu is None or cpu_since is None or now - since < SHARE_WINDOW_SECONDS:
            return
        if cpu - cpu_since < STARVED_SHARE * (now - since):
            self.lends += 1
            with self._condition:
                self._condition.wait_for(lambda: self._stopping or not self._busy(), LEND_SECONDS)
            now, cpu = time.perf_counter(), self._worker_cpu_seconds()
        self._share_since = (now, cpu)

    def start_frame(self, cache: RegionCache) -> None:
        """A frame starts, the last one's pixels drawn: the worker goes on, is lent the core if starved.

        What it made goes into ``cache``, for this frame to draw.
        """
        self.hold(False)
        self.lend()
        self.take(cache)

    def ask_for(self, world_: World, cache: RegionCache, wanted: list[RegionKey], light: bool) -> None:
        """After a frame's draws: make what ``cache`` lacks of the regions the frame ``wanted`` (``request``)."""
        self.request(world_, cache.requests(wanted, light), light)

    def _busy(self) -> bool:
        """Something asked for or being made (the condition held)."""
        return bool(self._asked[1]) or self._making is not None

    @property
    def held(self) -> bool:
        """Whether the window holds the worker (``hold``)."""
        with self._condition:
            return self._held

    def hold(self, held: bool) -> None:
        """Whether the window is drawing a frame's pixels (a paced map's next step waits meanwhile)."""
        with self._condition:
            self._held = held
            if not held:
                self._condition.notify_all()

    def _map_and_pyramid(self, world_: World, key: RegionKey) -> tuple[np.ndarray, LodSurface | None] | None:
        """The region's map and pyramid, or None if dropped on the way (stopping, or its world no longer asked).

        Paced (maps of PACED_DETAIL and finer, when ``paced``): ``region_map_in_steps``, ``_in_paced_steps``.
        """
        if not self._paces(key):
            heights = region_map(world_, key)
            return heights, region_pyramid(heights)
        return self._in_paced_steps(world_, region_map_in_steps(world_, key, BAND_ROWS))

    def _light(self, world_: World, key: RegionKey) -> np.ndarray | None:
        """The region's light maps, or None if dropped on the way; paced as its map is."""
        if not self._paces(key):
            return region_light(world_, key)
        return self._in_paced_steps(world_, region_light_in_steps(world_, key, LIGHT_BAND_ROWS))

    def _paces(self, key: RegionKey) -> bool:
        """Whether the region's maps are made in paced steps (PACED_DETAIL and finer, where ``paced``)."""
        return self._paced and key.detail >= PACED_DETAIL

    def _in_paced_steps(self, world_: World, steps: Generator[None, None, Made]) -> Made | None:
        """What ``steps`` makes, or None if dropped on the way (stopping, or its world no longer asked).

        Before each step it waits while the window holds the worker (at most HOLD_SECONDS), and after each it
        rests as long as the step took.
        """
        while True:
            with self._condition:
                self._condition.wait_for(lambda: not self._held or self._stopping, timeout=HOLD_SECONDS)
                if self._stopping or self._asked[0] != world_:
                    return None
            started = time.perf_counter()
            try:
                next(steps)
            except StopIteration as made:
                return made.value
            with self._condition:  # the rest, cut short by a stop
                self._condition.wait_for(lambda: self._stopping, timeout=time.perf_counter() - started)

    def request(self, world_: World, keys: list[RegionKey], light: bool = False) -> None:
        """Make these maps (and, with ``light``, their light maps) next, in this order.

        The list replaces what was asked before and not started. Called from the window's thread, as are ``forget``
        and ``stop``; paced, numpy's large arrays come in small pages until then (``hold_small_pages``).
        """
        # Paced, numpy's large arrays (the worker's maps, above all) come in small pages from here: Linux zeroes a
        # huge page at its first touch as one piece of work, and a detail-12 map touches 33 of them. Minute-long
        # natural-look flights at iterations 12, six runs each way: with huge pages 9 frames over 50 ms (in four
        # runs) and 8 drafts whose draw took over 45 ms; with small pages one frame of 54 ms and no such draft (and
        # with llvmpipe's threads kept apart, four each way: the slowest 36-84 ms against 35-40). A detail-12 map
        # then takes the worker 88-105 ms of a core instead of 75-85.
        if self._paced and not self._holds_small_pages and not self._stopping:
            hold_small_pages(True)
            self._holds_small_pages = True
        with self._condition:
            idle = not self._busy()
            under_way = {self._making} | {made[1] for made in self._made if made[0] == world_}
            self._asked = (world_, [key for key in keys if key not in under_way], light)
            self._condition.notify()
        if idle:  # its share is counted from the work asked for (``lend``), not from the idle time before
            self._share_since = (time.perf_counter(), self._worker_cpu_seconds())

    def forget(self) -> None:
        """Make nothing more (the view has left the endless world): what is under way is dropped when made."""
        with self._condition:
            self._asked = (None, [], False)
            self._made = []
        self._let_go_of_small_pages()

    def stop(self) -> None:
        """Stop the thread (``WorkerThread.stop``); numpy's pages as before a world was asked for."""
        try:
            super().stop()
        finally:
            self._let_go_of_small_pages()

    def _let_go_of_small_pages(self) -> None:
        if self._holds_small_pages:
            hold_small_pages(False)
            self._holds_small_pages = False

    def take(self, cache: RegionCache) -> int:
        """Put the maps finished since the last call into ``cache``; returns how many."""
        with self._condition:
            made, self._made = self._made, []
        for world_, key, heights, light, pyramid in made:
            cache.put(world_, key, heights, light, pyramid)
        return len(made)

    @property
    def pending(self) -> int:
        """Regions asked for and not yet made (the one being made included)."""
        with self._condition:
            return len(self._asked[1]) + (self._making is not None)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until nothing is asked or running (for tests)."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._busy(), timeout)

    def _run(self) -> None:
        # Below the UI thread and the rasterizer's threads: on a machine of two cores the frames come first, and
        # the regions take what time is left (they are asked for ahead of need).
        _below_every_other_thread()
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._stopping or bool(self._asked[1]))
                if self._stopping:
                    return
                world_, keys, light = self._asked
                key = self._making = keys.pop(0)
            assert world_ is not None
            made = self._map_and_pyramid(world_, key)
            light_maps = self._light(world_, key) if light and made is not None else None
            with self._condition:
                # Still this world's turn (not forgotten, no other world asked)? Lit, if asked so.
                if made is not None and (light_maps is not None or not light) and self._asked[0] == world_:
                    heights, pyramid = made
                    self._made.append((world_, key, heights, light_maps, pyramid))
                self._making = None
                self._condition.notify_all()


def _below_every_other_thread() -> None:
    """Put the calling thread under SCHED_IDLE, or at WORKER_NICENESS where that is refused (or not Linux)."""
    thread = threading.get_native_id()
    try:
        os.sched_setscheduler(thread, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, thread, WORKER_NICENESS)
