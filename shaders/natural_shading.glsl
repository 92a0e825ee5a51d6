// The natural look's surface colour at a place (natural_surface()), shared by the programs that draw it: materials
// by slope, height and facing, with procedural detail near the eye; lit by the sun (shadowed by the terrain's
// horizons) and the sky (dimmed by occlusion), in linear light, seen through the air (aerial perspective). Normals
// are per pixel from the full map's slope map (kernels/slopes.py; the light maps' broad slope until it is worked out),
// so level of detail changes the mesh but not the shading. Needs grid.glsl and sky_view.glsl before it.
// Values below are placeholders; terrainview/render/gpu.py passes the real ones as defines.
#define HORIZON_LAYERS 4      // light map layers of horizons (four directions a texel); then the surface's layer
#define SKY_VIEW_CHANNEL 0    // of the surface's layer: the sky view, the broad slope along x and z, and the
#define BROAD_X_CHANNEL 1     // horizon toward the sun (lighting.sun_surface_layer, for the sun's bearing)
#define BROAD_Z_CHANNEL 2
#define SUN_CHANNEL 3
#define PENUMBRA 0.05         // the sun's soft edge: the sine of its elevation over the horizon, from shadow to lit
#define NOISE_SIDE 256        // texels per side of the noise textures
uniform vec3 eye;
uniform float sun_across;        // the length of sun_direction's x and z (worked out once a frame)
uniform float haze_density;      // per squared unit of distance
uniform float height_scale;      // the scene's, for the snow line's softness
uniform float snow_height;       // the snow line: the height the highest land rises above (texturing.py)
uniform float water_level;       // the sea's height (a very low one without water)
uniform sampler2DArray light_maps;
uniform int light_texels;   // a region of the endless world: the points per side of its light maps
uniform bool eroded;        // the surface's hydraulic erosion ran: water_maps holds where
uniform sampler2D water_maps;  // wetness (r) and deposit (g), 0 to 1, wrapping like the light maps
#if ATLAS
// A small region's, a layer of each (grid.glsl's region_layer): light_maps holds the surface layer alone.
uniform sampler2DArray slopes;
const float fine_slopes = 1.0;  // worked out whole when the region took its layer
#define SURFACE_LAYER float(region_layer)
#define SLOPES_PLACE(coordinate) vec3(coordinate, float(region_layer))
#else
uniform sampler2D slopes;      // the map's slopes from each point to the next along x and z (kernels/slopes.py) ...
uniform float fine_slopes;     // ... when 1; 0 while they are still being worked out: the broad slope meanwhile
#define SURFACE_LAYER float(HORIZON_LAYERS)
#define SLOPES_PLACE(coordinate) (coordinate)
#endif
// Random values, tiling, not mipmapped (terrainview/render/gpu.py): three independent channels, and three octaves
// of them 4, 2 and 1 texels apart (red, green, blue).
uniform sampler2D noise;
uniform sampler2D detail_octaves;
const float BROAD_SCALE = 0.027;  // the broad variation's texture coordinate per world unit: 0.14 units a texel
const float DETAIL_SCALE = 1.4;   // the detail's: its finest octave 0.0028 units apart
const mat2 DETAIL_TURN = mat2(0.8, 0.6, -0.6, 0.8);  // the detail turned so that it lines up with no grid

// What the including program knows of the pixel: its footprint on the land in world units, the longer of its steps
// to the next pixel across and up.
float pixel_footprint();

// How many of the map's own cells a pixel spans (a region held coarser has cells 2**cell_shift grid points wide).
float cells_per_pixel(float footprint) {
    return footprint * 0.5 * float(grid_size - 1) / float(1 << cell_shift);
}

// Where a pixel spans a value's spacing and more, the value fades to its mean (0.5) instead of shimmering from
// pixel to pixel: by texels of it a pixel spans, from one to two. (Mipmaps did this, and a mipmapped fetch cost a
// software rasterizer about 2 ms of a 1280 x 720 frame.)
vec3 resolved(vec3 values, vec3 texels_per_pixel) {
    return mix(values, vec3(0.5), smoothstep(1.0, 2.0, texels_per_pixel));
}

