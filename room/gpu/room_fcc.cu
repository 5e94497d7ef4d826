/* room_fcc.cu - stage A of the 13-point FCC scheme on the GPU, mirroring
 * room/room_fcc.c and room_fcc_impl.h on the same half-row layout: ghosts,
 * the sweep (a thread per (slot, y) column of a z slab), then the plan's
 * cut end nodes (fcc_cut).  docs/gpu.md, "The other air schemes and
 * absorbing walls". */
#include "room_gpu.h"
#include "kt_cuda_rn.cuh"


#include <cuda_runtime.h>
#include <string.h>

typedef struct fcc_geom {
    int nx, ny, nz, sx;          /* nodes; slots per row with the two ghosts */
    long long origin, R, P;      /* device index of slot 0 of row (0, 0); row, plane strides */
} fcc_geom;

/* Device index of slot m of row (y, z) (m = -1 and y, z = -1 are ghosts). */
__device__ __forceinline__ long long fcc_at(const fcc_geom &g, int m, int y, int z)
{
    return g.origin + (long long)z * g.P + (long long)y * g.R + m;
}

/* Ghost slots of every interior row (room_fcc_impl.h ghost_plane). */
template <typename REAL> __global__ void fcc_ghost_slots(REAL *f, fcc_geom g)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)g.ny * g.nz)
        return;
    const int y = (int)(t % g.ny), z = (int)(t / g.ny);
    const int p = (y + z) & 1, cnt = (g.nx - p + 1) / 2;
    REAL *row = f + fcc_at(g, 0, y, z);
    row[-1] = row[1 - p];
    row[cnt] = row[g.nx - 1 - cnt - p];
}

/* Ghost rows y = -1 (row 1) and y = ny (row ny - 2) of every interior plane. */
template <typename REAL> __global__ void fcc_ghost_rows(REAL *f, fcc_geom g)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)g.sx * g.nz)
        return;
    const int m = (int)(t % g.sx) - 1, z = (int)(t / g.sx);
    f[fcc_at(g, m, -1, z)] = f[fcc_at(g, m, 1, z)];
    f[fcc_at(g, m, g.ny, z)] = f[fcc_at(g, m, g.ny - 2, z)];
}

/* Ghost planes z = -1 (plane 1) and z = nz (plane nz - 2), ghost rows too. */
template <typename REAL> __global__ void fcc_ghost_planes(REAL *f, fcc_geom g)
{
    const int rows = g.ny + 2;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)g.sx * rows)
        return;
    const int m = (int)(t % g.sx) - 1, y = (int)(t / g.sx) - 1;
    f[fcc_at(g, m, y, -1)] = f[fcc_at(g, m, y, 1)];
    f[fcc_at(g, m, y, g.nz)] = f[fcc_at(g, m, y, g.nz - 2)];
}

template <typename REAL> struct fcc_coef {
    fcc_geom g;
    int zslab;
    REAL l2w, centre;
};

template <typename REAL>
__global__ void __launch_bounds__(256) fcc_sweep(REAL *__restrict__ pn, const REAL *__restrict__ c,
                                                 fcc_coef<REAL> k)
{
    const fcc_geom &g = k.g;
    const int m = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z0 = blockIdx.z * k.zslab, z1 = min(z0 + k.zslab, g.nz);
    if (m >= (g.nx + 1) / 2 || y >= g.ny || z0 >= z1)
        return;
    const long long R = g.R, P = g.P;
    long long i = fcc_at(g, m, y, z0);
    REAL cm = __ldg(c + i - P), c0 = __ldg(c + i);
    REAL um = __ldg(c + i + R - P), u0 = __ldg(c + i + R);
    REAL dm = __ldg(c + i - R - P), d0 = __ldg(c + i - R);
    for (int z = z0; z < z1; z++, i += P) {
        const REAL cp = __ldg(c + i + P), up = __ldg(c + i + R + P), dp = __ldg(c + i - R + P);
        const int p = (y + z) & 1, s = 2 * p - 1;
        if (m < (g.nx - p + 1) / 2) {
            const REAL a = rn_add(rn_add(u0, __ldg(c + i + R + s)),
                                  rn_add(d0, __ldg(c + i - R + s)));
            const REAL b = rn_add(rn_add(cp, __ldg(c + i + P + s)),
                                  rn_add(cm, __ldg(c + i - P + s)));
            const REAL e = rn_add(rn_add(up, um), rn_add(dp, dm));
            const REAL sum = rn_add(rn_add(a, b), e);
            pn[i] = rn_sub(rn_add(rn_mul(k.centre, c0), rn_mul(k.l2w, sum)), __ldcg(pn + i));
        }
        cm = c0;
        c0 = cp;
        um = u0;
        u0 = up;
        dm = d0;
        d0 = dp;
    }
}

/* room_fcc_impl.h's cut_walls: node k of the list adds sum_q c_q (Psi_j -
 * Psi_i) over the 12 legs in room_fcc_legs' order, in double, skipping the
 * zero coefficients as the CPU does. */
