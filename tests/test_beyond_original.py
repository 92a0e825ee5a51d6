"""The companion articles' options (issue 5) in rendered frames, in saved scenes, and in OBJ exports."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PIL import Image

from terrainview import texturing
from terrainview.cli import main
from terrainview.gpu import FOG_COLOR, TEXIMAGE_BAND_COLORS
from terrainview.scene_file import load_scene, save_scene_toml
from terrainview.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]

BASE = SceneSettings(mode="rendered", iterations=5, teximage_iterations=6, seed=3)
LOOKING_DOWN = dict(pitch=60.0, ytrans=-0.2, ztrans=-2.0)  # the tile seen from above, filling the frame


def surface_texture(renderer, settings) -> np.ndarray:
    """The texture on the surface as RGB rows in heightmap order (row 0 at z = -1; GL's first row is v = 0)."""
    renderer.update(settings)
    texture = renderer.gpu.surface_texture()
    pixels = np.frombuffer(texture.read(alignment=1), dtype=np.uint8)
    return pixels.reshape(texture.height, texture.width, 3)[::-1].astype(int)


def heights_at_texels(renderer, size: int) -> np.ndarray:
    """The teximage heightmap sampled at each texel of a size x size texture (nearest point)."""
    heights = renderer.arrays.teximage.value
    index = np.round(np.arange(size) * (heights.shape[0] - 1) / (size - 1)).astype(int)
    return heights[np.ix_(index, index)]


def distance(pixels: np.ndarray, color) -> np.ndarray:
    return np.abs(pixels - np.asarray(color)).max(axis=-1)


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.ravel().astype(float), b.ravel().astype(float))[0, 1])


# --- textures fit the surface ------------------------------------------------------------------------------

def test_teximage_low_band_sits_where_the_surface_is_low(renderer):
    """The GPU-drawn teximage, read as the surface samples it, is green exactly where the heightmap is low."""
    for settings in (BASE, BASE.replace(generator="fault", fault_iterations=150, blur=1.0)):
        texture = surface_texture(renderer, settings)
        heights = heights_at_texels(renderer, texture.shape[0])
        low, green = TEXIMAGE_BAND_COLORS[0], texture[..., 1] > texture[..., 0] + 20
        assert green.any() and low[1] > low[0]
        is_low = heights < np.quantile(heights, 0.3)
        assert correlation(green, is_low) > 0.5
        assert correlation(green, is_low[::-1]) < correlation(green, is_low) - 0.3


def test_blend_texture_is_dirt_low_and_snow_high(renderer):
    texture = surface_texture(renderer, BASE.replace(texture="blend"))
    heights = heights_at_texels(renderer, texture.shape[0])
    dirt, snow = texturing.TILE_COLORS[0], texturing.TILE_COLORS[-1]
    lowest = heights <= np.quantile(heights, 0.02)
    highest = heights >= np.quantile(heights, 0.98)
    assert np.median(distance(texture[lowest], dirt)) < 40
    assert np.median(distance(texture[highest], snow)) < 40
    assert np.median(distance(texture[highest], dirt)) > 80


def test_bands_texture_has_four_flat_colours_low_to_high(renderer):
    texture = surface_texture(renderer, BASE.replace(texture="bands"))
    colors = {tuple(color) for color in texture.reshape(-1, 3)}
    assert colors == {tuple(color) for color in texturing.BAND_COLORS}
    heights = heights_at_texels(renderer, texture.shape[0])
    blue, brown = texturing.BAND_COLORS[0], texturing.BAND_COLORS[-1]
    assert (distance(texture[heights <= np.quantile(heights, 0.02)], blue) == 0).all()
    assert (distance(texture[heights >= np.quantile(heights, 0.995)], brown) == 0).all()


def test_teximage_mode_shows_the_chosen_texture(frame):
    pixels = frame(BASE.replace(mode="teximage", texture="bands"), (200, 120)).astype(int)
    # The largest power-of-two square that fits 200 x 120 is 64 px, centred: columns 68-131, rows 28-91.
    inside = np.zeros(pixels.shape[:2], dtype=bool)
    inside[28:92, 68:132] = True
    is_band = np.zeros_like(inside)
    for color in texturing.BAND_COLORS:
        is_band |= distance(pixels, color) <= 1
    assert is_band[inside].mean() > 0.85  # the 256 px texture filtered down to 64: band edges blend
    assert (pixels[~inside] == 0).all()


# --- shading and water -------------------------------------------------------------------------------------

