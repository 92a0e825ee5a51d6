"""CPU-made surface textures from a heightmap: height-blended tiles (seeds/001) and flat colour bands (seeds/004).

Pure numpy/numba, no GL. Textures are RGB uint8 arrays of shape (size, size, 3) in the heightmap's orientation:
rows follow the heightmap's rows (Z, texture v), columns its columns (X, texture u). Texel (r, c) covers the
square of the surface between grid positions r / size and (r + 1) / size of the way across; its height is
the heightmap's value at the texel's centre, ((r + 0.5) / size * (rows - 1), (c + 0.5) / size * (columns - 1)),
interpolated bilinearly (the article's "GetInterpolatedHeightValue", done in both directions at once).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from terrainview.kernels.kernel_common import hash32, hash_fraction, row_kernels, run_rows
from terrainview.kernels.lattice import MAX_SEED, check_heightmap, check_int, stream_key

MAX_TEXTURE_SIZE = 8192
MAX_TILE_SIZE = 1024

# The article's four tiles, lowest first, made by ``tile_images``: base colour and noise contrast of each.
TILE_NAMES = ("dirt", "grass", "rock", "snow")
TILE_COLORS = ((118, 88, 58), (74, 120, 46), (126, 124, 120), (238, 241, 246))
TILE_CONTRASTS = (24.0, 22.0, 34.0, 9.0)  # grey levels of the brightness noise
TILE_TINTS = ((14, 4, -8), (12, 14, -6), (8, 4, -4), (-6, -3, 4))  # a second noise moves the colour this way
TILE_SIZE = 128

# seeds/004's colour bands, lowest first (its chooseColor): blue, green, yellow, brown.
BAND_NAMES = ("blue", "green", "yellow", "brown")
BAND_COLORS = ((65, 127, 219), (73, 161, 101), (172, 189, 117), (153, 123, 46))
BAND_SPLITS = ("range", "quantile")
# Erosion maps (terrainview.kernels.erosion, both in [0, 1]): wet channels darken by up to WET_DARKENING of their
# colour; deposits lose up to DEPOSIT_SMOOTHING of the tile's noise (towards the tile's mean colour).
WET_DARKENING = 0.45
DEPOSIT_SMOOTHING = 0.8
SNOW_SHARE = 0.08  # the natural look's snow: on the highest of the land, about this share of it
_NO_MAP = np.zeros((2, 2), dtype=np.float32)  # stands for an absent erosion map (the kernels skip it)

_DOMAIN_TILES = 0x1F83D9AB


# --- tiles ----------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _smooth_cell(pixel, period, size):
    """The periodic lattice cell (i0, i1) a pixel falls in, and its smoothstep weight towards i1."""
    position = pixel * period / size
    i0 = int(position)
    weight = position - i0
    return i0, (i0 + 1) % period, weight * weight * (3.0 - 2.0 * weight)


@njit(cache=True, nogil=True)
def _value_noise_kernel(size, key, periods, amplitudes):
    """Periodic value noise: octaves summed with their amplitudes.

    Each octave is a lattice of period x period random values in [-1, 1), smoothly interpolated across a
    size x size tile, wrapping.
    """
    noise = np.zeros((size, size), dtype=np.float32)
    for octave in range(periods.shape[0]):
        period = periods[octave]
        lattice = np.empty((period, period), dtype=np.float32)
        for i in range(period):
            for j in range(period):
                counter = np.uint32((octave << 24) | (i << 12) | j)
                lattice[i, j] = np.float32(hash_fraction(np.uint32(counter ^ key)) * 2.0 - 1.0)
        for y in range(size):
            i0, i1, fy = _smooth_cell(y, period, size)
            for x in range(size):
                j0, j1, fx = _smooth_cell(x, period, size)
                top = lattice[i0, j0] + (lattice[i0, j1] - lattice[i0, j0]) * fx
                bottom = lattice[i1, j0] + (lattice[i1, j1] - lattice[i1, j0]) * fx
                noise[y, x] += amplitudes[octave] * (top + (bottom - top) * fy)
    return noise


def _noise(size: int, key: int, coarsest: int) -> np.ndarray:
    """Octaves of period coarsest, 2 * coarsest, ... up to one value per pixel, scaled to a maximum of 1.

    The amplitude halves with each octave.
    """
    periods = []
    period = coarsest
    while period <= size:
        periods.append(period)
        period *= 2
    if not periods:
        periods = [size]
    amplitudes = 0.5 ** np.arange(len(periods))
    amplitudes /= amplitudes.sum()
    return _value_noise_kernel(size, np.uint32(key), np.array(periods, dtype=np.int64),
                               amplitudes.astype(np.float32))


def tile_images(tile_size: int = TILE_SIZE, seed: int = 0) -> np.ndarray:
    """The four tiles dirt, grass, rock, snow: uint8 of shape (4, tile_size, tile_size, 3), each seamless.

    Each is its base colour (``TILE_COLORS``) plus periodic value noise: a brightness noise of
    ``TILE_CONTRASTS`` grey levels and a coarser noise that shifts the colour along ``TILE_TINTS``.
    """
    tile_size = check_int("tile_size", tile_size, 1, MAX_TILE_SIZE)
    seed = check_int("seed", seed, 0, MAX_SEED)
    tiles = np.empty((len(TILE_NAMES), tile_size, tile_size, 3), dtype=np.uint8)
    key = int(stream_key(seed, _DOMAIN_TILES))
    for index, (color, contrast, tint) in enumerate(zip(TILE_COLORS, TILE_CONTRASTS, TILE_TINTS, strict=True)):
        brightness = _noise(tile_size, int(hash32(np.uint32(key ^ (2 * index + 1)))), 4)
        shift = _noise(tile_size, int(hash32(np.uint32(key ^ (2 * index + 2)))), 2)
        rgb = (np.asarray(color, dtype=np.float32) + contrast * brightness[..., None]
               + shift[..., None] * np.asarray(tint, dtype=np.float32))
        tiles[index] = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    return tiles


@functools.lru_cache(maxsize=4)
def _default_tiles(tile_size: int, seed: int) -> np.ndarray:
    tiles = tile_images(tile_size, seed)
    tiles.flags.writeable = False
    return tiles


# --- height lookup and tile weights -----------------------------------------------------------------------------


def tile_ranges(count: int = len(TILE_NAMES)) -> np.ndarray:
    """(low, optimal, high) of each tile as fractions of the heightmap's min..max, float64 of shape (count, 3).

    The article's scheme: band = range / (count + 1); tile i owns i * band .. (i + 2) * band with its optimum
    in the middle, so each tile's upper half overlaps the next one's lower half.
    """
    count = check_int("count", count, 1, 64)
    index = np.arange(count, dtype=np.float64)[:, None]
    return (index + np.array([0.0, 1.0, 2.0])) / (count + 1)


@njit(cache=True, inline="always")
def _presence(t, index, count):
    """Weight of tile index at height t in band units (0 = lowest height, count + 1 = highest).

    It is 1 at the optimum index + 1, falling linearly to 0 at low = index and high = index + 2. The lowest
    tile keeps 1 below its optimum and the highest above its optimum, so the weights always sum to 1.
    """
    low = np.float64(index)
    optimal = low + 1.0
    if t <= optimal:
        if index == 0:
            return 1.0
        return max(0.0, t - low)
    if index == count - 1:
        return 1.0
    return max(0.0, optimal + 1.0 - t)


@njit(cache=True, nogil=True)
def _weights_kernel(fractions, count):
    weights = np.empty((fractions.shape[0], count), dtype=np.float64)
    for k in range(fractions.shape[0]):
        t = fractions[k] * (count + 1)
        for index in range(count):
            weights[k, index] = _presence(t, index, count)
    return weights


def tile_weights(fractions: np.ndarray, count: int = len(TILE_NAMES)) -> np.ndarray:
    """Each tile's weight at heights given as fractions of the min..max range (0 = lowest, 1 = highest).

    Float64 of shape fractions.shape + (count,), summing to 1 (see ``tile_ranges``).
    """
    count = check_int("count", count, 1, 64)
    fractions = np.asarray(fractions, dtype=np.float64)
    return _weights_kernel(fractions.reshape(-1), count).reshape(fractions.shape + (count,))


def _sample_positions(texels: int, points: int) -> tuple[np.ndarray, np.ndarray]:
    """For each texel, the heightmap index below its centre and the fraction towards the next one."""
    position = (np.arange(texels, dtype=np.float64) + 0.5) * ((points - 1) / texels)
    index = np.minimum(position.astype(np.int64), points - 2)
    return index, (position - index).astype(np.float32)


@njit(cache=True, inline="always")
def _bilinear(heights, row, row_frac, column, column_frac):
    top = heights[row, column] + (heights[row, column + 1] - heights[row, column]) * column_frac
    bottom = heights[row + 1, column] + (heights[row + 1, column + 1] - heights[row + 1, column]) * column_frac
    return top + (bottom - top) * row_frac


def _blend_rows(heights, rows, row_fracs, columns, column_fracs, low, band, tiles, tile_means, flow, deposit,
                eroded):
    size = rows.shape[0]
    count, tile_rows, tile_columns = tiles.shape[0], tiles.shape[1], tiles.shape[2]
    texture = np.empty((size, size, 3), dtype=np.uint8)
    for r in prange(size):
        weights = np.empty(count, dtype=np.float64)
        tile_row = r % tile_rows
        for c in range(size):
            height = _bilinear(heights, rows[r], row_fracs[r], columns[c], column_fracs[c])
            keep, smooth = 1.0, 0.0
            if eroded:
                keep = 1.0 - WET_DARKENING * _bilinear(flow, rows[r], row_fracs[r], columns[c], column_fracs[c])
                smooth = DEPOSIT_SMOOTHING * _bilinear(deposit, rows[r], row_fracs[r], columns[c], column_fracs[c])
            t = (height - low) / band if band > 0.0 else 0.0
            total = 0.0
            for index in range(count):
                weights[index] = _presence(t, index, count)
                total += weights[index]
            tile_column = c % tile_columns
            for channel in range(3):
                value = 0.0
                for index in range(count):
                    if weights[index] > 0.0:
                        texel = np.float64(tiles[index, tile_row, tile_column, channel])
                        if eroded:
                            texel = (texel + (tile_means[index, channel] - texel) * smooth) * keep
                        value += weights[index] * texel
                texture[r, c, channel] = np.uint8(min(255.0, value / total + 0.5))
    return texture


_BLEND = row_kernels(_blend_rows)


def _bands_rows(heights, rows, row_fracs, columns, column_fracs, thresholds, colors, flow, eroded):
    size = rows.shape[0]
    texture = np.empty((size, size, 3), dtype=np.uint8)
    for r in prange(size):
        for c in range(size):
            height = _bilinear(heights, rows[r], row_fracs[r], columns[c], column_fracs[c])
            band = 0
            while band < thresholds.shape[0] and height >= thresholds[band]:
                band += 1
            if eroded:
                keep = 1.0 - WET_DARKENING * _bilinear(flow, rows[r], row_fracs[r], columns[c], column_fracs[c])
                for channel in range(3):
                    texture[r, c, channel] = np.uint8(colors[band, channel] * keep + 0.5)
            else:
                for channel in range(3):
                    texture[r, c, channel] = colors[band, channel]
    return texture


_BANDS = row_kernels(_bands_rows)


def _check_size(size: object) -> int:
    return check_int("size", size, 1, MAX_TEXTURE_SIZE)


def _check_erosion_map(name: str, values: np.ndarray | None, heights: np.ndarray) -> np.ndarray:
    """An erosion map of the heightmap's shape with values in [0, 1], or the stand-in for none."""
    if values is None:
        return _NO_MAP
    array = check_heightmap(values, name)
    if array.shape != heights.shape or not ((array >= 0.0) & (array <= 1.0)).all():
        raise ValueError(f"{name} must be values in [0, 1] of the heightmap's shape {heights.shape}, got shape "
                         f"{array.shape}")
    return array


