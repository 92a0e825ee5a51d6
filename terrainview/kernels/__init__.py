"""Numba kernels: heightmaps, generators, textures, erosion and level-of-detail selection, on arrays only.

No GL, no settings, no files: every public function takes arrays and numbers, checks them and calls a
``@njit`` kernel (``fractal``'s live in ``fractal_numba``, and a process's first diamond-square map is numpy's,
``fractal_numpy``). May import: ``terrainview.base``, numpy, numba.
"""
