"""The scene's data: settings and their catalog, derived arrays, camera maths, scene and flight files.

Also image sizes and the kernels' warm-up. No GL. May import: ``terrainview.kernels``, ``terrainview.base``,
numpy, pyglm, Pillow, TOML.
"""
