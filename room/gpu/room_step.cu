/* room_step.cu - the whole room step of room/room_step.c on the GPU: a device
 * mirror of a CPU room (kt_cuda_mirror_*) that reads its plan (lists,
 * sources, microphones) and runs, per step on one stream, the sweep, the
 * lists, the sources, the instruments' GPU forms and the microphones, in
 * batches captured as CUDA graphs.  A 7-point room runs whole batches as
 * temporally blocked passes (room_block.cu) that serve the sources and
 * microphones at every step and hand the drums' band of planes back to this
 * file's step a level at a time.  docs/gpu.md, "The whole step on the
 * device". */
#include "room_block_gpu.h"
#include "kt_cuda_rn.cuh"
#include "kt_ranks.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An instrument's device object and the table that drives it. */
typedef struct mirror_drum {
    const kt_instrument_gpu *ops;
    void *dev;
} mirror_drum;

#define MIRROR_DEFAULT_BATCH 96
/* Graph phases: steps mod 6 (the rotations have periods 2 and 3). */
#define MIRROR_PHASES 6
/* Profiling: events per step (start, after the sweep, after lists and
 * sources, after stage 3, after stage 4, after the drums, after the
 * microphones) and steps recorded before their times are read. */
#define PROFILE_MARKS 7
#define PROFILE_STEPS 64

typedef struct mirror_state {
    long long n;    /* steps taken: level n+1 is being computed */
    int slot;       /* step within the current microphone block */
} mirror_state;

typedef struct mirror_list {
    long long *node;          /* device indices */
    unsigned char *blocked;   /* blocked-leg masks */
    int count;
} mirror_list;

struct kt_cuda_mirror {
    kt_room *room;
    room_plan *plan;          /* the CPU room's: lists, sources, microphones */
    kt_cuda_room *R;
    cudaStream_t stream;
    mirror_state *state;      /* device */
    mirror_list *list;
    int list_count;
    /* sources, concatenated */
    int src_count;
    long long *src_node, *src_first, *src_start, *src_len; /* device */
    double *src_samples;                                   /* device */
    int4 *src_xyz;            /* device: each source's node (x, y, z), for blocked passes */
    /* microphones */
    int mic_count;
    int *moving, *moving_dev; /* 1 = per-step taps (host, device) */
    mic_tap *taps, *host_taps;  /* [mic][MIRROR_BLOCK] */
    double *out, *host_out;     /* [mic][MIRROR_BLOCK] */
    /* drums (stage D) */
    mirror_drum *drum;
    int drum_count;
    /* graphs, and the fields each was captured on (a blocked pass moves
     * them to the other pair of buffers: another arrangement, another graph) */
    int batch;
    cudaGraphExec_t graph[MIRROR_PHASES];
    void *graph_now[MIRROR_PHASES], *graph_prev[MIRROR_PHASES];
    int graph_depth[MIRROR_PHASES];   /* 0: one step at a time, else blocked passes */
    /* temporal blocking: why the room keeps the one-step sweep (NULL: it
     * may be blocked), the blocked passes' corner differences */
    const char *block_obstacle;
    double *mic_diff;
    /* the first failed launch of a step (drums call libraries that can fail) */
    int launch_rc;
    kt_error launch_err;
    /* profiling (kt_cuda_mirror_profile) */
    int profiling, prof_used, prof_split;
    cudaEvent_t *prof_ev;     /* PROFILE_STEPS x PROFILE_MARKS */
    double prof_ms[PROFILE_MARKS - 1];
    long long prof_steps;
    mirror_ranks *ranks;      /* a slab of a room split over GPU ranks, or NULL */
};

__device__ __forceinline__ double kmul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double kadd(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double ksub(double a, double b) { return __dsub_rn(a, b); }
/* f += v in the field's precision, as room_add. */
template <typename REAL> __device__ __forceinline__ void field_add(REAL *f, double v)
{
    *f = rn_field_add(*f, v);
}

/* Stage B for one list (room/room_step.c correct_list). */
template <typename REAL>
__global__ void correct_list(REAL *__restrict__ next, const REAL *__restrict__ now,
                             const REAL *__restrict__ prev, const long long *__restrict__ node,
                             const unsigned char *__restrict__ blocked, int count, double l2,
                             double eta, int three, long long py, long long pz)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count)
        return;
    const long long off[6] = {1, -1, py, -py, pz, -pz};
    const long long i = node[k];
    const unsigned b = blocked[k];
    const double ci = (double)now[i], pi = three ? (double)prev[i] : 0.0;
    double sum_now = 0, sum_prev = 0;
    for (int d = 0; d < 6; d++) {
        if (!(b & (1u << d)))
            continue;
        sum_now = kadd(sum_now, ksub(ci, (double)now[i + off[d]]));
        if (three)
            sum_prev = kadd(sum_prev, ksub(pi, (double)prev[i + off[d]]));
    }
    double v = kmul(l2, sum_now);
    if (three)
        v = kadd(v, ksub(kmul(eta, sum_now), kmul(eta, sum_prev)));
    field_add(next + i, v);
}

/* Stage C (room/room_sources.c room_apply_sources), in the CPU's order:
 * two sources on one node add in sequence; only those on planes z_lo ..
 * z_hi (a blocked pass's band step: the pass serves the others). */
template <typename REAL>
__global__ void apply_sources(REAL *__restrict__ next, const mirror_state *__restrict__ st,
                              int count, const long long *__restrict__ node,
                              const int4 *__restrict__ xyz, int z_lo, int z_hi,
                              const long long *__restrict__ first,
                              const long long *__restrict__ start,
                              const long long *__restrict__ len,
                              const double *__restrict__ samples)
{
    const long long level = st->n + 1;
    for (int k = 0; k < count; k++) {
        const long long m = level - first[k];
        if (m >= 0 && m < len[k] && xyz[k].z >= z_lo && xyz[k].z <= z_hi)
            field_add(next + node[k], samples[start[k] + m]);
    }
}

