#version 330
// The original's teximage: the teximage heightmap seen from straight above, as flat-shaded lit triangles
// coloured by height band, drawn into an offscreen texture that then textures the surface, and drawn straight
// into the window's power-of-two square in teximage mode (crisp at any size, as the original drew it).
// After hydraulic erosion, triangles where water ran are darker (the flow map, as the CPU textures do).
#define BAND_LOW_COLOR vec3(0.0)
#define BAND_MIDDLE_COLOR vec3(0.0)
#define BAND_HIGH_COLOR vec3(0.0)
#define LIGHT_DIRECTION vec3(0.0, 1.0, 0.0)
#define LIGHT_AMBIENT 0.0
#define LIGHT_DIFFUSE 0.0
#define WET_DARKENING 0.0

#if defined VERTEX_SHADER

#include "grid.glsl"
uniform vec2 band_limits;   // heights splitting the range into thirds
uniform mat4 placement;     // where the square goes in clip space: the whole texture, or teximage mode's square
uniform sampler2D flow;     // wetness 0-1 of each grid vertex, when ``wet``
uniform bool wet;

out vec3 world;
flat out vec3 band_color;
flat out float wetness;

void main() {
    int column = gl_VertexID / 2;
    int row = gl_InstanceID + gl_VertexID % 2;
    world = grid_position(column, row, 0);
    band_color = world.y >= band_limits.y ? BAND_HIGH_COLOR
               : world.y >= band_limits.x ? BAND_MIDDLE_COLOR : BAND_LOW_COLOR;
    wetness = wet ? texelFetch(flow, ivec2(column, row), 0).r : 0.0;
    // Top-down: screen x = world x, screen y = -world z, so texture (u, v) = ((x + 1) / 2, (1 - z) / 2).
    gl_Position = placement * vec4(world.x, -world.z, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

in vec3 world;
flat in vec3 band_color;
flat in float wetness;
out vec4 fragment_color;

void main() {
    // The face normal of a planar triangle, constant across it: flat shading.
    vec3 normal = normalize(cross(dFdx(world), dFdy(world)));
    normal *= sign(normal.y);
    float diffuse = max(dot(normal, normalize(LIGHT_DIRECTION)), 0.0);
    vec3 lit = min(band_color * (LIGHT_AMBIENT + LIGHT_DIFFUSE * diffuse), 1.0);
    fragment_color = vec4(lit * (1.0 - WET_DARKENING * wetness), 1.0);
}

#endif
