"""The wheel: it carries the shaders and assets, an installed copy finds them, and --version works.

The wheel is built with hatchling: in this environment when it is installed (``python -m build
--no-isolation``), else by ``pip wheel``, which fetches hatchling from the package index; without network
access and without hatchling the build tests are skipped.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import terrainview

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# The version is written once, in terrainview/__init__.py; the build reads it from there.
VERSION = re.search(r'^__version__ = "([^"]+)"', (ROOT / "terrainview" / "__init__.py").read_text(), re.M)[1]
OFFLINE_SIGNS = ("No matching distribution found for hatchling", "Could not find a version that satisfies",
                 "Failed to establish a new connection", "Temporary failure in name resolution",
                 "Network is unreachable")


def source_files(folder: str) -> list[str]:
    """Files under the source tree's top-level folder, as paths relative to it (hidden files left out)."""
    base = ROOT / folder
    if not base.is_dir():
        return []
    return sorted(path.relative_to(base).as_posix() for path in base.rglob("*")
                  if path.is_file() and not any(part.startswith(".") for part in path.relative_to(base).parts)
                  and "__pycache__" not in path.parts)


def build_wheel(source: Path, out: Path) -> Path:
    if importlib.util.find_spec("hatchling") and importlib.util.find_spec("build"):
        command = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(source)]
    else:
        command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--wheel-dir", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        if any(sign in output for sign in OFFLINE_SIGNS):
            pytest.skip("hatchling is not installed and the package index cannot be reached")
        errors = [line.strip() for line in output.splitlines() if "Error:" in line or line.startswith("error")]
        pytest.fail("building the wheel failed: " + " | ".join(errors[-3:]) + f"\n{output[-3000:]}")
    wheels = list(out.glob("terrainview-*.whl"))
    assert len(wheels) == 1, output
    return wheels[0]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(ROOT, tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("installed")
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--target",
                             str(target), str(wheel)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return target


def run_installed(target: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run Python code with only the installed copy of terrainview importable from PYTHONPATH."""
    env = dict(os.environ, PYTHONPATH=str(target))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def test_source_tree_has_shaders():
    assert any(name.endswith(".glsl") for name in source_files("shaders")), "no .glsl file in shaders/"


def test_wheel_carries_package_shaders_and_assets(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(name).decode() for name in names if name.endswith("entry_points.txt"))
        metadata = next(archive.read(name).decode() for name in names if name.endswith(".dist-info/METADATA"))
    shaders = source_files("shaders")
    assert any(name.endswith(".glsl") for name in shaders)
    for folder, files in (("shaders", shaders), ("assets", source_files("assets"))):
        missing = [name for name in files if f"terrainview/{folder}/{name}" not in names]
        assert not missing, f"missing from the wheel: {folder}/{missing}"
    modules = {f"terrainview/{path.name}" for path in (ROOT / "terrainview").glob("*.py")}
    assert modules <= names, sorted(modules - names)
    assert not any("__pycache__" in name or name.endswith((".nbi", ".nbc")) for name in names)
    assert not any(name.startswith(("tests/", "bench/")) for name in names)
    assert "terrainview = terrainview.cli:main" in entry_points
    assert f"Version: {VERSION}" in metadata.splitlines()


def test_installed_copy_finds_its_resources(installed, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import terrainview, terrainview.base.resources as r; print(terrainview.__file__); "
            "print(r.shaders_dir()); print(terrainview.__version__)")
    result = run_installed(installed, code, elsewhere)
    assert result.returncode == 0, result.stderr
    package_file, shaders, version = result.stdout.splitlines()
    assert Path(package_file).is_relative_to(installed)  # not the source tree's copy
    shaders = Path(shaders)
    assert shaders.is_relative_to(installed) and shaders == installed / "terrainview" / "shaders"
    assert sorted(path.name for path in shaders.glob("*.glsl")) == sorted(
        name for name in source_files("shaders") if name.endswith(".glsl"))
    assert version == VERSION
    assets = source_files("assets")
    if assets:  # an empty assets/ ships nothing (a wheel holds no empty folders)
        result = run_installed(installed, "import terrainview.base.resources as r; print(r.assets_dir())", elsewhere)
        assert result.returncode == 0, result.stderr
        folder = Path(result.stdout.strip())
        assert folder == installed / "terrainview" / "assets"
        assert all((folder / name).is_file() for name in assets)


def test_clean_checkout_builds(tmp_path):
    """What a fresh clone has -- the files git tracks, as they are now -- builds a wheel with the shaders.

    An empty folder is not tracked by git, so a forced-include folder with no tracked file breaks the build.
    """
    git = shutil.which("git")
    if not git or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    checkout = tmp_path / "checkout"
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # tracked but deleted in the working tree: not part of a clone of the next commit
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    wheel = build_wheel(checkout, tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        assert any(name.startswith("terrainview/shaders/") and name.endswith(".glsl")
                   for name in archive.namelist())


def test_version_option(run_cli):
    result = run_cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"terrainview {terrainview.__version__}\n"
    assert terrainview.__version__ == VERSION  # the environment's install is this source tree
    script = Path(sys.executable).parent / "terrainview"
    if script.exists():  # the console script of this environment
        result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
        assert (result.returncode, result.stdout) == (0, f"terrainview {VERSION}\n")
