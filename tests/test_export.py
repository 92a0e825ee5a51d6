"""``terrainview export``: .npy / .png / .raw round trips, and refusals that leave nothing behind."""

from __future__ import annotations

import argparse
import io
import json
import os
import stat

import numpy as np
import pytest
from helpers import names
from PIL import Image

from terrainview.base.atomic_files import OutputError
from terrainview.commands import export as export_command
from terrainview.commands.stages import Stages, terrain_stages
from terrainview.kernels.fractal import diamond_square
from terrainview.output import export_formats
from terrainview.scene.scene_file import PNG_SCENE_KEY, load_scene
from terrainview.scene.settings import SceneSettings

ARGS = ("--iterations", "5", "--seed", "7", "--h", "0.6", "--height-scale", "2")
SETTINGS = SceneSettings(iterations=5, seed=7, h=0.6, height_scale=2.0)


@pytest.fixture(scope="module")
def heights() -> np.ndarray:
    return diamond_square(5, 7, 0.6, 2.0)


def expected_uint16(heights: np.ndarray) -> np.ndarray:
    """min -> 0, max -> 65535, linear, rounded: computed here independently of terrainview.output.export_formats."""
    low, high = float(heights.min()), float(heights.max())
    return np.round((heights.astype(np.float64) - low) / (high - low) * 65535).astype(np.uint16)


def export_ok(call_main, path, *options: str) -> str:
    status, out, err = call_main("export", "-o", path, *options)
    assert (status, err) == (0, ""), err
    lines = out.splitlines()
    assert len(lines) == 1 and str(path) in lines[0], out
    return lines[0]


# --- round trips ---------------------------------------------------------------------------------------------


def test_npy_is_the_heightmap_exactly(tmp_path, call_main, heights):
    path = tmp_path / "terrain.npy"
    line = export_ok(call_main, path, *ARGS)
    assert f"{path.stat().st_size} bytes" in line and "33x33" in line
    loaded = np.load(path, allow_pickle=False)
    assert loaded.dtype == np.float32 and loaded.shape == (33, 33)
    np.testing.assert_array_equal(loaded.view(np.uint32), heights.view(np.uint32))
    assert names(tmp_path) == ["terrain.npy"]  # no .part file left, no .npy appended twice


