"""terrainview.kernels.erosion: hydraulic (Beyer's droplets) and thermal erosion, their scene options and wiring.

- bit for bit against a plain-Python run of the droplets (tests/erosion_reference.py);
- determinism across runs and numba thread counts, seams, mass balance, the talus angle;
- the same scene erodes alike at iterations n and n + 1; what erosion does to roughness and valley floors;
- the textures, the derived arrays, export's flow map, a rendered frame and one-line CLI errors.
"""

from __future__ import annotations

import hashlib
import math

import erosion_reference
import numpy as np
import pytest
from reference import digests_with_threads

from terrainview.kernels import erosion, kernel_common, texturing
from terrainview.kernels.erosion import Cancelled, hydraulic_erosion, thermal_erosion
from terrainview.kernels.fractal import diamond_square
from terrainview.scene.derived_arrays import DerivedArrays, eroded_heights, surface_key
from terrainview.scene.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]


def bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)


def total(heights: np.ndarray) -> float:
    """Sum of the heights of the torus (the last row and column repeat the first), in float64."""
    return float(heights[:-1, :-1].astype(np.float64).sum())


def rounding(heights: np.ndarray) -> float:
    """Bound on the float32 rounding of a map's sum: half an ulp of its largest height per point."""
    return heights[:-1, :-1].size * float(np.abs(heights).max()) * 2.0**-24


def slopes(heights: np.ndarray) -> np.ndarray:
    """Every point's steepest slope (height per surface unit) towards its 8 neighbours, across the seams."""
    torus = heights[:-1, :-1].astype(np.float64)
    cell = erosion.SURFACE_SIZE / torus.shape[0]
    steepest = np.zeros_like(torus)
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        difference = np.abs(torus - np.roll(torus, (-dr, -dc), (0, 1))) / (cell * math.hypot(dr, dc))
        steepest = np.maximum(steepest, np.maximum(difference, np.roll(difference, (dr, dc), (0, 1))))
    return steepest


def laplacian(heights: np.ndarray) -> np.ndarray:
    torus = heights[:-1, :-1].astype(np.float64)
    return sum(np.roll(torus, shift, axis) for shift in (1, -1) for axis in (0, 1)) - 4.0 * torus


# --- the kernel against the reference -------------------------------------------------------------------------


@pytest.mark.parametrize("iterations, seed, kwargs", [
    (4, 0, {}),
    (5, 7, {"inertia": 0.6, "capacity": 20.0, "radius": 0.2 / 16}),
    (3, 2**32 - 1, {"radius": 0.09, "evaporation": 0.0, "deposition": 1.0}),  # the brush wraps around the map
])
def test_hydraulic_equals_plain_python_reference(iterations, seed, kwargs):
    heights = diamond_square(iterations, seed, 0.7, 1.0)
    droplets = 3.0  # 12 droplets on the 2 x 2 map
    expected, carried, _ = erosion_reference.hydraulic(heights, seed, droplets, **kwargs)
    result = hydraulic_erosion(heights, seed, droplets, **kwargs)
    np.testing.assert_array_equal(bits(result.heights), bits(expected))
    assert result.carried == pytest.approx(carried, rel=1e-12, abs=1e-18)
    assert not np.array_equal(result.heights, heights)


@pytest.mark.parametrize("iterations, kwargs", [(8, {"inertia": 0.95}), (9, {"inertia": 0.9, "radius": 0.02})])
def test_droplets_in_blocks_equal_the_reference_schedule(iterations, kwargs):
    """From iterations 8 the droplets walk block by block (4 x 4 and more blocks): the kernel's phases, run in
    parallel, must give the reference's one-by-one walk of the same schedule, hand-overs between blocks included
    (a high inertia keeps droplets going straight, out of their blocks' zones)."""
    heights = diamond_square(iterations, 5, 0.9, 1.0)
    expected, carried, handovers = erosion_reference.hydraulic(heights, 5, 60.0, **kwargs)
    assert handovers > 20  # droplets did cross from block to block
    with kernel_common.every_call_parallel():
        result = hydraulic_erosion(heights, 5, 60.0, **kwargs)
    np.testing.assert_array_equal(bits(result.heights), bits(expected))
    assert result.carried == pytest.approx(carried, rel=1e-12, abs=1e-18)


