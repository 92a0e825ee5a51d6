"""Erosion of a seamless heightmap: hydraulic (water droplets) and thermal (talus slides). Pure numba, no GL.

Units. Every parameter is given on the surface as drawn, not in cells: the map spans ``SURFACE_SIZE`` (2)
units across, heights are as displayed (``height_scale`` already applied). So the same scene eroded at
iterations n and n + 1 looks alike: droplets start at the same surface positions, walk steps of the same
surface length, erode through a brush of the same surface radius, and move the same volume of material.

Hydraulic erosion is the particle model of Hans Theobald Beyer, *Implementation of a method for hydraulic
erosion* (2015). A droplet starts at rest with water 1 and no sediment. Each step it

1. reads its height and gradient, interpolated bilinearly in its cell;
2. turns: direction = direction * inertia - gradient * (1 - inertia), normalised (a random direction on a
   flat spot);
3. moves ``STEP`` surface units that way and reads the height there: h_diff = new - old;
4. uphill (h_diff > 0) it drops what it carries, at most h_diff, to fill the pit behind it; downhill its
   capacity is max(-h_diff, MIN_SLOPE * STEP) * speed * water * capacity: above capacity it deposits
   ``deposition`` of the surplus, below it erodes ``strength`` of the shortfall, at most -h_diff;
5. speed**2 += -h_diff * GRAVITY; water *= 1 - evaporation.

Erosion and deposition go through a radial brush (weights falling linearly to 0 at ``radius``) centred on the
grid point nearest the droplet. Amounts are volumes measured in "reference cells": a cell of a 256 x 256 map,
``REFERENCE_CELLS``; an amount a changes the heights under the brush by a * weight * (reference cell area /
cell area), so the volume moved does not depend on the resolution. A droplet lives ``LIFETIME`` steps; what it
still carries then is lost, and the kernel reports that volume (``ErosionResult.carried``): the map's volume
changes by exactly minus that, up to float rounding. Each step also adds the droplet's water at that grid
point of a flow map, which is blurred over about the brush's width and turned by ``flow_wetness`` into the
wetness in [0, 1] that the textures darken.

Determinism: droplet i starts at a position hashed from (a per-seed stream key, i) and picks any random
direction from a hash of (i, step), so the result is the same on every run.

Schedule (both cores, the same result on any thread count). Droplets run in ``_BATCHES`` batches of
consecutive indices; a batch ends before the next starts. Within a batch the torus is cut into square blocks of
B cells, coloured 0-3 by (block row mod 2, block column mod 2), and the droplets walk in phases: phase k walks,
in every block of colour k mod 4, the droplets standing in it, one after another in order of index, each until
it dies or stands outside its zone (the block grown by a margin of m cells on every side); one that leaves waits
for the phase of the block it stands in. Phases repeat until every droplet has died. A step reads and brushes
cells at most g = ceil(step in cells) + brush reach + 2 from where it stood, and m = B / 2 - g - 1, so the
zones of two blocks of one colour (two blocks apart) never touch the same cell: the blocks of a phase run in
parallel, each as one thread would run it. B is the smallest power of two of at least 64 cells and 4 (g + 1);
a map fewer than 4 blocks across is one block (zone: the whole torus), the plain serial order.

Thermal erosion: in each pass every cell whose height exceeds a neighbour's (8 neighbours) by more than
tan(talus) * distance moves half of its largest excess to those lower neighbours, in proportion to each
one's excess. All cells move at once from the same snapshot (two sweeps), so the total is kept to float
rounding and the order of cells does not matter.

Seams: the map is a torus. The input's last row and column must equal its first; droplets and slides wrap
across the edges, and the output's last row and column are copies of its first again.

Progress and cancelling: both functions take ``progress(fraction) -> bool``, called between batches of
droplets (or passes); a False return raises ``Cancelled`` and leaves the input untouched.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from terrainview.kernels.generators import MAX_BLUR, periodic_blur, periodic_filter
from terrainview.kernels.kernel_common import hash32, hash_fraction, row_kernels, run_rows
from terrainview.kernels.lattice import MAX_SEED, check_heightmap, check_int, check_real, stream_key

SURFACE_SIZE = 2.0  # the map spans this many surface units across
REFERENCE_CELLS = 256  # amounts and the step length are those of a cell of a map this many cells across
STEP = SURFACE_SIZE / REFERENCE_CELLS  # surface units a droplet moves per step
LIFETIME = 48  # steps of a droplet
GRAVITY = 4.0
MIN_SLOPE = 0.05  # capacity never falls below this slope's (keeps droplets on flat ground working)
WETNESS_FLOW = 3.0  # flow above the map's mean, in means, that gives wetness 1 - 1/e
DEPOSIT_FULL = 0.03  # net deposit (as a fraction of the map's height range) that counts as fully smoothed

# Defaults (the scene options' defaults) and limits of the options.
DROPLETS = 20000.0  # per unit area: 80000 on the map
MAX_DROPLETS = 1_000_000.0  # per unit area
STRENGTH = 0.3
RADIUS = 0.012  # about 1.5 reference cells
MAX_RADIUS = 0.1
CAPACITY = 8.0
MAX_CAPACITY = 64.0
DEPOSITION = 0.3
EVAPORATION = 0.02
INERTIA = 0.1
TALUS = 55.0  # degrees
MAX_TALUS = 89.0
THERMAL_PASSES = 20
MAX_THERMAL_PASSES = 1000

_DOMAIN_DROPLETS = 0x9B05688C
_BATCHES = 16  # progress reports per hydraulic run
_MIN_BLOCK = 64  # cells: the droplets' blocks are at least this wide
_MIN_BLOCKS_A_SIDE = 4  # fewer than this and the map is one block (two of a colour a side at least)
# The droplets' phases run in parallel from 2 ms of work: at iterations 9 a phase is about 5 ms and there are
# some 150, so the kernel-wide 20 ms would leave the second core idle (0.58 s against 0.33 s, bench/erosion.py);
# a busy machine still gets the serial build (``free_threads``).
_PHASE_MIN_WORK = 2_000_000
_SLIDE = 0.5  # fraction of its largest excess a cell passes on per thermal pass


class Cancelled(Exception):
    """The progress callback returned False: the erosion stopped between two batches; nothing was returned."""


@dataclass(frozen=True)
class ErosionResult:
    """A hydraulic erosion's output, every array float32 of the input's shape and seamless like it."""

    heights: np.ndarray
    flow: np.ndarray  # wetness in [0, 1]: how much water ran over each point (flow_wetness of the raw flow)
    deposit: np.ndarray  # in [0, 1]: net deposit at each point, DEPOSIT_FULL of the height range = 1
    carried: float  # volume (height * surface area) the droplets still carried when they died


# --- checks and the torus ----------------------------------------------------------------------------------------


def _check_map(heights: object) -> tuple[np.ndarray, int]:
    """The heightmap as float64 (size + 1)**2 with size a power of two, seamless; and its size in cells."""
    array = check_heightmap(heights, grid=True, dtype=np.float64)
    size = array.shape[0] - 1
    if not (np.array_equal(array[-1], array[0]) and np.array_equal(array[:, -1], array[:, 0])):
        raise ValueError("heights must be seamless: the last row and column equal to the first")
    return np.ascontiguousarray(array[:size, :size]), size


def _closed(torus: np.ndarray) -> np.ndarray:
    """The size**2 torus as a float32 (size + 1)**2 map whose last row and column repeat the first."""
    return np.pad(torus, ((0, 1), (0, 1)), mode="wrap").astype(np.float32, copy=False)


def _report(progress: Callable[[float], bool] | None, fraction: float) -> None:
    if progress is not None and progress(fraction) is False:
        raise Cancelled("erosion cancelled")


# --- hydraulic ---------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _sample(torus, size, x, z):
    """Bilinear height at cell position (x, z) of the flattened torus and its gradient in height per cell."""
    mask = size - 1
    column, row = int(math.floor(x)), int(math.floor(z))
    fx, fz = x - column, z - row
    c0, c1, r0, r1 = column & mask, (column + 1) & mask, (row & mask) * size, ((row + 1) & mask) * size
    h00, h01, h10, h11 = torus[r0 + c0], torus[r0 + c1], torus[r1 + c0], torus[r1 + c1]
    gx = (h01 - h00) * (1.0 - fz) + (h11 - h10) * fz
    gz = (h10 - h00) * (1.0 - fx) + (h11 - h01) * fx
    height = (h00 * (1.0 - fx) + h01 * fx) * (1.0 - fz) + (h10 * (1.0 - fx) + h11 * fx) * fz
    return height, gx, gz


def brush(size: int, radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets (rows, columns) and weights of the erosion brush on a map ``size`` cells across.

    Weights fall linearly from the centre to 0 at ``radius`` surface units (at least one cell), sum to 1 and
    are then scaled by reference cell area / cell area, so a brushed amount is a volume in reference cells.
    """
    cells = max(radius * size / SURFACE_SIZE, 1.0)
    reach = int(math.ceil(cells))
    rows, columns = np.mgrid[-reach:reach + 1, -reach:reach + 1]
    weights = np.maximum(0.0, cells - np.hypot(rows, columns))
    inside = weights > 0.0
    weights = weights[inside] / weights[inside].sum() * (size / REFERENCE_CELLS) ** 2
    return rows[inside].astype(np.int64), columns[inside].astype(np.int64), weights


