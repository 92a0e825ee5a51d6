"""Reading a scene file safely: the boundary every scene passes (``--scene``, the panel's Load, a drop).

Whatever the file, reading it costs bounded time and memory and ends in a ``SceneError`` naming the file:

- only a regular file is opened for reading (a folder, FIFO or device gets its own message; a FIFO is never
  waited on), and at most ``MAX_TOML_BYTES`` of a TOML file are read (a caller may allow more: flights);
- a PNG's text chunks are found by walking its chunk structure, never decoding pixels, with bounded chunk
  count and text sizes; a GIF's comment (a video's flight) likewise, by walking its blocks;
- TOML and JSON text is pre-scanned before parsing: nesting deeper than ``MAX_NESTING`` or a number (or other
  bare token) longer than ``MAX_TOKEN_CHARS`` is refused before the parser could recurse or convert it, and
  the parsed document is walked once more (dotted TOML keys nest without brackets).
"""

from __future__ import annotations

import json
import os
import stat
import struct
import tomllib
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_TOML_BYTES = 1 << 20  # a scene is a few hundred bytes
MAX_PNG_TEXT_BYTES = 1 << 20  # one text chunk, compressed or not
MAX_PNG_CHUNKS = 100_000
MAX_NESTING = 32
MAX_TOKEN_CHARS = 40  # numbers, booleans, dates, bare keys: 40 digits are far beyond any setting
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HEAD_BYTES = len(PNG_SIGNATURE)  # what is read to tell the formats apart
_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")
_OPENERS, _CLOSERS = "[{", "]}"
_BARE = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_+-.:")


MAX_GIF_BLOCKS = 10_000_000  # data sub-blocks skipped looking for a GIF's comment: a few seconds at most


class SceneError(Exception):
    """A scene file that cannot be read; the message names the file and the problem."""


def gif_comment(path: Path, limit: int) -> bytes:
    """The first comment of a GIF (where terrainview puts a video's flight), without decoding any frame.

    Walks the GIF's blocks, skipping colour tables and image data by their sizes; a comment over ``limit``
    bytes is refused as soon as it passes the limit, and so is a damaged or endless block structure. No
    comment: b"".
    """
    def fail(why: str) -> SceneError:
        return SceneError(f"{path}: not a readable GIF ({why})")

    try:
        with open(path, "rb") as stream:
            header = stream.read(13)
            if len(header) < 13 or header[:3] != b"GIF":
                raise fail("too short for a GIF header")
            if header[10] & 0x80:  # a global colour table follows the screen descriptor
                stream.seek(3 << ((header[10] & 7) + 1), os.SEEK_CUR)
            blocks = 0
            while True:
                kind = stream.read(1)
                if kind in (b"", b"\x3b"):  # end of the file, or the trailer: no comment
                    return b""
                if kind == b"\x2c":  # an image: its descriptor, local colour table, LZW size, then data
                    descriptor = stream.read(9)
                    if len(descriptor) < 9:
                        raise fail("an image descriptor is cut short")
                    if descriptor[8] & 0x80:
                        stream.seek(3 << ((descriptor[8] & 7) + 1), os.SEEK_CUR)
                    stream.read(1)
                    label = None
                elif kind == b"\x21":
                    label = stream.read(1)
                else:
                    raise fail(f"unknown block {kind!r}")
                comment = bytearray()
                while True:  # the sub-blocks: a size byte, that many bytes, until size 0
                    blocks += 1
                    if blocks > MAX_GIF_BLOCKS:
                        raise fail(f"more than {MAX_GIF_BLOCKS:,} blocks")
                    size = stream.read(1)
                    if not size:
                        raise fail("it ends inside a block")
                    if size == b"\x00":
                        break
                    if label == b"\xfe":
                        comment += stream.read(size[0])
                        if len(comment) > limit:
                            raise SceneError(f"{path}: its comment is larger than {limit // 1024 // 1024} MiB")
                    else:
                        stream.seek(size[0], os.SEEK_CUR)
                if label == b"\xfe":
                    return bytes(comment)
    except OSError as error:
        raise fail(error.strerror or str(error)) from None


def read_scene_source(source: str | Path, *, what: str = "scene file", limit: int = MAX_TOML_BYTES,
                      neither: str = "a PNG nor a TOML text file",
                      sniff: Callable[[bytes], str | None] | None = None) -> tuple[str, Any]:
    """('png', {keyword: text}) for a PNG, ('toml', text) otherwise.

    Refuses anything that is not a regular, readable file, or text over ``limit`` bytes; messages call the file
    a ``what`` and say what it is ``neither`` of when it is not text. ``sniff`` may name, from the first
    ``HEAD_BYTES``, a format its caller reads itself (a video): (that name, None) comes back, nothing more read.
    """
    if str(source) == "":  # checked before Path(), which makes "" the current folder
        raise SceneError(f"no {what} name given")
    path = Path(source)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below without reading.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SceneError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise SceneError(f"{path}: is a folder, not a {what}") from None
    except OSError as error:
        raise SceneError(f"{path}: cannot read it ({error.strerror or error})") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise SceneError(f"{path}: is {_kind(mode)}, not a {what}")
    with os.fdopen(descriptor, "rb") as stream:
        try:
            head = stream.read(HEAD_BYTES)
            own = sniff(head) if sniff is not None else None
            if own is not None:
                return own, None
            if head == PNG_SIGNATURE:
                return "png", _png_texts(path, stream)
            raw = head + stream.read(limit + 1 - len(head))
        except OSError as error:
            raise SceneError(f"{path}: cannot read it ({error.strerror or error})") from None
    if len(raw) > limit:
        raise SceneError(f"{path}: larger than {limit / 2**20:g} MiB, too large for a {what}")
    try:
        return "toml", raw.decode("utf-8").removeprefix("\ufeff")  # a byte-order mark some editors write
    except UnicodeDecodeError:
        raise SceneError(f"{path}: not a {what} (neither {neither})") from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _png_texts(path: Path, stream) -> dict[str, str]:
    """The text chunks of a PNG (after its signature), by chunk structure alone: pixel data is skipped."""
    texts: dict[str, str] = {}
    for _ in range(MAX_PNG_CHUNKS):
        header = stream.read(8)
        if len(header) < 8:
            raise SceneError(f"{path}: not a readable PNG (it ends before its IEND chunk)")
        length, kind = struct.unpack(">I4s", header)
        if kind == b"IEND":
            return texts
        if kind in _TEXT_CHUNKS and length <= MAX_PNG_TEXT_BYTES:
            data = stream.read(length)
            stream.seek(4, os.SEEK_CUR)  # the CRC
            if len(data) < length:
                raise SceneError(f"{path}: not a readable PNG (a chunk is cut short)")
            keyword, text = _decode_text_chunk(kind, data)
            if keyword is not None:
                texts[keyword] = text
        else:
            stream.seek(length + 4, os.SEEK_CUR)  # pixels, oversized text, anything else: skipped unread
    raise SceneError(f"{path}: not a readable PNG (more than {MAX_PNG_CHUNKS:,} chunks)")


