/* room_block.cu - temporal blocking of the device room (docs/gpu.md,
 * "Temporal blocking"; the CPU half is room/room_block.c): the air of a
 * 7-point room with two grids advances D steps per pass through global
 * memory, the same bits as D calls of the one-step sweep (sweep2).
 *
 * One step reads Psi^n and Psi^{n-1} and writes Psi^{n+1}: 12 bytes a node
 * in single, at the copy rate and no faster.  A pass reads both fields once
 * and writes the last two of its D levels once: 16 bytes a node for D steps.
 *
 * The pass (block_pass, room_block_pass.cuh) is 2.5D streaming along z.  A
 * thread block owns an x-y tile and a halo of D columns each side (the
 * extended tile: 32 columns by 32 or 64 rows, on 32 x 8, 16 or 32 threads,
 * each thread CY columns of one x and consecutive rows) and marches up its
 * z slab.
 * At iteration `it` level 0 loads plane `it` of Psi^n and level l = 1 .. D
 * computes Psi^{n+l} at plane it - l (a wavefront: each level trails the one
 * below by a plane, exactly what its update needs).  Per level below D a
 * thread keeps its columns' last three planes in registers (z-1, z, z+1 of
 * the level below, and Psi^{n+l-2} at z two planes back), and the block
 * keeps each level's newest plane in shared memory, twice (parity of it):
 * level l reads the x-y neighbours of level l-1's plane computed at the
 * previous iteration and writes its own into this iteration's copy, so one
 * __syncthreads per iteration orders everything.  Level l is right on the
 * extended tile shrunk by l columns each side (what lies further out reads
 * the tile's edge: wrong values that never reach the output), so levels D
 * and D-1 are right on the tile; a z slab starts D planes early for the same
 * reason.  Only Psi^{n+D} and Psi^{n+D-1} of the tile's nodes in the slab
 * are written (and, handing a band over, the last two levels of the planes
 * beside it: below).  Each node's update is node_update (room_sweep_node.cuh),
 * sweep2's, with the walls' ghosts made in sweep2's order from the same
 * level's values: the same operations on the same values, bit for bit.
 * Most iterations test nothing per node (block_march's PLAIN and EDGE
 * kinds).
 *
 * Storage: the one-step sweep writes Psi^{n+1} over Psi^{n-1} in place,
 * which a pass cannot: a block reads its halo columns, which belong to the
 * neighbouring tiles, and blocks run in no order, so a tile written in
 * place could be read by a neighbour after it changed.  A pass therefore
 * reads the room's two fields and writes the other pair of buffers
 * (R->alt, allocated with the first pass and filled with copies so that
 * their halos, which no sweep of two grids writes, are the fields'); then
 * the pairs change roles.  Nothing a pass reads is written during it.
 *
 * Sources and microphones are served inside the pass (hooks): a source's
 * sample goes into level l where the node is computed, before anything
 * reads it (stage C); a microphone's corner difference Psi^{n+l} -
 * Psi^{n+l-1} is stored by the one block that owns the node, and after the
 * pass block_mics sums each level's eight in tap_difference's order.
 *
 * Drums (the mirror's instruments) keep their per-step coupling: a pass
 * hands their band of planes over (hand_over below, docs/gpu.md): the
 * planes below and above it go as trapezoids in z and t whose edge planes
 * keep their last two levels, then the mirror steps the band one level at
 * a time, drums and all.
 *
 * Depth and tile: candidates timed over the first passes of
 * kt_cuda_room_run or the mirror's run (as the CPU times its own; "off"
 * where one step at a time wins), or fixed by
 * kt_cuda_room_set_blocking. */
#include "room_block_pass.cuh"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each candidate is timed this many passes; its fastest counts. */
#define BLOCK_ROUNDS 2
static_assert(1 + (ROOM_GPU_MAX_DEPTH - 1) * ROOM_GPU_TILES <= ROOM_BLOCK_CANDIDATES,
              "every depth and tile, and one step at a time, fit the candidates' table");

/* The extended tiles compiled (room_block_pass.cuh launch_tile): 32
 * columns by tile_rows rows, of blocks of 32 x tile_by threads. */
static const int tile_rows[ROOM_GPU_TILES] = {32, 32, 64, 32};
static const int tile_by[ROOM_GPU_TILES] = {8, 16, 16, 32};

/* Stage E after a pass: each level's sample from its eight corner
 * differences, in tap_difference's order and rounding; then the slot moves
 * on by D, and the step count too unless the band's steps moved it (a
 * hand-over).  One block; a thread per microphone. */
