"""Frames of the endless world: drawn region by region with no crack, the same every run, never repeating."""

from __future__ import annotations

import inspect
import types

import numpy as np
from helpers import changed_fraction

from terrainview.scene import world_regions
from terrainview.scene.settings import ENDLESS, REPEAT, SceneSettings
from terrainview.scene.world_regions import World

pytest_plugins = ["gl_fixtures"]

# Looking down from above: every pixel is land, so a crack between regions shows the clear colour.
ABOVE = SceneSettings(mode="rendered", tile=ENDLESS, iterations=6, camera="fly", eye_y=3.0, pitch=80.0)
CLEAR = np.round(255 * np.array((0.84, 0.87, 1.0))).astype(int)


def _frame(renderer, settings, size=(160, 120)):
    from gl_fixtures import render_frame

    return render_frame(renderer, settings, size).astype(int)


def test_a_view_from_above_is_land_everywhere_with_no_crack_between_regions(renderer):
    for settings in (ABOVE, ABOVE.replace(iterations=9, eye_y=1.5, pitch=55.0), ABOVE.replace(iterations=3)):
        pixels = _frame(renderer, settings)
        cracks = (np.abs(pixels - CLEAR).sum(axis=2) <= 3).sum()
        assert cracks == 0, f"{cracks} pixels of the clear colour between regions at iterations {settings.iterations}"
        assert len(renderer.world.wanted) > 9 and renderer.world.missing == 0


def test_a_tiny_worlds_regions_lie_where_the_world_is(renderer):
    """At iterations 3 each region draws its own full grid (no pyramid to select from): the land drawn is the
    world's ground there. Each pixel's depth, taken back into the world, lies on the ground (between its points);
    the same land a unit off would not."""
    import glm

    from terrainview.render.renderer import FAR_PLANE, Frame
    from terrainview.scene import camera

    settings = ABOVE.replace(iterations=3, eye_x=0.37, eye_z=-0.61, eye_y=1.2, pitch=60.0)
    size = (64, 48)
    renderer.update(settings)
    framebuffer = renderer.ctx.simple_framebuffer(size)
    try:
        renderer.draw(settings, framebuffer, Frame(size))
        depth = np.frombuffer(framebuffer.read(components=1, attachment=-1, dtype="f4"), dtype=np.float32)
        depth = depth.reshape(size[1], size[0])  # bottom row first, as the image's rows go up
    finally:
        framebuffer.release()
    to_world = glm.inverse(Frame(size).perspective(FAR_PLANE) * camera.view_matrix(settings))
    ground = world_regions.world_ground(World.of(settings), settings.iterations)
    on_ground, a_unit_off = [], []
    for row in range(8, size[1] - 8, 4):
        for column in range(8, size[0] - 8, 4):
            ndc = glm.vec4((column + 0.5) / size[0], (row + 0.5) / size[1], depth[row, column], 1.0) * 2.0 - 1.0
            place = to_world * glm.vec4(ndc.xyz, 1.0)
            x, y, z = place.x / place.w, place.y / place.w, place.z / place.w
            on_ground.append(abs(y - ground(x, z)))
            a_unit_off.append(abs(y - ground(x + 1.0, z + 1.0)))
    assert np.median(on_ground) < 0.01 and np.median(a_unit_off) > 5 * np.median(on_ground) + 0.02