def _decode_text_chunk(kind: bytes, data: bytes) -> tuple[str | None, str]:
    """(keyword, text) of a tEXt, zTXt or iTXt chunk; (None, '') when it is malformed (ignored like Pillow)."""
    keyword, separator, rest = data.partition(b"\0")
    if not separator:
        return None, ""
    try:
        if kind == b"tEXt":
            return keyword.decode("latin-1"), rest.decode("latin-1")
        if kind == b"zTXt":
            return keyword.decode("latin-1"), _inflate(rest[1:]).decode("latin-1")
        compressed, method = rest[:1], rest[1:2]  # iTXt: flag, method, language\0, translated keyword\0, text
        if len(rest) < 2:
            return None, ""
        parts = rest[2:].split(b"\0", 2)
        if len(parts) < 3:
            return None, ""
        body = _inflate(parts[2]) if compressed == b"\x01" and method == b"\x00" else parts[2]
        return keyword.decode("latin-1"), body.decode("utf-8")
    except (zlib.error, UnicodeDecodeError, ValueError):
        return None, ""


def _inflate(data: bytes) -> bytes:
    """Zlib data, refused (ValueError) when it inflates beyond MAX_PNG_TEXT_BYTES: no decompression bomb."""
    inflater = zlib.decompressobj()
    result = inflater.decompress(data, MAX_PNG_TEXT_BYTES)
    if inflater.unconsumed_tail:
        raise ValueError("text chunk too large")
    return result


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """The TOML document in ``text``; SceneError naming ``path`` when it is not valid TOML or exceeds the limits."""
    return _parse(path, text, toml=True)


def parse_json(path: Path, text: str) -> Any:
    """The JSON document in ``text``; SceneError naming ``path`` when it is damaged or exceeds the limits."""
    return _parse(path, text, toml=False)


def _parse(path: Path, text: str, toml: bool) -> Any:
    """Parse TOML or JSON with the limits (nesting depth, token length, integer size) checked before and after."""
    _prescan(path, text, toml=toml)
    try:
        document = tomllib.loads(text) if toml else json.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SceneError(f"{path}: not valid TOML ({error})") from None
    except ValueError as error:  # json's decode errors, and a number it cannot convert
        detail = error.msg if isinstance(error, json.JSONDecodeError) else error
        raise SceneError(f"{path}: its terrainview scene is damaged ({detail})") from None
    _check_document(path, document)
    return document


def _prescan(path: Path, text: str, *, toml: bool) -> None:
    """Bracket depth and bare-token length, outside strings (and TOML comments), in one linear pass."""
    depth, index, length = 0, 0, len(text)
    while index < length:
        char = text[index]
        if char in _OPENERS:
            depth += 1
            if depth > MAX_NESTING:
                raise SceneError(f"{path}: nested more than {MAX_NESTING} levels deep; not a terrainview scene")
        elif char in _CLOSERS:
            depth -= 1
        elif char == '"' or (toml and char == "'"):
            index = _string_end(text, index)
            continue
        elif toml and char == "#":
            newline = text.find("\n", index)
            index = length if newline < 0 else newline
            continue
        elif char in _BARE:
            end = index
            while end < length and text[end] in _BARE:
                end += 1
            if end - index > MAX_TOKEN_CHARS:
                raise SceneError(f"{path}: a number or name of {end - index} characters (at most "
                                 f"{MAX_TOKEN_CHARS}); not a terrainview scene")
            index = end
            continue
        index += 1


def _string_end(text: str, start: int) -> int:
    """Index just after the string (TOML basic/literal, single or triple quoted; JSON) starting at ``start``."""
    quote = text[start]
    delimiter = quote * 3 if text.startswith(quote * 3, start) else quote
    index = start + len(delimiter)
    while index < len(text):
        if quote == '"' and text[index] == "\\":
            index += 2
            continue
        if text.startswith(delimiter, index):
            return index + len(delimiter)
        if len(delimiter) == 1 and text[index] == "\n":
            return index  # an unterminated single-line string: the parser will say so
        index += 1
    return index


def _check_document(path: Path, document: Any) -> None:
    """The parsed document walked without recursion: depth and integer size within the limits."""
    pending = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_NESTING:
            raise SceneError(f"{path}: nested more than {MAX_NESTING} levels deep; not a terrainview scene")
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, int) and value.bit_length() > 4 * MAX_TOKEN_CHARS:
            raise SceneError(f"{path}: a number too large for any setting")
