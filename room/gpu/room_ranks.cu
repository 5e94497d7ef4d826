/* room_ranks.cu - the device mirror's step on one slab of a room split over
 * GPU ranks (room_ranks_gpu.h; docs/room.md, "Slabs and ranks"; the CPU's
 * step is room/room_slab.c).  Per step, on the mirror's stream S and the
 * halo stream H (the highest priority, so that its NCCL kernels find SMs
 * beside the sweep's blocks):
 *   S: event ready (Psi^n final)  ->  H: wait ready, NCCL group: Psi^n's
 *   first and last owned planes to the neighbours, their planes into the
 *   halos; event arrived
 *   S: sweep planes 1 .. n-2 (no halo needed), wait arrived, record the
 *   samples that waited for the plane above (before plane n-1 of Psi^{n-1}
 *   is overwritten), sweep planes 0 and n-1
 * and in stage D the windows of the drums straddling a boundary go to the
 * rank above and come back (one NCCL group each way).  A room cut along x
 * or y packs its first and last owned layers into buffers on H before the
 * group and unpacks the neighbours' into its halo layers after it; S sweeps
 * its inside (all but the columns or rows beside a cut) meanwhile, then the
 * faces.  Events order H
 * against S, so the whole step, NCCL included, is captured into the
 * mirror's CUDA graphs as one piece (every rank captures and replays the
 * same steps: NCCL needs that of captured operations).  NCCL calls on the
 * two streams are never concurrent (the halo of step n+1 waits for the
 * end of step n), so one communicator serves both. */
#include "room_ranks_gpu.h"
#include "kt_cuda_rn.cuh"

#include "kt_ranks.h"

#include <stdlib.h>
#include <string.h>

#if KETTLE_NCCL_ENABLED
#include <nccl.h>

/* An instrument's window in plane z of Psi^{n+1}, lent down or borrowed. */
typedef struct ranks_window {
    int x0, y0, w, h;
    int role;                 /* WINDOW_BORROW: ours runs it; WINDOW_LEND: the rank above's */
    void *stage;              /* device, w x h elements */
} ranks_window;
enum { WINDOW_NONE = 0, WINDOW_BORROW = 1, WINDOW_LEND = 2 };

struct mirror_ranks {
    ncclComm_t comm;
    int rank, ranks;
    int *runs;                /* per instrument of the room: 1 when this rank steps it */
    ranks_window *win;
    int win_count;
    cudaStream_t halo;
    cudaEvent_t ready, arrived;
    int mic_count;
    mic_tap *later, *later_dev; /* [mic][MIRROR_BLOCK]: the samples that wait */
    int z0, z_end;            /* global planes of the slab */
    int axis;                 /* the split's: 0, 1, 2 = x, y, z */
    int lo[3], hi[3];         /* the nodes held (global) */
    void *pack[4];            /* cut along x or y: the first and last owned layers packed,
                                 the neighbours' as they arrive (device) */
    size_t layer;             /* elements of one such layer */
};

static int cuda_ok(cudaError_t e, kt_error *err, const char *doing)
{
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, doing);
}

static size_t plane_bytes(const kt_cuda_room *R) { return R->plane * R->esize; }

/* Device address of local plane z's first element (its halo row and column). */
static char *plane_at(const kt_cuda_room *R, void *field, int z)
{
    const long long i = kt_cuda_room_index(R, -R->plan.halo, -R->plan.halo, z);
    return (char *)field + i * (long long)R->esize;
}

/* Packs (out = 1) or unpacks one layer of n1 x n2 elements from `base`,
 * strides s1 and s2: a layer across x or y of a slab's own rows and planes. */
template <typename REAL>
__global__ void layer_copy(REAL *__restrict__ f, REAL *__restrict__ buf, long long base,
                           long long s1, int n1, long long s2, int n2, int out)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)n1 * n2)
        return;
    const long long i = base + (t % n1) * s1 + (t / n1) * s2;
    if (out)
        buf[t] = f[i];
    else
        f[i] = buf[t];
}

