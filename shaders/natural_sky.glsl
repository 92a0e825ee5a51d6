#version 330
// The natural look's sky: the daylight sky of atmosphere.glsl and the sun's disc, per pixel, behind everything.
// One triangle covers the screen; each pixel's world direction comes from the inverse of the camera's rotation
// and projection, so no sky geometry can show at any pitch.

#if defined VERTEX_SHADER

out vec2 ndc;

void main() {
    vec2 corner = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    ndc = corner * 2.0 - 1.0;
    gl_Position = vec4(ndc, 0.999999, 1.0);
}

#elif defined FRAGMENT_SHADER

#include "atmosphere.glsl"
uniform mat4 inverse_view_projection;  // of the rotation only: NDC to a world direction
uniform mat4 ndc_window;               // the whole image's NDC to the part being drawn (tiled shots)
uniform vec3 sun_direction;
in vec2 ndc;
out vec4 fragment_color;

void main() {
    vec4 whole = inverse(ndc_window) * vec4(ndc, 0.0, 1.0);  // this pixel's place in the whole image
    vec4 far = inverse_view_projection * vec4(whole.xy, 1.0, 1.0);
    vec3 direction = normalize(far.xyz / far.w);
    vec3 light = sky_light(direction, sun_direction) + sun_disc(direction, sun_direction);
    // Below the horizon (where no land or sea is drawn) the haze of the horizon continues.
    vec3 horizon = sky_light(normalize(vec3(direction.x, 0.02, direction.z)), sun_direction);
    light = direction.y < 0.02 ? horizon : light;
    fragment_color = vec4(finish(light, sun_direction), 1.0);
}

#endif
