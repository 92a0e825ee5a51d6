#version 330
// The textured surface of rendered mode: one triangle strip per grid row, instanced over rows and tiles.
// Values below are placeholders; terrainview/gpu.py passes the real ones as defines.
#define FOG_COLOR vec3(0.0)
#define FOG_START 0.0
#define FOG_END 1.0
#define LIGHT_DIRECTION vec3(0.0, 1.0, 0.0)
#define SLOPE_AMBIENT 0.0
#define BAND_LOW_COLOR vec3(0.0)
#define BAND_MIDDLE_COLOR vec3(0.0)
#define BAND_HIGH_COLOR vec3(0.0)
#define LIGHT_AMBIENT 0.0
#define LIGHT_DIFFUSE 0.0
#define LOD 0   // 1: level-of-detail patches (lod.glsl) instead of the full grid
// How the surface is coloured, one program each (a uniform choice costs the unused work too on a software
// rasterizer, which runs both sides of a branch): 0 the texture as it is; 1 the texture, slope-shaded;
// 2 the endless world's own height bands, lit as the teximage colours its map.
#define SHADING 0

#if defined VERTEX_SHADER

#if LOD
#include "lod.glsl"
#else
#include "grid.glsl"
#endif
uniform mat4 view;
uniform mat4 projection;

out vec2 texcoord;
out float eye_distance;
out vec3 normal;
out float surface_height;

// Central differences across the neighbours (four more fetches, so only when shading).
vec3 slope_normal(int column, int row) {
    vec4 around;
    float step_size;
    neighbour_heights(column, row, SHADING == 2, around, step_size);  // the world's bands: its regions' maps
    return normalize(vec3(around.x - around.y, 2.0 * step_size, around.z - around.w));
}

void main() {
#if LOD
    LodVertex vertex = lod_vertex(lod_patch_index(), true);
    vec3 world = vertex.world;
    vec2 xz = vertex.local;
    normal = vec3(0.0, 1.0, 0.0);
#if SHADING != 0
    normal = slope_normal(vertex.cell.x, vertex.cell.y);
    if (vertex.morph > 0.0) {
        vec3 coarse = slope_normal(vertex.coarse_a.x, vertex.coarse_a.y)
                    + slope_normal(vertex.coarse_b.x, vertex.coarse_b.y);
        normal = mix(normal, 0.5 * coarse, vertex.morph);
    }
#endif
#else
    int strip_row = gl_InstanceID % (grid_size - 1);
    int tile_index = gl_InstanceID / (grid_size - 1);
    int column = gl_VertexID / 2;
    int row = strip_row + gl_VertexID % 2;
    vec3 world = grid_position(column, row, tile_index);
    vec2 xz = grid_xz(column, row);
    normal = SHADING != 0 ? slope_normal(column, row) : vec3(0.0, 1.0, 0.0);
#endif
    texcoord = vec2(xz.x + 1.0, 1.0 - xz.y) * 0.5;   // u = (x + 1) / 2, v = (1 - z) / 2 (SPEC)
    surface_height = world.y;

    vec4 eye = view * vec4(world, 1.0);
    eye_distance = -eye.z;
    gl_Position = projection * eye;
}

#elif defined FRAGMENT_SHADER

#include "fog.glsl"
uniform sampler2D surface_texture;
uniform vec2 band_limits;   // heights splitting the world's range in thirds
in vec2 texcoord;
in float eye_distance;
in vec3 normal;
in float surface_height;
out vec4 fragment_color;

void main() {
#if SHADING == 2
    // A texture repeated on every region would repeat the world: its own height bands, lit as the teximage is.
    vec3 band = surface_height >= band_limits.y ? BAND_HIGH_COLOR
              : surface_height >= band_limits.x ? BAND_MIDDLE_COLOR : BAND_LOW_COLOR;
    vec3 color = min(band * (LIGHT_AMBIENT + LIGHT_DIFFUSE * max(dot(normalize(normal), normalize(LIGHT_DIRECTION)),
                                                                 0.0)), 1.0);
#else
    vec3 color = texture(surface_texture, texcoord).rgb;
#if SHADING == 1
    // Brighter on slopes facing the light, darker on slopes facing away (seeds/003).
    float facing = dot(normalize(normal), normalize(LIGHT_DIRECTION));
    color *= SLOPE_AMBIENT + (1.0 - SLOPE_AMBIENT) * clamp(facing * 1.6, 0.0, 1.25);
#endif
#endif
    fragment_color = vec4(apply_fog(color, eye_distance), 1.0);
}

#endif
