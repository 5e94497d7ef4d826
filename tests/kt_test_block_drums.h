/* kt_test_block_drums.h - the room of the temporal-blocking tests with drums
 * (test_room_block_drums on the CPU, test_gpu_room_block_drums on the GPU):
 * 2.0 x 1.3 x height m at 11025 Hz, lossy walls (beta 0.4), a 23 and a 26
 * inch drum with rims 0.75 m up struck at once, a source inside the drums'
 * band and one above it, a microphone on the layers a drum corrects and one
 * moving down through the band; and the comparison of two such rooms. */
#ifndef KT_TEST_BLOCK_DRUMS_H
#define KT_TEST_BLOCK_DRUMS_H

#include "kettle.h"
#include "kt_test_room.h"
#include "timpani.h"

#include <string.h>

typedef struct kt_test_drummed {
    kt_room *room;
    kt_timpani *drum[2];
} kt_test_drummed;

/* The room (a 2.4 m room is about 45 planes, the drums' band about 15);
 * threads > 0 sets the room's and the drums' threads; the moving
 * microphone reaches its low point after move_steps steps.  0 or -1. */
static inline int kt_test_drummed_build(kt_precision precision, double height_m, int threads,
                                        double move_steps, kt_test_drummed *d, kt_error *err)
{
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.size_m[0] = 2.0;
    rp.size_m[1] = 1.3;
    rp.size_m[2] = height_m;
    rp.sample_rate_hz = 11025;
    if (threads > 0)
        rp.nthreads = threads;
    rp.precision = precision;
    rp.wall_beta = 0.4;
    memset(d, 0, sizeof *d);
    if (kt_room_create(&rp, &d->room, err) < 0)
        return -1;
    static const struct { int inches; double x_m, y_m; } set[2] = {{23, 0.5, 0.62},
                                                                   {26, 1.42, 0.66}};
    for (int k = 0; k < 2; k++) {
        kt_timpani_params p;
        if (kt_timpani_params_standard(&p, set[k].inches, err) < 0)
            return -1;
        p.rim_centre_m[0] = set[k].x_m;
        p.rim_centre_m[1] = set[k].y_m;
        p.rim_centre_m[2] = 0.75;
        if (threads > 0)
            p.nthreads = threads;
        if (createTimpani(d->room, &p, &d->drum[k], err) < 0 ||
            kt_timpani_strike(d->drum[k], 1e-3 * (k + 1), 60.0 + 20 * k, 1e-3, 0.2, 0.05,
                              err) < 0)
            return -1;
    }
    const double dt = kt_room_get_grid(d->room)->time_step_s;
    const double in_band[3] = {1.0, 0.4, 0.7}, above[3] = {0.9, 1.0, height_m - 0.8};
    const double edge[3] = {1.5, 0.7, 0.78}, top[3] = {0.3, 1.1, height_m - 0.3};
    const double low[3] = {1.8, 0.2, 0.2};
    return kt_room_add_impulse(d->room, in_band, 2 * dt, 9 * dt, 1e-3, err) < 0 ||
                   kt_room_add_impulse(d->room, above, 5 * dt, 9 * dt, 1e-3, err) < 0 ||
                   kt_room_add_mic(d->room, "edge", edge, err) < 0 ||
                   kt_room_add_mic(d->room, "moving", top, err) < 0 ||
                   kt_room_mic_waypoint(d->room, 1, 0, top, err) < 0 ||
                   kt_room_mic_waypoint(d->room, 1, move_steps * dt, low, err) < 0
               ? -1
               : 0;
}

/* Both fields node by node, every sample, each membrane and its energy. */
static inline int kt_test_drummed_same_bits(const kt_test_drummed *a, const kt_test_drummed *b)
{
    if (!kt_test_same_bits(a->room, b->room))
        return 0;
    for (int k = 0; k < 2; k++) {
        double ea = kt_timpani_energy(a->drum[k]), eb = kt_timpani_energy(b->drum[k]);
        kt_timpani_info ia;
        kt_timpani_get_info(a->drum[k], &ia);
        size_t nodes = (size_t)ia.membrane_n * (size_t)ia.membrane_n;
        if (memcmp(&ea, &eb, sizeof ea) != 0 ||
            memcmp(kt_timpani_displacement(a->drum[k]), kt_timpani_displacement(b->drum[k]),
                   nodes * sizeof(double)) != 0)
            return 0;
    }
    return 1;
}

#endif
