"""Scene settings: one frozen dataclass with every option, validated in one place.

The command line, the options panel and saved scenes all go through ``SceneSettings``: each field's
metadata (flag, range, help) drives argparse and the panel's widgets, and ``__post_init__`` validates.
Change a setting with ``settings.replace(name=value)``, which validates again.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from terrainview.base.parsing import FLOAT32_TINY, argument_type, describe_range, parse_integer, parse_real
from terrainview.kernels import erosion as erosion_kernels
from terrainview.kernels import fractal, generators, world
from terrainview.kernels.lod import DEFAULT_ERROR_PIXELS
from terrainview.scene import catalog

MODES = tuple(catalog.RENDER_TYPES)
MAX_TILE = 8
ENDLESS = "endless"  # --tile endless: the endless world, which never repeats (kernels/world.py)
REPEAT = "repeat"  # --tile repeat: the one seamless surface repeated without end around the eye


class CameraMode(StrEnum):
    """The camera: orbit (the original's: the world turns about its origin) or fly (an eye that moves freely)."""

    ORBIT = "orbit"
    FLY = "fly"


class LevelOfDetail(StrEnum):
    """Level of detail of large surfaces: on (the full mesh whenever it fits the budget) or off (always)."""

    ON = "on"
    OFF = "off"


CAMERAS = tuple(CameraMode)


class Look(StrEnum):
    """How rendered mode draws the surface: the original's (1997) or natural (sun, shadows, sky, air, water)."""

    ORIGINAL = "original"
    NATURAL = "natural"


MAX_TEXT_CHARS = 4096  # a path (Linux's PATH_MAX); anything longer is not a setting


def _short(value: Any) -> str:
    """A value for a one-line message: its repr, cut short (a scene file may hold a megabyte in one value)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class SettingsError(ValueError):
    """A setting out of range or of the wrong kind; the message names the option, its value and the range."""


def _option(default: Any, help: str, *, low: float | None = None, high: float | None = None,
            choices: tuple[str, ...] | None = None, group: str = "scene", **extra: Any) -> Any:
    metadata = {"help": help, "low": low, "high": high, "choices": choices, "group": group, **extra}
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class SceneSettings:
    """Every scene option with its default and metadata (flag, range, help), validated on creation."""

    # The original's "View Options" (SPEC table) and their defaults.
    mode: str = _option("lines", "render type", choices=MODES)
    iterations: int = _option(2, "surface iterations (1-12; 1-16 in 1d mode)", low=1, high=fractal.MAX_ITERATIONS_2D)
    h: float = _option(0.7, "surface roughness H", low=0.0, high=1.0)
    cloud_iterations: int = _option(5, "cloud iterations", low=1, high=fractal.MAX_ITERATIONS_2D)
    cloud_h: float = _option(0.7, "cloud roughness H", low=0.0, high=1.0)
    teximage_iterations: int = _option(8, "teximage iterations", low=1, high=fractal.MAX_ITERATIONS_2D)
    teximage_h: float = _option(0.7, "teximage roughness H", low=0.0, high=1.0)
    tile: int | str = _option(1, "draw tile x tile copies of the surface; 'repeat': copies without end; "
                              "'endless': a world that never repeats", low=1, high=MAX_TILE,
                              words=(ENDLESS, REPEAT), metavar="T")
    world_octaves: int = _option(2, "endless world: octaves above one 2-unit region, for larger landforms (each "
                                 "doubles their size)", low=0, high=world.MAX_OCTAVES)
    seed: int = _option(0, "random seed of surface, clouds and teximage", low=0, high=fractal.MAX_SEED)
    height_scale: float = _option(1.0, "height scale (0 < X <= 100)", low=0.0, high=fractal.MAX_HEIGHT_SCALE,
                                  low_exclusive=True)
    invert: bool = _option(False, "lines: white on black instead of black on white",
                           flag="--invert", off_flag="--no-invert")
    antialias: bool = _option(True, "lines: antialiased lines", flag="--aa", off_flag="--no-aa")
    linear: bool = _option(True, "rendered: linear texture filtering", flag="--linear", off_flag="--nearest")
    # Generators and texturing from the companion articles.
    generator: str = _option("diamond-square", "surface generator", choices=tuple(catalog.GENERATORS))
    fault_iterations: int = _option(200, "fault formation: number of fault lines", low=1,
                                    high=generators.MAX_FAULT_ITERATIONS)
    blur: float = _option(0.0, "fault formation: Gaussian blur sigma in cells (0 = off)", low=0.0,
                        high=generators.MAX_BLUR)
    seed_image: str = _option("", "grey-scale image whose values seed the first passes", metavar="FILE")
    seed_passes: int = _option(2, "passes taken from --seed-image before diamond-square adds detail",
                               low=1, high=generators.MAX_SEED_PASSES)
    passes: int | None = _option(None, "diamond-square: the surface after its first K half-passes (diamond, "
                                 "square, ...), 0 to 2 x iterations (absent: all)", low=0,
                                 high=2 * fractal.MAX_ITERATIONS_2D, optional=True, integer=True, metavar="K")
    texture: str = _option("teximage", "surface texture in rendered mode", choices=tuple(catalog.TEXTURES))
    shading: str = _option("none", "slope shading of the surface", choices=catalog.SHADINGS)
    water_level: float | None = _option(None, "height of a translucent water plane (off when absent)",
                                        low=-100.0, high=100.0, optional=True)
    # The look of rendered mode; the sun's angles are the natural look's, and follow a flight's curves like the
    # camera's (so a flight can be a sunrise).
    look: Look = _option(Look.ORIGINAL, "rendered mode's look: the original's, or natural light, sky and water",
                         choices=tuple(Look), closed_set=Look)
    sun_azimuth: float = _option(135.0, "natural look: compass bearing the sunlight comes from (0 north, 90 east)",
                                 low=0.0, high=360.0, metavar="DEG", angle=True)
    sun_elevation: float = _option(35.0, "natural look: the sun's height above the horizon in degrees",
                                   low=-6.0, high=90.0, metavar="DEG", angle=True)
    # Erosion (terrainview.kernels.erosion), applied to whatever the generator made; lengths in surface units (the map
    # is 2 across), heights as displayed.
    erosion: str = _option("none", "erosion after generation: hydraulic droplets, thermal slides or both",
                           choices=tuple(catalog.EROSIONS))
    erosion_droplets: float = _option(erosion_kernels.DROPLETS, "hydraulic: droplets per unit area (the map is 2 x 2)",
                                      low=0.0, high=erosion_kernels.MAX_DROPLETS)
    erosion_strength: float = _option(erosion_kernels.STRENGTH, "hydraulic: erosion rate (0-1)", low=0.0, high=1.0)
    erosion_radius: float = _option(erosion_kernels.RADIUS, "hydraulic: erosion brush radius in surface units",
                                    low=0.0, high=erosion_kernels.MAX_RADIUS, low_exclusive=True)
    erosion_capacity: float = _option(erosion_kernels.CAPACITY, "hydraulic: sediment capacity factor", low=0.0,
                                      high=erosion_kernels.MAX_CAPACITY)
    erosion_deposition: float = _option(erosion_kernels.DEPOSITION, "hydraulic: deposition rate (0-1)", low=0.0,
                                        high=1.0)
    erosion_evaporation: float = _option(erosion_kernels.EVAPORATION, "hydraulic: evaporation per step (0-1)", low=0.0,
                                         high=1.0)
    erosion_inertia: float = _option(erosion_kernels.INERTIA, "hydraulic: droplet inertia (0-1)", low=0.0, high=1.0)
    talus: float = _option(erosion_kernels.TALUS, "thermal: talus angle in degrees, on the surface as drawn", low=0.0,
                           high=erosion_kernels.MAX_TALUS, metavar="DEG")
    thermal_passes: int = _option(erosion_kernels.THERMAL_PASSES, "thermal: passes; each moves half of a cell's "
                                  "steepest excess, so slopes approach the talus angle gradually (at 20 passes a "
                                  "quarter are still steeper, at 500 a tenth)", low=0,
                                  high=erosion_kernels.MAX_THERMAL_PASSES, metavar="N")
    # Level of detail (terrainview/lod.py): the full mesh is drawn whenever it fits the budget, or always when off.
    lod: LevelOfDetail = _option(LevelOfDetail.ON, "level of detail of large surfaces (off: always the full mesh)",
                                 choices=tuple(LevelOfDetail), group="render", closed_set=LevelOfDetail)
    lod_error: float = _option(DEFAULT_ERROR_PIXELS, "level of detail: the largest on-screen grid step in output "
                               "pixels; a frame draws finer, down to 1, while its triangle budget allows",
                               low=0.01, high=64.0, group="render", metavar="PX")
    # The camera (terrainview/camera.py). Orbit, the original's: view = translate(xtrans, ytrans, ztrans) *
    # rotateX(pitch) * rotateY(yrot); fly: view = rotateX(pitch) * rotateY(yrot) * translate(-eye).
    camera: CameraMode = _option(CameraMode.ORBIT, "camera: orbit (the world turns about its origin) or fly",
                                 choices=CAMERAS, group="camera", closed_set=CameraMode)
    yrot: float = _option(0.0, "camera yaw in degrees", low=-1e6, high=1e6, group="camera", angle=True)
    pitch: float = _option(0.0, "camera pitch in degrees, positive looks down (-80 to 80)", low=-80.0, high=80.0,
                           group="camera", angle=True)
    xtrans: float = _option(0.0, "orbit camera X translation", low=-1e4, high=1e4, group="camera")
    ytrans: float = _option(-0.5, "orbit camera Y translation", low=-1e4, high=1e4, group="camera")
    ztrans: float = _option(-3.0, "orbit camera Z translation", low=-1e4, high=1e4, group="camera")
    eye_x: float = _option(0.0, "fly camera: eye X", low=-1e4, high=1e4, group="camera")
    eye_y: float = _option(0.5, "fly camera: eye Y", low=-1e4, high=1e4, group="camera")
    eye_z: float = _option(3.0, "fly camera: eye Z", low=-1e4, high=1e4, group="camera")

    def __post_init__(self) -> None:
        for spec in dataclasses.fields(self):
            _validate(spec, getattr(self, spec.name))
            if spec.metadata.get("closed_set"):  # text from a flag or a file becomes its enum member here
                object.__setattr__(self, spec.name, spec.metadata["closed_set"](getattr(self, spec.name)))
        # The iterations' upper limit depends on the render type (1d profiles are cheap enough for 16).
        limit = catalog.RENDER_TYPES[self.mode].max_iterations
        if self.iterations > limit:
            widest = max(entry.max_iterations for entry in catalog.RENDER_TYPES.values())
            if self.iterations > widest:
                raise SettingsError(f"iterations: expected an integer from 1 to {widest}, got {self.iterations}")
            allowing = ", ".join(entry.name for entry in catalog.RENDER_TYPES.values()
                                 if entry.max_iterations >= self.iterations)
            raise SettingsError(f"iterations: {self.iterations} is only allowed in {allowing} mode; "
                                f"{self.mode} mode takes 1 to {limit}")
        if self.passes is not None and self.passes > 2 * self.iterations:
            raise SettingsError(f"passes: {self.passes} is more than the {2 * self.iterations} half-passes of "
                                f"iterations {self.iterations}")

    def replace(self, **changes: Any) -> SceneSettings:
        """A copy with ``changes`` applied, validated again."""
        return dataclasses.replace(self, **changes)

    def with_iterations(self, iterations: int) -> SceneSettings:
        """Other surface iterations; a pass count past their half-passes comes down to the last one."""
        passes = None if self.passes is None else min(self.passes, 2 * iterations)
        return self.replace(iterations=iterations, passes=passes)

    def with_mode(self, mode: str) -> SceneSettings:
        """Another render type; iterations above its limit (a 1d profile allows more) come down to it."""
        return self.replace(mode=mode, iterations=min(self.iterations, catalog.RENDER_TYPES[mode].max_iterations))

    def to_dict(self) -> dict[str, Any]:
        """Every setting by name."""
        return dataclasses.asdict(self)

    # --- argparse ------------------------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Add every scene option; unset options stay out of the namespace so a scene file can fill them."""
        group = parser.add_argument_group("scene options")
        for spec in dataclasses.fields(cls):
            meta = spec.metadata
            if spec.type == "bool" or isinstance(spec.default, bool):
                group.add_argument(meta["flag"], dest=spec.name, action="store_true", default=argparse.SUPPRESS,
                                   help=meta["help"] + (" (default)" if spec.default else ""))
                group.add_argument(meta["off_flag"], dest=spec.name, action="store_false",
                                   default=argparse.SUPPRESS,
                                   help="the opposite" + (" (default)" if not spec.default else ""))
                continue
            flag = "--" + spec.name.replace("_", "-")
            kwargs: dict[str, Any] = {"dest": spec.name, "default": argparse.SUPPRESS,
                                      "help": f"{meta['help']} (default: {spec.default})"}
            if meta["choices"]:  # as text: argparse shows its choices by repr, an enum member's is <Look.NATURAL: ...>
                kwargs["choices"] = [str(choice) for choice in meta["choices"]]
            else:
                kwargs["type"] = _argument_type(spec)
                kwargs["metavar"] = meta.get("metavar", spec.name.split("_")[-1].upper())
            group.add_argument(flag, **kwargs)

    @classmethod
    def from_namespace(cls, namespace: argparse.Namespace, base: SceneSettings | None = None) -> SceneSettings:
        """The settings of ``base`` (defaults when None) with every option given on the command line applied."""
        names = {spec.name for spec in dataclasses.fields(cls)}
        given = {name: value for name, value in vars(namespace).items() if name in names}
        try:
            return (base or cls()).replace(**given)
        except SettingsError as error:  # a value typed on the command line: named as it was typed there
            name, _, rest = str(error).partition(":")
            if name in given:
                raise SettingsError(f"--{name.replace('_', '-')}:{rest}") from None
            raise


def base_type(spec: dataclasses.Field) -> str:
    """The Python type name of a setting (optional numbers count as float unless marked ``integer``)."""
    if spec.metadata.get("integer"):
        return "int"
    if isinstance(spec.default, str):  # text, or a closed set of words (StrEnum)
        return "str"
    return type(spec.default).__name__ if spec.default is not None else "float"


def within_range(name: str, value: float) -> float:
    """``value`` brought within the range of the number field ``name``.

    A camera moved by keys, drags or the ground, or a flight's curve, stops each field at the edge of what a scene
    can hold (10,000 units from the origin along each axis), instead of making a scene that cannot be; the panel's
    fields stop there by their own range. An angle whose range spans a whole turn is brought back into it by whole
    turns instead (a pitch's range, less than a turn, only stops it).
    """
    meta = SceneSettings.__dataclass_fields__[name].metadata
    low, high = meta["low"], meta["high"]
    if meta.get("angle") and high - low >= 360.0 and not low <= value <= high:
        value = math.remainder(value, 360.0)  # the same direction, nearest 0 (a yaw), ...
        value += 360.0 if value < low else -360.0 if value > high else 0.0  # ... or within 0..360 (an azimuth)
    value = min(high, max(low, value))
    return 0.0 if 0 < abs(value) < FLOAT32_TINY else value


def _expected(spec: dataclasses.Field) -> str:
    """What a number setting takes, in words: its range, and the words it takes if any."""
    meta = spec.metadata
    expected = describe_range(meta["low"], meta["high"], integer=base_type(spec) == "int",
                              low_exclusive=bool(meta.get("low_exclusive")))
    words = meta.get("words", ())
    return f"{', '.join(map(repr, words))} or {expected}" if words else expected


def _argument_type(spec: dataclasses.Field) -> Any:
    """The argparse type of a setting: text, or a number by the one rule of ``parsing`` with its range.

    A number option may also take words, such as ``--tile endless``.
    """
    kind, words = base_type(spec), spec.metadata.get("words", ())
    if kind == "str":
        return str
    parse = argument_type(parse_integer if kind == "int" else parse_real, _expected(spec))
    return parse if not words else lambda text: text if text in words else parse(text)


def _validate(spec: dataclasses.Field, value: Any) -> None:
    meta, name = spec.metadata, spec.name
    if value is None and meta.get("optional"):
        return
    if value in meta.get("words", ()):
        return
    kind = base_type(spec)
    if kind == "bool":
        if not isinstance(value, bool):
            raise SettingsError(f"{name}: expected true or false, got {_short(value)}")
        return
    if kind == "str":
        if not isinstance(value, str):
            raise SettingsError(f"{name}: expected text, got {_short(value)}")
        if len(value) > MAX_TEXT_CHARS:
            raise SettingsError(f"{name}: at most {MAX_TEXT_CHARS} characters, got {len(value):,}")
        if meta["choices"] and value not in meta["choices"]:
            raise SettingsError(f"{name}: {_short(value)} is not one of {', '.join(meta['choices'])}")
        return
    if kind == "int":
        valid = isinstance(value, int) and not isinstance(value, bool)
    else:
        valid = isinstance(value, (int, float)) and not isinstance(value, bool)
        valid = valid and (isinstance(value, int) or math.isfinite(value))  # a huge int must not overflow here
        valid = valid and not 0 < abs(value) < FLOAT32_TINY  # would be 0 or subnormal on the GPU
    low, high = meta["low"], meta["high"]
    if name == "iterations" and valid and value >= low:
        return  # the upper limit depends on the render type: checked in __post_init__
    if valid:
        valid = (value > low if meta.get("low_exclusive") else value >= low) and value <= high
    if not valid:
        raise SettingsError(f"{name}: expected {_expected(spec)}, got {_short(value)}")


@functools.cache  # the panel asks for every widget on every frame
def option_spec(name: str) -> dataclasses.Field:
    """The field of one setting, for widgets that read its range and help."""
    return next(spec for spec in dataclasses.fields(SceneSettings) if spec.name == name)
