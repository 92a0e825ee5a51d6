"""The companion articles' options end to end: fault formation, seed images, blend and band textures, slope
shading and water, each drawn headless (renderer fixture, ``terrainview render``) and kept in saved scenes.

Orientation conventions checked here (see terrainview/gpu.py and texturing.py): heightmap rows are Z from -1;
a texture read back from GL has its first row at v = 0, i.e. z = +1, so it is flipped before it is compared
with a heightmap; teximage mode shows the surface texture with the heightmap's row 0 at the top.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import changed_fraction, correlation, names
from PIL import Image
from reference import ARTICLE_BAND_COLORS

from terrainview.kernels import texturing
from terrainview.render import gpu
from terrainview.render.offscreen import render_pixels
from terrainview.scene.derived_arrays import surface_heights
from terrainview.scene.scene_file import load_scene, save_scene_toml
from terrainview.scene.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]
pytestmark = pytest.mark.gl

ASSETS = Path(__file__).resolve().parent.parent / "assets"
SKETCH = ASSETS / "sketch-island.png"
FOG = np.array([round(c * 255) for c in gpu.FOG_COLOR])
RENDERED = SceneSettings(mode="rendered", iterations=5, teximage_iterations=6, seed=3)
# Looking down at a 3 x 3 tiled surface that fills the frame: no sky, no bare fog.
LOOKING_DOWN = {"pitch": 60.0, "ytrans": -0.2, "ztrans": -1.5, "tile": 3}
FAULT = {"generator": "fault", "fault_iterations": 80, "blur": 1.0}


# --- helpers --------------------------------------------------------------------------------------------------


def block_mean(values: np.ndarray, block: int) -> np.ndarray:
    rows, columns = values.shape[0] // block, values.shape[1] // block
    return values[:rows * block, :columns * block].reshape(rows, block, columns, block).mean(axis=(1, 3))


def cell_heights(heights: np.ndarray) -> np.ndarray:
    """The height at the centre of each grid cell (the mean of its four corners): (n - 1) x (n - 1)."""
    heights = heights.astype(np.float64)
    return (heights[:-1, :-1] + heights[1:, :-1] + heights[:-1, 1:] + heights[1:, 1:]) / 4.0


def range_fraction(heights: np.ndarray) -> np.ndarray:
    low, high = heights.min(), heights.max()
    return (heights - low) / (high - low)


def teximage_green(rgb: np.ndarray) -> np.ndarray:
    """Texels of the teximage's lowest band: SPEC_TEXIMAGE_COLORS[0], lit."""
    rgb = rgb.astype(int)
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return (green > red + 3) & (green > blue + 3)


def is_color(rgb: np.ndarray, color) -> np.ndarray:
    return np.all(rgb == np.asarray(color, dtype=np.uint8), axis=-1)


def grey(pixels: np.ndarray) -> np.ndarray:
    return pixels.astype(float).mean(axis=2)


def bluish(pixels: np.ndarray) -> np.ndarray:
    pixels = pixels.astype(int)
    return pixels[..., 2] > pixels[..., 0] + 30


def render_png(call_main, path: Path, *options: str) -> np.ndarray:
    status, _, err = call_main("render", "-o", path, *options)
    assert (status, err) == (0, ""), err
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def teximage_square(pixels: np.ndarray) -> np.ndarray:
    """The centred power-of-two square teximage mode draws (frames here are 256 high)."""
    height, width, _ = pixels.shape
    side = 1 << int(np.log2(min(width, height)))
    y0, x0 = (height - side) // 2, (width - side) // 2
    return pixels[y0:y0 + side, x0:x0 + side]


@pytest.fixture
def half_black_png(tmp_path) -> Path:
    """A 64 x 64 grey image: black on the left half, white on the right."""
    image = np.zeros((64, 64), dtype=np.uint8)
    image[:, 32:] = 255
    path = tmp_path / "half.png"
    Image.fromarray(image).save(path)
    return path


