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

void room_slab_split(int n, int ranks, int *cut)
{
    for (int r = 0; r <= ranks; r++)
        cut[r] = (int)((int64_t)n * r / ranks);
}

int room_slab_owner(const struct room_slab *s, int i)
{
    int r = 0;
    while (r + 1 < s->ranks && i >= s->cut[r + 1])
        r++;
    return r;
}

void kt_split_options_default(kt_split_options *o)
{
    memset(o, 0, sizeof *o);
    o->axis = KT_SPLIT_AUTO;
}

int kt_split_axis_parse(const char *text, kt_split_axis *axis)
{
    static const char *const names[4] = {"x", "y", "z", "auto"};
    for (int k = 0; k < 4; k++)
        if (text && !strcmp(text, names[k])) {
            *axis = k == 3 ? KT_SPLIT_AUTO : (kt_split_axis)k;
            return 0;
        }
    return -1;
}

/* Bytes of `grids` fields of a box of n nodes with one halo layer around. */
static size_t box_bytes(const int n[3], int grids, kt_precision prec)
{
    size_t esize = kt_precision_bytes(prec);
    return ((size_t)n[0] + 2) * ((size_t)n[1] + 2) * ((size_t)n[2] + 2) * esize * (size_t)grids;
}

/* The nodes of the layer across axis a, its halo's border included. */
static size_t layer_nodes(const kt_room_grid *g, int a)
{
    const int n[3] = {g->nx, g->ny, g->nz};
    return ((size_t)n[(a + 1) % 3] + 2) * ((size_t)n[(a + 2) % 3] + 2);
}

/* The layer across axis a, its halo's bytes. */
static size_t layer_bytes(const kt_room_grid *g, int a, kt_precision prec)
{
    return layer_nodes(g, a) * kt_precision_bytes(prec);
}

/* What a halo layer across axis a costs a step in memory traffic: a layer
 * across x takes one element of every row, and each costs a whole 32-byte
 * sector (a GPU's; a CPU's line is 64) to pack, unpack and sweep beside,
 * where y and z layers are whole rows.  On two H200s the concert hall's
 * grid (739 x 591 x 462, single) scaled at 79.7 % cut along x, 92.4 % along
 * y, 91.2 % along z, though its x layer holds 273k nodes to y's 341k. */
static size_t layer_cost(const kt_room_grid *g, int a, kt_precision prec)
{
    return a == 0 ? layer_nodes(g, a) * 32 : layer_bytes(g, a, prec);
}

/* The first kept region that a cut at c along axis a (between layers c-1
 * and c) would cross, or -1: its nodes lo .. hi, widened by two spacings. */
static int crossing(const kt_split_options *so, double spacing_m, int a, int c)
{
    for (int k = 0; so && k < so->keep_count; k++) {
        int lo = (int)floor(so->keep[k].lo_m[a] / spacing_m) - 2;
        int hi = (int)ceil(so->keep[k].hi_m[a] / spacing_m) + 2;
        if (lo <= c - 1 && hi >= c)
            return k;
    }
    return -1;
}

/* Cuts along axis a clear of the kept regions, each within a quarter of a
 * slab of its balanced place (cut[0] = 0, cut[ranks] = n); 0, or -1 with
 * the region in the way of cut k in *blocked. */
static int place_cuts(const kt_split_options *so, double spacing_m, int a, int n, int ranks,
                      int *cut, int *blocked, int *at)
{
    room_slab_split(n, ranks, cut);
    if (a == 2)
        return 0;
    int reach = n / (4 * ranks);
    for (int k = 1; k < ranks; k++) {
        int b = cut[k], found = -1;
        for (int d = 0; d <= reach && found < 0; d++)
            for (int sgn = 0; sgn < 2 && found < 0; sgn++) {
                int c = b + (sgn ? -d : d);
                if (c > cut[k - 1] && c < n - (ranks - k) && crossing(so, spacing_m, a, c) < 0)
                    found = c;
            }
        if (found < 0) {
            *blocked = crossing(so, spacing_m, a, b);
            *at = b;
            return -1;
        }
        cut[k] = found;
    }
    return 0;
}