def test_slope_shading_lights_slopes_facing_the_light(frame):
    plain = frame(BASE.replace(**LOOKING_DOWN, texture="bands"), (200, 120)).astype(int)
    shaded = frame(BASE.replace(**LOOKING_DOWN, texture="bands", shading="slope"), (200, 120)).astype(int)
    terrain = distance(plain, np.rint(np.array(FOG_COLOR) * 255)) > 3
    assert terrain.mean() > 0.3
    ratio = shaded.sum(axis=-1)[terrain] / np.maximum(plain.sum(axis=-1)[terrain], 1)
    # Against the flat band colours, slopes facing the light get brighter and slopes facing away darker.
    assert (ratio > 1.05).mean() > 0.1
    assert (ratio < 0.8).mean() > 0.1
    assert ratio.std() > 0.15


def test_water_plane_is_translucent_blue_at_its_level(frame, renderer):
    renderer.update(BASE)
    level = float(np.median(renderer.arrays.surface.value))
    dry = frame(BASE.replace(**LOOKING_DOWN), (200, 120)).astype(int)
    wet = frame(BASE.replace(**LOOKING_DOWN, water_level=level), (200, 120)).astype(int)
    bluish = lambda pixels: (pixels[..., 2] > pixels[..., 0] + 40) & (pixels[..., 1] < 200)  # noqa: E731
    assert bluish(wet).mean() > bluish(dry).mean() + 0.15
    higher = frame(BASE.replace(**LOOKING_DOWN, water_level=level + 0.3), (200, 120)).astype(int)
    assert bluish(higher).mean() > bluish(wet).mean()  # more of the surface under water


# --- generators in frames and scenes -----------------------------------------------------------------------

def test_fault_and_seed_image_scenes_round_trip_through_png_and_toml(tmp_path):
    island = "assets/sketch-island.png"
    cases = [BASE.replace(generator="fault", fault_iterations=300, blur=1.5, texture="blend"),
             BASE.replace(seed_image=island, seed_passes=3, shading="slope", water_level=0.05)]
    for index, settings in enumerate(cases):
        first, second = tmp_path / f"first{index}.png", tmp_path / f"second{index}.png"
        args = ["--mode", "rendered", "--iterations", "5", "--teximage-iterations", "6", "--seed", "3"]
        extra = (["--generator", "fault", "--fault-iterations", "300", "--blur", "1.5", "--texture", "blend"]
                 if index == 0 else
                 ["--seed-image", island, "--seed-passes", "3", "--shading", "slope", "--water-level", "0.05"])
        assert main(["render", "-o", str(first), "--size", "96x64", *args, *extra]) == 0
        assert load_scene(first)[0] == settings
        assert main(["render", "-o", str(second), "--size", "96x64", "--scene", str(first)]) == 0
        assert np.array_equal(np.asarray(Image.open(first)), np.asarray(Image.open(second)))
        toml = tmp_path / f"scene{index}.toml"
        save_scene_toml(settings, toml)
        assert load_scene(toml)[0] == settings
    plain = tmp_path / "plain.png"
    assert main(["render", "-o", str(plain), "--size", "96x64", "--mode", "rendered", "--iterations", "5",
                 "--teximage-iterations", "6", "--seed", "3"]) == 0
    assert not np.array_equal(np.asarray(Image.open(plain)), np.asarray(Image.open(tmp_path / "first0.png")))


