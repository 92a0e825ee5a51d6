"""terrainview's benchmarks: ``make bench`` runs ``python -m bench``."""

import statistics
import time
from collections.abc import Callable


def median_ms(call: Callable[[], object], repeats: int, warmups: int = 3) -> float:
    """Median wall time of ``call`` in milliseconds, after warm-up calls (numba's cache, thread pool, allocator)."""
    for _ in range(warmups):
        call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)
