"""Level of detail (CDLOD): node selection checked exactly on the CPU, and frames drawn with it on small images."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from pyglm import glm

from terrainview.kernels import fractal, lod
from terrainview.render import lod_draw
from terrainview.render.lod_draw import LodTerrain
from terrainview.render.renderer import FIELD_OF_VIEW_Y, Frame, projection_matrix, tile_reach
from terrainview.scene import camera
from terrainview.scene.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]

ASPECT = 16 / 9
# Looking down on the surface from about 0.8 above it: several levels meet inside the frame.
FROM_ABOVE = {"mode": "rendered", "ytrans": 0.0, "ztrans": -0.8, "pitch": 80.0}


@functools.cache
def surface(iterations: int) -> lod.LodSurface:
    return lod.LodSurface.from_heights(fractal.diamond_square(iterations, 0))


def select(settings: SceneSettings, image_height: int = 720, lines: bool = False) -> lod.Selection:
    """The selection the renderer would make for ``settings`` in an image ``image_height`` tall."""
    terrain = LodTerrain()
    terrain.surface = surface(settings.iterations)
    selection = terrain.select(settings, camera.view_matrix(settings), projection_matrix(ASPECT), image_height,
                               FIELD_OF_VIEW_Y, lines, camera.tile_layout(settings, tile_reach(lines)))
    assert selection is not None
    return selection


def lod_distance(pyramid: lod.LodSurface, eye: np.ndarray, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The distance that picks the level at world (x, z), as lod.py and lod.glsl define it: horizontal, with the
    eye's height above the slab of heights."""
    return np.sqrt((x - eye[0]) ** 2 + (z - eye[2]) ** 2 + pyramid.eye_height(float(eye[1])) ** 2)


