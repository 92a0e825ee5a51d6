"""The viewer window: the moderngl-window app, the panel, arrow keys, flythroughs and background generation.

May import: ``terrainview.output`` and every layer below it; never ``terrainview.commands``.
"""
