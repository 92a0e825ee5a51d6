#version 330
// Lines of the 1D and wireframe modes, each segment expanded to one screen-space triangle by a geometry shader
// (the fragment shader cuts it to the line's rectangle) so that width and antialiasing behave the same on every
// driver (core profile promises only 1-pixel lines).
// PROFILE 1: a polyline from a vertex buffer (1D mode); PROFILE 2: the heightmap grid's rows and columns;
// PROFILE 3: the level-of-detail patches' rows and columns (lod.glsl).
#define PROFILE 2

#if defined VERTEX_SHADER

uniform mat4 view;
uniform mat4 projection;

#if PROFILE == 1
in vec2 in_position;
uniform float tile_spacing;
uniform int tiles;

void main() {
    float offset = tile_spacing * (float(gl_InstanceID) - 0.5 * float(tiles - 1));
    gl_Position = projection * view * vec4(in_position.x + offset, in_position.y, 0.0, 1.0);
}
#elif PROFILE == 3
#include "lod.glsl"

// Level-of-detail patches: the patch's grid vertices, joined into row and column segments by an index buffer
// (terrainview/gpu.py patch_line_indices). A node draws its last row and column only where they are an outer
// edge of the tiles (elsewhere the neighbour's first row or column is the same line), so no line is drawn
// twice: the geometry shader drops a segment whose two ends both lie on such an inner last row or column.
flat out int inner_edges;   // 1: on the last column, not an outer edge; 2: on the last row, not an outer edge

void main() {
    ivec2 index = lod_patch_index();
    int flags = int(node_info.y);
    inner_edges = (index.x == patch_quads && (flags & 1) == 0 ? 1 : 0)
                | (index.y == patch_quads && (flags & 2) == 0 ? 2 : 0);
    LodVertex vertex = lod_vertex(index, false);
    gl_Position = projection * view * vec4(vertex.world, 1.0);
}
#else
#include "grid.glsl"

void main() {
    int line_index = gl_InstanceID % (2 * grid_size);
    int tile_index = gl_InstanceID / (2 * grid_size);
    bool along_x = line_index < grid_size;
    int column = along_x ? gl_VertexID : line_index - grid_size;
    int row = along_x ? line_index : gl_VertexID;
    gl_Position = projection * view * vec4(grid_position(column, row, tile_index), 1.0);
}
#endif

#elif defined GEOMETRY_SHADER

layout(lines) in;
layout(triangle_strip, max_vertices = 3) out;
uniform vec2 viewport_size;
uniform float line_width;   // in pixels
uniform bool antialias;
// The fragment's place in the segment's own frame, in pixels: (across its centre line, along it from end a).
noperspective out vec2 segment_pixel;
flat out float segment_end;   // where the line's square cap beyond end b ends, along it

// Keep the part of the segment on the inner side of one depth plane: plane_sign +1 the near plane (z >= -w),
// -1 the far plane (z <= w). The triangle below is placed at end a's depth, so both ends must be within the
// depth range for it to be drawn whole.
bool clip_to_plane(inout vec4 a, inout vec4 b, float plane_sign) {
    float da = a.w + plane_sign * a.z, db = b.w + plane_sign * b.z;
    if (da < 0.0 && db < 0.0) return false;
    if (da < 0.0) a = mix(a, b, da / (da - db));
    if (db < 0.0) b = mix(b, a, db / (db - da));
    return true;
}

// Outputs are undefined after each EmitVertex, so every vertex sets both, the flat one included.
void emit(vec4 clip, vec2 pixel_offset, vec2 place, float end) {
    segment_pixel = place;
    segment_end = end;
    gl_Position = vec4(clip.xy + pixel_offset / viewport_size * 2.0 * clip.w, clip.z, clip.w);
    EmitVertex();
}

#if PROFILE == 3
flat in int inner_edges[];
#endif

void main() {
#if PROFILE == 3
    if ((inner_edges[0] & inner_edges[1]) != 0) return;
#endif
    vec4 a = gl_in[0].gl_Position, b = gl_in[1].gl_Position;
    if (!clip_to_plane(a, b, 1.0) || !clip_to_plane(a, b, -1.0)) return;
    vec2 screen_a = a.xy / a.w * 0.5 * viewport_size, screen_b = b.xy / b.w * 0.5 * viewport_size;
    vec2 direction = screen_b - screen_a;
    float length_pixels = length(direction);
    direction = length_pixels > 1e-6 ? direction / length_pixels : vec2(1.0, 0.0);
    vec2 normal = vec2(-direction.y, direction.x);
    // The line's rectangle: its square caps reach half the width past each end, and half a pixel more on each
    // side gives the antialiased edge room to fade out (the coverage ramp reaches 0 there). One triangle of
    // twice the rectangle's size holds it, the fragment shader cutting the rest: llvmpipe's cost is per
    // triangle set up, far more than per fragment, so this is cheaper than the rectangle's two triangles.
    float extent = 0.5 * line_width + (antialias ? 0.5 : 0.0);
    float cap = 0.5 * line_width;
    float rectangle_length = length_pixels + 2.0 * cap;
    float end = length_pixels + cap;
    // A right triangle with legs twice the rectangle's sides, its right angle at the rectangle's corner
    // (across, along) = (-extent, -cap); the rectangle's opposite corner lies on its hypotenuse.
    emit(a, -cap * direction - extent * normal, vec2(-extent, -cap), end);
    emit(a, (2.0 * rectangle_length - cap) * direction - extent * normal, vec2(-extent, 2.0 * rectangle_length - cap),
         end);
    emit(a, -cap * direction + 3.0 * extent * normal, vec2(3.0 * extent, -cap), end);
    EndPrimitive();
}

#elif defined FRAGMENT_SHADER

uniform vec3 line_color;
uniform bool antialias;
uniform float line_width;
noperspective in vec2 segment_pixel;
flat in float segment_end;
out vec4 fragment_color;

void main() {
    float across = segment_pixel.x, along = segment_pixel.y;
    if (along < -0.5 * line_width || along > segment_end) discard;   // beyond the square caps
    // Coverage of this pixel by the line: a one-pixel ramp at each edge when antialiased, else all or nothing.
    float coverage = antialias ? clamp(0.5 * line_width + 0.5 - abs(across), 0.0, 1.0)
                               : float(abs(across) <= 0.5 * line_width);
    if (coverage <= 0.0) discard;
    fragment_color = vec4(line_color, coverage);
}

#endif