@njit(cache=True, inline="always")
def _walk(torus, flow, size, key, droplet, state, zone_x, zone_z, zone_span, brush_rows, brush_columns,
          brush_weights, offsets, reach, step_cells, cell, strength, capacity, deposition, evaporation, inertia):
    """Walk one droplet on from its ``state`` until it dies or stands outside its zone.

    ``state`` (x, z, direction x, direction z, speed, water, sediment, steps taken) is read and written back. The
    zone is the square of ``zone_span`` cells from (zone_x, zone_z), wrapping; a span of ``size`` or more is the
    whole torus.
    """
    mask = size - 1
    area_scale = (size / REFERENCE_CELLS) ** 2
    min_drop = MIN_SLOPE * STEP
    x, z, direction_x, direction_z = state[0], state[1], state[2], state[3]
    speed, water, sediment, step = state[4], state[5], state[6], int(state[7])
    while step < LIFETIME:
        if zone_span < size:
            across = x - zone_x
            down = z - zone_z
            across -= size * math.floor(across / size)
            down -= size * math.floor(down / size)
            if across >= zone_span or down >= zone_span:
                break
        height, gx, gz = _sample(torus, size, x, z)
        # The gradient in height per surface unit, so inertia weighs it alike at every resolution.
        direction_x = direction_x * inertia - gx / cell * (1.0 - inertia)
        direction_z = direction_z * inertia - gz / cell * (1.0 - inertia)
        length = math.sqrt(direction_x * direction_x + direction_z * direction_z)
        if length == 0.0:
            angle = 2.0 * math.pi * hash_fraction(np.uint32(hash32(np.uint32(droplet) ^ key) + np.uint32(step)))
            direction_x = math.cos(angle)
            direction_z = math.sin(angle)
        else:
            direction_x /= length
            direction_z /= length
        new_x = x + direction_x * step_cells
        new_z = z + direction_z * step_cells
        new_height, _, _ = _sample(torus, size, new_x, new_z)
        drop = new_height - height
        if drop > 0.0:
            change = min(drop, sediment)  # fill the pit behind
        else:
            # Above its capacity it deposits part of the surplus, below it erodes part of the shortfall.
            surplus = sediment - max(-drop, min_drop) * speed * water * capacity
            change = surplus * deposition if surplus > 0.0 else -min(-surplus * strength, -drop)
        sediment -= change
        row = int(math.floor(z + 0.5))
        column = int(math.floor(x + 0.5))
        if reach <= row < size - reach and reach <= column < size - reach:
            centre = row * size + column  # the brush stays inside: no wrapping
            for k in range(brush_weights.shape[0]):
                torus[centre + offsets[k]] += change * brush_weights[k]
        else:
            for k in range(brush_weights.shape[0]):
                torus[((row + brush_rows[k]) & mask) * size + ((column + brush_columns[k]) & mask)] += (
                    change * brush_weights[k])
        flow[(row & mask) * size + (column & mask)] += water * area_scale
        speed = math.sqrt(max(0.0, speed * speed - drop * GRAVITY))
        water *= 1.0 - evaporation
        # Stay on the torus; a position rounding up to size wraps to 0 through the masks.
        x = new_x - size * math.floor(new_x / size)
        z = new_z - size * math.floor(new_z / size)
        step += 1
    state[0], state[1], state[2], state[3] = x, z, direction_x, direction_z
    state[4], state[5], state[6], state[7] = speed, water, sediment, step