def test_sketch_shapes_the_terrain(tmp_path, renderer):
    sketch = tmp_path / "ramp.png"
    Image.fromarray(np.repeat(np.linspace(0, 255, 64, dtype=np.uint8)[None, :], 64, axis=0)).save(sketch)
    renderer.update(BASE.replace(seed_image=str(sketch), seed_passes=3))
    heights = renderer.arrays.surface.value
    columns = heights.mean(axis=0)
    assert columns[len(columns) * 3 // 4] > columns[len(columns) // 4] + 0.1  # dark left, bright right


# --- OBJ export --------------------------------------------------------------------------------------------

def obj_lines(path) -> dict[str, list[str]]:
    lines: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        tag = line.split(" ", 1)[0]
        lines.setdefault(tag, []).append(line)
    return lines


@pytest.mark.parametrize("tile", [1, 2])
def test_obj_export_counts_winding_and_companions(tmp_path, tile):
    n = 3
    assert main(["export", "-o", str(tmp_path / "terrain.obj"), "--iterations", str(n), "--tile", str(tile),
                 "--texture", "bands"]) == 0
    lines = obj_lines(tmp_path / "terrain.obj")
    vertices = tile * tile * (2 ** n + 1) ** 2
    faces = tile * tile * 2 * (2 ** n) ** 2
    assert (len(lines["v"]), len(lines["vn"]), len(lines["vt"]), len(lines["f"])) == (vertices,) * 3 + (faces,)
    assert lines["mtllib"] == ["mtllib terrain.mtl"] and lines["usemtl"] == ["usemtl terrain"]
    assert "map_Kd terrain-texture.png" in (tmp_path / "terrain.mtl").read_text()

    positions = np.array([line.split()[1:] for line in lines["v"]], dtype=float)
    texcoords = np.array([line.split()[1:] for line in lines["vt"]], dtype=float)
    corners = np.array([[int(corner.split("/")[0]) for corner in line.split()[1:]] for line in lines["f"]]) - 1
    assert corners.min() == 0 and corners.max() == vertices - 1
    assert positions[:, 0].min() == pytest.approx(-tile) and positions[:, 2].max() == pytest.approx(tile)
    assert texcoords.min() >= 0.0 and texcoords.max() <= 1.0
    a, b, c = (positions[corners[:, index]] for index in range(3))
    assert (np.cross(b - a, c - a)[:, 1] > 0).all(), "faces wind counter-clockwise seen from above"

    with Image.open(tmp_path / "terrain-texture.png") as texture:
        assert texture.size == (256, 256)
        colors = {tuple(color) for color in np.asarray(texture.convert("RGB")).reshape(-1, 3)}
    assert colors == {tuple(color) for color in texturing.BAND_COLORS}


def test_obj_export_refuses_when_a_companion_exists(tmp_path, capsys):
    (tmp_path / "terrain.mtl").write_text("mine")
    assert main(["export", "-o", str(tmp_path / "terrain.obj"), "--iterations", "2"]) == 2
    assert "terrain.mtl (the material of terrain.obj) already exists" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["terrain.mtl"]
    assert (tmp_path / "terrain.mtl").read_text() == "mine"
    assert main(["export", "-o", str(tmp_path / "terrain.obj"), "--iterations", "2", "--force"]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["terrain-texture.png", "terrain.mtl", "terrain.obj"]


def test_obj_export_failure_leaves_nothing(tmp_path, monkeypatch, capsys):
    import terrainview.mesh

    def full_disk(mesh, obj_path, *args):
        obj_path.write_text("v 0 0 0\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(terrainview.mesh, "write_obj", full_disk)
    assert main(["export", "-o", str(tmp_path / "terrain.obj"), "--iterations", "2", "--texture", "bands"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith(f"terrainview: error: {tmp_path / 'terrain.obj'}")
    assert error[0].endswith(": not written: No space left on device")
    assert list(tmp_path.iterdir()) == []


# --- regressions -------------------------------------------------------------------------------------------

def test_fault_blur_keeps_its_width_at_the_teximage_resolution(renderer):
    # Blur is in surface cells; the teximage (more iterations) scales it up, past the user limit of 16 cells.
    settings = BASE.replace(generator="fault", blur=2.0, iterations=4, teximage_iterations=9)  # 64 cells there
    renderer.update(settings)
    surface, teximage = renderer.arrays.surface.value, renderer.arrays.teximage.value
    step = (teximage.shape[0] - 1) // (surface.shape[0] - 1)
    assert correlation(surface, teximage[::step, ::step]) > 0.95


def test_seed_image_teximage_fits_a_surface_with_few_iterations(renderer):
    settings = BASE.replace(seed_image="assets/sketch-island.png", seed_passes=3, iterations=2)
    renderer.update(settings)  # the surface takes 1 pass from the image (it keeps one of detail)
    surface, teximage = renderer.arrays.surface.value, renderer.arrays.teximage.value
    step = (teximage.shape[0] - 1) // (surface.shape[0] - 1)
    np.testing.assert_array_equal(surface, teximage[::step, ::step])


def test_a_failed_array_keeps_those_made_before_it(monkeypatch):
    from terrainview.terrain import DerivedArrays, GenerationError
    from terrainview.worker import GenerationWorker

    def broken(heights, size):
        raise ValueError("blend texture exploded")

    from terrainview import catalog

    monkeypatch.setitem(catalog.TEXTURES, "blend", dataclasses.replace(catalog.TEXTURES["blend"], make=broken))
    worker = GenerationWorker(DerivedArrays())
    try:
        worker.request(BASE.replace(texture="blend"))
        assert worker.wait_idle(60.0)
        result = worker.take_result()
        assert result.error == "blend texture exploded"
        assert set(result.changed) == {"surface", "clouds", "teximage"}  # still to be uploaded
        with pytest.raises(GenerationError, match="exploded") as raised:
            DerivedArrays().update(BASE.replace(texture="blend"))
        assert set(raised.value.changed) == {"surface", "clouds", "teximage"}
    finally:
        worker.stop()
