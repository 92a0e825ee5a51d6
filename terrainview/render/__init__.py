"""GPU drawing: GL resources, render types, level-of-detail patches, world regions and atlases, images, ImGui.

May import: ``terrainview.scene``, ``terrainview.kernels``, ``terrainview.base``, moderngl.
"""