def _walk_blocks_rows(torus, flow, size, key, first, states, order, starts, block_rows, block_columns, block,
                      margin, brush_rows, brush_columns, brush_weights, offsets, reach, step_cells, cell, strength,
                      capacity, deposition, evaporation, inertia):
    """One phase: each listed block walks its droplets in turn.

    Block b's droplets are ``order[starts[b]:starts[b + 1]]`` (rows of ``states``; row i is droplet first + i).
    The blocks are of one colour, so no two reach the same cells: they run in parallel.
    """
    span = block + 2 * margin
    for b in prange(block_rows.shape[0]):
        zone_x = block_columns[b] * block - margin
        zone_z = block_rows[b] * block - margin
        for j in range(starts[b], starts[b + 1]):
            index = order[j]
            _walk(torus, flow, size, key, first + index, states[index], zone_x, zone_z, span, brush_rows,
                  brush_columns, brush_weights, offsets, reach, step_cells, cell, strength, capacity, deposition,
                  evaporation, inertia)


_WALK_BLOCKS = row_kernels(_walk_blocks_rows)


@njit(cache=True, nogil=True)
def _start_states(key, first, count, size):
    """The states of droplets first .. first + count - 1 at their start.

    A hashed position, at rest, water 1, no sediment, no steps taken.
    """
    states = np.zeros((count, 8))
    for index in range(count):
        counter = np.uint32(first + index) * np.uint32(2)
        states[index, 0] = hash_fraction(np.uint32(counter ^ key)) * size
        states[index, 1] = hash_fraction(np.uint32((counter + np.uint32(1)) ^ key)) * size
        states[index, 4] = 1.0
        states[index, 5] = 1.0
    return states


