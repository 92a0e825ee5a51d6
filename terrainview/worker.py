"""Terrain generation off the UI thread.

The window asks for the latest settings; a background thread brings the derived arrays up to date (numba
kernels release the GIL) and hands back what changed for the UI thread to upload. Requests made while a
generation runs collapse into one: only the newest settings are generated next. The first request also
pays numba's compile time, which the UI shows as progress rather than freezing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from .settings import SceneSettings
from .terrain import DerivedArrays, GenerationError
from .warmup import announce_compile


@dataclass(frozen=True)
class Generated:
    settings: SceneSettings
    changed: dict[str, np.ndarray | None]
    seconds: float
    error: str | None = None


class GenerationWorker:
    def __init__(self, arrays: DerivedArrays | None = None) -> None:
        self.arrays = arrays or DerivedArrays()
        # The running erosion's fraction done (None when none runs), for the panel; a newer request cancels it.
        self.erosion_progress: float | None = None
        self.arrays.progress = self._erosion_progress
        self._condition = threading.Condition()
        self._requested: SceneSettings | None = None
        self._result: Generated | None = None
        self._busy_since: float | None = None
        self._stopping = False
        self.first_done = threading.Event()
        self.compiling = False  # the running generation compiles numba kernels first (a cold cache)
        self._thread = threading.Thread(target=self._run, name="terrain-generation", daemon=True)
        self._thread.start()

    def request(self, settings: SceneSettings) -> None:
        with self._condition:
            self._requested = settings
            self._condition.notify()

    def take_result(self) -> Generated | None:
        """The newest finished generation not taken yet, if any (non-blocking)."""
        with self._condition:
            result, self._result = self._result, None
            return result

    @property
    def busy_seconds(self) -> float | None:
        """How long the running generation has taken so far; None when idle."""
        with self._condition:
            return None if self._busy_since is None else time.perf_counter() - self._busy_since

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until nothing is requested or running (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._requested is not None or self._busy_since is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._condition.wait(remaining):
                    return False
        return True

    def stop(self) -> None:
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        self._thread.join(timeout=5.0)

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._requested is None and not self._stopping:
                    self._condition.wait()
                if self._stopping:
                    return
                settings, self._requested = self._requested, None
                if settings is None:
                    continue
                self._busy_since = time.perf_counter()
            result = self._generate(settings)
            self.erosion_progress = None
            with self._condition:
                if self._result is not None:  # an untaken result's arrays still need uploading
                    result = Generated(result.settings, {**self._result.changed, **result.changed},
                                       result.seconds, result.error)
                self._result, self._busy_since = result, None
                self._condition.notify_all()
            self.first_done.set()

    def _erosion_progress(self, fraction: float) -> bool:
        """Called by the erosion between batches: record progress; False (cancel) once newer settings wait."""
        self.erosion_progress = fraction
        with self._condition:
            return self._requested is None and not self._stopping

    def _generate(self, settings: SceneSettings) -> Generated:
        self.compiling = announce_compile(settings)  # a cold numba cache: the window says "compiling"
        started = time.perf_counter()
        try:
            changed = self.arrays.update(settings)
        except GenerationError as error:  # a bad seed image, say: report it; what was made still counts
            return Generated(settings, error.changed, time.perf_counter() - started, str(error))
        except Exception as error:  # anything else must not kill the thread and leave the UI waiting
            return Generated(settings, {}, time.perf_counter() - started, f"{type(error).__name__}: {error}")
        return Generated(settings, changed, time.perf_counter() - started)
