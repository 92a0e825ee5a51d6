"""The scene's derived arrays and which settings each depends on (the original's dirty flags).

No GL here: these are the CPU arrays the GPU layer uploads. ``DerivedArrays`` regenerates an array only when
one of its own inputs changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from terrainview.kernels import erosion, fractal, generators, lighting
from terrainview.scene import catalog
from terrainview.scene.settings import ENDLESS, Look, SceneSettings

Progress = Callable[[float], bool]  # progress(fraction) -> False to cancel (raises erosion.Cancelled)
ERODING_TEXIMAGE = "the teximage's map"  # DerivedArrays.eroding while the teximage's own map erodes

# The settings each array is made from; a change anywhere else leaves the array as it is. The generator's own
# settings join in only while that generator is chosen (see generator_inputs).
PROFILE_INPUTS = ("iterations", "seed", "h", "height_scale")  # the 1D surface
MAP_INPUTS = ("seed", "height_scale")  # a 2D map's (surface or teximage), besides its iterations and roughness
CLOUD_INPUTS = ("seed", "cloud_iterations", "cloud_h")
MIN_TEXIMAGE_SIZE = 256
MAX_CPU_TEXTURE_SIZE = 4096  # CPU-made textures (blend, bands) stop here; every GL 3.3 driver takes 4096


def teximage_size(iterations: int, max_texture_size: int = MAX_CPU_TEXTURE_SIZE) -> int:
    """Side of the surface texture: 2**iterations, at least 256, at most the GL (or CPU) limit."""
    return max(MIN_TEXIMAGE_SIZE, min(1 << iterations, max_texture_size))


def generator_inputs(settings: SceneSettings) -> tuple[str, ...]:
    """Settings of the chosen 2D generator.

    A generator whose map at one resolution depends on the surface's (fault blur given in surface cells, image
    passes capped by the surface iterations) adds the iterations, so the teximage made at another resolution
    follows them too.
    """
    entry = catalog.generator(settings)
    idle = entry.idle(settings)
    reads = tuple(name for name in entry.reads if name not in idle)
    return ("generator",) + reads + (("iterations",) if entry.resolution_dependent(settings) else ())


def _roughness(settings: SceneSettings, name: str) -> tuple[str, ...]:
    """The roughness setting ``name`` while the heights depend on it."""
    return (name,) if catalog.reads(settings, name) else ()


# --- erosion: applied to whatever the generator made (surface and teximage alike, so the texture fits) ---------


def erosion_inputs(settings: SceneSettings) -> tuple[str, ...]:
    """Settings of the chosen erosion; none while erosion is off, so its options change nothing then."""
    entry = catalog.erosion(settings)
    hydraulic = catalog.HYDRAULIC_SETTINGS if entry.hydraulic else ()
    thermal = catalog.THERMAL_SETTINGS if entry.thermal else ()
    return ("erosion",) + hydraulic + thermal if hydraulic or thermal else ()


def eroded(heights: np.ndarray, settings: SceneSettings,
           progress: Progress | None = None) -> tuple[np.ndarray, erosion.ErosionResult | None]:
    """``heights`` eroded as ``settings.erosion`` says (hydraulic first, then thermal), and the hydraulic result.

    The hydraulic pass's result comes with its flow and deposit maps (None without one). ``progress`` runs from
    0 to 1 over both.
    """
    entry = catalog.erosion(settings)
    # The hydraulic pass's share of the progress bar; the thermal pass takes the rest.
    split = (0.8 if entry.thermal else 1.0) if entry.hydraulic else 0.0

    def part(start: float, share: float) -> Progress | None:
        return None if progress is None else lambda fraction: progress(start + share * fraction)

    result = None
    if progress is not None and (entry.hydraulic or entry.thermal):
        progress(0.0)  # erosion begins
    if entry.hydraulic:
        result = erosion.hydraulic_erosion(
            heights, settings.seed, settings.erosion_droplets, settings.erosion_strength, settings.erosion_radius,
            settings.erosion_capacity, settings.erosion_deposition, settings.erosion_evaporation,
            settings.erosion_inertia, progress=part(0.0, split))
        result = dataclasses.replace(result, heights=erosion.without_cell_alternation(heights, result.heights))
        heights = result.heights
    if entry.thermal:
        heights = erosion.thermal_erosion(heights, settings.talus, settings.thermal_passes,
                                          progress=part(split, 1.0 - split))
    return heights, result


def eroded_heights(settings: SceneSettings, iterations: int, h: float,
                   progress: Progress | None = None) -> tuple[np.ndarray, erosion.ErosionResult | None]:
    """The generator's heightmap at ``iterations``, eroded when erosion is on."""
    return eroded(catalog.generator(settings).make(settings, iterations, h), settings, progress)


