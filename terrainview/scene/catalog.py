"""The catalog: every render type and every surface generator, as plain data (no GL).

Settings, the derived arrays, the panel, the renderer, export and the window read these entries instead of
comparing mode or generator names. Adding a generator or a render type is one entry here plus its own code:
the kernel that makes its heights, or the ``Renderer`` method that draws it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

import numpy as np

from terrainview.kernels import fractal, fractal_numba, generators, texturing
from terrainview.scene.seed_image import load_seed_image


class SceneChoices(Protocol):
    """The settings the catalog's entries read.

    ``SceneSettings`` has them all; the catalog names them here rather than importing the settings, which take
    their choices from the catalog (one way, no circle).
    """

    @property
    def mode(self) -> str:
        """The render type's name."""

    @property
    def generator(self) -> str:
        """The surface generator's name."""

    @property
    def texture(self) -> str:
        """The surface texture's name."""

    @property
    def erosion(self) -> str:
        """The erosion choice's name."""

    @property
    def iterations(self) -> int:
        """The surface iterations."""

    @property
    def seed(self) -> int:
        """The random seed."""

    @property
    def height_scale(self) -> float:
        """The height scale."""

    @property
    def seed_image(self) -> str:
        """The seed image's path, or empty."""

    @property
    def seed_passes(self) -> int:
        """Passes taken from the seed image."""

    @property
    def fault_iterations(self) -> int:
        """Fault formation's number of faults."""

    @property
    def blur(self) -> float:
        """Fault formation's blur sigma, in surface cells."""


@dataclass(frozen=True)
class RenderType:
    """One render type: the kind of surface it draws (``render.renderer.DRAWERS`` holds how each is drawn).

    It names no arrays: ``DerivedArrays`` keeps every array current whatever the mode, so a mode switch (P) is
    drawn at once instead of waiting for the arrays of the new mode.
    """

    name: str
    label: str
    dimensions: int  # 1: a profile (midpoint displacement), 2: the heightmap surface
    max_iterations: int
    toggle: str = "rendered"  # the render type P switches to (rendered and wireframe drawing of the surface)
    level_of_detail: bool = False  # draws the surface mesh, with level of detail (lod.py) when it is too large


@dataclass(frozen=True)
class Widget:
    """A panel widget bound to one setting.

    ``high`` narrows the slider where the option's range is too wide to drag through (typed values still reach
    the whole range).
    """

    setting: str
    label: str
    kind: str = "slider"  # "slider", "path" (a file name applied on Enter) or "passes" (0 to all half-passes)
    high: float | None = None


@dataclass(frozen=True)
class Generator:
    """A 2D surface generator: the settings it reads and how it makes a heightmap.

    ``make(settings, iterations, h)`` returns the float32 (2**iterations + 1)**2 heightmap; surface and teximage
    both call it (at their own iterations and roughness), so the texture fits the surface. ``reads`` lists the
    generator-specific settings whose values change its heights, ``resolution_dependent`` says whether the map at
    one resolution also depends on the surface iterations (blur in surface cells, image passes).
    """

    name: str
    label: str
    reads: tuple[str, ...]
    make: Callable[[SceneChoices, int, float], np.ndarray]
    widgets: tuple[Widget, ...]
    uses_roughness: bool = True  # the surface and teximage H settings shape its heights
    # Settings of ``reads`` that these settings leave without effect (the seed-image passes without an image):
    # changing them regenerates nothing, though the panel still shows them, ready for an image.
    idle: Callable[[SceneChoices], tuple[str, ...]] = lambda settings: ()
    resolution_dependent: Callable[[SceneChoices], bool] = lambda settings: False
    # The kernel modules ``make`` runs for these settings (the set-up's warm-up compiles them).
    kernels: Callable[[SceneChoices], tuple[ModuleType, ...]] = lambda settings: (fractal_numba,)


def _diamond_square(settings: SceneChoices, iterations: int, h: float) -> np.ndarray:
    if settings.seed_image:
        # The surface may take fewer passes from the image than asked (it keeps one pass of detail); the
        # teximage takes the same number, so it fits the surface.
        passes = generators.seed_passes_used(settings.seed_passes, settings.iterations)
        grey = load_seed_image(settings.seed_image)
        return generators.seeded_diamond_square(grey, passes, iterations, settings.seed, h, settings.height_scale)
    return fractal.diamond_square(iterations, settings.seed, h, settings.height_scale)


def _fault(settings: SceneChoices, iterations: int, h: float) -> np.ndarray:
    # Blur is given in surface cells: the same width in world units at every resolution.
    return generators.fault_formation(iterations, settings.seed, settings.fault_iterations, settings.blur,
                                      settings.height_scale, blur_iterations=settings.iterations)


RENDER_TYPES: dict[str, RenderType] = {entry.name: entry for entry in (
    RenderType("1d", "1D midpoint displacement", 1, fractal.MAX_ITERATIONS_1D),
    RenderType("lines", "2D mesh / lines", 2, fractal.MAX_ITERATIONS_2D, level_of_detail=True),
    RenderType("rendered", "2D mesh / rendered", 2, fractal.MAX_ITERATIONS_2D, toggle="lines",
               level_of_detail=True),
    RenderType("clouds", "2D mesh / clouds", 2, fractal.MAX_ITERATIONS_2D),
    RenderType("teximage", "2D mesh / teximage", 2, fractal.MAX_ITERATIONS_2D),
)}