def blend_texture(heights: np.ndarray, size: int, tiles: np.ndarray | None = None, flow: np.ndarray | None = None,
                  deposit: np.ndarray | None = None) -> np.ndarray:
    """The article's height-blended texture (seeds/001): RGB uint8 of shape (size, size, 3).

    Each texel's height, looked up bilinearly, is measured from the heightmap's minimum in bands of
    (max - min) / (tiles + 1); the tiles (``tile_images()`` unless given: uint8 of shape
    (count, tile_rows, tile_columns, 3), lowest first) are weighted by ``tile_weights`` and summed, each
    repeated across the texture (texel (r, c) takes tile pixel (r % tile_rows, c % tile_columns)). A flat
    heightmap is all the lowest tile. The texture is seamless when the heightmap is and size is a multiple of
    the tile size (the default tiles are 128 pixels; terrainview's textures are powers of two from 256).

    ``flow`` and ``deposit`` (terrainview.kernels.erosion's maps, both or neither, in [0, 1], of the heightmap's shape)
    darken wet channels (by ``WET_DARKENING`` at flow 1) and smooth deposits (each tile's texel moves
    ``DEPOSIT_SMOOTHING`` of the way to the tile's mean colour at deposit 1).
    """
    heights = check_heightmap(heights)
    size = _check_size(size)
    if tiles is None:
        tiles = _default_tiles(TILE_SIZE, 0)
    tiles = np.asarray(tiles)
    if tiles.ndim != 4 or tiles.shape[0] < 1 or tiles.shape[3] != 3 or tiles.dtype != np.uint8 or 0 in tiles.shape:
        raise ValueError(f"tiles must be uint8 of shape (count, rows, columns, 3), got {tiles.dtype} "
                         f"of shape {tiles.shape}")
    low, high = float(heights.min()), float(heights.max())
    band = (high - low) / (tiles.shape[0] + 1)
    rows, row_fracs = _sample_positions(size, heights.shape[0])
    columns, column_fracs = _sample_positions(size, heights.shape[1])
    if (flow is None) != (deposit is None):
        raise ValueError("flow and deposit must be given together")
    flow, deposit = _check_erosion_map("flow", flow, heights), _check_erosion_map("deposit", deposit, heights)
    tile_means = tiles.reshape(tiles.shape[0], -1, 3).mean(axis=1)
    work = size * size * 6 * tiles.shape[0]  # nanoseconds: a weight and a mix per tile and texel
    return run_rows(_BLEND, size, work, heights, rows, row_fracs, columns, column_fracs, low, band,
                    np.ascontiguousarray(tiles), tile_means, flow, deposit, flow is not _NO_MAP)