/* Stage E (room/room_mics.c): p = rho/k * trilinear(Psi^{n+1} - Psi^n),
 * then the step count.  One block; a thread per microphone. */
template <typename REAL>
__global__ void record_mics(const REAL *__restrict__ next, const REAL *__restrict__ now,
                            mirror_state *st, int count, const int *__restrict__ moving,
                            const mic_tap *__restrict__ taps, double *__restrict__ out,
                            double scale, long long py, long long pz)
{
    const int slot = st->slot;
    for (int m = threadIdx.x; m < count; m += blockDim.x) {
        const mic_tap *t = taps + (size_t)m * MIRROR_BLOCK + (moving[m] ? slot : 0);
        out[(size_t)m * MIRROR_BLOCK + slot] = kmul(scale, tap_difference(t, next, now, py, pz));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        st->n++;
        st->slot = slot + 1;
    }
}

/* Stage E of a blocked pass's band step at `level` (room_block.cu's hand-
 * over): the corner differences Psi^{n+1} - Psi^n of every microphone's
 * corners on planes z_lo .. z_hi, where the pass's own (room_block_pass.cuh
 * mic_corners) left them out, for block_mics to sum after the pass; then the
 * step count (the drums' clock) moves on. */
template <typename REAL>
__global__ void band_mics(const REAL *__restrict__ next, const REAL *__restrict__ now,
                          mirror_state *st, int count, const int *__restrict__ moving,
                          const mic_tap *__restrict__ taps, double *__restrict__ diff, int level,
                          int z_lo, int z_hi, long long lead, long long halo, long long py,
                          long long pz)
{
    const int slot = st->slot + level - 1;
    for (int m = threadIdx.x; m < count; m += blockDim.x) {
        const long long base = taps[(size_t)m * MIRROR_BLOCK + (moving[m] ? slot : 0)].base;
        for (int c = 0; c < 8; c++) {
            const long long i = base + (c & 1) + ((c >> 1) & 1) * py + (c >> 2) * pz;
            const long long p = (i - lead) / pz - halo;
            if (p >= z_lo && p <= z_hi)
                diff[((size_t)(level - 1) * count + m) * 8 + c] =
                    ksub((double)next[i], (double)now[i]);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0)
        st->n++;
}

/* ---- host side ---- */

static int cuda_ok(cudaError_t e, kt_error *err, const char *doing)
{
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, doing);
}

/* The taps of room/room_mics.c room_mic_difference: its cell and weights.
 * The host compiler targets baseline x86-64 (no FMA), so these products
 * round as the CPU's. */
static mic_tap make_tap(const kt_cuda_room *R, const double pos[3])
{
    int i0[3];
    double f[3];
    room_mic_cell(&R->plan, pos, i0, f);
    mic_tap t;
    for (int c = 0; c < 8; c++)
        t.w[c] = room_mic_weight(f, c);
    t.base = kt_cuda_room_index(R, i0[0], i0[1], i0[2]);
    return t;
}

/* Microphone m's tap for slot s, as this rank takes it (a slab records only
 * its own samples, some a step late: room_ranks_tap). */
static mic_tap mirror_tap(kt_cuda_mirror *M, int m, int s, const double pos[3])
{
    mic_tap t = make_tap(M->R, pos);
    if (M->ranks)
        room_ranks_tap(M->ranks, M->room, m, s, pos, &t);
    return t;
}

static int copy_lists(kt_cuda_mirror *M, kt_error *err)
{
    const room_plan *P = M->plan;
    M->list = (mirror_list *)calloc((size_t)(P->ins_count ? P->ins_count : 1),
                                    sizeof *M->list);
    M->drum = (mirror_drum *)calloc((size_t)(P->ins_count ? P->ins_count : 1),
                                         sizeof *M->drum);
    if (!M->list || !M->drum)
        return kt_fail(err, KT_ENOMEM, "out of memory for the GPU boundary lists");
    for (int k = 0; k < P->ins_count; k++) {
        const room_instrument *ri = &P->ins[k];
        if (ri->ins->process && ri->ins->gpu && room_ranks_runs(M->ranks, k)) {
            mirror_drum *d = &M->drum[M->drum_count];
            d->ops = ri->ins->gpu;
            int rc = d->ops->create(ri->ins->self, M->R, M->stream, &d->dev, err);
            if (rc < 0)
                return rc;
            M->drum_count++;
            if ((rc = room_ranks_check_reach(M->R, ri->ins, err)) < 0)
                return rc;
        } else if (ri->ins->process && ri->ins->gpu) {
            /* another GPU rank steps it */
        } else if (ri->ins->process)
            return kt_fail(err, KT_ENOTSUP,
                           "%s '%s' has no GPU implementation yet: render it on the CPU",
                           ri->ins->kind ? ri->ins->kind : "instrument", ri->ins->name);
        long long *idx = (long long *)malloc(sizeof *idx * (size_t)(ri->count ? ri->count : 1));
        if (!idx)
            return kt_fail(err, KT_ENOMEM, "out of memory for the GPU boundary lists");
        for (int r = 0; r < ri->count; r++)
            idx[r] = kt_cuda_room_device_index(M->R, ri->node[r]);
        mirror_list *L = &M->list[M->list_count++];
        L->count = ri->count;
        int rc = room_gpu_upload(&L->node, (const long long *)idx, (size_t)ri->count, err);
        free(idx);
        if (rc < 0 || (rc = room_gpu_upload(&L->blocked, (const unsigned char *)ri->blocked,
                                         (size_t)ri->count, err)) < 0)
            return rc;
    }
    return KT_OK;
}

/* Folds the lists into the two-grid 7-point sweep (room_sweep.cu) when every
 * list node is on one list only: the sweep then adds stage B at those nodes
 * from the neighbours it already holds, and the step loses a kernel and its
 * launch gap on the drum's critical path.  Not with viscosity (its Psi^{n-1}
 * sums), other schemes or absorbing walls (they update after the sweep).
 * The same sums in the same order: the same bits as the list kernels. */
