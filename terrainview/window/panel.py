"""The options panel (Dear ImGui via imgui-bundle): every scene option, applied live, no OK button.

Widgets take their ranges from ``SceneSettings``' field metadata; a widget's change becomes
``settings.replace(...)``, so the panel cannot produce invalid settings.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from imgui_bundle import imgui

from terrainview.scene import camera, catalog
from terrainview.scene.image_size import MAX_IMAGE_SIDE, MAX_RENDER_SIDE, SUPERSAMPLE_FACTORS, window_shot_supersample
from terrainview.scene.presets import preset_names
from terrainview.scene.seed_image import file_problem
from terrainview.scene.settings import (
    CAMERAS,
    ENDLESS,
    REPEAT,
    CameraMode,
    LevelOfDetail,
    Look,
    SceneSettings,
    option_spec,
)
from terrainview.window.history import SceneHistory, scene_of

SHORTCUTS = (
    ("Left / Right, A / D", "turn 3 degrees (hold to repeat, 30 steps/s)"),
    ("Up / Down, W / S", "orbit: move 0.05 along Z; fly: along the heading"),
    ("Shift + Up / Down", "orbit: move 0.05 along Y; fly: climb / descend"),
    ("Mouse drag", "turn; vertical drag pitches (within 80 degrees)"),
    ("Mouse wheel", "orbit: move along Z; fly: speed"),
    ("Home", "reset the camera to the session's start"),
    ("P", "toggle rendered / wireframe"),
    ("[ / ]", "diamond-square one half-pass back / on; lines mode marks the points it set"),
    ("R", "start / stop recording a flight to ./flights/"),
    ("Space, Left / Right", "replaying a flight: pause, step while paused"),
    ("Ctrl+O", "show / hide the options panel"),
    ("F12", "save an antialiased screenshot to ./screenshots/"),
    ("Ctrl+Z, Ctrl+Shift+Z / Ctrl+Y", "undo, redo a change of the scene (camera moves are not undone)"),
    ("F1", "show / hide this help"),
    ("F2", "show / hide the status line (frame rate, what is drawn), also with the panel hidden"),
    ("Escape", "close an open list or this help, stop a shot, an export or a replay, close a message, else quit "
               "(twice with unsaved changes)"),
)


PANEL_WIDTH = 430  # at UI scale 1, in window coordinates (the pixel ratio scales it on HiDPI screens)
# Room kept right of the value widgets for their labels, at UI scale 1: the widest ("Droplets per unit area", 154)
# and the gap before it. Widgets end this far inside the options' content region, which narrows when it scrolls.
LABEL_COLUMN = 160
MIN_UI_SCALE, MAX_UI_SCALE = 0.5, 4.0  # --ui-scale and the panel's UI scale slider
SHOT_PRESETS = ((1920, 1080), (2560, 1440), (3840, 2160))


@dataclass
class ShotOptions:
    """The Screenshot section's choices: a preset (or the window's size, or custom) and the supersampling."""

    preset: int = 0  # 0: window size, 1..3: SHOT_PRESETS, 4: custom
    custom_size: tuple[int, int] = (1920, 1080)
    supersample: int = 1

    def size(self, window_size: tuple[int, int]) -> tuple[int, int]:
        """The screenshot size the preset chooses: the window's size, a SHOT_PRESETS size or the custom one."""
        if self.preset == 0:
            return window_size
        if self.preset <= len(SHOT_PRESETS):
            return SHOT_PRESETS[self.preset - 1]
        return self.custom_size


@dataclass
class PanelStatus:
    """What the status line shows."""

    generation_seconds: float = 0.0
    change_seconds: float | None = None  # from a settings change to the first frame showing it (all of the world)
    drawn: str = ""  # what the frame drew, e.g. "312k of 33.5M triangles" (FrameStats.summary)
    frames_per_second: float = 0.0
    frame_seconds: float = 0.0  # mean over the last half second
    slowest_frame_seconds: float = 0.0  # the slowest frame of the last half second
    fly_speed: float = 1.0
    busy_seconds: float | None = None  # a generation running for this long (None: idle)
    compiling: bool = False
    error: str | None = None
    shot_progress: float | None = None  # a screenshot being rendered (None: none)
    erosion_progress: float | None = None  # the running erosion's fraction done (None: none runs)
    erosion_map: str = ""  # the map it works on: "" the surface's, else "the teximage's map"
    window_size: tuple[int, int] = (1280, 720)
    recording_seconds: float | None = None  # a flight being recorded (None: not recording)
    regions_pending: int | None = None  # the endless world's regions still to make (None: tiles are drawn)


