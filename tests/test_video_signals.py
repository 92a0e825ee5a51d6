"""A video export's signals, without GL: Ctrl+C, SIGTERM (the window cancelling) and SIGHUP unwind it as
interrupted at its next check; SIGTERM and SIGHUP, whose handler removes the part folder at once, wherever they
come before the output is in place. The encoder process leaves them to the drawing process.

The whole export cancelled from outside, leaving nothing behind, is tested in test_video.py.
"""

from __future__ import annotations

import errno
import signal

import numpy as np
import pytest

from terrainview.base.atomic_files import OutputError
from terrainview.output import video_encoding
from terrainview.scene.settings import SceneSettings

FRAME = np.zeros((2, 4, 3), np.uint8)


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_that_comes_while_a_finalizer_runs_still_cancels_the_export(signal_number):
    """Raised from the handler, the interrupt landed in the finalizer (a GL object's, in a garbage collection), where
    Python prints it and goes on: the cancelled video was written to its end (seen once in a full test run). Ctrl+C
    too: Python's own handler raised there."""
    noted_within = []
    # Python's own Ctrl+C handler, as an interactive run has it (a background job starts with Ctrl+C ignored,
    # which the export leaves ignored)
    int_handler = signal.signal(signal.SIGINT, signal.default_int_handler)

    class SignalledWhileFinalized:
        def __del__(self) -> None:
            signal.raise_signal(signal_number)  # (to this thread: its handler runs within the finalizer)
            for _ in range(1000):
                pass
            noted_within.append(video_encoding._signalled)

    try:
        with video_encoding._signals_as_interrupt():
            finalized = SignalledWhileFinalized()
            del finalized
            assert noted_within == [True], "the handler ran within the finalizer"
            with pytest.raises(KeyboardInterrupt):
                video_encoding._unwind_if_signalled()
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)  # a second Ctrl+C: at once
        assert not video_encoding._signalled, "a later export starts afresh: nothing noted"
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "Ctrl+C as before"
    finally:
        signal.signal(signal.SIGINT, int_handler)


class _FolderGoneSink:
    """A frames sink whose folder a signal's handler has just removed: every save fails as it would."""

    def write(self, *frame) -> None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory")

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


def test_what_the_encoder_says_after_a_signal_came_during_the_wait_is_no_error():
    """SIGTERM's handler removes the part folder at once, while the export waits for the encoder; the encoder,
    saving a frame there, answers "No such file or directory". The wait itself unwinds as interrupted rather than
    raising that answer (the export then said "not written" and exited 2, seen once in CI)."""
    encoder = video_encoding._Encoder(_FolderGoneSink, (4, 2), (4, 2))
    wait_for_answer, answers = encoder.results.get, []

    def signalled_while_waiting(*args, **kwargs):
        signal.raise_signal(signal.SIGTERM)  # noted by the export's handler, to this very thread
        answer = wait_for_answer(True, 60)  # until the encoder answers, however slowly
        answers.append(answer[0])
        return answer

    encoder.results.get = signalled_while_waiting
    raised = []
    try:
        with video_encoding._signals_as_interrupt():
            encoder.submit(0, 0.0, SceneSettings(), FRAME, lambda: None)
            try:
                encoder.finish(lambda: None)
            except BaseException as error:  # noqa: BLE001 - as the wait raised it, before the export's last resort
                raised.append(type(error))
    finally:
        encoder.stop()
    assert answers == ["oserror"] and raised == [KeyboardInterrupt], "the folder gone, as the encoder said"


def raised_in_an_export(error: Exception, signalled: bool) -> type[BaseException] | None:
    """What an export raises when ``error`` comes in it, after a SIGTERM or not (caught here: a KeyboardInterrupt
    let out would stop the test run)."""
    try:
        with video_encoding._signals_as_interrupt():
            if signalled:
                signal.raise_signal(signal.SIGTERM)  # noted: the export goes on to its next check
            raise error
    except BaseException as raised:  # noqa: BLE001 - KeyboardInterrupt included
        return type(raised)
    return None


@pytest.mark.parametrize("error", [FileNotFoundError(errno.ENOENT, "No such file or directory"),
                                   OutputError("frames: not written: No such file or directory")])
def test_a_write_error_once_a_signal_is_noted_is_an_interruption(error):
    """After the export's last check, the part folder SIGTERM's handler removed cannot be renamed into place: that
    error is the signal's doing, an interruption. Without a signal the error is the error, and a bug stays a bug;
    the handlers come back either way."""
    before = signal.getsignal(signal.SIGTERM)
    assert raised_in_an_export(error, signalled=True) is KeyboardInterrupt
    assert signal.getsignal(signal.SIGTERM) is before
    assert raised_in_an_export(error, signalled=False) is type(error)
    assert raised_in_an_export(ZeroDivisionError(), signalled=True) is ZeroDivisionError


def _signal_handlers_here():
    """A sink maker that reports, as its error, the encoder process's own handlers of Ctrl+C, SIGTERM and SIGHUP."""
    named = {signal.SIG_IGN: "ignored", signal.SIG_DFL: "default"}
    raise RuntimeError(" ".join(named.get(signal.getsignal(number), "handled")
                                for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)))


@pytest.mark.parametrize(("hangup", "handlers"), [(signal.SIG_DFL, "ignored default default"),
                                                  (signal.SIG_IGN, "ignored default ignored")])  # under nohup
def test_the_encoder_leaves_signals_to_the_drawing_process(tmp_path, hangup, handlers):
    """Forked while the export's part folder is being written, the encoder would inherit the handler that removes
    that folder, and SIGTERM sent to the encoder alone would take the drawing process's frames away. It ignores
    Ctrl+C (the drawing process stops it) and ends on SIGTERM and SIGHUP as any process does, but for a hangup
    ignored (nohup), which stays ignored."""
    from terrainview.base.atomic_files import atomic_folder

    previous = signal.signal(signal.SIGHUP, hangup)
    try:
        with video_encoding._signals_as_interrupt(), atomic_folder(tmp_path / "frames", force=False):
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None), "the part folder's handler, here"
            encoder = video_encoding._Encoder(_signal_handlers_here, (4, 2), (4, 2))
            try:
                with pytest.raises(OutputError) as answer:
                    encoder.finish(lambda: None)
            finally:
                encoder.stop()
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert str(answer.value).endswith(handlers), answer.value
