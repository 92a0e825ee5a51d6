"""Videos of flights: drawn offscreen frame by frame and written as H.264 MP4, GIF or PNG frames.

Frame k shows the flight at time k / fps * speed, whatever the machine's speed, drawn by the same code as
``terrainview render``. Drawing and read-back run in this process (the GL context's); Lanczos filtering and
encoding run in a child process fed through shared memory, so the stages overlap. The MP4 carries the flight
file's text in its metadata, so ``--flight clip.mp4`` replays it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import mmap
import multiprocessing
import os
import queue
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from terrainview.base.atomic_files import CLEANUP_SIGNALS, OutputError, atomic_folder, atomic_output
from terrainview.base.messages import report, say
from terrainview.render.offscreen import create_headless_context, reduce, render_pixels, save_png
from terrainview.render.renderer import Renderer
from terrainview.scene import world_regions
from terrainview.scene.flythrough import VIDEO_FLIGHT_KEY, Flythrough, flight_text
from terrainview.scene.scene_file import picture_extras
from terrainview.scene.settings import SceneSettings

MAX_FRAMES = 100_000  # the most frames one video may have
H264_OPTIONS = {"crf": "16", "preset": "veryfast"}  # near-transparent quality at a speed two cores can afford
AVCOL_SPC_BT709 = 1  # FFmpeg's AVColorSpace for the BT.709 matrix; PyAV names only swscale's constants


@dataclass(frozen=True)
class VideoPlan:
    """A video's frames: the flight, the frame size, the frame rate, supersampling and the flight's speed.

    ``speed`` is flight seconds per video second. Checked by the command before any work; the count of frames
    is computed here once, for the checks, the progress bar and the drawing.
    """

    flight: Flythrough
    size: tuple[int, int]
    fps: int
    supersample: int = 1
    speed: float = 1.0

    @property
    def frame_estimate(self) -> float:
        """How many frames the flight makes, as a real number (infinite for a flight too long to count)."""
        return self.flight.duration / self.speed * self.fps + 1.0

    @functools.cached_property
    def frame_count(self) -> int:
        """Frames k = 0, 1, ... with k / fps * speed within the flight (the last keyframe's time included).

        Check ``frame_estimate`` first: a flight of 1e307 seconds has no count.
        """
        return math.floor(self.flight.duration / self.speed * self.fps + 1e-9) + 1

    def frame_time(self, k: int) -> float:
        """The flight time frame k shows."""
        return k / self.fps * self.speed

    def too_long(self) -> str | None:
        """Why the flight makes too many frames to export at this rate and speed (over MAX_FRAMES), else None."""
        if self.frame_estimate <= MAX_FRAMES:
            return None
        estimate = self.frame_estimate
        frames = f"about {estimate:.3g}" if math.isfinite(estimate) else "uncountably many"
        return (f"the flight's {self.flight.duration:.4g} s at {self.fps} fps make {frames} frames; "
                f"the most is {MAX_FRAMES:,}")


# --- sinks: where finished frames go ---------------------------------------------------------------------


class Mp4Sink:
    """H.264 in MP4 through PyAV, the flight text in the container's metadata.

    The stream is tagged BT.709 (primaries, transfer, matrix) in limited range, so players need not guess, and
    the frames are converted to YUV with that matrix: left to itself, swscale would use BT.601's.
    """

    def __init__(self, path: Path, size: tuple[int, int], fps: int, flight: Flythrough) -> None:
        import av
        from av.video.reformatter import ColorPrimaries, ColorRange, Colorspace, ColorTrc

        self.container = av.open(str(path), "w", format="mp4", options={"movflags": "use_metadata_tags"})
        self.container.metadata[VIDEO_FLIGHT_KEY] = flight_text(flight)
        self.container.metadata["comment"] = f"terrainview flight, {flight.duration:g} s"
        self.stream = self.container.add_stream("libx264", rate=fps, options=dict(H264_OPTIONS))
        self.stream.width, self.stream.height = size
        self.stream.pix_fmt = "yuv420p"
        self.stream.color_primaries, self.stream.color_trc = ColorPrimaries.BT709, ColorTrc.BT709
        self.stream.colorspace, self.stream.color_range = AVCOL_SPC_BT709, ColorRange.MPEG
        self._frame_type = av.VideoFrame
        self._to_yuv = partial(av.VideoFrame.reformat, format="yuv420p", dst_colorspace=Colorspace.ITU709,
                               dst_color_range=ColorRange.MPEG)

    def write(self, index: int, time: float, settings: SceneSettings, pixels: np.ndarray) -> None:
        """Encode the RGB ``pixels`` as frame ``index`` and mux the packets into the MP4."""
        frame = self._to_yuv(self._frame_type.from_ndarray(np.ascontiguousarray(pixels), format="rgb24"))
        frame.pts = index
        self.container.mux(self.stream.encode(frame))

    def close(self) -> None:
        """Flush the encoder's remaining packets and close the MP4."""
        self.container.mux(self.stream.encode(None))
        self.container.close()

    def abort(self) -> None:
        """Close the MP4 without flushing the encoder."""
        self.container.close()


def gif_frame_ms(fps: int) -> int:
    """How long a GIF shows each frame at ``fps``, in the whole milliseconds the GIF is written with."""
    return round(1000 / fps)


class GifSink:
    """A looping GIF assembled in memory (one palette per frame), the flight text in its comment."""

    def __init__(self, path: Path, size: tuple[int, int], fps: int, flight: Flythrough) -> None:
        self.path, self.fps, self.flight = path, fps, flight
        self.images: list[Image.Image] = []

    def write(self, index: int, time: float, settings: SceneSettings, pixels: np.ndarray) -> None:
        """Keep the frame, quantized to its own 256-colour palette (median cut)."""
        self.images.append(Image.fromarray(pixels).quantize(256, method=Image.Quantize.MEDIANCUT))

    def close(self) -> None:
        """Save the kept frames as a looping GIF at the sink's frame rate, with the flight text as its comment."""
        first, *rest = self.images
        first.save(self.path, format="GIF", save_all=True, append_images=rest, loop=0,
                   duration=gif_frame_ms(self.fps), comment=flight_text(self.flight).encode("utf-8"))

    def abort(self) -> None:
        """Drop the kept frames."""
        self.images.clear()


class FramesSink:
    """Numbered PNGs, each carrying its scene like every terrainview PNG, plus the frame's flight time."""

    def __init__(self, folder: Path, size: tuple[int, int], fps: int, count: int, supersample: int) -> None:
        self.folder = folder
        self.extra = {**picture_extras(size, supersample), "fps": str(fps)}
        self.digits = max(5, len(str(count - 1)))

    def write(self, index: int, time: float, settings: SceneSettings, pixels: np.ndarray) -> None:
        """Save the frame as a numbered PNG with its scene, picture size, frame number and flight time."""
        save_png(pixels, self.folder / frame_name(index, self.digits), settings, force=True,
                 extra={**self.extra, "frame": str(index), "flight-time": repr(time)})

    def close(self) -> None:
        """Nothing to finish: every frame is already saved."""
        pass

    def abort(self) -> None:
        """Nothing to drop here: on failure the export removes the hidden folder the frames went into."""
        pass


def frame_name(index: int, digits: int = 5) -> str:
    """The file name of frame ``index``, its number zero-padded to ``digits`` digits."""
    return f"frame-{index:0{digits}d}.png"


# --- the export ------------------------------------------------------------------------------------------


Progress = str | Callable[[int, int], None]  # "bar", "lines" or "none", or a call with (frames done, frames)


def export(plan: VideoPlan, path: Path, *, force: bool, frames: bool = False, progress: Progress = "none") -> None:
    """Draw every frame of the flight and write it to ``path``: a video, or a folder of PNGs when ``frames``.

    A failure or an interruption (Ctrl+C, SIGTERM, SIGHUP) leaves nothing behind. Only one that comes while the
    frames are being moved into a folder that already held files (``force``) leaves those moved so far.
    """
    size, fps = plan.size, plan.fps
    with _signals_as_interrupt(), _progress(plan.frame_count, progress) as advance:
        if frames:
            with atomic_folder(path, force) as folder:
                moved = _run(plan, partial(FramesSink, folder, size, fps, plan.frame_count, plan.supersample),
                             advance)
        else:
            sink_type = GifSink if path.suffix.lower() == ".gif" else Mp4Sink
            with atomic_output(path, force) as temporary:
                moved = _run(plan, partial(sink_type, temporary, size, fps, plan.flight), advance)
    for why, count in moved.items():  # once the progress bar is done and the output written
        say(f"warning: in {count} of {plan.frame_count} frames {why}")


def _run(plan: VideoPlan, make_sink: Callable[[], Any], advance: Callable[[], None]) -> Counter[str]:
    """Draw and read back here; filter and encode in a child process, fed through shared-memory slots.

    A thread would not overlap: moderngl holds the GIL for the whole of a draw call, seconds on llvmpipe.
    Returns how many frames had their camera moved into bounds, by what was done.
    """
    size, supersample = plan.size, plan.supersample
    full = (size[0] * supersample, size[1] * supersample)
    encoder = _Encoder(make_sink, full, size)
    ctx = None
    try:
        ctx = create_headless_context()
        with ctx:  # current on this thread, for drawing and releasing, whatever other contexts the process holds
            renderer = Renderer(ctx)
            moved: Counter[str] = Counter()
            try:
                for index in range(plan.frame_count):
                    _unwind_if_signalled()
                    time = plan.frame_time(index)
                    settings = plan.flight.at(time)
                    renderer.update(settings)
                    # Within the bounds render keeps a given camera in (a flight written by hand may go under the
                    # ground): each frame is then what render draws of the scene it carries.
                    settings, why = world_regions.camera_in_bounds(settings, renderer.surface_heights)
                    if why:
                        moved[why] += 1
                    pixels = render_pixels(renderer, settings, size, supersample=supersample, filtered=False)
                    encoder.submit(index, time, settings, pixels, advance)
            finally:
                renderer.release()
        encoder.finish(advance)
        _unwind_if_signalled()  # one that came after the last frame's answer, before the output is kept
        return moved
    finally:
        encoder.stop()
        if ctx is not None:
            ctx.release()


class _Encoder:
    """The child process that filters and encodes.

    Frames go through ``SLOTS`` shared-memory slots; the child answers ("done", slot) per frame, ("closed", None)
    once the sink is finished, or the error it met. Stopping is an event the child checks between frames, not a
    job: a KeyboardInterrupt inside the job queue's put can leave the queue's feeder thread asleep, and a job
    sent after it would never arrive.
    """

    SLOTS = 2  # one frame being encoded while the next is drawn

    def __init__(self, make_sink: Callable[[], Any], full: tuple[int, int], size: tuple[int, int]) -> None:
        self.full = full
        self.memory = mmap.mmap(-1, full[0] * full[1] * 3 * self.SLOTS)  # anonymous, shared with the child
        # fork: the child starts at once, with nothing to import, and only ever runs the sink's code.
        context = multiprocessing.get_context("fork")
        self.jobs, self.results, self.stopping = context.Queue(), context.Queue(), context.Event()
        self.free = list(range(self.SLOTS))
        self.child = context.Process(target=_encode_frames, name="terrainview-encoder", daemon=True,
                                     args=(make_sink, self.memory, full, size, self.jobs, self.results,
                                           self.stopping))
        self.child.start()

    def submit(self, index: int, time: float, settings: SceneSettings, pixels: np.ndarray,
               advance: Callable[[], None]) -> None:
        while not self.free:
            self._answer(advance)
        slot = self.free.pop()
        _slot(self.memory, slot, self.full)[:] = pixels
        self.jobs.put((slot, index, time, settings))

    def finish(self, advance: Callable[[], None]) -> None:
        """Wait for every frame and the sink's end (the MP4's last frames, the GIF itself)."""
        self.jobs.put(None)
        while self._answer(advance) != "closed":
            pass

    def _answer(self, advance: Callable[[], None]) -> str:
        while True:
            try:
                kind, value = self.results.get(timeout=0.5)
            except queue.Empty:
                kind = value = None
            # Before what the child says: SIGTERM's handler removes the part folder at once, while the wait goes on,
            # and the child saving a frame there then fails, which is the signal's doing, not an error to report.
            _unwind_if_signalled()
            if kind is not None:
                break
            if not self.child.is_alive():
                raise OutputError(f"the encoder stopped unexpectedly (exit status {self.child.exitcode})")
        if kind == "done":
            self.free.append(value)
            advance()
        elif kind == "oserror":
            raise OSError(*value)
        elif kind == "error":
            raise OutputError(f"encoding failed: {value}")
        return kind

    def stop(self) -> None:
        """End the child: after ``finish`` it has left; otherwise it drops its sink and leaves."""
        if self.child.is_alive():
            self.stopping.set()
            self.child.join(timeout=30)
        if self.child.is_alive():
            self.child.kill()
        self.child.join()
        self.jobs.cancel_join_thread()  # jobs left unsent (see above) are for no one now: the exit must not wait
        self.jobs.close()
        self.results.close()
        self.memory.close()


def _slot(memory: mmap.mmap, slot: int, full: tuple[int, int]) -> np.ndarray:
    frame_bytes = full[0] * full[1] * 3
    return np.frombuffer(memory, np.uint8, frame_bytes, slot * frame_bytes).reshape(full[1], full[0], 3)


def _encode_frames(make_sink: Callable[[], Any], memory: mmap.mmap, full: tuple[int, int], size: tuple[int, int],
                   jobs: Any, results: Any, stopping: Any) -> None:
    """The encoder process: filter supersampled frames down, hand them to the sink, answer per frame.

    Runs until the drawing process sends None (the sink is closed), sets ``stopping`` or is gone (it is dropped).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the drawing process's to handle; it stops us
    for number in CLEANUP_SIGNALS:  # forked with the drawing process's handlers, which remove its part folder
        if signal.getsignal(number) != signal.SIG_IGN:  # (nohup's ignored hangup stays ignored)
            signal.signal(number, signal.SIG_DFL)
    parent, sink = os.getppid(), None
    try:
        sink = make_sink()
        while not stopping.is_set() and os.getppid() == parent:
            try:
                item = jobs.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                sink.close()
                results.put(("closed", None))
                return
            slot, index, time, settings = item
            pixels = _slot(memory, slot, full)
            sink.write(index, time, settings, reduce(pixels, size) if full != size else pixels)
            results.put(("done", slot))
    except OSError as error:
        results.put(("oserror", (error.errno, error.strerror or str(error), error.filename)))
    except BaseException as error:  # noqa: BLE001 - reported to the drawing process, which raises it
        results.put(("error", f"{type(error).__name__}: {error}"))
    if sink is not None:
        with contextlib.suppress(BaseException):
            sink.abort()


@contextlib.contextmanager
def _progress(count: int, style: Progress) -> Iterator[Callable[[], None]]:
    """A callback for each frame written: a tqdm bar, a 'frame K/N' line, the caller's own call, or nothing."""
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
            elif callable(style):
                style(done, count)
            elif style == "lines":
                report(f"frame {done}/{count}", summary=False)

        yield advance


# Set by ``_signals_as_interrupt``'s handler; the export acts on it at its next check. A plain flag: the handler
# and the checks all run on the main thread, and a lock taken within a handler could wait on its own thread.
_signalled = False


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    """Ctrl+C, SIGTERM (a window cancelling its export) and SIGHUP unwind the export, so no partial output stays.

    atomic_files' own handlers remove the part file or folder at once, but the encoder process may be saving a
    frame into that folder meanwhile; unwinding stops the encoder first, then removes the folder with what it
    added. The handler only notes the signal, and the export raises KeyboardInterrupt at its next check
    (``_unwind_if_signalled``: before each frame it draws, and after each wait for the encoder). Raised from the
    handler, it could land in a finalizer (a GL object's, in a garbage collection), where Python prints it and goes
    on: a cancelled video was written to its end. Ctrl+C once a signal is noted raises at once, wherever the export
    is. A write error once a signal is noted is an interruption too: after the last check, the part folder the
    handler removed cannot be renamed into place. A signal once the output is in place changes nothing: the export
    is done (as a Ctrl+C once the last frame is encoded: it removes nothing, and the output is kept). Signal
    handlers belong to the main thread: elsewhere nothing changes.
    """
    global _signalled
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def note(signum: int, frame: Any) -> None:
        global _signalled
        if signum == signal.SIGINT and _signalled:
            raise KeyboardInterrupt  # pressed again: whatever the export is doing
        _signalled = True

    previous = {}
    for number in (signal.SIGINT, *CLEANUP_SIGNALS):
        if signal.getsignal(number) != signal.SIG_IGN:  # nohup's ignored SIGHUP stays ignored (and a background
            previous[number] = signal.signal(number, note)  # job's ignored Ctrl+C)
    try:
        yield
    except (OSError, OutputError) as error:
        if _signalled:  # the signal's doing: its handler removed the part file or folder
            raise KeyboardInterrupt from error
        raise
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        _signalled = False


def _unwind_if_signalled() -> None:
    """Raise KeyboardInterrupt if Ctrl+C, SIGTERM or SIGHUP came during the export (``_signals_as_interrupt``)."""
    if _signalled:
        raise KeyboardInterrupt


# --- an export beside a window ---------------------------------------------------------------------------


class ExportProcess:
    """``export`` of a video to a new file in a child process, so a window goes on drawing meanwhile.

    The child is spawned (a fresh interpreter: it makes its own GL context, and forking a process that holds a
    window's context and threads is unsafe). ``update`` reads its progress and the one-line error it ends with;
    ``cancel`` terminates it, and the child removes its partial file on the way out.
    """

    def __init__(self, plan: VideoPlan, output: Path) -> None:
        self.output, self.cancelled = output, False
        self._done, self._total, self._error = 0, 0, ""
        context = multiprocessing.get_context("spawn")
        self._messages, child_end = context.Pipe(duplex=False)
        self.process = context.Process(target=_export_child, name="terrainview-export", args=(plan, output, child_end))
        self.process.start()
        child_end.close()  # the child holds its own copy: once it ends, reading finds the pipe closed

    @property
    def done(self) -> int:
        """Frames written so far."""
        self._read()
        return self._done

    @property
    def total(self) -> int:
        """Frames in all, 0 until the child has said."""
        self._read()
        return self._total

    @property
    def error(self) -> str:
        """The one line the child ended with when it failed, else empty."""
        self._read()
        return self._error

    @property
    def progress(self) -> float:
        """The fraction of frames written so far, 0 until the child reports its frame count."""
        return self.done / self.total if self.total else 0.0

    def finished(self) -> int | None:
        """The child's exit status once it has ended, else None."""
        if self.process.is_alive():
            return None
        self.process.join()
        self._read()  # all it said before it ended
        return self.process.exitcode

    def _read(self) -> None:
        """Take in what the child has said since the last call, without waiting."""
        with contextlib.suppress(EOFError, OSError):
            while self._messages.poll():
                kind, *values = self._messages.recv()
                if kind == "frame":
                    self._done, self._total = values
                else:
                    self._error = values[0]

    def cancel(self, wait: bool = False) -> None:
        """Ask the child to stop (it removes its partial file on the way out); with ``wait``, until it has."""
        self.cancelled = True
        if self.process.is_alive():
            self.process.terminate()
        if wait:
            self.process.join()


def _export_child(plan: VideoPlan, output: Path, messages: Any) -> None:
    """The export process: write the video, reporting ("frame", done, total) and at the end any ("error", text).

    A window that has gone (the pipe broken) stops the export at its next frame, leaving nothing behind.
    """
    try:
        export(plan, output, force=False, progress=lambda done, total: messages.send(("frame", done, total)))
    except KeyboardInterrupt:  # cancelled: the partial file is gone
        sys.exit(130)
    except Exception as error:  # noqa: BLE001 - one line for the window, whatever it was
        where = f"{error.filename}: " if isinstance(error, OSError) and error.filename else ""
        text = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        with contextlib.suppress(OSError):
            messages.send(("error", f"{where}{text or type(error).__name__}"))
        sys.exit(1)
