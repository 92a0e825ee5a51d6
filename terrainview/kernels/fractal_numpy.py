"""Diamond-square in whole-array numpy steps: a process's first map, made before numba is loaded.

The same arithmetic as ``fractal_numba``'s passes, in the same order and in float32, so the two maps are equal bit
for bit (tests/test_fractal.py compares them). It takes about 15 ms at iterations 10, where importing numba and
its first compiled call take about 0.8 s; the numba kernel is 10 times faster once loaded.
"""

from __future__ import annotations

import numpy as np

from terrainview.kernels.lattice import LATTICE_BITS, QUARTER, hash32_array, offset_from_bits


def _offsets(rows: np.ndarray, columns: np.ndarray, lattice_shift: int, key: np.uint32,
             scale: np.float32) -> np.ndarray:
    """The offsets of the fine lattice points (rows x columns): fractal_numba's _offset, scale * r, r in [-0.5, 0.5)."""
    # fractal_numba's _lattice_index; below 2**32 for every point of a map, as there.
    index = (rows << (lattice_shift + LATTICE_BITS)) + (columns << lattice_shift)
    return offset_from_bits(hash32_array(hash32_array(index.astype(np.uint32) ^ key)), scale)


def diamond_square(scales: np.ndarray, key: np.uint32) -> np.ndarray:
    """The map of len(scales) passes from four zero corners; pass p displaces by scales[p] (checked arguments)."""
    coarse = np.zeros((2, 2), dtype=np.float32)
    for pass_index, scale in enumerate(scales):
        cells = coarse.shape[0] - 1
        shift = LATTICE_BITS - (pass_index + 1)
        rows = np.arange(cells, dtype=np.int64)[:, None]
        columns = np.arange(cells, dtype=np.int64)[None, :]
        up, down = coarse[:-1], coarse[1:]
        fine = np.empty((2 * cells + 1,) * 2, dtype=np.float32)
        # Diamond step: the centre of each coarse cell, at odd rows and odd columns.
        centres = (up[:, :-1] + up[:, 1:] + down[:, :-1] + down[:, 1:]) * QUARTER \
            + _offsets(2 * rows + 1, 2 * columns + 1, shift, key, scale)
        fine[1::2, 1::2] = centres
        # Square step on odd rows (even columns): the centres left and right, wrapping at column 0, and the
        # coarse points above and below.
        left = np.roll(centres, 1, axis=1)
        fine[1::2, :-1:2] = (left + centres + up[:, :-1] + down[:, :-1]) * QUARTER \
            + _offsets(2 * rows + 1, 2 * columns, shift, key, scale)
        # Even rows: the coarse points, and between them the square step with the centres above (wrapping at
        # row 0) and below.
        above = np.roll(centres, 1, axis=0)
        fine[:-1:2, ::2] = up
        fine[:-1:2, 1::2] = (up[:, :-1] + up[:, 1:] + above + centres) * QUARTER \
            + _offsets(2 * rows, 2 * columns + 1, shift, key, scale)
        fine[1::2, -1] = fine[1::2, 0]
        fine[-1] = fine[0]
        coarse = fine
    return coarse
