/* room_block_pass.cuh - the blocked pass's kernel (room/gpu/room_block.cu
 * says how it works and why it gives the one-step sweep's bits), compiled
 * once per precision (room_block_float.cu, room_block_double.cu: two nvcc
 * runs side by side) for each depth, extended tile and with or without the
 * sources' and microphones' hooks. */
#ifndef ROOM_BLOCK_PASS_CUH
#define ROOM_BLOCK_PASS_CUH

#include "room_block_gpu.h"
#include "room_sweep_node.cuh"

#define BLOCK_TX 32
#define BLOCK_TY 8


template <typename REAL> struct block_args {
    sweep_coef<REAL> k;
    const REAL *now, *prev;   /* Psi^n, Psi^{n-1} (read) */
    REAL *last, *before;      /* Psi^{n+D}, Psi^{n+D-1} (written) */
    int zslab;                /* planes per z slab */
    room_gpu_hooks h;
};

/* Stage C inside the pass: the sources' samples of level l at node (x, y,
 * p), in the CPU's order (two sources on a node add in sequence). */
template <typename REAL>
__device__ __forceinline__ REAL add_sources(const room_gpu_hooks &h, int l, int x, int y, int p,
                                            REAL v)
{
    const long long level = *h.n + l;
    for (int s = 0; s < h.src_count; s++) {
        const int4 at = __ldg(h.src_xyz + s);
        if (at.x != x || at.y != y || at.z != p)
            continue;
        const long long m = level - __ldg(h.src_first + s);
        if (m >= 0 && m < __ldg(h.src_len + s))
            v = rn_field_add(v, __ldg(h.src_samples + __ldg(h.src_start + s) + m));
    }
    return v;
}

/* Stage E inside the pass: where device node i is a corner of a
 * microphone's cell at level l, Psi^{n+l} - Psi^{n+l-1} there (corners in
 * room_mic_difference's order). */
template <typename REAL>
__device__ __forceinline__ void mic_corners(const room_gpu_hooks &h, int l, long long i,
                                            long long py, long long pz, REAL newer, REAL older)
{
    const int slot = *h.slot + l - 1;
    for (int m = 0; m < h.mic_count; m++) {
        const long long base = h.taps[(size_t)m * MIRROR_BLOCK + (h.moving[m] ? slot : 0)].base;
        for (int c = 0; c < 8; c++)
            if (i == base + (c & 1) + ((c >> 1) & 1) * py + (c >> 2) * pz)
                h.diff[((size_t)(l - 1) * h.mic_count + m) * 8 + c] =
                    __dsub_rn((double)newer, (double)older);
    }
}

template <typename REAL, int D, int CX, int CY, bool HOOKS>
__global__ void __launch_bounds__(BLOCK_TX *BLOCK_TY) block_pass(block_args<REAL> a)
{
    enum { EX = BLOCK_TX * CX, EY = BLOCK_TY * CY, NC = CX * CY };
    extern __shared__ __align__(16) unsigned char smem[];
    REAL(*plane)[2][EY][EX] = reinterpret_cast<REAL(*)[2][EY][EX]>(smem);
    const sweep_coef<REAL> &k = a.k;
    /* column c of the thread: (cx, cy) = (tx + 32 (c % CX), ty + 8 (c / CX))
     * in the extended tile, (x0 + 32 (c % CX), y0 + 8 (c / CX)) in the grid */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = blockIdx.x * (EX - 2 * D) - D + tx, y0 = blockIdx.y * (EY - 2 * D) - D + ty;
    const int z0 = blockIdx.z * a.zslab, z1 = min(z0 + a.zslab, k.nz);
    const int zs = max(0, z0 - D), zend = z1 + D;
    /* device index of column c at plane -1 (then + (p + 1) pz) */
    const long long row0 = k.lead + (long long)(y0 + 1) * k.py + x0;
    /* bit c: the column is in the grid, in the tile proper; 2 bits c: the
     * x and y walls it lies on (sweep2's wxy) */
    unsigned in = 0, own = 0, walls = 0;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const int x = x0 + BLOCK_TX * (c % CX), y = y0 + BLOCK_TY * (c / CX);
        const int cx = tx + BLOCK_TX * (c % CX), cy = ty + BLOCK_TY * (c / CX);
        const bool inside = x >= 0 && x < k.nx && y >= 0 && y < k.ny;
        in |= (unsigned)inside << c;
        own |= (unsigned)(inside && cx >= D && cx < EX - D && cy >= D && cy < EY - D) << c;
        walls |= (unsigned)((x == 0) + (x == k.nx - 1) + (y == 0) + (y == k.ny - 1)) << 2 * c;
    }
    /* h[m][j][c]: level m at plane it - m - j of column c */
    REAL h[D][3][NC];
