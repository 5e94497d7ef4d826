/* room_overlap.c - the instruments of a step side by side on the CPU's
 * threads (issue 21).  In an overlapped step one parallel loop hands out,
 * largest box first, one work item per instrument (sweep its box, correct
 * its boundary list, run its process()) and then chunks of planes of the
 * rest of the room (the far sweep), so that the drums run beside each
 * other and beside the air; the sources and microphones follow.  Where a
 * step cannot be split (a slab room, absorbing walls, another scheme, the
 * sweep's first timed steps, a source sounding inside a box), the sweep and
 * the lists run first and only the instruments' process() run side by side.
 *
 * Bits: the lists and process() touch only their own box (kt_instrument.h;
 * boxes are disjoint) and the far sweep only nodes outside every box, so
 * each node gets the same operations in the same order as in the serial
 * step of room_step.c, whichever thread does them.  The GPU splits the sweep
 * the same way, across steps (room/gpu/room_step.cu, docs/gpu.md). */
#include "room_internal.h"

int room_far_spans(const kt_room *r, int y, int z, int span[])
{
    int lo[ROOM_OVERLAP_MAX], hi[ROOM_OVERLAP_MAX], n = 0;
    for (int k = 0; k < r->plan.ins_count; k++) {
        const kt_instrument *ins = r->plan.ins[k].ins;
        if (y < ins->box_lo[1] || y > ins->box_hi[1] || z < ins->box_lo[2] || z > ins->box_hi[2])
            continue;
        int m = n++;  /* insertion by x: the boxes a row crosses are disjoint along it */
        for (; m > 0 && lo[m - 1] > ins->box_lo[0]; m--) {
            lo[m] = lo[m - 1];
            hi[m] = hi[m - 1];
        }
        lo[m] = ins->box_lo[0];
        hi[m] = ins->box_hi[0] + 1;
    }
    int spans = 0, x = 0;
    for (int m = 0; m < n; m++) {
        if (lo[m] > x) {
            span[2 * spans] = x;
            span[2 * spans++ + 1] = lo[m];
        }
        x = hi[m];
    }
    if (x < r->plan.grid.nx) {
        span[2 * spans] = x;
        span[2 * spans++ + 1] = r->plan.grid.nx;
    }
    return spans;
}

void kt_room_set_overlap(kt_room *room, kt_overlap mode)
{
    if (room)
        room->overlap = mode;
}

static int box_holds(const kt_instrument *ins, const int p[3])
{
    for (int d = 0; d < 3; d++)
        if (p[d] < ins->box_lo[d] || p[d] > ins->box_hi[d])
            return 0;
    return 1;
}

/* A source that sounds this step inside a box would be added between the
 * box's list and its process(): such a step is not split. */
static int source_in_a_box(const kt_room *r)
{
    const int64_t level = r->n + 1;
    const size_t h = (size_t)r->plan.halo;
    for (int s = 0; s < r->plan.src_count; s++) {
        const room_source *src = &r->plan.src[s];
        if (level < src->first_level || level - src->first_level >= src->count)
            continue;
        size_t rem = src->node % r->plan.plane;
        int p[3] = {(int)(rem % r->plan.px - h), (int)(rem / r->plan.px - h),
                    (int)(src->node / r->plan.plane - h) + r->plan.z0};
        for (int k = 0; k < r->plan.ins_count; k++)
            if (box_holds(r->plan.ins[k].ins, p))
                return 1;
    }
    return 0;
}

int room_overlap_ready(const kt_room *r)
{
    return r->overlap == KT_OVERLAP_AIR && r->plan.ins_count > 0 && r->plan.ins_count <= ROOM_OVERLAP_MAX &&
           !r->slab && !r->plan.st && !r->plan.fcc && !r->abc && r->tune_sweeps == ROOM_TUNED &&
           !source_in_a_box(r);
}

static long box_nodes(const kt_instrument *ins)
{
    long v = 1;
    for (int d = 0; d < 3; d++)
        v *= ins->box_hi[d] - ins->box_lo[d] + 1;
    return v;
}

/* The instruments, largest box first (ties in their order): the longest
 * items are handed out first, the short ones fill in. */
static void by_size(const kt_room *r, int order[])
{
    for (int k = 0; k < r->plan.ins_count; k++) {
        long v = box_nodes(r->plan.ins[k].ins);
        int m = k;
        for (; m > 0 && box_nodes(r->plan.ins[order[m - 1]].ins) < v; m--)
            order[m] = order[m - 1];
        order[m] = k;
    }
}

/* Instrument k's item: with the air, its box's sweep and list first. */
static int instrument_item(kt_room *r, int k, int with_air, kt_error *err)
{
    kt_instrument *ins = r->plan.ins[k].ins;
    if (with_air) {
        room_sweep_box(r, k);
        room_correct_list(r, k);
    }
    return ins->process ? ins->process(ins->self, r, err) : KT_OK;
}

/* The items in one dynamic loop: the instruments, then (with_air) chunks
 * of planes of the far sweep.  An error is the lowest failing
 * instrument's, whatever thread met it first. */
static int side_by_side(kt_room *r, int with_air, kt_error *err)
{
    const int ni = r->plan.ins_count, nz = r->plan.grid.nz;
    int order[ROOM_OVERLAP_MAX];
    by_size(r, order);
    int chunk = nz / (8 * r->nthreads);
    chunk = chunk < 1 ? 1 : chunk;
    const int items = ni + (with_air ? (nz + chunk - 1) / chunk : 0);
    int failed = ni, failed_rc = KT_OK;
    kt_error first;
    kt_error_clear(&first);
    r->in_step = 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(r->nthreads)
    for (int w = 0; w < items; w++) {
        if (w >= ni) {
            int z0 = (w - ni) * chunk;
            room_sweep_far(r, z0, z0 + chunk < nz ? z0 + chunk : nz);
            continue;
        }
        kt_error e;
        kt_error_clear(&e);
        int rc = instrument_item(r, order[w], with_air, &e);
        if (rc < 0) {
#pragma omp critical(room_overlap_failure)
            if (order[w] < failed) {
                failed = order[w];
                failed_rc = rc;
                first = e;
            }
        }
    }
    r->in_step = 0;
    if (failed < ni && err)
        *err = first;
    return failed < ni ? failed_rc : KT_OK;
}

int room_overlap_step(kt_room *room, kt_error *err)
{
    return side_by_side(room, 1, err);
}

int room_run_instruments(kt_room *room, kt_error *err)
{
    const int ni = room->plan.ins_count;
    if (room->overlap == KT_OVERLAP_NONE || ni <= 1 || room->nthreads <= 1 || ni > ROOM_OVERLAP_MAX) {
        /* one at a time, each with its own threads */
        room->in_step = 1;
        int rc = KT_OK;
        for (int k = 0; k < ni && rc >= 0; k++)
            rc = instrument_item(room, k, 0, err);
        room->in_step = 0;
        return rc;
    }
    return side_by_side(room, 0, err);
}
