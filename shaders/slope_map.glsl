#version 330
// A heightmap's slopes for the natural look (terrainview/render/gpu.py bind_slopes): texel (c, r) holds the
// slope from point (c, r) to the next along x (red) and along z (green), which belong half a point on. Read with
// linear filtering half a texel apart (natural_terrain.glsl map_slope), they give the slope between the midpoints
// interpolated: one that runs on smoothly from cell to cell and keeps the finest ridges, in two fetches. The
// tiles' map wraps (its texture holds one period, repeated); a region's holds its apron too.

#if defined VERTEX_SHADER

#include "whole_target.glsl"

void main() {
    gl_Position = vec4(whole_target_corner(), 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

#include "grid.glsl"
uniform ivec2 map_size;   // the stored map's points per side: columns, rows (its apron included)
out vec2 slope;

void main() {
    ivec2 point = ivec2(gl_FragCoord.xy) - apron;  // the tiles' last point is their first: never this one
    ivec2 next = min(point + 1, map_size - 1 - apron);  // a region's last column and row: unused
    float cell = 2.0 / float(map_size.x - 1 - 2 * apron);  // a map spans 2 units (a tile, or a region)
    float here = map_point_height(point);
    slope = vec2(map_point_height(ivec2(next.x, point.y)) - here, map_point_height(ivec2(point.x, next.y)) - here)
          / cell;
}

#endif
