"""One rule for every number typed on the command line, and negative values that argparse takes as values.

A number is ASCII decimal with an optional sign (and a fraction and exponent for real values): no ``0x``, no
``1_0``, no full-width or Arabic-Indic digits, no ``inf``/``nan``, at most ``MAX_NUMBER_CHARS`` characters,
and a real value must not underflow float32 (where the GPU takes it) to zero or a subnormal.
Every refusal names the option and, where it has one, the range.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence

import numpy as np

MAX_NUMBER_CHARS = 40  # far beyond any value an option takes, far below Python's own digit limits
FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # the smallest normal float32
_INTEGER = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


def describe_range(low: float | None, high: float | None, *, integer: bool, low_exclusive: bool = False) -> str:
    """'an integer from 1 to 12', 'a number above 0 to 100', 'a number'."""
    article = "an integer" if integer else "a number"
    if low is None or high is None:
        return article
    lower = f"above {_limit(low)}" if low_exclusive else f"from {_limit(low)}"
    return f"{article} {lower} to {_limit(high)}"


def _limit(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def parse_integer(text: str, expected: str = "an integer") -> int:
    """``text`` as an int by the one rule, or ValueError saying what was expected (``expected``)."""
    _check_length(text, expected)
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"expected {expected}, got {text!r}")
    return int(text)


def parse_real(text: str, expected: str = "a number") -> float:
    """``text`` as a finite float by the one rule (no underflow), or ValueError saying what was expected."""
    _check_length(text, expected)
    if _NON_FINITE.fullmatch(text.strip()):
        raise ValueError(f"expected {expected}, got {text!r}, which is not a finite number")
    if not _REAL.fullmatch(text):
        raise ValueError(f"expected {expected}, got {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"expected {expected}, got {text!r}, which is too large")
    mantissa = re.split("[eE]", text)[0]
    if value == 0.0 and mantissa.strip("+-0.") or 0.0 < abs(value) < FLOAT32_TINY:
        raise ValueError(f"expected {expected}, got {text!r}, which is too small to draw with "
                         f"(below {FLOAT32_TINY:.3g})")
    return value


def _check_length(text: str, expected: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"expected {expected}, got a value of {len(text)} characters "
                         f"(at most {MAX_NUMBER_CHARS})")


def argument_type(parse: Callable[[str, str], float], expected: str) -> Callable[[str], float]:
    """An argparse ``type=`` that parses by the one rule; argparse prefixes the option's name to the message."""
    def convert(text: str) -> float:
        try:
            return parse(text, expected)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = parse.__name__  # argparse names the type in some messages
    return convert


def bounded_argument(low: float, high: float, *, integer: bool = False,
                     low_exclusive: bool = False) -> Callable[[str], float]:
    """An argparse ``type=`` for a number by the one rule within ``low``..``high`` (above ``low`` if exclusive)."""
    expected = describe_range(low, high, integer=integer, low_exclusive=low_exclusive)
    parse = argument_type(parse_integer if integer else parse_real, expected)

    def convert(text: str) -> float:
        value = parse(text)
        if not ((low < value) if low_exclusive else (low <= value)) or value > high:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return convert


def join_option_values(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``--yrot -1e6`` -> ``--yrot=-1e6`` for every option that takes one value.

    A value starting with '-' so reaches the option rather than being taken for an unknown option. A following
    token that is itself an option of this parser stays as it is (``--seed --mode lines`` still lacks the seed).
    """
    actions = parser._option_string_actions  # argparse has no public view of its option strings
    result: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            result.extend(argv[index:])
            break
        action = actions.get(token)
        following = argv[index + 1] if index + 1 < len(argv) else None
        if (action is not None and action.nargs is None and following is not None and following.startswith("-")
                and following.split("=", 1)[0] not in actions and following != "--"):
            result.append(f"{token}={following}")
            index += 2
            continue
        result.append(token)
        index += 1
    return result