class FrameCounter:
    """Frames counted over half a second at a time: the status line's frame rate, mean and slowest frame."""

    PERIOD_SECONDS = 0.5

    def __init__(self) -> None:
        self._frames, self._since, self._slowest = 0, 0.0, 0.0
        self._last: float | None = None  # the last frame's time; None before the first, which starts the clock

    def tick(self, now: float, status: PanelStatus) -> None:
        """Count a frame drawn at ``now``; each half second, put the figures in ``status``."""
        if self._last is None:  # the first frame starts the clock: what went before it was starting up
            self._since = self._last = now
            return
        self._slowest = max(self._slowest, now - self._last)
        self._last = now
        self._frames += 1
        elapsed = now - self._since
        if elapsed >= self.PERIOD_SECONDS:
            status.frames_per_second = self._frames / elapsed
            status.frame_seconds = elapsed / self._frames
            status.slowest_frame_seconds = self._slowest
            self._frames, self._since, self._slowest = 0, now, 0.0


@dataclass
class PanelActions:
    """Buttons pressed this frame."""

    screenshot: tuple[tuple[int, int], int] | None = None  # (size, supersample) to render
    cancel_screenshot: bool = False
    reset_camera: bool = False
    save_scene: bool = False
    load_scene: bool = False
    preset: str | None = None  # a preset chosen to start from
    undo: bool = False
    redo: bool = False