static int fold_lists(kt_cuda_mirror *M, kt_error *err)
{
    const room_plan *P = M->plan;
    kt_cuda_room *R = M->R;
    if (R->plan.grids != 2 || R->plan.st || R->abc_sums || M->list_count == 0)
        return KT_OK;
    const int nx = R->plan.grid.nx, ny = R->plan.grid.ny;
    unsigned char *mask = (unsigned char *)calloc(R->points, 1);
    unsigned char *column = (unsigned char *)calloc((size_t)nx * ny, 1);
    if (!mask || !column) {
        free(mask);
        free(column);
        return kt_fail(err, KT_ENOMEM, "out of memory folding the boundary lists");
    }
    int distinct = 1;
    for (int k = 0; k < P->ins_count && distinct; k++) {
        const room_instrument *ri = &P->ins[k];
        for (int r = 0; r < ri->count && distinct; r++) {
            const long long i = kt_cuda_room_device_index(R, ri->node[r]);
            distinct = mask[i] == 0;
            mask[i] = (unsigned char)(ROOM_LISTED | (ri->blocked[r] & 0x3fu));
            kt_cuda_room_mark_column(R, column, ri->node[r]);
        }
    }
    int rc = distinct ? room_gpu_upload(&R->listed, (const unsigned char *)mask, R->points, err)
                      : KT_OK;
    if (rc == KT_OK && distinct)
        rc = room_gpu_upload(&R->listed_column, (const unsigned char *)column,
                             (size_t)nx * ny, err);
    if (rc < 0) {
        kt_cuda_free(R->listed);
        kt_cuda_free(R->listed_column);
        R->listed = NULL;
        R->listed_column = NULL;
    }
    free(mask);
    free(column);
    return rc;
}

static int copy_sources(kt_cuda_mirror *M, kt_error *err)
{
    const room_plan *P = M->plan;
    const int n = P->src_count;
    M->src_count = n;
    size_t total = 0;
    for (int k = 0; k < n; k++)
        total += (size_t)P->src[k].count;
    long long *node = (long long *)calloc((size_t)n + 1, sizeof *node);
    long long *first = (long long *)calloc((size_t)n + 1, sizeof *first);
    long long *start = (long long *)calloc((size_t)n + 1, sizeof *start);
    long long *len = (long long *)calloc((size_t)n + 1, sizeof *len);
    int4 *xyz = (int4 *)calloc((size_t)n + 1, sizeof *xyz);
    double *samples = (double *)malloc(sizeof *samples * (total ? total : 1));
    int rc = KT_OK;
    if (!node || !first || !start || !len || !xyz || !samples)
        rc = kt_fail(err, KT_ENOMEM, "out of memory for the GPU sources");
    size_t at = 0;
    for (int k = 0; rc == KT_OK && k < n; k++) {
        const room_source *s = &P->src[k];
        node[k] = kt_cuda_room_device_index(M->R, s->node);
        int p[3];
        room_plan_node_xyz(P, s->node, p);
        xyz[k] = make_int4(p[0], p[1], p[2], 0);
        first[k] = s->first_level;
        start[k] = (long long)at;
        len[k] = s->count;
        memcpy(samples + at, s->samples, sizeof *samples * (size_t)s->count);
        at += (size_t)s->count;
    }
    if (rc == KT_OK &&
        (rc = room_gpu_upload(&M->src_node, (const long long *)node, (size_t)n, err)) == KT_OK &&
        (rc = room_gpu_upload(&M->src_first, (const long long *)first, (size_t)n, err)) == KT_OK &&
        (rc = room_gpu_upload(&M->src_start, (const long long *)start, (size_t)n, err)) == KT_OK &&
        (rc = room_gpu_upload(&M->src_len, (const long long *)len, (size_t)n, err)) == KT_OK &&
        (rc = room_gpu_upload(&M->src_xyz, (const int4 *)xyz, (size_t)n, err)) == KT_OK)
        rc = room_gpu_upload(&M->src_samples, (const double *)samples, total, err);
    free(node);
    free(first);
    free(start);
    free(len);
    free(xyz);
    free(samples);
    return rc;
}

