"""Fuzzing: hundreds of generated bad option values, scene files and flight files (keyframes included) through
the CLI (in-process) and through the window's scene loading. Whatever comes in: exit status 0 or 2, one error
line, no traceback, and scene and flight loading raise nothing but SceneError and FlightError. The generators
are seeded, so a failure reproduces."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from helpers import window_load
from hostile import png_bytes

from terrainview.scene.scene_file import SceneError, load_scene
from terrainview.scene.settings import SceneSettings

PIECES = ["0", "1", "7", "9", "-", "+", ".", "e", "E", "x", "X", "_", " ", "\t", "３", "٣", "१", "½", "inf", "nan",
          "Infinity", "0x", "0b", "1e308", "1e-400", "--", "=", ",", "ｘ", "×", "\u200b", "'", '"', "[", "{", "é"]
NUMBER_OPTIONS = ["--iterations", "--h", "--cloud-iterations", "--cloud-h", "--teximage-iterations", "--teximage-h",
                  "--tile", "--seed", "--height-scale", "--fault-iterations", "--blur", "--seed-passes",
                  "--water-level", "--yrot", "--ytrans", "--ztrans", "--pitch"]
CHOICE_OPTIONS = ["--mode", "--generator", "--texture", "--shading"]
WINDOW_OPTIONS = ["--size", "--size_mult", "--samples", "--vsync", "--window", "--resizable", "--cursor", "--ui-scale"]


def bad_value(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.15:
        return rng.choice(["", "-", "--", "-1e6", "-inf", "1e-320", "1" * rng.randint(30, 5000), "٣", "1_0", "0x3"])
    if kind < 0.3:
        return ("-" if rng.random() < 0.5 else "") + str(rng.choice([10**rng.randint(1, 400), rng.random() * 1e6]))
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8)))


def check_cli(status, err: str) -> None:
    assert status in (0, 2), err
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert all(line.startswith("terrainview") for line in lines), err
    if status == 2:
        assert sum("error:" in line for line in lines) == 1, err


@pytest.fixture
def no_display(monkeypatch):
    """The viewer validates everything, then stops at the missing display: a fast, complete validation run."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


def test_fuzzed_option_values_end_in_one_line(call_main, no_display):
    rng = random.Random(9)
    for _ in range(400):
        option = rng.choice(NUMBER_OPTIONS + CHOICE_OPTIONS + WINDOW_OPTIONS)
        argv = [option, bad_value(rng)] if rng.random() < 0.8 else [f"{option}={bad_value(rng)}"]
        if rng.random() < 0.3:
            argv += [rng.choice(NUMBER_OPTIONS), bad_value(rng)]
        status, _, err = call_main(*argv)
        check_cli(status, err)
        assert status == 2, (argv, err)  # a valid set still stops at the missing display


def test_fuzzed_picture_options_end_in_one_line(call_main, tmp_path):
    rng = random.Random(4)
    missing = tmp_path / "missing" / "out.png"  # valid values stop here, before any rendering
    for _ in range(150):
        option = rng.choice(["--size", "--supersample"])
        status, _, err = call_main("render", "-o", missing, option, bad_value(rng) + rng.choice(["", "x5", "x"]))
        check_cli(status, err)
        assert status == 2
    assert not missing.parent.exists()


# --- scene files ----------------------------------------------------------------------------------------------

SCENE_KEYS = [spec for spec in SceneSettings.__dataclass_fields__] + ["version", "scene", "program", "x", ""]


def random_toml_value(rng: random.Random, depth: int = 0) -> str:
    choice = rng.random()
    if choice < 0.3:
        return bad_value(rng) if rng.random() < 0.5 else str(rng.choice([0, 1, -1, 2**31, 10**rng.randint(1, 60)]))
    if choice < 0.45:
        return json.dumps(bad_value(rng))
    if choice < 0.6 and depth < 6:
        return "[" + ", ".join(random_toml_value(rng, depth + 1) for _ in range(rng.randint(0, 3))) + "]"
    if choice < 0.7 and depth < 6:
        return "{" + ", ".join(f"k{i} = {random_toml_value(rng, depth + 1)}" for i in range(rng.randint(0, 3))) + "}"
    if choice < 0.8:
        opener = rng.choice("[{")
        count = rng.choice([10, 33, 100, 5000])
        return opener * count + ("1" if opener == "[" else "") + {"[": "]", "{": "}"}[opener] * count
    return rng.choice(["true", "false", "nan", "inf", "-inf", "1979-05-27", "0x1F", "1_000", "1e400", "'x'"])