// Detail at close range: three octaves of random values, turned so they line up with no grid, each faded out as
// the pixel spans its spacing, and all of it with distance.
float detail(vec2 xz, float distance, float footprint) {
    float fade = 1.0 - smoothstep(0.5, 6.0, distance);
    float texels = footprint * DETAIL_SCALE * float(NOISE_SIDE);  // of the finest octave
    vec3 octaves = texture(detail_octaves, DETAIL_SCALE * DETAIL_TURN * xz).rgb;
    return dot(resolved(octaves, texels * vec3(0.25, 0.5, 1.0)) - 0.5, vec3(1.0, 0.5, 0.25)) * fade;
}

// Broad variation of the materials: three independent channels, faded out where a pixel spans their spacing.
vec3 broad_variation(vec2 xz, float footprint) {
    return resolved(texture(noise, BROAD_SCALE * xz).rgb, vec3(footprint * BROAD_SCALE * float(NOISE_SIDE)));
}

// The land's slope along x and z at a grid place: the slopes between neighbouring points, which belong to the
// midpoints between them, interpolated (the surface's own slope between a cell's corners jumps at every cell
// border, which shaded land whose cells span several pixels as a grid of blocks). Texel c of the map holds the
// slope to point c + 1 along x: at place x it is read from x - 1/2 texels, texture coordinate x.
vec2 map_slope(vec2 place) {
    vec2 point = place / float(1 << cell_shift) + float(apron);  // in the stored map's texels
    vec2 size = vec2(textureSize(slopes, 0).xy);
    return vec2(texture(slopes, SLOPES_PLACE((point + vec2(0.0, 0.5)) / size)).r,
                texture(slopes, SLOPES_PLACE((point + vec2(0.5, 0.0)) / size)).g);
}

// A slope stored as the horizons' tangents are, s / (1 + |s|) from 0 to 1 (lighting.py), back to the slope.
float unsquashed(float stored) {
    float squashed = 2.0 * stored - 1.0;
    return squashed / max(1.0 - abs(squashed), 1e-3);
}

// How much of the sun's disc stands above the terrain's horizon toward it (soft), from the stored horizon: by the
// sine of the sun's elevation above the horizon, from the horizon's tangent with no arc tangent (dear per pixel on
// a software rasterizer). Within the penumbra an angle and its sine differ by under a part in 2,000; past a right
// angle (a high sun over a horizon far below) the sine falls again, but the sun is up there all the same.
float sunlit(float stored_horizon) {
    float tangent = unsquashed(stored_horizon);
    float sun_up = sun_direction.y;
    float to_unit = inversesqrt(1.0 + tangent * tangent);
    float sine = (sun_up - sun_across * tangent) * to_unit;  // of the sun's elevation less the horizon's
    float cosine = (sun_across + sun_up * tangent) * to_unit;
    return cosine < 0.0 ? step(0.0, sine) : smoothstep(-PENUMBRA, PENUMBRA, sine);
}