def shown_half_passes(settings: SceneSettings) -> int | None:
    """The half-passes of diamond-square the surface is shown after (--passes), or None when not stepping."""
    if (settings.passes is None or "passes" in catalog.generator(settings).idle(settings)
            or not catalog.reads(settings, "passes")):
        return None
    return settings.passes


# Eroded maps finer than this are shown first at this resolution, then refined (the window's worker).
PREVIEW_ITERATIONS = 9


def preview_settings(settings: SceneSettings) -> SceneSettings | None:
    """A quick stand-in for an eroded surface finer than PREVIEW_ITERATIONS: the same scene at that resolution.

    Erosion is resolution-aware (its droplets, brush and steps are in surface units), so the coarse map is the
    same landscape, made some 60 times faster from iterations 12. None when there is nothing to gain: no
    erosion, a map that coarse already, or a generator whose map depends on its resolution.
    """
    erosion_choice = catalog.erosion(settings)
    if not (erosion_choice.hydraulic or erosion_choice.thermal) or settings.iterations <= PREVIEW_ITERATIONS:
        return None
    if catalog.render_type(settings).dimensions != 2 or catalog.generator(settings).resolution_dependent(settings):
        return None
    return settings.with_iterations(PREVIEW_ITERATIONS)


def showing_passes(settings: SceneSettings) -> bool:
    """Whether the surface is diamond-square part way (--passes below all the half-passes of its iterations)."""
    half_passes = shown_half_passes(settings)
    return half_passes is not None and half_passes < 2 * settings.iterations


def profile_heights(settings: SceneSettings) -> np.ndarray:
    """The 1D render type's surface: a midpoint-displacement profile."""
    return fractal.midpoint_1d(settings.iterations, settings.seed, settings.h, settings.height_scale)


def surface_heights(settings: SceneSettings) -> np.ndarray:
    """The surface: a 1D profile for a 1D render type, else the chosen generator's heightmap (eroded when asked)."""
    if catalog.render_type(settings).dimensions == 1:
        return profile_heights(settings)
    return eroded_heights(settings, settings.iterations, settings.h)[0]


def cloud_colors(settings: SceneSettings) -> np.ndarray:
    """The sky's RGB texture: the cloud heightmap coloured as the original does."""
    return fractal.cloud_colors(fractal.diamond_square(settings.cloud_iterations, settings.seed, settings.cloud_h))


def _values(settings: SceneSettings, names: tuple[str, ...]) -> tuple:
    return tuple(getattr(settings, name) for name in names)


def map_key(settings: SceneSettings, iterations: str, h: str) -> tuple:
    """The values a 2D map is made from at the iterations and roughness settings named (surface's or teximage's).

    Surface and teximage run the same generator and erosion on the same settings, so equal keys are equal maps.
    """
    names = (iterations,) + MAP_INPUTS + _roughness(settings, h) + generator_inputs(settings) + erosion_inputs(settings)
    return _values(settings, names)


def surface_key(settings: SceneSettings) -> tuple:
    """The surface's key: the values of the settings it is made from (1D profile or 2D heightmap)."""
    if catalog.render_type(settings).dimensions == 1:
        return ("1d",) + _values(settings, PROFILE_INPUTS)
    if settings.tile == ENDLESS:
        return ("world",)  # the endless world draws its own regions (scene/world_regions.py)
    return ("2d",) + map_key(settings, "iterations", "h")


def cloud_key(settings: SceneSettings) -> tuple:
    """The cloud colours' key: the values of the settings they are made from."""
    return _values(settings, CLOUD_INPUTS)


def teximage_key(settings: SceneSettings) -> tuple:
    """The teximage heightmap's key: the values of the settings it is made from."""
    return map_key(settings, "teximage_iterations", "teximage_h")


def surface_texture_key(settings: SceneSettings) -> tuple:
    """The CPU-made surface texture's key: the teximage's key and the texture setting."""
    return teximage_key(settings) + (settings.texture,)


