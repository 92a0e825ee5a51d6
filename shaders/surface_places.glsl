// The tiles' natural look's first pass leaves the land's distance from the eye in the colour's red, green and
// blue, 24 bits, low byte first: exact in the eight-bit channels a window's framebuffer has. The one encoding,
// for natural_terrain.glsl (PLACES), which writes it, and natural_surface.glsl, which reads it back.
uniform float place_reach;  // the distance that encodes as the largest value (the far plane's)

vec4 encoded_distance(float distance) {
    float scaled = floor(clamp(distance / place_reach, 0.0, 1.0) * 16777215.0 + 0.5);
    float high = floor(scaled / 65536.0);
    float middle = floor((scaled - high * 65536.0) / 256.0);
    return vec4(scaled - high * 65536.0 - middle * 256.0, middle, high, 255.0) / 255.0;
}

float decoded_distance(vec4 texel) {
    vec3 bytes = floor(texel.rgb * 255.0 + 0.5);
    return dot(bytes, vec3(1.0, 256.0, 65536.0)) / 16777215.0 * place_reach;
}