def block_plan(size: int, reach: int, step_cells: float) -> tuple[int, int]:
    """The droplets' blocks on a map ``size`` cells across: (block side, zone margin) in cells (module docstring).

    ``reach``: the brush's reach in cells; ``step_cells``: a step's length in cells.
    """
    guard = math.ceil(step_cells) + reach + 2
    block = max(_MIN_BLOCK, 1 << math.ceil(math.log2(4 * (guard + 1))))
    if size // block < _MIN_BLOCKS_A_SIDE:
        return size, 0
    return block, block // 2 - guard - 1


def droplet_blocks(size: int, radius: float) -> tuple[int, int]:
    """``block_plan`` for hydraulic erosion of a map ``size`` cells across with a brush of ``radius``."""
    rows, columns, _ = brush(size, radius)
    return block_plan(size, _reach(rows, columns), STEP / (SURFACE_SIZE / size))  # as hydraulic_erosion steps


def _reach(rows: np.ndarray, columns: np.ndarray) -> int:
    """The brush's reach in cells: its farthest offset along either axis."""
    return int(max(np.abs(rows).max(), np.abs(columns).max()))


class _BrushParts(NamedTuple):
    """The brush as the droplet kernel takes it, in this order."""

    rows: np.ndarray
    columns: np.ndarray
    weights: np.ndarray
    flat_offsets: np.ndarray  # rows * size + columns: each weight's offset in the flattened map
    reach: int  # _reach(rows, columns)


