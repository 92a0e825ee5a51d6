"""Reading a seed image: the grey values a ``--seed-image`` file gives the image-seeded diamond-square.

Files are read here, above the kernels, which take only arrays. A decoded image is kept per (path, mtime,
size), so moving a slider does not decode it again.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict

import numpy as np

# Pixels of a seed image above this count are refused before decoding (a 4096 x 4096 image; decoded, about 150 MB
# at most): a scene from someone else must not cost more than a user would choose.
MAX_SEED_IMAGE_PIXELS = 1 << 24


_decoded: OrderedDict[tuple, np.ndarray] = OrderedDict()
_decoded_lock = threading.Lock()
_DECODED_KEEP = 4


def _decode_grey(path: str) -> np.ndarray:
    """The image as float32 grey values in [0, 1]; 16-bit grey images keep their 16 bits."""
    from PIL import Image, UnidentifiedImageError

    too_large = False
    try:
        with warnings.catch_warnings():
            # Pillow's warnings (a decompression bomb above its own limit, odd TIFF tags) would break the one-line
            # message: the size is checked here, from the header, before anything is decoded.
            warnings.simplefilter("ignore")
            with Image.open(path) as image:
                too_large = image.width * image.height > MAX_SEED_IMAGE_PIXELS
                size = f"{image.width} x {image.height}"
                if too_large:
                    grey = np.empty(0, dtype=np.float32)
                elif image.mode.startswith("I;16") or image.mode == "I":
                    grey = np.asarray(image.convert("I"), dtype=np.float32) * np.float32(1.0 / 65535.0)
                elif image.mode == "F":
                    grey = np.asarray(image, dtype=np.float32)
                else:  # 1, L, LA, P, RGB, RGBA, CMYK, YCbCr...: ITU-R 601-2 luma
                    grey = np.asarray(image.convert("L"), dtype=np.float32) * np.float32(1.0 / 255.0)
    except UnidentifiedImageError:
        raise ValueError(f"seed_image: {path}: not an image file Pillow can read") from None
    except Image.DecompressionBombError as error:
        raise ValueError(f"seed_image: {path}: {error}") from None
    except (OSError, ValueError, SyntaxError) as error:  # truncated or corrupt data
        raise ValueError(f"seed_image: {path}: cannot decode the image ({error})") from None
    if too_large:
        raise ValueError(f"seed_image: {path}: {size} pixels is too large (at most {MAX_SEED_IMAGE_PIXELS} pixels)")
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
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"seed_image: {path}: no such file") from None
    except OSError as error:
        raise ValueError(f"seed_image: {path}: {error.strerror or error}") from None
    if not os.path.isfile(path):
        raise ValueError(f"seed_image: {path}: not a file")
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
