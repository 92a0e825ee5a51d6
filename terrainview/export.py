"""``terrainview export``: the surface heightmap written to a file (no GL).

The format follows the output file's extension (``EXPORT_FORMATS``):

- ``.npy``: the float32 heightmap exactly, shape (2**n + 1, 2**n + 1), rows are Z (``np.save``);
- ``.png``: 16-bit greyscale, minimum -> 0, maximum -> 65535 (a flat heightmap is all 0), with the scene in
  text chunks like every PNG terrainview writes, plus ``terrainview.height_min`` / ``terrainview.height_max``
  so the float range can be recovered: ``height = min + value / 65535 * (max - min)``;
- ``.raw``: the same 16-bit values as the PNG, little-endian, no header, row after row (Unity/Ogre terrain).

The export is always the 2D surface: in 1d mode the 2D heightmap of the same seed, H, iterations and height
scale is written (that is, the settings with ``mode='lines'``), and that is the scene the PNG records.

The path is checked before anything is generated, and the file is written through ``atomic_output``: an
existing file is never replaced without ``--force`` and a failure leaves no partial file behind.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from .files import atomic_output, check_output_path
from .scene import png_text_chunks
from .settings import SceneSettings, SettingsError
from .terrain import surface_heights

UINT16_MAX = 65535

# A writer gets the heightmap, the settings it was made from, the temporary file to write (its name ends in
# .part, so writers must not rely on the suffix) and the final path (for formats that refer to it).
Writer = Callable[[np.ndarray, SceneSettings, Path, Path], None]


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


def _write_npy(heights: np.ndarray, settings: SceneSettings, temporary: Path, path: Path) -> None:
    with open(temporary, "wb") as stream:  # np.save on a name would append .npy to the .part name
        np.save(stream, heights, allow_pickle=False)


def _write_png(heights: np.ndarray, settings: SceneSettings, temporary: Path, path: Path) -> None:
    values, low, high = normalize_uint16(heights)
    image = Image.fromarray(values)  # uint16 -> mode 'I;16'
    extra = {"height_min": repr(low), "height_max": repr(high)}
    image.save(temporary, format="PNG", pnginfo=png_text_chunks(settings, extra=extra))


def _write_raw(heights: np.ndarray, settings: SceneSettings, temporary: Path, path: Path) -> None:
    values, _, _ = normalize_uint16(heights)
    temporary.write_bytes(values.astype("<u2").tobytes(order="C"))


# Extension (lower case, with the dot) -> writer. Add a format by adding an entry.
EXPORT_FORMATS: dict[str, Writer] = {
    ".npy": _write_npy,
    ".png": _write_png,
    ".raw": _write_raw,
}


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    extensions = ", ".join(EXPORT_FORMATS)
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help=f"the file to write; its extension picks the format ({extensions})")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")


def export_settings(settings: SceneSettings) -> SceneSettings:
    """The settings whose surface is exported: in 1d mode, the same scene's 2D heightmap (mode 'lines')."""
    if settings.mode != "1d":
        return settings
    try:
        return settings.replace(mode="lines")
    except SettingsError as error:
        raise SettingsError(f"export writes the 2D heightmap, also in 1d mode; {error}") from None


def export_command(args: argparse.Namespace, settings: SceneSettings) -> int:
    path = check_output_path(args.output, args.force, EXPORT_FORMATS)
    settings = export_settings(settings)
    writer = EXPORT_FORMATS[path.suffix.lower()]
    heights = surface_heights(settings)
    with atomic_output(path, args.force) as temporary:
        writer(heights, settings, temporary, path)
    shape = "x".join(str(side) for side in heights.shape)
    print(f"wrote {path} ({path.stat().st_size} bytes, {shape} heights)")
    return 0
