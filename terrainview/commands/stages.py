"""The named stages of a slow command, shown on the terminal while they run (render and export).

On a terminal each stage is a line that counts up to 100% (and a stage of several tiles, tile k of n) and ends
with the seconds it took, so a long wait shows what it waits for: generating, eroding, drawing tile k of n,
filtering, writing. When stderr is not a
terminal (a script capturing the output) nothing is shown: the command's one summary line on stdout stays the
whole output.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any


class Stages:
    """The command's stages in turn: ``stage(name)`` ends the previous one and returns the new one's progress."""

    def __init__(self, stream: Any = None) -> None:
        self._stream = sys.stderr if stream is None else stream
        try:
            self.shown = bool(self._stream.isatty())
        except (AttributeError, ValueError, OSError):  # a closed or absent stderr
            self.shown = False
        self._name: str | None = None
        self._tiles = 1
        self._started = 0.0
        self._percent = -1

    def stage(self, name: str, tiles: int = 1) -> Callable[[float], None]:
        """Begin stage ``name`` (of ``tiles`` tiles); the returned callable takes the fraction done, 0 to 1."""
        self._finish()
        self._name, self._tiles, self._started, self._percent = name, tiles, time.perf_counter(), -1
        self._show(0.0)
        return self._show

    def _show(self, fraction: float) -> None:
        fraction = min(max(fraction, 0.0), 1.0)
        percent = round(100 * fraction)
        if self.shown and self._name is not None and percent != self._percent:
            self._percent = percent
            drawn = round(fraction * self._tiles)  # the fraction is drawn / tiles: round, not floor, recovers it
            tile = f" tile {min(drawn + 1, self._tiles)} of {self._tiles}" if self._tiles > 1 else ""
            self._write(f"\rterrainview: {self._name}{tile}: {percent:3d}%")

    def _finish(self) -> None:
        if self._name is not None:
            tiles = f" {self._tiles} tiles" if self._tiles > 1 else ""
            self._write(f"\rterrainview: {self._name}{tiles}: done in {time.perf_counter() - self._started:.1f} s"
                        "\x1b[K\n")  # erasing what is left of the longer line it replaces
            self._name = None

    def _write(self, text: str) -> None:
        if self.shown:
            with contextlib.suppress(OSError, ValueError):  # a terminal gone away: the work goes on
                self._stream.write(text)
                self._stream.flush()

    def __enter__(self) -> Stages:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if kind is None:
            self._finish()
        elif self._name is not None:  # a failure: end the line where it stopped, the error follows
            self._write("\n")
            self._name = None


def terrain_stages(stages: Stages, eroding: Callable[[], str] = str) -> Callable[[float], bool]:
    """The progress callback of making the terrain: "generating the terrain", then "eroding" a map.

    Erosion reports its share of the work and the generation none, so its first report begins "eroding";
    ``eroding()`` names the map it works on ("" the surface's: ``DerivedArrays.eroding``), and a new name is a
    stage of its own ("eroding the teximage's map"). Always True: never cancelled.
    """
    stages.stage("generating the terrain")
    shown: tuple[str, Callable[[float], None]] | None = None

    def progress(fraction: float) -> bool:
        nonlocal shown
        name = eroding()
        if shown is None or shown[0] != name:
            shown = (name, stages.stage(f"eroding {name}".rstrip()))
        shown[1](fraction)
        return True

    return progress
