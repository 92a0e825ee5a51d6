"""More surface generators from the companion articles: fault formation and image-seeded diamond-square.

Pure numpy/numba, no GL. Each public function validates its arguments (``ValueError`` naming the argument, its
value and the allowed range) and calls private ``@njit`` kernels.

Fault formation (seeds/002): every iteration draws a straight fault line through a random point in a random
direction and raises one side of it by a delta that falls linearly from ``FAULT_MAX_DELTA`` (first fault) to
``FAULT_MIN_DELTA`` (last fault). The map is a torus so that it tiles seamlessly: positions live on a lattice
of 2**16 cells per side (the same lattice as ``fractal``) and a point's displacement from the fault's point is
wrapped to [-0.5, 0.5) of the period before the side test. A half-plane cannot exist on a torus; raising the
whole wrapped half (the side test alone) closes every fault with cliffs along the square of period around its
point, and those axis-aligned cliffs add up to a plaid pattern. So a fault raises its side within the disc of
diameter one period around its point (the largest disc that does not overlap itself when tiled): a straight
cliff one map width long through the point, closed by a half-circle. The map still has exactly two levels per
fault, has no preferred direction and its last row/column equal its first. Each fault's point and direction
come from a counter-based hash of (seed, fault index), so a map is the same on every thread, and a point of a
coarse map has the same raw height as that point on a finer map with the same seed and fault count (up to
float rounding): raising the iterations adds detail to the same faults.

Normalisation: a fault raises a given point with probability p = pi / 8 (half the disc's area), independently
of the other faults, so a point's raw height has mean p * sum(delta) and standard deviation
sqrt(p * (1 - p) * sum(delta**2)) over seeds; every fault raises the same area, so p * sum(delta) is also the
mean of every map. The map is shifted by that mean and scaled by ``FAULT_SPREAD * height_scale`` over that
deviation: the same transform at every resolution, giving zero mean, a standard deviation of about
``FAULT_SPREAD * height_scale`` (0.09, like diamond-square at H = 0.7) and a range of roughly
+-0.25..0.3 * height_scale, like diamond-square's. The optional Gaussian blur (sigma in cells, separable,
periodic) comes after that and lowers the extremes a little.

Image seeding: ``seeded_diamond_square`` takes a grey-scale image's values, resamples them to the coarse grid of the
first passes and lets ``fractal.diamond_square_seeded`` add the detail.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from terrainview.kernels import fractal
from terrainview.kernels.kernel_common import hash32, hash_fraction, row_kernels, run_rows
from terrainview.kernels.lattice import (
    LATTICE_BITS,
    MAX_HEIGHT_SCALE,
    MAX_ITERATIONS_2D,
    MAX_SEED,
    check_common,
    check_heightmap,
    check_int,
    check_real,
    stream_key,
)

MAX_SEED_PASSES = 8
MAX_FAULT_ITERATIONS = 5000
MAX_BLUR = 16.0  # cells
# Delta of the first and of the last fault, before normalisation (only their ratio matters).
FAULT_MAX_DELTA = 1.0
FAULT_MIN_DELTA = 0.1
# Standard deviation of a fault map's heights at height_scale 1 (diamond-square's is about 0.09 at H = 0.7).
FAULT_SPREAD = 0.09
# Grey value g in [0, 1] becomes height (g - 0.5) * SEED_IMAGE_RANGE * height_scale: black -0.25, white +0.25,
# the span of a diamond-square map at height_scale 1.
SEED_IMAGE_RANGE = 0.5

_DOMAIN_FAULT = 0x510E527F
_PERIOD = 1 << LATTICE_BITS
_HALF_PERIOD = _PERIOD >> 1
_PERIOD_MASK = _PERIOD - 1
_RADIUS = _HALF_PERIOD  # of a fault's disc, in lattice units: half a period
# The chance that a fault raises a given point: half the disc's area over the period's.
_RAISED_FRACTION = math.pi / 8.0


# --- fault formation -------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _fault_lines(count, stream_key):
    """Point (on the 2**16 lattice) and unit direction of each fault, from a hash of (seed, fault, field)."""
    px = np.empty(count, dtype=np.int64)
    pz = np.empty(count, dtype=np.int64)
    dir_x = np.empty(count, dtype=np.float64)
    dir_z = np.empty(count, dtype=np.float64)
    for i in range(count):
        base = np.uint32(4 * i)
        px[i] = np.int64(hash32(np.uint32(base ^ stream_key)) >> np.uint32(32 - LATTICE_BITS))
        pz[i] = np.int64(hash32(np.uint32((base + np.uint32(1)) ^ stream_key)) >> np.uint32(32 - LATTICE_BITS))
        angle = 2.0 * math.pi * hash_fraction(np.uint32((base + np.uint32(2)) ^ stream_key))
        dir_x[i] = math.cos(angle)
        dir_z[i] = math.sin(angle)
    return px, pz, dir_x, dir_z


@njit(cache=True, inline="always")
def _wrapped(position, origin):
    """Displacement from origin to position on the lattice torus, in [-2**15, 2**15)."""
    return ((position - origin + _HALF_PERIOD) & _PERIOD_MASK) - _HALF_PERIOD


@njit(cache=True, inline="always")
def _raised(across, dir_z, dx):
    """The side test of a point with displacement (dx, dz) from the fault's point; across = dir_x * dz.

    For a fixed row this is monotonic in dx (a rounded product and difference of monotonic terms), so on a run
    of columns the raised ones form one interval, which the row kernel finds in O(1).
    """
    return across - dir_z * dx > 0.0


@njit(cache=True, inline="always")
def _disc_half_width(dz):
    """The largest m with m**2 + dz**2 < RADIUS**2 (lattice units), or -1 when the row misses the disc."""
    room = _RADIUS * _RADIUS - dz * dz
    if room <= 0:
        return -1
    m = int(math.sqrt(room))
    while m * m >= room:
        m -= 1
    while (m + 1) * (m + 1) < room:
        m += 1
    return m


@njit(cache=True, inline="always")
def _raised_run(across, dir_z, px, lo, hi, step):
    """The raised columns [start, end) among the (unwrapped) columns lo..hi-1, where dx = x * step - px."""
    if dir_z == 0.0:
        return (lo, hi) if across > 0.0 else (lo, lo)
    crossing = (across / dir_z + px) / step  # where the side changes, in columns
    estimate = lo if crossing < lo else (hi if crossing > hi else int(math.ceil(crossing)))
    if dir_z > 0.0:  # raised on a prefix of the run
        end = estimate
        while end > lo and not _raised(across, dir_z, (end - 1) * step - px):
            end -= 1
        while end < hi and _raised(across, dir_z, end * step - px):
            end += 1
        return lo, end
    start = estimate  # raised on a suffix of the run
    while start > lo and _raised(across, dir_z, (start - 1) * step - px):
        start -= 1
    while start < hi and not _raised(across, dir_z, start * step - px):
        start += 1
    return start, hi


def _fault_rows(iterations, px, pz, dir_x, dir_z, deltas, offset, gain):
    """Sum of the faults, then (sum - offset) * gain, as float32 of shape (2**iterations + 1,) * 2.

    A fault raises the points of the disc of radius half a period around its point (displacements wrapped
    to the torus) that lie left of its line. In a row, the disc is one run of columns with no wrap of dx
    inside it (unwrapped column indices, taken modulo the size when stored) and the raised part of that run
    is one interval. Each row adds delta at the start and subtracts it at the end of every such interval in a
    difference array, then takes its running sum: O(size + faults) per row instead of O(size * faults).
    """
    size = 1 << iterations
    step = 1 << (LATTICE_BITS - iterations)
    heights = np.empty((size + 1, size + 1), dtype=np.float32)
    for z in prange(size):
        changes = np.zeros(size + 1, dtype=np.float64)
        for i in range(deltas.shape[0]):
            dz = _wrapped(z * step, pz[i])
            half_width = _disc_half_width(dz)
            if half_width < 0:
                continue
            first = -((half_width - px[i]) // step)  # ceil((px - m) / step): first column in the disc
            last = (px[i] + half_width) // step  # last column in the disc
            start, end = _raised_run(dir_x[i] * dz, dir_z[i], px[i], first, last + 1, step)
            if end > start:
                begin = start % size
                stop = begin + end - start
                changes[begin] += deltas[i]
                if stop <= size:
                    changes[stop] -= deltas[i]
                else:  # the interval wraps past the last column
                    changes[size] -= deltas[i]
                    changes[0] += deltas[i]
                    changes[stop - size] -= deltas[i]
        total = 0.0
        for x in range(size):
            total += changes[x]
            heights[z, x] = np.float32((total - offset) * gain)
        heights[z, size] = heights[z, 0]
    heights[size, :] = heights[0, :]
    return heights


_FAULT = row_kernels(_fault_rows)


def _fault_work(iterations: int, fault_iterations: int) -> int:
    """The fault kernel's work for run_rows, in nanoseconds: every cell, and every fault on every row."""
    size = 1 << iterations
    return 2 * size * (size + 4 * fault_iterations)


