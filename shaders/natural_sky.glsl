#version 330
// The natural look's sky: the sky-view table's light and the sun's disc, per pixel, drawn after the land (only
// where it left the far plane) and before the sea, at the far plane. One triangle covers the screen; each pixel's
// world direction comes from the inverse of the camera's rotation and projection, so no sky geometry can show at
// any pitch.

#if defined VERTEX_SHADER

#include "far_plane_rays.glsl"

void main() {
    far_plane_ray();
}

#elif defined FRAGMENT_SHADER

#include "sky_view.glsl"
in vec3 far_point;
out vec4 fragment_color;

void main() {
    vec3 direction = normalize(far_point);
    // Above the haze, haze_light is the sky's own light; below the horizon (where no land or sea is drawn) the haze
    // of the horizon continues. One lookup either way: a software rasterizer runs both sides of a branch.
    vec3 light = haze_light(direction) + (direction.y < HAZE_ELEVATION ? vec3(0.0) : sun_disc(direction));
    fragment_color = vec4(finish(light), 1.0);
}

#endif