def _step_ns(brush_weights: int) -> float:
    """About how long a droplet's step takes on one thread, in ns: 60 + 1 per weight of its brush (bench/erosion.py)."""
    return 60.0 + 1.0 * brush_weights


def _run_batch(torus: np.ndarray, flow: np.ndarray, size: int, key: np.uint32, first: int, count: int,
               plan: tuple[int, int], brush_parts: _BrushParts, rates: tuple[float, ...]) -> float:
    """Walk droplets first .. first + count - 1 to their end, phase by phase; returns what they still carry then."""
    block, margin = plan
    blocks_a_side = size // block
    states = _start_states(key, first, count, size)
    step_work = _step_ns(brush_parts.weights.shape[0])
    phase = 0
    while (alive := np.flatnonzero(states[:, 7] < LIFETIME)).size:
        cells = np.floor(states[alive, :2]).astype(np.int64) & (size - 1)
        block_columns, block_rows = cells[:, 0] // block, cells[:, 1] // block
        walking = (block_rows % 2) * 2 + block_columns % 2 == phase % 4
        phase += 1
        if walking.any():
            blocks = (block_rows * blocks_a_side + block_columns)[walking]
            by_block = np.argsort(blocks, kind="stable")  # stable: each block's droplets stay in order of index
            order = alive[walking][by_block]
            sorted_blocks = blocks[by_block]
            starts = np.flatnonzero(np.r_[True, sorted_blocks[1:] != sorted_blocks[:-1]])  # each block's first
            listed = sorted_blocks[starts]
            work = int((LIFETIME - states[order, 7]).sum() * step_work)  # at most the steps left (zones end walks)
            run_rows(_WALK_BLOCKS, listed.size, work, torus, flow, size, key, first, states, order,
                     np.append(starts, order.size), listed // blocks_a_side, listed % blocks_a_side, block, margin,
                     *brush_parts, *rates, min_work=_PHASE_MIN_WORK)
    return float(states[:, 6].sum())


def droplet_count(droplets: float) -> int:
    """Droplets on the whole map for ``droplets`` per unit area (the map's area is SURFACE_SIZE**2)."""
    return int(round(droplets * SURFACE_SIZE * SURFACE_SIZE))


def flow_wetness(flow: np.ndarray, mean: float) -> np.ndarray:
    """Raw flow (water per reference cell, summed over droplets and steps) as wetness in [0, 1], float32.

    Wetness is 0 up to the map's ``mean`` flow, then 1 - exp(-(flow / mean - 1) / WETNESS_FLOW), so channels
    stand out whatever the number of droplets.
    """
    if mean <= 0.0:
        return np.zeros(np.shape(flow), dtype=np.float32)
    excess = np.maximum(np.asarray(flow, dtype=np.float64) / mean - 1.0, 0.0)
    return (-np.expm1(-excess / WETNESS_FLOW)).astype(np.float32)


