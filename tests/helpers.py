"""Plain helpers shared by test modules (fixtures live in conftest.py and gl_fixtures.py): ``from helpers import``."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from terrainview.scene.settings import SceneSettings

CAMERA = ("yrot", "ytrans", "ztrans", "pitch")  # the orbit camera's fields that keys and flights move


def camera(settings: SceneSettings) -> tuple[float, ...]:
    """The ``CAMERA`` fields of ``settings``, in that order."""
    return tuple(getattr(settings, name) for name in CAMERA)


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson's correlation of two arrays' values, taken as flat lists."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    a, b = a - a.mean(), b - b.mean()
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def changed_fraction(a: np.ndarray, b: np.ndarray) -> float:
    """The share of pixels (the last axis: their channels) that differ between two images of one size."""
    return float(np.any(a != b, axis=2).mean())


def names(folder: Path) -> list[str]:
    """The names of what ``folder`` holds, sorted: what a command wrote, or left behind."""
    return sorted(path.name for path in folder.iterdir())


def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    """Call ``condition`` every ``interval`` seconds until it returns neither None nor False; return that value.

    Fails the test, naming ``what``, when ``timeout`` seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(interval)


def window_load(path: Path, settings: SceneSettings) -> tuple[SceneSettings, list[str]]:
    """The window's Load (its SceneFiles): (the settings afterwards, messages)."""
    from terrainview.window.scene_actions import SceneFiles

    messages: list[str] = []
    return SceneFiles(messages.append).load(Path(path), settings), messages
