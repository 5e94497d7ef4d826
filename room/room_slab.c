/* room_slab.c - the step of one rank of a room split into slabs of z-planes
 * (room_slab.h has the scheme; docs/room.md, "Slabs and ranks"): the sweep
 * overlapped with the halo exchange, instruments with a borrowed window when
 * their box crosses into the rank below, microphones recorded by the owner of
 * their cell's lower plane (later, when the plane above belongs to the next
 * rank), and the gathering of the signals on rank 0.  The transport is
 * reached through room_transport only. */
#include "room_slab.h"
#include "kt_ranks.h"
#include "kt_instrument.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void room_slab_split(int nz, int ranks, int *z_begin)
{
    for (int r = 0; r <= ranks; r++)
        z_begin[r] = (int)((int64_t)nz * r / ranks);
}

int room_slab_owner(const struct room_slab *s, int z)
{
    int r = 0;
    while (r + 1 < s->ranks && z >= s->z_begin[r + 1])
        r++;
    return r;
}

static size_t slab_bytes(const kt_room_grid *g, int planes, int grids, kt_precision prec)
{
    size_t esize = prec == KT_SINGLE ? sizeof(float) : sizeof(double);
    return ((size_t)planes + 2) * ((size_t)g->nx + 2) * ((size_t)g->ny + 2) * esize *
           (size_t)grids;
}

int kt_room_slab_plan(const kt_room_params *p, int ranks, int rank, int planes[2],
                      size_t *bytes, kt_error *err)
{
    kt_room_grid g;
    int rc = kt_room_estimate(p, &g, err);
    if (rc < 0)
        return rc;
    if (p->scheme != KT_SCHEME_SLF7 && ranks > 1)
        return kt_fail(err, KT_EINVAL, "only the 7-point air scheme can be split over ranks");
    if (ranks < 1 || rank < 0 || rank >= ranks)
        return kt_fail(err, KT_EINVAL, "rank %d of %d does not exist", rank, ranks);
    if (ranks > g.nz)
        return kt_fail(err, KT_EINVAL,
                       "%d ranks for a room of %d z-planes: each rank needs at least one plane",
                       ranks, g.nz);
    int *zb = malloc(sizeof *zb * (size_t)(ranks + 1));
    if (!zb)
        return kt_fail(err, KT_ENOMEM, "out of memory planning slabs");
    room_slab_split(g.nz, ranks, zb);
    planes[0] = zb[rank];
    planes[1] = zb[rank + 1];
    free(zb);
    if (bytes)
        *bytes = ranks == 1 ? g.bytes
                            : slab_bytes(&g, planes[1] - planes[0], p->viscosity_m > 0 ? 3 : 2,
                                         p->precision);
    return KT_OK;
}

void room_slab_free(struct room_slab *s)
{
    if (!s)
        return;
    if (s->tp && s->tp->destroy)
        s->tp->destroy(s->ctx);
    free(s->z_begin);
    free(s->defer);
    free(s->stage);
    free(s);
}

int room_slab_attach(kt_room *room, int rank, int ranks, const int *z_begin,
                     const room_transport *tp, void *ctx, kt_error *err)
{
    struct room_slab *s = calloc(1, sizeof *s);
    if (s) {
        s->tp = tp;
        s->ctx = ctx;
        s->z_begin = malloc(sizeof *s->z_begin * (size_t)(ranks + 1));
    }
    if (!s || !s->z_begin) {
        if (s)
            room_slab_free(s);
        else if (tp->destroy)
            tp->destroy(ctx);
        return kt_fail(err, KT_ENOMEM, "out of memory splitting the room");
    }
    memcpy(s->z_begin, z_begin, sizeof *s->z_begin * (size_t)(ranks + 1));
    s->rank = rank;
    s->ranks = ranks;
    s->bad_plane = -1;
    room->slab = s;
    room->tune_sweeps = ROOM_TUNED; /* a rank sweeps in parts: the default plan, untimed */
    if (room->plan.st || room->plan.z0 != z_begin[rank] || room->plan.z_end != z_begin[rank + 1])
        return kt_fail(err, KT_EINVAL, "this room cannot be split into slabs (7-point scheme "
                                       "only, planes %d..%d)", room->plan.z0, room->plan.z_end - 1);
    return KT_OK;
}

/* ---- stage A: the sweep with the halo exchange in flight ---- */

int room_slab_sweep(kt_room *r, kt_error *err)
{
    struct room_slab *s = r->slab;
    int rc = s->tp->halo_start(s->ctx, r, r->now, err);
    if (rc < 0)
        return rc;
    /* interior planes need no halo; in parts, letting the transfer progress */
    int a = r->plan.z0, b = r->plan.z_end, lo = a + 1, hi = b - 1;
    for (int part = 0; part < 4 && lo < hi; part++) {
        int za = lo + (hi - lo) * part / 4, zb = lo + (hi - lo) * (part + 1) / 4;
        if (za < zb)
            room_sweep_planes(r, za, zb);
        s->tp->halo_test(s->ctx);
    }
    if ((rc = s->tp->halo_finish(s->ctx, err)) < 0)
        return rc;
    /* before plane b-1 of Psi^{n-1} is overwritten (two-grid scheme) */
    room_slab_record_deferred(r);
    room_sweep_planes(r, a, a + 1);
    if (b - 1 > a)
        room_sweep_planes(r, b - 1, b);
    return KT_OK;
}

