"""A plain, sequential, pure-Python run of the hydraulic erosion's droplets, written from the model and the
schedule in terrainview/kernels/erosion.py's docstring: one droplet after another (block by block, phase by
phase), one step after another, Python floats (IEEE doubles, like the kernel) in the kernel's order of
operations, so the heights must equal the kernel's bit for bit. Slow: for a few droplets on a small map.
"""

from __future__ import annotations

import math

import numpy as np
from reference import lowbias32

from terrainview.kernels import erosion
from terrainview.kernels.lattice import stream_key


def _height_and_gradient(torus: list[list[float]], x: float, z: float) -> tuple[float, float, float]:
    size = len(torus)
    column, row = math.floor(x), math.floor(z)
    fx, fz = x - column, z - row
    h00, h01 = torus[row % size][column % size], torus[row % size][(column + 1) % size]
    h10, h11 = torus[(row + 1) % size][column % size], torus[(row + 1) % size][(column + 1) % size]
    gx = (h01 - h00) * (1.0 - fz) + (h11 - h10) * fz
    gz = (h10 - h00) * (1.0 - fx) + (h11 - h01) * fx
    height = (h00 * (1.0 - fx) + h01 * fx) * (1.0 - fz) + (h10 * (1.0 - fx) + h11 * fx) * fz
    return height, gx, gz


def _blocks(size: int, reach: int, step_cells: float) -> tuple[int, int]:
    """Block side and zone margin, from the schedule in the erosion module's docstring."""
    guard = math.ceil(step_cells) + reach + 2
    block = 64
    while block < 4 * (guard + 1):
        block *= 2
    return (size, 0) if size // block < 4 else (block, block // 2 - guard - 1)