@pytest.mark.parametrize("iterations, radius", [(8, erosion.RADIUS), (9, 0.02)])
def test_blocks_walked_at_once_never_touch_the_same_cell(iterations, radius):
    """The product's block plan, walked by the reference: within a phase, the cells each block's droplets read or
    wrote (heights, brush, flow) are disjoint from every other block's, so the blocks may run at once."""
    heights = diamond_square(iterations, 5, 0.9, 1.0)
    size = heights.shape[0] - 1
    plan = erosion.droplet_blocks(size, radius)
    touched: dict = {}
    _, _, handovers = erosion_reference.hydraulic(heights, 5, 60.0, inertia=0.95, radius=radius, plan=plan,
                                                  touched=touched)
    assert handovers > 20 and plan[0] < size
    phases: dict = {}
    for (batch, phase, *_), cells in touched.items():
        phases.setdefault((batch, phase), []).append(cells)
    assert max(len(blocks) for blocks in phases.values()) >= 4, "several blocks walked in one phase"
    for blocks in phases.values():
        for i, first in enumerate(blocks):
            for second in blocks[i + 1:]:
                assert not first & second


def test_block_plan_is_the_whole_map_below_four_blocks_a_side_and_blocks_above():
    assert erosion.block_plan(128, 1, 0.5) == (128, 0)  # iterations 7: one block, the plain serial order
    assert erosion.block_plan(256, 2, 1.0) == (64, 26)


def test_flat_map_takes_random_directions_and_stays_flat():
    flat = np.zeros((17, 17), dtype=np.float32)
    result = hydraulic_erosion(flat, 3, 10.0)
    expected, _, _ = erosion_reference.hydraulic(flat, 3, 10.0)
    np.testing.assert_array_equal(bits(result.heights), bits(expected))
    assert result.carried == 0.0 and not result.heights.any()
    assert result.flow.max() > 0.0  # the droplets wandered: some points got more than the mean


# --- determinism, seams, mass ---------------------------------------------------------------------------------

DIGEST_SCRIPT = """
import hashlib, numba
from terrainview.kernels.erosion import hydraulic_erosion, thermal_erosion
from terrainview.kernels.fractal import diamond_square
from terrainview.kernels.kernel_common import every_call_parallel
heights = diamond_square(9, 11, 0.6, 2.0)
with every_call_parallel():  # the parallel builds on as many threads as numba has, whatever the load
    result = hydraulic_erosion(heights, 11, 2000.0)
    parts = [result.heights, result.flow, result.deposit, thermal_erosion(heights, 50.0, 30)]
print(numba.get_num_threads(), *(hashlib.sha256(part.tobytes()).hexdigest() for part in parts), repr(result.carried))
"""


def test_same_result_across_runs_and_thread_counts():
    outputs = [digests_with_threads(DIGEST_SCRIPT, threads) for threads in (1, 2, 2)]
    assert outputs[0] == outputs[1] == outputs[2]
    heights = diamond_square(9, 11, 0.6, 2.0)
    result = hydraulic_erosion(heights, 11, 2000.0)
    here = [hashlib.sha256(part.tobytes()).hexdigest() for part in (result.heights, result.flow, result.deposit)]
    assert here == outputs[0][:3]


def test_seeds_give_different_erosion():
    heights = diamond_square(6, 0)
    one, two = hydraulic_erosion(heights, 1, 500.0), hydraulic_erosion(heights, 2, 500.0)
    assert not np.array_equal(one.heights, two.heights)


