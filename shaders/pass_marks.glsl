#version 330
// Marks on the wireframe at the points the latest half-pass of diamond-square set (--passes): a filled dot for
// a point given its value, a ring for its copy on the opposite edge (the article's wrap-around), on every tile.
#define COPIED_ACROSS_EDGE 1
#define MARK_PIXELS 9.0
#define SET_COLOR vec3(0.85, 0.1, 0.05)
#define COPIED_COLOR vec3(0.05, 0.35, 0.95)

#if defined VERTEX_SHADER
#include "grid.glsl"

uniform mat4 view;
uniform mat4 projection;
uniform float mark_scale;   // the frame's line scale: marks grow with the lines in tall images
in ivec3 in_mark;           // column, row, kind
flat out int kind;

void main() {
    kind = in_mark.z;
    gl_Position = projection * view * vec4(grid_position(in_mark.x, in_mark.y, gl_InstanceID), 1.0);
    gl_PointSize = MARK_PIXELS * mark_scale;
}

#elif defined FRAGMENT_SHADER

flat in int kind;
out vec4 fragment_color;

void main() {
    float radius = length(gl_PointCoord - 0.5) * 2.0;   // 0 at the centre, 1 at the rim
    bool copied = kind == COPIED_ACROSS_EDGE;
    if (radius > 1.0 || (copied && radius < 0.55)) discard;
    fragment_color = vec4(copied ? COPIED_COLOR : SET_COLOR, 1.0);
}

#endif
