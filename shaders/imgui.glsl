#version 330
// Dear ImGui's triangles: positions in ImGui's display coordinates (top-left origin), a texture (the font
// atlas or any other) modulated by the vertex colour.

#if defined VERTEX_SHADER

uniform vec2 display_pos;   // ImDrawData.DisplayPos: the display's top-left corner
uniform vec2 display_size;  // ImDrawData.DisplaySize
in vec2 in_position;
in vec2 in_texcoord_0;
in vec4 in_color;
out vec2 texcoord;
out vec4 color;

void main() {
    texcoord = in_texcoord_0;
    color = in_color;
    vec2 unit = (in_position - display_pos) / display_size;  // 0..1, y down
    gl_Position = vec4(unit.x * 2.0 - 1.0, 1.0 - unit.y * 2.0, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

uniform sampler2D image;
in vec2 texcoord;
in vec4 color;
out vec4 fragment_color;

void main() {
    fragment_color = color * texture(image, texcoord);
}

#endif