@pytest.mark.parametrize("kind", ["hydraulic", "thermal"])
def test_seamless_and_changed_across_the_seams(kind):
    heights = diamond_square(6, 5, 0.7, 1.0)
    if kind == "hydraulic":
        result = hydraulic_erosion(heights, 5, 5000.0)
        maps = [result.heights, result.flow, result.deposit]
    else:
        maps = [thermal_erosion(heights, 45.0, 30)]
    for array in maps:
        assert array.shape == heights.shape and array.dtype == np.float32
        np.testing.assert_array_equal(bits(array[-1]), bits(array[0]))
        np.testing.assert_array_equal(bits(array[:, -1]), bits(array[:, 0]))
    eroded = maps[0].astype(np.float64)
    change = np.abs(eroded - heights)
    assert change[0].max() > 0 and change[:, 0].max() > 0 and change[-2].max() > 0  # the edges erode too
    # No seam: steps across the wrap (last column to first) are like steps inside the map.
    inside = np.abs(np.diff(eroded[:-1, :-1], axis=1)).mean()
    across = np.abs(eroded[:-1, 0] - eroded[:-1, -2]).mean()
    assert 0.5 * inside < across < 2.0 * inside


@pytest.mark.parametrize("iterations, height_scale", [(5, 1.0), (7, 3.0)])
def test_hydraulic_moves_material_without_making_any(iterations, height_scale):
    heights = diamond_square(iterations, 9, 0.7, height_scale)
    result = hydraulic_erosion(heights, 9, 20000.0)
    cell_area = (erosion.SURFACE_SIZE / (heights.shape[0] - 1)) ** 2
    change = (total(result.heights) - total(heights)) * cell_area
    assert result.carried > 0.0
    # The volume lost is exactly what the droplets carried when they died, up to float32 rounding.
    assert abs(change + result.carried) <= rounding(result.heights) * cell_area + 1e-9 * result.carried


def test_thermal_keeps_the_total_and_respects_the_talus():
    heights = diamond_square(6, 1, 0.7, 1.0)
    before = slopes(heights).max()
    for talus in (30.0, 50.0, 65.0):
        tangent = math.tan(math.radians(talus))
        assert before > tangent * 1.2  # steeper than the talus before
        eroded = thermal_erosion(heights, talus, 300)
        assert abs(total(eroded) - total(heights)) <= rounding(heights) + rounding(eroded)
        # Within 0.1 degree after 300 passes (the last excess shrinks geometrically, pass by pass).
        assert math.degrees(math.atan(slopes(eroded).max())) <= talus + 0.1
    assert np.array_equal(thermal_erosion(heights, 30.0, 0), heights)  # no passes, no change


def test_thermal_leaves_gentle_slopes_alone():
    gentle = diamond_square(6, 1, 0.7, 0.05)
    assert slopes(gentle).max() < math.tan(math.radians(60.0))
    np.testing.assert_array_equal(bits(thermal_erosion(gentle, 60.0, 10)), bits(gentle))


# --- what erosion does to the terrain -----------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [6, 7])
def test_resolution_aware(iterations):
    """Iterations n and n + 1 of one scene erode alike: the change at n + 1 on every second point correlates
    with the change at n (seed 3: 0.94 at n = 6 and at n = 7; 0.87 at n = 8, 0.94 at n = 9)."""
    changes = []
    for n in (iterations, iterations + 1):
        heights = diamond_square(n, 3, 0.7, 1.0)
        changes.append(hydraulic_erosion(heights, 3).heights.astype(np.float64) - heights)
    correlation = np.corrcoef(changes[0].ravel(), changes[1][::2, ::2].ravel())[0, 1]
    assert correlation > 0.85


