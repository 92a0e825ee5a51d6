"""Generator and texturing figures: median times of fault formation and of the blend texture, after warm-up."""

from __future__ import annotations

import functools

from bench import median_ms
from terrainview.kernels.fractal import diamond_square
from terrainview.kernels.generators import fault_formation
from terrainview.kernels.texturing import blend_texture

REPEATS = 7


def run() -> None:
    for iterations in (8, 10):
        for blur in (0.0, 2.0):
            ms = median_ms(functools.partial(fault_formation, iterations, 0, 200, blur), REPEATS)
            print(f"fault_formation n={iterations:<2} 200 faults, blur {blur:.1f}: {ms:8.2f} ms")
    heights = diamond_square(10, 0)
    ms = median_ms(lambda: blend_texture(heights, 1024), REPEATS)
    print(f"blend_texture 1024 x 1024 from a 1025^2 map:       {ms:8.2f} ms")
