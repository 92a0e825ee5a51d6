"""``terrainview export -o X.obj``: the mesh, its X.mtl and X-texture.png, and refusals that leave nothing behind."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import names
from PIL import Image
from reference import ARTICLE_BAND_COLORS

from terrainview.kernels import texturing
from terrainview.output import obj_mesh as mesh_module
from terrainview.scene.derived_arrays import eroded_heights, surface_heights
from terrainview.scene.scene_file import load_scene
from terrainview.scene.settings import SceneSettings

pytestmark = pytest.mark.gl  # the teximage texture is drawn by GL (headless)


def parse_obj(path) -> dict:
    """Vertices, normals, texture coordinates and faces (0-based v/vt/vn index triples) of an OBJ file."""
    rows: dict[str, list] = {"v": [], "vn": [], "vt": [], "f": [], "mtllib": [], "usemtl": []}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        keyword, *fields = line.split()
        if keyword == "f":
            rows["f"].append([[int(index) - 1 for index in corner.split("/")] for corner in fields])
        elif keyword in ("v", "vn", "vt"):
            rows[keyword].append([float(value) for value in fields])
        else:
            rows[keyword].append(" ".join(fields))
    return {"v": np.array(rows["v"]), "vn": np.array(rows["vn"]), "vt": np.array(rows["vt"]),
            "f": np.array(rows["f"], dtype=np.int64), "mtllib": rows["mtllib"], "usemtl": rows["usemtl"]}


def parse_mtl(path) -> dict[str, list[str]]:
    entries: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            entries.setdefault(keyword, []).append(rest.strip())
    return entries


def read_rgb(path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.format == "PNG"
        return np.asarray(image.convert("RGB"))


def export_ok(call_main, path, *options: str) -> list[str]:
    status, out, err = call_main("export", "-o", path, *options)
    assert (status, err) == (0, ""), err
    return out.splitlines()


def face_normals(positions: np.ndarray, faces: np.ndarray) -> np.ndarray:
    a, b, c = (positions[faces[:, corner]] for corner in range(3))
    return np.cross(b - a, c - a)


def colour_index(texture: np.ndarray, colours) -> np.ndarray:
    """The index of each texel's colour in ``colours`` (-1 where it is none of them)."""
    index = np.full(texture.shape[:2], -1)
    for number, colour in enumerate(colours):
        index[np.all(texture == np.asarray(colour, dtype=np.uint8), axis=-1)] = number
    return index


# --- what is written ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [3, 5])
def test_obj_mtl_and_png_are_written_and_agree(tmp_path, call_main, iterations):
    path = tmp_path / "X.obj"
    out = export_ok(call_main, path, "--iterations", str(iterations), "--seed", "4", "--height-scale", "0.1",
                    "--teximage-iterations", "6")
    assert names(tmp_path) == ["X-texture.png", "X.mtl", "X.obj"], "three files, no .part left"
    wrote = [line for line in out if line.startswith("wrote ")]
    assert [line.split()[1] for line in wrote] == [str(path), str(tmp_path / "X.mtl"),
                                                   str(tmp_path / "X-texture.png")]

    obj = parse_obj(path)
    side = 2**iterations + 1
    vertices, faces = side * side, 2 * (2**iterations) ** 2
    assert obj["v"].shape == (vertices, 3)
    assert obj["vn"].shape == (vertices, 3) and obj["vt"].shape == (vertices, 2)
    assert obj["f"].shape == (faces, 3, 3)
    assert obj["mtllib"] == ["X.mtl"]
    assert len(obj["usemtl"]) == 1
    # Every v/vt/vn index points at an existing row (OBJ indices are 1-based; parse_obj made them 0-based).
    assert obj["f"].min() >= 0
    assert obj["f"][..., 0].max() < len(obj["v"])
    assert obj["f"][..., 1].max() < len(obj["vt"]) and obj["f"][..., 2].max() < len(obj["vn"])

    mtl = parse_mtl(tmp_path / "X.mtl")
    assert mtl["newmtl"] == obj["usemtl"], "the OBJ uses the material the MTL defines"
    assert mtl["map_Kd"] == ["X-texture.png"]

    positions, faces_v = obj["v"], obj["f"][..., 0]
    # Counter-clockwise seen from above: every face's normal points up (a gentle surface, height scale 0.1).
    assert np.all(face_normals(positions, faces_v)[:, 1] > 0)
    # The normals written agree: unit length, pointing up.
    np.testing.assert_allclose(np.linalg.norm(obj["vn"], axis=1), 1.0, atol=1e-5)
    assert np.all(obj["vn"][:, 1] > 0)
    # X and Z span -1..1; Y is the heightmap (rows are Z, columns X).
    for axis in (0, 2):
        assert positions[:, axis].min() == pytest.approx(-1.0) and positions[:, axis].max() == pytest.approx(1.0)
    heights = surface_heights(SceneSettings(iterations=iterations, seed=4, height_scale=0.1))
    np.testing.assert_allclose(positions[:, 1].reshape(side, side), heights, atol=2e-6)
    np.testing.assert_allclose(positions[:, 2].reshape(side, side)[:, 0], np.linspace(-1, 1, side), atol=1e-6)
    # Texture coordinates in [0, 1]: u = (x + 1) / 2, v = (1 - z) / 2 as the viewer maps them.
    texcoords = obj["vt"]
    assert texcoords.min() >= 0.0 and texcoords.max() <= 1.0
    np.testing.assert_allclose(texcoords[:, 0], (positions[:, 0] + 1) / 2, atol=1e-6)
    np.testing.assert_allclose(texcoords[:, 1], (1 - positions[:, 2]) / 2, atol=1e-6)

    texture = read_rgb(tmp_path / "X-texture.png")
    assert texture.shape == (256, 256, 3), "2**teximage_iterations, at least 256"
    settings, _ = load_scene(tmp_path / "X-texture.png")
    assert (settings.iterations, settings.seed, settings.height_scale) == (iterations, 4, 0.1)


