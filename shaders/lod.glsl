// Shared by the level-of-detail mesh programs (CDLOD): one grid patch of patch_quads x patch_quads quads,
// instanced per selected node (terrainview/lod.py), heights read from the full heightmap (grid.glsl).
// A level-k node's vertices are every 2**k-th cell, which is exactly diamond-square's coarser pass; in the
// last part of the level's range its odd vertices slide vertically onto the next coarser level's surface.
#include "grid.glsl"
#define MAX_LOD_LEVELS 0   // the size of morph_zones, set by gpu.py (left unset, the program does not compile)

in vec4 node;        // tile centre x, z (world); first column, first row of the node (cells)
in vec2 node_info;   // level; edge flags (lines: 1 = draw the last column, 2 = draw the last row)
uniform int patch_quads;
uniform vec3 lod_eye;                          // eye x, height above the slab of all heights, eye z
uniform vec2 morph_zones[MAX_LOD_LEVELS];      // per level: distance where morphing starts, where it ends

// The patch vertex this vertex shader invocation shades: the patch's (patch_quads + 1)**2 vertices run row by
// row, and an index buffer joins them into triangles or line segments (terrainview/gpu.py).
ivec2 lod_patch_index() {
    return ivec2(gl_VertexID % (patch_quads + 1), gl_VertexID / (patch_quads + 1));
}

struct LodVertex {
    vec3 world;     // morphed position
    vec2 local;     // the map's own x, z (-1..1), for texture coordinates
    ivec2 cell;     // the vertex's cell, and the two cells of the coarser level it morphs between
    ivec2 coarse_a;
    ivec2 coarse_b;
    float morph;    // 0: this level's height, 1: the coarser level's
};

// With collapse_edges (filled triangles), a fully morphed vertex on the patch's border moves onto the coarser
// level's vertex coarse_a: the border is then made of exactly the coarser neighbour's vertices, with no
// T-junction for rounding to open a crack at. The surface is the same (the vertex already lay on that edge).
LodVertex lod_vertex(ivec2 patch_index, bool collapse_edges) {
    LodVertex v;
    int level = int(node_info.x);
    int step = 1 << level;
    v.cell = ivec2(node.zw) + patch_index * step;
    // The coarser level's triangle that holds this vertex: along the row, the column, or the anti-diagonal
    // that splits each quad (the same split the index buffer and the full mesh use).
    ivec2 odd = patch_index & 1;
    ivec2 towards = odd.x == 1 && odd.y == 1 ? ivec2(1, -1) : odd;
    v.coarse_a = v.cell - towards * step;
    v.coarse_b = v.cell + towards * step;
    v.local = grid_xz(v.cell.x, v.cell.y);
    vec2 xz = node.xy + v.local;
    float height = grid_height(v.cell.x, v.cell.y);
    vec2 horizontal = xz - lod_eye.xz;
    float distance = sqrt(dot(horizontal, horizontal) + lod_eye.y * lod_eye.y);
    vec2 zone = morph_zones[level];
    v.morph = odd == ivec2(0) ? 0.0 : clamp((distance - zone.x) / (zone.y - zone.x), 0.0, 1.0);
    bool border = any(equal(patch_index, ivec2(0))) || any(equal(patch_index, ivec2(patch_quads)));
    if (collapse_edges && border && v.morph == 1.0) {
        v.cell = v.coarse_b = v.coarse_a;
        v.local = grid_xz(v.cell.x, v.cell.y);
        xz = node.xy + v.local;
        height = grid_height(v.cell.x, v.cell.y);
    } else if (v.morph > 0.0) {
        float coarse = 0.5 * (grid_height(v.coarse_a.x, v.coarse_a.y) + grid_height(v.coarse_b.x, v.coarse_b.y));
        height = mix(height, coarse, v.morph);
    }
    v.world = vec3(xz.x, height, xz.y);
    return v;
}