def hydraulic_erosion(heights: np.ndarray, seed: int = 0, droplets: float = DROPLETS, strength: float = STRENGTH,
                      radius: float = RADIUS, capacity: float = CAPACITY, deposition: float = DEPOSITION,
                      evaporation: float = EVAPORATION, inertia: float = INERTIA,
                      progress: Callable[[float], bool] | None = None) -> ErosionResult:
    """Beyer's droplet erosion of a seamless (2**n + 1)**2 heightmap.

    See the module's docstring for the model and the units. ``droplets`` per unit area, erosion rate
    ``strength``, brush ``radius`` in surface units, sediment ``capacity`` factor, ``deposition`` and
    ``evaporation`` rates, ``inertia`` of direction.

    Returns the eroded map, the wetness and deposit maps and the volume lost with dying droplets. Calls
    ``progress(fraction)`` after each of ``_BATCHES`` batches; False raises ``Cancelled``.
    """
    torus, size = _check_map(heights)
    seed = check_int("seed", seed, 0, MAX_SEED)
    droplets = check_real("droplets", droplets, 0.0, MAX_DROPLETS)
    strength = check_real("strength", strength, 0.0, 1.0)
    radius = check_real("radius", radius, 0.0, MAX_RADIUS, low_inclusive=False)
    capacity = check_real("capacity", capacity, 0.0, MAX_CAPACITY)
    deposition = check_real("deposition", deposition, 0.0, 1.0)
    evaporation = check_real("evaporation", evaporation, 0.0, 1.0)
    inertia = check_real("inertia", inertia, 0.0, 1.0)
    original = torus.copy()
    flow = np.zeros_like(torus)
    key = stream_key(seed, _DOMAIN_DROPLETS)
    count = droplet_count(droplets)
    cell = SURFACE_SIZE / size
    rows, columns, weights = brush(size, radius)
    step_cells = STEP / cell
    plan = droplet_blocks(size, radius)
    brush_parts = _BrushParts(rows, columns, weights, rows * size + columns, _reach(rows, columns))
    rates = (step_cells, cell, strength, capacity, deposition, evaporation, inertia)
    lost = 0.0
    for batch in range(_BATCHES):
        first, end = count * batch // _BATCHES, count * (batch + 1) // _BATCHES
        lost += _run_batch(torus.reshape(-1), flow.reshape(-1), size, key, first, end - first, plan, brush_parts,
                           rates)
        _report(progress, (batch + 1) / _BATCHES)
    eroded = _closed(torus)
    span = float(original.max() - original.min())
    deposit = np.clip((torus - original) / (DEPOSIT_FULL * span), 0.0, 1.0) if span > 0 else np.zeros_like(torus)
    # Every step brushes its droplet's water (1, evaporating) onto the map: the mean flow per reference cell.
    mean_flow = count * float(np.sum((1.0 - evaporation) ** np.arange(LIFETIME))) / REFERENCE_CELLS**2
    # The kernel adds each step's water at the nearest grid point; spread it over about the brush's width.
    sigma = min(max(0.5 * radius / cell, 0.5), MAX_BLUR)
    flow = periodic_blur(_closed(flow), sigma)
    return ErosionResult(eroded, flow_wetness(flow, mean_flow), _closed(deposit), lost * STEP * STEP)


CELL_SMOOTHING = np.array([0.25, 0.5, 0.25], dtype=np.float32)  # without_cell_alternation's weights, each axis


def without_cell_alternation(original: np.ndarray, eroded: np.ndarray) -> np.ndarray:
    """``eroded`` with its change from ``original`` smoothed over one cell: [1, 2, 1] / 4 along each axis, wrapping.

    The droplets' scheme leaves a cell-to-cell alternation in what it changes, strongest where the brush is about a
    cell and a half wide (iterations 8, the teximage's default): a checkerboard on eroded slopes, about 11 times
    the uneroded map's power at two cells' wavelength. The filter's response is cos^2(pi / wavelength): 0 at two
    cells, 0.5 at four, 0.85 at eight, near 1 for longer ones; the map itself is not smoothed, only the change.
    Both maps seamless, the same shape (the erosion's own, already checked: no second pass over them).
    """
    original = check_heightmap(original, grid=True, finite=False)
    eroded = check_heightmap(eroded, "eroded", grid=True, finite=False)
    if eroded.shape != original.shape:
        raise ValueError(f"eroded must be the original's shape {original.shape}, got {eroded.shape}")
    smoothed = periodic_filter(eroded - original, CELL_SMOOTHING)
    smoothed += original
    return smoothed