def _blur_work(heights: np.ndarray, weights: np.ndarray) -> int:
    """The blur kernel's work for run_rows, in nanoseconds: each of its two passes (a parallel region each)."""
    return heights.size * weights.size // 4


def _fault_deltas(count: int) -> np.ndarray:
    """Delta of each fault: FAULT_MAX_DELTA for the first, falling linearly to FAULT_MIN_DELTA for the last."""
    if count == 1:
        return np.array([FAULT_MAX_DELTA])
    return FAULT_MAX_DELTA - (FAULT_MAX_DELTA - FAULT_MIN_DELTA) * np.arange(count) / (count - 1)


def _fault_lines_for(seed: int, count: int):
    return _fault_lines(count, stream_key(seed, _DOMAIN_FAULT))


def _fault_raw(iterations: int, seed: int, fault_iterations: int) -> np.ndarray:
    """The faults' sum before normalisation and blur.

    Each point is the sum of the deltas of the faults that raised it (so one fault gives exactly the two levels
    0 and FAULT_MAX_DELTA).
    """
    px, pz, dir_x, dir_z = _fault_lines_for(seed, fault_iterations)
    return run_rows(_FAULT, 1 << iterations, _fault_work(iterations, fault_iterations), iterations, px, pz, dir_x,
                    dir_z, _fault_deltas(fault_iterations), 0.0, 1.0)


