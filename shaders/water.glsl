#version 330
// A translucent water plane at a fixed height over the tiled surface (seeds/003).
#define FOG_COLOR vec3(0.0)
#define FOG_START 0.0
#define FOG_END 1.0
#define WATER_COLOR vec4(0.0)

#if defined VERTEX_SHADER

uniform mat4 view;
uniform mat4 projection;
uniform float level;
uniform float half_extent;
out float eye_distance;

void main() {
    vec2 corner = vec2(gl_VertexID % 2, gl_VertexID / 2) * 2.0 - 1.0;
    vec4 eye = view * vec4(corner.x * half_extent, level, -corner.y * half_extent, 1.0);
    eye_distance = -eye.z;
    gl_Position = projection * eye;
}

#elif defined FRAGMENT_SHADER

#include "fog.glsl"
in float eye_distance;
out vec4 fragment_color;

void main() {
    fragment_color = vec4(apply_fog(WATER_COLOR.rgb, eye_distance), WATER_COLOR.a);
}

#endif
