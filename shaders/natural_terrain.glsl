#version 330
// The natural look's surface mesh: the tiles' (the full grid or level-of-detail patches) or a region's of the
// endless world. A region is shaded here (natural_shading.glsl), and so are the tiles in a multisampled
// framebuffer. Otherwise the tiles are drawn in two passes: this program with PLACES writes the surface's depth and
// its distance from the eye, and natural_surface.glsl shades there.
// With ATLAS (grid.glsl's; with LOD) it draws the small regions of the world all at once, each instance's patch
// from its region's layer of the atlas (render/world_atlas.py).
// Values below are placeholders; terrainview/render/gpu.py passes the real ones as defines.
#define LOD 0                 // 1: level-of-detail patches (lod.glsl) instead of the full grid
#define PLACES 0              // 1: the tiles' first pass, distances out instead of colours

#if defined VERTEX_SHADER

#if !PLACES
#include "sky_view.glsl"
#endif
#if LOD
#include "lod.glsl"
#else
#include "grid.glsl"
#endif
uniform mat4 view;
uniform mat4 projection;

out vec3 world_position;
#if !PLACES
uniform vec3 eye;
out vec2 grid_coordinate;  // the heightmap's column and row (fractional), within the tile
out vec3 haze;             // the haze's light toward the vertex: smooth enough to interpolate, and dear per pixel
#endif
#if ATLAS
in vec2 atlas_region;      // the instance's region: its layer, its cell_shift
flat out ivec2 region;     // the same, for the fragments
#endif

void main() {
#if ATLAS
    region_layer = int(atlas_region.x);
    cell_shift = int(atlas_region.y);
    region = ivec2(region_layer, cell_shift);
#endif
#if LOD
    LodVertex vertex = lod_vertex(lod_patch_index(), true);
    vec3 world = vertex.world;
    vec2 xz = vertex.local;
#else
    int strip_row = gl_InstanceID % (grid_size - 1);
    int tile_index = gl_InstanceID / (grid_size - 1);
    int column = gl_VertexID / 2;
    int row = strip_row + gl_VertexID % 2;
    vec3 world = grid_position(column, row, tile_index);
    vec2 xz = grid_xz(column, row);
#endif
    world_position = world;
    gl_Position = projection * view * vec4(world, 1.0);
#if !PLACES
    grid_coordinate = (xz + 1.0) * 0.5 * float(grid_size - 1);
    haze = haze_light((world - eye) / max(length(world - eye), 1e-6));  // (a vertex at the eye has no direction)
#endif
}

#elif defined FRAGMENT_SHADER

in vec3 world_position;
#if PLACES
#include "surface_places.glsl"
uniform vec3 eye;
out vec4 place;

void main() {
    place = encoded_distance(length(world_position - eye));
}
#else
#include "grid.glsl"
#include "sky_view.glsl"
#include "natural_shading.glsl"
in vec2 grid_coordinate;
in vec3 haze;
#if ATLAS
flat in ivec2 region;
#endif
out vec4 fragment_color;

// The pixel's footprint from the screen derivatives, within its triangle: of the grid places, which keep their
// precision however far out in the world the land lies.
float pixel_footprint() {
    return max(length(dFdx(grid_coordinate)), length(dFdy(grid_coordinate))) * 2.0 / float(grid_size - 1);
}

void main() {
#if ATLAS
    region_layer = region.x;
    cell_shift = region.y;
#endif
    vec3 colour = natural_surface(world_position, length(world_position - eye), grid_coordinate, haze);
    fragment_color = vec4(colour, 1.0);
}
#endif

#endif
