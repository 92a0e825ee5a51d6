"""The window's side of Dear ImGui: input events and the UI scale.

``WindowInput`` feeds a moderngl-window window's keys, text, mouse, size and pixel ratio to ImGui as queued
events; ``StyleScale`` scales the style and the fonts by the user's UI scale. Layout is in window coordinates;
the framebuffer scale (the pixel ratio) makes ImGui rasterize its fonts at the screen's density, so text stays
sharp on HiDPI screens. Drawing is ``terrainview.render.imgui_draw``'s.
"""

from __future__ import annotations

from typing import Any

from imgui_bundle import imgui


class WindowInput:
    """A moderngl-window window's keys, text, mouse, size and pixel ratio, fed to ImGui as queued events."""

    _NAMES = {"LEFT": "left_arrow", "RIGHT": "right_arrow", "UP": "up_arrow", "DOWN": "down_arrow"}

    def __init__(self, window: Any) -> None:
        self.wnd = window
        keys = window.keys
        self.keymap: dict[Any, imgui.Key] = {}
        for name in dir(keys):
            if not name.isupper() or name.startswith("ACTION_") or getattr(keys, name) is None:
                continue
            imgui_name = self._NAMES.get(name) or name.lower()
            if name.startswith(("NUMBER_", "NUMPAD_")):
                imgui_name = ("_" if name.startswith("NUMBER_") else "keypad") + name[-1]
            if hasattr(imgui.Key, imgui_name):
                self.keymap[getattr(keys, name)] = getattr(imgui.Key, imgui_name)
        # The modifier keys themselves: on X11 a modifier's own press does not yet carry its modifier flag.
        self.modifier_keys = {getattr(keys, name): modifier for name, modifier in
                              (("LEFT_CTRL", "ctrl"), ("RIGHT_CTRL", "ctrl"), ("LEFT_SHIFT", "shift"),
                               ("RIGHT_SHIFT", "shift")) if getattr(keys, name, None) is not None}

    def new_frame(self, frame_time: float) -> None:
        """Tell ImGui the window's size (layout units), its pixel ratio (font density) and the frame time."""
        io = imgui.get_io()
        width, height = self.wnd.size
        buffer_width, buffer_height = self.wnd.buffer_size
        io.display_size = imgui.ImVec2(width, height)
        if width > 0 and height > 0:
            io.display_framebuffer_scale = imgui.ImVec2(buffer_width / width, buffer_height / height)
        io.delta_time = frame_time if frame_time > 0 else 1.0 / 60.0

    @staticmethod
    def _modifiers(ctrl: bool, shift: bool, alt: bool) -> None:
        io = imgui.get_io()  # repeated states are filtered by ImGui itself
        io.add_key_event(imgui.Key.mod_ctrl, bool(ctrl))
        io.add_key_event(imgui.Key.mod_shift, bool(shift))
        io.add_key_event(imgui.Key.mod_alt, bool(alt))

    def key_event(self, key: Any, action: Any, modifiers: Any) -> None:
        """A key press or release, with the window's modifier flags."""
        down = action == self.wnd.keys.ACTION_PRESS
        state = {"ctrl": modifiers.ctrl, "shift": modifiers.shift, "alt": modifiers.alt}
        if key in self.modifier_keys:
            state[self.modifier_keys[key]] = down
        self._modifiers(**state)
        if key in self.keymap:
            imgui.get_io().add_key_event(self.keymap[key], down)

    @staticmethod
    def text(text: str) -> None:
        """Characters typed (into whichever text field has the keyboard)."""
        for char in text:
            imgui.get_io().add_input_character(ord(char))

    @staticmethod
    def mouse_position(x: float, y: float) -> None:
        """The mouse moved to (x, y)."""
        imgui.get_io().add_mouse_pos_event(x, y)

    def mouse_button(self, x: float, y: float, button: Any, down: bool) -> None:
        """A press or release at (x, y); the window's modifiers go first, so Ctrl+click reaches ImGui."""
        mouse = self.wnd.mouse
        index = {mouse.left: 0, mouse.right: 1, mouse.middle: 2}.get(button)
        modifiers = self.wnd.modifiers
        self._modifiers(modifiers.ctrl, modifiers.shift, modifiers.alt)
        imgui.get_io().add_mouse_pos_event(x, y)
        if index is not None:
            imgui.get_io().add_mouse_button_event(index, down)

    @staticmethod
    def mouse_wheel(x_offset: float, y_offset: float) -> None:
        """The mouse wheel turned by the given offsets."""
        imgui.get_io().add_mouse_wheel_event(x_offset, y_offset)


class StyleScale:
    """Scales ImGui's style sizes and its fonts by one factor, always from the unscaled style (no drift)."""

    def __init__(self) -> None:
        style = imgui.get_style()
        self._unscaled: dict[str, Any] = {}
        for name in dir(style):
            if name.startswith(("__", "font_", "_next")):
                continue
            value = getattr(style, name)
            if isinstance(value, imgui.ImVec2):
                self._unscaled[name] = (value.x, value.y)
            elif isinstance(value, float):
                self._unscaled[name] = value
        self.scale = 1.0

    def apply(self, scale: float) -> None:
        """Set the scale (a no-op when unchanged); takes effect from the next ``imgui.new_frame``."""
        if scale == self.scale:
            return
        style = imgui.get_style()
        for name, value in self._unscaled.items():
            setattr(style, name, imgui.ImVec2(*value) if isinstance(value, tuple) else value)
        style.scale_all_sizes(scale)
        style.font_scale_main = scale  # 1.92's dynamic fonts: glyphs are rasterized at the new size
        self.scale = scale
