/* room_stencil.cu - stage A of the cubic stencil schemes on the GPU (IWB and
 * seed 000's families), mirroring room/room_stencil_impl.h: the mirror ghosts
 * of Psi^n, then the runtime-list form of the generic kernel, or the IWB and
 * compiled-list kernels.  Layout, ghosts, kernels: docs/gpu.md, "The other
 * air schemes and absorbing walls". */
#include "room_gpu.h"
#include "kt_cuda_rn.cuh"
#include "room_stencil_coef.cuh"


#include <cuda_runtime.h>
#include <string.h>

/* What the ghost kernels need: sizes, halo, device strides and the walls. */
typedef struct ghost_geom {
    int nx, ny, nz, h;
    long long lead, py, pz; /* device index of node (0, -h, -h); row and plane strides */
    double t[3][2];         /* room_walls.theta */
} ghost_geom;

/* room_stencil_impl.h's ghost rule, in the field's precision. */
template <typename REAL> __device__ __forceinline__ REAL ghost(REAL a, REAL b, double t)
{
    const REAL theta = (REAL)t;
    return theta == (REAL)1 ? b : theta == (REAL)0 ? a : rn_add(a, rn_mul(theta, rn_sub(b, a)));
}

/* Device index of node (x, y, z), ghosts included (-h <= x < nx + h ...). */
__device__ __forceinline__ long long ghost_index(const ghost_geom &g, int x, int y, int z)
{
    return g.lead + (long long)(z + g.h) * g.pz + (long long)(y + g.h) * g.py + x;
}

/* x ghosts of every row: thread (j, y, z) copies both ends' layer j. */
template <typename REAL> __global__ void ghosts_x(REAL *f, ghost_geom g)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)g.h * g.ny * g.nz)
        return;
    const int j = (int)(t % g.h) + 1, y = (int)(t / g.h % g.ny), z = (int)(t / g.h / g.ny);
    REAL *row = f + ghost_index(g, 0, y, z);
    row[-j] = ghost(row[j - 1], row[j], g.t[0][0]);
    row[g.nx - 1 + j] = ghost(row[g.nx - j], row[g.nx - 1 - j], g.t[0][1]);
}

/* y ghost rows of every interior plane, x ghosts included. */
template <typename REAL> __global__ void ghosts_y(REAL *f, ghost_geom g)
{
    const int wide = g.nx + 2 * g.h;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)wide * g.h * g.nz)
        return;
    const int x = (int)(t % wide) - g.h, j = (int)(t / wide % g.h) + 1;
    const int z = (int)(t / wide / g.h);
    f[ghost_index(g, x, -j, z)] =
        ghost(f[ghost_index(g, x, j - 1, z)], f[ghost_index(g, x, j, z)], g.t[1][0]);
    f[ghost_index(g, x, g.ny - 1 + j, z)] = ghost(
        f[ghost_index(g, x, g.ny - j, z)], f[ghost_index(g, x, g.ny - 1 - j, z)], g.t[1][1]);
}

/* z ghost planes, x and y ghosts included. */
template <typename REAL> __global__ void ghosts_z(REAL *f, ghost_geom g)
{
    const int wide = g.nx + 2 * g.h, deep = g.ny + 2 * g.h;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)wide * deep * g.h)
        return;
    const int x = (int)(t % wide) - g.h, y = (int)(t / wide % deep) - g.h;
    const int j = (int)(t / wide / deep) + 1;
    f[ghost_index(g, x, y, -j)] =
        ghost(f[ghost_index(g, x, y, j - 1)], f[ghost_index(g, x, y, j)], g.t[2][0]);
    f[ghost_index(g, x, y, g.nz - 1 + j)] = ghost(
        f[ghost_index(g, x, y, g.nz - j)], f[ghost_index(g, x, y, g.nz - 1 - j)], g.t[2][1]);
}

template <typename REAL> struct generic_coef {
    int nx, ny, nz, zslab, pairs;
    long long origin, py, pz;      /* device index of node (0, 0, 0); row and plane strides */
    REAL centre;                   /* 2 - lambda^2 sum_p 2 w_p */
    int off[ROOM_STENCIL_MAX_PAIRS];  /* device offset of +d_p */
    REAL l2w[ROOM_STENCIL_MAX_PAIRS]; /* lambda^2 w_p */
};

/* Nodes i and i + pz together: one pass over the pairs (their offsets and
 * weights read once for both, four loads in flight); each node's sum in the
 * CPU's order. */
template <typename REAL>
__device__ __forceinline__ void generic_two(REAL *__restrict__ pn, const REAL *__restrict__ c,
                                            long long i, const generic_coef<REAL> &k)
{
    const REAL *c0 = c + i, *c1 = c0 + k.pz;
    REAL v0 = rn_sub(rn_mul(k.centre, __ldg(c0)), __ldcg(pn + i));
    REAL v1 = rn_sub(rn_mul(k.centre, __ldg(c1)), __ldcg(pn + i + k.pz));
#pragma unroll 4
    for (int q = 0; q < k.pairs; q++) {
        const int o = k.off[q];
        const REAL w = k.l2w[q];
        v0 = rn_pair(v0, w, __ldg(c0 + o), __ldg(c0 - o));
        v1 = rn_pair(v1, w, __ldg(c1 + o), __ldg(c1 - o));
    }
    pn[i] = v0;
    pn[i + k.pz] = v1;
}