/* ---- stage D: instruments ---- */

static size_t window_bytes(const kt_room *r, const kt_instrument *ins)
{
    size_t esize = r->plan.params.precision == KT_SINGLE ? sizeof(float) : sizeof(double);
    return (size_t)(ins->box_hi[0] - ins->box_lo[0] + 1) *
           (size_t)(ins->box_hi[1] - ins->box_lo[1] + 1) * esize;
}

/* Copies the box's window of plane z of Psi^{n+1} to (out = 1) or from the stage. */
static void move_window(kt_room *r, const kt_instrument *ins, int z, int out)
{
    size_t esize = r->plan.params.precision == KT_SINGLE ? sizeof(float) : sizeof(double);
    size_t row = (size_t)(ins->box_hi[0] - ins->box_lo[0] + 1) * esize;
    unsigned char *st = r->slab->stage, *f = r->next;
    for (int y = ins->box_lo[1]; y <= ins->box_hi[1]; y++, st += row) {
        unsigned char *p = f + room_pidx(r, ins->box_lo[0], y, z) * esize;
        if (out)
            memcpy(st, p, row);
        else
            memcpy(p, st, row);
    }
}

static int ensure_stage(struct room_slab *s, size_t bytes, kt_error *err)
{
    if (bytes <= s->stage_bytes)
        return KT_OK;
    unsigned char *grown = realloc(s->stage, bytes);
    if (!grown)
        return kt_fail(err, KT_ENOMEM, "out of memory for an instrument's window");
    s->stage = grown;
    s->stage_bytes = bytes;
    return KT_OK;
}

/* The rank under the runner: lend plane z_end-1's window, take it back corrected. */
static int lend_window(kt_room *r, const kt_instrument *ins, int tag, kt_error *err)
{
    struct room_slab *s = r->slab;
    size_t bytes = window_bytes(r, ins);
    int rc = ensure_stage(s, bytes, err);
    if (rc < 0)
        return rc;
    move_window(r, ins, r->plan.z_end - 1, 1);
    if ((rc = s->tp->send(s->ctx, s->rank + 1, tag, s->stage, bytes, err)) < 0 ||
        (rc = s->tp->recv(s->ctx, s->rank + 1, tag, s->stage, bytes, err)) < 0)
        return rc;
    move_window(r, ins, r->plan.z_end - 1, 0);
    return KT_OK;
}

static const char *ins_label(const kt_instrument *ins)
{
    return ins->name[0] ? ins->name : (ins->kind ? ins->kind : "instrument");
}

static int run_one(kt_room *r, kt_instrument *ins, int borrow, int tag, kt_error *err)
{
    struct room_slab *s = r->slab;
    size_t bytes = window_bytes(r, ins);
    int rc = KT_OK;
    if (borrow) {
        if ((rc = ensure_stage(s, bytes, err)) < 0 ||
            (rc = s->tp->recv(s->ctx, s->rank - 1, tag, s->stage, bytes, err)) < 0)
            return rc;
        move_window(r, ins, r->plan.z0 - 1, 0);
    }
    s->bad_plane = -1;
    r->in_step = 1;
    rc = ins->process(ins->self, r, err);
    r->in_step = 0;
    if (borrow) {
        move_window(r, ins, r->plan.z0 - 1, 1);
        int sent = s->tp->send(s->ctx, s->rank - 1, tag, s->stage, bytes,
                               rc < 0 ? NULL : err);
        if (rc >= 0)
            rc = sent;
    }
    if (rc >= 0 && s->bad_plane >= 0)
        rc = kt_fail(err, KT_EINVAL,
                     "%s: touched air layer %d, beyond the reach of rank %d (planes %d..%d "
                     "and the plane below): an instrument split over ranks may use the top "
                     "plane of its box and the plane under it",
                     ins_label(ins), s->bad_plane, s->rank, r->plan.z0, r->plan.z_end - 1);
    return rc;
}

int room_slab_instruments(kt_room *r, kt_error *err)
{
    struct room_slab *s = r->slab;
    for (int k = 0; k < r->plan.ins_count; k++) {
        kt_instrument *ins = r->plan.ins[k].ins;
        if (!ins->process)
            continue;
        int runner = room_slab_owner(s, ins->box_hi[2]);
        int borrow = runner > 0 && ins->box_lo[2] < s->z_begin[runner];
        int rc = KT_OK;
        if (s->rank == runner)
            rc = run_one(r, ins, borrow, k, err);
        else if (borrow && s->rank == runner - 1)
            rc = lend_window(r, ins, k, err);
        if (rc < 0)
            return rc;
    }
    return KT_OK;
}

