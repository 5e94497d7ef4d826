/* room_stencil_iwb.cu - the hand-written sweep of the 27-point IWB scheme
 * (room/room_scheme_iwb.c) on the GPU, for a room whose stencil is IWB's 13
 * leg pairs in the CPU's order: the 3 x 3 neighbourhoods of three planes in
 * registers, nine loads a node.  docs/gpu.md, "The other air schemes and
 * absorbing walls". */
#include "room_gpu.h"
#include "kt_cuda_rn.cuh"
#include "room_stencil_coef.cuh"


#include <cuda_runtime.h>
#include <string.h>

#define IWB_PAIRS 13

/* room_iwb_stencil's pairs: faces, edges with +1 then -1, corners. */
static const int iwb_legs[IWB_PAIRS][3] = {
    {1, 0, 0},  {0, 1, 0},  {0, 0, 1},  {1, 1, 0},  {1, 0, 1},   {0, 1, 1},  {1, -1, 0},
    {1, 0, -1}, {0, 1, -1}, {1, 1, 1},  {1, 1, -1}, {1, -1, 1},  {1, -1, -1}};

template <typename REAL> struct iwb_coef {
    int nx, ny, nz, zslab;
    long long origin, py, pz;   /* device index of node (0, 0, 0); row and plane strides */
    REAL centre;
    REAL l2w[IWB_PAIRS];        /* lambda^2 w_p in iwb_legs' order */
};

/* The 3 x 3 neighbourhood of one plane around index i: v[dy + 1][dx + 1]. */
template <typename REAL>
__device__ __forceinline__ void load_plane(REAL v[3][3], const REAL *__restrict__ c,
                                           long long i, long long py)
{
#pragma unroll
    for (int dy = 0; dy < 3; dy++)
#pragma unroll
        for (int dx = 0; dx < 3; dx++)
            v[dy][dx] = __ldg(c + i + (dy - 1) * py + (dx - 1));
}

/* The update of the node at the middle of planes m (z-1), o (z), p (z+1):
 * pair by pair in iwb_legs' order, +d then -d. */
template <typename REAL>
__device__ __forceinline__ REAL iwb_node(const iwb_coef<REAL> &k, const REAL m[3][3],
                                         const REAL o[3][3], const REAL p[3][3], REAL old)
{
    const REAL *w = k.l2w;
    REAL v = rn_sub(rn_mul(k.centre, o[1][1]), old);
    v = rn_pair(v, w[0], o[1][2], o[1][0]);  /* ( 1, 0, 0) */
    v = rn_pair(v, w[1], o[2][1], o[0][1]);  /* ( 0, 1, 0) */
    v = rn_pair(v, w[2], p[1][1], m[1][1]);  /* ( 0, 0, 1) */
    v = rn_pair(v, w[3], o[2][2], o[0][0]);  /* ( 1, 1, 0) */
    v = rn_pair(v, w[4], p[1][2], m[1][0]);  /* ( 1, 0, 1) */
    v = rn_pair(v, w[5], p[2][1], m[0][1]);  /* ( 0, 1, 1) */
    v = rn_pair(v, w[6], o[0][2], o[2][0]);  /* ( 1,-1, 0) */
    v = rn_pair(v, w[7], m[1][2], p[1][0]);  /* ( 1, 0,-1) */
    v = rn_pair(v, w[8], m[2][1], p[0][1]);  /* ( 0, 1,-1) */
    v = rn_pair(v, w[9], p[2][2], m[0][0]);  /* ( 1, 1, 1) */
    v = rn_pair(v, w[10], m[2][2], p[0][0]); /* ( 1, 1,-1) */
    v = rn_pair(v, w[11], p[0][2], m[2][0]); /* ( 1,-1, 1) */
    return rn_pair(v, w[12], m[0][2], p[2][0]); /* ( 1,-1,-1) */
}

template <typename REAL>
__global__ void __launch_bounds__(256) iwb_sweep(REAL *__restrict__ pn, const REAL *__restrict__ c,
                                                 iwb_coef<REAL> k)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z0 = blockIdx.z * k.zslab, z1 = min(z0 + k.zslab, k.nz);
    if (x >= k.nx || y >= k.ny || z0 >= z1)
        return;
    long long i = k.origin + (long long)z0 * k.pz + (long long)y * k.py + x;
    REAL m[3][3], o[3][3], p[3][3];
    load_plane(m, c, i - k.pz, k.py);
    load_plane(o, c, i, k.py);
    for (int z = z0; z < z1; z++, i += k.pz) {
        load_plane(p, c, i + k.pz, k.py);
        pn[i] = iwb_node(k, m, o, p, __ldcg(pn + i));
#pragma unroll
        for (int a = 0; a < 3; a++)
#pragma unroll
            for (int b = 0; b < 3; b++) {
                m[a][b] = o[a][b];
                o[a][b] = p[a][b];
            }
    }
}

/* ---- host side ---- */

int kt_cuda_iwb_matches(const kt_cuda_room *R)
{
    if (!R->plan.st || R->plan.st->pairs != IWB_PAIRS || R->plan.st->reach != 1)
        return 0;
    for (int q = 0; q < IWB_PAIRS; q++)
        if (memcmp(R->plan.st->d[q], iwb_legs[q], sizeof iwb_legs[q]) != 0)
            return 0;
    return 1;
}

#define IWB_BLOCK_X 32
#define IWB_BLOCK_Y 8

template <typename REAL> static void launch_iwb(kt_cuda_room *R, cudaStream_t stream)
{
    iwb_coef<REAL> k;            /* the room's stencil is IWB's 13 pairs (kt_cuda_iwb_matches) */
    stencil_coefficients(R, &k);
    dim3 block(IWB_BLOCK_X, IWB_BLOCK_Y);
    dim3 grid(kt_cuda_blocks(k.nx, IWB_BLOCK_X), kt_cuda_blocks(k.ny, IWB_BLOCK_Y),
              (unsigned)R->slabs);
    iwb_sweep<REAL><<<grid, block, 0, stream>>>((REAL *)R->prev, (const REAL *)R->now, k);
}

void kt_cuda_iwb_sweep_on(kt_cuda_room *R, cudaStream_t stream)
{
    if (R->plan.params.precision == KT_SINGLE)
        launch_iwb<float>(R, stream);
    else
        launch_iwb<double>(R, stream);
}
