// One triangle over the whole target on the far plane (whole_target.glsl's), with each pixel's ray: far_point,
// a point along it in world directions (the camera's rotation only), for the programs that shade every pixel
// by its direction (natural_sky.glsl, natural_surface.glsl).
#include "whole_target.glsl"
uniform mat4 inverse_view_projection;  // of the rotation only, from the part of the image drawn: NDC to a direction
out vec3 far_point;

void far_plane_ray() {
    vec2 corner = whole_target_corner();
    vec4 far = inverse_view_projection * vec4(corner, 1.0, 1.0);
    far_point = far.xyz / far.w;
    gl_Position = vec4(corner, 1.0, 1.0);
}
