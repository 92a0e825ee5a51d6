"""Camera modes (orbit, fly), endless terrain, terrain following and the sky at any pitch."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest
from gl_fixtures import SMALL_SIZE, render_frame
from PIL import Image

from terrainview.kernels.fractal import diamond_square
from terrainview.render.gpu import FOG_COLOR
from terrainview.render.renderer import Frame
from terrainview.scene import camera
from terrainview.scene.arguments import add_scene_arguments, scene_from_args
from terrainview.scene.scene_file import load_scene, png_text_chunks, save_scene_toml
from terrainview.scene.settings import SceneSettings, SettingsError
from terrainview.window import arrow_keys

pytest_plugins = ["gl_fixtures"]

RENDERED = SceneSettings(mode="rendered", iterations=5, teximage_iterations=6, seed=7)
# A few views in either mode; the orbit ones include an x translation and every angle sign.
ORBIT_VIEWS = [dict(yrot=30.0, pitch=20.0), dict(yrot=-125.0, pitch=-10.0, xtrans=0.3, ytrans=-0.8, ztrans=-2.2),
               dict(yrot=400.0, pitch=55.0, ytrans=-0.2, ztrans=-1.5)]
FLY_VIEWS = [dict(camera="fly", eye_x=0.4, eye_y=0.9, eye_z=1.7, yrot=15.0, pitch=25.0),
             dict(camera="fly", eye_x=-7.0, eye_y=0.6, eye_z=12.5, yrot=200.0, pitch=-5.0)]


def mean_difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(int) - b.astype(int)).mean())


def matrix(m) -> np.ndarray:
    return np.array([[m[column][row] for column in range(4)] for row in range(4)])


# --- the camera model ---------------------------------------------------------------------------------------

def test_default_orbit_view_is_the_originals():
    settings = SceneSettings(yrot=20.0, pitch=10.0, ytrans=-0.7, ztrans=-2.5)
    yaw, pitch = math.radians(20.0), math.radians(10.0)
    rotate_x = np.array([[1, 0, 0, 0], [0, math.cos(pitch), -math.sin(pitch), 0],
                         [0, math.sin(pitch), math.cos(pitch), 0], [0, 0, 0, 1]])
    rotate_y = np.array([[math.cos(yaw), 0, math.sin(yaw), 0], [0, 1, 0, 0],
                         [-math.sin(yaw), 0, math.cos(yaw), 0], [0, 0, 0, 1]])
    translate = np.eye(4)
    translate[:3, 3] = (0.0, -0.7, -2.5)
    np.testing.assert_allclose(matrix(camera.view_matrix(settings)), translate @ rotate_x @ rotate_y, atol=1e-6)


def test_default_fly_camera_sees_what_the_default_orbit_camera_sees():
    np.testing.assert_allclose(matrix(camera.view_matrix(SceneSettings(camera="fly"))),
                               matrix(camera.view_matrix(SceneSettings())), atol=1e-6)


@pytest.mark.parametrize("view", ORBIT_VIEWS + FLY_VIEWS)
def test_switching_mode_keeps_the_view_both_ways(view):
    settings = SceneSettings(**view)
    other = "orbit" if settings.camera == "fly" else "fly"
    switched = camera.switch_mode(settings, other)
    assert switched.camera == other
    np.testing.assert_allclose(matrix(camera.view_matrix(switched)), matrix(camera.view_matrix(settings)),
                               atol=1e-5)
    back = camera.switch_mode(switched, settings.camera)
    own = ("eye_x", "eye_y", "eye_z") if settings.camera == "fly" else ("xtrans", "ytrans", "ztrans")
    for name in ("yrot", "pitch", *own):
        assert getattr(back, name) == pytest.approx(getattr(settings, name), abs=1e-9), name
    with pytest.raises(ValueError, match="^camera: "):
        camera.switch_mode(settings, "walk")


def test_camera_fields_are_one_block_and_the_angles_are_marked():
    import dataclasses

    names = [spec.name for spec in dataclasses.fields(SceneSettings)]
    first = names.index(camera.CAMERA_FIELDS[0])
    assert tuple(names[first:first + len(camera.CAMERA_FIELDS)]) == camera.CAMERA_FIELDS
    angles = {spec.name for spec in dataclasses.fields(SceneSettings) if spec.metadata.get("angle")}
    assert angles == {"yrot", "pitch", "sun_azimuth", "sun_elevation"}  # the sun follows curves like the camera
    assert {"camera", "eye_x", "eye_y", "eye_z", "xtrans"} <= set(camera.CAMERA_FIELDS)


def test_endless_tile_is_validated_in_one_line():
    assert SceneSettings(tile="endless").tile == "endless" and SceneSettings(tile="repeat").tile == "repeat"
    for bad in ("Endless", "", 0, 9, 2.0):
        with pytest.raises(SettingsError, match="^tile: expected 'endless', 'repeat' or an integer from 1 to 8"):
            SceneSettings(tile=bad)


def test_endless_ring_is_centred_on_the_eyes_tile_and_reaches_far_enough():
    settings = SceneSettings(camera="fly", tile="repeat", eye_x=5.2, eye_z=-3.1)
    count, (x, z) = camera.tile_layout(settings, 7.0)
    assert (x, z) == (6.0, -4.0) and count % 2 == 1
    # Every point within reach of the eye is on the ring, whose edge lies ``count`` units from its centre.
    assert count >= 7.0 + max(abs(5.2 - x), abs(-3.1 - z))
    assert camera.tile_layout(SceneSettings(tile=3), 7.0) == (3, (0.0, 0.0))


# --- terrain following ----------------------------------------------------------------------------------------

HEIGHTS = diamond_square(4, seed=3)


def reference_height(heights: np.ndarray, x: float, z: float, shift: float) -> float:
    """Plain bilinear interpolation of the tiled heightmap (tile centred on 0 when shift is 0)."""
    cells = heights.shape[0] - 1
    u = ((x + 1.0 + shift) % 2.0) / 2.0 * cells
    v = ((z + 1.0 + shift) % 2.0) / 2.0 * cells
    c, r = min(int(u), cells - 1), min(int(v), cells - 1)
    fu, fv = u - c, v - r
    return ((1 - fu) * (1 - fv) * heights[r, c] + fu * (1 - fv) * heights[r, c + 1]
            + (1 - fu) * fv * heights[r + 1, c] + fu * fv * heights[r + 1, c + 1])


def test_ground_is_the_heightmap_at_grid_points_and_repeats_every_tile():
    ground = camera.ground_height(HEIGHTS, 1)
    cells = HEIGHTS.shape[0] - 1
    for row in range(0, cells + 1, 3):
        for column in range(0, cells + 1, 5):
            x, z = -1.0 + 2.0 * column / cells, -1.0 + 2.0 * row / cells
            assert ground(x, z) == pytest.approx(HEIGHTS[row, column], abs=1e-6)
    rng = np.random.default_rng(1)
    for x, z in rng.uniform(-5, 5, (50, 2)):
        assert ground(x, z) == pytest.approx(reference_height(HEIGHTS, x, z, 0.0), abs=1e-6)
        assert ground(x + 2.0, z - 4.0) == pytest.approx(ground(x, z), abs=1e-6)
    # An even tile count puts a tile edge at 0.
    assert camera.ground_height(HEIGHTS, 2)(0.3, 0.7) == pytest.approx(reference_height(HEIGHTS, 0.3, 0.7, 1.0))


@pytest.mark.parametrize("fps", [10, 60, 144])
def test_fly_camera_keeps_its_clearance_when_descending_and_flying(fps):
    state = arrow_keys.ArrowKeyCamera(ground=camera.ground_height(HEIGHTS, "repeat"))
    settings = SceneSettings(camera="fly", tile="repeat", eye_y=2.0, yrot=35.0)
    state.shift = True
    settings = state.press(settings, arrow_keys.Key.DOWN)
    for _ in range(2 * fps):  # 60 steps of 0.05 down: far below the ground without following
        settings = state.advance(settings, 1.0 / fps)
    state.release_all()
    state.shift = False
    settings = state.press(settings, arrow_keys.Key.UP)
    lowest_margin = math.inf
    for _ in range(3 * fps):
        settings = state.advance(settings, 1.0 / fps)
        lowest_margin = min(lowest_margin, settings.eye_y - reference_height(HEIGHTS, settings.eye_x,
                                                                             settings.eye_z, 0.0))
    assert lowest_margin >= camera.CLEARANCE - 1e-9
    assert settings.eye_y < 2.0, "it did descend to the ground"


def test_a_flying_eye_climbs_no_higher_than_the_ceiling_over_the_ground():
    """Holding Shift+Up for ten seconds: the eye stops within CEILING of the ground, where the land still shows."""
    state = arrow_keys.ArrowKeyCamera(ground=camera.ground_height(HEIGHTS, "repeat"))
    settings = SceneSettings(camera="fly", tile="repeat")
    state.shift = True
    settings = state.press(settings, arrow_keys.Key.UP)
    for _ in range(600):
        settings = state.advance(settings, 1.0 / 60)
    ground = camera.floor_under(state.ground, settings.eye_x, settings.eye_z)
    assert settings.eye_y == pytest.approx(ground + camera.CEILING, abs=1e-9)


def test_orbit_pitch_drag_keeps_the_eye_above_the_ground():
    state = arrow_keys.ArrowKeyCamera(ground=camera.ground_height(HEIGHTS, 1))
    settings = SceneSettings()
    for _ in range(40):
        settings = state.drag(settings, 0, -20)
    assert settings.pitch == -80.0
    x, y, z = camera.eye_position(settings)
    assert y >= camera.floor_under(state.ground, x, z) - 1e-9
    # Without a ground (before any surface exists) the original's free orbit stays.
    x, y, z = camera.eye_position(arrow_keys.drag(SceneSettings(), 0, -300))
    assert y < -1.0


# --- fly keys -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fps", [10, 24, 60, 144])
def test_fly_keys_one_second_held_is_30_steps_at_any_frame_rate(fps):
    start = SceneSettings(camera="fly", yrot=90.0)  # heading +x
    for key, shift, expected in ((arrow_keys.Key.UP, False, (1.5, 0.0, 0.0)),
                                 (arrow_keys.Key.DOWN, False, (-1.5, 0.0, 0.0)),
                                 (arrow_keys.Key.UP, True, (0.0, 1.5, 0.0))):
        state = arrow_keys.ArrowKeyCamera(shift=shift)
        settings = state.press(start, key)
        for _ in range(fps):
            settings = state.advance(settings, 1.0 / fps)
        moved = np.subtract(camera.eye_position(settings), camera.eye_position(start))
        np.testing.assert_allclose(moved, expected, atol=1e-9)
        assert (settings.yrot, settings.pitch) == (start.yrot, start.pitch)
    state = arrow_keys.ArrowKeyCamera()
    settings = state.press(start, arrow_keys.Key.LEFT)
    for _ in range(fps):
        settings = state.advance(settings, 1.0 / fps)
    assert settings.yrot == 0.0 and camera.eye_position(settings) == camera.eye_position(start)


def test_fly_left_turns_the_heading_left_and_the_wheel_sets_the_speed():
    state = arrow_keys.ArrowKeyCamera()
    settings = state.press(SceneSettings(camera="fly"), arrow_keys.Key.LEFT)  # heading -z, left is -x
    x, z = camera.heading(settings)
    assert x < 0 and z < 0
    settings = state.wheel(settings, 2)
    assert state.speed == pytest.approx(1.25 ** 2)
    before = camera.eye_position(settings)
    settings = state.press(settings, arrow_keys.Key.UP)
    assert math.dist(camera.eye_position(settings), before) == pytest.approx(0.05 * 1.25 ** 2)
    # In orbit mode the wheel still moves along Z, as before.
    assert arrow_keys.ArrowKeyCamera().wheel(SceneSettings(), 1).ztrans == pytest.approx(-2.95)


# --- scenes -------------------------------------------------------------------------------------------------

def test_scenes_round_trip_the_camera_mode_and_fields(tmp_path):
    settings = SceneSettings(**FLY_VIEWS[1], tile="repeat", mode="rendered")
    path = tmp_path / "fly.toml"
    save_scene_toml(settings, path)
    assert load_scene(path)[0] == settings
    image_path = tmp_path / "fly.png"
    Image.new("RGB", (4, 4)).save(image_path, pnginfo=png_text_chunks(settings))
    assert load_scene(image_path)[0] == settings
    parser = argparse.ArgumentParser()
    add_scene_arguments(parser)
    restored = scene_from_args(parser.parse_args(["--scene", str(path), "--pitch", "12"])).settings
    assert restored == settings.replace(pitch=12.0)
    assert scene_from_args(parser.parse_args(["--tile", "repeat", "--camera", "fly"])).settings.tile == "repeat"
    assert scene_from_args(parser.parse_args(["--tile", "endless", "--camera", "fly"])).settings.tile == "endless"


# --- pictures -------------------------------------------------------------------------------------------------

@pytest.mark.gl
@pytest.mark.parametrize("view", ORBIT_VIEWS[:2] + FLY_VIEWS[:1])
def test_the_frame_after_a_mode_switch_is_the_same_picture(frame, view):
    settings = RENDERED.replace(**view)
    other = "orbit" if settings.camera == "fly" else "fly"
    before, after = frame(settings), frame(camera.switch_mode(settings, other))
    assert mean_difference(before, after) < 0.2
    assert before.std() > 10, "a real picture, not an empty frame"


@pytest.mark.gl
@pytest.mark.parametrize("mode, iterations, level_of_detail", [("rendered", 5, False), ("rendered", 8, True),
                                                             ("lines", 5, True)])
def test_endless_terrain_looks_the_same_one_tile_width_further(frame, renderer, mode, iterations, level_of_detail):
    # The full mesh of the ring of tiles around the eye, or level of detail over the tiles within reach.
    settings = RENDERED.replace(mode=mode, iterations=iterations, camera="fly", tile="repeat", eye_x=0.3,
                                eye_y=0.7, eye_z=0.4, yrot=20.0, pitch=15.0,
                                water_level=-0.05 if mode == "rendered" else None)
    here = frame(settings)
    framebuffer = renderer.ctx.simple_framebuffer((160, 90))
    stats = renderer.draw(settings, framebuffer, Frame((160, 90)))
    framebuffer.release()
    assert (stats.terrain < stats.terrain_full) == level_of_detail
    for dx, dz in ((2.0, 0.0), (0.0, -2.0), (-6.0, 4.0)):
        there = frame(settings.replace(eye_x=settings.eye_x + dx, eye_z=settings.eye_z + dz))
        assert mean_difference(here, there) < 0.5, (dx, dz)
    half = frame(settings.replace(eye_x=settings.eye_x + 1.0))
    assert mean_difference(here, half) > 3.0, "half a tile further is another view"


@pytest.mark.gl
def test_endless_terrain_has_no_edge_far_from_the_origin(frame):
    settings = RENDERED.replace(camera="fly", tile="repeat", eye_x=41.0, eye_y=0.8, eye_z=-57.0, yrot=70.0)
    pixels = frame(settings, (160, 90)).astype(int)
    bottom = pixels[60:]  # below the horizon: terrain everywhere, no fog-coloured gap
    fog = np.array(FOG_COLOR) * 255
    assert (np.abs(bottom - fog).sum(axis=-1) < 12).mean() < 0.02
    lone = frame(settings.replace(tile=1), (160, 90)).astype(int)[60:]
    assert (np.abs(lone - fog).sum(axis=-1) < 12).mean() > 0.5, "one tile far away is not under the eye"


def jumps(pixels: np.ndarray) -> tuple[float, float]:
    """The largest mean step between neighbouring rows and between neighbouring columns, against the median."""
    image = pixels.astype(float)
    rows = np.abs(np.diff(image, axis=0)).mean(axis=(1, 2))
    columns = np.abs(np.diff(image, axis=1)).mean(axis=(0, 2))
    return rows.max() - np.median(rows), columns.max() - np.median(columns)


@pytest.mark.gl
@pytest.mark.parametrize("pitch", [-80.0, -45.0, -20.0, 0.0, 20.0, 45.0, 80.0])
@pytest.mark.parametrize("camera_mode", ["orbit", "fly"])
def test_the_sky_has_no_seam_or_fog_wedge_at_any_pitch(frame, pitch, camera_mode):
    # Far from the one tile: only the sky (and the fog-coloured clear colour below it).
    settings = RENDERED.replace(camera=camera_mode, yrot=180.0 + 25.0, pitch=pitch, eye_x=3.0, eye_z=9.0,
                                xtrans=40.0)
    pixels = frame(settings, (192, 108))
    row_jump, column_jump = jumps(pixels)
    assert row_jump < 12 and column_jump < 12, (row_jump, column_jump)
    fog = np.array(FOG_COLOR) * 255
    upper = pixels[:36].astype(int)
    if pitch <= 0:  # the upper third looks up into the clouds, never at the fog colour
        assert (np.abs(upper - fog).sum(axis=-1) < 6).mean() < 0.05


@pytest.mark.gl
def test_rendered_mode_at_pitch_0_keeps_the_originals_sky(frame):
    # Statistics of the original's picture (its sky pyramid drawn about the origin) at 160x90, iterations 5,
    # seed 7: the mean colour of each horizontal fifth. The sky is now drawn around the eye.
    pixels = frame(RENDERED).astype(float)
    bands = np.array([band.mean(axis=(0, 1)) for band in np.array_split(pixels, 5, axis=0)])
    np.testing.assert_allclose(bands, ORIGINAL_BANDS, atol=3.0)


ORIGINAL_BANDS = [[179.2, 179.2, 230.2], [179.8, 181.0, 233.9], [195.8, 201.0, 246.4], [203.4, 211.0, 239.2],
                  [214.0, 222.0, 255.0]]


@pytest.mark.gl
def test_render_reports_the_terrain_it_drew_without_the_sky(tmp_path, call_main, usage_error):
    status, out, _ = call_main("render", "-o", tmp_path / "shot.png", "--mode", "rendered", "--iterations", "3",
                               "--size", "64x36", "--tile", "repeat")
    assert status == 0
    # Endless in rendered mode: a 9 x 9 ring (reaching past the fog's end) of 2 * 8 * 8 triangles each, small
    # enough for the full mesh.
    assert out.strip().endswith("rendered mode, 10k of 10k triangles)"), out
    status, _, err = call_main("render", "-o", tmp_path / "bad.png", "--tile", "forever")
    usage_error(status, err, "tile", "forever")
    assert not (tmp_path / "bad.png").exists()


def test_obj_export_of_endless_terrain_is_the_one_tile_it_repeats(tmp_path, call_main):
    status, out, err = call_main("export", "-o", tmp_path / "endless.obj", "--iterations", "2", "--tile", "repeat")
    assert status == 0, err
    faces = [line for line in (tmp_path / "endless.obj").read_text().splitlines() if line.startswith("f ")]
    assert len(faces) == 2 * 4 * 4, "one tile of 4 x 4 cells"


# --- sliced uploads -------------------------------------------------------------------------------------------

@pytest.mark.gl
def test_heightmaps_go_up_in_slices_while_the_old_terrain_stays(renderer, monkeypatch):
    from terrainview.render import gpu as gpu_module

    old = SceneSettings(mode="lines", iterations=3)
    renderer.update(old)
    old_texture = renderer.gpu.get("heights:surface")
    new = old.replace(iterations=7)
    changed = renderer.arrays.update(new)
    monkeypatch.setattr(gpu_module, "SLICE_BYTES", 20 * 129 * 4)  # 20 rows of the 129-wide map per slice
    count = 0
    for _ in renderer.gpu.stage(changed):
        count += 1
        # Until every slice is there, frames draw the old terrain.
        assert renderer.gpu.get("heights:surface") is old_texture and renderer.gpu.surface_grid_size == 9
    assert set(changed) == {"surface", "surface_water"} and changed["surface_water"] is None  # dry
    assert count == math.ceil(129 / 20)
    staged = renderer.gpu.get("staged:heights:surface")
    renderer.upload(changed)
    texture = renderer.gpu.get("heights:surface")
    assert texture is staged and renderer.gpu.surface_grid_size == 129
    assert not renderer.gpu.has("staged:heights:surface")
    np.testing.assert_array_equal(texture.read(), changed["surface"])


@pytest.mark.gl
def test_the_surface_drawn_and_its_pyramid_change_only_on_upload(renderer):
    from terrainview.kernels.lod import LodSurface

    renderer.update(SceneSettings(mode="lines", iterations=9))
    drawn = renderer.surface_heights
    changed = renderer.arrays.update(SceneSettings(mode="lines", iterations=9, h=0.3))  # as the worker does
    assert renderer.surface_heights is drawn, "terrain following uses the terrain on screen"
    pyramid = LodSurface.of(changed["surface"])
    renderer.upload(changed, pyramid)
    assert renderer.surface_heights is changed["surface"] and renderer.lod.surface is pyramid


@pytest.mark.gl
def test_an_unfinished_staged_copy_is_never_adopted(renderer):
    settings = SceneSettings(mode="lines", iterations=4)
    changed = renderer.arrays.update(settings)
    next(renderer.gpu.stage(changed))  # one slice, then abandoned
    renderer.upload(changed)
    np.testing.assert_array_equal(renderer.gpu.get("heights:surface").read(), changed["surface"])


@pytest.mark.gl
@pytest.mark.parametrize(("settings", "heightmap"), [
    (SceneSettings(mode="rendered", iterations=5, teximage_iterations=5), "surface"),
    (SceneSettings(mode="lines", iterations=5, tile=3), "surface"),  # level of detail: patches across bands
    (SceneSettings(mode="teximage", teximage_iterations=5), "teximage"),
], ids=["rendered", "lines-lod", "teximage"])
def test_a_heightmap_in_bands_draws_as_one_texture(renderer, gl_ctx, monkeypatch, settings, heightmap):
    from terrainview.kernels import lod as lod_module
    from terrainview.render import gpu as gpu_module
    from terrainview.render.offscreen import render_pixels
    from terrainview.render.renderer import Renderer

    monkeypatch.setattr(lod_module, "FULL_MESH_SEGMENTS", 0)
    whole = render_frame(renderer, settings)
    whole_bands = renderer.gpu.get(f"heights:{heightmap}")
    assert whole_bands.band_rows == [33] and [array.size for array in whole_bands.arrays] == [(33, 33, 1)]
    monkeypatch.setattr(gpu_module, "HEIGHT_BAND_ROWS", 8)  # 33 rows: bands of 8, 8, 8 and 9 rows
    monkeypatch.setattr(gpu_module, "SLICE_BYTES", 5 * 33 * 4)  # staged slices of 5 rows straddle the bands
    banded = Renderer(gl_ctx)
    try:
        changed = banded.arrays.update(settings)
        for _ in banded.gpu.stage(changed):
            pass
        banded.upload(changed)
        bands = banded.gpu.get(f"heights:{heightmap}")
        assert bands.band_rows == [8, 8, 8, 9] and [array.size for array in bands.arrays] == [(33, 8, 2), (33, 9, 2)]
        np.testing.assert_array_equal(bands.read(), changed[heightmap])
        np.testing.assert_array_equal(render_pixels(banded, settings, SMALL_SIZE), whole)
    finally:
        banded.release()


# --- cameras given on the command line or in a scene --------------------------------------------------------

def test_a_given_fly_eye_is_kept_where_flying_could_take_it():
    ground = camera.ground_height(HEIGHTS, "repeat")
    high = SceneSettings(camera="fly", eye_x=0.3, eye_y=8.0, eye_z=0.4)
    lowered, why = camera.given_fly_eye_in_bounds(high, ground)
    floor = camera.floor_under(ground, 0.3, 0.4)
    assert lowered.eye_y == pytest.approx(floor + camera.CEILING) and "lowered" in why
    assert (lowered.eye_x, lowered.eye_z, lowered.pitch) == (0.3, 0.4, high.pitch)
    raised, why = camera.given_fly_eye_in_bounds(high.replace(eye_y=-3.0), ground)
    assert raised.eye_y == pytest.approx(floor) and "raised" in why
    inside = high.replace(eye_y=floor + 1.0)
    assert camera.given_fly_eye_in_bounds(inside, ground) == (inside, None)
    orbit = SceneSettings(ytrans=-8.0)  # the original's camera is drawn as given
    assert camera.given_fly_eye_in_bounds(orbit, ground) == (orbit, None)
    assert camera.given_fly_eye_in_bounds(high, None) == (high, None)  # no surface yet


@pytest.mark.gl
def test_render_lowers_a_fly_eye_above_the_ceiling_and_says_so(tmp_path, call_main):
    from terrainview.scene.scene_file import load_scene

    shot = tmp_path / "high.png"
    status, _, err = call_main("render", "-o", shot, "--size", "160x90", "--mode", "rendered", "--camera", "fly",
                               "--eye-y", "8", "--pitch", "30", "--tile", "repeat")
    assert status == 0 and "warning: the fly camera was lowered" in err
    drawn = load_scene(shot)[0]
    assert drawn.eye_y < 8.0 - camera.CEILING  # the scene in the picture is the camera drawn
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    fog = np.array(FOG_COLOR) * 255
    lower_half = pixels[45:].reshape(-1, 3).astype(float)
    assert (np.abs(lower_half - fog).max(axis=1) > 24).mean() > 0.5, "the land shows through the fog"


def test_an_orbit_camera_looking_up_is_kept_above_the_ground_and_the_original_s_is_not_touched():
    """A negative pitch (ours, not the original's) from below the surface would show its missing underside."""
    ground = camera.ground_height(HEIGHTS, 3)
    below = SceneSettings(tile=3, pitch=-40.0)  # the default orbit, turned to look up: the eye ends below
    raised, why = camera.given_fly_eye_in_bounds(below, ground)
    x, y, z = camera.eye_position(raised)
    assert y >= camera.floor_under(ground, x, z) - 1e-9 and "raised" in why and "fly" not in why
    assert raised.pitch == -40.0 and raised.yrot == below.yrot, "the view's direction stays"
    original = SceneSettings(tile=3, ytrans=-8.0)  # pitch 0: the original's camera, drawn as given
    assert camera.given_fly_eye_in_bounds(original, ground) == (original, None)
