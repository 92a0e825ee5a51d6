"""A rectangle of the endless world written to a file, a band of rows at a time, in constant memory (no GL).

``export --tile endless --region X0,Z0,X1,Z1`` writes the world's lattice points from (X0, Z0) to (X1, Z1),
world units, corners included (rounded outward to the grid), at the spacing of a 2-unit surface of the scene's
iterations: 2**n cells per 2 units. The formats are the tile's (output/export_formats.py): ``.npy`` float32
exactly; ``.png`` and ``.raw`` 16-bit, minimum -> 0 and maximum -> 65535, which takes a first pass over the
rectangle for its range; ``.obj`` a mesh at the world's own coordinates with its texture: the rectangle coloured
by the teximage's height bands, as the viewer colours the world. Rows come from the world kernel a band at a
time (any band equals the same rows of the whole, kernels/world.py), so the size of the rectangle costs time
and disk, never memory.
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
from PIL import Image

from terrainview.kernels import world
from terrainview.output.export_formats import UINT16_MAX
from terrainview.output.obj_mesh import BAND_VALUES, write_rows
from terrainview.scene.scene_file import png_text_chunks, scene_document
from terrainview.scene.settings import SceneSettings, SettingsError
from terrainview.scene.world_regions import World, world_band_limits

MAX_SIDE = 1 << 20  # points along either side of a rectangle
MAX_POINTS = 1 << 31  # points in all: 8 GiB as .npy, refused up front beyond
TEXTURE_SIDE = 2048  # the .obj's texture is at most this many pixels along its longer side
BAND_COLORS = ((51, 102, 51), (140, 140, 153), (242, 242, 255))  # the teximage's bands (SPEC), as bytes

Progress = Callable[[float], None]


@dataclass(frozen=True)
class WorldRectangle:
    """Lattice points [column0, column0 + columns) x [row0, row0 + rows) of one world at ``iterations``."""

    world: World
    iterations: int
    column0: int
    row0: int
    columns: int
    rows: int

    @classmethod
    def parse(cls, text: str, settings: SceneSettings) -> WorldRectangle:
        """``X0,Z0,X1,Z1`` (world units) as the smallest rectangle of grid points holding it, or SettingsError."""
        parts = text.split(",")
        try:
            x0, z0, x1, z1 = (float(part) for part in parts)
        except ValueError:
            raise SettingsError(f"--region: expected X0,Z0,X1,Z1 (four numbers, world units), got {text!r}") from None
        limit = world.MAX_WORLD_CELLS / (1 << world.MAX_ITERATIONS_2D) * 2.0 - 1.0
        if not all(math.isfinite(value) and abs(value) <= limit for value in (x0, z0, x1, z1)):
            raise SettingsError(f"--region: each coordinate must be a number within ±{limit:,.0f}, got {text!r}")
        if x1 <= x0 or z1 <= z0:
            raise SettingsError(f"--region: X1 must be more than X0 and Z1 more than Z0, got {text!r}")
        world_ = World.of(settings)
        if world_ is None:
            raise SettingsError("--region takes a rectangle of the endless world: add --tile endless")
        per_unit = (1 << settings.iterations) / 2.0

        def grid(value: float, rounding: Callable[[float], float]) -> int:
            return int(rounding(round((value + 1.0) * per_unit, 9)))

        column0, row0 = grid(x0, math.floor), grid(z0, math.floor)
        columns, rows = grid(x1, math.ceil) - column0 + 1, grid(z1, math.ceil) - row0 + 1
        if max(columns, rows) > MAX_SIDE or columns * rows > MAX_POINTS:
            raise SettingsError(f"--region: {columns:,} x {rows:,} points at iterations {settings.iterations}; the "
                                f"most is {MAX_SIDE:,} a side and {MAX_POINTS:,} in all (fewer --iterations, or "
                                "a smaller rectangle)")
        return cls(world_, settings.iterations, column0, row0, columns, rows)

    def corner(self, column: int, row: int) -> tuple[float, float]:
        """World (x, z) of a lattice point."""
        per_unit = (1 << self.iterations) / 2.0
        return column / per_unit - 1.0, row / per_unit - 1.0

    def describe(self) -> str:
        """The rectangle written, in world units."""
        x0, z0 = self.corner(self.column0, self.row0)
        x1, z1 = self.corner(self.column0 + self.columns - 1, self.row0 + self.rows - 1)
        return f"x {x0:g} to {x1:g}, z {z0:g} to {z1:g}"

    def heights(self, first_row: int, rows: int, margin: int = 0) -> np.ndarray:
        """Rows first_row .. first_row + rows of the rectangle, with ``margin`` more points on every side."""
        world_ = self.world
        return world.world_heights(self.iterations, self.column0 - margin, self.row0 + first_row - margin,
                                   self.columns + 2 * margin, rows + 2 * margin, world_.seed, world_.h,
                                   world_.height_scale, world_.octaves)

    def bands(self) -> Iterator[tuple[int, int]]:
        """(first row, rows) of the bands the rectangle is made in, about BAND_VALUES x 16 points each."""
        step = max(1, (BAND_VALUES * 16) // self.columns)
        return ((start, min(step, self.rows - start)) for start in range(0, self.rows, step))

    def range(self, progress: Progress) -> tuple[float, float]:
        """The lowest and highest heights, in a first pass."""
        low, high = math.inf, -math.inf
        for first, rows in self.bands():
            band = self.heights(first, rows)
            low, high = min(low, float(band.min())), max(high, float(band.max()))
            progress((first + rows) / self.rows)
        return low, high


def estimated_world_bytes(rectangle: WorldRectangle, extension: str) -> int:
    """About how large the output will be, to refuse it up front when the disk is short."""
    points = rectangle.columns * rectangle.rows
    if extension == ".obj":
        return points * 120
    return points * (4 if extension == ".npy" else 2)


def _uint16(band: np.ndarray, low: float, high: float) -> np.ndarray:
    if high <= low:
        return np.zeros(band.shape, dtype=np.uint16)
    scaled = (band.astype(np.float64) - low) * (UINT16_MAX / (high - low))
    return np.clip(np.rint(scaled), 0, UINT16_MAX).astype(np.uint16)


def _write_npy(rectangle: WorldRectangle, settings: SceneSettings, files: dict[Path, Path],
               progress: Progress) -> None:
    (temporary,) = files.values()
    with open(temporary, "wb") as stream:
        header = {"descr": "<f4", "fortran_order": False, "shape": (rectangle.rows, rectangle.columns)}
        np.lib.format.write_array_header_2_0(stream, header)
        for first, rows in rectangle.bands():
            stream.write(rectangle.heights(first, rows).astype("<f4").tobytes())
            progress((first + rows) / rectangle.rows)


def _write_raw(rectangle: WorldRectangle, settings: SceneSettings, files: dict[Path, Path],
               progress: Progress) -> None:
    (temporary,) = files.values()
    low, high = rectangle.range(lambda fraction: progress(fraction / 2))
    with open(temporary, "wb") as stream:
        for first, rows in rectangle.bands():
            stream.write(_uint16(rectangle.heights(first, rows), low, high).astype("<u2").tobytes())
            progress(0.5 + (first + rows) / rectangle.rows / 2)


def _png_chunk(stream: BinaryIO, kind: bytes, data: bytes) -> None:
    stream.write(struct.pack(">I", len(data)) + kind + data)
    stream.write(struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _write_png(rectangle: WorldRectangle, settings: SceneSettings, files: dict[Path, Path],
               progress: Progress) -> None:
    """16-bit grey PNG written chunk by chunk: Pillow would need the whole image in memory."""
    (temporary,) = files.values()
    low, high = rectangle.range(lambda fraction: progress(fraction / 2))
    extra = {"height_min": repr(low), "height_max": repr(high), "region": rectangle.describe()}
    with open(temporary, "wb") as stream:
        stream.write(b"\x89PNG\r\n\x1a\n")
        _png_chunk(stream, b"IHDR", struct.pack(">IIBBBBB", rectangle.columns, rectangle.rows, 16, 0, 0, 0, 0))
        for kind, data, *_ in png_text_chunks(settings, extra=extra).chunks:
            _png_chunk(stream, kind, data)
        compressor = zlib.compressobj(6)
        for first, rows in rectangle.bands():
            values = _uint16(rectangle.heights(first, rows), low, high).astype(">u2")
            filtered = np.zeros((rows, 1 + 2 * rectangle.columns), dtype=np.uint8)  # filter type 0 per row
            filtered[:, 1:] = values.view(np.uint8).reshape(rows, -1)
            _png_chunk(stream, b"IDAT", compressor.compress(filtered.tobytes()))
            progress(0.5 + (first + rows) / rectangle.rows / 2)
        _png_chunk(stream, b"IDAT", compressor.flush())
        _png_chunk(stream, b"IEND", b"")


def _texture(rectangle: WorldRectangle) -> np.ndarray:
    """The world's colours over the rectangle: its height bands, at most TEXTURE_SIDE pixels a side."""
    shrink = 0
    while max(rectangle.columns, rectangle.rows) > TEXTURE_SIDE << shrink and shrink < rectangle.iterations - 1:
        shrink += 1
    step = 1 << shrink  # every step-th point is the world at iterations - shrink, exactly
    coarse = world.world_heights(rectangle.iterations - shrink, -(-rectangle.column0 // step),
                                 -(-rectangle.row0 // step), max(2, rectangle.columns // step),
                                 max(2, rectangle.rows // step), rectangle.world.seed, rectangle.world.h,
                                 rectangle.world.height_scale, rectangle.world.octaves)
    low, high = world_band_limits(rectangle.world)
    bands = np.digitize(coarse, [low, high])
    return np.array(BAND_COLORS, dtype=np.uint8)[bands]


def _write_obj(rectangle: WorldRectangle, settings: SceneSettings, files: dict[Path, Path],
               progress: Progress) -> None:
    obj, mtl, png = files
    Image.fromarray(_texture(rectangle)).save(files[png], format="PNG", pnginfo=png_text_chunks(settings))
    files[mtl].write_text(f"newmtl terrain\nKa 1 1 1\nKd 1 1 1\nKs 0 0 0\nillum 1\nmap_Kd {png.name}\n",
                          encoding="utf-8")
    columns, rows = rectangle.columns, rectangle.rows
    cell = 2.0 / (1 << rectangle.iterations)
    x0, z0 = rectangle.corner(rectangle.column0, rectangle.row0)
    bands = list(rectangle.bands())
    with open(files[obj], "w", encoding="utf-8") as out:
        out.write(f"# {json.dumps(scene_document(settings), sort_keys=True)}\n# region {rectangle.describe()}\n"
                  f"mtllib {mtl.name}\nusemtl terrain\n")
        x = x0 + cell * np.arange(columns)
        u = np.arange(columns) / max(columns - 1, 1)
        for index, (first, count) in enumerate(bands):
            with_margin = rectangle.heights(first, count, margin=1).astype(np.float64)
            heights = with_margin[1:-1, 1:-1]
            z = z0 + cell * (first + np.arange(count))
            xs, zs = np.meshgrid(x, z)
            write_rows(out, "v %.6f %.6f %.6f\n", np.stack([xs, heights, zs], axis=-1).reshape(-1, 3))
            # Normals from the neighbours, those beyond the rectangle included: no seam with a next export.
            dx = with_margin[1:-1, 2:] - with_margin[1:-1, :-2]
            dz = with_margin[2:, 1:-1] - with_margin[:-2, 1:-1]
            normals = np.stack([-dx, np.full_like(dx, 2.0 * cell), -dz], axis=-1)
            normals /= np.linalg.norm(normals, axis=-1, keepdims=True)
            write_rows(out, "vn %.6f %.6f %.6f\n", normals.reshape(-1, 3))
            v = 1.0 - (first + np.arange(count)) / max(rows - 1, 1)
            us, vs = np.meshgrid(u, v)
            write_rows(out, "vt %.6f %.6f\n", np.stack([us, vs], axis=-1).reshape(-1, 2))
            progress((index + 1) / len(bands) / 2)
        for index, (first, count) in enumerate(bands):
            last = min(first + count, rows - 1)
            if last <= first:
                continue
            row_index, column_index = np.meshgrid(np.arange(first, last), np.arange(columns - 1), indexing="ij")
            corner = (row_index * columns + column_index).ravel() + 1
            for faces in (np.stack([corner, corner + columns, corner + 1], axis=-1),
                          np.stack([corner + 1, corner + columns, corner + columns + 1], axis=-1)):
                write_rows(out, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", np.repeat(faces, 3, axis=1))
            progress(0.5 + (index + 1) / len(bands) / 2)


WorldWriter = Callable[[WorldRectangle, SceneSettings, dict[Path, Path], Progress], None]
# Extension -> writer: the same formats as the tile's export.
WORLD_FORMATS: dict[str, WorldWriter] = {".npy": _write_npy, ".png": _write_png, ".raw": _write_raw,
                                         ".obj": _write_obj}