@dataclass
class Panel:
    """The options panel's state across frames: visibility, fields being edited, screenshot choices, UI scale."""

    visible: bool = True
    help_visible: bool = False
    close_popups: bool = False  # Escape closes an open list at the next frame
    status_line_visible: bool = False  # F2: the frame rate and what was drawn, over the view, panel or not
    draft_while_moving: bool = True  # the natural look drawn at half size while the view or a slider moves
    preset_names: list[str] = field(default_factory=list)  # read once, when the panel first shows them
    seed_text: str = ""
    editing_seed: bool = False
    seed_image_text: str = ""
    editing_seed_image: bool = False
    # A seed image refused as entered: why, and in which scene (camera aside); a change to the scene ends it.
    refused_seed_image: tuple[str, SceneSettings] | None = None
    scene_path: str = ""  # the scene file to load; Save fills in the file it wrote to ./scenes/
    tiles: int = 1  # the tile count last shown: switching back to tiles from a layout without one restores it
    shot: ShotOptions = field(default_factory=ShotOptions)
    # Sections other modules add below the screenshot section (the flythrough): settings in, settings out.
    sections: list[Callable[[SceneSettings], SceneSettings]] = field(default_factory=list)
    ui_scale: float = 1.0  # the panel's, the status line's and the help's size (--ui-scale)
    ui_scale_value: float = 1.0  # the UI scale slider while it is being dragged
    editing_ui_scale: bool = False
    status_height: float = 0.0  # of the status lines at the panel's foot, as last drawn
    rect: tuple[float, float, float, float] | None = None  # left, top, right, bottom as last drawn; None: hidden
    status_rect: tuple[float, float, float, float] | None = None  # the status line's box likewise (F2)

    def draw(self, settings: SceneSettings, status: PanelStatus,
             history: SceneHistory | None = None) -> tuple[SceneSettings, PanelActions]:
        """Draw the help (if shown) and the panel for one frame; returns the settings and the buttons pressed."""
        actions = PanelActions()
        scale = self.ui_scale
        if self.refused_seed_image and scene_of(settings) != self.refused_seed_image[1]:  # old news: a change since
            self.refused_seed_image = None
        if self.close_popups:
            imgui.internal.close_popups_except_modals()
            self.close_popups = False
        if self.help_visible:
            self._draw_help(scale)
        self.rect = self.status_rect = None
        if self.status_line_visible:
            viewport = imgui.get_main_viewport()
            self.status_rect = overlay([frame_line(status), status.drawn, activity(status)],
                                       (viewport.size.x - 10 * scale, viewport.size.y - 10 * scale), (1.0, 1.0), 0.55)
        if not self.visible:
            return settings, actions
        imgui.set_next_window_pos(imgui.ImVec2(10 * scale, 10 * scale), imgui.Cond_.first_use_ever)
        # As tall as its open sections, but never taller than the window: then the options scroll, and the status
        # lines below them stay in view.
        height = imgui.get_main_viewport().size.y - 20 * scale
        width = PANEL_WIDTH * scale
        imgui.set_next_window_size_constraints(imgui.ImVec2(width, 0), imgui.ImVec2(width, height))
        expanded, open_ = imgui.begin("View Options (Ctrl+O)", True, imgui.WindowFlags_.always_auto_resize)
        position, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (position.x, position.y, position.x + size.x, position.y + size.y)
        if not open_:
            self.visible = False
        _keep_in_window()
        if expanded:
            style = imgui.get_style()
            footer = self.status_height + style.window_padding.y + style.item_spacing.y
            room = height - imgui.get_cursor_pos_y() - footer
            imgui.set_next_window_size_constraints(imgui.ImVec2(0, 0), imgui.ImVec2(width, max(room, 40 * scale)))
            imgui.begin_child("##options", imgui.ImVec2(0, 0), imgui.ChildFlags_.auto_resize_y)
            imgui.push_item_width(-LABEL_COLUMN * scale)  # negative: up to that far from the region's right edge
            if history is not None:
                _draw_history(history, actions)
            settings = self._draw_options(settings, actions, status)
            self._draw_screenshot(status, actions)
            for section in self.sections:
                settings = section(settings)
            self._draw_ui_scale()
            imgui.pop_item_width()
            imgui.end_child()
            top = imgui.get_cursor_pos_y()
            self._draw_status(status)
            self.status_height = imgui.get_cursor_pos_y() - top
        imgui.end()
        return settings, actions

    def covers(self, point: tuple[float, float]) -> bool:
        """Whether the panel, as last drawn, covers ``point`` (window coordinates)."""
        if self.rect is None:
            return False
        left, top, right, bottom = self.rect
        return left <= point[0] <= right and top <= point[1] <= bottom

    # --- sections -------------------------------------------------------------------------------------------

    def _draw_options(self, settings: SceneSettings, actions: PanelActions, status: PanelStatus) -> SceneSettings:
        s = settings
        self._presets(actions)
        s = _combo(s, "mode", "Render type", {name: entry.label for name, entry in catalog.RENDER_TYPES.items()})
        imgui.separator_text("Surface")
        s = _slider(s, "iterations", "Iterations", high=catalog.render_type(s).max_iterations)
        s = _slider(s, "h", "Surface H")
        s = _slider(s, "height_scale", "Height scale", low=0.01, logarithmic=True)
        s = self._seed(s)
        s = self._tile(s)
        if imgui.collapsing_header("Clouds and teximage", imgui.TreeNodeFlags_.default_open):
            s = _slider(s, "cloud_iterations", "Cloud iterations")
            s = _slider(s, "cloud_h", "Cloud H")
            s = _slider(s, "teximage_iterations", "Teximage iterations")
            s = _slider(s, "teximage_h", "Teximage H")
        imgui.separator_text("Drawing")
        s = _checkbox(s, "antialias", "Antialiased lines")
        imgui.same_line()
        s = _checkbox(s, "invert", "Invert colors")
        s = _checkbox(s, "linear", "Texture linear")
        if catalog.render_type(s).level_of_detail:
            s = _combo(s, "lod", "Level of detail", {"on": "on (large surfaces)", "off": "off (always the full mesh)"})
            if s.lod is LevelOfDetail.ON:
                s = _slider(s, "lod_error", "Detail error (px)", low=0.5, high=32.0)
        if imgui.collapsing_header("Look and light", imgui.TreeNodeFlags_.default_open):
            s = _combo(s, "look", "Look", {"original": "the original's (1997)", "natural": "natural light and air"})
            if s.look is Look.NATURAL:
                s = _slider(s, "sun_azimuth", "Sun azimuth (deg)")
                s = _slider(s, "sun_elevation", "Sun elevation (deg)")
                if s.mode == "rendered":
                    _, self.draft_while_moving = imgui.checkbox("Draft while moving", self.draft_while_moving)
                    if imgui.is_item_hovered(imgui.HoveredFlags_.delay_normal):
                        _wrapped_tooltip("half the window's size on each side while the view or a slider moves "
                                         "(about twice the frames), the full picture once it rests; shots are always "
                                         "full")
                else:
                    imgui.text_disabled("the natural look shows in rendered mode")
        if imgui.collapsing_header("Generator and texture"):
            s = _combo(s, "generator", "Generator", {name: entry.label for name, entry in catalog.GENERATORS.items()})
            for widget in catalog.generator(s).widgets:
                if widget.kind == "path":
                    s = self._seed_image(s, widget.label)
                elif widget.kind == "passes":
                    s = _passes(s, widget.label)
                else:
                    s = _slider(s, widget.setting, widget.label, high=widget.high)
            s = _combo(s, "texture", "Texture", {name: entry.label for name, entry in catalog.TEXTURES.items()})
            s = _combo(s, "shading", "Shading", {name: name for name in catalog.SHADINGS})
            s = self._water(s)
        if imgui.collapsing_header("Erosion"):
            s = _combo(s, "erosion", "Erosion type", {name: entry.label for name, entry in catalog.EROSIONS.items()})
            for widget in catalog.erosion(s).widgets:
                s = _slider(s, widget.setting, widget.label, high=widget.high)
        if imgui.collapsing_header("Camera"):
            s = self._camera(s, status)
            actions.reset_camera = imgui.button("Reset camera (Home)")
        imgui.separator()
        actions.save_scene = imgui.button("Save scene")
        if imgui.is_item_hovered():
            _wrapped_tooltip("to a new file in ./scenes/")
        imgui.same_line()
        actions.load_scene = imgui.button("Load scene") and bool(self.scene_path.strip())
        _, self.scene_path = imgui.input_text("Scene file", self.scene_path)
        if imgui.is_item_hovered():
            _wrapped_tooltip("a scene TOML or a terrainview PNG; dropping one on the window loads it too")
        return s

    def _tile(self, settings: SceneSettings) -> SceneSettings:
        if isinstance(settings.tile, int):
            self.tiles = settings.tile
        layouts = ["tiles", "repeated without end", "endless world"]
        shown = {ENDLESS: 2, REPEAT: 1}.get(str(settings.tile), 0)
        changed, index = imgui.combo("Layout", shown, layouts)
        if imgui.is_item_hovered():
            _wrapped_tooltip("tiles: copies of the one surface; repeated: copies without end around the eye;\n"
                             "endless world: land that never repeats, made around the eye as you fly")
        if changed and index != shown:
            return settings.replace(tile=(self.tiles, REPEAT, ENDLESS)[index])
        if settings.tile == ENDLESS:
            return _slider(settings, "world_octaves", "World octaves")
        if settings.tile == REPEAT:
            return settings
        return _slider(settings, "tile", "Tile")

    @staticmethod
    def _camera(settings: SceneSettings, status: PanelStatus) -> SceneSettings:
        """The mode (switching keeps the view) and the mode's own fields."""
        index = CAMERAS.index(settings.camera)
        changed, index = imgui.combo("Mode", index, ["orbit (the original's)", "fly"])
        if changed:
            settings = camera.switch_mode(settings, CAMERAS[index])
        s = _drag(settings, "yrot", "Yaw", 1.0)
        s = _drag(s, "pitch", "Pitch", 1.0)
        names = ("eye_x", "eye_y", "eye_z") if s.camera is CameraMode.FLY else ("xtrans", "ytrans", "ztrans")
        for name, label in zip(names, ("X", "Y", "Z"), strict=True):
            s = _drag(s, name, label, 0.01)
        if s.camera is CameraMode.FLY:
            imgui.text_disabled(f"speed x{status.fly_speed:.2f} (mouse wheel)")
        return s

    def _presets(self, actions: PanelActions) -> None:
        """Somewhere good to start, the first thing a newcomer sees: the presets shipped with terrainview."""
        if not self.preset_names:
            self.preset_names = preset_names()
        labels = ["Start from a preset..."] + self.preset_names
        changed, index = imgui.combo("Preset", 0, labels)
        if changed and index > 0:
            actions.preset = self.preset_names[index - 1]

    def _seed(self, settings: SceneSettings) -> SceneSettings:
        # Text, not input_int: seeds go up to 2**32 - 1, beyond ImGui's 32-bit signed integers.
        if not self.editing_seed:
            self.seed_text = str(settings.seed)
        changed, self.seed_text = imgui.input_text("Seed", self.seed_text, imgui.InputTextFlags_.chars_decimal)
        self.editing_seed = imgui.is_item_active()
        if changed and self.seed_text.isdigit() and int(self.seed_text) <= option_spec("seed").metadata["high"]:
            return settings.replace(seed=int(self.seed_text))
        return settings

    def _seed_image(self, settings: SceneSettings, label: str) -> SceneSettings:
        """A path applied on Enter (a half-typed path would be a missing file at every keystroke)."""
        if not self.editing_seed_image and self.refused_seed_image is None:  # a refused path stays to be mended
            self.seed_image_text = settings.seed_image
        entered, self.seed_image_text = imgui.input_text(label, self.seed_image_text,
                                                         imgui.InputTextFlags_.enter_returns_true)
        self.editing_seed_image = imgui.is_item_active()
        if imgui.is_item_hovered():
            _wrapped_tooltip("a grey-scale PNG or JPEG; Enter applies it, empty turns it off")
        if not entered:
            return settings
        # Checked as it is entered, named as the panel names it; the scene keeps the image it had.
        path = self.seed_image_text.strip()
        problem = file_problem(path) if path else None
        self.refused_seed_image = (f"{label}: {path}: {problem}", scene_of(settings)) if problem else None
        return settings if problem else settings.replace(seed_image=path)

    def _water(self, settings: SceneSettings) -> SceneSettings:
        enabled = settings.water_level is not None
        changed, enabled = imgui.checkbox("Water", enabled)
        if changed:
            settings = settings.replace(water_level=0.0 if enabled else None)
        if settings.water_level is not None:
            changed, level = imgui.slider_float("Water level", settings.water_level, -1.0, 1.0)
            if changed:
                settings = settings.replace(water_level=level)
        return settings

    def _draw_screenshot(self, status: PanelStatus, actions: PanelActions) -> None:
        if not imgui.collapsing_header("Screenshot..."):
            return
        shot = self.shot
        labels = [f"Window ({status.window_size[0]}x{status.window_size[1]})"]
        labels += [f"{width}x{height}" for width, height in SHOT_PRESETS] + ["Custom"]
        _, shot.preset = imgui.combo("Size", shot.preset, labels)
        if shot.preset == len(labels) - 1:
            changed, values = imgui.input_int2("Width x height", list(shot.custom_size))
            if changed:
                width, height = (min(MAX_IMAGE_SIDE, max(1, value)) for value in values)
                shot.custom_size = (width, height)
            # Wrapped: one line ran past the panel's edge.
            imgui.push_style_color(imgui.Col_.text, imgui.get_style_color_vec4(imgui.Col_.text_disabled))
            imgui.text_wrapped(f"at most {MAX_IMAGE_SIDE} px per side; larger than the GL limit is drawn in tiles")
            imgui.pop_style_color()
        for factor in SUPERSAMPLE_FACTORS:
            if imgui.radio_button(f"{factor}x", shot.supersample == factor):
                shot.supersample = factor
            imgui.same_line()
        imgui.text("supersampling")
        width, height = shot.size(status.window_size)
        too_large = max(width, height) * shot.supersample > MAX_RENDER_SIDE
        if too_large:
            imgui.text_colored(imgui.ImVec4(1.0, 0.6, 0.3, 1.0),
                               f"{shot.supersample}x of {width}x{height} exceeds {MAX_RENDER_SIDE} px: "
                               "choose less supersampling")
        if status.shot_progress is not None:
            imgui.progress_bar(status.shot_progress, imgui.ImVec2(-1, 0))
            actions.cancel_screenshot = imgui.button("Cancel (Escape)")
        elif not too_large and imgui.button("Render screenshot"):
            actions.screenshot = ((width, height), shot.supersample)
        imgui.same_line()
        if imgui.button("Screenshot of the window (F12)"):
            actions.screenshot = (status.window_size, window_shot_supersample(status.window_size))

    def _draw_ui_scale(self) -> None:
        """Applied when the slider is let go: a panel resizing under the dragging mouse would move the slider."""
        imgui.separator()
        if not self.editing_ui_scale:
            self.ui_scale_value = self.ui_scale
        _, self.ui_scale_value = imgui.slider_float("UI scale", self.ui_scale_value, MIN_UI_SCALE, MAX_UI_SCALE,
                                                    "%.2f", imgui.SliderFlags_.always_clamp)
        self.editing_ui_scale = imgui.is_item_active()
        if imgui.is_item_deactivated_after_edit():
            self.ui_scale = round(self.ui_scale_value, 2)

    def _draw_status(self, status: PanelStatus) -> None:
        imgui.separator()
        # One line whatever the worker does, records or fails, so the panel keeps its height (an error or the
        # recording clock on lines of their own moved every row above them).
        if status.recording_seconds is not None:
            imgui.text_colored(imgui.ImVec4(1.0, 0.2, 0.2, 1.0), recording_clock(status.recording_seconds))
            imgui.same_line()
        error = self.refused_seed_image[0] if self.refused_seed_image else status.error
        if error and status.busy_seconds is None:
            imgui.text_colored(imgui.ImVec4(1.0, 0.35, 0.3, 1.0), _shortened(error, imgui.get_content_region_avail().x))
            if imgui.is_item_hovered():
                _wrapped_tooltip(error)
        else:
            imgui.text(activity(status))
        imgui.text(change_line(status))
        imgui.text(frame_line(status))
        imgui.text(status.drawn)
        imgui.text_disabled("F1: keyboard shortcuts, F2: status line")

    @staticmethod
    def _draw_help(scale: float) -> None:
        viewport = imgui.get_main_viewport()
        imgui.set_next_window_pos(imgui.ImVec2(viewport.size.x / 2, viewport.size.y / 2), imgui.Cond_.always,
                                  imgui.ImVec2(0.5, 0.5))
        imgui.begin("Keyboard shortcuts (F1)", None, imgui.WindowFlags_.always_auto_resize
                    | imgui.WindowFlags_.no_collapse)
        # The meanings start past the widest keys (a fixed column let "Ctrl+Z, Ctrl+Shift+Z / Ctrl+Y" run into one).
        column = max(imgui.calc_text_size(keys).x for keys, _ in SHORTCUTS) + 16 * scale
        for keys, meaning in SHORTCUTS:
            imgui.text(keys)
            imgui.same_line(imgui.get_style().window_padding.x + column)
            imgui.text_disabled(meaning)
        imgui.end()