__global__ void block_mics(room_gpu_hooks h, int depth, double scale, int count_steps)
{
    const int slot = *h.slot;
    for (int m = threadIdx.x; m < h.mic_count; m += blockDim.x)
        for (int l = 1; l <= depth; l++) {
            const mic_tap *t = h.taps + (size_t)m * MIRROR_BLOCK + (h.moving[m] ? slot + l - 1 : 0);
            const double *d = h.diff + ((size_t)(l - 1) * h.mic_count + m) * 8;
            double v = 0;
            for (int c = 0; c < 8; c++)
                if (t->w[c] != 0)
                    v = __dadd_rn(v, __dmul_rn(t->w[c], d[c]));
            h.out[(size_t)m * MIRROR_BLOCK + slot + l - 1] = __dmul_rn(scale, v);
        }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (count_steps) /* else the band's steps counted theirs */
            *h.n += depth;
        *h.slot = slot + depth;
    }
}

/* ---- host side ---- */

/* Planes per z slab for a pass whose blocks an SM holds `resident` at a
 * time: the count of slabs (each at least four times the depth long) that
 * minimises waves x iterations, ceil(tiles slabs / (SMs resident)) waves of
 * blocks each marching ceil(nz / slabs) + 2 D planes (a slab re-reads D
 * planes each side).  A last wave a fifth full had cost the air's best
 * single-precision pass about a tenth of its time (ncu, H100, 2026-11-26:
 * 3 slabs, 5.2 waves). */
static int slab_planes(const kt_cuda_room *R, int depth, int tile, int resident)
{
    const int ex = BLOCK_TX, ey = tile_rows[tile];
    const long long tiles = (long long)kt_cuda_blocks(R->plan.grid.nx, ex - 2 * depth) *
                            kt_cuda_blocks(R->plan.grid.ny, ey - 2 * depth);
    int sms = 132;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) {
        cudaGetLastError();
        sms = 132;
    }
    const long long at_once = (long long)sms * (resident > 0 ? resident : 1);
    const int nz = R->plan.grid.nz, most = nz / (4 * depth) > 1 ? nz / (4 * depth) : 1;
    int best = 1;
    long long best_cost = -1;
    for (int slabs = 1; slabs <= most; slabs++) {
        const long long planes = (nz + slabs - 1) / slabs;
        const long long waves = (tiles * ((nz + planes - 1) / planes) + at_once - 1) / at_once;
        const long long cost = waves * (planes + 2 * depth);
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best = slabs;
        }
    }
    return (nz + best - 1) / best;
}

/* How many blocks of the pass an SM holds at once: the air's instance, or
 * with `a` that of a's kind. */
template <typename REAL>
static int resident_blocks(int depth, int tile, const block_args<REAL> *a)
{
    block_args<REAL> air;
    memset(&air, 0, sizeof air);
    air.band_lo = 1;
    air.band_hi = 0;
    int resident = 1;
    room_block_launch(a ? *a : air, depth, tile, dim3(1, 1, 1), 0, &resident);
    return resident;
}

/* The pass over planes zfirst .. zlast-1, levels kept off the band
 * band_lo .. band_hi (band_lo > band_hi: none). */
template <typename REAL>
static void launch_pass(kt_cuda_room *R, int depth, int tile, const room_gpu_hooks *hooks,
                        int zfirst, int zlast, int band_lo, int band_hi, cudaStream_t stream)
{
    block_args<REAL> a;
    a.k = coefficients<REAL>(R);
    a.now = (const REAL *)R->now;
    a.prev = (const REAL *)R->prev;
    a.last = (REAL *)R->alt[0];
    a.before = (REAL *)R->alt[1];
    a.zfirst = zfirst;
    a.zlast = zlast;
    a.band_lo = band_lo;
    a.band_hi = band_hi;
    if (hooks)
        a.h = *hooks;
    else
        memset(&a.h, 0, sizeof a.h);
    a.zslab = slab_planes(R, depth, tile, resident_blocks<REAL>(depth, tile, &a));
    const int ex = BLOCK_TX, ey = tile_rows[tile];
    const dim3 grid(kt_cuda_blocks(R->plan.grid.nx, ex - 2 * depth),
                    kt_cuda_blocks(R->plan.grid.ny, ey - 2 * depth),
                    kt_cuda_blocks(zlast - zfirst, a.zslab));
    if (zlast > zfirst)
        room_block_launch(a, depth, tile, grid, stream, NULL);
}

