"""Plain, sequential, pure-Python diamond-square and 1D midpoint displacement, written from SPEC.md.

No numba and no vectorisation: one point after another, in the original program's order (every diamond
centre of a pass, then the square step row by row). The random offset comes from a function, so the same
code runs with

- ``hash_offsets_2d`` / ``hash_offsets_1d``: terrainview's counter-based hash, reimplemented here in plain
  Python; with ``exact=True`` (float32 numpy scalars, the kernel's order of operations) the result must equal
  terrainview's kernels bit for bit;
- ``sequential_offsets``: ``random.Random(seed).uniform(-0.5, 0.5)`` drawn in visiting order, like the
  original C program's ``rand()``; the statistics of terrainview's terrain must match these.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable

import numpy as np

from terrainview.kernels import generators
from terrainview.kernels.fractal import _DOMAIN_1D, _DOMAIN_2D, LATTICE_BITS
from terrainview.kernels.lattice import stream_key as _stream_key

MASK32 = 0xFFFFFFFF
# Rounds of the hash per offset in terrainview.kernels.fractal (bits = hash(hash(index ^ key))). Keep in step with
# the kernel: with one round, offsets of related lattice points (e.g. (0, c) and (c, 0)) correlate across
# seeds, which test_offsets_are_independent_across_seeds and the statistics tests catch; two rounds do not.
HASH_ROUNDS = 2


def lowbias32(x: int) -> int:
    """Wellons' lowbias32 hash on a Python int, every step taken mod 2**32."""
    x &= MASK32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK32
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK32
    x ^= x >> 16
    return x


def hash_offset(index: int, key: int) -> np.float32:
    """r in [-0.5, 0.5): the top 24 bits of hash(index ^ key), scaled by 2**-24, minus 0.5 (float32)."""
    value = index ^ key
    for _ in range(HASH_ROUNDS):
        value = lowbias32(value)
    bits = value >> 8
    return np.float32(bits) * np.float32(2.0**-24) - np.float32(0.5)


def hash_offsets_2d(seed: int, iterations: int) -> Callable[[int, int], np.float32]:
    """Offset of point (z, x): hash of its position on the 2**16-per-side lattice, keyed by the seed."""
    key = int(_stream_key(seed, _DOMAIN_2D))
    shift = LATTICE_BITS - iterations

    def offset(z: int, x: int) -> np.float32:
        return hash_offset(((z << shift) << LATTICE_BITS) + (x << shift), key)

    return offset


def hash_offsets_1d(seed: int, iterations: int) -> Callable[[int], np.float32]:
    key = int(_stream_key(seed, _DOMAIN_1D))
    shift = LATTICE_BITS - iterations

    def offset(x: int) -> np.float32:
        return hash_offset(x << shift, key)

    return offset


def sequential_offsets(seed: int) -> Callable[..., float]:
    """The original's generator: the next uniform number in [-0.5, 0.5], whatever the point."""
    generator = random.Random(seed)

    def offset(*position: int) -> float:
        return generator.uniform(-0.5, 0.5)

    return offset


def pass_scales(iterations: int, h: float, height_scale: float) -> list[float]:
    """SPEC: ratio = 2**-H, scale = heightScale * ratio before the first pass, times ratio after each."""
    ratio = 2.0 ** (-h)
    scale = height_scale * ratio
    scales = []
    for _ in range(iterations):
        scales.append(scale)
        scale *= ratio
    return scales


