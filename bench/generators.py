"""Generator and texturing figures: median times of fault formation and of the blend texture, after warm-up."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from terrainview.fractal import diamond_square
from terrainview.generators import fault_formation
from terrainview.texturing import blend_texture

REPEATS = 7


def _median_ms(call: Callable[[], object]) -> float:
    call()  # warm-up: JIT compilation or loading numba's cache
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def run() -> None:
    for iterations in (8, 10):
        for blur in (0.0, 2.0):
            ms = _median_ms(lambda: fault_formation(iterations, 0, 200, blur))
            print(f"fault_formation n={iterations:<2} 200 faults, blur {blur:.1f}: {ms:8.2f} ms")
    heights = diamond_square(10, 0)
    print(f"blend_texture 1024 x 1024 from a 1025^2 map:       {_median_ms(lambda: blend_texture(heights, 1024)):8.2f} ms")
