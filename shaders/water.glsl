#version 330
// A translucent water plane at a fixed height over the tiled surface (seeds/003).
#define FOG_COLOR vec3(0.0)
#define FOG_START 0.0
#define FOG_END 1.0
#define WATER_COLOR vec4(0.0)

#if defined VERTEX_SHADER

uniform mat4 view;
uniform mat4 projection;
uniform float level;
uniform float half_extent;
uniform vec2 centre;  // world x, z the plane is centred on (the tiles' middle)
out float eye_distance;

void main() {
    vec2 corner = vec2(gl_VertexID % 2, gl_VertexID / 2) * 2.0 - 1.0;
    vec4 eye = view * vec4(centre.x + corner.x * half_extent, level, centre.y - corner.y * half_extent, 1.0);
    eye_distance = -eye.z;
    gl_Position = projection * eye;
}

#elif defined FRAGMENT_SHADER

in float eye_distance;
out vec4 fragment_color;

void main() {
    float fog = clamp((FOG_END - eye_distance) / (FOG_END - FOG_START), 0.0, 1.0);
    fragment_color = vec4(mix(FOG_COLOR, WATER_COLOR.rgb, fog), WATER_COLOR.a);
}

#endif