# --- thermal -----------------------------------------------------------------------------------------------------

_NEIGHBOUR_ROWS = np.array([-1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int64)
_NEIGHBOUR_COLUMNS = np.array([-1, 0, 1, -1, 1, -1, 0, 1], dtype=np.int64)


@njit(cache=True, nogil=True)
def _wrap_border(padded):
    """Fill the one-cell border of a padded torus from the opposite side."""
    size = padded.shape[0] - 2
    padded[0, 1:size + 1] = padded[size, 1:size + 1]
    padded[size + 1, 1:size + 1] = padded[1, 1:size + 1]
    padded[:, 0] = padded[:, size]
    padded[:, size + 1] = padded[:, 1]


@njit(cache=True, inline="always")
def _excess(height, neighbour, limit):
    """How far ``height`` stands above ``neighbour`` beyond the stable difference ``limit`` (0 if not)."""
    return max(height - neighbour - limit, 0.0)


def _thermal_share_rows(padded, limits, share, loss):
    """One thermal pass's first half: every cell's share (what it moves per unit of excess) and its loss.

    ``padded`` is the (size + 2)**2 torus with a wrapped one-cell border; ``limits[k]`` is the largest stable
    height difference towards neighbour k (``_NEIGHBOUR_ROWS``, ``_NEIGHBOUR_COLUMNS``). Rows are independent.
    The eight neighbours are written out (in k's order, which the sums keep) so that each cell's sums stay in
    registers and the loop over columns vectorises.
    """
    size = padded.shape[0] - 2
    l0, l1, l2, l3, l4, l5, l6, l7 = limits
    for row in prange(1, size + 1):
        up, here, down = padded[row - 1], padded[row], padded[row + 1]
        for column in range(1, size + 1):
            height = here[column]
            e0 = _excess(height, up[column - 1], l0)
            e1 = _excess(height, up[column], l1)
            e2 = _excess(height, up[column + 1], l2)
            e3 = _excess(height, here[column - 1], l3)
            e4 = _excess(height, here[column + 1], l4)
            e5 = _excess(height, down[column - 1], l5)
            e6 = _excess(height, down[column], l6)
            e7 = _excess(height, down[column + 1], l7)
            total = e0 + e1 + e2 + e3 + e4 + e5 + e6 + e7
            largest = max(e0, e1, e2, e3, e4, e5, e6, e7)
            moved = _SLIDE * largest
            share[row, column] = moved / total if total > 0.0 else 0.0
            loss[row - 1, column - 1] = moved  # = share * total: what the cell passes on
    return share


def _thermal_apply_rows(padded, limits, share, loss, out):
    """One thermal pass's second half: every cell's new height.

    That is what the cell keeps plus what its higher neighbours pass to it (``share`` with its border wrapped);
    a neighbour sees this cell in the opposite direction, at the same distance. Rows are independent, and the
    neighbours written out, as in the first half.
    """
    size = padded.shape[0] - 2
    l0, l1, l2, l3, l4, l5, l6, l7 = limits
    for row in prange(1, size + 1):
        up, here, down = padded[row - 1], padded[row], padded[row + 1]
        share_up, share_here, share_down = share[row - 1], share[row], share[row + 1]
        for column in range(1, size + 1):
            height = here[column]
            change = -loss[row - 1, column - 1]  # the cell's own loss, then what it receives
            change += share_up[column - 1] * _excess(up[column - 1], height, l0)
            change += share_up[column] * _excess(up[column], height, l1)
            change += share_up[column + 1] * _excess(up[column + 1], height, l2)
            change += share_here[column - 1] * _excess(here[column - 1], height, l3)
            change += share_here[column + 1] * _excess(here[column + 1], height, l4)
            change += share_down[column - 1] * _excess(down[column - 1], height, l5)
            change += share_down[column] * _excess(down[column], height, l6)
            change += share_down[column + 1] * _excess(down[column + 1], height, l7)
            out[row, column] = height + change
    return out


_THERMAL_SHARES = row_kernels(_thermal_share_rows)
_THERMAL_APPLY = row_kernels(_thermal_apply_rows)
_THERMAL_NS_PER_CELL = 6.0  # both halves of a pass, one thread (bench/erosion.py)


@functools.lru_cache(maxsize=64)  # a flight asks for every keyframe: the brush is made once per size and radius
def estimated_seconds(size: int, droplets: float, radius: float, passes: int) -> tuple[float, float]:
    """About how long hydraulic and thermal erosion of a map ``size`` cells across take on one core.

    From the kernels' own work estimates (each droplet's steps and brush weights; each thermal pass's cells), made
    before the work: a scene from someone else must not cost more than its user would choose.
    """
    droplet_steps = droplet_count(droplets) * LIFETIME
    brush_weights = brush(size, radius)[2].shape[0]
    hydraulic = droplet_steps * _step_ns(brush_weights) * 1e-9
    return hydraulic, passes * size * size * _THERMAL_NS_PER_CELL * 1e-9


def _thermal_passes(padded: np.ndarray, out: np.ndarray, share: np.ndarray, loss: np.ndarray, passes: int,
                    limits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run ``passes`` thermal passes over the torus held in ``padded``; returns (the result, the other buffer).

    ``out``, ``share`` and ``loss`` are the passes' scratch buffers. Every cell moves material from the same
    snapshot, so the rows of each half-pass are independent and run in parallel with a result identical to one thread's.
    """
    size = padded.shape[0] - 2
    work = int(_THERMAL_NS_PER_CELL / 2 * size * size)  # one half-pass: each run_rows call decides for itself
    for _ in range(passes):
        _wrap_border(padded)
        run_rows(_THERMAL_SHARES, size, work, padded, limits, share, loss)
        _wrap_border(share)
        run_rows(_THERMAL_APPLY, size, work, padded, limits, share, loss, out)
        padded, out = out, padded
    return padded, out


def thermal_erosion(heights: np.ndarray, talus: float = TALUS, passes: int = THERMAL_PASSES,
                    progress: Callable[[float], bool] | None = None) -> np.ndarray:
    """Thermal erosion of a seamless (2**n + 1)**2 heightmap.

    ``passes`` passes move material above the ``talus`` angle (degrees, on a map SURFACE_SIZE across with
    heights as displayed) to lower neighbours. Returns the float32 map; ``progress(fraction)`` after every
    pass, False raises ``Cancelled``.
    """
    torus, size = _check_map(heights)
    talus = check_real("talus", talus, 0.0, MAX_TALUS)
    passes = check_int("passes", passes, 0, MAX_THERMAL_PASSES)
    cell = SURFACE_SIZE / size
    limits = math.tan(math.radians(talus)) * cell * np.hypot(_NEIGHBOUR_ROWS, _NEIGHBOUR_COLUMNS)
    padded = np.pad(torus, 1, mode="wrap")
    # The passes' buffers, made once: at iterations 12 each is 134 MB.
    out, share, loss = padded.copy(), np.zeros_like(padded), np.empty((size, size))
    # A few passes per call: the progress callback stays responsive and the kernel call overhead negligible.
    batch = max(1, passes // _BATCHES)
    for done in range(0, passes, batch):
        padded, out = _thermal_passes(padded, out, share, loss, min(batch, passes - done), limits)
        _report(progress, min(passes, done + batch) / passes)
    torus = padded[1:-1, 1:-1]
    return _closed(torus)
