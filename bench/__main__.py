"""Print every performance figure terrainview tracks, one section per module.

Each section module has ``run() -> None`` and prints its own figures; a section may be skipped with a
reason (for instance when no GL context can be created). ``python -m bench`` runs every section, each in a
process of its own, so that no section's heap, threads or caches weigh on the next's figures (a minute's flight
after the other sections in one process had a 103 ms frame, a full garbage collection over what they had left);
``python -m bench world lod`` runs the sections named, in this process.
"""

import importlib
import platform
import subprocess
import sys

SECTIONS = ("kernels", "busy", "generators", "erosion", "viewer", "uploads", "screenshots", "imgui_panel", "lod",
            "natural", "world", "video")


def run_section(name: str) -> None:
    """Import bench.<name> and run it under its heading."""
    print(f"\n== {name} ==", flush=True)
    importlib.import_module(f"bench.{name}").run()


def main(names: list[str]) -> int:
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        print(f"bench: no section {', '.join(unknown)}; the sections are {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    if names:
        for name in names:
            run_section(name)
        return 0
    print(f"terrainview benchmarks on {platform.machine()} / {platform.python_implementation()} "
          f"{platform.python_version()}", flush=True)
    for name in SECTIONS:
        returncode = subprocess.run([sys.executable, "-m", "bench", name], check=False).returncode
        if returncode != 0:
            print(f"bench: section {name} ended with exit status {returncode}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