const char *room_gpu_block_obstacle(const kt_cuda_room *R)
{
    if (R->block_no_memory)
        return "the GPU has no room for the blocked pass's second pair of fields: the room "
               "keeps the one-step sweep";
    if (R->plan.z0 != 0 || R->plan.z_end != R->plan.grid.nz || R->plan.x0 != 0 ||
        R->plan.x_end != R->plan.grid.nx || R->plan.y0 != 0 || R->plan.y_end != R->plan.grid.ny)
        return "the room is split over GPUs";
    if (R->plan.st || R->plan.fcc)
        return "only the 7-point scheme is blocked";
    if (R->plan.grids != 2)
        return "viscosity needs a third grid: the room keeps the one-step sweep";
    if (R->abc_sums || R->abc)
        return "absorbing walls are not blocked: the room keeps the one-step sweep";
    if (R->zrange || R->shape || R->fold.word)
        return "solids inside the room are corrected at every step: the room keeps the "
               "one-step sweep";
    if (R->listed && R->band[0] > R->band[1])
        return "instruments couple to the air at every step: the room keeps the one-step "
               "sweep";
    return NULL;
}

/* The other pair of buffers, copies of the fields (their halos). */
int room_gpu_block_prepare(kt_cuda_room *R, kt_error *err)
{
    const size_t bytes = R->points * R->esize;
    for (int b = 0; b < 2; b++) {
        if (R->alt[b])
            continue;
        int rc = kt_cuda_alloc(bytes, &R->alt[b], err);
        if (rc == KT_ENOMEM) { /* the room fits, its second pair does not: no blocking */
            kt_cuda_free(R->alt[0]);
            R->alt[0] = NULL;
            R->block_no_memory = 1;
        }
        if (rc < 0)
            return rc;
        cudaError_t e = kt_cuda_landed(cudaMemcpy(R->alt[b], b ? R->prev : R->now, bytes,
                                                  cudaMemcpyDeviceToDevice));
        if (e != cudaSuccess)
            return kt_cuda_fail(err, e, "copying a room field for the blocked pass");
    }
    return KT_OK;
}

/* The buffer of the other pair that holds level l of a pass of `depth`
 * (Psi^{n+depth} in alt[0], Psi^{n+depth-1} in alt[1]). */
static void *level_buffer(const kt_cuda_room *R, int depth, int l)
{
    return R->alt[((depth - l) % 2 + 2) % 2];
}

/* Planes lo .. hi of field `from` into `to` (the nodes between their first
 * and last; the halos around are the same in both). */
static cudaError_t copy_planes(const kt_cuda_room *R, void *to, const void *from, int lo, int hi,
                               cudaStream_t stream)
{
    const long long a = kt_cuda_room_index(R, 0, 0, lo), b = kt_cuda_room_index(R, 0, 0, hi + 1);
    return cudaMemcpyAsync((char *)to + (size_t)a * R->esize, (const char *)from + (size_t)a *
                           R->esize, (size_t)(b - a) * R->esize, cudaMemcpyDeviceToDevice,
                           stream);
}

/* The hand-over: the planes below and above R->band as trapezoids (level l
 * sweeps p <= band[0] - l and p >= band[1] + l, each plane's last two levels
 * written), then the band level by level through `band`, which the
 * trapezoids' edge planes and the copies of Psi^n and Psi^{n-1} below feed;
 * docs/room.md, "Drums: the hand-over", says why it is exact. */
template <typename REAL>
static int hand_over(kt_cuda_room *R, int depth, int tile, const room_gpu_hooks *hooks,
                     const room_gpu_band *band, cudaStream_t stream, kt_error *err)
{
    const int lo = R->band[0], hi = R->band[1], nz = R->plan.grid.nz;
    const int clo = lo > 0 ? lo - 1 : 0, chi = hi < nz - 1 ? hi + 1 : nz - 1;
    /* levels 0 and -1 where the band's first step reads them (the pass
     * then writes level 1 of planes lo - 1 and hi + 1 over the copy) */
    cudaError_t e = copy_planes(R, level_buffer(R, depth, 0), R->now, clo, chi, stream);
    if (e == cudaSuccess)
        e = copy_planes(R, level_buffer(R, depth, -1), R->prev, clo, chi, stream);
    if (e != cudaSuccess)
        return kt_cuda_fail(err, e, "copying the instruments' band for a blocked pass");
    launch_pass<REAL>(R, depth, tile, hooks, 0, lo, lo, hi, stream);
    launch_pass<REAL>(R, depth, tile, hooks, hi + 1, nz, lo, hi, stream);
    for (int l = 1; l <= depth; l++) {
        R->now = level_buffer(R, depth, l - 1);
        R->prev = R->next = level_buffer(R, depth, l);
        const int z_lo = lo - l + 1 > 0 ? lo - l + 1 : 0;
        const int z_hi = hi + l - 1 < nz - 1 ? hi + l - 1 : nz - 1;
        int rc = band->step(band->ctx, l, z_lo, z_hi, err);
        if (rc < 0)
            return rc;
    }
    return KT_OK;
}

