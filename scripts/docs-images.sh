#!/usr/bin/env bash
# Remake the README's pictures with `terrainview render` (headless; run after `make test` has set up .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
render=(.venv/bin/terrainview render --force)
camera=(--ztrans -1.6 --ytrans -0.55 --yrot 25 --pitch 4)
mkdir -p docs
"${render[@]}" -o docs/rendered.png --size 1280x720 --supersample 2 --mode rendered --iterations 9 --tile 3 \
    --teximage-iterations 10 "${camera[@]}"
natural=(--mode rendered --look natural --camera fly --tile repeat --eye-x 0.3 --eye-y 0.5 --eye-z 0.8 --pitch 8
         --yrot 20 --water-level -0.02)
"${render[@]}" -o docs/natural.png --size 1280x720 --supersample 2 --iterations 10 "${natural[@]}" \
    --sun-azimuth 120 --sun-elevation 25
"${render[@]}" -o docs/endless-world.png --size 1280x720 --supersample 2 --preset endless-flight --iterations 10
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${render[@]}" -o "$work/fault.png" --size 640x360 --mode rendered --iterations 8 --tile 2 "${camera[@]}" \
    --generator fault --fault-iterations 400 --blur 1.5
"${render[@]}" -o "$work/blend.png" --size 640x360 --mode rendered --iterations 8 --tile 2 "${camera[@]}" \
    --texture blend --shading slope
"${render[@]}" -o "$work/bands.png" --size 640x360 --mode rendered --iterations 8 --tile 2 "${camera[@]}" \
    --texture bands --shading slope
"${render[@]}" -o "$work/water.png" --size 640x360 --mode rendered --iterations 8 --tile 2 "${camera[@]}" \
    --seed-image assets/sketch-island.png --seed-passes 3 --texture blend --water-level 0.02
.venv/bin/python - "$work" <<'PY'
import sys
from PIL import Image, ImageDraw

work = sys.argv[1]
names = [("fault", "--generator fault --blur 1.5"), ("blend", "--texture blend --shading slope"),
         ("bands", "--texture bands --shading slope"), ("water", "--seed-image ... --water-level 0.02")]
sheet = Image.new("RGB", (1280, 720))
for index, (name, caption) in enumerate(names):
    image = Image.open(f"{work}/{name}.png").convert("RGB")
    ImageDraw.Draw(image).text((10, 338), caption, fill=(0, 0, 0))
    sheet.paste(image, ((index % 2) * 640, (index // 2) * 360))
sheet.save("docs/companions.png", optimize=True)
PY
for time_of_day in "sunrise 75 4" "noon 160 60" "sunset 250 5"; do
    read -r name azimuth elevation <<<"$time_of_day"
    "${render[@]}" -o "$work/$name.png" --size 640x360 --iterations 10 "${natural[@]}" --yrot 60 \
        --sun-azimuth "$azimuth" --sun-elevation "$elevation"
done
.venv/bin/python - "$work" <<'PY'
import sys
from PIL import Image

work = sys.argv[1]
strip = Image.new("RGB", (1920, 360))
for index, name in enumerate(("sunrise", "noon", "sunset")):
    strip.paste(Image.open(f"{work}/{name}.png").convert("RGB"), (index * 640, 0))
strip.save("docs/times-of-day.png", optimize=True)
PY
echo "wrote docs/rendered.png, docs/companions.png, docs/natural.png, docs/endless-world.png and docs/times-of-day.png"
