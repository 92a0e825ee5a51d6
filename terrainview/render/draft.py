"""Drafts: a frame drawn at half the window's size on each side and stretched over it.

The natural look lights every pixel of the land and the sea, several times the original look's work a pixel,
which a software rasterizer pays in full (a 1280x720 frame takes 32-106 ms over tiles and 44-135 ms over the
endless world on two cores, by the machine's spell: README.md). While the view or a slider moves, the window draws
such frames as drafts, a quarter of the pixels, and the full frame once the view rests (terrainview/window/app.py
decides when). Shots, renders and videos never draft.
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
        self._framebuffer: moderngl.Framebuffer | None = None
        self._texture: moderngl.Texture | None = None
        self._depth: moderngl.Renderbuffer | None = None

    @property
    def size(self) -> tuple[int, int] | None:
        """The size of the image held, if any."""
        return None if self._texture is None else self._texture.size

    def draw(self, renderer: Renderer, settings: SceneSettings, framebuffer: moderngl.Framebuffer,
             frame: Frame) -> FrameStats:
        """Draw ``frame`` (a whole image, not a tile of one) as a draft and stretch it over ``framebuffer``.

        The level of detail stays the full frame's (chosen for its height), so the mesh and the endless world's
        regions do not change between drafts and whole frames: the saving is in the pixels shaded. Returns what
        the draft drew.
        """
        size = draft_size(frame.image_size)
        if self.size != size:
            self.release()
            self._texture = self.ctx.texture(size, 4)
            self._texture.filter = (moderngl.LINEAR, moderngl.LINEAR)
            self._texture.repeat_x = self._texture.repeat_y = False
            self._depth = self.ctx.depth_renderbuffer(size)
            self._framebuffer = self.ctx.framebuffer([self._texture], self._depth)
        assert self._framebuffer is not None and self._texture is not None
        stats = renderer.draw(settings, self._framebuffer,
                              Frame(size, line_scale=frame.line_scale * DRAFT_SCALE,
                                    field_of_view_y=frame.field_of_view_y, detail_height=frame.detail_image_height))
        renderer.draw_texture(framebuffer, self._texture)
        return stats

    def release(self) -> None:
        """Release the offscreen image (a later draft makes a new one)."""
        for gl_object in (self._framebuffer, self._texture, self._depth):
            if gl_object is not None:
                gl_object.release()
        self._framebuffer = self._texture = self._depth = None