def _draw_history(history: SceneHistory, actions: PanelActions) -> None:
    """Undo and Redo, each naming the change it takes back or makes again."""
    undo = history.undo_steps[-1].label if history.undo_steps else None
    redo = history.redo_steps[-1].label if history.redo_steps else None
    # Side by side, the longer change's words cut to what the row leaves it (a long Undo pushed Redo out of the
    # panel, and Redo on a row of its own moved every row below).
    style = imgui.get_style()
    row = imgui.get_content_region_avail().x - style.item_spacing.x

    def width(label: str) -> float:
        return imgui.calc_text_size(label).x + 2 * style.frame_padding.x

    undo_room = max(row / 2, row - width(f"Redo {redo or ''} (Ctrl+Y)"))
    redo_room = row - min(width(f"Undo {undo or ''} (Ctrl+Z)"), undo_room)
    imgui.begin_disabled(undo is None)
    words = _shortened(undo or "", undo_room - width("Undo  (Ctrl+Z)"))
    actions.undo = imgui.button(f"Undo {words} (Ctrl+Z)###undo")
    if undo and words != undo and imgui.is_item_hovered():
        _wrapped_tooltip(f"Undo {undo}")
    imgui.end_disabled()
    imgui.same_line()
    imgui.begin_disabled(redo is None)
    words = _shortened(redo or "", redo_room - width("Redo  (Ctrl+Y)"))
    actions.redo = imgui.button(f"Redo {words} (Ctrl+Y)###redo")
    if redo and words != redo and imgui.is_item_hovered():
        _wrapped_tooltip(f"Redo {redo}")
    imgui.end_disabled()


