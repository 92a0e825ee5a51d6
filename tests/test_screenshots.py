"""Screenshots and scenes (issue 4): exact sizes, scenes inside PNGs, tiling, supersampling, refusals."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest
from helpers import names
from PIL import Image

from terrainview import __version__
from terrainview.cli import main
from terrainview.render.offscreen import TiledRender, create_headless_context, reduce, render_pixels, save_png
from terrainview.render.renderer import Renderer
from terrainview.scene.scene_file import PNG_SCENE_KEY, SceneError, load_scene, picture_extras, save_scene_toml
from terrainview.scene.settings import SceneSettings

pytestmark = pytest.mark.gl  # renders offscreen (EGL)


SCENE = SceneSettings(mode="rendered", iterations=5, seed=7, tile=2, yrot=20.0, ztrans=-2.5, teximage_iterations=6)


@pytest.fixture(scope="module")
def renderer():
    ctx = create_headless_context()
    renderer = Renderer(ctx)
    yield renderer
    assert ctx.error == "GL_NO_ERROR"
    renderer.release()
    ctx.release()


def test_render_writes_exact_size_with_scene(tmp_path):
    out = tmp_path / "shot.png"
    assert main(["render", "-o", str(out), "--size", "321x123", "--mode", "lines", "--seed", "5"]) == 0
    with Image.open(out) as image:
        assert image.size == (321, 123)
        assert image.text["terrainview.seed"] == "5"
        assert image.text["terrainview.mode"] == "lines"
        assert "version" in image.text[PNG_SCENE_KEY]
        assert image.text["Software"].startswith("terrainview ")


def test_scene_round_trip_reproduces_the_picture(tmp_path):
    first = tmp_path / "first.png"
    args = ["--mode", "rendered", "--iterations", "5", "--seed", "7", "--tile", "2", "--yrot", "20",
            "--ztrans", "-2.5", "--teximage-iterations", "6", "--nearest"]
    assert main(["render", "-o", str(first), "--size", "200x120", "--supersample", "2", *args]) == 0
    settings, warnings = load_scene(first)
    assert warnings == []
    assert settings == SceneSettings(mode="rendered", iterations=5, seed=7, tile=2, yrot=20.0, ztrans=-2.5,
                                     teximage_iterations=6, linear=False)
    second = tmp_path / "second.png"
    assert main(["render", "-o", str(second), "--size", "200x120", "--supersample", "2", "--scene", str(first)]) == 0
    assert np.array_equal(np.asarray(Image.open(first)), np.asarray(Image.open(second)))


def test_command_line_overrides_the_scene(tmp_path):
    scene = tmp_path / "scene.toml"
    save_scene_toml(SCENE, scene)
    out = tmp_path / "out.png"
    assert main(["render", "-o", str(out), "--size", "64x64", "--scene", str(scene), "--seed", "9"]) == 0
    settings, _ = load_scene(out)
    assert settings == SCENE.replace(seed=9)


@pytest.mark.parametrize("mode", ["lines", "rendered", "teximage", "clouds", "1d"])
def test_tiled_render_equals_untiled(renderer, mode):
    settings = SCENE.replace(mode=mode)
    renderer.update(settings)
    whole = render_pixels(renderer, settings, (200, 150))
    tiled = render_pixels(renderer, settings, (200, 150), tile_side=64)  # 4 x 3 tiles, ragged at the edges
    assert whole.shape == tiled.shape == (150, 200, 3)
    different = np.any(whole != tiled, axis=-1)
    # Identical but for rounding of the per-tile projection at a few edge pixels.
    assert different.mean() < 0.002, f"{different.sum()} pixels differ"
    assert np.abs(whole.astype(int) - tiled.astype(int)).mean() < 0.2


def test_supersampled_shot_has_the_requested_size_and_smoother_edges(renderer):
    settings = SCENE.replace(mode="lines", iterations=4, antialias=False)
    renderer.update(settings)
    plain = render_pixels(renderer, settings, (160, 90))
    smooth = render_pixels(renderer, settings, (160, 90), supersample=4)
    assert smooth.shape == plain.shape == (90, 160, 3)
    grey_levels = lambda pixels: len(np.unique(pixels[..., 0]))  # noqa: E731
    assert grey_levels(plain) <= 2  # aliased: pure black and white only
    assert grey_levels(smooth) > 10  # filtered down: intermediate greys along the lines
    full = render_pixels(renderer, settings, (160, 90), supersample=4, filtered=False)  # video filters later
    assert full.shape == (360, 640, 3) and np.array_equal(reduce(full, (160, 90)), smooth)


def test_lines_keep_their_weight_at_high_resolution(renderer):
    settings = SCENE.replace(mode="lines", iterations=4, antialias=False)
    renderer.update(settings)
    dark = lambda pixels: (pixels[..., 0] < 128).mean()  # noqa: E731
    window = dark(render_pixels(renderer, settings, (1280, 720)))
    large = dark(render_pixels(renderer, settings, (3840, 2160)))
    thin = dark(render_pixels(renderer, settings, (3840, 2160), line_scale=1.0))
    assert 0.6 < large / window < 1.6  # the same share of the picture is line
    assert thin < 0.5 * large  # without scaling, 1-pixel lines would almost vanish at 3x the size


def test_tiled_render_reports_progress_one_tile_at_a_time(renderer):
    renderer.update(SCENE)
    job = TiledRender(renderer, SCENE, (300, 200), tile_side=128)
    try:
        progress = []
        while not job.finished:
            job.step()
            progress.append(job.progress)
        assert progress == [(index + 1) / 6 for index in range(6)]
        assert job.result().shape == (200, 300, 3)
    finally:
        job.release()


def test_existing_file_is_not_overwritten(tmp_path, run_cli):
    out = tmp_path / "keep.png"
    out.write_bytes(b"precious")
    result = run_cli("render", "-o", str(out), "--size", "32x32")
    assert result.returncode == 2
    assert out.read_bytes() == b"precious"
    assert "already exists" in result.stderr and "--force" in result.stderr
    assert main(["render", "-o", str(out), "--size", "32x32", "--force"]) == 0
    assert Image.open(out).size == (32, 32)
    assert names(tmp_path) == ["keep.png"]


def _foreign_png(path):
    Image.new("RGB", (4, 4)).save(path)
    return path


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--size", "0x100"], "width must be from 1 to 8192"),
        (["--size=-5x100"], "expected WIDTHxHEIGHT"),
        (["--size", "axb"], "expected WIDTHxHEIGHT"),
        (["--size", "100x9000"], "height must be from 1 to 8192"),
        (["--supersample", "3"], "supersample"),
        (["--supersample", "x"], "supersample"),
        (["--size", "8192x100", "--supersample", "4"], "the most is 16384"),
        (["--scene", "{tmp}/missing.toml"], "no such scene file"),
        (["--scene", "{foreign}"], "carries no terrainview scene"),
        (["--scene", "{bad_toml}"], "not valid TOML"),
        (["--scene", "{bad_value}"], "iterations"),
        (["--iterations", "13"], "iterations"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_leaves_nothing(tmp_path, arguments, message, run_cli):
    foreign = _foreign_png(tmp_path / "foreign.png")
    (tmp_path / "bad.toml").write_text("version = 1\n[scene\n")
    (tmp_path / "bad_value.toml").write_text("version = 1\n[scene]\niterations = 40\n")
    arguments = [argument.format(tmp=tmp_path, foreign=foreign, bad_toml=tmp_path / "bad.toml",
                                 bad_value=tmp_path / "bad_value.toml") for argument in arguments]
    before = names(tmp_path)
    result = run_cli("render", "-o", str(tmp_path / "out.png"), *arguments)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert names(tmp_path) == before


def test_unwritable_destination_is_refused(tmp_path, run_cli):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    result = run_cli("render", "-o", str(blocker / "out.png"), "--size", "16x16")
    assert result.returncode == 2 and "does not exist" in result.stderr
    result = run_cli("render", "-o", str(tmp_path / "out.jpg"), "--size", "16x16")
    assert result.returncode == 2 and "unknown file type" in result.stderr
    assert names(tmp_path) == ["a_file"]


def test_scene_files_tolerate_unknown_and_newer_keys(tmp_path):
    path = tmp_path / "scene.toml"
    save_scene_toml(SCENE, path)
    document = tomllib.loads(path.read_text())
    assert document["version"] == 2 and document["scene"]["seed"] == 7
    path.write_text(path.read_text().replace("version = 2", "version = 3\nfuture_section = 1")
                    + "sparkle = true\n")
    settings, warnings = load_scene(path)
    assert settings == SCENE
    assert any("newer terrainview" in warning for warning in warnings)
    assert any("sparkle" in warning for warning in warnings)
    assert any("future_section" in warning for warning in warnings)


def test_scene_without_version_is_refused(tmp_path):
    path = tmp_path / "scene.toml"
    path.write_text("[scene]\nseed = 3\n")
    with pytest.raises(SceneError, match="version"):
        load_scene(path)


def test_unique_path_adds_a_suffix_instead_of_overwriting(tmp_path):
    from terrainview.base.atomic_files import unique_path

    first = unique_path(tmp_path, "shot", ".png")
    assert first.name == "shot.png"
    first.write_bytes(b"1")
    second = unique_path(tmp_path, "shot", ".png")
    assert second.name == "shot-2.png"
    second.write_bytes(b"2")
    assert unique_path(tmp_path, "shot", ".png").name == "shot-3.png"


# How people read a terrainview PNG's scene (any PNG viewer lists the text chunks): one plain line per setting.
READABLE_CHUNKS = {
    "terrainview.mode": "rendered", "terrainview.camera": "fly", "terrainview.lod": "off",
    "terrainview.invert": "true", "terrainview.antialias": "false", "terrainview.tile": "3",
    "terrainview.h": "0.55", "terrainview.seed": "123", "terrainview.iterations": "7",
    "terrainview.water_level": "0.25", "terrainview.texture": "blend", "terrainview.size": "40x30",
    "terrainview.supersample": "2", "Software": "terrainview " + __version__,
}


def test_a_png_carries_every_setting_as_a_readable_chunk(tmp_path):
    settings = SceneSettings(mode="rendered", camera="fly", lod="off", invert=True, antialias=False, tile=3,
                             h=0.55, seed=123, iterations=7, water_level=0.25, texture="blend", passes=9)
    save_png(np.zeros((30, 40, 3), np.uint8), tmp_path / "shot.png", settings, False,
             extra=picture_extras((40, 30), 2))
    with Image.open(tmp_path / "shot.png") as image:
        text = dict(image.text)
    assert {key: text.get(key) for key in READABLE_CHUNKS} == READABLE_CHUNKS
    assert {key for key in text if key.startswith("terrainview.")} == (
        {f"terrainview.{name}" for name in settings.to_dict()} | {"terrainview.size", "terrainview.supersample"})
    assert load_scene(tmp_path / "shot.png")[0] == settings



def test_the_full_mesh_compared_with_is_the_same_whatever_the_image_size_or_tiling(renderer):
    """'of N triangles' is the scene's full mesh: one figure for a small frame and a tiled supersampled shot."""
    settings = SceneSettings(mode="rendered", iterations=8, tile="endless", camera="fly", eye_y=0.6)
    renderer = Renderer(renderer.ctx)  # a renderer of its own (the module's has drawn many scenes before)
    renderer.update(settings)
    fulls = []
    for size, supersample, tile_side in (((64, 36), 1, None), ((128, 72), 2, 64)):  # 1 tile; 4 x 3 tiles
        job = TiledRender(renderer, settings, size, supersample=supersample, tile_side=tile_side)
        while not job.finished:
            job.step()
        fulls.append(job.stats.terrain_full)
        job.release()
    renderer.release()
    assert fulls[0] == fulls[1] > 0