GENERATORS: dict[str, Generator] = {entry.name: entry for entry in (
    Generator("diamond-square", "Diamond-square", ("seed_image", "seed_passes", "passes"), _diamond_square,
              (Widget("seed_image", "Seed image", kind="path"), Widget("seed_passes", "Seed-image passes"),
               Widget("passes", "Half-passes shown", kind="passes")),
              idle=lambda settings: ("passes",) if settings.seed_image else ("seed_passes",),
              resolution_dependent=lambda settings: bool(settings.seed_image),
              kernels=lambda settings: (fractal_numba, generators) if settings.seed_image else (fractal_numba,)),
    Generator("fault", "Fault formation", ("fault_iterations", "blur"), _fault,
              (Widget("fault_iterations", "Faults", high=1000), Widget("blur", "Blur sigma", high=8.0)),
              uses_roughness=False, resolution_dependent=lambda settings: settings.blur > 0.0,
              kernels=lambda settings: (fractal_numba, generators)),
)}

# Settings that only some generators read: the panel shows each only while the chosen generator reads it.
ROUGHNESS_SETTINGS = ("h", "teximage_h")
GENERATOR_SETTINGS = frozenset(ROUGHNESS_SETTINGS).union(*(entry.reads for entry in GENERATORS.values()))
# What a 2D-only consumer (export, the OBJ mesh) uses in place of a 1D render type.
SURFACE_RENDER_TYPE = "lines"


@dataclass(frozen=True)
class Texture:
    """A surface texture of rendered mode: made on the CPU, or the teximage itself drawn by GL.

    A made texture comes from the teximage heightmap at a side length (with the hydraulic erosion's flow and
    deposit maps when there are any); with ``make`` None the texture is the teximage itself, drawn by GL.
    """

    name: str
    label: str
    make: Callable[[np.ndarray, int, np.ndarray | None, np.ndarray | None], np.ndarray] | None


TEXTURES: dict[str, Texture] = {entry.name: entry for entry in (
    Texture("teximage", "Teximage (the original's)", None),
    Texture("blend", "Blended tiles",
            lambda heights, size, flow, deposit: texturing.blend_texture(heights, size, flow=flow, deposit=deposit)),
    Texture("bands", "Colour bands",
            lambda heights, size, flow, deposit: texturing.bands_texture(heights, size, flow=flow)),
)}


# The erosion passes' panel widgets; their settings, with the seed that places the droplets, are what each
# pass reads.
HYDRAULIC_WIDGETS = (
    Widget("erosion_droplets", "Droplets per unit area", high=100000.0),
    Widget("erosion_strength", "Erosion strength"),
    Widget("erosion_radius", "Brush radius", high=0.05),
    Widget("erosion_capacity", "Sediment capacity"),
    Widget("erosion_deposition", "Deposition"),
    Widget("erosion_evaporation", "Evaporation"),
    Widget("erosion_inertia", "Inertia"),
)
THERMAL_WIDGETS = (Widget("talus", "Talus angle (deg)"), Widget("thermal_passes", "Thermal passes", high=100))
HYDRAULIC_SETTINGS = ("seed",) + tuple(widget.setting for widget in HYDRAULIC_WIDGETS)
THERMAL_SETTINGS = tuple(widget.setting for widget in THERMAL_WIDGETS)


@dataclass(frozen=True)
class Erosion:
    """An erosion choice: which passes run (hydraulic droplets first, then thermal slides)."""

    name: str
    label: str
    hydraulic: bool
    thermal: bool

    @property
    def widgets(self) -> tuple[Widget, ...]:
        """The panel widgets of the passes this choice runs: hydraulic ones first, then thermal ones."""
        return (HYDRAULIC_WIDGETS if self.hydraulic else ()) + (THERMAL_WIDGETS if self.thermal else ())


EROSIONS: dict[str, Erosion] = {entry.name: entry for entry in (
    Erosion("none", "None", False, False),
    Erosion("hydraulic", "Hydraulic (droplets)", True, False),
    Erosion("thermal", "Thermal (talus slides)", False, True),
    Erosion("both", "Hydraulic, then thermal", True, True),
)}
SHADINGS = ("none", "slope")


def render_type(settings: SceneChoices) -> RenderType:
    """The render type named by the settings' mode."""
    return RENDER_TYPES[settings.mode]


def generator(settings: SceneChoices) -> Generator:
    """The surface generator the settings choose."""
    return GENERATORS[settings.generator]


def texture(settings: SceneChoices) -> Texture:
    """The surface texture the settings choose."""
    return TEXTURES[settings.texture]


def erosion(settings: SceneChoices) -> Erosion:
    """The erosion choice the settings name."""
    return EROSIONS[settings.erosion]


def reads(settings: SceneChoices, name: str) -> bool:
    """Whether the chosen generator's heights depend on the setting ``name``.

    Always true for settings that are not generator-specific.
    """
    if name not in GENERATOR_SETTINGS:
        return True
    entry = generator(settings)
    return entry.uses_roughness if name in ROUGHNESS_SETTINGS else name in entry.reads