#pragma unroll
    for (int m = 0; m < D; m++)
#pragma unroll
        for (int j = 0; j < 3; j++)
#pragma unroll
            for (int c = 0; c < NC; c++)
                h[m][j][c] = (REAL)0;
    /* Psi^n of plane it and Psi^{n-1} of plane it - 1, loaded an iteration
     * ahead so that their latency hides behind a whole iteration's work */
    REAL ahead_now[NC], ahead_prev[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const long long i = row0 + BLOCK_TX * (c % CX) + BLOCK_TY * (c / CX) * k.py;
        const bool load = (in >> c & 1) != 0;
        ahead_now[c] = load ? __ldg(a.now + i + (long long)(zs + 1) * k.pz) : (REAL)0;
        ahead_prev[c] = load && zs > 0 ? __ldg(a.prev + i + (long long)zs * k.pz) : (REAL)0;
    }
    for (int it = zs; it < zend; it++) {
        const int par = it & 1;
        REAL prev1[NC]; /* Psi^{n-1} at plane it - 1, for level 1 */
#pragma unroll
        for (int c = 0; c < NC; c++) {
            const long long i = row0 + BLOCK_TX * (c % CX) + BLOCK_TY * (c / CX) * k.py;
            const bool load = (in >> c & 1) != 0;
            h[0][2][c] = h[0][1][c];
            h[0][1][c] = h[0][0][c];
            h[0][0][c] = ahead_now[c];
            prev1[c] = ahead_prev[c];
            plane[0][par][ty + BLOCK_TY * (c / CX)][tx + BLOCK_TX * (c % CX)] = ahead_now[c];
            ahead_now[c] = load && it + 1 < k.nz ? __ldg(a.now + i + (long long)(it + 2) * k.pz)
                                                 : (REAL)0;
            ahead_prev[c] = load && it < k.nz ? __ldg(a.prev + i + (long long)(it + 1) * k.pz)
                                              : (REAL)0;
        }
#pragma unroll
        for (int l = 1; l <= D; l++) {
            const int p = it - l;
            const bool live = p >= 0 && p < k.nz;
            const bool slab = p >= z0 && p < z1;
            const int zw = (p == 0) + (p == k.nz - 1);
            const long long at = (long long)(p + 1) * k.pz; /* plane p's offset */
#pragma unroll
            for (int c = 0; c < NC; c++) {
                const int cx = tx + BLOCK_TX * (c % CX), cy = ty + BLOCK_TY * (c / CX);
                REAL v = (REAL)0;
                /* rows further out than D - l from the tile are never needed
                 * (whole warps: the x border's lanes cannot be skipped) */
                if (live && (in >> c & 1) && cy >= l && cy < EY - l) {
                    const int x = x0 + BLOCK_TX * (c % CX), y = y0 + BLOCK_TY * (c / CX);
                    const REAL(*below)[EX] = plane[l - 1][par ^ 1];
                    const REAL cc = h[l - 1][1][c];
                    REAL xl = below[cy][max(cx - 1, 0)], xr = below[cy][min(cx + 1, EX - 1)];
                    REAL ym = below[max(cy - 1, 0)][cx], yp = below[min(cy + 1, EY - 1)][cx];
                    REAL zm = h[l - 1][2][c], zp = h[l - 1][0][c];
                    const REAL pv = l >= 2 ? h[l >= 2 ? l - 2 : 0][2][c] : prev1[c];
                    const int wxy = walls >> 2 * c & 3;
                    if (wxy) { /* the ghosts beyond the walls, in sweep2's order */
                        if (x == 0)
                            xl = ghost(k.tx0, xr, cc);
                        if (x == k.nx - 1)
                            xr = ghost(k.tx1, xl, cc);
                        if (y == 0)
                            ym = ghost(k.ty0, yp, cc);
                        if (y == k.ny - 1)
                            yp = ghost(k.ty1, ym, cc);
                    }
                    if (zw) {
                        if (p == 0)
                            zm = ghost(k.tz0, zp, cc);
                        if (p == k.nz - 1)
                            zp = ghost(k.tz1, zm, cc);
                    }
                    v = node_update(k, wxy + zw, x, y, p, cc, xl, xr, ym, yp, zm, zp, pv);
                    if (HOOKS) { /* a second instance: the air's keeps its registers */
                        v = add_sources(a.h, l, x, y, p, v);
                        if ((own >> c & 1) && slab)
                            mic_corners(a.h, l, row0 + BLOCK_TX * (c % CX) +
                                                    BLOCK_TY * (c / CX) * k.py + at,
                                        k.py, k.pz, v, cc);
                    }
                }
                if (l < D) {
                    h[l][2][c] = h[l][1][c];
                    h[l][1][c] = h[l][0][c];
                    h[l][0][c] = v;
                    plane[l][par][cy][cx] = v;
                }
                if (l >= D - 1 && (own >> c & 1) && slab)
                    (l == D ? a.last : a.before)[row0 + BLOCK_TX * (c % CX) +
                                                 BLOCK_TY * (c / CX) * k.py + at] = v;
            }
        }
        __syncthreads();
    }
}