def band_thresholds(heights: np.ndarray, split: str = "range") -> np.ndarray:
    """The three heights where the bands change, float32 of shape (3,).

    "range" (the article's chooseColor): min + (max - min) * (1/4, 1/2, 3/4), four equal slices of the height
    range; "quantile": the heightmap values' quartiles, so each band covers about a quarter of the surface.
    """
    heights = check_heightmap(heights)
    if split not in BAND_SPLITS:
        raise ValueError(f"split must be one of {', '.join(BAND_SPLITS)}, got {split!r}")
    if split == "range":
        low, high = float(heights.min()), float(heights.max())
        return np.array([low + (high - low) * q for q in (0.25, 0.5, 0.75)], dtype=np.float32)
    return np.quantile(heights, (0.25, 0.5, 0.75)).astype(np.float32)


def bands_texture(heights: np.ndarray, size: int, split: str = "range", flow: np.ndarray | None = None) -> np.ndarray:
    """Four flat colour bands by height (seeds/004): RGB uint8 of shape (size, size, 3).

    ``BAND_COLORS`` run from the lowest band (blue) to the highest (brown). A texel's height, looked up
    bilinearly, is in band k when it is at or above k of the ``band_thresholds`` (so the maximum is brown; the
    article's ``height < maxHeight`` test left it uncoloured). A flat heightmap is all blue.

    ``split`` "range" (the default, the article's) slices the height range into four equal parts, so the
    bands' areas follow the terrain's height distribution; "quantile" uses the heightmap's quartiles, so each
    band covers about a quarter of the surface. ``flow`` (terrainview.kernels.erosion's wetness in [0, 1], of the
    heightmap's shape) darkens wet channels by ``WET_DARKENING`` at flow 1.
    """
    heights = check_heightmap(heights)
    size = _check_size(size)
    thresholds = band_thresholds(heights, split)
    if heights.min() == heights.max():  # flat: all of it in the lowest band, like blend_texture's lowest tile
        thresholds[:] = np.inf
    rows, row_fracs = _sample_positions(size, heights.shape[0])
    columns, column_fracs = _sample_positions(size, heights.shape[1])
    colors = np.array(BAND_COLORS, dtype=np.uint8)
    flow = _check_erosion_map("flow", flow, heights)
    return run_rows(_BANDS, size, 5 * size * size, heights, rows, row_fracs, columns, column_fracs, thresholds, colors,
                    flow, flow is not _NO_MAP)


def snow_height(heights: np.ndarray) -> float:
    """The natural look's snow line for this land: the height that ``SNOW_SHARE`` of it rises above.

    Measured on at most about 256 x 256 of its points; every scene, flat or alpine, gets its snowy peaks.
    """
    array = check_heightmap(heights, finite=False)
    stride = max(1, max(array.shape) // 256)
    return float(np.quantile(array[::stride, ::stride], 1.0 - SNOW_SHARE))
