"""One-line messages on stderr: what terrainview says, with every value from a file shown escaped.

A scene, flight, PNG or video from someone else may hold any text; printed raw, a name holding an escape
sequence (ESC ] 2 ; ... BEL) would drive the user's terminal. ``say`` escapes control characters, and a stderr
that is closed or full never stops the work (the output is what matters). ``report`` prints a command's summary
line on stdout likewise: a full, closed or broken stdout loses that line, never the output it reports.
"""

from __future__ import annotations

import contextlib
import os
import sys

# C0 and C1 control characters and DEL, each shown as its Python escape.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})
_stdout_lost: str | None = None  # once stdout has failed a summary line: why ("" for a reader gone away)


def printable(text: str) -> str:
    """``text`` with every control character (escape sequences, bells, line breaks) shown escaped."""
    return text.translate(_CONTROLS)


def say(text: str) -> None:
    """Print ``terrainview: TEXT`` on stderr, escaped; a closed or full stderr is ignored."""
    # A full disk (ENOSPC), a closed stderr (2>&-: sys.stderr is None), a broken pipe: the work goes on.
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(f"terrainview: {printable(text)}", file=sys.stderr, flush=True)


def report(text: str, summary: bool = True) -> None:
    """Print a command's summary line (``wrote FILE ...``), or a progress line, on stdout, escaped.

    A full or closed stdout (> /dev/full, 1>&-) loses only the lines: stderr says the summary lines instead, from
    the first that failed, and what they report stays written. A reader gone away (a broken pipe, ``| head``)
    wanted no more, and is not told.
    """
    global _stdout_lost
    if _stdout_lost is None and sys.stdout is None:  # closed before we started (1>&-): print would say nothing
        _stdout_lost = "closed"
    if _stdout_lost is None:
        try:
            print(printable(text), flush=True)
            return
        except (OSError, ValueError) as error:
            _stdout_to_null()
            _stdout_lost = "" if isinstance(error, BrokenPipeError) else \
                error.strerror if isinstance(error, OSError) and error.strerror else "closed"
    if _stdout_lost and summary:
        say(f"{text} (not printed on stdout: {_stdout_lost})")


def _stdout_to_null() -> None:
    """Point stdout at /dev/null, so what is left in its buffer goes nowhere at exit instead of failing again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
