"""The viewer window: a moderngl-window WindowConfig with the options panel, flight and screenshots.

Thin on purpose: generation reaches the GPU through ``GenerationFeed``, drawing is ``Renderer``'s, camera steps
``ArrowKeyCamera``'s, widgets the panel's. This module routes input and runs the frame loop.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path

import moderngl_window as mglw
from imgui_bundle import imgui

from terrainview.base.atomic_files import OutputError
from terrainview.base.heap import freeze_what_starting_made
from terrainview.base.messages import printable, say
from terrainview.base.parsing import bounded_argument, join_option_values
from terrainview.render.draft import DraftTarget
from terrainview.render.imgui_draw import ImGuiRenderer
from terrainview.render.renderer import Frame, FrameStats, Renderer
from terrainview.scene import camera, catalog, world_regions
from terrainview.scene.arguments import add_scene_arguments, one_line_errors, scene_from_args
from terrainview.scene.flythrough import Flythrough, load_flight
from terrainview.scene.image_size import window_shot_supersample
from terrainview.scene.presets import preset_path
from terrainview.scene.settings import SceneSettings
from terrainview.scene.world_regions import World
from terrainview.window import arrow_keys, window_arguments
from terrainview.window.flythrough_controls import FlythroughControls, ReplayKey, add_flight_argument
from terrainview.window.generation_feed import GenerationFeed
from terrainview.window.history import SceneHistory
from terrainview.window.imgui_input import StyleScale, WindowInput
from terrainview.window.panel import (
    MAX_UI_SCALE,
    MIN_UI_SCALE,
    FrameCounter,
    Panel,
    PanelStatus,
    overlay,
    overlay_width,
)
from terrainview.window.scene_actions import SceneFiles
from terrainview.window.screenshots import ShotRequest, WindowScreenshots
from terrainview.window.world_feed import WorldFeed

MESSAGE_SECONDS = 4.0
DRAFT_REST_SECONDS = 0.3  # the natural look's frames are drafts until the view has rested this long
QUIT_CONFIRM_SECONDS = MESSAGE_SECONDS  # a second Escape quits while the window still says so
WORLD_IGNORES = ("The endless world is plain diamond-square: erosion, fault formation, a seed image and the passes "
                 "apply to tiles (Layout: tiles or repeated)")
# [ and ] as every backend reports them (their ASCII codes): moderngl-window's pyglet table gives { and } for
# its LEFT_BRACKET and RIGHT_BRACKET, so the real keys are matched by code too.
PASS_STEP_CODES = (ord("["), ord("]"))


class TerrainApp(mglw.WindowConfig):
    """The viewer window: routes input, runs the frame loop, draws the terrain, the options panel and messages."""

    gl_version = (3, 3)
    title = "terrainview"
    window_size = (1280, 720)
    aspect_ratio = None  # type: ignore[assignment]  # moderngl-window takes None: any aspect ratio
    resizable = True
    vsync = True
    clear_color = None  # type: ignore[assignment]  # moderngl-window takes None: no clear before a frame
    log_level = logging.WARNING
    initial_settings: SceneSettings | None = None  # set by run_viewer, which has parsed the command line
    initial_flight: Flythrough | None = None  # --flight, read by run_viewer

    @classmethod
    def add_arguments(cls, parser) -> None:
        """Add the scene options, ``--flight`` and ``--ui-scale`` to the window's command line."""
        add_scene_arguments(parser)
        add_flight_argument(parser)
        parser.add_argument("--ui-scale", type=_ui_scale, default=1.0, metavar="X",
                            help=f"size of the panel and its text, {MIN_UI_SCALE:g} to {MAX_UI_SCALE:g}, on top of "
                                 "the screen's pixel ratio (default: 1)")

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.wnd.exit_key = None  # Escape is handled here, so it can cancel a text field first
        self.settings = self.initial_settings or scene_from_args(self.argv or argparse.Namespace()).settings
        self.flythrough = FlythroughControls(self.show_message)
        flight_path = getattr(self.argv, "flight", None)
        replay = self.initial_flight or (load_flight(flight_path)[0] if flight_path else None)
        if replay is not None:
            self.settings = self.flythrough.play(replay)
        self.start_camera = {name: getattr(self.settings, name) for name in camera.CAMERA_FIELDS}
        self.renderer = Renderer(self.ctx)
        self.feed = GenerationFeed(self.renderer, self.settings)
        # The endless world's regions, made while frames draw (paced where the CPU draws the pixels too).
        self.world_feed = WorldFeed(paced=self.renderer.gpu.software_rasterizer)
        self.renderer.world.streaming = True
        self.drawn_settings: SceneSettings | None = None  # the last settings a frame was drawn with
        self.draft = DraftTarget(self.ctx)
        self.changed_at = -math.inf  # the input clock's time when the settings drawn last changed
        self.flight = arrow_keys.ArrowKeyCamera()
        self._in_bounds: tuple[object, object] = (None, None)  # the settings and ground last kept in bounds
        self._ground_inputs: tuple[object, ...] | None = None  # what flight.ground was made from (_update_ground)
        self._ground_heights: object = None
        # Key presses are timed against the frames' time steps (tests that give frame times drive their own).
        self.input_clock: Callable[[], float] = time.perf_counter
        self._time_step_at = self.input_clock()  # when the current frame's frame_time was taken
        self.panel = Panel()
        self.panel.sections.append(lambda settings: self.flythrough.draw_section(settings, self.wnd.buffer_size))
        self.status = PanelStatus()
        self.frame_stats: FrameStats | None = None
        self.pointer = (0.0, 0.0)  # the mouse, in window coordinates
        # The event id of a click on the panel ImGui has not taken in yet: it may put a text field under the keys
        # (_typing). None when there is none.
        self._panel_click: int | None = None
        self.message = ("", 0.0)
        self.screenshots = WindowScreenshots(self.renderer, self.show_message)
        self.scene_files = SceneFiles(self.show_message)
        self.frame_counter = FrameCounter()
        self.told: set[str] = set()  # notices said once a session
        self.kept_settings = self.settings  # as last started, saved or loaded: quitting loses what differs
        self.quit_asked_at: float | None = None  # when Escape last asked to confirm quitting
        self.history = SceneHistory(self.settings)
        self.imgui_context = imgui.create_context()
        imgui.set_current_context(self.imgui_context)
        imgui.get_io().set_ini_filename("")  # no imgui.ini litter in the user's folder
        self.imgui = ImGuiRenderer(self.ctx)
        self.imgui_input = WindowInput(self.wnd)
        self.style_scale = StyleScale()
        self.panel.ui_scale = getattr(self.argv, "ui_scale", 1.0)

    @property
    def ready(self) -> bool:
        """The GPU holds everything the current settings draw."""
        return self.renderer.can_draw(self.settings)

    # --- frame loop -----------------------------------------------------------------------------------------

    def on_render(self, time_: float, frame_time: float) -> None:
        """Draw one frame: take new heightmaps, move the camera, draw the terrain, advance a screenshot, the panel."""
        self.world_feed.start_frame(self.renderer.world.cache)  # the last frame's pixels are drawn (buffers swapped)
        self._time_step_at = self.input_clock()
        self._take_generated()
        self._update_ground()
        self._tell_what_the_world_ignores()
        self.settings = self.flight.advance(self.settings, frame_time)
        # A replay's clock starts with the first frame drawn (not while the kernels compile).
        self.settings = self.flythrough.advance(self.settings, frame_time if self.drawn_settings else 0.0)
        self._keep_camera_in_bounds()  # after the keys and a replay moved it
        self.feed.request(self.settings)
        framebuffer = self.wnd.fbo
        framebuffer.use()
        settings = self.settings
        if not self.renderer.can_draw(settings) and self.drawn_settings is not None:
            # Switched between 1d and a 2D mode: draw the old mode until the new surface arrives.
            settings = self.drawn_settings.replace(**{name: getattr(settings, name) for name in camera.CAMERA_FIELDS})
        if self.renderer.can_draw(settings):
            frame = Frame(self.wnd.buffer_size, line_scale=self.wnd.pixel_ratio, multisampled=self.wnd.samples > 1)
            drafting = self._draft_this_frame(settings)
            if drafting:
                self.frame_stats = self.draft.draw(self.renderer, settings, framebuffer, frame)
            else:
                self.frame_stats = self.renderer.draw(settings, framebuffer, frame)
            world = World.of(settings)
            if world is not None:
                lit = self.renderer.draws_natural(settings)  # regions lit by their own maps
                self.world_feed.ask_for(world, self.renderer.world.cache, self.renderer.world.wanted, lit)
            elif self.drawn_settings is not None and World.of(self.drawn_settings) is not None:
                self.world_feed.forget()  # the frame that leaves the endless world
            self.status.regions_pending = self.world_feed.pending if world is not None else None
            if self.drawn_settings is None:
                freeze_what_starting_made()
            self.drawn_settings = settings
            self.status.drawn = self.frame_stats.summary()
            if drafting and self.draft.size is not None:
                width, height = self.draft.size
                self.status.drawn += f", draft {width}x{height} while moving"
            # The status line's "change shown after": the world times its own regions; the generation feed, the
            # tiles' map (taken either way, so that a change made over the world is not timed on the way back).
            settled = self.feed.settled_seconds()
            shown = self.renderer.world.change_shown_seconds() if world is not None else settled
            if shown is not None:
                self.status.change_seconds = shown
        else:
            framebuffer.clear(0.1, 0.1, 0.12, 1.0)
        self.screenshots.advance(self.settings, self.feed.is_current(self.settings), self.status.error)
        self.frame_counter.tick(time.perf_counter(), self.status)
        self._draw_ui(frame_time)
        # On a software rasterizer the frame's pixels are drawn now, at the buffer swap, on every core: the region
        # worker waits for them before its next step of a large map.
        self.world_feed.hold(True)

    def _draft_this_frame(self, settings: SceneSettings) -> bool:
        """Note when the settings to draw last changed; whether this frame is a draft (render/draft.py).

        A draft: the natural look with drafts on, and a change within the last DRAFT_REST_SECONDS.
        """
        now = self._time_step_at
        if settings != self.drawn_settings:
            self.changed_at = now
        natural = self.renderer.draws_natural(settings)  # not the original look drawn while light maps are traced
        return self.panel.draft_while_moving and natural and now - self.changed_at < DRAFT_REST_SECONDS

    def _take_generated(self) -> None:
        if self.screenshots.job is not None:  # a screenshot in progress keeps the terrain it started with
            return
        result = self.feed.take()
        if result is None:
            return
        self.status.error = result.error  # a screenshot waiting for this terrain says why it is not taken
        if result.changed:
            self.status.generation_seconds = result.seconds

    def _tell_what_the_world_ignores(self) -> None:
        """Once a session: the endless world is plain diamond-square, whatever erosion or generator is chosen."""
        if world_regions.world_conflict(self.settings) and WORLD_IGNORES not in self.told:
            self.told.add(WORLD_IGNORES)
            self.show_message(WORLD_IGNORES)

    def _update_ground(self) -> None:
        """Terrain following needs the surface under the eye: the CPU copy of the heightmap being drawn.

        Made again only when what it depends on changed, so that an unchanged ground is the same object (the
        camera's bound is checked again only for a new one).
        """
        inputs = (World.of(self.settings), self.settings.iterations, self.settings.tile)
        heights = self.feed.ground_heights
        if inputs != self._ground_inputs or heights is not self._ground_heights:
            self.flight.ground = world_regions.ground(self.settings, heights)
            self._ground_inputs, self._ground_heights = inputs, heights

    def _keep_camera_in_bounds(self) -> None:
        """Keep the camera where keys and mouse could take it, as render keeps a scene's and video a flight's.

        During a replay the ground is the surface on screen: for the frames before a flight's new terrain arrives,
        the old one's. Settings and ground already checked together are not checked again (the ground is
        sampled nine times, 1-2 ms over the endless world).
        """
        if self._in_bounds[0] is self.settings and self._in_bounds[1] is self.flight.ground:
            return
        self.settings, moved = camera.given_fly_eye_in_bounds(self.settings, self.flight.ground)
        self._in_bounds = (self.settings, self.flight.ground)
        if moved and moved not in self.told:  # said once a session: a slider near the ground would repeat it
            self.told.add(moved)
            self.show_message(moved[0].upper() + moved[1:])

    def _draw_ui(self, frame_time: float) -> None:
        self.status.busy_seconds = self.feed.busy_seconds
        self.status.erosion_progress, self.status.erosion_map = self.feed.erosion_progress, self.feed.erosion_map
        self.status.window_size = self.wnd.buffer_size
        self.status.shot_progress = self.screenshots.progress
        self.status.compiling = self.feed.compiling
        self.status.fly_speed = self.flight.speed
        self.status.recording_seconds = self.flythrough.recording_seconds
        self.imgui_input.new_frame(frame_time)
        self.style_scale.apply(self.panel.ui_scale)
        imgui.new_frame()
        queued = imgui.get_current_context().input_events_queue  # what ImGui left for later frames
        taken_in = self._panel_click is None or not len(queued) or queued[0].event_id > self._panel_click
        before = self.settings
        self.settings, actions = self.panel.draw(self.settings, self.status, self.history)
        if taken_in:
            self._panel_click = None  # the panel has seen the click: _typing knows from here on
        moved = self.settings is not before and any(
            getattr(self.settings, name) != getattr(before, name) for name in camera.CAMERA_FIELDS)
        if moved and self.flythrough.player is None:
            # The panel's camera fields move the eye as keys and drags do: kept above the ground, so the
            # surface's missing underside never shows (dragging Y could take an orbit eye under the land).
            self.settings = camera.keep_above_ground(self.settings, self.flight.ground)
        if actions.undo:
            self.undo()
        if actions.redo:
            self.redo()
        # A change is a step once the hand lets go (a slider dragged is one step); replays are not changes.
        if self.flythrough.player is None:
            self.history.observe(self.settings, imgui.is_any_item_active())
        if actions.reset_camera:
            self.reset_camera()
        if actions.screenshot is not None:
            self.start_screenshot(*actions.screenshot)
        if actions.cancel_screenshot:
            self.screenshots.cancel()
        if actions.save_scene:
            self.save_scene_file()
        if actions.load_scene:
            self.load_scene_file(Path(self.panel.scene_path))
        if actions.preset is not None:  # a preset starts afresh, as --preset does: nothing of the last scene stays
            self.load_scene_file(preset_path(actions.preset), SceneSettings())
        self._draw_overlay()
        self.flythrough.draw_badge()
        imgui.render()
        self.imgui.render(imgui.get_draw_data(), self.wnd.fbo)

    def _draw_overlay(self) -> None:
        lines = []
        if self.drawn_settings is None:
            lines.append("Compiling terrain kernels..." if self.status.compiling else "Generating terrain...")
        if self.screenshots.path is not None and self.screenshots.progress is not None:
            lines.append(f"Rendering {self.screenshots.path.name}: {self.screenshots.progress:.0%} (Escape cancels)")
        text, until = self.message
        if text and time.perf_counter() < until:
            lines.append(text)
        if not lines:
            return
        viewport = imgui.get_main_viewport()
        # Centred on the view the panel leaves free where it fits there (a message over the panel's own text was
        # hard to read), else on the window, in front of the panel.
        left = self.panel.rect[2] if self.panel.visible and self.panel.rect is not None else 0.0
        width = overlay_width(lines)
        if width > viewport.size.x - left:
            left = 0.0
        centre, bottom = (left + viewport.size.x) / 2, viewport.size.y - 20 * self.panel.ui_scale
        status = self.panel.status_rect
        if status is not None and centre + width / 2 > status[0]:  # above the status line's box (F2), not on it
            bottom = min(bottom, status[1] - 10 * self.panel.ui_scale)
        overlay(lines, (centre, bottom), (0.5, 1.0), 0.75)

    def show_message(self, text: str) -> None:
        """Show ``text`` over the view for MESSAGE_SECONDS and print it to stderr."""
        self.message = (printable(text), time.perf_counter() + MESSAGE_SECONDS)
        say(text)

    # --- actions --------------------------------------------------------------------------------------------

    def reset_camera(self) -> None:
        """Home: put the camera back where the session started, with no keys held and speed 1."""
        self.settings = self.settings.replace(**self.start_camera)
        self.flight.release_all()
        self.flight.speed = 1.0

    def step_passes(self, step: int) -> None:
        """[ and ]: diamond-square one half-pass back or on, from the four corners to the finished map."""
        every = 2 * self.settings.iterations
        shown = every if self.settings.passes is None else self.settings.passes
        shown = min(every, max(0, shown + step))
        self.settings = self.settings.replace(passes=None if shown == every else shown)
        kind = "the finished map" if shown == every else (
            "the four corners" if shown == 0 else ("a diamond step" if shown % 2 else "a square step"))
        self.show_message(f"Half-passes {shown} of {every}: {kind}")

    def toggle_wireframe(self) -> None:
        """P (seeds/004): switch the current surface between rendered and wireframe drawing.

        From another render type, show it rendered.
        """
        self.settings = self.settings.with_mode(catalog.render_type(self.settings).toggle)

    def start_screenshot(self, size: tuple[int, int], supersample: int = 1, path: Path | None = None) -> None:
        """Render the current view, without the panel, to a PNG (a new one in ./screenshots/ when no path)."""
        request = ShotRequest(size, supersample, path, self.wnd.buffer_size, self.wnd.pixel_ratio)
        self.screenshots.start(self.settings, request, terrain_ready=self.feed.is_current(self.settings),
                               terrain_error=self.status.error)

    def save_scene_file(self, path: Path | None = None) -> None:
        """Save the scene (a new file in ./scenes/ when no path); the panel's Scene file field shows its name."""
        saved = self.scene_files.save(self.settings, path)
        if saved is not None:
            self.panel.scene_path = str(saved)
            self.kept_settings = self.settings

    def load_scene_file(self, path: Path, over: SceneSettings | None = None) -> None:
        """Load a scene file over ``over`` (the current scene); on any error a message, and the current scene stays."""
        base = self.settings if over is None else over
        loaded = self.scene_files.load(path, base)
        if loaded is not base:  # the base itself comes back on an error
            self.settings = self.kept_settings = loaded
            self.panel.tiles = 1  # the last scene's tile count is not the new one's (the panel reads its own)

    def undo(self) -> None:
        """Ctrl+Z: the scene before the last change (the camera stays where it is)."""
        if self.history.undo_steps:
            self.show_message(f"Undo: {self.history.undo_steps[-1].label}")
        self.settings = self.history.undo(self.settings)

    def redo(self) -> None:
        """Ctrl+Shift+Z or Ctrl+Y: the change last undone, again."""
        if self.history.redo_steps:
            self.show_message(f"Redo: {self.history.redo_steps[-1].label}")
        self.settings = self.history.redo(self.settings)

    def escape(self) -> None:
        """Escape closes what is on top: a popup, the help; stops a shot, an export or a replay; closes a message.

        Then it quits, at once when nothing would be lost; with changes nobody saved, the window says so and a
        second Escape within QUIT_CONFIRM_SECONDS quits.
        """
        if imgui.is_popup_open("", imgui.PopupFlags_.any_popup_id):
            self.panel.close_popups = True  # at the panel's next frame (ImGui does not close a list on Escape)
            return
        if self.panel.help_visible:
            self.panel.help_visible = False
            return
        if self.screenshots.cancel() or self.flythrough.escape():
            return  # its own message says "Escape cancels" or "Escape stops"
        now = time.perf_counter()
        asked = self.quit_asked_at is not None and now - self.quit_asked_at <= QUIT_CONFIRM_SECONDS
        if self.message[0] and now < self.message[1] and not asked:
            self.message = ("", 0.0)  # never quit under a message: it goes first
            return
        if self.settings == self.kept_settings or asked:
            self.wnd.close()
            return
        self.quit_asked_at = now
        self.show_message("Changes since the last save: press Escape again to quit without them "
                          "(Save scene keeps them)")

    # --- input ----------------------------------------------------------------------------------------------

    def _flight_key(self, key) -> arrow_keys.Key | None:
        keys = self.wnd.keys
        return {keys.LEFT: arrow_keys.Key.LEFT, keys.A: arrow_keys.Key.LEFT, keys.RIGHT: arrow_keys.Key.RIGHT,
                keys.D: arrow_keys.Key.RIGHT, keys.UP: arrow_keys.Key.UP, keys.W: arrow_keys.Key.UP,
                keys.DOWN: arrow_keys.Key.DOWN, keys.S: arrow_keys.Key.DOWN}.get(key)

    def on_key_event(self, key, action, modifiers) -> None:
        """Pass a key to ImGui, then act on it: panel and help toggles, Escape, screenshot, camera, replay, flight."""
        self.imgui_input.key_event(key, action, modifiers)
        keys = self.wnd.keys
        self.flight.shift = bool(modifiers.shift)
        typing = self._typing()  # keys typed into a panel field never fly
        flight_key = self._flight_key(key)
        if action == keys.ACTION_RELEASE:
            if flight_key is not None:
                self.flight.release(flight_key)
            return
        if action != keys.ACTION_PRESS:
            return
        if key == keys.Z and modifiers.ctrl and not typing and modifiers.shift:
            self.redo()
        elif key == keys.Z and modifiers.ctrl and not typing:
            self.undo()
        elif key == keys.Y and modifiers.ctrl and not typing:
            self.redo()
        elif key == keys.O and modifiers.ctrl:
            self.panel.visible = not self.panel.visible
        elif key == keys.F1:
            self.panel.help_visible = not self.panel.help_visible
        elif key == keys.F2:
            self.panel.status_line_visible = not self.panel.status_line_visible
        elif key == keys.ESCAPE and not typing:
            self.escape()
        elif typing:
            return
        elif key == keys.F12:
            self.start_screenshot(self.wnd.buffer_size, window_shot_supersample(self.wnd.buffer_size))
        elif key == keys.HOME:
            self.reset_camera()
        elif key == keys.P and not modifiers.ctrl:
            self.toggle_wireframe()
        elif key in (keys.LEFT_BRACKET, keys.RIGHT_BRACKET) or key in PASS_STEP_CODES:
            self.step_passes(-1 if key in (keys.LEFT_BRACKET, ord("[")) else 1)
        elif key == keys.R and not modifiers.ctrl:
            self.flythrough.toggle_recording(self.settings)
        elif self.flythrough.player is not None:  # a replay owns the camera: Space pauses, Left/Right step
            replay_key = {keys.SPACE: ReplayKey.PAUSE, keys.LEFT: ReplayKey.BACK,
                          keys.RIGHT: ReplayKey.FORWARD}.get(key)
            if replay_key is not None:
                self.flythrough.key(replay_key)
        elif flight_key is not None and not modifiers.ctrl:
            self.settings = self.flight.press(self.settings, flight_key, self.input_clock() - self._time_step_at)

    def _typing(self) -> bool:
        """Whether keys go to a panel field: one is active, or a click on the panel is still on its way to ImGui.

        ImGui answers from its last frame, and takes queued clicks in over a frame or more: at a few frames a
        second, a key typed right after clicking into a field would otherwise act as a shortcut (R recording a
        flight, P the wireframe). The frame's own widgets (an active field sets the next frame's answer) count too.
        """
        state = imgui.get_current_context()
        return imgui.get_io().want_text_input or state.want_text_input_next_frame == 1 or self._panel_click is not None

    def on_unicode_char_entered(self, char: str) -> None:
        """Pass a typed character to ImGui."""
        self.imgui_input.text(char)

    # Mouse input goes to ImGui as queued events, so a press and release within one frame (a quick click, a
    # touchpad tap) still reaches the panel.

    def on_mouse_position_event(self, x: int, y: int, dx: int, dy: int) -> None:
        """Pass the mouse position to ImGui."""
        self.pointer = (x, y)
        self.imgui_input.mouse_position(x, y)

    def on_mouse_drag_event(self, x: int, y: int, dx: int, dy: int) -> None:
        """Pass the mouse position to ImGui; a drag outside the panel turns the camera."""
        self.imgui_input.mouse_position(x, y)
        if not imgui.get_io().want_capture_mouse:  # the mouse over the panel never moves the camera
            self.settings = self.flight.drag(self.settings, dx, dy)

    def on_mouse_scroll_event(self, x_offset: float, y_offset: float) -> None:
        """Pass the wheel to ImGui; outside the panel it sets the fly speed or steps the orbit camera.

        ImGui's answer comes from its last frame, which may predate a pointer just moved onto the panel: the
        pointer's own position is checked against the panel too.
        """
        self.imgui_input.mouse_wheel(x_offset, y_offset)
        if not (imgui.get_io().want_capture_mouse or self.panel.covers(self.pointer)):
            self.settings = self.flight.wheel(self.settings, y_offset)

    def on_mouse_press_event(self, x: int, y: int, button: int) -> None:
        """Pass a mouse button press to ImGui."""
        self.imgui_input.mouse_button(x, y, button, True)
        if self.panel.covers((x, y)):
            self._panel_click = imgui.get_current_context().input_events_next_event_id - 1  # the press just queued

    def on_mouse_release_event(self, x: int, y: int, button: int) -> None:
        """Pass a mouse button release to ImGui."""
        self.imgui_input.mouse_button(x, y, button, False)

    def on_files_dropped_event(self, x: int, y: int, paths: list) -> None:
        """Load the first file dropped on the window as a scene."""
        if paths:
            self.load_scene_file(Path(paths[0]))

    def on_close(self) -> None:
        """Stop the flythrough and the generation thread and release the GPU objects."""
        self.flythrough.close()
        self.feed.stop()
        self.world_feed.stop()
        self.screenshots.release()
        self.draft.release()
        self.renderer.release()
        self.imgui.release()


