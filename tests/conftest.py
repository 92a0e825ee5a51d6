"""Helpers shared by the tests: run ``terrainview`` as a subprocess or in-process; the ``gl`` marker.

tests/ goes on ``sys.path`` here, once, whatever pytest's import mode, so test modules import their siblings
(``helpers``, ``hostile``, ``reference``, the ``gl_fixtures`` plugin) by name.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from terrainview.cli import main

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))


@pytest.fixture
def run_cli():
    """``run_cli(*args, cwd=None, env=None)``: ``python -m terrainview.cli ARGS`` -> CompletedProcess (text)."""

    def run(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "terrainview.cli", *map(str, args)], capture_output=True,
                              text=True, cwd=cwd, env=env, timeout=300)

    return run


@pytest.fixture
def call_main(capsys):
    """``call_main(*args)``: ``terrainview.cli.main`` in this process -> (status, stdout, stderr).

    argparse's own errors end in SystemExit; its code counts as the status.
    """

    def call(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            status = main([str(arg) for arg in args])
        except SystemExit as stop:
            status = stop.code
        out, err = capsys.readouterr()
        return status, out, err

    return call


@pytest.fixture
def usage_error():
    """``usage_error(status, stderr, *fragments)``: asserts exit status 2 and exactly one line on stderr,
    ``terrainview...: error: ...``, that contains every fragment."""

    def check(status: int, stderr: str, *fragments: str) -> None:
        assert status == 2, stderr
        lines = stderr.splitlines()
        assert len(lines) == 1, stderr
        assert lines[0].startswith("terrainview") and "error: " in lines[0], stderr
        assert "Traceback" not in stderr
        for fragment in fragments:
            assert fragment in lines[0], (fragment, stderr)

    return check


GL_FIXTURES = {"gl_ctx", "renderer", "frame"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that makes or uses a GL context carries the ``gl`` marker (``-m "not gl"`` skips them): those
    taking a GL fixture, and those in modules that render through the CLI or a window (marked there)."""
    for item in items:
        if GL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.gl)
