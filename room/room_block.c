/* room_block.c - temporal blocking of kt_room_run (docs/room.md, "Temporal
 * blocking"): an air-only 7-point room with two grids advances several steps
 * per pass through memory, the same bits as one step at a time.  The pass
 * itself is room_sweep_impl.h's block; here: which rooms it applies to, the
 * sources and microphones served inside a pass, and the depth and tile,
 * asked for or timed over the run's first passes as the sweep's plans are.
 *
 * One step per pass reads Psi^n and Psi^{n-1} and writes Psi^{n+1}: at the
 * memory's copy rate, no faster.  A pass of depth D reads and writes each
 * field about once for D steps while the planes in flight stay in cache. */
#include "room_internal.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each candidate is timed this many passes; its fastest counts. */
#define ROOM_BLOCK_ROUNDS 2

/* Why the room cannot be blocked, or NULL: everything that needs the whole
 * field of one step before the next begins.  Instruments need their band
 * of planes each step (the hand-over, below): where it is half the room or
 * more, the passes would gain little over the one-step sweep. */
static const char *obstacle(const kt_room *r)
{
    if (r->slab)
        return "the room is split over ranks";
    if (r->plan.st || r->plan.fcc)
        return "only the 7-point scheme is blocked";
    if (r->plan.grids != 2)
        return "viscosity needs a third grid: the room keeps the one-step sweep";
    if (r->abc)
        return "absorbing walls are not blocked: the room keeps the one-step sweep";
    const char *band_why = room_block_band_obstacle(&r->plan);
    if (band_why)
        return band_why;
    if (r->plan.shape.count)
        return "solids inside the room are corrected at every step: the room keeps the "
               "one-step sweep";
    return NULL;
}

/* Rows of a tile whose depth + 2 planes of both fields fill about the L2
 * cache of a core (1 MiB on the 2-core EPYC host of 2026-11), at least 8. */
static int cache_tile(const kt_room *r, int depth)
{
    const size_t esize = kt_precision_bytes(r->plan.params.precision);
    size_t rows = ((size_t)1 << 20) / ((size_t)(depth + 2) * 2 * r->plan.px * esize);
    return rows < 8 ? 8 : rows > (size_t)r->plan.grid.ny ? r->plan.grid.ny : (int)rows;
}

/* The choice in words; with instruments, the planes stepped one at a time. */
static void set_name(const kt_room *r, room_block_choice *b)
{
    int band[2];
    if (b->use_depth < 2)
        snprintf(b->name, sizeof b->name, "off");
    else if (room_block_band(&r->plan, band))
        snprintf(b->name, sizeof b->name,
                 "depth %d, tiles of %d rows, planes %d..%d of %d a step at a time",
                 b->use_depth, b->use_tile, band[0], band[1], r->plan.grid.nz);
    else
        snprintf(b->name, sizeof b->name, "depth %d, tiles of %d rows", b->use_depth,
                 b->use_tile);
}

/* The candidates: one step at a time, and each depth asked for (2, 4, 6, 8
 * when timed) with tiles of one thread's share of the rows and of the
 * cache's size (or the tile asked for).  On the 2-core EPYC host a
 * 256 x 296 x 208 room ran fastest at depth 6-8 in either tile, at the row
 * function's in-cache rate. */
static void plan_candidates(kt_room *r)
{
    room_block_choice *b = &r->block;
    const int ny = r->plan.grid.ny, share = (ny + r->nthreads - 1) / r->nthreads;
    static const int depths[] = {2, 4, 6, 8};
    b->count = b->timed = b->tuned = 0;
    if (b->ask_depth != 0 && b->ask_tile != 0) {
        b->use_depth = b->ask_depth;
        b->use_tile = b->ask_tile;
        b->tuned = 1;
        set_name(r, b);
        return;
    }
    if (b->ask_depth == 0)
        room_block_choice_add(b, 1, 0);
    for (int i = 0; i < 4; i++) {
        int d = b->ask_depth ? b->ask_depth : depths[i];
        if (b->ask_tile) {
            room_block_choice_add(b, d, b->ask_tile);
        } else {
            room_block_choice_add(b, d, share);
            room_block_choice_add(b, d, cache_tile(r, d));
        }
        if (b->ask_depth)
            break;
    }
}

