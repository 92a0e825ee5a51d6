"""GPU drawing: GL resources, every render type, level-of-detail patches, offscreen images, ImGui's draw lists.

May import: ``terrainview.scene``, ``terrainview.kernels``, ``terrainview.base``, moderngl.
"""
