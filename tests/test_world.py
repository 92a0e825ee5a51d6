"""The endless world (kernels/world.py, scene/world_regions.py): one surface of the seed and the place alone."""

from __future__ import annotations

import concurrent.futures
import os
import threading
import time

import numpy as np
import pytest
import reference
from helpers import wait_for

from terrainview.base import heap
from terrainview.kernels import lighting, world
from terrainview.scene import world_regions
from terrainview.scene.settings import ENDLESS, REPEAT, SceneSettings
from terrainview.scene.world_regions import RegionCache, RegionKey, World


def test_the_kernel_equals_the_definition_point_by_point():
    for octaves, (column0, row0) in ((0, (0, 0)), (2, (-5, 3)), (3, (37, -70))):
        expected = reference.world_heights(4, column0, row0, 9, 7, 11, 0.6, 1.3, octaves)
        np.testing.assert_array_equal(world.world_heights(4, column0, row0, 9, 7, 11, 0.6, 1.3, octaves), expected)


def test_the_kernel_equals_the_definition_in_small_windows_anywhere():
    """Windows of one to a few points (where each level's window is larger than the next one's), at the lattice's
    first and last iterations, up to eight octaves, starting on odd and even points either side of zero and at
    the edges of the reach: the kernel's index arithmetic against the definition point by point."""
    rng = np.random.default_rng(3)
    for case in range(40):
        iterations, octaves = (1, 12, 4, 9)[case % 4], int(rng.integers(0, world.MAX_OCTAVES + 1))
        place = case // 4 % 4  # each iterations at each kind of place
        reach = world.MAX_WORLD_CELLS >> (12 - iterations)
        columns, rows = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        anywhere = int(rng.integers(-reach, reach - 4))
        column0 = (-reach, reach - columns + 1, int(rng.integers(-9, 9)), anywhere)[place]
        row0 = (int(rng.integers(-9, 9)), -reach, reach - rows + 1, anywhere)[place]
        arguments = (iterations, column0, row0, columns, rows, case, 0.5 + 0.01 * case, 1.7, octaves)
        np.testing.assert_array_equal(world.world_heights(*arguments), reference.world_heights(*arguments),
                                      err_msg=str(arguments))


def test_neighbouring_regions_share_their_edges_exactly():
    centre = world.world_region(6, 2, -3, seed=4)
    assert np.array_equal(centre[:, -1], world.world_region(6, 3, -3, seed=4)[:, 0])
    assert np.array_equal(centre[-1, :], world.world_region(6, 2, -2, seed=4)[0, :])
    assert np.array_equal(centre[0, :], world.world_region(6, 2, -4, seed=4)[-1, :])
    assert np.array_equal(centre[:, 0], world.world_region(6, 1, -3, seed=4)[:, -1])


def test_heights_written_into_rows_of_a_larger_map_are_those_made_alone():
    whole = world.world_heights(5, -40, 12, 33, 20, seed=4)
    into = np.full((30, 33), np.nan, dtype=np.float32)
    assert world.world_heights(5, -40, 17, 33, 10, seed=4, out=into[5:15]) is not None
    np.testing.assert_array_equal(into[5:15], whole[5:15])
    assert np.isnan(into[:5]).all() and np.isnan(into[15:]).all(), "nothing outside its rows"
    for bad in (np.empty((10, 32), np.float32), np.empty((10, 33), np.float64), np.empty((10, 66), np.float32)[:, ::2]):
        with pytest.raises(ValueError, match="C-contiguous float32 array of 10 x 33"):
            world.world_heights(5, -40, 17, 33, 10, seed=4, out=bad)


def test_a_region_is_the_same_window_of_a_bigger_map_and_any_order_gives_it():
    big = world.world_heights(6, -128, -64, 300, 200, seed=9)
    for x, z in ((-2, -1), (0, 0), (1, 1), (-1, 0)):
        cells = 64
        window = big[z * cells + 64:z * cells + 64 + cells + 1, x * cells + 128:x * cells + 128 + cells + 1]
        np.testing.assert_array_equal(world.world_region(6, x, z, seed=9), window)
    order = [(0, 0), (3, -2), (-1, 5)]
    first = [world.world_region(5, x, z, seed=2) for x, z in order]
    again = [world.world_region(5, x, z, seed=2) for x, z in reversed(order)][::-1]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))


