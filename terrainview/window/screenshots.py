"""The window's screenshots (F12, the panel's Screenshot...): the view, without the panel, to a PNG.

A shot is drawn a tile per frame, so the window stays responsive during a large one; a shot asked for before
the new terrain reached the GPU waits for it. Shots go to new time-stamped files in ./screenshots/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from terrainview.base.atomic_files import OutputError, check_output_path, timestamped_path
from terrainview.render.offscreen import TiledRender, save_png
from terrainview.render.renderer import Renderer, fov_keeping_framing
from terrainview.scene.scene_file import picture_extras
from terrainview.scene.settings import SceneSettings

SCREENSHOT_FOLDER = Path("screenshots")
TILE_SIDE = 512  # pixels drawn per frame at most, squared


@dataclass(frozen=True)
class ShotRequest:
    """A shot asked for: its size and supersampling, the file (None: a new one), and the window it frames."""

    size: tuple[int, int]
    supersample: int
    path: Path | None
    window_size: tuple[int, int]
    pixel_ratio: float


class WindowScreenshots:
    """The screenshot being drawn (one at a time) and the one waiting for its terrain; ``notify`` reports."""

    def __init__(self, renderer: Renderer, notify: Callable[[str], None]) -> None:
        self._renderer = renderer
        self._notify = notify
        self.job: TiledRender | None = None
        self.path: Path | None = None
        self.pending: ShotRequest | None = None  # asked for before the new terrain reached the GPU

    @property
    def progress(self) -> float | None:
        """The running shot's fraction done; None when none runs."""
        return None if self.job is None else self.job.progress

    def start(self, settings: SceneSettings, request: ShotRequest, *, terrain_ready: bool,
              terrain_error: str | None) -> None:
        """Begin the shot, or keep it until the terrain the settings ask for is on the GPU."""
        if self.job is not None:
            return
        window_width, window_height = request.window_size
        if terrain_error or window_height == 0:
            self._notify(f"Screenshot not taken: {terrain_error or 'the window is minimised'}")
            return
        if not terrain_ready:
            self.pending = request
            return
        path = request.path
        if path is None:
            SCREENSHOT_FOLDER.mkdir(exist_ok=True)
            path = timestamped_path(SCREENSHOT_FOLDER, "terrainview-", ".png", f"-seed{settings.seed}")
        width, height = request.size
        self.job = TiledRender(self._renderer, settings, request.size, supersample=request.supersample,
                               tile_side=TILE_SIDE, line_scale=request.pixel_ratio * height / window_height,
                               field_of_view_y=fov_keeping_framing(window_width / window_height, width / height))
        self.path = path

    def advance(self, settings: SceneSettings, terrain_ready: bool, terrain_error: str | None) -> None:
        """Once a frame: start the waiting shot when its terrain arrived, draw a tile, save the finished PNG."""
        if self.pending is not None and (terrain_ready or terrain_error):
            request, self.pending = self.pending, None
            self.start(settings, request, terrain_ready=terrain_ready, terrain_error=terrain_error)
        job, path = self.job, self.path
        if job is None or path is None:
            return
        world = self._renderer.world
        streaming, world.streaming = world.streaming, False  # a shot waits for every region it shows
        try:
            job.step()
        finally:
            world.streaming = streaming
        if not job.finished:
            return
        self.job = None
        try:
            save_png(job.result(), check_output_path(path, False, (".png",)), job.settings, force=False,
                     extra=picture_extras(job.size, job.supersample))
            self._notify(f"Saved {path} ({job.size[0]}x{job.size[1]})")
        except (OutputError, OSError) as error:
            self._notify(f"Screenshot not saved: {error}")
        finally:
            job.release()

    def cancel(self) -> bool:
        """Stop the shot being drawn and say so; False when none was."""
        if self.job is None or self.path is None:
            return False
        self.job.release()
        self._notify(f"Cancelled {self.path.name}")
        self.job = None
        return True

    def release(self) -> None:
        """Drop a running shot's GL objects (the window closes)."""
        if self.job is not None:
            self.job.release()
            self.job = None
