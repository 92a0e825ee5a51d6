"""Outputs written to files: heightmap and mesh export formats, the OBJ mesh and flight videos.

The libraries behind ``terrainview export`` and ``terrainview video``. May import: ``terrainview.render``
and every layer below it, PyAV, Pillow.
"""
