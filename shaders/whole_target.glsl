// One triangle that covers the whole target (vertices 0, 1, 2 of an attribute-less draw): its corner in
// normalized device coordinates, (-1, -1), (3, -1) and (-1, 3). The programs that shade every pixel of a table
// or of the sky start from it (sky_table.glsl, far_plane_rays.glsl).
vec2 whole_target_corner() {
    return vec2((gl_VertexID << 1) & 2, gl_VertexID & 2) * 2.0 - 1.0;
}
