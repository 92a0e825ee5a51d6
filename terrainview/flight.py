"""Arrow-key flight, as in the original: a tap moves one step, a held key repeats at 30 steps per second.

Pure Python (no window, no GL) so that tests can drive it at any frame rate. Steps are the original's:
Left/Right turn 3 degrees, Up/Down move 0.05 along Z, or along Y with Shift held.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

from .settings import SceneSettings

YAW_STEP_DEGREES = 3.0
MOVE_STEP = 0.05
STEPS_PER_SECOND = 30.0
MAX_PITCH_DEGREES = 80.0
DRAG_DEGREES_PER_PIXEL = 0.3
_EPSILON = 1e-6  # absorbs float error when frame times add up to exactly n / 30 s


class Key(Enum):
    LEFT = "left"
    RIGHT = "right"
    UP = "up"
    DOWN = "down"


def step(settings: SceneSettings, key: Key, shift: bool, count: int = 1) -> SceneSettings:
    """The camera after ``count`` of the original's steps for ``key``."""
    if key is Key.LEFT:
        return settings.replace(yrot=settings.yrot + YAW_STEP_DEGREES * count)
    if key is Key.RIGHT:
        return settings.replace(yrot=settings.yrot - YAW_STEP_DEGREES * count)
    distance = MOVE_STEP * count * (1 if key is Key.UP else -1)
    if shift:
        return settings.replace(ytrans=settings.ytrans + distance)
    return settings.replace(ztrans=settings.ztrans + distance)


def drag(settings: SceneSettings, dx: float, dy: float) -> SceneSettings:
    """Mouse drag: horizontal turns (yaw), vertical pitches within +-80 degrees."""
    pitch = min(MAX_PITCH_DEGREES, max(-MAX_PITCH_DEGREES, settings.pitch + dy * DRAG_DEGREES_PER_PIXEL))
    return settings.replace(yrot=settings.yrot + dx * DRAG_DEGREES_PER_PIXEL, pitch=pitch)


@dataclass
class _Held:
    seconds: float = 0.0
    steps: int = 0


@dataclass
class Flight:
    """Which flight keys are held, and how many steps each has made."""

    held: dict[Key, _Held] = field(default_factory=dict)
    shift: bool = False

    def press(self, settings: SceneSettings, key: Key) -> SceneSettings:
        """A key went down: one step at once (a tap is one original step)."""
        self.held[key] = _Held(steps=1)
        return step(settings, key, self.shift)

    def release(self, key: Key) -> None:
        self.held.pop(key, None)

    def release_all(self) -> None:
        self.held.clear()

    def advance(self, settings: SceneSettings, seconds: float) -> SceneSettings:
        """Time passed with keys held: step each key up to ceil(held time * 30), so holding for one second
        makes 30 steps whatever the frame rate."""
        for key, held in self.held.items():
            held.seconds += seconds
            due = max(1, math.ceil(held.seconds * STEPS_PER_SECOND - _EPSILON))
            if due > held.steps:
                settings = step(settings, key, self.shift, due - held.steps)
                held.steps = due
        return settings
