#!/usr/bin/env bash
# `make run`: open the viewer. With no display (a server, CI), say so and render one frame to a PNG instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" || "$(uname)" == "Darwin" ]]; then
    exec .venv/bin/terrainview "$@"
fi
mkdir -p screenshots
output="screenshots/make-run-$(date +%Y%m%d-%H%M%S).png"
echo "make run: no display here (DISPLAY is not set), so no window can open."
echo "make run: rendering the default scene in rendered mode to $output instead."
echo "make run: on a desktop, 'make run' opens the window; on a server, try: xvfb-run -s '-screen 0 1600x1000x24' make run"
.venv/bin/terrainview render --mode rendered --iterations 8 -o "$output" "$@"
