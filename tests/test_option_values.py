"""One rule for every number on the command line, negative values as values, and the viewer's window options
(--size, --size_mult, --samples, --window) refused in one line before any window opens."""

from __future__ import annotations

import argparse

import pytest

from terrainview import cli
from terrainview.scene.arguments import add_scene_arguments, one_line_errors
from terrainview.scene.image_size import parse_size
from terrainview.scene.settings import SceneSettings, SettingsError
from terrainview.window.window_arguments import parse_window_size

LONG = "1" * 4300


def parse(*argv: str) -> SceneSettings:
    parser = one_line_errors(argparse.ArgumentParser(prog="terrainview"))
    add_scene_arguments(parser)
    return SceneSettings.from_namespace(parser.parse_args(list(argv)))


@pytest.mark.parametrize(("option", "value", "expected"), [
    ("--seed", "３", "an integer from 0 to 4294967295"),  # full-width digit
    ("--seed", "٣", "an integer from 0 to 4294967295"),  # Arabic-Indic digit
    ("--seed", "1_0", "an integer from 0 to 4294967295"),
    ("--seed", "0x3", "an integer from 0 to 4294967295"),
    ("--iterations", "0b11", "an integer from 1 to 12"),
    ("--tile", "2.0", "an integer from 1 to 8"),
    ("--h", "٠.٥", "a number from 0 to 1"),
    ("--h", "1_0", "a number from 0 to 1"),
    ("--h", "0x1", "a number from 0 to 1"),
    ("--yrot", "-inf", "not a finite number"),
    ("--yrot", "nan", "not a finite number"),
    ("--ztrans", "1e999", "too large"),
    ("--height-scale", "1e-320", "too small"),
    ("--height-scale", "1e-400", "too small"),
    ("--seed", LONG, "4300 characters"),
    ("--h", LONG, "4300 characters"),
])
def test_numbers_outside_the_one_rule_are_refused_naming_the_option(tmp_path, call_main, usage_error, option,
                                                                    value, expected):
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", option, value)
    usage_error(status, err, f"argument {option}", expected)
    assert list(tmp_path.iterdir()) == []


def test_every_refusal_names_the_range(call_main, usage_error, tmp_path):
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--water-level", "abc")
    usage_error(status, err, "--water-level", "from -100 to 100", "'abc'")


def test_negative_values_are_values():
    settings = parse("--yrot", "-1e6", "--ytrans", "-5e-1", "--pitch", "-80", "--water-level", "-.5",
                     "--ztrans", "-2")
    assert (settings.yrot, settings.ytrans, settings.pitch, settings.water_level, settings.ztrans) == (
        -1e6, -0.5, -80.0, -0.5, -2.0)


def test_an_option_is_still_not_a_value(call_main, usage_error, tmp_path):
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--seed", "--mode", "lines")
    usage_error(status, err, "--seed", "expected one argument")


def test_a_negative_value_out_of_range_names_the_range(call_main, usage_error, tmp_path):
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--yrot", "-1e7")
    usage_error(status, err, "yrot", "from -1000000 to 1000000")


def test_plain_ascii_numbers_with_sign_and_exponent_are_accepted():
    settings = parse("--seed", "+12", "--h", "7e-1", "--height-scale", "1.5E0", "--iterations", "04")
    assert (settings.seed, settings.h, settings.height_scale, settings.iterations) == (12, 0.7, 1.5, 4)


# --- the viewer's window options: refused before any window (no display needed) ------------------------------


@pytest.mark.parametrize(("argv", "fragments"), [
    (["--size", "0x0"], ("--size", "from 1 to 8192")),
    (["--size=-5x-5"], ("--size", "from 1 to 8192")),
    (["--size", "99999x99999"], ("--size", "from 1 to 8192")),
    (["--size", "３x３"], ("--size",)),
    (["--size", "640"], ("--size", "WIDTHxHEIGHT")),
    (["--size_mult", "1e-9"], ("--size_mult", "0x0")),
    (["--size_mult", "inf"], ("--size_mult", "not a finite number")),
    (["--size_mult", "-2"], ("--size_mult", "above 0")),
    (["--size", "8000x8000", "--size_mult", "2"], ("--size_mult", "16000x16000")),
    (["--samples", "3"], ("--samples", "one of 0, 1, 2, 4, 8, 16")),
    (["--samples", "-4"], ("--samples", "one of")),
    (["--samples", "1_6"], ("--samples",)),
    (["--window", "sdl2"], ("--window sdl2", "not installed")),
])
def test_bad_window_options_exit_2_in_one_line(call_main, usage_error, monkeypatch, argv, fragments):
    monkeypatch.setenv("DISPLAY", ":0")  # never reached: the options are checked first
    status, _, err = call_main(*argv)
    usage_error(status, err, *fragments)


@pytest.mark.parametrize("text", ["640x480", "640X480", " 640 × 480 ", "+3x+3", "0x5", "8193x1", "1" * 40 + "x1",
                                  "３x３", "640"])
