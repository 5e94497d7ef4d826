/* room_sweep.c - stage A of the step (design note 7.2): the fused bulk
 * update of the whole room, compiled once per precision from
 * room_sweep_impl.h so the two precisions share one source, and the choice
 * of the sweep's plan.
 *
 * Which plan is fastest depends on the host, not on the room alone.  Row
 * bands and prefetching the next row of 1-2 KB rows gained 12-30 % on the
 * 2-core Intel host of 2026-11-24; on the 2-core AMD EPYC host the same cost
 * 20-40 % on the 38 m^3 grid, where whole planes without prefetching were
 * fastest, while bands still gained 20 % on the 250 m^3 viscous room.  So a
 * room times each plan over its first sweeps (they are real steps: every
 * plan gives the same bits) and keeps the fastest, as FFTW plans a
 * transform. */
#include "room_internal.h"

#include <math.h>
#include <omp.h>

/* A room with solids sweeps each row's air only, and a row cut short
 * leaves the hardware's prefetchers behind: on the 2-core EPYC host a
 * plain 7-point sweep of a circle's rows ran at 73-79 % of the whole rows'
 * rate a node, rows cut by a quarter at 56-63 % (2026-11-26).  So its
 * rows ask for their lines themselves, SWEEP_AHEAD_BYTES ahead of the
 * sweep through the air of the row and the next, SWEEP_CHUNK_BYTES at a
 * time; and with lossy solids a row's Psi^{n-1} at its list nodes is saved
 * SWEEP_SAVE_AHEAD nodes ahead of the sweep (room_sweep_impl.h air_row). */
#define SWEEP_AHEAD_BYTES 1024
#define SWEEP_CHUNK_BYTES 512
#define SWEEP_SAVE_AHEAD 64

#define REAL double
#define SWEEP_NAME(x) x##_double
#include "room_sweep_impl.h"
#undef REAL
#undef SWEEP_NAME

#define REAL float
#define SWEEP_NAME(x) x##_float
#include "room_sweep_impl.h"
#undef REAL
#undef SWEEP_NAME

/* Each plan is timed this many times; the fastest of its sweeps counts, so
 * a sweep slowed by other work on the machine does not decide. */
#define ROOM_TUNE_ROUNDS 3

/* The plan before (or without) timing: what was fastest on the Intel host.
 * Bands with viscosity and on planes of 512 KiB or more; prefetch on rows
 * of 1-2 KB (640-node rows lost 5-12 % with it, 75-node rows up to 10 %). */
static int default_plan(const kt_room *r)
{
    const size_t esize = kt_precision_bytes(r->plan.params.precision);
    const size_t row_bytes = (size_t)r->plan.grid.nx * esize;
    int plan = 0;
    if (r->plan.grids == 3 || row_bytes * (size_t)r->plan.grid.ny >= ((size_t)1 << 19))
        plan |= ROOM_PLAN_BANDS;
    if (row_bytes >= 1024 && row_bytes <= 2048)
        plan |= ROOM_PLAN_PREFETCH;
    return plan;
}

void room_sweep_plan_init(kt_room *room)
{
    room->sweep_plan = default_plan(room);
    /* Absorbing walls sweep whole planes without prefetch: one plan. */
    room->tune_sweeps = room->plan.st || room->abc ? ROOM_TUNED : 0;
    for (int p = 0; p < ROOM_PLANS; p++)
        room->tune_best_s[p] = INFINITY;
}

void room_sweep_region(kt_room *room, const int lo[3], const int hi[3])
{
    if (room->plan.params.precision == KT_SINGLE)
        sweep_float(room, lo, hi);
    else
        sweep_double(room, lo, hi);
}

void room_sweep_planes(kt_room *room, int za, int zb)
{
    const room_plan *pl = &room->plan;
    const int lo[3] = {pl->x0, pl->y0, za}, hi[3] = {pl->x_end, pl->y_end, zb};
    room_sweep_region(room, lo, hi);
}

void room_sweep_far(kt_room *room, int z0, int z1)
{
    if (room->plan.params.precision == KT_SINGLE)
        far_float(room, z0, z1);
    else
        far_double(room, z0, z1);
}

void room_sweep_box(kt_room *room, int k, int z0, int z1)
{
    if (room->plan.params.precision == KT_SINGLE)
        box_float(room, k, z0, z1);
    else
        box_double(room, k, z0, z1);
}

void room_sweep_block(kt_room *room, room_block_pass *bp)
{
    if (room->plan.params.precision == KT_SINGLE)
        block_float(room, bp);
    else
        block_double(room, bp);
}

/* One timed sweep in the next plan; after the last, the fastest is kept. */
static void tuning_sweep(kt_room *room)
{
    const int plan = room->tune_sweeps % ROOM_PLANS;
    room->sweep_plan = plan;
    double t0 = kt_seconds();
    room_sweep_planes(room, 0, room->plan.grid.nz);
    double dt = kt_seconds() - t0;
    if (dt < room->tune_best_s[plan])
        room->tune_best_s[plan] = dt;
    if (++room->tune_sweeps < ROOM_PLANS * ROOM_TUNE_ROUNDS)
        return;
    int best = 0;
    for (int p = 1; p < ROOM_PLANS; p++)
        if (room->tune_best_s[p] < room->tune_best_s[best])
            best = p;
    room->sweep_plan = best;
    room->tune_sweeps = ROOM_TUNED;
}

void room_sweep(kt_room *room)
{
    if (room->plan.st) {
        room_stencil_sweep(room);
        return;
    }
    if (room->tune_sweeps != ROOM_TUNED) {
        tuning_sweep(room);
        return;
    }
    room_sweep_planes(room, 0, room->plan.grid.nz);
}

const char *kt_room_sweep_plan(const kt_room *room)
{
    static const char *const names[ROOM_PLANS] = {"planes", "bands", "planes+prefetch",
                                                  "bands+prefetch"};
    if (!room)
        return NULL;
    if (room->plan.st || room->abc)
        return "-";
    return room->tune_sweeps == ROOM_TUNED ? names[room->sweep_plan] : NULL;
}