/* Layer c (global, along the split axis x or y) of `field` to or from buf. */
static void move_layer(mirror_ranks *K, kt_cuda_room *R, void *field, int c, void *buf, int out,
                       cudaStream_t s)
{
    int at[3] = {K->lo[0], K->lo[1], K->lo[2]};
    at[K->axis] = c;
    const long long base = kt_cuda_room_index(R, at[0], at[1], at[2]);
    const int n1 = K->axis == 0 ? K->hi[1] - K->lo[1] : K->hi[0] - K->lo[0];
    const int n2 = K->hi[2] - K->lo[2];
    const long long s1 = K->axis == 0 ? (long long)R->pitch : 1, s2 = (long long)R->plane;
    const unsigned blocks = (unsigned)kt_cuda_blocks((long long)n1 * n2, KT_CUDA_BLOCK);
    if (R->plan.params.precision == KT_SINGLE)
        layer_copy<float><<<blocks, KT_CUDA_BLOCK, 0, s>>>((float *)field, (float *)buf, base,
                                                           s1, n1, s2, n2, out);
    else
        layer_copy<double><<<blocks, KT_CUDA_BLOCK, 0, s>>>((double *)field, (double *)buf,
                                                            base, s1, n1, s2, n2, out);
}

/* The exchange of a slab cut along x or y: packed layers. */
static void exchange_layers(mirror_ranks *K, kt_cuda_room *R, void *field, cudaStream_t s)
{
    const int a = K->axis, below = K->rank > 0, above = K->rank + 1 < K->ranks;
    const size_t bytes = K->layer * R->esize;
    if (below)
        move_layer(K, R, field, K->lo[a], K->pack[0], 1, s);
    if (above)
        move_layer(K, R, field, K->hi[a] - 1, K->pack[1], 1, s);
    ncclGroupStart();
    if (below) {
        ncclSend(K->pack[0], bytes, ncclUint8, K->rank - 1, K->comm, s);
        ncclRecv(K->pack[2], bytes, ncclUint8, K->rank - 1, K->comm, s);
    }
    if (above) {
        ncclSend(K->pack[1], bytes, ncclUint8, K->rank + 1, K->comm, s);
        ncclRecv(K->pack[3], bytes, ncclUint8, K->rank + 1, K->comm, s);
    }
    ncclGroupEnd();
    if (below)
        move_layer(K, R, field, K->lo[a] - 1, K->pack[2], 0, s);
    if (above)
        move_layer(K, R, field, K->hi[a], K->pack[3], 0, s);
}

/* The NCCL group of a halo exchange of `field` on stream s. */
static void exchange(mirror_ranks *K, kt_cuda_room *R, void *field, cudaStream_t s)
{
    if (K->axis != 2) {
        exchange_layers(K, R, field, s);
        return;
    }
    const size_t bytes = plane_bytes(R);
    ncclGroupStart();
    if (K->rank > 0) {
        ncclSend(plane_at(R, field, K->z0), bytes, ncclUint8, K->rank - 1, K->comm, s);
        ncclRecv(plane_at(R, field, K->z0 - 1), bytes, ncclUint8, K->rank - 1, K->comm, s);
    }
    if (K->rank + 1 < K->ranks) {
        ncclSend(plane_at(R, field, K->z_end - 1), bytes, ncclUint8, K->rank + 1, K->comm, s);
        ncclRecv(plane_at(R, field, K->z_end), bytes, ncclUint8, K->rank + 1, K->comm, s);
    }
    ncclGroupEnd();
}

/* The samples that waited a step (room_slab_record_deferred): Psi^{n+1} -
 * Psi^n is now - prev, in record_mics' order of operations. */