def test_the_window_size_follows_the_picture_size_rule(text):
    """The window's --size and render's and video's are one rule: the same sizes, the same messages."""
    try:
        expected = parse_size(text)
    except SettingsError as error:
        with pytest.raises(argparse.ArgumentTypeError) as caught:
            parse_window_size(text)
        assert "--size: " + str(caught.value) == str(error)
    else:
        assert parse_window_size(text) == expected


def test_help_lists_every_command(call_main, monkeypatch):
    status, out, _ = call_main("--help")
    assert status == 0
    assert "terrainview render" in out and "terrainview export" in out

    def video(argv):
        """Make a video of a flight."""
        return 0

    monkeypatch.setitem(cli.COMMANDS, "video", video)
    status, out, _ = call_main("--help")
    assert status == 0 and "terrainview video" in out and "Make a video of a flight." in out


@pytest.mark.parametrize(("argv", "fragments"), [
    (["--size", "３x３"], ("size", "WIDTHxHEIGHT")),
    (["--size", "1" * 40 + "x1"], ("size", "WIDTHxHEIGHT")),
    (["--supersample", "２"], ("--supersample", "one of 1, 2, 4")),
    (["--supersample", "0x2"], ("--supersample", "one of 1, 2, 4")),
])
def test_render_picture_options_follow_the_one_rule(tmp_path, call_main, usage_error, argv, fragments):
    status, _, err = call_main("render", "-o", tmp_path / "x.png", *argv)
    usage_error(status, err, *fragments)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [[], ["render", "-o", "x.png"], ["export", "-o", "x.npy"]])
@pytest.mark.parametrize("typed, meant", [("--iteratons", "--iterations"), ("--iteration", "--iterations"),
                                          ("--heigth-scale", "--height-scale")])
def test_a_near_miss_is_refused_with_what_was_meant(tmp_path, call_main, usage_error, command, typed, meant):
    """No abbreviations: --iteration is not taken for --iterations; a near miss names the option meant."""
    status, _, err = call_main(*command, typed, "3")
    usage_error(status, err, "unrecognized arguments")
    assert f"did you mean {meant}?" in err
    assert not (tmp_path / "x.png").exists()


def test_help_lists_the_window_options_apart(call_main):
    status, out, _ = call_main("--help")
    assert status == 0
    window, scene = out.index("\nwindow options (moderngl-window):"), out.index("\nscene options:")
    assert window < out.index("\n  -r RESIZABLE, --resizable") < scene < out.index("\n  --iterations ITERATIONS")


@pytest.mark.parametrize("arguments, fragment", [
    (["render", "-o", "x.png", "--size", ""], "--size: no size given"),
    (["export", "-o", "x.npy", "--erosion", "hydraulic", "--flow-map", ""], "--flow-map: no file name given"),
    (["--flight", ""], "no flight file name given"),
    (["video", "-o", "x.mp4", "--flight", ""], "no flight file name given"),
    (["render", "-o", "x.png", "--tile", "ENDLESS"], "--tile"),
    (["render", "-o", "x.png", "--cloud-iterations", "13"], "--cloud-iterations: expected an integer from 1 to 12"),
    (["render", "-o", "x.png", "--look", "weird"], "(choose from 'original', 'natural')"),
    (["render", "-o", "x.png", "--camera", "weird"], "(choose from 'orbit', 'fly')"),
    (["export", "-o", "x.npy", "--erosion", "hydraulic", "--flow-map", "x.npy"],
     "--flow-map: x.npy is already the output; name another file"),
])
def test_empty_and_misnamed_values_are_one_line_naming_the_option(tmp_path, call_main, usage_error, monkeypatch,
                                                                  arguments, fragment):
    monkeypatch.chdir(tmp_path)
    status, _, err = call_main(*arguments)
    usage_error(status, err, fragment)
    assert not any(tmp_path.iterdir()), "nothing written"


@pytest.mark.parametrize("seconds, fps, frames, delay", [(655, 1, 656, 1000), (655, 7, 4586, 143)])
def test_a_gif_longer_than_its_delays_can_hold_is_refused_before_drawing(tmp_path, call_main, seconds, fps, frames,
                                                                         delay):
    """A still flight: Pillow merges the unchanging frames into one delay (frames x round(1000 / fps) ms) past GIF's
    16 bits of 1/100 s, which failed with an OverflowError once every frame was drawn. 655 s at 1 fps is 656
    frames; at 7 fps each frame's 142.9 ms is stored as 143."""
    flight = tmp_path / "still.toml"
    flight.write_text(f"version = 1\n[scene]\nmode = 'lines'\n[[keyframe]]\ntime = {seconds}\n")
    status, _, err = call_main("video", "-o", tmp_path / "x.gif", "--flight", flight, "--fps", str(fps), "--size",
                               "8x8")
    assert status == 2 and err.count("\n") == 1, err
    assert f"--speed: {frames} frames of {delay} ms are too long for a GIF (at most 655.35 s)" in err
    assert not (tmp_path / "x.gif").exists()


def test_a_toml_scene_with_a_byte_order_mark_loads(tmp_path):
    from terrainview.scene.scene_file import load_scene

    (tmp_path / "bom.toml").write_bytes("\ufeffversion = 1\n[scene]\niterations = 6\n".encode())
    assert load_scene(tmp_path / "bom.toml")[0].iterations == 6
