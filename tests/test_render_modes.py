"""What each render type draws, checked on small offscreen frames against SPEC.md's facts."""

from __future__ import annotations

import moderngl
import numpy as np
import pytest
from helpers import changed_fraction, correlation
from reference import SPEC_TEXIMAGE_COLORS

from terrainview.scene.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]
pytestmark = pytest.mark.gl

FOG = np.array([round(0.84 * 255), round(0.87 * 255), 255])


def dark_mask(pixels: np.ndarray) -> np.ndarray:
    return pixels.astype(int).mean(axis=2) < 128


def grey_level(pixels: np.ndarray) -> np.ndarray:
    return pixels.astype(int).mean(axis=2)


def extent(mask: np.ndarray) -> tuple[int, int, int, int]:
    """(first row, last row, first column, last column) of the True pixels."""
    rows, columns = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    assert rows.size, "nothing drawn"
    return rows[0], rows[-1], columns[0], columns[-1]


def block_blur(mask: np.ndarray, block: int = 4) -> np.ndarray:
    height, width = (side // block * block for side in mask.shape)
    return mask[:height, :width].reshape(height // block, block, width // block, block).mean(axis=(1, 3))


# --- lines ------------------------------------------------------------------------------------------------


def draw_segment(gl_ctx, ends: list[tuple[float, float]], antialias: bool, line_width: float = 6.0,
                 projection: np.ndarray | None = None, size: tuple[int, int] = (128, 64)) -> np.ndarray:
    """One segment of the lines program between two points given in pixels, black on white: uint8 RGB, row 0 at
    the bottom (GL's order), so pixel (column, row) has its centre at (column + 0.5, row + 0.5)."""
    with gl_ctx:  # current on this thread: a test before may have left another context current
        return _draw_segment(gl_ctx, ends, antialias, line_width, projection, size)


def _draw_segment(gl_ctx, ends, antialias, line_width, projection, size) -> np.ndarray:
    from terrainview.render.gpu import load_program

    width, height = size
    program = load_program(gl_ctx, "lines", PROFILE=1)
    program["view"].write(np.eye(4, dtype="f4").tobytes())
    matrix = np.eye(4) if projection is None else projection
    program["projection"].write(np.ascontiguousarray(matrix.T, dtype="f4").tobytes())  # GL reads columns
    program["viewport_size"].value = size
    program["line_width"].value = line_width
    program["antialias"].value = antialias
    program["line_color"].value = (0.0, 0.0, 0.0)
    program["tiles"].value = 1
    program["tile_spacing"].value = 0.0
    positions = np.array(ends, dtype="f4") / [width, height] * 2 - 1
    buffer = gl_ctx.buffer(positions.astype("f4").tobytes())
    vertex_array = gl_ctx.vertex_array(program, [(buffer, "2f", "in_position")])
    framebuffer = gl_ctx.simple_framebuffer(size)
    try:
        with gl_ctx.scope(framebuffer, moderngl.BLEND):  # gives back the framebuffer and the flags
            framebuffer.clear(1.0, 1.0, 1.0, 1.0)
            gl_ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            vertex_array.render(moderngl.LINES)
            pixels = np.frombuffer(framebuffer.read(), np.uint8).reshape(height, width, 3)
        assert gl_ctx.error == "GL_NO_ERROR"
    finally:
        for item in (vertex_array, buffer, framebuffer, program):
            item.release()
    return pixels


@pytest.mark.parametrize("antialias", [False, True])
def test_a_line_segment_covers_its_width_and_square_caps_and_nothing_more(gl_ctx, antialias):
    """A segment 6 pixels wide from (20.25, 30.25) to (100.25, 30.25) covers the pixels whose centres lie in its
    rectangle with half-width square caps, x in [17.25, 103.25] and y in [27.25, 33.25]; antialiasing adds a
    one-pixel ramp along its sides only."""
    pixels = draw_segment(gl_ctx, [(20.25, 30.25), (100.25, 30.25)], antialias)
    covered = pixels.astype(int).mean(axis=2) < 250
    full = pixels.astype(int).mean(axis=2) < 5
    columns = np.arange(17, 103)
    assert np.array_equal(np.flatnonzero(covered.any(axis=0)), columns), "square caps, not antialiased"
    assert np.array_equal(np.flatnonzero(full.any(axis=0)), columns)
    if antialias:  # coverage 0.75 on row 27 (centre 2.75 from the line), 0.25 on row 33 (3.25 from it)
        assert np.array_equal(np.flatnonzero(covered.any(axis=1)), np.arange(27, 34))
        assert np.array_equal(np.flatnonzero(full.any(axis=1)), np.arange(28, 33))
        assert abs(pixels[27, 60, 0] - 64) <= 2 and abs(pixels[33, 60, 0] - 191) <= 2
    else:
        assert np.array_equal(np.flatnonzero(covered.any(axis=1)), np.arange(27, 33))
        assert covered.sum() == full.sum() == columns.size * 6


def test_a_diagonal_segment_covers_its_rotated_rectangle(gl_ctx):
    start, end = np.array([20.25, 8.25]), np.array([60.25, 48.25])
    covered = draw_segment(gl_ctx, [tuple(start), tuple(end)], antialias=False).astype(int).mean(axis=2) < 128
    rows, columns = np.mgrid[0:64, 0:128]
    centres = np.stack([columns + 0.5, rows + 0.5], axis=-1) - start
    length = np.linalg.norm(end - start)
    direction = (end - start) / length
    along = centres @ direction
    across = centres @ np.array([-direction[1], direction[0]])
    inside = (along >= -3) & (along <= length + 3) & (np.abs(across) <= 3)
    # Pixels whose centres lie within a hair of the rectangle's edge may go either way.
    margin = np.minimum.reduce([np.abs(along + 3), np.abs(along - length - 3), np.abs(np.abs(across) - 3)])
    assert inside.sum() > 300
    assert not np.any((covered != inside) & (margin > 0.02))


# Projections that set clip z from NDC x, so that a segment running right leaves the depth range at x = 0.5.
BEYOND_FAR = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0.5], [0, 0, 0, 1]], dtype=float)  # z = x + 0.5
BEFORE_NEAR = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [-1, 0, 0, -0.5], [0, 0, 0, 1]], dtype=float)  # z = -x - 0.5


