#version 330
// A textured rectangle in normalised device coordinates (clouds mode, teximage mode, the window's drafts).

#if defined VERTEX_SHADER

uniform vec4 rectangle;     // x0, y0, x1, y1 in NDC
uniform mat4 ndc_window;    // maps the whole image to the part being rendered (tiled shots)
out vec2 texcoord;

void main() {
    vec2 corner = vec2(gl_VertexID % 2, gl_VertexID / 2);
    texcoord = corner;
    gl_Position = ndc_window * vec4(mix(rectangle.xy, rectangle.zw, corner), 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

uniform sampler2D image;
in vec2 texcoord;
out vec4 fragment_color;

void main() {
    fragment_color = vec4(texture(image, texcoord).rgb, 1.0);
}

#endif
