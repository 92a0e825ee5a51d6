"""Uploads: how long one frame holds the UI thread while a new heightmap goes to the GPU a slice per frame
(``GpuResources.stage``, as the window does it), against uploading it whole."""

from __future__ import annotations

import time

from terrainview.render.offscreen import create_headless_context
from terrainview.render.renderer import Renderer
from terrainview.scene.settings import SceneSettings

TARGET_MS = 50.0


def run() -> None:
    ctx = create_headless_context()
    renderer = Renderer(ctx)
    renderer.update(SceneSettings(mode="lines", iterations=4))
    print(f"heightmap upload, per frame (GPU finished after each slice); target <= {TARGET_MS:g} ms a frame")
    # The first upload at a size allocates the arrays, one a frame (terrainview/render/gpu.py HeightBands);
    # later ones at that size take the arrays the previous map gave back to its pool.
    for iterations, h in ((10, 0.7), (11, 0.7), (12, 0.7), (12, 0.6), (12, 0.5)):
        settings = SceneSettings(mode="lines", iterations=iterations, h=h)
        changed = renderer.arrays.update(settings)
        slices = []
        started = time.perf_counter()
        for _ in renderer.gpu.stage(changed):
            ctx.finish()
            slices.append(time.perf_counter() - started)
            started = time.perf_counter()
        renderer.upload(changed)  # adopts the staged texture
        ctx.finish()
        adopt = time.perf_counter() - started
        whole_started = time.perf_counter()
        heights = changed["surface"]
        assert heights is not None
        renderer.gpu.upload_surface(heights.copy())  # not the staged array: a plain whole upload
        ctx.finish()
        whole = time.perf_counter() - whole_started
        worst = 1000 * max(*slices, adopt)
        verdict = "ok" if worst <= TARGET_MS else "MISSED"
        print(f"  iterations {iterations}, H {h}: {len(slices)} slices, worst frame {worst:6.1f} ms ({verdict}); "
              f"whole upload in one frame {1000 * whole:6.1f} ms")
    renderer.release()
    ctx.release()