def spectral_peak(field: np.ndarray) -> float:
    """The sharpest peak of ``field``'s power spectrum: over rings of wavelengths 1.4 to 20 cells, the largest
    power in a ring over the ring's median. Irregular terrain has a smooth spectrum (a few hundred at most: the
    largest of some thousands of random powers); a repeating pattern (a waffle, a cross-hatch, a grid of brush
    stamps) puts its power into a few frequencies, thousands of times their ring's median."""
    power = np.abs(np.fft.fft2(field - field.mean())) ** 2
    frequencies = np.fft.fftfreq(field.shape[0])
    radius = np.hypot(*np.meshgrid(frequencies, frequencies))
    rings = [(radius >= low) & (radius < low + 0.025) for low in np.arange(0.05, 0.7, 0.025)]
    return max(float(power[ring].max() / np.median(power[ring])) for ring in rings)


def test_hydraulic_erosion_leaves_no_grid_aligned_pattern():
    """No waffle: what the droplets change at iterations 11 has no spectral peak, while a cross-hatch of a tenth
    of the change's own size stands out at once."""
    heights = diamond_square(11, 3)
    change = (hydraulic_erosion(heights).heights - heights)[:-1, :-1].astype(np.float64)
    assert spectral_peak(change) < 2000.0  # 204 (seeds 7 and 11: 203, 278); brush stamps snapped to even cells: 13746
    cells = np.arange(change.shape[0])
    hatch = 0.1 * change.std() * (np.cos(np.pi * cells / 2)[None, :] + np.cos(np.pi * cells / 3)[:, None])
    assert spectral_peak(change + hatch) > 1e5


def test_erosion_smooths_slopes_and_fills_valley_floors():
    """Hydraulic erosion (defaults, n = 8, seed 0): the lowest tenth of the map rises by 0.029 on average,
    against a mean change of 0.020 (deposits fill valley floors); on the steepest half the high-frequency
    roughness (standard deviation of the Laplacian) falls from 0.0298 to 0.0208, and to 0.0118 with thermal
    erosion on top."""
    heights = diamond_square(8, 0, 0.7, 1.0)
    hydraulic = hydraulic_erosion(heights, 0).heights
    both = thermal_erosion(hydraulic)
    floors = heights[:-1, :-1] <= np.quantile(heights, 0.1)
    rise = (hydraulic.astype(np.float64) - heights)[:-1, :-1]
    assert rise[floors].mean() > 0.5 * np.abs(rise).mean()
    steep = slopes(heights) >= np.median(slopes(heights))
    roughness = [laplacian(array)[steep].std() for array in (heights, hydraulic, both)]
    assert roughness[1] < 0.8 * roughness[0]
    assert roughness[2] < 0.5 * roughness[0]
    assert hydraulic.max() < heights.max()  # peaks wear down


# --- progress, cancelling and argument checks --------------------------------------------------------------


def test_progress_reports_and_cancels():
    heights = diamond_square(5, 0)
    copy = heights.copy()
    seen: list[float] = []
    hydraulic_erosion(heights, 0, 100.0, progress=lambda fraction: seen.append(fraction) or True)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) > 4
    with pytest.raises(Cancelled):
        hydraulic_erosion(heights, 0, 100.0, progress=lambda fraction: fraction < 0.3)
    passes: list[float] = []
    thermal_erosion(heights, 40.0, 7, progress=lambda fraction: passes.append(fraction) or True)
    assert passes == [(k + 1) / 7 for k in range(7)]
    with pytest.raises(Cancelled):
        thermal_erosion(heights, 40.0, 7, progress=lambda fraction: False)
    np.testing.assert_array_equal(heights, copy)  # the input is never written


