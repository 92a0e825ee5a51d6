"""Where the shaders and assets live: inside the installed package, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # terrainview/, above this base/ package


def _resource_dir(name: str) -> Path:
    # A built wheel carries the top-level folders as terrainview/<name>; a source checkout has them beside
    # the package.
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"terrainview's {name}/ folder is missing from {_PACKAGE} and {_PACKAGE.parent}")


def shaders_dir() -> Path:
    """The shaders/ folder (GLSL), from the installed package or the source checkout."""
    return _resource_dir("shaders")


def assets_dir() -> Path:
    """The assets/ folder (images), from the installed package or the source checkout."""
    return _resource_dir("assets")
