"""Drafts: a frame drawn at half the window's size on each side and stretched over it.

The natural look lights every pixel of the land and the sea, several times the original look's work a pixel,
which a software rasterizer pays in full (a 1280x720 frame takes 100-160 ms on two cores). While the view or a
slider moves, the window draws such frames as drafts, a quarter of the pixels, and the full frame once the view
rests (terrainview/window/app.py decides when). Shots, renders and videos never draft.
"""

from __future__ import annotations

import moderngl

from terrainview.render.renderer import Frame, FrameStats, Renderer
from terrainview.scene.settings import SceneSettings

DRAFT_SCALE = 0.5  # of each side of the image


def draft_size(image_size: tuple[int, int]) -> tuple[int, int]:
    """The size a draft of an image is drawn at."""
    return max(1, round(image_size[0] * DRAFT_SCALE)), max(1, round(image_size[1] * DRAFT_SCALE))


class DraftTarget:
    """The offscreen image a draft is drawn into, made again (the old one released) when the window's size changes."""

    def __init__(self, ctx: moderngl.Context) -> None:
        self.ctx = ctx
        self._objects: tuple[moderngl.Framebuffer, moderngl.Texture, moderngl.Renderbuffer] | None = None

    @property
    def size(self) -> tuple[int, int] | None:
        """The size of the image held, if any."""
        return None if self._objects is None else self._objects[1].size

    def draw(self, renderer: Renderer, settings: SceneSettings, framebuffer: moderngl.Framebuffer,
             frame: Frame) -> FrameStats:
        """Draw ``frame`` as a draft and stretch it over ``framebuffer`` (filtered); returns what the draft drew.

        The draft's level of detail is chosen for its own size: a coarser mesh, which is most of what it saves.
        """
        size = draft_size(frame.image_size)
        if self.size != size:
            self.release()
            texture = self.ctx.texture(size, 4)
            texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
            texture.repeat_x = texture.repeat_y = False
            depth = self.ctx.depth_renderbuffer(size)
            self._objects = (self.ctx.framebuffer([texture], depth), texture, depth)
        target, texture, _ = self._objects  # type: ignore[misc]  # made just above when missing
        detail_height = frame.detail_height or frame.image_size[1]
        stats = renderer.draw(settings, target, Frame(size, line_scale=frame.line_scale * DRAFT_SCALE,
                                                      field_of_view_y=frame.field_of_view_y,
                                                      detail_height=detail_height))
        renderer.draw_texture(framebuffer, texture)
        return stats

    def release(self) -> None:
        """Release the offscreen image (a later draft makes a new one)."""
        if self._objects is not None:
            for gl_object in self._objects:
                gl_object.release()
            self._objects = None
