"""terrainview.kernels.texturing: height-blended tiles (seeds/001) and colour bands (seeds/004)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import ARTICLE_BAND_COLORS

from terrainview.kernels import fractal
from terrainview.kernels.texturing import (
    MAX_TEXTURE_SIZE,
    TILE_COLORS,
    TILE_NAMES,
    TILE_SIZE,
    band_thresholds,
    bands_texture,
    blend_texture,
    tile_images,
    tile_ranges,
    tile_weights,
)

DIRT, GRASS, ROCK, SNOW = range(4)


def column_ramp(rows: int = 33, columns: int = 33) -> np.ndarray:
    """Heights 0 .. 1 rising linearly with the column (X), equal along each column."""
    return np.tile(np.linspace(0.0, 1.0, columns, dtype=np.float32), (rows, 1))


def nearest_base(color: np.ndarray) -> int:
    return int(np.argmin(np.linalg.norm(np.asarray(TILE_COLORS, dtype=float) - color, axis=1)))


def packed(texture: np.ndarray) -> np.ndarray:
    """Each texel's colour as one integer 0xRRGGBB."""
    rgb = texture.reshape(-1, 3).astype(np.int64)
    return (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]


def texel_height(heights: np.ndarray, size: int, row: int, column: int) -> float:
    """The height the textures look up for a texel: bilinear at the texel's centre."""
    z = (row + 0.5) * (heights.shape[0] - 1) / size
    x = (column + 0.5) * (heights.shape[1] - 1) / size
    z0, x0 = min(int(z), heights.shape[0] - 2), min(int(x), heights.shape[1] - 2)
    fz, fx = z - z0, x - x0
    top = heights[z0, x0] * (1 - fx) + heights[z0, x0 + 1] * fx
    bottom = heights[z0 + 1, x0] * (1 - fx) + heights[z0 + 1, x0 + 1] * fx
    return top * (1 - fz) + bottom * fz


# --- tiles ----------------------------------------------------------------------------------------------------


def test_tiles_shape_colours_and_determinism():
    tiles = tile_images()
    assert tiles.shape == (4, TILE_SIZE, TILE_SIZE, 3) and tiles.dtype == np.uint8
    assert TILE_NAMES == ("dirt", "grass", "rock", "snow")
    for index, color in enumerate(TILE_COLORS):
        mean = tiles[index].reshape(-1, 3).mean(axis=0)
        assert np.abs(mean - color).max() < 12, (TILE_NAMES[index], mean)
        assert tiles[index].reshape(-1, 3).std(axis=0).max() > 2  # textured, not flat
        # Every pixel is still recognisably its own tile.
        assert all(nearest_base(pixel) == index for pixel in tiles[index].reshape(-1, 3)[::37])
    np.testing.assert_array_equal(tiles, tile_images())
    assert not np.array_equal(tiles, tile_images(seed=1))
    assert tile_images(tile_size=48).shape == (4, 48, 48, 3)


@pytest.mark.parametrize("tile_size", [128, 96, 24])
def test_tiles_are_seamless(tile_size):
    for tile in tile_images(tile_size).astype(float):
        inside = (np.abs(np.diff(tile, axis=0)).mean() + np.abs(np.diff(tile, axis=1)).mean()) / 2
        across = (np.abs(tile[0] - tile[-1]).mean() + np.abs(tile[:, 0] - tile[:, -1]).mean()) / 2
        assert across <= 2 * inside + 0.5


def test_tiles_reject_bad_arguments():
    with pytest.raises(ValueError, match="tile_size"):
        tile_images(0)
    with pytest.raises(ValueError, match="seed"):
        tile_images(16, seed=-1)


# --- ranges and weights -------------------------------------------------------------------------------------------


def test_tile_ranges_follow_the_article():
    # The article's example: max height 150, four tiles, band 150 / 5 = 30.
    np.testing.assert_allclose(150 * tile_ranges(4), [[0, 30, 60], [30, 60, 90], [60, 90, 120], [90, 120, 150]])
    np.testing.assert_allclose(tile_ranges(2), [[0, 1 / 3, 2 / 3], [1 / 3, 2 / 3, 1]])


