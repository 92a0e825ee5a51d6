"""Our Dear ImGui renderer (terrainview.render.imgui_draw): the real panel drawn headless (EGL) at 1x and 2x
framebuffer scale and at UI scale 2, ImGui 1.92's texture requests, scissors, vertex and index offsets, GL object
lifetime over 500 changing frames, and the window input mapping (Ctrl+click typing into a slider).

Each test gets its own ImGui context, so windows start where the panel places them on first use. Tests that
take the GL fixtures carry the ``gl`` marker (tests/conftest.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from imgui_bundle import imgui
from PIL import Image
from test_gpu_resources import GlNames, settle

import terrainview.window.panel
from terrainview.base.resources import assets_dir
from terrainview.render.imgui_draw import ImGuiRenderer
from terrainview.scene.settings import SceneSettings
from terrainview.window.imgui_input import StyleScale, WindowInput
from terrainview.window.panel import PANEL_WIDTH, Panel, PanelStatus

pytest_plugins = ["gl_fixtures"]

DISPLAY = (480, 300)  # window coordinates: the panel (430 wide at UI scale 1) fits across, and scrolls
WHITE = 255


# --- helpers ----------------------------------------------------------------------------------------------


@pytest.fixture
def imgui_context(renderer):
    """A fresh ImGui context (no imgui.ini) while the session's GL context is current (``renderer`` makes it
    so, and fails the test on a GL error left behind)."""
    context = imgui.create_context()
    imgui.set_current_context(context)  # create_context makes it current only when no other context is
    imgui.get_io().set_ini_filename("")
    try:
        yield context
    finally:
        imgui.destroy_context(context)


@pytest.fixture
def ui(imgui_context, renderer):
    ui_renderer = ImGuiRenderer(renderer.ctx)
    try:
        yield ui_renderer
    finally:
        ui_renderer.release()


@pytest.fixture
def target(renderer):
    """``target(scale, display=DISPLAY)``: an RGBA framebuffer of ``display`` times ``scale`` pixels, released
    after the test."""
    made = []

    def make(scale: float, display: tuple[int, int] = DISPLAY):
        size = (round(display[0] * scale), round(display[1] * scale))
        texture = renderer.ctx.texture(size, 4)
        made.extend([renderer.ctx.framebuffer([texture]), texture])
        return made[-2]

    yield make
    for gl_object in made:
        gl_object.release()


def frame(ui: ImGuiRenderer, framebuffer, scale: float, draw, display=DISPLAY) -> None:
    """One ImGui frame: ``draw()`` submits the widgets; drawn over white at framebuffer scale ``scale``."""
    io = imgui.get_io()
    io.display_size = imgui.ImVec2(*display)
    io.display_framebuffer_scale = imgui.ImVec2(scale, scale)
    imgui.new_frame()
    draw()
    imgui.render()
    framebuffer.clear(1.0, 1.0, 1.0, 1.0)
    ui.render(imgui.get_draw_data(), framebuffer)


def pixels(framebuffer) -> np.ndarray:
    """RGB rows, top row first."""
    width, height = framebuffer.size
    return np.frombuffer(framebuffer.read(components=3), np.uint8).reshape(height, width, 3)[::-1].astype(int)


def draw_panel(ui, framebuffer, scale: float, panel: Panel | None = None, frames: int = 3,
               display=DISPLAY) -> np.ndarray:
    """The panel as the viewer draws it (a few frames: an auto-resizing window settles on its second)."""
    panel = panel or Panel()
    for _ in range(frames):
        frame(ui, framebuffer, scale, lambda: panel.draw(SceneSettings(), PanelStatus()), display)
    return pixels(framebuffer)


def box(image: np.ndarray) -> tuple[int, int, int, int]:
    """Rows and columns (half-open) of everything not white: the panel."""
    drawn = (image != WHITE).any(axis=2)
    rows, columns = np.flatnonzero(drawn.any(axis=1)), np.flatnonzero(drawn.any(axis=0))
    return rows[0], rows[-1] + 1, columns[0], columns[-1] + 1


def inside(image: np.ndarray, margin: int = 4) -> np.ndarray:
    top, bottom, left, right = box(image)
    return image[top + margin:bottom - margin, left + margin:right - margin]


def text_pixels(image: np.ndarray) -> int:
    """Near-white pixels inside the dark panel: its text."""
    return int((inside(image) > 200).all(axis=2).sum())


def hard_edge_fraction(image: np.ndarray) -> float:
    """Of the brightness steps between horizontal neighbours inside the panel (more than 30 levels), the share
    that are hard (more than 120): near 1 for crisp text, near 0 for text magnified with bilinear filtering."""
    steps = np.abs(np.diff(inside(image).mean(axis=2), axis=1))
    return float((steps > 120).sum() / (steps > 30).sum())


# --- drawing ----------------------------------------------------------------------------------------------


def test_panel_text_is_sharp_and_the_layout_scales_with_the_framebuffer(ui, target):
    one = draw_panel(ui, target(1), 1.0)
    two = draw_panel(ui, target(2), 2.0)
    # The same layout, twice the pixels: the panel's box doubles exactly, and two's 2x2 averages look like one.
    assert np.array_equal(np.array(box(two)), 2 * np.array(box(one)))
    assert box(one)[3] - box(one)[2] == PANEL_WIDTH
    halved = two.reshape(DISPLAY[1], 2, DISPLAY[0], 2, 3).mean(axis=(1, 3))
    assert np.abs(halved - one).mean() < 6.0
    # Text is there, four times the pixels at 2x, and crisp at both: fonts are rasterized at the screen density.
    assert text_pixels(one) > 2000
    assert 3.0 < text_pixels(two) / text_pixels(one) < 5.0
    assert hard_edge_fraction(one) > 0.75
    assert hard_edge_fraction(two) > 0.75
    # What the metric rejects: the 1x panel magnified with bilinear filtering (a renderer ignoring the density).
    magnified = np.asarray(Image.fromarray(one.astype(np.uint8)).resize(two.shape[1::-1], Image.Resampling.BILINEAR))
    assert hard_edge_fraction(magnified.astype(int)) < 0.3


def test_ui_scale_2_doubles_the_panel_and_its_text_stays_crisp(ui, target):
    one = draw_panel(ui, target(1), 1.0)
    scale = StyleScale()
    scale.apply(2.0)
    doubled = draw_panel(ui, target(2), 1.0, Panel(ui_scale=2.0), display=(2 * DISPLAY[0], 2 * DISPLAY[1]))
    top, bottom, left, right = box(doubled)
    assert right - left == 2 * PANEL_WIDTH
    assert bottom - top == pytest.approx(2 * (box(one)[1] - box(one)[0]), rel=0.03)
    assert 3.0 < text_pixels(doubled) / text_pixels(one) < 5.0
    assert hard_edge_fraction(doubled) > 0.75


def test_style_scale_returns_to_the_unscaled_style_exactly(imgui_context):
    style = imgui.get_style()

    def sizes() -> list[float]:
        return [style.window_padding.x, style.window_padding.y, style.frame_padding.x, style.item_spacing.y,
                style.scrollbar_size, style.grab_min_size, style.indent_spacing, style.window_rounding]

    unscaled = sizes()
    scale = StyleScale()
    for value in (1.37, 2.9, 0.5, 3.3, 1.0):  # each from the unscaled style, so rounding never accumulates
        scale.apply(value)
    assert sizes() == unscaled
    scale.apply(2.0)
    assert (style.window_padding.x, style.font_scale_main) == (2 * unscaled[0], 2.0)


def test_clip_rectangles_become_scissors_at_1x_and_2x(ui, target):
    """A small window holding a long line: nothing of the line may show right of the window, at either scale."""
    def draw() -> None:
        imgui.set_next_window_pos(imgui.ImVec2(20, 20))
        imgui.set_next_window_size(imgui.ImVec2(120, 60))
        imgui.begin("clipped", None, imgui.WindowFlags_.no_decoration)
        imgui.text("W" * 80)
        imgui.end()

    for scale in (1, 2):
        framebuffer = target(scale)
        frame(ui, framebuffer, scale, draw)
        image = pixels(framebuffer)
        assert box(image) == (20 * scale, 80 * scale, 20 * scale, 140 * scale)
        assert (inside(image, 0) > 200).all(axis=2).sum() > 100 * scale ** 2, "the line is drawn inside"


def test_a_new_font_size_uploads_rectangles_into_the_same_texture(ui, target):
    framebuffer = target(1)
    draw_panel(ui, framebuffer, 1.0)
    assert (ui.textures_created, ui.textures_destroyed) == (1, 0)
    atlas = imgui.get_platform_io().textures[0]
    texture_id, area = atlas.tex_id, atlas.width * atlas.height
    updated = ui.rectangles_uploaded

    def bigger_text() -> None:
        imgui.begin("big")
        imgui.push_font(None, 31.0)  # a size never used before: ImGui bakes its glyphs into the atlas
        imgui.text("Sphinx of black quartz, judge my vow")
        imgui.pop_font()
        imgui.end()

    io = imgui.get_io()
    io.display_size = imgui.ImVec2(*DISPLAY)
    imgui.new_frame()
    bigger_text()
    imgui.render()
    draw_data = imgui.get_draw_data()
    assert atlas.status == imgui.ImTextureStatus.want_updates
    rectangles = [(rect.x, rect.y, rect.w, rect.h) for rect in atlas.updates]
    ui.render(draw_data, framebuffer)
    assert atlas.status == imgui.ImTextureStatus.ok
    assert (ui.textures_created, ui.textures_destroyed) == (1, 0), "updated in place, not recreated"
    assert atlas.tex_id == texture_id and ui.live_objects == 5
    assert ui.rectangles_uploaded - updated == len(rectangles) > 0
    assert sum(w * h for _, _, w, h in rectangles) < area / 4, "only the new glyphs' rectangles"
    # The GPU copy now equals ImGui's pixels everywhere, new glyphs included.
    gpu = np.frombuffer(ui._textures[texture_id].read(alignment=1), np.uint8)
    assert np.array_equal(gpu, atlas.get_pixels_array())


def test_buffers_grow_for_large_draw_data_and_every_quad_lands(ui, target):
    """7200 solid quads (28800 vertices, far past the first 64 KiB buffers) in a red/blue checkerboard of
    4 x 5 pixel cells: the picture must be exactly that checkerboard, at 1x and at 2x."""
    columns, rows, cell = 120, 60, (4, 5)
    red, blue = imgui.get_color_u32(imgui.ImVec4(1, 0, 0, 1)), imgui.get_color_u32(imgui.ImVec4(0, 0, 1, 1))

    def quads() -> None:
        draw_list = imgui.get_foreground_draw_list()
        for row in range(rows):
            for column in range(columns):
                x, y = column * cell[0], row * cell[1]
                draw_list.add_rect_filled(imgui.ImVec2(x, y), imgui.ImVec2(x + cell[0], y + cell[1]),
                                          red if (row + column) % 2 == 0 else blue)

    for scale in (1, 2):
        framebuffer = target(scale)
        frame(ui, framebuffer, scale, quads)
        image = pixels(framebuffer)
        row_index, column_index = np.indices(image.shape[:2])
        even = (row_index // (cell[1] * scale) + column_index // (cell[0] * scale)) % 2 == 0
        expected = np.where(even[..., None], [255, 0, 0], [0, 0, 255])
        assert np.array_equal(image, expected), f"scale {scale}"
    assert ui._objects["buffer:vertices"].size >= columns * rows * 4 * imgui.VERTEX_SIZE


class FakeList:
    """An ImDrawList stand-in over NumPy arrays: VERTEX_SIZE bytes per vertex, ImGui's index type."""

    def __init__(self, vertices: np.ndarray, indices: np.ndarray, commands: list[tuple[int, int, int]]) -> None:
        self.vertices, self.indices = vertices, indices.astype(np.uint32 if imgui.INDEX_SIZE == 4 else np.uint16)
        self.vtx_buffer = SimpleNamespace(size=lambda: len(vertices), data_address=lambda: vertices.ctypes.data)
        self.idx_buffer = SimpleNamespace(size=lambda: len(self.indices),
                                          data_address=lambda: self.indices.ctypes.data)
        self.cmd_buffer = [SimpleNamespace(elem_count=count, idx_offset=first, vtx_offset=offset,
                                           clip_rect=SimpleNamespace(x=0, y=0, z=9, w=9), get_tex_id=lambda: 7)
                           for first, count, offset in commands]