@pytest.mark.parametrize("call, fragment", [
    (lambda h: hydraulic_erosion(h, radius=0.0), "radius"),
    (lambda h: hydraulic_erosion(h, droplets=-1.0), "droplets"),
    (lambda h: hydraulic_erosion(h, strength=1.5), "strength"),
    (lambda h: hydraulic_erosion(h, inertia=float("nan")), "inertia"),
    (lambda h: hydraulic_erosion(h, seed=-1), "seed"),
    (lambda h: thermal_erosion(h, talus=90.0), "talus"),
    (lambda h: thermal_erosion(h, passes=2.5), "passes"),
    (lambda h: thermal_erosion(h[:-1, :-1]), "2**n + 1"),
    (lambda h: thermal_erosion(h[:, :-1]), "heights must be square"),
    (lambda h: hydraulic_erosion(h + np.arange(h.shape[0])[:, None]), "seamless"),
    (lambda h: hydraulic_erosion(np.where(h > 0, np.inf, h)), "finite"),
])
def test_bad_arguments_name_themselves(call, fragment):
    with pytest.raises(ValueError, match=None) as error:
        call(diamond_square(4, 0))
    assert fragment in str(error.value)


# --- textures, derived arrays, export -----------------------------------------------------------------------


def test_textures_darken_wet_channels_and_smooth_deposits():
    heights = diamond_square(6, 2)
    dry, wet = np.zeros_like(heights), np.ones_like(heights)
    plain = texturing.blend_texture(heights, 256)
    np.testing.assert_array_equal(texturing.blend_texture(heights, 256, flow=dry, deposit=dry), plain)
    darker = texturing.blend_texture(heights, 256, flow=wet, deposit=dry).astype(np.float64)
    ratio = darker.mean() / plain.mean()
    assert abs(ratio - (1.0 - texturing.WET_DARKENING)) < 0.01
    # On a flat map the texture is the lowest tile alone: a full deposit keeps 1 - DEPOSIT_SMOOTHING of its noise.
    flat = np.zeros_like(heights)
    noisy = texturing.blend_texture(flat, 256).astype(np.float64)
    smooth = texturing.blend_texture(flat, 256, flow=dry, deposit=wet).astype(np.float64)
    np.testing.assert_allclose(smooth.mean(axis=(0, 1)), noisy.mean(axis=(0, 1)), atol=0.6)
    np.testing.assert_allclose(smooth.std(axis=(0, 1)), (1.0 - texturing.DEPOSIT_SMOOTHING) * noisy.std(axis=(0, 1)),
                               rtol=0.1)
    bands = texturing.bands_texture(heights, 256)
    np.testing.assert_array_equal(texturing.bands_texture(heights, 256, flow=dry), bands)
    assert texturing.bands_texture(heights, 256, flow=wet).mean() < 0.6 * bands.mean()
    with pytest.raises(ValueError, match="flow"):
        texturing.bands_texture(heights, 256, flow=wet[:-1])
    with pytest.raises(ValueError, match="together"):
        texturing.blend_texture(heights, 256, flow=wet)


def test_derived_arrays_follow_the_erosion_settings():
    base = SceneSettings(mode="rendered", iterations=5, teximage_iterations=5, texture="blend")
    # While erosion is off its options change nothing.
    assert surface_key(base) == surface_key(base.replace(talus=30.0, erosion_droplets=5.0))
    on = base.replace(erosion="both", erosion_droplets=2000.0)
    assert surface_key(on) != surface_key(on.replace(talus=30.0))
    assert surface_key(on) != surface_key(on.replace(erosion_radius=0.05))
    assert surface_key(on.replace(erosion="thermal")) == surface_key(on.replace(erosion="thermal", erosion_radius=0.05))
    arrays = DerivedArrays()
    arrays.update(base)
    plain_surface, plain_texture = arrays.surface.value, arrays.surface_texture.value
    changed = arrays.update(on)
    assert set(changed) == {"surface", "surface_water", "teximage", "teximage_flow", "surface_texture"}
    expected, result = eroded_heights(on, 5, on.h)
    np.testing.assert_array_equal(arrays.surface.value, expected)
    assert not np.array_equal(arrays.surface.value, plain_surface)
    np.testing.assert_array_equal(arrays.teximage.value, expected)  # same iterations, same H: same map
    assert arrays.teximage_erosion is not None
    np.testing.assert_array_equal(arrays.teximage_erosion.flow, result.flow)
    np.testing.assert_array_equal(changed["teximage_flow"], result.flow)
    assert not np.array_equal(arrays.surface_texture.value, plain_texture)


