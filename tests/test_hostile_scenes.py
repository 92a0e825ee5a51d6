"""Hostile scene files: every one is refused in one line naming the file, in bounded time and memory, by the
CLI (``--scene``) and by the window's Load / drop path, which shows a message and keeps the session."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
from helpers import names, window_load
from hostile import nested_json, png_bytes, png_claiming, scene_png, valid_json, write

from terrainview.scene import bounded_reader
from terrainview.scene.scene_file import load_scene, load_scene_with_extras
from terrainview.scene.settings import SceneSettings

pytest_plugins = ["gl_fixtures"]

BIG = "7" * 400


def crafted(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, a fragment the refusal must contain)."""
    files = {
        "toml nested 100k deep": (write(tmp_path / "deep.toml", "x = " + "[" * 100_000 + "]" * 100_000),
                                  "nested more than"),
        "inline tables 5k deep": (write(tmp_path / "tables.toml", "x = " + "{a = " * 5000 + "1" + "}" * 5000),
                                  "nested more than"),
        "dotted keys 5k deep": (write(tmp_path / "dotted.toml", "version = 1\n" + " . ".join(["a"] * 5000) + " = 1"),
                                "nested more than"),
        "png json 2000 deep": (scene_png(tmp_path / "deep.png", nested_json(2000)), "nested more than"),
        "toml 400-digit h": (write(tmp_path / "big.toml", f"version = 1\n[scene]\nh = {BIG}\n"), "characters"),
        "png 400-digit h": (scene_png(tmp_path / "big.png", '{"version": 1, "scene": {"h": ' + BIG + "}}"),
                            "characters"),
        "toml 5000-digit seed": (write(tmp_path / "seed.toml", f"version = 1\n[scene]\nseed = {'9' * 5000}"),
                                 "characters"),
        "toml too large": (write(tmp_path / "large.toml", "# " + "x" * (bounded_reader.MAX_TOML_BYTES + 10)),
                           "too large"),
        "png text not json": (scene_png(tmp_path / "bad.png", "{not json"), "damaged"),
        "png without a scene": (tmp_path / "plain.png", "carries no terrainview scene"),
        "png cut short": (tmp_path / "short.png", "not a readable PNG"),
        "folder": (tmp_path / "folder.toml", "is a folder"),
        "missing": (tmp_path / "missing.toml", "no such scene file"),
        "binary": (tmp_path / "binary.toml", "neither a PNG nor a TOML"),
    }
    (tmp_path / "plain.png").write_bytes(png_bytes({"Software": "another program"}))
    (tmp_path / "short.png").write_bytes(png_bytes({"terrainview-scene": valid_json()})[:40])
    (tmp_path / "folder.toml").mkdir()
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00" * 10)
    return files


def test_every_crafted_file_is_refused_by_the_cli_in_one_line(tmp_path, call_main, usage_error):
    output = tmp_path / "out" / "x.npy"
    output.parent.mkdir()
    for name, (path, fragment) in crafted(tmp_path).items():
        status, _, err = call_main("export", "-o", output, "--scene", path)
        usage_error(status, err, path.name, fragment)
        assert list(output.parent.iterdir()) == [], name


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, call_main, usage_error):
    fifo = tmp_path / "scene.toml"
    os.mkfifo(fifo)
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--scene", fifo)
    usage_error(status, err, "scene.toml", "FIFO")


def test_a_device_is_not_a_scene(call_main, usage_error, tmp_path):
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--scene", "/dev/zero")
    usage_error(status, err, "/dev/zero", "device")


def test_empty_scene_name_is_refused(call_main, usage_error, tmp_path):
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--scene", "")
    usage_error(status, err, "--scene", "no file name")


def test_an_empty_file_name_is_no_file_not_the_current_folder():
    from terrainview.scene.flythrough import FlightError, load_flight
    from terrainview.scene.scene_file import SceneError, load_scene

    with pytest.raises(FlightError, match="^no flight file name given$"):
        load_flight("")
    with pytest.raises(SceneError, match="^no scene file name given$"):
        load_scene("")