static int copy_mics(kt_cuda_mirror *M, kt_error *err)
{
    room_plan *P = M->plan;
    const int n = P->mic_count;
    M->mic_count = n;
    if (n > 0 && P->fcc)     /* off-lattice corners are means of six nodes there */
        return kt_fail(err, KT_ENOTSUP, "microphones in an FCC room are not on the GPU yet; "
                                        "render this room with --device cpu");
    const size_t slots = (size_t)(n ? n : 1) * MIRROR_BLOCK;
    M->moving = (int *)calloc((size_t)n + 1, sizeof *M->moving);
    M->host_taps = (mic_tap *)calloc(slots, sizeof *M->host_taps);
    M->host_out = (double *)calloc(slots, sizeof *M->host_out);
    if (!M->moving || !M->host_taps || !M->host_out)
        return kt_fail(err, KT_ENOMEM, "out of memory for the GPU microphones");
    for (int m = 0; m < n; m++) {
        const room_mic *mic = &P->mic[m];
        if (mic->count != kt_room_step_index(M->room))
            return kt_fail(err, KT_EINVAL, "microphone '%s' has %lld samples after %lld steps",
                           mic->name, (long long)mic->count,
                           (long long)kt_room_step_index(M->room));
        M->moving[m] = mic->way_count >= 2;
        double pos[3];
        room_mic_position(mic, 0.0, pos); /* fixed: one position for every step */
        M->host_taps[(size_t)m * MIRROR_BLOCK] = mirror_tap(M, m, 0, pos);
    }
    int rc = kt_cuda_alloc(slots * sizeof(mic_tap), (void **)&M->taps, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc(slots * sizeof(double), (void **)&M->out, err);
    if (rc == KT_OK)
        rc = kt_cuda_upload(M->taps, M->host_taps, slots * sizeof(mic_tap), err);
    if (rc == KT_OK)
        rc = room_gpu_upload(&M->moving_dev, (const int *)M->moving, (size_t)n, err);
    for (int m = 0; rc == KT_OK && M->ranks && m < n; m++)
        rc = room_ranks_upload_taps(M->ranks, m, 1, M->stream, err);
    return rc;
}

/* Moving microphones' taps for the next `len` steps (levels n+1 ...). */
static int upload_moving_taps(kt_cuda_mirror *M, int len, kt_error *err)
{
    const room_plan *P = M->plan;
    const double k = M->R->plan.grid.time_step_s;
    for (int m = 0; m < M->mic_count; m++) {
        if (!M->moving[m])
            continue;
        mic_tap *t = M->host_taps + (size_t)m * MIRROR_BLOCK;
        for (int s = 0; s < len; s++) {
            double pos[3];
            room_mic_position(&P->mic[m], (double)(M->R->n + s + 1) * k, pos);
            t[s] = mirror_tap(M, m, s, pos);
        }
        int rc = cuda_ok(cudaMemcpyAsync(M->taps + (size_t)m * MIRROR_BLOCK, t,
                                         sizeof *t * (size_t)len, cudaMemcpyHostToDevice,
                                         M->stream),
                         err, "uploading microphone positions");
        if (rc == KT_OK && M->ranks)
            rc = room_ranks_upload_taps(M->ranks, m, len, M->stream, err);
        if (rc < 0)
            return rc;
    }
    return KT_OK;
}

/* Records profiling mark k of the current step (nothing when not profiling). */
static void prof_mark(kt_cuda_mirror *M, int k)
{
    if (M->profiling)
        cudaEventRecord(M->prof_ev[M->prof_used * PROFILE_MARKS + k], M->stream);
}

/* Stage D: every drum, each launched before the room waits for any (the
 * drums' boxes are disjoint, so they run side by side with the same bits);
 * with profiling, the first drum's stage marks. */
static void launch_drums(kt_cuda_mirror *M)
{
    kt_cuda_room *R = M->R;
    cudaEvent_t *marks = M->profiling ? M->prof_ev + M->prof_used * PROFILE_MARKS + 3 : NULL;
    int split = 0;
    if (M->ranks)
        room_ranks_lend(M->ranks, R, M->stream);
    for (int k = 0; k < M->drum_count; k++) {
        kt_error e;
        const mirror_drum *d = &M->drum[k];
        int rc = d->ops->launch(d->dev, R->next, R->plan.params.precision == KT_SINGLE, &M->state->n,
                                M->stream, k == 0 ? marks : NULL, &e);
        if (rc < 0 && M->launch_rc == KT_OK) {
            M->launch_rc = rc;
            M->launch_err = e;
        }
        if (k == 0)
            split = rc == 1;
    }
    for (int k = 0; k < M->drum_count; k++)
        M->drum[k].ops->wait(M->drum[k].dev, M->stream);
    if (M->ranks)
        room_ranks_return(M->ranks, R, M->stream);
    if (marks && !split) { /* the fused kernel: the drums' time all in one stage */
        cudaEventRecord(marks[0], M->stream);
        cudaEventRecord(marks[1], M->stream);
    }
    M->prof_split = M->drum_count > 0 && split;
    prof_mark(M, 5);
}

/* The microphone arrays the waiting samples of a slab go into. */
static ranks_mics mirror_mics(const kt_cuda_mirror *M)
{
    ranks_mics c = {&M->state->slot, M->out, M->moving_dev, M->mic_count,
                    M->R->plan.params.air_density_kg_per_m3 / M->R->plan.grid.time_step_s};
    return c;
}

/* Stages B and C: the lists (where the sweep did not fold them in), the
 * solids', and the sources on planes z_lo .. z_hi. */
template <typename REAL> static void launch_lists_sources(kt_cuda_mirror *M, int z_lo, int z_hi)
{
    kt_cuda_room *R = M->R;
    const long long py = (long long)R->pitch, pz = (long long)R->plane;
    for (int k = 0; k < M->list_count && !R->listed; k++) {
        const mirror_list *L = &M->list[k];
        if (L->count == 0)
            continue;
        correct_list<REAL><<<kt_cuda_blocks(L->count, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0,
                             M->stream>>>((REAL *)R->next, (const REAL *)R->now,
                                          (const REAL *)R->prev, L->node, L->blocked, L->count,
                                          R->plan.l2, R->plan.eta, R->plan.grids == 3, py, pz);
    }
    kt_cuda_shape_correct_on(R, M->stream);
    if (M->src_count > 0)
        apply_sources<REAL><<<1, 1, 0, M->stream>>>(
            (REAL *)R->next, M->state, M->src_count, M->src_node, M->src_xyz, z_lo, z_hi,
            M->src_first, M->src_start, M->src_len, M->src_samples);
}

template <typename REAL> static void launch_step(kt_cuda_mirror *M)
{
    const int *moving_dev = M->moving_dev;
    kt_cuda_room *R = M->R;
    const long long py = (long long)R->pitch, pz = (long long)R->plane;
    prof_mark(M, 0);
    kt_cuda_shape_save_on(R, M->stream); /* the solids' lossy nodes keep Psi^{n-1} */
    if (M->ranks) {
        const ranks_mics mics = mirror_mics(M);
        room_ranks_sweep(M->ranks, R, M->stream, &mics);
    } else {
        kt_cuda_room_sweep_on(R, M->stream);
    }
    prof_mark(M, 1);
    launch_lists_sources<REAL>(M, INT_MIN, INT_MAX);
    prof_mark(M, 2);
    launch_drums(M);
    const double scale = R->plan.params.air_density_kg_per_m3 / R->plan.grid.time_step_s;
    record_mics<REAL><<<1, 32, 0, M->stream>>>((const REAL *)R->next, (const REAL *)R->now,
                                               M->state, M->mic_count, moving_dev, M->taps,
                                               M->out, scale, py, pz);
    prof_mark(M, 6);
    if (M->profiling)
        M->prof_used++;
    kt_cuda_room_rotate(R);
    R->n++;
}

static void step_once(kt_cuda_mirror *M)
{
    if (M->R->plan.params.precision == KT_SINGLE)
        launch_step<float>(M);
    else
        launch_step<double>(M);
}

/* Level `level` of a blocked pass's hand-over (room_gpu_band_fn): one
 * ordinary step of planes z_lo .. z_hi, on the fields the pass set. */
template <typename REAL> static void launch_band_step(kt_cuda_mirror *M, int level, int z_lo,
                                                      int z_hi)
{
    kt_cuda_room *R = M->R;
    kt_cuda_room_sweep_planes_on(R, z_lo, z_hi + 1, M->stream);
    launch_lists_sources<REAL>(M, z_lo, z_hi);
    launch_drums(M);
    band_mics<REAL><<<1, 32, 0, M->stream>>>(
        (const REAL *)R->next, (const REAL *)R->now, M->state, M->mic_count, M->moving_dev,
        M->taps, M->mic_diff, level, z_lo, z_hi, (long long)R->lead, (long long)R->plan.halo,
        (long long)R->pitch, (long long)R->plane);
}

static int mirror_band_step(void *ctx, int level, int z_lo, int z_hi, kt_error *err)
{
    kt_cuda_mirror *M = (kt_cuda_mirror *)ctx;
    if (M->R->plan.params.precision == KT_SINGLE)
        launch_band_step<float>(M, level, z_lo, z_hi);
    else
        launch_band_step<double>(M, level, z_lo, z_hi);
    (void)err; /* a drum's failure waits in launch_rc for the pass's caller */
    return KT_OK;
}

/* The first failure a drum's launch reported since the last call. */
static int take_launch_error(kt_cuda_mirror *M, kt_error *err)
{
    int rc = M->launch_rc;
    if (rc < 0 && err)
        *err = M->launch_err;
    M->launch_rc = KT_OK;
    return rc;
}

/* The per-step work a blocked pass serves (room_block_gpu.h). */
static room_gpu_hooks mirror_hooks(const kt_cuda_mirror *M)
{
    room_gpu_hooks h;
    memset(&h, 0, sizeof h);
    h.n = &M->state->n;
    h.slot = &M->state->slot;
    h.src_count = M->src_count;
    h.src_xyz = M->src_xyz;
    h.src_first = M->src_first;
    h.src_start = M->src_start;
    h.src_len = M->src_len;
    h.src_samples = M->src_samples;
    h.mic_count = M->mic_count;
    h.taps = M->taps;
    h.moving = M->moving_dev;
    h.out = M->out;
    h.diff = M->mic_diff;
    h.scale = M->R->plan.params.air_density_kg_per_m3 / M->R->plan.grid.time_step_s;
    return h;
}

/* The depth whole batches run blocked at, or 0: one step at a time (the
 * room cannot be blocked, the choice is not made yet, or a batch is not a
 * whole number of pairs of passes, which bring the fields back to the
 * buffers the graph was captured on). */
static int batch_depth(const kt_cuda_mirror *M)
{
    const room_block_choice *b = &M->R->blocking;
    if (M->block_obstacle || room_gpu_block_obstacle(M->R) || M->profiling || !b->tuned ||
        b->ask_depth == 1 || b->use_depth < 2)
        return 0;
    return M->batch % (2 * b->use_depth) == 0 ? b->use_depth : 0;
}

/* One step of the mirror's (room_gpu_step_fn). */
static int mirror_step(void *ctx, kt_error *err)
{
    kt_cuda_mirror *M = (kt_cuda_mirror *)ctx;
    step_once(M);
    int rc = take_launch_error(M, err);
    return rc < 0 ? rc : kt_cuda_launch_check(err, "launching a room step");
}

/* The room's stream waits for work the drums left on their own streams. */
static void join_drums(kt_cuda_mirror *M)
{
    for (int k = 0; k < M->drum_count; k++)
        M->drum[k].ops->join(M->drum[k].dev, M->stream);
}

/* Everything launched so far, the drums' own streams included, has run. */
static cudaError_t mirror_sync(kt_cuda_mirror *M)
{
    join_drums(M);
    return cudaStreamSynchronize(M->stream);
}

static int phase_of(const kt_cuda_mirror *M) { return (int)(M->R->n % MIRROR_PHASES); }

/* One graph of M->batch steps starting at the current phase. */
static int capture(kt_cuda_mirror *M, cudaGraphExec_t *exec,
                   kt_error *err)
{
    kt_cuda_room *R = M->R;
    void *now = R->now, *prev = R->prev, *next = R->next;
    void *field[2] = {R->field[0], R->field[1]}, *alt[2] = {R->alt[0], R->alt[1]};
    const int64_t n = R->n;
    const int depth = batch_depth(M);
    const room_gpu_hooks hooks = mirror_hooks(M);
    const room_gpu_band band = {mirror_band_step, M};
    int pass_rc = depth ? room_gpu_block_prepare(R, err) : KT_OK;
    if (pass_rc < 0)
        return pass_rc;
    cudaGraph_t graph;
    join_drums(M); /* the graph's first drum step must not wait on work outside it */
    int rc = cuda_ok(cudaStreamBeginCapture(M->stream, cudaStreamCaptureModeThreadLocal), err,
                     "starting a graph capture");
    if (rc < 0)
        return rc;
    for (int s = 0; s < M->batch;) {
        if (depth) {
            kt_error e;
            int prc = room_gpu_block_pass(R, depth, R->blocking.use_tile, &hooks, &band,
                                          M->stream, &e);
            if (prc < 0 && pass_rc == KT_OK) {
                pass_rc = prc;
                M->launch_err = e;
            }
            s += depth;
        } else {
            step_once(M);
            s++;
        }
    }
    join_drums(M);
    cudaError_t e = cudaStreamEndCapture(M->stream, &graph);
    R->now = now;
    R->prev = prev;
    R->next = next;
    R->field[0] = field[0];
    R->field[1] = field[1];
    R->alt[0] = alt[0];
    R->alt[1] = alt[1];
    R->n = n;
    if (pass_rc < 0 && M->launch_rc == KT_OK)
        M->launch_rc = pass_rc;
    if ((rc = take_launch_error(M, err)) < 0) {
        if (e == cudaSuccess)
            cudaGraphDestroy(graph);
        return rc;
    }
    if ((rc = cuda_ok(e, err, "capturing a batch of room steps")) < 0)
        return rc;
    e = cudaGraphInstantiate(exec, graph, 0);
    cudaGraphDestroy(graph);
    return cuda_ok(e, err, "instantiating the room-step graph");
}

static int append_samples(kt_cuda_mirror *M, int len, kt_error *err)
{
    room_plan *P = M->plan;
    if (M->mic_count == 0)
        return KT_OK;
    int rc = cuda_ok(cudaMemcpyAsync(M->host_out, M->out,
                                     sizeof(double) * (size_t)M->mic_count * MIRROR_BLOCK,
                                     cudaMemcpyDeviceToHost, M->stream),
                     err, "copying microphone samples back");
    if (rc == KT_OK)
        rc = cuda_ok(mirror_sync(M), err, "running the room steps");
    if (rc < 0)
        return rc;
    for (int m = 0; m < M->mic_count; m++) {
        room_mic *mic = &P->mic[m];
        if ((rc = room_mic_reserve(mic, len, err)) < 0)
            return rc;
        memcpy(mic->signal + mic->count, M->host_out + (size_t)m * MIRROR_BLOCK,
               sizeof(double) * (size_t)len);
        mic->count += len;
    }
    return KT_OK;
}

/* Why the mirror steps its air one step at a time, or NULL (room_block.c's
 * rules: the instruments' band is handed over to them a step at a time). */
static const char *mirror_block_obstacle(const kt_cuda_mirror *M)
{
    if (M->ranks)
        return "the room is split over GPUs";
    const char *band_why = room_block_band_obstacle(M->plan);
    if (band_why)
        return band_why;
    if (M->plan->shape.count)
        return "solids inside the room are corrected at every step: the room keeps the "
               "one-step sweep";
    return room_gpu_block_obstacle(M->R);
}

extern "C" int kt_cuda_mirror_create(kt_room *room, kt_cuda_mirror **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_create: out is NULL");
    *out = NULL;
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_create: room is NULL");
    kt_cuda_mirror *M = (kt_cuda_mirror *)calloc(1, sizeof *M);
    if (!M)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU room");
    M->room = room;
    M->plan = room_plan_of(room);
    M->batch = MIRROR_DEFAULT_BATCH;
    const kt_room_grid *g = &M->plan->grid;
    const room_plan *P = M->plan;   /* a slab: its box */
    const int lo[3] = {P->x0, P->y0, P->z0}, hi[3] = {P->x_end, P->y_end, P->z_end};
    int rc = kt_room_ranks(room) > 1 ? kt_cuda_room_create_box(&P->params, lo, hi, &M->R, err)
                                     : kt_cuda_room_create(&P->params, &M->R, err);
    if (rc == KT_OK && (M->R->plan.grid.nx != g->nx || M->R->plan.grid.ny != g->ny ||
                        M->R->plan.grid.nz != g->nz))
        rc = kt_fail(err, KT_EINVAL, "the GPU room's grid differs from the CPU room's");
    if (rc == KT_OK)
        rc = cuda_ok(cudaStreamCreateWithFlags(&M->stream, cudaStreamNonBlocking), err,
                     "creating a stream");
    void *now, *prev;
    room_fields(room, &now, &prev);
    if (rc == KT_OK)
        rc = kt_cuda_room_upload(M->R, now, prev, err);
    if (rc == KT_OK) {
        double inflow, known;
        room_abc_exchange(room, &inflow, &known);
        rc = kt_cuda_room_set_wall_exchange(M->R, inflow, known, err);
    }
    if (rc == KT_OK) {
        M->R->n = kt_room_step_index(room);
        mirror_state st = {(long long)M->R->n, 0};
        rc = room_gpu_upload(&M->state, (const mirror_state *)&st, 1, err);
    }
    if (rc == KT_OK && kt_room_ranks(room) > 1)
        rc = room_ranks_create(room, M->R, M->stream, &M->ranks, err);
    if (rc == KT_OK)
        rc = kt_cuda_shape_setup(M->R, M->plan, err);
    if (rc == KT_OK)
        rc = copy_lists(M, err);
    if (rc == KT_OK)
        rc = fold_lists(M, err);
    if (rc == KT_OK)
        rc = copy_sources(M, err);
    if (rc == KT_OK)
        rc = copy_mics(M, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc(sizeof(double) * 8 * ROOM_GPU_MAX_DEPTH *
                               (size_t)(M->mic_count ? M->mic_count : 1),
                           (void **)&M->mic_diff, err);
    if (rc < 0) {
        kt_cuda_mirror_free(M);
        return rc;
    }
    if (!M->ranks)
        room_block_band(M->plan, M->R->band); /* the instruments' planes, if any */
    M->block_obstacle = mirror_block_obstacle(M);
    if (M->block_obstacle) {
        M->R->band[0] = 1; /* nothing handed over */
        M->R->band[1] = 0;
        kt_cuda_room_set_blocking(M->R, 1, 0, NULL);
    }
    *out = M;
    return KT_OK;
}

extern "C" void kt_cuda_mirror_free(kt_cuda_mirror *M)
{
    if (!M)
        return;
    if (M->stream)
        mirror_sync(M);
    for (int p = 0; p < MIRROR_PHASES; p++)
        if (M->graph[p])
            cudaGraphExecDestroy(M->graph[p]);
    if (M->prof_ev)
        for (int k = 0; k < PROFILE_STEPS * PROFILE_MARKS; k++)
            cudaEventDestroy(M->prof_ev[k]);
    free(M->prof_ev);
    for (int k = 0; k < M->list_count; k++) {
        kt_cuda_free(M->list[k].node);
        kt_cuda_free(M->list[k].blocked);
    }
    free(M->list);
    for (int k = 0; k < M->drum_count; k++)
        if (M->drum[k].ops)
            M->drum[k].ops->destroy(M->drum[k].dev);
    free(M->drum);
    kt_cuda_free(M->src_node);
    kt_cuda_free(M->src_first);
    kt_cuda_free(M->src_start);
    kt_cuda_free(M->src_len);
    kt_cuda_free(M->src_samples);
    kt_cuda_free(M->src_xyz);
    kt_cuda_free(M->mic_diff);
    kt_cuda_free(M->taps);
    kt_cuda_free(M->out);
    kt_cuda_free(M->moving_dev);
    kt_cuda_free(M->state);
    free(M->moving);
    free(M->host_taps);
    free(M->host_out);
    if (M->stream)
        cudaStreamDestroy(M->stream);
    room_ranks_free(M->ranks);
    kt_cuda_room_free(M->R);
    free(M);
}

static void drop_graphs(kt_cuda_mirror *M)
{
    for (int p = 0; p < MIRROR_PHASES; p++)
        if (M->graph[p]) {
            cudaGraphExecDestroy(M->graph[p]);
            M->graph[p] = NULL;
        }
}

extern "C" int kt_cuda_mirror_update_drums(kt_cuda_mirror *M, kt_error *err)
{
    if (!M)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_update_drums: mirror is NULL");
    int rc = cuda_ok(mirror_sync(M), err, "running the room steps");
    for (int k = 0; rc == KT_OK && k < M->drum_count; k++)
        rc = M->drum[k].ops->update(M->drum[k].dev, err);
    if (M->drum_count > 0)
        drop_graphs(M); /* their kernels hold the old coefficients */
    return rc;
}

extern "C" int kt_cuda_mirror_set_blocking(kt_cuda_mirror *M, int depth, int tile,
                                           kt_error *err)
{
    if (!M)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_set_blocking: mirror is NULL");
    if (depth >= 2 && M->block_obstacle)
        return kt_fail(err, KT_EINVAL, "GPU temporal blocking cannot apply: %s",
                       M->block_obstacle);
    int rc = kt_cuda_room_set_blocking(M->R, depth, tile, err);
    if (rc == KT_OK)
        drop_graphs(M);
    return rc;
}

extern "C" const char *kt_cuda_mirror_blocking(const kt_cuda_mirror *M)
{
    return M ? kt_cuda_room_blocking(M->R) : NULL;
}

extern "C" int kt_cuda_mirror_set_batch(kt_cuda_mirror *M, int steps, kt_error *err)
{
    if (!M || steps < 0 || (steps > 0 && (steps % 6 != 0 || MIRROR_BLOCK % steps != 0)))
        return kt_fail(err, KT_EINVAL,
                       "kt_cuda_mirror_set_batch: a batch must be 0 or a multiple of 6 "
                       "dividing %d, got %d",
                       MIRROR_BLOCK, steps);
    drop_graphs(M);
    M->batch = steps;
    return KT_OK;
}

/* Adds the recorded steps' stage times to the sums (waits for them). */
static int prof_collect(kt_cuda_mirror *M, kt_error *err)
{
    if (M->prof_used == 0)
        return KT_OK;
    cudaError_t e = cudaEventSynchronize(M->prof_ev[M->prof_used * PROFILE_MARKS - 1]);
    for (int s = 0; s < M->prof_used && e == cudaSuccess; s++) {
        const cudaEvent_t *ev = M->prof_ev + s * PROFILE_MARKS;
        for (int k = 0; k + 1 < PROFILE_MARKS && e == cudaSuccess; k++) {
            float ms = 0;
            e = cudaEventElapsedTime(&ms, ev[k], ev[k + 1]);
            M->prof_ms[k] += ms;
        }
    }
    M->prof_steps += M->prof_used;
    M->prof_used = 0;
    return cuda_ok(e, err, "reading the stage timers");
}

/* One block of `len` <= MIRROR_BLOCK steps: graphs where a whole batch fits,
 * single launches for the rest; then the samples come home. */
static int run_block(kt_cuda_mirror *M, int len, kt_error *err)
{
    const int64_t n0 = M->R->n;
    int rc = upload_moving_taps(M, len, err);
    const int zero = 0;
    if (rc == KT_OK)
        rc = cuda_ok(cudaMemcpyAsync(&M->state->slot, &zero, sizeof zero,
                                     cudaMemcpyHostToDevice, M->stream),
                     err, "starting a microphone block");
    /* &zero and the taps must outlive the copies: wait for them. */
    if (rc == KT_OK)
        rc = cuda_ok(mirror_sync(M), err, "starting a microphone block");
    int done = 0;
    kt_cuda_room *R = M->R;
    const room_gpu_hooks hooks = mirror_hooks(M);
    const room_gpu_band band = {mirror_band_step, M};
    /* the blocking's choice is timed outside the graphs */
    const int tuning = !M->block_obstacle && !room_gpu_block_obstacle(R) && !M->profiling &&
                       !R->blocking.tuned && R->blocking.ask_depth != 1;
    while (rc == KT_OK && done < len) {
        if (M->batch > 0 && !M->profiling && !tuning && len - done >= M->batch) {
            const int p = phase_of(M), depth = batch_depth(M);
            cudaGraphExec_t *g = &M->graph[p];
            if (*g && (M->graph_now[p] != R->now || M->graph_prev[p] != R->prev ||
                       M->graph_depth[p] != depth)) {
                cudaGraphExecDestroy(*g);
                *g = NULL;
            }
            if (!*g) {
                if ((rc = capture(M, g, err)) < 0)
                    break;
                M->graph_now[p] = R->now;
                M->graph_prev[p] = R->prev;
                M->graph_depth[p] = depth;
            }
            rc = cuda_ok(cudaGraphLaunch(*g, M->stream), err, "launching a batch of room steps");
            /* a batch is a whole number of rotation periods, and of pairs of
             * passes: the fields end in the buffers they started in */
            R->n += M->batch;
            done += M->batch;
        } else if (!M->block_obstacle && !M->profiling) {
            const int t = room_gpu_block_advance(R, len - done, &hooks, &band, M->stream,
                                                 mirror_step, M, err);
            if (t >= 0 && (rc = take_launch_error(M, err)) < 0)
                break;
            if (t < 0)
                rc = t;
            else if (t > 1)
                rc = kt_cuda_launch_check(err, "launching a blocked room pass");
            done += t > 0 ? t : 0;
        } else {
            step_once(M);
            rc = take_launch_error(M, err);
            if (rc == KT_OK)
                rc = kt_cuda_launch_check(err, "launching a room step");
            if (rc == KT_OK && M->profiling && M->prof_used == PROFILE_STEPS)
                rc = prof_collect(M, err);
            done++;
        }
    }
    if (rc == KT_OK && M->profiling)
        rc = prof_collect(M, err);
    if (rc == KT_OK && M->ranks) {
        const ranks_mics mics = mirror_mics(M);
        rc = room_ranks_collect(M->ranks, M->R, M->stream, &mics, err);
    }
    if (rc == KT_OK)
        rc = append_samples(M, len, err);
    if (rc == KT_OK)
        rc = cuda_ok(mirror_sync(M), err, "running the room steps");
    /* The drums' state follows the device a block at a time (and a blow-up
     * is reported within one block, the CPU room's step index at the step
     * that failed, as kt_room_step leaves it). */
    for (int k = 0; rc == KT_OK && k < M->drum_count; k++) {
        int64_t bad_after = 0;
        rc = M->drum[k].ops->download(M->drum[k].dev, M->stream, &bad_after, err);
        if (rc == KT_EUNSTABLE)
            room_set_step_index(M->room, n0 + bad_after);
    }
    if (rc == KT_OK)
        room_set_step_index(M->room, M->R->n);
    return rc;
}

extern "C" int kt_cuda_mirror_run(kt_cuda_mirror *M, int64_t steps, kt_error *err)
{
    if (!M || steps < 0)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_run: NULL mirror or steps < 0");
    while (steps > 0) {
        int len = steps < MIRROR_BLOCK ? (int)steps : MIRROR_BLOCK;
        int rc = run_block(M, len, err);
        if (rc < 0)
            return rc;
        steps -= len;
    }
    return KT_OK;
}

extern "C" int kt_cuda_mirror_download(kt_cuda_mirror *M, kt_error *err)
{
    if (!M)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_download: mirror is NULL");
    int rc = cuda_ok(mirror_sync(M), err, "running the room steps");
    void *now, *prev;
    room_fields(M->room, &now, &prev);
    if (rc == KT_OK)
        rc = kt_cuda_room_download(M->R, now, prev, err);
    double inflow = 0, known = 0;
    if (rc == KT_OK && (rc = kt_cuda_room_wall_exchange(M->R, &inflow, &known, err)) == KT_OK)
        room_abc_set_exchange(M->room, inflow, known);
    return rc;
}

extern "C" int kt_cuda_mirror_profile(kt_cuda_mirror *M, int on, kt_error *err)
{
    if (!M)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_profile: mirror is NULL");
    int rc = cuda_ok(mirror_sync(M), err, "running the room steps");
    if (rc == KT_OK && on && !M->prof_ev) {
        M->prof_ev = (cudaEvent_t *)calloc(PROFILE_STEPS * PROFILE_MARKS, sizeof(cudaEvent_t));
        if (!M->prof_ev)
            return kt_fail(err, KT_ENOMEM, "out of memory for the stage timers");
        for (int k = 0; rc == KT_OK && k < PROFILE_STEPS * PROFILE_MARKS; k++)
            rc = cuda_ok(cudaEventCreate(&M->prof_ev[k]), err, "creating a stage timer");
    }
    if (rc < 0)
        return rc;
    M->profiling = on != 0;
    M->prof_used = 0;
    M->prof_steps = 0;
    memset(M->prof_ms, 0, sizeof M->prof_ms);
    return KT_OK;
}

extern "C" int kt_cuda_mirror_stage_times(kt_cuda_mirror *M, kt_cuda_stage_times *out,
                                          kt_error *err)
{
    if (!M || !out)
        return kt_fail(err, KT_EINVAL, "kt_cuda_mirror_stage_times: NULL argument");
    int rc = prof_collect(M, err);
    if (rc < 0)
        return rc;
    memset(out, 0, sizeof *out);
    out->steps = M->prof_steps;
    out->drum_split = M->prof_split;
    if (M->prof_steps == 0)
        return KT_OK;
    const double s = 1e3 / (double)M->prof_steps; /* ms in all -> us per step */
    out->sweep_us = M->prof_ms[0] * s;
    out->list_us = M->prof_ms[1] * s;
    out->rhs_us = M->prof_ms[2] * s;
    out->solve_us = M->prof_ms[3] * s;
    out->layer_us = M->prof_ms[4] * s;
    out->drum_us = (M->prof_ms[2] + M->prof_ms[3] + M->prof_ms[4]) * s;
    out->output_us = M->prof_ms[5] * s;
    return KT_OK;
}