def test_regions_made_on_any_number_of_threads_are_bit_identical():
    places = [(x, z) for x in range(-2, 2) for z in range(-2, 2)]
    alone = [world.world_region(6, x, z, seed=3).tobytes() for x, z in places]
    for threads in (2, 4):
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            made = list(pool.map(lambda place: world.world_region(6, *place, seed=3).tobytes(), places))
        assert made == alone


def test_one_more_iteration_adds_points_between_the_same_ones():
    for iterations in (3, 6, 9):
        coarse = world.world_heights(iterations, -20, 7, 40, 30, seed=1)
        fine = world.world_heights(iterations + 1, -40, 14, 79, 59, seed=1)
        np.testing.assert_array_equal(fine[::2, ::2], coarse)


def test_the_world_has_no_period_along_a_long_line():
    cells = 32  # iterations 5: a region is 32 cells
    line = world.world_heights(5, 0, 0, 96 * cells, 1, seed=7, octaves=2)[0].astype(np.float64)
    line -= line.mean()

    def correlation(lag: int) -> float:
        return float(np.dot(line[:-lag], line[lag:]) / np.dot(line, line))

    for regions in (1, 2, 3, 4, 8, 16):
        at_repeat = correlation(regions * cells)
        around = max(correlation(regions * cells - cells // 4), correlation(regions * cells + cells // 4))
        assert at_repeat < around + 0.1, f"a peak at {regions} regions: {at_repeat:.2f} against {around:.2f}"
        assert at_repeat < 0.9
    tile = np.tile(line[:cells], 96)  # the repeated surface, for contrast: it correlates 1 at every region
    assert np.dot(tile[:-cells], tile[cells:]) / np.dot(tile, tile) > 0.98


def test_coarser_octaves_make_larger_landforms():
    low = world.world_heights(4, -256, 0, 512, 1, seed=5, octaves=0)[0]
    high = world.world_heights(4, -256, 0, 512, 1, seed=5, octaves=4)[0]
    assert np.ptp(high) > 2.5 * np.ptp(low), "larger shapes: a wider range of heights over 32 units"


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="octaves"):
        world.world_heights(4, 0, 0, 2, 2, octaves=world.MAX_OCTAVES + 1)
    with pytest.raises(ValueError, match="column0"):
        world.world_heights(12, world.MAX_WORLD_CELLS + 1, 0, 2, 2)


def test_regions_are_wanted_nearest_first_and_coarser_far_away():
    settings = SceneSettings(tile=ENDLESS, iterations=10, mode="rendered", camera="fly")
    ranges = world_regions.world_ranges(settings, 720, 60.0)
    wanted = world_regions.wanted_regions(settings, 7.0, ranges)
    x, _, z = (0.0, 0.5, 3.0)
    distances = world_regions.region_distances(np.array([key.x for key in wanted]), np.array([key.z for key in wanted]),
                                               x, z)
    assert all(distance <= 7.0 for distance in distances)
    assert wanted[0].detail == 10 and min(key.detail for key in wanted) < 8, "near ones whole, far ones coarse"
    for key, distance in zip(wanted, distances, strict=True):
        finest_needed = int(np.count_nonzero(ranges[:-1] < distance))
        assert key.detail >= 10 - finest_needed, "never coarser than the level of detail draws there"


def test_the_cache_stays_under_its_bound_over_a_long_flight():
    settings = SceneSettings(tile=ENDLESS, iterations=6, mode="rendered", camera="fly")
    ranges = world_regions.world_ranges(settings, 720, 60.0)
    cache = RegionCache(limit_bytes=2 << 20)
    world_ = World.of(settings)
    assert world_ is not None
    cache.adopt(world_)
    peak = 0
    for step in range(200):  # 200 units straight ahead, a region every 2
        flown = settings.replace(eye_z=3.0 - step)
        wanted = world_regions.wanted_regions(flown, 7.0, ranges)
        for key in cache.missing(wanted):
            cache.put(world_, key, np.zeros((((1 << key.detail) + 3),) * 2, dtype=np.float32))
        in_use = {key for key in wanted}
        cache.trim(in_use)
        in_use_bytes = sum(((1 << key.detail) + 3) ** 2 * 4 for key in in_use)
        assert cache.bytes <= max(cache.limit_bytes, in_use_bytes)
        peak = max(peak, cache.bytes)
    assert peak > cache.limit_bytes // 2, "the flight filled the cache: the bound was what held it"


def test_the_cache_drops_the_maps_wanted_longest_ago_first():
    """Past its bound, the maps not in use go in the order they were last wanted (asked for, or looked up), the
    oldest first, whenever they were made."""
    side = (1 << 5) + 3
    cache = RegionCache(limit_bytes=3 * side * side * 4)
    world_ = World(0, 0.7, 1.0, 2)
    cache.adopt(world_)
    made = [RegionKey(x, 0, 5) for x in range(4)]
    for key in made:
        cache.put(world_, key, np.zeros((side, side), dtype=np.float32))
    assert cache.requests([made[0]]) == [], "held: nothing to make"  # wanted again: the most recent now
    cache.best(1, 0, 5)
    cache.trim(set())
    assert [key in cache for key in made] == [True, True, False, True]


def test_the_best_map_held_stands_in_for_a_finer_one_not_made_yet():
    cache = RegionCache()
    world_ = World(0, 0.7, 1.0, 2)
    cache.adopt(world_)
    coarse = world_regions.region_map(world_, RegionKey(1, 2, 5))
    cache.put(world_, RegionKey(1, 2, 5), coarse)
    found = cache.best(1, 2, 8)
    assert found is not None and found[0] == RegionKey(1, 2, 5)
    assert cache.best(1, 3, 8) is None
    cache.put(World(1, 0.7, 1.0, 2), RegionKey(1, 2, 6), coarse)  # made for a world no longer shown: dropped
    assert RegionKey(1, 2, 6) not in cache
    fine = world_regions.region_map(world_, RegionKey(1, 2, 6))
    apron = world_regions.APRON
    np.testing.assert_array_equal(fine[apron:-apron:2, apron:-apron:2], coarse[apron:-apron, apron:-apron])


def test_the_best_map_held_is_the_finest_no_finer_than_asked_through_puts_trims_and_a_new_world():
    """``best`` (which keeps a bit per detail held of each place) agrees with a plain look through every key held,
    over maps made, dropped past the bound, and a world changed."""
    rng = np.random.default_rng(7)
    side = (1 << 3) + 3
    cache = RegionCache(limit_bytes=40 * side * side * 4)
    worlds = World(0, 0.7, 1.0, 2), World(1, 0.7, 1.0, 2)
    cache.adopt(worlds[0])

    def plain_best(x: int, z: int, detail: int) -> RegionKey | None:
        held = [key for key in list(cache._maps) if (key.x, key.z) == (x, z) and key.detail <= detail]
        return max(held, key=lambda key: key.detail, default=None)

    for step in range(2000):
        if step == 1000:
            cache.adopt(worlds[1])
        key = RegionKey(int(rng.integers(-2, 3)), int(rng.integers(-2, 3)), int(rng.integers(1, 13)))
        cache.put(cache.world, key, np.zeros((side, side), dtype=np.float32))
        if step % 7 == 0:
            cache.trim(set())
        x, z, detail = (int(value) for value in rng.integers((-3, -3, 1), (4, 4, 13)))
        expected = plain_best(x, z, detail)
        found = cache.best(x, z, detail)
        assert (found[0] if found else None) == expected, (x, z, detail)
    assert len(cache) <= 40 + 6, "trimmed along the way (past the bound by the puts since the last trim at most)"


def test_the_ground_under_the_eye_is_the_world_s():
    settings = SceneSettings(tile=ENDLESS, iterations=6, seed=3)
    ground = world_regions.ground(settings, None)
    assert ground is not None
    heights = world.world_region(6, 2, -1, seed=3)
    # Region (2, -1) spans x 3..5, z -3..-1: its grid points are where the ground is exactly the map.
    for column, row in ((0, 0), (10, 17), (64, 64)):
        x, z = 3.0 + column * 2.0 / 64, -3.0 + row * 2.0 / 64
        assert ground(x, z) == pytest.approx(float(heights[row, column]), abs=1e-6)


def test_the_endless_world_refuses_what_it_cannot_show(call_main, usage_error, tmp_path):
    for option, value in (("--erosion", "thermal"), ("--generator", "fault"), ("--passes", "3")):
        status, _, err = call_main("render", "-o", tmp_path / "x.png", "--tile", "endless", option, value)
        usage_error(status, err, f"{option}: ")
        assert "--tile repeat" in err


def test_scenes_saved_before_the_world_keep_showing_the_repeated_surface(tmp_path):
    from terrainview.scene.flythrough import load_flight
    from terrainview.scene.scene_file import load_scene, save_scene_toml

    old = tmp_path / "old.toml"
    old.write_text('version = 1\n[scene]\ntile = "endless"\niterations = 5\n')
    settings, _ = load_scene(old)
    assert settings.tile == REPEAT
    save_scene_toml(settings.replace(tile=ENDLESS), tmp_path / "new.toml")
    assert load_scene(tmp_path / "new.toml")[0].tile == ENDLESS
    flight = tmp_path / "flight.toml"
    flight.write_text('version = 1\n[scene]\ntile = 1\n[[keyframe]]\ntime = 0.0\ntile = "endless"\n'
                      '[[keyframe]]\ntime = 1.0\n')
    assert load_flight(flight)[0].at(0.5).tile == REPEAT


def test_neighbouring_regions_cast_the_same_shadows_along_their_shared_edge():
    world_ = World(5, 0.7, 1.0, 2)
    centre = world_regions.region_light(world_, RegionKey(0, 0, 8))
    east, south = (world_regions.region_light(world_, RegionKey(x, z, 8)) for x, z in ((1, 0), (0, 1)))
    assert centre.shape == (5, 65, 65, 4)  # 16 horizons four a texel, then the sky view and the broad slope
    np.testing.assert_array_equal(centre[:, :, -1], east[:, :, 0])
    np.testing.assert_array_equal(centre[:, -1, :], south[:, 0, :])
    assert 0 < np.count_nonzero(centre[:4] > 128) < centre[:4].size, "some horizons above the plane, not all"
    assert centre[4, ..., lighting.SKY_VIEW_CHANNEL].min() < 250, "valleys see less of the sky"


def test_a_region_with_nothing_held_gets_a_quick_coarse_stand_in_first():
    """Every region with nothing held, near or far, is asked for coarse before any near region's fine map."""
    cache = RegionCache()
    world_ = World(0, 0.7, 1.0, 2)
    cache.adopt(world_)
    wanted = [RegionKey(0, 0, 10), RegionKey(1, 0, 9), RegionKey(2, 0, 5)]
    cache.put(world_, RegionKey(1, 0, 7), np.zeros((4, 4), np.float32))
    assert cache.requests(wanted) == [RegionKey(0, 0, world_regions.STAND_IN_DETAIL), RegionKey(2, 0, 5),
                                      RegionKey(0, 0, 10), RegionKey(1, 0, 9)]


def test_the_natural_look_holds_regions_fine_enough_for_its_per_pixel_normals():
    settings = SceneSettings(tile=ENDLESS, iterations=10, mode="rendered", camera="fly", look="natural")
    plain = world_regions.wanted_regions(settings, 12.0, world_regions.world_ranges(settings, 720, 60.0))
    lit = world_regions.wanted_regions(settings, 12.0, world_regions.world_ranges(settings, 720, 60.0, lit=True))
    assert [(key.x, key.z) for key in plain] == [(key.x, key.z) for key in lit]
    assert all(a.detail <= b.detail for a, b in zip(plain, lit, strict=True))
    assert sum(key.detail for key in lit) > sum(key.detail for key in plain) + len(lit) // 2


@pytest.mark.parametrize("band_rows", [1, 2, 7, 100])
def test_a_map_made_in_steps_is_the_whole_map_and_its_pyramid(band_rows):
    """region_map_in_steps yields between bands (one of only apron rows included) and returns what
    region_map and region_pyramid make, bit for bit."""
    world_, key = World(4, 0.8, 1.0, 2), RegionKey(2, -1, 4)  # 19 rows: one band per row at band_rows 1
    yields, (heights, pyramid) = world_regions.run_steps(world_regions.region_map_in_steps(world_, key, band_rows))
    assert yields == -(-19 // band_rows) - 1
    whole = world_regions.region_map(world_, key)
    np.testing.assert_array_equal(heights, whole)
    expected = world_regions.region_pyramid(whole)
    assert pyramid is not None and expected is not None
    for name in ("iterations", "patch", "levels", "bottom", "top"):
        assert getattr(pyramid, name) == getattr(expected, name)
    for name in ("low", "high", "offsets"):
        np.testing.assert_array_equal(getattr(pyramid, name), getattr(expected, name))


def record_bands(monkeypatch, module, name, band_of, at_second_band=lambda: None):
    """Patch ``module.name`` to record ``band_of(args, kwargs)`` for each call to it, running ``at_second_band()``
    as the second band is made. Returns the list of bands and the unpatched function."""
    bands, unpatched = [], getattr(module, name)

    def recorded(*args, **kwargs):
        bands.append(band_of(args, kwargs))
        if len(bands) == 2:
            at_second_band()
        return unpatched(*args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return bands, unpatched


def paced_feed(monkeypatch, at_second_band):
    """A region worker that paces maps from detail 6 in bands of at most 16 rows, the bands it makes (first row,
    rows) and the unpatched region_map; ``at_second_band(feed)`` runs as the second band is made."""
    from terrainview.window import world_feed
    from terrainview.window.world_feed import WorldFeed

    monkeypatch.setattr(world_feed, "PACED_DETAIL", 6)  # small maps, in many bands: the same steps, quickly
    monkeypatch.setattr(world_feed, "BAND_ROWS", 16)
    feed = WorldFeed(paced=True)
    # (first row, rows): written into the map's own rows
    bands, region_map = record_bands(monkeypatch, world_regions, "region_map", lambda args, kwargs: args[2:4],
                                     lambda: at_second_band(feed))
    return feed, bands, region_map


def test_a_large_map_is_made_in_paced_steps_that_wait_while_the_window_holds_the_worker(monkeypatch):
    """Maps of PACED_DETAIL and finer are made a band of rows at a time, and no band starts while the window
    draws a frame's pixels (held), before the first band or between two; the map is the one made whole."""
    from terrainview.window import world_feed
    from terrainview.window.world_feed import WorldFeed

    monkeypatch.setattr(world_feed, "HOLD_SECONDS", 30.0)
    # A frame's pixels from the second band on: the third waits.
    feed, bands, region_map = paced_feed(monkeypatch, lambda feed: feed.hold(True))
    monkeypatch.setattr(world_feed, "region_map", lambda *args: bands.append("whole") or region_map(*args))
    world_ = World(5, 0.6, 1.0, 3)
    cache = RegionCache()
    cache.adopt(world_)
    try:
        feed.hold(True)
        feed.request(world_, [RegionKey(-3, 2, 6)])
        assert not feed.wait_idle(0.5) and not bands, "held: not a band made"
        feed.hold(False)
        wait_for(lambda: len(bands) == 2, 60.0, "the first two bands")  # (the worker runs when a core is idle)
        assert not feed.wait_idle(0.5) and len(bands) == 2, "held again after the second band: no third"
        feed.hold(False)
        assert feed.wait_idle(60.0) and feed.take(cache) == 1
        # 67 rows: five bands of 14 rows at most, the last shorter.
        assert bands == [(0, 14), (14, 14), (28, 14), (42, 14), (56, 11)]
        found = cache.best(-3, 2, 6)
        assert found is not None and found[1].pyramid is not None
        np.testing.assert_array_equal(found[1].heights, region_map(world_, RegionKey(-3, 2, 6)))
        feed.request(world_, [RegionKey(0, 0, 5)])  # coarser: made whole
        assert feed.wait_idle(60.0) and feed.take(cache) == 1 and bands[-1] == "whole"
    finally:
        feed.stop()
    unpaced = WorldFeed(paced=False)  # (a GPU draws the pixels: nothing to wait for)
    try:
        unpaced.hold(True)
        unpaced.request(world_, [RegionKey(1, 1, 6)])
        assert unpaced.wait_idle(60.0) and bands[-1] == "whole"
    finally:
        unpaced.stop()


def window_light(world_: World, key: RegionKey, detail: int) -> np.ndarray:
    """A region's light maps, the plain way: those of the whole window of land a unit around it (traced at
    ``detail``, finer than its heights), cut to the region."""
    cells = world.region_cells(detail)
    margin = cells // 2
    window = world.world_heights(detail, key.x * cells - margin, key.z * cells - margin, 2 * cells + 1,
                                 2 * cells + 1, world_.seed, world_.h, world_.height_scale, world_.octaves)
    whole = lighting.light_maps(window, max_cells=2 * cells, span=4.0, reach=(margin - 2) * 2.0 / cells,
                                surface_finer=True)
    return whole[:, margin:margin + cells + 1, margin:margin + cells + 1]


def test_a_regions_light_maps_are_its_part_of_the_window_around_it():
    """A region's light maps are those of the window of land a unit around it, cut to the region (its own cells are
    all that is traced): the land around casts its shadows."""
    world_, key = World(4, 0.8, 1.0, 2), RegionKey(1, -2, 6)  # traced at detail 4
    np.testing.assert_array_equal(world_regions.region_light(world_, key), window_light(world_, key, 4))


@pytest.mark.parametrize("band_rows", [1, 5, 16, 17, 1000])
def test_light_maps_traced_in_steps_are_the_whole_light_maps(band_rows, monkeypatch):
    """region_light_in_steps traces one band of rows a step, yielding between them, and returns the window's light
    maps cut to the region, bit for bit, however its rows are banded."""
    world_, key = World(4, 0.8, 1.0, 2), RegionKey(-2, 3, 7)  # traced at detail 5: 33 rows
    whole = window_light(world_, key, 5)
    traced, _ = record_bands(monkeypatch, lighting, "light_maps", lambda args, kwargs: len(kwargs["part"][0]))
    steps, bands = world_regions.region_light_in_steps(world_, key, band_rows), -(-33 // band_rows)
    for step in range(1, bands):
        next(steps)
        assert len(traced) == step, "one band a step"
    yields, maps = world_regions.run_steps(steps)
    assert yields == 0 and len(traced) == bands and sum(traced) == 33 and max(traced) <= band_rows
    np.testing.assert_array_equal(maps, whole)


def test_large_light_maps_are_traced_in_paced_steps_that_wait_while_the_window_holds_the_worker(monkeypatch):
    """The light maps of PACED_DETAIL and finer are traced a band of rows at a time, and no band starts while the
    window draws a frame's pixels; the maps are those traced whole. Coarser ones are traced whole."""
    from terrainview.window import world_feed
    from terrainview.window.world_feed import WorldFeed

    monkeypatch.setattr(world_feed, "HOLD_SECONDS", 30.0)
    monkeypatch.setattr(world_feed, "PACED_DETAIL", 7)  # traced at detail 5 (33 rows) in bands of 8 rows at most
    monkeypatch.setattr(world_feed, "LIGHT_BAND_ROWS", 8)
    world_ = World(5, 0.6, 1.0, 3)
    cache = RegionCache()
    cache.adopt(world_)
    key = RegionKey(1, -2, 7)
    whole = world_regions.region_light(world_, key)
    feed = WorldFeed(paced=True)
    # (first row, rows) of the window's; a frame's pixels from the second band on: the third waits
    bands, _ = record_bands(monkeypatch, lighting, "light_maps",
                            lambda args, kwargs: (kwargs["part"][0].start, len(kwargs["part"][0])),
                            lambda: feed.hold(True))
    try:
        feed.request(world_, [key], light=True)
        wait_for(lambda: len(bands) == 2, 60.0, "the first two bands")
        assert not feed.wait_idle(0.5) and len(bands) == 2, "held after the second band: no third"
        feed.hold(False)
        assert feed.wait_idle(60.0) and feed.take(cache) == 1
        # The region's 33 rows, 16 into the window: five bands of 7 rows at most, the last shorter.
        assert bands == [(16, 7), (23, 7), (30, 7), (37, 7), (44, 5)]
        found = cache.best(1, -2, 7)
        assert found is not None and found[1].light is not None
        np.testing.assert_array_equal(found[1].light, whole)
        bands.clear()
        feed.request(world_, [RegionKey(0, 0, 6)], light=True)  # coarser: traced whole
        assert feed.wait_idle(60.0) and feed.take(cache) == 1 and bands == [(8, 17)]
    finally:
        feed.stop()


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux's scheduling policies")
def test_the_worker_runs_only_where_no_other_thread_wants_a_core():
    """Under SCHED_IDLE: a thread of llvmpipe's waking takes the core from it at once (at nice 19 it could wait out
    the worker's time slice, a natural-look flight's frames over 50 ms)."""
    from terrainview.window.world_feed import WORKER_NICENESS, WorldFeed

    def idle_allowed() -> bool:  # some sandboxes refuse the policy: the worker falls back to the lowest nice value
        allowed = []

        def probe() -> None:
            try:
                os.sched_setscheduler(threading.get_native_id(), os.SCHED_IDLE, os.sched_param(0))
                allowed.append(True)
            except OSError:
                allowed.append(False)

        prober = threading.Thread(target=probe)
        prober.start()
        prober.join()
        return allowed[0]

    expect_idle = idle_allowed()
    own = os.sched_getscheduler(0)
    feed = WorldFeed()
    try:
        thread = feed._thread.native_id

        def below() -> bool:
            if expect_idle:
                return os.sched_getscheduler(thread) == os.SCHED_IDLE
            return os.getpriority(os.PRIO_PROCESS, thread) == WORKER_NICENESS

        wait_for(below, 5.0, "the worker's scheduling policy", interval=0.01)
        assert os.sched_getscheduler(0) == own, "the thread that started it keeps its own"
    finally:
        feed.stop()


def test_a_frame_lends_its_core_to_a_worker_the_frames_left_none(monkeypatch):
    """Where the worker had less than STARVED_SHARE of a core over the last SHARE_WINDOW_SECONDS with work to do,
    the frame's start waits for it: until it has nothing left to make, or LEND_SECONDS. Fed, or idle, or within
    the window (counted from the work asked for), the frame waits for nothing. The window's clock and the worker's
    CPU time are the test's; only the waits are real."""
    import types

    from terrainview.window import world_feed
    from terrainview.window.world_feed import SHARE_WINDOW_SECONDS, STARVED_SHARE, WorldFeed

    # Long enough that a lend ends by the worker's finishing, however busy the machine; short for one that runs out.
    monkeypatch.setattr(world_feed, "LEND_SECONDS", 60.0)
    worker_cpu = [0.0]  # the worker's CPU time as the frame reads it
    monkeypatch.setattr(WorldFeed, "_worker_cpu_seconds", lambda self: worker_cpu[0])
    go = threading.Event()  # each map waits for this: work to do, and no CPU taken for it
    region_map = world_feed.region_map
    world_ = World(5, 0.6, 1.0, 3)
    world_regions.region_pyramid(region_map(world_, RegionKey(9, 9, 5)))  # compiled before any lend is timed
    monkeypatch.setattr(world_feed, "region_map", lambda *args: go.wait(30.0) and region_map(*args))
    feed = WorldFeed()
    clock = [100.0]
    monkeypatch.setattr(world_feed, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    window = SHARE_WINDOW_SECONDS

    def lend_seconds() -> float:  # how long the lend really waited (60 s where it lends wrongly: the maps wait)
        started = time.perf_counter()
        feed.lend()
        return time.perf_counter() - started

    try:
        clock[0] += 2 * window
        assert lend_seconds() < 5.0 and feed.lends == 0, "nothing to make: nothing owed"
        feed.request(world_, [RegionKey(0, 0, 5)])
        clock[0] += 0.9 * window
        assert lend_seconds() < 5.0 and feed.lends == 0, "within the window"
        clock[0] += 0.2 * window
        started = time.perf_counter()
        threading.Timer(0.1, go.set).start()  # the worker gets on a tenth of a second into the lend
        feed.lend()
        waited = time.perf_counter() - started
        assert feed.lends == 1 and 0.1 <= waited < 60.0 and not feed.pending, "starved: lent until done"
        go.clear()
        clock[0] += 5 * window  # idle: the window starts with the work asked for, not before
        feed.request(world_, [RegionKey(1, 0, 5)])
        clock[0] += 0.9 * window
        assert lend_seconds() < 5.0 and feed.lends == 1, "within the window"
        clock[0] += 0.2 * window
        worker_cpu[0] += 1.1 * STARVED_SHARE * 1.1 * window  # a little over its share: fed
        assert lend_seconds() < 5.0 and feed.lends == 1, "fed: not lent"
        clock[0] += 1.1 * window
        worker_cpu[0] += 0.9 * STARVED_SHARE * 1.1 * window  # a little under: starved
        monkeypatch.setattr(world_feed, "LEND_SECONDS", 0.3)
        assert lend_seconds() >= 0.3 and feed.lends == 2, "still not done (its map waits): lent LEND_SECONDS"
    finally:
        go.set()
        feed.stop()


def test_a_paced_map_is_dropped_between_steps_when_its_world_is_no_longer_asked_for(monkeypatch):
    feed, bands, _ = paced_feed(monkeypatch, lambda feed: feed.forget())  # the view leaves the world
    world_ = World(5, 0.6, 1.0, 3)
    cache = RegionCache()
    cache.adopt(world_)
    try:
        feed.request(world_, [RegionKey(0, 0, 6)])
        assert feed.wait_idle(60.0) and feed.take(cache) == 0 and len(bands) == 2, "no band after the second"
    finally:
        feed.stop()


def _huge_page_advised(array: np.ndarray) -> bool:
    """Whether a mapping holding ``array`` asks Linux for huge pages (its VmFlags in /proc/self/smaps hold "hg")."""
    start = array.__array_interface__["data"][0]
    end, overlaps, advised = start + array.nbytes, False, False
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as smaps:
        for line in smaps:
            head = line.split(maxsplit=1)[0] if line.strip() else ""
            if "-" in head and ":" not in head:  # a mapping's address range
                low, high = (int(value, 16) for value in head.split("-"))
                overlaps = low < end and start < high
            elif overlaps and head == "VmFlags:":
                advised = advised or "hg" in line.split()[1:]
    return advised


@pytest.mark.skipif(not heap.numpy_huge_pages(), reason="numpy asks for no huge pages here (no switch, or not Linux)")
def test_while_a_paced_world_is_asked_for_numpys_large_arrays_come_in_small_pages():
    from terrainview.window.world_feed import WorldFeed

    world_ = World(2, 0.7, 1.0, 2)
    paced, other, unpaced = WorldFeed(paced=True), WorldFeed(paced=True), WorldFeed(paced=False)
    try:
        unpaced.request(world_, [RegionKey(0, 0, 4)])
        assert heap.numpy_huge_pages(), "a GPU draws the frames: huge pages as before"
        for _ in range(2):  # asked again and again while the view stays in the world
            paced.request(world_, [RegionKey(0, 0, 4)])
            assert not heap.numpy_huge_pages()
        streaming = np.empty(64 << 20, dtype=np.uint8)
        other.request(world_, [RegionKey(0, 0, 4)])  # a second holder, let go of first
        other.stop()
        assert not heap.numpy_huge_pages(), "the first feed still holds small pages"
        paced.forget()
        assert heap.numpy_huge_pages(), "back once the view leaves the world"
        after = np.empty(64 << 20, dtype=np.uint8)
        paced.request(world_, [RegionKey(0, 0, 4)])
        paced.stop()
        assert heap.numpy_huge_pages(), "and once the worker stops"
        paced.request(world_, [RegionKey(0, 0, 4)])
        assert heap.numpy_huge_pages(), "a stopped worker asks for nothing"
        if not _huge_page_advised(after):
            pytest.skip("this kernel keeps no huge-page advice (transparent huge pages built without)")
        assert not _huge_page_advised(streaming)
    finally:
        for feed in (paced, other, unpaced):
            feed.stop()


def test_the_worker_makes_what_the_frame_asks_for_and_the_cache_takes_it():
    from terrainview.window.world_feed import WorldFeed

    world_ = World(2, 0.7, 1.0, 2)
    cache = RegionCache()
    cache.adopt(world_)
    feed = WorldFeed()
    try:
        wanted = [RegionKey(0, 0, 7), RegionKey(1, 0, 5)]
        feed.request(world_, cache.requests(wanted), light=True)
        assert feed.pending >= 1, "asked for and not made yet"  # (the first may be under way)
        assert feed.wait_idle(60.0)
        assert feed.take(cache) == 3 and not cache.requests(wanted, light=True), "a stand-in, then both, all lit"
        found = cache.best(0, 0, 7)
        assert found is not None and found[1].pyramid is not None and found[1].light is not None
        np.testing.assert_array_equal(found[1].heights, world_regions.region_map(world_, RegionKey(0, 0, 7)))
        feed.request(World(3, 0.7, 1.0, 2), [RegionKey(0, 0, 5)])  # another world's: the cache drops it
        assert feed.wait_idle(60.0) and feed.take(cache) == 1 and RegionKey(0, 0, 5) not in cache
        # The view leaves the world: what was asked and not started is not made, and nothing is handed over.
        feed.request(world_, [RegionKey(x, 3, 9) for x in range(8)])
        feed.forget()
        assert feed.wait_idle(60.0) and feed.take(cache) == 0
    finally:
        feed.stop()
