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

/* The extended tile of block_pass: 32 x BY threads, each CY columns of
 * consecutive rows (column c of thread (tx, ty) is (tx, CY ty + c), so a
 * warp holds whole rows and its columns' inner y neighbours are its own):
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
 * else into `before`: there the band's steps find them.
 *
 * An iteration is of one of three kinds.  Where every level is off the z
 * walls, inside the room and D planes or more from a band, and the block
 * serves no hook, the iteration is PLAIN (the extended tile off the x and y
 * walls: a node-level is the update, three or four shared loads, a store,
 * nothing tested; a column's y neighbours inside its own CY rows are in
 * registers) or EDGE (the tile on an x or y wall: the same with each
 * column's walls applied without a branch, from coefficients set before the
 * march).  Both compute every row of the extended tile at every level (what
 * lies out of reach is wrong and never read by what is right), which costs
 * less than a test at each node-level and keeps the warps in step at the
 * barrier.  Everywhere else (GENERAL) each node-level tests what it must:
 * whether its row is in reach, the plane live, the node in the grid or on a
 * wall.  Testing all of it at every node-level had cost about 140
 * instructions a point and step (ncu, H100, double, 2026-11-26); the kinds
 * took the air's single-precision pass from 236 to 348 Gvox/s. */
enum { BLOCK_GENERAL, BLOCK_PLAIN, BLOCK_EDGE };
template <int K> struct block_kind { static constexpr int kind = K; };

/* An EDGE node-level: edge_node's operations for a node off the z walls,
 * its walls' ghosts chosen by select (walls: bit 0..3 the x = 0, x = nx-1,
 * y = 0, y = ny-1 wall) and its coefficients a centre, (lm, li) the loss
 * pair or (1, 1) off the walls: ((v - 1 p) 1) is v - p exactly. */
template <typename REAL>
__device__ __forceinline__ REAL edge_plane_node(const sweep_coef<REAL> &k, int walls,
                                                REAL centre, REAL lm, REAL li, REAL cc, REAL xl,
                                                REAL xr, REAL ym, REAL yp, REAL zm, REAL zp,
                                                REAL pv)
{
    xl = (walls & 1) ? ghost(k.tx0, xr, cc) : xl;
    xr = (walls & 2) ? ghost(k.tx1, xl, cc) : xr;
    ym = (walls & 4) ? ghost(k.ty0, yp, cc) : ym;
    yp = (walls & 8) ? ghost(k.ty1, ym, cc) : yp;
    REAL s = add(xl, xr);
    s = add(s, ym);
    s = add(s, yp);
    s = add(s, zm);
    s = add(s, zp);
    const REAL v = add(mul(centre, cc), mul(k.l2, s));
    return mul(sub(v, mul(lm, pv)), li);
}

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
    const int x = xe0 + tx, cy0 = ty * CY, y0 = ye0 + cy0; /* column c: row cy0 + c */
    const int z0 = a.zfirst + (int)blockIdx.z * a.zslab, z1 = min(z0 + a.zslab, a.zlast);
    const int zs = max(0, z0 - D), zend = z1 + D;
    const bool x_in = x >= 0 && x < k.nx, x_own = tx >= D && tx < EX - D;
    /* device offset of column c's row at plane -1 */
    const long long row0 = k.lead + (long long)(y0 + 1) * k.py + x;
    /* the block's kinds of iteration: [it_a, it_b) fast (PLAIN or EDGE) */
    int it_a = max(zs, D + 1), it_b = min(zend, k.nz - 1); /* every level on planes 1..nz-2 */
    if (BAND) {
        if (z1 <= a.band_lo)
            it_b = min(it_b, a.band_lo - D + 2);
        else
            it_a = max(it_a, a.band_hi + 2 * D);
    }
    if (HOOKS || it_a >= it_b)
        it_a = it_b = zend;
    const bool off_walls = xe0 >= 1 && xe0 + EX <= k.nx - 1 && ye0 >= 1 && ye0 + EY <= k.ny - 1;
    bool in[CY], wall[CY], own[CY];
    int reach[CY]; /* levels 1 .. reach[c] are computed on column c's row */
    int walls[CY]; /* EDGE: column c's x and y walls, and its coefficients */
    REAL centre[CY], lm[CY], li[CY];
