/* kt_test_room.h - comparing two rooms' fields node by node, for the tests
 * that hold two rooms side by side (CPU and GPU, or blocked and one step at
 * a time; they include room_internal.h).
 * The halo is left out: it is scratch each sweep refills (the GPU's two-grid
 * sweep computes the walls' ghosts in registers and never stores them). */
#ifndef KT_TEST_ROOM_H
#define KT_TEST_ROOM_H

#include "kt_config.h"
#include "kt_test.h"
#include "room_internal.h"

#include <math.h>
#include <string.h>

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

/* max |a - b| / max |a| across every microphone of two rooms; infinity when
 * a microphone's sample counts differ or a is silent.  *count_b (may be
 * NULL) receives b's count of the last microphone compared. */
static inline double kt_test_mic_difference(const kt_room *a, const kt_room *b, int64_t *count_b)
{
    double diff = 0, scale = 0;
    for (int m = 0; m < kt_room_mic_count(a); m++) {
        int64_t na, nb;
        const double *sa = kt_room_mic_signal(a, m, &na), *sb = kt_room_mic_signal(b, m, &nb);
        if (count_b)
            *count_b = nb;
        if (na != nb)
            return INFINITY;
        for (int64_t s = 0; s < na; s++) {
            diff = fmax(diff, fabs(sa[s] - sb[s]));
            scale = fmax(scale, fabs(sa[s]));
        }
    }
    return scale > 0 ? diff / scale : INFINITY;
}

/* Both fields node by node (the halo left out) and every microphone's
 * samples, bit for bit; the step index too. */
static inline int kt_test_same_bits(const kt_room *a, const kt_room *b)
{
    const size_t es = kt_precision_bytes(a->plan.params.precision);
    if (a->n != b->n)
        return 0;
    for (int f = 0; f < 2; f++) {
        const char *fa = f ? a->prev : a->now, *fb = f ? b->prev : b->now;
        for (int z = 0; z < a->plan.grid.nz; z++)
            for (int y = 0; y < a->plan.grid.ny; y++) {
                size_t i = room_pidx(a, 0, y, z);
                if (memcmp(fa + i * es, fb + i * es, es * (size_t)a->plan.grid.nx) != 0)
                    return 0;
            }
    }
    for (int m = 0; m < a->plan.mic_count; m++) {
        const room_mic *ma = &a->plan.mic[m], *mb = &b->plan.mic[m];
        if (ma->count != mb->count ||
            memcmp(ma->signal, mb->signal, sizeof(double) * (size_t)ma->count) != 0)
            return 0;
    }
    return 1;
}

#if KETTLE_CUDA_ENABLED
#include "kt_cuda_room.h"

/* Mirrors the room on the GPU, steps it there in the given pieces (uneven
 * ones cross partial batches and whole graphs) with batches of `batch`
 * steps, and brings the state home; KT_OK or the first failure, checked. */
static inline int kt_test_mirror_pieces(kt_room *room, int batch, const int64_t *piece,
                                        int pieces, const char *what)
{
    kt_error err;
    kt_cuda_mirror *M = NULL;
    int rc = kt_cuda_mirror_create(room, &M, &err);
    KT_CHECK(rc == KT_OK, "%s: mirror: %s", what, err.message);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_set_batch(M, batch, &err);
    for (int k = 0; k < pieces && rc == KT_OK; k++) {
        rc = kt_cuda_mirror_run(M, piece[k], &err);
        KT_CHECK(rc == KT_OK, "%s: GPU run: %s", what, err.message);
    }
    if (rc == KT_OK) {
        rc = kt_cuda_mirror_download(M, &err);
        KT_CHECK(rc == KT_OK, "%s: download: %s", what, err.message);
    }
    kt_cuda_mirror_free(M);
    return rc;
}
#endif

#endif