def test_far_regions_drawn_coarser_than_their_top_level_leave_no_crack(renderer, monkeypatch):
    """The natural look reaches 24 units: regions past their top level's range are drawn as half-size patches
    (lod.grid_ranges's coarser_top), and where they meet finer ones the land stays whole: seen from high up,
    no pixel below the horizon is left at the far plane's depth (the sky would show through)."""
    from terrainview.render import world_draw
    from terrainview.render.renderer import Frame

    drawn = []  # the selections of the frame drawn (not of every try of the budget's search), the atlases' too
    draw_atlases = world_draw.WorldTerrain._draw_atlases

    def noted(*args, **kwargs):
        drawn.extend(inspect.signature(draw_atlases).bind(*args, **kwargs).arguments["selections"])
        return draw_atlases(*args, **kwargs)

    monkeypatch.setattr(world_draw.WorldTerrain, "_draw_atlases", noted)
    settings = SceneSettings(mode="rendered", look="natural", tile=ENDLESS, iterations=6, camera="fly", eye_y=6.0,
                             pitch=50.0, lod_error=16.0)
    renderer.update(settings)
    ctx = renderer.ctx
    color, depth = ctx.renderbuffer((160, 120)), ctx.depth_texture((160, 120))
    framebuffer = ctx.framebuffer([color], depth)
    try:
        renderer.draw(settings, framebuffer, Frame((160, 120)))
        far = np.frombuffer(depth.read(), dtype="f4").reshape(120, 160) >= 1.0
    finally:
        for released in (framebuffer, color, depth):
            released.release()
    coarser = [selection for selection in drawn if selection is not None and len(selection.quarters) and
               selection.quarters[0, 4] == len(selection.ranges) - 1]
    assert coarser, "some regions drawn coarser than their top level"
    assert not far[60:].any(), f"{int(far[60:].sum())} pixels of the lower half show through the land"


def test_the_natural_look_draws_small_regions_from_atlases_as_it_draws_them_alone(renderer, monkeypatch):
    """Small regions lit by their light maps are drawn together, a layer of an atlas each (render/world_atlas.py):
    the picture is the one drawn region by region, bit for bit, at one sun, after the sun moves, and where new
    regions take layers under the new sun; and with an atlas too small for them all (the rest drawn alone). A few
    calls draw them all."""
    import moderngl

    from terrainview.render import world_draw

    natural = SceneSettings(mode="rendered", look="natural", tile=ENDLESS, iterations=7, camera="fly", eye_y=1.2,
                            pitch=12.0, sun_azimuth=120.0, sun_elevation=20.0, seed=5)
    names = {program.glo: name for name, program in renderer.gpu.programs.items()}
    calls: list[str] = []
    render = moderngl.VertexArray.render
    monkeypatch.setattr(moderngl.VertexArray, "render", lambda self, *args, **kwargs:
                        calls.append(names.get(self.program.glo, "")) or render(self, *args, **kwargs))

    def pictures() -> list[np.ndarray]:
        renderer.world.leave()  # atlases, layers and textures made afresh
        calls.clear()
        shown = [_frame(renderer, natural, (192, 108))]
        drawn_by_atlas, alone = calls.count("natural_terrain_atlas"), calls.count("natural_terrain_lod")
        evening = natural.replace(sun_azimuth=250.0, sun_elevation=8.0)
        shown += [_frame(renderer, evening, (192, 108)), _frame(renderer, evening.replace(eye_z=-30.0), (192, 108))]
        return shown + [np.array([drawn_by_atlas, alone])]

    try:
        together = pictures()
        layered = [resident for resident in renderer.world._resident.values() if resident.atlas_layer is not None]
        drawn_by_atlas, alone = together[-1]
        assert 1 <= drawn_by_atlas <= 4 and alone >= 1, "near regions alone, the small far ones in a call or two"
        assert len(layered) > 10 * drawn_by_atlas
        monkeypatch.setattr(world_draw, "ATLAS_LAYERS", 5)
        crowded = pictures()
        assert crowded[-1][1] > alone, "an atlas full: the rest alone"
        monkeypatch.setattr(world_draw, "ATLAS_MAX_SIDE", 0)
        one_by_one = pictures()
        assert one_by_one[-1][0] == 0
    finally:
        renderer.world.leave()
    for picture in range(3):
        np.testing.assert_array_equal(together[picture], one_by_one[picture])
        np.testing.assert_array_equal(crowded[picture], one_by_one[picture])
    assert changed_fraction(together[0], together[1]) > 0.2, "the sun moved"


