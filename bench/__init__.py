"""terrainview's benchmarks: ``make bench`` runs ``python -m bench``."""

import contextlib
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path


def verdict(ok: bool) -> str:
    """A target's verdict as the tables print it."""
    return "ok" if ok else "MISSED"


@contextlib.contextmanager
def busy_machine(count: int) -> Iterator[None]:
    """``count`` processes spinning on a core each while the block runs: the busy machine of the figures."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


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