def test_derived_arrays_cancel_and_recover():
    from terrainview.scene.derived_arrays import GenerationError

    settings = SceneSettings(mode="rendered", iterations=5, erosion="hydraulic", erosion_droplets=500.0)
    arrays = DerivedArrays(progress=lambda fraction: False)
    with pytest.raises(GenerationError, match="cancelled"):
        arrays.update(settings)
    arrays.progress = None
    assert "surface" in arrays.update(settings)  # the cancelled array was not marked current


def test_export_writes_the_flow_map(tmp_path, call_main):
    from PIL import Image

    heights_path, flow_path = tmp_path / "h.npy", tmp_path / "flow.png"
    status, out, err = call_main("export", "-o", heights_path, "--iterations", "5", "--erosion", "hydraulic",
                                 "--erosion-droplets", "3000", "--flow-map", flow_path)
    assert status == 0, err
    settings = SceneSettings(iterations=5, erosion="hydraulic", erosion_droplets=3000.0)
    expected, result = eroded_heights(settings, 5, settings.h)
    np.testing.assert_array_equal(np.load(heights_path), expected)
    flow = np.asarray(Image.open(flow_path))
    assert flow.shape == expected.shape and flow.max() > 0
    np.testing.assert_array_equal(flow, np.rint(result.flow.astype(np.float64) * 65535).astype(np.uint16))
    npy = tmp_path / "flow.npy"
    assert call_main("export", "-o", tmp_path / "h2.npy", "--iterations", "5", "--erosion", "both",
                     "--erosion-droplets", "3000", "--flow-map", npy)[0] == 0
    assert np.load(npy).shape == expected.shape


@pytest.mark.parametrize("args, fragment", [
    (("--erosion-radius", "-1"), "--erosion-radius: "),
    (("--erosion-radius", "0"), "--erosion-radius: "),
    (("--erosion", "rain"), "--erosion"),
    (("--talus", "95"), "--talus: "),
    (("--thermal-passes", "-1"), "--thermal-passes: "),
    (("--thermal-passes", "2.5"), "--thermal-passes"),
    (("--erosion-droplets", "nan"), "--erosion-droplets"),
    (("--erosion-strength", "2"), "--erosion-strength: "),
    (("--erosion-inertia", "-0.1"), "--erosion-inertia: "),
    (("--flow-map", "FLOW.npy"), "--flow-map needs --erosion"),
    (("--erosion", "hydraulic", "--flow-map", "FLOW.txt"), "unknown file type"),
])
def test_bad_erosion_options_are_one_line_errors(tmp_path, call_main, usage_error, args, fragment):
    args = tuple(str(tmp_path / arg) if arg.startswith("FLOW") else arg for arg in args)
    status, _, err = call_main("export", "-o", tmp_path / "out.npy", "--iterations", "4", *args)
    usage_error(status, err, fragment)
    assert list(tmp_path.iterdir()) == []  # nothing left behind


# --- a rendered frame ---------------------------------------------------------------------------------------


@pytest.mark.gl
def test_rendered_frame_differs_visibly(frame):
    settings = SceneSettings(mode="rendered", iterations=7, teximage_iterations=8, texture="blend", ztrans=-1.5,
                             ytrans=-0.4, pitch=20.0)
    plain = frame(settings, (192, 108)).astype(np.float64)
    eroded = frame(settings.replace(erosion="both"), (192, 108)).astype(np.float64)
    difference = np.abs(eroded - plain).mean(axis=2)
    assert difference.mean() > 4.0 and (difference > 16).mean() > 0.1
    assert eroded.mean() < plain.mean()  # wet channels are darker


