"""Videos of flights: drawn offscreen frame by frame and written as H.264 MP4, GIF or PNG frames.

Frame k shows the flight at time k / fps * speed, whatever the machine's speed, drawn by the same code as
``terrainview render``. Drawing and read-back run on this thread (the GL context's); Lanczos filtering and
encoding run on a second thread fed through a short queue (Pillow and PyAV release the GIL), so the stages
overlap. The MP4 carries the flight file's text in its metadata, so ``--flight clip.mp4`` replays it.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from .files import OutputError, atomic_output
from .flythrough import VIDEO_FLIGHT_KEY, Flight, flight_text
from .offscreen import TiledRender, create_headless_context, save_png
from .renderer import Renderer
from .settings import SceneSettings

QUEUE_FRAMES = 3  # frames drawn ahead of the encoder: enough to overlap, little memory
H264_OPTIONS = {"crf": "16", "preset": "veryfast"}  # near-transparent quality at a speed two cores can afford


def frame_count(flight: Flight, fps: int, speed: float) -> int:
    """Frames k = 0, 1, ... with k / fps * speed within the flight (the last keyframe's time included)."""
    return math.floor(flight.duration / speed * fps + 1e-9) + 1


def frame_time(k: int, fps: int, speed: float) -> float:
    """The flight time frame k shows."""
    return k / fps * speed


# --- sinks: where finished frames go ---------------------------------------------------------------------


class Mp4Sink:
    """H.264 in MP4 through PyAV, the flight text in the container's metadata."""

    def __init__(self, path: Path, size: tuple[int, int], fps: int, flight: Flight) -> None:
        import av

        self.container = av.open(str(path), "w", format="mp4", options={"movflags": "use_metadata_tags"})
        self.container.metadata[VIDEO_FLIGHT_KEY] = flight_text(flight)
        self.container.metadata["comment"] = f"terrainview flight, {flight.duration:g} s"
        self.stream = self.container.add_stream("libx264", rate=fps, options=dict(H264_OPTIONS))
        self.stream.width, self.stream.height = size
        self.stream.pix_fmt = "yuv420p"
        self._frame_type = av.VideoFrame

    def write(self, index: int, time: float, settings: SceneSettings, pixels: np.ndarray) -> None:
        frame = self._frame_type.from_ndarray(np.ascontiguousarray(pixels), format="rgb24")
        frame.pts = index
        self.container.mux(self.stream.encode(frame))

    def close(self) -> None:
        self.container.mux(self.stream.encode(None))
        self.container.close()

    def abort(self) -> None:
        self.container.close()


class GifSink:
    """A looping GIF assembled in memory (one palette per frame), the flight text in its comment."""

    def __init__(self, path: Path, size: tuple[int, int], fps: int, flight: Flight) -> None:
        self.path, self.fps, self.flight = path, fps, flight
        self.images: list[Image.Image] = []

    def write(self, index: int, time: float, settings: SceneSettings, pixels: np.ndarray) -> None:
        self.images.append(Image.fromarray(pixels).quantize(256, method=Image.Quantize.MEDIANCUT))

    def close(self) -> None:
        first, *rest = self.images
        first.save(self.path, format="GIF", save_all=True, append_images=rest, loop=0,
                   duration=round(1000 / self.fps), comment=flight_text(self.flight).encode("utf-8"))

    def abort(self) -> None:
        self.images.clear()


class FramesSink:
    """Numbered PNGs, each carrying its scene like every terrainview PNG, plus the frame's flight time."""

    def __init__(self, folder: Path, size: tuple[int, int], fps: int, flight: Flight, count: int,
                 supersample: int) -> None:
        self.folder, self.count = folder, count
        self.extra = {"size": f"{size[0]}x{size[1]}", "supersample": str(supersample), "fps": str(fps)}
        self.digits = max(5, len(str(count - 1)))

    def write(self, index: int, time: float, settings: SceneSettings, pixels: np.ndarray) -> None:
        save_png(pixels, self.folder / frame_name(index, self.digits), settings, force=True,
                 extra={**self.extra, "frame": str(index), "flight-time": repr(time)})

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


def frame_name(index: int, digits: int = 5) -> str:
    return f"frame-{index:0{digits}d}.png"


# --- the export ------------------------------------------------------------------------------------------


def export(flight: Flight, path: Path, size: tuple[int, int], *, fps: int, supersample: int, speed: float,
           force: bool, frames: bool = False, progress: str = "none",
           on_frame: Callable[[], None] | None = None) -> None:
    """Draw every frame of the flight and write it to ``path`` (a video, or a folder of PNGs when ``frames``);
    a failure or an interruption leaves nothing behind. ``on_frame`` is called as each frame is written."""
    count = frame_count(flight, fps, speed)
    with _progress(count, progress, on_frame) as advance:
        if frames:
            with _atomic_folder(path, force) as folder:
                _run(flight, FramesSink(folder, size, fps, flight, count, supersample), size, fps, supersample,
                     speed, count, advance)
            return
        sink_type = GifSink if path.suffix.lower() == ".gif" else Mp4Sink
        with atomic_output(path, force) as temporary:
            _run(flight, sink_type(temporary, size, fps, flight), size, fps, supersample, speed, count, advance)


def _run(flight: Flight, sink: Any, size: tuple[int, int], fps: int, supersample: int, speed: float, count: int,
         advance: Callable[[], None]) -> None:
    """Draw on this thread, filter and encode on another, through a bounded queue."""
    drawn: queue.Queue = queue.Queue(maxsize=QUEUE_FRAMES)
    failures: list[BaseException] = []
    stop = threading.Event()

    def encode() -> None:
        while (item := drawn.get()) is not None:
            if stop.is_set() or failures:
                continue  # keep taking frames so the drawing side never blocks on a full queue
            index, time, settings, job = item
            try:
                sink.write(index, time, settings, job.result())
                advance()
            except BaseException as error:  # noqa: BLE001 - handed to the drawing thread, which raises it
                failures.append(error)

    encoder = threading.Thread(target=encode, name="video-encoder", daemon=True)
    ctx = create_headless_context()
    encoder.start()
    finished = False
    try:
        with ctx:  # current on this thread, for drawing and releasing, whatever other contexts the process holds
            renderer = Renderer(ctx)
            try:
                for index in range(count):
                    if failures:
                        break
                    time = frame_time(index, fps, speed)
                    settings = flight.at(time)
                    renderer.update(settings)
                    job = TiledRender(renderer, settings, size, supersample=supersample)
                    try:
                        while not job.finished:
                            job.step()
                    finally:
                        job.release()
                    drawn.put((index, time, settings, job))
                finished = not failures
            finally:
                renderer.release()
    finally:
        if not finished:
            stop.set()
        drawn.put(None)
        encoder.join()
        ctx.release()
        if failures:
            sink.abort()
            raise failures[0]
        if finished:
            sink.close()
        else:
            sink.abort()


@contextlib.contextmanager
def _progress(count: int, style: str, on_frame: Callable[[], None] | None) -> Iterator[Callable[[], None]]:
    """A callback for each frame written: a tqdm bar, a 'frame K/N' line, or nothing, then ``on_frame``."""
    done = 0
    with contextlib.ExitStack() as stack:
        bar = None
        if style == "bar":
            from tqdm import tqdm

            bar = stack.enter_context(tqdm(total=count, unit="frame", file=sys.stderr, dynamic_ncols=True,
                                           smoothing=0.1))

        def advance() -> None:
            nonlocal done
            done += 1
            if bar is not None:
                bar.update(1)
            elif style == "lines":
                print(f"frame {done}/{count}", flush=True)
            if on_frame is not None:
                on_frame()

        yield advance


@contextlib.contextmanager
def _atomic_folder(folder: Path, force: bool) -> Iterator[Path]:
    """Frames go into a hidden folder beside ``folder``; on success it becomes ``folder`` (or its files move
    into an existing one), on failure it is removed."""
    parent = folder.parent if str(folder.parent) else Path(".")
    temporary = Path(tempfile.mkdtemp(dir=parent, prefix=f".{folder.name}.", suffix=".part"))
    try:
        yield temporary
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        if not folder.exists():
            os.chmod(temporary, 0o755)
            os.replace(temporary, folder)
            return
        if not force:
            raise OutputError(f"{folder} filled up while the frames were drawn; pass --force to write into it")
        for frame in sorted(temporary.iterdir()):
            os.replace(frame, folder / frame.name)
        temporary.rmdir()
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
