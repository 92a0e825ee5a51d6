"""``python -m terrainview.scene.warmup`` compiles every kernel a generation can run, and a cold numba cache is noticed
before a generation starts (the terminal and the window say "compiling")."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from terrainview.scene import warmup
from terrainview.scene.settings import SceneSettings
from terrainview.window.generation_feed import GenerationWorker

COLD_REPORT = ("import json; from terrainview.kernels import erosion, fractal_numba, generators, lighting, lod, "
               "texturing\n"
               "from terrainview.scene import warmup\n"
               "print(json.dumps({'cold': [warmup.cold_kernels(s) for s in warmup.warm_up_settings()], "
               "'uncached': [d.__name__ for d in "
               "warmup._dispatchers([erosion, fractal_numba, generators, lighting, lod, texturing]) "
               "if not warmup._cached(d)]}))")


def run_python(code_or_module: list[str], cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    result = subprocess.run([sys.executable, *code_or_module], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result


def test_warm_up_compiles_every_kernel_into_an_empty_cache(tmp_path):
    import json

    before = json.loads(run_python(["-c", COLD_REPORT], tmp_path).stdout)
    assert all(before["cold"]), "an empty cache: every generation would compile"
    output = run_python(["-m", "terrainview.scene.warmup"], tmp_path).stdout
    assert "compiling terrain kernels" in output and "kernels ready" in output
    after = json.loads(run_python(["-c", COLD_REPORT], tmp_path).stdout)
    assert after["cold"] == [[] for _ in before["cold"]]
    assert set(after["uncached"]) <= warmup.OFF_PATH_KERNELS, "a kernel that warm-up does not reach"
    again = run_python(["-m", "terrainview.scene.warmup"], tmp_path).stdout
    assert "compiling" not in again


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_terminal_is_told_when_a_compile_is_coming(monkeypatch):
    monkeypatch.setattr(warmup, "cold_kernels", lambda settings: ["_fault_kernel"])
    terminal, pipe = Terminal(), io.StringIO()
    assert warmup.announce_compile(SceneSettings(), terminal) and warmup.announce_compile(SceneSettings(), pipe)
    assert "compiling terrain kernels" in terminal.getvalue()
    assert pipe.getvalue() == "", "piped output stays the command's own"
    monkeypatch.setattr(warmup.sys, "stderr", None)  # 2>&-: the compile still happens, unannounced
    assert warmup.announce_compile(SceneSettings())
    monkeypatch.setattr(warmup, "cold_kernels", lambda settings: [])
    assert not warmup.announce_compile(SceneSettings(), Terminal())


def test_the_worker_says_when_its_generation_compiles(monkeypatch):
    import terrainview.window.generation_feed as worker_module

    for cold in (True, False):
        monkeypatch.setattr(worker_module, "announce_compile", lambda settings, cold=cold: cold)
        worker = GenerationWorker()
        try:
            worker.request(SceneSettings(iterations=2))
            assert worker.wait_idle(60.0)
            assert worker.compiling is cold
        finally:
            worker.stop()


def test_a_cached_scene_has_no_cold_kernels():
    settings = SceneSettings(iterations=2, generator="fault", texture="bands", mode="rendered", erosion="both")
    from terrainview.scene.derived_arrays import DerivedArrays

    DerivedArrays().update(settings)
    warmup.warm_up()  # the level-of-detail kernels run while drawing
    assert warmup.cold_kernels(settings) == []
    assert {module.__name__.rsplit(".", 1)[-1] for module in warmup.kernel_modules(settings)} == {
        "erosion", "fractal_numba", "generators", "lod", "texturing"}
    assert {module.__name__ for module in warmup.kernel_modules(SceneSettings(mode="1d"))} == {
        "terrainview.kernels.fractal_numba"}


def test_both_builds_of_every_row_kernel_are_watched():
    """Row kernels are (serial, parallel) pairs: a cold build of either is a compile to announce."""
    from terrainview.kernels import erosion, generators, texturing

    names = {dispatcher.__name__ for dispatcher in warmup._dispatchers([erosion, generators, texturing])}
    for kernel in ("_thermal_share_rows", "_thermal_apply_rows", "_fault_rows", "_periodic_blur_rows"):
        assert {kernel, kernel + "_serial"} <= names, kernel
