"""The numba kernels of terrainview.kernels.fractal against SPEC.md.

- bit for bit against tests/reference.py run with terrainview's hash (a plain sequential implementation);
- statistically against the same reference run with a sequential generator, like the original's rand();
- the properties SPEC asks to keep: corners 0, seamless edges, one terrain at every resolution;
- determinism across runs and thread counts, the offsets' distribution, argument checking, cloud colours.
"""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys

import numpy as np
import pytest
import reference
from helpers import correlation
from numba import get_num_threads, set_num_threads

from terrainview.kernels import fractal, fractal_numpy
from terrainview.kernels.fractal import (
    MAX_ITERATIONS_1D,
    MAX_ITERATIONS_2D,
    NUMPY_FIRST_MAP_MAX_ITERATIONS,
    cloud_colors,
    diamond_square,
    midpoint_1d,
)
from terrainview.kernels.lattice import hash32_array, stream_key

# (seed, h, height_scale): defaults, low and high H, extreme seeds and scales.
PARAMETERS = [(0, 0.7, 1.0), (1, 0.3, 1.0), (2**32 - 1, 1.0, 0.25), (987654321, 0.0, 100.0), (42, 0.55, 3.7)]


def bits(array: np.ndarray) -> np.ndarray:
    """The float32 values as integers, so that -0.0 != 0.0 and NaN == NaN: a bit-for-bit comparison."""
    return np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)


# --- bit for bit against the reference -------------------------------------------------------------------


@pytest.mark.parametrize("iterations", range(1, 7))
@pytest.mark.parametrize("seed, h, height_scale", PARAMETERS)
def test_diamond_square_equals_sequential_reference(iterations, seed, h, height_scale):
    expected = reference.diamond_square(iterations, h, height_scale,
                                        reference.hash_offsets_2d(seed, iterations))
    np.testing.assert_array_equal(bits(diamond_square(iterations, seed, h, height_scale)), bits(expected))


@pytest.mark.parametrize("iterations", [1, 2, 3, 5, 8, 11])
@pytest.mark.parametrize("seed, h, height_scale", PARAMETERS)
def test_midpoint_1d_equals_sequential_reference(iterations, seed, h, height_scale):
    expected = reference.midpoint_1d(iterations, h, height_scale, reference.hash_offsets_1d(seed, iterations))
    np.testing.assert_array_equal(bits(midpoint_1d(iterations, seed, h, height_scale)), bits(expected))


def test_reference_hash_is_terrainviews_hash():
    # The reference's plain-Python hash against the kernel's own (callable outside numba too).
    from terrainview.kernels.kernel_common import hash32 as _hash32

    for value in (0, 1, 2, 0x8000, 0x80000000, 0xDEADBEEF, 2**32 - 1, *range(3, 3000, 97)):
        assert reference.lowbias32(value) == int(_hash32(np.uint32(value)))
    values = np.array([0, 1, 0x8000, 0xDEADBEEF, 2**32 - 1, *range(3, 3000, 97)], dtype=np.uint32)
    assert hash32_array(values).tolist() == [reference.lowbias32(int(value)) for value in values]
    assert reference.lowbias32(0x80000000) != reference.lowbias32(0)
    assert len({reference.lowbias32(value) for value in range(4096)}) == 4096  # a bijection


@pytest.mark.parametrize("iterations", range(1, NUMPY_FIRST_MAP_MAX_ITERATIONS + 1))
def test_the_numpy_first_map_equals_the_numba_kernels(iterations):
    for seed, h, height_scale in PARAMETERS:
        scales = fractal._pass_scales(iterations, h, height_scale)
        first = fractal_numpy.diamond_square(scales, stream_key(seed, fractal._DOMAIN_2D))
        compiled = fractal._refine(np.zeros((2, 2), dtype=np.float32), 0, iterations, seed, h, height_scale)
        np.testing.assert_array_equal(bits(first), bits(compiled))


