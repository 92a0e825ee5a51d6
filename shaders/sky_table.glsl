#version 330
// The natural look's sky-view table, drawn into a small texture whenever the sun moves: rows 0 ..
// SKY_TABLE_ROWS - 1 hold the sky's light by bearing (across) and elevation (up, by its square root: finer near
// the horizon); the last row holds the sun's light at the ground (texel 0), the ambient sky light (1) and the
// exposure (2), which the renderer reads back and hands the programs as uniforms. The other natural programs
// read the table (sky_view.glsl) instead of evaluating the model per pixel.
#define SKY_TABLE_WIDTH 64
#define SKY_TABLE_ROWS 32

#if defined VERTEX_SHADER

#include "whole_target.glsl"

void main() {
    gl_Position = vec4(whole_target_corner(), 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

#include "atmosphere.glsl"
uniform vec3 sun_direction;
out vec4 table_value;

void main() {
    ivec2 texel = ivec2(gl_FragCoord.xy);
    if (texel.y == SKY_TABLE_ROWS) {
        vec3 value = texel.x == 0 ? sunlight(sun_direction)
                   : texel.x == 1 ? sky_ambient(sun_direction) : vec3(exposure(sun_direction));
        table_value = vec4(value, 1.0);
        return;
    }
    float bearing = (gl_FragCoord.x / float(SKY_TABLE_WIDTH) - 0.5) * 2.0 * PI;
    float along = (gl_FragCoord.y - 0.5) / float(SKY_TABLE_ROWS - 1);
    float elevation = along * along * 0.5 * PI;
    vec3 direction = vec3(sin(bearing) * cos(elevation), sin(elevation), -cos(bearing) * cos(elevation));
    table_value = vec4(sky_light(direction, sun_direction), 1.0);
}

#endif
