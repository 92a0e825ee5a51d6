"""The window's flythrough controls: R records, ``--flight`` replays, the panel's Flythrough section exports.

Recording feeds a ``Recorder`` with the settings at every frame; replay takes the settings from a ``Player``.
A video export runs in a child process (``terrainview.output.video_encoding.ExportProcess``: the window keeps
drawing) that reports its frames for the progress bar; cancelling terminates it, and the child removes its
partial file.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from enum import Enum
from pathlib import Path

from imgui_bundle import imgui

from terrainview.base.atomic_files import OutputError, unique_path
from terrainview.output.video_encoding import ExportProcess, VideoPlan
from terrainview.scene.flythrough import (
    FLIGHT_FOLDER,
    Flythrough,
    Player,
    Recorder,
    load_flight,
    new_flight_path,
    save_flight,
)
from terrainview.scene.scene_file import SceneError
from terrainview.scene.settings import SceneSettings
from terrainview.window.panel import clock, overlay, recording_clock

VIDEO_FOLDER = Path("videos")
RECENT_FLIGHTS = 6
VIDEO_SIZES = ((1280, 720), (1920, 1080))
VIDEO_FPS = 30
REC_COLOR = imgui.ImVec4(1.0, 0.2, 0.2, 1.0)



class ReplayKey(Enum):
    """The keys a replay answers: Space pauses and resumes, Left / Right step a frame while paused."""

    PAUSE = "space"
    BACK = "left"
    FORWARD = "right"

def add_flight_argument(parser: argparse.ArgumentParser) -> None:
    """Add the viewer's ``--flight FILE`` option (the flight to replay) to ``parser``."""
    parser.add_argument("--flight", metavar="FILE", help="replay a flight (a flight TOML file or a terrainview "
                        "video): Space pauses, Left/Right step while paused, Escape stops")


