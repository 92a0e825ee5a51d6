"""Dear ImGui (1.92 and later) drawn with moderngl: its draw lists and its textures.

``ImGuiRenderer`` draws ImGui's draw data and keeps ImGui's textures on the GPU the 1.92 way
(``RendererHasTextures``): ImGui asks for a texture to be created, to have sub-rectangles updated (new glyphs
as fonts are used at new sizes) or to be destroyed, and the renderer answers every request each frame. Like
``GpuResources`` it owns every GL object it makes and releases it when replaced or released.

The window's input and the UI scale reach ImGui through ``terrainview.window.imgui_input``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable
from typing import Any

import moderngl
import numpy as np
from imgui_bundle import imgui

from terrainview.render.gpu import load_program, uniform

Status = imgui.ImTextureStatus
INDEX_DTYPE = np.uint16 if imgui.INDEX_SIZE == 2 else np.uint32
VERTEX_FORMAT = ("2f 2f 4f1", "in_position", "in_texcoord_0", "in_color")  # ImDrawVert: pos, uv, packed RGBA


def _native_array(address: int, count: int, dtype: type) -> np.ndarray:
    """A NumPy view of ``count`` items at ``address`` in ImGui's memory (valid until the next frame)."""
    item_size = np.dtype(dtype).itemsize
    if count == 0:
        return np.empty(0, dtype)
    return np.frombuffer(memoryview((ctypes.c_ubyte * (count * item_size)).from_address(address)), dtype=dtype)


