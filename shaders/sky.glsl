#version 330
// The original's sky: an 8-sided pyramid around the scene with the cloud texture repeated across it.
#define FOG_COLOR vec3(0.0)
#define FOG_START 0.0
#define FOG_END 1.0

#if defined VERTEX_SHADER

uniform mat4 view;
uniform mat4 projection;
in vec3 in_position;
in vec2 in_texcoord_0;
out vec2 texcoord;
out float eye_distance;

void main() {
    vec4 eye = view * vec4(in_position, 1.0);
    eye_distance = -eye.z;
    texcoord = in_texcoord_0;
    gl_Position = projection * eye;
}

#elif defined FRAGMENT_SHADER

#include "fog.glsl"
uniform sampler2D clouds;
in vec2 texcoord;
in float eye_distance;
out vec4 fragment_color;

void main() {
    fragment_color = vec4(apply_fog(texture(clouds, texcoord).rgb, eye_distance), 1.0);
}

#endif