def test_the_other_looks_and_modes_draw_the_regions_an_atlas_holds(renderer, monkeypatch):
    """Regions keep their atlas layers while the view shows the original look or lines over the same world: those
    draw every region alone, the picture they draw after a natural-look frame that took no layers."""
    from terrainview.render import world_draw

    natural = SceneSettings(mode="rendered", look="natural", tile=ENDLESS, iterations=7, camera="fly", eye_y=1.2,
                            pitch=12.0, seed=5)

    def after_the_natural_look(other: SceneSettings) -> np.ndarray:
        renderer.world.leave()
        _frame(renderer, natural)
        return _frame(renderer, other)

    try:
        for other in (natural.replace(look="original"), natural.replace(mode="lines")):
            layered = after_the_natural_look(other)
            assert any(resident.atlas_layer is not None for resident in renderer.world._resident.values())
            with monkeypatch.context() as patch:
                patch.setattr(world_draw, "ATLAS_MAX_SIDE", 0)
                np.testing.assert_array_equal(layered, after_the_natural_look(other))
    finally:
        renderer.world.leave()


def test_an_atlas_layer_is_given_back_when_its_region_is_left_behind(renderer, monkeypatch):
    """A flight's regions come and go: each layer taken is held by a region drawn, and given back as it goes. Leaving
    the world releases the atlases."""
    from terrainview.render.world_atlas import RegionAtlas

    released = []
    release = RegionAtlas.release
    monkeypatch.setattr(RegionAtlas, "release", lambda self: released.append(self) or release(self))
    natural = SceneSettings(mode="rendered", look="natural", tile=ENDLESS, iterations=6, camera="fly", eye_y=1.5,
                            pitch=10.0)
    try:
        for step in range(6):
            _frame(renderer, natural.replace(eye_z=-7.0 * step, yrot=40.0 * step))
            atlases = renderer.world._atlases
            held = [resident for resident in renderer.world._resident.values() if resident.atlas_layer is not None]
            assert held and sum(atlas.taken for atlas in atlases.values()) == len(held)
            assert len({resident.atlas_layer for resident in held}) == len(held), "a layer each"
        made = list(atlases.values())
    finally:
        renderer.world.leave()
    assert not renderer.world._atlases and released == made


def test_the_world_does_not_repeat_where_the_repeated_surface_does(renderer):
    moved = {"eye_x": ABOVE.eye_x + 2.0}  # one region (one tile) to the east
    repeat = ABOVE.replace(tile=REPEAT, pitch=80.0)
    assert changed_fraction(_frame(renderer, repeat), _frame(renderer, repeat.replace(**moved))) < 0.01
    world = ABOVE.replace(pitch=80.0)
    assert changed_fraction(_frame(renderer, world), _frame(renderer, world.replace(**moved))) > 0.5


def test_a_place_is_drawn_the_same_by_any_renderer_in_any_order(gl_ctx):
    from terrainview.render.renderer import Renderer

    with gl_ctx:  # current on this thread, whichever test ran before
        first, second = Renderer(gl_ctx), Renderer(gl_ctx)
        try:
            ahead = ABOVE.replace(eye_z=-20.0)
            reference = _frame(first, ABOVE)
            _frame(second, ahead)  # the second renderer comes here after being elsewhere
            np.testing.assert_array_equal(_frame(second, ABOVE), reference)
        finally:
            first.release()
            second.release()


def test_a_tiled_shot_of_the_world_draws_every_tile_at_the_whole_images_detail(renderer):
    """F12 draws 512-pixel tiles, a large render or a supersampled shot tiles too: each tile takes the level of
    detail the whole image's regions allow, not its own few regions' (a finer error in some tiles: seams)."""
    from terrainview.render.offscreen import render_pixels

    settings = SceneSettings(mode="rendered", tile=ENDLESS, iterations=8, camera="fly", eye_x=13.3, eye_y=0.94,
                             eye_z=7.1, pitch=10.0, yrot=130.0)
    renderer.update(settings)
    whole = render_pixels(renderer, settings, (320, 180)).astype(int)
    tiled = render_pixels(renderer, settings, (320, 180), tile_side=100).astype(int)
    assert (np.abs(whole - tiled).max(axis=2) > 8).sum() <= 3  # a pixel or two on a tile's edge