def test_scene_files_keep_the_erosion_settings(tmp_path):
    from terrainview.scene.scene_file import load_scene, save_scene_toml

    settings = SceneSettings(erosion="both", erosion_droplets=1234.5, erosion_radius=0.02, talus=42.0,
                             thermal_passes=7, erosion_inertia=0.25)
    save_scene_toml(settings, tmp_path / "scene.toml")
    assert load_scene(tmp_path / "scene.toml")[0] == settings


def test_worker_cancels_an_erosion_when_newer_settings_arrive():
    import time

    from terrainview.window.generation_feed import GenerationWorker

    slow = SceneSettings(mode="rendered", iterations=8, teximage_iterations=8, erosion="hydraulic",
                         erosion_droplets=500000.0)
    worker = GenerationWorker()
    seen: list[float] = []
    report = worker.arrays.progress
    assert report is not None
    worker.arrays.progress = lambda fraction: seen.append(fraction) or report(fraction)
    try:
        worker.request(slow)
        deadline = time.monotonic() + 120.0
        while not seen and time.monotonic() < deadline:
            time.sleep(0.01)
        assert seen, "the erosion never started"
        newer = slow.replace(erosion="none")
        worker.request(newer)
        assert worker.wait_idle(120.0)
        result = worker.take_result()
        assert result.settings == newer and result.error is None
        assert max(seen) < 1.0  # the slow erosion stopped part-way
        np.testing.assert_array_equal(worker.arrays.surface.value, diamond_square(8, 0))
        assert worker.erosion_progress is None
    finally:
        worker.stop()


@pytest.mark.parametrize("generator", [{}, {"generator": "fault", "blur": 1.0},
                                       {"seed_image": "assets/sketch-island.png"}])
def test_erosion_follows_every_generator(generator):
    from terrainview.scene import catalog

    settings = SceneSettings(iterations=6, erosion="both", erosion_droplets=3000.0, **generator)
    plain = catalog.generator(settings).make(settings, 6, settings.h)
    heights, result = eroded_heights(settings, 6, settings.h)
    assert result is not None and heights.shape == plain.shape
    assert np.abs(heights - plain).mean() > 0.01 * np.ptp(plain)
    np.testing.assert_array_equal(heights[-1], heights[0])
    np.testing.assert_array_equal(heights[:, -1], heights[:, 0])


@pytest.mark.gl
def test_the_teximage_is_darker_where_water_ran(renderer):
    """The GPU-drawn teximage uses the hydraulic pass's flow map like the CPU textures: every triangle keeps
    its colour or darkens, and those where water ran (flow near 1) darken by about WET_DARKENING."""
    from terrainview.kernels.texturing import WET_DARKENING

    settings = SceneSettings(mode="teximage", teximage_iterations=8, seed=2, erosion="hydraulic")
    renderer.update(settings)
    maps = renderer.arrays.teximage_erosion
    assert maps is not None and maps.flow.max() > 0.5
    flow = maps.flow

    def texture() -> np.ndarray:
        image = renderer.gpu.get("texture:teximage")
        return np.frombuffer(image.read(), np.uint8).reshape(image.height, image.width, 3)[::-1].astype(float)

    wet = texture()
    renderer.upload({"teximage_flow": None, "teximage": renderer.arrays.teximage.value})
    dry = texture()
    assert (wet <= dry + 1).all()
    # A flat-shaded triangle takes one corner's wetness: a texel darkens by at most the wettest corner of its
    # cell allows, not at all where its cell is dry, and clearly where all of its cell ran wet.
    corners = np.stack([flow[:-1, :-1], flow[1:, :-1], flow[:-1, 1:], flow[1:, 1:]])
    darkening = 1.0 - wet.sum(axis=2) / np.maximum(dry.sum(axis=2), 1.0)
    lit = dry.sum(axis=2) > 60  # darkening of near-black texels is mostly rounding
    assert (darkening[lit] <= WET_DARKENING * corners.max(axis=0)[lit] + 0.03).all()
    assert np.abs(darkening[lit & (corners.max(axis=0) == 0.0)]).max() < 0.02
    soaked = lit & (corners.min(axis=0) > 0.3)
    assert soaked.sum() > 20
    assert darkening[soaked].mean() > 0.3 * WET_DARKENING