template <typename REAL>
__global__ void record_later(const REAL *__restrict__ now, const REAL *__restrict__ prev,
                             const int *__restrict__ slot, int count,
                             const int *__restrict__ moving, const mic_tap *__restrict__ taps,
                             double *__restrict__ out, double scale, long long py, long long pz)
{
    const int s = *slot - 1;
    if (s < 0)
        return;                  /* the block's first step: collect took the last */
    for (int m = threadIdx.x; m < count; m += blockDim.x) {
        const mic_tap *t = taps + (size_t)m * MIRROR_BLOCK + (moving[m] ? s : 0);
        if (t->base < 0)
            continue;
        out[(size_t)m * MIRROR_BLOCK + s] = __dmul_rn(scale, tap_difference(t, now, prev, py, pz));
    }
}

static void launch_later(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s, const ranks_mics *mc)
{
    if (mc->count == 0)
        return;
    const long long py = (long long)R->pitch, pz = (long long)R->plane;
    if (R->plan.params.precision == KT_SINGLE)
        record_later<float><<<1, 32, 0, s>>>((const float *)R->now, (const float *)R->prev,
                                             mc->slot, mc->count, mc->moving, K->later_dev,
                                             mc->out, mc->scale, py, pz);
    else
        record_later<double><<<1, 32, 0, s>>>((const double *)R->now, (const double *)R->prev,
                                              mc->slot, mc->count, mc->moving, K->later_dev,
                                              mc->out, mc->scale, py, pz);
}

/* A slab cut along x or y: its inside (local) while the halos travel, its
 * faces after; along x the inside starts on a thread's first column
 * (KT_CUDA_SWEEP_ALIGN), so the faces there are that many columns wide. */
static void sweep_layers(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s,
                         const ranks_mics *mics)
{
    const int a = K->axis, n = K->hi[a] - K->lo[a], align = a == 0 ? KT_CUDA_SWEEP_ALIGN : 1;
    const int in_lo = K->rank > 0 ? align : 0;
    const int in_hi = K->rank + 1 < K->ranks ? (n - 1) / align * align : n;
    int lo[3] = {0, 0, 0}, hi[3] = {K->hi[0] - K->lo[0], K->hi[1] - K->lo[1], K->hi[2] - K->lo[2]};
    const int inside = in_lo < in_hi;
    if (inside) {
        lo[a] = in_lo;
        hi[a] = in_hi;
        kt_cuda_room_sweep_region_on(R, lo, hi, 1, s);
    }
    cudaStreamWaitEvent(s, K->arrived, 0);
    launch_later(K, R, s, mics);
    /* the faces: 0 .. in_lo-1 and in_hi .. n-1, or all when no inside */
    const int faces[2][2] = {{0, inside ? in_lo : n}, {inside ? in_hi : n, n}};
    for (int f = 0; f < 2; f++)
        if (faces[f][0] < faces[f][1]) {
            lo[a] = faces[f][0];
            hi[a] = faces[f][1];
            kt_cuda_room_sweep_region_on(R, lo, hi, !inside && f == 0, s);
        }
}

void room_ranks_sweep(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s, const ranks_mics *mics)
{
    const int n = K->z_end - K->z0;
    cudaEventRecord(K->ready, s);
    cudaStreamWaitEvent(K->halo, K->ready, 0);
    exchange(K, R, R->now, K->halo);
    cudaEventRecord(K->arrived, K->halo);
    if (K->axis != 2) {
        sweep_layers(K, R, s, mics);
        return;
    }
    if (n > 2)
        kt_cuda_room_sweep_planes_on(R, 1, n - 1, s);
    cudaStreamWaitEvent(s, K->arrived, 0);
    launch_later(K, R, s, mics);
    kt_cuda_room_sweep_planes_on(R, 0, 1, s);
    if (n > 1)
        kt_cuda_room_sweep_planes_on(R, n - 1, n, s);
}

int room_ranks_collect(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s, const ranks_mics *mics,
                       kt_error *err)
{
    exchange(K, R, R->now, s);
    launch_later(K, R, s, mics);
    return cuda_ok(cudaGetLastError(), err, "gathering the samples that wait for a halo");
}

