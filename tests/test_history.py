"""Undo and redo: steps of scene changes, a drag as one step, the camera left alone, a bounded history."""

from __future__ import annotations

import random

import pytest

from terrainview.scene.settings import SceneSettings
from terrainview.window.history import MAX_STEPS, SceneHistory, describe

CHANGES = {"h": (0.3, 0.45, 0.9), "iterations": (3, 5, 7), "seed": (1, 2, 99), "mode": ("rendered", "clouds"),
           "look": ("natural", "original"), "water_level": (None, 0.1), "sun_elevation": (5.0, 60.0)}


def test_random_changes_undo_back_to_the_start_and_redo_to_the_end():
    chooser = random.Random(7)
    start = SceneSettings()
    history, settings, seen = SceneHistory(start), start, [start]
    for _ in range(40):
        name = chooser.choice(sorted(CHANGES))
        settings = settings.replace(**{name: chooser.choice(CHANGES[name])})
        history.observe(settings, interacting=False)
        if settings != seen[-1]:
            seen.append(settings)
    assert len(history.undo_steps) == len(seen) - 1
    for expected in reversed(seen[:-1]):
        settings = history.undo(settings)
        assert settings == expected
    assert history.undo(settings) == settings, "nothing more to undo"
    for expected in seen[1:]:
        settings = history.redo(settings)
        assert settings == expected


def test_a_drag_is_one_step_and_the_camera_is_never_a_step():
    start = SceneSettings()
    history = SceneHistory(start)
    dragged = start
    for h in (0.69, 0.6, 0.52, 0.45):  # one drag: the mouse held over four frames
        dragged = dragged.replace(h=h)
        history.observe(dragged, interacting=True)
    history.observe(dragged, interacting=False)  # let go
    flown = dragged.replace(yrot=40.0, pitch=12.0, ztrans=-2.0)
    history.observe(flown, interacting=False)
    assert [step.label for step in history.undo_steps] == ["H 0.70 to 0.45"]
    undone = history.undo(flown)
    assert undone.h == 0.7 and (undone.yrot, undone.pitch, undone.ztrans) == (40.0, 12.0, -2.0), "camera stays"


def test_a_new_change_after_an_undo_drops_the_redo_branch():
    history, settings = SceneHistory(SceneSettings()), SceneSettings()
    for seed in (1, 2, 3):
        settings = settings.replace(seed=seed)
        history.observe(settings, interacting=False)
    settings = history.undo(history.undo(settings))
    assert settings.seed == 1 and len(history.redo_steps) == 2
    settings = settings.replace(h=0.2)
    history.observe(settings, interacting=False)
    assert history.redo_steps == [] and history.redo(settings) == settings


def test_the_history_is_bounded():
    history, settings = SceneHistory(SceneSettings()), SceneSettings()
    for seed in range(1, MAX_STEPS + 50):
        settings = settings.replace(seed=seed)
        history.observe(settings, interacting=False)
    assert len(history.undo_steps) == MAX_STEPS


@pytest.mark.parametrize("before, after, label", [
    (SceneSettings(), SceneSettings(h=0.45), "H 0.70 to 0.45"),
    (SceneSettings(), SceneSettings(mode="rendered"), "mode lines to rendered"),
    (SceneSettings(), SceneSettings(seed=3, iterations=5), "2 settings"),
    (SceneSettings(), SceneSettings(seed_image="sketch.png"), "seed image none to sketch.png"),  # not two spaces
])
def test_a_step_says_what_changed(before, after, label):
    assert describe(before, after) == label