void room_block_init(kt_room *room)
{
    memset(&room->block, 0, sizeof room->block);
    plan_candidates(room);
}

int kt_room_set_blocking(kt_room *room, int depth, int tile_rows, kt_error *err)
{
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_room_set_blocking: room is NULL");
    if (depth < 0 || depth > ROOM_BLOCK_MAX_DEPTH)
        return kt_fail(err, KT_EINVAL,
                       "temporal blocking: depth %d is out of range (0: timed, 1: off, 2..%d)",
                       depth, ROOM_BLOCK_MAX_DEPTH);
    if (tile_rows < 0 || tile_rows > room->plan.grid.ny)
        return kt_fail(err, KT_EINVAL,
                       "temporal blocking: tiles of %d rows (0: timed, 1..%d, the room's rows)",
                       tile_rows, room->plan.grid.ny);
    int rc = room_block_choice_ask(&room->block, depth, tile_rows, obstacle(room),
                                   "temporal blocking", err);
    if (rc == KT_OK)
        plan_candidates(room);
    return rc;
}

const char *kt_room_blocking(const kt_room *room)
{
    return room ? room_block_choice_name(&room->block, obstacle(room)) : NULL;
}

void room_block_wait(const int *done, int k)
{
    /* a short spin, then the core goes to whoever else needs it: the host
     * is shared, and the thread we wait for may be the one descheduled */
    for (int spins = 0; __atomic_load_n(done, __ATOMIC_ACQUIRE) < k; spins++)
        if (spins >= 64)
            sched_yield();
}

void room_block_post(int *done, int k)
{
    __atomic_store_n(done, k, __ATOMIC_RELEASE);
}

/* Stage C of level `level` on its planes za..zb-1, rows ya..yb-1, just
 * swept: a source's sample goes in before any later level reads the node. */
static void level_sources(const kt_room *r, room_block_pass *bp, int level, int za, int zb,
                          int ya, int yb)
{
    void *out = bp->field[level & 1];
    const int64_t lv = bp->n + level;
    for (int k = 0; k < r->plan.src_count; k++) {
        const room_source *s = &r->plan.src[k];
        int64_t m = lv - s->first_level;
        if (m < 0 || m >= s->count)
            continue;
        int p[3];
        room_plan_node_xyz(&r->plan, s->node, p);
        if (p[2] >= za && p[2] < zb && p[1] >= ya && p[1] < yb)
            room_add(r, out, s->node, s->samples[m]);
    }
}

/* Stage E there: a microphone's corners are read before the next level
 * overwrites Psi^{n+l-1}. */
static void level_mics(const kt_room *r, room_block_pass *bp, int level, int za, int zb,
                       int ya, int yb)
{
    const void *out = bp->field[level & 1], *other = bp->field[(level - 1) & 1];
    const int mics = r->plan.mic_count;
    for (int m = 0; m < mics; m++) {
        const int *i0 = bp->mic_cell[(level - 1) * mics + m];
        double *d = bp->mic_diff[(level - 1) * mics + m];
        for (int c = 0; c < 8; c++) {
            int y = i0[1] + ((c >> 1) & 1), z = i0[2] + (c >> 2);
            if (z < za || z >= zb || y < ya || y >= yb)
                continue;
            size_t i = room_pidx(r, i0[0] + (c & 1), y, z);
            d[c] = room_get(r, out, i) - room_get(r, other, i);
        }
    }
}

void room_block_level_done(const kt_room *r, room_block_pass *bp, int level, int z, int ya,
                           int yb)
{
    level_sources(r, bp, level, z, z + 1, ya, yb);
    level_mics(r, bp, level, z, z + 1, ya, yb);
}