# --- fault formation ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode, camera, least", [("rendered", LOOKING_DOWN, 0.3), ("lines", {}, 0.03)])
def test_fault_frames_differ_from_diamond_square(frame, renderer, mode, camera, least):
    base = RENDERED.replace(mode=mode, **camera)
    diamond = frame(base)
    diamond_heights = renderer.arrays.surface.value.copy()
    fault = frame(base.replace(**FAULT))
    fault_heights = renderer.arrays.surface.value
    assert fault_heights.shape == diamond_heights.shape == (33, 33)
    assert not np.array_equal(fault_heights, diamond_heights)
    assert changed_fraction(diamond, fault) > least


def test_fault_scene_round_trips_through_a_rendered_png(tmp_path, call_main):
    options = ("--mode", "rendered", "--iterations", "5", "--teximage-iterations", "6", "--seed", "4",
               "--generator", "fault", "--fault-iterations", "70", "--blur", "1.5", "--size", "160x90",
               "--pitch", "60", "--ytrans", "-0.2", "--ztrans", "-1.5", "--tile", "3")
    first = render_png(call_main, tmp_path / "first.png", *options)
    settings, warnings = load_scene(tmp_path / "first.png")
    assert warnings == []
    assert settings == SceneSettings(mode="rendered", iterations=5, teximage_iterations=6, seed=4,
                                     generator="fault", fault_iterations=70, blur=1.5, **LOOKING_DOWN)
    again = render_png(call_main, tmp_path / "again.png", "--scene", tmp_path / "first.png", "--size", "160x90")
    np.testing.assert_array_equal(first, again)
    # The scene really carries the generator: the same scene with diamond-square looks different.
    other = render_png(call_main, tmp_path / "other.png", "--scene", tmp_path / "first.png", "--size", "160x90",
                       "--generator", "diamond-square")
    assert changed_fraction(first, other) > 0.3
    # ... and its fault settings: fewer faults, another picture.
    fewer = render_png(call_main, tmp_path / "fewer.png", "--scene", tmp_path / "first.png", "--size", "160x90",
                       "--fault-iterations", "10")
    assert changed_fraction(first, fewer) > 0.3