_ui_scale = bounded_argument(MIN_UI_SCALE, MAX_UI_SCALE)  # --ui-scale's value, by the one number rule


def run_viewer(argv: list[str], epilog: str = "") -> int:
    """Validate the command line (one-line errors, exit 2), then open the window. ``epilog`` ends --help."""
    parser = one_line_errors(mglw.create_parser())
    parser.prog, parser.epilog = "terrainview", epilog  # prog: not __main__.py under python -m
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    window_arguments.strict_window_options(parser)
    window_arguments.group_window_options(parser)
    TerrainApp.add_arguments(parser)
    argv = join_option_values(parser, argv)  # moderngl-window parses them again, without our help
    args = parser.parse_args(argv)
    settings = scene_from_args(args).settings  # bad values fail here, before a window opens
    replay = load_flight(args.flight)[0] if args.flight is not None else None  # '' is no file, not none
    TerrainApp.initial_settings, TerrainApp.initial_flight = settings, replay
    window_arguments.check_window_options(args, TerrainApp.window_size)
    window_arguments.check_window_backend(args.window)
    window_arguments.check_display(args.window)
    if not args.window:
        argv = ["--window", "pyglet", *argv]
    window_arguments.patch_pyglet_fullscreen()
    try:
        config = mglw.create_window_config_instance(TerrainApp, args=argv)
    except Exception as error:  # pyglet's NoSuchConfigException and kin: the GL configuration asked for
        if "Config" not in type(error).__name__:
            raise
        samples = f" and {args.samples} samples (--samples)" if args.samples else ""
        raise OutputError(f"the display offers no OpenGL 3.3 window with double buffering{samples}; "
                          f"try fewer samples ({error or type(error).__name__})") from None
    mglw.run_window_config_instance(config)
    return 0
