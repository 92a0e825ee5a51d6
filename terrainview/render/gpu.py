"""GPU resources: programs, buffers, textures and framebuffers, all owned by ``GpuResources``.

Every GL object lives in one table and is released when it is replaced or when the scene is released, so
regenerating the terrain any number of times does not grow the number of live GL objects. Constants the
shaders need are defined here once and passed to them as ``#define`` values.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import moderngl
import numpy as np
from moderngl_window.meta import ProgramDescription
from moderngl_window.opengl.program import ProgramShaders

from terrainview.base.resources import shaders_dir
from terrainview.kernels import fractal, lighting
from terrainview.kernels.lighting import HORIZON_DIRECTIONS
from terrainview.kernels.slopes import slope_rows
from terrainview.kernels.texturing import WET_DARKENING
from terrainview.scene.derived_arrays import teximage_size

# The original's rendered-mode look (SPEC).
FOG_COLOR = (0.84, 0.87, 1.0)
SKY_FOG = (3.0, 11.0)
SURFACE_FOG = (2.0, 7.0)
SUN_PENUMBRA = 0.05  # the natural look's shadow edge: the sine of the sun's elevation over the horizon, either side
SKY_TABLE_SIZE = (96, 40)  # the natural look's sky-view table: bearings across, heights up (sky_table_layout.glsl)
# The sky table's row of constants, texel by texel (sky_table.glsl), as the natural programs' uniforms.
SKY_CONSTANTS = ("sun_light", "ambient_light", "exposure_scale", "horizon_haze")
HAZE_ELEVATION = 0.02  # the sine of the elevation whose sky light the haze takes (sky_view.glsl's haze_light)
NOISE_SIDE = 256  # texels per side of the natural look's noise textures
LIGHT_DIRECTION = (1.0, 0.5, 1.0)
LIGHT_AMBIENT = 0.5
LIGHT_DIFFUSE = 1.0
# Teximage height bands, lowest to highest third of the height range.
TEXIMAGE_BAND_COLORS = ((0.2, 0.4, 0.2), (0.55, 0.55, 0.6), (0.95, 0.95, 1.0))
SLOPE_AMBIENT = 0.45
WATER_COLOR = (0.16, 0.36, 0.62, 0.62)
# The sky pyramid: apex above the scene, eight base corners on a near-circle of radius 15 at y = -1,
# with the cloud texture repeated about six times across it.
SKY_APEX = (0.0, 2.0, 0.0)
SKY_BASE_XZ = ((0, 15), (10, 10), (15, 0), (10, -10), (0, -15), (-10, -10), (-15, 0), (-10, 10))
SKY_TEXTURE_REPEATS = 6.0
# Large heightmaps reach the GPU this many bytes per slice, a slice per frame (``GpuResources.stage``).
SLICE_BYTES = 4 << 20
# A heightmap is held in bands of this many rows (the last band takes the rest), which grid.glsl reads.
HEIGHT_BAND_ROWS = 1024
MAX_HEIGHT_BANDS = 4  # iterations 12: 4097 rows
# Bands share texture arrays two by two: a shader fetches once per array. Allocating an array costs far more
# than writing it (about 23 ms for the 34 MB of half an iterations-12 map on llvmpipe, against 2.5 ms to write
# 12 MiB), so a staged upload allocates one array per frame at most (and the endless world pools them).
BANDS_PER_ARRAY = 2
HEIGHT_ARRAYS = MAX_HEIGHT_BANDS // BANDS_PER_ARRAY
HEIGHT_UNIT = 4  # the first of the HEIGHT_ARRAYS texture units of the heightmap's arrays; the programs' other
# samplers take units below and above (renderer.py)
SLOPE_UNIT = HEIGHT_UNIT + HEIGHT_ARRAYS  # the natural look's slope map (GpuResources.bind_slopes)
# A slope map is worked out this many points a frame in the window (about 2.5 ms of one core; an iterations-12 map,
# 16.8M points, takes 16-17 frames so, 46 ms at once); a render waits for all of it.
SLOPE_POINTS_PER_FRAME = 1 << 20
SEA_FLOOR_CELLS = 1024  # the tiles' sea floor's texels a side, at most (GpuResources.tile_sea_floor)
SKY_EYE = (0.0, 0.5, 3.0)  # the original's eye, which the sky is drawn around (see shaders/sky.glsl)
MAX_LOD_LEVELS = 16  # level-of-detail levels the programs take morph zones for (shaders/lod.glsl)
# The rendered surface's programs by how they colour it (shaders/terrain.glsl's SHADING), each also with "_lod":
# the texture; the texture slope-shaded; the endless world's own height bands.
TERRAIN_SHADINGS = {"terrain": 0, "terrain_slope": 1, "terrain_world": 2}


def _glsl(value: float | Sequence[float]) -> str:
    """A Python constant as GLSL source: a float literal or a vecN constructor."""
    if isinstance(value, (int, float)):
        return f"{float(value):.6f}"
    return f"vec{len(value)}({', '.join(f'{float(v):.6f}' for v in value)})"


def _shader_source(path: str | Path) -> tuple[Path, str]:
    """A file under shaders/ (the program itself or an ``#include``d part)."""
    resolved = shaders_dir() / path
    return resolved, resolved.read_text(encoding="utf-8")


def uniform(program: moderngl.Program, name: str) -> moderngl.Uniform:
    """A program's uniform by name (moderngl types its members as any kind of uniform, block or attribute)."""
    return cast(moderngl.Uniform, program[name])


def software_rasterizer(ctx: moderngl.Context) -> bool:
    """Whether ``ctx`` draws on the CPU (Mesa's llvmpipe, softpipe or swrast): its pixels take every core."""
    renderer = str(ctx.info.get("GL_RENDERER", "")).lower()
    return any(name in renderer for name in ("llvmpipe", "softpipe", "swrast"))


# llvmpipe draws a frame's pixels on threads of its own, one a core, named "llvmpipe-0", "llvmpipe-1" and on, all woken
# at once by the thread that wants the pixels. Left to Linux to place, both of a two-core machine's now and then
# woke on one core, one waiting for the other while the other core ran the endless world's worker: 40-second
# natural-look flights at iterations 10 (three each way, alternating) had 30-83 frames over 40 ms and a slowest of
# 47-55 ms; with each thread kept to a core of its own, 4-11 and 42-48 ms. With two busy processes beside them the
# drafts were no slower (median 56-57 ms against 60).
RASTERIZER_THREAD = "llvmpipe-"


def rasterizer_threads() -> list[tuple[int, int]]:
    """The threads of llvmpipe in this process: each one's id and its number N ("llvmpipe-N").

    Empty where the system has no /proc/self/task (not Linux).
    """
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return []
    found = []
    for thread in threads:
        try:  # (a name cut at 15 bytes may split a character: replaced, never raised)
            with open(f"/proc/self/task/{thread}/comm", encoding="utf-8", errors="replace") as comm:
                name = comm.read().strip()
        except OSError:  # the thread ended meanwhile
            continue
        number = name.removeprefix(RASTERIZER_THREAD)
        if number != name and number.isascii() and number.isdigit():
            found.append((int(thread), int(number)))
    return found


def spread_rasterizer_threads() -> None:
    """Keep each of llvmpipe's threads in this process to a core of its own (RASTERIZER_THREAD).

    Thread N to the Nth core the process may run on (round again past the last). Nothing where the system has no
    thread affinity (not Linux).
    """
    try:
        cores = sorted(os.sched_getaffinity(os.getpid()))
    except (AttributeError, OSError):
        return
    for thread, number in rasterizer_threads():
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            os.sched_setaffinity(thread, {cores[number % len(cores)]})


def load_program(ctx: moderngl.Context, name: str, **defines: float | Sequence[float] | int) -> moderngl.Program:
    """Compile ``shaders/<name>.glsl`` on ``ctx`` with the given defines.

    The file is in moderngl-window's single-file format: stages in ``#if defined VERTEX_SHADER`` blocks,
    ``#include`` resolved under shaders/.
    """
    values = {key: str(value) if isinstance(value, int) else _glsl(value) for key, value in defines.items()}
    path = f"{name}.glsl"
    description = ProgramDescription(path=path, defines=values)
    _, source = _shader_source(path)
    shaders = ProgramShaders.from_single(description, source)
    shaders.handle_includes(_shader_source)
    stages = {"vertex_shader": shaders.vertex_source, "geometry_shader": shaders.geometry_source,
              "fragment_shader": shaders.fragment_source}
    sources: dict[str, Any] = {stage: shader.source for stage, shader in stages.items() if shader is not None}
    return ctx.program(**sources)


def _sky_vertices() -> np.ndarray:
    """Eight triangles (apex, base corner, next base corner): position xyz, texcoord uv."""
    def vertex(x: float, y: float, z: float) -> list[float]:
        return [x, y, z, (x / 30.0 + 0.5) * SKY_TEXTURE_REPEATS, (z / 30.0 + 0.5) * SKY_TEXTURE_REPEATS]

    rows = []
    for index, (x0, z0) in enumerate(SKY_BASE_XZ):
        x1, z1 = SKY_BASE_XZ[(index + 1) % len(SKY_BASE_XZ)]
        rows += [vertex(*SKY_APEX), vertex(x0, -1.0, z0), vertex(x1, -1.0, z1)]
    return np.array(rows, dtype="f4")


def patch_triangle_indices(quads: int) -> np.ndarray:
    """Triangles of a quads x quads grid patch whose vertices run row by row.

    Each quad is split along its anti-diagonal and wound like the full mesh's strips.
    """
    row, column = np.divmod(np.arange(quads * quads, dtype=np.uint32), quads)
    corner = row * (quads + 1) + column  # the quad's first vertex; +1 next column, + quads + 1 next row
    below = corner + quads + 1
    return np.column_stack([corner, below, corner + 1, corner + 1, below, below + 1]).astype("u4")


def patch_corner_indices(quads: int) -> np.ndarray:
    """Each vertex of a quads x quads grid patch (vertices row by row) with its next column's and next row's.

    Past the last column or row the vertex itself stands in. The lines program draws each three as the vertex's
    two line segments (shaders/lines.glsl).
    """
    side = quads + 1
    row, column = np.divmod(np.arange(side * side, dtype=np.uint32), side)
    vertex = row * side + column
    next_column = np.where(column < quads, vertex + 1, vertex)
    next_row = np.where(row < quads, vertex + side, vertex)
    return np.column_stack([vertex, next_column, next_row]).astype("u4")


def _upsampled(coarse: np.ndarray, factor: int) -> np.ndarray:
    """A tiling square of values ``factor`` times larger, interpolated bilinearly across its wrapped edges."""
    side = coarse.shape[0]
    place = np.arange(side * factor) / factor
    low = place.astype(np.int64)
    weight = place - low
    high = (low + 1) % side
    rows = coarse[low] * (1.0 - weight)[:, None] + coarse[high] * weight[:, None]
    return rows[:, low] * (1.0 - weight) + rows[:, high] * weight


@functools.cache
def _noise_values() -> np.ndarray:
    """The noise textures' random values: three channels, the same every run, tiling."""
    values = np.random.default_rng(1997).integers(0, 256, (NOISE_SIDE, NOISE_SIDE, 4), dtype=np.uint8)
    return np.ascontiguousarray(values[..., :3])  # four drawn a texel: the values the look was tuned with


@functools.cache
def _detail_octave_values() -> np.ndarray:
    """The detail texture's octaves of them, made once a process: about 10 ms, which every renderer would repeat."""
    return _detail_octaves(_noise_values())


def _detail_octaves(channels: np.ndarray) -> np.ndarray:
    """Three octaves of random values, one a channel, uint8 (128 is zero), tiling like the channels they come from.

    Red from channel 0 at a quarter of the texels' frequency, green from channel 1 at half, blue channel 2's own.
    """
    values = channels.astype(np.float64) / 255.0 - 0.5
    octaves = np.stack([_upsampled(values[::4, ::4, 0], 4), _upsampled(values[::2, ::2, 1], 2), values[..., 2]],
                       axis=-1)
    return np.rint((octaves + 0.5) * 255.0).astype(np.uint8)


class LightMapsTexture:
    """The natural look's light maps on the GPU (``lighting.light_maps``), and the maps its sun channel comes from.

    The surface layer's sun channel holds the horizon toward the sun (``lighting.sun_surface_layer``), written
    again whenever the sun's bearing changes: a few milliseconds at 1024 cells a side.
    """

    def __init__(self, ctx: moderngl.Context, maps: np.ndarray, repeat: bool) -> None:
        layers, side = maps.shape[0], maps.shape[1]
        self.maps = maps
        self.texture = ctx.texture_array((side, side, layers), lighting.CHANNELS, np.ascontiguousarray(maps))
        self.texture.repeat_x = self.texture.repeat_y = repeat
        self.texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self._sun: tuple[int, int] | None = None  # where the sun the surface layer holds lies (lighting.sun_between)

    @property
    def side(self) -> int:
        """Points per side."""
        return self.maps.shape[1]

    def replace(self, maps: np.ndarray) -> None:
        """Hold ``maps`` instead, of the same shape."""
        self.maps = maps
        self.texture.write(np.ascontiguousarray(maps))
        self._sun = None

    def for_sun(self, azimuth: float) -> moderngl.TextureArray:
        """The texture, its surface layer holding the horizon toward a sun at compass bearing ``azimuth``."""
        layer, side = self.maps.shape[0] - 1, self.side
        sun = lighting.sun_between(azimuth, lighting.traced_directions(self.maps))
        if sun != self._sun:  # (a sun that moved less than 1/256 of a step between two directions reads the same)
            self.texture.write(lighting.sun_surface_layer(self.maps, sun), viewport=(0, 0, layer, side, side, 1))
            self._sun = sun
        return self.texture

    def release(self) -> None:
        """Release the texture."""
        self.texture.release()


class HeightArrayPool:
    """Height arrays and slope maps given back, kept for another map of the same size up to ``limit_bytes``.

    A limit of 0 keeps none. Allocating a texture costs far more than writing it (``BANDS_PER_ARRAY``'s note; a
    new iterations-12 slope map, 40-170 ms), and a flight releases regions behind the eye at the sizes it needs
    ahead.
    """

    def __init__(self, ctx: moderngl.Context, limit_bytes: int) -> None:
        self.ctx = ctx
        self.limit_bytes = limit_bytes
        self._free: list[moderngl.TextureArray | moderngl.Texture] = []  # oldest first
        self.bytes = 0
        self._keeps_slopes = True  # slope maps given back are kept (the natural look's world; ``keep_slopes``)

    def _kept(self, size: tuple[int, ...]) -> moderngl.TextureArray | moderngl.Texture | None:
        for index, texture in enumerate(self._free):
            if texture.size == size:  # (columns, rows, layers) for a height array, (columns, rows) for slopes
                self.bytes -= _texture_bytes(texture)
                return self._free.pop(index)
        return None

    def reserve(self, columns: int, rows: int, maps: int = 1, slopes: bool = False) -> None:
        """Allocate now, and keep, the textures ``maps`` maps of ``columns`` x ``rows`` take (counting those kept).

        Their height arrays in ``HeightBands``' layout and, with ``slopes``, a slope map each (a region's, apron and
        all: the natural look's). For the largest maps, whose first allocation would otherwise fall in a frame that
        draws (23 ms an array, and 40-170 ms a slope map at iterations 12, on llvmpipe).
        """
        textures: list[moderngl.TextureArray | moderngl.Texture] = [
            self.take(size) for size in height_array_sizes(columns, rows) * maps]
        if slopes:
            textures += [self.take_slopes((columns, rows)) for _ in range(maps)]
        for texture in textures:
            self.give(texture)

    def take(self, size: tuple[int, int, int]) -> moderngl.TextureArray:
        """An R32F array of ``size`` (columns, rows, layers): one given back, or a new one. Its texels are not set."""
        array = self._kept(size)
        if array is None:
            array = self.ctx.texture_array(size, 1, dtype="f4")
            array.filter = (moderngl.NEAREST, moderngl.NEAREST)
        return cast(moderngl.TextureArray, array)

    def take_slopes(self, size: tuple[int, int]) -> moderngl.Texture:
        """A slope map's RG16F texture of ``size`` (HeightBands.advance_slopes): one given back, or a new one."""
        texture = self._kept(size)
        if texture is None:
            texture = self.ctx.texture(size, 2, dtype="f2")
            texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
        return cast(moderngl.Texture, texture)

    def give(self, texture: moderngl.TextureArray | moderngl.Texture) -> None:
        """Keep ``texture`` for a later ``take``, releasing the oldest kept while over the limit.

        A slope map is released at once while slope maps are not kept.
        """
        if isinstance(texture, moderngl.Texture) and not self._keeps_slopes:
            texture.release()
            return
        self._free.append(texture)
        self.bytes += _texture_bytes(texture)
        self._fit()

    def _fit(self) -> None:
        """Release the oldest textures kept while over the limit."""
        while self.bytes > self.limit_bytes:
            oldest = self._free.pop(0)
            self.bytes -= _texture_bytes(oldest)
            oldest.release()

    def keep_slopes(self, keep: bool, limit_bytes: int) -> None:
        """Whether to keep slope maps given back (those kept are released if not), within a new byte limit."""
        self._keeps_slopes = keep
        self.limit_bytes = limit_bytes
        if not keep:
            for texture in [texture for texture in self._free if isinstance(texture, moderngl.Texture)]:
                self._free.remove(texture)
                self.bytes -= _texture_bytes(texture)
                texture.release()
        self._fit()

    def release(self) -> None:
        """Release every texture kept."""
        for texture in self._free:
            texture.release()
        self._free.clear()
        self.bytes = 0


def _texture_bytes(texture: moderngl.TextureArray | moderngl.Texture) -> int:
    """Four bytes a texel: R32F heights, or RG16F slopes."""
    return 4 * math.prod(texture.size)


def _band_first_rows(rows: int) -> list[int]:
    """The first row of each band of a map of ``rows`` rows, and ``rows``: ``HeightBands``' layout."""
    count = max(1, min(MAX_HEIGHT_BANDS, (rows - 1) // HEIGHT_BAND_ROWS))
    return [band * HEIGHT_BAND_ROWS for band in range(count)] + [rows]


def _bands_by_array(rows: int) -> list[list[int]]:
    """The rows of each band of a map of ``rows`` rows, grouped as the texture arrays hold them."""
    first_rows = _band_first_rows(rows)
    band_rows = [stop - start for start, stop in zip(first_rows, first_rows[1:], strict=False)]
    return [band_rows[index:index + BANDS_PER_ARRAY] for index in range(0, len(band_rows), BANDS_PER_ARRAY)]


def height_array_sizes(columns: int, rows: int) -> list[tuple[int, int, int]]:
    """The (columns, rows, layers) of each texture array ``HeightBands`` holds a map of columns x rows in."""
    return [(columns, max(bands), len(bands)) for bands in _bands_by_array(rows)]


class HeightBands:
    """A float32 heightmap in bands of ``HEIGHT_BAND_ROWS`` rows (the last takes the rest), in R32F texture arrays.

    There are ``HEIGHT_ARRAYS`` arrays of ``BANDS_PER_ARRAY`` layers: band k is layer k % BANDS_PER_ARRAY of
    array k // BANDS_PER_ARRAY. A shader reads any row with one fetch per array (grid.glsl), not one per band;
    an array is allocated when its first rows are written, so a staged upload allocates them in different
    frames. The arrays come from ``pool`` and go back to it on release (by default a pool that keeps none).
    """

    def __init__(self, ctx: moderngl.Context, columns: int, rows: int, pool: HeightArrayPool | None = None) -> None:
        self.pool = pool or HeightArrayPool(ctx, 0)
        self.size = (columns, rows)
        self.first_rows = _band_first_rows(rows)
        self.bands_by_array = _bands_by_array(rows)
        self.array_sizes = height_array_sizes(columns, rows)
        self.arrays: list[moderngl.TextureArray | None] = [None] * len(self.array_sizes)
        self.values: np.ndarray | None = None  # the map written (``write``), which ...
        self.slopes: moderngl.Texture | None = None  # ... the slope map (GpuResources.bind_slopes) ...
        self.slope_rows = 0  # ... is worked out from, up to this row

    @property
    def slopes_ready(self) -> bool:
        """The slope map (``advance_slopes``) is worked out whole from these heights."""
        return self.slopes is not None and self.slope_rows >= self.slopes.height

    @property
    def band_rows(self) -> list[int]:
        """Rows in each band (the last takes the rest)."""
        return [rows for bands in self.bands_by_array for rows in bands]

    def write(self, values: np.ndarray, first_row: int = 0, rows: int | None = None) -> None:
        """Write ``rows`` rows from ``first_row`` (all the rest by default) of the map ``values``.

        ``values`` is the whole map (float32, rows x columns), kept for its slope map; the arrays the rows reach are
        allocated.
        """
        self.values = values
        self.slope_rows = 0  # new heights: their slopes are worked out again
        end_row = values.shape[0] if rows is None else min(first_row + rows, values.shape[0])
        for band, start in enumerate(self.first_rows[:-1]):
            low, high = max(start, first_row), min(self.first_rows[band + 1], end_row)
            if low >= high:
                continue
            index, layer = divmod(band, BANDS_PER_ARRAY)
            array = self.arrays[index]
            if array is None:
                array = self.arrays[index] = self.pool.take(self.array_sizes[index])
            array.write(np.ascontiguousarray(values[low:high]),
                        viewport=(0, low - start, layer, self.size[0], high - low, 1))

    def read(self) -> np.ndarray:
        """The heightmap back from the GPU, rows x columns."""
        parts = []
        for index, array in enumerate(self.arrays):
            assert array is not None
            rows = self.bands_by_array[index]
            layers = np.frombuffer(array.read(), dtype=np.float32).reshape(len(rows), -1, self.size[0])
            parts += [layer[:count] for layer, count in zip(layers, rows, strict=True)]
        return np.concatenate(parts)

    def advance_slopes(self, apron: int, points: int) -> int:
        """Work out up to ``points`` more of the natural look's slope map of the map written; returns those done.

        The map spans 2 units with ``apron`` points around it. ``slope_rows`` works out the next rows, written as
        RG16F into the map kept with the heights; the program reads it with linear filtering, a slope that runs on
        smoothly from cell to cell in two fetches (working it out from eight heights a pixel made the natural look's
        frames about 30% dearer on llvmpipe).
        """
        # The tiles' map repeats: one period of it (its last point is its first). A region's, whole.
        columns, rows = self.size if apron else (self.size[0] - 1, self.size[1] - 1)
        if self.slope_rows >= rows or points <= 0:
            return 0
        assert self.values is not None, "no map written"
        if self.slopes is None:
            self.slopes = self.pool.take_slopes((columns, rows))
            self.slopes.repeat_x = self.slopes.repeat_y = not apron
        count = min(rows - self.slope_rows, max(1, points // columns))
        texels = slope_rows(self.values, self.slope_rows, count, columns, apron)
        self.slopes.write(texels, viewport=(0, self.slope_rows, columns, count))
        self.slope_rows += count
        return count * columns

    def bind(self, program: moderngl.Program) -> None:
        """Bind the arrays from ``HEIGHT_UNIT`` and point ``program``'s samplers (grid.glsl) at them.

        Every sampler gets an array: one the map does not need repeats its first (the shader reads both).
        """
        for index in range(HEIGHT_ARRAYS):
            array = self.arrays[index] if index < len(self.arrays) else self.arrays[0]
            if array is not None:
                array.use(HEIGHT_UNIT + index)
        uniform(program, "heights").value = [HEIGHT_UNIT + index for index in range(HEIGHT_ARRAYS)]
        uniform(program, "height_bands").value = len(self.band_rows)

    def release(self) -> None:
        """Give the texture arrays and the slope map back to the pool (which releases what it does not keep)."""
        self.values = None
        for array in self.arrays:
            if array is not None:
                self.pool.give(array)
        self.arrays = [None] * len(self.arrays)
        if self.slopes is not None:
            self.pool.give(self.slopes)
            self.slopes = None
            self.slope_rows = 0


@dataclass(frozen=True)
class LodInstances:
    """The GPU table's key of a level-of-detail instance buffer: one per part ("whole" or "quarters").

    Each drawer's parts have a prefix of its own: the tiles' none, the world's regions' and its atlases' theirs.
    """

    part: str


@dataclass(frozen=True)
class LodIndices:
    """The GPU table's key of a patch's index buffer of ``quads`` quads per side.

    For the lines program, each vertex with its next column's and next row's; else triangles.
    """

    lines: bool
    quads: int


@dataclass(frozen=True)
class LodVertexArray:
    """The GPU table's key of a vertex array drawing ``program``'s patches of one size from one part's buffer."""

    program: str
    quads: int
    part: str


GpuKey = str | LodInstances | LodIndices | LodVertexArray


class GpuResources:
    """Every GL object of one renderer.

    Programs, vertex arrays, the height and colour textures, the teximage framebuffer.
    """

    def __init__(self, ctx: moderngl.Context) -> None:
        self.ctx = ctx
        self._objects: dict[GpuKey, Any] = {}  # every GL object, by a key saying what it is
        self._surface_map: np.ndarray | None = None  # the 2D surface uploaded last (upload_surface)
        self.max_texture_size = ctx.info["GL_MAX_TEXTURE_SIZE"]
        self.software_rasterizer = software_rasterizer(ctx)
        fog = {"FOG_COLOR": FOG_COLOR}
        bands = {"HEIGHT_BAND_ROWS": HEIGHT_BAND_ROWS, "BANDS_PER_ARRAY": BANDS_PER_ARRAY,  # grid.glsl's
                 "HEIGHT_ARRAYS": HEIGHT_ARRAYS}
        lod_levels = {"MAX_LOD_LEVELS": MAX_LOD_LEVELS}  # lod.glsl's
        sky_table = {"SKY_TABLE_WIDTH": SKY_TABLE_SIZE[0], "SKY_TABLE_ROWS": SKY_TABLE_SIZE[1],  # sky_view.glsl's
                     "HAZE_ELEVATION": HAZE_ELEVATION}
        natural = {"HORIZON_LAYERS": HORIZON_DIRECTIONS // lighting.CHANNELS,
                   "SKY_VIEW_CHANNEL": lighting.SKY_VIEW_CHANNEL, "BROAD_X_CHANNEL": lighting.BROAD_X_CHANNEL,
                   "BROAD_Z_CHANNEL": lighting.BROAD_Z_CHANNEL, "SUN_CHANNEL": lighting.SUN_CHANNEL,
                   "PENUMBRA": SUN_PENUMBRA, "NOISE_SIDE": NOISE_SIDE, **sky_table}
        surface: dict[str, float | Sequence[float] | int] = {
            **fog, **bands, "FOG_START": SURFACE_FOG[0], "FOG_END": SURFACE_FOG[1],
            "LIGHT_DIRECTION": LIGHT_DIRECTION, "SLOPE_AMBIENT": SLOPE_AMBIENT, "LIGHT_AMBIENT": LIGHT_AMBIENT,
            "LIGHT_DIFFUSE": LIGHT_DIFFUSE, "BAND_LOW_COLOR": TEXIMAGE_BAND_COLORS[0],
            "BAND_MIDDLE_COLOR": TEXIMAGE_BAND_COLORS[1], "BAND_HIGH_COLOR": TEXIMAGE_BAND_COLORS[2]}
        self.programs = {
            **{name: load_program(ctx, "terrain", **surface, SHADING=shading)
               for name, shading in TERRAIN_SHADINGS.items()},
            **{f"{name}_lod": load_program(ctx, "terrain", **surface, **lod_levels, LOD=1, SHADING=shading)
               for name, shading in TERRAIN_SHADINGS.items()},
            "sky": load_program(ctx, "sky", **fog, FOG_START=SKY_FOG[0], FOG_END=SKY_FOG[1], SKY_EYE=SKY_EYE),
            "water": load_program(ctx, "water", **fog, FOG_START=SURFACE_FOG[0], FOG_END=SURFACE_FOG[1],
                                  WATER_COLOR=WATER_COLOR),
            "teximage": load_program(ctx, "teximage", **bands, BAND_LOW_COLOR=TEXIMAGE_BAND_COLORS[0],
                                     BAND_MIDDLE_COLOR=TEXIMAGE_BAND_COLORS[1],
                                     BAND_HIGH_COLOR=TEXIMAGE_BAND_COLORS[2], LIGHT_DIRECTION=LIGHT_DIRECTION,
                                     LIGHT_AMBIENT=LIGHT_AMBIENT, LIGHT_DIFFUSE=LIGHT_DIFFUSE,
                                     WET_DARKENING=WET_DARKENING),
            "grid_lines": load_program(ctx, "lines", **bands, PROFILE=2),
            "grid_lines_lod": load_program(ctx, "lines", **bands, **lod_levels, PROFILE=3),
            "polyline": load_program(ctx, "lines", PROFILE=1),
            "screen_quad": load_program(ctx, "screen_quad"),
            "sky_table": load_program(ctx, "sky_table", **sky_table),
            "natural_sky": load_program(ctx, "natural_sky", **sky_table),
            "natural_terrain": load_program(ctx, "natural_terrain", **natural, **bands),
            "natural_terrain_lod": load_program(ctx, "natural_terrain", **natural, **bands, **lod_levels, LOD=1),
            "natural_terrain_atlas": load_program(ctx, "natural_terrain", **natural, **bands, **lod_levels, LOD=1,
                                                  ATLAS=1),
            "natural_places": load_program(ctx, "natural_terrain", **bands, PLACES=1),  # no shading: no look defines
            "natural_places_lod": load_program(ctx, "natural_terrain", **bands, **lod_levels, LOD=1, PLACES=1),
            "natural_surface": load_program(ctx, "natural_surface", **natural, **bands),
            "natural_water": load_program(ctx, "natural_water", **sky_table),
            "natural_water_world": load_program(ctx, "natural_water", **sky_table, FLOOR_MAP=1),
            "pass_marks": load_program(ctx, "pass_marks", **bands, COPIED_ACROSS_EDGE=fractal.COPIED_ACROSS_EDGE),
        }
        for name, program in self.programs.items():
            self._own(f"program:{name}", program)
        # Attribute-less draws: positions come from gl_VertexID / gl_InstanceID.
        for name in (*TERRAIN_SHADINGS, "water", "teximage", "grid_lines", "screen_quad", "sky_table", "natural_sky",
                     "natural_terrain", "natural_places", "natural_surface", "natural_water", "natural_water_world"):
            self._own(f"vao:{name}", ctx.vertex_array(self.programs[name], []))
        sky = self._own("buffer:sky", ctx.buffer(_sky_vertices()))
        self._own("vao:sky", ctx.vertex_array(self.programs["sky"],
                                              [(sky, "3f 2f", "in_position", "in_texcoord_0")]))
        # The natural look's sky-view table: rows up (sky_table_layout.glsl), one more of constants (sky_table.glsl).
        # Drawn into one texture and sampled from a copy written from the CPU (``sky_table``).
        table_size = (SKY_TABLE_SIZE[0], SKY_TABLE_SIZE[1] + 1)
        table = self._own("texture:sky_table", ctx.texture(table_size, 4, dtype="f2"))
        table.repeat_x, table.repeat_y = True, False
        table.filter = (moderngl.LINEAR, moderngl.LINEAR)
        drawn = self._own("texture:sky_table_drawn", ctx.texture(table_size, 4, dtype="f2"))
        self._own("framebuffer:sky_table", ctx.framebuffer([drawn]))
        self._sky_table_sun: tuple[float, float, float] | None = None  # the sun the table was drawn for
        self._sky_constants: dict[str, Any] = {}
        # Random values for the natural look's broad variation, and the octaves of its close-range detail
        # (_detail_octaves): the same every run, tiling. Not mipmapped: the shader fades each octave out as a pixel
        # spans it (natural_shading.glsl), where a mipmapped fetch cost llvmpipe 2 ms a 1280 x 720 frame.
        for name, values in (("texture:noise", _noise_values()), ("texture:detail", _detail_octave_values())):
            noise = self._own(name, ctx.texture((NOISE_SIDE, NOISE_SIDE), 3, values.tobytes()))
            noise.repeat_x = noise.repeat_y = True
            noise.filter = (moderngl.LINEAR, moderngl.LINEAR)
        # Bound for a slope map not worked out yet (bind_slopes): sampled, and weighed 0.
        self._own("texture:no_slopes", ctx.texture((1, 1), 2, np.zeros(2, "f2").tobytes(), dtype="f2"))
        self._staged_from: dict[str, np.ndarray] = {}  # texture name -> the array its staged copy holds
        self.surface_grid_size = 0  # vertices per side of the 2D surface on the GPU (0: none)
        self.profile_length = 0  # points of the 1D profile on the GPU (0: none)
        self.marked_half_passes: int | None = None  # the half-pass whose points "vao:pass_marks" marks

    # --- ownership ------------------------------------------------------------------------------------------

    def _own(self, name: GpuKey, gl_object):
        """Keep ``gl_object`` under ``name``, releasing whatever was there before."""
        previous = self._objects.get(name)
        if previous is not None and previous is not gl_object:
            previous.release()
        self._objects[name] = gl_object
        return gl_object

    def get(self, name: str):
        """The GL object kept under ``name``."""
        return self._objects[name]

    def has(self, name: str) -> bool:
        """Whether a GL object is kept under ``name``."""
        return name in self._objects

    @property
    def complete(self) -> bool:
        """Everything a frame of any mode needs has been uploaded."""
        surface = "heights:surface" in self._objects or "buffer:profile" in self._objects
        return surface and "texture:clouds" in self._objects and "texture:teximage" in self._objects

    @property
    def live_objects(self) -> int:
        """How many GL objects are kept."""
        return len(self._objects)

    def release(self) -> None:
        """Release every GL object kept and forget them."""
        for gl_object in self._objects.values():
            gl_object.release()
        self._objects.clear()
        self.marked_half_passes = None
        self._sky_table_sun, self._sky_constants = None, {}
        self._surface_map = None

    # --- uploads --------------------------------------------------------------------------------------------

    def stage(self, changed: dict[str, np.ndarray | None]) -> Iterator[None]:
        """Copy the heightmaps in ``changed`` into new textures a slice at a time, yielding after each.

        ``changed`` is as from ``DerivedArrays.update``. The ``upload_*`` calls given the same arrays then adopt
        them whole, so the drawn terrain stays the old one until everything is there and then switches at once.
        """
        targets = {"surface": "heights:surface", "teximage": "heights:teximage"}
        for key, name in targets.items():
            values = changed.get(key)
            if values is not None and values.ndim == 2:
                yield from self._stage_float_texture(name, values)

    def _stage_float_texture(self, name: str, values: np.ndarray) -> Iterator[None]:
        self._staged_from.pop(name, None)
        rows, columns = values.shape
        data = np.ascontiguousarray(values, dtype="f4")
        # The bands the last adoption replaced, when the size is the same: nothing to allocate.
        bands = self._objects.pop("spare:" + name, None)
        if bands is None or bands.size != (columns, rows):
            if bands is not None:
                bands.release()
            bands = HeightBands(self.ctx, columns, rows)
        self._own("staged:" + name, bands)
        band = max(1, SLICE_BYTES // data[0].nbytes)
        for first in range(0, rows, band):
            bands.write(data, first, band)
            yield
        self._staged_from[name] = values

    def _height_bands(self, name: str, values: np.ndarray) -> HeightBands:
        """Upload a 2D float32 heightmap as ``HeightBands``.

        The bands are reused when the size is unchanged (or the copy ``stage`` made of this very array is
        adopted).
        """
        staged = self._objects.pop("staged:" + name, None)
        if staged is not None:
            if self._staged_from.pop(name, None) is values:
                previous = self._objects.pop(name, None)
                if previous is not None:
                    self._own("spare:" + name, previous)  # the next staging writes into it
                self._objects[name] = staged
                return staged
            staged.release()
        rows, columns = values.shape
        bands = self._objects.get(name)
        if bands is None or bands.size != (columns, rows):
            bands = self._own(name, HeightBands(self.ctx, columns, rows))
        bands.write(np.ascontiguousarray(values, dtype="f4"))
        return bands

    def _float_texture(self, name: str, values: np.ndarray, filtering: int = moderngl.NEAREST) -> moderngl.Texture:
        """Upload a 2D float32 array as one R32F texture, reused while the size holds."""
        rows, columns = values.shape
        texture = self._objects.get(name)
        if texture is None or texture.size != (columns, rows):
            texture = self._own(name, self.ctx.texture((columns, rows), 1, dtype="f4"))
            texture.filter = (filtering, filtering)
        texture.write(np.ascontiguousarray(values, dtype="f4"))
        return texture

    def _color_texture(self, name: str, image: np.ndarray, repeat: bool = True) -> moderngl.Texture:
        """Upload an image of 1 to 4 channels (float in [0, 1] or uint8) as an 8-bit texture with mipmaps."""
        if image.dtype != np.uint8:
            image = np.clip(np.rint(image * 255.0), 0, 255).astype(np.uint8)
        rows, columns, channels = image.shape
        texture = self._objects.get(name)
        if texture is None or texture.size != (columns, rows) or texture.components != channels:
            texture = self._own(name, self.ctx.texture((columns, rows), channels, alignment=1))
        texture.write(np.ascontiguousarray(image))
        texture.build_mipmaps()
        texture.repeat_x = texture.repeat_y = repeat
        return texture

    def upload_surface(self, heights: np.ndarray) -> None:
        """The surface heightmap (2D) or profile (1D); the other kind's objects are released."""
        self._drop("texture:tile_sea_floor")  # the last map's (tile_sea_floor makes it again)
        self._surface_map = heights if heights.ndim == 2 else None
        if heights.ndim == 1:
            self._drop("heights:surface")
            count = heights.shape[0]
            x = np.linspace(-1.0, 1.0, count, dtype="f4")
            vertices = np.column_stack([x, heights.astype("f4")])
            buffer = self._objects.get("buffer:profile")
            if buffer is None or buffer.size != vertices.nbytes:
                buffer = self._own("buffer:profile", self.ctx.buffer(vertices))
                self._own("vao:polyline", self.ctx.vertex_array(self.programs["polyline"],
                                                                [(buffer, "2f", "in_position")]))
            else:
                buffer.write(vertices)
            self.profile_length, self.surface_grid_size = count, 0
        else:
            self._drop("buffer:profile", "vao:polyline")
            self._height_bands("heights:surface", heights)
            self.profile_length, self.surface_grid_size = 0, heights.shape[0]

    def tile_sea_floor(self) -> moderngl.Texture:
        """The ground under the natural look's sea over the tiles: the 2D surface uploaded last.

        One filtered fetch where the map's four corners took eight: one period of the map (its last row and column
        are its first), wrapping, at most SEA_FLOOR_CELLS a side. Made when the sea first needs it after each
        ``upload_surface``, so that a look without it pays nothing.
        """
        if not self.has("texture:tile_sea_floor"):
            assert self._surface_map is not None, "no 2D surface uploaded"
            period = lighting.torus(self._surface_map, SEA_FLOOR_CELLS)  # as the horizons are traced on
            self._float_texture("texture:tile_sea_floor", period, moderngl.LINEAR)
        return self.get("texture:tile_sea_floor")

    def upload_clouds(self, colors: np.ndarray) -> None:
        """Upload the sky's cloud colours as its texture."""
        self._color_texture("texture:clouds", colors)

    def upload_teximage_heights(self, heights: np.ndarray) -> moderngl.Framebuffer:
        """Upload the teximage heightmap; returns the framebuffer it is drawn into.

        That framebuffer's teximage texture is ``teximage_size`` square, kept while the size holds.
        """
        size = teximage_size(int(np.log2(heights.shape[0] - 1)), self.max_texture_size)
        self._height_bands("heights:teximage", heights)
        texture = self._objects.get("texture:teximage")
        if texture is None or texture.size != (size, size):
            texture = self._own("texture:teximage", self.ctx.texture((size, size), 3))
            texture.repeat_x = texture.repeat_y = True
            self._own("framebuffer:teximage", self.ctx.framebuffer([texture]))
        return self._objects["framebuffer:teximage"]

    def upload_teximage_flow(self, flow: np.ndarray | None) -> None:
        """The hydraulic erosion's flow map of the teximage heightmap (None: dry, no map)."""
        if flow is None:
            self._drop("texture:teximage_flow")
        else:
            self._float_texture("texture:teximage_flow", flow)

    def upload_surface_water(self, maps: np.ndarray | None) -> None:
        """The surface's wetness and deposit (``derived_arrays.water_maps``) as an RG texture; None drops it."""
        if maps is None:
            self._drop("texture:surface_water")
        else:
            self._color_texture("texture:surface_water", maps)

    def upload_sea_floor(self, heights: np.ndarray) -> moderngl.Texture:
        """The endless world's ground around the eye (``world_regions.sea_floor``), filtered between its points."""
        return self._float_texture("texture:sea_floor", heights, moderngl.LINEAR)

    def upload_surface_texture(self, rgb: np.ndarray | None) -> None:
        """A CPU-made surface texture (blend, bands); None means the teximage textures the surface."""
        if rgb is None:
            self._drop("texture:surface_image")
        else:
            # Rows run like the heightmap's (row 0 at z = -1, where v = 1); GL stores the first row at v = 0.
            self._color_texture("texture:surface_image", rgb[::-1])

    def upload_light_maps(self, maps: np.ndarray | None) -> None:
        """The natural look's horizons, sky view and broad slope (``lighting.light_maps``); None drops them."""
        if maps is None:
            self._drop("light_maps")
            return
        held = self._objects.get("light_maps")
        if held is not None and held.maps.shape == maps.shape:
            held.replace(maps)
        else:
            self._own("light_maps", LightMapsTexture(self.ctx, maps, repeat=True))

    def light_maps_for_sun(self, azimuth: float) -> moderngl.TextureArray:
        """The tiles' light maps (``LightMapsTexture.for_sun``) for a sun at compass bearing ``azimuth``."""
        return cast(LightMapsTexture, self.get("light_maps")).for_sun(azimuth)

    def surface_places(self, size: tuple[int, int]) -> tuple[moderngl.Texture, moderngl.Framebuffer]:
        """The texture the tiles' natural look copies its first pass into, at least ``size``, and its framebuffer.

        natural_surface.glsl reads it within the part of the image drawn. It only grows (the old one released):
        drafts, full frames and a shot's tiles of two sizes take turns without making it again.
        """
        held = self.get("texture:surface_places").size if self.has("texture:surface_places") else (0, 0)
        if held[0] < size[0] or held[1] < size[1]:
            if self.has("framebuffer:surface_places"):  # before the texture it draws into
                self._objects.pop("framebuffer:surface_places").release()
            grown = (max(held[0], size[0]), max(held[1], size[1]))
            places = self._own("texture:surface_places", self.ctx.texture(grown, 4))
            places.filter = (moderngl.NEAREST, moderngl.NEAREST)
            self._own("framebuffer:surface_places", self.ctx.framebuffer([places]))
        return self.get("texture:surface_places"), self.get("framebuffer:surface_places")

    def sky_table(self, sun: tuple[float, float, float]) -> dict[str, Any]:
        """The natural look's sky-view table for the sun toward ``sun`` (a unit vector), and its constants.

        The table is drawn only when the sun has moved, and read back then: its row of constants are the programs'
        uniforms (sky_view.glsl), returned by name. The read waits for the table (on a GPU, for the work queued
        before it), once per sun: while the sun is dragged, a frame; the model stays written once, in GLSL.

        The programs sample a copy of it written from here, not the texture drawn into: on llvmpipe, once the sun
        had moved, the endless world's vertex shaders reading that one made each region's draw wait for the frame's
        pixels so far (the world's frames at iterations 10 and 12 went from 45 to 50-59 ms, and stayed there).
        """
        if sun != self._sky_table_sun:
            table = self.get("framebuffer:sky_table")
            with self.ctx.scope(table, enable_only=moderngl.NOTHING):
                table.viewport = (0, 0, *table.size)
                uniform(self.programs["sky_table"], "sun_direction").value = sun
                self.get("vao:sky_table").render(moderngl.TRIANGLES, vertices=3)
            count = len(SKY_CONSTANTS)
            drawn = table.read(components=4, dtype="f2")
            self.get("texture:sky_table").write(drawn)
            texels = np.frombuffer(drawn, dtype=np.float16).reshape(SKY_TABLE_SIZE[1] + 1, SKY_TABLE_SIZE[0], 4)
            row = texels[SKY_TABLE_SIZE[1], :count].astype(np.float64)
            self._sky_constants = {name: float(texel[0]) if name == "exposure_scale" else tuple(texel[:3])
                                   for name, texel in zip(SKY_CONSTANTS, row, strict=True)}
            self._sky_table_sun = sun
        return self._sky_constants

    def bind_slopes(self, program: moderngl.Program, heights: HeightBands) -> None:
        """Bind the slope map of ``heights`` for the natural look's ``program``.

        Until the map is whole the program shades by the light maps' broad slope (``fine_slopes`` 0).
        """
        ready = heights.slopes_ready
        (heights.slopes if heights.slopes is not None and ready else self.get("texture:no_slopes")).use(SLOPE_UNIT)
        uniform(program, "slopes").value = SLOPE_UNIT
        uniform(program, "fine_slopes").value = float(ready)

    def surface_texture(self) -> moderngl.Texture:
        """The texture on the surface: the CPU-made one if uploaded, else the teximage."""
        return self._objects.get("texture:surface_image") or self._objects["texture:teximage"]

    def surface_texture_rgb(self) -> np.ndarray:
        """The texture on the surface read back as RGB uint8 rows in the heightmap's order (row 0 at z = -1)."""
        texture = self.surface_texture()
        pixels = np.frombuffer(texture.read(alignment=1), dtype=np.uint8)
        return pixels.reshape(texture.height, texture.width, 3)[::-1].copy()  # GL's first row is v = 0

    def draw_grid_lines(self, size: int, tiles: int) -> None:
        """Draw ``tiles`` copies of a full size x size grid's rows and columns with the "grid_lines" program.

        Each vertex's two segments are one triangle of three vertices (shaders/lines.glsl).
        """
        self.get("vao:grid_lines").render(moderngl.TRIANGLES, vertices=3 * size * size, instances=tiles)

    # --- level of detail -----------------------------------------------------------------------------------

    def lod_vertex_array(self, program: str, part: str, rows: np.ndarray, quads: int,
                         lines: bool) -> moderngl.VertexArray:
        """The vertex array that draws ``program``'s level-of-detail patches of ``quads`` quads per side.

        Its index buffer gives the lines program each vertex with its next column's and next row's (``lines``),
        or joins the patch's vertices into triangles.
        One instance per row of ``rows`` (float32, N x 6, see terrainview/lod.py; N x 8 for a program with
        ``atlas_region``, each node's region's layer and cell shift after); ``part`` names the instance buffer
        (``LodInstances``), which is rewritten in place and grows when needed.
        """
        buffer_key = LodInstances(part)
        buffer = self._objects.get(buffer_key)
        if buffer is None or buffer.size < rows.nbytes:
            buffer = self._own(buffer_key, self.ctx.buffer(reserve=max(2 * rows.nbytes, 16384)))
            # Vertex arrays bound to the old buffer go with it.
            self._drop(*[key for key in self._objects if isinstance(key, LodVertexArray) and key.part == part])
        if rows.size:
            buffer.write(np.ascontiguousarray(rows, dtype="f4"))
        vao_key = LodVertexArray(program, quads, part)
        if vao_key not in self._objects:
            # The atlas program's nodes carry their region's layer and cell shift too (world_draw._draw_atlases).
            atlas = "atlas_region" in self.programs[program]
            content = [(buffer, "4f 2f 2f/i", "node", "node_info", "atlas_region") if atlas
                       else (buffer, "4f 2f/i", "node", "node_info")]
            make_indices = patch_corner_indices if lines else patch_triangle_indices
            index_key = LodIndices(lines, quads)
            index = self._objects.get(index_key) or self._own(index_key, self.ctx.buffer(make_indices(quads)))
            self._own(vao_key, self.ctx.vertex_array(self.programs[program], content, index, index_element_size=4))
        return self._objects[vao_key]

    def lod_instances(self, part: str) -> moderngl.Buffer:
        """The instance buffer ``lod_vertex_array`` last wrote for ``part``."""
        return self._objects[LodInstances(part)]

    def pass_marks(self, half_passes: int) -> tuple[moderngl.VertexArray, int]:
        """The marks of the points the latest of ``half_passes`` half-passes set, and how many there are."""
        if self.marked_half_passes != half_passes:
            marks = fractal.half_pass_points(half_passes)
            buffer = self._own("buffer:pass_marks", self.ctx.buffer(marks.astype("i4")))
            self._own("vao:pass_marks", self.ctx.vertex_array(self.programs["pass_marks"],
                                                              [(buffer, "3i", "in_mark")]))
            self.marked_half_passes = half_passes
        return self.get("vao:pass_marks"), self.get("buffer:pass_marks").size // 12

    def _drop(self, *names: GpuKey) -> None:
        for name in names:
            gl_object = self._objects.pop(name, None)
            if gl_object is not None:
                gl_object.release()
