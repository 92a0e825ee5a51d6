"""The scene's derived arrays and which settings each depends on (the original's dirty flags).

No GL here: these are the CPU arrays the GPU layer uploads. ``DerivedArrays`` regenerates an array only when
one of its own inputs changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import fractal
from .settings import SceneSettings

# The settings each array is made from; a change anywhere else leaves the array as it is.
SURFACE_INPUTS = ("mode", "generator", "iterations", "h", "seed", "height_scale", "fault_iterations", "blur",
                  "seed_image", "seed_passes")
CLOUD_INPUTS = ("seed", "cloud_iterations", "cloud_h")
TEXIMAGE_INPUTS = ("seed", "teximage_iterations", "teximage_h")
SURFACE_TEXTURE_INPUTS = TEXIMAGE_INPUTS + ("texture",)
MIN_TEXIMAGE_SIZE = 256
MAX_CPU_TEXTURE_SIZE = 4096  # CPU-made textures (blend, bands) stop here; every GL 3.3 driver takes 4096


def teximage_size(iterations: int, max_texture_size: int = MAX_CPU_TEXTURE_SIZE) -> int:
    """Side of the surface texture: 2**iterations, at least 256, at most the GL (or CPU) limit."""
    return max(MIN_TEXIMAGE_SIZE, min(1 << iterations, max_texture_size))


def surface_heights(settings: SceneSettings) -> np.ndarray:
    """The surface: a 1D profile in 1d mode, else the chosen generator's heightmap."""
    if settings.mode == "1d":
        return fractal.midpoint_1d(settings.iterations, settings.seed, settings.h, settings.height_scale)
    if settings.generator == "fault":
        from .generators import fault_formation

        return fault_formation(settings.iterations, settings.seed, settings.fault_iterations, settings.blur,
                               settings.height_scale)
    if settings.seed_image:
        from .generators import seeded_diamond_square

        return seeded_diamond_square(settings.seed_image, settings.seed_passes, settings.iterations,
                                     settings.seed, settings.h, settings.height_scale)
    return fractal.diamond_square(settings.iterations, settings.seed, settings.h, settings.height_scale)


def cloud_heights(settings: SceneSettings) -> np.ndarray:
    return fractal.diamond_square(settings.cloud_iterations, settings.seed, settings.cloud_h)


def teximage_heights(settings: SceneSettings) -> np.ndarray:
    return fractal.diamond_square(settings.teximage_iterations, settings.seed, settings.teximage_h)


@dataclass
class _Derived:
    inputs: tuple[str, ...]
    make: Callable[[SceneSettings], np.ndarray]
    key: tuple | None = None
    value: np.ndarray | None = None
    version: int = 0  # bumped on every regeneration, so GPU uploads can follow

    def update(self, settings: SceneSettings) -> bool:
        key = tuple(getattr(settings, name) for name in self.inputs)
        if key == self.key:
            return False
        self.value, self.key = self.make(settings), key
        self.version += 1
        return True


@dataclass
class DerivedArrays:
    """Surface, cloud and teximage heightmaps and the CPU-made surface texture, each regenerated only when
    its own inputs change. ``surface_texture`` is None when the GPU-drawn teximage textures the surface."""

    surface: _Derived = field(default_factory=lambda: _Derived(SURFACE_INPUTS, surface_heights))
    clouds: _Derived = field(default_factory=lambda: _Derived(CLOUD_INPUTS, cloud_heights))
    teximage: _Derived = field(default_factory=lambda: _Derived(TEXIMAGE_INPUTS, teximage_heights))
    surface_texture: _Derived = field(init=False)
    last_generation_seconds: float = 0.0

    NAMES = ("surface", "clouds", "teximage", "surface_texture")  # in dependency order

    def __post_init__(self) -> None:
        self.surface_texture = _Derived(SURFACE_TEXTURE_INPUTS, self._make_surface_texture)

    def _make_surface_texture(self, settings: SceneSettings) -> np.ndarray | None:
        if settings.texture == "teximage":
            return None
        from . import texturing

        make = texturing.blend_texture if settings.texture == "blend" else texturing.bands_texture
        return make(self.teximage.value, teximage_size(settings.teximage_iterations))

    def update(self, settings: SceneSettings) -> dict[str, np.ndarray | None]:
        """Bring every array up to date; returns the regenerated ones by name (safe to hand to another thread:
        regeneration replaces arrays, it never writes into one it has returned)."""
        started = time.perf_counter()
        changed = {name: getattr(self, name).value for name in self.NAMES if getattr(self, name).update(settings)}
        if changed:
            self.last_generation_seconds = time.perf_counter() - started
        return changed
