"""The derived arrays' cache keys (the original's dirty flags) and the generation worker that fills them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PIL import Image

from terrainview.kernels import erosion
from terrainview.scene import catalog
from terrainview.scene.derived_arrays import DerivedArrays, GenerationError
from terrainview.scene.settings import SceneSettings
from terrainview.window.generation_feed import GenerationWorker

# Another valid value for every setting (camera and drawing options included: they must change no key).
OTHER_VALUES = {
    "mode": "clouds", "iterations": 4, "h": 0.35, "cloud_iterations": 4, "cloud_h": 0.3,
    "teximage_iterations": 4, "teximage_h": 0.3, "tile": 2, "world_octaves": 4, "seed": 11, "height_scale": 2.0,
    "invert": True,
    "antialias": False, "linear": False, "generator": "fault", "fault_iterations": 37, "blur": 1.5,
    "seed_image": "", "seed_passes": 1, "passes": 3, "texture": "bands", "shading": "slope", "water_level": 0.1,
    "erosion": "both", "erosion_droplets": 5000.0, "erosion_strength": 0.5, "erosion_radius": 0.05,
    "erosion_capacity": 4.0, "erosion_deposition": 0.5, "erosion_evaporation": 0.05, "erosion_inertia": 0.3,
    "talus": 30.0, "thermal_passes": 5,
    "lod": "off", "lod_error": 3.0, "look": "natural", "sun_azimuth": 200.0, "sun_elevation": 10.0,
    "yrot": 30.0, "ytrans": -0.7, "ztrans": -2.0, "pitch": 20.0,
    "camera": "fly", "xtrans": 0.4, "eye_x": 3.0, "eye_y": 1.0, "eye_z": -2.0,
}


def base_scenes(sketch) -> dict[str, SceneSettings]:
    small = SceneSettings(mode="rendered", iterations=3, cloud_iterations=3, teximage_iterations=3,
                          texture="blend")
    return {
        "diamond-square": small,
        "fault with blur": small.replace(generator="fault", fault_iterations=20, blur=1.0),
        "fault without blur": small.replace(generator="fault", fault_iterations=20),
        "seed image": small.replace(seed_image=str(sketch), seed_passes=2),
        "1d": small.replace(mode="1d"),
        "hydraulic": small.replace(erosion="hydraulic"),
        "thermal": small.replace(erosion="thermal", talus=20.0),
        "natural": small.replace(look="natural"),
    }


@pytest.fixture
def sketch(tmp_path):
    path = tmp_path / "sketch.png"
    Image.fromarray(np.tile(np.linspace(0, 255, 40).astype(np.uint8), (30, 1))).save(path)
    return path


def arrays_for(settings: SceneSettings) -> DerivedArrays:
    arrays = DerivedArrays()
    arrays.update(settings)
    return arrays


def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b))


def test_every_setting_that_changes_an_array_changes_its_key(sketch):
    """A change of any setting that alters an array must alter that array's key, or the array would silently
    stay stale (the live H slider doing nothing, say)."""
    assert set(OTHER_VALUES) == {spec.name for spec in dataclasses.fields(SceneSettings)}
    checked = 0
    for scene, base in base_scenes(sketch).items():
        before = arrays_for(base)
        for name, value in OTHER_VALUES.items():
            try:
                changed = base.replace(**{name: value})
            except ValueError:
                continue
            after = arrays_for(changed)
            for array in DerivedArrays.NAMES:
                old, new = getattr(before, array), getattr(after, array)
                if not same(old.value, new.value):
                    checked += 1
                    assert old.key_of(base) != new.key_of(changed), f"{scene}: {name} changes {array}, not its key"
    assert checked > 40


def test_settings_an_array_ignores_keep_its_key(sketch):
    """The other way round, where it matters for speed: the camera and the drawing options never regenerate."""
    for base in base_scenes(sketch).values():
        for name in ("yrot", "ytrans", "ztrans", "pitch", "invert", "antialias", "linear", "tile", "water_level",
                     "world_octaves", "shading", "camera", "xtrans", "eye_x", "eye_y", "eye_z"):
            assert DerivedArrays().keys(base) == DerivedArrays().keys(base.replace(**{name: OTHER_VALUES[name]}))
    fault = base_scenes(sketch)["fault without blur"]
    assert DerivedArrays().keys(fault) == DerivedArrays().keys(fault.replace(h=0.2, teximage_h=0.2))
    plain = base_scenes(sketch)["diamond-square"]  # the seed-image passes without a seed image
    assert DerivedArrays().keys(plain) == DerivedArrays().keys(plain.replace(seed_passes=3))


def test_a_switch_between_2d_modes_regenerates_nothing(sketch):
    """Every array is kept current in every mode, so a mode switch (P: rendered and lines) is drawn at once."""
    modes = [name for name, entry in catalog.RENDER_TYPES.items() if entry.dimensions == 2]
    for scene, base in base_scenes(sketch).items():
        arrays = arrays_for(base.with_mode("lines"))
        for mode in modes:
            assert arrays.update(base.with_mode(mode)) == {}, f"{scene}: switching to {mode} regenerates"


def test_a_result_nobody_took_still_reaches_the_gpu():
    """Two generations finish before the window takes either: the second result carries the first's arrays
    too, or the surface made first would never be uploaded."""
    first = SceneSettings(mode="rendered", iterations=3, cloud_iterations=3, teximage_iterations=3)
    second = first.replace(cloud_h=0.2)
    worker = GenerationWorker(DerivedArrays())
    try:
        worker.request(first)
        assert worker.wait_idle(60.0)
        worker.request(second)
        assert worker.wait_idle(60.0)
        result = worker.take_result()
    finally:
        worker.stop()
    assert result is not None and result.error is None and result.settings == second
    assert {"surface", "clouds", "teximage"} <= set(result.changed)
    expected = arrays_for(second)
    for name in ("surface", "clouds", "teximage"):
        np.testing.assert_array_equal(result.changed[name], getattr(expected, name).value)
    # The first generation's surface comes with the pyramid the worker built for it (not on the UI thread).
    assert result.lod_surface is not None and result.lod_surface.iterations == 3
    assert result.lod_surface.high[-1] == result.changed["surface"].max()


SMALL_BLEND = SceneSettings(mode="rendered", iterations=3, cloud_iterations=3, teximage_iterations=3, texture="blend")


def test_a_failed_array_keeps_those_made_before_it(monkeypatch):
    def broken(*arguments):
        raise ValueError("blend texture exploded")

    monkeypatch.setitem(catalog.TEXTURES, "blend", dataclasses.replace(catalog.TEXTURES["blend"], make=broken))
    worker = GenerationWorker(DerivedArrays())
    try:
        worker.request(SMALL_BLEND)
        assert worker.wait_idle(60.0)
        result = worker.take_result()
        assert result.error == "blend texture exploded"
        assert set(result.changed) == {"surface", "surface_water", "clouds", "teximage", "teximage_flow"}  # to upload
        with pytest.raises(GenerationError, match="exploded") as raised:
            DerivedArrays().update(SMALL_BLEND)
        assert set(raised.value.changed) == {"surface", "surface_water", "clouds", "teximage", "teximage_flow"}
    finally:
        worker.stop()


def test_the_flow_map_comes_with_the_teximage():
    """The flow map is made with the teximage heights: it goes to the GPU whenever they do (None once dry), and
    never without them."""
    arrays = DerivedArrays()
    wet = SMALL_BLEND.replace(erosion="hydraulic", erosion_droplets=500.0)
    changed = arrays.update(wet)
    assert arrays.teximage_erosion is not None and changed["teximage_flow"] is arrays.teximage_erosion.flow
    assert set(arrays.update(wet.replace(texture="bands"))) == {"surface_texture"}
    changed = arrays.update(wet.replace(erosion="none"))
    assert "teximage" in changed and changed["teximage_flow"] is None


@pytest.fixture
def erosion_calls(monkeypatch) -> list[str]:
    """The erosion passes run from now on, by name (each pass still runs)."""
    calls: list[str] = []

    def counted(name: str):
        run = getattr(erosion, name)

        def call(*arguments, **keywords):
            calls.append(name)
            return run(*arguments, **keywords)
        return call

    for name in ("hydraulic_erosion", "thermal_erosion"):
        monkeypatch.setattr(erosion, name, counted(name))
    return calls


ERODED_ALIKE = SceneSettings(mode="rendered", iterations=4, teximage_iterations=4, cloud_iterations=3,
                             texture="blend", erosion="both", erosion_droplets=500.0)


def test_a_teximage_made_like_the_surface_is_eroded_once(erosion_calls):
    arrays = DerivedArrays()
    arrays.update(ERODED_ALIKE)
    assert erosion_calls == ["hydraulic_erosion", "thermal_erosion"]
    np.testing.assert_array_equal(arrays.teximage.value, arrays.surface.value)
    assert arrays.teximage_erosion is not None
    # The shared map is the one the teximage would have had on its own.
    alone = DerivedArrays()
    alone.update(ERODED_ALIKE.replace(iterations=5))
    np.testing.assert_array_equal(alone.teximage.value, arrays.teximage.value)
    np.testing.assert_array_equal(alone.teximage_erosion.flow, arrays.teximage_erosion.flow)
    np.testing.assert_array_equal(alone.surface_texture.value, arrays.surface_texture.value)


@pytest.mark.parametrize("change, eroded", [
    ({"teximage_iterations": 5}, 4),  # another resolution
    ({"teximage_h": 0.3}, 4),  # another roughness
    ({"generator": "fault", "teximage_h": 0.3}, 2),  # fault formation ignores the roughness
])
def test_only_a_teximage_made_from_every_same_input_shares_the_surfaces_map(erosion_calls, change, eroded):
    settings = ERODED_ALIKE.replace(**change)
    arrays = DerivedArrays()
    arrays.update(settings)
    assert len(erosion_calls) == eroded
    assert same(arrays.teximage.value, arrays.surface.value) == (eroded == 2)


def test_a_slow_erosion_is_previewed_at_a_coarser_resolution_of_the_same_landscape():
    from terrainview.scene.derived_arrays import PREVIEW_ITERATIONS, preview_settings

    eroded = SceneSettings(mode="rendered", iterations=PREVIEW_ITERATIONS + 2, erosion="thermal")
    assert preview_settings(eroded) == eroded.replace(iterations=PREVIEW_ITERATIONS)
    assert preview_settings(eroded.replace(erosion="none")) is None, "nothing slow to wait for"
    assert preview_settings(eroded.replace(iterations=PREVIEW_ITERATIONS)) is None, "coarse enough already"
    assert preview_settings(eroded.replace(mode="1d")) is None


def test_the_worker_shows_the_coarse_erosion_first_then_the_full_map(monkeypatch):
    import terrainview.window.generation_feed as feed_module
    from terrainview.window.generation_feed import GenerationWorker

    monkeypatch.setattr(feed_module, "preview_settings",
                        lambda settings: settings.replace(iterations=3) if settings.iterations > 3 and
                        settings.erosion != "none" else None)
    worker = GenerationWorker()
    made: list[int] = []
    generate = worker._generate
    monkeypatch.setattr(worker, "_generate", lambda settings: made.append(settings.iterations) or generate(settings))
    try:
        worker.request(SceneSettings(mode="rendered", iterations=5, erosion="thermal", thermal_passes=3))
        assert worker.wait_idle(60.0)
        result = worker.take_result()
        assert made == [3, 5], "the preview, then the full map"
        assert result is not None and result.settings.iterations == 5 and result.changed["surface"].shape == (33, 33)
        worker.request(SceneSettings(mode="rendered", iterations=5, erosion="none"))
        assert worker.wait_idle(60.0)
        assert made == [3, 5, 5], "no erosion: no preview"
    finally:
        worker.stop()


def test_the_endless_world_makes_no_tile_map_it_would_not_draw():
    arrays = DerivedArrays()
    arrays.update(SceneSettings(mode="rendered", tile="endless", iterations=12, erosion="none"))
    assert arrays.surface.value.shape == (3, 3) and not arrays.surface.value.any()
    arrays.update(SceneSettings(mode="rendered", tile=1, iterations=4))
    assert arrays.surface.value.shape == (17, 17), "back to tiles: the map is made again"