def test_a_huge_sparse_toml_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "huge.toml"
    with open(path, "wb") as stream:
        try:
            stream.truncate(300 * 2**30)
        except OSError as error:
            pytest.skip(f"this file system has no sparse files: {error}")
    with pytest.raises(bounded_reader.SceneError, match="too large"):
        load_scene(path)


def test_a_20000_square_png_scene_loads_from_its_text_without_decoding_pixels(tmp_path):
    """48 KB on disk, 400 megapixels: Pillow would stop it as a decompression bomb; its text is all we need."""
    path = scene_png(tmp_path / "bomb.png", valid_json(), width=20000, height=20000, bit_depth=1)
    assert path.stat().st_size < 200_000
    settings, warnings = load_scene(path)
    assert (settings.iterations, settings.seed, warnings) == (3, 7, [])


def test_a_compressed_text_chunk_is_read_and_a_text_bomb_is_not(tmp_path):
    good = tmp_path / "z.png"
    good.write_bytes(png_bytes({"terrainview-scene": valid_json()}, compressed_keys=("terrainview-scene",)))
    assert load_scene(good)[0].seed == 7
    bomb = tmp_path / "zbomb.png"
    bomb.write_bytes(png_bytes({"terrainview-scene": " " * (bounded_reader.MAX_PNG_TEXT_BYTES + 1)},
                               compressed_keys=("terrainview-scene",)))
    with pytest.raises(bounded_reader.SceneError, match="carries no terrainview scene"):
        load_scene(bomb)


def test_strings_may_hold_brackets_and_digits(tmp_path):
    """The pre-scan skips strings and comments: a seed image path full of brackets and digits is fine."""
    name = str(tmp_path / ("[[[[" * 20 + "9" * 60 + ".png"))
    Path(name).write_bytes(png_bytes({}))  # named by a scene, an image must be there when the scene is read
    path = write(tmp_path / "ok.toml", f"# {'[' * 100}\nversion = 1\n[scene]\nseed_image = '{name}'\n"
                                       f'mode = "lines"\nseed = 12\n')
    settings, _ = load_scene(path)
    assert settings.seed_image == name and settings.seed == 12


def test_many_unknown_keys_make_one_warning_with_a_count(tmp_path, call_main):
    keys = "\n".join(f"k{index:x}=1" for index in range(100_000))
    path = write(tmp_path / "many.toml", f"version = 1\n[scene]\nseed = 3\n{keys}\n")
    settings, warnings = load_scene(path)
    assert settings.seed == 3
    assert len(warnings) == 1 and "100,000 unknown settings ignored" in warnings[0]
    status, out, err = call_main("export", "-o", tmp_path / "x.npy", "--scene", path, "--iterations", "2")
    assert status == 0 and err.count("warning") == 1, err


def test_a_value_that_underflows_float32_is_refused_from_a_scene(tmp_path):
    path = write(tmp_path / "flat.toml", "version = 1\n[scene]\nheight_scale = 1e-320\n")
    with pytest.raises(bounded_reader.SceneError, match="height_scale"):
        load_scene(path)


def test_png_extras_are_the_picture_entries(tmp_path):
    texts = {"terrainview-scene": valid_json(), "terrainview.size": "1920x1080", "terrainview.supersample": "2",
             "terrainview.seed": "7"}
    path = tmp_path / "shot.png"
    path.write_bytes(png_bytes(texts))
    assert load_scene_with_extras(path)[2] == {"size": "1920x1080", "supersample": "2"}


# --- the window's Load / drop path ------------------------------------------------------------------------


def test_the_window_shows_a_message_and_keeps_its_settings_for_every_crafted_file(tmp_path):
    current = SceneSettings(seed=42)
    for name, (path, fragment) in crafted(tmp_path).items():
        settings, messages = window_load(path, current)
        assert settings is current, name
        assert len(messages) == 1 and fragment in messages[0], (name, messages)


