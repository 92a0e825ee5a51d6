"""``terrainview export``: the surface heightmap or mesh written to a file (formats in ``output.export_formats``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from terrainview.base.atomic_files import atomic_outputs, check_free_space, check_output_path
from terrainview.base.messages import report
from terrainview.commands import Command
from terrainview.commands.stages import Stages, terrain_stages
from terrainview.output.export_formats import (
    EXPORT_FORMATS,
    FLOW_MAP_FORMATS,
    companion_paths,
    estimated_bytes,
    export_settings,
    write_flow_map,
    writing_note,
)
from terrainview.output.world_export import WORLD_FORMATS, WorldRectangle, estimated_world_bytes
from terrainview.scene import catalog
from terrainview.scene.arguments import scene_from_args
from terrainview.scene.derived_arrays import eroded_heights
from terrainview.scene.settings import ENDLESS, SceneSettings, SettingsError
from terrainview.scene.warmup import announce_compile


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``export``'s options: -o/--output, --force and --flow-map."""
    extensions = ", ".join(EXPORT_FORMATS)
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help=f"the file to write; its extension picks the format ({extensions})")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    parser.add_argument("--region", metavar="X0,Z0,X1,Z1",
                        help="with --tile endless: the rectangle of the world to write, in world units (a region is "
                             "2 units; corners included, rounded outward to the grid of --iterations)")
    parser.add_argument("--flow-map", metavar="FILE", help="also write the hydraulic erosion's flow map (wetness "
                        f"0-1): {', '.join(FLOW_MAP_FORMATS)} (needs --erosion hydraulic or both)")


def export_command(args: argparse.Namespace) -> int:
    """Write the surface (and its companion files and flow map, all or none) to ``--output``; returns exit status 0."""
    settings = scene_from_args(args).settings
    path = check_output_path(args.output, args.force, EXPORT_FORMATS)
    extension = path.suffix.lower()
    paths = companion_paths(path)
    for companion, role in list(paths.items())[1:]:
        check_output_path(companion, args.force, (companion.suffix.lower(),), role)
    settings = export_settings(settings)
    region = getattr(args, "region", None)
    if settings.tile == ENDLESS or region is not None:
        return _export_world(args, settings, path, paths)
    flow_path = None
    if getattr(args, "flow_map", None) is not None:
        if args.flow_map == "":
            raise SettingsError("--flow-map: no file name given")
        if not catalog.erosion(settings).hydraulic:
            raise SettingsError("--flow-map needs --erosion hydraulic or both")
        flow_path = check_output_path(args.flow_map, args.force, FLOW_MAP_FORMATS, f"the flow map of {path.name}")
        taken = {other.resolve(): role for other, role in paths.items()}
        if flow_path.resolve() in taken:
            role = taken[flow_path.resolve()] or "the output"
            raise SettingsError(f"--flow-map: {flow_path} is already {role}; name another file")
        paths[flow_path] = f"the flow map of {path.name}"
    check_free_space(path, estimated_bytes(settings, extension))
    announce_compile(settings)
    with Stages() as stages:
        progress = terrain_stages(stages)
        heights, maps = eroded_heights(settings, settings.iterations, settings.h, progress)
        stages.stage(f"writing {path.name}{writing_note(heights, settings, extension)}")
        with atomic_outputs(paths, args.force) as files:  # the output, its companions and the flow map: all or none
            if flow_path is not None and maps is not None:
                write_flow_map(maps.flow, flow_path.suffix.lower(), files[flow_path])
            EXPORT_FORMATS[extension](heights, settings, {final: part for final, part in files.items()
                                                          if final != flow_path})
    shape = "x".join(str(side) for side in heights.shape)
    report(f"wrote {path} ({path.stat().st_size} bytes, {shape} heights)")
    _report_companions(paths)
    return 0


def _export_world(args: argparse.Namespace, settings: SceneSettings, path: Path, paths: dict[Path, str]) -> int:
    """``--tile endless --region``: a rectangle of the endless world, streamed a band of rows at a time."""
    if not args.region:
        raise SettingsError("export --tile endless needs --region X0,Z0,X1,Z1: the world has no edge to stop at")
    if getattr(args, "flow_map", None) is not None:
        raise SettingsError("--flow-map: the endless world is not eroded, so it has no flow map")
    rectangle = WorldRectangle.parse(args.region, settings)
    extension = path.suffix.lower()
    check_free_space(path, estimated_world_bytes(rectangle, extension))
    announce_compile(settings)
    with Stages() as stages, atomic_outputs(paths, args.force) as files:
        WORLD_FORMATS[extension](rectangle, settings, files, stages.stage(f"writing {path.name}"))
    report(f"wrote {path} ({path.stat().st_size} bytes, {rectangle.rows}x{rectangle.columns} heights, "
          f"{rectangle.describe()})")
    _report_companions(paths)
    return 0


def _report_companions(paths: dict[Path, str]) -> None:
    """A summary line for each file written beside the output (the first of ``paths``)."""
    for companion in list(paths)[1:]:
        report(f"wrote {companion} ({companion.stat().st_size} bytes)")


COMMAND = Command(add_export_arguments, export_command)
