"""The surface as a triangle mesh, and Wavefront OBJ/MTL output (no GL).

The mesh matches what the viewer draws: X and Z from -1 to 1 per tile, tiles 2 units apart and centred,
height = the array value, texture coordinates u = (x + 1) / 2, v = (1 - z) / 2 within each tile.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Mesh:
    positions: np.ndarray  # (V, 3) float32
    normals: np.ndarray  # (V, 3) float32, unit length
    texcoords: np.ndarray  # (V, 2) float32
    faces: np.ndarray  # (F, 3) int64, 0-based vertex indices, counter-clockwise seen from above


def grid_normals(heights: np.ndarray) -> np.ndarray:
    """Unit normals of a seamless heightmap by central differences, wrapping across the edges like the
    shader does, so tiles meet without a shading seam."""
    last = heights.shape[0] - 1
    cell = 2.0 / last
    core = heights[:last, :last].astype(np.float64)  # the periodic part; the last row/column repeat the first
    dx = np.roll(core, -1, axis=1) - np.roll(core, 1, axis=1)
    dz = np.roll(core, -1, axis=0) - np.roll(core, 1, axis=0)
    normals = np.stack([-dx, np.full_like(core, 2.0 * cell), -dz], axis=-1)
    normals = np.pad(normals, ((0, 1), (0, 1), (0, 0)), mode="wrap")
    return (normals / np.linalg.norm(normals, axis=-1, keepdims=True)).astype(np.float32)


def surface_mesh(heights: np.ndarray, tile: int = 1) -> Mesh:
    """Triangles of the heightmap, repeated tile x tile times."""
    size = heights.shape[0]
    axis = np.linspace(-1.0, 1.0, size)
    x, z = np.meshgrid(axis, axis)  # rows are Z, columns are X
    local = np.stack([x, heights, z], axis=-1).reshape(-1, 3)
    uv = np.stack([(x + 1.0) / 2.0, (1.0 - z) / 2.0], axis=-1).reshape(-1, 2)
    normals = grid_normals(heights).reshape(-1, 3)

    # Two triangles per cell, wound counter-clockwise when seen from above (+Y), as the viewer draws them.
    rows, columns = np.meshgrid(np.arange(size - 1), np.arange(size - 1), indexing="ij")
    corner = (rows * size + columns).ravel()
    cell_faces = np.concatenate([
        np.stack([corner, corner + size, corner + 1], axis=-1),
        np.stack([corner + 1, corner + size, corner + size + 1], axis=-1),
    ])

    offsets = 2.0 * (np.arange(tile) - 0.5 * (tile - 1))
    positions, faces = [], []
    for tile_index, (offset_z, offset_x) in enumerate((oz, ox) for oz in offsets for ox in offsets):
        positions.append(local + np.array([offset_x, 0.0, offset_z]))
        faces.append(cell_faces + tile_index * size * size)
    count = tile * tile
    return Mesh(np.concatenate(positions).astype(np.float32), np.tile(normals, (count, 1)),
                np.tile(uv, (count, 1)).astype(np.float32), np.concatenate(faces))


def write_obj(mesh: Mesh, obj_path: Path, material_file: str, texture_file: str, mtl_path: Path,
              header: str) -> None:
    # Paths are where to write (temporary files, maybe); the names are what the OBJ/MTL refer to.
    """Write the mesh as OBJ (v, vn, vt, f with 1-based v/vt/vn indices) and its MTL naming the texture."""
    mtl_path.write_text(
        f"# {header}\nnewmtl terrain\nKa 1 1 1\nKd 1 1 1\nKs 0 0 0\nillum 1\nmap_Kd {texture_file}\n",
        encoding="utf-8",
    )
    with open(obj_path, "w", encoding="utf-8") as out:
        out.write(f"# {header}\nmtllib {material_file}\nusemtl terrain\n")
        _write_rows(out, "v %.6f %.6f %.6f\n", mesh.positions)
        _write_rows(out, "vn %.6f %.6f %.6f\n", mesh.normals)
        _write_rows(out, "vt %.6f %.6f\n", mesh.texcoords)
        # v/vt/vn share one index per corner.
        _write_rows(out, "f %d/%d/%d %d/%d/%d %d/%d/%d\n", np.repeat(mesh.faces + 1, 3, axis=1))


def _write_rows(out, row_format: str, rows: np.ndarray, chunk: int = 65536) -> None:
    """Format rows in chunks with one ``%`` each: several times faster than np.savetxt's per-row loop."""
    for start in range(0, len(rows), chunk):
        block = rows[start:start + chunk]
        out.write((row_format * len(block)) % tuple(block.ravel().tolist()))