def hydraulic(heights: np.ndarray, seed: int, droplets: float, strength: float = erosion.STRENGTH,
              radius: float = erosion.RADIUS, capacity: float = erosion.CAPACITY,
              deposition: float = erosion.DEPOSITION, evaporation: float = erosion.EVAPORATION,
              inertia: float = erosion.INERTIA, plan: tuple[int, int] | None = None,
              touched: dict | None = None) -> tuple[np.ndarray, float, int]:
    """The eroded map (float32, seamless), the volume the droplets still carried when they died, and how many
    times a droplet left its block's zone to wait for another block's phase.

    ``plan``: the (block, margin) to walk by instead of the docstring's own. ``touched``: filled with the cells
    (row, column) each block read or wrote in each phase, keyed (batch, phase, block row, block column).
    """
    size = heights.shape[0] - 1
    torus = [[float(value) for value in row[:size]] for row in np.asarray(heights, dtype=np.float64)[:size]]
    cell = erosion.SURFACE_SIZE / size
    step_cells = erosion.STEP / cell
    key = int(stream_key(seed, erosion._DOMAIN_DROPLETS))
    rows, columns, weights = erosion.brush(size, radius)
    block, margin = plan or _blocks(size, int(max(abs(rows).max(), abs(columns).max())), step_cells)

    def walk(droplet: int, state: dict, zone_x: int, zone_z: int, cells: set | None) -> None:
        """Walk the droplet on until it dies or stands outside the zone (side block + 2 margin, wrapping), adding
        every cell it reads or writes to ``cells`` (if given)."""
        x, z, direction_x, direction_z = state["x"], state["z"], state["dx"], state["dz"]
        speed, water, sediment = state["speed"], state["water"], state["sediment"]
        while state["step"] < erosion.LIFETIME:
            step = state["step"]
            if block < size:
                across, down = x - zone_x, z - zone_z
                if (across - size * math.floor(across / size) >= block + 2 * margin
                        or down - size * math.floor(down / size) >= block + 2 * margin):
                    break
            height, gx, gz = _height_and_gradient(torus, x, z)
            if cells is not None:
                cells.update(((math.floor(z) + dz) % size, (math.floor(x) + dx) % size)
                             for dz in (0, 1) for dx in (0, 1))
            direction_x = direction_x * inertia - gx / cell * (1.0 - inertia)
            direction_z = direction_z * inertia - gz / cell * (1.0 - inertia)
            length = math.sqrt(direction_x * direction_x + direction_z * direction_z)
            if length == 0.0:
                bits = lowbias32((lowbias32(droplet ^ key) + step) & 0xFFFFFFFF)
                angle = 2.0 * math.pi * (float(bits >> 8) * (1.0 / (1 << 24)))
                direction_x, direction_z = math.cos(angle), math.sin(angle)
            else:
                direction_x /= length
                direction_z /= length
            new_x = x + direction_x * step_cells
            new_z = z + direction_z * step_cells
            drop = _height_and_gradient(torus, new_x, new_z)[0] - height
            if cells is not None:
                cells.update(((math.floor(new_z) + dz) % size, (math.floor(new_x) + dx) % size)
                             for dz in (0, 1) for dx in (0, 1))
            if drop > 0.0:
                change = min(drop, sediment)
            else:
                room = max(-drop, erosion.MIN_SLOPE * erosion.STEP) * speed * water * capacity
                if sediment > room:
                    change = (sediment - room) * deposition
                else:
                    change = -min((room - sediment) * strength, -drop)
            sediment -= change
            centre_row, centre_column = math.floor(z + 0.5), math.floor(x + 0.5)
            for row, column, weight in zip(rows, columns, weights, strict=True):
                torus[(centre_row + row) % size][(centre_column + column) % size] += change * float(weight)
                if cells is not None:
                    cells.add(((centre_row + row) % size, (centre_column + column) % size))
            speed = math.sqrt(max(0.0, speed * speed - drop * erosion.GRAVITY))
            water *= 1.0 - evaporation
            x = new_x - size * math.floor(new_x / size)
            z = new_z - size * math.floor(new_z / size)
            state["step"] = step + 1
        state.update(x=x, z=z, dx=direction_x, dz=direction_z, speed=speed, water=water, sediment=sediment)

    def block_of(state: dict) -> tuple[int, int]:
        return (math.floor(state["z"]) % size) // block, (math.floor(state["x"]) % size) // block

    count, batches = erosion.droplet_count(droplets), erosion._BATCHES
    lost, handovers = 0.0, 0
    for batch in range(batches):
        states = {}
        for droplet in range(count * batch // batches, count * (batch + 1) // batches):
            states[droplet] = {
                "x": float(lowbias32((2 * droplet) ^ key) >> 8) * (1.0 / (1 << 24)) * size,
                "z": float(lowbias32((2 * droplet + 1) ^ key) >> 8) * (1.0 / (1 << 24)) * size,
                "dx": 0.0, "dz": 0.0, "speed": 1.0, "water": 1.0, "sediment": 0.0, "step": 0}
        phase = 0
        while any(state["step"] < erosion.LIFETIME for state in states.values()):
            walking = [(block_of(state), droplet) for droplet, state in states.items()
                       if state["step"] < erosion.LIFETIME
                       and block_of(state)[0] % 2 * 2 + block_of(state)[1] % 2 == phase % 4]
            for (block_row, block_column), droplet in sorted(walking):
                cells = None if touched is None else touched.setdefault((batch, phase, block_row, block_column), set())
                walk(droplet, states[droplet], block_column * block - margin, block_row * block - margin, cells)
                handovers += states[droplet]["step"] < erosion.LIFETIME
            phase += 1
        lost += sum(state["sediment"] for state in states.values())
    closed = np.pad(np.array(torus), ((0, 1), (0, 1)), mode="wrap").astype(np.float32)
    return closed, lost * erosion.STEP**2, handovers


def thermal_pass(torus: list[list[float]], limits: list[float], slide: float) -> list[list[float]]:
    """One thermal pass over a size x size torus, cell by cell: each cell passes ``slide`` of its largest excess
    over a neighbour's limit on to its lower neighbours, in proportion to their excess; all from one snapshot."""
    size = len(torus)
    neighbours = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]

    def excesses(row: int, column: int) -> list[float]:
        here = torus[row][column]
        return [max(here - torus[(row + dr) % size][(column + dc) % size] - limit, 0.0)
                for (dr, dc), limit in zip(neighbours, limits, strict=True)]

    result = [[0.0] * size for _ in range(size)]
    for row in range(size):
        for column in range(size):
            value = torus[row][column] - slide * max(excesses(row, column))
            for dr, dc in neighbours:
                neighbour_row, neighbour_column = (row + dr) % size, (column + dc) % size
                theirs = excesses(neighbour_row, neighbour_column)
                opposite = neighbours.index((-dr, -dc))
                if theirs[opposite] > 0.0:
                    value += slide * max(theirs) / sum(theirs) * theirs[opposite]
            result[row][column] = value
    return result
