#version 330
// Lines of the 1D and wireframe modes, drawn as screen-space triangles by a geometry shader (the fragment shader
// cuts each line's rectangle out of them) so that width and antialiasing behave the same on every driver (core
// profile promises only 1-pixel lines). llvmpipe's cost is per triangle set up far more than per pixel, so a
// grid vertex's two segments (to the next column and the next row) share one triangle: the three points' own,
// grown to hold both lines.
// PROFILE 1: a polyline from a vertex buffer (1D mode), one triangle per segment; PROFILE 2: the heightmap
// grid's rows and columns; PROFILE 3: the level-of-detail patches' rows and columns (lod.glsl).
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

// Level-of-detail patches: the patch's grid vertices, each with its neighbours in the next column and row, as one
// triangle of an index buffer (terrainview/render/gpu.py patch_corner_indices). A node draws its last row and
// column only where they are an outer edge of the tiles (elsewhere the neighbour's first row or column is the
// same line), so no line is drawn twice.
flat out int legs;   // the segments this vertex starts: 1 to the next column, 2 to the next row

void main() {
    ivec2 index = lod_patch_index();
    int flags = int(node_info.y);
    bool last_column = index.x == patch_quads, last_row = index.y == patch_quads;
    bool inner_column = last_column && (flags & 1) == 0, inner_row = last_row && (flags & 2) == 0;
    legs = (last_column || inner_row ? 0 : 1) | (last_row || inner_column ? 0 : 2);
    LodVertex vertex = lod_vertex(index, false);
    gl_Position = projection * view * vec4(vertex.world, 1.0);
}
#else
#include "grid.glsl"

// The grid's vertices in threes: a vertex, its neighbour in the next column, its neighbour in the next row (the
// vertex itself past the last column or row); one tile per instance.
flat out int legs;   // the segments the triangle's first vertex starts: 1 to the next column, 2 to the next row

void main() {
    int vertex = gl_VertexID / 3, corner = gl_VertexID % 3;
    int column = vertex % grid_size, row = vertex / grid_size;
    legs = (column < grid_size - 1 ? 1 : 0) | (row < grid_size - 1 ? 2 : 0);
    if (corner == 1) column = min(column + 1, grid_size - 1);
    if (corner == 2) row = min(row + 1, grid_size - 1);
    gl_Position = projection * view * vec4(grid_position(column, row, gl_InstanceID), 1.0);
}
#endif

#elif defined GEOMETRY_SHADER

#if PROFILE == 1
layout(lines) in;
#else
layout(triangles) in;
flat in int legs[];
#endif
layout(triangle_strip, max_vertices = 6) out;
uniform vec2 viewport_size;
uniform float line_width;   // in pixels
uniform bool antialias;
// What setting up one more triangle costs llvmpipe, in pixels shaded: a triangle holding two lines may cover up to
// this much more than the lines' own two.
#define SETUP_PIXELS 64.0
// The fragment's place in each line's own frame, in pixels: (across its centre line, along it from its first
// end) for the first line (xy) and the second (zw). Linear on the screen; every vertex of a triangle below has
// the same w, so perspective-correct interpolation is exactly that (llvmpipe misplaced noperspective values in
// some large level-of-detail triangles).
smooth out vec4 line_places;
flat out vec2 line_ends;   // where each line's square cap beyond its second end ends, along it
flat out int shown_lines;  // 1: the first line (one line alone), 3: both

// Keep the part of the segment on the inner side of one depth plane: plane_sign +1 the near plane (z >= -w),
// -1 the far plane (z <= w). The triangles below are placed at one end's depth, so both ends must be within the
// depth range for them to be drawn whole.
bool clip_to_plane(inout vec4 a, inout vec4 b, float plane_sign) {
    float da = a.w + plane_sign * a.z, db = b.w + plane_sign * b.z;
    if (da < 0.0 && db < 0.0) return false;
    if (da < 0.0) a = mix(a, b, da / (da - db));
    if (db < 0.0) b = mix(b, a, db / (db - da));
    return true;
}

bool within_depth_range(vec4 clip) {
    return clip.w + clip.z >= 0.0 && clip.w - clip.z >= 0.0;
}

vec2 to_pixels(vec4 clip) {
    return clip.xy / clip.w * 0.5 * viewport_size;
}

// A line's rectangle, in pixels: its square caps reach half the width past each end; half a pixel more on each
// side gives the antialiased edge room to fade out (the coverage ramp reaches 0 there).
float cap_length() {
    return 0.5 * line_width;
}

float half_extent() {
    return 0.5 * line_width + (antialias ? 0.5 : 0.0);
}

// Outputs are undefined after each EmitVertex, so every vertex sets all of them, the flat ones included.
void emit(vec4 clip, vec2 pixel_offset, vec4 places, vec2 ends, int shown) {
    line_places = places;
    line_ends = ends;
    shown_lines = shown;
    gl_Position = vec4(clip.xy + pixel_offset / viewport_size * 2.0 * clip.w, clip.z, clip.w);
    EmitVertex();
}

