"""Undo and redo of scene changes: every change from the panel, keys, dropped files and loaded scenes.

A change is a step once it settles: a slider dragged over many frames is one step, committed when the mouse lets
go. Camera moves are not steps (they would drown the history): undo and redo change the scene and leave the
camera where it is. The history holds at most ``MAX_STEPS`` steps; a new change after an undo drops the redo
branch, as people expect.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from terrainview.scene import camera
from terrainview.scene.settings import SceneSettings

MAX_STEPS = 200  # a step is two small frozen settings: a few hundred kilobytes at most


@dataclass(frozen=True)
class Step:
    """One change: the scene before and after it (camera fields as they were), and what it says."""

    before: SceneSettings
    after: SceneSettings
    label: str


def scene_of(settings: SceneSettings) -> SceneSettings:
    """The settings without the camera: what a step is made of."""
    return settings.replace(**{name: SceneSettings.__dataclass_fields__[name].default
                               for name in camera.CAMERA_FIELDS})


def _shown(value: object) -> str:
    if value == "":  # an empty path: "seed image none to sketch.png", not two spaces
        return "none"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def describe(before: SceneSettings, after: SceneSettings) -> str:
    """What changed, for the panel's buttons: "H 0.70 to 0.45", or how many settings changed.

    In words: the panel's font has the Latin-1 characters only, and drew an arrow as "?".
    """
    changed = [spec.name for spec in dataclasses.fields(SceneSettings)
               if spec.name not in camera.CAMERA_FIELDS and getattr(before, spec.name) != getattr(after, spec.name)]
    if len(changed) == 1:
        name = changed[0]
        label = "H" if name == "h" else name.replace("_", " ")
        return f"{label} {_shown(getattr(before, name))} to {_shown(getattr(after, name))}"
    return f"{len(changed)} settings"


class SceneHistory:
    """The steps behind and ahead of the current scene, and the change still being made (a drag)."""

    def __init__(self, settings: SceneSettings) -> None:
        self._settled = scene_of(settings)  # the scene as of the last step (or the start)
        self.undo_steps: list[Step] = []
        self.redo_steps: list[Step] = []

    def observe(self, settings: SceneSettings, interacting: bool) -> None:
        """Called every frame with the current settings; a change becomes a step once nothing is being dragged."""
        scene = scene_of(settings)
        if interacting or scene == self._settled:
            return
        self.undo_steps.append(Step(self._settled, scene, describe(self._settled, scene)))
        del self.undo_steps[:-MAX_STEPS]
        self.redo_steps.clear()
        self._settled = scene

    def undo(self, settings: SceneSettings) -> SceneSettings:
        """The settings before the last step (the camera stays); unchanged with nothing to undo."""
        if not self.undo_steps:
            return settings
        step = self.undo_steps.pop()
        self.redo_steps.append(step)
        return self._become(settings, step.before)

    def redo(self, settings: SceneSettings) -> SceneSettings:
        """The settings after the step last undone (the camera stays); unchanged with nothing to redo."""
        if not self.redo_steps:
            return settings
        step = self.redo_steps.pop()
        self.undo_steps.append(step)
        return self._become(settings, step.after)

    def _become(self, settings: SceneSettings, scene: SceneSettings) -> SceneSettings:
        self._settled = scene
        return scene.replace(**{name: getattr(settings, name) for name in camera.CAMERA_FIELDS})
