#version 330
// The tiles' natural look, second pass. The first (natural_terrain.glsl with PLACES) left the surface's depth and,
// copied out of the colour, its distance from the eye at each pixel; one triangle over the whole image, on the far
// plane and passing the depth test only in front of that depth, shades each place once (natural_shading.glsl).
// Blocks of sky are never shaded, and no pixel is shaded twice. (llvmpipe shades whole blocks of pixels: the
// mesh's small triangles, shaded as they were drawn, cost more than the pixels they cover.)

#if defined VERTEX_SHADER

#include "far_plane_rays.glsl"

void main() {
    far_plane_ray();
}

#elif defined FRAGMENT_SHADER

#include "grid.glsl"
#include "sky_view.glsl"
#include "natural_shading.glsl"
uniform sampler2D surface_places;  // the first pass's colour: the distance from the eye, 24 bits
uniform float place_reach;         // the distance of the largest value
in vec3 far_point;
out vec4 fragment_color;

void main() {
    vec3 bytes = floor(texelFetch(surface_places, ivec2(gl_FragCoord.xy), 0).rgb * 255.0 + 0.5);
    float distance = dot(bytes, vec3(1.0, 256.0, 65536.0)) / 16777215.0 * place_reach;
    vec3 direction = normalize(far_point);
    vec3 world_position = eye + direction * distance;
    // The place in the repeated map: tiles are 2 units apart about tile_origin (grid.glsl's tile_offset).
    vec2 grid_coordinate = mod(world_position.xz - tile_origin + float(tiles), 2.0) * 0.5 * float(grid_size - 1);
    // Cells a pixel spans, from the world's x and z, which run on across the tiles where the map's place wraps.
    vec2 across = vec2(length(dFdx(world_position.xz)), length(dFdy(world_position.xz)));
    float cells_per_pixel = max(across.x, across.y) * 0.5 * float(grid_size - 1);
    vec3 colour = natural_surface(world_position, grid_coordinate, haze_light(direction), cells_per_pixel);
    fragment_color = vec4(colour, 1.0);
}

#endif
