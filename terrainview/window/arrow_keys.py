"""Arrow-key flight, as in the original: a tap moves one step, a held key repeats at 30 steps per second.

Pure Python (no window, no GL) so that tests can drive it at any frame rate. Orbit camera, the original's
steps: Left/Right turn 3 degrees, Up/Down move 0.05 along Z, or along Y with Shift held. Fly camera:
Left/Right turn the eye about itself 3 degrees, Up/Down move it 0.05 along its heading, Shift+Up/Down climb
and descend; the wheel changes the speed (the move steps' multiplier). Given the ground (``ArrowKeyCamera.ground``),
the eye never goes below a clearance above it, in either mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

from terrainview.scene import camera
from terrainview.scene.settings import CameraMode, SceneSettings, within_range

YAW_STEP_DEGREES = 3.0
MOVE_STEP = 0.05
STEPS_PER_SECOND = 30.0
DRAG_DEGREES_PER_PIXEL = 0.3
SPEED_STEP = 1.25  # one wheel notch multiplies or divides the fly speed by this
SPEED_RANGE = (1.0 / 64.0, 64.0)
_EPSILON = 1e-6  # absorbs float error when frame times add up to exactly n / 30 s


class Key(Enum):
    """A camera movement key: the arrows (and WASD in the window)."""

    LEFT = "left"
    RIGHT = "right"
    UP = "up"
    DOWN = "down"


def step(settings: SceneSettings, key: Key, shift: bool, count: int = 1, speed: float = 1.0) -> SceneSettings:
    """The camera after ``count`` steps for ``key`` (fly moves are ``speed`` times the original's step)."""
    if settings.camera is CameraMode.FLY:
        return _fly_step(settings, key, shift, count, speed)
    if key is Key.LEFT:
        return _moved(settings, yrot=settings.yrot + YAW_STEP_DEGREES * count)
    if key is Key.RIGHT:
        return _moved(settings, yrot=settings.yrot - YAW_STEP_DEGREES * count)
    distance = MOVE_STEP * count * (1 if key is Key.UP else -1)
    if shift:
        return _moved(settings, ytrans=settings.ytrans + distance)
    return _moved(settings, ztrans=settings.ztrans + distance)


def _moved(settings: SceneSettings, **camera_fields: float) -> SceneSettings:
    """``settings`` with the camera fields changed, each kept within its range (held keys never end a session)."""
    return settings.replace(**{name: within_range(name, value) for name, value in camera_fields.items()})


def _fly_step(settings: SceneSettings, key: Key, shift: bool, count: int, speed: float) -> SceneSettings:
    if key in (Key.LEFT, Key.RIGHT):  # turn the eye about itself: left looks left
        return _moved(settings, yrot=settings.yrot + YAW_STEP_DEGREES * count * (-1 if key is Key.LEFT else 1))
    distance = MOVE_STEP * speed * count * (1 if key is Key.UP else -1)
    if shift:
        return _moved(settings, eye_y=settings.eye_y + distance)
    x, z = camera.heading(settings)
    return _moved(settings, eye_x=settings.eye_x + distance * x, eye_z=settings.eye_z + distance * z)


def drag(settings: SceneSettings, dx: float, dy: float) -> SceneSettings:
    """Mouse drag: horizontal turns (yaw), vertical pitches within the pitch's range (+-80 degrees)."""
    return _moved(settings, yrot=settings.yrot + dx * DRAG_DEGREES_PER_PIXEL,
                  pitch=settings.pitch + dy * DRAG_DEGREES_PER_PIXEL)


@dataclass
class _Held:
    seconds: float = 0.0
    steps: int = 0


@dataclass
class ArrowKeyCamera:
    """Which flight keys are held, and how many steps each has made."""

    held: dict[Key, _Held] = field(default_factory=dict)
    shift: bool = False
    speed: float = 1.0  # fly camera: multiplier of the move step
    ground: camera.Ground | None = None  # the surface height at world (x, z), once a surface is known

    def _step(self, settings: SceneSettings, key: Key, count: int = 1, shift: bool | None = None) -> SceneSettings:
        """``count`` steps for ``key``, with Shift as held unless ``shift`` says otherwise, kept above the ground."""
        shift = self.shift if shift is None else shift
        return camera.keep_above_ground(step(settings, key, shift, count, self.speed), self.ground)

    def press(self, settings: SceneSettings, key: Key, into_frame: float = 0.0) -> SceneSettings:
        """A key went down ``into_frame`` seconds after the last frame's time step: one step at once.

        A tap is one original step. The time of the frame before the press is not time held: at 17 fps a
        quick tap would otherwise make two steps.
        """
        self.held[key] = _Held(seconds=-max(0.0, into_frame), steps=1)
        return self._step(settings, key)

    def drag(self, settings: SceneSettings, dx: float, dy: float) -> SceneSettings:
        """Mouse drag: look around (both modes), the eye kept above the ground."""
        return camera.keep_above_ground(drag(settings, dx, dy), self.ground)

    def wheel(self, settings: SceneSettings, notches: float) -> SceneSettings:
        """Mouse wheel: the fly camera's speed, or in orbit mode moves along Z as the original's Up/Down."""
        if not notches:
            return settings
        if settings.camera is CameraMode.FLY:
            low, high = SPEED_RANGE
            self.speed = min(high, max(low, self.speed * SPEED_STEP ** notches))
            return settings
        key = Key.UP if notches > 0 else Key.DOWN  # along Z even with Shift held: the wheel has no Y move
        return self._step(settings, key, max(1, round(abs(notches))), shift=False)

    def release(self, key: Key) -> None:
        """Stop stepping for ``key``."""
        self.held.pop(key, None)

    def release_all(self) -> None:
        """Stop stepping for every held key."""
        self.held.clear()

    def advance(self, settings: SceneSettings, seconds: float) -> SceneSettings:
        """``seconds`` passed since the last frame's time step: step each held key up to ceil(held time * 30).

        Holding a key for one second so makes 30 steps whatever the frame rate.
        """
        for key, held in self.held.items():
            held.seconds += seconds
            due = max(1, math.ceil(held.seconds * STEPS_PER_SECOND - _EPSILON))
            if due > held.steps:
                settings = self._step(settings, key, due - held.steps)
                held.steps = due
        return settings