/* ---- stage D: windows ---- */

/* Copies window W of local plane z of Psi^{n+1} into its stage (out) or back. */
static void move_window(const ranks_window *W, kt_cuda_room *R, int z, int out, cudaStream_t s)
{
    char *f = (char *)R->next + kt_cuda_room_index(R, W->x0, W->y0, z) * (long long)R->esize;
    const size_t row = (size_t)W->w * R->esize, pitch = R->pitch * R->esize;
    if (out)
        cudaMemcpy2DAsync(W->stage, row, f, pitch, row, (size_t)W->h, cudaMemcpyDeviceToDevice, s);
    else
        cudaMemcpy2DAsync(f, pitch, W->stage, row, row, (size_t)W->h, cudaMemcpyDeviceToDevice, s);
}

/* One way of stage D's traffic: out = 1 before the drums (lenders send
 * their top plane's window, borrowers take it into their lower halo),
 * out = 0 after (back the other way).  One NCCL group: no order to keep. */
static void windows(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s, int out)
{
    const int top = K->z_end - 1, below = K->z0 - 1;
    for (int k = 0; k < K->win_count; k++) {  /* what leaves is copied out first */
        const ranks_window *W = &K->win[k];
        if (W->role == (out ? WINDOW_LEND : WINDOW_BORROW))
            move_window(W, R, out ? top : below, 1, s);
    }
    ncclGroupStart();
    for (int k = 0; k < K->win_count; k++) {
        const ranks_window *W = &K->win[k];
        const size_t bytes = (size_t)W->w * W->h * R->esize;
        if (W->role == WINDOW_LEND && out)
            ncclSend(W->stage, bytes, ncclUint8, K->rank + 1, K->comm, s);
        else if (W->role == WINDOW_LEND)
            ncclRecv(W->stage, bytes, ncclUint8, K->rank + 1, K->comm, s);
        else if (W->role == WINDOW_BORROW && out)
            ncclRecv(W->stage, bytes, ncclUint8, K->rank - 1, K->comm, s);
        else if (W->role == WINDOW_BORROW)
            ncclSend(W->stage, bytes, ncclUint8, K->rank - 1, K->comm, s);
    }
    ncclGroupEnd();
    for (int k = 0; k < K->win_count; k++) {  /* what arrived goes in place */
        const ranks_window *W = &K->win[k];
        if (W->role == (out ? WINDOW_BORROW : WINDOW_LEND))
            move_window(W, R, out ? below : top, 0, s);
    }
}

void room_ranks_lend(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s) { windows(K, R, s, 1); }
void room_ranks_return(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s) { windows(K, R, s, 0); }

/* ---- microphones ---- */

void room_ranks_tap(mirror_ranks *K, const kt_room *room, int m, int s, const double pos[3],
                    mic_tap *t)
{
    const int role = room_slab_mic_role(room, pos);
    mic_tap *later = K->later + (size_t)m * MIRROR_BLOCK + s;
    later->base = -1;
    if (role == ROOM_MIC_LATER)
        *later = *t;
    if (role != ROOM_MIC_NOW) {  /* nothing recorded here this step */
        memset(t->w, 0, sizeof t->w);  /* record_mics skips zero weights: base unread */
        t->base = 0;
    }
}

int room_ranks_upload_taps(mirror_ranks *K, int m, int len, cudaStream_t s, kt_error *err)
{
    const size_t at = (size_t)m * MIRROR_BLOCK;
    return cuda_ok(cudaMemcpyAsync(K->later_dev + at, K->later + at, sizeof(mic_tap) * (size_t)len,
                                   cudaMemcpyHostToDevice, s),
                   err, "uploading microphone positions");
}

/* ---- making and freeing ---- */

int room_ranks_runs(const mirror_ranks *K, int k) { return !K || K->runs[k]; }

