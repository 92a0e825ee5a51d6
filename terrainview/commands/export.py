"""``terrainview export``: the surface heightmap or mesh written to a file (formats in ``terrainview.export``)."""

from __future__ import annotations

import argparse
import contextlib

from ..export import COMPANIONS, EXPORT_FORMATS, export_settings
from ..files import atomic_output, check_output_path
from ..settings import SceneSettings
from ..terrain import surface_heights


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    extensions = ", ".join(EXPORT_FORMATS)
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help=f"the file to write; its extension picks the format ({extensions})")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")


def export_command(args: argparse.Namespace, settings: SceneSettings) -> int:
    path = check_output_path(args.output, args.force, EXPORT_FORMATS)
    extension = path.suffix.lower()
    paths = [path] + [check_output_path(path.with_suffix(companion), args.force, (companion,))
                      for companion in COMPANIONS.get(extension, ())]
    settings = export_settings(settings)
    heights = surface_heights(settings)
    with contextlib.ExitStack() as stack:
        files = {final: stack.enter_context(atomic_output(final, args.force)) for final in paths}
        EXPORT_FORMATS[extension](heights, settings, files)
    shape = "x".join(str(side) for side in heights.shape)
    print(f"wrote {path} ({path.stat().st_size} bytes, {shape} heights)")
    for companion in paths[1:]:
        print(f"wrote {companion} ({companion.stat().st_size} bytes)")
    return 0
