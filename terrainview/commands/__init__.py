"""The subcommands of ``terrainview``: each module has ``add_<name>_arguments`` and ``<name>_command``."""
