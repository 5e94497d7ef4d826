/* room_block_pass.cuh - the blocked pass's kernel (room/gpu/room_block.cu
 * says how it works and why it gives the one-step sweep's bits), compiled
 * once per precision (room_block_float.cu, room_block_double.cu: two nvcc
 * runs side by side) for each depth and extended tile: the air alone, with
 * the sources' and microphones' hooks, and with those and the hand-over's
 * band (BAND). */
#ifndef ROOM_BLOCK_PASS_CUH
#define ROOM_BLOCK_PASS_CUH

#include "room_block_gpu.h"
#include "room_sweep_node.cuh"

template <typename REAL> struct block_args {
    sweep_coef<REAL> k;
    const REAL *now, *prev;   /* Psi^n, Psi^{n-1} (read) */
    REAL *last, *before;      /* Psi^{n+D}, Psi^{n+D-1} (written) */
    int zslab;                /* planes per z slab */
    int zfirst, zlast;        /* the slabs cover planes zfirst .. zlast-1 */
    int band_lo, band_hi;     /* the hand-over's band of planes (BAND instances) */
    room_gpu_hooks h;
};
/* block_args' fields, a parameter of block_pass_parts (sweep_coef_a says
 * why parts). */
template <typename REAL> struct block_fields {
    const REAL *now, *prev;
    REAL *last, *before;
    int zslab, zfirst, zlast, band_lo, band_hi;
};
static_assert(sizeof(block_fields<double>) <= 128 && sizeof(room_gpu_hooks) <= 128,
              "the pass's parameters at most 128 bytes each");

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

/* The extended tile of block_pass: BY x 32 threads, each CY columns 8 BY
 * rows apart... that is, column c of thread (tx, ty) is (tx, ty + BY c):
 * EX = 32 columns by EY = BY CY rows.  In shared memory each level's plane
 * is held twice (parity), with a row of padding above and below and an
 * element before and after, so that every neighbour read is the column's
 * own address plus a constant (the edge columns read the padding or the
 * next row: wrong values, in the part of the tile that is never right). */
#define BLOCK_TX 32
template <int BY, int CY> struct block_shape {
    enum { EX = BLOCK_TX, EY = BY * CY, STRIDE = BLOCK_TX, PLANE = (EY + 2) * BLOCK_TX + 2 };
};

/* One node-level of the pass on a wall or at the tile's edge: node (x, y, p)
 * with the walls' ghosts in sweep2's order (the same values: the node's
 * level-below neighbours), then node_update. */
template <typename REAL>
__device__ __forceinline__ REAL edge_node(const sweep_coef<REAL> &k, int x, int y, int p,
                                          REAL cc, REAL xl, REAL xr, REAL ym, REAL yp, REAL zm,
                                          REAL zp, REAL pv)
{
    if (x == 0)
        xl = ghost(k.tx0, xr, cc);
    if (x == k.nx - 1)
        xr = ghost(k.tx1, xl, cc);
    if (y == 0)
        ym = ghost(k.ty0, yp, cc);
    if (y == k.ny - 1)
        yp = ghost(k.ty1, ym, cc);
    if (p == 0)
        zm = ghost(k.tz0, zp, cc);
    if (p == k.nz - 1)
        zp = ghost(k.tz1, zm, cc);
    const int m = (x == 0) + (x == k.nx - 1) + (y == 0) + (y == k.ny - 1) + (p == 0) +
                  (p == k.nz - 1);
    return node_update(k, m, x, y, p, cc, xl, xr, ym, yp, zm, zp, pv);
}

/* BAND: the hand-over to the instruments (room_block.cu): level l sweeps
 * only the planes p <= band_lo - l and p >= band_hi + l (trapezoids in z and
 * t), and a plane j planes outside the band writes its last two levels,
 * min(j, D) and the one before, level l into `last` when D - l is even,
 * else into `before`: there the band's steps find them. */