def test_a_process_makes_its_first_map_without_loading_numba_and_loads_it_for_the_next(tmp_path):
    maps = tmp_path / "maps.npy"
    code = ("import sys, numpy as np; import terrainview.kernels.fractal as f; "
            "first = f.diamond_square(9, 77, 0.45, 2.0); assert 'numba' not in sys.modules, 'numba loaded'; "
            "second = f.diamond_square(9, 77, 0.45, 2.0); assert 'numba' in sys.modules, 'numba not loaded'; "
            "np.save(sys.argv[1], np.stack([first, second]))")
    subprocess.run([sys.executable, "-c", code, str(maps)], check=True)
    first, second = np.load(maps)
    expected = bits(diamond_square(9, 77, 0.45, 2.0))
    np.testing.assert_array_equal(bits(first), expected)
    np.testing.assert_array_equal(bits(second), expected)


# --- the properties SPEC asks to keep ----------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [1, 2, 4, 7, 9])
def test_shape_dtype_corners_and_seamless_edges(iterations):
    for seed, h, height_scale in PARAMETERS[:3]:
        heights = diamond_square(iterations, seed, h, height_scale)
        side = 2**iterations + 1
        assert heights.shape == (side, side)
        assert heights.dtype == np.float32
        assert heights.flags.c_contiguous
        assert np.isfinite(heights).all()
        assert heights[0, 0] == heights[0, -1] == heights[-1, 0] == heights[-1, -1] == 0.0
        np.testing.assert_array_equal(bits(heights[-1]), bits(heights[0]))
        np.testing.assert_array_equal(bits(heights[:, -1]), bits(heights[:, 0]))
        # Not trivially flat: the edges are displaced too.
        assert np.count_nonzero(heights[0]) >= side - 2
        assert np.count_nonzero(heights) == side * side - 4


@pytest.mark.parametrize("iterations", [1, 2, 6, 12, 16])
def test_midpoint_1d_shape_dtype_and_ends(iterations):
    values = midpoint_1d(iterations, 7, 0.6)
    assert values.shape == (2**iterations + 1,)
    assert values.dtype == np.float32
    assert values[0] == values[-1] == 0.0
    assert np.count_nonzero(values) == values.size - 2


@pytest.mark.parametrize("iterations", range(1, MAX_ITERATIONS_2D))
def test_one_terrain_at_every_resolution(iterations):
    for seed, h, height_scale in [(0, 0.7, 1.0), (2024, 0.45, 2.5)]:
        coarse = diamond_square(iterations, seed, h, height_scale)
        fine = diamond_square(iterations + 1, seed, h, height_scale)
        np.testing.assert_array_equal(bits(coarse), bits(fine[::2, ::2]))


def test_one_profile_at_every_resolution():
    for seed, h, height_scale in [(0, 0.7, 1.0), (2024, 0.45, 2.5)]:
        profiles = [midpoint_1d(n, seed, h, height_scale) for n in range(1, MAX_ITERATIONS_1D + 1)]
        for coarse, fine in zip(profiles, profiles[1:], strict=False):
            np.testing.assert_array_equal(bits(coarse), bits(fine[::2]))


def test_height_scale_multiplies_the_terrain():
    # Doubling is exact in binary floating point, so the whole computation doubles bit for bit.
    base = diamond_square(7, 3, 0.6, 1.0)
    np.testing.assert_array_equal(bits(diamond_square(7, 3, 0.6, 2.0)), bits(base * np.float32(2)))
    np.testing.assert_array_equal(bits(midpoint_1d(9, 3, 0.6, 0.5)), bits(midpoint_1d(9, 3, 0.6) * np.float32(0.5)))


def test_different_seeds_and_h_give_different_terrain():
    base = diamond_square(6, 0, 0.7)
    interior = np.ones(base.shape, dtype=bool)
    interior[::64, ::64] = False  # the corners are 0 whatever the seed
    for other in (diamond_square(6, 1, 0.7), diamond_square(6, 2**32 - 1, 0.7), diamond_square(6, 0, 0.71)):
        assert np.count_nonzero(base[interior] == other[interior]) < 0.01 * interior.sum()
    assert np.count_nonzero(midpoint_1d(10, 0) == midpoint_1d(10, 1)) < 20


