"""Kernel figures: diamond-square and midpoint displacement against their targets, start-up and compile
times of the numba kernels, and a plain single-threaded C diamond-square (bench/reference.c) for scale."""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import get_num_threads

from bench import compile_c, median_ms, verdict
from terrainview.kernels.fractal import diamond_square, midpoint_1d

# Median after warm-up, including the array's allocation.
TARGET_MS = {10: 1.5, 12: 25.0}
TARGET_START_S = 0.5
REPEATS = {8: 200, 10: 100, 12: 21}
C_REPEATS = {10: 21, 12: 5}
REFERENCE_C = Path(__file__).with_name("reference.c")
FIRST_MAP = "import terrainview.kernels.fractal as f; f.diamond_square(10)"
# The second map of a process is the numba kernel's: loading numba and its first call, measured for scale.
SECOND_MAP = FIRST_MAP + "; f.diamond_square(10)"


def _process_seconds(code: str, env: dict[str, str] | None = None) -> float:
    """Wall time of `python -c code`, from before the spawn to its exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - started


def _c_reference(numba_ms: dict[int, float]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        binary, heights = os.path.join(folder, "reference"), os.path.join(folder, "heights.f32")
        if not compile_c(REFERENCE_C, binary):
            print("C reference: skipped, gcc not found")
            return
        seconds = {}
        for n, repeats in C_REPEATS.items():
            run = subprocess.run([binary, str(n), "1", "0.7", "1.0", str(repeats), heights], check=True,
                                 capture_output=True, text=True)
            seconds[n] = float(run.stdout)
        c_map = np.fromfile(heights, dtype=np.float32).reshape((1 << 12) + 1, -1)
        same = np.array_equal(c_map.view(np.uint32), diamond_square(12, 1, 0.7, 1.0).view(np.uint32))
    print(f"C reference (gcc -O2, one thread, in place; same map bit for bit: {'yes' if same else 'NO'})")
    for n, c_s in seconds.items():
        print(f"  n={n:<2}  C {1000 * c_s:8.2f} ms   numba {numba_ms[n]:6.2f} ms   numba is "
              f"{1000 * c_s / numba_ms[n]:.1f}x faster")


def run() -> None:
    print(f"diamond_square, median after warm-up incl. allocation, {get_num_threads()} numba threads")
    numba_ms = {}
    for n, repeats in REPEATS.items():
        numba_ms[n] = ms = median_ms(functools.partial(diamond_square, n), repeats)
        target = f"target <= {TARGET_MS[n]:g} ms  {verdict(ms <= TARGET_MS[n])}" if n in TARGET_MS else ""
        print(f"  n={n:<2}  {(1 << n) + 1:>4}^2  {ms:8.2f} ms   {target}".rstrip())
    print(f"midpoint_1d n=16: {median_ms(lambda: midpoint_1d(16), 100):.3f} ms")

    _process_seconds(SECOND_MAP)  # fills numba's cache if it is not yet
    start = statistics.median(_process_seconds(FIRST_MAP) for _ in range(5))
    imported = statistics.median(_process_seconds("import terrainview.kernels.fractal") for _ in range(5))
    print(f"process start -> first n=10 heightmap, warm cache: {start:.2f} s (target <= {TARGET_START_S:g} s "
          f"{verdict(start <= TARGET_START_S)}); import alone {imported:.2f} s")
    second = statistics.median(_process_seconds(SECOND_MAP) for _ in range(3))
    print(f"process start -> second n=10 heightmap (numba loaded for it), warm cache: {second:.2f} s")
    with tempfile.TemporaryDirectory() as cache:
        cold = _process_seconds(SECOND_MAP, env={**os.environ, "NUMBA_CACHE_DIR": cache})
    print(f"cold compile, same with an empty numba cache: {cold:.1f} s")

    _c_reference(numba_ms)