/* Level l of the instruments' band: one step of design note 7.2 over planes
 * za..zb-1 (A, B, C, D, E; F is the fields' alternation), the room's
 * fields and step set as kt_room_step has them, so that process() reads
 * and corrects the layers it would.  The trapezoids left the planes za-1
 * and zb at levels l and l-1 in the two fields: level l-1 is what A reads. */
static int band_step(kt_room *r, room_block_pass *bp, int l, int za, int zb, kt_error *err)
{
    const int ny = r->plan.grid.ny;
    r->now = bp->field[(l - 1) & 1];
    r->prev = r->next = bp->field[l & 1];
    r->n = bp->n + l - 1;
    room_sweep_planes(r, za, zb);
    double t0 = kt_seconds();
    room_boundary_corrections(r);
    level_sources(r, bp, l, za, zb, 0, ny);
    double t1 = kt_seconds();
    int rc = room_run_instruments(r, err);
    double t2 = kt_seconds();
    level_mics(r, bp, l, za, zb, 0, ny);
    r->timing.boundary_s += t1 - t0;
    r->timing.instruments_s += t2 - t1;
    return rc;
}

/* The pass around the instruments' band [b0, b1] (docs/room.md, "Temporal
 * blocking"): the planes below it as a trapezoid in z and t (level l sweeps
 * 0 .. b0 - l), those above likewise (b1 + l .. nz - 1), then one step at
 * a time the planes between, widening by a plane each side a level
 * (b0 - l + 1 .. b1 + l - 1).  Each plane keeps its last two levels in the
 * two fields, so what the band's step l reads beside it, level l - 1, is
 * still there.  Every node is swept once a level by the row functions. */
static int hand_over(kt_room *r, room_block_pass *bp, const int band[2], kt_error *err)
{
    const int nz = r->plan.grid.nz;
    void *now = r->now, *prev = r->prev;
    const int below[2] = {0, band[0] + 1}, above[2] = {band[1], nz};
    for (int side = 0; side < 2; side++) {
        memcpy(bp->z, side ? above : below, sizeof bp->z);
        bp->shrink[0] = side;
        bp->shrink[1] = !side;
        room_sweep_block(r, bp);
    }
    int rc = KT_OK;
    for (int l = 1; l <= bp->depth && rc >= 0; l++) {
        int za = band[0] - l + 1, zb = band[1] + l;
        rc = band_step(r, bp, l, za < 0 ? 0 : za, zb > nz ? nz : zb, err);
    }
    r->now = now;
    r->prev = r->next = prev;
    if (rc >= 0)   /* on failure it names the step that failed, as kt_room_step's */
        r->n = bp->n;
    return rc;
}

/* The pass: the whole room blocked, or handed over around the instruments. */
static int block_pass(kt_room *r, room_block_pass *bp, kt_error *err)
{
    int band[2];
    if (room_block_band(&r->plan, band))
        return hand_over(r, bp, band, err);
    bp->z[0] = 0;
    bp->z[1] = r->plan.grid.nz;
    room_sweep_block(r, bp);
    return KT_OK;
}