@pytest.mark.parametrize("teximage_iterations, side", [(8, 256), (9, 512)])
def test_texture_png_has_the_teximage_size(tmp_path, call_main, teximage_iterations, side):
    export_ok(call_main, tmp_path / "X.obj", "--iterations", "2", "--teximage-iterations", str(teximage_iterations))
    texture = read_rgb(tmp_path / "X-texture.png")
    assert texture.shape == (side, side, 3)
    assert len(np.unique(texture.reshape(-1, 3), axis=0)) > 8, "a real teximage, not a blank"


def test_bands_texture_has_only_the_four_colours_and_fits_the_mesh(tmp_path, call_main):
    """--texture bands: X.png is the bands texture of the teximage heightmap, and a vertex's (u, v) finds the
    band of its own height (OBJ's v = 0 is the bottom row of the image)."""
    options = ("--iterations", "5", "--seed", "6", "--teximage-iterations", "8", "--texture", "bands")
    export_ok(call_main, tmp_path / "X.obj", *options)
    texture = read_rgb(tmp_path / "X-texture.png")
    assert texture.shape == (256, 256, 3)
    colours = {tuple(c) for c in np.unique(texture.reshape(-1, 3), axis=0).tolist()}
    assert colours == set(ARTICLE_BAND_COLORS)
    settings = SceneSettings(iterations=5, seed=6, teximage_iterations=8, texture="bands")
    np.testing.assert_array_equal(texture, texturing.bands_texture(
        eroded_heights(settings, settings.teximage_iterations, settings.teximage_h)[0], 256))

    obj = parse_obj(tmp_path / "X.obj")
    band = colour_index(texture, ARTICLE_BAND_COLORS)
    u, v = obj["vt"][:, 0], obj["vt"][:, 1]
    columns = np.minimum((u * 256).astype(int), 255)
    as_obj_reads = band[np.minimum(((1 - v) * 256).astype(int), 255), columns]
    upside_down = band[np.minimum((v * 256).astype(int), 255), columns]
    height = obj["v"][:, 1]
    fits, flipped = np.corrcoef(height, as_obj_reads)[0, 1], np.corrcoef(height, upside_down)[0, 1]
    assert fits > 0.7 and fits > flipped + 0.3, (fits, flipped)


def test_tiled_obj_has_four_times_the_vertices(tmp_path, call_main):
    export_ok(call_main, tmp_path / "one.obj", "--iterations", "3", "--texture", "blend")
    export_ok(call_main, tmp_path / "two.obj", "--iterations", "3", "--texture", "blend", "--tile", "2")
    one, two = parse_obj(tmp_path / "one.obj"), parse_obj(tmp_path / "two.obj")
    assert len(two["v"]) == 4 * len(one["v"]) == 4 * 81
    assert len(two["vn"]) == len(two["vt"]) == len(two["v"])
    assert len(two["f"]) == 4 * len(one["f"]) == 4 * 128
    assert two["f"].min() >= 0 and two["f"].max() < len(two["v"])
    for axis in (0, 2):
        assert two["v"][:, axis].min() == pytest.approx(-2.0) and two["v"][:, axis].max() == pytest.approx(2.0)
    assert two["vt"].min() >= 0.0 and two["vt"].max() <= 1.0
    # Each tile is the same surface, moved: the tiles' heights are the single surface's.
    np.testing.assert_array_equal(np.sort(two["v"][:, 1]), np.sort(np.tile(one["v"][:, 1], 4)))


def test_teximage_texture_fits_the_mesh(tmp_path, call_main):
    """The default GL-drawn teximage: its low (green) band lies where the vertices that map to it are low,
    read the way OBJ reads (u, v), not upside down."""
    export_ok(call_main, tmp_path / "X.obj", "--iterations", "5", "--seed", "6", "--teximage-iterations", "8")
    texture = read_rgb(tmp_path / "X-texture.png").astype(int)
    green = (texture[..., 1] > texture[..., 0] + 3) & (texture[..., 1] > texture[..., 2] + 3)
    assert 0.05 < green.mean() < 0.9
    obj = parse_obj(tmp_path / "X.obj")
    u, v = obj["vt"][:, 0], obj["vt"][:, 1]
    columns = np.minimum((u * 256).astype(int), 255)
    as_obj_reads = green[np.minimum(((1 - v) * 256).astype(int), 255), columns]
    upside_down = green[np.minimum((v * 256).astype(int), 255), columns]
    height = obj["v"][:, 1]
    fits, flipped = np.corrcoef(height, as_obj_reads)[0, 1], np.corrcoef(height, upside_down)[0, 1]
    assert fits < -0.5 and fits < flipped - 0.3, (fits, flipped)


