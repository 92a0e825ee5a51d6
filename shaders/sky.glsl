#version 330
// The original's sky: an 8-sided pyramid with the cloud texture repeated across it. It is drawn around the
// eye with the view's rotation only, as if the eye were at its start (SKY_EYE), so no position shows an edge
// of it; it lies at the far plane's depth (z = w), so it is never clipped by the far plane at any pitch.
#define FOG_COLOR vec3(0.0)
#define FOG_START 0.0
#define FOG_END 1.0
#define SKY_EYE vec3(0.0)

#if defined VERTEX_SHADER

uniform mat4 rotation;    // rotateX(pitch) * rotateY(yaw)
uniform mat4 yaw_rotation;
uniform mat4 projection;
in vec3 in_position;
in vec2 in_texcoord_0;
out vec2 texcoord;
out float fog_distance;

void main() {
    vec3 around_eye = in_position - SKY_EYE;
    // Fog by the depth the original saw at pitch 0, so tilting the view never moves fog across the sky.
    fog_distance = -(yaw_rotation * vec4(around_eye, 0.0)).z;
    texcoord = in_texcoord_0;
    vec4 clip = projection * vec4((rotation * vec4(around_eye, 0.0)).xyz, 1.0);
    gl_Position = clip.xyww;
}

#elif defined FRAGMENT_SHADER

#include "fog.glsl"
uniform sampler2D clouds;
in vec2 texcoord;
in float fog_distance;
out vec4 fragment_color;

void main() {
    fragment_color = vec4(apply_fog(texture(clouds, texcoord).rgb, fog_distance), 1.0);
}

#endif