def random_toml(rng: random.Random) -> bytes:
    lines = ["version = " + random_toml_value(rng) if rng.random() < 0.3 else "version = 1", "[scene]"]
    for _ in range(rng.randint(0, 8)):
        lines.append(f"{rng.choice(SCENE_KEYS) or 'k'} = {random_toml_value(rng)}")
    text = "\n".join(lines).encode("utf-8", "surrogatepass")
    if rng.random() < 0.2:  # damage some bytes
        data = bytearray(text)
        for _ in range(rng.randint(1, 5)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        text = bytes(data)
    return text


def random_png(rng: random.Random) -> bytes:
    entries = [f"{json.dumps(rng.choice(SCENE_KEYS))}: {random_json_value(rng)}" for _ in range(rng.randint(0, 4))]
    document = '{"version": 1, "scene": {' + ", ".join(['"seed": 7', *entries]) + "}}"
    text = document if rng.random() < 0.8 else random_json_value(rng)
    data = png_bytes({"terrainview-scene": text}, compressed_keys=("terrainview-scene",) if rng.random() < 0.3 else ())
    if rng.random() < 0.3:  # truncate or corrupt
        data = data[:rng.randrange(len(data))] if rng.random() < 0.5 else data.replace(b"tEXt", b"tEXT", 1)
    return data


def random_json_value(rng: random.Random) -> str:
    choice = rng.random()
    if choice < 0.4:
        return json.dumps(rng.choice([0, -1, 0.5, 10**rng.randint(1, 50), "x", None, True, [], {}]))
    if choice < 0.7:
        count = rng.choice([5, 40, 2000])
        return "[" * count + "]" * count
    return json.dumps(bad_value(rng))


def scene_files(folder: Path, count: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for index in range(count):
        is_png = rng.random() < 0.4
        path = folder / f"scene{index}.{'png' if is_png else 'toml'}"
        path.write_bytes(random_png(rng) if is_png else random_toml(rng))
        paths.append(path)
    return paths


def test_fuzzed_scene_files_raise_only_scene_errors(tmp_path):
    outcomes = {"loaded": 0, "refused": 0}
    for path in scene_files(tmp_path, 300, seed=1):
        try:
            load_scene(path)
            outcomes["loaded"] += 1
        except SceneError as error:
            assert path.name in str(error) and "\n" not in str(error)
            outcomes["refused"] += 1
    assert outcomes["loaded"] > 10 and outcomes["refused"] > 100, outcomes  # the generator reaches both


def test_fuzzed_scene_files_through_the_cli_and_the_window(tmp_path, call_main, no_display):
    for path in scene_files(tmp_path, 120, seed=2):
        status, _, err = call_main("--scene", path)
        check_cli(status, err)
        _, messages = window_load(path, SceneSettings(seed=11))
        assert len(messages) == 1
        assert messages[0].startswith(("Loaded scene", f"Scene not loaded: {path}:"))
        assert not messages[0].endswith(("Error", "Exception")), messages  # only the generic catch ends so


# --- flight files ---------------------------------------------------------------------------------------------

# Whole valid scenes to take keyframe values from, so that many keyframes are valid and some flights load.
VALID_SCENES = [SceneSettings(), SceneSettings(mode="rendered", iterations=5, h=0.4, yrot=30.0, pitch=-10.0,
                                               ztrans=-2.5, water_level=0.1, texture="bands"),
                SceneSettings(camera="fly", eye_x=0.5, eye_y=0.8, yrot=-120.0, seed=12, shading="slope")]
KEYFRAME_KEYS = [*SceneSettings.__dataclass_fields__, "Time", "yaw", "x", "keyframe", ""]


def bad_time(rng: random.Random, previous: float) -> str | None:
    """A keyframe time that is refused (equal, earlier, negative, not finite, not a number), or None: none."""
    kind = rng.random()
    if kind < 0.4:  # not after the previous keyframe's (for the first one: 0 is fine, -0.5 is not)
        return json.dumps(previous - rng.choice([0, 0.5]))
    if kind < 0.8:
        return rng.choice(["-1", "nan", "inf", "-inf", "1e400", '"1.0"', "true", "1979-05-27", "[1]", "{}"])
    return None if rng.random() < 0.3 else random_toml_value(rng)


def random_keyframe_value(rng: random.Random, key: str) -> str:
    """A value a valid scene has for ``key`` (false for an option turned off), else a wrong or fuzzed one."""
    if key in SceneSettings.__dataclass_fields__ and rng.random() < 0.75:
        value = getattr(rng.choice(VALID_SCENES), key)
        return json.dumps(False if value is None else value)
    if rng.random() < 0.85:  # of a wrong type or out of range: refused by the keyframe's checks
        return rng.choice(["-1", "1e6", "-1e300", "0.5", "12", "nan", "true", "false", '"x"', '""', "[]", "{}"])
    return random_toml_value(rng)  # sometimes more than the file's limits allow


def random_keyframes(rng: random.Random) -> str:
    """[[keyframe]] tables (rarely none) with random times and values."""
    tables, previous = [], 0.0
    for _ in range(0 if rng.random() < 0.05 else rng.randint(1, 6)):
        lines = ["[[keyframe]]"]
        if rng.random() < 0.85:  # after the previous keyframe, as in a good flight (TOML integers too)
            previous += rng.choice([0.25, 1.0, 2.5, 1e-6])
            lines.append(f"time = {json.dumps(int(previous) if previous.is_integer() else previous)}")
        elif (time := bad_time(rng, previous)) is not None:
            lines.append(f"time = {time}")
        for key in rng.sample(KEYFRAME_KEYS, rng.randint(0, 4)):
            lines.append(f"{json.dumps(key)} = {random_keyframe_value(rng, key)}")
        tables.append("\n".join(lines))
    return "\n\n".join(tables)


def flight_files(folder: Path, count: int, seed: int) -> list[Path]:
    """Flythrough files: a scene (mostly a valid one, else a fuzzed scene file) and random keyframes after it."""
    rng = random.Random(seed)
    paths = []
    for index in range(count):
        path = folder / f"flight{index}.toml"
        if rng.random() < 0.05:  # a terrainview PNG is no flight
            path.write_bytes(random_png(rng))
        else:
            scene = b"version = 1\n[scene]\nmode = \"lines\"\n" if rng.random() < 0.9 else random_toml(rng)
            if rng.random() < 0.05:  # 'keyframe' as something else than tables: a top-level key, so first
                path.write_bytes(f"keyframe = {random_toml_value(rng)}\n".encode() + scene)
            else:
                path.write_bytes(scene + b"\n\n" + random_keyframes(rng).encode("utf-8"))
        paths.append(path)
    return paths


def test_fuzzed_flights_load_or_raise_only_flight_errors(tmp_path):
    from terrainview.scene.flythrough import FlightError, load_flight

    outcomes = {"loaded": 0, "refused": 0, "refused for a keyframe": 0}
    for path in flight_files(tmp_path, 400, seed=3):
        try:
            flight, warnings = load_flight(path)
        except FlightError as error:
            assert path.name in str(error) and "\n" not in str(error)
            outcomes["refused"] += 1
            outcomes["refused for a keyframe"] += f"{path}: keyframe " in str(error)
            continue
        assert all(path.name in warning and "\n" not in warning for warning in warnings), warnings
        for k in range(5):  # every loaded flight replays, between and on its keyframes
            flight.at(flight.duration * k / 4)
        outcomes["loaded"] += 1
    # the generator reaches both outcomes, and refusals of single keyframes among them
    assert outcomes["loaded"] > 50 and outcomes["refused"] > 100 and outcomes["refused for a keyframe"] > 50, \
        outcomes


def test_fuzzed_flights_through_the_video_command(tmp_path, call_main):
    missing = tmp_path / "missing" / "out.mp4"  # a loaded flight stops here, before any drawing
    for path in flight_files(tmp_path, 120, seed=6):
        status, _, err = call_main("video", "-o", missing, "--flight", path, "--progress", "none")
        check_cli(status, err)
        assert status == 2
    assert not missing.parent.exists()