class ImGuiRenderer:
    """Draws Dear ImGui's draw data into a framebuffer; owns the program, buffers and ImGui's textures."""

    def __init__(self, ctx: moderngl.Context) -> None:
        self.ctx = ctx
        self._objects: dict[str, Any] = {}  # program, buffers, vertex array
        self._textures: dict[int, moderngl.Texture] = {}  # ImGui's textures, by ImTextureID (the GL name)
        self.textures_created = self.textures_destroyed = self.rectangles_uploaded = 0
        self.program = self._objects["program"] = load_program(ctx, "imgui")
        uniform(self.program, "image").value = 0
        io = imgui.get_io()
        io.backend_flags |= imgui.BackendFlags_.renderer_has_textures | imgui.BackendFlags_.renderer_has_vtx_offset
        platform = imgui.get_platform_io()
        platform.renderer_texture_max_width = platform.renderer_texture_max_height = ctx.info["GL_MAX_TEXTURE_SIZE"]

    # --- ownership ------------------------------------------------------------------------------------------

    @property
    def live_objects(self) -> int:
        """GL objects held now: the fixed ones plus ImGui's textures."""
        return len(self._objects) + len(self._textures)

    def release(self) -> None:
        """Release every GL object; ImGui's textures are marked destroyed, so a new renderer recreates them."""
        if imgui.get_current_context() is not None:
            for texture in imgui.get_platform_io().textures:
                if texture.status != Status.destroyed and texture.tex_id in self._textures:
                    self._destroy(texture)
            imgui.get_io().backend_flags &= ~(imgui.BackendFlags_.renderer_has_textures
                                              | imgui.BackendFlags_.renderer_has_vtx_offset)
        for gl_object in [*self._objects.values(), *self._textures.values()]:
            gl_object.release()
        self._objects.clear()
        self._textures.clear()

    # --- textures -------------------------------------------------------------------------------------------

    def update_textures(self, textures: Iterable[imgui.ImTextureData]) -> None:
        """Answer ImGui's texture requests (create, update, destroy) for ``textures``."""
        for texture in textures:
            if texture.status == Status.want_create:
                self._create(texture)
            elif texture.status == Status.want_updates:
                self._update(texture)
            elif texture.status == Status.want_destroy and texture.unused_frames > 0:
                self._destroy(texture)

    @staticmethod
    def _pixels(texture: imgui.ImTextureData) -> np.ndarray:
        """ImGui's copy of the texture as rows x columns x bytes-per-pixel (RGBA32 or Alpha8)."""
        return texture.get_pixels_array().reshape(texture.height, texture.width, texture.bytes_per_pixel)

    def _create(self, texture: imgui.ImTextureData) -> None:
        components = texture.bytes_per_pixel
        gl_texture = self.ctx.texture((texture.width, texture.height), components,
                                      np.ascontiguousarray(self._pixels(texture)), alignment=1)
        if components == 1:  # Alpha8: white, with the single channel as alpha
            gl_texture.swizzle = "111R"
        gl_texture.filter = (moderngl.LINEAR, moderngl.LINEAR)  # ImGui's baked lines need bilinear sampling
        gl_texture.repeat_x = gl_texture.repeat_y = False
        self._textures[gl_texture.glo] = gl_texture
        texture.set_tex_id(gl_texture.glo)
        texture.set_status(Status.ok)
        self.textures_created += 1

    def _update(self, texture: imgui.ImTextureData) -> None:
        """Upload only the rectangles ImGui lists (new glyphs land in unused parts of the atlas)."""
        gl_texture = self._textures.get(texture.tex_id)
        if gl_texture is None:  # not ours (released meanwhile): upload the whole texture instead
            self._create(texture)
            return
        pixels = self._pixels(texture)
        for rect in texture.updates:
            block = pixels[rect.y:rect.y + rect.h, rect.x:rect.x + rect.w]
            gl_texture.write(np.ascontiguousarray(block), viewport=(rect.x, rect.y, rect.w, rect.h), alignment=1)
            self.rectangles_uploaded += 1
        texture.set_status(Status.ok)

    def _destroy(self, texture: imgui.ImTextureData) -> None:
        gl_texture = self._textures.pop(texture.tex_id, None)
        if gl_texture is not None:
            gl_texture.release()
            self.textures_destroyed += 1
        texture.set_tex_id(0)
        texture.set_status(Status.destroyed)

    # --- drawing --------------------------------------------------------------------------------------------

    def _buffers(self, vertex_bytes: int, index_bytes: int) -> moderngl.VertexArray:
        """The vertex array over buffers of at least these sizes; grown (doubling) when too small."""
        vertices, indices = self._objects.get("buffer:vertices"), self._objects.get("buffer:indices")
        if vertices is None or indices is None or vertices.size < vertex_bytes or indices.size < index_bytes:
            vertex_size = max(vertex_bytes, 2 * vertices.size if vertices else 1 << 16)
            index_size = max(index_bytes, 2 * indices.size if indices else 1 << 16)
            for name in ("vao", "buffer:vertices", "buffer:indices"):  # the old ones go first
                old = self._objects.pop(name, None)
                if old is not None:
                    old.release()
            vertices = self._objects["buffer:vertices"] = self.ctx.buffer(reserve=vertex_size, dynamic=True)
            indices = self._objects["buffer:indices"] = self.ctx.buffer(reserve=index_size, dynamic=True)
            self._objects["vao"] = self.ctx.vertex_array(self.program, [(vertices, *VERTEX_FORMAT)],
                                                         index_buffer=indices, index_element_size=4)
        return self._objects["vao"]

    @staticmethod
    def _gather(draw_data: imgui.ImDrawData) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
        """Every draw list's vertices and indices in one array each, and the commands.

        The 32-bit indices already include each command's vertex offset; the commands are (clip rectangle,
        texture id, first index, count).
        """
        vertex_parts, index_parts, commands = [], [], []
        vertex_base = index_base = 0
        for draw_list in draw_data.cmd_lists:
            vertex_count, index_count = draw_list.vtx_buffer.size(), draw_list.idx_buffer.size()
            vertex_parts.append(_native_array(draw_list.vtx_buffer.data_address(), vertex_count * imgui.VERTEX_SIZE,
                                              np.uint8))
            indices = _native_array(draw_list.idx_buffer.data_address(), index_count, INDEX_DTYPE).astype(np.uint32)
            for command in draw_list.cmd_buffer:
                if command.elem_count == 0:
                    continue
                start, stop = command.idx_offset, command.idx_offset + command.elem_count
                indices[start:stop] += vertex_base + command.vtx_offset
                clip = command.clip_rect
                commands.append(((clip.x, clip.y, clip.z, clip.w), command.get_tex_id(), index_base + start,
                                 command.elem_count))
            index_parts.append(indices)
            vertex_base += vertex_count
            index_base += index_count
        if not commands:
            return np.empty(0, np.uint8), np.empty(0, np.uint32), []
        return np.concatenate(vertex_parts), np.concatenate(index_parts), commands

    def render(self, draw_data: imgui.ImDrawData, framebuffer: moderngl.Framebuffer) -> None:
        """Update ImGui's textures, then draw ``draw_data`` over ``framebuffer``'s contents."""
        self.update_textures(draw_data.textures)
        scale_x, scale_y = draw_data.framebuffer_scale.x, draw_data.framebuffer_scale.y
        width = round(draw_data.display_size.x * scale_x)
        height = round(draw_data.display_size.y * scale_y)
        if width <= 0 or height <= 0:  # minimised
            return
        vertices, indices, commands = self._gather(draw_data)
        if not commands:
            return
        vao = self._buffers(vertices.nbytes, indices.nbytes)
        self._objects["buffer:vertices"].write(vertices)
        self._objects["buffer:indices"].write(indices)
        origin_x, origin_y = draw_data.display_pos.x, draw_data.display_pos.y
        uniform(self.program, "display_pos").value = (origin_x, origin_y)
        uniform(self.program, "display_size").value = (draw_data.display_size.x, draw_data.display_size.y)
        saved_viewport = framebuffer.viewport
        with self.ctx.scope(framebuffer, enable_only=moderngl.BLEND):
            framebuffer.viewport = (0, 0, width, height)
            self.ctx.blend_equation = (moderngl.FUNC_ADD, moderngl.FUNC_ADD)
            self.ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA)
            try:
                for (x0, y0, x1, y1), texture_id, first, count in commands:
                    # ImGui's clip rectangle, in display coordinates, to framebuffer pixels (GL: y up).
                    left, top = max(0, int((x0 - origin_x) * scale_x)), max(0, int((y0 - origin_y) * scale_y))
                    right = min(width, int((x1 - origin_x) * scale_x))
                    bottom = min(height, int((y1 - origin_y) * scale_y))
                    texture = self._textures.get(texture_id)
                    if right <= left or bottom <= top or texture is None:
                        continue
                    framebuffer.scissor = (left, height - bottom, right - left, bottom - top)
                    texture.use(0)
                    vao.render(moderngl.TRIANGLES, vertices=count, first=first)
            finally:
                # None turns the scissor test off. (Any rectangle keeps it on: the window's own framebuffer keeps the
                # size it opened with, so its size as a rectangle clipped the next frame to that after it grew.)
                framebuffer.scissor = None  # type: ignore[assignment]  # moderngl takes None; its stub does not say
                framebuffer.viewport = saved_viewport