def test_vertex_and_index_offsets_index_the_right_vertices():
    """Two draw lists, commands with vertex offsets: the gathered 32-bit indices must reach the same vertices
    as ImGui's (list, vtx_offset + index) pairs."""
    assert imgui.VERTEX_SIZE == 20
    rng = np.random.default_rng(5)
    lists = []
    for vertex_count in (40, 70):
        vertices = rng.integers(0, 256, (vertex_count, imgui.VERTEX_SIZE), dtype=np.uint8)
        indices = rng.integers(0, 20, 30)
        # (first index, count, vertex offset); an empty command is skipped
        lists.append(FakeList(vertices, indices, [(0, 12, 0), (12, 0, 5), (12, 9, 20), (21, 9, vertex_count - 20)]))
    all_vertices, all_indices, commands = ImGuiRenderer._gather(SimpleNamespace(cmd_lists=lists))
    all_vertices = all_vertices.reshape(-1, imgui.VERTEX_SIZE)
    expected = [draw_list.vertices[command.vtx_offset + draw_list.indices[command.idx_offset:
                                                                           command.idx_offset + command.elem_count]]
                for draw_list in lists for command in draw_list.cmd_buffer if command.elem_count]
    assert len(commands) == len(expected) == 6
    for (_, texture_id, first, count), wanted in zip(commands, expected, strict=True):
        assert texture_id == 7
        assert np.array_equal(all_vertices[all_indices[first:first + count]], wanted)
    assert all_indices.dtype == np.uint32