int room_gpu_block_pass(kt_cuda_room *R, int depth, int tile, const room_gpu_hooks *hooks,
                        const room_gpu_band *band, cudaStream_t stream, kt_error *err)
{
    int rc = room_gpu_block_prepare(R, err);
    if (rc < 0)
        return rc;
    const int single = R->plan.params.precision == KT_SINGLE, nz = R->plan.grid.nz;
    const int handing = band && hooks && R->band[0] <= R->band[1]; /* the mirror's */
    void *now = R->now, *prev = R->prev; /* the band's steps move R's pointers */
    if (handing)
        rc = single ? hand_over<float>(R, depth, tile, hooks, band, stream, err)
                    : hand_over<double>(R, depth, tile, hooks, band, stream, err);
    else if (single)
        launch_pass<float>(R, depth, tile, hooks, 0, nz, 1, 0, stream);
    else
        launch_pass<double>(R, depth, tile, hooks, 0, nz, 1, 0, stream);
    if (rc < 0) {
        R->now = now;
        R->prev = R->next = prev;
        return rc;
    }
    if (hooks)
        block_mics<<<1, hooks->mic_count > 0 ? 32 : 1, 0, stream>>>(*hooks, depth, hooks->scale,
                                                                  !handing);
    /* Psi^{n+D} and Psi^{n+D-1} are the fields now; the old pair is free
     * (field[] and alt[] keep owning four distinct buffers) */
    R->field[0] = R->now = R->alt[0];
    R->field[1] = R->prev = R->next = R->alt[1];
    R->alt[0] = now;
    R->alt[1] = prev;
    R->n += depth;
    return KT_OK;
}

/* ---- depth and tile ---- */

static void set_name(room_block_choice *b, const kt_cuda_room *R)
{
    if (b->use_depth < 2) {
        snprintf(b->name, sizeof b->name, "off");
        return;
    }
    const int ex = BLOCK_TX, ey = tile_rows[b->use_tile];
    int len = snprintf(b->name, sizeof b->name, "depth %d, tiles of %d x %d (%d x %d with the "
                       "halo; 32 x %d threads), slabs of %d planes", b->use_depth,
                       ex - 2 * b->use_depth, ey - 2 * b->use_depth, ex, ey,
                       tile_by[b->use_tile],
                       slab_planes(R, b->use_depth, b->use_tile,
                                   R->plan.params.precision == KT_SINGLE
                                       ? resident_blocks<float>(b->use_depth, b->use_tile, NULL)
                                       : resident_blocks<double>(b->use_depth, b->use_tile,
                                                                 NULL)));
    if (R->band[0] <= R->band[1] && len > 0 && (size_t)len < sizeof b->name)
        snprintf(b->name + len, sizeof b->name - (size_t)len, "; planes %d..%d of %d a step at "
                 "a time", R->band[0], R->band[1], R->plan.grid.nz);
}

/* One step at a time, and each depth asked for (2, 3, 4 when timed) with
 * each extended tile (or the one asked for); with a depth and a tile both
 * asked for, nothing to time. */
static void plan_candidates(kt_cuda_room *R)
{
    room_block_choice *b = &R->blocking;
    b->count = b->timed = b->tuned = 0;
    if (b->ask_depth != 0 && b->ask_tile != 0) {
        b->use_depth = b->ask_depth;
        b->use_tile = b->ask_tile - 1;
        b->tuned = 1;
        set_name(b, R);
        return;
    }
    if (b->ask_depth == 0)
        room_block_choice_add(b, 1, 0);
    for (int d = 2; d <= ROOM_GPU_MAX_DEPTH; d++) {
        if (b->ask_depth && d != b->ask_depth)
            continue;
        for (int t = 0; t < ROOM_GPU_TILES; t++)
            if (b->ask_tile == 0 || b->ask_tile == t + 1)
                room_block_choice_add(b, d, t);
    }
}

