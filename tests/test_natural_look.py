"""The natural look: horizons traced on the torus, and what a sunlit, hazy, watery frame must show."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from terrainview.kernels import lighting
from terrainview.kernels.fractal import diamond_square
from terrainview.kernels.lighting import compass_directions, horizon_channel, horizon_map, light_maps, sky_view
from terrainview.scene.flythrough import Flythrough, Keyframe, flight_text, load_flight
from terrainview.scene.scene_file import load_scene, save_scene_toml
from terrainview.scene.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]


def reference_horizons(heights: np.ndarray, directions: int) -> np.ndarray:
    """Plain Python: for each cell and bearing, the steepest rise to the sampled cells along it, wrapping."""
    torus = heights[:-1, :-1].astype(np.float64)
    side = torus.shape[0]
    cell = 2.0 / side
    out = np.empty((directions, side, side))
    distances = lighting._distances(lighting.REACH * side, 1.0)
    for d in range(directions):
        bearing = math.radians(d * 360.0 / directions)
        steps = [(round(math.sin(bearing) * s), round(-math.cos(bearing) * s)) for s in distances]
        for row in range(side):
            for column in range(side):
                out[d, row, column] = max(
                    (torus[(row + dz) % side, (column + dx) % side] - torus[row, column]) / (math.hypot(dx, dz) * cell)
                    for dx, dz in steps)
    return out


def seamless(torus: np.ndarray) -> np.ndarray:
    """A torus map with its first row and column repeated at the end, as the kernels' maps are."""
    return np.pad(torus, ((0, 1), (0, 1)), mode="wrap").astype(np.float32)


def test_horizons_match_a_plain_reference():
    heights = diamond_square(4, 9, 0.6)
    np.testing.assert_allclose(horizon_map(heights, 8), reference_horizons(heights, 8), rtol=1e-5, atol=1e-5)


def test_compass_bearings_point_the_documented_way():
    north, east, south, west = compass_directions(4)
    np.testing.assert_allclose([north, east, south, west], [[0, -1], [1, 0], [0, 1], [-1, 0]], atol=1e-6)


def ridge(side: int = 64) -> np.ndarray:
    """A north-south ridge at x = side / 2 (a tent 0.2 high over a quarter of the map), flat elsewhere."""
    x = np.arange(side)
    profile = np.clip(0.2 - np.abs(x - side / 2) * (0.2 / (side / 8)), 0.0, None)
    return seamless(np.tile(profile, (side, 1)))


def test_a_ridge_shades_the_ground_behind_it_at_a_low_sun_only():
    maps = light_maps(ridge(), directions=16)
    west = 12  # bearing 270: looking west from a cell east of the ridge
    squashed = horizon_channel(maps, west)[32, 32 + 10] / 255.0 * 2.0 - 1.0  # ten cells east of the crest, flat
    elevation = np.degrees(np.arctan(squashed / (1.0 - abs(squashed))))  # the horizon toward the sun
    assert 10.0 < elevation < 45.0
    assert horizon_channel(maps, 4)[32, 32 + 10] < 130  # looking east: open, the horizon about flat


@pytest.mark.parametrize("points, surface_finer, highest", [(1025, None, 45.7), (2049, None, 18.9),
                                                             (1025, True, 18.9), (2049, False, 45.7)],
                         ids=["traced-at-its-points", "finer", "told-finer", "told-not-finer"])
