/* room_overlap.c - the instruments of a step side by side on the CPU's
 * threads (issue 21).  An instrument's process() reads and corrects Psi^{n+1}
 * only on a few planes of its box (kt_instrument.process_z; the drum's two
 * air layers): its near region.  In a split step one parallel loop hands
 * out, largest box first, one work item per instrument (sweep its near
 * region, correct its list there, run its process()) and then chunks of
 * planes of the rest of the room (the far sweep and, right after it, the
 * list rows in those planes), so that the drums run beside each other and
 * beside the air; the sources and microphones follow.  Where a step cannot
 * be split (a slab room, absorbing walls, another scheme, the sweep's first
 * timed steps, a source sounding inside a box), the sweep and the lists run
 * first and only the instruments' process() run side by side.
 *
 * Bits: a list row reads Psi^n and adds to its own node after that node's
 * sweep, process() touches only its near region, near regions are disjoint
 * (boxes are) and the far sweep covers every other node, so each node gets
 * the same operations in the same order as in the serial step of
 * room_step.c, whichever thread does them.  The GPU splits the sweep around
 * the drums too, across steps (room/gpu/room_step.cu, docs/gpu.md). */
#include "room_internal.h"

/* Instrument ins's near region: its box over planes z[0] .. z[1]-1. */
static void near_planes(const kt_instrument *ins, int z[2])
{
    const int given = ins->process_z[0] || ins->process_z[1];
    z[0] = given ? ins->process_z[0] : ins->box_lo[2];
    z[1] = (given ? ins->process_z[1] : ins->box_hi[2]) + 1;
}

int room_far_spans(const kt_room *r, int y, int z, int span[])
{
    int lo[ROOM_OVERLAP_MAX], hi[ROOM_OVERLAP_MAX], n = 0;
    for (int k = 0; k < r->plan.ins_count; k++) {
        const kt_instrument *ins = r->plan.ins[k].ins;
        int nz[2];
        near_planes(ins, nz);
        if (y < ins->box_lo[1] || y > ins->box_hi[1] || z < nz[0] || z >= nz[1])
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
    for (int s = 0; s < r->plan.src_count; s++) {
        const room_source *src = &r->plan.src[s];
        if (level < src->first_level || level - src->first_level >= src->count)
            continue;
        int p[3];
        room_plan_node_xyz(&r->plan, src->node, p);
        for (int k = 0; k < r->plan.ins_count; k++)
            if (box_holds(r->plan.ins[k].ins, p))
                return 1;
    }
    return 0;
}

int room_overlap_ready(const kt_room *r)
{
    return r->overlap == KT_OVERLAP_AIR && r->plan.ins_count > 0 &&
           r->plan.ins_count <= ROOM_OVERLAP_MAX && !r->slab && !r->plan.st && !r->plan.fcc &&
           !r->abc && !r->plan.shape.count && r->tune_sweeps == ROOM_TUNED &&
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

/* Instrument k's item: with the air, its near region's sweep and list
 * rows first. */
static int instrument_item(kt_room *r, int k, int with_air, kt_error *err)
{
    kt_instrument *ins = r->plan.ins[k].ins;
    if (with_air) {
        int nz[2];
        near_planes(ins, nz);
        room_sweep_box(r, k, nz[0], nz[1]);
        room_correct_list_planes(r, k, nz[0], nz[1]);
    }
    return ins->process ? ins->process(ins->self, r, err) : KT_OK;
}

/* Planes z0 .. z1-1 outside the near regions: the sweep, then every list's
 * rows there. */
static void far_item(kt_room *r, int z0, int z1)
{
    room_sweep_far(r, z0, z1);
    for (int k = 0; k < r->plan.ins_count; k++) {
        int nz[2];
        near_planes(r->plan.ins[k].ins, nz);
        room_correct_list_planes(r, k, z0, z1 < nz[0] ? z1 : nz[0]);
        room_correct_list_planes(r, k, z0 > nz[1] ? z0 : nz[1], z1);
    }
}

/* The items in one dynamic loop: the instruments, then (with_air) chunks
 * of planes of the far part.  An error is the lowest failing
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
            far_item(r, z0, z0 + chunk < nz ? z0 + chunk : nz);
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
    if (room->overlap == KT_OVERLAP_NONE || ni <= 1 || room->nthreads <= 1 ||
        ni > ROOM_OVERLAP_MAX) {
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