int room_ranks_check_reach(kt_cuda_room *R, const kt_instrument *ins, kt_error *err)
{
    if (R->bad_plane < 0)
        return KT_OK;
    int z = R->bad_plane;
    R->bad_plane = -1;
    return kt_fail(err, KT_EINVAL,
                   "%s: touches air layer %d, beyond the reach of this GPU rank (planes %d..%d "
                   "and the plane below, x %d..%d, y %d..%d): an instrument split over ranks "
                   "may use the top plane of its box and the plane under it",
                   ins->name[0] ? ins->name : "instrument", z, R->plan.z0, R->plan.z_end - 1,
                   R->plan.x0, R->plan.x_end - 1, R->plan.y0, R->plan.y_end - 1);
}

static int make_windows(mirror_ranks *K, kt_room *room, kt_error *err)
{
    const room_plan *P = room_plan_of(room);
    K->runs = (int *)calloc((size_t)P->ins_count + 1, sizeof *K->runs);
    K->win = (ranks_window *)calloc((size_t)P->ins_count + 1, sizeof *K->win);
    if (!K->runs || !K->win)
        return kt_fail(err, KT_ENOMEM, "out of memory splitting the drums over GPU ranks");
    const size_t esize = kt_precision_bytes(P->params.precision);
    for (int k = 0; k < P->ins_count; k++) {
        const kt_instrument *ins = P->ins[k].ins;
        if (!ins->process)
            continue;
        int borrow, runner = room_slab_runner_of(room, k, &borrow);
        K->runs[k] = runner == K->rank;
        int role = !borrow ? WINDOW_NONE : runner == K->rank ? WINDOW_BORROW
                                          : runner == K->rank + 1 ? WINDOW_LEND : WINDOW_NONE;
        if (role == WINDOW_NONE)
            continue;
        ranks_window *W = &K->win[K->win_count++];
        W->role = role;
        W->x0 = ins->box_lo[0];
        W->y0 = ins->box_lo[1];
        W->w = ins->box_hi[0] - ins->box_lo[0] + 1;
        W->h = ins->box_hi[1] - ins->box_lo[1] + 1;
        int rc = kt_cuda_alloc((size_t)W->w * W->h * esize, &W->stage, err);
        if (rc < 0)
            return rc;
    }
    return KT_OK;
}

int room_ranks_create(kt_room *room, kt_cuda_room *R, cudaStream_t stream, mirror_ranks **out,
                      kt_error *err)
{
    *out = NULL;
    const room_plan *P = room_plan_of(room);
    if (!room_gpu_job_comm())
        return kt_fail(err, KT_EINVAL, "a room split over ranks on the GPU needs a GPU job "
                                       "(kettle render --gpus N, or mpirun with --device gpu)");
    mirror_ranks *K = (mirror_ranks *)calloc(1, sizeof *K);
    if (!K)
        return kt_fail(err, KT_ENOMEM, "out of memory splitting the room over GPU ranks");
    *out = K;
    K->comm = (ncclComm_t)room_gpu_job_comm();
    K->rank = kt_room_rank(room);
    K->ranks = kt_room_ranks(room);
    K->z0 = P->z0;
    K->z_end = P->z_end;
    K->axis = kt_room_split_axis(room);
    K->lo[0] = P->x0, K->lo[1] = P->y0, K->lo[2] = P->z0;
    K->hi[0] = P->x_end, K->hi[1] = P->y_end, K->hi[2] = P->z_end;
    K->mic_count = P->mic_count;
    int lo = 0, hi = 0;
    cudaDeviceGetStreamPriorityRange(&lo, &hi);
    int rc = cuda_ok(cudaStreamCreateWithPriority(&K->halo, cudaStreamNonBlocking, hi), err,
                     "creating the halo stream");
    if (rc == KT_OK)
        rc = cuda_ok(cudaEventCreateWithFlags(&K->ready, cudaEventDisableTiming), err,
                     "creating an event");
    if (rc == KT_OK)
        rc = cuda_ok(cudaEventCreateWithFlags(&K->arrived, cudaEventDisableTiming), err,
                     "creating an event");
    const size_t slots = (size_t)(P->mic_count ? P->mic_count : 1) * MIRROR_BLOCK;
    if (rc == KT_OK && !(K->later = (mic_tap *)malloc(slots * sizeof *K->later)))
        rc = kt_fail(err, KT_ENOMEM, "out of memory for the GPU microphones");
    if (rc == KT_OK) {
        for (size_t i = 0; i < slots; i++)
            K->later[i].base = -1;
        rc = kt_cuda_alloc(slots * sizeof(mic_tap), (void **)&K->later_dev, err);
    }
    if (rc == KT_OK)
        rc = kt_cuda_upload(K->later_dev, K->later, slots * sizeof(mic_tap), err);
    if (rc == KT_OK)
        rc = make_windows(K, room, err);
    if (K->axis != 2) {   /* the packed layers: y x z or x x z of the slab's own */
        const int a = K->axis;
        K->layer = (size_t)(K->hi[1 - a] - K->lo[1 - a]) * (size_t)(K->hi[2] - K->lo[2]);
        for (int b = 0; b < 4 && rc == KT_OK; b++)
            rc = kt_cuda_alloc(K->layer * R->esize, &K->pack[b], err);
    }
    if (rc == KT_OK) {  /* both fields' halos: the neighbours' planes */
        exchange(K, R, R->now, stream);
        exchange(K, R, R->prev, stream);
        rc = cuda_ok(cudaStreamSynchronize(stream), err, "exchanging the first halos");
    }
    return rc;
}

