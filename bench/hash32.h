/* Wellons' lowbias32, the hash of terrainview/kernel_common.py: a bijective 32-bit integer hash shared by the
 * C references (reference.c, erosion_reference.c). */
#ifndef TERRAINVIEW_HASH32_H
#define TERRAINVIEW_HASH32_H
#include <stdint.h>

static uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}
#endif
