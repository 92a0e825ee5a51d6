// Reading the natural look's sky-view table (made each frame by sky_table.glsl from atmosphere.glsl's model):
// the sky's light by direction, the sun's light at the ground, the ambient sky light and the exposure, then
// what every natural program shares: Lambertian lighting, aerial perspective, the sun's disc, and finish()
// (exposure, a filmic tone curve, sRGB). SKY_TABLE_WIDTH and SKY_TABLE_ROWS are defines from gpu.py.
#define SKY_TABLE_WIDTH 64
#define SKY_TABLE_ROWS 32
const float PI_VIEW = 3.14159265;
const float SUN_DISC_COSINE = 0.99996;  // cos(0.5 degree): the sun's disc, a little larger than life
uniform sampler2D sky_table;
uniform vec3 sun_direction;

// Where a direction's light is kept: bearing across, the square root of elevation up (finer near the horizon).
vec2 sky_table_place(vec3 direction) {
    float bearing = atan(direction.x, -direction.z) / (2.0 * PI_VIEW) + 0.5;
    float elevation = asin(clamp(direction.y, 0.0, 1.0)) / (0.5 * PI_VIEW);
    float row = sqrt(elevation) * float(SKY_TABLE_ROWS - 1) + 0.5;
    return vec2(bearing, row / float(SKY_TABLE_ROWS + 1));
}

vec3 sky(vec3 direction) {
    return texture(sky_table, sky_table_place(direction)).rgb;
}

vec3 constant_of_sky(int index) {
    return texelFetch(sky_table, ivec2(index, SKY_TABLE_ROWS), 0).rgb;
}

vec3 sun_at_ground() { return constant_of_sky(0); }
vec3 ambient_sky() { return constant_of_sky(1); }

vec3 lit(vec3 albedo, float sun_cosine, float occlusion) {
    return albedo * (sun_at_ground() * sun_cosine / PI_VIEW + ambient_sky() * occlusion);
}

vec3 sun_disc(vec3 direction) {
    return sun_at_ground() * 40.0 * smoothstep(SUN_DISC_COSINE - 0.00002, SUN_DISC_COSINE, dot(direction, sun_direction));
}

// Air between the eye and a point distance away seen along direction: what is left of the point's light plus
// the light the air scatters toward the eye. The haze is thin near the eye and thickens with distance (by its
// square) until it is the sky's own light at the horizon, so far land fades into the sky.
vec3 aerial(vec3 color, vec3 direction, float distance, float haze_density) {
    vec3 horizon_direction = normalize(vec3(direction.x, max(direction.y, 0.02), direction.z));
    float transmittance = exp(-distance * distance * haze_density);
    return color * transmittance + sky(horizon_direction) * (1.0 - transmittance);
}

// sRGB's curve: 1.055 x^(1/2.4) - 0.055 above its linear toe, here from three square roots (Ian Taylor's fit,
// within a quarter of a level of 255 over 0..1): a pow per channel is the dearest thing in a software rasterizer.
vec3 srgb(vec3 linear) {
    vec3 low = linear * 12.92;
    vec3 root = sqrt(linear), root4 = sqrt(root), root8 = sqrt(root4);
    vec3 high = 0.662002687 * root + 0.684122060 * root4 - 0.323583601 * root8 - 0.0225411470 * linear;
    return mix(low, high, step(vec3(0.0031308), linear));
}

// Linear light to the displayed colour: exposure, a filmic curve (Narkowicz's fit of ACES), sRGB.
vec3 finish(vec3 light) {
    vec3 x = light * constant_of_sky(2).r;
    vec3 mapped = clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0);
    return srgb(mapped);
}
