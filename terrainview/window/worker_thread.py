"""A daemon thread that serves requests under one condition, and stops when asked (the window's workers)."""

from __future__ import annotations

import threading


class WorkerThread:
    """The thread, its condition and its stop; a subclass sets up its state, then calls ``_start``."""

    def __init__(self, name: str) -> None:
        self._condition = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the thread, waiting up to 5 seconds for the work under way."""
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        self._thread.join(timeout=5.0)
