#version 330
// The natural look's sea at the water level, out to the far plane: it reflects the sky by Fresnel (a mirror at
// grazing angles, clear looking down), glints where it mirrors the sun, darkens and turns opaque with depth,
// and lightens along the shore. Blended over the surface drawn before it.
#define FLOOR_MAP 0   // sea_floor is 1: the endless world's ground around the eye; 0: the tiles' map's period

#if defined VERTEX_SHADER

uniform mat4 view;
uniform mat4 projection;
uniform vec3 eye;
uniform float level;
uniform float reach;        // half the quad's side: as far as the far plane
out vec3 world_position;

void main() {
    vec2 corner = vec2(gl_VertexID % 2, gl_VertexID / 2) * 2.0 - 1.0;
    world_position = vec3(eye.x + corner.x * reach, level, eye.z + corner.y * reach);
    gl_Position = projection * view * vec4(world_position, 1.0);
}

#elif defined FRAGMENT_SHADER

#include "sky_view.glsl"
uniform vec3 eye;
uniform float haze_density;
uniform float level;
uniform vec2 land_extent;   // half the land's side in world units (a large value for endless land)
uniform vec2 land_centre;
#define SHALLOWS_FADE 0.3   // world units within the land's outer edge over which its shallows fade out
uniform sampler2D sea_floor;   // the ground under the sea: the tiles' map (gpu.py), or the world's around the eye
uniform vec3 sea_floor_rect;   // the world's: its west and north edges and its side, in world units
uniform float corner_from_centre;  // the tiles': a map's first point west and north of land_centre, mod 2
                                   // (camera.py's map_corner_from_centre)
in vec3 world_position;
out vec4 fragment_color;

float ripple_hash(vec2 p) {
    p = fract(p * vec2(443.897, 441.423));
    p += dot(p, p.yx + 19.19);
    return fract((p.x + p.y) * p.x);
}

float ripple(vec2 p) {
    vec2 i = floor(p), f = fract(p);
    vec2 u = f * f * (3.0 - 2.0 * f);
    return mix(mix(ripple_hash(i), ripple_hash(i + vec2(1.0, 0.0)), u.x),
               mix(ripple_hash(i + vec2(0.0, 1.0)), ripple_hash(i + 1.0), u.x), u.y);
}

float ground_below(vec2 xz) {
#if FLOOR_MAP
    vec2 place = (xz - sea_floor_rect.xy) / sea_floor_rect.z;  // 0 to 1 across the floor's points
    if (any(lessThan(place, vec2(0.0))) || any(greaterThan(place, vec2(1.0)))) return level - 1.0;
    float points = float(textureSize(sea_floor, 0).x);
    return texture(sea_floor, (place * (points - 1.0) + 0.5) / points).r;
#else
    vec2 local = xz - land_centre;
    if (abs(local.x) > land_extent.x || abs(local.y) > land_extent.y) return level - 1.0;  // open sea
    // One period of the map, wrapping: its point i lies at i / texels (filtered between the points as the land's
    // surface runs between a cell's corners; one corner's height made the shallows a pattern of squares).
    vec2 from_corner = local + corner_from_centre;
    return texture(sea_floor, from_corner * 0.5 + 0.5 / vec2(textureSize(sea_floor, 0))).r;
#endif
}

// Depth the sea gains toward the land's outer edge, so that its shallows fade into the open sea over the last
// SHALLOWS_FADE units instead of ending in a straight line along the edge (0.1 looks as deep as the open sea).
float deepening_at_the_edge(vec2 xz) {
    vec2 inside = land_extent - abs(xz - land_centre);
    float toward_edge = 1.0 - smoothstep(0.0, SHALLOWS_FADE, min(inside.x, inside.y));
    return 0.1 * toward_edge * toward_edge * toward_edge;  // slow at first: the colour follows depth steeply
}

void main() {
    vec3 to_eye = eye - world_position;
    float distance = length(to_eye);
    vec3 view_direction = to_eye / distance;
    // Small waves: value noise at two scales, turned so no pattern lines up, tilts the normal near the eye.
    float fade = 1.0 - smoothstep(0.5, 6.0, distance);
    vec2 p = world_position.xz * 70.0;
    vec2 q = mat2(0.8, 0.6, -0.6, 0.8) * p * 2.3;
    vec2 tilt = vec2(ripple(p + vec2(0.5, 0.0)) - ripple(p - vec2(0.5, 0.0)), ripple(p + vec2(0.0, 0.5)) - ripple(p - vec2(0.0, 0.5)))
              + 0.5 * vec2(ripple(q + vec2(0.5, 0.0)) - ripple(q - vec2(0.5, 0.0)), ripple(q + vec2(0.0, 0.5)) - ripple(q - vec2(0.0, 0.5)));
    vec3 normal = normalize(vec3(0.05 * fade * tilt.x, 1.0, 0.05 * fade * tilt.y));
    float facing = max(dot(view_direction, normal), 0.0);
    float fresnel = 0.02 + 0.98 * pow(1.0 - facing, 5.0);
    vec3 mirrored = reflect(-view_direction, normal);
    mirrored.y = abs(mirrored.y);
    vec3 reflection = sky(mirrored) + sun_disc(mirrored) * 0.5;
    // A tile's sea over ground above it lies under the land: seen from outside the tiles, it shows past their
    // outer edge, looking in under the rim, and is drawn as the open sea there, so the edge meets one sea
    // instead of a pale sheet of shallow water. From within the land (or a repeated or endless one, which has
    // no rim) it shows only at the shore, where a coarser mesh dips under the water: shore, not open sea.
    float ground = ground_below(world_position.xz);
    bool eye_beyond_the_land = any(greaterThan(abs(eye.xz - land_centre), land_extent));
    float depth = eye_beyond_the_land && ground > level ? 1.0
                : max(level - ground, 0.0) + deepening_at_the_edge(world_position.xz);
    float opacity = 1.0 - exp(-depth * 45.0);
    vec3 body = lit(mix(vec3(0.03, 0.09, 0.08), vec3(0.005, 0.02, 0.035), opacity), 0.3 * max(sun_direction.y, 0.0), 1.0);
    float foam = (1.0 - smoothstep(0.0, 0.006, depth)) * 0.6;
    vec3 light = fresnel * reflection + (1.0 - fresnel) * body + lit(vec3(foam * 0.5), max(sun_direction.y, 0.0), 1.0);
    float alpha = clamp(fresnel + (1.0 - fresnel) * (0.35 + 0.65 * opacity) + foam, 0.0, 1.0);
    vec3 seen = aerial(light / max(alpha, 1e-3), -view_direction, distance, haze_density);
    fragment_color = vec4(finish(seen), alpha);
}

#endif