int room_block_steps(kt_room *r, int depth, int tile, kt_error *err)
{
    const int mics = r->plan.mic_count, tiles = (r->plan.grid.ny + tile - 1) / tile;
    room_block_pass bp = {.depth = depth, .tile = tile, .n = r->n, .field = {r->now, r->prev}};
    bp.hooks = r->plan.src_count > 0 || mics > 0;
    bp.done = malloc(sizeof *bp.done * (size_t)tiles);
    if (mics) {
        bp.mic_cell = malloc(sizeof *bp.mic_cell * (size_t)(depth * mics));
        bp.mic_frac = malloc(sizeof *bp.mic_frac * (size_t)(depth * mics));
        bp.mic_diff = calloc((size_t)(depth * mics), sizeof *bp.mic_diff);
    }
    int rc = KT_OK;
    if (!bp.done || (mics && (!bp.mic_cell || !bp.mic_frac || !bp.mic_diff)))
        rc = kt_fail(err, KT_ENOMEM, "out of memory for a blocked pass");
    for (int m = 0; m < mics && rc >= 0; m++)
        rc = room_mic_reserve(&r->plan.mic[m], depth, err);
    for (int l = 1; l <= depth && rc >= 0; l++)
        for (int m = 0; m < mics; m++) {
            double pos[3];
            room_mic_position(&r->plan.mic[m], (double)(r->n + l) * r->plan.grid.time_step_s,
                              pos);
            room_mic_cell(&r->plan, pos, bp.mic_cell[(l - 1) * mics + m],
                          bp.mic_frac[(l - 1) * mics + m]);
        }
    double t0 = kt_seconds(), staged = r->timing.boundary_s + r->timing.instruments_s;
    if (rc >= 0)
        rc = block_pass(r, &bp, err);
    /* the sweeps' share; the band's stages B-D went to their own */
    r->timing.bulk_s += kt_seconds() - t0 - (r->timing.boundary_s + r->timing.instruments_s -
                                             staged);
    if (rc >= 0) {
        const double scale = room_mic_scale(r);
        for (int l = 1; l <= depth; l++)
            for (int m = 0; m < mics; m++) {
                room_mic *mic = &r->plan.mic[m];
                mic->signal[mic->count++] =
                    scale * room_mic_corner_sum(bp.mic_frac[(l - 1) * mics + m],
                                                bp.mic_diff[(l - 1) * mics + m]);
            }
        if (depth & 1) {         /* Psi^{n+D} was written over Psi^{n-1} */
            void *t = r->now;
            r->now = r->prev;
            r->prev = r->next = t;
        }
        r->n += depth;
        r->timing.steps += depth;
        r->timing.blocked_steps += depth;
    }
    free(bp.done);
    free(bp.mic_cell);
    free(bp.mic_frac);
    free(bp.mic_diff);
    return rc;
}

static int one_step(kt_room *r, kt_error *err)
{
    int rc = kt_room_step(r, err);
    return rc < 0 ? rc : 1;
}

/* One timed pass (or step) of the next candidate; after the last, the
 * fastest per step is kept.  Returns the steps taken. */
static int tuning_pass(kt_room *r, int64_t avail, kt_error *err)
{
    room_block_choice *b = &r->block;
    const int c = b->timed % b->count;
    if (b->depth[c] > avail)
        return one_step(r, err);
    double t0 = kt_seconds();
    int rc = b->depth[c] < 2 ? kt_room_step(r, err) : room_block_steps(r, b->depth[c], b->tile[c], err);
    double per_step = (kt_seconds() - t0) / b->depth[c];
    if (rc < 0)
        return rc;
    if (room_block_choice_timed(b, c, per_step, ROOM_BLOCK_ROUNDS))
        set_name(r, b);
    return b->depth[c];
}

int kt_room_advance(kt_room *room, int64_t nsteps, kt_error *err)
{
    if (!room || nsteps < 0)
        return kt_fail(err, KT_EINVAL, "kt_room_advance: no room or negative step count");
    for (int64_t s = 0; s < nsteps;) {
        int rc = room_block_advance(room, nsteps - s, err);
        if (rc < 0)
            return rc;
        s += rc;
    }
    return KT_OK;
}

int room_block_advance(kt_room *room, int64_t avail, kt_error *err)
{
    room_block_choice *b = &room->block;
    /* the sweep's plan first (its timed steps are one at a time) */
    if (avail < 2 || b->ask_depth == 1 || obstacle(room) || room->tune_sweeps != ROOM_TUNED ||
        (b->tuned && b->use_depth < 2))
        return one_step(room, err);
    if (!b->tuned)
        return tuning_pass(room, avail, err);
    int depth = b->use_depth < avail ? b->use_depth : (int)avail;
    int rc = room_block_steps(room, depth, b->use_tile, err);
    return rc < 0 ? rc : depth;
}