def light_key(settings: SceneSettings) -> tuple:
    """The light maps' key: the surface's while the natural look draws a 2D surface, else none are made.

    The sun is not in it: the horizons serve every sun, so moving the sun regenerates nothing. The endless
    world's regions have light maps of their own (world_regions.region_light).
    """
    if settings.look is not Look.NATURAL or catalog.render_type(settings).dimensions == 1 or settings.tile == ENDLESS:
        return ("none",)
    return surface_key(settings)


DEPOSIT_BLUR_UNITS = 0.008  # the softening of the deposit map, in surface units (about the erosion brush's radius)


def water_maps(result: erosion.ErosionResult) -> np.ndarray:
    """Where a hydraulic erosion's water ran (wetness) and what it left (deposit), for the natural look's materials.

    uint8 (cells, cells, 2), 0 to 1 as 0 to 255, every k-th point of the maps like the light maps (at most
    ``lighting.MAX_HORIZON_CELLS`` a side), without the repeated last row and column: the texture wraps.
    """
    stride = max(1, (result.flow.shape[0] - 1) // lighting.MAX_HORIZON_CELLS)
    flow, deposit = result.flow[::stride, ::stride], result.deposit[::stride, ::stride]  # seamless still
    # Droplets drop sediment a brush at a time: softened over a few points, deposits read as fans, not speckle.
    sigma = min(DEPOSIT_BLUR_UNITS * (deposit.shape[0] - 1) / erosion.SURFACE_SIZE, generators.MAX_BLUR)
    deposit = generators.periodic_blur(deposit, sigma)
    maps = np.stack([flow[:-1, :-1], deposit[:-1, :-1]], axis=-1)
    return np.rint(np.clip(maps, 0.0, 1.0) * 255.0).astype(np.uint8)


class GenerationError(ValueError):
    """An array could not be made; ``changed`` holds those regenerated before it.

    Those are valid and must still reach the GPU (their keys already say they are current).
    """

    def __init__(self, message: str, changed: dict[str, np.ndarray | None]) -> None:
        super().__init__(message)
        self.changed = changed


@dataclass
class _Derived:
    key_of: Callable[[SceneSettings], tuple]  # the values of exactly the settings this array is made from
    make: Callable[[SceneSettings], np.ndarray | None]
    key: tuple | None = None
    value: np.ndarray | None = None
    # Arrays made in the same regeneration, by name (the teximage's flow map): they share this array's key.
    companions: Callable[[], dict[str, np.ndarray | None]] = dict

    def update(self, settings: SceneSettings) -> bool:
        key = self.key_of(settings)
        if key == self.key:
            return False
        self.value, self.key = self.make(settings), key
        return True


@dataclass
class DerivedArrays:
    """The surface and teximage heightmaps, the sky's cloud colours, the CPU-made surface texture, light maps.

    Each is regenerated only when its own inputs change, and all are kept current whatever the render type, so
    the window switches modes without waiting for generation. ``surface_texture`` is None when the GPU-drawn
    teximage textures the surface.

    ``progress`` (optional) is passed to the erosion: called with the fraction done, False cancels it
    (``erosion.Cancelled``, reported as a GenerationError). ``teximage_erosion`` holds the hydraulic erosion of
    the teximage heights (its flow and deposit maps texture the surface), None without one; ``surface_water``
    the surface's own (``water_maps``, the natural look's materials), None without one.
    """

    progress: Progress | None = None
    surface: _Derived = field(init=False)
    clouds: _Derived = field(default_factory=lambda: _Derived(cloud_key, cloud_colors))
    teximage: _Derived = field(init=False)
    surface_texture: _Derived = field(init=False)
    light: _Derived = field(init=False)
    teximage_erosion: erosion.ErosionResult | None = field(default=None, init=False)
    # The map the running erosion works on, for its progress: "" the surface's, else ERODING_TEXIMAGE.
    eroding: str = field(default="", init=False)
    surface_water: np.ndarray | None = field(default=None, init=False)
    # The eroded 2D maps made by the running update, by map_key: a teximage made like the surface takes the
    # surface's. Emptied when the update ends, so the surface's erosion maps are not kept.
    _maps: dict[tuple, tuple[np.ndarray, erosion.ErosionResult | None]] = field(default_factory=dict, init=False,
                                                                                repr=False)

    # In dependency order; the surface's and the teximage's erosion maps come with them (``surface_water``,
    # ``teximage_flow``; None without a hydraulic pass).
    NAMES = ("surface", "clouds", "teximage", "surface_texture", "light")

    def __post_init__(self) -> None:
        self.surface = _Derived(surface_key, self._make_surface, companions=self._surface_water)
        self.teximage = _Derived(teximage_key, self._make_teximage, companions=self._teximage_flow)
        self.surface_texture = _Derived(surface_texture_key, self._make_surface_texture)
        self.light = _Derived(light_key, self._make_light)

    def _eroded_map(self, settings: SceneSettings, iterations: str,
                    h: str) -> tuple[np.ndarray, erosion.ErosionResult | None]:
        """``eroded_heights`` at the iterations and roughness settings named, made once per update and key."""
        key = map_key(settings, iterations, h)
        if key not in self._maps:
            self.eroding = "" if iterations == "iterations" else ERODING_TEXIMAGE
            self._maps[key] = eroded_heights(settings, getattr(settings, iterations), getattr(settings, h),
                                             self.progress)
        return self._maps[key]

    def _make_surface(self, settings: SceneSettings) -> np.ndarray:
        self.surface_water = None
        if catalog.render_type(settings).dimensions == 1:
            return profile_heights(settings)  # no map to share
        if settings.tile == ENDLESS:  # nothing draws the tile's map: a flat 3 x 3 stands in, made at once
            return np.zeros((3, 3), dtype=np.float32)
        if showing_passes(settings):  # the generator's own steps, before any erosion
            return fractal.diamond_square_passes(settings.iterations, settings.passes or 0, settings.seed,
                                                 settings.h, settings.height_scale)
        heights, result = self._eroded_map(settings, "iterations", "h")
        # Made in either look: it costs little beside the erosion, and a change of look then waits for nothing.
        self.surface_water = None if result is None else water_maps(result)
        return heights

    def _surface_water(self) -> dict[str, np.ndarray | None]:
        """Where water ran over the surface just made (``water_maps``), None without a hydraulic pass."""
        return {"surface_water": self.surface_water}

    def _make_teximage(self, settings: SceneSettings) -> np.ndarray:
        heights, self.teximage_erosion = self._eroded_map(settings, "teximage_iterations", "teximage_h")
        return heights

    def _teximage_flow(self) -> dict[str, np.ndarray | None]:
        """Where water ran over the teximage heightmap just made, None without a hydraulic pass."""
        return {"teximage_flow": None if self.teximage_erosion is None else self.teximage_erosion.flow}

    def _make_surface_texture(self, settings: SceneSettings) -> np.ndarray | None:
        make = catalog.texture(settings).make
        if make is None:
            return None
        heights = self.teximage.value
        if heights is None:
            raise ValueError("the surface texture needs the teximage heights first")
        maps = self.teximage_erosion  # wet channels and deposits, when the hydraulic pass ran
        flow, deposit = (None, None) if maps is None else (maps.flow, maps.deposit)
        return make(heights, teximage_size(settings.teximage_iterations), flow, deposit)

    def _make_light(self, settings: SceneSettings) -> np.ndarray | None:
        """The natural look's horizons, sky view and broad slope of the surface (``lighting.light_maps``), or None."""
        if light_key(settings) == ("none",):
            return None
        if self.surface.value is None:
            raise ValueError("the light maps need the surface heights first")
        return lighting.light_maps(self.surface.value)

    def keys(self, settings: SceneSettings) -> tuple:
        """What the arrays would be made from: equal keys mean nothing to regenerate."""
        return tuple(getattr(self, name).key_of(settings) for name in self.NAMES)

    def update(self, settings: SceneSettings) -> dict[str, np.ndarray | None]:
        """Bring every array up to date; returns the regenerated ones by name, with the arrays made with them.

        They are safe to hand to another thread: regeneration replaces arrays, it never writes into one it has
        returned. Raises GenerationError, carrying what was regenerated before the failure.
        """
        changed: dict[str, np.ndarray | None] = {}
        try:
            for name in self.NAMES:
                derived = getattr(self, name)
                if derived.update(settings):
                    changed[name] = derived.value
                    changed.update(derived.companions())
        except (ValueError, OSError, erosion.Cancelled) as error:
            raise GenerationError(str(error), changed) from error
        finally:
            self._maps.clear()
        return changed
