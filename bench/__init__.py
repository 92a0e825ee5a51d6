"""terrainview's benchmarks: ``make bench`` runs ``python -m bench``."""

import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


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


def compile_c(source: Path, binary: str, *flags: str) -> bool:
    """Build a C reference with gcc -O2 (the folder's headers included); False when gcc is missing."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return False
    subprocess.run([gcc, "-O2", *flags, "-o", binary, str(source), "-lm"], check=True)
    return True