def test_a_surface_finer_than_its_horizons_gets_no_specks_of_shadow_from_their_cells(points, surface_finer,
                                                                                      highest):
    """A checkerboard 0.002 high at the 1024 cells traced, whose neighbours a cell away rise 46 degrees and three
    cells away 19. Traced at its own points, the map is shadowed where its facets are (the horizon from the next
    cell). Under a surface of twice as many points, whose normals show relief the horizons cannot, occluders are
    looked for from three traced cells away: every cell is sunlit at 25 degrees (half of them were in shadow, a
    speck a cell, over bright finer facets). Told either way (an endless-world region is), the trace does so."""
    rows, columns = np.indices((points - 1, points - 1))
    stride = (points - 1) // lighting.MAX_HORIZON_CELLS
    heights = seamless(0.002 * ((rows // stride + columns // stride) % 2))
    elevations = np.degrees(np.arctan(horizon_map(heights, directions=4, surface_finer=surface_finer)))
    assert elevations.max() == pytest.approx(highest, abs=0.2)


@pytest.mark.parametrize("cells, finer, nearest", [(1024, True, 3.0), (256, True, 3.0), (128, True, 1.6),
                                                    (16, True, 1.0), (1024, False, 1.0)])
def test_near_occluders_are_skipped_three_cells_at_most_and_no_farther_than_the_reach(cells, finer, nearest):
    """Under a finer surface, occluders are looked for three traced cells away, but from no farther than 0.025
    units: a far region traced at 16 or 128 cells over 2 units keeps the shadows of its near neighbours."""
    assert lighting.nearest_occluder_cells(2.0 / cells, finer) == pytest.approx(nearest)


@pytest.mark.parametrize("detail, finer", [(4, False), (10, True)])
def test_a_regions_horizons_are_traced_as_under_a_finer_surface_but_at_the_coarsest_detail(monkeypatch, detail,
                                                                                           finer):
    """A region's light maps are traced coarser than its heights (four times, and more from detail 11), but at the
    coarsest detail, which is traced at its own points."""
    from terrainview.scene import world_regions

    traced = []
    original = lighting.light_maps

    def light_maps(*args, **kwargs):
        traced.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(lighting, "light_maps", light_maps)
    world_ = world_regions.World(seed=3, h=0.7, height_scale=1.0, octaves=0)
    world_regions.region_light(world_, world_regions.RegionKey(0, 0, detail))
    assert traced[-1]["surface_finer"] is finer


def test_horizons_wrap_so_tiles_show_no_seam():
    heights = diamond_square(6, 3, 0.7)
    torus = heights[:-1, :-1]
    shifted = seamless(np.roll(torus, (5, -9), axis=(0, 1)))
    np.testing.assert_array_equal(light_maps(shifted), np.roll(light_maps(heights), (5, -9), axis=(1, 2)))


@pytest.mark.parametrize("rows, columns", [(range(128), range(128)), (range(32, 97), range(32, 97)),
                                           (range(1), range(1)), (range(100, 128), range(0, 28)),
                                           (range(127, 128), range(5, 70)), (range(0, 5), range(100, 128))])
def test_a_part_of_the_light_maps_is_that_part_of_the_whole(rows, columns):
    """A part is lit by all the map around it: the same rows and columns of the whole maps, samples wrapping past
    its edges."""
    heights = diamond_square(7, 5, 0.7)
    whole = light_maps(heights)
    part = light_maps(heights, part=(rows, columns))
    np.testing.assert_array_equal(part, whole[:, rows.start:rows.stop, columns.start:columns.stop])


@pytest.mark.parametrize("part", [(range(-1, 4), range(4)), (range(128, 129), range(4)), (range(129), range(4)),
                                  (range(4), range(100, 129)), (range(5, 5), range(4)), (range(0, 8, 2), range(4)),
                                  ((0, 4), range(4)), range(4), (range(4), range(4), range(4))])
def test_a_part_outside_the_map_is_refused(part):
    with pytest.raises(ValueError, match="the part's"):
        light_maps(diamond_square(7, 5, 0.7), part=part)


def test_the_horizon_kernel_is_the_same_float32_steps_bit_for_bit():
    """Each sample raises a cell's horizon to (height there - height here) * its inverse distance, in float32, in
    the samples' order: numpy doing those steps gives the kernel's horizons exactly, whole or a part, on one thread
    and on two (the serial build and the parallel one)."""
    heights = diamond_square(7, 5, 0.7)
    torus = np.ascontiguousarray(heights[:-1, :-1])
    side = torus.shape[0]
    along = compass_directions(16)[:, None, :] * lighting._distances(lighting.REACH * side, 1.0)[None, :, None]
    offsets = np.rint(along).astype(np.int64)
    inverse = (1.0 / (np.hypot(offsets[..., 0], offsets[..., 1]) * (2.0 / side))).astype(np.float32)
    expected = np.full((16, side, side), -1e30, dtype=np.float32)
    for d in range(16):
        for k in range(offsets.shape[1]):
            seen = np.roll(torus, (-offsets[d, k, 1], -offsets[d, k, 0]), axis=(0, 1))
            expected[d] = np.maximum(expected[d], (seen - torus) * inverse[d, k])
    for build in lighting._HORIZON:
        np.testing.assert_array_equal(build(torus, offsets, inverse, 0, 0, np.empty_like(expected)), expected)
        part = build(torus, offsets, inverse, 5, 100, np.empty((16, 35, 28), np.float32))
        np.testing.assert_array_equal(part, expected[:, 5:40, 100:128])


def test_valleys_see_less_sky_than_peaks():
    side = 64
    x = np.arange(side)
    bowl = seamless(np.tile(0.15 * np.cos(2 * np.pi * x / side), (side, 1)))  # a valley at x = side / 2
    view = sky_view(horizon_map(bowl))
    assert view[10, side // 2] < view[10, 0] - 0.05 and view[10, 0] > 0.95


def test_look_settings_round_trip_through_toml_and_flights(tmp_path):
    settings = SceneSettings(mode="rendered", look="natural", sun_azimuth=290.5, sun_elevation=4.0)
    save_scene_toml(settings, tmp_path / "scene.toml")
    assert load_scene(tmp_path / "scene.toml")[0] == settings
    sunrise = Flythrough(settings.replace(sun_azimuth=350.0, sun_elevation=-4.0),
                         (Keyframe(2.0, {"sun_azimuth": 10.0, "sun_elevation": 30.0}),))
    middle = sunrise.at(1.0)
    assert middle.sun_azimuth in (pytest.approx(0.0, abs=1.0), pytest.approx(360.0, abs=1.0)), "the short way"
    assert -4.0 < middle.sun_elevation < 30.0
    (tmp_path / "sunrise.toml").write_text(flight_text(sunrise))  # a flight file, as the window saves them
    assert load_flight(tmp_path / "sunrise.toml")[0].at(1.0) == middle


def test_a_natural_picture_is_the_same_file_twice_and_its_scene_brings_it_back(tmp_path, call_main):
    """Two renders write identical files; the PNG's scene (look, sun) renders the same picture again."""
    scene = ("render", "--mode", "rendered", "--look", "natural", "--iterations", "6", "--tile", "3", "--camera",
             "fly", "--eye-y", "0.6", "--pitch", "10", "--sun-azimuth", "250", "--sun-elevation", "9",
             "--water-level", "0", "--size", "64x36")
    for name in ("a.png", "b.png"):
        assert call_main(*scene, "-o", tmp_path / name)[0] == 0
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    settings, _ = load_scene(tmp_path / "a.png")
    assert (settings.look, settings.sun_azimuth, settings.sun_elevation) == ("natural", 250.0, 9.0)
    assert call_main("render", "--scene", tmp_path / "a.png", "-o", tmp_path / "c.png")[0] == 0
    from PIL import Image

    with Image.open(tmp_path / "a.png") as first, Image.open(tmp_path / "c.png") as again:
        assert np.array_equal(np.asarray(first), np.asarray(again))


# --- frames ------------------------------------------------------------------------------------------------------

NATURAL = SceneSettings(mode="rendered", look="natural", iterations=6, tile="endless", camera="fly")
SIZE = (96, 64)


def frame_of(renderer, settings: SceneSettings, heights: np.ndarray | None = None) -> np.ndarray:
    from terrainview.render.offscreen import render_pixels

    renderer.update(settings)
    if heights is not None:  # a made-up surface, with its own light maps
        renderer.gpu.upload_surface(heights)
        renderer.gpu.upload_light_maps(light_maps(heights))
    return render_pixels(renderer, settings, SIZE).astype(np.float64)


@pytest.mark.gl
def test_the_sun_lights_the_slopes_that_face_it(renderer):
    """A wave along x seen from above: its middle faces east, its sides west; the sun's side is the bright one."""
    side = 64
    x = np.arange(side)
    wave = seamless(np.tile(0.08 * np.sin(2 * np.pi * x / side), (side, 1)))  # falls from x = -0.5 to 0.5
    above = NATURAL.replace(tile=1, eye_x=0.0, eye_y=0.9, eye_z=0.0, pitch=80.0, yrot=0.0, sun_elevation=35.0)
    east = frame_of(renderer, above.replace(sun_azimuth=90.0), wave).mean(axis=2)
    west = frame_of(renderer, above.replace(sun_azimuth=270.0), wave).mean(axis=2)
    difference = (east - west)[SIZE[1] // 4: 3 * SIZE[1] // 4]
    middle, sides = difference[:, 40:56], np.concatenate([difference[:, :6], difference[:, -6:]], axis=1)
    assert middle.mean() > 5, "the east-facing middle is brighter in the morning sun"
    assert sides.mean() < -5, "the west-facing sides are brighter in the evening sun"


@pytest.mark.gl
@pytest.mark.parametrize("azimuth", [270.0, 281.0])  # on a traced direction, and between two
def test_a_ridge_casts_its_shadow_on_the_ground_behind_it_at_a_low_sun(renderer, azimuth):
    """The north-south ridge from above: the flat east of it with the sun in the west, against the same flat with
    the sun as high in the east. At a low sun it lies in the ridge's shadow; at a high sun it is lit either way."""
    above = NATURAL.replace(tile=1, eye_x=0.0, eye_y=1.6, eye_z=0.0, pitch=80.0, yrot=0.0)
    east_flat = (slice(SIZE[1] // 4, 3 * SIZE[1] // 4), slice(SIZE[0] // 2 + 14, SIZE[0] // 2 + 20))

    def shade(elevation: float) -> float:
        sun_in_the_west, sun_in_the_east = (
            frame_of(renderer, above.replace(sun_azimuth=bearing, sun_elevation=elevation), ridge()).mean(axis=2)
            for bearing in (azimuth, azimuth - 180.0))
        return sun_in_the_west[east_flat].mean() / sun_in_the_east[east_flat].mean()

    assert shade(14.0) < 0.9, "behind the ridge, in its shadow (about 0.81; unshadowed 1.0)"
    assert 0.9 < shade(60.0) < 1.1, "no shadow at a high sun"


@pytest.mark.gl
@pytest.mark.parametrize("tile", [1, "endless"])
def test_turning_the_sun_relights_the_maps_held_as_a_renderer_started_there_draws_them(renderer, gl_ctx, tile):
    """The horizon toward the sun is written into the light maps again for each bearing (the tiles' maps and
    each region's): turned from the west to the east, a frame is what a new renderer draws in the east."""
    from terrainview.render.offscreen import render_pixels
    from terrainview.render.renderer import Renderer

    scene = NATURAL.replace(tile=tile, eye_y=0.5, pitch=20.0, sun_elevation=8.0)
    west, east = scene.replace(sun_azimuth=265.0), scene.replace(sun_azimuth=80.0)
    renderer.update(west)
    in_the_west = render_pixels(renderer, west, SIZE).astype(int)
    renderer.update(east)
    turned = render_pixels(renderer, east, SIZE)
    started_there = Renderer(gl_ctx)
    try:
        started_there.update(east)
        np.testing.assert_array_equal(turned, render_pixels(started_there, east, SIZE))
    finally:
        started_there.release()
    assert np.abs(turned - in_the_west).mean() > 2.0, "the two suns light the land differently"


@pytest.mark.gl
def test_the_sky_is_brighter_at_the_horizon_and_warmer_toward_a_low_sun(renderer):
    up = NATURAL.replace(pitch=-50.0, sun_azimuth=180.0, sun_elevation=45.0, yrot=0.0)
    sky = frame_of(renderer, up)
    assert sky[-4:].mean() > sky[:4].mean() + 5, "near the zenith (top) darker than 20 degrees up (bottom)"
    toward_sun = NATURAL.replace(pitch=-12.0, yrot=180.0, sun_azimuth=180.0)  # facing south, at the sun
    low, high = (frame_of(renderer, toward_sun.replace(sun_elevation=e))[:20] for e in (4.0, 60.0))
    warmth = [(image[..., 0] - image[..., 2]).mean() for image in (low, high)]
    assert warmth[0] > warmth[1] + 10


@pytest.mark.gl
def test_looking_down_at_a_low_sun_the_haze_draws_no_wedge_at_the_point_below(renderer):
    """Flat land from high up, looking almost straight down, the sun low: around the point under the eye the haze
    is alike on every side. Taking the haze of each pixel's bearing alone, which turns all the way round that
    point, drew a bright wedge toward the sun pointing at it (54 levels round a 4-pixel ring, 61 of warmth at 8)."""
    import glm

    from terrainview.render.renderer import Frame
    from terrainview.scene import camera

    above = NATURAL.replace(tile=3, eye_x=0.1, eye_y=2.4, eye_z=0.2, pitch=80.0, yrot=30.0, sun_elevation=4.0,
                            sun_azimuth=250.0)
    image = frame_of(renderer, above, np.zeros((65, 65), dtype=np.float32))
    eye = camera.eye_position(above)
    below = Frame(SIZE).perspective() * camera.view_matrix(above) * glm.vec4(eye[0], 0.0, eye[2], 1.0)
    column, row = (below.x / below.w + 1) / 2 * SIZE[0], (1 - below.y / below.w) / 2 * SIZE[1]

    def ring(radius: float) -> np.ndarray:
        angles = np.linspace(0.0, 2 * math.pi, 24, endpoint=False)
        rows, columns = row + radius * np.sin(angles), column + radius * np.cos(angles)
        return image[np.rint(rows).astype(int), np.rint(columns).astype(int)]

    brightness, warmth = ring(4).mean(axis=1), ring(8)[:, 0] - ring(8)[:, 2]
    assert np.ptp(brightness) < 20, "round the point below, the haze is alike on every side"
    assert np.ptp(warmth) < 25, "and no warmer toward the sun"
    # Farther out too: looking 60 degrees down toward a sun 2 degrees up, a row 40 degrees below the horizon is no
    # brighter toward the sun's bearing (its middle) than at its ends, which are farther away, so hazier (-10;
    # +18 with the bearing's share falling as the cosine alone: a beam narrowing toward the point below).
    toward = frame_of(renderer, above.replace(pitch=60.0, yrot=0.0, sun_elevation=2.0, sun_azimuth=0.0),
                      np.zeros((65, 65), dtype=np.float32)).mean(axis=2)[40, 16:80]
    assert toward[28:36].mean() < np.concatenate([toward[:8], toward[-8:]]).mean() + 5


@pytest.mark.gl
@pytest.mark.parametrize("sun_elevation", [2.0, 30.0])
def test_the_haze_looking_down_is_the_horizons_light_averaged_all_round(renderer, gl_ctx, sun_elevation):
    """The sky table's constant for the haze straight down (horizon_haze) is its horizon ring's mean over every
    bearing: between the means of the two rows either side of the haze's elevation (where sky_table_place reads
    it)."""
    from terrainview.render.gpu import HAZE_ELEVATION, SKY_TABLE_SIZE
    from terrainview.render.renderer import sun_direction

    settings = NATURAL.replace(sun_elevation=sun_elevation, sun_azimuth=70.0)
    constants = renderer.gpu.sky_table(sun_direction(settings))
    width, rows = SKY_TABLE_SIZE
    table = np.frombuffer(renderer.gpu.get("texture:sky_table").read(), dtype=np.float16)
    row_means = table.astype(np.float64).reshape(rows + 1, width, 4)[:rows, :, :3].mean(axis=1)
    level = math.sqrt(1.0 - HAZE_ELEVATION ** 2)  # a unit direction whose elevation's sine is HAZE_ELEVATION
    reading = fragment_values(gl_ctx, sky_table_layout(), f"vec4(sky_table_place(vec3({0.6 * level!r}, "
                              f"{HAZE_ELEVATION!r}, {-0.8 * level!r}))[1], 0.0, 0.0, 1.0)", (1, 1))[0, 0]
    place = reading * (rows + 1) - 0.5  # the rows' texel centres lie half a texel up
    below, above = row_means[math.floor(place)], row_means[math.floor(place) + 1]
    haze = np.array(constants["horizon_haze"])
    assert np.all(np.minimum(below, above) * 0.98 <= haze) and np.all(haze <= np.maximum(below, above) * 1.02)


@pytest.mark.gl
def test_water_reflects_more_at_grazing_angles(renderer):
    """Deep water about one unit away (the same haze), seen from above and at a grazing angle: the grazing
    view mirrors the bright sky, the one from above looks into the dark water."""
    sea = NATURAL.replace(water_level=0.6, sun_azimuth=0.0, sun_elevation=40.0, yrot=180.0)
    middle = (slice(SIZE[1] // 2 - 2, SIZE[1] // 2 + 2), slice(SIZE[0] // 2 - 4, SIZE[0] // 2 + 4))
    above = frame_of(renderer, sea.replace(eye_y=1.6, pitch=80.0))[middle].mean()
    grazing = frame_of(renderer, sea.replace(eye_y=0.65, pitch=3.0))[middle].mean()
    assert above < 60, "looking down, the water shows its dark depth, little of the sky"
    assert grazing > above + 120


@pytest.mark.gl
def test_past_a_tiles_edge_the_sea_under_the_land_is_the_open_sea_not_a_pale_sheet(renderer):
    """One tile in the sea, seen from the default camera: under the rim of the tile's near edge the eye looks in at
    the sea beneath the land. It is drawn as the open sea around it, not as a pale sheet of shallow water."""
    from terrainview.render.offscreen import render_pixels

    scene = SceneSettings(mode="rendered", look="natural", iterations=7, tile=1, water_level=0.0, camera="orbit",
                          yrot=0.0, ytrans=-0.5, ztrans=-3.0, pitch=0.0)  # the start camera, looking at the near edge
    renderer.update(scene)
    pixels = render_pixels(renderer, scene, (320, 180)).astype(int)
    band = slice(100, 135)  # from the land's foot to the tile's near edge
    land = pixels[band, :, 0] > pixels[band, :, 2] + 10  # rock and grass are warmer than water
    columns = np.flatnonzero(land.any(axis=0))
    left, right = columns[0], columns[-1]
    assert left >= 25 and right < 320 - 25, "open sea on both sides of the land"
    brightness = pixels[band].mean(axis=2)
    # The open sea at the same rows just left and right of the land: a row's distance, its haze.
    open_sea = np.concatenate([brightness[:, left - 25:left - 10], brightness[:, right + 10:right + 25]], axis=1)
    within = brightness[:, left + 10:right - 10]
    water = ~land[:, left + 10:right - 10]
    paler = (within > open_sea.mean(axis=1, keepdims=True) + 12) & water
    assert water.sum() > 1500, "the tile's near edge is in view"
    assert paler.sum() < 200  # a pale sheet: about 1160 pixels


@pytest.mark.gl
def test_within_the_land_water_over_ground_above_it_is_shore_not_open_sea(renderer):
    """The sea showing where the map's ground stands above it, seen from within the tile, is where a coarser
    mesh dips under the water: shore foam, as pale as water at its edge, not the dark open sea drawn under the
    rim. Here the eye hangs between the sea and a plateau above it (its top face culled), looking down at the water."""
    from terrainview.render.offscreen import render_pixels

    side = 16
    scene = NATURAL.replace(tile=1, water_level=0.0, eye_x=0.0, eye_y=0.2, eye_z=0.0, pitch=80.0, yrot=0.0,
                            sun_elevation=50.0)
    renderer.update(scene)

    def water_brightness(ground: float) -> float:
        renderer.gpu.upload_surface(np.full((side + 1, side + 1), ground, dtype=np.float32))
        return float(render_pixels(renderer, scene, SIZE).astype(float).mean())

    shore, deep = water_brightness(0.3), water_brightness(-0.2)  # a plateau above the eye; a sea floor far below
    assert shore > deep + 30


@pytest.mark.gl
def test_shallows_fade_out_toward_the_lands_outer_edge_with_no_straight_line(renderer):
    """A tile of shallow water seen from above its east edge: the shallows' pale colour fades into the open sea's
    over the last of the tile (the step at the edge was 60 levels between neighbouring pixels; now no step is over
    a fifth of the change)."""
    from terrainview.render.offscreen import render_pixels

    scene = SceneSettings(mode="rendered", look="natural", iterations=3, tile=1, water_level=0.0, camera="fly",
                          eye_x=1.0, eye_y=0.8, eye_z=0.0, pitch=80.0, sun_elevation=60.0)
    renderer.update(scene)
    heights = np.full((9, 9), -0.002, dtype=np.float32)  # a shallow sea floor everywhere on the tile
    renderer.gpu.upload_surface(heights)
    renderer.gpu.upload_light_maps(light_maps(heights))
    row = render_pixels(renderer, scene, (160, 90)).astype(float)[45].mean(axis=1)
    change = row[:40].mean() - row[-40:].mean()  # the tile's shallows (west) against the open sea (east)
    assert change > 40
    assert np.abs(np.diff(row)).max() < change / 5


@pytest.mark.gl
def test_shallow_water_deepens_smoothly_across_the_maps_cells(renderer):
    """A 9 x 9 map sloping gently under the water from west to east, seen from above: the sea's colour follows
    the depth between the grid's points, with no step at each cell (its corner's depth over a whole cell made the
    shallows a pattern of squares: steps of 31 levels here, against 6 within a cell's smooth ramp)."""
    from terrainview.render.offscreen import render_pixels

    scene = SceneSettings(mode="rendered", look="natural", iterations=3, tile=1, water_level=0.0, camera="fly",
                          eye_x=0.0, eye_y=1.2, eye_z=0.0, pitch=80.0, sun_elevation=60.0)
    renderer.update(scene)
    x = np.linspace(-1.0, 1.0, 9)
    heights = np.tile(-0.002 - 0.01 * (x + 1.0), (9, 1)).astype(np.float32)  # 0.002 to 0.022 under the water
    heights[:, -1] = heights[:, 0]  # seamless, as the kernels' maps are
    renderer.gpu.upload_surface(heights)
    renderer.gpu.upload_light_maps(light_maps(heights))
    row = render_pixels(renderer, scene, (160, 90)).astype(float)[45].mean(axis=1)
    shallow = np.flatnonzero(row > 80)  # the tile's shallows; the open sea beyond its edges is dark
    deepest = shallow[0] + int(np.argmin(row[shallow[0]:shallow[-1]]))
    shallowest = shallow[0] + int(np.argmax(row[shallow[0]:deepest]))  # past the fade along the tile's west edge
    ramp = row[shallowest:deepest]
    assert ramp.size > 50 and ramp[0] > ramp[-1] + 60, "the water darkens as it deepens"
    assert np.abs(np.diff(ramp)).max() < 12


@pytest.mark.gl
@pytest.mark.parametrize("tile", [1, 2])
def test_the_sea_reads_the_ground_under_it_at_the_maps_own_points(renderer, tile):
    """One point of a deep 9 x 9 map rises to just under the sea at the map's centre, seen from above it, facing
    north and then west: the shallows it makes are centred on it across the image both ways (read half a cell off,
    they stood 0.125 units aside). With two tiles a side the map's centres lie at odd x and z, as the land's do
    (read from the one tile's place, the sea found the point a unit away, and no shallows above it)."""
    from terrainview.render.offscreen import render_pixels

    centre = 0.0 if tile == 1 else 1.0

    def sea(scene: SceneSettings, point_height: float) -> np.ndarray:
        heights = np.full((9, 9), -0.05, dtype=np.float32)
        heights[4, 4] = point_height  # the map's centre
        renderer.gpu.upload_surface(heights)
        renderer.gpu.upload_light_maps(light_maps(heights))
        return render_pixels(renderer, scene, (160, 160)).astype(float).mean(axis=2)

    for yaw in (0.0, 90.0):
        scene = SceneSettings(mode="rendered", look="natural", iterations=3, tile=tile, water_level=0.0,
                              camera="fly", eye_x=centre, eye_y=1.0, eye_z=centre, pitch=80.0, yrot=yaw,
                              sun_elevation=60.0)
        renderer.update(scene)
        paler = np.abs(sea(scene, -0.002) - sea(scene, -0.05))  # the shallows alone: the land stays under water
        across = paler.sum(axis=0)
        assert across.sum() > 2000
        middle = (across * (np.arange(across.size) + 0.5)).sum() / across.sum()
        assert abs(middle - across.size / 2) < 1.0, f"facing {yaw} degrees"


@pytest.mark.gl
def test_the_natural_look_is_deterministic(renderer):
    scene = NATURAL.replace(water_level=0.0, eye_y=0.5, pitch=15.0)
    assert np.array_equal(frame_of(renderer, scene), frame_of(renderer, scene))


def reference_broad_slope(heights: np.ndarray, radius: int) -> np.ndarray:
    """Plain numpy: the slopes along x and z from central differences ``radius`` cells either side, wrapping, as
    light_maps stores them: (s / (1 + |s|) + 1) / 2 as 0 to 255."""
    torus = heights[:-1, :-1].astype(np.float64)
    span = 2 * radius * 2.0 / torus.shape[0]
    along_x = (np.roll(torus, -radius, axis=1) - np.roll(torus, radius, axis=1)) / span
    along_z = (np.roll(torus, -radius, axis=0) - np.roll(torus, radius, axis=0)) / span
    return np.rint((np.stack([along_x, along_z]) / (1.0 + np.abs(np.stack([along_x, along_z]))) * 0.5 + 0.5) * 255)


def test_light_maps_encode_the_horizons_the_sky_view_and_the_broad_slope():
    heights = diamond_square(9, 4, 0.7)
    horizons = horizon_map(heights)
    maps = light_maps(heights)
    assert maps.shape == (lighting.HORIZON_DIRECTIONS // 4 + 1, 512, 512, 4)
    expected = np.rint((horizons / (1.0 + np.abs(horizons)) * 0.5 + 0.5) * 255.0)
    stored = np.stack([horizon_channel(maps, direction) for direction in range(lighting.HORIZON_DIRECTIONS)])
    assert np.abs(stored.astype(int) - expected).max() <= 1
    surface = np.moveaxis(lighting.surface_channels(maps), -1, 0)
    assert np.abs(surface[0].astype(int) - np.rint(sky_view(horizons) * 255.0)).max() <= 1
    # BROAD_SLOPE_RADIUS is two cells of a 512-cell map: the slope over four cells, not each facet's.
    assert np.abs(surface[1:].astype(int) - reference_broad_slope(heights, 2)).max() <= 1
    assert not np.array_equal(surface[1:], reference_broad_slope(heights, 1).astype(np.uint8))


@pytest.mark.parametrize("azimuth", [0.0, 10.0, 22.5, 120.0, 337.5, 350.0, 359.99, 360.0, -30.0])
def test_the_sun_channel_holds_the_two_traced_directions_either_side_of_its_bearing(azimuth):
    """sun_surface_layer weighs the directions either side by nearness; the other channels are the layer's own."""
    maps = np.random.default_rng(3).integers(0, 256, (lighting.HORIZON_DIRECTIONS // 4 + 1, 5, 7, 4), dtype=np.uint8)
    layer = lighting.sun_surface_layer(maps, lighting.sun_between(azimuth, lighting.traced_directions(maps)))
    position = (azimuth % 360.0) / 360.0 * lighting.HORIZON_DIRECTIONS
    first, fraction = int(position // 1), position % 1.0
    below, above = (horizon_channel(maps, d % lighting.HORIZON_DIRECTIONS).astype(float) for d in (first, first + 1))
    expected = (1.0 - fraction) * below + fraction * above
    assert np.abs(layer[:, :, lighting.SUN_CHANNEL] - expected).max() <= 0.5 + 255.0 / 512.0  # rounding, 256ths
    if fraction == 0.0:  # on a traced direction: its own horizons exactly
        np.testing.assert_array_equal(layer[:, :, lighting.SUN_CHANNEL], below.astype(np.uint8))
    np.testing.assert_array_equal(layer[:, :, :3], maps[-1, :, :, :3])
    # The maps themselves are left as they were.
    np.testing.assert_array_equal(maps, np.random.default_rng(3).integers(0, 256, maps.shape, dtype=np.uint8))


def test_under_open_sky_the_sun_has_no_horizon_whatever_its_bearing():
    """The stand-in of a region not traced yet holds what sun_surface_layer writes for it at any bearing."""
    open_sky = lighting.open_sky_light_maps()
    for azimuth in (0.0, 100.0, 359.0):
        sun = lighting.sun_between(azimuth, lighting.traced_directions(open_sky))
        np.testing.assert_array_equal(lighting.sun_surface_layer(open_sky, sun), open_sky[-1])
    assert open_sky[-1, 0, 0, lighting.SUN_CHANNEL] == 0


@pytest.mark.parametrize("azimuth, between", [(0.0, (0, 0)), (22.5, (1, 0)), (11.25, (0, 128)), (359.99, (0, 0)),
                                              (-11.25, (15, 128)), (382.5, (1, 0))])
def test_a_bearing_lies_between_two_traced_directions_to_a_256th(azimuth, between):
    assert lighting.sun_between(azimuth) == between


def test_the_broad_slope_is_taken_over_the_same_distance_on_a_coarser_map():
    heights = diamond_square(10, 4, 0.7)
    coarse = np.ascontiguousarray(heights[::4, ::4])  # iterations 8: the same land, every fourth point
    fine_slope = lighting.broad_slope(heights)  # four cells of 1024 either side
    coarse_slope = lighting.broad_slope(coarse)  # one cell of 256
    np.testing.assert_array_equal(coarse_slope, reference_broad_slope(coarse, 1))
    assert np.abs(fine_slope[:, ::4, ::4].astype(int) - coarse_slope).max() <= 1


@pytest.mark.gl
def test_snow_lies_in_fields_on_a_rugged_peak_not_by_each_facet(renderer):
    """A high plateau ribbed every cell: each facet is steep, the land over a few cells flat, so snow covers it."""
    side = 64
    ribs = np.where(np.arange(side) % 2 == 0, 0.0, 0.08)
    plateau = seamless(np.tile(0.6 + ribs, (side, 1)))
    above = NATURAL.replace(tile=1, eye_x=0.0, eye_y=1.6, eye_z=0.0, pitch=80.0, yrot=0.0, sun_elevation=60.0)

    def snowy(image: np.ndarray) -> float:  # snow is bluish in shade, white in the sun; rock is brown or dark
        return float(((image[..., 2] >= image[..., 0]) & (image[..., 2] > 60)).mean())

    assert snowy(frame_of(renderer, above, plateau)) > 0.95
    maps = light_maps(plateau)
    maps[-1, :, :, lighting.BROAD_X_CHANNEL] = 255  # the same ribs as a broad cliff along x: rock
    renderer.gpu.upload_light_maps(maps)
    from terrainview.render.offscreen import render_pixels

    assert snowy(render_pixels(renderer, above, SIZE).astype(np.float64)) < 0.05


@pytest.mark.gl
def test_far_land_is_shaded_by_its_broad_slope_not_a_speckle_of_facets(renderer):
    """Ribs every cell seen from so high that a pixel spans four cells: each pixel's own facet would be a random
    one of them (a speckle: brightness varied by 56 levels); shaded by the slope over a few cells, 32."""
    side = 256
    ribs = seamless(np.tile(np.where(np.arange(side) % 2 == 0, 0.0, 0.03), (side, 1)))
    above = NATURAL.replace(tile=1, eye_x=0.0, eye_y=1.6, eye_z=0.0, pitch=80.0, yrot=0.0, sun_elevation=40.0,
                            sun_azimuth=90.0)
    brightness = frame_of(renderer, above, ribs).mean(axis=2)[16:48, 24:72]
    assert brightness.std() < 42.0


FINE_SLOPE_READ = "map_slope(broadness < 1.0 ? grid_coordinate : vec2(0.0))"


def frame_with_fine_slopes_read(gl_ctx, monkeypatch, settings: SceneSettings, read: str) -> np.ndarray:
    """A frame of ``settings`` from a renderer whose natural_shading.glsl reads the fine slope as ``read``."""
    from terrainview.render import gpu
    from terrainview.render.offscreen import render_pixels
    from terrainview.render.renderer import Renderer

    shader_source = gpu._shader_source

    def edited(path):
        resolved, source = shader_source(path)
        assert path != "natural_shading.glsl" or FINE_SLOPE_READ in source
        return resolved, source.replace(FINE_SLOPE_READ, read)

    with monkeypatch.context() as patch:
        patch.setattr(gpu, "_shader_source", edited)
        other = Renderer(gl_ctx)
    try:
        other.update(settings)
        return render_pixels(other, settings, (192, 108))
    finally:
        other.release()


@pytest.mark.gl
@pytest.mark.parametrize("tile", [1, "endless"])
def test_the_fine_slope_is_read_only_where_it_shows(renderer, gl_ctx, monkeypatch, tile):
    """Pixels spanning 2.5 cells or more take the broad slope alone, and read the fine slope map at one place
    instead of their own (a cache miss each, far off): the picture is the same as reading it everywhere. The view
    has pixels of both kinds and between: read at one place from half the way there, the picture changes."""
    from terrainview.render.offscreen import render_pixels

    view = NATURAL.replace(iterations=8, tile=tile, eye_x=0.2, eye_y=0.12, eye_z=0.4, pitch=-6.0, yrot=30.0,
                           sun_elevation=20.0)
    renderer.update(view)
    picture = render_pixels(renderer, view, (192, 108))
    everywhere = frame_with_fine_slopes_read(gl_ctx, monkeypatch, view, "map_slope(grid_coordinate)")
    assert np.array_equal(picture, everywhere)
    too_soon = frame_with_fine_slopes_read(gl_ctx, monkeypatch, view,
                                           "map_slope(broadness < 0.5 ? grid_coordinate : vec2(0.0))")
    assert np.abs(too_soon.astype(int) - picture).max() > 8


# --- the erosion's water in the materials -----------------------------------------------------------------------

ERODED = NATURAL.replace(tile=1, erosion="hydraulic", erosion_droplets=2000.0, eye_x=0.0, eye_y=0.9, eye_z=0.0,
                         pitch=80.0, yrot=0.0, sun_elevation=50.0)


def test_water_maps_hold_the_surface_erosions_wetness_and_softened_deposit():
    from terrainview.scene.derived_arrays import DerivedArrays, eroded_heights

    scene = ERODED.replace(iterations=8)  # fine enough that the deposit's softening spans cells
    arrays = DerivedArrays()
    maps = arrays.update(scene)["surface_water"]
    _, result = eroded_heights(scene, scene.iterations, scene.h)
    assert maps.shape == (256, 256, 2) and maps.dtype == np.uint8
    np.testing.assert_array_equal(maps[..., 0], np.rint(result.flow[:-1, :-1] * 255.0).astype(np.uint8))
    raw = np.rint(result.deposit[:-1, :-1] * 255.0)
    deposit = maps[..., 1].astype(np.float64)
    assert deposit.max() > 0 and np.abs(np.diff(deposit, axis=1)).mean() < 0.5 * np.abs(np.diff(raw, axis=1)).mean()
    assert arrays.update(scene.replace(erosion="none"))["surface_water"] is None  # dry again: the GPU drops it
    assert DerivedArrays().update(scene.replace(erosion="thermal"))["surface_water"] is None


@pytest.mark.gl
def test_wet_ground_is_darker_and_deposits_are_paler_in_the_natural_look(renderer):
    from terrainview.render.offscreen import render_pixels

    renderer.update(ERODED)
    frames = {}
    for name, (wet, deposit) in {"dry": (0, 0), "wet": (255, 0), "deposit": (0, 255)}.items():
        maps = np.zeros((64, 64, 2), dtype=np.uint8)
        maps[..., 0], maps[..., 1] = wet, deposit
        renderer.gpu.upload_surface_water(maps)
        frames[name] = render_pixels(renderer, ERODED, SIZE).astype(np.float64)
    ground = (slice(SIZE[1] // 3, 2 * SIZE[1] // 3), slice(SIZE[0] // 3, 2 * SIZE[0] // 3))
    dry, wet, deposit = (frames[name][ground].mean() for name in ("dry", "wet", "deposit"))
    assert wet < dry - 10, "where water ran the ground is dark"
    assert deposit > dry + 3, "fine sediment is paler than the grass it covers"
    renderer.gpu.upload_surface_water(None)
    assert np.array_equal(render_pixels(renderer, ERODED, SIZE).astype(np.float64), frames["dry"]), \
        "no maps: the same picture as a dry map"


@pytest.mark.gl
def test_at_sunset_the_horizon_glows_under_a_blue_sky(renderer):
    """The sun 2 degrees up, ahead: warm near the horizon, cool (blue over red) high up; at noon, blue at both."""
    toward_sun = NATURAL.replace(pitch=-35.0, yrot=180.0, sun_azimuth=180.0, sun_elevation=2.0, eye_y=2.0)
    sky = frame_of(renderer, toward_sun)
    high, low = sky[:8].mean(axis=(0, 1)), sky[-16:-8].mean(axis=(0, 1))  # about 60 and 10 degrees up
    assert low[0] - low[2] > 20, "a warm glow along the horizon"
    assert high[2] > high[0] + 10 and high[2] - high[0] > low[2] - low[0] + 40, "the sky above stays blue"
    noon = frame_of(renderer, toward_sun.replace(sun_elevation=70.0))
    assert noon[:8, :, 2].mean() > noon[:8, :, 0].mean() + 20


def test_the_snow_line_leaves_the_highest_share_of_the_land_white():
    from terrainview.kernels.texturing import SNOW_SHARE, snow_height

    heights = diamond_square(9, 3, 0.7)
    line = snow_height(heights)
    assert abs((heights > line).mean() - SNOW_SHARE) < 0.01
    assert snow_height(heights * 0.25) == pytest.approx(0.25 * line, rel=1e-6)  # flat land: snow as high up


@pytest.mark.gl
def test_low_land_and_high_land_both_get_snowy_peaks(renderer):
    above = NATURAL.replace(tile=1, iterations=7, eye_x=0.0, eye_y=0.9, eye_z=0.0, pitch=80.0, yrot=0.0,
                            sun_elevation=60.0)
    shares = []
    for height_scale in (1.0, 0.3):
        image = frame_of(renderer, above.replace(height_scale=height_scale))
        white = (image.min(axis=2) > 170) & (image.max(axis=2) - image.min(axis=2) < 40)
        shares.append(white.mean())
    assert min(shares) > 0.01 and max(shares) < 0.2 and max(shares) < 3 * min(shares)


def test_the_detail_noise_is_three_octaves_one_a_channel_tiling():
    from terrainview.render.gpu import _detail_octaves

    channels = np.random.default_rng(3).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    octaves = _detail_octaves(channels).astype(np.float64)
    assert octaves.shape == (64, 64, 3) and np.all(np.abs(octaves.mean(axis=(0, 1)) - 127.5) < 8)
    centred = octaves - octaves.mean(axis=(0, 1))

    def correlation(channel: int, shift: int) -> float:  # wrapping: the channels tile
        values = centred[..., channel]
        return float((values * np.roll(values, shift, axis=1)).mean() / values.var())

    # Red's values 4 texels apart, green's 2, blue's 1: neighbours alike within each octave's own spacing, and
    # texels two spacings apart (sharing no value between them) unrelated.
    assert correlation(0, 1) > 0.8 and correlation(0, 2) > 0.6 and abs(correlation(0, 8)) < 0.15
    assert 0.5 < correlation(1, 1) < 0.8 and abs(correlation(1, 4)) < 0.15
    assert abs(correlation(2, 1)) < 0.15
    assert np.array_equal(octaves[..., 2], channels[..., 2]), "the finest is the values themselves"
    flat = _detail_octaves(np.full((64, 64, 3), 128, dtype=np.uint8))
    assert np.all(np.abs(flat.astype(int) - 128) <= 1)  # no octave: no detail


@pytest.mark.gl
@pytest.mark.parametrize("name", ["detail", "broad_variation"])
def test_noise_fades_out_as_a_pixel_spans_its_spacing(gl_ctx, name):
    """natural_shading.glsl's noise, read at texel centres near the eye. The detail: every octave where a pixel
    spans less than one of the finest's spacings; the finest gone at two a pixel, the middle one at four, nothing
    at eight. The broad variation: its values where a pixel spans half a texel, their mean (0.5) at two. (The
    textures are not mipmapped: this fading is what keeps far land from shimmering.)"""
    import moderngl

    from terrainview.render.gpu import NOISE_SIDE, _detail_octave_values, _noise_values

    if name == "detail":
        values, scale, turn = _detail_octave_values(), "DETAIL_SCALE", "DETAIL_TURN"
        cases = [(0.5, (1.0, 0.5, 0.25)), (2.0, (1.0, 0.5, 0.0)), (4.0, (1.0, 0.0, 0.0)), (8.0, (0.0, 0.0, 0.0))]
        read = "vec4(detail(place(), 0.0, spanned()), 0.0, 0.0, 1.0)"
    else:
        values, scale, turn = _noise_values(), "BROAD_SCALE", "mat2(1.0)"
        cases = [(0.5, None), (2.0, None)]
        read = "vec4(broad_variation(place(), spanned()), 1.0)"
    declarations = (f"#define NOISE_SIDE {NOISE_SIDE}\nuniform sampler2D noise;\nuniform sampler2D detail_octaves;\n"
                    + shader_part("natural_shading.glsl", "const float BROAD_SCALE", "// What the including")
                    + shader_part("natural_shading.glsl", "// Where a pixel spans", "// The land's slope")
                    # The pixel's footprint: texels of the finest spacing, in world units.
                    + f"uniform float texels;\nfloat spanned() {{ return texels / float(NOISE_SIDE) / {scale}; }}\n"
                    # At texel centres: the texture coordinate turned back into world x, z.
                    f"vec2 place() {{ return transpose({turn}) * gl_FragCoord.xy / float(NOISE_SIDE) / {scale}; }}\n")
    centred = values[:16, :16].astype(np.float64) / 255.0 - 0.5
    with gl_ctx:  # another test may have made its own context current
        texture = gl_ctx.texture((NOISE_SIDE, NOISE_SIDE), 3, values.tobytes())
        texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
        texture.repeat_x = texture.repeat_y = True
        texture.use(9)
    try:
        for texels, weights in cases:
            got = fragment_values(gl_ctx, declarations, read, (16, 16), texels=texels,
                                  **{"detail_octaves" if name == "detail" else "noise": 9})
            if weights is not None:
                np.testing.assert_allclose(got, centred @ np.array(weights), atol=0.02)
            else:  # the red channel: the values themselves, or their mean
                np.testing.assert_allclose(got, centred[..., 0] + 0.5 if texels < 1.0 else 0.5, atol=0.01)
    finally:
        texture.release()


def shader_part(file: str, first: str, end: str) -> str:
    """The text of shaders/FILE from the line starting ``first`` up to ``end`` (excluded)."""
    source = (Path(__file__).parents[1] / "shaders" / file).read_text()
    start = source.index(first)
    return source[start:source.index(end, start)]


def fragment_values(gl_ctx, declarations: str, colour: str, size: tuple[int, int],
                    **uniforms: object) -> np.ndarray:
    """Each pixel's red of one triangle covering a float image of ``size``: ``colour`` (a GLSL vec4 expression of
    gl_FragCoord) after ``declarations``, on this GL; rows bottom first."""
    with gl_ctx:  # another test may have made its own context current
        program = gl_ctx.program(
            vertex_shader="#version 330\nvoid main() { vec2 p = vec2(gl_VertexID % 2, gl_VertexID / 2) * 4.0 - 1.0;"
                          " gl_Position = vec4(p, 0.0, 1.0); }",
            fragment_shader=f"#version 330\nout vec4 color;\n{declarations}\nvoid main() {{ color = {colour}; }}")
        for name, value in uniforms.items():
            program[name].value = value
        texture = gl_ctx.texture(size, 4, dtype="f4")
        framebuffer = gl_ctx.framebuffer([texture])
        triangle = gl_ctx.vertex_array(program, [])
        try:
            with gl_ctx.scope(framebuffer):  # the framebuffer bound before is bound again after
                triangle.render(mode=4, vertices=3)
            return np.frombuffer(texture.read(), dtype=np.float32).reshape(size[1], size[0], 4)[..., 0]
        finally:
            for gl_object in (triangle, framebuffer, texture, program):
                gl_object.release()


@pytest.mark.gl
def test_the_shaders_srgb_curve_is_the_standards_within_a_quarter_level(gl_ctx):
    """sky_view.glsl's srgb() (square roots, no pow) against the sRGB formula over 0..1, on this GL."""
    function = shader_part("sky_view.glsl", "vec3 srgb(vec3 linear)", "// Linear light to the displayed")
    got = fragment_values(gl_ctx, function, "vec4(srgb(vec3((gl_FragCoord.x - 0.5) / 4095.0)), 1.0)", (4096, 1))[0]
    x = np.arange(4096) / 4095.0
    expected = np.where(x <= 0.0031308, 12.92 * x, 1.055 * x ** (1 / 2.4) - 0.055)
    assert np.abs(got - expected).max() * 255 < 0.3


def sky_table_layout() -> str:
    """shaders/sky_table_layout.glsl with the table's size as gpu.py defines it."""
    from terrainview.render.gpu import SKY_TABLE_SIZE

    width, rows = SKY_TABLE_SIZE
    source = (Path(__file__).parents[1] / "shaders" / "sky_table_layout.glsl").read_text()
    for name, value in (("SKY_TABLE_WIDTH", width), ("SKY_TABLE_ROWS", rows)):
        source, count = re.subn(rf"#define {name} \d+", f"#define {name} {value}", source)
        assert count == 1, f"the shader's {name} placeholder"
    return source


@pytest.mark.gl
def test_each_texel_of_the_sky_table_is_read_back_at_its_own_centre(gl_ctx):
    """sky_table_layout.glsl both ways: the direction a texel of the sky rows holds (a unit vector), placed by
    sky_table_place, is that texel's centre; at the zenith (the top row) every bearing is one direction."""
    from terrainview.render.gpu import SKY_TABLE_SIZE

    width, rows = SKY_TABLE_SIZE
    size = (width, rows)
    round_trip = [fragment_values(gl_ctx, sky_table_layout(), f"vec4(sky_table_place(sky_table_direction("
                                  f"gl_FragCoord.xy))[{axis}], 0.0, 0.0, 1.0)", size) for axis in (0, 1)]
    columns, row_numbers = np.meshgrid(np.arange(width), np.arange(rows))
    np.testing.assert_allclose(round_trip[0][:-1], ((columns + 0.5) / width)[:-1], atol=1e-5)
    np.testing.assert_allclose(round_trip[1], (row_numbers + 0.5) / (rows + 1), atol=1e-5)
    lengths = fragment_values(gl_ctx, sky_table_layout(), "vec4(length(sky_table_direction(gl_FragCoord.xy)))", size)
    np.testing.assert_allclose(lengths, 1.0, atol=1e-5)
    heights = fragment_values(gl_ctx, sky_table_layout(), "vec4(sky_table_direction(gl_FragCoord.xy).y)", size)
    np.testing.assert_allclose(heights[-1], 1.0, atol=1e-6)  # the top row: straight up, whatever its bearing
    assert np.all(np.diff(heights[:, 0]) > 0) and abs(heights[0, 0]) < 1e-6  # up from the horizon
    zenith = [fragment_values(gl_ctx, sky_table_layout(), f"vec4(sky_table_place(vec3(0.0, 1.0, 0.0))[{axis}])",
                              (1, 1))[0, 0] for axis in (0, 1)]
    np.testing.assert_allclose(zenith, [0.5, (rows - 0.5) / (rows + 1)], atol=1e-6)


@pytest.mark.gl
def test_the_sky_table_runs_round_the_compass_and_up_to_the_zenith(gl_ctx):
    """sky_table_place across: bearings all round (from due south, west of it, to due south again) read ever
    further across, north in the middle, east three quarters; up: the horizon's row first, the zenith's last."""
    from terrainview.render.gpu import SKY_TABLE_SIZE

    width, rows = SKY_TABLE_SIZE
    bearing = "radians(gl_FragCoord.x - 180.0)"  # pixel centres: -179.5 to 179.5 degrees
    across = fragment_values(gl_ctx, sky_table_layout(), f"vec4(sky_table_place(vec3(sin({bearing}), 0.3, "
                             f"-cos({bearing})))[0], 0.0, 0.0, 1.0)", (360, 1))[0]
    assert np.all(np.diff(across) > 0) and 0.0 < across[0] < 0.01 and 0.99 < across[-1] < 1.0
    compass = fragment_values(gl_ctx, sky_table_layout(), "vec4(sky_table_place(vec3[](vec3(0.0, 0.1, -1.0), "
                              "vec3(1.0, 0.1, 0.0), vec3(-1.0, 0.1, 0.0))[int(gl_FragCoord.x)])[0], 0.0, 0.0, 1.0)",
                              (3, 1))[0]
    np.testing.assert_allclose(compass, [0.5, 0.75, 0.25], atol=1e-6)  # north, east, west
    height = "(gl_FragCoord.x - 0.5) / 99.0"
    up = fragment_values(gl_ctx, sky_table_layout(), f"vec4(sky_table_place(normalize(vec3(0.6, 0.0, 0.8) * "
                         f"sqrt(1.0 - {height} * {height}) + vec3(0.0, {height}, 0.0)))[1], 0.0, 0.0, 1.0)",
                         (100, 1))[0]
    assert np.all(np.diff(up) > 0)
    np.testing.assert_allclose(up[[0, -1]], np.array([0.5, rows - 0.5]) / (rows + 1), atol=1e-5)


@pytest.mark.gl
def test_sunlight_over_the_horizon_is_the_penumbras_by_the_angles_themselves(gl_ctx):
    """natural_shading.glsl's sunlit() (the sine of the sun's height above the horizon, no arc tangent) against
    the penumbra's smoothstep of the angles, for suns from below the horizon to overhead over horizons from far
    below to far above: within a thousandth."""
    from terrainview.render.gpu import SUN_PENUMBRA

    size = (256, 96)
    declarations = (f"#define PENUMBRA {SUN_PENUMBRA!r}\nvec3 sun_direction;\nfloat sun_across;\n"
                    + shader_part("natural_shading.glsl", "float unsquashed(", "// How much of")
                    + shader_part("natural_shading.glsl", "float sunlit(", "// The colour of the land")
                    + "float probe() { float elevation = radians(-5.0 + (gl_FragCoord.y - 0.5));\n"
                    "  sun_direction = vec3(0.6 * cos(elevation), sin(elevation), -0.8 * cos(elevation));\n"
                    "  sun_across = cos(elevation);\n"
                    "  return sunlit(gl_FragCoord.x / 256.0); }\n")
    got = fragment_values(gl_ctx, declarations, "vec4(probe(), 0.0, 0.0, 1.0)", size)
    stored = (np.arange(size[0]) + 0.5) / 256.0  # texel centres: 0 and 1 (the horizon straight down, up) left out
    squashed = 2.0 * stored - 1.0
    horizon = np.arctan(squashed / np.maximum(1.0 - np.abs(squashed), 1e-3))
    elevation = np.radians(-5.0 + np.arange(size[1]))[:, None]
    x = np.clip((elevation - horizon + SUN_PENUMBRA) / (2 * SUN_PENUMBRA), 0.0, 1.0)
    np.testing.assert_allclose(got, x * x * (3.0 - 2.0 * x), atol=1e-3)


@pytest.mark.gl
@pytest.mark.parametrize("cell_shift, cells", [(0, 3.0), (2, 0.75)])
def test_a_pixel_spans_the_maps_own_cells_coarser_in_a_region_held_coarser(gl_ctx, cell_shift, cells):
    """natural_terrain.glsl's pixel_footprint and natural_shading.glsl's cells_per_pixel, which decide how far the
    far-land blend goes: grid places 3 apart from pixel to pixel (on a map of 16 cells, 2 units) are 3 / 8 units,
    3 cells of a full map, and 3 / 4 of a region's map held two levels coarser."""
    footprint = shader_part("natural_terrain.glsl", "float pixel_footprint() {", "void main()")
    cells_per_pixel = shader_part("natural_shading.glsl", "float cells_per_pixel(", "// Where a pixel spans")
    declarations = ("uniform int cell_shift;\nuniform int grid_size;\nvec2 grid_coordinate;\n" + footprint
                    + cells_per_pixel + "vec2 probe() { grid_coordinate = gl_FragCoord.xy * 3.0;"
                    " float footprint = pixel_footprint(); return vec2(footprint, cells_per_pixel(footprint)); }\n")
    got = fragment_values(gl_ctx, declarations, "vec4(probe()[0], 0.0, 0.0, 1.0)", (8, 8), grid_size=17)
    np.testing.assert_allclose(got, 3.0 / 8.0, rtol=1e-5)
    got = fragment_values(gl_ctx, declarations, "vec4(probe()[1], 0.0, 0.0, 1.0)", (8, 8), grid_size=17,
                          cell_shift=cell_shift)
    np.testing.assert_allclose(got, cells, rtol=1e-5)


def reference_slope(at, places: np.ndarray, side: int = 16) -> np.ndarray:
    """The slope (x, z) at fractional places (column, row) of a map of ``side`` cells whose point heights
    ``at(columns, rows)`` gives: along x the difference of neighbouring points, held at the midpoint between them
    and interpolated bilinearly between those midpoints; along z likewise. Cells are 2 / side units wide."""
    def bilinear(values, x: np.ndarray, z: np.ndarray) -> np.ndarray:  # values(column, row) on whole points
        c, r = np.floor(x).astype(int), np.floor(z).astype(int)
        fx, fz = x - c, z - r
        return ((values(c, r) * (1 - fx) + values(c + 1, r) * fx) * (1 - fz)
                + (values(c, r + 1) * (1 - fx) + values(c + 1, r + 1) * fx) * fz)

    x, z = places[..., 0], places[..., 1]
    # Midpoint k + 1/2 of the differences sits at whole place k once shifted by half a point.
    slope_x = bilinear(lambda c, r: at(c + 1, r) - at(c, r), x - 0.5, z)
    slope_z = bilinear(lambda c, r: at(c, r + 1) - at(c, r), x, z - 0.5)
    return np.stack([slope_x, slope_z]) * side / 2


def made_up_map(apron: int):
    """Random heights of 16 cells, and their reader at any point: a tiles' map wrapping (17 x 17, its last point
    its first), or a region's with a one-point apron that does not repeat (19 x 19)."""
    rng = np.random.default_rng(3)
    if apron:
        stored = rng.random((19, 19)).astype(np.float32)  # points -1..17
        return stored, lambda column, row: stored[row + 1, column + 1].astype(np.float64)
    torus = rng.random((16, 16)).astype(np.float32)
    return seamless(torus), lambda column, row: torus[row % 16, column % 16].astype(np.float64)


@pytest.mark.gl
@pytest.mark.parametrize("apron, cell_shift", [(0, 0), (1, 1)])
def test_the_lands_slope_runs_on_smoothly_across_cell_borders(renderer, gl_ctx, apron, cell_shift):
    """The natural look's slope (HeightBands.advance_slopes's map, natural_shading.glsl's map_slope) against a plain
    reference, over places from a point before the map to one past it: the tiles' map wraps; a region of the
    world held one level coarser keeps to its own map and its apron. The slope is continuous across every cell
    border, where the surface's own slope between a cell's corners jumps (a grid of blocks on land whose cells
    span several pixels), and keeps ridges a point wide (which slopes at the points themselves would lose)."""
    from terrainview.render.gpu import SLOPE_UNIT, HeightBands

    stored, at = made_up_map(apron)
    heights = HeightBands(renderer.ctx, stored.shape[1], stored.shape[0])
    heights.write(stored)
    heights.advance_slopes(apron, 1 << 20)
    assert heights.slopes is not None
    heights.slopes.use(SLOPE_UNIT)
    size = (256, 8)
    places = np.stack(np.meshgrid(np.arange(size[0]) * 18 / size[0] - 1, np.arange(size[1]) * 18 / size[1] - 1),
                      axis=-1)
    place = f"(gl_FragCoord.xy - 0.5) * vec2({18 / size[0]}, {18 / size[1]}) - 1.0"
    if apron:  # a region's places stay on its own map
        places = np.clip(places, 0.0, 16.0)
        place = f"clamp({place}, 0.0, 16.0)"
    expected = reference_slope(at, places)
    function = shader_part("natural_shading.glsl", "vec2 map_slope(vec2 place)", "// A slope stored as")
    try:
        for component in range(2):
            got = fragment_values(gl_ctx, "uniform int cell_shift;\nuniform int apron;\nuniform sampler2D slopes;\n"
                                  "#define SLOPES_PLACE(coordinate) (coordinate)\n"
                                  + function, f"vec4(map_slope({place} * {1 << cell_shift}.0)[{component}], 0.0, 0.0,"
                                  " 1.0)", size, slopes=SLOPE_UNIT, apron=apron, cell_shift=cell_shift)
            # Half floats, slopes up to 16; a GPU's filter weighs texels in 256ths (llvmpipe's in floats).
            np.testing.assert_allclose(got, expected[component], atol=0.06)
    finally:
        heights.release()
    # The reference itself runs on across every border (so the shader, equal to it, does too).
    on_column_borders = np.stack([np.arange(1.0, 16.0), np.full(15, 5.3)], axis=-1)
    for borders, step in ((on_column_borders, (1e-4, 0.0)), (on_column_borders[:, ::-1], (0.0, 1e-4))):
        jump = reference_slope(at, borders + step) - reference_slope(at, borders - step)
        assert np.abs(jump).max() < 0.01


@pytest.mark.gl
def test_slope_maps_are_worked_out_a_share_at_a_time_and_again_for_new_heights(renderer):
    """advance_slopes works out a few rows a call, the program told (bind_slopes) to shade by the broad slope until
    the map is whole; new heights start it again; releasing the heights releases it."""
    from terrainview.render.gpu import HeightBands

    stored, _ = made_up_map(0)
    heights = HeightBands(renderer.ctx, 17, 17)
    program = renderer.gpu.programs["natural_terrain"]
    whole = HeightBands(renderer.ctx, 17, 17)
    try:
        heights.write(stored)
        worked, ready = [], []
        while heights.slope_rows < 16:  # one period of the wrapping map
            worked.append(heights.advance_slopes(0, 5 * 16))
            renderer.gpu.bind_slopes(program, heights)
            ready.append(program["fine_slopes"].value)
        assert worked == [5 * 16] * 3 + [16] and ready == [0.0] * 3 + [1.0]
        assert heights.advance_slopes(0, 5 * 16) == 0, "whole: kept"
        whole.write(stored)
        whole.advance_slopes(0, 1 << 20)  # at once
        assert heights.slopes is not None and whole.slopes is not None
        assert heights.slopes.read() == whole.slopes.read(), "the shares make the same map"
        heights.write(stored, 0, 1)
        assert heights.slope_rows == 0, "new heights: their slopes are worked out again"
    finally:
        heights.release()
        whole.release()
    assert heights.slopes is None


@pytest.mark.gl
def test_a_window_frame_never_waits_for_a_whole_slope_map_and_a_render_does(renderer, monkeypatch):
    """In the window (streaming) a frame works out a share of a new map's slopes and shades by the broad slope
    until they are whole; a render works them all out first, as do the frames after the window's share is done."""
    from terrainview.render import world_draw
    from terrainview.render.offscreen import render_pixels

    settings = NATURAL.replace(tile=1, iterations=8, eye_x=0.2, eye_y=0.5, eye_z=0.6, pitch=30.0, sun_elevation=20.0)
    renderer.update(settings)
    exact = render_pixels(renderer, settings, SIZE)
    heights = renderer.gpu.get("heights:surface")
    assert heights.slope_rows == 256  # one period of the wrapping map
    heights.slope_rows = 0  # as new heights would be, and nothing of the old slopes left
    heights.slopes.write(np.zeros((256, 256, 2), dtype=np.float16))
    monkeypatch.setattr(world_draw, "SLOPE_POINTS_PER_FRAME", 256 * 100)
    renderer.world.streaming = True
    try:
        first = render_pixels(renderer, settings, SIZE)
        assert heights.slope_rows == 100 and np.abs(first.astype(int) - exact).mean() > 1.0
        frames = 1
        while heights.slope_rows < 256:
            last = render_pixels(renderer, settings, SIZE)
            frames += 1
        assert frames == 3 and np.array_equal(last, exact)
    finally:
        renderer.world.streaming = False


def _window_pixels(framebuffer, size) -> np.ndarray:
    return np.frombuffer(framebuffer.read(), dtype=np.uint8).reshape(size[1], size[0], 3).astype(np.int16)


def test_a_draft_is_the_frame_at_half_size_stretched_with_the_full_frames_detail(renderer):
    """A draft (the window's natural-look frames while the view moves) looks like the full frame, softer, and draws
    the mesh the full frame draws: a draft chosen for its own size would want other regions' detail and mesh."""
    from terrainview.render.draft import DraftTarget, draft_size
    from terrainview.render.renderer import Frame

    settings = SceneSettings(mode="rendered", look="natural", iterations=7, tile=3, camera="fly", eye_x=0.3,
                             eye_y=0.45, eye_z=0.8, pitch=8.0, yrot=20.0, water_level=-0.02, lod="on")
    renderer.update(settings)
    size = (192, 108)
    framebuffer = renderer.ctx.simple_framebuffer(size)
    draft = DraftTarget(renderer.ctx)
    try:
        full_stats = renderer.draw(settings, framebuffer, Frame(size))
        full = _window_pixels(framebuffer, size)
        draft_stats = draft.draw(renderer, settings, framebuffer, Frame(size))
        drafted = _window_pixels(framebuffer, size)
        assert draft.size == draft_size(size) == (96, 54)
        assert (draft_stats.terrain, draft_stats.terrain_full) == (full_stats.terrain, full_stats.terrain_full)
        assert draft_stats.terrain < draft_stats.terrain_full, "level of detail chose the mesh"
        assert np.abs(drafted - full).mean() < 12.0, "the same picture"
        # Softer: less of the picture's change from one pixel to the next.
        assert np.abs(np.diff(drafted, axis=1)).mean() < 0.8 * np.abs(np.diff(full, axis=1)).mean()
    finally:
        draft.release()
        framebuffer.release()


def test_the_natural_look_is_drawn_once_its_light_maps_are_there(renderer):
    """Until a tiled terrain's light maps arrive the original look is drawn, and the window drafts only the natural
    look (a draft of the original look there would be a soft picture for nothing)."""
    original = SceneSettings(mode="rendered", iterations=4)
    natural = original.replace(look="natural")
    renderer.update(original)
    assert not renderer.draws_natural(natural), "no light maps traced yet"
    assert renderer.draws_natural(natural.replace(tile="endless")), "the world's regions bring their own"
    renderer.update(natural)
    assert renderer.draws_natural(natural)
    assert not renderer.draws_natural(natural.replace(mode="lines")) and not renderer.draws_natural(original)


@pytest.mark.gl
def test_the_tiles_first_pass_leaves_each_pixels_distance_to_the_land(renderer):
    """The tiles' natural look shades from where its first pass found the land (natural_surface.glsl): on flat
    land, the distance it leaves at each pixel (24 bits across the colour's red, green and blue) is the distance
    along that pixel's ray to the plane, and it is left exactly where the ray meets the tile."""
    from pyglm import glm

    from terrainview.render.renderer import NATURAL_FAR_PLANE, Frame
    from terrainview.scene import camera

    level = 0.05
    settings = NATURAL.replace(tile=1, eye_x=0.2, eye_y=0.6, eye_z=1.4, pitch=25.0, yrot=10.0, water_level=None)
    frame_of(renderer, settings, np.full((65, 65), level, dtype=np.float32))
    places = renderer.gpu.get("texture:surface_places")
    assert places.size == SIZE
    texels = np.frombuffer(places.read(), dtype=np.uint8).reshape(SIZE[1], SIZE[0], 4).astype(np.float64)
    got = texels[..., :3] @ np.array([1.0, 256.0, 65536.0]) / (2 ** 24 - 1) * NATURAL_FAR_PLANE
    # Each pixel centre's ray, from the inverse of the frame's projection and view (rows bottom first, as GL's).
    to_world = glm.inverse(Frame(SIZE).perspective(NATURAL_FAR_PLANE) * camera.view_matrix(settings))
    eye = np.array(camera.eye_position(settings))
    expected = np.zeros(SIZE[::-1])
    for row in range(SIZE[1]):
        for column in range(SIZE[0]):
            ndc = (2.0 * (column + 0.5) / SIZE[0] - 1.0, 2.0 * (row + 0.5) / SIZE[1] - 1.0)
            far = to_world * glm.vec4(*ndc, 1.0, 1.0)
            direction = np.array(far.xyz / far.w) - eye
            direction /= np.linalg.norm(direction)
            along = (level - eye[1]) / direction[1] if direction[1] < 0 else -1.0
            hit = eye + along * direction
            if along > 0 and abs(hit[0]) < 1.0 and abs(hit[2]) < 1.0:
                expected[row, column] = along
    covered = expected > 0
    assert 0.3 < covered.mean() < 0.9  # land and sky both in the picture
    # Away from the tile's outline, where a pixel centre's rounding may fall either way.
    outline = np.zeros_like(covered)
    outline[:, 1:] |= covered[:, 1:] != covered[:, :-1]
    outline[:, :-1] |= covered[:, 1:] != covered[:, :-1]
    outline[1:] |= covered[1:] != covered[:-1]
    outline[:-1] |= covered[1:] != covered[:-1]
    inside, outside = covered & ~outline, ~covered & ~outline
    assert np.abs(got[inside] - expected[inside]).max() < 1e-4 * expected[inside].max()
    assert np.all(got[outside] == 0.0)  # cleared: no land


@pytest.mark.gl
@pytest.mark.parametrize("tiles", [3, 2])  # a copy of the map centred on the origin, and one starting there
def test_a_multisampled_framebuffer_draws_the_tiles_natural_look_in_one_pass(renderer, tiles):
    """A multisampled framebuffer's samples would be mixed in the copy the second pass reads: the mesh is shaded as
    it is drawn there, and the picture is the two passes' one, its outlines smoothed. A window's own framebuffer
    does not say it is multisampled (moderngl leaves its samples unset): the window's Frame does."""
    from terrainview.render.renderer import Frame

    settings = NATURAL.replace(tile=tiles, iterations=7, eye_x=0.3, eye_y=0.5, eye_z=0.8, pitch=10.0, yrot=20.0,
                               water_level=-0.02)
    single = frame_of(renderer, settings)
    places = renderer.gpu.get("texture:surface_places")

    def copied_out_after(draw: Callable[[], object]) -> bool:
        places.write(bytes(4 * places.width * places.height))
        draw()
        return bool(np.frombuffer(places.read(), dtype=np.uint8).any())

    ctx = renderer.ctx
    colour, depth = ctx.renderbuffer(SIZE, 4, samples=4), ctx.depth_renderbuffer(SIZE, samples=4)
    multisampled = ctx.framebuffer([colour], depth)
    resolved = ctx.simple_framebuffer(SIZE)
    try:
        assert not copied_out_after(lambda: renderer.draw(settings, multisampled, Frame(SIZE)))
        ctx.copy_framebuffer(resolved, multisampled)
        image = np.frombuffer(resolved.read(components=3), dtype=np.uint8).reshape(SIZE[1], SIZE[0], 3)[::-1]
        # As the window says it of its own framebuffer; and the same framebuffer without: the two passes.
        assert not copied_out_after(lambda: renderer.draw(settings, resolved, Frame(SIZE, multisampled=True)))
        assert copied_out_after(lambda: renderer.draw(settings, resolved, Frame(SIZE)))
    finally:
        for gl_object in (resolved, multisampled, depth, colour):
            gl_object.release()
    difference = np.abs(image.astype(np.float64) - single).max(axis=2)
    # Most pixels alike (87% within 12 levels); the rest along the many outlines of this small rugged view.
    assert (difference < 12).mean() > 0.8 and difference.mean() < 8.0 and image.std() > 20


@pytest.mark.gl
def test_the_sea_and_the_second_pass_leave_the_lands_depth_as_it_was(renderer):
    """The sea is blended over the land writing no depth, and the land's second pass writes none either: after a
    natural frame, depth is nearer than the far plane exactly where the first pass found land. (The sea's mask was
    set on the context, which has none, so the sea wrote its depth over the open sea.)"""
    from terrainview.render.renderer import Frame

    settings = NATURAL.replace(tile=1, iterations=6, eye_x=0.0, eye_y=0.6, eye_z=2.2, pitch=12.0, yrot=0.0,
                               water_level=0.0)
    frame_of(renderer, settings)
    ctx = renderer.ctx
    colour, depth = ctx.renderbuffer(SIZE, 4), ctx.depth_renderbuffer(SIZE)
    framebuffer = ctx.framebuffer([colour], depth)
    try:
        renderer.draw(settings, framebuffer, Frame(SIZE))
        assert framebuffer.depth_mask  # as it was
        depths = np.frombuffer(framebuffer.read(attachment=-1, components=1, dtype="f4"), dtype=np.float32)
    finally:
        for gl_object in (framebuffer, depth, colour):
            gl_object.release()
    texels = np.frombuffer(renderer.gpu.get("texture:surface_places").read(), dtype=np.uint8).reshape(-1, 4)
    land = texels[:, :3].any(axis=1)
    assert 0.1 < land.mean() < 0.7  # land, and open sea and sky around it
    np.testing.assert_array_equal(depths < 1.0, land)


@pytest.mark.gl
def test_the_second_pass_measures_each_pixel_against_neighbours_on_its_own_land(gl_ctx):
    """natural_surface.glsl's land_step: of the two neighbours along a row, the step goes to the one on the same
    land, so a pixel on a near ridge's outline, beside far land or sky, measures the ridge's own footprint (its
    noise and its far-land blend); at the image's edges, to the neighbour inside; with neither neighbour on its
    land (a sliver between sky, or sky and far land either side), a step across at its own distance. Screen
    derivatives took the far land's or the sky's."""
    import moderngl

    source = shader_part("natural_surface.glsl", "// The distance to the land at a pixel", "float pixel_footprint(")
    # A near slope, sky, a sliver of land between sky, sky, a ridge's last pixel between sky and far land, far land.
    distances = np.array([2.0, 2.1, 2.2, 0.0, 5.0, 0.0, 3.0] + [10.7 + 0.1 * k for k in range(9)])
    side, reach = len(distances), 80.0
    scaled = np.floor(distances / reach * (2 ** 24 - 1) + 0.5).astype(np.int64)
    texels = np.stack([scaled & 255, (scaled >> 8) & 255, scaled >> 16, np.full(side, 255)], axis=-1).astype(np.uint8)
    with gl_ctx:  # another test may have made its own context current
        places = gl_ctx.texture((side, 1), 4, texels.tobytes())
        places.filter = (moderngl.NEAREST, moderngl.NEAREST)
        places.use(9)
    encoding = (Path(__file__).parents[1] / "shaders" / "surface_places.glsl").read_text()  # place_reach and all
    declarations = (encoding + "uniform sampler2D surface_places;\nuniform ivec2 first_pixel;\n"
                    "uniform ivec2 last_pixel;\nvec3 far_point;\n" + source +
                    "float probe(ivec2 pixel) {\n"
                    "    far_point = vec3(-0.2 + 0.025 * float(pixel.x), -0.3, -1.0);\n"
                    "    return length(land_step(pixel, ivec2(1, 0), vec3(0.025, 0.0, 0.0), distance_at(pixel)));\n"
                    "}\n")
    try:
        steps = fragment_values(gl_ctx, declarations, "vec4(probe(ivec2(gl_FragCoord.xy)), 0.0, 0.0, 1.0)",
                                (side, 1), surface_places=9, place_reach=reach, first_pixel=(0, 0),
                                last_pixel=(side - 1, 0))[0]
    finally:
        places.release()
    rays = np.stack([-0.2 + 0.025 * np.arange(side + 1), np.full(side + 1, -0.3), np.full(side + 1, -1.0)], axis=-1)
    rays /= np.linalg.norm(rays, axis=-1, keepdims=True)
    points = rays[:side] * distances[:, None]
    to_next = np.linalg.norm(np.diff(points, axis=0), axis=-1)  # from pixel i to pixel i + 1
    across = distances * np.linalg.norm(rays[1:] - rays[:-1], axis=-1)  # at the pixel's own distance
    expected = {0: [to_next[0]], 1: [to_next[0], to_next[1]], 2: [to_next[1]], 4: [across[4]], 6: [across[6]],
                7: [to_next[7]], side - 1: [to_next[side - 2]]}
    expected |= {pixel: [to_next[pixel - 1], to_next[pixel]] for pixel in range(8, side - 1)}
    for pixel, allowed in expected.items():  # either neighbour on the same land will do: they are alike
        assert min(abs(steps[pixel] - length) for length in allowed) < 2e-3, pixel