template <typename REAL, int D, int BY, int CY, bool HOOKS, bool BAND>
__device__ __forceinline__ void block_march(block_args<REAL> a, bool src_here,
                                            bool mic_here)
{
    typedef block_shape<BY, CY> S;
    enum { EX = S::EX, EY = S::EY, PL = S::PLANE };
    extern __shared__ __align__(16) unsigned char smem[];
    REAL *const planes = reinterpret_cast<REAL *>(smem); /* [D][2][PL] */
    const sweep_coef<REAL> &k = a.k;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int xe0 = (int)blockIdx.x * (EX - 2 * D) - D, ye0 = (int)blockIdx.y * (EY - 2 * D) - D;
    const int x = xe0 + tx, y0 = ye0 + ty;
    const int z0 = a.zfirst + (int)blockIdx.z * a.zslab, z1 = min(z0 + a.zslab, a.zlast);
    const int zs = max(0, z0 - D), zend = z1 + D;
    /* the block's columns miss the x walls and the grid's outside: then a
     * row whose columns miss the y walls too takes the plain update */
    const bool x_inside = xe0 >= 1 && xe0 + EX <= k.nx - 1;
    const bool x_in = x >= 0 && x < k.nx, x_own = tx >= D && tx < EX - D;
    /* device offset of column c's row at plane -1 */
    const long long row0 = k.lead + (long long)(y0 + 1) * k.py + x;
    const long long rows_c = (long long)BY * k.py; /* between column c and c + 1 */
    /* h[m][j][c]: level m at plane it - m - j of column c */
    REAL h[D][3][CY];
#pragma unroll
    for (int m = 0; m < D; m++)
#pragma unroll
        for (int j = 0; j < 3; j++)
#pragma unroll
            for (int c = 0; c < CY; c++)
                h[m][j][c] = (REAL)0;
    /* Psi^n of plane it and Psi^{n-1} of plane it - 1, loaded an iteration
     * ahead so that their latency hides behind a whole iteration's work */
    REAL ahead_now[CY], ahead_prev[CY];
#pragma unroll
    for (int c = 0; c < CY; c++) {
        const int y = y0 + BY * c;
        const bool load = x_in && y >= 0 && y < k.ny;
        const long long i = row0 + c * rows_c;
        ahead_now[c] = load ? __ldg(a.now + i + (long long)(zs + 1) * k.pz) : (REAL)0;
        ahead_prev[c] = load && zs > 0 ? __ldg(a.prev + i + (long long)zs * k.pz) : (REAL)0;
    }
    /* column c's element in a plane: PL-relative, the same in every plane */
    const int at0 = 1 + (ty + 1) * EX + tx;
    for (int it = zs; it < zend; it++) {
        const int cur = (it & 1) * PL, old = PL - cur; /* this iteration's copy, the last */
        REAL prev1[CY]; /* Psi^{n-1} at plane it - 1, for level 1 */
#pragma unroll
        for (int c = 0; c < CY; c++) {
            const int y = y0 + BY * c;
            const bool load = x_in && y >= 0 && y < k.ny;
            const long long i = row0 + c * rows_c;
            h[0][2][c] = h[0][1][c];
            h[0][1][c] = h[0][0][c];
            h[0][0][c] = ahead_now[c];
            prev1[c] = ahead_prev[c];
            planes[cur + at0 + BY * c * EX] = ahead_now[c];
            ahead_now[c] = load && it + 1 < k.nz ? __ldg(a.now + i + (long long)(it + 2) * k.pz)
                                                 : (REAL)0;
            ahead_prev[c] = load && it < k.nz ? __ldg(a.prev + i + (long long)(it + 1) * k.pz)
                                              : (REAL)0;
        }
#pragma unroll
        for (int l = 1; l <= D; l++) {
            const int p = it - l;
            /* BAND: planes j = band_lo - p below the band, p - band_hi above */
            const int j = BAND ? (p < a.band_lo ? a.band_lo - p : p - a.band_hi) : D;
            const bool live = p >= 0 && p < k.nz && (!BAND || j >= l);
            const bool z_inside = p >= 1 && p < k.nz - 1;
            const bool slab = p >= z0 && p < z1;
            const long long at = (long long)(p + 1) * k.pz;
            const REAL *below = planes + (2 * (l - 1) * PL + old + at0);
#pragma unroll
            for (int c = 0; c < CY; c++) {
                const int cy = ty + BY * c, y = y0 + BY * c;
                REAL v = (REAL)0;
                /* rows further out than D - l from the tile are never needed */
                if (live && cy >= l && cy < EY - l) {
                    const REAL cc = h[l - 1][1][c];
                    const REAL *b = below + BY * c * EX;
                    const REAL xl = b[-1], xr = b[1], ym = b[-EX], yp = b[EX];
                    const REAL zm = h[l - 1][2][c], zp = h[l - 1][0][c];
                    const REAL pv = l >= 2 ? h[l >= 2 ? l - 2 : 0][2][c] : prev1[c];
                    if (x_inside && z_inside && y >= 1 && y < k.ny - 1)
                        v = node_update(k, 0, x, y, p, cc, xl, xr, ym, yp, zm, zp, pv);
                    else if (x_in && y >= 0 && y < k.ny)
                        v = edge_node(k, x, y, p, cc, xl, xr, ym, yp, zm, zp, pv);
                    if (HOOKS && x_in && y >= 0 && y < k.ny) {
                        if (src_here)
                            v = add_sources(a.h, l, x, y, p, v);
                        if (mic_here && x_own && cy >= D && cy < EY - D && slab)
                            mic_corners(a.h, l, row0 + c * rows_c + at, k.py, k.pz, v, cc);
                    }
                }
                if (l < D) {
                    h[l][2][c] = h[l][1][c];
                    h[l][1][c] = h[l][0][c];
                    h[l][0][c] = v;
                    planes[2 * l * PL + cur + at0 + BY * c * EX] = v;
                }
                if (BAND) {
                    if (live && l >= min(j, D) - 1 && slab && x_own && x_in && cy >= D &&
                        cy < EY - D && y < k.ny)
                        (((D - l) & 1) ? a.before : a.last)[row0 + c * rows_c + at] = v;
                } else if (l >= D - 1 && slab && x_own && x_in && cy >= D && cy < EY - D &&
                           y < k.ny) {
                    (l == D ? a.last : a.before)[row0 + c * rows_c + at] = v;
                }
            }
        }
        __syncthreads();
    }
}

