"""The subcommands of ``terrainview``: each module has ``add_<name>_arguments`` and ``<name>_command``.

May import: ``terrainview.output`` and every layer below it; never ``terrainview.window``.
"""
