"""terrainview.kernels.generators: fault formation (seeds/002) and the image-seeded diamond-square."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from reference import fault_reference

from terrainview.kernels import generators
from terrainview.kernels.generators import (
    FAULT_MAX_DELTA,
    FAULT_MIN_DELTA,
    FAULT_SPREAD,
    SEED_IMAGE_RANGE,
    fault_formation,
    periodic_blur,
    seed_grid,
    seed_passes_used,
    seeded_diamond_square,
)
from terrainview.scene.seed_image import load_seed_image


def roughness(heights: np.ndarray) -> float:
    """Mean absolute difference between horizontal and vertical neighbours."""
    return float(np.abs(np.diff(heights, axis=0)).mean() + np.abs(np.diff(heights, axis=1)).mean()) / 2


def seam_and_interior(heights: np.ndarray) -> tuple[float, float]:
    """Mean |difference| across the wrap (last distinct row/column to the first) and between interior
    neighbours, when the map is tiled."""
    core = heights[:-1, :-1]
    seam = (np.abs(core[-1] - core[0]).mean() + np.abs(core[:, -1] - core[:, 0]).mean()) / 2
    return float(seam), roughness(core)


# --- fault formation ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [1, 2, 5, 8])
def test_fault_shape_and_dtype(iterations):
    heights = fault_formation(iterations, seed=3, fault_iterations=20)
    assert heights.shape == (2**iterations + 1, 2**iterations + 1)
    assert heights.dtype == np.float32
    assert np.isfinite(heights).all()


def test_fault_is_deterministic_and_depends_on_its_inputs():
    first = fault_formation(7, seed=11, fault_iterations=150, blur=1.5)
    np.testing.assert_array_equal(first, fault_formation(7, seed=11, fault_iterations=150, blur=1.5))
    assert not np.array_equal(first, fault_formation(7, seed=12, fault_iterations=150, blur=1.5))
    assert not np.array_equal(first, fault_formation(7, seed=11, fault_iterations=151, blur=1.5))
    assert not np.array_equal(first, fault_formation(7, seed=11, fault_iterations=150, blur=2.5))


@pytest.mark.parametrize("blur", [0.0, 0.7, 3.0, 16.0])
@pytest.mark.parametrize("iterations", [1, 3, 8])
def test_fault_edges_are_exactly_seamless(iterations, blur):
    heights = fault_formation(iterations, seed=5, fault_iterations=60, blur=blur)
    np.testing.assert_array_equal(heights[-1], heights[0])
    np.testing.assert_array_equal(heights[:, -1], heights[:, 0])


def test_fault_heights_continue_across_the_wrap():
    seams, interiors = zip(*(seam_and_interior(fault_formation(8, seed, 200)) for seed in range(8)), strict=True)
    assert np.mean(seams) < 1.5 * np.mean(interiors)
    assert max(seams) < 3 * np.mean(interiors)
    # A non-periodic fault map (the plain half-plane test) would show a cliff at the seam: its edges differ.
    assert np.mean(interiors) > 0


def test_fault_kernel_equals_the_point_by_point_reference():
    # Same raised points for every fault: a single wrong point would be off by a delta (at least 0.1); the
    # running sums only differ from the reference's by float rounding.
    for iterations in (1, 2, 4, 7, 9):
        for seed in (0, 1, 2**32 - 1):
            for faults in (1, 9, 40):
                np.testing.assert_allclose(generators._fault_raw(iterations, seed, faults),
                                           fault_reference(iterations, seed, faults), rtol=0, atol=1e-5)


def test_one_fault_gives_exactly_two_levels():
    for seed in range(6):
        raw = generators._fault_raw(8, seed, 1)
        assert set(np.unique(raw).tolist()) == {0.0, FAULT_MAX_DELTA}
        # A fault raises half of the disc of diameter one period: pi / 8 of the map.
        assert abs((raw[:-1, :-1] > 0).mean() - math.pi / 8) < 0.01
        normalised = fault_formation(8, seed, 1)
        assert len(np.unique(normalised)) == 2


def test_delta_falls_linearly_from_first_to_last_fault():
    deltas = generators._fault_deltas(5)
    np.testing.assert_allclose(deltas, np.linspace(FAULT_MAX_DELTA, FAULT_MIN_DELTA, 5))
    assert generators._fault_deltas(1).tolist() == [FAULT_MAX_DELTA]
    # Two faults: every point is the sum of the deltas of the faults that raised it.
    raw = generators._fault_raw(8, 4, 2)
    levels = np.unique(raw)
    np.testing.assert_allclose(levels, [0.0, FAULT_MIN_DELTA, FAULT_MAX_DELTA, FAULT_MAX_DELTA + FAULT_MIN_DELTA],
                               rtol=1e-6)


def test_fault_raw_heights_agree_across_resolutions():
    coarse = generators._fault_raw(6, 9, 120)
    fine = generators._fault_raw(7, 9, 120)
    np.testing.assert_allclose(fine[::2, ::2], coarse, atol=1e-5)


def test_fault_normalisation_matches_diamond_square_spread():
    maps = [fault_formation(8, seed, 200) for seed in range(10)]
    assert abs(np.mean([m.std() for m in maps]) - FAULT_SPREAD) < 0.015
    assert all(abs(m.mean()) < 0.005 for m in maps)
    lows, highs = np.mean([m.min() for m in maps]), np.mean([m.max() for m in maps])
    assert -0.4 < lows < -0.15 and 0.15 < highs < 0.4
    np.testing.assert_allclose(fault_formation(8, 1, 200, height_scale=2.5), 2.5 * maps[1], rtol=1e-5, atol=1e-6)


def test_blur_reduces_roughness_and_keeps_the_map_periodic():
    sharp = fault_formation(8, seed=2, fault_iterations=200)
    blurred = fault_formation(8, seed=2, fault_iterations=200, blur=2.0)
    assert roughness(blurred) < 0.5 * roughness(sharp)
    assert roughness(fault_formation(8, seed=2, fault_iterations=200, blur=4.0)) < roughness(blurred)
    assert abs(blurred.mean() - sharp.mean()) < 1e-3
    np.testing.assert_allclose(blurred, periodic_blur(sharp, 2.0), atol=1e-6)
    # Periodic: blurring a map shifted around the torus gives the blurred map shifted the same way.
    core = sharp[:-1, :-1]
    shifted = np.roll(core, (37, -90), axis=(0, 1))
    shifted = np.pad(shifted, ((0, 1), (0, 1)), mode="wrap")
    np.testing.assert_allclose(periodic_blur(shifted, 2.0)[:-1, :-1],
                               np.roll(periodic_blur(sharp, 2.0)[:-1, :-1], (37, -90), axis=(0, 1)), atol=1e-6)
    seam, interior = seam_and_interior(blurred)
    assert seam < 2 * interior


def test_blur_of_a_tiny_map_wraps_many_times():
    heights = fault_formation(1, seed=0, fault_iterations=10, blur=16.0)
    # A sigma far wider than the 2-cell period averages everything out.
    assert np.ptp(heights) < 1e-3 * np.ptp(fault_formation(1, seed=0, fault_iterations=10)) + 1e-6


@pytest.mark.parametrize("name, value", [
    ("iterations", 0), ("iterations", 13), ("iterations", 2.5), ("iterations", True),
    ("seed", -1), ("seed", 2**32), ("seed", "1"),
    ("fault_iterations", 0), ("fault_iterations", 5001), ("fault_iterations", 3.0),
    ("blur", -0.1), ("blur", 16.5), ("blur", math.nan), ("blur", "2"),
    ("height_scale", 0.0), ("height_scale", -1.0), ("height_scale", 100.5), ("height_scale", math.inf),
])
def test_fault_rejects_bad_arguments(name, value):
    arguments = {"iterations": 4, "seed": 0, "fault_iterations": 10, "blur": 0.0, "height_scale": 1.0}
    arguments[name] = value
    with pytest.raises(ValueError, match=name):
        fault_formation(**arguments)


def test_periodic_blur_rejects_bad_arguments():
    with pytest.raises(ValueError, match="heights"):
        periodic_blur(np.zeros((4, 5)), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        periodic_blur(np.zeros((5, 5)), 0.0)


# --- image-seeded diamond-square ------------------------------------------------------------------------------


@pytest.fixture
def gradient_png(tmp_path):
    """A 300 x 200 8-bit grey image, black on the left to white on the right."""
    path = tmp_path / "gradient.png"
    Image.fromarray(np.tile(np.linspace(0, 255, 300).astype(np.uint8), (200, 1))).save(path)
    return path


def test_seeded_terrain_follows_the_image(gradient_png):
    heights = seeded_diamond_square(load_seed_image(gradient_png), 3, 8, seed=1)
    assert heights.shape == (257, 257) and heights.dtype == np.float32
    columns = heights.mean(axis=0)
    # The edges are averaged to make the map seamless; inside, the terrain climbs from left to right.
    assert columns[40:128].mean() < columns[129:217].mean() - 0.1
    assert np.corrcoef(np.arange(40, 217), columns[40:217])[0, 1] > 0.9
    np.testing.assert_array_equal(heights[-1], heights[0])
    np.testing.assert_array_equal(heights[:, -1], heights[:, 0])


def test_seeded_terrain_adds_detail(gradient_png):
    passes = 2
    heights = seeded_diamond_square(load_seed_image(gradient_png), passes, 7, seed=4)
    assert len(np.unique(heights)) > 10 * (2**passes + 1) ** 2
    assert not np.array_equal(heights, seeded_diamond_square(load_seed_image(gradient_png), passes, 7, seed=5))


def test_seeded_terrain_keeps_the_coarse_values_exactly(gradient_png):
    for passes, iterations in ((1, 4), (3, 8), (5, 6)):
        heights = seeded_diamond_square(load_seed_image(gradient_png), passes, iterations, seed=2, height_scale=1.5)
        coarse = seed_grid(load_seed_image(gradient_png), passes, 1.5)
        step = 2 ** (iterations - passes)
        np.testing.assert_array_equal(heights[::step, ::step], coarse)


def test_seed_grid_maps_grey_to_heights_and_is_seamless():
    grey = np.zeros((50, 80), dtype=np.float32)
    grey[:, 40:] = 1.0
    grid = seed_grid(grey, 3, height_scale=2.0)
    assert grid.shape == (9, 9) and grid.dtype == np.float32
    half = SEED_IMAGE_RANGE / 2 * 2.0
    assert grid[4, 1] == pytest.approx(-half) and grid[4, 7] == pytest.approx(half)
    np.testing.assert_array_equal(grid[0], grid[-1])
    np.testing.assert_array_equal(grid[:, 0], grid[:, -1])
    assert grid[4, 0] == pytest.approx(0.0, abs=1e-6)  # black left edge averaged with white right edge
    assert np.all(np.abs(grid) <= half + 1e-6)


def test_seed_passes_are_clamped_below_iterations():
    assert seed_passes_used(2, 8) == 2
    assert seed_passes_used(8, 5) == 4
    assert seed_passes_used(3, 1) == 1


def test_seed_image_modes(tmp_path):
    ramp16 = np.tile(np.linspace(0, 65535, 1000).astype(np.uint16), (4, 1))
    Image.fromarray(ramp16).save(tmp_path / "deep.png")
    grey = load_seed_image(tmp_path / "deep.png")
    assert grey.min() == 0.0 and grey.max() == 1.0 and len(np.unique(grey)) > 256

    rgb = np.zeros((16, 16, 3), dtype=np.uint8)
    rgb[:, 8:] = 255
    Image.fromarray(rgb).save(tmp_path / "colour.jpg", quality=95)
    grey = load_seed_image(tmp_path / "colour.jpg")
    assert grey.shape == (16, 16) and grey[:, :6].max() < 0.1 and grey[:, 10:].min() > 0.9

    Image.fromarray(rgb).convert("P").save(tmp_path / "palette.png")
    assert load_seed_image(tmp_path / "palette.png")[:, 12].min() > 0.9


def test_seed_image_is_decoded_once_per_version(tmp_path):
    path = tmp_path / "seed.png"
    Image.fromarray(np.full((8, 8), 10, dtype=np.uint8)).save(path)
    first = load_seed_image(path)
    assert load_seed_image(path) is first
    assert not first.flags.writeable
    Image.fromarray(np.full((9, 9), 200, dtype=np.uint8)).save(path)
    later = os.stat(path).st_mtime_ns + 10**9
    os.utime(path, ns=(later, later))
    second = load_seed_image(path)
    assert second is not first and second.shape == (9, 9)


def test_seed_image_errors(tmp_path):
    missing = tmp_path / "missing.png"
    with pytest.raises(ValueError, match=r"seed_image: .*missing\.png: no such file"):
        load_seed_image(missing)
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    with pytest.raises(ValueError, match=r"seed_image: .*notes\.png: not an image"):
        load_seed_image(text)
    with pytest.raises(ValueError, match="seed_image: .*: not a file"):
        load_seed_image(tmp_path)
    truncated = tmp_path / "truncated.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64), dtype=np.uint8)).save(truncated)
    truncated.write_bytes(truncated.read_bytes()[:200])
    with pytest.raises(ValueError, match=r"seed_image: .*truncated\.png"):
        load_seed_image(truncated)


@pytest.mark.parametrize("name, value", [
    ("seed_passes", 0), ("seed_passes", 9), ("iterations", 0), ("iterations", 13), ("seed", -1),
    ("h", 1.5), ("height_scale", 0.0),
])
def test_seeded_rejects_bad_arguments(gradient_png, name, value):
    arguments = {"seed_passes": 2, "iterations": 5, "seed": 0, "h": 0.7, "height_scale": 1.0}
    arguments[name] = value
    with pytest.raises(ValueError, match=name):
        seeded_diamond_square(load_seed_image(gradient_png), **arguments)


SKETCH = Path(__file__).resolve().parent.parent / "assets" / "sketch-island.png"


def test_example_sketch_gives_an_island():
    heights = seeded_diamond_square(load_seed_image(SKETCH), 3, 8, seed=0)
    middle = heights[96:160, 96:160].mean()
    rim = np.concatenate([heights[:16].ravel(), heights[-16:].ravel(), heights[:, :16].ravel()]).mean()
    assert middle > rim + 0.1
