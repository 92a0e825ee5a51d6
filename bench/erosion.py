"""Erosion figures: hydraulic erosion at iterations 9 and 10 and thermal erosion at 10 (scene defaults) against
their targets, droplets per second, and a plain single-threaded C run of the same droplets
(bench/erosion_reference.c, one after another in order of index: the kernel's own order on a map of one block,
where the two maps must be equal bit for bit) for scale; quiet, then again with two busy processes beside it."""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench import busy_machine, compile_c, verdict
from terrainview.kernels import erosion
from terrainview.kernels.fractal import diamond_square
from terrainview.kernels.lattice import stream_key

# Seconds, median after warm-up, the whole public call (validation, copies, flow map) included. The CPU time of
# the calling thread is printed beside the wall time: on a quiet machine the droplets' blocks also run on a
# second thread, so it is less than the wall time's work; on a busy one everything runs on the calling thread.
HYDRAULIC_TARGET_S = {9: 0.5, 10: 2.0}
THERMAL_TARGET_S = {10: 0.2}
REPEATS = {9: 5, 10: 3}
C_REPEATS = 3
ONE_BLOCK = 7  # iterations at which the kernel walks the map as one block (erosion.block_plan), in index order
REFERENCE_C = Path(__file__).with_name("erosion_reference.c")


def _median_seconds(call: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall and calling-thread CPU seconds of ``call`` after one warm-up call."""
    call()
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.thread_time()
        call()
        cpus.append(time.thread_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(walls), statistics.median(cpus)


def _c_binary(folder: str) -> str | None:
    binary = os.path.join(folder, "erosion_reference")
    return binary if compile_c(REFERENCE_C, binary, "-ffp-contract=off") else None


def _c_run(binary: str, folder: str, iterations: int) -> tuple[float, np.ndarray]:
    """Median seconds of the C droplets on the default scene at ``iterations``, and its map (float32, closed)."""
    heights = diamond_square(iterations, 0)
    size = heights.shape[0] - 1
    cell = erosion.SURFACE_SIZE / size
    torus = np.ascontiguousarray(heights[:size, :size], dtype=np.float64)
    rows, columns, weights = erosion.brush(size, erosion.RADIUS)
    heights_path, brush_path, out_path = (os.path.join(folder, name) for name in ("h.f64", "brush.bin", "out.f64"))
    torus.tofile(heights_path)
    with open(brush_path, "wb") as stream:
        for array in (rows, columns, weights):
            stream.write(np.ascontiguousarray(array).tobytes())
    numbers = [size, heights_path, brush_path, len(weights), int(stream_key(0, erosion._DOMAIN_DROPLETS)),
               erosion.droplet_count(erosion.DROPLETS), erosion.STEP / cell, cell, erosion.STEP, erosion.STRENGTH,
               erosion.CAPACITY, erosion.DEPOSITION, erosion.EVAPORATION, erosion.INERTIA, erosion.LIFETIME,
               erosion.MIN_SLOPE, erosion.GRAVITY, C_REPEATS, out_path]
    run = subprocess.run([binary, *(repr(n) if isinstance(n, float) else str(n) for n in numbers)], check=True,
                         capture_output=True, text=True)
    c_map = np.fromfile(out_path, dtype=np.float64).reshape(size, size)
    return float(run.stdout), np.pad(c_map, ((0, 1), (0, 1)), mode="wrap").astype(np.float32)


def _figures(label: str, binary: str | None, folder: str) -> None:
    count = erosion.droplet_count(erosion.DROPLETS)
    print(f"{label}: {count:,} droplets ({erosion.DROPLETS:g} per unit area), {erosion.LIFETIME} steps each")
    numba_s = {}
    for n, target in HYDRAULIC_TARGET_S.items():
        heights = diamond_square(n, 0)
        seconds, cpu = _median_seconds(functools.partial(erosion.hydraulic_erosion, heights), REPEATS[n])
        numba_s[n] = seconds
        print(f"  hydraulic n={n:<2} {(1 << n) + 1:>4}^2  {seconds:6.3f} s (CPU {cpu:.3f} s)  "
              f"{count / seconds / 1e3:6.1f} k droplets/s   target <= {target:g} s  {verdict(seconds <= target)}")
    for n, target in THERMAL_TARGET_S.items():
        heights = diamond_square(n, 0)
        seconds, cpu = _median_seconds(functools.partial(erosion.thermal_erosion, heights), 5)
        print(f"  thermal   n={n:<2} {(1 << n) + 1:>4}^2  {seconds:6.3f} s (CPU {cpu:.3f} s)  "
              f"{erosion.THERMAL_PASSES} passes          target <= {target:g} s  {verdict(seconds <= target)}")
    if binary is None:
        print("  C reference: skipped, gcc not found")
        return
    assert erosion.droplet_blocks(1 << ONE_BLOCK, erosion.RADIUS)[0] == 1 << ONE_BLOCK
    kernel = erosion.hydraulic_erosion(diamond_square(ONE_BLOCK, 0)).heights
    same = np.array_equal(_c_run(binary, folder, ONE_BLOCK)[1].view(np.uint32), kernel.view(np.uint32))
    print(f"  C reference n={ONE_BLOCK} (one block: the kernel's order) same map bit for bit: {verdict(same)}")
    for n in HYDRAULIC_TARGET_S:
        c_s = _c_run(binary, folder, n)[0]
        print(f"  C reference n={n:<2} (gcc -O2, one thread, droplets in order of index): "
              f"{c_s:6.3f} s  {count / c_s / 1e3:6.1f} k droplets/s   numba is {c_s / numba_s[n]:.1f}x faster")


def run() -> None:
    with tempfile.TemporaryDirectory() as folder:
        binary = _c_binary(folder)
        _figures("quiet", binary, folder)
        with busy_machine(2):
            _figures("with two busy processes", binary, folder)


if __name__ == "__main__":
    run()