def test_fault_teximage_fits_the_fault_surface(renderer):
    settings = RENDERED.replace(teximage_iterations=8, seed=0, **FAULT)
    renderer.update(settings)
    texture = renderer.gpu.surface_texture_rgb()
    assert texture.shape == (256, 256, 3)
    surface = renderer.arrays.surface.value  # 33 x 33, rows are Z from -1
    cells = cell_heights(surface)  # 32 x 32
    low = cells < np.quantile(cells, 1.0 / 3.0)
    green = block_mean(teximage_green(texture), 256 // 32)
    assert 0.05 < teximage_green(texture).mean() < 0.9, "the teximage has a low band, and more"
    as_is, flipped, mirrored = (correlation(texels, low) for texels in (green, green[::-1], green[:, ::-1]))
    assert as_is > 0.6, (as_is, flipped, mirrored)
    assert as_is > flipped + 0.3 and as_is > mirrored + 0.3, (as_is, flipped, mirrored)


# --- seed image -----------------------------------------------------------------------------------------------


def test_seed_image_raises_the_white_side(renderer, half_black_png):
    settings = RENDERED.replace(seed_image=str(half_black_png), seed_passes=2)
    renderer.update(settings)
    for heights in (renderer.arrays.surface.value, renderer.arrays.teximage.value):
        columns = heights.shape[1]
        left = heights[:, columns // 8:columns * 3 // 8].mean()
        right = heights[:, columns * 5 // 8:columns * 7 // 8].mean()
        assert right > left + 0.15, (left, right)
    plain = settings.replace(seed_image="")
    renderer.update(plain)
    heights = renderer.arrays.surface.value
    assert abs(heights[:, 4:12].mean() - heights[:, 20:28].mean()) < 0.15


def test_seed_image_in_terrainview_render(tmp_path, call_main, half_black_png):
    """Teximage mode, as ``terrainview render`` draws it: the low (green) band lies on the image's black
    left, and the scene in the PNG keeps the image and its passes."""
    pixels = render_png(call_main, tmp_path / "seeded.png", "--mode", "teximage", "--size", "256x256",
                        "--seed-image", half_black_png, "--seed-passes", "3", "--iterations", "5",
                        "--teximage-iterations", "8")
    green = teximage_green(teximage_square(pixels))
    assert green[:, 32:96].mean() > 0.5, "the black half is low"
    assert green[:, 160:224].mean() < 0.05, "the white half is high"
    settings, _ = load_scene(tmp_path / "seeded.png")
    assert (settings.seed_image, settings.seed_passes) == (str(half_black_png), 3)
    again = render_png(call_main, tmp_path / "again.png", "--scene", tmp_path / "seeded.png", "--size", "256x256")
    np.testing.assert_array_equal(pixels, again)


def test_sketch_island_is_an_island(renderer):
    renderer.update(RENDERED.replace(seed_image=str(SKETCH), seed_passes=3))
    heights = renderer.arrays.surface.value
    with Image.open(SKETCH) as image:
        sketch = np.asarray(image.convert("L").resize(heights.shape[::-1], Image.Resampling.BILINEAR), float)
    assert correlation(heights, sketch) > 0.6
    assert correlation(heights, sketch[::-1]) < correlation(heights, sketch) - 0.1, "rows are Z, not flipped"
    border = np.concatenate([heights[:3].ravel(), heights[-3:].ravel(), heights[:, :3].ravel(),
                             heights[:, -3:].ravel()])
    assert heights[10:24, 10:24].mean() > border.mean() + 0.1


def test_missing_seed_image_is_one_line_exit_2(tmp_path, run_cli, usage_error):
    missing = tmp_path / "no-such-sketch.png"
    result = run_cli("render", "-o", "out.png", "--size", "64x64", "--mode", "rendered", "--iterations", "4",
                     "--seed-image", missing, cwd=tmp_path)
    usage_error(result.returncode, result.stderr, "no-such-sketch.png")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert names(tmp_path) == []


# --- texture: blend -------------------------------------------------------------------------------------------


def test_blend_texture_is_dirt_low_and_snow_high(renderer, frame):
    settings = RENDERED.replace(texture="blend", teximage_iterations=8, **LOOKING_DOWN)
    blended = frame(settings)
    cpu = renderer.arrays.surface_texture.value
    assert cpu.shape == (256, 256, 3) and cpu.dtype == np.uint8
    np.testing.assert_array_equal(renderer.gpu.surface_texture_rgb(), cpu)  # uploaded in the heightmap's order
    fraction = range_fraction(cell_heights(renderer.arrays.teximage.value))  # 256 x 256, one per texel
    dirt = np.asarray(texturing.TILE_COLORS[texturing.TILE_NAMES.index("dirt")], dtype=float)
    snow = np.asarray(texturing.TILE_COLORS[texturing.TILE_NAMES.index("snow")], dtype=float)
    low, high = fraction < 0.15, fraction > 0.85
    assert low.sum() >= 20 and high.sum() >= 20
    low_color, high_color = cpu[low].astype(float).mean(axis=0), cpu[high].astype(float).mean(axis=0)
    assert np.abs(low_color - dirt).max() < 15, low_color
    assert np.abs(high_color - snow).max() < 15, high_color
    # Flipped, the texture would not fit: the lowest texels would not be dirt.
    assert np.abs(cpu[::-1][low].astype(float).mean(axis=0) - dirt).max() > 30

    teximage = frame(settings.replace(texture="teximage"))
    assert changed_fraction(blended, teximage) > 0.3


# --- texture: bands -------------------------------------------------------------------------------------------


def test_bands_in_teximage_mode_are_exactly_the_four_colours(renderer, frame):
    settings = SceneSettings(mode="teximage", texture="bands", teximage_iterations=8, seed=5)
    pixels = frame(settings, (320, 256))
    square = teximage_square(pixels)
    outside = np.ones(pixels.shape[:2], bool)
    outside[:, 32:288] = False
    assert np.all(pixels[outside] == 0), "black outside the square"
    colours = {tuple(c) for c in np.unique(square.reshape(-1, 3), axis=0).tolist()}
    assert colours == set(ARTICLE_BAND_COLORS)
    blue, green, yellow, brown = (is_color(square, color) for color in ARTICLE_BAND_COLORS)
    # As displayed, row 0 at the top is the heightmap's row 0.
    fraction = range_fraction(cell_heights(renderer.arrays.teximage.value))
    assert blue[fraction < 0.2].all() and brown[fraction > 0.8].all()
    assert (fraction < 0.2).any() and (fraction > 0.8).any()
    lowest = np.unravel_index(np.argmin(fraction), fraction.shape)
    assert blue[lowest]
    assert yellow.any() and green.any()


def test_bands_and_teximage_low_areas_coincide_as_displayed(frame):
    """The GPU teximage's green band (lowest third of the range) and the CPU bands texture's blue band
    (lowest quarter) are in the same place on screen, not mirrored."""
    base = SceneSettings(mode="teximage", teximage_iterations=8, seed=3)
    teximage = teximage_square(frame(base, (256, 256)))
    bands = teximage_square(frame(base.replace(texture="bands"), (256, 256)))
    low_teximage = block_mean(teximage_green(teximage), 8)
    low_bands = block_mean(is_color(bands, ARTICLE_BAND_COLORS[0]), 8)
    assert 0.02 < low_bands.mean() < 0.5 and 0.02 < low_teximage.mean() < 0.5
    as_is, flipped, mirrored = (correlation(low_teximage, low) for low in (low_bands, low_bands[::-1],
                                                                          low_bands[:, ::-1]))
    assert as_is > 0.7, (as_is, flipped, mirrored)
    assert as_is > flipped + 0.3 and as_is > mirrored + 0.3, (as_is, flipped, mirrored)


def test_bands_texture_on_the_rendered_surface(frame):
    base = RENDERED.replace(**LOOKING_DOWN)
    bands = frame(base.replace(texture="bands")).astype(int)
    assert changed_fraction(bands, frame(base)) > 0.3
    # The band colours (fogged and filtered a little) show on the surface: blue water-coloured lows included.
    blue = np.asarray(ARTICLE_BAND_COLORS[0])
    assert (np.abs(bands - blue).max(axis=2) < 25).mean() > 0.02


# --- shading --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("texture", ["teximage", "bands"])
def test_slope_shading_changes_the_frame(frame, texture):
    base = RENDERED.replace(texture=texture, **LOOKING_DOWN)
    flat, sloped = frame(base), frame(base.replace(shading="slope"))
    assert (np.abs(flat.astype(int) - FOG).max(axis=2) <= 12).mean() < 0.01, "terrain fills the frame"
    assert changed_fraction(flat, sloped) > 0.5


def test_slope_shading_spreads_brightness(frame):
    """On flat colour bands (no lighting of their own, unlike the teximage) the brightness of the terrain
    varies much more with slope shading: lit and unlit slopes."""
    base = RENDERED.replace(texture="bands", **LOOKING_DOWN)
    flat, sloped = grey(frame(base)), grey(frame(base.replace(shading="slope")))
    assert sloped.var() > 2.0 * flat.var(), (sloped.var(), flat.var())


def plane(slope: float, axis: str, size: int = 33) -> np.ndarray:
    ramp = np.linspace(-1.0, 1.0, size, dtype=np.float32) * slope
    return np.tile(ramp, (size, 1)) if axis == "x" else np.tile(ramp[:, None], (1, size))


@pytest.mark.parametrize("axis", ["x", "z"])
def test_slopes_facing_the_light_are_brighter(renderer, axis):
    """Synthetic planes under a uniform grey texture: the light comes from (1, 0.5, 1), so a plane rising
    towards -X (or -Z) faces it and is brighter, relative to the same plane unshaded, than one rising towards
    +X (+Z); a level plane is in between."""
    settings = SceneSettings(mode="rendered", iterations=5, teximage_iterations=6, pitch=50.0, ytrans=-0.2,
                             ztrans=-1.8)
    renderer.update(settings)
    renderer.gpu.upload_surface_texture(np.full((256, 256, 3), 160, dtype=np.uint8))

    def shading_ratio(slope: float) -> float:
        renderer.gpu.upload_surface(plane(slope, axis))
        none = render_pixels(renderer, settings, (160, 90)).astype(float)
        slope_shaded = render_pixels(renderer, settings.replace(shading="slope"), (160, 90)).astype(float)
        surface = np.abs(none - FOG).max(axis=2) > 30
        assert surface.mean() > 0.3, "the plane fills much of the frame"
        return float(np.median(grey(slope_shaded)[surface] / grey(none)[surface]))

    facing, level, away = shading_ratio(-0.3), shading_ratio(0.0), shading_ratio(0.3)
    assert facing > level + 0.05 and level > away + 0.05, (facing, level, away)
    assert facing > away + 0.2


def test_slope_shading_shows_no_seam_between_tiles(renderer):
    """A level surface is lit alike everywhere, the tiles' shared edges included: its normals there come from
    the neighbours across the seamless edge (reading past the map's edge instead drew a line along every seam)."""
    settings = SceneSettings(mode="rendered", iterations=5, teximage_iterations=6, tile=3, pitch=70.0, ytrans=-0.1,
                             ztrans=-2.5)
    renderer.update(settings)
    renderer.gpu.upload_surface_texture(np.full((256, 256, 3), 160, dtype=np.uint8))
    renderer.gpu.upload_surface(np.full((33, 33), 0.1, dtype=np.float32))
    none = render_pixels(renderer, settings, (320, 180)).astype(float)
    slope_shaded = render_pixels(renderer, settings.replace(shading="slope"), (320, 180)).astype(float)
    surface = np.abs(none - FOG).max(axis=2) > 30
    assert surface.mean() > 0.5, "the tiles fill most of the frame"
    ratio = grey(slope_shaded - FOG)[surface] / grey(none - FOG)[surface]  # the fog's share taken out
    assert ratio.max() - ratio.min() < 0.05, (ratio.min(), ratio.max())

# --- water ----------------------------------------------------------------------------------------------------


def test_water_at_the_median_height_shows_and_higher_water_covers_more(renderer, frame):
    base = RENDERED.replace(**LOOKING_DOWN)
    dry = frame(base)
    heights = renderer.arrays.surface.value
    median = float(np.median(heights))
    wet = frame(base.replace(water_level=median))
    assert bluish(dry).mean() < 0.01
    assert bluish(wet).mean() > 0.2, bluish(wet).mean()
    assert changed_fraction(dry, wet) > 0.2
    higher = frame(base.replace(water_level=(median + float(heights.max())) / 2))  # halfway up to the top
    assert bluish(higher).mean() > bluish(wet).mean() + 0.05, "more of the surface under water"
    # Below the lowest point the water is hidden under the surface; above the highest it covers everything.
    under = frame(base.replace(water_level=float(heights.min()) - 0.05))
    assert bluish(under).mean() < 0.01
    flood = frame(base.replace(water_level=float(heights.max()) + 0.05))
    assert bluish(flood).mean() > 0.95


@pytest.mark.parametrize("level", [None, 0.05, -0.125])
def test_water_level_round_trips_through_toml(tmp_path, level):
    settings = RENDERED.replace(water_level=level, shading="slope", texture="blend")
    path = tmp_path / "scene.toml"
    save_scene_toml(settings, path)
    loaded, warnings = load_scene(path)
    assert warnings == [] and loaded == settings
    assert loaded.water_level == level


@pytest.mark.parametrize("suffix", [".toml", ".png"])
def test_dry_scene_loaded_over_a_wet_one_is_dry(tmp_path, call_main, suffix):
    """The viewer loads scenes on top of its current settings (app.load_scene passes them as the base): a
    scene saved without water must still come back without water."""
    dry = RENDERED.replace(water_level=None)
    path = tmp_path / f"dry{suffix}"
    if suffix == ".toml":
        save_scene_toml(dry, path)
    else:
        render_png(call_main, path, "--mode", "rendered", "--iterations", "5", "--teximage-iterations", "6",
                   "--seed", "3", "--size", "32x32")
    loaded, _ = load_scene(path, dry.replace(water_level=0.1))
    assert loaded.water_level is None


def test_water_and_shading_round_trip_through_a_rendered_png(tmp_path, call_main):
    options = ("--mode", "rendered", "--iterations", "5", "--teximage-iterations", "6", "--seed", "3",
               "--pitch", "60", "--ytrans", "-0.2", "--ztrans", "-1.5", "--tile", "3", "--size", "160x90")
    level = round(float(np.median(surface_heights(SceneSettings(iterations=5, seed=3)))), 3)
    wet = render_png(call_main, tmp_path / "wet.png", *options, "--water-level", str(level), "--shading", "slope",
                     "--texture", "blend")
    dry = render_png(call_main, tmp_path / "dry.png", *options)
    wet_settings, _ = load_scene(tmp_path / "wet.png")
    dry_settings, _ = load_scene(tmp_path / "dry.png")
    assert (wet_settings.water_level, wet_settings.shading, wet_settings.texture) == (level, "slope", "blend")
    assert (dry_settings.water_level, dry_settings.shading, dry_settings.texture) == (None, "none", "teximage")
    assert bluish(wet).mean() > 0.1 > bluish(dry).mean()
    again = render_png(call_main, tmp_path / "again.png", "--scene", tmp_path / "wet.png", "--size", "160x90")
    np.testing.assert_array_equal(wet, again)


# --- regressions: textures made at another resolution than the surface --------------------------------------


def test_fault_blur_keeps_its_width_at_the_teximage_resolution(renderer):
    # Blur is in surface cells; the teximage (more iterations) scales it up, past the user limit of 16 cells.
    settings = RENDERED.replace(generator="fault", blur=2.0, iterations=4, teximage_iterations=9)  # 64 cells there
    renderer.update(settings)
    surface, teximage = renderer.arrays.surface.value, renderer.arrays.teximage.value
    step = (teximage.shape[0] - 1) // (surface.shape[0] - 1)
    assert correlation(surface, teximage[::step, ::step]) > 0.95


def test_seed_image_teximage_fits_a_surface_with_few_iterations(renderer):
    settings = RENDERED.replace(seed_image=str(SKETCH), seed_passes=3, iterations=2)
    renderer.update(settings)  # the surface takes 1 pass from the image (it keeps one of detail)
    surface, teximage = renderer.arrays.surface.value, renderer.arrays.teximage.value
    step = (teximage.shape[0] - 1) // (surface.shape[0] - 1)
    np.testing.assert_array_equal(surface, teximage[::step, ::step])


def test_fault_and_seed_image_scenes_round_trip_through_png_and_toml(tmp_path, call_main):
    island = str(SKETCH)
    cases = [RENDERED.replace(generator="fault", fault_iterations=300, blur=1.5, texture="blend"),
             RENDERED.replace(seed_image=island, seed_passes=3, shading="slope", water_level=0.05)]
    for index, settings in enumerate(cases):
        first, second = tmp_path / f"first{index}.png", tmp_path / f"second{index}.png"
        args = ["--mode", "rendered", "--iterations", "5", "--teximage-iterations", "6", "--seed", "3"]
        extra = (["--generator", "fault", "--fault-iterations", "300", "--blur", "1.5", "--texture", "blend"]
                 if index == 0 else
                 ["--seed-image", island, "--seed-passes", "3", "--shading", "slope", "--water-level", "0.05"])
        assert call_main("render", "-o", first, "--size", "96x64", *args, *extra)[0] == 0
        assert load_scene(first)[0] == settings
        assert call_main("render", "-o", second, "--size", "96x64", "--scene", first)[0] == 0
        assert np.array_equal(np.asarray(Image.open(first)), np.asarray(Image.open(second)))
        toml = tmp_path / f"scene{index}.toml"
        save_scene_toml(settings, toml)
        assert load_scene(toml)[0] == settings
    plain = tmp_path / "plain.png"
    assert call_main("render", "-o", plain, "--size", "96x64", "--mode", "rendered", "--iterations", "5",
                     "--teximage-iterations", "6", "--seed", "3")[0] == 0
    assert not np.array_equal(np.asarray(Image.open(plain)), np.asarray(Image.open(tmp_path / "first0.png")))