extern "C" int kt_cuda_room_set_blocking(kt_cuda_room *R, int depth, int tile, kt_error *err)
{
    if (!R)
        return kt_fail(err, KT_EINVAL, "kt_cuda_room_set_blocking: room is NULL");
    if (depth < 0 || depth > ROOM_GPU_MAX_DEPTH)
        return kt_fail(err, KT_EINVAL,
                       "GPU temporal blocking: depth %d is out of range (0: timed, 1: off, "
                       "2..%d)", depth, ROOM_GPU_MAX_DEPTH);
    if (tile < 0 || tile > ROOM_GPU_TILES)
        return kt_fail(err, KT_EINVAL,
                       "GPU temporal blocking: tile %d is out of range (0: timed, 1..%d: "
                       "32 x 32 columns with the halo on 32 x 8 threads, 32 x 32 on 32 x 16, "
                       "32 x 64 on 32 x 16, 32 x 32 on 32 x 32)", tile, ROOM_GPU_TILES);
    int rc = room_block_choice_ask(&R->blocking, depth, tile, room_gpu_block_obstacle(R),
                                   "GPU temporal blocking", err);
    if (rc == KT_OK)
        plan_candidates(R);
    return rc;
}

extern "C" const char *kt_cuda_room_blocking(const kt_cuda_room *R)
{
    return R ? room_block_choice_name(&R->blocking, room_gpu_block_obstacle(R)) : NULL;
}

void room_gpu_block_init(kt_cuda_room *R)
{
    memset(&R->blocking, 0, sizeof R->blocking);
    plan_candidates(R);
}

static int one_step(room_gpu_step_fn step, void *ctx, kt_error *err)
{
    int rc = step(ctx, err);
    return rc < 0 ? rc : 1;
}

/* One timed pass (or step) of the next candidate; after the last round the
 * fastest per step is kept.  Returns the steps taken or the error. */
static int tuning_pass(kt_cuda_room *R, int avail, const room_gpu_hooks *hooks,
                       const room_gpu_band *band, cudaStream_t stream, room_gpu_step_fn step,
                       void *ctx, kt_error *err)
{
    room_block_choice *b = &R->blocking;
    const int c = b->timed % b->count, d = b->depth[c];
    if (d > avail)
        return one_step(step, ctx, err);
    cudaEvent_t ev[2];
    cudaError_t e = cudaEventCreate(&ev[0]);
    if (e == cudaSuccess && (e = cudaEventCreate(&ev[1])) != cudaSuccess)
        cudaEventDestroy(ev[0]);
    if (e != cudaSuccess)
        return kt_cuda_fail(err, e, "creating the blocking timers");
    cudaEventRecord(ev[0], stream);
    int rc = d < 2 ? step(ctx, err)
                   : room_gpu_block_pass(R, d, b->tile[c], hooks, band, stream, err);
    cudaEventRecord(ev[1], stream);
    float ms = 0;
    if (rc >= 0 && (e = cudaEventSynchronize(ev[1])) == cudaSuccess)
        e = cudaEventElapsedTime(&ms, ev[0], ev[1]);
    cudaEventDestroy(ev[0]);
    cudaEventDestroy(ev[1]);
    if (rc < 0)
        return rc;
    if (e != cudaSuccess)
        return kt_cuda_fail(err, e, "timing a blocked pass");
    const double per_step = ms * 1e-3 / d;
    if (room_block_choice_timed(b, c, per_step, BLOCK_ROUNDS))
        set_name(b, R);
    return d;
}

int room_gpu_block_advance(kt_cuda_room *R, int avail, const room_gpu_hooks *hooks,
                           const room_gpu_band *band, cudaStream_t stream, room_gpu_step_fn step,
                           void *ctx, kt_error *err)
{
    room_block_choice *b = &R->blocking;
    if (avail >= 2 && b->ask_depth != 1 && !room_gpu_block_obstacle(R) && !R->alt[0]) {
        int rc = room_gpu_block_prepare(R, err);
        if (rc < 0 && !R->block_no_memory) /* a failure other than the memory's */
            return rc;
    }
    if (avail < 2 || b->ask_depth == 1 || room_gpu_block_obstacle(R) ||
        (b->tuned && b->use_depth < 2))
        return one_step(step, ctx, err);
    if (!b->tuned)
        return tuning_pass(R, avail, hooks, band, stream, step, ctx, err);
    if (b->use_depth > avail)
        return one_step(step, ctx, err);
    int rc = room_gpu_block_pass(R, b->use_depth, b->use_tile, hooks, band, stream, err);
    return rc < 0 ? rc : b->use_depth;
}