def test_tile_weights_sum_to_one_and_match_the_article_example():
    fractions = np.linspace(0.0, 1.0, 1001)
    weights = tile_weights(fractions)
    assert weights.shape == (1001, 4) and (weights >= 0).all()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    # Height 70 of 150: grass (30..60..90) 66.7 %, rock (60..90..120) 33.3 %.
    np.testing.assert_allclose(tile_weights(70 / 150), [0, 2 / 3, 1 / 3, 0], atol=1e-12)
    # Each tile is alone at its optimum; dirt below its optimum and snow above it keep full weight.
    for index, optimum in enumerate((0.2, 0.4, 0.6, 0.8)):
        assert tile_weights(optimum)[index] == pytest.approx(1.0)
    assert tile_weights(0.0)[DIRT] == 1.0 and tile_weights(0.1)[DIRT] == 1.0
    assert tile_weights(1.0)[SNOW] == 1.0 and tile_weights(0.9)[SNOW] == 1.0
    # At most two neighbouring tiles at once.
    assert ((weights > 0).sum(axis=1) <= 2).all()


# --- blend texture -------------------------------------------------------------------------------------------------


def test_blend_lowest_is_dirt_and_highest_is_snow():
    heights = fractal.diamond_square(7, seed=8)
    size = 256
    texture = blend_texture(heights, size)
    assert texture.shape == (size, size, 3) and texture.dtype == np.uint8
    tiles = tile_images()
    lookup = np.array([[texel_height(heights, size, r, c) for c in range(0, size, 4)] for r in range(0, size, 4)])
    for pick, tile in ((np.argmin, DIRT), (np.argmax, SNOW)):
        r, c = np.unravel_index(pick(lookup), lookup.shape)
        r, c = 4 * r, 4 * c
        np.testing.assert_array_equal(texture[r, c], tiles[tile, r % TILE_SIZE, c % TILE_SIZE])
        assert nearest_base(texture[r, c]) == tile
    # Across the texture, low texels look like dirt and high ones like snow.
    fractions = (lookup - lookup.min()) / np.ptp(lookup)
    sampled = texture[::4, ::4].reshape(-1, 3)
    assert all(nearest_base(pixel) == DIRT for pixel in sampled[fractions.reshape(-1) < 0.1])
    assert all(nearest_base(pixel) == SNOW for pixel in sampled[fractions.reshape(-1) > 0.9])


def test_blend_follows_the_heightmap_orientation_and_the_bands():
    heights = column_ramp()  # rises with the column: dirt on the left, snow on the right
    size = 160
    texture = blend_texture(heights, size)
    tiles = tile_images()
    for column in range(size):
        fraction = texel_height(heights, size, 0, column)
        expected = np.einsum("t,trc->rc", tile_weights(fraction),
                             tiles[:, np.arange(size) % TILE_SIZE, column % TILE_SIZE].astype(float))
        np.testing.assert_allclose(texture[:, column], expected, atol=0.51)
    assert nearest_base(texture[:, :10].reshape(-1, 3).mean(axis=0)) == DIRT
    assert nearest_base(texture[:, -10:].reshape(-1, 3).mean(axis=0)) == SNOW
    assert nearest_base(texture[:, int(0.4 * size)].mean(axis=0)) == GRASS
    assert nearest_base(texture[:, int(0.6 * size)].mean(axis=0)) == ROCK
    # The same ramp along the rows: dirt in the first rows, snow in the last.
    transposed = blend_texture(heights.T.copy(), size).astype(int)
    assert nearest_base(transposed[:10].reshape(-1, 3).mean(axis=0)) == DIRT
    assert nearest_base(transposed[-10:].reshape(-1, 3).mean(axis=0)) == SNOW


def test_blend_weights_are_normalised():
    # Two flat tiles, black and white: every texel's grey is 255 * the white tile's weight.
    tiles = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    tiles[1] = 255
    heights = column_ramp(5, 65)
    size = 64
    texture = blend_texture(heights, size, tiles=tiles)
    for column in range(size):
        fraction = texel_height(heights, size, 0, column)
        white = tile_weights(fraction, count=2)[1]
        assert np.all(np.abs(texture[:, column].astype(float) - 255 * white) <= 0.51)
    assert texture[:, 0].max() == 0 and texture[:, -1].min() == 255
    # One tile: the texture is that tile, repeated.
    single = np.random.default_rng(1).integers(0, 256, (1, 8, 8, 3), dtype=np.uint8)
    np.testing.assert_array_equal(blend_texture(heights, 32, tiles=single), np.tile(single[0], (4, 4, 1)))


