"""Reading a seed image: the grey values a ``--seed-image`` file gives the image-seeded diamond-square.

Files are read here, above the kernels, which take only arrays. A decoded image is kept per (path, mtime,
size), so moving a slider does not decode it again.
"""

from __future__ import annotations

import os
import stat
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

# Pixels of a seed image above this count are refused before decoding (a 4096 x 4096 image; decoded, about 150 MB
# at most): a scene from someone else must not cost more than a user would choose.
MAX_SEED_IMAGE_PIXELS = 1 << 24


_decoded: OrderedDict[tuple, np.ndarray] = OrderedDict()
_decoded_lock = threading.Lock()
_DECODED_KEEP = 4


@contextmanager
def _opened(path: str) -> Iterator[Any]:
    """The image opened (its header read, nothing decoded), or ValueError saying why it cannot be a seed image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            # Pillow's warnings (a decompression bomb above its own limit, odd TIFF tags) would break the one-line
            # message: the size is checked here, from the header, before anything is decoded.
            warnings.simplefilter("ignore")
            with Image.open(path) as image:
                if image.width * image.height > MAX_SEED_IMAGE_PIXELS:
                    raise ValueError(f"{image.width} x {image.height} pixels is too large (at most "
                                     f"{MAX_SEED_IMAGE_PIXELS} pixels)")
                yield image
    except UnidentifiedImageError:
        raise ValueError("not an image file Pillow can read") from None
    except Image.DecompressionBombError:  # past even Pillow's own limit, which it checks as it opens
        raise ValueError(f"too large (at most {MAX_SEED_IMAGE_PIXELS} pixels)") from None
    except (OSError, SyntaxError) as error:  # truncated or corrupt data
        raise ValueError(f"cannot decode the image ({error})") from None


def _file_status(path: str | os.PathLike) -> tuple[os.stat_result | None, str | None]:
    """The file at ``path`` as the file system has it, or why there is no image file there."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None, "no such file"
    except OSError as error:
        return None, error.strerror or str(error)
    return (info, None) if stat.S_ISREG(info.st_mode) else (None, "not a file")


def file_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot be a seed image, from the file system and the image's header (None if it may be one)."""
    _, problem = _file_status(path)
    return problem or header_problem(path)


def header_problem(path: str | os.PathLike) -> str | None:
    """Why the image at ``path`` cannot be a seed image, from its header alone (None if it may be one)."""
    try:
        with _opened(os.fspath(path)):
            return None
    except ValueError as error:
        return str(error)


def _decode_grey(path: str) -> np.ndarray:
    """The image as float32 grey values in [0, 1]; 16-bit grey images keep their 16 bits."""
    try:
        with _opened(path) as image:
            if image.mode.startswith("I;16") or image.mode == "I":
                grey = np.asarray(image.convert("I"), dtype=np.float32) * np.float32(1.0 / 65535.0)
            elif image.mode == "F":
                grey = np.asarray(image, dtype=np.float32)
            else:  # 1, L, LA, P, RGB, RGBA, CMYK, YCbCr...: ITU-R 601-2 luma
                grey = np.asarray(image.convert("L"), dtype=np.float32) * np.float32(1.0 / 255.0)
    except ValueError as error:
        raise ValueError(f"seed_image: {path}: {error}") from None
    if grey.ndim != 2 or grey.size == 0:
        raise ValueError(f"seed_image: {path}: not a 2D image")
    return np.clip(np.nan_to_num(grey), 0.0, 1.0).astype(np.float32, copy=False)


def load_seed_image(path: str | os.PathLike) -> np.ndarray:
    """The grey values in [0, 1] (float32, read-only) of an image file, decoded once per (path, mtime, size).

    8-bit images (any mode; colour through Pillow's luma conversion) are divided by 255, 16-bit grey images by
    65535, floating-point images are clipped to [0, 1]. Raises ``ValueError("seed_image: PATH: ...")``
    for a missing, unreadable or non-image file.
    """
    path = os.fspath(path)
    info, problem = _file_status(path)
    if info is None:
        raise ValueError(f"seed_image: {path}: {problem}")
    key = (os.path.abspath(path), info.st_mtime_ns, info.st_size)
    with _decoded_lock:
        grey = _decoded.get(key)
        if grey is not None:
            _decoded.move_to_end(key)
            return grey
    grey = _decode_grey(path)
    grey.flags.writeable = False
    with _decoded_lock:
        _decoded[key] = grey
        while len(_decoded) > _DECODED_KEEP:
            _decoded.popitem(last=False)
    return grey