def test_a_streaming_frame_draws_what_is_held_and_never_waits_for_the_worker(renderer, monkeypatch):
    from terrainview.render import world_draw

    monkeypatch.setattr(world_draw, "STAND_IN_SECONDS", 0.0)  # the worker's to make (none here)
    world = renderer.world
    world.streaming = True
    try:
        _frame(renderer, ABOVE.replace(seed=77))
        assert world.missing > 0 and not world.cache, "nothing held yet: nothing drawn, nothing made"
        before = world.missing
        world.fill(world_regions.World.of(ABOVE.replace(seed=77)), world.wanted[:3])
        _frame(renderer, ABOVE.replace(seed=77))
        assert 0 < world.missing < before, "the nearest three now drawn"
    finally:
        world.streaming = False


def test_a_streaming_frame_makes_stand_ins_of_land_in_view_for_a_few_milliseconds(renderer, monkeypatch):
    """Land in view with no map: the frame makes coarse stand-ins of it, nearest first, while its time lasts, and
    draws them (the worker, below every other thread, took seconds to while the natural look's frames kept the cores
    busy)."""
    from terrainview.render import world_draw
    from terrainview.scene.world_regions import STAND_IN_DETAIL

    natural = ABOVE.replace(look="natural", seed=78, iterations=8)  # near regions want detail 8: stand-ins coarser
    world = renderer.world
    world.streaming = True
    made, now = [], [0.0]
    fill = world.fill

    def fill_in_a_millisecond(world_, keys, light=False):
        made.extend(keys)
        now[0] += 0.001
        fill(world_, keys, light)

    monkeypatch.setattr(world, "fill", fill_in_a_millisecond)
    monkeypatch.setattr(world_draw, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    try:
        _frame(renderer, natural)
        in_time = round(world_draw.STAND_IN_SECONDS / 0.001)
        assert world.missing > 0 and len(made) == in_time, "a stand-in a millisecond while the frame's time lasts"
        assert all(key.detail == STAND_IN_DETAIL and key in world.cache for key in made)
        assert [(key.x, key.z) for key in made] == [(key.x, key.z) for key in world.wanted[:in_time]], "nearest first"
        assert all(world._resident[(key.x, key.z)].key == key for key in made), "drawn in the frame that made them"
        monkeypatch.setattr(world_draw, "STAND_IN_SECONDS", 1.0)
        _frame(renderer, natural)
        assert world.missing == 0 and len(made) > in_time
        assert all(resident.light is not None for resident in world._resident.values())
    finally:
        world.streaming = False


def test_lines_mode_draws_the_world_too(renderer):
    pixels = _frame(renderer, ABOVE.replace(mode="lines"))
    dark = (pixels.mean(axis=2) < 128).mean()
    assert 0.05 < dark < 0.9 and renderer.world.missing == 0


def test_regions_far_behind_are_dropped_and_their_height_arrays_pooled(renderer):
    _frame(renderer, ABOVE)
    here = set(renderer.world._resident)
    _frame(renderer, ABOVE.replace(eye_z=-60.0))
    assert not here & set(renderer.world._resident), "the regions left behind have no texture any more"
    assert renderer.world._arrays.bytes > 0, "their height arrays are kept for the regions ahead"
    assert len(renderer.world._resident) <= len(renderer.world.wanted)


def test_another_world_takes_the_height_arrays_of_the_last(renderer):
    """A new seed's regions are the same sizes as the last world's: they reuse its arrays, allocating none."""
    def arrays() -> list:
        return [array for resident in renderer.world._resident.values()
                for array in resident.heights.arrays if array is not None]

    _frame(renderer, ABOVE)
    before = arrays()  # the objects themselves: a released array's GL name could be handed out again
    _frame(renderer, ABOVE.replace(seed=9))
    assert before and any(array is old for array in arrays() for old in before)


def test_a_view_over_budget_at_its_coarsest_selects_each_ranges_once(renderer, monkeypatch):
    """A view over the budget however coarse the error (as the natural look's, with over a hundred regions to the
    horizon): once coarser errors' ranges stop changing (MAX_NODE_EXTENT), the same ranges are not selected again."""
    from terrainview.kernels import lod

    monkeypatch.setattr(lod, "TRIANGLE_BUDGET", 500)  # below what the regions in view draw at their coarsest
    _frame(renderer, ABOVE)
    ranges_selected = []
    select = renderer.world._select
    monkeypatch.setattr(renderer.world, "_select",
                        lambda in_view, planes, eye, ranges, *rest: ranges_selected.append(tuple(ranges)) or
                        select(in_view, planes, eye, ranges, *rest))
    _frame(renderer, ABOVE)
    # Here the cap's ranges are already the floor: the coarser tries reuse its selection.
    assert ranges_selected and len(set(ranges_selected)) == len(ranges_selected), "the same ranges selected twice"
    assert len(ranges_selected) == 1, "the cap's ranges are the floor here (else this test shows nothing)"


def test_the_natural_look_lights_each_region_with_its_own_shadows(renderer):
    natural = ABOVE.replace(look="natural", pitch=40.0, eye_y=2.5, sun_elevation=8.0)
    morning = _frame(renderer, natural.replace(sun_azimuth=90.0))
    assert renderer.world.missing == 0
    assert all(resident.light is not None for resident in renderer.world._resident.values()), "every region lit"
    evening = _frame(renderer, natural.replace(sun_azimuth=270.0))
    assert changed_fraction(morning, evening) > 0.3, "the low sun's side lit, the other in shadow"
    np.testing.assert_array_equal(_frame(renderer, natural.replace(sun_azimuth=90.0)), morning)


def test_a_finer_region_map_takes_over_only_once_its_slopes_are_worked_out(renderer, monkeypatch):
    """In the window, a region's finer map is staged while the coarser one keeps drawing, and in the natural look
    takes its place only once its slope map is whole (else its land would be shaded by the broad slope
    meanwhile)."""
    from terrainview.render import world_draw
    from terrainview.scene.world_regions import RegionKey, World

    monkeypatch.setattr(world_draw, "STAND_IN_SECONDS", 0.0)  # the regions' maps made here, as the test says
    natural = ABOVE.replace(look="natural", pitch=40.0, eye_y=2.5)
    world = renderer.world
    world.streaming = True
    try:
        _frame(renderer, natural)  # nothing held yet: the regions it wants
        finer = [key for key in world.wanted if key.detail >= 2]
        coarser = [RegionKey(key.x, key.z, key.detail - 2) for key in finer]
        world_ = World.of(natural)
        world.fill(world_, coarser, light=True)
        _frame(renderer, natural)
        stand_ins = {(key.x, key.z): key for key in coarser}
        assert all(world._resident[place].key == key for place, key in stand_ins.items())
        monkeypatch.setattr(world_draw, "SLOPE_POINTS_PER_FRAME", 0)
        world.fill(world_, finer, light=True)
        for _ in range(3):  # their heights are staged within the upload budget; no slopes worked out
            _frame(renderer, natural)
        assert world._staging and all(world._resident[place].key == key for place, key in stand_ins.items())
        monkeypatch.setattr(world_draw, "SLOPE_POINTS_PER_FRAME", 1 << 30)
        _frame(renderer, natural)  # their slopes worked out after this frame's regions are drawn ...
        assert all(world._resident[place].key == key for place, key in stand_ins.items())
        assert all(staging.bands.slopes_ready for staging in world._staging.values())
        _frame(renderer, natural)  # ... and the next draws them
        assert not world._staging and all(world._resident[(key.x, key.z)].key == key for key in finer)
        assert all(world._resident[(key.x, key.z)].heights.slopes_ready for key in finer)
    finally:
        world.streaming = False


def test_a_change_is_shown_once_a_frame_draws_every_region_with_its_slopes(renderer, monkeypatch):
    """The status line's "change shown after" stops at the first frame that drew every region wanted, lit and with
    its slopes: not the frame that worked the last slopes out after drawing its regions without them."""
    from terrainview.render import world_draw

    monkeypatch.setattr(world_draw, "STAND_IN_SECONDS", 0.0)
    monkeypatch.setattr(world_draw, "SLOPE_POINTS_PER_FRAME", 1 << 30)
    natural = ABOVE.replace(look="natural", pitch=40.0, eye_y=2.5, seed=79)
    world = renderer.world
    world.streaming = True
    try:
        _frame(renderer, natural)  # a new world: the change starts
        world.fill(World.of(natural), world.wanted, light=True)
        _frame(renderer, natural)  # every region drawn, its slopes worked out after
        assert world.shows_all_wanted() and world.change_shown_seconds() is None
        _frame(renderer, natural)
        assert world.change_shown_seconds() is not None
    finally:
        world.streaming = False


def test_the_window_works_out_slope_maps_after_the_regions_are_drawn_and_a_render_before(renderer, monkeypatch):
    """In the window, a frame works out its share of slope maps after its regions are drawn, for the next frames. A
    render is exact: its regions are drawn with their slopes whole."""
    import moderngl

    from terrainview.render import world_draw

    # No stand-ins: what the streaming frames hold does not hang on the machine's speed.
    monkeypatch.setattr(world_draw, "STAND_IN_SECONDS", 0.0)
    natural = ABOVE.replace(look="natural", pitch=40.0, eye_y=2.5, iterations=8)  # near maps drawn alone
    names = {program.glo: name for name, program in renderer.gpu.programs.items()}
    drawn: list[str] = []
    from terrainview.render.gpu import HeightBands

    render, advance = moderngl.VertexArray.render, HeightBands.advance_slopes

    def advance_noted(*args) -> int:
        done = advance(*args)
        if done:
            drawn.append("slopes")
        return done

    monkeypatch.setattr(moderngl.VertexArray, "render",
                        lambda self, *args, **kwargs: drawn.append(names[self.program.glo])
                        or render(self, *args, **kwargs))
    monkeypatch.setattr(HeightBands, "advance_slopes", advance_noted)
    regions = {"natural_terrain", "natural_terrain_lod", "natural_terrain_atlas"}

    def first_region() -> int:
        return next(index for index, name in enumerate(drawn) if name in regions)

    _frame(renderer, natural)  # a render: every map made and its slopes worked out, all before the regions
    assert "slopes" in drawn[:first_region()] and "slopes" not in drawn[first_region():]
    world = renderer.world
    world.leave()
    world.streaming = True
    try:
        _frame(renderer, natural)  # nothing held: the window's worker would make them
        world.fill(World.of(natural), world.wanted, light=True)
        drawn.clear()
        _frame(renderer, natural)
        assert "slopes" in drawn[first_region():] and "slopes" not in drawn[:first_region()], drawn
    finally:
        world.streaming = False


def test_a_finer_map_on_its_way_is_let_go_once_it_is_not_the_one_to_show(renderer, monkeypatch):
    """The eye went on before a region's finer map was staged whole, and the region now wants a coarser one: the
    staging stops, and its height arrays and slope map go back to the pool. A flight in the natural look had kept up
    to seven detail-12 maps half staged, 128 MiB each, and allocated new textures in frames for want of them."""
    from terrainview.render import world_draw
    from terrainview.scene.world_regions import RegionKey

    monkeypatch.setattr(world_draw, "STAND_IN_SECONDS", 0.0)  # the regions' maps made here, as the test says
    natural = ABOVE.replace(look="natural", pitch=40.0, eye_y=2.5)
    world = renderer.world
    world.streaming = True
    try:
        _frame(renderer, natural)
        finer = [key for key in world.wanted if key.detail >= 2]
        world_ = World.of(natural)
        world.fill(world_, [RegionKey(key.x, key.z, key.detail - 2) for key in finer], light=True)
        _frame(renderer, natural)
        monkeypatch.setattr(world_draw, "SLOPE_POINTS_PER_FRAME", 1)  # a row a frame: the finer maps stay staged
        world.fill(world_, finer, light=True)
        _frame(renderer, natural)
        _frame(renderer, natural)
        staged = {place: staging.key for place, staging in world._staging.items()}
        assert staged and any(staging.bands.slopes is not None for staging in world._staging.values())
        world.cache.limit_bytes = 0  # the cache keeps only what it must: the maps drawn and those on their way
        _frame(renderer, natural)
        assert {place: staging.key for place, staging in world._staging.items()} == staged
        pooled = world._arrays.bytes
        moved = natural.replace(eye_x=2.0)  # farther from some of them: they want one detail less
        _frame(renderer, moved)
        wanted = {(key.x, key.z): key.detail for key in world.wanted}
        passed = [place for place, key in staged.items() if wanted.get(place, key.detail) < key.detail]
        assert passed, "the eye left some of them wanting less (else this test shows nothing)"
        assert not set(passed) & set(world._staging), "their finer maps let go"
        assert all(world._staging[place].key == key for place, key in staged.items()
                   if wanted.get(place) == key.detail), "those still wanted staged on"
        assert world._arrays.bytes > pooled, "their textures kept for the next maps"
    finally:
        world.streaming = False


def test_a_picture_of_the_world_brings_back_the_same_place(tmp_path, call_main):
    from PIL import Image

    place = ("--mode", "rendered", "--tile", "endless", "--world-octaves", "3", "--iterations", "6", "--camera",
             "fly", "--eye-x", "37.5", "--eye-z", "-90", "--eye-y", "3", "--pitch", "30", "--size", "96x54")
    status, _, err = call_main("render", "-o", tmp_path / "shot.png", *place)
    assert status == 0, err
    status, _, err = call_main("render", "-o", tmp_path / "again.png", "--scene", tmp_path / "shot.png")
    assert status == 0, err
    with Image.open(tmp_path / "shot.png") as shot, Image.open(tmp_path / "again.png") as again:
        assert shot.text["terrainview.tile"] == "endless" and shot.text["terrainview.world_octaves"] == "3"
        np.testing.assert_array_equal(np.asarray(shot), np.asarray(again))


def test_the_sea_floor_is_the_worlds_own_ground_around_the_eye():
    world_ = world_regions.World(seed=5, h=0.7, height_scale=1.0, octaves=2)
    heights, west, north, side = world_regions.sea_floor(world_, 3, -2)
    assert (west, north, side) == (-1.0, -6.0, 8.0) and heights.shape == (513, 513)
    from terrainview.kernels import world

    # World x = 2 c / 2**7 - 1: the floor's point (row 300, column 400) is lattice point ((west + 1) * 64 + 400, ...).
    column, row = int((west + 1) * 64) + 400, int((north + 1) * 64) + 300
    assert heights[300, 400] == world.world_heights(7, column, row, 1, 1, 5, 0.7, 1.0, 2)[0, 0]


def test_the_sea_over_the_world_is_shallow_and_foams_along_its_shores(renderer, monkeypatch):
    """Above a coast: the real floor gives light shallows and foam; a floor far down, deep water all over."""
    from terrainview.kernels import world

    # The sea at the median height of the land in view (x 2.5 to 3.5, z 1.5 to 2.5): half land, half sea.
    ground = world.world_heights(6, 112, 80, 33, 33, 0, 0.7, 1.0, 2)
    coast = SceneSettings(mode="rendered", look="natural", tile=ENDLESS, iterations=7, camera="fly", eye_x=3.0,
                          eye_y=1.2, eye_z=2.0, pitch=80.0, water_level=float(np.median(ground)),
                          sun_elevation=50.0)
    real = _frame(renderer, coast)
    made = world_regions.sea_floor

    def far_down(*args):
        heights, *place = made(*args)
        return (heights - 5.0, *place)

    monkeypatch.setattr(world_regions, "sea_floor", far_down)
    renderer.world.release()  # forget the floor made
    deep = _frame(renderer, coast)
    assert changed_fraction(real, deep) > 0.05
    assert real.mean() > deep.mean() + 3, "shallows and foam are lighter than deep water"
