"""Crafted scene files for the hostile-input tests: PNGs built chunk by chunk, nested TOML and JSON."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

VALID_SCENE = {"version": 1, "program": "terrainview test", "scene": {"mode": "lines", "iterations": 3, "seed": 7}}


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_claiming(width: int, height: int) -> bytes:
    """A grey PNG whose header claims width x height pixels, with two bytes of data: costs nothing to write."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0"))
            + chunk(b"IEND", b""))


def png_bytes(texts: dict[str, str], width: int = 1, height: int = 1, bit_depth: int = 8,
              compressed_keys: tuple[str, ...] = ()) -> bytes:
    """A grey PNG of zeros with the given text chunks (zTXt for ``compressed_keys``) before its pixels."""
    header = struct.pack(">IIBBBBB", width, height, bit_depth, 0, 0, 0, 0)
    row = b"\0" + bytes((width * bit_depth + 7) // 8)
    compressor = zlib.compressobj(9)
    pixels = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    body = chunk(b"IHDR", header)
    for key, text in texts.items():
        if key in compressed_keys:
            body += chunk(b"zTXt", key.encode("latin-1") + b"\0\0" + zlib.compress(text.encode("latin-1")))
        else:
            body += chunk(b"tEXt", key.encode("latin-1") + b"\0" + text.encode("latin-1"))
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def scene_png(path: Path, document_text: str, **options) -> Path:
    path.write_bytes(png_bytes({"terrainview-scene": document_text}, **options))
    return path


def nested_json(depth: int) -> str:
    """A scene whose 'scene' table holds a list nested ``depth`` deep."""
    return '{"version": 1, "scene": {"h": ' + "[" * depth + "]" * depth + "}}"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def valid_json() -> str:
    return json.dumps(VALID_SCENE)
