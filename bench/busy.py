"""Kernels on a busy machine: each kernel's median time with one and with every numba thread, on a quiet
machine and with two busy processes (``bench.busy``) beside it.

The calls run on a background thread, as the viewer's generation worker makes them (the case where GNU
OpenMP's spinning barriers collapsed: see terrainview/kernel_common.py). Targets: busy, every kernel stays
within 2x of its quiet single-thread time and is not slower than one thread on the same busy machine.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from numba import get_num_threads, set_num_threads

from bench import busy_machine
from terrainview.kernels.fractal import cloud_colors, diamond_square
from terrainview.kernels.generators import fault_formation
from terrainview.kernels.texturing import bands_texture, blend_texture

BUSY_PROCESSES = 2
NOISE = 1.15  # a ratio this close to the limit counts as within it: medians of a shared machine wander
WARMUPS = 3


def _kernels() -> dict[str, tuple[Callable[[], object], int]]:
    """name -> (call, repeats)."""
    map_10 = diamond_square(10, 0)
    return {
        "diamond_square n=8": (lambda: diamond_square(8), 200),
        "diamond_square n=10": (lambda: diamond_square(10), 60),
        "diamond_square n=12": (lambda: diamond_square(12), 25),
        "cloud_colors 1025^2": (lambda: cloud_colors(map_10), 20),
        "fault_formation n=10, blur 2": (lambda: fault_formation(10, 0, 200, 2.0), 5),
        "blend_texture 1024^2": (lambda: blend_texture(map_10, 1024), 7),
        "bands_texture 1024^2": (lambda: bands_texture(map_10, 1024), 15),
    }


_Result = TypeVar("_Result")


def _on_worker(call: Callable[[], _Result]) -> _Result:
    """Run ``call`` on a fresh thread (numba's thread count is per calling thread) and return its result."""
    result: list[_Result] = []
    worker = threading.Thread(target=lambda: result.append(call()))
    worker.start()
    worker.join()
    return result[0]


def _times(kernels, counts: tuple[int, ...]) -> dict[int, dict[str, float]]:
    """Median ms of each kernel at each thread count; the counts take turns call by call, so a change in the
    machine's other load affects them alike."""
    def measure() -> dict[int, dict[str, float]]:
        medians: dict[int, dict[str, float]] = {count: {} for count in counts}
        for name, (call, repeats) in kernels.items():
            samples: dict[int, list[float]] = {count: [] for count in counts}
            for index in range(WARMUPS + repeats):
                # The counts take turns at going first (rotated by one each round): a call right after another's
                # may find its caches or cores changed.
                turn = index % len(counts)
                for count in counts[turn:] + counts[:turn]:
                    set_num_threads(count)
                    started = time.perf_counter()
                    call()
                    if index >= WARMUPS:
                        samples[count].append(time.perf_counter() - started)
            for count in counts:
                medians[count][name] = 1000 * statistics.median(samples[count])
        return medians

    return _on_worker(measure)


def run() -> None:
    threads = get_num_threads()
    kernels = _kernels()
    quiet = _times(kernels, (1, threads))
    with busy_machine(BUSY_PROCESSES):
        busy = _times(kernels, (1, threads))
    print(f"kernels on a worker thread, median ms; busy = {BUSY_PROCESSES} spinning processes beside it")
    print(f"  {'kernel':30s} {'quiet 1t':>9s} {f'quiet {threads}t':>9s} {'busy 1t':>9s} {f'busy {threads}t':>9s}"
          f"  busy {threads}t vs quiet 1t / busy 1t")
    for name in kernels:
        ratio_quiet = busy[threads][name] / quiet[1][name]
        ratio_busy = busy[threads][name] / busy[1][name]
        verdict = "ok" if ratio_quiet <= 2.0 * NOISE and ratio_busy <= NOISE else "MISSED"
        if ratio_busy <= NOISE and busy[1][name] > 2.0 * NOISE * quiet[1][name]:
            verdict = "ok for threads (one thread alone is over 2x: the machine is busier than two spinners)"
        print(f"  {name:30s} {quiet[1][name]:9.3f} {quiet[threads][name]:9.3f} {busy[1][name]:9.3f} "
              f"{busy[threads][name]:9.3f}  {ratio_quiet:5.2f}x / {ratio_busy:5.2f}x  {verdict}")
