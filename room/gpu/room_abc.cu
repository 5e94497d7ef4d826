/* room_abc.cu - the absorbing walls on the GPU, mirroring room/room_abc.c
 * and room_abc_impl.h: after the 7-point sweep, one launch updates the six
 * faces and adds up the energy they exchange, one the twelve edges and eight
 * corners, at the plan's faces and lines.  docs/gpu.md, "The other air
 * schemes and absorbing walls". */
#include "room_gpu.h"
#include "kt_cuda_rn.cuh"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_face {
    long long origin, fast, slow, inward; /* device index of (fast 0, slow 0); steps */
    int n_fast, n_slow;
} gpu_face;

typedef struct gpu_line {
    long long origin, along, diag;
    int count;
    double r;
} gpu_line;

typedef struct cuda_abc {
    gpu_face face[6];
    gpu_line line[20];
    double r;                             /* (lambda - 1)/(lambda + 1) */
    double scale;                         /* rho Q / 2: the exchange's joules */
    int most;                             /* largest face interior, largest line */
} cuda_abc;

/* Face F's interior node k: its field index p. */
__device__ __forceinline__ bool face_node(const gpu_face &fc, long long k, long long *p)
{
    const int inner = fc.n_fast - 2;
    if (k >= (long long)inner * (fc.n_slow - 2))
        return false;
    const int f = 1 + (int)(k % inner), sl = 1 + (int)(k / inner);
    *p = fc.origin + sl * fc.slow + f * fc.fast;
    return true;
}

/* Warp sum of v; lane 0 gets it. */
__device__ __forceinline__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

template <typename REAL>
__global__ void abc_faces(REAL *__restrict__ next, const REAL *__restrict__ now,
                          double *__restrict__ sums, cuda_abc g)
{
    const gpu_face &fc = g.face[blockIdx.y];
    long long p;
    double now_part = 0.0, next_part = 0.0;
    if (face_node(fc, (long long)blockIdx.x * blockDim.x + threadIdx.x, &p)) {
        const long long q = p + fc.inward;
        const REAL b = now[p], i = now[q], i1 = next[q];
        const REAL b1 = rn_add(i, rn_mul((REAL)g.r, rn_sub(i1, b)));
        next[p] = b1;
        const double di = __dsub_rn((double)i1, (double)i);
        now_part = __dmul_rn(__dsub_rn((double)b, (double)i), di);
        next_part = __dmul_rn(__dsub_rn((double)b1, (double)i1), di);
    }
    now_part = warp_sum(now_part);
    next_part = warp_sum(next_part);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sums[0], now_part);
        atomicAdd(&sums[1], next_part);
    }
}

template <typename REAL>
__global__ void abc_lines(REAL *__restrict__ next, const REAL *__restrict__ now,
                          double *__restrict__ sums, cuda_abc g)
{
    const gpu_line &ln = g.line[blockIdx.y];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.y == 0 && j == 0) { /* the faces are done: room_abc.c's add_exchange */
        sums[2] = __dadd_rn(sums[2], __dadd_rn(sums[3], __dmul_rn(g.scale, sums[0])));
        sums[3] = __dmul_rn(g.scale, sums[1]);
        sums[0] = sums[1] = 0.0;
    }
    if (j >= ln.count)
        return;
    const long long p = ln.origin + (long long)j * ln.along, d = p + ln.diag;
    next[p] = rn_add(now[d], rn_mul((REAL)ln.r, rn_sub(next[d], now[p])));
}

/* ---- host side: the plan's faces and lines on the device layout, once ---- */

static long long offset(const kt_cuda_room *R, const int v[3])
{
    return (long long)v[0] + (long long)v[1] * (long long)R->pitch +
           (long long)v[2] * (long long)R->plane;
}

static long long node(const kt_cuda_room *R, const int v[3])
{
    return kt_cuda_room_index(R, v[0], v[1], v[2]);
}

static void geometry(const kt_cuda_room *R, cuda_abc *g)
{
    const room_abc_plan *a = &R->plan.abc_plan;
    memset(g, 0, sizeof *g);
    for (int k = 0; k < 6; k++) {
        const room_abc_face *f = &a->face[k];
        g->face[k] = {node(R, f->origin), offset(R, f->fast), offset(R, f->slow),
                      offset(R, f->inward), f->n_fast, f->n_slow};
        const int inner = (f->n_fast - 2) * (f->n_slow - 2);
        g->most = inner > g->most ? inner : g->most;
    }
    for (int k = 0; k < 20; k++) {
        const room_abc_line *l = &a->line[k];
        g->line[k] = {node(R, l->origin), offset(R, l->along), offset(R, l->diag), l->count,
                      l->r};
        g->most = l->count > g->most ? l->count : g->most;
    }
    g->r = a->r;
    g->scale = a->flux_scale;
}

int kt_cuda_abc_setup(kt_cuda_room *R, kt_error *err)
{
    if (!R->plan.abc)
        return KT_OK;
    R->abc = (cuda_abc *)malloc(sizeof *R->abc);
    if (!R->abc)
        return kt_fail(err, KT_ENOMEM, "out of memory for the absorbing walls");
    geometry(R, R->abc);
    return kt_cuda_alloc(4 * sizeof(double), (void **)&R->abc_sums, err);
}

template <typename REAL> static void launch_abc(kt_cuda_room *R, cudaStream_t stream)
{
    const cuda_abc &g = *R->abc;
    const dim3 faces(kt_cuda_blocks(g.most, KT_CUDA_BLOCK), 6), lines(kt_cuda_blocks(g.most, 64), 20);
    abc_faces<REAL><<<faces, KT_CUDA_BLOCK, 0, stream>>>((REAL *)R->next, (const REAL *)R->now,
                                                         R->abc_sums, g);
    abc_lines<REAL><<<lines, 64, 0, stream>>>((REAL *)R->next, (const REAL *)R->now,
                                              R->abc_sums, g);
}

void kt_cuda_abc_apply_on(kt_cuda_room *R, cudaStream_t stream)
{
    if (!R->abc_sums)
        return;
    if (R->plan.params.precision == KT_SINGLE)
        launch_abc<float>(R, stream);
    else
        launch_abc<double>(R, stream);
}

extern "C" int kt_cuda_room_wall_exchange(const kt_cuda_room *R, double *inflow_J,
                                          double *known_J, kt_error *err)
{
    double sums[4] = {0, 0, 0, 0};
    int rc = R->abc_sums ? kt_cuda_download(sums, R->abc_sums, sizeof sums, err) : KT_OK;
    *inflow_J = sums[2];
    *known_J = sums[3];
    return rc;
}

extern "C" int kt_cuda_room_set_wall_exchange(kt_cuda_room *R, double inflow_J, double known_J,
                                              kt_error *err)
{
    const double sums[4] = {0, 0, inflow_J, known_J};
    return R->abc_sums ? kt_cuda_upload(R->abc_sums, sums, sizeof sums, err) : KT_OK;
}