#pragma unroll
    for (int c = 0; c < CY; c++) {
        const int y = y0 + c, cy = cy0 + c;
        in[c] = x_in && y >= 0 && y < k.ny;
        walls[c] = in[c] ? (x == 0) | (x == k.nx - 1) << 1 | (y == 0) << 2 | (y == k.ny - 1) << 3
                         : 0;
        wall[c] = walls[c] != 0;
        own[c] = in[c] && x_own && cy >= D && cy < EY - D;
        reach[c] = min(cy, EY - 1 - cy);
        centre[c] = k.a[0];
        lm[c] = li[c] = (REAL)1;
        if (wall[c] && !off_walls) {
            centre[c] = centre_coef(k, __popc(walls[c]));
            wall_pair(k, x, y, 1, &lm[c], &li[c]);
        }
    }
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
        const long long i = row0 + c * k.py;
        ahead_now[c] = in[c] ? __ldg(a.now + i + (long long)(zs + 1) * k.pz) : (REAL)0;
        ahead_prev[c] = in[c] && zs > 0 ? __ldg(a.prev + i + (long long)zs * k.pz) : (REAL)0;
    }
    /* column c's element in a plane: PL-relative, the same in every plane */
    const int at0 = 1 + (cy0 + 1) * EX + tx;
    auto iteration = [&](auto kind, int it) {
        constexpr int KIND = decltype(kind)::kind;
        constexpr bool FAST = KIND != BLOCK_GENERAL;
        const int cur = (it & 1) * PL, old = PL - cur; /* this iteration's copy, the last */
        const long long at_it = row0 + (long long)(it + 1) * k.pz; /* column 0, plane it */
        /* FAST: whether levels D - 1 and D are in the slab (written) */
        const bool put1 = it - D + 1 >= z0 && it - D + 1 < z1, put0 = it - D >= z0 && it - D < z1;
        REAL prev1[CY]; /* Psi^{n-1} at plane it - 1, for level 1 */
#pragma unroll
        for (int c = 0; c < CY; c++) {
            const REAL *now = a.now + (at_it + k.pz + c * k.py);
            const REAL *prev = a.prev + (at_it + c * k.py);
            h[0][2][c] = h[0][1][c];
            h[0][1][c] = h[0][0][c];
            h[0][0][c] = ahead_now[c];
            prev1[c] = ahead_prev[c];
            planes[cur + at0 + c * EX] = ahead_now[c];
            /* planes it + 1 of Psi^n and it of Psi^{n-1} (FAST: it < nz - 1) */
            ahead_now[c] = KIND == BLOCK_PLAIN || (in[c] && (FAST || it + 1 < k.nz)) ? __ldg(now)
                                                                                   : (REAL)0;
            ahead_prev[c] = KIND == BLOCK_PLAIN || (in[c] && (FAST || it < k.nz)) ? __ldg(prev)
                                                                                : (REAL)0;
        }
#pragma unroll
        for (int l = 1; l <= D; l++) {
            const int p = it - l;
            /* BAND: planes j = band_lo - p below the band, p - band_hi above */
            const int j = BAND && !FAST ? (p < a.band_lo ? a.band_lo - p : p - a.band_hi) : D;
            const bool live = FAST || (p >= 0 && p < k.nz && (!BAND || j >= l));
            const bool z_wall = !FAST && (p == 0 || p == k.nz - 1);
            const bool in_slab = FAST ? (l == D ? put0 : put1) : p >= z0 && p < z1;
            const long long at = at_it - (long long)l * k.pz; /* column 0, plane p */
            const REAL *below = planes + (2 * (l - 1) * PL + old + at0);
#pragma unroll
            for (int c = 0; c < CY; c++) {
                REAL v = (REAL)0;
                if (FAST || (live && l <= reach[c])) {
                    const REAL cc = h[l - 1][1][c];
                    const REAL *b = below + c * EX;
                    const REAL xl = b[-1], xr = b[1];
                    const REAL ym = c > 0 ? h[l - 1][1][c > 0 ? c - 1 : 0] : b[-EX];
                    const REAL yp = c < CY - 1 ? h[l - 1][1][c < CY - 1 ? c + 1 : 0] : b[EX];
                    const REAL zm = h[l - 1][2][c], zp = h[l - 1][0][c];
                    const REAL pv = l >= 2 ? h[l >= 2 ? l - 2 : 0][2][c] : prev1[c];
                    if (KIND == BLOCK_PLAIN || (!FAST && !z_wall && in[c] && !wall[c]))
                        v = node_update(k, 0, x, y0 + c, p, cc, xl, xr, ym, yp, zm, zp, pv);
                    else if (KIND == BLOCK_EDGE)
                        v = edge_plane_node(k, walls[c], centre[c], lm[c], li[c], cc, xl, xr,
                                            ym, yp, zm, zp, pv);
                    else if (in[c])
                        v = edge_node(k, x, y0 + c, p, cc, xl, xr, ym, yp, zm, zp, pv);
                    if (HOOKS && !FAST && in[c]) {
                        if (src_here)
                            v = add_sources(a.h, l, x, y0 + c, p, v);
                        if (mic_here && own[c] && in_slab)
                            mic_corners(a.h, l, at + c * k.py, k.py, k.pz, v, cc);
                    }
                }
                if (l < D) {
                    h[l][2][c] = h[l][1][c];
                    h[l][1][c] = h[l][0][c];
                    h[l][0][c] = v;
                    planes[2 * l * PL + cur + at0 + c * EX] = v;
                }
                if (BAND && !FAST) {
                    if (live && l >= min(j, D) - 1 && in_slab && own[c])
                        (((D - l) & 1) ? a.before : a.last)[at + c * k.py] = v;
                } else if (l >= D - 1 && in_slab && own[c]) {
                    (l == D ? a.last : a.before)[at + c * k.py] = v;
                }
            }
        }
        __syncthreads();
    };
    int it = zs;
    for (; it < it_a; it++)
        iteration(block_kind<BLOCK_GENERAL>(), it);
    /* two iterations a trip: one, the compiler copied each plane's load
     * into the register the next iteration reads at the end of the one that
     * issued it, so the warp waited for memory there (ncu: 18 % of the
     * pass's stalls, H100, 2026-11-26) */
    if (off_walls) {
#pragma unroll 2
        for (; it < it_b; it++)
            iteration(block_kind<BLOCK_PLAIN>(), it);
    } else {
#pragma unroll 2
        for (; it < it_b; it++)
            iteration(block_kind<BLOCK_EDGE>(), it);
    }
    for (; it < zend; it++)
        iteration(block_kind<BLOCK_GENERAL>(), it);
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
 * two: 237 -> 186 Gvox/s.  Left to itself ptxas gave the air's 32 x 16
 * threads at depth 4 (tile 2) 90 registers, one block an SM: two are asked
 * for (64 registers, none spilled), which the air's best instance needs;
 * with the hooks' code the cap would spill hundreds of bytes. */
