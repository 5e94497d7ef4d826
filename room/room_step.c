/* room_step.c - one time step of the room in the order of design note 7.2:
 * (A) fused bulk sweep, (B) boundary-list corrections of every instrument,
 * (C) soft sources, (D) instruments' process(), (E) microphones, (F) buffer
 * rotation; with a wall-clock timing per phase.  Where the step can be
 * split, A, B and D run side by side on the threads (room_overlap.c). */
#include "room_internal.h"
#include "room_slab.h"

#include <math.h>
#include <omp.h>

/* Stage B for one list: Psi_i^{n+1} += lambda^2 sum_{blocked j} (Psi_i^n - Psi_j^n),
 * plus eta [same sum]^n - eta [same sum]^{n-1} with viscosity.  List nodes are
 * never on the box surface (the box check), so no loss factor applies, and
 * the sums read only Psi^n and Psi^{n-1}, so the order of rows is free. */
/* The common case (double precision, two grids) without per-access
 * branches, rows shared among threads: each row writes only its own node,
 * in the general loop's order of operations, so the bits are the same. */
static void correct_list_double2(kt_room *r, const room_instrument *ri, int ka, int kb,
                                 const ptrdiff_t off[6])
{
    const double l2 = r->plan.l2, *restrict now = r->now;
    double *restrict next = r->next;
    const size_t *node = ri->node;
    const uint8_t *blocked = ri->blocked;
    /* short lists: not worth a team; inside a step's work item: that item's thread */
    int nt = kb - ka >= 4096 && !omp_in_parallel() ? r->nthreads : 1;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int k = ka; k < kb; k++) {
        size_t i = node[k];
        unsigned b = blocked[k];
        double ci = now[i], sum = 0;
        for (int d = 0; d < 6; d++)
            if (b & (1u << d))
                sum += ci - now[i + off[d]];
        next[i] += l2 * sum;
    }
}

static void correct_list(kt_room *r, const room_instrument *ri, int ka, int kb,
                         const ptrdiff_t off[6])
{
    if (r->plan.params.precision == KT_DOUBLE && r->plan.grids == 2) {
        correct_list_double2(r, ri, ka, kb, off);
        return;
    }
    const double l2 = r->plan.l2, eta = r->plan.eta;
    for (int k = ka; k < kb; k++) {
        size_t i = ri->node[k];
        unsigned blocked = ri->blocked[k];
        double ci = room_get(r, r->now, i), sum_now = 0, sum_prev = 0;
        double pi = r->plan.grids == 3 ? room_get(r, r->prev, i) : 0;
        for (int d = 0; d < 6; d++) {
            if (!(blocked & (1u << d)))
                continue;
            sum_now += ci - room_get(r, r->now, i + off[d]);
            if (r->plan.grids == 3)
                sum_prev += pi - room_get(r, r->prev, i + off[d]);
        }
        double v = l2 * sum_now;
        if (r->plan.grids == 3)
            v += eta * sum_now - eta * sum_prev;
        room_add(r, r->next, i, v);
    }
}

