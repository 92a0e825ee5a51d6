"""The subcommands of ``terrainview``: each module's ``COMMAND`` says how to add its options and run it.

May import: ``terrainview.output`` and every layer below it; never ``terrainview.window``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A subcommand: ``add_arguments`` adds its own options (the CLI adds the scene options), ``run`` runs it.

    ``run`` takes the parsed command line and returns the exit status.
    """

    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