template <typename REAL, int D, int BY, int CY, bool HOOKS, bool BAND>
__global__ void __launch_bounds__(BLOCK_TX *BY, !HOOKS && BY == 16 && CY == 2 ? 2 : 1)
    block_pass(block_args<REAL> a)
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
/* Launch the pass, or with `resident` set say how many of its blocks an SM
 * holds at once (room_block.cu's slab_planes). */
template <typename REAL, int D, int BY, int CY, bool HOOKS, bool BAND>
static void launch_one(const block_args<REAL> &a, dim3 grid, cudaStream_t stream,
                       int *resident)
{
    typedef block_shape<BY, CY> S;
    const size_t shared = sizeof(REAL) * (size_t)D * 2 * S::PLANE;
    static_assert(S::EY > 2 * D, "a tile taller than its halo");
    const dim3 block(BLOCK_TX, BY);
    const void *kernel;
    if constexpr (sizeof(REAL) == sizeof(double))
        kernel = (const void *)block_pass_parts<REAL, D, BY, CY, HOOKS, BAND>;
    else
        kernel = (const void *)block_pass<REAL, D, BY, CY, HOOKS, BAND>;
    kt_cuda_allow_smem(kernel, shared);
    if (resident) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(resident, kernel, BLOCK_TX * BY,
                                                          shared) != cudaSuccess) {
            cudaGetLastError();
            *resident = 1;
        }
        return;
    }
    if constexpr (sizeof(REAL) == sizeof(double)) {
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
        block_pass<REAL, D, BY, CY, HOOKS, BAND><<<grid, block, shared, stream>>>(a);
    }
}

template <typename REAL, int D, bool HOOKS, bool BAND>
static void launch_tile(const block_args<REAL> &a, int tile, dim3 grid, cudaStream_t stream,
                        int *resident)
{
    if (tile == 0)
        launch_one<REAL, D, 8, 4, HOOKS, BAND>(a, grid, stream, resident);
    else if (tile == 1)
        launch_one<REAL, D, 16, 2, HOOKS, BAND>(a, grid, stream, resident);
    else if (tile == 2)
        launch_one<REAL, D, 16, 4, HOOKS, BAND>(a, grid, stream, resident);
    else
        launch_one<REAL, D, 32, 1, HOOKS, BAND>(a, grid, stream, resident);
}

/* The air alone, its sources' and microphones' hooks, or those and the
 * hand-over's band (which comes with the mirror's hooks only). */
template <typename REAL, int D>
static void launch_kind(const block_args<REAL> &a, int tile, dim3 grid, cudaStream_t stream,
                        int *resident)
{
    if (a.band_lo <= a.band_hi)
        launch_tile<REAL, D, true, true>(a, tile, grid, stream, resident);
    else if (a.h.src_count > 0 || a.h.mic_count > 0)
        launch_tile<REAL, D, true, false>(a, tile, grid, stream, resident);
    else
        launch_tile<REAL, D, false, false>(a, tile, grid, stream, resident);
}

/* The pass at `depth` and `tile` (room_block.cu's tile_rows, tile_by) on
 * `grid` blocks (band_lo > band_hi: no band), or its blocks an SM holds
 * (resident not NULL). */
template <typename REAL>
static void block_launch(const block_args<REAL> &a, int depth, int tile, dim3 grid,
                         cudaStream_t stream, int *resident)
{
    if (depth == 2)
        launch_kind<REAL, 2>(a, tile, grid, stream, resident);
    else if (depth == 3)
        launch_kind<REAL, 3>(a, tile, grid, stream, resident);
    else
        launch_kind<REAL, 4>(a, tile, grid, stream, resident);
}

#endif

void room_block_launch(const block_args<float> &a, int depth, int tile, dim3 grid,
                       cudaStream_t stream, int *resident);
void room_block_launch(const block_args<double> &a, int depth, int tile, dim3 grid,
                       cudaStream_t stream, int *resident);

#endif