int room_slab_choose(const kt_room_params *p, int ranks, const kt_split_options *so, int *axis,
                     int *cut, kt_error *err)
{
    kt_room_grid g;
    int rc = kt_room_estimate(p, &g, err);
    if (rc < 0)
        return rc;
    if (p->scheme != KT_SCHEME_SLF7 && ranks > 1)
        return kt_fail(err, KT_EINVAL, "only the 7-point air scheme can be split over ranks");
    const int n[3] = {g.nx, g.ny, g.nz};
    int want = so ? (int)so->axis : KT_SPLIT_AUTO;
    if (want < KT_SPLIT_AUTO || want > KT_SPLIT_Z)
        return kt_fail(err, KT_EINVAL, "no axis %d to split along", want);
    /* the candidates: the one asked for, or every axis by its layer's cost
     * (z first among equals) */
    int order[3] = {2, 1, 0}, count = 3;
    if (want != KT_SPLIT_AUTO)
        order[0] = want, count = 1;
    else
        for (int i = 1; i < 3; i++)
            for (int j = i; j > 0 &&
                            layer_cost(&g, order[j], p->precision) <
                                layer_cost(&g, order[j - 1], p->precision); j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
    if (ranks == 1) {            /* a whole room: along z, as kt_room_split_axis says */
        *axis = want == KT_SPLIT_AUTO ? 2 : want;
        room_slab_split(n[*axis], 1, cut);
        return KT_OK;
    }
    for (int i = 0; i < count; i++) {
        int a = order[i], blocked = -1, at = 0;
        if (ranks > n[a]) {
            if (want == KT_SPLIT_AUTO)
                continue;
            return kt_fail(err, KT_EINVAL, "%d ranks for a room of %d layers along %c: each rank "
                           "needs at least one", ranks, n[a], "xyz"[a]);
        }
        if (place_cuts(so, g.spacing_m, a, n[a], ranks, cut, &blocked, &at) == 0) {
            *axis = a;
            return KT_OK;
        }
        if (want != KT_SPLIT_AUTO)
            return kt_fail(err, KT_EINVAL, "cannot split the room along %c over %d ranks: %s "
                           "(%c %.3g..%.3g m) lies across the cut near %c = %.3g m; split along "
                           "another axis (or let the split choose)", "xyz"[a], ranks,
                           so->keep[blocked].name[0] ? so->keep[blocked].name : "an instrument",
                           "xyz"[a], so->keep[blocked].lo_m[a], so->keep[blocked].hi_m[a],
                           "xyz"[a], at * g.spacing_m);
    }
    return kt_fail(err, KT_EINVAL, "%d ranks for a room of %d planes: each rank needs at least "
                   "one plane", ranks, g.nz);
}

int kt_room_split_part(const kt_room_params *p, int ranks, const kt_split_options *so, int rank,
                       int lo[3], int hi[3], size_t *bytes, kt_error *err)
{
    if (ranks < 1 || rank < 0 || rank >= ranks)
        return kt_fail(err, KT_EINVAL, "rank %d of %d does not exist", rank, ranks);
    int *cut = malloc(sizeof *cut * (size_t)(ranks + 1)), axis = 2;
    if (!cut)
        return kt_fail(err, KT_ENOMEM, "out of memory planning slabs");
    int rc = room_slab_choose(p, ranks, so, &axis, cut, err);
    if (rc >= 0) {
        kt_room_grid g;
        kt_room_estimate(p, &g, NULL);
        lo[0] = lo[1] = lo[2] = 0;
        hi[0] = g.nx, hi[1] = g.ny, hi[2] = g.nz;
        lo[axis] = cut[rank];
        hi[axis] = cut[rank + 1];
        const int n[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
        if (bytes)
            *bytes = ranks == 1 ? g.bytes
                                : box_bytes(n, p->viscosity_m > 0 ? 3 : 2, p->precision);
    }
    free(cut);
    return rc;
}

int kt_room_slab_plan(const kt_room_params *p, int ranks, int rank, int planes[2],
                      size_t *bytes, kt_error *err)
{
    kt_split_options so;
    kt_split_options_default(&so);
    so.axis = KT_SPLIT_Z;
    int lo[3], hi[3];
    int rc = kt_room_split_part(p, ranks, &so, rank, lo, hi, bytes, err);
    if (rc >= 0)
        planes[0] = lo[2], planes[1] = hi[2];
    return rc;
}

int kt_room_split_plan(const kt_room_params *p, int ranks, const kt_split_options *so,
                       kt_room_split *out, kt_error *err)
{
    if (!p || !out)
        return kt_fail(err, KT_EINVAL, "kt_room_split_plan: NULL argument");
    memset(out, 0, sizeof *out);
    if (ranks < 1)
        return kt_fail(err, KT_EINVAL, "%d ranks", ranks);
    int *cut = malloc(sizeof *cut * (size_t)(ranks + 1)), axis = 2;
    if (!cut)
        return kt_fail(err, KT_ENOMEM, "out of memory planning slabs");
    int rc = room_slab_choose(p, ranks, so, &axis, cut, err);
    kt_room_grid g;
    if (rc >= 0)
        kt_room_estimate(p, &g, NULL);
    for (int r = 0; rc >= 0 && r < ranks; r++) {
        int k = cut[r + 1] - cut[r];
        out->planes_min = r == 0 || k < out->planes_min ? k : out->planes_min;
        out->planes_max = k > out->planes_max ? k : out->planes_max;
    }
    free(cut);
    if (rc < 0)
        return rc;
    size_t esize = kt_precision_bytes(p->precision);
    int grids = p->viscosity_m > 0 ? 3 : 2, n[3] = {g.nx, g.ny, g.nz};
    out->ranks = ranks;
    out->axis = axis;
    /* the largest slab: one halo layer each side, or the whole room's ghosts */
    n[axis] = out->planes_max;
    out->host_bytes_max = ranks == 1 ? g.bytes : box_bytes(n, grids, p->precision);
    out->device_bytes_max = room_device_points((size_t)n[0] + 2, (size_t)n[1] + 2,
                                               (size_t)n[2] + 2, 1, esize) * esize * (size_t)grids;
    out->halo_bytes = layer_bytes(&g, axis, p->precision);
    out->best_axis = 2;
    out->best_halo_bytes = layer_bytes(&g, 2, p->precision);
    for (int a = 0; a < 2; a++) {
        const size_t b = layer_bytes(&g, a, p->precision);
        if (b < out->best_halo_bytes) {
            out->best_axis = a;
            out->best_halo_bytes = b;
        }
    }
    return KT_OK;
}

void room_slab_free(struct room_slab *s)
{
    if (!s)
        return;
    if (s->tp && s->tp->destroy)
        s->tp->destroy(s->ctx);
    free(s->cut);
    free(s->defer);
    free(s->stage);
    free(s);
}

int room_slab_attach(kt_room *room, int rank, int ranks, int axis, const int *cut,
                     const room_transport *tp, void *ctx, kt_error *err)
{
    struct room_slab *s = calloc(1, sizeof *s);
    if (s) {
        s->tp = tp;
        s->ctx = ctx;
        s->cut = malloc(sizeof *s->cut * (size_t)(ranks + 1));
    }
    if (!s || !s->cut) {
        if (s)
            room_slab_free(s);
        else if (tp->destroy)
            tp->destroy(ctx);
        return kt_fail(err, KT_ENOMEM, "out of memory splitting the room");
    }
    memcpy(s->cut, cut, sizeof *s->cut * (size_t)(ranks + 1));
    s->rank = rank;
    s->ranks = ranks;
    s->axis = axis;
    s->bad_plane = -1;
    s->bad_column[0] = -1;
    room->slab = s;
    room->tune_sweeps = ROOM_TUNED; /* a rank sweeps in parts: the default plan, untimed */
    int lo[3], hi[3];
    room_slab_box(room, lo, hi);
    if (room->plan.st || lo[axis] != cut[rank] || hi[axis] != cut[rank + 1])
        return kt_fail(err, KT_EINVAL, "this room cannot be split into slabs (7-point scheme "
                                       "only, %c %d..%d)", "xyz"[axis], lo[axis], hi[axis] - 1);
    if (axis != 2 && room->plan.shape.count > 0)
        return kt_fail(err, KT_EINVAL, "a room with solids is split along z only");
    return KT_OK;
}

void room_slab_box(const kt_room *room, int lo[3], int hi[3])
{
    const room_plan *pl = &room->plan;
    lo[0] = pl->x0, lo[1] = pl->y0, lo[2] = pl->z0;
    hi[0] = pl->x_end, hi[1] = pl->y_end, hi[2] = pl->z_end;
}

/* ---- stage A: the sweep with the halo exchange in flight ---- */

/* The rank's inside (in[]; its nodes beside no cut) and its faces on the
 * cuts: face f (0 low, 1 high) is the layer lo..hi of the split axis; a
 * face at the box's wall is part of the inside (count 0). */
static void slab_parts(const kt_room *r, int in_lo[3], int in_hi[3], int face[2][2][3])
{
    const struct room_slab *s = r->slab;
    const int a = s->axis;
    int lo[3], hi[3];
    room_slab_box(r, lo, hi);
    for (int f = 0; f < 2; f++)
        for (int d = 0; d < 3; d++)
            face[f][0][d] = lo[d], face[f][1][d] = hi[d];
    memcpy(in_lo, lo, sizeof lo);
    memcpy(in_hi, hi, sizeof hi);
    if (s->rank > 0)
        in_lo[a] = lo[a] + 1;
    if (s->rank + 1 < s->ranks)
        in_hi[a] = hi[a] - 1;
    face[0][1][a] = in_lo[a];                 /* lo[a] .. in_lo[a]-1 */
    face[1][0][a] = in_hi[a] > face[0][1][a] ? in_hi[a] : face[0][1][a];
}

size_t room_slab_layer_copy(const kt_room *r, void *field, int c, void *buf, int out)
{
    const room_plan *pl = &r->plan;
    const size_t esize = kt_precision_bytes(pl->params.precision);
    const int along_x = r->slab->axis == 0;
    /* a column along x: one node a row; a row along y: its run of columns */
    const size_t run = along_x ? esize : (size_t)(pl->x_end - pl->x0) * esize;
    const size_t rows = (size_t)(pl->z_end - pl->z0) * (size_t)(along_x ? pl->y_end - pl->y0 : 1);
    if (!buf)
        return run * rows;
    unsigned char *b = buf, *f = field;
    for (int z = pl->z0; z < pl->z_end; z++)
        for (int y = along_x ? pl->y0 : c; y < (along_x ? pl->y_end : c + 1); y++, b += run) {
            unsigned char *p = f + room_pidx(r, along_x ? c : pl->x0, y, z) * esize;
            memcpy(out ? b : p, out ? p : b, run);
        }
    return (size_t)(b - (unsigned char *)buf);
}

static int region_empty(const int lo[3], const int hi[3])
{
    return lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2];
}

int room_slab_sweep(kt_room *r, kt_error *err)
{
    struct room_slab *s = r->slab;
    int rc = s->tp->halo_start(s->ctx, r, r->now, err);
    if (rc < 0)
        return rc;
    /* the inside needs no halo; in parts of its planes, letting the
     * transfer progress */
    int in_lo[3], in_hi[3], face[2][2][3];
    slab_parts(r, in_lo, in_hi, face);
    const int lo = in_lo[2], hi = in_hi[2];
    for (int part = 0; part < 4 && !region_empty(in_lo, in_hi); part++) {
        int a[3], b[3];
        memcpy(a, in_lo, sizeof a);
        memcpy(b, in_hi, sizeof b);
        a[2] = lo + (hi - lo) * part / 4;
        b[2] = lo + (hi - lo) * (part + 1) / 4;
        if (!region_empty(a, b))
            room_sweep_region(r, a, b);
        s->tp->halo_test(s->ctx);
    }
    if ((rc = s->tp->halo_finish(s->ctx, err)) < 0)
        return rc;
    /* before the faces of Psi^{n-1} are overwritten (two-grid scheme) */
    room_slab_record_deferred(r);
    for (int f = 0; f < 2; f++)
        if (!region_empty(face[f][0], face[f][1]))
            room_sweep_region(r, face[f][0], face[f][1]);
    return KT_OK;
}

/* ---- stage D: instruments ---- */

static size_t window_bytes(const kt_room *r, const kt_instrument *ins)
{
    size_t esize = kt_precision_bytes(r->plan.params.precision);
    return (size_t)(ins->box_hi[0] - ins->box_lo[0] + 1) *
           (size_t)(ins->box_hi[1] - ins->box_lo[1] + 1) * esize;
}

/* Copies the box's window of plane z of Psi^{n+1} to (out = 1) or from the stage. */
static void move_window(kt_room *r, const kt_instrument *ins, int z, int out)
{
    size_t esize = kt_precision_bytes(r->plan.params.precision);
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
    s->bad_column[0] = -1;
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
    if (rc >= 0 && s->bad_column[0] >= 0)
        rc = kt_fail(err, KT_EINVAL,
                     "%s: touched air node (%d, %d), another rank's (rank %d holds x %d..%d, "
                     "y %d..%d)", ins_label(ins), s->bad_column[0], s->bad_column[1], s->rank,
                     r->plan.x0, r->plan.x_end - 1, r->plan.y0, r->plan.y_end - 1);
    return rc;
}

int room_slab_runner(const struct room_slab *s, const kt_instrument *ins, int *borrow)
{
    int runner = room_slab_owner(s, ins->box_hi[s->axis]);
    /* across a cut along x or y nothing is lent: the cuts keep clear of the
     * boxes (room_slab_check_instrument) */
    *borrow = s->axis == 2 && runner > 0 && ins->box_lo[2] < s->cut[runner];
    return runner;
}

int room_slab_check_instrument(const kt_room *room, const kt_instrument *ins, kt_error *err)
{
    const struct room_slab *s = room->slab;
    if (!s || s->axis == 2)
        return KT_OK;
    int a = s->axis, lo = room_slab_owner(s, ins->box_lo[a]);
    if (lo == room_slab_owner(s, ins->box_hi[a]))
        return KT_OK;
    return kt_fail(err, KT_EINVAL,
                   "%s: its box (%c %d..%d) crosses the cut between ranks %d and %d at %c = "
                   "%d: a room split along %c keeps each instrument on one rank (split along "
                   "another axis, or let the split choose)", ins_label(ins), "xyz"[a],
                   ins->box_lo[a], ins->box_hi[a], lo, lo + 1, "xyz"[a], s->cut[lo + 1],
                   "xyz"[a]);
}

int room_slab_runner_of(const kt_room *room, int k, int *borrow)
{
    *borrow = 0;
    return room->slab ? room_slab_runner(room->slab, room->plan.ins[k].ins, borrow) : 0;
}

int room_slab_instruments(kt_room *r, kt_error *err)
{
    struct room_slab *s = r->slab;
    for (int k = 0; k < r->plan.ins_count; k++) {
        kt_instrument *ins = r->plan.ins[k].ins;
        if (!ins->process)
            continue;
        int borrow, runner = room_slab_runner(s, ins, &borrow);
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

void room_slab_column_touched(const kt_room *r, int x, int y)
{
    r->slab->bad_column[0] = x;
    r->slab->bad_column[1] = y;
}

int room_slab_layer_ok(const kt_room *r, int z)
{
    if (z >= r->plan.z0 && z < r->plan.z_end)
        return 1;
    if (r->in_step && z == r->plan.z0 - 1 && z >= 0 && r->slab->axis == 2)
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

int room_slab_mic_role(const kt_room *r, const double pos[3])
{
    int i0[3], lo[3], hi[3];
    double f[3];
    room_mic_cell(&r->plan, pos, i0, f);
    const int a = r->slab ? r->slab->axis : 2;
    room_slab_box(r, lo, hi);
    if (i0[a] < lo[a] || i0[a] >= hi[a])
        return ROOM_MIC_ELSEWHERE;
    return f[a] == 0 || i0[a] + 1 < hi[a] ? ROOM_MIC_NOW : ROOM_MIC_LATER;
}

int room_slab_mic_sample(kt_room *r, int mic, const double pos[3], double *out, kt_error *err)
{
    struct room_slab *s = r->slab;
    int role = room_slab_mic_role(r, pos);
    *out = 0.0;
    if (role == ROOM_MIC_ELSEWHERE)
        return KT_OK;                       /* another rank's sample */
    if (role == ROOM_MIC_NOW) {
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
    const room_plan *pl = &r->plan;
    bad |= !isfinite(room_get(r, r->now, room_pidx(r, (pl->x0 + pl->x_end) / 2,
                                                   (pl->y0 + pl->y_end) / 2,
                                                   (pl->z0 + pl->z_end) / 2)));
    return r->slab->tp->any(r->slab->ctx, bad);
}

/* ---- the public side ---- */

int kt_room_rank(const kt_room *room) { return room->slab ? room->slab->rank : 0; }
int kt_room_ranks(const kt_room *room) { return room->slab ? room->slab->ranks : 1; }
int kt_room_split_axis(const kt_room *room) { return room->slab ? room->slab->axis : 2; }

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
            if (room_slab_owner(s, i0[s->axis]) == src)
                m->signal[n] = tmp[n];
        }
    }
    return KT_OK;
}

/* Both fields' halo planes from the neighbours, as they are now. */
int room_slab_refresh_halos(kt_room *room, kt_error *err)
{
    struct room_slab *s = room->slab;
    int rc = KT_OK;
    void *field[2] = {room->now, room->prev};
    for (int k = 0; k < 2 && rc >= 0; k++)
        if ((rc = s->tp->halo_start(s->ctx, room, field[k], err)) >= 0)
            rc = s->tp->halo_finish(s->ctx, err);
    return rc;
}

int kt_room_flush(kt_room *room, kt_error *err)
{
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_room_flush: room is NULL");
    struct room_slab *s = room->slab;
    if (!s)
        return KT_OK;
    /* Psi^{n+1}'s halo is what the next step's exchange would bring */
    int rc = s->tp->halo_start(s->ctx, room, room->now, err);
    if (rc < 0 || (rc = s->tp->halo_finish(s->ctx, err)) < 0)
        return rc;
    room_slab_record_deferred(room);
    return KT_OK;
}

int kt_room_runs_instrument(const kt_room *room, const void *self)
{
    for (int k = 0; k < room->plan.ins_count; k++)
        if (room->plan.ins[k].ins->self == self) {
            int borrow;
            return room_slab_runner_of(room, k, &borrow) == kt_room_rank(room);
        }
    return 0;
}

int kt_room_collect(kt_room *room, kt_error *err)
{
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_room_collect: room is NULL");
    struct room_slab *s = room->slab;
    int rc = kt_room_flush(room, err);
    if (!s || rc < 0)
        return rc;
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
