// Reading the natural look's sky-view table (made by sky_table.glsl from atmosphere.glsl's model whenever the
// sun moves): the sky's light by direction; the table's row of constants (the sun's light at the ground, the
// ambient sky light, the exposure and the haze's light straight down) comes as uniforms, read back once per sun (a
// fetch a pixel each cost about 5% of a frame on llvmpipe). Then what every natural program shares: Lambertian
// lighting, aerial perspective, the sun's disc, and finish() (exposure, a filmic tone curve, sRGB).
const float PI_VIEW = 3.14159265;
const float SUN_DISC_COSINE = 0.99996;  // cos(0.5 degree): the sun's disc, a little larger than life
uniform sampler2D sky_table;
uniform vec3 sun_direction;
uniform vec3 sun_light;       // the sun's light at the ground
uniform vec3 ambient_light;   // the sky's, on ground facing up
uniform float exposure_scale; // what finish() multiplies linear light by
uniform vec3 horizon_haze;    // the haze's light looking straight down (sky_table.glsl's haze_below)

#include "sky_table_layout.glsl"

vec3 sky(vec3 direction) {
    return texture(sky_table, sky_table_place(direction)).rgb;
}

vec3 lit(vec3 albedo, float sun_cosine, float occlusion) {
    return albedo * (sun_light * sun_cosine / PI_VIEW + ambient_light * occlusion);
}

vec3 sun_disc(vec3 direction) {
    return sun_light * 40.0 * smoothstep(SUN_DISC_COSINE - 0.00002, SUN_DISC_COSINE, dot(direction, sun_direction));
}

// The light of the haze seen along direction: the sky's own at the horizon. Below it, the horizon's at the same
// bearing gives way to every bearing's average (horizon_haze) as the view turns down, by the eighth power of the
// cosine of its angle below the horizon: half at 23 degrees down, a sixteenth at 45. The bearing's own, which
// turns all the way round about the point under the eye, drew a bright wedge pointing at it at a low sun.
vec3 haze_light(vec3 direction) {
    vec3 horizon = sky(normalize(vec3(direction.x, max(direction.y, HAZE_ELEVATION), direction.z)));
    float across = dot(direction.xz, direction.xz);  // the cosine squared
    across *= across;
    return direction.y >= HAZE_ELEVATION ? horizon : mix(horizon_haze, horizon, across * across);
}

// Air between the eye and a point distance away: what is left of the point's light plus the light the air
// scatters toward the eye (haze, haze_light's). The haze is thin near the eye and thickens with distance (by its
// square) until it is the sky's own light at the horizon, so far land fades into the sky.
vec3 through_air(vec3 color, vec3 haze, float distance, float haze_density) {
    float transmittance = exp(-distance * distance * haze_density);
    return color * transmittance + haze * (1.0 - transmittance);
}

vec3 aerial(vec3 color, vec3 direction, float distance, float haze_density) {
    return through_air(color, haze_light(direction), distance, haze_density);
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
    vec3 x = light * exposure_scale;
    vec3 mapped = clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0);
    return srgb(mapped);
}
