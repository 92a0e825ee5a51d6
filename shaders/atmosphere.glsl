// The natural look's light and air, shared by its sky, terrain and water programs.
// A single-scattering daylight sky: Rayleigh (blue, by 1/wavelength^4) and Mie (haze) scattering of the sun's
// light along the view ray through an exponential atmosphere, with the sun's own light reddened by the air it
// crosses (a low sun is warm). Distances through the air are relative air masses (1 at the zenith). Everything
// is linear light; finish() applies the exposure, a filmic tone curve and sRGB.
// SUN_DIRECTION is a uniform the including program declares: the unit vector toward the sun.

const vec3 RAYLEIGH = vec3(0.058, 0.135, 0.331);  // scattering per 8 km scale height, red/green/blue (Rayleigh)
const float MIE = 0.021;                          // haze scattering per 1.2 km scale height
const float MIE_G = 0.7;                         // haze's forward scattering (Henyey-Greenstein g)
const float SUN_ILLUMINANCE = 20.0;               // the sun's light above the air, in the sky's units
const float SUN_DISC_COS = 0.99996;               // cos(0.5 degree): the sun's disc, a little larger than life
const float SKY_GAIN = 4.0;                       // aerosols and multiple scattering: what single scattering misses
const float PI = 3.14159265;

// Relative air mass toward a direction of sine-elevation mu (Kasten and Young's formula), finite at and below
// the horizon.
float air_mass(float mu) {
    float elevation = degrees(asin(clamp(mu, 0.0, 1.0)));
    return 1.0 / (max(mu, 0.0) + 0.50572 * pow(elevation + 6.07995, -1.6364));
}

vec3 extinction() {
    return RAYLEIGH + vec3(MIE);
}

// The sun's light at the ground: reddened by the air it crossed.
vec3 sunlight(vec3 sun) {
    return SUN_ILLUMINANCE * exp(-extinction() * air_mass(sun.y)) * smoothstep(-0.1, 0.02, sun.y);
}

// The sky's light from direction (unit) for the sun toward sun (unit); no sun disc.
vec3 sky_light(vec3 direction, vec3 sun) {
    float mu = max(direction.y, 0.0);
    float cos_angle = dot(direction, sun);
    float rayleigh_phase = 0.0596831 * (1.0 + cos_angle * cos_angle);
    float g2 = MIE_G * MIE_G;
    float mie_phase = 0.0795775 * (1.0 - g2) / pow(1.0 + g2 - 2.0 * MIE_G * cos_angle, 1.5);
    vec3 scattering = RAYLEIGH * rayleigh_phase + vec3(MIE * mie_phase);
    vec3 depth = extinction() * air_mass(mu);
    // In-scattered light along the ray, each bit dimmed by the air behind it, lit by the sun as it is up where
    // the scattering happens (through about a third of the air the ground's sunlight crosses).
    vec3 aloft = SUN_ILLUMINANCE * exp(-extinction() * air_mass(sun.y) * 0.35) * smoothstep(-0.1, 0.02, sun.y);
    vec3 light = aloft * scattering / extinction() * (1.0 - exp(-depth));
    // A little light scattered more than once keeps twilight and shadows from going black.
    return SKY_GAIN * light + 0.01 * SUN_ILLUMINANCE * RAYLEIGH * smoothstep(-0.2, 0.3, sun.y);
}

// The sky's mean radiance over the upper hemisphere (cosine-weighted): the ambient light a surface facing up
// gets, which occlusion dims.
vec3 sky_ambient(vec3 sun) {
    return 0.6 * sky_light(normalize(vec3(0.0, 1.0, 0.2)), sun) + 0.4 * sky_light(normalize(vec3(0.9, 0.3, 0.0)), sun);
}

// A Lambertian surface's radiance: albedo over pi of the sun's irradiance at its angle, plus the sky's.
vec3 lit(vec3 albedo, float sun_cosine, float occlusion, vec3 sun) {
    return albedo * (sunlight(sun) * sun_cosine / PI + sky_ambient(sun) * occlusion);
}

// The sun's disc seen along direction.
vec3 sun_disc(vec3 direction, vec3 sun) {
    return sunlight(sun) * 40.0 * smoothstep(SUN_DISC_COS - 0.00002, SUN_DISC_COS, dot(direction, sun));
}

// Air between the eye and a point distance away seen along direction: what is left of the point's light plus
// the light the air scatters toward the eye. The haze is thin near the eye and thickens with distance (by its
// square) until it is the sky's own light at the horizon, so far land fades into the sky.
vec3 aerial(vec3 color, vec3 direction, float distance, vec3 sun, float haze_density) {
    vec3 horizon_direction = normalize(vec3(direction.x, max(direction.y, 0.02), direction.z));
    float transmittance = exp(-distance * distance * haze_density);
    return color * transmittance + sky_light(horizon_direction, sun) * (1.0 - transmittance);
}

// Exposure for the sun's height, so noon and sunset both look right untouched: a sunlit mid-grey surface
// comes out at about half brightness.
float exposure(vec3 sun) {
    vec3 light = sunlight(sun) * max(sun.y, 0.0) / PI + sky_ambient(sun);
    return 1.5 / (0.6 + dot(light, vec3(0.2126, 0.7152, 0.0722)));
}

vec3 srgb(vec3 linear) {
    vec3 low = linear * 12.92;
    vec3 high = 1.055 * pow(linear, vec3(1.0 / 2.4)) - 0.055;
    return mix(low, high, step(vec3(0.0031308), linear));
}

// Linear light to the displayed colour: exposure, a filmic curve (Narkowicz's fit of ACES), sRGB.
vec3 finish(vec3 light, vec3 sun) {
    vec3 x = light * exposure(sun);
    vec3 mapped = clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0);
    return srgb(mapped);
}