@pytest.mark.parametrize("projection", [BEYOND_FAR, BEFORE_NEAR], ids=["far plane", "near plane"])
def test_a_segment_leaving_the_depth_range_ends_where_it_leaves(gl_ctx, projection):
    """From x = 20.25 to 120.25 pixels in a 128-pixel viewport, the segment leaves the depth range at NDC x = 0.5
    (pixel 96): it is drawn to there and its cap, x = 99, not to its end and not dropped."""
    pixels = draw_segment(gl_ctx, [(20.25, 30.25), (120.25, 30.25)], antialias=False, projection=projection)
    covered = pixels.astype(int).mean(axis=2) < 128
    assert np.array_equal(np.flatnonzero(covered.any(axis=0)), np.arange(17, 99))


# A 5 x 5 grid with a bump; the views below see its rows and columns run every way on the screen.
GRID_HEIGHTS = np.array([[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.1, 0.2, 0.1, 0.0], [0.0, 0.2, 0.5, 0.2, 0.0],
                         [0.0, 0.1, 0.2, 0.1, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
GRID_VIEW = SceneSettings(mode="lines", iterations=2, tile=1, lod="off", antialias=False, ytrans=0.0, ztrans=-3.0,
                          pitch=55.0, yrot=20.0)
GRID_VIEWS = {
    "aliased": GRID_VIEW,
    "antialiased": GRID_VIEW.replace(antialias=True),
    # Nearer: the grid reaches past the image's edges, where the GL cuts the triangles.
    "past the image's edges": GRID_VIEW.replace(antialias=True, ztrans=-1.3),
    # Along a diagonal from low down: far rows and columns nearly line up on the screen.
    "grazing": GRID_VIEW.replace(antialias=True, pitch=4.0, yrot=45.0, ytrans=-0.3, ztrans=-3.5),
    # From inside the grid: points behind the eye are outside the depth range, their lines cut at the near plane.
    "through the near plane": GRID_VIEW.replace(antialias=True, camera="fly", eye_x=0.2, eye_y=0.6, eye_z=0.1,
                                                pitch=40.0, yrot=10.0),
}


def grid_segments_in_pixels(scene: SceneSettings, size: tuple[int, int]) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                                                   int]:
    """GRID_HEIGHTS' row and column segments in an image of ``size``: (start, end) in pixels, y up, of each one's
    part within the depth range; and how many segments were cut (or left out) there."""
    from pyglm import glm

    from terrainview.render.renderer import Frame
    from terrainview.scene import camera

    transform = Frame(size).perspective() * camera.view_matrix(scene)
    side = GRID_HEIGHTS.shape[0]

    def clip(column: int, row: int) -> np.ndarray:
        x, z = -1.0 + 2.0 * column / (side - 1), -1.0 + 2.0 * row / (side - 1)
        return np.array(transform * glm.vec4(x, float(GRID_HEIGHTS[row, column]), z, 1.0))

    ends = [(clip(column, row), clip(column + 1, row)) for row in range(side) for column in range(side - 1)]
    ends += [(clip(column, row), clip(column, row + 1)) for row in range(side - 1) for column in range(side)]
    segments, cut = [], 0
    for a, b in ends:
        for plane_sign in (1.0, -1.0):  # the near plane (z >= -w), the far plane (z <= w)
            da, db = a[3] + plane_sign * a[2], b[3] + plane_sign * b[2]
            if da < 0 and db < 0:
                break
            if da < 0 or db < 0:
                cut += 1
                a, b = (a + da / (da - db) * (b - a), b) if da < 0 else (a, b + db / (db - da) * (a - b))
        else:
            segments.append(tuple((point[:2] / point[3] * 0.5 + 0.5) * size for point in (a, b)))
            continue
        cut += 1
    return segments, cut


@pytest.mark.parametrize("view", GRID_VIEWS)
def test_a_grid_vertex_draws_its_two_lines_as_two_segments_drawn_alone_would(renderer, gl_ctx, view):
    """Lines mode draws a grid vertex's segments to the next column and the next row as one triangle grown around
    both, or apart where they nearly line up on the screen, leave the depth range or are long. Whichever, each
    pixel comes out as if every segment were drawn alone: inked where its centre lies in a segment's rectangle
    (6 pixels wide, square caps), and antialiased, the grey of each segment's coverage blended in turn."""
    from terrainview.render.offscreen import render_pixels

    size = (320, 180)
    scene = GRID_VIEWS[view]
    renderer.update(scene)
    renderer.gpu.upload_surface(GRID_HEIGHTS)
    with gl_ctx.query(primitives=True) as query:
        grey = render_pixels(renderer, scene, size, line_scale=6.0)[::-1].astype(int).mean(axis=2)
    rows, columns = np.mgrid[0:size[1], 0:size[0]]
    centres = np.stack([columns + 0.5, rows + 0.5], axis=-1)
    uncovered, margin = np.ones(grey.shape), np.full(grey.shape, np.inf)
    segments, cut = grid_segments_in_pixels(scene, size)
    for start, end in segments:
        length = float(np.linalg.norm(end - start))
        direction = (end - start) / length
        along = (centres - start) @ direction
        across = np.abs((centres - start) @ np.array([-direction[1], direction[0]]))
        coverage = np.clip(3.5 - across, 0.0, 1.0) if scene.antialias else (across <= 3).astype(float)
        uncovered *= 1.0 - np.where((along >= -3) & (along <= length + 3), coverage, 0.0)
        # Pixels whose centres lie within a hair of a hard edge may go either way.
        margin = np.minimum.reduce([margin, np.abs(along + 3), np.abs(along - length - 3)]
                                   + ([] if scene.antialias else [np.abs(across - 3)]))
    expected = 255.0 * uncovered
    assert (expected < 128).sum() > 2000
    assert np.abs(grey - expected)[margin > 0.02].max() <= 4, "a pixel unlike the segments drawn alone"
    # 16 vertices start two lines, 8 one: 24 triangles when every pair shares one, 40 when none does.
    assert 24 <= query.primitives < 40, "some vertices' two lines share a triangle, not every one's"
    assert (cut > 0) == (view == "through the near plane")


def test_a_dense_grid_sets_up_about_half_as_many_triangles_as_it_draws_segments(renderer, gl_ctx):
    from terrainview.kernels import lod
    from terrainview.render.offscreen import render_pixels

    scene = SceneSettings(mode="lines", iterations=6, tile=1, lod="off")
    renderer.update(scene)
    with gl_ctx.query(primitives=True) as query:
        render_pixels(renderer, scene, (320, 180))
    assert query.primitives < 0.55 * lod.full_mesh_segments(6, 1)


def test_lines_black_on_white(frame):
    pixels = frame(SceneSettings(mode="lines", iterations=4))
    white = np.all(pixels == 255, axis=2).mean()
    dark = dark_mask(pixels).mean()
    assert white > 0.85, "the background is white"
    assert 0.01 < dark < 0.15, "the mesh is drawn in dark lines"
    assert np.all(pixels[..., 0] == pixels[..., 1]) and np.all(pixels[..., 1] == pixels[..., 2]), "no colour"


def test_lines_inverted_white_on_black(frame):
    normal = frame(SceneSettings(mode="lines", iterations=4))
    inverted = frame(SceneSettings(mode="lines", iterations=4, invert=True))
    assert np.all(inverted == 0, axis=2).mean() > 0.85, "the background is black"
    light = grey_level(inverted) >= 128
    assert 0.01 < light.mean() < 0.15
    # The same lines, colours swapped: inverted is the negative of the normal frame.
    assert np.abs(inverted.astype(int) - (255 - normal.astype(int))).max() <= 1


def test_antialiased_lines_have_grey_levels_and_aliased_do_not(frame):
    smooth = grey_level(frame(SceneSettings(mode="lines", iterations=4, antialias=True)))
    hard = frame(SceneSettings(mode="lines", iterations=4, antialias=False))
    intermediate = ((smooth > 8) & (smooth < 247)).mean()
    assert intermediate > 0.005, "antialiased edges blend into the background"
    assert set(np.unique(hard).tolist()) == {0, 255}, "--no-aa draws pure black on pure white"
    assert dark_mask(hard).mean() > 0.01


def test_tiles_draw_more_of_the_surface(frame):
    one = frame(SceneSettings(mode="lines", iterations=4, tile=1))
    three = frame(SceneSettings(mode="lines", iterations=4, tile=3))
    assert dark_mask(three).sum() > 2 * dark_mask(one).sum()
    _, _, left_one, right_one = extent(dark_mask(one))
    _, _, left_three, right_three = extent(dark_mask(three))
    assert left_three < left_one and right_three > right_one, "the copies sit beside the centre one"


@pytest.mark.parametrize("change", [{"yrot": 30.0}, {"ztrans": -2.0}, {"ytrans": -0.8}])
def test_camera_changes_the_image(frame, change):
    base = SceneSettings(mode="lines", iterations=4)
    before, after = frame(base), frame(base.replace(**change))
    assert changed_fraction(before, after) > 0.02


def test_height_scale_changes_lines(frame):
    full = frame(SceneSettings(mode="lines", iterations=4, height_scale=1.0))
    half = frame(SceneSettings(mode="lines", iterations=4, height_scale=0.5))
    assert changed_fraction(full, half) > 0.01
    top_full, bottom_full, _, _ = extent(dark_mask(full))
    top_half, bottom_half, _, _ = extent(dark_mask(half))
    assert bottom_half - top_half < bottom_full - top_full, "a flatter surface looks flatter"


def test_more_iterations_keep_the_coarse_shape(frame):
    """One seed gives one terrain at every resolution (SPEC): iterations 6 and 7 look alike when blurred,
    other seeds do not."""
    size = (160, 90)

    def blurred(**changes):
        pixels = frame(SceneSettings(mode="lines", iterations=6, seed=0).replace(**changes), size)
        return pixels, block_blur(dark_mask(pixels))

    six_pixels, six = blurred()
    seven_pixels, seven = blurred(iterations=7)
    assert changed_fraction(six_pixels, seven_pixels) > 0.005, "iteration 7 adds detail"
    same_seed = correlation(six, seven)
    other_seeds = [correlation(six, blurred(seed=seed)[1]) for seed in (1, 2, 4)]
    assert same_seed > 0.95
    assert max(other_seeds) < same_seed - 0.1
    assert np.mean(other_seeds) < 0.75


# --- 1D ---------------------------------------------------------------------------------------------------


def test_1d_polyline_spans_x_minus_one_to_one(renderer, frame):
    width, height = 320, 180
    settings = SceneSettings(mode="1d", iterations=5)
    pixels = frame(settings, (width, height))
    dark = dark_mask(pixels)
    assert np.all(pixels == 255, axis=2).mean() > 0.95, "white background"
    top, bottom, left, right = extent(dark)
    # Orthographic -aspect..aspect: x = -1..1 covers the middle 1/aspect of the width.
    assert abs(left - (width - height) / 2) <= 2 and abs(right - (width + height) / 2) <= 2
    assert np.all(dark[:, left:right + 1].any(axis=0)), "one unbroken polyline"
    # y = -1..1 covers the height: the drawn rows follow the profile's values.
    profile = renderer.arrays.surface.value
    assert profile.shape == (2 ** 5 + 1,) and profile[0] == profile[-1] == 0.0
    assert abs(top - (1 - profile.max()) / 2 * height) <= 2
    assert abs(bottom - (1 - profile.min()) / 2 * height) <= 2


def test_1d_tiles_along_x_and_height_scale(frame):
    width, height = 400, 100  # aspect 4: x = -1..1 is columns 150..250
    one = dark_mask(frame(SceneSettings(mode="1d", iterations=5, tile=1), (width, height)))
    two = dark_mask(frame(SceneSettings(mode="1d", iterations=5, tile=2), (width, height)))
    _, _, left, right = extent(one)
    assert abs(left - 150) <= 2 and abs(right - 250) <= 2
    _, _, left, right = extent(two)
    assert abs(left - 100) <= 2 and abs(right - 300) <= 2, "two segments side by side, 2 units apart"

    size = (320, 180)
    full = dark_mask(frame(SceneSettings(mode="1d", iterations=5, height_scale=1.0), size))
    half = dark_mask(frame(SceneSettings(mode="1d", iterations=5, height_scale=0.5), size))
    top_full, bottom_full, _, _ = extent(full)
    top_half, bottom_half, _, _ = extent(half)
    assert abs((bottom_half - top_half) - (bottom_full - top_full) / 2) <= 3


# --- clouds -----------------------------------------------------------------------------------------------


def test_clouds_colouring(frame):
    pixels = frame(SceneSettings(mode="clouds", cloud_iterations=5)).astype(int)
    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    assert np.all(np.abs(blue - 0.9 * 255) <= 1), "blue = 0.9 everywhere, the quad fills the window"
    assert np.array_equal(red, green)
    assert red.min() >= 0.4 * 255 - 1 and red.max() <= 0.9 * 255 + 1
    # Deviations beyond +-0.2 clamp: both ends of the medium-blue-to-white range appear.
    assert red.min() <= 0.45 * 255 and red.max() >= 0.85 * 255


def test_clouds_nearest_filtering(frame):
    """5 cloud iterations are 33 texels across: a 160-pixel frame shows blocks of equal colour."""
    pixels = frame(SceneSettings(mode="clouds", cloud_iterations=5))
    row = pixels[45, :, 0].astype(int)
    assert len(np.unique(row)) <= 34
    assert np.count_nonzero(np.diff(row)) <= 33


# --- teximage ---------------------------------------------------------------------------------------------


def test_teximage_bands_in_a_power_of_two_square(frame):
    width, height = 320, 180
    pixels = frame(SceneSettings(mode="teximage", teximage_iterations=6), (width, height)).astype(int)
    side = 128  # the largest power of two that fits 180
    x0, y0 = (width - side) // 2, (height - side) // 2
    square = pixels[y0:y0 + side, x0:x0 + side]
    outside = np.ones((height, width), bool)
    outside[y0:y0 + side, x0:x0 + side] = False
    assert np.all(pixels[outside] == 0), "black outside the square"
    assert np.all(square.sum(axis=2) > 0), "the square is filled"

    red, green, blue = (square[..., i].astype(float) for i in range(3))
    greenish = (green > red + 3) & (green > blue + 3)
    greyish = (np.abs(red - green) <= 2) & (blue >= red)
    red_over_blue = red / np.maximum(blue, 1.0)
    middle = greyish & (red_over_blue < 0.935)  # (0.55, 0.55, 0.6) lit: r/b = 0.917
    top = greyish & (red_over_blue >= 0.94)  # (0.95, 0.95, 1.0) lit, clamped at 1: r/b >= 0.95
    for name, band in (("bottom (green)", greenish), ("middle (grey)", middle), ("top (white)", top)):
        assert band.mean() > 0.03, f"the {name} band is missing"
    assert (greenish | greyish).mean() > 0.9


@pytest.mark.parametrize("texture", ["teximage", "blend"])
def test_teximage_mode_is_black_around_its_square_over_a_frame_drawn_before(renderer, texture):
    """The square is drawn over what the framebuffer held (the window's last frame): black around it, whether the
    teximage's triangles or a CPU-made texture fill it."""
    from terrainview.render.renderer import Frame

    size = (96, 64)
    framebuffer = renderer.ctx.simple_framebuffer(size)
    try:
        for settings in (SceneSettings(mode="rendered", iterations=4, texture=texture),
                         SceneSettings(mode="teximage", iterations=4, texture=texture, teximage_iterations=5)):
            renderer.update(settings)
            renderer.draw(settings, framebuffer, Frame(size))
        pixels = np.frombuffer(framebuffer.read(), dtype=np.uint8).reshape(size[1], size[0], 3)
    finally:
        framebuffer.release()
    side = 64
    outside = np.ones(size[::-1], bool)
    outside[:, (size[0] - side) // 2:(size[0] + side) // 2] = False
    assert np.all(pixels[outside] == 0)


def test_teximage_lit_flat_shading(frame):
    """Ambient 0.5 + diffuse: one band shows many brightness levels, none darker than half its colour."""
    pixels = frame(SceneSettings(mode="teximage", teximage_iterations=6), (320, 180)).astype(int)
    square = pixels[26:154, 96:224]
    green = square[(square[..., 1] > square[..., 0] + 3) & (square[..., 1] > square[..., 2] + 3)]
    assert len(np.unique(green[:, 1])) > 5
    assert green[:, 1].min() >= 0.4 * 0.5 * 255 - 3


# --- rendered ---------------------------------------------------------------------------------------------


def test_rendered_sky_fog_and_textured_surface(frame):
    width, height = 160, 90
    pixels = frame(SceneSettings(mode="rendered", iterations=5, teximage_iterations=6), (width, height))
    pixels = pixels.astype(int)
    is_fog = np.abs(pixels - FOG).max(axis=2) <= 1
    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]

    assert is_fog[-height // 10:].all(), "below the sky pyramid: the fog colour it was cleared to"
    top = slice(0, height // 4)
    # Clouds run from medium blue to white (r = g = b = 0.9 at the brightest), so never redder than blue.
    assert np.all(blue[top] >= red[top]) and (blue[top] - red[top]).mean() > 20, "the sky above is blue"
    assert not is_fog[top].any(), "the clouds show through the sky's fog"
    assert len(np.unique(red[top])) > 10

    centre = pixels[height * 4 // 10:height * 6 // 10, width // 4:width * 3 // 4]
    not_fog = ~(np.abs(centre - FOG).max(axis=2) <= 2)
    assert not_fog.mean() > 0.5, "the surface fills the centre"
    assert len(np.unique(centre.reshape(-1, 3), axis=0)) > 100, "textured"
    greenish = (green > red + 5) & (green > blue + 5)
    assert greenish.sum() > 20, "the teximage's low band textures the surface"
    centre_red, centre_green, centre_blue = (centre[..., i] for i in range(3))
    greyish = (np.abs(centre_red - centre_green) <= 8) & (centre_blue >= centre_red) & not_fog
    assert greyish.mean() > 0.2, "the teximage's grey and white bands"


def test_rendered_tiles_and_camera(frame):
    base = SceneSettings(mode="rendered", iterations=4, teximage_iterations=6)
    one, three = frame(base), frame(base.replace(tile=3))
    assert changed_fraction(one, three) > 0.1
    fog_one = (np.abs(one.astype(int) - FOG).max(axis=2) <= 1).mean()
    fog_three = (np.abs(three.astype(int) - FOG).max(axis=2) <= 1).mean()
    assert fog_three < fog_one, "more surface, less bare fog"
    assert changed_fraction(one, frame(base.replace(yrot=45.0))) > 0.05
    assert changed_fraction(one, frame(base.replace(ztrans=-2.0))) > 0.05


def test_rendered_nearest_differs_from_linear(frame):
    base = SceneSettings(mode="rendered", iterations=4, teximage_iterations=6)
    assert changed_fraction(frame(base), frame(base.replace(linear=False))) > 0.05


def test_tiles_meet_edge_to_edge(frame):
    """Tiles are exactly 2 units apart (SPEC): seen from above, the grid of 2 x 2 tiles of 4 x 4 cells has 9
    evenly spaced columns of lines, the shared edges drawn once, with no gap or overlap between tiles."""
    flat_from_above = SceneSettings(mode="lines", iterations=2, tile=2, height_scale=1e-6, pitch=80.0, ytrans=0.0,
                                    ztrans=-5.0, antialias=False)
    dark = dark_mask(frame(flat_from_above, (320, 180)))
    rows = np.flatnonzero(dark.sum(axis=1) < 0.5 * dark.sum(axis=1).max())  # rows between horizontal lines
    inside = rows[(rows > extent(dark)[0]) & (rows < extent(dark)[1])]
    assert inside.size > 20
    for row in inside:
        edges = np.flatnonzero(np.diff(np.concatenate([[0], dark[row].astype(int), [0]])))
        centres = (edges[::2] + edges[1::2] - 1) / 2
        assert len(centres) == 9, (row, centres)
        spacing = np.diff(centres)
        assert spacing.max() - spacing.min() <= 2.0, (row, spacing)


def test_teximage_bands_have_the_spec_colours(renderer):
    """Each third of the teximage's height range has SPEC's colour, lit: every texel of a cell whose corners lie
    in one band is that band's colour times one light factor, so its colour has that band's proportions."""
    settings = SceneSettings(mode="teximage", teximage_iterations=8, seed=5)
    renderer.update(settings)
    heights = renderer.arrays.teximage.value
    texture = renderer.gpu.surface_texture()
    rgb = np.frombuffer(texture.read(), dtype=np.uint8).reshape(texture.height, texture.width, 3)[::-1]
    low, high = float(heights.min()), float(heights.max())
    band = np.digitize(heights, [low + (high - low) / 3.0, low + 2.0 * (high - low) / 3.0])
    corners = np.stack([band[:-1, :-1], band[1:, :-1], band[:-1, 1:], band[1:, 1:]])
    whole_cell = (corners == corners[0]).all(axis=0)
    for index, colour in enumerate(SPEC_TEXIMAGE_COLORS):
        texels = rgb[whole_cell & (corners[0] == index)].astype(float)
        texels = texels[(texels.max(axis=1) < 250) & (texels.min(axis=1) > 20)]  # neither clipped nor too dark
        assert len(texels) > 200, index
        proportions = (texels / texels.sum(axis=1, keepdims=True)).mean(axis=0)
        np.testing.assert_allclose(proportions, np.array(colour) / sum(colour), atol=0.003, err_msg=str(index))


def test_teximage_mode_is_crisp_at_any_size(frame):
    """The teximage's triangles are drawn straight into the square at the window's resolution, flat-shaded as
    the original drew them: magnified 4 times, most neighbouring pixels are exactly equal (one flat triangle),
    where a magnified texture would blend neighbouring texels into gradients."""
    pixels = frame(SceneSettings(mode="teximage", teximage_iterations=8), (1024, 1024)).astype(int)
    same_right = (pixels[:, 1:] == pixels[:, :-1]).all(axis=2).mean()
    same_below = (pixels[1:] == pixels[:-1]).all(axis=2).mean()
    assert min(same_right, same_below) > 0.6, (same_right, same_below)


# --- the surface fog, pinned ----------------------------------------------------------------------------------

FOG_START, FOG_END = 2.0, 7.0  # the original's glFog distances (SPEC): eye-space depth, linear in between
FOG_GREEN = 0.87  # the fog colour's green; the surface below is pure red, so green is all fog


def ground_depths(settings: SceneSettings, size: tuple[int, int]) -> np.ndarray:
    """The eye-space depth at which each row's centre pixel meets the plane y = 0 (NaN where it looks above it)."""
    from pyglm import glm

    from terrainview.render.renderer import FIELD_OF_VIEW_Y
    from terrainview.scene import camera

    inverse = glm.inverse(camera.view_matrix(settings))
    eye = inverse * glm.vec4(0.0, 0.0, 0.0, 1.0)
    width, height = size
    half = np.tan(np.radians(FIELD_OF_VIEW_Y) / 2)
    x = (2 * (width // 2 + 0.5) / width - 1) * half * width / height
    depths = np.full(height, np.nan)
    for row in range(height):
        direction = inverse * glm.vec4(x, (1 - 2 * (row + 0.5) / height) * half, -1.0, 0.0)  # depth 1 per step
        if direction.y < 0:
            depths[row] = -eye.y / direction.y
    return depths


def test_the_surface_fog_starts_and_ends_where_the_original_s_did(renderer):
    """Over a flat red plane, each pixel's share of fog is (depth - start) / (end - start), clamped."""
    from terrainview.render.offscreen import render_pixels

    settings = SceneSettings(mode="rendered", tile="repeat", camera="fly", height_scale=0.0001, iterations=6,
                             eye_x=0.3, eye_y=0.6, eye_z=0.2, pitch=-12.0)
    size = (96, 240)
    renderer.update(settings)
    renderer.gpu.upload_surface_texture(np.full((4, 4, 3), (255, 0, 0), dtype=np.uint8))
    pixels = render_pixels(renderer, settings, size)
    depths = ground_depths(settings, size)
    ground = ~np.isnan(depths) & (depths < 12.0)  # the land: within the endless tiles' reach
    fog_share = pixels[:, size[0] // 2, 1] / 255.0 / FOG_GREEN
    expected = np.clip((depths - FOG_START) / (FOG_END - FOG_START), 0.0, 1.0)
    assert (depths[ground] < FOG_START - 0.3).any() and (depths[ground] > FOG_END).any(), "both ends in view"
    np.testing.assert_allclose(fog_share[ground], expected[ground], atol=0.02)


def test_the_last_pass_draws_the_finished_map_and_earlier_ones_less(tmp_path, call_main, usage_error):
    from PIL import Image

    def shot(mode: str, *passes: str) -> np.ndarray:
        status, _, err = call_main("render", "-o", tmp_path / "shot.png", "--iterations", "5", "--mode", mode,
                                   "--size", "64x36", "--ztrans", "-1.6", "--force", *passes)
        assert status == 0, err
        with Image.open(tmp_path / "shot.png") as image:
            return np.asarray(image.convert("RGB"))

    finished = shot("rendered")
    np.testing.assert_array_equal(shot("rendered", "--passes", "10"), finished)
    assert changed_fraction(shot("rendered", "--passes", "3"), finished) > 0.1, "a coarser surface"
    status, _, err = call_main("render", "-o", tmp_path / "x.png", "--iterations", "5", "--passes", "11")
    usage_error(status, err, "--passes: 11 is more than the 10 half-passes of iterations 5")


def _mark_pixels(image: np.ndarray) -> tuple[int, int]:
    """Pixels of pass_marks.glsl's two colours: red dots (set by the half-pass), blue rings (wrap-around copies)."""
    red, green, blue = (image[..., channel].astype(int) for channel in range(3))
    return int(((red > 150) & (green < 80) & (blue < 80)).sum()), int(((blue > 150) & (red < 80)).sum())


def test_lines_mode_marks_the_points_of_the_latest_half_pass_and_their_copies_across_the_edge(renderer):
    from gl_fixtures import render_frame

    view = SceneSettings(mode="lines", iterations=4, pitch=40.0, ztrans=-2.6)  # from above: every edge in view
    plain = render_frame(renderer, view, (160, 120))
    assert _mark_pixels(plain) == (0, 0), "no marks when the surface is not stepped"
    diamond = _mark_pixels(render_frame(renderer, view.replace(passes=5), (160, 120)))
    square = _mark_pixels(render_frame(renderer, view.replace(passes=4), (160, 120)))
    assert diamond[0] > 100 and diamond[1] == 0, "a diamond step sets cell centres: none on an edge"
    assert square[0] > 100 and square[1] > 20, "a square step sets edge points too, copied to the far edge"
    assert _mark_pixels(render_frame(renderer, view.replace(passes=4, mode="rendered"), (160, 120))) == (0, 0)
    corners = _mark_pixels(render_frame(renderer, view.replace(passes=0), (160, 120)))
    assert corners[0] > 20 and corners[1] == 0, "no pass yet: the four corners marked"
