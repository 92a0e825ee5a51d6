// Shared by the mesh programs: the world position of one heightmap grid vertex in one tile.
// The grid has no vertex buffer: positions come from gl_VertexID / gl_InstanceID and the height texture.
uniform sampler2D heights;   // R32F, grid_size x grid_size, rows are Z, columns are X
uniform int grid_size;       // vertices per side: 2**iterations + 1
uniform int tiles;           // tiles x tiles copies, 2 units apart, centred on tile_origin
uniform vec2 tile_origin;    // world x, z of the middle tile's centre (0, 0 but for --tile endless)

float grid_height(int column, int row) {
    return texelFetch(heights, ivec2(column, row), 0).r;
}

vec2 tile_offset(int tile_index) {
    ivec2 tile = ivec2(tile_index % tiles, tile_index / tiles);
    return 2.0 * (vec2(tile) - 0.5 * float(tiles - 1)) + tile_origin;
}

// Local X and Z of a grid vertex, each spanning -1..1.
vec2 grid_xz(int column, int row) {
    return -1.0 + 2.0 * vec2(column, row) / float(grid_size - 1);
}

vec3 grid_position(int column, int row, int tile_index) {
    vec2 xz = grid_xz(column, row) + tile_offset(tile_index);
    return vec3(xz.x, grid_height(column, row), xz.y);
}
