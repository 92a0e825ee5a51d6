"""``export --tile endless --region``: a rectangle of the world, in every format, streamed in constant memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from PIL import Image

from terrainview.kernels import world
from terrainview.output import world_export

REGION = ("--tile", "endless", "--iterations", "5", "--seed", "4", "--region", "-1,-1,3,2")


def _export(call_main, tmp_path, name: str, *extra: str) -> str:
    status, out, err = call_main("export", "-o", tmp_path / name, *REGION, *extra)
    assert status == 0, err
    return out


def test_every_format_writes_the_same_rectangle_of_the_world(call_main, tmp_path, monkeypatch):
    monkeypatch.setattr(world_export, "BAND_VALUES", 8)  # many bands: each made alone must join exactly
    out = _export(call_main, tmp_path, "w.npy")
    assert "x -1 to 3, z -1 to 2" in out
    heights = np.load(tmp_path / "w.npy")
    # 2**5 cells per 2 units: x -1..3 is columns 0..64, z -1..2 is rows 0..48; region (0, 0) is its corner.
    assert heights.shape == (49, 65)
    np.testing.assert_array_equal(heights, world.world_heights(5, 0, 0, 65, 49, seed=4))
    np.testing.assert_array_equal(heights[:33, :33], world.world_region(5, 0, 0, seed=4))
    _export(call_main, tmp_path, "w.png")
    _export(call_main, tmp_path, "w.raw")
    with Image.open(tmp_path / "w.png") as image:
        values = np.asarray(image)
        low, high = float(image.text["terrainview.height_min"]), float(image.text["terrainview.height_max"])
        assert image.mode == "I;16" and image.text["terrainview.tile"] == "endless"
    assert (low, high) == (float(heights.min()), float(heights.max()))
    np.testing.assert_allclose(low + values / 65535.0 * (high - low), heights, atol=(high - low) / 65535)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "w.raw", "<u2").reshape(heights.shape), values)


def test_the_obj_is_the_world_at_its_own_coordinates(call_main, tmp_path):
    _export(call_main, tmp_path, "w.obj")
    lines = (tmp_path / "w.obj").read_text().splitlines()
    vertices = np.array([[float(v) for v in line.split()[1:]] for line in lines if line.startswith("v ")])
    faces = [line for line in lines if line.startswith("f ")]
    assert len(vertices) == 49 * 65 and len(faces) == 2 * 48 * 64
    assert vertices[0].tolist() == pytest.approx([-1.0, float(world.world_heights(5, 0, 0, 1, 1, seed=4)[0, 0]), -1.0],
                                                 abs=1e-6)
    assert vertices[-1][[0, 2]].tolist() == pytest.approx([3.0, 2.0])
    assert (tmp_path / "w.mtl").exists()
    with Image.open(tmp_path / "w-texture.png") as texture:
        assert texture.size[0] > texture.size[1] > 1 and len(np.unique(np.asarray(texture).reshape(-1, 3), axis=0)) > 1


def test_a_large_rectangle_is_written_in_constant_memory(call_main, tmp_path, monkeypatch):
    monkeypatch.setattr(world_export, "BAND_VALUES", 256)
    tracemalloc.start()
    try:
        status, _, err = call_main("export", "-o", tmp_path / "big.npy", "--tile", "endless", "--iterations", "8",
                                   "--region", "0,0,31,1")  # 3969 x 129 points: 2 MB of heights
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 0, err
    assert (tmp_path / "big.npy").stat().st_size > 2_000_000
    assert peak < 600_000, f"{peak:,} bytes at the peak: the rectangle was held whole"


@pytest.mark.parametrize(("arguments", "message"), [
    (("--tile", "endless"), "export --tile endless needs --region X0,Z0,X1,Z1"),
    (("--region", "0,0,1,1"), "--region takes a rectangle of the endless world: add --tile endless"),
    (("--tile", "endless", "--region", "0,0,1"), "--region: expected X0,Z0,X1,Z1"),
    (("--tile", "endless", "--region", "1,0,0,1"), "--region: X1 must be more than X0"),
    (("--tile", "endless", "--region", "0,0,nan,1"), "--region: each coordinate must be a number within"),
    (("--tile", "endless", "--iterations", "12", "--region", "0,0,600,600"), "--region: 1,228,801 x 1,228,801 points"),
])
def test_bad_regions_are_one_line(call_main, usage_error, tmp_path, arguments, message):
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", *arguments)
    usage_error(status, err, message)
    assert not (tmp_path / "x.npy").exists()
