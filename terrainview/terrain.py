"""The scene's derived arrays and which settings each depends on (the original's dirty flags).

No GL here: these are the CPU arrays the GPU layer uploads. ``DerivedArrays`` regenerates an array only when
one of its own inputs changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import fractal
from .settings import SceneSettings

# The settings each array is made from; a change anywhere else leaves the array as it is. The generator's own
# settings join in only while that generator is chosen (see generator_inputs).
SURFACE_INPUTS = ("iterations", "h", "seed", "height_scale")
CLOUD_INPUTS = ("seed", "cloud_iterations", "cloud_h")
TEXIMAGE_INPUTS = ("seed", "teximage_iterations", "teximage_h")
MIN_TEXIMAGE_SIZE = 256
MAX_CPU_TEXTURE_SIZE = 4096  # CPU-made textures (blend, bands) stop here; every GL 3.3 driver takes 4096


def teximage_size(iterations: int, max_texture_size: int = MAX_CPU_TEXTURE_SIZE) -> int:
    """Side of the surface texture: 2**iterations, at least 256, at most the GL (or CPU) limit."""
    return max(MIN_TEXIMAGE_SIZE, min(1 << iterations, max_texture_size))


def generator_inputs(settings: SceneSettings) -> tuple[str, ...]:
    """Settings of the chosen 2D generator. Fault blur is given in surface cells and the image seeds as many
    passes as the surface can take, so the teximage made at another resolution depends on the surface
    iterations too."""
    if settings.generator == "fault":
        return ("generator", "fault_iterations", "blur", "iterations")
    if settings.seed_image:
        return ("generator", "seed_image", "seed_passes", "iterations")
    return ("generator",)


def generated_heights(settings: SceneSettings, iterations: int, h: float) -> np.ndarray:
    """The chosen 2D generator's heightmap at ``iterations`` (surface and teximage share it, so the texture
    fits the surface whatever the generator)."""
    if settings.generator == "fault":
        from .generators import fault_formation

        # Blur is given in surface cells: the same width in world units at this resolution.
        return fault_formation(iterations, settings.seed, settings.fault_iterations, settings.blur,
                               settings.height_scale, blur_iterations=settings.iterations)
    if settings.seed_image:
        from .generators import seed_passes_used, seeded_diamond_square

        # The surface may take fewer passes from the image than asked (it keeps one pass of detail); the
        # teximage takes the same number, so it fits the surface.
        passes = seed_passes_used(settings.seed_passes, settings.iterations)
        return seeded_diamond_square(settings.seed_image, passes, iterations, settings.seed, h,
                                     settings.height_scale)
    return fractal.diamond_square(iterations, settings.seed, h, settings.height_scale)


def surface_heights(settings: SceneSettings) -> np.ndarray:
    """The surface: a 1D profile in 1d mode, else the chosen generator's heightmap."""
    if settings.mode == "1d":
        return fractal.midpoint_1d(settings.iterations, settings.seed, settings.h, settings.height_scale)
    return generated_heights(settings, settings.iterations, settings.h)


def cloud_heights(settings: SceneSettings) -> np.ndarray:
    return fractal.diamond_square(settings.cloud_iterations, settings.seed, settings.cloud_h)


def teximage_heights(settings: SceneSettings) -> np.ndarray:
    return generated_heights(settings, settings.teximage_iterations, settings.teximage_h)


def _values(settings: SceneSettings, names: tuple[str, ...]) -> tuple:
    return tuple(getattr(settings, name) for name in names)


def surface_key(settings: SceneSettings) -> tuple:
    if settings.mode == "1d":
        return ("1d",) + _values(settings, SURFACE_INPUTS)
    return ("2d",) + _values(settings, SURFACE_INPUTS + generator_inputs(settings))


def cloud_key(settings: SceneSettings) -> tuple:
    return _values(settings, CLOUD_INPUTS)


def teximage_key(settings: SceneSettings) -> tuple:
    return _values(settings, TEXIMAGE_INPUTS + generator_inputs(settings))


def surface_texture_key(settings: SceneSettings) -> tuple:
    return teximage_key(settings) + (settings.texture,)


class GenerationError(ValueError):
    """An array could not be made; ``changed`` holds those regenerated before it, which are valid and must
    still reach the GPU (their keys already say they are current)."""

    def __init__(self, message: str, changed: dict[str, np.ndarray | None]) -> None:
        super().__init__(message)
        self.changed = changed


@dataclass
class _Derived:
    key_of: Callable[[SceneSettings], tuple]  # the values of exactly the settings this array is made from
    make: Callable[[SceneSettings], np.ndarray | None]
    key: tuple | None = None
    value: np.ndarray | None = None

    def update(self, settings: SceneSettings) -> bool:
        key = self.key_of(settings)
        if key == self.key:
            return False
        self.value, self.key = self.make(settings), key
        return True


@dataclass
class DerivedArrays:
    """Surface, cloud and teximage heightmaps and the CPU-made surface texture, each regenerated only when
    its own inputs change. ``surface_texture`` is None when the GPU-drawn teximage textures the surface."""

    surface: _Derived = field(default_factory=lambda: _Derived(surface_key, surface_heights))
    clouds: _Derived = field(default_factory=lambda: _Derived(cloud_key, cloud_heights))
    teximage: _Derived = field(default_factory=lambda: _Derived(teximage_key, teximage_heights))
    surface_texture: _Derived = field(init=False)

    NAMES = ("surface", "clouds", "teximage", "surface_texture")  # in dependency order

    def __post_init__(self) -> None:
        self.surface_texture = _Derived(surface_texture_key, self._make_surface_texture)

    def _make_surface_texture(self, settings: SceneSettings) -> np.ndarray | None:
        if settings.texture == "teximage":
            return None
        from . import texturing

        make = texturing.blend_texture if settings.texture == "blend" else texturing.bands_texture
        return make(self.teximage.value, teximage_size(settings.teximage_iterations))

    def keys(self, settings: SceneSettings) -> tuple:
        """What the arrays would be made from: equal keys mean nothing to regenerate."""
        return tuple(getattr(self, name).key_of(settings) for name in self.NAMES)

    def update(self, settings: SceneSettings) -> dict[str, np.ndarray | None]:
        """Bring every array up to date; returns the regenerated ones by name (safe to hand to another thread:
        regeneration replaces arrays, it never writes into one it has returned). Raises GenerationError,
        carrying what was regenerated before the failure."""
        changed: dict[str, np.ndarray | None] = {}
        for name in self.NAMES:
            derived = getattr(self, name)
            try:
                if derived.update(settings):
                    changed[name] = derived.value
            except (ValueError, OSError) as error:
                raise GenerationError(str(error), changed) from error
        return changed
