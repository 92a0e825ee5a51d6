"""One-line messages on stderr: what terrainview says, with every value from a file shown escaped.

A scene, flight, PNG or video from someone else may hold any text; printed raw, a name holding an escape
sequence (ESC ] 2 ; ... BEL) would drive the user's terminal. ``say`` escapes control characters, and a stderr
that is closed or full never stops the work (the output is what matters).
"""

from __future__ import annotations

import contextlib
import sys

# C0 and C1 control characters and DEL, each shown as its Python escape.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def printable(text: str) -> str:
    """``text`` with every control character (escape sequences, bells, line breaks) shown escaped."""
    return text.translate(_CONTROLS)


def say(text: str) -> None:
    """Print ``terrainview: TEXT`` on stderr, escaped; a closed or full stderr is ignored."""
    # A full disk (ENOSPC), a closed stderr (2>&-: sys.stderr is None), a broken pipe: the work goes on.
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(f"terrainview: {printable(text)}", file=sys.stderr, flush=True)