def _shortened(text: str, width: float) -> str:
    """``text``, cut at its end with "..." to fit ``width`` pixels.

    The longest start that fits is found by halving: a long path is measured a dozen times a frame, not once per
    character.
    """
    if imgui.calc_text_size(text).x <= width:
        return text
    fits, too_long = 0, len(text)
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if imgui.calc_text_size(text[:middle] + "...").x <= width:
            fits = middle
        else:
            too_long = middle
    return text[:fits] + "..."


def activity(status: PanelStatus) -> str:
    """What the generation worker is doing, in one line: compiling, generating, eroding, or ready."""
    if status.busy_seconds is None:
        return "Ready"
    if status.erosion_progress is not None:
        eroding = f"Eroding {status.erosion_map}".rstrip()  # a second map starts from 0% again: named
        return f"{eroding} {status.erosion_progress:.0%} ({status.busy_seconds:.1f} s)"
    label = "Compiling terrain kernels (first run)..." if status.compiling else "Generating..."
    return f"{label} {status.busy_seconds:.1f} s"


def change_line(status: PanelStatus) -> str:
    """How long the last change took to show, and what made it: the map's generation, or the world's regions.

    The endless world generates no map of its own: its regions are made as the eye reaches them.
    """
    shown = "-" if status.change_seconds is None else f"{status.change_seconds * 1000:.0f} ms"
    if status.regions_pending is None:
        return f"change shown after {shown} (generated in {status.generation_seconds * 1000:.1f} ms)"
    pending = status.regions_pending
    regions = f"{pending} region{'s' if pending > 1 else ''} to make" if pending else "every region made"
    return f"change shown after {shown} (world: {regions})"


