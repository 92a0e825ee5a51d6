"""The natural look's fine slope map (terrainview.kernels.slopes) against plain numpy."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from terrainview.kernels import slopes


@njit(cache=True)
def _all_half_bits(bits, out):
    for index in range(bits.size):
        out[index] = slopes._half_bits(bits[index])


def _plain_half_bits(bits: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return bits.view(np.float32).astype(np.float16).view(np.uint16)


def test_half_floats_are_numpys_own_bit_for_bit():
    """Rounded to the nearest half, ties to even, as numpy casts: over random bit patterns (every exponent), the
    subnormal halves, and the edges (the largest half and past it, ties either side of even, half the smallest
    subnormal, infinities)."""
    rng = np.random.default_rng(7)
    edges = np.array([0, 0x33000000, 0x33000001, 0x337FFFFF, 0x387FFFFF, 0x38800000, 0x3F801000, 0x3F803000,
                      0x3F800FFF, 0x477FE000, 0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x7F800000], dtype=np.uint32)
    subnormal = rng.integers(0x33000000, 0x38800000, 100_000, dtype=np.uint32)
    bits = np.concatenate([rng.integers(0, 1 << 32, 1_000_000, dtype=np.uint32), subnormal, edges])
    bits = np.concatenate([bits, bits | 0x80000000])  # and each negated
    bits = bits[~np.isnan(bits.view(np.float32))]
    got = np.empty(bits.size, dtype=np.uint16)
    _all_half_bits(bits, got)
    np.testing.assert_array_equal(got, _plain_half_bits(bits))
    nan = np.empty(1, dtype=np.uint16)
    _all_half_bits(np.array([0x7FC00000], dtype=np.uint32), nan)
    assert np.isnan(nan.view(np.float16)[0])


def _plain_slope_map(heights: np.ndarray, columns: int, rows: int, apron: int) -> np.ndarray:
    """Each texel's slope to the next point along x and z, 0 past the map's last; half floats' bits, x z x z..."""
    per_unit = np.float32((heights.shape[1] - 1 - 2 * apron) / slopes.SURFACE_SIZE)
    next_column = np.minimum(np.arange(columns) + 1, heights.shape[1] - 1)
    next_row = np.minimum(np.arange(rows) + 1, heights.shape[0] - 1)
    here = heights[:rows, :columns]
    along_x = (heights[:rows, next_column] - here) * per_unit
    along_z = (heights[next_row, :columns] - here) * per_unit
    return _plain_half_bits(np.stack([along_x, along_z], axis=-1).reshape(rows, 2 * columns).view(np.uint32))


@pytest.mark.parametrize("side, columns, apron", [(17, 16, 0), (19, 19, 1), (1027, 1027, 1)])
def test_the_slope_map_is_a_plain_one_in_any_share_of_rows(side, columns, apron):
    """A tile's map (one period: its last point is its first) and a region's (apron and all: none along x past its
    last column, nor along z past its last row), worked out whole and a few rows at a time, equal a plain numpy map
    bit for bit."""
    heights = np.random.default_rng(side).normal(0.0, 0.3, (side, side)).astype(np.float32)
    heights[:, : side // 4] = 0.25  # flat ground: slopes of exactly 0
    rows = columns
    expected = _plain_slope_map(heights, columns, rows, apron)
    whole = slopes.slope_rows(heights, 0, rows, columns, apron)
    np.testing.assert_array_equal(whole, expected)
    shares = [slopes.slope_rows(heights, first, min(5, rows - first), columns, apron) for first in range(0, rows, 5)]
    np.testing.assert_array_equal(np.concatenate(shares), expected)
    if apron:
        assert not whole[-1, 1::2].any() and not whole[:, -2].any(), "none past the last row and column"


def test_a_slope_is_height_per_unit_of_a_2_unit_map():
    """A plane rising 0.5 over the map's 2 units slopes 0.25 along x and 0 along z, whatever its points."""
    for side in (9, 65):
        plane = np.tile(np.linspace(0.0, 0.5, side, dtype=np.float32), (side, 1))
        texels = slopes.slope_rows(plane, 0, side - 1, side - 1, 0).view(np.float16).reshape(side - 1, side - 1, 2)
        assert np.all(texels[..., 0] == np.float16(0.25)) and np.all(texels[..., 1] == 0.0)


@pytest.mark.parametrize("arguments, message", [
    ((np.zeros(5, np.float32), 0, 1, 5, 0), "2D array"),
    ((np.zeros((5, 5), np.float32), 5, 1, 5, 0), "first_row"),
    ((np.zeros((5, 5), np.float32), 3, 3, 5, 0), "rows"),
    ((np.zeros((5, 5), np.float32), 0, 1, 6, 0), "columns"),
    ((np.zeros((5, 5), np.float32), 0, 1, 5, 2), "apron"),
])
def test_bad_arguments_are_refused_by_name(arguments, message):
    with pytest.raises(ValueError, match=message):
        slopes.slope_rows(*arguments)