@pytest.mark.parametrize("choice", ["hydraulic", "thermal", "both"])
def test_erosion_progress_rises_from_0_to_1_whatever_the_passes(choice):
    from terrainview.scene.derived_arrays import eroded

    seen: list[float] = []
    settings = SceneSettings(iterations=5, erosion=choice, erosion_droplets=500.0, thermal_passes=10)
    eroded(diamond_square(5, 1), settings, lambda fraction: seen.append(fraction) or True)
    assert seen and seen == sorted(seen), seen
    assert seen[-1] == pytest.approx(1.0)


def test_one_thermal_pass_equals_the_plain_python_reference():
    heights = diamond_square(4, 3, height_scale=4.0)  # steep: many cells above the talus angle
    talus, size = 30.0, heights.shape[0] - 1
    cell = erosion.SURFACE_SIZE / size
    limits = [math.tan(math.radians(talus)) * cell * math.hypot(dr, dc)
              for dr, dc in zip(erosion._NEIGHBOUR_ROWS, erosion._NEIGHBOUR_COLUMNS, strict=True)]
    expected = erosion_reference.thermal_pass(heights[:-1, :-1].astype(np.float64).tolist(), limits, 0.5)
    result = thermal_erosion(heights, talus, 1)
    assert not np.allclose(result, heights), "the pass moved material"
    np.testing.assert_allclose(result[:-1, :-1], np.array(expected, dtype=np.float32), rtol=0, atol=2e-6)


def cell_alternation(heights: np.ndarray) -> float:
    """The power of a seamless map at two cells' wavelength (along x, along z and diagonally), per mille of all."""
    torus = heights[:-1, :-1].astype(np.float64)
    power = np.abs(np.fft.fft2(torus - torus.mean()))
    half = torus.shape[0] // 2
    return float((power[half, half] + power[half, 0] + power[0, half]) / power.sum() * 1e3)


def test_the_eroded_map_has_no_checkerboard():
    """At iterations 8 (the teximage's default) the droplets left a checkerboard on eroded slopes, 10.7 times the
    uneroded map's power at two cells' wavelength (the kernels are deterministic: the same figure every run); the
    map the program draws has 1.25 times, no more than the uneroded's few."""
    from terrainview.scene.derived_arrays import eroded_heights
    from terrainview.scene.settings import SceneSettings

    settings = SceneSettings(mode="rendered", erosion="hydraulic")
    uneroded, _ = eroded_heights(settings.replace(erosion="none"), 8, settings.h)
    drawn, result = eroded_heights(settings, 8, settings.h)
    assert cell_alternation(hydraulic_erosion(uneroded).heights) > 10 * cell_alternation(uneroded)  # the artefact
    assert cell_alternation(drawn) < 3 * cell_alternation(uneroded)
    assert result is not None and result.heights is drawn


def test_without_cell_alternation_smooths_the_change_not_the_map():
    """A checkerboard change is taken out whole, a change of constant height kept whole, the map's own detail kept."""
    from terrainview.kernels.erosion import without_cell_alternation

    original = diamond_square(6, 1)
    cells = np.arange(65)
    checkerboard = np.where(np.add.outer(cells, cells) % 2 == 0, 0.01, -0.01).astype(np.float32)
    np.testing.assert_allclose(without_cell_alternation(original, original + checkerboard), original, atol=1e-6)
    np.testing.assert_allclose(without_cell_alternation(original, original + 0.25), original + 0.25, atol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        without_cell_alternation(original, diamond_square(5, 1))