# --- refusals and failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("companion", ["X.mtl", "X-texture.png"])
def test_existing_companion_is_refused_without_force(tmp_path, call_main, usage_error, companion):
    (tmp_path / companion).write_bytes(b"keep me")
    status, out, err = call_main("export", "-o", tmp_path / "X.obj", "--iterations", "3")
    usage_error(status, err, companion, "--force")
    assert out == ""
    assert names(tmp_path) == [companion], "no X.obj, no other companion, no .part file"
    assert (tmp_path / companion).read_bytes() == b"keep me"


def test_force_overwrites_all_three(tmp_path, call_main):
    for name in ("X.obj", "X.mtl", "X-texture.png"):
        (tmp_path / name).write_bytes(b"old")
    export_ok(call_main, tmp_path / "X.obj", "--iterations", "3", "--texture", "bands", "--force")
    assert names(tmp_path) == ["X-texture.png", "X.mtl", "X.obj"]
    assert len(parse_obj(tmp_path / "X.obj")["v"]) == 81
    assert parse_mtl(tmp_path / "X.mtl")["map_Kd"] == ["X-texture.png"]
    assert read_rgb(tmp_path / "X-texture.png").shape == (256, 256, 3)


@pytest.mark.parametrize("existing", [False, True])
def test_failure_in_the_middle_leaves_nothing(tmp_path, call_main, usage_error, monkeypatch, existing):
    """write_obj writes both its files, then the disk fills up: no X.obj, X.mtl or X-texture.png, no .part file, and
    files that were there before (--force) are untouched."""
    real_write_obj = mesh_module.write_obj

    def write_then_fail(*args, **kwargs):
        real_write_obj(*args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mesh_module, "write_obj", write_then_fail)
    if existing:
        for name in ("X.obj", "X.mtl", "X-texture.png"):
            (tmp_path / name).write_bytes(b"old " + name.encode())
    force = ("--force",) if existing else ()
    status, _, err = call_main("export", "-o", tmp_path / "X.obj", "--iterations", "3", "--texture", "bands",
                               *force)
    usage_error(status, err, "No space left on device")
    if existing:
        assert names(tmp_path) == ["X-texture.png", "X.mtl", "X.obj"]
        for name in ("X.obj", "X.mtl", "X-texture.png"):
            assert (tmp_path / name).read_bytes() == b"old " + name.encode()
    else:
        assert names(tmp_path) == []


def test_obj_appearing_while_writing_leaves_no_companions(tmp_path, call_main, usage_error, monkeypatch):
    """Another program creates X.obj while the export runs: the export refuses to replace it, and then it
    must not leave a fresh X.mtl and X-texture.png of its own beside someone else's X.obj."""
    real_write_obj = mesh_module.write_obj
    obj = tmp_path / "X.obj"

    def write_while_another_writes(*args, **kwargs):
        real_write_obj(*args, **kwargs)
        obj.write_text("someone else's\n")

    monkeypatch.setattr(mesh_module, "write_obj", write_while_another_writes)
    status, _, err = call_main("export", "-o", obj, "--iterations", "3", "--texture", "bands")
    usage_error(status, err, "X.obj")
    assert obj.read_text() == "someone else's\n"
    assert names(tmp_path) == ["X.obj"]


# --- the real command -----------------------------------------------------------------------------------------


def test_cli_subprocess_writes_the_three_files(tmp_path, run_cli, usage_error):
    result = run_cli("export", "-o", "mesh.obj", "--iterations", "4", "--tile", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    wrote = [line for line in result.stdout.splitlines() if line.startswith("wrote ")]
    assert [line.split()[1] for line in wrote] == ["mesh.obj", "mesh.mtl", "mesh-texture.png"]
    assert names(tmp_path) == ["mesh-texture.png", "mesh.mtl", "mesh.obj"]
    obj = parse_obj(tmp_path / "mesh.obj")
    assert len(obj["v"]) == 4 * 17**2 and len(obj["f"]) == 4 * 2 * 16**2
    assert obj["mtllib"] == ["mesh.mtl"] and parse_mtl(tmp_path / "mesh.mtl")["map_Kd"] == ["mesh-texture.png"]
    assert read_rgb(tmp_path / "mesh-texture.png").shape == (256, 256, 3)
    # Again without --force: refused, one line, nothing changed.
    before = {name: (tmp_path / name).read_bytes() for name in names(tmp_path)}
    result = run_cli("export", "-o", "mesh.obj", "--iterations", "4", cwd=tmp_path)
    usage_error(result.returncode, result.stderr, "mesh.obj", "--force")
    assert {name: (tmp_path / name).read_bytes() for name in names(tmp_path)} == before
