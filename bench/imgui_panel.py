"""The options panel's cost per frame on this machine's GL: building it with ImGui, and drawing it with
terrainview's own ImGui renderer, at framebuffer scale 1 and 2 (a 1280x720 window on a normal and a HiDPI
screen)."""

from __future__ import annotations

import statistics
import time

from imgui_bundle import imgui

from terrainview.render.imgui_draw import ImGuiRenderer
from terrainview.render.offscreen import create_headless_context
from terrainview.scene.settings import SceneSettings
from terrainview.window.panel import Panel, PanelStatus

WINDOW = (1280, 720)
FRAMES = 60


def run() -> None:
    ctx = create_headless_context()
    context = imgui.create_context()
    imgui.get_io().set_ini_filename("")
    renderer = ImGuiRenderer(ctx)
    panel, settings = Panel(), SceneSettings()
    print(f"panel frame at {WINDOW[0]}x{WINDOW[1]} window coordinates (median of {FRAMES}; GPU finished each frame)")
    for scale in (1, 2):
        texture = ctx.texture((WINDOW[0] * scale, WINDOW[1] * scale), 4)
        framebuffer = ctx.framebuffer([texture])
        io = imgui.get_io()
        io.display_size = imgui.ImVec2(*WINDOW)
        io.display_framebuffer_scale = imgui.ImVec2(scale, scale)
        build, draw = [], []
        for step in range(FRAMES + 3):  # the first frames bake this scale's glyphs
            started = time.perf_counter()
            imgui.new_frame()
            panel.draw(settings, PanelStatus(frames_per_second=step))
            imgui.render()
            built = time.perf_counter()
            renderer.render(imgui.get_draw_data(), framebuffer)
            ctx.finish()
            if step >= 3:
                build.append(built - started)
                draw.append(time.perf_counter() - built)
        print(f"  framebuffer scale {scale}: build {statistics.median(build) * 1000:.2f} ms, "
              f"draw {statistics.median(draw) * 1000:.2f} ms")
        framebuffer.release()
        texture.release()
    print(f"  font atlas: {renderer.textures_created} created, {renderer.rectangles_uploaded} rectangles uploaded")
    renderer.release()
    imgui.destroy_context(context)
    ctx.release()
