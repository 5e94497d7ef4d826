/* test_room_block_drums.c - temporal blocking around drums (room_block.c,
 * the hand-over): a room with two timpani, lossy walls, a source inside the
 * instruments' band and one above it, a fixed microphone on the band's
 * edge and one moving down through it, run by kt_room_run in blocked
 * passes of depth 2, 3, 4 and 8 (forced tiles, and the timed choice),
 * equals the same steps of kt_room_step bit for bit: both fields node by
 * node, every microphone sample, each drum's membrane and energy; single
 * and double precision.  A room whose drums fill half its height or more
 * keeps the one-step sweep and says why. */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_test.h"
#include "kt_test_block_drums.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_test_drummed drummed;

/* kt_test_block_drums.h's room, its moving microphone low after 40 steps,
 * with no timed sweeps first: the passes start at once. */
static int build(kt_precision precision, double height_m, int threads, drummed *d,
                 kt_error *err)
{
    int rc = kt_test_drummed_build(precision, height_m, threads, 40, d, err);
    if (d->room) {
        d->room->sweep_plan = 0;
        d->room->tune_sweeps = ROOM_TUNED;
    }
    return rc;
}

/* The planes of the drums' boxes, and the room's. */
static void band_of(const kt_room *r, int band[2])
{
    band[0] = r->plan.grid.nz;
    band[1] = -1;
    for (int k = 0; k < r->plan.ins_count; k++) {
        const kt_instrument *ins = r->plan.ins[k].ins;
        band[0] = ins->box_lo[2] < band[0] ? ins->box_lo[2] : band[0];
        band[1] = ins->box_hi[2] > band[1] ? ins->box_hi[2] : band[1];
    }
}

static void test_precision(kt_precision precision, const char *name)
{
    const int steps = 61, threads = omp_get_num_procs() >= 2 ? 2 : 1;
    kt_error err;
    drummed ref;
    if (build(precision, 2.4, threads, &ref, &err) < 0) {
        KT_CHECK(0, "%s: reference: %s", name, err.message);
        kt_room_destroy(ref.room);
        return;
    }
    for (int s = 0; s < steps; s++)
        KT_CHECK(kt_room_step(ref.room, &err) == KT_OK, "%s: step: %s", name, err.message);
    const room_mic *edge = &ref.room->plan.mic[0];
    double peak = 0;
    for (int64_t s = 0; s < edge->count; s++)
        peak = edge->signal[s] > peak ? edge->signal[s] : -edge->signal[s] > peak ? -edge->signal[s] : peak;
    KT_CHECK(peak > 0 && kt_timpani_energy(ref.drum[0]) > 0, "%s: nothing sounded", name);
    int band[2];
    band_of(ref.room, band);
    static const struct { int depth, tile; } runs[] = {
        {2, 5}, {3, 1}, {3, 7}, {4, 24}, {8, 3}, {8, 0}};
    for (size_t c = 0; c < sizeof runs / sizeof runs[0]; c++) {
        drummed d;
        int rc = build(precision, 2.4, threads, &d, &err);
        if (rc >= 0 && (rc = kt_room_set_blocking(d.room, runs[c].depth, runs[c].tile, &err)) >= 0)
            rc = kt_room_run(d.room, steps, NULL, NULL, &err);
        KT_CHECK(rc == KT_OK, "%s: depth %d: %s", name, runs[c].depth, err.message);
        kt_room_timing t;
        kt_room_get_timing(d.room, &t);
        /* a last step short of a pass is one step (split: overlapped) */
        KT_CHECK(rc != KT_OK || (t.steps == steps && t.overlapped_steps <= 1),
                 "%s: depth %d: %lld of %lld steps one at a time", name, runs[c].depth,
                 (long long)t.overlapped_steps, (long long)t.steps);
        KT_CHECK(rc != KT_OK || kt_test_drummed_same_bits(&ref, &d),
                 "%s: depth %d, tiles of %d rows: not the bits of one step at a time", name,
                 runs[c].depth, runs[c].tile);
        kt_room_destroy(d.room);
    }
    /* the default: depth and tile timed over the first passes, drums included */
    drummed ref2, d;
    int rc = build(precision, 2.4, threads, &ref2, &err);
    for (int s = 0; s < 120 && rc >= 0; s++)
        rc = kt_room_step(ref2.room, &err);
    if (rc >= 0)
        rc = build(precision, 2.4, threads, &d, &err);
    if (rc >= 0)
        rc = kt_room_run(d.room, 120, NULL, NULL, &err);
    KT_CHECK(rc == KT_OK, "%s: timed: %s", name, err.message);
    const char *choice = rc == KT_OK ? kt_room_blocking(d.room) : NULL;
    KT_CHECK(rc != KT_OK || choice != NULL, "%s: timed: did not settle in 120 steps", name);
    KT_CHECK(rc != KT_OK || kt_test_drummed_same_bits(&ref2, &d), "%s: the timed room differs",
             name);
    printf("%s, %d x %d x %d nodes, drums' boxes on planes %d..%d: depths 2, 3, 4, 8 equal %d "
           "steps one at a time; timed (120 steps): %s\n",
           name, ref.room->plan.grid.nx, ref.room->plan.grid.ny, ref.room->plan.grid.nz,
           band[0], band[1], steps, choice ? choice : "?");
    kt_room_destroy(d.room);
    kt_room_destroy(ref2.room);
    kt_room_destroy(ref.room);
}

/* A room of 1.1 m: the drums' planes are most of it; one step at a time. */
static void test_short_room(void)
{
    kt_error err;
    drummed d;
    int rc = build(KT_DOUBLE, 1.1, 1, &d, &err);
    KT_CHECK(rc >= 0, "short room: %s", err.message);
    if (rc >= 0) {
        KT_CHECK(strcmp(kt_room_blocking(d.room), "off") == 0, "short room: blocking not off");
        KT_CHECK(kt_room_set_blocking(d.room, 4, 0, &err) == KT_EINVAL &&
                     strstr(err.message, "instruments' planes"),
                 "short room: no refusal naming the instruments' planes");
        printf("1.1 m room: refused: %s\n", err.message);
    }
    kt_room_destroy(d.room);
}

int main(void)
{
    test_precision(KT_DOUBLE, "double");
    test_precision(KT_SINGLE, "single");
    test_short_room();
    return kt_test_finish("test_room_block_drums");
}
