/* A plain, single-threaded C run of terrainview.erosion's hydraulic erosion: the yardstick for the numba kernel.
 *
 * The straightforward way: one droplet after another, every brush point wrapped with a modulo, no special
 * cases. The same model, hash and double operations in the same order as the kernel walks a map of one block
 * (below iterations 8; larger maps it walks block by block), so there the eroded map is bit for bit
 * terrainview's (bench/erosion.py checks that, which keeps the comparison honest). Compile without
 * floating-point contraction (-ffp-contract=off) so that no multiply-add is fused.
 *
 * Usage: erosion_reference SIZE HEIGHTS.f64 BRUSH.bin BRUSH_COUNT KEY DROPLETS STEP_CELLS CELL STEP
 *            STRENGTH CAPACITY DEPOSITION EVAPORATION INERTIA LIFETIME MIN_SLOPE GRAVITY REPEATS OUT.f64
 * HEIGHTS.f64: the SIZE x SIZE torus as doubles; BRUSH.bin: BRUSH_COUNT int64 rows, as many int64 columns,
 * as many double weights. Prints the median seconds of REPEATS runs (each on a fresh copy of the heights) and
 * writes the last result to OUT.f64.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash32.h"

typedef struct {
    long size, brush_count, droplets, lifetime;
    const int64_t *rows, *columns;
    const double *weights;
    uint32_t key;
    double step_cells, cell, step, strength, capacity, deposition, evaporation, inertia, min_slope, gravity;
} Model;

static long wrap(long value, long size) { return ((value % size) + size) % size; }

static double sample(const double *map, long size, double x, double z, double *gx, double *gz) {
    long column = (long)floor(x), row = (long)floor(z);
    double fx = x - column, fz = z - row;
    double h00 = map[wrap(row, size) * size + wrap(column, size)];
    double h01 = map[wrap(row, size) * size + wrap(column + 1, size)];
    double h10 = map[wrap(row + 1, size) * size + wrap(column, size)];
    double h11 = map[wrap(row + 1, size) * size + wrap(column + 1, size)];
    *gx = (h01 - h00) * (1.0 - fz) + (h11 - h10) * fz;
    *gz = (h10 - h00) * (1.0 - fx) + (h11 - h01) * fx;
    return (h00 * (1.0 - fx) + h01 * fx) * (1.0 - fz) + (h10 * (1.0 - fx) + h11 * fx) * fz;
}

static void erode(const Model *m, double *map) {
    long size = m->size;
    const double inv = 1.0 / 16777216.0;
    for (long droplet = 0; droplet < m->droplets; droplet++) {
        uint32_t counter = (uint32_t)droplet * 2u;
        double x = (double)(hash32(counter ^ m->key) >> 8) * inv * size;
        double z = (double)(hash32((counter + 1u) ^ m->key) >> 8) * inv * size;
        double dx = 0.0, dz = 0.0, speed = 1.0, water = 1.0, sediment = 0.0, gx, gz, unused_x, unused_z;
        for (long step = 0; step < m->lifetime; step++) {
            double height = sample(map, size, x, z, &gx, &gz);
            dx = dx * m->inertia - gx / m->cell * (1.0 - m->inertia);
            dz = dz * m->inertia - gz / m->cell * (1.0 - m->inertia);
            double length = sqrt(dx * dx + dz * dz);
            if (length == 0.0) {
                uint32_t bits = hash32(hash32((uint32_t)droplet ^ m->key) + (uint32_t)step);
                double angle = 2.0 * M_PI * ((double)(bits >> 8) * inv);
                dx = cos(angle);
                dz = sin(angle);
            } else {
                dx /= length;
                dz /= length;
            }
            double new_x = x + dx * m->step_cells, new_z = z + dz * m->step_cells;
            double drop = sample(map, size, new_x, new_z, &unused_x, &unused_z) - height;
            double change;
            if (drop > 0.0) {
                change = drop < sediment ? drop : sediment;
            } else {
                double slope = -drop > m->min_slope * m->step ? -drop : m->min_slope * m->step;
                double room = slope * speed * water * m->capacity;
                if (sediment > room) {
                    change = (sediment - room) * m->deposition;
                } else {
                    double wanted = (room - sediment) * m->strength;
                    change = -(wanted < -drop ? wanted : -drop);
                }
            }
            sediment -= change;
            long row = (long)floor(z + 0.5), column = (long)floor(x + 0.5);
            for (long k = 0; k < m->brush_count; k++)
                map[wrap(row + m->rows[k], size) * size + wrap(column + m->columns[k], size)] += change * m->weights[k];
            double squared = speed * speed - drop * m->gravity;
            speed = sqrt(squared > 0.0 ? squared : 0.0);
            water *= 1.0 - m->evaporation;
            x = new_x - size * floor(new_x / size);
            z = new_z - size * floor(new_z / size);
        }
    }
}

static void *read_file(const char *path, size_t bytes) {
    void *data = malloc(bytes);
    FILE *file = fopen(path, "rb");
    if (!data || !file || fread(data, 1, bytes, file) != bytes) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(file);
    return data;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 20) {
        fprintf(stderr, "usage: see the comment at the top of erosion_reference.c\n");
        return 2;
    }
    Model m;
    m.size = atol(argv[1]);
    m.brush_count = atol(argv[4]);
    size_t cells = (size_t)m.size * m.size, count = (size_t)m.brush_count;
    double *heights = read_file(argv[2], cells * sizeof(double));
    char *brush = read_file(argv[3], count * (2 * sizeof(int64_t) + sizeof(double)));
    m.rows = (const int64_t *)brush;
    m.columns = m.rows + count;
    m.weights = (const double *)(m.columns + count);
    m.key = (uint32_t)strtoul(argv[5], NULL, 10);
    m.droplets = atol(argv[6]);
    m.step_cells = atof(argv[7]);
    m.cell = atof(argv[8]);
    m.step = atof(argv[9]);
    m.strength = atof(argv[10]);
    m.capacity = atof(argv[11]);
    m.deposition = atof(argv[12]);
    m.evaporation = atof(argv[13]);
    m.inertia = atof(argv[14]);
    m.lifetime = atol(argv[15]);
    m.min_slope = atof(argv[16]);
    m.gravity = atof(argv[17]);
    int repeats = atoi(argv[18]);
    double *map = malloc(cells * sizeof(double)), *seconds = malloc(repeats * sizeof(double));
    for (int r = 0; r < repeats; r++) {
        memcpy(map, heights, cells * sizeof(double));
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        erode(&m, map);
        clock_gettime(CLOCK_MONOTONIC, &end);
        seconds[r] = (end.tv_sec - start.tv_sec) + 1e-9 * (end.tv_nsec - start.tv_nsec);
    }
    qsort(seconds, repeats, sizeof(double), compare);
    printf("%.6f\n", seconds[repeats / 2]);
    FILE *out = fopen(argv[19], "wb");
    if (!out || fwrite(map, sizeof(double), cells, out) != cells) {
        fprintf(stderr, "cannot write %s\n", argv[19]);
        return 1;
    }
    fclose(out);
    return 0;
}