/* The first row of a list (sorted by node, so by plane) at or after plane z. */
static int first_row(const kt_room *r, const room_instrument *ri, int z)
{
    const size_t start = ((size_t)(z - r->plan.z0) + (size_t)r->plan.halo) * r->plan.plane;
    int lo = 0, hi = ri->count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ri->node[mid] < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void room_correct_list_planes(kt_room *room, int k, int z0, int z1)
{
    const room_instrument *ri = &room->plan.ins[k];
    ptrdiff_t off[6];
    room_leg_offsets(room, off);
    if (z0 < z1)
        correct_list(room, ri, first_row(room, ri, z0), first_row(room, ri, z1), off);
}

void room_boundary_corrections(kt_room *room)
{
    ptrdiff_t off[6];
    room_leg_offsets(room, off);
    for (int k = 0; k < room->plan.ins_count; k++)
        correct_list(room, &room->plan.ins[k], 0, room->plan.ins[k].count, off);
    if (room->plan.shape.count)
        room_shape_correct(room);
}

static void rotate(kt_room *r)
{
    if (r->plan.grids == 2) {
        void *t = r->now;
        r->now = r->next;
        r->prev = t;
        r->next = t;
    } else {
        void *t = r->prev;
        r->prev = r->now;
        r->now = r->next;
        r->next = t;
    }
}

static int step_done(kt_room *room)
{
    rotate(room);
    room->n++;
    room->timing.steps++;
    return KT_OK;
}

int kt_room_step(kt_room *room, kt_error *err)
{
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_room_step: room is NULL");
    kt_room_timing *t = &room->timing;
    double t0 = kt_seconds();
    int rc = KT_OK;
    if (room_overlap_ready(room)) {
        /* the instruments beside each other and the air (room_overlap.c) */
        rc = room_overlap_step(room, err);
        double t1 = kt_seconds();
        if (rc >= 0)
            room_apply_sources(room);
        double t2 = kt_seconds();
        if (rc >= 0)
            rc = room_record_mics(room, err);
        t->overlap_s += t1 - t0;
        t->sources_s += t2 - t1;
        t->output_s += kt_seconds() - t2;
        t->overlapped_steps += rc >= 0;
        return rc < 0 ? rc : step_done(room);
    }
    room_shape_save(room);       /* the solids' lossy nodes keep Psi^{n-1} */
    if (room->slab)
        rc = room_slab_sweep(room, err);
    else {
        room_sweep(room);
        room_abc_apply(room);    /* absorbing walls overwrite the boundary nodes */
    }
    if (rc < 0)
        return rc;
    double t1 = kt_seconds();
    room_boundary_corrections(room);
    double t2 = kt_seconds();
    room_apply_sources(room);
    double t3 = kt_seconds();
    rc = room->slab ? room_slab_instruments(room, err) : room_run_instruments(room, err);
    double t4 = kt_seconds();
    if (rc >= 0)
        rc = room_record_mics(room, err);
    double t5 = kt_seconds();
    t->bulk_s += t1 - t0;
    t->boundary_s += t2 - t1;
    t->sources_s += t3 - t2;
    t->instruments_s += t4 - t3;
    t->output_s += t5 - t4;
    return rc < 0 ? rc : step_done(room);
}

/* A blow-up shows first at the microphones; with none, at one sample of the field. */
static int looks_unstable(const kt_room *room)
{
    if (room->slab)
        return room_slab_unstable(room);
    for (int m = 0; m < room->plan.mic_count; m++) {
        const room_mic *mic = &room->plan.mic[m];
        if (mic->count > 0 && !isfinite(mic->signal[mic->count - 1]))
            return 1;
    }
    int cx = room->plan.grid.nx / 2, cy = room->plan.grid.ny / 2, cz = room->plan.grid.nz / 2;
    cx -= room->plan.fcc && ((cx + cy + cz) & 1);    /* a node of the FCC lattice */
    size_t centre = room_node_index(room, cx, cy, cz);
    return !isfinite(room_get(room, room->now, centre));
}

int kt_room_run(kt_room *room, int64_t nsteps, kt_progress_fn progress, void *user,
                kt_error *err)
{
    if (!room || nsteps < 0)
        return kt_fail(err, KT_EINVAL, "kt_room_run: no room or negative step count");
    const int64_t chunk = 256;
    for (int64_t s = 0; s < nsteps;) {
        /* several steps per pass where the room allows (room_block.c), never
         * past the next check */
        int64_t next_check = (s / chunk + 1) * chunk;
        int rc = room_block_advance(room, (next_check < nsteps ? next_check : nsteps) - s, err);
        if (rc < 0)
            return rc;
        int64_t was = s;
        s += rc;
        if (s / chunk != was / chunk || s == nsteps) {
            if (looks_unstable(room))
                return kt_fail(err, KT_EUNSTABLE,
                               "the room became unstable (non-finite field) by step %lld",
                               (long long)room->n);
            if (progress && progress(user, s, nsteps))
                return kt_fail(err, KT_EINTR, "stopped by the user after %lld of %lld steps",
                               (long long)s, (long long)nsteps);
        }
    }
    return KT_OK;
}
