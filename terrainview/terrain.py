"""The scene's derived arrays and which settings each depends on (the original's dirty flags).

No GL here: these are the CPU arrays the GPU layer uploads. ``DerivedArrays`` regenerates an array only when
one of its own inputs changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import fractal
from .erosion import Cancelled, ErosionResult
from .settings import SceneSettings

Progress = Callable[[float], bool]  # progress(fraction) -> False to cancel (raises erosion.Cancelled)

# The settings each array is made from; a change anywhere else leaves the array as it is. The generator's own
# settings join in only while that generator is chosen (see generator_inputs).
SURFACE_INPUTS = ("iterations", "h", "seed", "height_scale")
CLOUD_INPUTS = ("seed", "cloud_iterations", "cloud_h")
TEXIMAGE_INPUTS = ("seed", "teximage_iterations", "teximage_h")
HYDRAULIC_INPUTS = ("seed", "erosion_droplets", "erosion_strength", "erosion_radius", "erosion_capacity",
                    "erosion_deposition", "erosion_evaporation", "erosion_inertia")
THERMAL_INPUTS = ("talus", "thermal_passes")
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


# --- erosion: applied to whatever the generator made (surface and teximage alike, so the texture fits) ---------


def erosion_inputs(settings: SceneSettings) -> tuple[str, ...]:
    """Settings of the chosen erosion; none while erosion is off, so its options change nothing then."""
    if settings.erosion == "none":
        return ()
    hydraulic = HYDRAULIC_INPUTS if settings.erosion in ("hydraulic", "both") else ()
    thermal = THERMAL_INPUTS if settings.erosion in ("thermal", "both") else ()
    return ("erosion",) + hydraulic + thermal


def eroded(heights: np.ndarray, settings: SceneSettings,
           progress: Progress | None = None) -> tuple[np.ndarray, ErosionResult | None]:
    """``heights`` eroded as ``settings.erosion`` says (hydraulic first, then thermal), and the hydraulic pass's
    result with its flow and deposit maps (None without one). ``progress`` runs from 0 to 1 over both."""
    from . import erosion

    hydraulic = settings.erosion in ("hydraulic", "both")
    thermal = settings.erosion in ("thermal", "both")
    split = 0.8 if hydraulic and thermal else 1.0  # the hydraulic pass's share of the progress bar

    def part(start: float, share: float) -> Progress | None:
        return None if progress is None else lambda fraction: progress(start + share * fraction)

    result = None
    if hydraulic:
        result = erosion.hydraulic_erosion(
            heights, settings.seed, settings.erosion_droplets, settings.erosion_strength, settings.erosion_radius,
            settings.erosion_capacity, settings.erosion_deposition, settings.erosion_evaporation,
            settings.erosion_inertia, progress=part(0.0, split))
        heights = result.heights
    if thermal:
        heights = erosion.thermal_erosion(heights, settings.talus, settings.thermal_passes,
                                          progress=part(1.0 - split if hydraulic else 0.0, 1.0 - split))
    return heights, result


def eroded_heights(settings: SceneSettings, iterations: int, h: float,
                   progress: Progress | None = None) -> tuple[np.ndarray, ErosionResult | None]:
    """The generator's heightmap at ``iterations``, eroded when erosion is on."""
    heights = generated_heights(settings, iterations, h)
    return eroded(heights, settings, progress) if settings.erosion != "none" else (heights, None)


def surface_heights(settings: SceneSettings, progress: Progress | None = None) -> np.ndarray:
    """The surface: a 1D profile in 1d mode, else the chosen generator's heightmap (eroded when asked)."""
    if settings.mode == "1d":
        return fractal.midpoint_1d(settings.iterations, settings.seed, settings.h, settings.height_scale)
    return eroded_heights(settings, settings.iterations, settings.h, progress)[0]


def cloud_heights(settings: SceneSettings) -> np.ndarray:
    return fractal.diamond_square(settings.cloud_iterations, settings.seed, settings.cloud_h)


def teximage_heights(settings: SceneSettings) -> np.ndarray:
    return eroded_heights(settings, settings.teximage_iterations, settings.teximage_h)[0]


def _values(settings: SceneSettings, names: tuple[str, ...]) -> tuple:
    return tuple(getattr(settings, name) for name in names)


def surface_key(settings: SceneSettings) -> tuple:
    if settings.mode == "1d":
        return ("1d",) + _values(settings, SURFACE_INPUTS)
    return ("2d",) + _values(settings, SURFACE_INPUTS + generator_inputs(settings) + erosion_inputs(settings))


def cloud_key(settings: SceneSettings) -> tuple:
    return _values(settings, CLOUD_INPUTS)


def teximage_key(settings: SceneSettings) -> tuple:
    return _values(settings, TEXIMAGE_INPUTS + generator_inputs(settings) + erosion_inputs(settings))


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
    its own inputs change. ``surface_texture`` is None when the GPU-drawn teximage textures the surface.

    ``progress`` (optional) is passed to the erosion: called with the fraction done, False cancels it
    (``erosion.Cancelled``, reported as a GenerationError). ``teximage_erosion`` holds the hydraulic erosion of
    the teximage heights (its flow and deposit maps texture the surface), None without one."""

    progress: Progress | None = None
    surface: _Derived = field(init=False)
    clouds: _Derived = field(default_factory=lambda: _Derived(cloud_key, cloud_heights))
    teximage: _Derived = field(init=False)
    surface_texture: _Derived = field(init=False)
    teximage_erosion: ErosionResult | None = field(default=None, init=False)

    NAMES = ("surface", "clouds", "teximage", "surface_texture")  # in dependency order

    def __post_init__(self) -> None:
        self.surface = _Derived(surface_key, lambda settings: surface_heights(settings, self.progress))
        self.teximage = _Derived(teximage_key, self._make_teximage)
        self.surface_texture = _Derived(surface_texture_key, self._make_surface_texture)

    def _make_teximage(self, settings: SceneSettings) -> np.ndarray:
        heights, self.teximage_erosion = eroded_heights(settings, settings.teximage_iterations,
                                                        settings.teximage_h, self.progress)
        return heights

    def _make_surface_texture(self, settings: SceneSettings) -> np.ndarray | None:
        if settings.texture == "teximage":
            return None
        from . import texturing

        size = teximage_size(settings.teximage_iterations)
        heights = self.teximage.value
        if heights is None:
            raise ValueError("the surface texture needs the teximage heights first")
        # The erosion's maps texture the surface only when there are any (wet channels, deposits).
        erosion = self.teximage_erosion
        if settings.texture == "blend":
            if erosion is None:
                return texturing.blend_texture(heights, size)
            return texturing.blend_texture(heights, size, flow=erosion.flow, deposit=erosion.deposit)
        if erosion is None:
            return texturing.bands_texture(heights, size)
        return texturing.bands_texture(heights, size, flow=erosion.flow)

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
            except (ValueError, OSError, Cancelled) as error:
                raise GenerationError(str(error), changed) from error
        return changed