__constant__ int fcc_legs_dev[12][3] = {{1, 1, 0},  {1, -1, 0}, {-1, 1, 0},  {-1, -1, 0},
                                        {1, 0, 1},  {1, 0, -1}, {-1, 0, 1},  {-1, 0, -1},
                                        {0, 1, 1},  {0, 1, -1}, {0, -1, 1},  {0, -1, -1}};

template <typename REAL>
__global__ void fcc_cut(REAL *__restrict__ next, const REAL *__restrict__ now, fcc_geom g,
                        const int *__restrict__ node, const double *__restrict__ coef, int count)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count)
        return;
    const int x = node[3 * k], y = node[3 * k + 1], z = node[3 * k + 2];
    const long long i = fcc_at(g, x / 2, y, z);
    const double ci = (double)now[i];
    double corr = 0.0;
    for (int q = 0; q < 12; q++) {
        const double c = coef[12 * (long long)k + q];
        if (c != 0.0) {
            const int xj = x + fcc_legs_dev[q][0];
            const long long j = fcc_at(g, xj / 2, y + fcc_legs_dev[q][1], z + fcc_legs_dev[q][2]);
            corr = __dadd_rn(corr, __dmul_rn(c, __dsub_rn((double)now[j], ci)));
        }
    }
    next[i] = rn_field_add(next[i], corr);
}

/* ---- host side ---- */

static fcc_geom geometry(const kt_cuda_room *R)
{
    fcc_geom g;
    g.nx = R->plan.grid.nx;
    g.ny = R->plan.grid.ny;
    g.nz = R->plan.grid.nz;
    g.sx = (int)R->plan.px;
    g.R = (long long)R->pitch;
    g.P = (long long)R->plane;
    g.origin = (long long)R->lead + g.P + g.R; /* slot 0 of row (y = 0, z = 0) */
    return g;
}

#define FCC_BLOCK_X 32
#define FCC_BLOCK_Y 8

template <typename REAL> static void launch_fcc(kt_cuda_room *R, cudaStream_t stream)
{
    fcc_coef<REAL> k;
    memset(&k, 0, sizeof k);
    k.g = geometry(R);
    const fcc_geom &g = k.g;
    REAL *now = (REAL *)R->now;
    const long long slots = (long long)g.ny * g.nz, rows = (long long)g.sx * g.nz,
                    planes = (long long)g.sx * (g.ny + 2);
    fcc_ghost_slots<REAL><<<kt_cuda_blocks(slots, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, stream>>>(now, g);
    fcc_ghost_rows<REAL><<<kt_cuda_blocks(rows, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, stream>>>(now, g);
    fcc_ghost_planes<REAL><<<kt_cuda_blocks(planes, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, stream>>>(now,
                                                                                               g);
    k.centre = (REAL)R->plan.st_centre; /* the plan's: 6 pairs of weight 1/4 */
    k.l2w = (REAL)R->plan.st_l2w[0];
    k.zslab = (g.nz + R->slabs - 1) / R->slabs;
    dim3 block(FCC_BLOCK_X, FCC_BLOCK_Y);
    dim3 grid(kt_cuda_blocks((g.nx + 1) / 2, FCC_BLOCK_X), kt_cuda_blocks(g.ny, FCC_BLOCK_Y),
              (unsigned)R->slabs);
    fcc_sweep<REAL><<<grid, block, 0, stream>>>((REAL *)R->prev, now, k);
    if (R->plan.fcc_cut.count > 0)
        fcc_cut<REAL><<<kt_cuda_blocks(R->plan.fcc_cut.count, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0,
                        stream>>>((REAL *)R->prev, now, g, R->fcc_cut_node, R->fcc_cut_coef,
                                  R->plan.fcc_cut.count);
}

int kt_cuda_fcc_setup(kt_cuda_room *R, kt_error *err)
{
    const room_fcc_cut *cut = &R->plan.fcc_cut;
    if (cut->count == 0)
        return KT_OK;
    const size_t nodes = sizeof(int) * 3 * (size_t)cut->count;
    const size_t coefs = sizeof(double) * 12 * (size_t)cut->count;
    int rc;
    if ((rc = kt_cuda_alloc(nodes, (void **)&R->fcc_cut_node, err)) == KT_OK &&
        (rc = kt_cuda_alloc(coefs, (void **)&R->fcc_cut_coef, err)) == KT_OK)
        rc = kt_cuda_upload(R->fcc_cut_node, cut->node, nodes, err);
    return rc < 0 ? rc : kt_cuda_upload(R->fcc_cut_coef, cut->coef, coefs, err);
}

void kt_cuda_fcc_sweep_on(kt_cuda_room *R, cudaStream_t stream)
{
    if (R->plan.params.precision == KT_SINGLE)
        launch_fcc<float>(R, stream);
    else
        launch_fcc<double>(R, stream);
}