class FlythroughControls:
    """Recording, replay and export state of one window; ``notify`` shows a message."""

    def __init__(self, notify: Callable[[str], None]) -> None:
        self.notify = notify
        self.recorder: Recorder | None = None
        self.player: Player | None = None
        self.export: ExportProcess | None = None
        self.recent: list[Path] = []
        self.selected = 0
        self.size_choice = 0
        self.supersample = 1
        self.refresh_recent()

    # --- state per frame ------------------------------------------------------------------------------------

    def advance(self, settings: SceneSettings, seconds: float) -> SceneSettings:
        """Called every frame: the replay's settings, or the recording fed with the current ones."""
        if self.player is not None:
            settings = self.player.advance(seconds)
            if self.player.finished and not self.player.paused:
                self.player.paused = True
                self.notify("Replay finished: Space plays it again, Escape returns to flying")
        elif self.recorder is not None:
            self.recorder.feed(self.recorder.seconds + seconds, settings)
            if self.recorder.full:
                self.stop_recording()
        if self.export is not None and (status := self.export.finished()) is not None:
            export, self.export = self.export, None
            if export.cancelled:
                self.notify(f"Cancelled {export.output}")
            elif status == 0:
                self.notify(f"Exported {export.output}")
            else:
                self.notify(f"Video not exported: {export.error or f'the export ended with status {status}'}")
        return settings

    @property
    def recording_seconds(self) -> float | None:
        """The length of the recording so far in seconds, None when not recording."""
        return None if self.recorder is None else self.recorder.seconds

    # --- recording ------------------------------------------------------------------------------------------

    def toggle_recording(self, settings: SceneSettings) -> None:
        """Start recording from ``settings`` (stopping any replay), or stop and save the running recording."""
        if self.recorder is None:
            self.stop_replay()
            self.recorder = Recorder(settings)
        else:
            self.stop_recording()

    def stop_recording(self) -> Path | None:
        """Write the recording to ./flights/ (a new name, never over a file) and say where."""
        if self.recorder is None:
            return None
        flight, self.recorder = self.recorder.finish(), None
        try:
            path = new_flight_path()
            save_flight(flight, path)
        except (OutputError, OSError) as error:
            self.notify(f"Flight not saved: {error}")
            return None
        self.notify(f"Saved flight {path} ({clock(flight.duration)})")
        self.refresh_recent()
        self.selected = 0
        return path

    def refresh_recent(self) -> None:
        """List the newest flight files in ./flights/, newest first, at most RECENT_FLIGHTS of them."""
        flights = FLIGHT_FOLDER.glob("flight-*.toml") if FLIGHT_FOLDER.is_dir() else []
        self.recent = sorted(flights, key=lambda path: path.stat().st_mtime, reverse=True)[:RECENT_FLIGHTS]

    # --- replay ---------------------------------------------------------------------------------------------

    def play(self, flight: Flythrough) -> SceneSettings:
        """Start replaying; returns the scene at its start."""
        if self.recorder is not None:
            self.stop_recording()
        self.player = Player(flight)
        return flight.at(0.0)

    def play_file(self, path: Path) -> SceneSettings | None:
        """Load the flight at ``path`` and start replaying it; returns its start scene, None if it cannot load."""
        try:
            flight, _ = load_flight(path)
        except (SceneError, OSError) as error:
            self.notify(str(error))
            return None
        return self.play(flight)

    def stop_replay(self) -> None:
        """Stop the replay, if any."""
        self.player = None

    def key(self, key: ReplayKey) -> None:
        """Space pauses a replay, Left / Right step it while paused."""
        if self.player is None:
            return
        if key is ReplayKey.PAUSE:
            if self.player.finished and self.player.paused:
                self.player.time = 0.0  # from the end: play again
            self.player.paused = not self.player.paused
        else:
            self.player.step(-1 if key is ReplayKey.BACK else 1)

    def escape(self) -> bool:
        """Escape cancels an export, else stops a replay; False when it had nothing to stop."""
        if self.cancel_export():
            return True
        if self.player is not None:
            self.stop_replay()
            self.notify("Replay stopped")
            return True
        return False

    # --- export ---------------------------------------------------------------------------------------------

    def start_export(self, flight_path: Path, window_size: tuple[int, int]) -> None:
        """Start exporting the flight to a new MP4 in ./videos/, unless an export is already running.

        The video size is the chosen one of the window's size (made even) and VIDEO_SIZES.
        """
        if self.export is not None:
            return
        sizes = (_even(window_size), *VIDEO_SIZES)
        try:
            flight, _ = load_flight(flight_path)
            plan = VideoPlan(flight, sizes[self.size_choice], VIDEO_FPS, self.supersample)
            if (too_long := plan.too_long()) is not None:
                raise SceneError(f"{flight_path}: {too_long}")
            VIDEO_FOLDER.mkdir(exist_ok=True)
            output = unique_path(VIDEO_FOLDER, flight_path.stem, ".mp4")
        except (SceneError, OutputError, OSError) as error:
            self.notify(f"Video not exported: {error}")
            return
        self.export = ExportProcess(plan, output)
        self.notify(f"Exporting {output} (Escape cancels)")

    def cancel_export(self) -> bool:
        """Stop a running export (the window goes on; the next frames report it gone)."""
        if self.export is None or self.export.cancelled:
            return False
        self.export.cancel()
        return True

    def close(self) -> None:
        """Save a running recording and cancel a running export, waiting for the child to end."""
        self.stop_recording()
        if self.export is not None:
            self.export.cancel(wait=True)

    # --- drawing --------------------------------------------------------------------------------------------

    def draw_section(self, settings: SceneSettings, window_size: tuple[int, int]) -> SceneSettings:
        """The panel's Flythrough section; returns the settings (Play changes them)."""
        if not imgui.collapsing_header("Flythrough"):
            return settings
        if self.recorder is None:
            if imgui.button("Record (R)"):
                self.toggle_recording(settings)
        elif imgui.button("Stop recording (R)"):
            self.stop_recording()
        imgui.same_line()
        selected = self.recent[self.selected] if self.selected < len(self.recent) else None
        if self.player is not None:
            if imgui.button("Stop replay (Escape)"):
                self.stop_replay()
            imgui.same_line()
            imgui.text(f"{clock(self.player.time)} / {clock(self.player.flight.duration)}"
                       + (" paused" if self.player.paused else ""))
        elif selected is not None and imgui.button("Play"):
            settings = self.play_file(selected) or settings
        if self.recent:
            imgui.text("Last flights recorded:")
            for index, path in enumerate(self.recent):
                if imgui.selectable(path.name, index == self.selected)[0]:
                    self.selected = index
        labels = [f"Window ({_even(window_size)[0]}x{_even(window_size)[1]})"]
        labels += [f"{width}x{height}" for width, height in VIDEO_SIZES]
        _, self.size_choice = imgui.combo("Video size", self.size_choice, labels)
        for factor in (1, 2):
            if imgui.radio_button(f"{factor}x##video", self.supersample == factor):
                self.supersample = factor
            imgui.same_line()
        imgui.text(f"supersampling, {VIDEO_FPS} fps")
        if self.export is not None and not self.export.cancelled:
            imgui.progress_bar(self.export.progress, imgui.ImVec2(-1, 0),
                               f"{self.export.done}/{self.export.total} frames" if self.export.total
                               else "starting...")
            if imgui.button("Cancel export (Escape)"):
                self.cancel_export()
        elif selected is not None and imgui.button("Export video"):
            self.start_export(selected, window_size)
        return settings

    def draw_badge(self) -> None:
        """A red REC m:ss in the top right corner while recording (visible with the panel hidden too)."""
        if self.recorder is None:
            return
        overlay([recording_clock(self.recorder.seconds)], (imgui.get_main_viewport().size.x - 10, 10), (1.0, 0.0), 0.6,
                REC_COLOR)


def _even(size: tuple[int, int]) -> tuple[int, int]:
    """H.264 wants even sides."""
    return (max(2, size[0] - size[0] % 2), max(2, size[1] - size[1] % 2))

