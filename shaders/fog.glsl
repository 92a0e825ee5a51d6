// The original's linear fog (glFog GL_LINEAR), shared by every fogged program.
// FOG_COLOR, FOG_START and FOG_END are the including program's defines (set by terrainview/gpu.py).
vec3 apply_fog(vec3 color, float eye_distance) {
    float visibility = clamp((FOG_END - eye_distance) / (FOG_END - FOG_START), 0.0, 1.0);
    return mix(FOG_COLOR, color, visibility);
}
