"""``terrainview export``: the surface heightmap or mesh written to a file (formats in ``terrainview.export``)."""

from __future__ import annotations

import argparse

from ..export import EXPORT_FORMATS, companion_paths, estimated_bytes, export_settings
from ..files import atomic_outputs, check_free_space, check_output_path
from ..settings import SceneSettings
from ..terrain import surface_heights
from ..warmup import announce_compile


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    extensions = ", ".join(EXPORT_FORMATS)
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help=f"the file to write; its extension picks the format ({extensions})")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")


def export_command(args: argparse.Namespace, settings: SceneSettings) -> int:
    path = check_output_path(args.output, args.force, EXPORT_FORMATS)
    extension = path.suffix.lower()
    paths = companion_paths(path)
    for companion, role in list(paths.items())[1:]:
        check_output_path(companion, args.force, (companion.suffix.lower(),), role)
    settings = export_settings(settings)
    check_free_space(path, estimated_bytes(settings, extension))
    announce_compile(settings)
    heights = surface_heights(settings)
    with atomic_outputs(paths, args.force) as files:
        EXPORT_FORMATS[extension](heights, settings, files)
    shape = "x".join(str(side) for side in heights.shape)
    print(f"wrote {path} ({path.stat().st_size} bytes, {shape} heights)")
    for companion in list(paths)[1:]:
        print(f"wrote {companion} ({companion.stat().st_size} bytes)")
    return 0