def cell_levels(selection: lod.Selection, tiles: int, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """Per tile and finest cell: how many selected regions cover it (count) and the level drawn there."""
    cells = 1 << iterations
    count = np.zeros((tiles * tiles, cells, cells), dtype=int)
    level = np.full((tiles * tiles, cells, cells), -1)
    roots = lod.tile_roots(tiles)
    for rows, quads in ((selection.whole, selection.patch), (selection.quarters, selection.patch // 2)):
        for centre_x, centre_z, column, row, node_level, _ in rows:
            tile = int(np.flatnonzero((roots[:, 0] == centre_x) & (roots[:, 1] == centre_z))[0])
            side = quads << int(node_level)
            column, row = int(column), int(row)
            count[tile, row:row + side, column:column + side] += 1
            level[tile, row:row + side, column:column + side] = node_level
    return count, level


def cells_outside(planes: np.ndarray, heights: np.ndarray, tiles: int) -> np.ndarray:
    """Per tile and cell: the cell's bounding box lies wholly outside one of the planes (reference test)."""
    cells = heights.shape[0] - 1
    low = np.minimum.reduce([heights[:-1, :-1], heights[1:, :-1], heights[:-1, 1:], heights[1:, 1:]])
    high = np.maximum.reduce([heights[:-1, :-1], heights[1:, :-1], heights[:-1, 1:], heights[1:, 1:]])
    size = 2.0 / cells
    outside = np.zeros((tiles * tiles, cells, cells), dtype=bool)
    for tile, (centre_x, centre_z) in enumerate(lod.tile_roots(tiles)):
        x0 = centre_x - 1.0 + size * np.arange(cells)[None, :]
        z0 = centre_z - 1.0 + size * np.arange(cells)[:, None]
        for a, b, c, d in planes:
            x = x0 + size if a > 0 else x0
            y = high if b > 0 else low
            z = z0 + size if c > 0 else z0
            outside[tile] |= a * x + b * y + c * z + d < 0.0
    return outside


# --- selection (no GL) -----------------------------------------------------------------------------------


@pytest.mark.parametrize("view_settings", [{}, {"yrot": 37.0, "pitch": 25.0}, FROM_ABOVE])
def test_selection_covers_the_visible_area_once(view_settings):
    iterations, tiles = 8, 3
    settings = SceneSettings(iterations=iterations, tile=tiles, **{"mode": "rendered", **view_settings})
    selection = select(settings, image_height=360)
    count, level = cell_levels(selection, tiles, iterations)
    assert count.max() == 1, "no cell is drawn twice"
    view, projection = camera.view_matrix(settings), projection_matrix(ASPECT)
    planes = lod.frustum_planes(np.array(projection * view), 7.0, np.array(view))
    heights = fractal.diamond_square(iterations, 0)
    outside = cells_outside(planes, heights, tiles)
    assert np.all(outside[count == 0]), "every cell left out is outside the view (or beyond the fog)"
    assert count.sum() > 0
    # Neighbours differ by at most one level, across tile edges too (tiles are laid out row by row).
    grid = level.reshape(tiles, tiles, *level.shape[1:]).transpose(0, 2, 1, 3).reshape(
        tiles * level.shape[1], tiles * level.shape[2])
    for a, b in ((grid[:, 1:], grid[:, :-1]), (grid[1:, :], grid[:-1, :])):
        both = (a >= 0) & (b >= 0)
        assert np.abs(a - b)[both].max() <= 1
    # Where levels k and k + 1 meet, the finer side has fully morphed and the coarser has not begun: the
    # shared border is the same line on both sides.
    eye = np.array(glm.inverse(view) * glm.vec4(0.0, 0.0, 0.0, 1.0))[:3]
    cell = 2.0 / (1 << iterations)
    zones = selection.morph_zones()
    borders = 0
    for levels in (grid, grid.T):  # borders between columns, then between rows (x and z swapped)
        rows, columns = np.nonzero((levels[:, 1:] >= 0) & (levels[:, :-1] >= 0) & (levels[:, 1:] != levels[:, :-1]))
        finer = np.minimum(levels[rows, columns], levels[rows, columns + 1]).astype(int)
        borders += len(finer)
        for corner in (0, 1):  # both ends of each shared cell edge
            along, across = -tiles + (rows + corner) * cell, -tiles + (columns + 1) * cell
            x, z = (across, along) if levels is grid else (along, across)
            distance = lod_distance(surface(iterations), eye, x, z)
            assert np.all(distance >= zones[finer, 1]) and np.all(distance <= zones[finer + 1, 0])
    assert borders > 0


def test_fog_end_limits_rendered_mode_but_not_lines():
    settings = SceneSettings(mode="rendered", iterations=10, tile=8)
    rendered, lines = select(settings), select(settings, lines=True)
    view = np.array(camera.view_matrix(settings))

    def nearest_depths(selection: lod.Selection) -> np.ndarray:
        rows = np.concatenate([selection.whole, selection.quarters])
        sides = np.where(np.arange(len(rows)) < len(selection.whole), selection.patch, selection.patch // 2)
        sides = sides * 2.0 ** rows[:, 4] * surface(10).cell
        corners = rows[:, 2:4] * surface(10).cell - 1.0 + rows[:, :2]
        depth = [min(-(view[2] @ [x, 0.0, z, 1.0]) for x in (cx, cx + s) for z in (cz, cz + s))
                 for (cx, cz), s in zip(corners, sides, strict=True)]
        return np.array(depth)

    assert nearest_depths(rendered).max() <= 7.0 + 1e-6, "no node lies wholly past the fog's end"
    assert nearest_depths(lines).max() > 8.0, "lines mode has no fog: farther nodes are drawn"


def test_node_count_stays_bounded_as_iterations_and_tiles_grow():
    triangles = {}
    for iterations in (8, 10, 12):
        for tiles in (1, 3, 8):
            settings = SceneSettings(mode="rendered", iterations=iterations, tile=tiles)
            if lod.full_mesh_triangles(iterations, tiles) <= lod.FULL_MESH_TRIANGLES:
                continue
            triangles[iterations, tiles] = select(settings).triangles()
            assert select(settings, lines=True).segments() <= lod.SEGMENT_BUDGET
    assert max(triangles.values()) <= lod.TRIANGLE_BUDGET
    # Sixteen times the cells and 64 times the tiles: the drawn triangles grow by far less.
    assert triangles[12, 8] <= 4 * triangles[8, 3]


def test_a_view_over_budget_is_drawn_with_a_larger_error():
    # An eye just above the ground and a tiny error would select millions of triangles.
    settings = SceneSettings(mode="rendered", iterations=12, tile=8, ytrans=-0.2, ztrans=-0.5, lod_error=0.5)
    assert select(settings).triangles() <= lod.TRIANGLE_BUDGET
    assert select(settings.replace(mode="lines"), lines=True).segments() <= lod.SEGMENT_BUDGET
    assert select(settings).triangles() > lod.TRIANGLE_BUDGET / 4, "only as much coarser as the budget needs"


def budget_search(counts, cap: float = 8.0, limit: float = 60_000, lines: bool = False, ranges_of=None):
    """finest_within_budget over a made-up count per error: (the error chosen, the errors tried in order).

    The ranges for the steps' growth are 1 / error (none held back by a floor) unless ``ranges_of`` is given.
    """
    tried = []

    def select(error):
        tried.append(error)
        return error, counts(error)

    ranges_of = ranges_of or (lambda error: np.array([1.0 / error, np.inf]))
    growth = functools.partial(lod_draw.least_step_growth, ranges_of)
    return lod_draw.finest_within_budget(select, cap, limit, lines, growth), tried


def test_the_budget_search_coarsens_until_the_view_fits():
    chosen, tried = budget_search(lambda error: 1e7 / error ** 2)  # 156k at the cap, 69k at 12, 31k at 18
    assert chosen == pytest.approx(18.0) and tried == pytest.approx([8.0, 12.0, 18.0])


def test_the_budget_search_stops_coarsening_where_coarser_draws_no_less():
    """Past the ranges' floor a coarser error selects the same nodes (many endless regions): one try shows it."""
    chosen, tried = budget_search(lambda error: max(100_000.0, 1e7 / error ** 2))
    assert tried == pytest.approx([8.0, 12.0, 18.0])  # 156k, 100k, then 100k again: no less
    assert chosen == pytest.approx(12.0)


def test_the_budget_search_keeps_coarsening_up_to_its_retries_while_the_count_drops():
    chosen, tried = budget_search(lambda error: 1e9 / error ** 2)  # never fits, always drops
    assert len(tried) == lod_draw.MAX_RETRIES and chosen == pytest.approx(tried[-1])


def test_the_budget_search_takes_the_finest_error_that_fits():
    chosen, tried = budget_search(lambda error: 3e5 / error ** 2)  # 4.7k at the cap: 60k fits down to 2.24 px
    assert chosen == pytest.approx(8.0 / 1.5 ** 3) and len(tried) <= 4  # 2.37 px; 1.58 px would draw 120k


def test_the_budget_search_tries_no_step_that_would_be_over_the_budget():
    """A step finer is taken to draw LEAST_STEP_GROWTH times as much where the ranges grow by the whole step: from
    39k of 60k at the cap the step finer goes untried; from 23k it is tried (53k), and the one after it not."""
    chosen, tried = budget_search(lambda error: 2.5e6 / error ** 2)
    assert chosen == 8.0 and tried == [8.0]
    chosen, tried = budget_search(lambda error: 1.5e6 / error ** 2)
    assert chosen == pytest.approx(8.0 / 1.5) and tried == pytest.approx([8.0, 8.0 / 1.5])


def test_the_budget_search_tries_a_step_whose_ranges_are_held_back_by_their_floor():
    """Ranges at their floor at the cap grow by less than the step (here 1.125x): 40k at the cap is 51k a step
    finer, which fits and is taken."""
    def ranges_of(error):
        return np.array([max(1.0 / 6.0, 1.0 / error), np.inf])

    chosen, tried = budget_search(lambda error: 1.44e6 * ranges_of(error)[0] ** 2, ranges_of=ranges_of)
    assert tried[:2] == pytest.approx([8.0, 8.0 / 1.5]) and chosen == pytest.approx(8.0 / 1.5)


def test_the_budget_search_through_once_per_ranges_selects_no_error_twice():
    """A count falling faster than 1 / error**2: the estimate overshoots, a coarser step fits, and the walk comes
    back to the first step, which once_per_ranges answers from memory."""
    selected = []

    def select(ranges):
        selected.append(float(ranges[0]))
        return float(ranges[0]), 4e6 / float(ranges[0]) ** 4  # 977 at the cap; 60k fits down to 2.86 px

    chosen = lod_draw.finest_within_budget(lod_draw.once_per_ranges(lambda error: np.array([error]), select), 8.0,
                                           60_000, False, lambda error: lod_draw.LEAST_STEP_GROWTH)[1]
    assert chosen == pytest.approx(8.0 / 1.5 ** 2)  # 3.56 px; 2.37 px would draw 127k
    assert len(selected) == len(set(selected)) == 5, selected  # the cap, then steps 5, 4, 3 and 2 (3 again: memory)


def test_a_tiles_view_over_budget_at_its_coarsest_selects_each_ranges_once(monkeypatch):
    """An eye low over a large surface, over the budget however coarse: past the ranges' floor (MAX_NODE_EXTENT)
    coarser errors give the same ranges, and those are not selected again."""
    monkeypatch.setattr(lod, "TRIANGLE_BUDGET", 500)  # below what the view draws at its coarsest
    ranges_selected = []
    select_nodes = lod.select_nodes
    monkeypatch.setattr(lod, "select_nodes", lambda surface, roots, planes, eye, ranges:
                        ranges_selected.append(tuple(ranges)) or select_nodes(surface, roots, planes, eye, ranges))
    for error in (0.5, 40.0):  # coarsening from a fine cap to the floor; a cap past the floor
        ranges_selected.clear()
        select(SceneSettings(mode="rendered", iterations=12, tile=8, ytrans=-0.2, ztrans=-0.5, lod_error=error))
        assert len(set(ranges_selected)) == len(ranges_selected), ranges_selected
    assert len(ranges_selected) == 1, "the cap's ranges are the floor (else this test shows nothing)"


def test_a_taller_output_image_selects_finer_nodes():
    settings = SceneSettings(mode="rendered", iterations=10, tile=3)
    small, large = select(settings, image_height=720), select(settings, image_height=2160)
    assert large.triangles() > 2 * small.triangles()
    assert np.concatenate([large.whole, large.quarters])[:, 4].min() < \
        np.concatenate([small.whole, small.quarters])[:, 4].min()


def test_ranges_double_per_level_and_morph_in_the_last_part():
    ranges = lod.lod_ranges(surface(10), 720, FIELD_OF_VIEW_Y, 4.0)
    assert np.isinf(ranges[-1])
    np.testing.assert_allclose(ranges[1:-1] / ranges[:-2], 2.0)
    selection = select(SceneSettings(mode="rendered", iterations=10, tile=3))
    zones = selection.morph_zones()
    finite = np.isfinite(selection.ranges)
    np.testing.assert_allclose(zones[finite, 0], 0.7 * selection.ranges[finite])
    assert np.all(zones[finite, 1] < selection.ranges[finite])


def test_pyramid_bounds_match_a_plain_reference():
    heights = fractal.diamond_square(7, 3)
    pyramid = lod.LodSurface.from_heights(heights)
    for level in range(pyramid.levels + 1):
        side = pyramid.patch << level
        nodes = (heights.shape[0] - 1) // side
        for b in range(nodes):
            for a in range(nodes):
                block = heights[b * side:(b + 1) * side + 1, a * side:(a + 1) * side + 1]
                index = pyramid.offsets[level] + b * nodes + a
                assert pyramid.low[index] == block.min() and pyramid.high[index] == block.max()


@pytest.mark.parametrize("bands", [[129], [1, 128], [40, 40, 40, 9], [64, 0, 65]])
def test_a_pyramid_built_a_band_of_rows_at_a_time_is_the_whole_maps(bands):
    """PyramidRows takes a map's rows in bands of any size (the endless world's worker makes large maps so)."""
    heights = fractal.diamond_square(7, 3)
    whole = lod.LodSurface.from_heights(heights)
    rows = lod.PyramidRows(128)
    first = 0
    for band in bands:
        rows.add(heights[first:first + band])
        first += band
    built = rows.surface()
    for name in ("low", "high", "offsets"):
        np.testing.assert_array_equal(getattr(built, name), getattr(whole, name))
    assert (built.iterations, built.patch, built.levels, built.bottom, built.top) == (
        whole.iterations, whole.patch, whole.levels, whole.bottom, whole.top)


def test_a_pyramid_takes_no_rows_beyond_its_map_nor_is_built_short_of_them():
    for cells in (0, 48):
        with pytest.raises(ValueError, match="2\\*\\*n cells"):
            lod.PyramidRows(cells)
    heights = fractal.diamond_square(5, 1)
    rows = lod.PyramidRows(32)
    with pytest.raises(ValueError, match="do not fit"):
        rows.add(heights[:, :-1])  # a column short
    rows.add(heights[:30])
    with pytest.raises(ValueError, match="30 of the map's 33 rows"):
        rows.surface()
    with pytest.raises(ValueError, match="do not fit"):
        rows.add(heights[:4])  # one row too many: the kernel would write past its arrays
    rows.add(heights[30:])
    assert rows.surface().top == heights.max()


def test_full_mesh_is_used_within_budget_and_when_off():
    terrain = LodTerrain()
    terrain.surface = surface(8)
    args = (camera.view_matrix(SceneSettings()), projection_matrix(ASPECT), 720, FIELD_OF_VIEW_Y)

    def full_mesh(settings: SceneSettings) -> bool:
        lines = settings.mode == "lines"
        return terrain.select(settings, *args, lines, camera.tile_layout(settings, tile_reach(lines))) is None

    assert full_mesh(SceneSettings(mode="rendered", iterations=8, tile=1))
    assert not full_mesh(SceneSettings(mode="rendered", iterations=8, tile=3))
    assert full_mesh(SceneSettings(mode="rendered", iterations=8, tile=3, lod="off"))
    # The original's largest surface, iterations 8 on one tile, is drawn exactly in lines mode too.
    assert full_mesh(SceneSettings(mode="lines", iterations=8, tile=1))
    assert not full_mesh(SceneSettings(mode="lines", iterations=8, tile=2))


# --- frames ------------------------------------------------------------------------------------------------


def draw(renderer, settings: SceneSettings, size: tuple[int, int]) -> tuple[np.ndarray, object]:
    from terrainview.render.offscreen import render_pixels

    renderer.update(settings)
    stats: list = []
    pixels = render_pixels(renderer, settings, size, stats=stats)
    return pixels, stats[0]


def test_no_cracks_between_levels(renderer):
    settings = SceneSettings(iterations=8, tile=3, **FROM_ABOVE)
    size = (320, 180)
    renderer.update(settings)
    red = np.zeros((4, 4, 3), dtype=np.uint8)
    red[..., 0] = 255
    renderer.gpu.upload_surface_texture(red)  # one flat colour: any other pixel is the sky through a crack
    pixels, stats = draw(renderer, settings, size)
    selection = renderer.lod.select(settings, camera.view_matrix(settings), Frame(size).perspective(), size[1],
                                    FIELD_OF_VIEW_Y, False, camera.tile_layout(settings, tile_reach(False)))
    levels = np.concatenate([selection.whole, selection.quarters])[:, 4]
    assert len(set(levels.tolist())) >= 2, "the view holds a transition between levels"
    assert stats.terrain < stats.terrain_full
    reddish = (pixels[..., 0] > 200) & (pixels[..., 1] < 60) & (pixels[..., 2] < 60)
    assert reddish.all(), f"{(~reddish).sum()} pixels show the background through the surface"


@pytest.mark.parametrize("mode", ["rendered", "lines"])
@pytest.mark.parametrize("tile", [3, "repeat"])
def test_a_frame_lays_out_its_tiles_once(renderer, monkeypatch, mode, tile):
    """Selection, the full mesh's uniforms and the water share one camera.tile_layout a frame."""
    settings = SceneSettings(**{**FROM_ABOVE, "mode": mode}, iterations=8, tile=tile, water_level=0.0)
    renderer.update(settings)
    calls = []
    tile_layout = camera.tile_layout
    monkeypatch.setattr(camera, "tile_layout", lambda *arguments: calls.append(arguments) or tile_layout(*arguments))
    _, stats = draw(renderer, settings, (160, 90))
    assert stats.terrain < stats.terrain_full, "drawn with level of detail"
    assert calls == [(settings, tile_reach(mode == "lines"))]


def node_set(selection: lod.Selection) -> set[tuple]:
    return {("whole", *row) for row in selection.whole.tolist()} | {("quarter", *row) for row in
                                                                      selection.quarters.tolist()}


def test_morphing_keeps_frames_continuous_where_the_selection_changes(renderer):
    base = SceneSettings(mode="rendered", iterations=8, tile=3, ytrans=-0.3)
    size = (320, 180)
    step = 0.001
    # Find an eye position where a small step changes the selected nodes: without morphing, they would pop.
    for ztrans in np.arange(-3.0, -2.0, 0.0013):
        a, b = base.replace(ztrans=float(ztrans)), base.replace(ztrans=float(ztrans) + step)
        if node_set(select(a, image_height=size[1])) != node_set(select(b, image_height=size[1])):
            break
    else:
        pytest.fail("no selection change found")

    def block_differences(lod_setting: str) -> np.ndarray:
        first, _ = draw(renderer, a.replace(lod=lod_setting), size)
        second, _ = draw(renderer, b.replace(lod=lod_setting), size)
        difference = np.abs(first.astype(int) - second.astype(int)).mean(axis=2)
        return difference[:176, :320].reshape(22, 8, 40, 8).mean(axis=(1, 3))

    # The full mesh's frames move as much as the eye's step makes them; the level of detail's no more.
    detailed, full = block_differences("on"), block_differences("off")
    assert detailed.max() <= 1.25 * full.max() + 1.0, "no part of the frame jumps"
    assert detailed.mean() <= 1.25 * full.mean() + 0.2


def test_lod_matches_the_full_mesh_at_iterations_10(renderer):
    settings = SceneSettings(mode="rendered", iterations=10, tile=1)
    size = (320, 180)
    detailed, stats = draw(renderer, settings, size)
    full, full_stats = draw(renderer, settings.replace(lod="off"), size)
    assert stats.terrain < full_stats.terrain == full_stats.terrain_full == lod.full_mesh_triangles(10, 1)
    assert np.abs(detailed.astype(int) - full.astype(int)).mean() <= 2.0


@pytest.mark.parametrize(("shading", "texture"), [("none", "teximage"), ("slope", "blend")])
def test_finest_level_everywhere_is_the_full_mesh_pixel_for_pixel(renderer, shading, texture, monkeypatch):
    monkeypatch.setattr(lod_draw, "MAX_RETRIES", 1)  # keep the finest level even over the triangle budget
    settings = SceneSettings(mode="rendered", iterations=8, tile=3, shading=shading, texture=texture,
                             water_level=0.0)
    size = (240, 135)
    full, full_stats = draw(renderer, settings.replace(lod="off"), size)
    finest, stats = draw(renderer, settings.replace(lod_error=0.01), size)
    assert full_stats.terrain == lod.full_mesh_triangles(8, 3) and stats.terrain < full_stats.terrain
    assert np.array_equal(finest, full)


def test_finest_level_lines_are_the_full_grid_pixel_for_pixel(renderer, monkeypatch):
    # Antialiased lines blend: a line shared by two nodes and drawn twice would come out darker. (One tile: the
    # full mesh draws the seams between tiles twice, as the original did.)
    monkeypatch.setattr(lod_draw, "MAX_RETRIES", 1)
    monkeypatch.setattr(lod, "FULL_MESH_SEGMENTS", 0)
    settings = SceneSettings(mode="lines", iterations=7, tile=1, antialias=True)
    size = (240, 135)
    full, full_stats = draw(renderer, settings.replace(lod="off"), size)
    finest, stats = draw(renderer, settings.replace(lod_error=0.01), size)
    assert 0 < stats.terrain <= full_stats.terrain == lod.full_mesh_segments(7, 1)
    assert np.abs(finest.astype(int) - full.astype(int)).max() <= 1


@pytest.mark.parametrize("mode", ["lines", "rendered"])
def test_endless_finest_level_draws_every_tile_the_full_mesh_draws(renderer, monkeypatch, mode):
    # Tiles at the corners of the view lie farther than the fog's end or the far plane in plain distance, yet
    # are on screen: selection must take the same ring of tiles as the full mesh.
    monkeypatch.setattr(lod_draw, "MAX_RETRIES", 1)
    monkeypatch.setattr(lod, "FULL_MESH_SEGMENTS", 0)
    monkeypatch.setattr(lod, "FULL_MESH_TRIANGLES", 0)
    settings = SceneSettings(mode=mode, iterations=4, tile="repeat", camera="fly", antialias=False)
    size = (320, 180)
    full, _ = draw(renderer, settings.replace(lod="off"), size)
    finest, stats = draw(renderer, settings.replace(lod_error=0.01), size)
    assert 0 < stats.terrain < stats.terrain_full
    assert np.array_equal(finest, full)


def test_lines_mode_draws_the_same_surface_with_fewer_segments(renderer):
    settings = SceneSettings(mode="lines", iterations=8, tile=3, antialias=False)
    size = (320, 180)
    detailed, stats = draw(renderer, settings, size)
    full, full_stats = draw(renderer, settings.replace(lod="off"), size)
    assert full_stats.terrain == lod.full_mesh_segments(8, 3) > stats.terrain > 0
    assert set(np.unique(detailed).tolist()) == {0, 255}
    ink, full_ink = detailed.mean(axis=2) < 128, full.mean(axis=2) < 128
    # The same outline: the rows and columns holding lines agree to a few pixels.
    for axis in (0, 1):
        rows, full_rows = np.flatnonzero(ink.any(axis=axis)), np.flatnonzero(full_ink.any(axis=axis))
        assert abs(rows[0] - full_rows[0]) <= 3 and abs(rows[-1] - full_rows[-1]) <= 3
    assert 0.05 < ink.mean() < full_ink.mean()


@pytest.mark.gl  # renders offscreen through the CLI
def test_render_prints_the_terrain_triangles(tmp_path, call_main):
    status, out, _ = call_main("render", "-o", tmp_path / "shot.png", "--size", "160x90", "--mode", "rendered",
                               "--iterations", "8", "--tile", "3")
    assert status == 0
    assert out.strip().startswith("wrote") and out.strip().endswith("of 1.2M triangles)"), out


@pytest.mark.gl  # renders offscreen through the CLI
def test_render_says_its_drawn_count_is_summed_over_the_tiles(tmp_path, call_main):
    """A 4400-pixel-wide drawing is two tiles, each drawing the whole 2112-segment grid it shows part of."""
    status, out, _ = call_main("render", "-o", tmp_path / "shot.png", "--size", "1100x100", "--supersample", "4",
                               "--mode", "lines", "--iterations", "5", "--tile", "1")
    assert status == 0
    assert out.strip().endswith("4224 of 2112 line segments over 2 tiles)"), out


@pytest.mark.parametrize(("option", "value", "fragment"), [("--lod-error", "0", "--lod-error: "),
                                                           ("--lod-error", "65", "--lod-error: "),
                                                           ("--lod", "maybe", "--lod")])
def test_bad_lod_options_stop_with_one_line(tmp_path, call_main, usage_error, option, value, fragment):
    output = tmp_path / "shot.png"
    status, _, err = call_main("render", "-o", output, "--size", "32x32", option, value)
    usage_error(status, err, fragment)
    assert not output.exists()


@pytest.mark.parametrize("mode", ["rendered", "lines"])
def test_a_tiled_shot_selects_like_the_whole_image(renderer, mode):
    from terrainview.render.offscreen import render_pixels

    # A low eye and a small error: over budget, so the error grows, and it must grow alike in every tile.
    settings = SceneSettings(mode=mode, iterations=10, tile=3, ytrans=-0.25, lod_error=0.1)
    renderer.update(settings)
    whole = render_pixels(renderer, settings, (200, 150))
    tiled = render_pixels(renderer, settings, (200, 150), tile_side=64)
    different = np.any(whole != tiled, axis=-1)
    assert different.mean() < 0.002, f"{different.sum()} pixels differ"


def test_level_of_detail_keeps_the_gl_object_count_flat(renderer):
    sizes = (200, 120)
    counts = []
    for iterations, tile, error in ((8, 3, 8.0), (9, 2, 1.0), (8, 8, 0.3), (8, 3, 8.0), (9, 2, 1.0), (8, 8, 0.3)):
        for mode in ("rendered", "lines"):
            draw(renderer, SceneSettings(mode=mode, iterations=iterations, tile=tile, lod_error=error), sizes)
        counts.append(renderer.gpu.live_objects)
    assert counts[3:] == counts[:3], "instance buffers are reused or replaced, never added"


def test_a_frame_takes_the_finest_error_its_budget_allows_never_coarser_than_the_cap():
    settings = SceneSettings(mode="rendered", iterations=7, tile=3)
    chosen = select(settings, image_height=480)
    at_cap = lod.select_nodes(surface(7), lod.tile_roots(3), lod.frustum_planes(
        np.array(projection_matrix(ASPECT) * camera.view_matrix(settings), dtype=np.float64), tile_reach(False),
        np.array(camera.view_matrix(settings), dtype=np.float64)), np.array(camera.eye_position(settings)),
        lod.lod_ranges(surface(7), 480, FIELD_OF_VIEW_Y, settings.lod_error))
    assert at_cap.triangles() < chosen.triangles() <= lod.TRIANGLE_BUDGET, "finer than the cap, within budget"
    assert chosen.ranges[0] > at_cap.ranges[0], "finer: each level reaches farther"
    capped = select(settings.replace(lod_error=6.0), image_height=480)
    assert capped.ranges[0] >= lod.lod_ranges(surface(7), 480, FIELD_OF_VIEW_Y, 6.0)[0], "never coarser than a cap"
    lines = select(settings.replace(mode="lines"), image_height=480, lines=True)
    pixels_per_unit = 480 / (2.0 * np.tan(np.radians(FIELD_OF_VIEW_Y) / 2.0))
    cell = 2.0 / (1 << 7)
    assert lines.ranges[0] <= cell * pixels_per_unit / 4.0 + 1e-9, "a wireframe's cells stay four pixels apart"


def random_fly_view(rng: np.random.Generator, iterations: int, spread: float, heights: tuple[float, ...],
                    highest_pitch: float) -> tuple[np.ndarray, np.ndarray]:
    """A fly camera over the endless world within ``spread`` units of the origin, at one of ``heights``, any heading,
    pitched from -30 degrees to ``highest_pitch``: its frustum's planes (out to 14 units) and its eye."""
    settings = SceneSettings(camera="fly", tile="endless", iterations=iterations,
                             eye_x=float(rng.uniform(-spread, spread)), eye_z=float(rng.uniform(-spread, spread)),
                             eye_y=float(rng.choice(heights)), yrot=float(rng.uniform(0, 360)),
                             pitch=float(rng.uniform(-30, highest_pitch)))
    view = camera.view_matrix(settings)
    planes = lod.frustum_planes(np.array(projection_matrix(16 / 9) * view, dtype=np.float64), 14.0,
                                np.array(view, dtype=np.float64))
    return planes, np.array(camera.eye_position(settings))


@pytest.mark.parametrize("iterations", [4, 6, 8])
def test_regions_selected_together_equal_each_selected_alone(iterations):
    """select_regions decides the regions outside the view or drawn whole in one pass: every region's selection
    is select_nodes's own, bit for bit, over views from near the ground to high above, some regions held coarser
    than the frame's iterations (a far one drawn from its stand-in map; at 6, some held no finer than their top
    level), and regions of one patch (4: a single level)."""
    from terrainview.scene import world_regions
    from terrainview.scene.world_regions import RegionKey, World

    world_ = World(5, 0.7, 1.0, 2)
    coarser = 0 if iterations == 4 else 3  # held up to two levels coarser (a region is one patch at 4)
    keys = [RegionKey(x, z, iterations - (abs(x) + abs(z)) % max(coarser, 1)) for x in range(-6, 7)
            for z in range(-6, 7)]  # out to 13 units: past the top level's range, whatever the error
    pyramids = [world_regions.region_pyramid(world_regions.region_map(world_, key)) for key in keys]
    bottom = min(float(p.low.min()) for p in pyramids)
    top = max(float(p.high.max()) for p in pyramids)
    surfaces = [lod.LodSurface.of_region(p, iterations, float(p.low[-1]), float(p.high[-1])) for p in pyramids]
    roots = np.array([world_regions.region_centre(key.x, key.z) for key in keys])
    rng = np.random.default_rng(11)
    decided = set()
    for _ in range(12):
        planes, eye = random_fly_view(rng, iterations, 4.0, (0.3, 1.0, 4.0), 60.0)
        # A coarse error's top range is about 8 units (MAX_NODE_EXTENT): regions past it are drawn coarser still.
        for error, coarser_top in ((1.0, False), (16.0, False), (16.0, True)):
            ranges = lod.grid_ranges(iterations, 720, FIELD_OF_VIEW_Y, error, coarser_top=coarser_top)
            check_regions(surfaces, roots, planes, eye, ranges, bottom, top, decided)
    assert decided == ({"none", "whole", "coarser"} if iterations == 4 else {"none", "whole", "coarser", "nodes"}), \
        decided
    if iterations == 6:
        assert any(surface.finest == surface.levels for surface in surfaces), "some held no finer than the top"


def whole_pyramid_of_region(coarse, iterations: int, bottom: float, top: float):
    """A plain reference for LodSurface.of_region: the full pyramid's every level laid out, the coarse map's from
    ``finest`` up, the slab's heights below (never read)."""
    shift = iterations - coarse.iterations
    levels = iterations - (lod.PATCH_QUADS.bit_length() - 1)
    counts = [((1 << iterations) // (lod.PATCH_QUADS << level)) ** 2 for level in range(levels + 1)]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    low = np.full(offsets[-1], bottom, dtype=np.float32)
    high = np.full(offsets[-1], top, dtype=np.float32)
    for level in range(coarse.levels + 1):
        start, end = coarse.offsets[level], coarse.offsets[level + 1]
        low[offsets[level + shift]:offsets[level + shift + 1]] = coarse.low[start:end]
        high[offsets[level + shift]:offsets[level + shift + 1]] = coarse.high[start:end]
    return lod.LodSurface(iterations, lod.PATCH_QUADS, levels, low, high, offsets, bottom, top, finest=shift)


def test_a_region_held_coarser_shares_its_maps_pyramid_and_selects_as_the_whole_pyramid_would():
    """of_region keeps only the coarse map's own levels (those below ``finest`` are never read): every selection is
    the one of the whole pyramid laid out level by level, bit for bit, from near the ground to high above."""
    from terrainview.scene import world_regions
    from terrainview.scene.world_regions import RegionKey, World

    iterations, world_ = 9, World(3, 0.7, 1.0, 2)
    rng = np.random.default_rng(5)
    for detail in (5, 7, 9):
        coarse = world_regions.region_pyramid(world_regions.region_map(world_, RegionKey(0, 0, detail)))
        bottom, top = float(coarse.low[-1]) - 0.1, float(coarse.high[-1]) + 0.1
        held = lod.LodSurface.of_region(coarse, iterations, bottom, top)
        assert held.low is coarse.low and held.high is coarse.high, "the coarse map's own arrays"
        whole = whole_pyramid_of_region(coarse, iterations, bottom, top)
        for level in range(held.finest, held.levels + 1):  # each level's nodes where the whole pyramid has them
            for ours, theirs in ((held.low, whole.low), (held.high, whole.high)):
                np.testing.assert_array_equal(ours[held.offsets[level]:held.offsets[level + 1]],
                                              theirs[whole.offsets[level]:whole.offsets[level + 1]])
        finest_drawn = False
        for _ in range(40):
            planes, eye = random_fly_view(rng, iterations, 3.0, (0.2, 0.8, 3.0), 70.0)
            ranges = lod.grid_ranges(iterations, 720, FIELD_OF_VIEW_Y, float(rng.choice([1.0, 4.0])))
            chosen, expected = (lod.select_nodes(surface, np.zeros((1, 2)), planes, eye, ranges, outer_edges=0)
                                for surface in (held, whole))
            for field in ("whole", "quarters"):
                np.testing.assert_array_equal(getattr(chosen, field), getattr(expected, field))
            finest_drawn |= bool(np.any(chosen.whole[:, 4] == held.finest))
        assert finest_drawn, f"detail {detail}: some views select nodes at the finest level held"


def check_regions(surfaces, roots, planes, eye, ranges, bottom, top, decided: set) -> None:
    """select_regions against select_nodes region by region, noting what each region came to in ``decided``."""
    together = lod.select_regions(surfaces, roots, planes, eye, ranges, bottom, top)
    for surface, root, chosen in zip(surfaces, roots, together, strict=True):
        alone = lod.select_nodes(dataclasses.replace(surface, bottom=bottom, top=top), root, planes, eye, ranges,
                                 outer_edges=0)
        for field in ("whole", "quarters", "ranges", "eye"):
            np.testing.assert_array_equal(getattr(chosen, field), getattr(alone, field))
        assert chosen.patch == alone.patch
        top_only = len(alone.whole) == 1 and not len(alone.quarters) and alone.whole[0, 4] == surface.levels
        coarser = len(alone.quarters) == 1 and not len(alone.whole) and alone.quarters[0, 4] == surface.levels + 1
        decided.add("none" if not len(alone.whole) + len(alone.quarters) else "whole" if top_only
                    else "coarser" if coarser else "nodes")
