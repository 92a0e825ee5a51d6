"""The window's Save scene and Load scene (the panel's buttons, a dropped file): TOML and terrainview PNGs.

Saving writes a new time-stamped file in ./scenes/ by default and never overwrites a file this session did not
write; loading keeps the current scene on any error and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from terrainview.base.atomic_files import OutputError, atomic_output, check_output_path, timestamped_path
from terrainview.base.messages import say
from terrainview.scene.scene_file import SceneError, load_scene, save_scene_toml
from terrainview.scene.settings import SceneSettings

SCENE_FOLDER = Path("scenes")


class SceneFiles:
    """Scene files for one window: the ones this session wrote (and so may overwrite); ``notify`` reports."""

    def __init__(self, notify: Callable[[str], None]) -> None:
        self._notify = notify
        self._saved: set[Path] = set()

    def save(self, settings: SceneSettings, path: Path | None = None) -> Path | None:
        """Save ``settings`` as TOML (a new file in ./scenes/ when no path); the path written, None on failure."""
        try:
            if path is None:
                SCENE_FOLDER.mkdir(exist_ok=True)
                path = timestamped_path(SCENE_FOLDER, "terrainview-", ".toml", f"-seed{settings.seed}")
            ours = path.resolve() in self._saved
            path = check_output_path(path, ours, (".toml",))
            with atomic_output(path, force=ours) as temporary:
                save_scene_toml(settings, temporary)
        except (OutputError, OSError) as error:
            self._notify(f"Scene not saved: {error}")
            return None
        self._saved.add(path.resolve())
        self._notify(f"Saved scene to {path}")
        return path

    def load(self, path: Path, settings: SceneSettings) -> SceneSettings:
        """The scene in ``path`` over ``settings``; on any error a message, and ``settings`` unchanged."""
        try:
            loaded, warnings = load_scene(path, settings)
        except Exception as error:  # whatever a file does, the session goes on (a message, not a crash)
            self._notify(f"Scene not loaded: {error}" if isinstance(error, SceneError)
                         else f"Scene not loaded: {path}: {type(error).__name__}")
            return settings
        self._notify(f"Loaded scene {path}" + (f" ({len(warnings)} warnings)" if warnings else ""))
        for warning in warnings:
            say(f"warning: {warning}")
        return loaded
