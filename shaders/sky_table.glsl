#version 330
// The natural look's sky-view table, drawn into a small texture whenever the sun moves: rows 0 ..
// SKY_TABLE_ROWS - 1 hold the sky's light by bearing across and height up (sky_table_layout.glsl); the last row
// holds the sun's light at the ground (texel 0), the ambient sky light (1), the exposure (2) and the haze's light
// looking straight down (3), which the renderer reads back and hands the programs as uniforms. The other natural
// programs read the table (sky_view.glsl) instead of evaluating the model per pixel.

#if defined VERTEX_SHADER

#include "whole_target.glsl"

void main() {
    gl_Position = vec4(whole_target_corner(), 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

#include "atmosphere.glsl"
#include "sky_table_layout.glsl"
uniform vec3 sun_direction;
out vec4 table_value;

// The haze's light looking straight down: the horizon's (at sky_view.glsl's haze_light elevation) averaged over
// every bearing, since air under the eye is lit from all sides alike.
vec3 haze_below(vec3 sun) {
    const int BEARINGS = 32;
    vec3 sum = vec3(0.0);
    for (int i = 0; i < BEARINGS; ++i) {
        float bearing = 2.0 * PI * float(i) / float(BEARINGS);
        sum += sky_light(normalize(vec3(sin(bearing), HAZE_ELEVATION, -cos(bearing))), sun);
    }
    return sum / float(BEARINGS);
}

void main() {
    ivec2 texel = ivec2(gl_FragCoord.xy);
    if (texel.y == SKY_TABLE_ROWS) {
        vec3 value = texel.x == 0 ? sunlight(sun_direction)
                   : texel.x == 1 ? sky_ambient(sun_direction)
                   : texel.x == 2 ? vec3(exposure(sun_direction))
                   : texel.x == 3 ? haze_below(sun_direction) : vec3(0.0);
        table_value = vec4(value, 1.0);
        return;
    }
    table_value = vec4(sky_light(sky_table_direction(gl_FragCoord.xy), sun_direction), 1.0);
}

#endif
