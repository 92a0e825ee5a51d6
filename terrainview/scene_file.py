"""Saved scenes: TOML files, and the text chunks inside every PNG terrainview writes.

A scene is ``SceneSettings`` plus a format ``version`` and the program that wrote it. Loading keeps working
across versions: unknown keys are reported as warnings, not errors; missing keys take their defaults.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path
from typing import Any

import tomli_w
from PIL import Image, PngImagePlugin, UnidentifiedImageError

from . import __version__
from .settings import SceneSettings, SettingsError, base_type

SCENE_FORMAT_VERSION = 1
PNG_SCENE_KEY = "terrainview-scene"  # the machine-readable entry; the others are for people
PNG_KEY_PREFIX = "terrainview."


class SceneError(Exception):
    """A scene file that cannot be read; the message names the file and the problem."""


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


def save_scene_toml(settings: SceneSettings, path: Path) -> None:
    """Write a scene as TOML (callers decide about overwriting and atomicity)."""
    path.write_text("# terrainview scene\n" + tomli_w.dumps(scene_document(settings)), encoding="utf-8")


def load_scene(path: str | Path, base: SceneSettings | None = None) -> tuple[SceneSettings, list[str]]:
    """Read a scene from a TOML file or a terrainview PNG. Returns the settings and any warnings."""
    path = Path(path)
    if not path.is_file():
        raise SceneError(f"{path}: no such scene file")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SceneError(f"{path}: cannot read it ({error.strerror or error})") from None
    document = _read_png(path) if raw.startswith(b"\x89PNG\r\n\x1a\n") else _read_toml(path, raw)
    return _settings_from_document(path, document, base or SceneSettings())


def scene_from_document(source: str | Path, document: dict[str, Any]) -> tuple[SceneSettings, list[str]]:
    """The settings of an already parsed scene document (a flight file's, a video's metadata), with warnings."""
    return _settings_from_document(Path(source), document, SceneSettings())


def _read_png(path: Path) -> dict[str, Any]:
    try:
        with Image.open(path) as image:
            image.load()
            text = dict(getattr(image, "text", {}))
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise SceneError(f"{path}: not a readable PNG ({error})") from None
    if PNG_SCENE_KEY not in text:
        raise SceneError(f"{path}: this PNG carries no terrainview scene")
    try:
        document = json.loads(text[PNG_SCENE_KEY])
    except json.JSONDecodeError as error:
        raise SceneError(f"{path}: its terrainview scene is damaged ({error.msg})") from None
    if not isinstance(document, dict):
        raise SceneError(f"{path}: its terrainview scene is damaged")
    return document


def _read_toml(path: Path, raw: bytes) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SceneError(f"{path}: neither a PNG nor a TOML text file") from None
    except tomllib.TOMLDecodeError as error:
        raise SceneError(f"{path}: not valid TOML ({error})") from None


def _settings_from_document(path: Path, document: dict[str, Any],
                            base: SceneSettings) -> tuple[SceneSettings, list[str]]:
    warnings: list[str] = []
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SceneError(f"{path}: not a terrainview scene (no integer 'version' key)")
    if version > SCENE_FORMAT_VERSION:
        warnings.append(f"{path}: written by a newer terrainview (scene version {version}); "
                        "settings this version does not know are ignored")
    warnings += [f"{path}: unknown top-level key {key!r} ignored"
                 for key in document if key not in ("version", "program", "scene", "keyframe")]
    values = document.get("scene", {})
    if not isinstance(values, dict):
        raise SceneError(f"{path}: 'scene' must be a table of settings")
    known = {spec.name for spec in dataclasses.fields(SceneSettings)}
    for key in sorted(set(values) - known):
        warnings.append(f"{path}: unknown setting {key!r} ignored")
    given = {key: value for key, value in values.items() if key in known}
    # TOML and JSON have no distinction that matters between 1 and 1.0 for float settings.
    for spec in dataclasses.fields(SceneSettings):
        value = given.get(spec.name)
        if isinstance(value, int) and not isinstance(value, bool) and base_type(spec) == "float":
            given[spec.name] = float(given[spec.name])
    for spec in dataclasses.fields(SceneSettings):
        if spec.metadata.get("optional") and spec.name not in given:
            given[spec.name] = spec.default  # written as absent (TOML has no null): off, whatever the base says
    try:
        return base.replace(**given), warnings
    except SettingsError as error:
        raise SceneError(f"{path}: {error}") from None
