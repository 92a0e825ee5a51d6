"""Saved scenes: TOML files, and the text chunks inside every PNG terrainview writes.

A scene is ``SceneSettings`` plus a format ``version`` and the program that wrote it. Loading keeps working
across versions: unknown keys are reported as warnings, not errors; missing keys take their defaults.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import tomli_w
from PIL import PngImagePlugin

from terrainview import __version__
from terrainview.base.resources import assets_dir
from terrainview.kernels import erosion as erosion_kernels
from terrainview.kernels.lod import full_mesh_triangles
from terrainview.scene import catalog
from terrainview.scene.bounded_reader import SceneError, parse_json, parse_toml, read_scene_source
from terrainview.scene.derived_arrays import map_key, teximage_key
from terrainview.scene.seed_image import file_problem
from terrainview.scene.settings import ENDLESS, REPEAT, LevelOfDetail, SceneSettings, SettingsError, base_type

__all__ = ["SceneError", "load_scene", "load_scene_with_extras", "png_text_chunks", "save_scene_toml",
           "scene_document"]

# 2: tile = "endless" is the endless world; version 1's "endless" (the surface repeated) reads as "repeat".
SCENE_FORMAT_VERSION = 2
PNG_SCENE_KEY = "terrainview-scene"  # the machine-readable entry; the others are for people
PNG_KEY_PREFIX = "terrainview."
TOP_LEVEL_KEYS = ("version", "program", "title", "scene", "keyframe")  # title: a preset's one line


def scene_document(settings: SceneSettings) -> dict[str, Any]:
    """The whole scene as plain data (None-valued settings are left out, as TOML has no null)."""
    values = {name: value for name, value in settings.to_dict().items() if value is not None}
    return {"version": SCENE_FORMAT_VERSION, "program": f"terrainview {__version__}", "scene": values}


def png_text_chunks(settings: SceneSettings, extra: dict[str, str] | None = None) -> PngImagePlugin.PngInfo:
    """PNG text chunks: one human-readable ``terrainview.<name>`` per setting, plus one JSON document."""
    document = scene_document(settings)
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", document["program"])
    for name, value in document["scene"].items():
        info.add_text(PNG_KEY_PREFIX + name, str(value).lower() if isinstance(value, bool) else str(value))
    for key, value in (extra or {}).items():
        info.add_text(PNG_KEY_PREFIX + key, value)
    info.add_text(PNG_SCENE_KEY, json.dumps(document, sort_keys=True))
    return info


def picture_extras(size: tuple[int, int], supersample: int) -> dict[str, str]:
    """The text chunks a rendered PNG carries besides its scene: its size and supersampling.

    So ``render --scene shot.png`` makes the same picture.
    """
    return {"size": f"{size[0]}x{size[1]}", "supersample": str(supersample)}


def save_scene_toml(settings: SceneSettings, path: Path) -> None:
    """Write a scene as TOML (callers decide about overwriting and atomicity)."""
    path.write_text("# terrainview scene\n" + tomli_w.dumps(scene_document(settings)), encoding="utf-8")


def load_scene(path: str | Path, base: SceneSettings | None = None) -> tuple[SceneSettings, list[str]]:
    """Read a scene from a TOML file or a terrainview PNG. Returns the settings and any warnings."""
    settings, warnings, _ = load_scene_with_extras(path, base)
    return settings, warnings


def load_scene_with_extras(source: str | Path,
                           base: SceneSettings | None = None) -> tuple[SceneSettings, list[str], dict[str, str]]:
    """``load_scene``'s settings and warnings, and the PNG's ``terrainview.<key>`` entries that are not settings.

    Such entries are, for example, a picture's size and supersampling; a TOML scene has none. The file is read
    once for all three.
    """
    kind, content = read_scene_source(source)
    path = Path(source)
    if kind == "toml":
        document = parse_toml(path, content)
    elif PNG_SCENE_KEY not in content:
        raise SceneError(f"{path}: this PNG carries no terrainview scene")
    else:
        document = parse_json(path, content[PNG_SCENE_KEY])
    if not isinstance(document, dict):
        raise SceneError(f"{path}: its terrainview scene is damaged")
    settings, warnings = _settings_from_document(path, document, base or SceneSettings())
    bounded, more = within_file_costs(path, [settings])
    return settings.replace(**bounded), warnings + more, _png_extras(content) if kind == "png" else {}


SETTING_FIELDS = {spec.name: spec for spec in dataclasses.fields(SceneSettings)}


def file_value(spec: dataclasses.Field, value: Any) -> Any:
    """A setting's value from a scene file, as the settings take it: 1 is 1.0 for a number setting.

    TOML and JSON make no distinction between them that matters here.
    """
    if base_type(spec) == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _png_extras(texts: dict[str, str]) -> dict[str, str]:
    return {key[len(PNG_KEY_PREFIX):]: value for key, value in texts.items()
            if key.startswith(PNG_KEY_PREFIX) and key[len(PNG_KEY_PREFIX):] not in SETTING_FIELDS}


def scene_from_document(source: str | Path, document: dict[str, Any]) -> tuple[SceneSettings, list[str]]:
    """The settings of an already parsed scene document (a flight file's, a video's metadata), with warnings.

    What they cost is bounded by the caller (``within_file_costs``), over every state the file draws.
    """
    return _settings_from_document(Path(source), document, SceneSettings())


def _ignored(path: Path, what: str, keys: list[str]) -> list[str]:
    """One warning for any number of unknown keys: the count and the first few names."""
    if not keys:
        return []
    shown = ", ".join(repr(key[:40]) for key in keys[:5]) + (", ..." if len(keys) > 5 else "")
    return [f"{path}: {len(keys):,} unknown {what}{'s' if len(keys) > 1 else ''} ignored ({shown})"]


def _settings_from_document(path: Path, document: dict[str, Any],
                            base: SceneSettings) -> tuple[SceneSettings, list[str]]:
    warnings: list[str] = []
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SceneError(f"{path}: not a terrainview scene (no integer 'version' key)")
    if version > SCENE_FORMAT_VERSION:
        warnings.append(f"{path}: written by a newer terrainview (scene version {version}); "
                        "settings this version does not know are ignored")
    warnings += _ignored(path, "top-level key", [key for key in document if key not in TOP_LEVEL_KEYS])
    values = document.get("scene", {})
    if not isinstance(values, dict):
        raise SceneError(f"{path}: 'scene' must be a table of settings")
    warnings += _ignored(path, "setting", sorted(set(values) - set(SETTING_FIELDS)))
    given = {}
    for name, spec in SETTING_FIELDS.items():
        if name in values:
            given[name] = file_value(spec, values[name])
        elif spec.metadata.get("optional"):
            given[name] = spec.default  # written as absent (TOML has no null): off, whatever the base says
    if version < 2 and given.get("tile") == ENDLESS:
        given["tile"] = REPEAT  # what the file showed when it was written
    try:
        settings = base.replace(**given)
    except SettingsError as error:
        raise SceneError(f"{path}: {error}") from None
    problem = image_problem(path, settings.seed_image)
    if problem:
        raise SceneError(f"{path}: seed_image: {problem}")
    return settings, warnings


def image_problem(source: Path, name: str) -> str | None:
    """Why the seed image a file names cannot be used, found when the file is read (not frames later).

    A file from someone else must not make terrainview read any picture on the machine and bake it into an output:
    a scene, PNG, video or flight may name an image only under its own folder, the current folder or terrainview's
    assets (symbolic links followed); the command line's --seed-image may name any.
    """
    if not name:
        return None
    if "\0" in name:
        return f"{name}: not a file name (it holds a NUL character)"
    image = Path(name)
    folders = (source.resolve().parent, Path.cwd().resolve(), assets_dir().resolve())
    if not any(image.resolve().is_relative_to(folder) for folder in folders):
        return (f"{name}: a scene may read an image only under its own folder, the current folder or "
                "terrainview's assets (copy the image beside the scene)")
    problem = file_problem(image)  # missing, too large or no image: said now, not frames into a video
    return None if problem is None else f"{name}: {problem}"


# A file from someone else must not cost more than its user would choose: its ``lod = "off"`` is taken only while
# the full mesh stays this small (about a second a frame on a software renderer); --lod off on the command line,
# which overrides the file, insists.
FILE_FULL_MESH_TRIANGLES = 16_000_000


def costs_too_much(settings: SceneSettings) -> bool:
    """Whether ``settings`` (from a file) ask for the full mesh of a surface too large to draw each frame."""
    if settings.lod is not LevelOfDetail.OFF or catalog.render_type(settings).dimensions == 1:
        return False
    if not isinstance(settings.tile, int):
        return True  # endless: a ring of tiles around the eye, each the full mesh
    return full_mesh_triangles(settings.iterations, settings.tile) > FILE_FULL_MESH_TRIANGLES


# Likewise its erosion: taken only while it would take about this long on one core (the default hydraulic
# erosion at iterations 12 takes some 10 s); --erosion on the command line insists.
FILE_EROSION_SECONDS = 60.0


def erosion_seconds(settings: SceneSettings) -> float:
    """About how long the erosion ``settings`` ask for would take on one core (0 without erosion).

    Every map made is eroded: the teximage's at its own iterations, in every mode, and the 2D surface's when it is
    another map (the same keys the derived arrays make them by).
    """
    choice = catalog.erosion(settings)
    if not (choice.hydraulic or choice.thermal):
        return 0.0
    sizes = {teximage_key(settings): settings.teximage_iterations}  # each distinct map by its key, and its size
    if catalog.render_type(settings).dimensions == 2:
        sizes[map_key(settings, "iterations", "h")] = settings.iterations
    seconds = 0.0
    for iterations in sizes.values():
        hydraulic, thermal = erosion_kernels.estimated_seconds(1 << iterations, settings.erosion_droplets,
                                                               settings.erosion_radius, settings.thermal_passes)
        seconds += hydraulic * choice.hydraulic + thermal * choice.thermal
    return seconds


def within_file_costs(path: Path, states: list[SceneSettings]) -> tuple[dict[str, Any], list[str]]:
    """What a file's settings must be held to, given every state it draws, and one warning for each thing held.

    The states are a scene's one, or a flight's scene and keyframes. Level of detail is turned on where a full
    mesh would be too large to draw each frame; erosion is left out where it would take too long.
    """
    bounded: dict[str, Any] = {}
    warnings: list[str] = []
    if any(costs_too_much(state) for state in states):
        warnings.append(too_costly_warning(path))
        bounded["lod"] = LevelOfDetail.ON
    slowest = max(states, key=erosion_seconds)  # level of detail does not change what erosion costs
    if (seconds := erosion_seconds(slowest)) > FILE_EROSION_SECONDS:
        warnings.append(too_long_erosion_warning(path, slowest, seconds))
        bounded["erosion"] = "none"
    return bounded, warnings


def too_long_erosion_warning(path: Path, settings: SceneSettings, seconds: float) -> str:
    """What the user is told when a file's erosion is left out."""
    return (f"{path}: asks for erosion that would take about {seconds / 60:.0f} min here; drawn without it (give "
            f"--erosion {settings.erosion} to insist)")


def too_costly_warning(path: Path) -> str:
    """What the user is told when a file's full mesh is drawn with level of detail instead."""
    return (f"{path}: asks for the full mesh of a surface over {FILE_FULL_MESH_TRIANGLES // 1_000_000}M triangles "
            "(lod = off); drawn with level of detail instead (give --lod off to insist)")