def test_the_window_survives_any_exception_from_loading(tmp_path, monkeypatch):
    import terrainview.window.scene_actions as scene_actions

    def explode(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(scene_actions, "load_scene", explode)
    current = SceneSettings(seed=5)
    settings, messages = window_load(tmp_path / "x.toml", current)
    assert settings is current and messages == ["Scene not loaded: " + str(tmp_path / "x.toml") + ": RecursionError"]


# --- a picture's size and supersampling come back with its scene ----------------------------------------------


def test_render_reads_a_png_scene_once_for_its_settings_and_size(tmp_path, call_main, usage_error, monkeypatch):
    import terrainview.scene.scene_file as scene_file

    reads: list[Path] = []

    def counted(path, *args, **kwargs):
        reads.append(path)
        return bounded_reader.read_scene_source(path, *args, **kwargs)

    monkeypatch.setattr(scene_file, "read_scene_source", counted)
    shot = tmp_path / "shot.png"
    shot.write_bytes(png_bytes({"terrainview-scene": valid_json(), "terrainview.size": "0x5"}))
    status, _, err = call_main("render", "-o", tmp_path / "out.png", "--scene", shot)
    usage_error(status, err, "shot.png", "its picture size cannot be used", "width")
    assert [Path(read) for read in reads] == [shot]


@pytest.mark.gl
def test_render_from_a_png_scene_restores_its_size_and_supersampling(tmp_path, call_main):
    from PIL import Image

    first, second, third = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "c.png"
    status, _, err = call_main("render", "-o", first, "--size", "96x40", "--supersample", "2", "--iterations", "3")
    assert status == 0, err
    status, _, err = call_main("render", "-o", second, "--scene", first)
    assert status == 0, err
    assert load_scene_with_extras(second)[2] == {"size": "96x40", "supersample": "2"}
    status, _, err = call_main("render", "-o", third, "--scene", first, "--size", "50x20")
    assert status == 0, err
    with Image.open(second) as restored, Image.open(third) as given:
        assert (restored.size, given.size) == ((96, 40), (50, 20))
    assert load_scene_with_extras(third)[2]["supersample"] == "2"


def test_a_png_scene_with_a_bad_picture_size_is_named(tmp_path, call_main, usage_error):
    texts = {"terrainview-scene": valid_json(), "terrainview.size": "99999x1"}
    path = tmp_path / "odd.png"
    path.write_bytes(png_bytes(texts))
    status, _, err = call_main("render", "-o", tmp_path / "out.png", "--scene", path)
    usage_error(status, err, "odd.png", "picture size")
    assert names(tmp_path) == ["odd.png"]


def test_a_megabyte_in_one_value_is_refused_in_a_short_line(tmp_path):
    for key, value in (("seed_image", '"' + "a" * 900_000 + '"'), ("h", '"' + "9" * 900_000 + '"'),
                       ("mode", '"' + "x" * 4000 + '"')):
        path = write(tmp_path / f"{key}.toml", f"version = 1\n[scene]\n{key} = {value}\n")
        with pytest.raises(bounded_reader.SceneError) as refusal:
            load_scene(path)
        assert key in str(refusal.value) and len(str(refusal.value)) < 300


@pytest.mark.parametrize("text", ["x = " + "[" * 100_000 + "]" * 100_000, "x = " + "{a = " * 5000 + "1" + "}" * 5000,
                                  f"version = 1\nh = {BIG}\n"])
def test_a_hostile_flight_file_is_refused_in_one_line(tmp_path, call_main, usage_error, text):
    path = write(tmp_path / "flight.toml", text)
    status, _, err = call_main("video", "-o", tmp_path / "v.gif", "--flight", path)
    usage_error(status, err, "flight.toml")
    assert names(tmp_path) == ["flight.toml"]


# --- a flight in a GIF's comment: read by walking the GIF's blocks, never by decoding a frame --------------------


def gif_bytes(width: int, height: int, comment: bytes | None = None, *, truncate: int | None = None) -> bytes:
    """A GIF claiming width x height pixels, one tiny image and, when given, a comment before it."""
    data = bytearray(b"GIF89a" + width.to_bytes(2, "little") + height.to_bytes(2, "little") + b"\x00\x00\x00")
    if comment is not None:
        data += b"\x21\xfe"
        for start in range(0, len(comment), 255):
            piece = comment[start:start + 255]
            data += bytes([len(piece)]) + piece
        data += b"\x00"
    data += b"\x2c" + bytes(4) + width.to_bytes(2, "little") + height.to_bytes(2, "little") + b"\x00"
    data += b"\x02\x02\x4c\x01\x00\x3b"  # LZW minimum code size 2, one data sub-block, end, trailer
    return bytes(data[:truncate])


@pytest.mark.parametrize("command", ["video", "viewer"])
@pytest.mark.parametrize("name, data, fragment", [
    ("bomb.gif", gif_bytes(65535, 65535), "carries no terrainview flight"),
    ("large.gif", gif_bytes(16, 16, b"#" * (5 * 1024 * 1024)), "larger than 4 MiB"),
    ("cut.gif", gif_bytes(16, 16, b"version = 1", truncate=20), "not a readable GIF"),
])
def test_a_gif_flight_is_read_without_decoding_its_frames(tmp_path, call_main, usage_error, command, name, data,
                                                          fragment):
    (tmp_path / name).write_bytes(data)
    arguments = ["video", "-o", tmp_path / "out.mp4"] if command == "video" else []
    status, _, err = call_main(*arguments, "--flight", tmp_path / name)
    usage_error(status, err, name, fragment)
    assert "Decompression" not in err and "Traceback" not in err


def test_a_gif_comment_is_found_behind_a_global_colour_table(tmp_path):
    data = bytearray(gif_bytes(4, 4, b"hello"))
    data[10] = 0x81  # a global colour table of 4 colours (12 bytes) follows the screen descriptor
    data[13:13] = bytes(12)
    (tmp_path / "table.gif").write_bytes(bytes(data))
    assert bounded_reader.gif_comment(tmp_path / "table.gif", 100) == b"hello"


def test_values_from_a_file_reach_the_terminal_escaped(tmp_path, call_main, usage_error):
    """A scene naming an 'image' made of terminal escape sequences: the message shows them, never sends them."""
    (tmp_path / "pwned.toml").write_text('version = 1\n[scene]\nmode = "rendered"\n'
                                         'seed_image = "\\u001b]2;PWNED\\u0007"\n')
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--scene", tmp_path / "pwned.toml")
    usage_error(status, err, "\\x1b]2;PWNED\\x07")
    assert "\x1b" not in err and "\x07" not in err


def test_a_closed_stderr_does_not_lose_a_finished_export(tmp_path):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "terrainview", "export", "-o", "out.npy", "--iterations", "2",
                             "--height-scale", "0"], cwd=tmp_path, stderr=subprocess.DEVNULL, text=True,
                            stdout=subprocess.PIPE, timeout=120)
    assert result.returncode == 2  # the bad value is still refused, silently
    result = subprocess.run(f"{sys.executable} -m terrainview export -o out.npy --iterations 2 2>&-", shell=True,
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "out.npy").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_loses_no_export_and_says_its_lines_on_stderr(tmp_path):
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "terrainview", "export", "-o", "mesh.obj", "--iterations", "2"],
                                cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mesh-texture.png", "mesh.mtl", "mesh.obj"]
    lines = result.stderr.splitlines()
    assert len(lines) == 3 and all(line.startswith("terrainview: wrote mesh") for line in lines), lines
    assert all(line.endswith("(not printed on stdout: No space left on device)") for line in lines)