# --- determinism -------------------------------------------------------------------------------------------

DIGEST_SCRIPT = """
import hashlib, numba
from terrainview.kernels.fractal import diamond_square, midpoint_1d
digests = [hashlib.sha256(diamond_square(n, 12345, 0.55, 1.5).tobytes()).hexdigest() for n in (10, 12)]
digests.append(hashlib.sha256(midpoint_1d(16, 12345, 0.55, 1.5).tobytes()).hexdigest())
print(numba.get_num_threads(), *digests)
"""


def digests_here() -> list[str]:
    arrays = [diamond_square(10, 12345, 0.55, 1.5), diamond_square(12, 12345, 0.55, 1.5),
              midpoint_1d(16, 12345, 0.55, 1.5)]
    return [hashlib.sha256(array.tobytes()).hexdigest() for array in arrays]


def test_bit_exact_across_runs_and_thread_counts():
    expected = digests_here()
    assert digests_here() == expected
    for threads in (1, 2, 3):
        assert reference.digests_with_threads(DIGEST_SCRIPT, threads) == expected, f"NUMBA_NUM_THREADS={threads}"


def test_thread_count_in_process():
    threads = get_num_threads()
    try:
        set_num_threads(1)
        single = [diamond_square(n, 99, 0.8) for n in (7, 9, 11)]
    finally:
        set_num_threads(threads)
    for array, n in zip(single, (7, 9, 11), strict=True):
        np.testing.assert_array_equal(bits(diamond_square(n, 99, 0.8)), bits(array))


# --- the random offsets ------------------------------------------------------------------------------------