/* ---- launch (instantiated by room_block_float.cu and room_block_double.cu) ---- */

#ifdef ROOM_BLOCK_INSTANCES
template <typename REAL, int D, int CX, int CY, bool HOOKS>
static void launch_one(const block_args<REAL> &a, dim3 grid, cudaStream_t stream)
{
    const size_t shared = sizeof(REAL) * (size_t)D * 2 * BLOCK_TX * CX * BLOCK_TY * CY;
    static_assert(BLOCK_TX * CX > 2 * D && BLOCK_TY * CY > 2 * D, "a tile wider than its halo");
    kt_cuda_allow_smem((const void *)block_pass<REAL, D, CX, CY, HOOKS>, shared);
    block_pass<REAL, D, CX, CY, HOOKS><<<grid, dim3(BLOCK_TX, BLOCK_TY), shared, stream>>>(a);
}

template <typename REAL, int D, bool HOOKS>
static void launch_tile(const block_args<REAL> &a, int tile, dim3 grid, cudaStream_t stream)
{
    if (tile == 0)
        launch_one<REAL, D, 1, 4, HOOKS>(a, grid, stream);
    else if (tile == 1)
        launch_one<REAL, D, 2, 2, HOOKS>(a, grid, stream);
    else
        launch_one<REAL, D, 2, 4, HOOKS>(a, grid, stream);
}

/* The pass at `depth` and `tile` (room_block.cu's tile_cx, tile_cy) on
 * `grid` blocks; with the hooks' instance where there are sources or
 * microphones to serve. */
template <typename REAL>
static void block_launch(const block_args<REAL> &a, int depth, int tile, dim3 grid,
                         cudaStream_t stream)
{
    const bool hooks = a.h.src_count > 0 || a.h.mic_count > 0;
    if (depth == 2)
        hooks ? launch_tile<REAL, 2, true>(a, tile, grid, stream)
              : launch_tile<REAL, 2, false>(a, tile, grid, stream);
    else if (depth == 3)
        hooks ? launch_tile<REAL, 3, true>(a, tile, grid, stream)
              : launch_tile<REAL, 3, false>(a, tile, grid, stream);
    else
        hooks ? launch_tile<REAL, 4, true>(a, tile, grid, stream)
              : launch_tile<REAL, 4, false>(a, tile, grid, stream);
}

#endif

void room_block_launch(const block_args<float> &a, int depth, int tile, dim3 grid,
                       cudaStream_t stream);
void room_block_launch(const block_args<double> &a, int depth, int tile, dim3 grid,
                       cudaStream_t stream);

#endif