int room_slab_layer_ok(const kt_room *r, int z)
{
    if (z >= r->plan.z0 && z < r->plan.z_end)
        return 1;
    if (r->in_step && z == r->plan.z0 - 1 && z >= 0)
        return 1;
    if (r->in_step)
        r->slab->bad_plane = z;
    return 0;
}

/* ---- stage E: microphones ---- */

static double mic_scale(const kt_room *r)
{
    return r->plan.params.air_density_kg_per_m3 / r->plan.grid.time_step_s;
}

int room_slab_mic_sample(kt_room *r, int mic, const double pos[3], double *out, kt_error *err)
{
    struct room_slab *s = r->slab;
    int i0[3];
    double f[3];
    room_mic_cell(&r->plan, pos, i0, f);
    *out = 0.0;
    if (i0[2] < r->plan.z0 || i0[2] >= r->plan.z_end)
        return KT_OK;                       /* another rank's sample */
    if (f[2] == 0 || i0[2] + 1 < r->plan.z_end) {
        *out = mic_scale(r) * room_mic_difference(r, r->next, r->now, pos);
        return KT_OK;
    }
    if (s->defer_count == s->defer_capacity) {
        int cap = s->defer_capacity ? 2 * s->defer_capacity : 8;
        slab_deferred *grown = realloc(s->defer, sizeof *grown * (size_t)cap);
        if (!grown)
            return kt_fail(err, KT_ENOMEM, "out of memory recording microphones");
        s->defer = grown;
        s->defer_capacity = cap;
    }
    slab_deferred *d = &s->defer[s->defer_count++];
    d->mic = mic;
    d->sample = r->plan.mic[mic].count;
    memcpy(d->pos, pos, sizeof d->pos);
    return KT_OK;
}

void room_slab_record_deferred(kt_room *r)
{
    struct room_slab *s = r->slab;
    for (int k = 0; k < s->defer_count; k++) {
        const slab_deferred *d = &s->defer[k];
        room_mic *m = &r->plan.mic[d->mic];
        if (d->sample < m->count)
            m->signal[d->sample] = mic_scale(r) * room_mic_difference(r, r->now, r->prev, d->pos);
    }
    s->defer_count = 0;
}

int room_slab_unstable(const kt_room *r)
{
    int bad = 0;
    for (int m = 0; m < r->plan.mic_count; m++) {
        const room_mic *mic = &r->plan.mic[m];
        bad |= mic->count > 0 && !isfinite(mic->signal[mic->count - 1]);
    }
    int z = (r->plan.z0 + r->plan.z_end) / 2;
    bad |= !isfinite(room_get(r, r->now, room_pidx(r, r->plan.grid.nx / 2, r->plan.grid.ny / 2, z)));
    return r->slab->tp->any(r->slab->ctx, bad);
}

/* ---- the public side ---- */

int kt_room_rank(const kt_room *room) { return room->slab ? room->slab->rank : 0; }
int kt_room_ranks(const kt_room *room) { return room->slab ? room->slab->ranks : 1; }

/* Rank 0 takes from rank src the samples src recorded (same rule as recording). */
static int gather_mic(kt_room *r, int mic, double *tmp, kt_error *err)
{
    struct room_slab *s = r->slab;
    room_mic *m = &r->plan.mic[mic];
    size_t bytes = (size_t)m->count * sizeof *m->signal;
    if (s->rank != 0)
        return s->tp->send(s->ctx, 0, mic, m->signal, bytes, err);
    for (int src = 1; src < s->ranks; src++) {
        int rc = s->tp->recv(s->ctx, src, mic, tmp, bytes, err);
        if (rc < 0)
            return rc;
        for (int64_t n = 0; n < m->count; n++) {
            double pos[3], f[3];
            int i0[3];
            room_mic_position(m, (double)(n + 1) * r->plan.grid.time_step_s, pos);
            room_mic_cell(&r->plan, pos, i0, f);
            if (room_slab_owner(s, i0[2]) == src)
                m->signal[n] = tmp[n];
        }
    }
    return KT_OK;
}

int kt_room_collect(kt_room *room, kt_error *err)
{
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_room_collect: room is NULL");
    struct room_slab *s = room->slab;
    if (!s)
        return KT_OK;
    int rc = s->tp->halo_start(s->ctx, room, room->now, err);
    if (rc < 0 || (rc = s->tp->halo_finish(s->ctx, err)) < 0)
        return rc;
    room_slab_record_deferred(room);
    int64_t most = 1;
    for (int m = 0; m < room->plan.mic_count; m++)
        most = room->plan.mic[m].count > most ? room->plan.mic[m].count : most;
    double *tmp = s->rank == 0 ? malloc(sizeof *tmp * (size_t)most) : NULL;
    if (s->rank == 0 && !tmp)
        return kt_fail(err, KT_ENOMEM, "out of memory gathering the microphones");
    for (int m = 0; m < room->plan.mic_count && rc >= 0; m++)
        rc = gather_mic(room, m, tmp, err);
    free(tmp);
    return rc;
}