// One line, from a to b, as the fragment shader's first. One triangle of twice its rectangle's size holds it: a
// right triangle with legs twice the rectangle's sides, its right angle at the rectangle's corner
// (across, along) = (-extent, -cap).
void emit_line(vec4 a, vec4 b) {
    if (!clip_to_plane(a, b, 1.0) || !clip_to_plane(a, b, -1.0)) return;
    vec2 direction = to_pixels(b) - to_pixels(a);
    float length_pixels = length(direction);
    direction = length_pixels > 1e-6 ? direction / length_pixels : vec2(1.0, 0.0);
    vec2 normal = vec2(-direction.y, direction.x);
    float extent = half_extent(), cap = cap_length();
    float rectangle_length = length_pixels + 2.0 * cap;
    vec2 corners[3] = vec2[3](vec2(-extent, -cap), vec2(-extent, 2.0 * rectangle_length - cap),
                              vec2(3.0 * extent, -cap));
    for (int i = 0; i < 3; ++i) {
        emit(a, corners[i].y * direction + corners[i].x * normal, corners[i].xyxy, vec2(length_pixels + cap), 1);
    }
    EndPrimitive();
}

#if PROFILE != 1
// The area of emit_line's triangle for a line of this length, in pixels.
float line_triangle_area(float length_pixels) {
    return 4.0 * half_extent() * (length_pixels + 2.0 * cap_length());
}

// Both lines of a grid vertex, from v to the next column's r and the next row's d, in one triangle: v and the
// two lines' directions, the shorter line's side lengthened to at least half the other's (so no corner of the
// triangle is needle-sharp), each side then moved out by the distance from a line's end to its rectangle's far
// corner, so it holds both rectangles. False where the caller draws the two lines apart: where they nearly line
// up on the screen, a point is outside the depth range, or the triangle would cover more than the two lines'
// own triangles and the setup of one more (long lines, whose cells are large on the screen).
bool emit_corner(vec4 v, vec4 r, vec4 d) {
    if (!within_depth_range(v) || !within_depth_range(r) || !within_depth_range(d)) return false;
    vec2 origin = to_pixels(v), to_r = to_pixels(r) - origin, to_d = to_pixels(d) - origin;
    float length_r = length(to_r), length_d = length(to_d);
    if (min(length_r, length_d) < 1e-3) return false;
    vec2 along_r = to_r / length_r, along_d = to_d / length_d;
    float turn = along_r.x * along_d.y - along_r.y * along_d.x;   // the sine of the angle between them
    if (abs(turn) < 0.2) return false;
    vec2 points[3] = vec2[3](vec2(0.0), along_r * max(length_r, 0.5 * length_d),
                             along_d * max(length_d, 0.5 * length_r));
    float cap = cap_length(), margin = length(vec2(half_extent(), cap));
    vec2 outward[3];   // each side's outward unit normal: side i runs from point i to point i + 1
    for (int i = 0; i < 3; ++i) {
        vec2 side = normalize(points[(i + 1) % 3] - points[i]);
        outward[i] = sign(turn) * vec2(side.y, -side.x);
    }
    vec2 grown[3];
    for (int i = 0; i < 3; ++i) {
        // A corner moves out along the bisector of its sides' normals, far enough for both sides to move margin.
        vec2 before = outward[(i + 2) % 3], after = outward[i];
        grown[i] = points[i] + margin * (before + after) / (1.0 + dot(before, after));
    }
    vec2 first_side = grown[1] - grown[0], second_side = grown[2] - grown[0];
    float area = 0.5 * abs(first_side.x * second_side.y - first_side.y * second_side.x);
    if (area > line_triangle_area(length_r) + line_triangle_area(length_d) + SETUP_PIXELS) return false;
    vec2 across_r = vec2(-along_r.y, along_r.x), across_d = vec2(-along_d.y, along_d.x);
    for (int i = 0; i < 3; ++i) {
        vec2 place = grown[i];
        emit(v, place, vec4(dot(place, across_r), dot(place, along_r), dot(place, across_d), dot(place, along_d)),
             vec2(length_r, length_d) + cap, 3);
    }
    EndPrimitive();
    return true;
}
#endif

void main() {
#if PROFILE == 1
    emit_line(gl_in[0].gl_Position, gl_in[1].gl_Position);
#else
    vec4 v = gl_in[0].gl_Position, r = gl_in[1].gl_Position, d = gl_in[2].gl_Position;
    if (legs[0] == 3 && emit_corner(v, r, d)) return;
    if ((legs[0] & 1) != 0) emit_line(v, r);
    if ((legs[0] & 2) != 0) emit_line(v, d);
#endif
}

#elif defined FRAGMENT_SHADER

uniform vec3 line_color;
uniform bool antialias;
uniform float line_width;
smooth in vec4 line_places;
flat in vec2 line_ends;
flat in int shown_lines;
out vec4 fragment_color;

// Coverage of this pixel by one line: a one-pixel ramp at each edge when antialiased, else all or nothing; none
// beyond its square caps.
float coverage(vec2 place, float end) {
    float across = place.x, along = place.y;
    if (along < -0.5 * line_width || along > end) return 0.0;
    return antialias ? clamp(0.5 * line_width + 0.5 - abs(across), 0.0, 1.0)
                     : float(abs(across) <= 0.5 * line_width);
}

void main() {
    float first = (shown_lines & 1) != 0 ? coverage(line_places.xy, line_ends.x) : 0.0;
    float second = (shown_lines & 2) != 0 ? coverage(line_places.zw, line_ends.y) : 0.0;
    // Where both lines cover the pixel, as if each were blended over the other.
    float covered = 1.0 - (1.0 - first) * (1.0 - second);
    if (covered <= 0.0) discard;
    fragment_color = vec4(line_color, covered);
}

#endif
