"""Sizes of rendered images: limits, ``WxH`` parsing and supersampling checks.

No GL here, so the panel can read them without the GL stack.
"""

from __future__ import annotations

import re

from terrainview.scene.settings import SettingsError

MAX_IMAGE_SIDE = 8192
MAX_RENDER_SIDE = 16384  # supersampled drawing size: 16384**2 RGB is 805 MB, the most we allow in memory
SUPERSAMPLE_FACTORS = (1, 2, 4)
DEFAULT_SIZE = (1280, 720)
MAX_TILE_SIDE = 4096  # bounds the memory of one tile's framebuffer whatever the driver allows


def parse_size(text: str) -> tuple[int, int]:
    """'WxH' -> (W, H), each 1..8192: a picture's, a video's and the window's size."""
    match = re.fullmatch(r"\s*([0-9]{1,9})\s*[xX×]\s*([0-9]{1,9})\s*", text)  # ASCII digits only
    if not match:
        raise SettingsError(f"--size: expected WIDTHxHEIGHT, each from 1 to {MAX_IMAGE_SIDE}, such as 1920x1080, "
                            f"got {text!r}")
    width, height = int(match[1]), int(match[2])
    for name, value in (("width", width), ("height", height)):
        if not 1 <= value <= MAX_IMAGE_SIDE:
            raise SettingsError(f"--size: {name} must be from 1 to {MAX_IMAGE_SIDE}, got {value}")
    return width, height


WINDOW_SHOT_SUPERSAMPLE = 2  # F12 draws the window's view this much larger and filters it down: no stair steps


def window_shot_supersample(size: tuple[int, int]) -> int:
    """The supersampling of a screenshot of the window: WINDOW_SHOT_SUPERSAMPLE, less for a huge window."""
    return WINDOW_SHOT_SUPERSAMPLE if max(size) * WINDOW_SHOT_SUPERSAMPLE <= MAX_RENDER_SIDE else 1


def check_supersample(size: tuple[int, int], supersample: int) -> None:
    """Raise SettingsError unless ``supersample`` is 1, 2 or 4 and ``size`` times it stays within MAX_RENDER_SIDE."""
    if supersample not in SUPERSAMPLE_FACTORS:
        raise SettingsError(f"--supersample: expected one of 1, 2, 4, got {supersample!r}")
    if max(size) * supersample > MAX_RENDER_SIDE:
        raise SettingsError(f"--supersample: {supersample}x of {size[0]}x{size[1]} would draw "
                            f"{max(size) * supersample} px per side; the most is {MAX_RENDER_SIDE}")
