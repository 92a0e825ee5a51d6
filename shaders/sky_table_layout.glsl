// Where the natural look's sky-view table keeps each direction's light, both ways: sky_view.glsl reads the table
// by direction (sky_table_place), sky_table.glsl fills each texel with its own direction's light
// (sky_table_direction), with no arc tangent or arc sine (each dear per pixel on a software rasterizer). Across,
// the bearing as a "turn" running from -2 to 2 with the angle from north toward east: east / (|east| + |north|)
// looking north of due east and west, south of them 2 minus that in the east and -2 minus it in the west (96
// bearings: 2.4 to 4.8 degrees apart). Up, the square root of the tangent of half the elevation (40 rows: under a
// degree apart up to 3 degrees above the horizon, never over 3.4 degrees, to the zenith).
// The table's constants, for both programs. Values below are placeholders; terrainview/render/gpu.py passes the
// real ones as defines.
#define SKY_TABLE_WIDTH 96
#define SKY_TABLE_ROWS 40
#define HAZE_ELEVATION 0.02   // the sine of the elevation whose sky light the haze takes (sky_view.glsl haze_light)

// The table's texture coordinate of a unit direction (at or above the horizon; one below reads the horizon's row).
vec2 sky_table_place(vec3 direction) {
    vec2 across = vec2(direction.x, -direction.z);  // east, north
    float level = length(across);
    float share = across.x / max(abs(across.x) + abs(across.y), 1e-9);
    float turn = across.y >= 0.0 ? share : (across.x >= 0.0 ? 2.0 - share : -2.0 - share);
    float half_tangent = max(direction.y, 0.0) / (1.0 + level);  // sin / (1 + cos) of the elevation
    float row = sqrt(half_tangent) * float(SKY_TABLE_ROWS - 1) + 0.5;
    return vec2(turn * 0.25 + 0.5, row / float(SKY_TABLE_ROWS + 1));
}

// The unit direction a texel of the table's sky rows holds, from its centre (gl_FragCoord.xy): sky_table_place's
// inverse.
vec3 sky_table_direction(vec2 texel_centre) {
    float turn = (texel_centre.x / float(SKY_TABLE_WIDTH) - 0.5) * 4.0;
    float share = abs(turn) <= 1.0 ? turn : sign(turn) * (2.0 - abs(turn));
    vec2 across = normalize(vec2(share, abs(turn) <= 1.0 ? 1.0 - abs(share) : abs(share) - 1.0));
    float along = (texel_centre.y - 0.5) / float(SKY_TABLE_ROWS - 1);
    float half_tangent = along * along;
    float to_unit = 1.0 / (1.0 + half_tangent * half_tangent);
    float up = 2.0 * half_tangent * to_unit, level = (1.0 - half_tangent * half_tangent) * to_unit;
    return vec3(across.x * level, up, -across.y * level);
}
