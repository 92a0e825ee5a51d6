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
#include "surface_places.glsl"
uniform sampler2D surface_places;  // the first pass's colour: the distance from the eye
uniform ivec2 first_pixel;         // the part of the image drawn: its neighbours beyond are not its own
uniform ivec2 last_pixel;
uniform vec2 eye_from_origin;      // the eye's x and z from tile_origin, worked out in double precision
uniform float corner_from_centre;  // a map's first point west and north of tile_origin, mod 2 (camera.py's rule)
in vec3 far_point;
out vec4 fragment_color;
vec3 step_x, step_y;  // from this pixel's place to its neighbours' on the same land, in world units

// The distance to the land at a pixel: 0 where the first pass drew none.
float distance_at(ivec2 pixel) {
    return decoded_distance(texelFetch(surface_places, pixel, 0));
}

// The step from the pixel's place to its neighbour's on the same land, one either side along offset: the one
// nearer in distance, among those in the image part that show land no farther off or nearer by than half the
// distance; with neither, a step across at the pixel's own distance. (Screen derivatives take whichever pixels
// share the block, which along a ridge's outline lie on far land or are sky: a line of wrongly shaded pixels.)
// The bound is loose on purpose, for land seen at a grazing angle: a one-pixel strip of land between two
// outlines may still take its nearer neighbour's step. Differences of rays times distances, without the eye.
vec3 land_step(ivec2 pixel, ivec2 offset, vec3 far_offset, float distance) {
    ivec2 after = pixel + offset, before = pixel - offset;
    float after_distance = distance_at(min(after, last_pixel)), before_distance = distance_at(max(before, first_pixel));
    float after_gap = all(lessThanEqual(after, last_pixel)) && after_distance > 0.0
                    ? abs(after_distance - distance) : 1e30;
    float before_gap = all(greaterThanEqual(before, first_pixel)) && before_distance > 0.0
                     ? abs(distance - before_distance) : 1e30;
    vec3 ray = normalize(far_point);
    if (min(after_gap, before_gap) > 0.5 * distance) return distance * (normalize(far_point + far_offset) - ray);
    return after_gap < before_gap ? normalize(far_point + far_offset) * after_distance - ray * distance
                                  : ray * distance - normalize(far_point - far_offset) * before_distance;
}

float pixel_footprint() {
    return max(length(step_x.xz), length(step_y.xz));
}

void main() {
    ivec2 pixel = ivec2(gl_FragCoord.xy);
    float distance = distance_at(pixel);
    vec3 ray = normalize(far_point);
    // far_point runs linearly across the image: its derivatives are the step to the next pixel's ray.
    step_x = land_step(pixel, ivec2(1, 0), dFdx(far_point), distance);
    step_y = land_step(pixel, ivec2(0, 1), dFdy(far_point), distance);
    // The place in the repeated map: tiles are 2 units apart about tile_origin (grid.glsl's tile_offset).
    vec2 from_origin = eye_from_origin + ray.xz * distance;
    vec2 grid_coordinate = mod(from_origin + corner_from_centre, 2.0) * 0.5 * float(grid_size - 1);
    fragment_color = vec4(natural_surface(eye + ray * distance, distance, grid_coordinate, haze_light(ray)), 1.0);
}

#endif
