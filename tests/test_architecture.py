"""The house's plan, checked: layers as packages, imports pointing one way, names that cannot be confused."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "terrainview"
LAYERS = ("base", "kernels", "scene", "render", "output", "window", "commands")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if path.name not in ("__init__.py", "__main__.py"))


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    """Run the import contract of pyproject.toml over the terrainview package found in ``tree``."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / "pyproject.toml")], cwd=tree,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)


def planted_copy(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the package with ``line`` added at the end of ``module`` (a path under terrainview/)."""
    shutil.copytree(PACKAGE, tmp_path / "terrainview", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "terrainview" / module
    target.write_text(target.read_text() + f"\n{line}\n")
    return tmp_path


def test_the_import_contract_holds():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 5 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("module, line, broken", [
    ("kernels/fractal.py", "from terrainview.scene import settings", "Layers point one way"),
    ("render/gpu.py", "from terrainview.window import panel", "Layers point one way"),
    ("window/app.py", "from terrainview.commands import render", "Layers point one way"),
    ("scene/catalog.py", "from terrainview.scene import settings", "No import circles"),
    ("kernels/texturing.py", "import moderngl", "Kernels and the scene's data draw nothing: no GL, no window"),
    ("scene/world_regions.py", "from imgui_bundle import imgui",
     "Kernels and the scene's data draw nothing: no GL, no window"),
    ("kernels/lattice.py", "import numba", "First map without a compiler: lattice, fractal_numpy import no numba"),
    ("kernels/fractal_numpy.py", "from terrainview.kernels import kernel_common",  # numba, one step removed
     "First map without a compiler: lattice, fractal_numpy import no numba"),
    ("kernels/fractal.py", "from numba import njit", "fractal imports numba only through fractal_numba"),
    ("kernels/fractal.py", "from terrainview.kernels import erosion",  # numba, one step removed
     "fractal imports numba only through fractal_numba"),
])
def test_an_arrow_that_runs_back_up_breaks_the_contract(tmp_path, module, line, broken):
    result = lint_imports(planted_copy(tmp_path, module, line))
    assert result.returncode != 0, result.stdout
    assert f"{broken} BROKEN" in result.stdout


def module_names_above(path: Path, package: Path = PACKAGE) -> list[str]:
    """The terrainview modules above ``path``'s layer that its code names in a string (docstrings aside).

    What import-linter cannot see: a module run as a child process (``python -m terrainview.cli``) or imported by
    importlib is a dependency too. Window and commands are siblings, each above the other; the CLI, on top (it
    runs the commands by name), is not checked.
    """
    layer = path.relative_to(package).parts[0]
    rank = {name: index for index, name in enumerate(LAYERS)} | {"commands": LAYERS.index("window"), "cli": 99}
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    named = [name for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
             for name in re.findall(r"terrainview\.(\w+)", node.value)]
    return [f"terrainview.{name}" for name in named if name in rank and name != layer and rank[name] >= rank[layer]]


def test_no_layer_names_a_module_above_it_in_a_string():
    found = {str(path.relative_to(ROOT)): names for path in PACKAGE.rglob("*.py")
             if path.parent != PACKAGE and (names := module_names_above(path))}
    assert found == {}


@pytest.mark.parametrize("module, line", [
    ("window/flythrough_controls.py", 'CHILD = [sys.executable, "-m", "terrainview.cli", "video"]'),
    ("window/app.py", 'RENDER = importlib.import_module("terrainview.commands.render")'),
    ("render/renderer.py", 'PANEL = "terrainview.window.panel"'),
])
def test_a_module_above_named_in_a_string_is_found(tmp_path, module, line):
    copy = planted_copy(tmp_path, module, line) / "terrainview"
    assert module_names_above(copy / module, copy) != []


def test_every_layer_is_a_package_that_says_what_it_holds_and_may_import():
    for layer in LAYERS:
        docstring = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text()))
        assert docstring and "import" in docstring, layer
    flat = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "cli.py"]


def test_no_two_modules_share_a_name():
    counts = Counter(path.stem for path in modules())
    assert [name for name, count in counts.items() if count > 1] == []


def test_no_two_classes_share_a_name():
    classes = Counter(node.name for path in modules() for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, ast.ClassDef))
    assert [name for name, count in classes.items() if count > 1] == []


def test_no_getattr_of_a_name_built_from_a_string():
    """Functions are found through the catalog's entries and registries, never by a name put together at run time."""
    built = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) > 1 and isinstance(node.args[1], (ast.JoinedStr, ast.BinOp))):
                built.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert built == []


def test_texts_the_window_may_show_are_in_the_panels_font():
    """The panel's font (ImGui's own) has the Latin-1 characters only and draws any other as "?" (an undo button
    read "H 0.70 ? 0.45"): no string in the program, docstrings aside, may need another."""
    outside = []
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and node.value != "\ufeff"):  # a byte-order mark stripped from files, never shown
                try:
                    node.value.encode("latin-1")
                except UnicodeEncodeError:
                    outside.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not outside, outside
