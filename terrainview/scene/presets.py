"""Presets: named scenes shipped with terrainview (``assets/presets/*.toml``), somewhere good to start.

A preset is a scene file like any other, read through the same bounded reader; its ``title`` is the one line
``--preset list`` and the panel show. Saving one's own is just *Save scene*.
"""

from __future__ import annotations

from pathlib import Path

from terrainview.base.resources import assets_dir
from terrainview.scene.bounded_reader import SceneError, parse_toml, read_scene_source
from terrainview.scene.scene_file import load_scene
from terrainview.scene.settings import SceneSettings

LIST = "list"  # --preset list: print the presets, one line each


def preset_folder() -> Path:
    """Where the presets are: assets/presets, in the installed package or the source checkout."""
    return assets_dir() / "presets"


def preset_names() -> list[str]:
    """Every preset's name (its file's stem), the original's first."""
    names = sorted(path.stem for path in preset_folder().glob("*.toml"))
    return sorted(names, key=lambda name: name != "original-1997")


def preset_path(name: str) -> Path:
    """The file of preset ``name``; SceneError naming the presets there are for any other name."""
    if name not in preset_names():
        raise SceneError(f"--preset: no preset {name!r}; the presets are {', '.join(preset_names())} "
                         f"(--preset {LIST} says what each shows)")
    return preset_folder() / f"{name}.toml"


def preset_title(name: str) -> str:
    """A preset's one line."""
    path = preset_path(name)
    _, text = read_scene_source(path)
    title = parse_toml(path, text).get("title", "")
    return title if isinstance(title, str) else ""


def load_preset(name: str) -> SceneSettings:
    """The settings of preset ``name``."""
    return load_scene(preset_path(name))[0]


def preset_list() -> str:
    """``--preset list``: every preset with its line."""
    names = preset_names()
    width = max(map(len, names))
    return "\n".join(f"{name.ljust(width)}  {preset_title(name)}" for name in names)
