"""Flythroughs: a scene plus timed keyframes, recorded in the window, replayed there and exported as video.

Pure Python (no GL, no window). A flight file is a scene file (``version`` and ``[scene]``, as Save scene
writes them) followed by ``[[keyframe]]`` tables, each with ``time`` in seconds and any scene option by name.
Between keyframes the camera's numeric fields follow a centripetal Catmull-Rom curve: the position fields
as one point, each angle (fields marked ``angle=True``) as its own curve, unwrapped first so that a turn
through 360 degrees keeps turning. Every other setting (and a camera field that is not a number) holds from
its keyframe until the next one that names it.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from terrainview.base.atomic_files import atomic_output, check_output_path, timestamped_path
from terrainview.scene.bounded_reader import SceneError, gif_comment, parse_toml, read_scene_source
from terrainview.scene.scene_file import (
    SETTING_FIELDS,
    file_value,
    image_problem,
    scene_document,
    scene_from_document,
    within_file_costs,
)
from terrainview.scene.settings import ENDLESS, REPEAT, SceneSettings, SettingsError, base_type, within_range

# Larger than a scene's limit: a long recording holds up to MAX_KEYFRAMES keyframes of some 40 to 100 bytes.
MAX_FLIGHT_BYTES = 4 * 1024 * 1024
MAX_KEYFRAMES = 100_000
FLIGHT_FOLDER = Path("flights")
VIDEO_FLIGHT_KEY = "terrainview-flight"  # the MP4 metadata tag holding the flight file's text
STEP_SECONDS = 1 / 30  # Left/Right while a replay is paused
MP4_MAGIC_OFFSET, MP4_MAGIC = 4, b"ftyp"
GIF_MAGIC = b"GIF8"
FLIGHT_FORMATS = "TOML text nor a terrainview video"  # what a file refused as a flight is not


class FlightError(SceneError):
    """A flight file that cannot be used; the message names the file and, where it applies, the key."""


def _curve_fields() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Fields interpolated along curves: (positions, angles).

    The camera's numbers and every angle (the sun's too); the rest of the settings hold from their keyframes.
    """
    specs = [spec for spec in dataclasses.fields(SceneSettings)
             if (spec.metadata["group"] == "camera" or spec.metadata.get("angle")) and base_type(spec) == "float"]
    return (tuple(spec.name for spec in specs if not spec.metadata.get("angle")),
            tuple(spec.name for spec in specs if spec.metadata.get("angle")))


@dataclass(frozen=True)
class Keyframe:
    """Settings that take a value at ``time`` seconds from the start (None: an optional setting turned off)."""

    time: float
    values: Mapping[str, Any]


