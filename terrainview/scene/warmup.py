"""Compiling the numba kernels ahead of time, and noticing when a compile is about to happen.

``python -m terrainview.scene.warmup`` (run by ``make run``'s set-up) generates a tiny scene of every generator,
texture and render type in the catalog, so numba compiles each kernel once into its on-disk cache and a new
user's first window opens warm. ``cold_kernels(settings)`` tells, before a generation, whether one of the
kernels it runs has no usable cache entry (first run, or the source changed): then the CLI and the window
say "compiling" instead of looking stuck.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any, TextIO

import numpy as np
from numba.core.registry import CPUDispatcher

from terrainview.base.resources import assets_dir
from terrainview.kernels import erosion, fractal, kernel_common, lighting, lod, slopes, texturing
from terrainview.scene import catalog
from terrainview.scene.derived_arrays import DerivedArrays
from terrainview.scene.settings import LevelOfDetail, Look, SceneSettings

COMPILING_NOTICE = "compiling terrain kernels (first run; numba caches them for the next)"


def warm_up_settings() -> Iterator[SceneSettings]:
    """A tiny scene of every render type, generator (with its optional paths) and texture in the catalog."""
    small = SceneSettings(iterations=3, cloud_iterations=3, teximage_iterations=3)
    for mode in catalog.RENDER_TYPES:
        yield small.with_mode(mode)
    rendered = small.with_mode("rendered")
    for name in catalog.GENERATORS:
        yield rendered.replace(generator=name)
    yield rendered.replace(generator="fault", blur=1.0)
    yield rendered.replace(seed_image=str(assets_dir() / "sketch-island.png"))
    for name in catalog.TEXTURES:
        yield rendered.replace(texture=name)
    for name in catalog.EROSIONS:
        yield rendered.replace(erosion=name)
    yield rendered.replace(look=Look.NATURAL)
    yield small.replace(passes=3)  # a diamond step shown on its own


def kernel_modules(settings: SceneSettings) -> set[ModuleType]:
    """The modules whose kernels generating ``settings`` runs."""
    modules = set(catalog.generator(settings).kernels(settings))
    if catalog.erosion(settings).hydraulic or catalog.erosion(settings).thermal:
        modules.add(erosion)
    if settings.lod is LevelOfDetail.ON and catalog.render_type(settings).dimensions == 2:
        modules.add(lod)  # its selection runs while drawing large surfaces
    texture = catalog.texture(settings)
    if texture.make is not None and catalog.render_type(settings).dimensions == 2:
        modules.add(texturing)  # the CPU-made textures (blend, bands)
    if settings.look is Look.NATURAL and catalog.render_type(settings).dimensions == 2:
        modules |= {lighting, slopes}  # the horizons of the natural look's shadows, its slope maps
    return modules


def _dispatchers(modules: Iterable[ModuleType]) -> Iterator[Any]:  # numba's dispatchers are untyped
    """Each module's own cached kernels, except those always inlined into others (they have no cache).

    Row kernels are pairs (``kernel_common.row_kernels``): both builds count.
    """
    for module in modules:
        for value in vars(module).values():
            for candidate in value if isinstance(value, tuple) else (value,):
                if isinstance(candidate, CPUDispatcher) and candidate.__module__ == module.__name__ \
                        and candidate.targetoptions.get("inline") != "always":
                    yield candidate


_found_cached: set[Any] = set()  # dispatchers already seen compiled or cached: their index is not read again


def _cached(dispatcher: Any) -> bool:
    """Compiled in this process, or with a cache index that matches the current source."""
    if dispatcher.signatures or dispatcher in _found_cached:
        return True
    try:  # numba has no public way to ask; its index loader returns {} when missing or stale
        cached = bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001  (numba internals moved: assume cached rather than cry wolf)
        cached = True
    if cached:
        _found_cached.add(dispatcher)
    return cached


# Public helpers' kernels that no generation path runs (texturing.tile_weights): never "about to compile".
OFF_PATH_KERNELS = frozenset({"_weights_kernel"})


def cold_kernels(settings: SceneSettings) -> list[str]:
    """Names of the kernels generating ``settings`` would have to compile first (empty when all are cached)."""
    return [dispatcher.__name__ for dispatcher in _dispatchers(kernel_modules(settings))
            if dispatcher.__name__ not in OFF_PATH_KERNELS and not _cached(dispatcher)]


def announce_compile(settings: SceneSettings, stream: TextIO | None = None) -> bool:
    """Say "compiling" on the terminal when generating ``settings`` will compile kernels; returns whether it will.

    Only an interactive terminal is told (piped output stays exactly the command's own).
    """
    compiling = bool(cold_kernels(settings))
    stream = stream or sys.stderr
    if compiling and stream is not None and stream.isatty():  # None: stderr closed (2>&-)
        print(f"terrainview: {COMPILING_NOTICE}...", file=stream, flush=True)
    return compiling


def warm_up() -> float:
    """Compile (or load from cache) every kernel; returns the seconds it took."""
    started = time.perf_counter()
    for settings in warm_up_settings():
        DerivedArrays().update(settings)
    # The small maps above take the serial builds of the row kernels; once more with every call in parallel.
    with kernel_common.every_call_parallel():
        for settings in warm_up_settings():
            DerivedArrays().update(settings)
    _select_level_of_detail()
    lighting.sun_surface_layer(lighting.open_sky_light_maps(), (0, 0))  # run when the natural look is drawn
    slopes.slope_rows(np.zeros((3, 3), dtype=np.float32), 0, 2, 2, 0)  # so is this
    return time.perf_counter() - started


def _select_level_of_detail() -> None:
    """Run the level-of-detail kernels once on a small map, seen from above.

    They run while a large surface is drawn, not while it is generated.
    """
    surface = lod.LodSurface.from_heights(fractal.diamond_square(6, 0, 0.7))
    view_projection = np.eye(4)
    ranges = lod.lod_ranges(surface, 720, 45.0, lod.DEFAULT_ERROR_PIXELS)
    planes, eye = lod.frustum_planes(view_projection), np.array([0.0, 1.0, 0.0])
    lod.select_nodes(surface, lod.tile_roots(1), planes, eye, ranges)
    lod.select_regions([surface], lod.tile_roots(1), planes, eye, ranges, surface.bottom, surface.top)  # the world's


def main() -> int:
    """Compile every kernel once, saying so when that takes a while."""
    if any(cold_kernels(settings) for settings in warm_up_settings()):
        print(f"terrainview: {COMPILING_NOTICE}...", flush=True)
    seconds = warm_up()
    print(f"terrainview: kernels ready ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