def residuals_2d(heights: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The offsets of a map made with h=0 and height_scale=1 (every pass's scale is 1): each point's value
    minus the mean the algorithm took. By stride: (diamond centres, square points on the rows of the coarse
    grid, square points on the rows of the diamond centres), each as a 2D grid in lattice order."""
    a = heights.astype(np.float64)
    last = a.shape[0] - 1
    result = {}
    stride = last // 2
    while stride >= 1:
        odd = np.arange(stride, last, 2 * stride)
        even = np.arange(0, last, 2 * stride)
        z, x = np.meshgrid(odd, odd, indexing="ij")
        diamond = a[z, x] - (a[z - stride, x - stride] + a[z - stride, x + stride]
                             + a[z + stride, x - stride] + a[z + stride, x + stride]) / 4
        squares = []
        for rows, columns in ((even, odd), (odd, even)):
            z, x = np.meshgrid(rows, columns, indexing="ij")
            left = np.where(x > 0, x - stride, last - stride)
            above = np.where(z > 0, z - stride, last - stride)
            mean = (a[z, left] + a[z, x + stride] + a[above, x] + a[z + stride, x]) / 4
            squares.append(a[z, x] - mean)
        result[stride] = (diamond, *squares)
        stride //= 2
    return result


def residuals_1d(values: np.ndarray) -> dict[int, np.ndarray]:
    a = values.astype(np.float64)
    last = a.shape[0] - 1
    result = {}
    stride = last // 2
    while stride >= 1:
        x = np.arange(stride, last, 2 * stride)
        result[stride] = a[x] - (a[x - stride] + a[x + stride]) / 2
        stride //= 2
    return result


def all_offsets_2d(heights: np.ndarray) -> np.ndarray:
    return np.concatenate([grid.ravel() for grids in residuals_2d(heights).values() for grid in grids])


def all_offsets_1d(values: np.ndarray) -> np.ndarray:
    return np.concatenate(list(residuals_1d(values).values()))


def test_residuals_recover_the_reference_offsets():
    # The helper itself, on the reference with known offsets: 4**n offsets, each in [-0.5, 0.5).
    drawn = []

    def offset(z, x):
        drawn.append(reference.hash_offsets_2d(5, 4)(z, x))
        return drawn[-1]

    heights = reference.diamond_square(4, 0.0, 1.0, offset)
    np.testing.assert_allclose(np.sort(all_offsets_2d(heights)), np.sort(np.array(drawn, dtype=np.float64)),
                               atol=1e-6)


def assert_uniform(offsets: np.ndarray, bins: int = 20) -> None:
    """Uniform on [-0.5, 0.5): bounds, mean, variance 1/12 and a chi-square test of a histogram."""
    assert offsets.min() >= -0.5 - 1e-5 and offsets.max() < 0.5 + 1e-5
    count = offsets.size
    assert abs(offsets.mean()) < 5 * math.sqrt(1 / 12 / count)
    assert offsets.var() * 12 == pytest.approx(1.0, abs=0.02)
    histogram, _ = np.histogram(offsets, bins=bins, range=(-0.5, 0.5))
    expected = count / bins
    chi_square = ((histogram - expected) ** 2 / expected).sum()
    assert chi_square < 50, histogram  # 19 degrees of freedom: p < 2e-4 by chance


def test_offsets_are_uniform_2d():
    offsets = all_offsets_2d(diamond_square(8, 5, 0.0, 1.0))
    assert offsets.size == 256 * 256 - 1  # every point of the periodic grid but the corner
    assert_uniform(offsets)


def test_offsets_are_uniform_1d():
    offsets = all_offsets_1d(midpoint_1d(16, 5, 0.0, 1.0))
    assert offsets.size == 2**16 - 1
    assert_uniform(offsets)


def test_neighbouring_offsets_are_uncorrelated_in_a_map():
    # 256 x 256 offsets per grid at the finest pass: the standard error of a correlation is about 0.004.
    diamond, square_even, square_odd = residuals_2d(diamond_square(9, 11, 0.0, 1.0))[1]
    for grid in (diamond, square_even, square_odd):
        for first, second in ((grid[:, :-1], grid[:, 1:]), (grid[:-1], grid[1:]),
                              (grid[:-1, :-1], grid[1:, 1:]), (grid[:-1, 1:], grid[1:, :-1])):
            assert abs(correlation(first, second)) < 0.025
    # Every square point against the diamond centres beside it, and transposed positions.
    assert abs(correlation(square_even[1:], diamond[:-1])) < 0.025
    assert abs(correlation(square_odd[:, 1:], diamond[:, :-1])) < 0.025
    assert abs(correlation(diamond, diamond.T)) < 0.025
    finest = residuals_1d(midpoint_1d(16, 11, 0.0, 1.0))[1]
    assert abs(correlation(finest[:-1], finest[1:])) < 0.025


def test_offsets_are_independent_across_seeds():
    """Seed by seed, the offsets of any two points of the coarse passes are uncorrelated.

    4000 seeds: the standard error of one correlation is about 0.016; 0.1 is more than 6 of them.
    """
    seeds = range(4000)
    offsets_2d = np.array([all_offsets_2d(diamond_square(3, seed, 0.0, 1.0)) for seed in seeds])
    offsets_1d = np.array([all_offsets_1d(midpoint_1d(6, seed, 0.0, 1.0)) for seed in seeds])
    for offsets in (offsets_2d, offsets_1d):
        matrix = np.corrcoef(offsets.T)
        np.fill_diagonal(matrix, 0.0)
        worst = np.unravel_index(np.abs(matrix).argmax(), matrix.shape)
        assert abs(matrix[worst]) < 0.1, f"offsets {worst} correlate by {matrix[worst]:.3f} across seeds"
        assert_uniform(offsets[:, 0], bins=10)


# --- statistics against the original's sequential generator -------------------------------------------------


def spread_statistics(maps: list[np.ndarray]) -> tuple[float, float]:
    """Mean over the maps of each map's standard deviation, and its standard error."""
    spreads = np.array([heights.std() for heights in maps])
    return spreads.mean(), spreads.std(ddof=1) / math.sqrt(len(spreads))


@pytest.mark.parametrize("h", [0.3, 0.8])
def test_height_spread_matches_original_generator(h):
    """The terrain's spread (std of its heights) averaged over 2000 seeds, terrainview vs the reference
    with random.Random: equal within 4 standard errors (about 1.5 % here)."""
    n, seeds = 4, range(2000)
    ours, ours_error = spread_statistics([diamond_square(n, seed, h) for seed in seeds])
    theirs, theirs_error = spread_statistics(
        [reference.diamond_square(n, h, 1.0, reference.sequential_offsets(seed), exact=False) for seed in seeds])
    tolerance = 4 * math.hypot(ours_error, theirs_error)
    assert abs(ours - theirs) < tolerance, f"mean std {ours:.5f} vs {theirs:.5f} (tolerance {tolerance:.5f})"


LAGS = np.array([1, 2, 4, 8, 16])


def structure_function(maps: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mean squared height difference at each lag (along X and Z, periodic maps taken as they are), and its
    standard error over the maps."""
    per_map = np.array([[(np.mean((m[:, lag:] - m[:, :-lag]) ** 2) + np.mean((m[lag:] - m[:-lag]) ** 2)) / 2
                         for lag in LAGS] for m in (np.asarray(m, dtype=np.float64) for m in maps)])
    return per_map.mean(axis=0), per_map.std(axis=0, ddof=1) / math.sqrt(len(per_map))


def log_log_slope(values: np.ndarray) -> float:
    return float(np.polyfit(np.log(LAGS), np.log(values), 1)[0])


def test_roughness_grows_with_distance_like_the_original():
    """Mean squared height difference at lags 1..16 over 200 seeds (n=6): equal to the reference's within
    4 standard errors at every lag, and the same log-log slope. The slope is about 2H: close for H=0.3
    (0.57); for H=0.8 diamond-square at these lags gives about 1.2 rather than 1.6 -- the original does
    the same, and a larger H must still give a clearly larger slope."""
    n, seeds = 6, range(200)
    slopes = {}
    for h in (0.3, 0.8):
        ours, ours_error = structure_function([diamond_square(n, seed, h) for seed in seeds])
        theirs, theirs_error = structure_function(
            [reference.diamond_square(n, h, 1.0, reference.sequential_offsets(seed), exact=False)
             for seed in seeds])
        assert np.all(np.abs(ours - theirs) < 4 * np.hypot(ours_error, theirs_error)), (h, ours / theirs)
        assert np.all(np.diff(ours) > 0)
        slopes[h] = log_log_slope(ours)
        assert slopes[h] == pytest.approx(log_log_slope(theirs), abs=0.05)
    assert slopes[0.3] == pytest.approx(0.6, abs=0.1)
    assert slopes[0.8] - slopes[0.3] > 0.4
    assert slopes[0.8] < 1.6


# --- argument checking -------------------------------------------------------------------------------------

BAD_ARGUMENTS = [
    ("iterations", 0), ("iterations", 13), ("iterations", 2.0), ("iterations", 3.5), ("iterations", "3"),
    ("iterations", True), ("iterations", None), ("iterations", -1),
    ("h", -0.1), ("h", 1.1), ("h", float("nan")), ("h", float("inf")), ("h", "0.5"), ("h", True),
    ("seed", -1), ("seed", 2**32), ("seed", 1.5), ("seed", "1"), ("seed", False),
    ("height_scale", 0), ("height_scale", 0.0), ("height_scale", -1), ("height_scale", 101),
    ("height_scale", float("inf")), ("height_scale", float("nan")), ("height_scale", None),
]
GOOD = {"iterations": 3, "seed": 0, "h": 0.7, "height_scale": 1.0}


@pytest.mark.parametrize("function", [diamond_square, midpoint_1d])
@pytest.mark.parametrize("name, value", BAD_ARGUMENTS)
def test_bad_arguments_raise_value_error_naming_them(function, name, value):
    if function is midpoint_1d and name == "iterations" and value == 13:
        value = 17  # 13 is fine in 1D
    arguments = dict(GOOD, **{name: value})
    with pytest.raises(ValueError) as error:
        function(**arguments)
    message = str(error.value)
    assert name in message
    assert repr(value) in message


def test_iteration_limits():
    assert diamond_square(MAX_ITERATIONS_2D, 1).shape == (4097, 4097)
    assert midpoint_1d(MAX_ITERATIONS_1D, 1).shape == (65537,)
    assert MAX_ITERATIONS_2D == 12 and MAX_ITERATIONS_1D == 16
    with pytest.raises(ValueError, match="iterations"):
        midpoint_1d(17)
    # Integers of other kinds are integers, and the range ends are included.
    np.testing.assert_array_equal(diamond_square(np.int64(3), np.uint32(5), 0, 100),
                                  diamond_square(3, 5, 0.0, 100.0))
    assert np.isfinite(diamond_square(2, 2**32 - 1, 1.0, 1e-6)).all()


# --- cloud colours -----------------------------------------------------------------------------------------


def test_cloud_colors_exact_values():
    # Mean 0 exactly; deviations 0, 0.125, -0.5 (clamped to -0.2), 0.375 (clamped to 0.2).
    heights = np.array([[0.0, 0.125], [-0.5, 0.375]], dtype=np.float32)
    colors = cloud_colors(heights)
    assert colors.shape == (2, 2, 3) and colors.dtype == np.float32
    red = colors[..., 0]
    np.testing.assert_allclose(red, [[0.4 + 0.25, 0.4 + 0.40625], [0.4, 0.9]], atol=1e-6)
    assert red[1, 0] == np.float32(0.4)  # clamped at -0.2 -> shade 0
    assert red[1, 1] == np.float32(0.9)  # clamped at +0.2 -> shade 0.5
    np.testing.assert_array_equal(colors[..., 1], red)
    np.testing.assert_array_equal(colors[..., 2], np.float32(0.9))


def test_cloud_colors_use_the_mean_not_zero():
    heights = np.array([[10.0, 10.1], [10.0, 9.9]], dtype=np.float32)  # mean 10
    red = cloud_colors(heights)[..., 0]
    np.testing.assert_allclose(red, [[0.65, 0.775], [0.65, 0.525]], atol=1e-5)


def test_cloud_colors_of_a_heightmap():
    heights = diamond_square(7, 3, 0.7)
    colors = cloud_colors(heights)
    assert colors.shape == heights.shape + (3,) and colors.dtype == np.float32
    np.testing.assert_array_equal(colors[..., 2], np.float32(0.9))
    np.testing.assert_array_equal(colors[..., 0], colors[..., 1])
    assert colors[..., 0].min() >= np.float32(0.4) and colors[..., 0].max() <= np.float32(0.9)
    # Monotonic in height, and the same formula computed here.
    deviation = np.clip(heights.astype(np.float64) - heights.mean(dtype=np.float64), -0.2, 0.2)
    np.testing.assert_allclose(colors[..., 0], 0.4 + (deviation + 0.2) * 1.25, atol=2e-6)
    order = np.argsort(heights, axis=None)
    assert np.all(np.diff(colors[..., 0].ravel()[order]) >= 0)


@pytest.mark.parametrize("bad", [np.zeros(5), np.zeros((0, 3)), np.zeros((2, 2, 2))])
def test_cloud_colors_reject_non_2d(bad):
    with pytest.raises(ValueError, match="heights"):
        cloud_colors(bad)


def test_every_kernel_that_takes_a_map_checks_it_the_same_way():
    """One check (lattice.check_heightmap) for every kernel: the same refusals, each naming the map."""
    from terrainview.kernels.erosion import hydraulic_erosion, thermal_erosion
    from terrainview.kernels.generators import periodic_blur
    from terrainview.kernels.lod import LodSurface
    from terrainview.kernels.texturing import bands_texture, blend_texture

    computing = [lambda h: blend_texture(h, 8), lambda h: bands_texture(h, 8), lambda h: periodic_blur(h, 1.0),
                 thermal_erosion, hydraulic_erosion]
    measuring = [cloud_colors, LodSurface.from_heights]  # a map's measure: no pass over every value for NaN
    nan = np.zeros((5, 5))
    nan[2, 2] = np.nan
    for bad in (np.zeros(5), np.zeros((1, 5)), np.zeros((2, 2, 2)), np.full((5, 5), 1j),
                np.array([["a", "b"], ["c", "d"]]), nan):
        for kernel in computing + (measuring if bad is not nan else []):
            with pytest.raises(ValueError, match="^heights must "):
                kernel(bad)


@pytest.mark.parametrize("iterations", [1, 3, 6])
def test_the_passes_are_the_kernel_s_own_steps(iterations):
    """After 2k half-passes the map is level k of the finished map; after 2k + 1 the next level's centres are
    already the finished map's; after all of them it is the finished map bit for bit."""
    from terrainview.kernels.fractal import diamond_square_passes

    finished = diamond_square(iterations, 3, 0.65, 1.5)
    assert np.array_equal(diamond_square_passes(iterations, 2 * iterations, 3, 0.65, 1.5), finished)
    assert np.array_equal(diamond_square_passes(iterations, 0, 3, 0.65, 1.5), np.zeros((3, 3), np.float32))
    for level in range(iterations):
        coarse = finished[::2 ** (iterations - level), ::2 ** (iterations - level)]
        if level:
            assert np.array_equal(diamond_square_passes(iterations, 2 * level, 3, 0.65, 1.5), coarse)
        diamond = diamond_square_passes(iterations, 2 * level + 1, 3, 0.65, 1.5)
        finer = finished[::2 ** (iterations - level - 1), ::2 ** (iterations - level - 1)]
        assert np.array_equal(diamond[::2, ::2], finer[::2, ::2]) and np.array_equal(diamond[1::2, 1::2],
                                                                                     finer[1::2, 1::2])
        halfway = (diamond[::2, :-1:2] + diamond[::2, 2::2]) * np.float32(0.5)
        np.testing.assert_array_equal(diamond[::2, 1::2], halfway)  # square points: not set yet


def test_passes_out_of_range_name_the_argument():
    from terrainview.kernels.fractal import diamond_square_passes

    for bad in (-1, 9, 2.5):
        with pytest.raises(ValueError, match="half_passes"):
            diamond_square_passes(4, bad)


def test_the_marked_points_are_those_the_latest_half_pass_set():
    from terrainview.kernels import fractal as fractal_module

    iterations = 4
    for half_passes in range(1, 2 * iterations + 1):
        now = fractal_module.diamond_square_passes(iterations, half_passes, seed=5)
        before = fractal_module.diamond_square_passes(iterations, half_passes - 1, seed=5)
        marks = fractal_module.half_pass_points(half_passes)
        marked = np.zeros(now.shape, dtype=bool)
        marked[marks[:, 1], marks[:, 0]] = True
        if half_passes % 2:  # a diamond step: the earlier points stay, the cell centres are new
            if half_passes > 1:
                np.testing.assert_array_equal(now[::2, ::2], before)
            expected = np.zeros(now.shape, dtype=bool)
            expected[1::2, 1::2] = True
            np.testing.assert_array_equal(marked, expected)
        else:  # a square step: exactly the marked points change
            np.testing.assert_array_equal(marked, now != before)
        copies = marks[marks[:, 2] == fractal_module.COPIED_ACROSS_EDGE]
        assert (half_passes % 2 == 0) == (len(copies) > 0)
        for column, row, _ in copies:  # the copy on the far edge holds the value set on row 0 or column 0
            side = now.shape[0] - 1
            assert now[row, column] == now[row % side, column % side]
    corners = fractal_module.half_pass_points(0)
    assert sorted(map(tuple, corners[:, :2].tolist())) == [(0, 0), (0, 2), (2, 0), (2, 2)]
