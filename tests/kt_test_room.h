/* kt_test_room.h - comparing two rooms' fields node by node, for the tests
 * that hold a CPU and a GPU room side by side (they include room_internal.h).
 * The halo is left out: it is scratch each sweep refills (the GPU's two-grid
 * sweep computes the walls' ghosts in registers and never stores them). */
#ifndef KT_TEST_ROOM_H
#define KT_TEST_ROOM_H

#include "room_internal.h"

#include <math.h>

/* max |a - b| / max |a| over the nodes of a's grid (b has the same layout);
 * infinity when a is silent. */
static inline double kt_test_node_difference(const kt_room *a, const void *fa, const kt_room *b,
                                             const void *fb)
{
    double diff = 0, scale = 0;
    for (int z = a->plan.z0; z < a->plan.z_end; z++)
        for (int y = 0; y < a->plan.grid.ny; y++)
            for (int x = 0; x < a->plan.grid.nx; x++) {
                if (a->plan.fcc && (x + y + z) % 2)
                    continue;
                size_t i = room_node_index(a, x, y, z);
                double u = room_get(a, fa, i), v = room_get(b, fb, i);
                diff = fmax(diff, fabs(u - v));
                scale = fmax(scale, fabs(u));
            }
    return scale > 0 ? diff / scale : INFINITY;
}

#endif
