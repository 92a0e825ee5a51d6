// The natural look's daylight model, evaluated by the sky-view table (sky_table.glsl) whenever the sun moves; the other
// natural programs read that table (sky_view.glsl).
// A single-scattering daylight sky: Rayleigh (blue, by 1/wavelength^4) and Mie (haze) scattering of the sun's
// light along the view ray through an exponential atmosphere, with the sun's own light reddened by the air it
// crosses (a low sun is warm). Distances through the air are relative air masses (1 at the zenith). Everything
// is linear light.

const vec3 RAYLEIGH = vec3(0.058, 0.135, 0.331);  // scattering per 8 km scale height, red/green/blue (Rayleigh)
const float MIE = 0.021;                          // haze scattering per 1.2 km scale height
const vec3 OZONE = vec3(0.0098, 0.028, 0.0013);   // ozone's absorption overhead (Chappuis band: green and red)
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

// The sun's light above the lower air: what the ozone high up leaves of it (little, except at a low sun, when
// taking green and red keeps the twilight sky blue).
vec3 sun_above(vec3 sun) {
    return SUN_ILLUMINANCE * exp(-OZONE * air_mass(sun.y)) * smoothstep(-0.1, 0.02, sun.y);
}

// The sun's light at the ground: reddened by the air it crossed.
vec3 sunlight(vec3 sun) {
    return sun_above(sun) * exp(-extinction() * air_mass(sun.y));
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
    // In-scattered light along the ray, each bit dimmed by the air behind it, lit by the sun as it is where the
    // scattering happens. Toward the horizon the ray stays low, in the dense air that reddens the ground's
    // sunlight (about half of its path on average); looking up it climbs into thin air that even a setting sun
    // lights nearly white, so the zenith stays blue at sunset while the horizon glows. Up a column of
    // exponential air the sun's mean transmittance is (1 - exp(-t)) / t, t its optical depth at the ground.
    vec3 sun_depth = extinction() * air_mass(sun.y);
    vec3 low = exp(-0.5 * sun_depth), column = (1.0 - exp(-sun_depth)) / max(sun_depth, vec3(1e-4));
    vec3 aloft = sun_above(sun) * mix(low, column, sqrt(mu));
    vec3 light = aloft * scattering / extinction() * (1.0 - exp(-depth));
    // A little light scattered more than once keeps twilight and shadows from going black.
    return SKY_GAIN * light + 0.01 * SUN_ILLUMINANCE * RAYLEIGH * smoothstep(-0.2, 0.3, sun.y);
}

// The sky's mean radiance over the upper hemisphere (cosine-weighted): the ambient light a surface facing up
// gets, which occlusion dims.
vec3 sky_ambient(vec3 sun) {
    return 0.6 * sky_light(normalize(vec3(0.0, 1.0, 0.2)), sun) + 0.4 * sky_light(normalize(vec3(0.9, 0.3, 0.0)), sun);
}

// Exposure for the sun's height, so noon and sunset both look right untouched: a sunlit mid-grey surface
// comes out at about half brightness.
float exposure(vec3 sun) {
    vec3 light = sunlight(sun) * max(sun.y, 0.0) / PI + sky_ambient(sun);
    return 1.8 / (1.5 + dot(light, vec3(0.2126, 0.7152, 0.0722)));
}