/* The pass of one block: where HOOKS, whether a source lies in the
 * extended tile, and a microphone's cell (at any level of the pass) reaches
 * the tile proper; only such blocks march with the per-node tests (they
 * made the concert hall's pass several times slower in every block), the
 * others as the air alone. */
template <typename REAL, int D, int BY, int CY, bool HOOKS, bool BAND>
__device__ __forceinline__ void block_body(block_args<REAL> a)
{
    if (!HOOKS) {
        block_march<REAL, D, BY, CY, false, BAND>(a, false, false);
        return;
    }
    typedef block_shape<BY, CY> S;
    enum { EX = S::EX, EY = S::EY };
    const sweep_coef<REAL> &k = a.k;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int xe0 = (int)blockIdx.x * (EX - 2 * D) - D, ye0 = (int)blockIdx.y * (EY - 2 * D) - D;
    const int t = ty * BLOCK_TX + tx, nt = BLOCK_TX * BY;
    int s_any = 0, m_any = 0;
    for (int s = t; s < a.h.src_count; s += nt) {
        const int4 at = __ldg(a.h.src_xyz + s);
        s_any |= at.x >= xe0 && at.x < xe0 + EX && at.y >= ye0 && at.y < ye0 + EY;
    }
    const int slot = *a.h.slot;
    for (int q = t; q < a.h.mic_count * D; q += nt) {
        const int m = q / D, l = q % D + 1;
        const long long r =
            a.h.taps[(size_t)m * MIRROR_BLOCK + (a.h.moving[m] ? slot + l - 1 : 0)].base -
            k.lead; /* (p + 1) pz + (y + 1) py + x */
        const int bx = (int)(r % k.py), by = (int)(r / k.py % (k.pz / k.py)) - 1;
        m_any |= bx + 1 >= xe0 + D && bx < xe0 + EX - D && by + 1 >= ye0 + D &&
                 by < ye0 + EY - D;
    }
    const bool src_here = __syncthreads_or(s_any) != 0, mic_here = __syncthreads_or(m_any) != 0;
    if (src_here || mic_here)
        block_march<REAL, D, BY, CY, true, BAND>(a, src_here, mic_here);
    else
        block_march<REAL, D, BY, CY, false, BAND>(a, false, false);
}

/* The pass as a kernel, its arguments given in one of two ways (measured
 * on one H100, 2026-11-26, 640 x 400 x 400 lossy, side by side): in double
 * as parameters of at most 128 bytes each, joined (sweep_coef_a says why):
 * 171 -> 186 Gvox/s at depth 4 (x1.56 -> x1.70 over one step a pass); in
 * single as one struct, since the joined copy took the best instance (depth
 * 4, 32 x 16 threads) from 64 to 80 registers, one block an SM instead of
 * two: 237 -> 186 Gvox/s. */
template <typename REAL, int D, int BY, int CY, bool HOOKS, bool BAND>
__global__ void __launch_bounds__(BLOCK_TX *BY) block_pass(block_args<REAL> a)
{
    block_body<REAL, D, BY, CY, HOOKS, BAND>(a);
}