def _gaussian_weights(sigma: float) -> np.ndarray:
    radius = max(1, int(math.ceil(3.0 * sigma)))
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    weights = np.exp(-0.5 * (offsets / sigma) ** 2)
    return (weights / weights.sum()).astype(np.float32)


def _periodic_blur_rows(heights, weights):
    """Separable Gaussian blur of the periodic map (last row/column = first): rows, then columns, wrapping.

    Both passes run over whole rows in their innermost loop (a row of weight * shifted row added per tap), so
    LLVM vectorizes them.
    """
    size = heights.shape[0] - 1
    radius = weights.shape[0] // 2
    across = np.empty((size, size), dtype=np.float32)
    for z in prange(size):
        padded = np.empty(size + 2 * radius, dtype=np.float32)  # the row with radius wrapped cells each side
        padded[radius:radius + size] = heights[z, :size]
        for i in range(radius):
            padded[i] = heights[z, (i - radius) % size]
            padded[radius + size + i] = heights[z, i % size]
        row = np.zeros(size, dtype=np.float32)
        for k in range(weights.shape[0]):
            weight = weights[k]
            shifted = padded[k:k + size]
            for x in range(size):
                row[x] += weight * shifted[x]
        across[z] = row
    out = np.empty_like(heights)
    for z in prange(size):
        row = np.zeros(size, dtype=np.float32)
        for k in range(weights.shape[0]):
            source = across[(z + k - radius) % size]
            weight = weights[k]
            for x in range(size):
                row[x] += weight * source[x]
        out[z, :size] = row
        out[z, size] = row[0]
    out[size, :] = out[0, :]
    return out


_PERIODIC_BLUR = row_kernels(_periodic_blur_rows)