@dataclass(frozen=True)
class Flythrough:
    """A start scene and keyframes in increasing time; ``at(t)`` is the scene at any time."""

    scene: SceneSettings
    keyframes: tuple[Keyframe, ...] = ()
    _times: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _states: tuple[SceneSettings, ...] = field(init=False, repr=False, compare=False)
    _curves: tuple[_Curve, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the keyframes (SettingsError naming the first bad one) and prepare the states and curves."""
        states, state = [], self.scene
        for number, keyframe in enumerate(self.keyframes, 1):
            time = keyframe.time  # whatever a file held: the one check of keyframe times is here
            if not isinstance(time, (int, float)) or isinstance(time, bool) or not math.isfinite(time) or time < 0:
                raise SettingsError(f"keyframe {number}: time: expected a finite number of seconds from 0, "
                                    f"got {time!r}")
            if number > 1 and time <= self.keyframes[number - 2].time:
                raise SettingsError(f"keyframe {number}: time: {time} is not after the previous keyframe's "
                                    f"{self.keyframes[number - 2].time}")
            try:
                state = state.replace(**keyframe.values)
            except SettingsError as error:
                raise SettingsError(f"keyframe {number} (time {keyframe.time:g}): {error}") from None
            states.append(state)
        object.__setattr__(self, "_times", tuple(keyframe.time for keyframe in self.keyframes))
        object.__setattr__(self, "_states", tuple(states))
        object.__setattr__(self, "_curves", self._build_curves())

    @property
    def duration(self) -> float:
        """The flight's length in seconds: the last keyframe's time, 0 without keyframes."""
        return self.keyframes[-1].time if self.keyframes else 0.0

    def _build_curves(self) -> tuple[_Curve, ...]:
        positions, angles = _curve_fields()
        curved = set(positions + angles)
        # Camera points: the start scene at time 0 (unless a keyframe is there), then every keyframe naming a
        # curved field; the fields it leaves out keep their previous values.
        points = [(k.time, s) for k, s in zip(self.keyframes, self._states, strict=True) if curved & set(k.values)]
        if not points or points[0][0] > 0.0:
            points.insert(0, (0.0, self.scene))
        times = [t for t, _ in points]
        curves = []
        if positions:
            curves.append(_Curve(positions, times, [[getattr(s, n) for n in positions] for _, s in points], False))
        for name in angles:
            curves.append(_Curve((name,), times, [[getattr(s, name)] for _, s in points], True))
        return tuple(curves)

    def at(self, time: float) -> SceneSettings:
        """The scene ``time`` seconds into the flight (held at the ends)."""
        index = bisect.bisect_right(self._times, time) - 1
        state = self._states[index] if index >= 0 else self.scene
        camera: dict[str, float] = {}
        for curve in self._curves:
            camera.update(curve.at(time))
        return state.replace(**camera)

    def with_overrides(self, values: Mapping[str, Any]) -> Flythrough:
        """The flight with some settings fixed for its whole length (command-line options of ``video``)."""
        kept = [Keyframe(k.time, {n: v for n, v in k.values.items() if n not in values}) for k in self.keyframes]
        # Keyframes left empty go, except the last, which keeps the flight's length.
        kept = [k for k in kept[:-1] if k.values] + kept[-1:]
        return Flythrough(self.scene.replace(**values), tuple(kept))


class _Curve:
    """Centripetal Catmull-Rom through points at given times (end points duplicated), one or more fields."""

    def __init__(self, names: tuple[str, ...], times: list[float], points: list[list[float]], angle: bool) -> None:
        self.names, self.times = names, times
        unwrapped = [points[0]]
        if angle:  # take each step the short way round, so 350 -> 10 turns 20 degrees, not back 340
            for previous, current in itertools.pairwise(points):
                turn = current[0] - previous[0]
                turns = round(turn / 360.0) if abs(turn) > 180.0 else 0
                unwrapped.append([current[0] - 360.0 * turns + (unwrapped[-1][0] - previous[0])])
        self.raw, self.points = points, unwrapped if angle else points

    def at(self, time: float) -> dict[str, float]:
        times, points = self.times, self.points
        index = bisect.bisect_right(times, time) - 1
        if index < 0:
            value = self.raw[0]
        elif index >= len(times) - 1 or time == times[index]:
            value = self.raw[index]  # on a keyframe: its value as written
        else:
            p0, p1, p2 = points[max(index - 1, 0)], points[index], points[index + 1]
            p3 = points[min(index + 2, len(points) - 1)]
            u = (time - times[index]) / (times[index + 1] - times[index])
            value = _centripetal(p0, p1, p2, p3, u)
        # An unwrapped angle back into its range; a curve may overshoot a limit such as the pitch's 80 degrees.
        return {name: within_range(name, v) for name, v in zip(self.names, value, strict=True)}


def _centripetal(p0: list[float], p1: list[float], p2: list[float], p3: list[float], u: float) -> list[float]:
    """The point at fraction ``u`` of the segment p1 -> p2 (Barry-Goldman evaluation, knot steps sqrt(distance))."""
    k0 = 0.0
    k1 = k0 + math.dist(p0, p1) ** 0.5
    k2 = k1 + math.dist(p1, p2) ** 0.5
    k3 = k2 + math.dist(p2, p3) ** 0.5
    if k2 == k1:
        return p1
    s = k1 + u * (k2 - k1)
    a1, a2, a3 = _lerp(p0, p1, k0, k1, s), _lerp(p1, p2, k1, k2, s), _lerp(p2, p3, k2, k3, s)
    b1, b2 = _lerp(a1, a2, k0, k2, s), _lerp(a2, a3, k1, k3, s)
    return _lerp(b1, b2, k1, k2, s)


def _lerp(a: list[float], b: list[float], ka: float, kb: float, s: float) -> list[float]:
    # A zero-length knot interval only joins equal points: either one is the answer.
    if kb == ka:
        return a
    wa, wb = (kb - s) / (kb - ka), (s - ka) / (kb - ka)
    return [wa * x + wb * y for x, y in zip(a, b, strict=True)]


# --- files -----------------------------------------------------------------------------------------------


def flight_document(flight: Flythrough) -> dict[str, Any]:
    """The flight as plain data: the scene document plus a ``keyframe`` list (an option turned off is false)."""
    document = scene_document(flight.scene)
    document["keyframe"] = [{"time": k.time, **{n: (False if v is None else v) for n, v in k.values.items()}}
                            for k in flight.keyframes]
    return document


def flight_text(flight: Flythrough) -> str:
    """The flight file's text: the scene file, then one ``[[keyframe]]`` table per keyframe."""
    document = flight_document(flight)
    keyframes = document.pop("keyframe")
    # tomli_w would write short tables inline; a [[keyframe]] table each reads better and diffs line by line.
    return "# terrainview flight\n" + tomli_w.dumps(document) + "".join(
        "\n[[keyframe]]\n" + tomli_w.dumps(keyframe) for keyframe in keyframes)


def save_flight(flight: Flythrough, path: Path, force: bool = False) -> None:
    """Write a flight file atomically (never over an existing file unless ``force``)."""
    with atomic_output(check_output_path(path, force, (".toml",)), force) as temporary:
        temporary.write_text(flight_text(flight), encoding="utf-8")


def new_flight_path(folder: Path = FLIGHT_FOLDER) -> Path:
    """``folder/flight-YYYYmmdd-HHMMSS.toml``, never one that exists; the folder is created."""
    folder.mkdir(parents=True, exist_ok=True)
    return timestamped_path(folder, "flight-", ".toml")


def load_flight(source: str | Path) -> tuple[Flythrough, list[str]]:
    """Read a flight from its TOML file or from a video terrainview exported; returns it and any warnings."""
    path = Path(source)
    try:
        kind, text = read_scene_source(source, what="flight file", limit=MAX_FLIGHT_BYTES,
                                       neither=FLIGHT_FORMATS, sniff=_video_kind)
        if kind == "png":
            raise SceneError(f"{path}: not a flight file (neither {FLIGHT_FORMATS})")
        if kind != "toml":
            text = _video_flight_text(path, kind == "gif")
        document = parse_toml(path, text)  # nesting and number sizes bounded, as for scenes
    except FlightError:
        raise
    except SceneError as error:
        raise FlightError(str(error)) from None
    return flight_from_document(path, document)


def _video_kind(head: bytes) -> str | None:
    """'mp4' or 'gif' when the file's first bytes are a video's: its flight is in its metadata."""
    if head[MP4_MAGIC_OFFSET:MP4_MAGIC_OFFSET + len(MP4_MAGIC)] == MP4_MAGIC:
        return "mp4"
    return "gif" if head.startswith(GIF_MAGIC) else None


def _video_flight_text(path: Path, gif: bool) -> str:
    """The flight text a terrainview video carries in its metadata (MP4 tag or GIF comment)."""
    if gif:
        text = gif_comment(path, MAX_FLIGHT_BYTES).decode("utf-8", "replace")  # no frame is decoded
    else:
        import av

        try:
            with av.open(str(path), metadata_errors="replace") as container:
                text = container.metadata.get(VIDEO_FLIGHT_KEY, "")
        except (av.FFmpegError, OSError, ValueError) as error:
            raise FlightError(f"{path}: not a readable video ({error})") from None
    if not text:
        raise FlightError(f"{path}: this video carries no terrainview flight")
    if len(text) > MAX_FLIGHT_BYTES:
        raise FlightError(f"{path}: its flight is larger than {MAX_FLIGHT_BYTES // 1024 // 1024} MiB")
    return text


def flight_from_document(path: Path, document: dict[str, Any]) -> tuple[Flythrough, list[str]]:
    """Validate a parsed flight document: the scene through scene.py, each keyframe through SceneSettings."""
    try:
        scene, warnings = scene_from_document(path, document)
    except SceneError as error:
        raise FlightError(str(error)) from None
    tables = document.get("keyframe", [])
    if not isinstance(tables, list) or not all(isinstance(table, dict) for table in tables):
        raise FlightError(f"{path}: 'keyframe' must be [[keyframe]] tables")
    if not tables:
        raise FlightError(f"{path}: no [[keyframe]] tables; a flight needs at least one")
    if len(tables) > MAX_KEYFRAMES:
        raise FlightError(f"{path}: {len(tables)} keyframes; the most is {MAX_KEYFRAMES}")
    keyframes: list[Keyframe] = []
    unknown: dict[str, list[int]] = {}  # an unknown setting -> the keyframes naming it
    for number, table in enumerate(tables, 1):
        time = table.get("time")  # checked by Flythrough, with the others
        values = {}
        for name, value in table.items():
            if name in SETTING_FIELDS:
                values[name] = _keyframe_value(SETTING_FIELDS[name], value)
                if name == "tile" and values[name] == ENDLESS and document["version"] < 2:
                    values[name] = REPEAT  # as for the scene: version 1's endless was the surface repeated
            elif name != "time":
                unknown.setdefault(name, []).append(number)
        keyframes.append(Keyframe(float(time) if type(time) is int else time, values))
    for name, numbers in unknown.items():  # one warning per name, however many keyframes repeat it
        more = f" (and in {len(numbers) - 1:,} more keyframes)" if len(numbers) > 1 else ""
        warnings.append(f"{path}: keyframe {numbers[0]}: unknown setting {name!r} ignored{more}")
    try:
        flight = Flythrough(scene, tuple(keyframes))
    except SettingsError as error:
        raise FlightError(f"{path}: {error}") from None
    # By image name: a recording may name the same one in every keyframe, and the scene's was checked as it was read.
    problems: dict[str, str | None] = {scene.seed_image: None}
    for number, keyframe in enumerate(keyframes, 1):
        name = keyframe.values.get("seed_image") or ""
        if name not in problems:
            problems[name] = image_problem(Path(path), name)
        if problems[name]:
            raise FlightError(f"{path}: keyframe {number} (time {keyframe.time:g}): seed_image: {problems[name]}")
    states = [flight.scene, *(flight.at(k.time) for k in flight.keyframes)]  # what each keyframe draws
    bounded, cost_warnings = within_file_costs(Path(path), states)
    for name, value in bounded.items():  # every frame held as a scene would be
        flight = _without(flight, name, value)
    return flight, warnings + cost_warnings


def _without(flight: Flythrough, name: str, value: Any) -> Flythrough:
    """``flight`` with setting ``name`` at ``value`` throughout: the scene's, and no keyframe changing it."""
    return Flythrough(flight.scene.replace(**{name: value}),
                      tuple(Keyframe(k.time, {n: v for n, v in k.values.items() if n != name})
                            for k in flight.keyframes))


def _keyframe_value(spec: dataclasses.Field, value: Any) -> Any:
    """A keyframe's setting as the settings take it; false turns an optional setting off (TOML has no null)."""
    return None if spec.metadata.get("optional") and value is False else file_value(spec, value)


# --- recording and replay -------------------------------------------------------------------------------


class Recorder:
    """Builds a flight from (time, settings) samples.

    A keyframe goes at every change, with the value held before a camera move, so a replay shows the same camera
    at every sampled time.
    """

    def __init__(self, start: SceneSettings) -> None:
        self.start = start
        self._last, self._last_time, self._camera_time = start, 0.0, 0.0
        self._keyframes: list[tuple[float, dict[str, Any]]] = []
        positions, angles = _curve_fields()
        self._curved = positions + angles
        self._names = tuple(spec.name for spec in dataclasses.fields(SceneSettings))

    @property
    def seconds(self) -> float:
        """The time of the last sample fed, in seconds after the start."""
        return self._last_time

    @property
    def full(self) -> bool:
        """Whether the keyframes leave no more room than a hold and the closing keyframe need."""
        return len(self._keyframes) >= MAX_KEYFRAMES - 2  # room for a hold and the closing keyframe

    def feed(self, time: float, settings: SceneSettings) -> None:
        """The settings ``time`` seconds after the start (times never decrease)."""
        if time < self._last_time:
            raise ValueError(f"time: {time} is before the previous sample's {self._last_time}")
        changed = {n: getattr(settings, n) for n in self._names if getattr(settings, n) != getattr(self._last, n)}
        if changed:
            moved = [n for n in self._curved if n in changed]
            if moved and self._camera_time < self._last_time:  # the camera stood still until the last sample
                self._add(self._last_time, {n: getattr(self._last, n) for n in moved})
            self._add(time, changed)
            if moved:
                self._camera_time = time
        self._last, self._last_time = settings, time

    def _add(self, time: float, values: dict[str, Any]) -> None:
        if self._keyframes and self._keyframes[-1][0] == time:
            self._keyframes[-1][1].update(values)
        else:
            self._keyframes.append((time, values))

    def finish(self) -> Flythrough:
        """The flight up to the last sample, ending on a keyframe that holds the camera."""
        self._add(self._last_time, {n: getattr(self._last, n) for n in self._curved})
        return Flythrough(self.start, tuple(Keyframe(t, dict(values)) for t, values in self._keyframes))


@dataclass
class Player:
    """Replay position in a flight: runs with the clock, pauses, steps while paused."""

    flight: Flythrough
    time: float = 0.0
    paused: bool = False

    @property
    def finished(self) -> bool:
        """Whether the replay has reached the end of the flight."""
        return self.time >= self.flight.duration

    def advance(self, seconds: float) -> SceneSettings:
        """Move ``seconds`` on unless paused (held at the flight's end) and return the scene at the new time."""
        if not self.paused:
            self.time = min(self.flight.duration, self.time + seconds)
        return self.flight.at(self.time)

    def step(self, direction: int) -> None:
        """One step (1/30 s) forward or back; only while paused."""
        if self.paused:
            self.time = min(self.flight.duration, max(0.0, self.time + direction * STEP_SECONDS))