template <typename REAL, int D, int BY, int CY, bool HOOKS, bool BAND>
__global__ void __launch_bounds__(BLOCK_TX *BY)
    block_pass_parts(sweep_coef_a<REAL> ka, sweep_coef_b kb, sweep_coef_c kc,
                     block_fields<REAL> fields, room_gpu_hooks hooks)
{
    block_args<REAL> a;
    a.k = sweep_coef_join(ka, kb, kc);
    a.now = fields.now;
    a.prev = fields.prev;
    a.last = fields.last;
    a.before = fields.before;
    a.zslab = fields.zslab;
    a.zfirst = fields.zfirst;
    a.zlast = fields.zlast;
    a.band_lo = fields.band_lo;
    a.band_hi = fields.band_hi;
    a.h = hooks;
    block_body<REAL, D, BY, CY, HOOKS, BAND>(a);
}

/* ---- launch (instantiated by room_block_float.cu and room_block_double.cu) ---- */

#ifdef ROOM_BLOCK_INSTANCES
template <typename REAL, int D, int BY, int CY, bool HOOKS, bool BAND>
static void launch_one(const block_args<REAL> &a, dim3 grid, cudaStream_t stream)
{
    typedef block_shape<BY, CY> S;
    const size_t shared = sizeof(REAL) * (size_t)D * 2 * S::PLANE;
    static_assert(S::EY > 2 * D, "a tile taller than its halo");
    const dim3 block(BLOCK_TX, BY);
    if constexpr (sizeof(REAL) == sizeof(double)) {
        kt_cuda_allow_smem((const void *)block_pass_parts<REAL, D, BY, CY, HOOKS, BAND>,
                           shared);
        sweep_coef_a<REAL> ka;
        sweep_coef_b kb;
        sweep_coef_c kc;
        sweep_coef_split(a.k, &ka, &kb, &kc);
        block_pass_parts<REAL, D, BY, CY, HOOKS, BAND><<<grid, block, shared, stream>>>(
            ka, kb, kc,
            block_fields<REAL>{a.now, a.prev, a.last, a.before, a.zslab, a.zfirst, a.zlast,
                               a.band_lo, a.band_hi},
            a.h);
    } else {
        kt_cuda_allow_smem((const void *)block_pass<REAL, D, BY, CY, HOOKS, BAND>, shared);
        block_pass<REAL, D, BY, CY, HOOKS, BAND><<<grid, block, shared, stream>>>(a);
    }
}

template <typename REAL, int D, bool HOOKS, bool BAND>
static void launch_tile(const block_args<REAL> &a, int tile, dim3 grid, cudaStream_t stream)
{
    if (tile == 0)
        launch_one<REAL, D, 8, 4, HOOKS, BAND>(a, grid, stream);
    else if (tile == 1)
        launch_one<REAL, D, 16, 2, HOOKS, BAND>(a, grid, stream);
    else if (tile == 2)
        launch_one<REAL, D, 16, 4, HOOKS, BAND>(a, grid, stream);
    else
        launch_one<REAL, D, 32, 1, HOOKS, BAND>(a, grid, stream);
}

/* The air alone, its sources' and microphones' hooks, or those and the
 * hand-over's band (which comes with the mirror's hooks only). */
template <typename REAL, int D>
static void launch_kind(const block_args<REAL> &a, int tile, dim3 grid, cudaStream_t stream)
{
    if (a.band_lo <= a.band_hi)
        launch_tile<REAL, D, true, true>(a, tile, grid, stream);
    else if (a.h.src_count > 0 || a.h.mic_count > 0)
        launch_tile<REAL, D, true, false>(a, tile, grid, stream);
    else
        launch_tile<REAL, D, false, false>(a, tile, grid, stream);
}

/* The pass at `depth` and `tile` (room_block.cu's tile_rows, tile_by) on
 * `grid` blocks (band_lo > band_hi: no band). */
template <typename REAL>
static void block_launch(const block_args<REAL> &a, int depth, int tile, dim3 grid,
                         cudaStream_t stream)
{
    if (depth == 2)
        launch_kind<REAL, 2>(a, tile, grid, stream);
    else if (depth == 3)
        launch_kind<REAL, 3>(a, tile, grid, stream);
    else
        launch_kind<REAL, 4>(a, tile, grid, stream);
}

#endif

void room_block_launch(const block_args<float> &a, int depth, int tile, dim3 grid,
                       cudaStream_t stream);
void room_block_launch(const block_args<double> &a, int depth, int tile, dim3 grid,
                       cudaStream_t stream);

#endif
