"""Presets: scene files shipped with terrainview, listed, loaded and drawn like any other scene."""

from __future__ import annotations

import pytest

from terrainview.scene.presets import load_preset, preset_names, preset_title
from terrainview.scene.settings import SceneSettings

PRESETS = ("original-1997", "eroded-range-sunset", "archipelago", "fault-plateau", "endless-flight")


def test_the_presets_are_shipped_with_a_line_each_the_original_first():
    assert preset_names()[0] == "original-1997" and set(preset_names()) == set(PRESETS)
    assert all(len(preset_title(name)) > 20 for name in PRESETS)
    assert load_preset("original-1997") == SceneSettings(), "the default stays the original's"
    assert load_preset("eroded-range-sunset").look == "natural"


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_renders(tmp_path, call_main, name):
    import numpy as np
    from PIL import Image

    status, out, err = call_main("render", "-o", tmp_path / f"{name}.png", "--preset", name, "--size", "48x27",
                                 "--iterations", "5")
    assert status == 0 and all("warning:" in line for line in err.splitlines()), err
    with Image.open(tmp_path / f"{name}.png") as image:
        assert image.size == (48, 27) and len(np.unique(np.asarray(image.convert("L")))) > 5, "not a blank"


def test_preset_list_prints_every_preset_on_a_line(call_main):
    status, out, _ = call_main("--preset", "list")
    assert status == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == preset_names() and all(len(line) > 30 for line in lines)


@pytest.mark.parametrize("arguments, fragment", [
    (["--preset", "alps"], "no preset 'alps'; the presets are original-1997, "),
    (["--preset", "archipelago", "--scene", "x.toml"], "not both"),
])
def test_a_bad_preset_is_one_line(tmp_path, call_main, usage_error, arguments, fragment):
    status, _, err = call_main("render", "-o", tmp_path / "x.png", *arguments)
    usage_error(status, err, fragment)
    assert not (tmp_path / "x.png").exists()