def test_png_is_16_bit_grey_with_the_scene(tmp_path, call_main, heights):
    path = tmp_path / "terrain.png"
    line = export_ok(call_main, path, *ARGS)
    assert "33x33" in line
    with Image.open(path) as image:
        image.load()
        assert image.format == "PNG" and image.mode == "I;16" and image.size == (33, 33)
        values = np.array(image)
        text = dict(image.text)
    assert values.dtype == np.uint16
    assert values.min() == 0 and values.max() == 65535
    np.testing.assert_array_equal(values, expected_uint16(heights))
    assert values[heights.argmin() // 33, heights.argmin() % 33] == 0
    # The generation parameters: readable entries, the scene document, and the float range.
    assert text["terrainview.seed"] == "7" and text["terrainview.iterations"] == "5"
    assert json.loads(text[PNG_SCENE_KEY])["scene"]["h"] == 0.6
    low, high = float(text["terrainview.height_min"]), float(text["terrainview.height_max"])
    assert (low, high) == (float(heights.min()), float(heights.max()))
    recovered = low + values / 65535 * (high - low)
    np.testing.assert_allclose(recovered, heights, atol=(high - low) / 65535)
    settings, warnings = load_scene(path)
    assert warnings == []
    assert settings == SETTINGS


def test_raw_is_little_endian_16_bit_and_agrees_with_the_png(tmp_path, call_main, heights):
    export_ok(call_main, tmp_path / "terrain.png", *ARGS)
    export_ok(call_main, tmp_path / "terrain.raw", *ARGS)
    data = (tmp_path / "terrain.raw").read_bytes()
    assert len(data) == 2 * 33 * 33
    raw = np.frombuffer(data, dtype="<u2").reshape(33, 33)
    with Image.open(tmp_path / "terrain.png") as image:
        png = np.array(image)
    np.testing.assert_array_equal(raw, png)
    assert int.from_bytes(data[:2], "little") == raw[0, 0]
    np.testing.assert_array_equal(raw, expected_uint16(heights))


@pytest.mark.parametrize("iterations", [1, 9])
def test_raw_size_at_other_resolutions(tmp_path, call_main, iterations):
    path = tmp_path / "terrain.raw"
    line = export_ok(call_main, path, "--iterations", str(iterations), "--seed", "3")
    side = 2**iterations + 1
    assert path.stat().st_size == 2 * side * side
    assert f"{side}x{side}" in line and f"{2 * side * side} bytes" in line
    raw = np.frombuffer(path.read_bytes(), dtype="<u2")
    assert raw.min() == 0 and raw.max() == 65535


def test_extension_is_case_insensitive(tmp_path, call_main, heights):
    export_ok(call_main, tmp_path / "TERRAIN.NPY", *ARGS)
    np.testing.assert_array_equal(np.load(tmp_path / "TERRAIN.NPY"), heights)


def test_scene_file_and_overrides(tmp_path, call_main, heights):
    export_ok(call_main, tmp_path / "first.png", *ARGS)
    export_ok(call_main, tmp_path / "again.npy", "--scene", tmp_path / "first.png")
    np.testing.assert_array_equal(np.load(tmp_path / "again.npy"), heights)
    export_ok(call_main, tmp_path / "other.npy", "--scene", tmp_path / "first.png", "--seed", "8")
    np.testing.assert_array_equal(np.load(tmp_path / "other.npy"), diamond_square(5, 8, 0.6, 2.0))


def test_1d_mode_exports_the_2d_heightmap(tmp_path, call_main):
    line = export_ok(call_main, tmp_path / "profile.png", "--mode", "1d", "--iterations", "4", "--seed", "2")
    assert "17x17" in line
    export_ok(call_main, tmp_path / "profile.npy", "--mode", "1d", "--iterations", "4", "--seed", "2")
    np.testing.assert_array_equal(np.load(tmp_path / "profile.npy"), diamond_square(4, 2, 0.7))
    settings, _ = load_scene(tmp_path / "profile.png")  # the scene of what was written
    assert (settings.mode, settings.iterations, settings.seed) == ("lines", 4, 2)


def test_1d_only_iterations_are_refused(tmp_path, call_main, usage_error):
    status, out, err = call_main("export", "-o", tmp_path / "x.npy", "--mode", "1d", "--iterations", "14")
    usage_error(status, err, "iterations", "2D heightmap")
    assert names(tmp_path) == []


def test_flat_heightmap_maps_to_zero(tmp_path, monkeypatch):
    flat = np.full((5, 5), 0.25, dtype=np.float32)
    values, low, high = export_formats.normalize_uint16(flat)
    assert values.dtype == np.uint16 and not values.any() and (low, high) == (0.25, 0.25)
    monkeypatch.setattr(export_command, "eroded_heights", lambda settings, iterations, h, progress=None: (flat, None))
    for name in ("flat.png", "flat.raw"):
        args = argparse.Namespace(output=str(tmp_path / name), force=False, iterations=2)
        assert export_command.export_command(args) == 0
    with Image.open(tmp_path / "flat.png") as image:
        assert not np.array(image).any()
        assert image.text["terrainview.height_min"] == image.text["terrainview.height_max"] == "0.25"
    assert (tmp_path / "flat.raw").read_bytes() == bytes(50)


def test_normalisation_rounds_to_nearest():
    values, low, high = export_formats.normalize_uint16(np.array([[-1.0, 0.0], [0.5, 1.0]], dtype=np.float32))
    assert (low, high) == (-1.0, 1.0)
    np.testing.assert_array_equal(values, [[0, 32768], [49151, 65535]])  # 32767.5 -> 32768, 49151.25 -> 49151


# --- refusals ------------------------------------------------------------------------------------------------


def test_existing_file_is_kept_without_force(tmp_path, call_main, usage_error):
    path = tmp_path / "terrain.npy"
    path.write_bytes(b"keep me")
    status, out, err = call_main("export", "-o", path, *ARGS)
    usage_error(status, err, str(path), "--force")
    assert out == ""
    assert path.read_bytes() == b"keep me"
    assert names(tmp_path) == ["terrain.npy"]


def test_force_overwrites(tmp_path, call_main, heights):
    path = tmp_path / "terrain.npy"
    path.write_bytes(b"replace me")
    export_ok(call_main, path, *ARGS, "--force")
    np.testing.assert_array_equal(np.load(path), heights)
    assert names(tmp_path) == ["terrain.npy"]


def test_path_is_checked_before_generating(tmp_path, call_main, usage_error, monkeypatch):
    def never(settings):
        raise AssertionError("generated before the output path was checked")

    monkeypatch.setattr(export_command, "eroded_heights", never)
    (tmp_path / "taken.png").write_bytes(b"x")
    for output, fragment in (("taken.png", "already exists"), ("out.txt", "unknown file type"),
                             ("missing/out.npy", "does not exist")):
        status, _, err = call_main("export", "-o", tmp_path / output, "--iterations", "12")
        usage_error(status, err, fragment)


@pytest.mark.parametrize("output, fragment", [
    ("terrain.txt", "'.txt'"),
    ("terrain", "(none)"),
    ("terrain.obj.bak", "'.bak'"),
    ("missing/terrain.png", "does not exist"),
    ("folder.png", "is a folder"),
])
def test_bad_output_paths(tmp_path, call_main, usage_error, output, fragment):
    (tmp_path / "folder.png").mkdir()
    status, out, err = call_main("export", "-o", tmp_path / output, *ARGS)
    usage_error(status, err, fragment)
    assert out == ""
    assert names(tmp_path) == ["folder.png"]
    assert list((tmp_path / "folder.png").iterdir()) == []


def test_unknown_extension_lists_the_known_ones(tmp_path, call_main, usage_error):
    status, _, err = call_main("export", "-o", tmp_path / "terrain.tif")
    usage_error(status, err, ".npy", ".png", ".raw")


def test_unwritable_folder(tmp_path, call_main, usage_error):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user (root) who can write to a read-only folder")
        status, out, err = call_main("export", "-o", folder / "terrain.png", *ARGS)
        usage_error(status, err, "not writable")
        assert names(folder) == []
    finally:
        folder.chmod(stat.S_IRWXU)


@pytest.mark.parametrize("options, fragment", [
    (["--iterations", "0"], "iterations: "),
    (["--h", "abc"], "argument --h"),
    (["--seed", "-5"], "seed: "),
    (["--iterations", "13"], "iterations: 13"),
    (["--force", "--height-scale", "inf"], "argument --height-scale"),
    ([], "-o/--output"),
])
def test_bad_numbers_leave_no_file(tmp_path, call_main, usage_error, options, fragment):
    output = ["-o", tmp_path / "terrain.png"] if fragment != "-o/--output" else []
    status, out, err = call_main("export", *output, *options)
    usage_error(status, err, fragment)
    assert out == ""
    assert names(tmp_path) == []


def test_failed_write_leaves_nothing(tmp_path, call_main, monkeypatch):
    def broken(heights, settings, files):
        for temporary in files.values():
            temporary.write_bytes(b"half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setitem(export_formats.EXPORT_FORMATS, ".npy", broken)
    (tmp_path / "kept.npy").write_bytes(b"old")
    for name in ("new.npy", "kept.npy"):
        with pytest.raises(OutputError, match=f"{name}: not written: No space"):  # the file is named
            export_command.export_command(argparse.Namespace(output=str(tmp_path / name), force=True,
                                                             **SETTINGS.to_dict()))
    assert names(tmp_path) == ["kept.npy"]
    assert (tmp_path / "kept.npy").read_bytes() == b"old"


# --- the real command, as a subprocess -----------------------------------------------------------------------


def test_cli_subprocess_round_trip_and_refusals(tmp_path, run_cli, usage_error, heights):
    result = run_cli("export", "-o", "terrain.raw", *ARGS, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"wrote terrain.raw ({2 * 33 * 33} bytes, 33x33 heights)"]
    np.testing.assert_array_equal(np.frombuffer((tmp_path / "terrain.raw").read_bytes(), "<u2").reshape(33, 33),
                                  expected_uint16(heights))
    before = (tmp_path / "terrain.raw").read_bytes()
    for options, fragment in ((["-o", "terrain.raw"], "already exists"),
                              (["-o", "terrain.xyz"], "unknown file type"),
                              (["-o", "nowhere/terrain.npy"], "does not exist"),
                              (["-o", "terrain.npy", "--h", "abc"], "argument --h"),
                              (["-o", "terrain.npy", "--iterations", "0"], "iterations")):
        result = run_cli("export", *options, *ARGS[2:], cwd=tmp_path)
        usage_error(result.returncode, result.stderr, fragment)
        assert result.stdout == ""
    assert names(tmp_path) == ["terrain.raw"]
    assert (tmp_path / "terrain.raw").read_bytes() == before


def on_a_terminal(command: list[str], folder) -> str:
    """What ``command`` shows on stderr when stderr is a terminal (a pseudo-terminal here)."""
    import pty
    import subprocess

    leader, follower = pty.openpty()
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal's other end closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    assert process.wait(timeout=120) == 0
    os.close(leader)
    return shown.decode("utf-8", "replace")


@pytest.mark.parametrize("command, stages", [
    (["render", "-o", "shot.png", "--size", "32x18", "--supersample", "2", "--mode", "rendered", "--iterations", "5",
      "--erosion", "thermal"], ("generating the terrain", "eroding", "drawing", "filtering 2x down", "writing")),
    (["export", "-o", "heights.png", "--iterations", "5", "--erosion", "hydraulic"],
     ("generating the terrain", "eroding", "writing heights.png")),
    (["export", "-o", "mesh.obj", "--iterations", "3", "--tile", "2"],
     ("generating the terrain", "writing mesh.obj (324 vertices, 512 triangles, 2x2 tiles)")),
])
def test_render_and_export_show_their_stages_on_a_terminal_only(tmp_path, command, stages):
    """On a terminal each stage is named with its progress; captured by a script, only the summary line."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "terrainview", *command]
    piped = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and piped.stderr == ""
    lines = piped.stdout.splitlines()
    assert lines and all(line.startswith("wrote ") for line in lines), piped.stdout
    text = on_a_terminal([*command, "--force"], tmp_path)
    for stage in stages:
        assert f"terrainview: {stage}:   0%" in text and f"terrainview: {stage}: done in" in text, text
    if "--erosion" in command:
        assert "eroding:  50%" in text, "erosion reports its progress"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_stage_of_several_tiles_shows_which_tile_it_draws():
    terminal = Terminal()
    with Stages(terminal) as stages:
        drawing = stages.stage("drawing", tiles=23)
        drawing(13 / 23)  # (13 / 23) * 23 is a hair under 13
        drawing(1.0)
    shown = terminal.getvalue()
    assert "drawing tile 1 of 23:   0%" in shown and "drawing tile 14 of 23:  57%" in shown
    assert "drawing 23 tiles: done in" in shown


def test_a_second_maps_erosion_is_a_stage_of_its_own():
    """The teximage's own map eroding after the surface's, as the derived arrays name it: a stage of its own, not
    the surface's erosion going back to 0% (as the window's status line showed it)."""
    from terrainview.scene.derived_arrays import ERODING_TEXIMAGE, DerivedArrays
    from terrainview.window.panel import PanelStatus, activity

    arrays, seen = DerivedArrays(), []
    terminal = Terminal()
    with Stages(terminal) as stages:
        progress = terrain_stages(stages, lambda: arrays.eroding)

        def noted(fraction: float) -> bool:
            seen.append(activity(PanelStatus(busy_seconds=1.0, erosion_progress=fraction, erosion_map=arrays.eroding)))
            return progress(fraction)

        arrays.progress = noted
        arrays.update(SceneSettings(mode="rendered", iterations=6, teximage_iterations=5, erosion="hydraulic"))
    shown = terminal.getvalue()
    for stage in ("generating the terrain", "eroding", f"eroding {ERODING_TEXIMAGE}"):
        assert f"terrainview: {stage}: done in" in shown, shown
    assert seen[0].startswith("Eroding 0%") and seen[-1].startswith(f"Eroding {ERODING_TEXIMAGE} 100%"), seen
