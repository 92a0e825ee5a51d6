/* A plain, single-threaded diamond-square in C: the yardstick for terrainview.fractal's numba kernel.
 *
 * One array updated in place, pass after pass, in the textbook order: every diamond centre of a pass, then
 * every square-step point row by row, neighbours beyond an edge taken from the opposite side. The offsets
 * use terrainview's counter-based hash and the same float32 operations in the same order, so the result is
 * bit for bit terrainview's (bench/kernels.py checks that, which keeps the comparison honest).
 *
 * Usage: reference ITERATIONS SEED H HEIGHT_SCALE REPEATS [OUT.f32]
 * Prints the median seconds of REPEATS runs, each allocating (calloc) and freeing its own array; with
 * OUT.f32, writes the last heightmap there as raw float32.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { LATTICE_BITS = 16 };
static const uint32_t DOMAIN_2D = 0x3C6EF372u;

#include "hash32.h"

/* scale * r, r uniform in [-0.5, 0.5), for the lattice position of point (z, x). */
static float offset(uint32_t key, int shift, int z, int x, float scale) {
    uint32_t index = (((uint32_t)z << shift) << LATTICE_BITS) + ((uint32_t)x << shift);
    uint32_t bits = hash32(hash32(index ^ key));  /* two rounds, as terrainview.fractal */
    return ((float)(int32_t)(bits >> 8) * (1.0f / 16777216.0f) - 0.5f) * scale;
}

static float *diamond_square(int iterations, uint32_t seed, double h, double height_scale) {
    int last = 1 << iterations, size = last + 1, shift = LATTICE_BITS - iterations;
    uint32_t key = hash32(seed ^ DOMAIN_2D);
    float *a = calloc((size_t)size * size, sizeof *a);
    if (!a) return NULL;
    double ratio = pow(2.0, -h), scale_acc = height_scale * ratio;
#define A(z, x) a[(size_t)(z) * size + (x)]
    for (int s = last / 2; s >= 1; s /= 2) {
        float scale = (float)scale_acc;
        scale_acc *= ratio;
        /* Diamond step: each square's centre from its four corners. */
        for (int z = s; z < last; z += 2 * s)
            for (int x = s; x < last; x += 2 * s)
                A(z, x) = (A(z - s, x - s) + A(z - s, x + s) + A(z + s, x - s) + A(z + s, x + s)) * 0.25f
                          + offset(key, shift, z, x, scale);
        /* Square step: each diamond's centre from its four neighbours, wrapping across the edges; the last
         * row and column repeat the first. */
        for (int z = 0; z < last; z += s) {
            for (int x = (z / s) % 2 == 0 ? s : 0; x < last; x += 2 * s) {
                float left = x == 0 ? A(z, last - s) : A(z, x - s);
                float up = z == 0 ? A(last - s, x) : A(z - s, x);
                A(z, x) = (left + A(z, x + s) + up + A(z + s, x)) * 0.25f + offset(key, shift, z, x, scale);
                if (x == 0) A(z, last) = A(z, 0);
                if (z == 0) A(last, x) = A(0, x);
            }
        }
    }
#undef A
    return a;
}

static int compare(const void *p, const void *q) {
    double a = *(const double *)p, b = *(const double *)q;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s ITERATIONS SEED H HEIGHT_SCALE REPEATS [OUT.f32]\n", argv[0]);
        return 2;
    }
    int iterations = atoi(argv[1]), repeats = atoi(argv[5]);
    uint32_t seed = (uint32_t)strtoul(argv[2], NULL, 10);
    double h = atof(argv[3]), height_scale = atof(argv[4]);
    if (iterations < 1 || iterations > LATTICE_BITS || repeats < 1) {
        fprintf(stderr, "ITERATIONS must be 1..%d and REPEATS at least 1\n", LATTICE_BITS);
        return 2;
    }
    double *seconds = malloc(repeats * sizeof *seconds);
    float *heights = NULL;
    for (int i = 0; i < repeats; i++) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        free(heights);
        heights = diamond_square(iterations, seed, h, height_scale);
        clock_gettime(CLOCK_MONOTONIC, &end);
        if (!heights || !seconds) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        seconds[i] = (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec);
    }
    qsort(seconds, repeats, sizeof *seconds, compare);
    printf("%.9f\n", seconds[repeats / 2]);
    if (argc > 6) {
        size_t count = (size_t)((1 << iterations) + 1) * ((1 << iterations) + 1);
        FILE *out = fopen(argv[6], "wb");
        if (!out || fwrite(heights, sizeof *heights, count, out) != count || fclose(out) != 0) {
            fprintf(stderr, "cannot write %s\n", argv[6]);
            return 1;
        }
    }
    free(heights);
    free(seconds);
    return 0;
}