def periodic_blur(heights: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur (sigma in cells) of a seamless heightmap, wrapping across its edges.

    The result is seamless again (last row/column equal to the first).
    """
    sigma = check_real("sigma", sigma, 0.0, MAX_BLUR, low_inclusive=False)
    return periodic_filter(check_heightmap(heights, square=True), _gaussian_weights(sigma))


def periodic_filter(heights: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """A seamless float32 square map filtered by the same odd-length ``weights`` along each axis, wrapping."""
    return run_rows(_PERIODIC_BLUR, heights.shape[0], _blur_work(heights, weights), heights,
                    np.asarray(weights, dtype=np.float32))


def fault_formation(iterations: int, seed: int = 0, fault_iterations: int = 200, blur: float = 0.0,
                    height_scale: float = 1.0, blur_iterations: int | None = None) -> np.ndarray:
    """Fault-formation heightmap, float32 of shape (2**iterations + 1,) * 2 (rows Z, columns X), seamless.

    ``fault_iterations`` faults with deltas falling linearly from the first to the last, normalised to a
    standard deviation of about ``FAULT_SPREAD * height_scale`` (see the module's docstring), then blurred
    with a periodic Gaussian of ``blur`` cells when blur > 0. The cells are those of a 2**blur_iterations
    grid (default: this map's own), so a map made at another resolution gets the same blur in world units.
    """
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    blur_iterations = iterations if blur_iterations is None else check_int(
        "blur_iterations", blur_iterations, 1, MAX_ITERATIONS_2D)
    seed = check_int("seed", seed, 0, MAX_SEED)
    fault_iterations = check_int("fault_iterations", fault_iterations, 1, MAX_FAULT_ITERATIONS)
    blur = check_real("blur", blur, 0.0, MAX_BLUR)
    height_scale = check_real("height_scale", height_scale, 0.0, MAX_HEIGHT_SCALE, low_inclusive=False)
    deltas = _fault_deltas(fault_iterations)
    offset = _RAISED_FRACTION * float(deltas.sum())
    deviation = math.sqrt(_RAISED_FRACTION * (1.0 - _RAISED_FRACTION) * float(np.square(deltas).sum()))
    gain = FAULT_SPREAD * height_scale / deviation
    heights = run_rows(_FAULT, 1 << iterations, _fault_work(iterations, fault_iterations), iterations,
                       *_fault_lines_for(seed, fault_iterations), deltas, offset, gain)
    if blur > 0.0:
        # At most one map width: wider is all but flat anyway, and keeps the kernel within the wrap.
        heights = periodic_filter(heights, _gaussian_weights(min(blur * 2.0 ** (iterations - blur_iterations),
                                                                 float(1 << iterations))))
    return heights


# --- image-seeded diamond-square -------------------------------------------------------------------------------

def seed_grid(grey: np.ndarray, passes: int, height_scale: float = 1.0) -> np.ndarray:
    """Grey values resampled (Pillow, bilinear, filtered when shrinking) to (2**passes + 1,) * 2 heights.

    Grey g becomes (g - 0.5) * SEED_IMAGE_RANGE * height_scale. The image is stretched over the grid, one grid
    point per equal share of the image (Pillow's pixel-area convention); then opposite edges are averaged
    (corners: the mean of all four) so the grid is seamless, as diamond-square needs, while both edges keep
    their share.
    """
    from PIL import Image

    side = (1 << passes) + 1
    image = Image.fromarray(np.ascontiguousarray(grey, dtype=np.float32))  # mode F
    resampled = np.asarray(image.resize((side, side), Image.Resampling.BILINEAR), dtype=np.float64)
    resampled = np.clip(resampled, 0.0, 1.0)
    resampled[0, :] = resampled[-1, :] = 0.5 * (resampled[0, :] + resampled[-1, :])
    resampled[:, 0] = resampled[:, -1] = 0.5 * (resampled[:, 0] + resampled[:, -1])
    return ((resampled - 0.5) * (SEED_IMAGE_RANGE * height_scale)).astype(np.float32)


def seed_passes_used(seed_passes: int, iterations: int) -> int:
    """Passes taken from the image: seed_passes, but at most iterations - 1 and at least 1.

    At most iterations - 1 so diamond-square adds at least one pass of detail; at least 1, so an iterations-1
    map is the image's 3 x 3 grid.
    """
    return max(1, min(seed_passes, iterations - 1))


def seeded_diamond_square(grey: np.ndarray, seed_passes: int, iterations: int, seed: int = 0,
                          h: float = 0.7, height_scale: float = 1.0) -> np.ndarray:
    """Diamond-square whose first passes are a grey-scale image, float32 of shape (2**iterations + 1,) * 2.

    ``grey`` holds the image's grey values in [0, 1] (``scene.seed_image.load_seed_image`` reads a file); it is
    resampled to the (2**k + 1)**2 grid of the
    first k = ``seed_passes_used(seed_passes, iterations)`` passes with black at -0.25 * height_scale and
    white at +0.25 * height_scale (``seed_grid``); ``fractal.diamond_square_seeded`` then runs the remaining
    passes with the usual offsets. Rows of the image are Z, columns X, like the heightmap.
    """
    seed_passes = check_int("seed_passes", seed_passes, 1, MAX_SEED_PASSES)
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS_2D)
    seed, h, height_scale = check_common(seed, h, height_scale)
    if grey.ndim != 2 or grey.size == 0:
        raise ValueError(f"grey must be a non-empty 2D array, not of shape {grey.shape}")
    coarse = seed_grid(grey, seed_passes_used(seed_passes, iterations), height_scale)
    return fractal.diamond_square_seeded(coarse, iterations, seed, h, height_scale)