def frame_line(status: PanelStatus) -> str:
    """The frame time, the slowest frame of the last half second and the frame rate."""
    return (f"frame {status.frame_seconds * 1000:.0f} ms (slowest {status.slowest_frame_seconds * 1000:.0f}) | "
            f"{status.frames_per_second:.0f} fps")


def clock(seconds: float) -> str:
    """``seconds`` as m:ss."""
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def recording_clock(seconds: float) -> str:
    """What the panel and the recording badge show while recording: ``REC m:ss``."""
    return f"REC {clock(seconds)}"


def overlay_width(lines: list[str]) -> float:
    """How wide ``overlay`` draws the box of ``lines``."""
    return max(imgui.calc_text_size(line).x for line in lines) + 2 * imgui.get_style().window_padding.x


def overlay(lines: list[str], anchor: tuple[float, float], pivot: tuple[float, float], background_alpha: float,
            color: imgui.ImVec4 | None = None) -> tuple[float, float, float, float]:
    """Lines of text on a box over everything ImGui draws, the panel included, whichever window has the focus.

    Returns the box: left, top, right, bottom.

    Drawn on the foreground draw list: an ImGui window would go behind the panel as soon as the panel is clicked.
    ``pivot`` is the point of the box placed at ``anchor`` ((0.5, 1): the middle of its bottom edge); the box has
    a window's padding, background (with ``background_alpha``) and line spacing, the text ``color`` or the style's.
    """
    style = imgui.get_style()
    padding, spacing = style.window_padding, style.item_spacing.y
    sizes = [imgui.calc_text_size(line) for line in lines]
    width = overlay_width(lines)
    height = sum(size.y for size in sizes) + spacing * (len(lines) - 1) + 2 * padding.y
    left, top = round(anchor[0] - pivot[0] * width), round(anchor[1] - pivot[1] * height)
    red, green, blue, _ = imgui.get_style_color_vec4(imgui.Col_.window_bg)
    draw_list = imgui.get_foreground_draw_list()
    draw_list.add_rect_filled(imgui.ImVec2(left, top), imgui.ImVec2(left + width, top + height),
                              imgui.get_color_u32(imgui.ImVec4(red, green, blue, background_alpha)),
                              style.window_rounding)
    text_color = imgui.get_color_u32(color or imgui.get_style_color_vec4(imgui.Col_.text))
    y = top + padding.y
    for line, size in zip(lines, sizes, strict=True):
        draw_list.add_text(imgui.ImVec2(left + padding.x, y), text_color, line)
        y += size.y + spacing
    return left, top, left + width, top + height


