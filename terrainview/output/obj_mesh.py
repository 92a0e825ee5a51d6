"""The surface as a triangle mesh written as Wavefront OBJ/MTL, streaming, in constant memory (no GL).

The mesh matches what the viewer draws: X and Z from -1 to 1 per tile, tiles 2 units apart and centred,
height = the array value, texture coordinates u = (x + 1) / 2, v = (1 - z) / 2 within each tile. Rows are
computed and written a band at a time, so a 4097² map over 8 x 8 tiles (a billion vertices) needs no more
memory than a small one: only the heightmap itself is held.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

BAND_VALUES = 1 << 16  # vertices (or faces) formatted at a time


@dataclass(frozen=True)
class SurfaceGrid:
    """A seamless (2**n + 1)² heightmap drawn ``tile`` x ``tile`` times."""

    heights: np.ndarray
    tile: int = 1

    @property
    def side(self) -> int:
        """Heightmap rows (and columns)."""
        return self.heights.shape[0]

    def tile_offsets(self) -> Iterator[tuple[float, float]]:
        """(x, z) offset of each tile, rows of tiles along Z, in vertex-index order."""
        offsets = 2.0 * (np.arange(self.tile) - 0.5 * (self.tile - 1))
        return ((float(ox), float(oz)) for oz in offsets for ox in offsets)

    def bands(self, rows: int) -> Iterator[tuple[int, int]]:
        """(start, stop) ranges splitting ``rows`` rows into bands of about BAND_VALUES values, formatted at a time."""
        step = max(1, BAND_VALUES // self.side)
        return ((start, min(start + step, rows)) for start in range(0, rows, step))


def vertex_count(side: int, tile: int) -> int:
    """Vertices of a side² heightmap's mesh in tile² copies: side² per copy."""
    return tile * tile * side * side


def face_count(side: int, tile: int) -> int:
    """Triangles of a side² heightmap's mesh in tile² copies: two per cell."""
    return tile * tile * 2 * (side - 1) ** 2


def obj_size_estimate(side: int, tile: int) -> int:
    """About how many bytes ``write_obj`` writes for a side² heightmap in tile² copies (from its line formats)."""
    vertices, faces = vertex_count(side, tile), face_count(side, tile)
    per_vertex = len("v -1.000000 -1.000000 -1.000000\n") + len("vn -0.000000 1.000000 -0.000000\n") \
        + len("vt 0.000000 0.000000\n")
    per_face = len("f ///// ///// /////\n") + 9 * len(str(vertices))
    return vertices * per_vertex + faces * per_face


def normals_band(heights: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Unit normals of rows start..stop of a seamless heightmap by central differences; (rows, side, 3) float32.

    They wrap across the edges like the shader does, so tiles meet without a shading seam.
    """
    last = heights.shape[0] - 1
    cell = 2.0 / last
    core = heights[:last, :last]  # the periodic part; the last row/column repeat the first
    rows = np.arange(start, stop) % last
    centre = core[rows].astype(np.float64)
    dx = np.roll(centre, -1, axis=1) - np.roll(centre, 1, axis=1)
    dz = core[(rows + 1) % last].astype(np.float64) - core[(rows - 1) % last]
    normals = np.stack([-dx, np.full_like(centre, 2.0 * cell), -dz], axis=-1)
    normals = np.concatenate([normals, normals[:, :1]], axis=1)
    return (normals / np.linalg.norm(normals, axis=-1, keepdims=True)).astype(np.float32)


def write_obj(grid: SurfaceGrid, obj_path: Path, material_file: str, texture_file: str, mtl_path: Path,
              header: str) -> None:
    """Write the mesh as OBJ (v, vn, vt, f with 1-based v/vt/vn indices) and its MTL naming the texture.

    Paths are where to write (temporary files, maybe); the names are what the OBJ and MTL refer to.
    """
    mtl_path.write_text(
        f"# {header}\nnewmtl terrain\nKa 1 1 1\nKd 1 1 1\nKs 0 0 0\nillum 1\nmap_Kd {texture_file}\n",
        encoding="utf-8",
    )
    side = grid.side
    axis = np.linspace(-1.0, 1.0, side)
    with open(obj_path, "w", encoding="utf-8") as out:
        out.write(f"# {header}\nmtllib {material_file}\nusemtl terrain\n")
        for offset_x, offset_z in grid.tile_offsets():
            for start, stop in grid.bands(side):
                x, z = np.meshgrid(axis + offset_x, axis[start:stop] + offset_z)
                positions = np.stack([x, grid.heights[start:stop], z], axis=-1).astype(np.float32)
                write_rows(out, "v %.6f %.6f %.6f\n", positions.reshape(-1, 3))
        for _ in range(grid.tile * grid.tile):
            for start, stop in grid.bands(side):
                write_rows(out, "vn %.6f %.6f %.6f\n", normals_band(grid.heights, start, stop).reshape(-1, 3))
        for _ in range(grid.tile * grid.tile):
            for start, stop in grid.bands(side):
                x, z = np.meshgrid(axis, axis[start:stop])
                texcoords = np.stack([(x + 1.0) / 2.0, (1.0 - z) / 2.0], axis=-1).astype(np.float32)
                write_rows(out, "vt %.6f %.6f\n", texcoords.reshape(-1, 2))
        for tile_index in range(grid.tile * grid.tile):
            _write_faces(out, side, tile_index * side * side, grid)


def _write_faces(out: TextIO, side: int, first_vertex: int, grid: SurfaceGrid) -> None:
    """Two triangles per cell, wound counter-clockwise seen from above (+Y) as the viewer draws them.

    Every cell's first triangle comes first, then every cell's second; v/vt/vn share one 1-based index per
    corner.
    """
    for second in (False, True):
        for start, stop in grid.bands(side - 1):
            rows, columns = np.meshgrid(np.arange(start, stop), np.arange(side - 1), indexing="ij")
            corner = (rows * side + columns).ravel() + first_vertex + 1
            if second:
                faces = np.stack([corner + 1, corner + side, corner + side + 1], axis=-1)
            else:
                faces = np.stack([corner, corner + side, corner + 1], axis=-1)
            write_rows(out, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", np.repeat(faces, 3, axis=1))


def write_rows(out: TextIO, row_format: str, rows: np.ndarray) -> None:
    """Write rows of numbers as lines of ``row_format``, one ``%`` per block (much faster than np.savetxt's rows)."""
    for start in range(0, len(rows), BAND_VALUES):
        block = rows[start:start + BAND_VALUES]
        out.write((row_format * len(block)) % tuple(block.ravel().tolist()))