void room_ranks_free(mirror_ranks *K)
{
    if (!K)
        return;
    for (int k = 0; k < K->win_count; k++)
        kt_cuda_free(K->win[k].stage);
    for (int b = 0; b < 4; b++)
        kt_cuda_free(K->pack[b]);
    free(K->win);
    free(K->runs);
    free(K->later);
    kt_cuda_free(K->later_dev);
    if (K->ready)
        cudaEventDestroy(K->ready);
    if (K->arrived)
        cudaEventDestroy(K->arrived);
    if (K->halo)
        cudaStreamDestroy(K->halo);
    free(K);
}

#else /* no NCCL: a split room stays on the CPU */

struct mirror_ranks {
    int unused;
};

int room_ranks_create(kt_room *room, kt_cuda_room *R, cudaStream_t stream, mirror_ranks **out,
                      kt_error *err)
{
    (void)room, (void)R, (void)stream;
    *out = NULL;
    return kt_fail(err, KT_ENOTSUP, "this build has no NCCL: a room split over ranks runs "
                                    "on the CPU (--device cpu)");
}
void room_ranks_free(mirror_ranks *K) { free(K); }
int room_ranks_runs(const mirror_ranks *K, int k) { return (void)K, (void)k, 1; }
int room_ranks_check_reach(kt_cuda_room *R, const kt_instrument *ins, kt_error *err)
{
    return (void)R, (void)ins, (void)err, KT_OK;
}
void room_ranks_sweep(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s, const ranks_mics *m)
{
    (void)K, (void)m;
    kt_cuda_room_sweep_on(R, s);
}
void room_ranks_lend(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s) { (void)K, (void)R, (void)s; }
void room_ranks_return(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s) { (void)K, (void)R, (void)s; }
int room_ranks_collect(mirror_ranks *K, kt_cuda_room *R, cudaStream_t s, const ranks_mics *m,
                       kt_error *err)
{
    return (void)K, (void)R, (void)s, (void)m, (void)err, KT_OK;
}
void room_ranks_tap(mirror_ranks *K, const kt_room *room, int m, int s, const double pos[3],
                    mic_tap *t)
{
    (void)K, (void)room, (void)m, (void)s, (void)pos, (void)t;
}
int room_ranks_upload_taps(mirror_ranks *K, int m, int len, cudaStream_t s, kt_error *err)
{
    return (void)K, (void)m, (void)len, (void)s, (void)err, KT_OK;
}

#endif
