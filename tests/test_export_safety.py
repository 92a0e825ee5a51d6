"""Exports that must not eat memory, collide or leave litter: streaming OBJ, disk space checked up front,
companions that cannot collide with another export, signals and killed writers, symlinks and file modes."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
import tracemalloc
import types

import pytest
from helpers import names

from terrainview.base import atomic_files
from terrainview.kernels.fractal import diamond_square
from terrainview.output import obj_mesh

pytest_plugins = ["gl_fixtures"]


# --- OBJ: streaming, constant memory, size checked up front ---------------------------------------------------


def test_obj_bands_do_not_change_a_byte(tmp_path, monkeypatch):
    """Written a few vertices at a time or 65536 at a time, the OBJ is the same file."""
    grid = obj_mesh.SurfaceGrid(diamond_square(4, 3, 0.6), tile=2)
    obj_mesh.write_obj(grid, tmp_path / "a.obj", "a.mtl", "a-texture.png", tmp_path / "a.mtl", "header")
    monkeypatch.setattr(obj_mesh, "BAND_VALUES", 7)
    obj_mesh.write_obj(grid, tmp_path / "b.obj", "a.mtl", "a-texture.png", tmp_path / "b.mtl", "header")
    assert (tmp_path / "a.obj").read_bytes() == (tmp_path / "b.obj").read_bytes()
    text = (tmp_path / "a.obj").read_text()
    assert text.count("\nv ") == obj_mesh.vertex_count(grid.side, grid.tile)
    assert text.count("\nf ") == obj_mesh.face_count(grid.side, grid.tile)


def test_obj_writing_memory_does_not_grow_with_the_mesh(tmp_path):
    """Python-level allocations (numpy's included) while writing: the same for 1 tile as for 64 tiles."""
    heights = diamond_square(6, 1, 0.7)
    peaks = {}
    for tile in (1, 8):
        grid = obj_mesh.SurfaceGrid(heights, tile)
        tracemalloc.start()
        obj_mesh.write_obj(grid, tmp_path / "m.obj", "m.mtl", "m-texture.png", tmp_path / "m.mtl", "h")
        peaks[tile] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    faces_bytes = obj_mesh.face_count(heights.shape[0], 8) * 3 * 8  # one int64 face array of the whole mesh
    assert peaks[8] < 1.5 * peaks[1] + 1_000_000, peaks
    assert peaks[8] < faces_bytes, peaks


def vm_peak_kb(args: list[str], cwd) -> int:
    script = ("import re, sys; from terrainview.cli import main; status = main(sys.argv[1:]); "
              "print(re.search(r'VmPeak:\\s+(\\d+)', open('/proc/self/status').read())[1]); sys.exit(status)")
    result = subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prlimit and /proc are Linux's")
def test_a_large_obj_exports_under_a_memory_limit_near_a_small_ones_peak(tmp_path):
    """The address space a tiny export peaks at, plus 96 MB, is enough for 600,000 vertices (the whole-mesh
    arrays of the old writer needed about 150 MB more)."""
    baseline = vm_peak_kb(["export", "-o", "small.obj", "--iterations", "2", "--texture", "bands"], tmp_path)
    limit = (baseline + 96_000) * 1024
    result = subprocess.run(["prlimit", f"--as={limit}", sys.executable, "-m", "terrainview.cli", "export", "-o",
                             "large.obj", "--iterations", "7", "--tile", "6", "--texture", "bands"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "large.obj").read_text().count("\nv ") == 36 * 129 * 129


def test_an_obj_the_disk_cannot_hold_is_refused_up_front_with_its_size(tmp_path, call_main, usage_error,
                                                                       monkeypatch):
    monkeypatch.setattr(atomic_files.shutil, "disk_usage", lambda folder: types.SimpleNamespace(free=10**9))
    status, out, err = call_main("export", "-o", tmp_path / "t.obj", "--iterations", "12", "--tile", "8")
    usage_error(status, err, "t.obj", "needs about", "GB", "1.0 GB free")
    assert out == "" and names(tmp_path) == []


def test_the_estimate_is_close_to_the_real_size(tmp_path, call_main):
    status, _, err = call_main("export", "-o", tmp_path / "t.obj", "--iterations", "5", "--tile", "2",
                               "--texture", "bands")
    assert status == 0, err
    real = (tmp_path / "t.obj").stat().st_size
    assert 0.8 * real < obj_mesh.obj_size_estimate(33, 2) < 1.3 * real


# --- companions ---------------------------------------------------------------------------------------------


def test_a_heightmap_png_and_an_obj_of_the_same_name_coexist(tmp_path, call_main):
    for name in ("hm.png", "hm.obj"):
        status, _, err = call_main("export", "-o", tmp_path / name, "--iterations", "3", "--texture", "bands")
        assert status == 0, err
    assert names(tmp_path) == ["hm-texture.png", "hm.mtl", "hm.obj", "hm.png"]
    from PIL import Image

    with Image.open(tmp_path / "hm.png") as image:
        assert image.mode.startswith("I;16"), "the heightmap is still the 16-bit heightmap"


def test_a_blocking_companion_is_named_with_its_role(tmp_path, call_main, usage_error):
    (tmp_path / "hm-texture.png").write_bytes(b"mine")
    status, _, err = call_main("export", "-o", tmp_path / "hm.obj", "--iterations", "3")
    usage_error(status, err, "hm-texture.png (the texture of hm.obj) already exists", "--force")
    assert names(tmp_path) == ["hm-texture.png"]


# --- symlinks and modes ---------------------------------------------------------------------------------------


def test_a_dangling_symlink_is_an_existing_file(tmp_path, call_main, usage_error):
    link = tmp_path / "x.npy"
    link.symlink_to(tmp_path / "nowhere")
    status, _, err = call_main("export", "-o", link, "--iterations", "2")
    usage_error(status, err, "x.npy already exists")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()
    status, _, err = call_main("export", "-o", link, "--iterations", "2", "--force")
    assert status == 0, err
    assert not link.is_symlink() and link.stat().st_size > 0


def test_force_keeps_the_mode_of_the_replaced_file(tmp_path, call_main):
    target = tmp_path / "x.raw"
    target.write_bytes(b"old")
    target.chmod(0o600)
    status, _, err = call_main("export", "-o", target, "--iterations", "2", "--force")
    assert status == 0, err
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_new_file_honours_the_umask(tmp_path, call_main):
    previous = os.umask(0o027)
    try:
        status, _, err = call_main("export", "-o", tmp_path / "x.raw", "--iterations", "2")
    finally:
        os.umask(previous)
    assert status == 0, err
    assert stat.S_IMODE((tmp_path / "x.raw").stat().st_mode) == 0o640


# --- parts: signals, killed writers -------------------------------------------------------------------------


def part_names(folder) -> list[str]:
    return [name for name in names(folder) if name.endswith(".part")]


def start_long_export(folder) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "terrainview.cli", "export", "-o", "big.obj", "--iterations",
                             "8", "--tile", "8", "--texture", "bands"], cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def wait_for_parts(folder, process) -> list[str]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        parts = part_names(folder)
        if len(parts) == 3 and (folder / parts[0]).stat().st_size + (folder / parts[1]).stat().st_size > 0:
            return parts
        time.sleep(0.1)
    pytest.fail("the export wrote no parts")


def signalled_status(process: subprocess.Popen, signal_number: int) -> int | None:
    """Send the signal to a still running ``process`` and return its exit status (killed if it hangs)."""
    try:
        if process.poll() is None:
            process.send_signal(signal_number)
        return process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_remove_the_parts(tmp_path, signal_number):
    process = start_long_export(tmp_path)
    try:
        parts = wait_for_parts(tmp_path, process)
        assert all(re.fullmatch(rf"\.big[.-].*\.terrainview-{process.pid}\.\w+\.part", part) for part in parts), parts
    finally:
        status = signalled_status(process, signal_number)
    assert status == -signal_number
    assert names(tmp_path) == [], "no part and no output left behind"


def test_parts_of_a_killed_writer_are_removed_by_the_next_write(tmp_path, call_main):
    process = start_long_export(tmp_path)
    try:
        wait_for_parts(tmp_path, process)
        process.kill()
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert len(part_names(tmp_path)) == 3, "SIGKILL cannot be caught: the parts stay for now"
    alive = tmp_path / f".other.npy.terrainview-{os.getppid()}.abc123.part"  # a writer that is still running
    alive.write_bytes(b"in progress")
    status, _, err = call_main("export", "-o", tmp_path / "small.npy", "--iterations", "2")
    assert status == 0, err
    assert names(tmp_path) == [alive.name, "small.npy"]


def test_an_ignored_sighup_stays_ignored(tmp_path):
    """Under nohup a hangup neither ends the writer nor takes its part away: the output still appears."""
    script = ("import pathlib, signal, sys; from terrainview.base import atomic_files\n"
              "signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup leaves it\n"
              "with atomic_files.atomic_output(pathlib.Path('out.txt'), False) as part:\n"
              "    part.write_text('written')\n"
              "    print(part.name, flush=True)\n"
              "    sys.stdin.readline()\n")
    process = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        part = process.stdout.readline().strip()
        assert names(tmp_path) == [part]
        process.send_signal(signal.SIGHUP)
        _, err = process.communicate("go on\n", timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert names(tmp_path) == ["out.txt"] and (tmp_path / "out.txt").read_text() == "written"


def test_all_or_none_when_a_destination_appears_at_the_end(tmp_path):
    """The xfail of test_obj_export, at the files level: nothing is renamed when any destination is taken."""
    taken = tmp_path / "b.txt"
    destinations = {tmp_path / "a.txt": "", taken: "its partner"}
    with (pytest.raises(atomic_files.OutputError, match="b.txt"),
          atomic_files.atomic_outputs(destinations, False) as temporaries):
        for temporary in temporaries.values():
            temporary.write_text("new")
        taken.write_text("someone else's")
    assert names(tmp_path) == ["b.txt"] and taken.read_text() == "someone else's"


# --- part folders (a video's frames) --------------------------------------------------------------------------


def dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_part_folder_of_a_killed_writer_is_removed_with_what_it_holds(tmp_path):
    stale = tmp_path / f".frames.terrainview-{dead_pid()}.abc123.part"
    stale.mkdir()
    (stale / "frame-00000.png").write_bytes(b"half")
    (stale / f".frame-00001.png.terrainview-{dead_pid()}.x1.part").write_bytes(b"half")
    alive = tmp_path / f".other.terrainview-{os.getppid()}.abc123.part"  # a writer that is still running
    alive.mkdir()
    atomic_files.remove_stale_parts(tmp_path)
    assert names(tmp_path) == [alive.name]


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_remove_a_part_folder_with_what_it_holds(tmp_path, signal_number):
    # The signal's default action, whatever the runner left ignored (an ignored one stays ignored, by design);
    # short sleeps, so a handler that failed to end the process shows as a timeout, not as a long sleep's end.
    script = ("import pathlib, signal, time; from terrainview.base import atomic_files\n"
              f"signal.signal({int(signal_number)}, signal.SIG_DFL)\n"
              "with atomic_files.atomic_folder(pathlib.Path('frames'), False) as folder:\n"
              "    (folder / 'frame-00000.png').write_bytes(b'drawn')\n"
              "    print(folder.name, flush=True)\n"
              "    for _ in range(600):\n"
              "        time.sleep(0.1)\n")
    process = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        part = process.stdout.readline().strip()
        assert names(tmp_path) == [part] and names(tmp_path / part) == ["frame-00000.png"]
    finally:
        status = signalled_status(process, signal_number)
    assert status == -signal_number
    assert names(tmp_path) == []


def test_a_part_folder_is_removed_on_failure_and_named_like_a_part(tmp_path):
    with pytest.raises(RuntimeError), atomic_files.atomic_folder(tmp_path / "frames", False) as folder:
        assert re.fullmatch(rf"\.frames\.terrainview-{os.getpid()}\.\w+\.part", folder.name), folder.name
        (folder / "frame-00000.png").write_bytes(b"drawn")
        raise RuntimeError
    assert names(tmp_path) == []


def test_a_new_frames_folder_honours_the_umask_and_an_empty_one_keeps_its_mode(tmp_path):
    previous = os.umask(0o027)
    try:
        with atomic_files.atomic_folder(tmp_path / "new", False) as folder:
            (folder / "a.png").write_bytes(b"a")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o750
    (tmp_path / "empty").mkdir(mode=0o700)
    with atomic_files.atomic_folder(tmp_path / "empty", False) as folder:
        (folder / "b.png").write_bytes(b"b")
    assert stat.S_IMODE((tmp_path / "empty").stat().st_mode) == 0o700
    assert names(tmp_path / "empty") == ["b.png"] and names(tmp_path) == ["empty", "new"]


def test_look_alike_user_files_beside_every_output_survive(tmp_path, call_main):
    """Only what terrainview itself names and fills is ever removed: a user's hidden .part files and folders,
    and a part-named folder holding anything but frames, stay beside every kind of output."""
    gone = dead_pid()
    user_files = [".thesis.2023.final.part", ".notes.2024.v2.part", f".x.{gone}.abc123.part",
                  f".y.terrainview{gone}.abc.part"]
    for name in user_files:
        (tmp_path / name).write_text("the user's own words")
    folder = tmp_path / f".frames.terrainview-{gone}.abc123.part"  # named like ours, but holds the user's file
    folder.mkdir()
    (folder / "mine.docx").write_text("keep me")
    (tmp_path / ".draft.2024.part").mkdir()
    (tmp_path / ".draft.2024.part" / "frame-00001.png").write_bytes(b"the user's")
    flight = tmp_path / "flight.toml"
    flight.write_text("version = 1\n[scene]\nmode = 'lines'\niterations = 2\n[[keyframe]]\ntime = 0.5\n")
    outputs = [("render", "-o", tmp_path / "a.png", "--size", "16x16"),
               ("export", "-o", tmp_path / "b.npy", "--iterations", "2"),
               ("export", "-o", tmp_path / "c.obj", "--iterations", "2"),
               ("video", "-o", tmp_path / "d.gif", "--flight", flight, "--size", "16x16", "--fps", "2",
                "--progress", "none"),
               ("video", "--frames", tmp_path / "e", "--flight", flight, "--size", "16x16", "--fps", "2",
                "--progress", "none")]
    for arguments in outputs:
        status, _, err = call_main(*arguments)
        assert status == 0, (arguments, err)
        for name in user_files:
            assert (tmp_path / name).read_text() == "the user's own words", (arguments, name)
        assert (folder / "mine.docx").read_text() == "keep me", arguments
        assert (tmp_path / ".draft.2024.part" / "frame-00001.png").exists(), arguments
