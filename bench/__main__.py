"""Print every performance figure terrainview tracks, one section per module.

Each section module has ``run() -> None`` and prints its own figures; a section may be skipped with a
reason (for instance when no GL context can be created).
"""

import importlib
import platform
import sys

SECTIONS = ("bench.kernels", "bench.busy", "bench.generators", "bench.erosion", "bench.viewer", "bench.uploads",
            "bench.screenshots", "bench.imgui_panel", "bench.lod", "bench.natural", "bench.world", "bench.video")


def main() -> int:
    print(f"terrainview benchmarks on {platform.machine()} / {platform.python_implementation()} "
          f"{platform.python_version()}")
    for name in SECTIONS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        print(f"\n== {name.split('.')[-1]} ==", flush=True)
        module.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