def _keep_in_window() -> None:
    """Bring the current ImGui window back inside the main window.

    After the main window shrank (to 1x1, say) ImGui leaves it shifted off the left edge, with the Seed field's
    text out of sight, even once it grows.
    """
    position, screen = imgui.get_window_pos(), imgui.get_main_viewport().size
    x = min(max(position.x, 0.0), max(screen.x - imgui.get_window_width(), 0.0))
    y = min(max(position.y, 0.0), max(screen.y - imgui.get_frame_height(), 0.0))
    if (x, y) != (position.x, position.y):
        imgui.set_window_pos(imgui.ImVec2(x, y))


# --- widgets bound to one setting ---------------------------------------------------------------------------

def _slider(settings: SceneSettings, name: str, label: str, *, low: float | None = None,
            high: float | None = None, logarithmic: bool = False) -> SceneSettings:
    """A slider over the option's range (or ``low``..``high``); Ctrl+click types a value."""
    if not catalog.reads(settings, name):  # the chosen generator ignores it: hide it
        return settings
    meta = option_spec(name).metadata
    low = meta["low"] if low is None else low
    high = meta["high"] if high is None else high
    value = getattr(settings, name)
    if isinstance(value, int):
        changed, value = imgui.slider_int(label, value, int(low), int(high))
    else:
        flags = imgui.SliderFlags_.logarithmic if logarithmic else imgui.SliderFlags_.none
        # A logarithmic slider keeps three decimals: rounded to its range's digits, its low end would step by doubling.
        shown = "%.3f" if logarithmic else _decimals_for(low, high)
        changed, value = imgui.slider_float(label, value, float(low), float(high), shown, flags)
        value = _as_shown(value)
    if imgui.is_item_hovered(imgui.HoveredFlags_.delay_normal):
        _wrapped_tooltip(f"{meta['help']}; Ctrl+click to type a value")
    return _apply(settings, name, value) if changed else settings