template <typename REAL>
__device__ __forceinline__ void generic_one(REAL *__restrict__ pn, const REAL *__restrict__ c,
                                            long long i, const generic_coef<REAL> &k)
{
    const REAL *c0 = c + i;
    REAL v = rn_sub(rn_mul(k.centre, __ldg(c0)), __ldcg(pn + i));
#pragma unroll 4
    for (int q = 0; q < k.pairs; q++) {
        const int o = k.off[q];
        v = rn_pair(v, k.l2w[q], __ldg(c0 + o), __ldg(c0 - o));
    }
    pn[i] = v;
}

template <typename REAL>
__global__ void __launch_bounds__(256)
    generic_sweep(REAL *__restrict__ pn, const REAL *__restrict__ c,
                  const __grid_constant__ generic_coef<REAL> k)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z0 = blockIdx.z * k.zslab, z1 = min(z0 + k.zslab, k.nz);
    if (x >= k.nx || y >= k.ny)
        return;
    long long i = k.origin + (long long)z0 * k.pz + (long long)y * k.py + x;
    int z = z0;
    for (; z + 1 < z1; z += 2, i += 2 * k.pz)
        generic_two(pn, c, i, k);
    if (z < z1)
        generic_one(pn, c, i, k);
}

/* ---- host side ---- */

static ghost_geom geometry(const kt_cuda_room *R)
{
    ghost_geom g;
    g.nx = R->plan.grid.nx;
    g.ny = R->plan.grid.ny;
    g.nz = R->plan.grid.nz;
    g.h = R->plan.halo;
    g.lead = (long long)R->lead;
    g.py = (long long)R->pitch;
    g.pz = (long long)R->plane;
    memcpy(g.t, R->plan.walls.theta, sizeof g.t);
    return g;
}

template <typename REAL> static void fill_ghosts(kt_cuda_room *R, cudaStream_t stream)
{
    const ghost_geom g = geometry(R);
    const long long h = g.h, wide = g.nx + 2 * h, deep = g.ny + 2 * h;
    const long long nx_threads = h * g.ny * g.nz, ny_threads = wide * h * g.nz,
                    nz_threads = wide * deep * h;
    REAL *f = (REAL *)R->now;
    ghosts_x<REAL><<<kt_cuda_blocks(nx_threads, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, stream>>>(f, g);
    ghosts_y<REAL><<<kt_cuda_blocks(ny_threads, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, stream>>>(f, g);
    ghosts_z<REAL><<<kt_cuda_blocks(nz_threads, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, stream>>>(f, g);
}

/* The shared coefficients (room_stencil_coef.cuh), with the legs' device
 * offsets. */
template <typename REAL> static void generic_coefficients(const kt_cuda_room *R,
                                                          generic_coef<REAL> *k)
{
    const room_stencil *st = R->plan.st;
    stencil_coefficients(R, k);
    k->pairs = st->pairs;
    for (int q = 0; q < st->pairs; q++) {
        const int *d = st->d[q];
        k->off[q] = (int)(d[0] + d[1] * (long long)R->pitch + d[2] * (long long)R->plane);
    }
}

#define GENERIC_BLOCK_X 32
#define GENERIC_BLOCK_Y 8

template <typename REAL> static void launch_generic(kt_cuda_room *R, cudaStream_t stream)
{
    generic_coef<REAL> k;
    generic_coefficients<REAL>(R, &k);
    dim3 block(GENERIC_BLOCK_X, GENERIC_BLOCK_Y);
    dim3 grid(kt_cuda_blocks(k.nx, GENERIC_BLOCK_X), kt_cuda_blocks(k.ny, GENERIC_BLOCK_Y),
              (unsigned)R->slabs);
    generic_sweep<REAL><<<grid, block, 0, stream>>>((REAL *)R->prev, (const REAL *)R->now, k);
}

/* The generic kernel uses no shared memory: all of the SM's L1/shared
 * array as L1, for the planes a wide stencil reaches. */
void kt_cuda_stencil_prepare(void)
{
    cudaFuncSetAttribute(generic_sweep<float>, cudaFuncAttributePreferredSharedMemoryCarveout,
                         cudaSharedmemCarveoutMaxL1);
    cudaFuncSetAttribute(generic_sweep<double>, cudaFuncAttributePreferredSharedMemoryCarveout,
                         cudaSharedmemCarveoutMaxL1);
    cudaGetLastError(); /* a hint: a device that ignores it runs the same */
}

void kt_cuda_room_stencil_sweep_on(kt_cuda_room *R, cudaStream_t stream)
{
    const int single = R->plan.params.precision == KT_SINGLE;
    if (R->plan.params.scheme == KT_SCHEME_FCC13) { /* its own layout and ghosts */
        kt_cuda_fcc_sweep_on(R, stream);
        return;
    }
    if (single)
        fill_ghosts<float>(R, stream);
    else
        fill_ghosts<double>(R, stream);
    if (R->kernel == KT_CUDA_KERNEL_AUTO && kt_cuda_iwb_matches(R))
        kt_cuda_iwb_sweep_on(R, stream);
    else if (R->kernel != KT_CUDA_KERNEL_GENERIC_LIST && kt_cuda_ring_sweep_on(R, stream))
        return; /* the compiled form of the generic kernel */
    else if (single)
        launch_generic<float>(R, stream);
    else
        launch_generic<double>(R, stream);
}