def test_blend_of_a_flat_map_is_the_lowest_tile():
    texture = blend_texture(np.full((9, 9), 0.3, dtype=np.float32), 256)
    np.testing.assert_array_equal(texture, np.tile(tile_images()[DIRT], (2, 2, 1)))


def test_blend_texture_is_seamless():
    heights = fractal.diamond_square(8, seed=2)
    texture = blend_texture(heights, 512).astype(float)
    inside = (np.abs(np.diff(texture, axis=0)).mean() + np.abs(np.diff(texture, axis=1)).mean()) / 2
    across = (np.abs(texture[0] - texture[-1]).mean() + np.abs(texture[:, 0] - texture[:, -1]).mean()) / 2
    assert across <= 1.5 * inside


# --- bands ---------------------------------------------------------------------------------------------------------


def test_bands_by_range_follow_the_article():
    heights = column_ramp(9, 257) * 8.0 - 3.0  # -3 .. 5
    np.testing.assert_allclose(band_thresholds(heights), [-1.0, 1.0, 3.0])
    size = 256
    texture = bands_texture(heights, size)
    assert texture.shape == (size, size, 3) and texture.dtype == np.uint8
    colors = np.array(ARTICLE_BAND_COLORS, dtype=np.uint8)
    for column in range(size):
        height = texel_height(heights, size, 0, column)
        band = int(np.searchsorted([-1.0, 1.0, 3.0], height, side="right"))
        assert (texture[:, column] == colors[band]).all(), column
    # Equal slices of a linear ramp: a quarter of the texture each, blue at the bottom, brown at the top.
    assert (texture[:, :64] == colors[0]).all() and (texture[:, -64:] == colors[3]).all()
    # The highest point is brown (the article's "< maxHeight" left it uncoloured).
    spike = np.zeros((3, 3), dtype=np.float32)
    spike[1, 1] = 1.0
    assert (bands_texture(spike, 3)[1, 1] == colors[3]).all()  # the middle texel's centre is the spike
    assert (bands_texture(spike * 0, 4) == colors[0]).all()  # flat: everything at the minimum


def test_bands_by_quartile_split_the_surface_evenly():
    heights = fractal.diamond_square(8, seed=6)
    texture = bands_texture(heights, 512, split="quantile")
    colors, counts = np.unique(packed(texture), return_counts=True)
    assert set(colors.tolist()) == {(r << 16) | (g << 8) | b for r, g, b in ARTICLE_BAND_COLORS}
    np.testing.assert_allclose(counts / counts.sum(), 0.25, atol=0.03)
    # The default (range) split of the same map is uneven: the extremes are rarer.
    _, range_counts = np.unique(packed(bands_texture(heights, 512)), return_counts=True)
    assert len(range_counts) == 4 and range_counts.min() / range_counts.sum() < 0.15


def test_bands_follow_the_heightmap_orientation():
    heights = column_ramp().T.copy()  # rises with the row
    texture = bands_texture(heights, 64)
    assert (texture[0] == ARTICLE_BAND_COLORS[0]).all() and (texture[-1] == ARTICLE_BAND_COLORS[3]).all()


# --- argument checks -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [blend_texture, bands_texture])
def test_textures_reject_bad_arguments(make):
    good = np.zeros((5, 5), dtype=np.float32)
    for heights in (np.zeros(5), np.zeros((1, 5)), np.zeros((2, 2, 2)), np.array([["a", "b"], ["c", "d"]])):
        with pytest.raises(ValueError, match="heights"):
            make(heights, 16)
    nan = good.copy()
    nan[2, 2] = math.nan
    with pytest.raises(ValueError, match="heights"):
        make(nan, 16)
    for size in (0, MAX_TEXTURE_SIZE + 1, 16.0, True, "16"):
        with pytest.raises(ValueError, match="size"):
            make(good, size)


def test_bad_tiles_and_split_are_rejected():
    good = np.zeros((5, 5), dtype=np.float32)
    for tiles in (np.zeros((4, 8, 8, 3), dtype=np.float32), np.zeros((4, 8, 8), dtype=np.uint8),
                  np.zeros((0, 8, 8, 3), dtype=np.uint8), np.zeros((4, 8, 8, 4), dtype=np.uint8)):
        with pytest.raises(ValueError, match="tiles"):
            blend_texture(good, 16, tiles=tiles)
    with pytest.raises(ValueError, match="split"):
        bands_texture(good, 16, split="median")
    with pytest.raises(ValueError, match="count"):
        tile_weights(0.5, count=0)
