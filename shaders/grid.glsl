// Shared by the mesh programs, the slope-map pass and the natural look's shading: the heightmap's points
// and one grid vertex's world position in one tile.
// The grid has no vertex buffer: positions come from gl_VertexID / gl_InstanceID and the height texture.
// The heightmap, grid_size x grid_size, rows are Z, columns are X, in bands of HEIGHT_BAND_ROWS rows (the last
// holding the rest), BANDS_PER_ARRAY layers to each of two R32F texture arrays (terrainview/render/gpu.py
// HeightBands; a map of one array has it bound twice).
#define HEIGHT_BAND_ROWS 1024
#define BANDS_PER_ARRAY 2
#define HEIGHT_ARRAYS 2
#define ATLAS 0               // 1: small regions of the endless world, each a layer of shared arrays (world_atlas.py)
#if HEIGHT_ARRAYS != 2
#error "map_point_height reads exactly two arrays (terrainview/render/gpu.py HEIGHT_ARRAYS)"
#endif
uniform int grid_size;       // vertices per side: 2**iterations + 1
uniform int tiles;           // tiles x tiles copies, 2 units apart, centred on tile_origin
uniform vec2 tile_origin;    // world x, z of the middle tile's centre (0, 0 but around the eye without end)
// A region of the endless world (terrainview/scene/world_regions.py): its map may hold every 2**cell_shift-th
// point of the grid, and has an apron of points from its neighbours around it. Both 0 for the tiled surface.
uniform int apron;
#if ATLAS
// Each region's map is a layer of atlas_heights, one band; the program's main sets these two for its region.
uniform sampler2DArray atlas_heights;
int cell_shift;
int region_layer;
#else
uniform sampler2DArray heights[HEIGHT_ARRAYS];
uniform int height_bands;    // bands in use
uniform int cell_shift;
#endif

// The height at one of the map's own points (every 2**cell_shift-th grid point), the apron around them.
float map_point_height(ivec2 point) {
    point += apron;
#if ATLAS
    return texelFetch(atlas_heights, ivec3(point, region_layer), 0).r;
#else
    int band = min(point.y / HEIGHT_BAND_ROWS, height_bands - 1);
    ivec3 texel = ivec3(point.x, point.y - band * HEIGHT_BAND_ROWS, band % BANDS_PER_ARRAY);
    // GLSL 3.30 indexes sampler arrays with constants only: fetch from both, keep the band's.
    float first = texelFetch(heights[0], texel, 0).r, second = texelFetch(heights[1], texel, 0).r;
    return band < BANDS_PER_ARRAY ? first : second;
#endif
}

float grid_height(int column, int row) {
    return map_point_height(ivec2(column, row) >> cell_shift);
}

vec2 tile_offset(int tile_index) {
    ivec2 tile = ivec2(tile_index % tiles, tile_index / tiles);
    return 2.0 * (vec2(tile) - 0.5 * float(tiles - 1)) + tile_origin;
}

// The neighbours of a grid point a step away, along x (left, right) then z (back, front): wrapping across the
// seamless map's edges, or for a region of the world (``region``), reaching into its apron. With the step in world
// units. Pass ``region`` as a constant: a software rasterizer runs both sides of a branch it cannot fold.
void neighbour_heights(int column, int row, bool region, out vec4 heights, out float step_size) {
    int last = grid_size - 1;
    int step = 1 << cell_shift;
    step_size = 2.0 * float(step) / float(last);
    if (region) {
        heights = vec4(grid_height(column - step, row), grid_height(column + step, row),
                       grid_height(column, row - step), grid_height(column, row + step));
    } else {
        heights = vec4(grid_height((column + last - 1) % last, row), grid_height((column + 1) % last, row),
                       grid_height(column, (row + last - 1) % last), grid_height(column, (row + 1) % last));
    }
}

// Local X and Z of a grid vertex, each spanning -1..1.
vec2 grid_xz(int column, int row) {
    return -1.0 + 2.0 * vec2(column, row) / float(grid_size - 1);
}

vec3 grid_position(int column, int row, int tile_index) {
    vec2 xz = grid_xz(column, row) + tile_offset(tile_index);
    return vec3(xz.x, grid_height(column, row), xz.y);
}