# --- lifetime ---------------------------------------------------------------------------------------------


def test_500_changing_frames_keep_the_gl_objects_and_release_frees_them(imgui_context, renderer, target):
    names = GlNames(renderer.ctx)
    framebuffer = target(2)
    settle(renderer)
    before = names.live()
    ui = ImGuiRenderer(renderer.ctx)
    try:
        panel, scale = Panel(), StyleScale()
        owned, live = {}, {}
        for step in range(500):
            # The panel changes: UI scale (new font sizes), framebuffer scale, help window, values, status.
            panel.ui_scale = (1.0, 1.25, 2.0, 0.75)[step // 40 % 4]
            scale.apply(panel.ui_scale)
            panel.help_visible = step // 30 % 2 == 1
            settings = SceneSettings(iterations=1 + step % 8, seed=step)
            status = PanelStatus(frames_per_second=step, drawn=f"{step * 7:,} triangles")
            frame(ui, framebuffer, 1 + step // 25 % 2, lambda: panel.draw(settings, status))  # noqa: B023
            assert renderer.ctx.error == "GL_NO_ERROR", f"frame {step}"
            if step in (100, 499):
                owned[step], live[step] = ui.live_objects, names.live()
        assert owned[100] == owned[499] == 5  # program, vertex array, two buffers, the font atlas
        assert live[100] == live[499]
        assert ui.rectangles_uploaded > 100, "new glyphs were uploaded as the sizes changed"
        assert ui.textures_created >= 2 and ui.textures_destroyed == ui.textures_created - 1, "atlas rebuilt"
    finally:
        ui.release()
    assert ui.live_objects == 0
    settle(renderer)
    assert names.live() == before


# --- input ------------------------------------------------------------------------------------------------


def fake_window(size=DISPLAY):
    """What WindowInput reads from a moderngl-window window: keys, modifiers, mouse buttons and sizes."""
    from moderngl_window.context.base import BaseKeys, KeyModifiers

    names = [name for name in dir(BaseKeys) if name.isupper() and not name.startswith("ACTION_")]
    keys = SimpleNamespace(**{name: 1000 + index for index, name in enumerate(names)},
                           ACTION_PRESS="press", ACTION_RELEASE="release")
    return SimpleNamespace(keys=keys, modifiers=KeyModifiers(), size=size, buffer_size=size,
                           mouse=SimpleNamespace(left=1, right=2, middle=3))


def test_the_keys_imgui_needs_for_text_fields_are_mapped():
    window = fake_window()
    keymap, keys = WindowInput(window).keymap, window.keys
    for name, key in (("BACKSPACE", "backspace"), ("DELETE", "delete"), ("LEFT", "left_arrow"),
                      ("RIGHT", "right_arrow"), ("HOME", "home"), ("END", "end"), ("ENTER", "enter"),
                      ("ESCAPE", "escape"), ("TAB", "tab"), ("A", "a"), ("C", "c"), ("V", "v"), ("X", "x"),
                      ("Z", "z"), ("NUMBER_7", "_7"), ("NUMPAD_3", "keypad3"), ("F1", "f1"),
                      ("LEFT_CTRL", "left_ctrl"), ("LEFT_SHIFT", "left_shift")):
        assert keymap[getattr(keys, name)] == getattr(imgui.Key, key), name


def test_window_input_gives_imgui_the_window_size_and_its_pixel_ratio(imgui_context):
    """A HiDPI window (a 960x600 framebuffer behind a 480x300 window): layout in window coordinates, fonts at
    twice the density; a minimised window keeps the last ratio."""
    window = fake_window()
    window.buffer_size = (960, 600)
    window_input = WindowInput(window)
    window_input.new_frame(0.02)
    io = imgui.get_io()
    assert (io.display_size.x, io.display_size.y) == DISPLAY
    assert (io.display_framebuffer_scale.x, io.display_framebuffer_scale.y) == (2.0, 2.0)
    assert io.delta_time == pytest.approx(0.02)
    window.size, window.buffer_size = (0, 0), (0, 0)
    window_input.new_frame(0.0)
    assert io.display_framebuffer_scale.x == 2.0 and io.delta_time > 0


def test_ctrl_click_on_the_ui_scale_slider_types_a_value(ui, target, monkeypatch):
    """Ctrl+click a slider (as pyglet reports it: the Ctrl press without its own flag, the click with it), type
    2, Enter: the panel's UI scale becomes 2."""
    window = fake_window((480, 800))  # tall enough to show the whole panel
    window_input = WindowInput(window)
    keys, press, release = window.keys, window.keys.ACTION_PRESS, window.keys.ACTION_RELEASE
    rectangles = {}
    real_slider = imgui.slider_float

    def recording_slider(label, *args):
        result = real_slider(label, *args)
        rectangles[label] = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        return result

    monkeypatch.setattr(terrainview.window.panel.imgui, "slider_float", recording_slider)
    panel, framebuffer = Panel(), target(1, window.size)

    def step() -> None:
        window_input.new_frame(1 / 60)
        frame(ui, framebuffer, 1.0, lambda: panel.draw(SceneSettings(), PanelStatus()), window.size)

    step()
    step()
    low, high = rectangles["UI scale"]
    x, y = (low.x + high.x) / 2, (low.y + high.y) / 2
    window_input.key_event(keys.LEFT_CTRL, press, window.modifiers)
    window.modifiers.ctrl = True
    window_input.mouse_position(x, y)
    step()
    window_input.mouse_button(x, y, window.mouse.left, True)
    step()
    window_input.mouse_button(x, y, window.mouse.left, False)
    window_input.key_event(keys.LEFT_CTRL, release, window.modifiers)
    window.modifiers.ctrl = False
    for _ in range(5):
        step()
    assert imgui.get_io().want_text_input, "Ctrl+click opened the slider's text field"
    assert panel.ui_scale == 1.0
    for key in (keys.A, keys.BACKSPACE):  # Ctrl+A: select all, then delete
        window_input.key_event(key, press, SimpleNamespace(ctrl=key == keys.A, shift=False, alt=False))
        step()
        window_input.key_event(key, release, SimpleNamespace(ctrl=False, shift=False, alt=False))
    window_input.text("2")
    step()
    window_input.key_event(keys.ENTER, press, window.modifiers)
    step()
    window_input.key_event(keys.ENTER, release, window.modifiers)
    for _ in range(3):
        step()
    assert not imgui.get_io().want_text_input
    assert panel.ui_scale == 2.0


def test_ui_scale_out_of_range_is_one_line_and_exit_2(call_main, usage_error):
    for value in ("9", "0.1", "big", "nan"):
        status, _, err = call_main("--ui-scale", value)
        usage_error(status, err, "--ui-scale")


# --- what the panel shows for each catalog entry --------------------------------------------------------------


class RecordingImGui:
    """imgui for the panel with every collapsing header open and the labels of the value widgets recorded, with
    how far each one's label reaches past the right edge of the region it is drawn in, and where each text
    (coloured too) and button lands."""

    def __init__(self) -> None:
        self.labels: list[str] = []
        self.drawn: dict[str, tuple[float, float, float, float]] = {}  # text or button -> (x0, y0, x1, y1)
        self.ranges: dict[str, tuple] = {}  # slider label -> (low, high, flags)
        self.headers: list[str] = []
        self.moves: dict[str, tuple] = {}  # widget label -> what the widget returns, as if the user changed it
        self.calls: dict[str, tuple[str, tuple]] = {}  # value widget label -> (imgui function, its arguments)
        self.overflow: dict[str, float] = {}  # label -> its right edge minus the content region's, as last drawn
        self.scroll = 0.0  # how far the options scroll, as last drawn
        self.formats: dict[str, str] = {}  # float slider label -> its display format

    def _recorded(self, label: str, draw):
        """Draw one value widget, noting its label and where the widget with its label ends."""
        self.labels.append(label)
        region_right = imgui.get_cursor_screen_pos().x + imgui.get_content_region_avail().x
        result = draw()
        self.overflow[label] = imgui.get_item_rect_max().x - region_right
        return self.moves.get(label, result)

    def __getattr__(self, name: str):
        real = getattr(imgui, name)
        if name == "collapsing_header":
            def header(label, *args, **kwargs):
                self.headers.append(label)
                return True
            return header
        if name == "slider_float":
            def slider(label, value, low, high, *args, **kwargs):
                self.ranges[label] = (low, high, args[1] if len(args) > 1 else kwargs.get("flags"))
                self.formats[label] = args[0] if args else kwargs.get("format")
                self.calls[label] = (name, (value, low, high))
                return self._recorded(label, lambda: real(label, value, low, high, *args, **kwargs))
            return slider
        if name in ("text", "text_disabled", "text_wrapped", "button", "text_colored"):
            def noted(*args, **kwargs):
                result = real(*args, **kwargs)
                low, high = imgui.get_item_rect_min(), imgui.get_item_rect_max()
                self.drawn[args[1] if name == "text_colored" else args[0]] = (low.x, low.y, high.x, high.y)
                return result
            return noted
        if name == "end_child":
            def end_child():
                self.scroll = imgui.get_scroll_max_y()
                real()
            return end_child
        if name.startswith(("slider_", "drag_", "input_", "combo", "checkbox")):
            def recorded(label, *args, **kwargs):
                self.calls[label] = (name, args)
                return self._recorded(label, lambda: real(label, *args, **kwargs))
            return recorded
        return real


def record_panel(ui, target, settings: SceneSettings, monkeypatch, display=DISPLAY, frames: int = 1,
                 moves: dict | None = None, panel: Panel | None = None):
    """The panel drawn with every section open; ``moves`` makes sliders report a change. Returns the recording
    and the settings the panel returned last."""
    recording = RecordingImGui()
    recording.moves = moves or {}
    monkeypatch.setattr(terrainview.window.panel, "imgui", recording)
    framebuffer, panel = target(1, display), panel or Panel()
    returned = []
    for _ in range(frames):
        frame(ui, framebuffer, 1.0, lambda: returned.append(panel.draw(settings, PanelStatus())[0]), display)
    monkeypatch.setattr(terrainview.window.panel, "imgui", imgui)
    recording.settings = returned[-1]
    return recording


def panel_labels(ui, target, settings: SceneSettings, monkeypatch) -> list[str]:
    return record_panel(ui, target, settings, monkeypatch).labels


@pytest.mark.parametrize("camera", ["orbit", "fly"])
def test_no_two_panel_items_share_an_id(ui, target, monkeypatch, camera):
    """Dear ImGui identifies an item by its label: a combo named like its section's header could not open."""
    settings = SceneSettings(mode="rendered", erosion="both", camera=camera)
    recording = record_panel(ui, target, settings, monkeypatch)
    labels = recording.labels + recording.headers
    assert len(labels) > 30
    assert len(set(labels)) == len(labels), sorted(label for label in labels if labels.count(label) > 1)


def test_switching_back_to_tiles_restores_the_tile_count(ui, target, monkeypatch):
    """Tiles 3, then repeated, then the endless world, then tiles again: 3 tiles, as the user left them."""
    panel = Panel()
    settings = SceneSettings(mode="rendered", camera="fly", tile=3)
    for layout in (1, 2, 0):  # the Layout list: tiles, repeated without end, endless world
        settings = record_panel(ui, target, settings, monkeypatch, moves={"Layout": (True, layout)},
                                panel=panel).settings
    assert settings.tile == 3


def test_the_draft_checkbox_turns_the_windows_drafts_off_and_shows_where_the_natural_look_does(ui, target, monkeypatch):
    panel = Panel()
    natural = SceneSettings(mode="rendered", look="natural")
    record_panel(ui, target, natural, monkeypatch, moves={"Draft while moving": (True, False)}, panel=panel)
    assert panel.draft_while_moving is False
    for elsewhere in (natural.replace(look="original"), natural.replace(mode="lines")):  # where it never drafts
        assert "Draft while moving" not in panel_labels(ui, target, elsewhere, monkeypatch)


def test_height_scale_slider_is_logarithmic_over_the_whole_range(ui, target, monkeypatch):
    recording = record_panel(ui, target, SceneSettings(), monkeypatch)
    low, high, flags = recording.ranges["Height scale"]
    assert (low, high) == (0.01, 100.0) and flags & imgui.SliderFlags_.logarithmic
    # Three decimals at any range: rounded to "%.2f", its low end would step 0.01, 0.02, 0.04...
    assert recording.formats["Height scale"] == "%.3f" and recording.formats["Surface H"] == "%.3f"


def test_slider_values_are_stored_as_shown(ui, target, monkeypatch):
    """ImGui hands back float32: 0.711 arrives as 0.7110000252723694 and is stored as the 0.711 shown."""
    dragged = float(np.float32(0.711))
    assert dragged != 0.711
    settings = record_panel(ui, target, SceneSettings(), monkeypatch, moves={"Surface H": (True, dragged)}).settings
    assert settings.h == 0.711


def test_every_section_open_in_a_720_pixel_window_keeps_the_status_lines_in_view(ui, target, monkeypatch):
    """The options scroll; the status lines and the F1 hint at the panel's foot stay inside the window."""
    recording = record_panel(ui, target, SceneSettings(mode="rendered", erosion="both"), monkeypatch,
                             display=(1280, 720), frames=4)
    assert recording.drawn["F1: keyboard shortcuts, F2: status line"][3] <= 720 - 10


@pytest.mark.parametrize("ui_scale", [1.0, 2.0])
@pytest.mark.parametrize("settings", [SceneSettings(mode="rendered", erosion="both", water_level=0.0),
                                      SceneSettings(mode="rendered", generator="fault", camera="fly")])
def test_labels_stay_inside_the_options_when_they_scroll(ui, target, monkeypatch, ui_scale, settings):
    """In a short window (1280 x 480) the options scroll: the scroll bar narrows the widgets, not their labels."""
    StyleScale().apply(ui_scale)
    display = (round(1280 * ui_scale), round(480 * ui_scale))
    recording = record_panel(ui, target, settings, monkeypatch, display=display, frames=3,
                             panel=Panel(ui_scale=ui_scale))
    assert recording.scroll > 0, "the options scroll"
    assert len(recording.overflow) > 20
    assert {label: right for label, right in recording.overflow.items() if right > 0} == {}


def test_the_panel_hides_what_the_generator_ignores(ui, target, monkeypatch):
    """Fault formation reads neither roughness nor the seed image: their widgets go; its own come."""
    diamond = panel_labels(ui, target, SceneSettings(mode="rendered"), monkeypatch)
    fault = panel_labels(ui, target, SceneSettings(mode="rendered", generator="fault"), monkeypatch)
    assert {"Surface H", "Teximage H", "Seed image", "Seed-image passes"} <= set(diamond)
    assert not {"Faults", "Blur sigma"} & set(diamond)
    assert {"Faults", "Blur sigma"} <= set(fault)
    assert not {"Surface H", "Teximage H", "Seed image", "Seed-image passes"} & set(fault)


@pytest.mark.parametrize("erosion, hydraulic, thermal", [("none", False, False), ("hydraulic", True, False),
                                                         ("thermal", False, True), ("both", True, True)])
def test_the_erosion_section_shows_the_chosen_passes_options(ui, target, monkeypatch, erosion, hydraulic, thermal):
    labels = set(panel_labels(ui, target, SceneSettings(mode="rendered", erosion=erosion), monkeypatch))
    assert "Erosion type" in labels
    assert ({"Droplets per unit area", "Erosion strength", "Brush radius"} <= labels) == hydraulic
    assert ({"Talus angle (deg)", "Thermal passes"} <= labels) == thermal


# --- every widget wired to its own setting --------------------------------------------------------------------

# Each widget the panel draws, and the settings a change of it changes: exactly these, nothing else. A widget
# wired to the wrong setting, or to none, fails here.
OWN_SETTINGS = {
    "Render type": {"mode"}, "Iterations": {"iterations"}, "Surface H": {"h"}, "Height scale": {"height_scale"},
    "Seed": {"seed"}, "Layout": {"tile"}, "Tile": {"tile"}, "Cloud iterations": {"cloud_iterations"},
    "Cloud H": {"cloud_h"}, "Teximage iterations": {"teximage_iterations"}, "Teximage H": {"teximage_h"},
    "Antialiased lines": {"antialias"}, "Invert colors": {"invert"}, "Texture linear": {"linear"},
    "Level of detail": {"lod"}, "Detail error (px)": {"lod_error"}, "Generator": {"generator"},
    "Faults": {"fault_iterations"}, "Blur sigma": {"blur"}, "Seed image": {"seed_image"},
    "Seed-image passes": {"seed_passes"}, "Half-passes shown": {"passes"}, "Texture": {"texture"},
    "Shading": {"shading"},
    "Water": {"water_level"}, "Water level": {"water_level"}, "Erosion type": {"erosion"},
    "Droplets per unit area": {"erosion_droplets"}, "Erosion strength": {"erosion_strength"},
    "Brush radius": {"erosion_radius"}, "Sediment capacity": {"erosion_capacity"},
    "Deposition": {"erosion_deposition"}, "Evaporation": {"erosion_evaporation"}, "Inertia": {"erosion_inertia"},
    "Talus angle (deg)": {"talus"}, "Thermal passes": {"thermal_passes"},
    "World octaves": {"world_octaves"}, "Look": {"look"}, "Sun azimuth (deg)": {"sun_azimuth"},
    "Sun elevation (deg)": {"sun_elevation"},
    # Switching the camera keeps the view: these scenes' orbit and fly views are the same, so only the mode moves.
    "Mode": {"camera"}, "Yaw": {"yrot"}, "Pitch": {"pitch"},
    # Not scene settings: a preset (loaded as a scene file), the scene file's name, the screenshot's size, the
    # panel's own scale, the window's drafts.
    "Preset": set(), "Scene file": set(), "Size": set(), "UI scale": set(), "Draft while moving": set(),
}
CAMERA_POSITION = {"orbit": ("xtrans", "ytrans", "ztrans"), "fly": ("eye_x", "eye_y", "eye_z")}


def moved(function: str, label: str, args: tuple) -> tuple:
    """What a widget returns when the user changes it: another value within its range."""
    if function == "checkbox":
        return True, not args[0]
    if function == "combo":
        return True, (args[0] + 1) % len(args[1])
    if function == "slider_int":
        value, low, high = args[:3]
        return True, value + 1 if value + 1 <= high else value - 1
    if function == "slider_float":
        value, low, high = args[:3]
        return True, low + (high - low) * (0.37 if abs(low + (high - low) * 0.37 - value) > 1e-3 else 0.61)
    if function == "drag_float":
        return True, args[0] + 0.25
    assert function == "input_text", function
    return True, {"Seed": "4242", "Seed image": SEED_IMAGE}.get(label, "elsewhere.toml")


SEED_IMAGE = str(assets_dir() / "sketch-island.png")


def test_a_seed_image_that_cannot_be_read_is_refused_as_it_is_entered(ui, target, monkeypatch):
    """Named as the panel names it, in the status line, with the scene keeping its image (it was taken, and the
    generation then failed with "seed_image: ..."); a good path afterwards is taken and the line clears."""
    start = SceneSettings(mode="rendered", seed_image=SEED_IMAGE)
    panel = Panel()
    refused = record_panel(ui, target, start, monkeypatch, moves={"Seed image": (True, "nosuch.png")}, panel=panel)
    assert refused.settings == start
    message = "Seed image: nosuch.png: no such file"
    assert panel.refused_seed_image is not None and panel.refused_seed_image[0] == message
    assert message in refused.drawn, "shown in the status line"
    turned = record_panel(ui, target, start.replace(yrot=30.0, pitch=-10.0), monkeypatch, panel=panel)
    assert panel.seed_image_text == "nosuch.png", "the refused path stays in the field, to be mended"
    assert message in turned.drawn, "the camera moving is no change to the scene: the error stands"
    taken = record_panel(ui, target, start.replace(seed_image=""), monkeypatch,
                         moves={"Seed image": (True, SEED_IMAGE)}, panel=panel)
    assert taken.settings.seed_image == SEED_IMAGE and panel.refused_seed_image is None
    # Refused again, then the scene changes another way (an undo, a preset, a slider): the error is old news.
    record_panel(ui, target, start, monkeypatch, moves={"Seed image": (True, "nosuch.png")}, panel=panel)
    assert panel.refused_seed_image is not None
    later = record_panel(ui, target, start.replace(h=0.4), monkeypatch, panel=panel)
    assert panel.refused_seed_image is None and message not in later.drawn


@pytest.mark.parametrize("settings", [
    SceneSettings(mode="rendered", generator="fault", erosion="both", water_level=0.1, look="natural"),
    SceneSettings(mode="lines", camera="fly", iterations=10),
    SceneSettings(mode="rendered", camera="fly", tile="endless"),
], ids=["rendered-orbit-fault-eroded", "lines-fly-diamond-square", "rendered-fly-endless-world"])
def test_every_widget_changes_exactly_its_own_setting(ui, target, monkeypatch, settings):
    shown = record_panel(ui, target, settings, monkeypatch).calls
    own = {**OWN_SETTINGS, **{label: {name} for label, name in zip("XYZ", CAMERA_POSITION[settings.camera],
                                                                         strict=True)}}
    assert set(shown) <= set(own), f"widgets missing from the table: {set(shown) - set(own)}"
    for label, (function, args) in shown.items():
        changed = record_panel(ui, target, settings, monkeypatch, moves={label: moved(function, label, args)}).settings
        differ = {name for name, value in changed.to_dict().items() if value != getattr(settings, name)}
        assert differ == own[label], label


def test_the_widget_table_covers_every_widget_of_some_scene(ui, target, monkeypatch):
    scenes = [SceneSettings(mode="rendered", generator="fault", erosion="both", water_level=0.1, look="natural"),
              SceneSettings(mode="lines", camera="fly", iterations=10), SceneSettings(tile="endless")]
    shown = set().union(*(record_panel(ui, target, scene, monkeypatch).calls for scene in scenes))
    assert shown | set("XYZ") == set(OWN_SETTINGS) | set("XYZ")


def test_the_panel_keeps_its_height_while_the_worker_works(ui, target):
    """Generating, eroding, idle, failed or recording, the status block has one activity line: the panel does not
    jump (an error or the recording clock on lines of their own moved every row above)."""
    framebuffer, panel = target(1, (480, 900)), Panel()
    heights = []
    for status in (PanelStatus(), PanelStatus(busy_seconds=0.4), PanelStatus(busy_seconds=2.0, erosion_progress=0.3),
                   PanelStatus(error="seed_image: a/long/path/" + "folder/" * 40 + "nosuch.png: no such file",
                               recording_seconds=5.0), PanelStatus(regions_pending=3)):
        for _ in range(4):  # ImGui sizes a window to its content over a few frames
            frame(ui, framebuffer, 1.0, lambda status=status: panel.draw(SceneSettings(), status), (480, 900))
        heights.append(panel.rect[3] - panel.rect[1])
    assert len(set(heights)) == 1, heights


def test_the_change_line_names_what_made_the_change():
    """Over tiles, the map's generation time; over the endless world, which makes no map of its own (it said
    "generated in 0.0 ms"), the regions still to make."""
    from terrainview.window.panel import change_line

    assert change_line(PanelStatus(change_seconds=0.25, generation_seconds=0.0123)) == (
        "change shown after 250 ms (generated in 12.3 ms)")
    assert change_line(PanelStatus(change_seconds=0.25, regions_pending=3)) == (
        "change shown after 250 ms (world: 3 regions to make)")
    assert change_line(PanelStatus(regions_pending=0)) == "change shown after - (world: every region made)"
    assert change_line(PanelStatus(regions_pending=1)).endswith("(world: 1 region to make)")


def test_the_help_keys_never_run_into_their_meanings(ui, target, monkeypatch):
    """F1's table: each meaning starts right of the widest keys ("Ctrl+Z, Ctrl+Shift+Z / Ctrl+Y" ran into one)."""
    from terrainview.window.panel import SHORTCUTS

    rectangles = RecordingImGui()
    monkeypatch.setattr(terrainview.window.panel, "imgui", rectangles)
    panel = Panel(help_visible=True)
    for _ in range(2):
        frame(ui, target(1, DISPLAY), 1.0, lambda: panel.draw(SceneSettings(), PanelStatus()))
    widest_keys = max(rectangles.drawn[keys][2] for keys, _ in SHORTCUTS)
    assert all(rectangles.drawn[meaning][0] > widest_keys for _, meaning in SHORTCUTS)


def test_a_long_undo_is_cut_so_redo_stays_beside_it_inside_the_panel(ui, target, monkeypatch):
    """Undo and Redo share a row, always inside the panel: a long Undo is cut with "..." (it pushed Redo past the
    panel's edge, and Redo on a row of its own would move every row below)."""
    from terrainview.window.history import SceneHistory

    def drawn(history: SceneHistory) -> tuple[tuple, tuple, float]:
        panel = Panel()
        frame(ui, target(1, DISPLAY), 1.0, lambda: panel.draw(SceneSettings(), PanelStatus(), history))
        rectangles = RecordingImGui()  # the second frame's: the first sizes the panel
        monkeypatch.setattr(terrainview.window.panel, "imgui", rectangles)
        frame(ui, target(1, DISPLAY), 1.0, lambda: panel.draw(SceneSettings(), PanelStatus(), history))
        monkeypatch.setattr(terrainview.window.panel, "imgui", imgui)
        undo, redo = (next((label, rect) for label, rect in rectangles.drawn.items() if label.endswith(f"###{name}"))
                      for name in ("undo", "redo"))
        return undo, redo, panel.rect[2]

    def history_of(*steps: SceneSettings) -> SceneHistory:
        history = SceneHistory(steps[0])
        for settings in steps[1:]:
            history.observe(settings, interacting=False)
        history.undo(steps[-1])
        return history

    for steps in ((SceneSettings(h=0.5), SceneSettings(h=0.5, seed=3)),
                  (SceneSettings(sun_azimuth=279.64), SceneSettings(sun_azimuth=279.64, seed=3))):
        (undo_label, undo), (redo_label, redo), right = drawn(history_of(SceneSettings(), *steps))
        assert redo[1] == undo[1] and redo[0] > undo[2] and redo[2] <= right, "side by side, inside the panel"
        assert ("..." in undo_label) == (steps[0].sun_azimuth != SceneSettings().sun_azimuth), undo_label


@pytest.mark.parametrize("low, high, shown", [(0.0, 1.0, "%.3f"), (0.0, 360.0, "%.1f"), (-6.0, 90.0, "%.2f"),
                                              (0.5, 32.0, "%.2f"), (0.0, 100000.0, "%.0f")])
def test_sliders_show_about_four_digits_over_their_range(low, high, shown):
    """H to three decimals, degrees to one, droplets whole: not "279.643" degrees or "20000.000" drops."""
    from terrainview.window.panel import _decimals_for

    assert _decimals_for(low, high) == shown


def test_a_camera_field_a_hair_below_zero_shows_zero_and_keeps_its_value(ui, target, monkeypatch):
    """Flying left a hair west of 0 showed "X -0.00"; it shows 0.00, and the setting is untouched."""
    settings = SceneSettings(camera="fly", eye_x=-0.001)
    recording = record_panel(ui, target, settings, monkeypatch)
    assert recording.calls["X"][1][0] == 0.0
    assert recording.settings.eye_x == -0.001


def test_the_custom_screenshot_size_hint_stays_inside_the_panel(ui, target, monkeypatch):
    """"at most 8192 px per side; larger than the GL limit is dra" was cut at the panel's edge: it wraps."""
    from terrainview.scene.image_size import MAX_IMAGE_SIDE
    from terrainview.window.panel import SHOT_PRESETS, ShotOptions

    rectangles = RecordingImGui()
    monkeypatch.setattr(terrainview.window.panel, "imgui", rectangles)
    panel = Panel(shot=ShotOptions(preset=len(SHOT_PRESETS) + 1))
    for _ in range(2):
        frame(ui, target(1, (1280, 2000)), 1.0, lambda: panel.draw(SceneSettings(), PanelStatus()))
    hint = next(rect for text, rect in rectangles.drawn.items() if text.startswith(f"at most {MAX_IMAGE_SIDE} px"))
    assert hint[2] <= panel.rect[2]


@pytest.mark.parametrize("width", [20.0, 60.0, 150.0, 400.0, 2000.0])
def test_a_shortened_label_is_the_longest_start_that_fits(ui, target, width):
    """_shortened keeps the longest start of the text that fits with "..." (found by halving), or all of it."""
    from terrainview.window.panel import _shortened

    text = "seed_image: /a/long/path/" + "folder/" * 12 + "nosuch.png: no such file"
    seen = []
    frame(ui, target(1, DISPLAY), 1.0, lambda: seen.append((_shortened(text, width), imgui.calc_text_size(text).x,
                                                            [imgui.calc_text_size(text[:n] + "...").x
                                                             for n in range(len(text) + 1)])))
    shortened, whole, widths = seen[0]
    assert (whole <= width) == (width == 2000.0), "the widest fits the whole text, the others cut it"
    longest = max((n for n, size in enumerate(widths) if size <= width), default=0)
    assert shortened == (text if whole <= width else text[:longest] + "...")


def test_the_frame_figures_count_frames_from_the_first_one_drawn_not_from_starting():
    """The window made its counter half a second before the first frame (kernels, first terrain), and that wait
    was counted as a frame, so the status line said 'frame 525 ms (slowest 0)'. The frames after it, 30 ms apart, are
    what it says now, and the slowest is never under the mean."""
    from terrainview.window.panel import FrameCounter

    counter, status = FrameCounter(), PanelStatus()
    for index in range(100):  # up to the first figures said
        counter.tick(0.525 + 0.030 * index, status)
        if status.frames_per_second:
            break
    assert status.frame_seconds == pytest.approx(0.030)
    assert status.slowest_frame_seconds == pytest.approx(0.030)
    assert status.frames_per_second == pytest.approx(1 / 0.030)
