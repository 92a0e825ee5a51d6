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


NAN, INF = float("nan"), float("inf")
# Every setting's validation, in one place: values taken (a range's ends included) and values refused.
# A new setting fails test_every_setting_has_its_validation_cases until it has a row here.
VALIDATION: dict[str, tuple[tuple, tuple]] = {
    "mode": (("1d", "lines", "rendered", "clouds", "teximage"), ("3d", None, "Lines")),
    "iterations": ((1, 12), (0, 17, 2.5, True, "4")),
    "h": ((0.0, 1.0), (-0.1, 1.1, NAN, "0.5")),
    "cloud_iterations": ((1, 12), (0, 13)),
    "cloud_h": ((0.0, 1.0), (2.0, NAN)),
    "teximage_iterations": ((1, 12), (0, 13)),
    "teximage_h": ((0.0, 1.0), (-1.0,)),
    "tile": ((1, 8, "endless", "repeat"), (0, 9, "endles", "Repeat", 2.0)),
    "world_octaves": ((0, 8), (-1, 9, 2.5, "2")),
    "seed": ((0, 2**32 - 1), (-1, 2**32, 1.5)),
    "height_scale": ((1e-6, 100.0), (0.0, -1.0, 101.0, INF)),
    "invert": ((True, False), (1, "yes")),
    "antialias": ((True, False), ("yes", None)),
    "linear": ((True, False), (None, 0)),
    "generator": (("diamond-square", "fault"), ("perlin",)),
    "fault_iterations": ((1, 5000), (0, 5001)),
    "blur": ((0.0, 16.0), (-0.5, 16.5)),
    "seed_image": (("", "sketch.png"), (3, "x" * 4097)),
    "seed_passes": ((1, 8), (0, 9)),
    "passes": ((None, 0, 4), (-1, 5, 25, 2.5, "3")),  # at most 2 x iterations (2 here)
    "texture": (("teximage", "blend", "bands"), ("stone",)),
    "shading": (("none", "slope"), ("phong",)),
    "water_level": ((None, -100.0, 100.0), (-101.0, NAN, "0")),
    "erosion": (("none", "hydraulic", "thermal", "both"), ("wind",)),
    "erosion_droplets": ((0.0, 1e6), (-1.0, 1.1e6)),
    "erosion_strength": ((0.0, 1.0), (1.5,)),
    "erosion_radius": ((0.001, 0.1), (0.0, 0.2)),
    "erosion_capacity": ((0.0, 64.0), (65.0,)),
    "erosion_deposition": ((0.0, 1.0), (-0.1,)),
    "erosion_evaporation": ((0.0, 1.0), (1.01,)),
    "erosion_inertia": ((0.0, 1.0), (NAN,)),
    "talus": ((0.0, 89.0), (90.0,)),
    "thermal_passes": ((0, 1000), (-1, 1001, 2.5)),
    "lod": (("on", "off"), ("auto", True)),
    "look": (("original", "natural"), ("modern", 1)),
    "sun_azimuth": ((0.0, 360.0), (-1.0, 360.5, NAN)),
    "sun_elevation": ((-6.0, 90.0), (-7.0, 91.0)),
    "lod_error": ((0.01, 64.0), (0.0, 65.0)),
    "camera": (("orbit", "fly"), ("walk",)),
    "yrot": ((-1e6, 1e6), (NAN, 1.1e6)),
    "pitch": ((-80.0, 80.0), (81.0, -81.0)),
    "xtrans": ((-1e4, 1e4), (INF,)),
    "ytrans": ((-1e4, 1e4), (10001.0,)),
    "ztrans": ((-1e4, 1e4), (-INF,)),
    "eye_x": ((-1e4, 1e4), (-10001.0,)),
    "eye_y": ((-1e4, 1e4), (NAN,)),
    "eye_z": ((-1e4, 1e4), (1e5,)),
}


def test_every_setting_has_its_validation_cases():
    assert set(VALIDATION) == {spec.name for spec in dataclasses.fields(SceneSettings)}


@pytest.mark.parametrize("name, value", [(name, value) for name, (good, _) in VALIDATION.items() for value in good])
def test_values_in_range_are_taken(name, value):
    mode = {"iterations": "rendered"}.get(name, "lines")
    assert getattr(SceneSettings(**{"mode": mode, name: value}), name) == value


@pytest.mark.parametrize("name, value", [(name, value) for name, (_, bad) in VALIDATION.items() for value in bad])
def test_bad_values_are_refused_naming_the_option(name, value):
    with pytest.raises(SettingsError) as error:
        SceneSettings(**{name: value})
    message = str(error.value)
    assert message.startswith(f"{name}: "), message
    assert isinstance(error.value, ValueError)
    if not (isinstance(value, str) and len(value) > 60):  # a long value is cut short in the message
        assert repr(value) in message, message


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
    (["--height-scale", "0"], "--height-scale: "),
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
