"""Heightmap and mesh export: the file formats behind ``terrainview export`` (no GL but the teximage's).

The format follows the output file's extension (``EXPORT_FORMATS``):

- ``.npy``: the float32 heightmap exactly, shape (2**n + 1, 2**n + 1), rows are Z (``np.save``);
- ``.png``: 16-bit greyscale, minimum -> 0, maximum -> 65535 (a flat heightmap is all 0), with the scene in
  text chunks like every PNG terrainview writes, plus ``terrainview.height_min`` / ``terrainview.height_max``
  so the float range can be recovered: ``height = min + value / 65535 * (max - min)``;
- ``.raw``: the same 16-bit values as the PNG, little-endian, no header, row after row (Unity/Ogre terrain);
- ``.obj``: the surface mesh (vertices, normals, texture coordinates, faces), ``--tile`` x ``--tile`` copies,
  with ``NAME.mtl`` and the surface texture (teximage, blend or bands, as ``--texture`` says) as
  ``NAME-texture.png`` beside it, so Blender opens it textured. All three files are written or none, in
  constant memory, and refused up front when the disk cannot hold them.

The export is always the 2D surface: in 1d mode the 2D heightmap of the same seed, H, iterations and height
scale is written (that is, the settings with ``mode='lines'``), and that is the scene the PNG records.

The path is checked before anything is generated, and the file is written through ``atomic_output``: an
existing file is never replaced without ``--force`` and a failure leaves no partial file behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from terrainview.scene import catalog
from terrainview.scene.scene_file import png_text_chunks, scene_document
from terrainview.scene.settings import SceneSettings, SettingsError

UINT16_MAX = 65535

# A writer gets the heightmap, the settings it was made from and, for each file it writes (the output and its
# COMPANIONS), the final path mapped to the temporary file to write (whose name ends in .part, so writers
# must not rely on the suffix).
Writer = Callable[[np.ndarray, SceneSettings, dict[Path, Path]], None]


def normalize_uint16(heights: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Heights mapped linearly to uint16, minimum -> 0 and maximum -> 65535 (rounded to nearest).

    Returns the values and the float range (min, max); a flat array maps to all 0. Shared by PNG and RAW,
    so the two formats agree value for value.
    """
    heights = np.asarray(heights)
    low, high = float(heights.min()), float(heights.max())
    if high <= low:
        return np.zeros(heights.shape, dtype=np.uint16), low, high
    scaled = (heights.astype(np.float64) - low) * (UINT16_MAX / (high - low))
    return np.clip(np.rint(scaled), 0, UINT16_MAX).astype(np.uint16), low, high


def _write_npy(heights: np.ndarray, settings: SceneSettings, files: dict[Path, Path]) -> None:
    (temporary,) = files.values()
    with open(temporary, "wb") as stream:  # np.save on a name would append .npy to the .part name
        np.save(stream, heights, allow_pickle=False)


def _write_png(heights: np.ndarray, settings: SceneSettings, files: dict[Path, Path]) -> None:
    (temporary,) = files.values()
    values, low, high = normalize_uint16(heights)
    image = Image.fromarray(values)  # uint16 -> mode 'I;16'
    extra = {"height_min": repr(low), "height_max": repr(high)}
    image.save(temporary, format="PNG", pnginfo=png_text_chunks(settings, extra=extra))


def _write_raw(heights: np.ndarray, settings: SceneSettings, files: dict[Path, Path]) -> None:
    (temporary,) = files.values()
    values, _, _ = normalize_uint16(heights)
    temporary.write_bytes(values.astype("<u2").tobytes(order="C"))


def surface_texture_rgb(settings: SceneSettings) -> np.ndarray:
    """The image that textures the surface, RGB uint8 with the heightmap's row order.

    Row 0 is at z = -1, the top of the picture, v = 1. The teximage is drawn by GL: the GPU layer reads it back.
    """
    if catalog.texture(settings).make is not None:  # a CPU-made texture
        from terrainview.scene.derived_arrays import DerivedArrays

        arrays = DerivedArrays()
        arrays.update(settings)
        made = arrays.surface_texture.value
        if made is None:
            raise ValueError(f"the {settings.texture} texture was not made")
        return made
    from terrainview.render.offscreen import drawn_surface_texture  # GL only for the teximage

    return drawn_surface_texture(settings)


def _write_obj(heights: np.ndarray, settings: SceneSettings, files: dict[Path, Path]) -> None:
    from terrainview.output.obj_mesh import SurfaceGrid, write_obj

    obj, mtl, png = files
    grid = SurfaceGrid(heights, mesh_tiles(settings))
    Image.fromarray(surface_texture_rgb(settings)).save(files[png], format="PNG",
                                                         pnginfo=png_text_chunks(settings))
    header = json.dumps(scene_document(settings), sort_keys=True)
    write_obj(grid, files[obj], mtl.name, png.name, files[mtl], header)


def writing_note(heights: np.ndarray, settings: SceneSettings, extension: str) -> str:
    """What the writer of ``extension`` makes of ``heights`` worth showing while it writes ("" if nothing)."""
    if extension != ".obj":
        return ""
    from terrainview.output.obj_mesh import face_count, vertex_count

    side, tiles = heights.shape[0], mesh_tiles(settings)
    return f" ({vertex_count(side, tiles):,} vertices, {face_count(side, tiles):,} triangles, {tiles}x{tiles} tiles)"


# Extension (lower case, with the dot) -> writer. Add a format by adding an entry.
EXPORT_FORMATS: dict[str, Writer] = {
    ".npy": _write_npy,
    ".png": _write_png,
    ".raw": _write_raw,
    ".obj": _write_obj,
}
# ``--flow-map``: the wetness as float32 .npy, or as a 16-bit grey PNG (0 -> 0, 1 -> 65535).
FLOW_MAP_FORMATS = (".npy", ".png")
# Files a format writes beside the output, by extension: (name ending, role). NAME.obj brings NAME.mtl and
# NAME-texture.png, names no other export of NAME takes (NAME.png is a heightmap export).
COMPANIONS: dict[str, tuple[tuple[str, str], ...]] = {
    ".obj": ((".mtl", "the material of {name}"), ("-texture.png", "the texture of {name}")),
}


def companion_paths(path: Path) -> dict[Path, str]:
    """The output and the files written beside it, each with its role ('' for the output itself)."""
    extension = path.suffix.lower()
    paths = {path: ""}
    for ending, role in COMPANIONS.get(extension, ()):
        paths[path.with_name(path.stem + ending)] = role.format(name=path.name)
    return paths


def mesh_tiles(settings: SceneSettings) -> int:
    """Tiles per side of an exported mesh: the repeated surface exports the one seamless tile it repeats."""
    return settings.tile if isinstance(settings.tile, int) else 1


def estimated_bytes(settings: SceneSettings, extension: str) -> int:
    """About how large the output (with its companions) will be, to refuse it up front when the disk is short."""
    side = (1 << settings.iterations) + 1
    if extension == ".obj":
        from terrainview.output.obj_mesh import obj_size_estimate

        return obj_size_estimate(side, mesh_tiles(settings))
    return side * side * (4 if extension == ".npy" else 2)


def export_settings(settings: SceneSettings) -> SceneSettings:
    """The settings whose surface is exported: in 1d mode, the same scene's 2D heightmap (mode 'lines')."""
    if catalog.render_type(settings).dimensions == 2:
        return settings
    try:
        return settings.replace(mode=catalog.SURFACE_RENDER_TYPE)
    except SettingsError as error:
        raise SettingsError(f"export writes the 2D heightmap, also in 1d mode; {error}") from None


def write_flow_map(flow: np.ndarray, extension: str, temporary: Path) -> None:
    """The hydraulic erosion's flow map (wetness 0-1): float32 ``.npy``, or 16-bit grey ``.png`` (1 -> 65535)."""
    if extension == ".npy":
        with open(temporary, "wb") as stream:
            np.save(stream, flow, allow_pickle=False)
    else:
        values = np.clip(np.rint(flow.astype(np.float64) * UINT16_MAX), 0, UINT16_MAX).astype(np.uint16)
        Image.fromarray(values).save(temporary, format="PNG")