// The colour of the land at world_position, distance from the eye, at grid_coordinate in its map, seen through
// the haze's light haze.
vec3 natural_surface(vec3 world_position, float distance, vec2 grid_coordinate, vec3 haze) {
    vec2 uv = grid_coordinate / float(grid_size - 1);
    if (apron > 0) uv = (uv * float(light_texels - 1) + 0.5) / float(light_texels);  // a region's own points
    vec4 surface_facts = texture(light_maps, vec3(uv, SURFACE_LAYER));
    float sky_view = surface_facts[SKY_VIEW_CHANNEL];
    // The broad slope (lighting.py): snow lies by it; and where a pixel spans several cells it shades the land,
    // as a pixel's own facet there would be a random one of them (a speckle, not a slope).
    vec2 broad_gradient = vec2(unsquashed(surface_facts[BROAD_X_CHANNEL]), unsquashed(surface_facts[BROAD_Z_CHANNEL]));
    vec3 broad_normal = normalize(vec3(-broad_gradient.x, 1.0, -broad_gradient.y));
    // Where a pixel spans 2.5 cells or more the broad slope shades it alone, and the fine one is read at one
    // place for all such pixels: the map's far reaches, read a few pixels' cells apart, missed the caches (at
    // iterations 12 on llvmpipe that cost 4-6 ms of a 1280 x 720 frame, for a value weighed by 0).
    float footprint = pixel_footprint();
    float broadness = smoothstep(0.5, 2.5, cells_per_pixel(footprint));
    vec2 slope = mix(broad_gradient, map_slope(broadness < 1.0 ? grid_coordinate : vec2(0.0)), fine_slopes);
    vec3 fine_normal = normalize(vec3(-slope.x, 1.0, -slope.y));
    // Exactly the broad normal where it alone shades (a mix weighed 1 need not be exact on every GPU).
    vec3 normal = broadness < 1.0 ? normalize(mix(fine_normal, broad_normal, broadness)) : broad_normal;

    // Materials: grass on gentle slopes, soil between, rock on steep ones, snow high up where it can lie
    // (less on slopes facing the sun, none on broadly steep faces), sand along the shore. Noise breaks every
    // boundary. With erosion, the flow map: dark wet gullies where water ran, pale fans of fine sediment
    // (smoother) where it settled.
    vec2 water = eroded ? texture(water_maps, uv).rg : vec2(0.0);
    float grain = detail(world_position.xz, distance, footprint) * (1.0 - 0.6 * water.g);
    vec3 patches = broad_variation(world_position.xz, footprint);
    float broad = patches.r - 0.5;
    float steep = 1.0 - normal.y + 0.25 * broad + 0.3 * grain;
    float snow_steep = 1.0 - broad_normal.y + 0.25 * broad + 0.3 * grain;
    vec3 grass = mix(vec3(0.06, 0.10, 0.03), vec3(0.11, 0.13, 0.05), patches.g);
    vec3 soil = vec3(0.20, 0.15, 0.10);
    vec3 rock = mix(vec3(0.13, 0.11, 0.09), vec3(0.24, 0.21, 0.18), patches.b);
    vec3 snow = vec3(0.80, 0.83, 0.88);
    vec3 sand = vec3(0.45, 0.39, 0.28);
    vec3 albedo = mix(grass, soil, smoothstep(0.08, 0.22, steep));
    albedo = mix(albedo, rock, smoothstep(0.28, 0.45, steep));
    albedo = mix(albedo, vec3(0.21, 0.18, 0.14), 0.55 * smoothstep(0.15, 0.8, water.g));
    albedo = mix(albedo, vec3(0.05, 0.045, 0.035), 0.8 * smoothstep(0.1, 0.55, water.r + 0.1 * broad));
    float snow_line = snow_height + height_scale * (0.05 * broad - 0.04 * dot(normal, sun_direction));
    float snowy = smoothstep(snow_line, snow_line + 0.03 * height_scale, world_position.y);
    albedo = mix(albedo, snow, snowy * (1.0 - smoothstep(0.3, 0.5, snow_steep)));
    float shore = 1.0 - smoothstep(0.004, 0.02 + 0.01 * broad, world_position.y - water_level);
    albedo = mix(albedo, sand, shore * (1.0 - smoothstep(0.3, 0.5, steep)));
    albedo *= 1.0 + 0.6 * grain;

    float direct = max(dot(normal, sun_direction), 0.0) * sunlit(surface_facts[SUN_CHANNEL]);
    float occlusion = sky_view * (0.6 + 0.4 * normal.y);
    vec3 light = lit(albedo, direct, occlusion);
    return finish(through_air(light, haze, distance, haze_density));
}

