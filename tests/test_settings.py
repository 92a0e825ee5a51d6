"""SceneSettings: SPEC's defaults, validation naming the option, the 1d-mode limit, and command-line parsing."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from terrainview.scene.settings import MODES, SceneSettings, SettingsError

# SPEC.md, "Options (the View Options dialog) and their defaults", and "Camera and keys".
SPEC_DEFAULTS = {
    "mode": "lines",
    "iterations": 2,
    "h": 0.7,
    "cloud_iterations": 5,
    "cloud_h": 0.7,
    "teximage_iterations": 8,
    "teximage_h": 0.7,
    "tile": 1,
    "seed": 0,
    "antialias": True,
    "invert": False,
    "linear": True,
    "height_scale": 1.0,  # DEF_HEIGHT_SCALE
    "yrot": 0.0,
    "ytrans": -0.5,
    "ztrans": -3.0,
}


def test_defaults_are_the_originals():
    settings = SceneSettings()
    for name, value in SPEC_DEFAULTS.items():
        assert getattr(settings, name) == value, name
        assert type(getattr(settings, name)) is type(value), name
    assert set(MODES) == {"1d", "lines", "rendered", "clouds", "teximage"}


def test_settings_are_frozen_and_replace_validates():
    settings = SceneSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.h = 0.5  # type: ignore[misc]
    changed = settings.replace(h=0.25, seed=9)
    assert (changed.h, changed.seed, settings.h, settings.seed) == (0.25, 9, 0.7, 0)
    with pytest.raises(SettingsError, match=r"^h: .*1\.5"):
        settings.replace(h=1.5)


BAD_VALUES = [
    ("mode", "3d"), ("mode", None),
    ("iterations", 0), ("iterations", 17), ("iterations", 2.5), ("iterations", True), ("iterations", "4"),
    ("h", -0.1), ("h", 1.1), ("h", float("nan")), ("h", "0.5"),
    ("cloud_iterations", 0), ("cloud_iterations", 13), ("cloud_h", 2.0),
    ("teximage_iterations", 13), ("teximage_h", -1.0),
    ("tile", 0), ("tile", 9), ("tile", "endles"), ("camera", "walk"),
    ("seed", -1), ("seed", 2**32), ("seed", 1.5),
    ("height_scale", 0.0), ("height_scale", -1.0), ("height_scale", 101.0), ("height_scale", float("inf")),
    ("antialias", "yes"), ("invert", 1), ("linear", None),
    ("yrot", float("nan")), ("ytrans", 10001.0), ("ztrans", float("-inf")), ("pitch", 81.0),
]


@pytest.mark.parametrize("name, value", BAD_VALUES)
def test_bad_values_are_refused_naming_the_option(name, value):
    with pytest.raises(SettingsError) as error:
        SceneSettings(**{name: value})
    message = str(error.value)
    assert message.startswith(f"{name}: "), message
    assert repr(value) in message, message
    assert isinstance(error.value, ValueError)


@pytest.mark.parametrize("name, low, high", [("h", 0.0, 1.0), ("tile", 1, 8), ("seed", 0, 2**32 - 1),
                                             ("cloud_iterations", 1, 12), ("pitch", -80.0, 80.0)])
def test_range_ends_are_allowed(name, low, high):
    assert getattr(SceneSettings(**{name: low}), name) == low
    assert getattr(SceneSettings(**{name: high}), name) == high


def test_iterations_limit_depends_on_the_mode():
    assert SceneSettings(mode="1d", iterations=16).iterations == 16
    for mode in MODES[1:]:
        assert SceneSettings(mode=mode, iterations=12).iterations == 12
        with pytest.raises(SettingsError) as error:
            SceneSettings(mode=mode, iterations=13)
        assert str(error.value).startswith("iterations: 13") and "1d" in str(error.value)
    with pytest.raises(SettingsError, match="^iterations: "):
        SceneSettings(mode="1d", iterations=17)
    # Leaving 1d mode with a 1D-only count is refused too.
    with pytest.raises(SettingsError, match="^iterations: 14"):
        SceneSettings(mode="1d", iterations=14).replace(mode="rendered")


def parse(*argv: str, base: SceneSettings | None = None) -> SceneSettings:
    parser = argparse.ArgumentParser()
    SceneSettings.add_arguments(parser)
    return SceneSettings.from_namespace(parser.parse_args(list(argv)), base)


def test_command_line_options():
    assert parse() == SceneSettings()
    settings = parse("--mode", "rendered", "--iterations", "7", "--h", "0.25", "--seed", "16", "--tile", "3",
                     "--height-scale", "2.5", "--no-aa", "--invert", "--nearest", "--cloud-h", "0.4",
                     "--ztrans", "-2", "--water-level", "0.1")
    assert (settings.mode, settings.iterations, settings.h, settings.seed, settings.tile) == ("rendered", 7, 0.25,
                                                                                             16, 3)
    assert (settings.height_scale, settings.antialias, settings.invert, settings.linear) == (2.5, False, True, False)
    assert (settings.cloud_h, settings.ztrans, settings.water_level) == (0.4, -2.0, 0.1)
    assert isinstance(settings.iterations, int) and isinstance(settings.h, float)


def test_unset_options_keep_the_base_scene():
    base = SceneSettings(mode="clouds", seed=5, antialias=False, h=0.3)
    settings = parse("--seed", "6", base=base)
    assert settings == base.replace(seed=6)
    assert parse("--aa", base=base).antialias is True


# --- the command line, in-process and as a subprocess ----------------------------------------------------

BAD_COMMAND_LINES = [
    (["--iterations", "0"], "iterations: "),
    (["--iterations", "13"], "iterations: 13"),
    (["--mode", "1d", "--iterations", "17"], "iterations: "),
    (["--iterations", "1.5"], "argument --iterations"),
    (["--h", "abc"], "argument --h: expected a number from 0 to 1, got 'abc'"),
    (["--h", "1.5"], "h: "),
    (["--h", "nan"], "argument --h"),
    (["--seed", "-1"], "seed: "),
    (["--seed", "4294967296"], "seed: "),
    (["--tile", "0"], "tile: "),
    (["--height-scale", "0"], "height_scale: "),
    (["--mode", "3d"], "argument --mode"),
    (["--cloud-iterations", "x"], "argument --cloud-iterations"),
    (["--pitch", "90"], "pitch: "),
]


@pytest.mark.parametrize("options, named", BAD_COMMAND_LINES)
def test_bad_options_exit_2_with_one_line(tmp_path, call_main, usage_error, options, named):
    status, out, err = call_main("export", "-o", tmp_path / "out.npy", *options)
    usage_error(status, err, named)
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_bad_options_no_traceback_in_a_subprocess(tmp_path, run_cli, usage_error):
    for options, named in (BAD_COMMAND_LINES[0], BAD_COMMAND_LINES[4], BAD_COMMAND_LINES[8]):
        result = run_cli("export", "-o", "out.npy", *options, cwd=tmp_path)
        usage_error(result.returncode, result.stderr, named)
        assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []
