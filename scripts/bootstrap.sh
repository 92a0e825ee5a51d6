#!/usr/bin/env bash
# Installs what terrainview needs on a fresh Debian machine: missing system packages (as root, or via sudo),
# then a virtual environment in .venv with the package and its test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

# libegl1/libgl1/libgl1-mesa-dri: headless EGL and GLX rendering with Mesa (llvmpipe when there is no GPU);
# xvfb/xauth/xdotool/imagemagick: a real window on a virtual screen, keys pressed and the screen grabbed, for
# the end-to-end tests; gcc: the C reference in bench.
system_packages=(python3 python3-venv libegl1 libgl1 libgl1-mesa-dri libegl-mesa0 xvfb xauth xdotool imagemagick
                 gcc)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for package in "${system_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
fi
# A python3 that is not Debian's (pyenv, say) already carries venv; only its absence matters then.
if command -v python3 >/dev/null 2>&1 && python3 -c "import venv, ensurepip" 2>/dev/null; then
    filtered=()
    for package in "${missing[@]}"; do
        [[ "$package" == python3 || "$package" == python3-venv ]] || filtered+=("$package")
    done
    missing=("${filtered[@]+"${filtered[@]}"}")
fi

if ((${#missing[@]})); then
    echo "bootstrap: installing system packages: ${missing[*]}"
    if [[ $(id -u) -eq 0 ]]; then
        apt_get=(apt-get)
    elif command -v sudo >/dev/null 2>&1; then
        apt_get=(sudo apt-get)
    else
        echo "bootstrap: missing system packages (${missing[*]}) and no root or sudo to install them" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${apt_get[@]}" update -qq
    "${apt_get[@]}" install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ ! -x .venv/bin/python ]]; then
    echo "bootstrap: creating .venv"
    python3 -m venv .venv
fi
echo "bootstrap: installing terrainview and its dependencies into .venv"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
# Compile every numba kernel once now, so the first window opens warm (numba caches them beside the sources).
echo "bootstrap: compiling terrainview's kernels"
.venv/bin/python -m terrainview.scene.warmup