def _passes(settings: SceneSettings, label: str) -> SceneSettings:
    """The half-passes shown, 0 (the four corners) to all of them (the finished map); [ and ] step it too."""
    every = 2 * settings.iterations
    shown = every if settings.passes is None else settings.passes
    changed, value = imgui.slider_int(label, shown, 0, every, "all" if shown == every else "%d")
    if imgui.is_item_hovered(imgui.HoveredFlags_.delay_normal):
        _wrapped_tooltip("diamond-square pass by pass: diamond, square, diamond, ... ([ and ] step)")
    return settings.replace(passes=None if value >= every else value) if changed else settings


def _decimals_for(low: float, high: float) -> str:
    """A slider's format: about four significant digits over its range (0.700 for H, 279.6 degrees, 20000 drops)."""
    return f"%.{max(0, 3 - math.floor(math.log10(max(high - low, 1e-9))))}f"


def _wrapped_tooltip(text: str) -> None:
    """A tooltip wrapped to a readable width (a long one ran off the window's edge)."""
    imgui.begin_tooltip()
    imgui.push_text_wrap_pos(imgui.get_font_size() * 35.0)
    imgui.text_unformatted(text)
    imgui.pop_text_wrap_pos()
    imgui.end_tooltip()


def _drag(settings: SceneSettings, name: str, label: str, speed: float) -> SceneSettings:
    meta = option_spec(name).metadata
    value = getattr(settings, name)
    shown = 0.0 if abs(value) < 0.005 else value  # what rounds to 0.00 shows as 0.00, not -0.00
    changed, value = imgui.drag_float(label, shown, speed, meta["low"], meta["high"], "%.2f")
    return _apply(settings, name, _as_shown(value)) if changed else settings


def _as_shown(value: float) -> float:
    """ImGui's float32 as the decimal the user saw or typed (0.711, not 0.7110000252723694).

    Widgets round to their display format, and the shortest float32 decimal is that rounded value.
    """
    return float(str(np.float32(value)))


def _checkbox(settings: SceneSettings, name: str, label: str) -> SceneSettings:
    changed, value = imgui.checkbox(label, getattr(settings, name))
    return settings.replace(**{name: value}) if changed else settings


def _combo(settings: SceneSettings, name: str, label: str, labels: dict[str, str]) -> SceneSettings:
    """A choice among ``labels`` (value -> what the list shows)."""
    values = list(labels)
    changed, index = imgui.combo(label, values.index(getattr(settings, name)), list(labels.values()))
    return _apply(settings, name, values[index]) if changed else settings


def _apply(settings: SceneSettings, name: str, value) -> SceneSettings:
    """A widget's new value, unless the settings reject it in combination (then the old settings stay)."""
    try:
        if name in ("mode", "iterations"):
            return settings.with_mode(value) if name == "mode" else settings.with_iterations(value)
        return settings.replace(**{name: value})
    except ValueError:
        return settings