def test_a_closed_stdout_loses_no_export_and_its_line_is_said_on_stderr(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(f"{sys.executable} -m terrainview export -o out.npy --iterations 2 >&-", shell=True,
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and (tmp_path / "out.npy").exists()
    assert result.stderr.startswith("terrainview: wrote") and "(not printed on stdout: closed)" in result.stderr


def test_a_reader_gone_away_loses_no_picture_and_no_error_is_printed(tmp_path):
    import subprocess
    import sys

    command = f"{sys.executable} -m terrainview render -o shot.png --iterations 2 --size 16x9 | true; " \
              "echo ${PIPESTATUS[0]}"
    result = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "0" and result.stderr == "", result.stderr
    assert (tmp_path / "shot.png").stat().st_size > 0


@pytest.mark.parametrize("width, height", [(1, 67_108_864), (10_000, 10_000), (4097, 4097), (65_535, 65_535)])
def test_a_seed_image_past_the_pixel_limit_is_one_line_before_decoding(tmp_path, call_main, usage_error, width,
                                                                       height):
    """The size comes from the header: a PNG claiming 67 million pixels costs nothing, and Pillow's bomb
    warning never shows above the message."""
    (tmp_path / "claims.png").write_bytes(png_claiming(width, height))
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--seed-image", tmp_path / "claims.png")
    usage_error(status, err, "claims.png", "too large", "16777216")
    assert "Warning" not in err


def test_a_file_cannot_ask_for_erosion_that_would_take_minutes(tmp_path):
    """A million droplets per unit area at iterations 12 (hours here): drawn without erosion, and said; a scene's
    usual erosion stays; the user's own --erosion insists. A flight's keyframe cannot ask for it either."""
    from terrainview.scene.arguments import add_scene_arguments, scene_from_args
    from terrainview.scene.flythrough import load_flight

    usual = "version = 1\n[scene]\nmode = 'rendered'\niterations = 12\nerosion = 'both'\n"
    (tmp_path / "usual.toml").write_text(usual)
    assert load_scene(tmp_path / "usual.toml") == (SceneSettings(mode="rendered", iterations=12, erosion="both"), [])
    costly = usual + "erosion_droplets = 1000000\n"
    (tmp_path / "costly.toml").write_text(costly)
    settings, warnings = load_scene(tmp_path / "costly.toml")
    assert settings.erosion == "none" and settings.erosion_droplets == 1e6
    assert len(warnings) == 1 and "drawn without it (give --erosion both to insist)" in warnings[0], warnings
    parser = argparse.ArgumentParser()
    add_scene_arguments(parser)
    insisted = scene_from_args(parser.parse_args(["--scene", str(tmp_path / "costly.toml"), "--erosion", "both"]))
    assert insisted.settings.erosion == "both"
    (tmp_path / "teximage.toml").write_text("version = 1\n[scene]\nmode = '1d'\nteximage_iterations = 12\n"
                                            "erosion = 'both'\nerosion_droplets = 1000000\n")
    assert load_scene(tmp_path / "teximage.toml")[0].erosion == "none", "the teximage's map is eroded too, in 1D"
    (tmp_path / "flight.toml").write_text("version = 1\n[scene]\niterations = 12\nerosion_droplets = 1000000\n"
                                          "[[keyframe]]\ntime = 0\n[[keyframe]]\ntime = 1\nerosion = 'hydraulic'\n")
    flight, warnings = load_flight(tmp_path / "flight.toml")
    assert flight.at(1.0).erosion == "none" and len(warnings) == 1
    # Its scene asking too: still one warning for the file (its scene was checked apart, and said twice).
    (tmp_path / "both.toml").write_text("version = 1\n[scene]\niterations = 12\nerosion = 'both'\n"
                                        "erosion_droplets = 1000000\n[[keyframe]]\ntime = 0\n[[keyframe]]\n"
                                        "time = 1\nerosion = 'hydraulic'\n")
    flight, warnings = load_flight(tmp_path / "both.toml")
    assert flight.scene.erosion == "none" and len(warnings) == 1, warnings


def test_the_erosion_a_file_asks_for_counts_a_map_made_once_once():
    """The fault generator reads no roughness: a surface and teximage differing only in it are one map, eroded
    once (counted twice, a scene at 35 s was refused as 70)."""
    from terrainview.scene.scene_file import erosion_seconds

    scene = SceneSettings(mode="rendered", erosion="hydraulic", iterations=10, teximage_iterations=10)
    alone = erosion_seconds(scene.replace(mode="1d"))  # the teximage's map only
    assert alone > 0 and erosion_seconds(scene) == alone
    assert erosion_seconds(scene.replace(teximage_h=0.5)) == pytest.approx(2 * alone), "two maps"
    assert erosion_seconds(scene.replace(teximage_h=0.5, generator="fault")) == alone, "one map again"
    # Each map at its own size: a surface of 11 iterations beside its teximage of 10 costs what a map of 11 does.
    larger = erosion_seconds(scene.replace(iterations=11)) - alone
    assert larger > alone and larger == pytest.approx(erosion_seconds(scene.replace(mode="1d", teximage_iterations=11)))


def test_a_file_cannot_ask_for_a_full_mesh_too_large_to_draw(tmp_path, call_main):
    """lod = off over 8 x 8 tiles of iterations 12 (2 billion triangles): drawn with level of detail instead, and
    said; the user's own --lod off still insists."""
    from terrainview.scene.flythrough import load_flight

    costly = "version = 1\n[scene]\nmode = 'rendered'\niterations = 12\ntile = 8\nlod = 'off'\n"
    (tmp_path / "costly.toml").write_text(costly)
    settings, warnings = load_scene(tmp_path / "costly.toml")
    assert settings.lod == "on" and any("level of detail instead" in warning for warning in warnings)
    cheap = costly.replace("iterations = 12", "iterations = 6")
    (tmp_path / "cheap.toml").write_text(cheap)
    assert load_scene(tmp_path / "cheap.toml")[0].lod == "off", "a full mesh that can be drawn stays"
    (tmp_path / "flight.toml").write_text(cheap + "[[keyframe]]\ntime = 1\niterations = 12\n")
    flight, warnings = load_flight(tmp_path / "flight.toml")
    assert flight.at(1.0).lod == "on" and flight.scene.lod == "on" and len(warnings) == 1
    from terrainview.scene.arguments import add_scene_arguments, scene_from_args

    parser = argparse.ArgumentParser()
    add_scene_arguments(parser)
    insisted = scene_from_args(parser.parse_args(["--scene", str(tmp_path / "costly.toml"), "--lod", "off"]))
    assert insisted.settings.lod == "off"


def test_messages_name_the_file_and_the_option(tmp_path, call_main, usage_error):
    """A NUL in a path names its option; a missing seed image names the scene, or the flight and keyframe."""
    status, _, err = call_main("render", "-o", "a\x00b.png", "--size", "8x8")
    usage_error(status, err, "--output", "NUL")
    (tmp_path / "scene.toml").write_text("version = 1\n[scene]\nseed_image = 'gone.png'\n")
    status, _, err = call_main("export", "-o", tmp_path / "x.npy", "--scene", tmp_path / "scene.toml")
    usage_error(status, err, "scene.toml: seed_image: gone.png: no such file")
    (tmp_path / "flight.toml").write_text("version = 1\n[scene]\nmode = 'lines'\n[[keyframe]]\ntime = 1\n"
                                          "[[keyframe]]\ntime = 2\nseed_image = 'gone.png'\n")
    status, _, err = call_main("video", "-o", tmp_path / "x.mp4", "--flight", tmp_path / "flight.toml")
    usage_error(status, err, "flight.toml: keyframe 2 (time 2): seed_image: gone.png: no such file")
    # Typed on the command line: named as typed, before anything is made (it said "seed_image: ..." after).
    for command in ("render", "export"):
        status, _, err = call_main(command, "-o", tmp_path / f"x.{'png' if command == 'render' else 'npy'}",
                                   "--seed-image", tmp_path / "gone.png")
        usage_error(status, err, f"--seed-image: {tmp_path / 'gone.png'}: no such file")
    assert list(path.name for path in tmp_path.iterdir() if path.suffix in (".npy", ".mp4", ".png")) == []


def test_a_seed_image_a_file_names_is_checked_when_the_file_is_read(tmp_path, call_main, usage_error, monkeypatch):
    """A NUL in the name, an image too large, a file that is no image: one line naming the scene, or the flight
    and keyframe, before anything is drawn (a keyframe's image too large failed frames into the video)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nul.toml").write_text('version = 1\n[scene]\nseed_image = "a\\u0000b.png"\n')
    status, _, err = call_main("export", "-o", "x.npy", "--scene", "nul.toml")
    usage_error(status, err, "nul.toml: seed_image: a\\x00b.png: not a file name (it holds a NUL character)")
    (tmp_path / "big.png").write_bytes(png_claiming(10_000, 10_000))  # claimed by the header, never decoded
    (tmp_path / "text.png").write_text("not an image")
    for image, problem in (("big.png", "10000 x 10000 pixels is too large"),
                           ("text.png", "not an image file Pillow can read")):
        (tmp_path / "scene.toml").write_text(f"version = 1\n[scene]\nseed_image = '{image}'\n")
        status, _, err = call_main("export", "-o", "x.npy", "--scene", "scene.toml")
        usage_error(status, err, f"scene.toml: seed_image: {image}: {problem}")
        (tmp_path / "flight.toml").write_text("version = 1\n[scene]\nmode = 'lines'\n[[keyframe]]\ntime = 1\n"
                                              f"[[keyframe]]\ntime = 2\nseed_image = '{image}'\n")
        status, _, err = call_main("video", "-o", "x.mp4", "--flight", "flight.toml", "--size", "16x16")
        usage_error(status, err, f"flight.toml: keyframe 2 (time 2): seed_image: {image}: {problem}")
    assert not (tmp_path / "x.mp4").exists() and not (tmp_path / "x.npy").exists()


def test_a_scene_reads_images_only_under_its_folder_the_current_one_or_the_assets(tmp_path, monkeypatch, call_main,
                                                                                 usage_error):
    from PIL import Image

    from terrainview.scene.flythrough import FlightError, load_flight
    from terrainview.scene.scene_file import load_scene

    elsewhere, shared, work = tmp_path / "private", tmp_path / "shared", tmp_path / "work"
    for folder in (elsewhere, shared, work):
        folder.mkdir()
    Image.new("L", (8, 8), 200).save(elsewhere / "secret.png")
    Image.new("L", (8, 8), 90).save(shared / "island.png")
    (shared / "link.png").symlink_to(elsewhere / "secret.png")
    monkeypatch.chdir(work)

    def scene(image: Path) -> Path:
        path = shared / f"scene-{image.stem}.toml"
        path.write_text(f'version = 2\n[scene]\nmode = "rendered"\nseed_image = "{image}"\n')
        return path

    assert load_scene(scene(shared / "island.png"))[0].seed_image == str(shared / "island.png"), "beside it: read"
    for outside in (elsewhere / "secret.png", shared / "link.png", shared / ".." / "private" / "secret.png"):
        status, _, err = call_main("render", "-o", work / "x.png", "--scene", scene(outside))
        usage_error(status, err, "a scene may read an image only under its own folder")
        assert not (work / "x.png").exists()
    flight = shared / "flight.toml"
    flight.write_text(f'version = 2\n[scene]\nmode = "rendered"\n[[keyframe]]\ntime = 0.0\n'
                      f'seed_image = "{elsewhere / "secret.png"}"\n[[keyframe]]\ntime = 1.0\n')
    with pytest.raises(FlightError, match="keyframe 1 .*a scene may read an image only"):
        load_flight(flight)
    status, _, err = call_main("render", "-o", work / "y.png", "--size", "32x18", "--mode", "rendered",
                               "--seed-image", elsewhere / "secret.png")
    assert status == 0, "the command line may name any image: the user chose it"