def diamond_square(iterations: int, h: float, height_scale: float, offset: Callable[[int, int], float],
                   exact: bool = True) -> np.ndarray:
    """SPEC's fill2DFractArray. ``exact``: float32 arithmetic in the kernel's order (else Python floats)."""
    num = np.float32 if exact else float
    quarter = num(0.25)
    size = (1 << iterations) + 1
    last = size - 1
    a = [[num(0.0)] * size for _ in range(size)]  # corners (and everything else) start at 0
    stride = last // 2
    for pass_scale in pass_scales(iterations, h, height_scale):
        scale = num(pass_scale)
        # Diamond step: every square centre = mean of its 4 corners + scale * r.
        for z in range(stride, last, 2 * stride):
            for x in range(stride, last, 2 * stride):
                mean = (a[z - stride][x - stride] + a[z - stride][x + stride]
                        + a[z + stride][x - stride] + a[z + stride][x + stride]) * quarter
                a[z][x] = mean + num(offset(z, x)) * scale
        # Square step: every diamond centre = mean of its 4 neighbours + scale * r; a missing neighbour
        # comes from the opposite side; values on row 0 / column 0 are copied to the last row / column.
        for z in range(0, last, stride):
            first = stride if (z // stride) % 2 == 0 else 0
            for x in range(first, last, 2 * stride):
                left = a[z][x - stride] if x > 0 else a[z][last - stride]
                right = a[z][x + stride]
                above = a[z - stride][x] if z > 0 else a[last - stride][x]
                below = a[z + stride][x]
                a[z][x] = (left + right + above + below) * quarter + num(offset(z, x)) * scale
                if z == 0:
                    a[last][x] = a[z][x]
                if x == 0:
                    a[z][last] = a[z][x]
        stride //= 2
    return np.array(a, dtype=np.float32 if exact else np.float64)


def midpoint_1d(iterations: int, h: float, height_scale: float, offset: Callable[[int], float],
                exact: bool = True) -> np.ndarray:
    """SPEC's fill1DFractArray, scale reduced once per pass: midpoint = mean of ends + scale * r."""
    num = np.float32 if exact else float
    half = num(0.5)
    size = (1 << iterations) + 1
    last = size - 1
    values = [num(0.0)] * size
    stride = last // 2
    for pass_scale in pass_scales(iterations, h, height_scale):
        scale = num(pass_scale)
        for x in range(stride, last, 2 * stride):
            values[x] = (values[x - stride] + values[x + stride]) * half + num(offset(x)) * scale
        stride //= 2
    return np.array(values, dtype=np.float32 if exact else np.float64)


def fault_reference(iterations: int, seed: int, fault_iterations: int) -> np.ndarray:
    """Slow numpy version of ``generators._fault_raw``: every point tested against every fault."""
    size = 1 << iterations
    shift = generators.LATTICE_BITS - iterations
    positions = np.arange(size, dtype=np.int64) << shift
    raw = np.zeros((size, size), dtype=np.float64)
    lines = generators._fault_lines_for(seed, fault_iterations)
    for px, pz, dx, dz, delta in zip(*lines, generators._fault_deltas(fault_iterations), strict=True):
        wrap_x = ((positions - px + generators._HALF_PERIOD) & generators._PERIOD_MASK) - generators._HALF_PERIOD
        wrap_z = ((positions - pz + generators._HALF_PERIOD) & generators._PERIOD_MASK) - generators._HALF_PERIOD
        raised = (dx * wrap_z.astype(np.float64))[:, None] - dz * wrap_x.astype(np.float64)[None, :] > 0.0
        raised &= wrap_z[:, None] ** 2 + wrap_x[None, :] ** 2 < generators._RADIUS**2
        raw += np.where(raised, delta, 0.0)
    raw = np.concatenate([raw, raw[:1]], axis=0)
    return np.concatenate([raw, raw[:, :1]], axis=1).astype(np.float32)


# Colour tables as the sources state them, written out here so that a swap in the code's own tables fails.
# seeds/004, chooseColor: lowest quarter of the height range to highest, in 0-255 units.
# blue, green, yellow, brown
ARTICLE_BAND_COLORS = ((65, 127, 219), (73, 161, 101), (172, 189, 117), (153, 123, 46))
# SPEC, 2D mesh / teximage: bottom, middle and top third of the height range.
SPEC_TEXIMAGE_COLORS = ((0.2, 0.4, 0.2), (0.55, 0.55, 0.6), (0.95, 0.95, 1.0))


def digests_with_threads(script: str, threads: int) -> list[str]:
    """Run ``script`` (it prints numba's thread count, then its digests) in a fresh Python with
    NUMBA_NUM_THREADS=threads; returns the digests, after checking the count took."""
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    reported_threads, *digests = result.stdout.split()
    assert int(reported_threads) == threads
    return digests


def world_heights(iterations: int, column0: int, row0: int, columns: int, rows: int, seed: int, h: float,
                  height_scale: float, octaves: int) -> np.ndarray:
    """The endless world's lattice, point by point from its definition (kernels/world.py), float32 as there.

    A point of the top level (``octaves`` levels above a region's corners) is a hashed value; a point of a lower
    level is its coarser self, or a diamond centre (mean of the coarse cell's corners plus an offset), or a
    square-step point (mean of its four neighbours at its own level plus an offset). Offsets hash the point's
    address in cells of the finest level (iterations 12).
    """
    from functools import cache

    from terrainview.kernels.world import _DOMAIN_WORLD

    key = int(_stream_key(seed, _DOMAIN_WORLD))
    top = octaves + iterations

    def offset(column: int, row: int, scale: np.float32) -> np.float32:
        bits = lowbias32((column & MASK32) ^ key)
        bits = lowbias32(bits ^ (row & MASK32))
        bits = lowbias32(bits ^ (((column >> 32) * 65599 + (row >> 32)) & MASK32))
        signed = bits >> 8  # below 2**24: the int32 cast keeps it
        return (np.float32(signed) * np.float32(2.0**-24) - np.float32(0.5)) * scale

    def scale(level: int) -> np.float32:  # the pass that made level ``level`` (level 0: the top's own values)
        return np.float32(height_scale * 2.0 ** (-h * (level - octaves)))

    @cache
    def value(level: int, column: int, row: int) -> np.float32:
        shift = 12 + octaves - level
        if level == 0:
            return offset(column << shift, row << shift, scale(0))
        odd_column, odd_row = column & 1, row & 1
        if not odd_column and not odd_row:
            return value(level - 1, column >> 1, row >> 1)
        if odd_column and odd_row:
            left, up = column >> 1, row >> 1
            total = (value(level - 1, left, up) + value(level - 1, left + 1, up) + value(level - 1, left, up + 1)
                     + value(level - 1, left + 1, up + 1))
        else:
            total = (value(level, column, row - 1) + value(level, column, row + 1) + value(level, column - 1, row)
                     + value(level, column + 1, row))
        return total * np.float32(0.25) + offset(column << shift, row << shift, scale(level))

    return np.array([[value(top, column0 + i, row0 + j) for i in range(columns)] for j in range(rows)],
                    dtype=np.float32)
