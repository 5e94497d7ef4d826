/* room_sweep.cu - the device room (kt_cuda_room: a room plan, its fields
 * re-pitched so that each row starts a 128-byte line) and stage A of the
 * 7-point scheme, room/room_sweep_impl.h's fused update in both precisions
 * and 2 or 3 grids, the CPU's bits.  docs/gpu.md, "The room kernel". */
#include "room_block_gpu.h"
#include "room_sweep_node.cuh"

#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Planes z0 .. z1-1 (local) cut to those holding air in columns x0 ..
 * x0+n-1 of row y (inside the grid): the solids' inside is never swept (it
 * stays 0), a thread whose columns are solid does nothing.  Per thread, not
 * per block: a block spans 32 V columns, and round rooms left few blocks
 * wholly solid (a round hall of 77 % air ran at 52 % of the box's rate in
 * single precision with per-block ranges, H100, 2026-11-26). */
template <typename REAL>
__device__ __forceinline__ void air_planes(const sweep_coef<REAL> &k, int x0, int n, int y,
                                           int *z0, int *z1)
{
    if (!k.zrange)
        return;
    int lo = k.nz, hi = 0;
    for (int e = 0; e < n && x0 + e < k.nx; e++) {
        const int2 r = __ldg(k.zrange + (long long)y * k.nx + x0 + e);
        lo = min(lo, r.x);
        hi = max(hi, r.y);
    }
    *z0 = max(*z0, lo - k.zoff);
    *z1 = min(*z1, hi - k.zoff);
}

/* Sum of the six neighbours in the CPU's order: x-1, x+1, y-1, y+1, z-1, z+1. */
template <typename REAL>
__device__ __forceinline__ REAL neighbours(const REAL *__restrict__ f, long long i,
                                           long long py, REAL zm, REAL zp)
{
    REAL s = add(__ldg(f + i - 1), __ldg(f + i + 1));
    s = add(s, __ldg(f + i - py));
    s = add(s, __ldg(f + i + py));
    s = add(s, zm);
    return add(s, zp);
}

/* Walls the node (x, y) of a column lies on, and its first padded index. */
template <typename REAL>
__device__ __forceinline__ bool column(const sweep_coef<REAL> &k, int *walls_xy, int *z0,
                                       int *z1, long long *i)
{
    const int x = k.xfrom + blockIdx.x * blockDim.x + threadIdx.x;
    const int y = k.yfrom + blockIdx.y * blockDim.y + threadIdx.y;
    *z0 = k.zfrom + blockIdx.z * k.zslab;
    *z1 = min(*z0 + k.zslab, k.zto);
    if (x >= k.xto || y >= k.yto)
        return false;
    air_planes(k, x, 1, y, z0, z1);
    if (*z0 >= *z1)
        return false;
    const int xg = x + k.xoff, yg = y + k.yoff;
    *walls_xy = (xg == 0) + (xg == k.gx - 1) + (yg == 0) + (yg == k.gy - 1);
    *i = k.lead + ((long long)(*z0 + 1) * k.rows + (y + 1)) * k.py + x;
    return true;
}

/* V consecutive REALs as one 16-byte load: float4 or double2. */
template <typename REAL, int V> struct vecn;
template <> struct vecn<float, 4> { typedef float4 T; };
template <> struct vecn<double, 2> { typedef double2 T; };

template <typename REAL, int V>
__device__ __forceinline__ void vload(const REAL *p, REAL out[V], bool cg)
{
    typedef typename vecn<REAL, V>::T T;
    const T v = cg ? __ldcg((const T *)p) : __ldg((const T *)p);
    memcpy(out, &v, sizeof v);
}

/* Stage B at a list node folded into the sweep: out + lambda^2 sum over the
 * blocked legs of (Psi_i - Psi_j), legs in kt_leg order (+x, -x, +y, -y, +z,
 * -z), summed in double as the list kernel and the CPU do; nb holds Psi^n
 * at the six neighbours in that order. */
template <typename REAL>
__device__ __forceinline__ REAL list_correct(REAL out, unsigned legs, REAL ci, const REAL nb[6],
                                             double l2)
{
    double sum = 0.0;
#pragma unroll
    for (int d = 0; d < 6; d++)
        if (legs & (1u << d))
            sum = __dadd_rn(sum, __dsub_rn((double)ci, (double)nb[d]));
    return rn_field_add(out, __dmul_rn(l2, sum));
}

/* The solids' stage B folded into the two-grid sweep at the listed nodes
 * (hit: bit e for node x0 + e) of a thread's V: room_shape.cu's
 * shape_correct, the same operations in the same order, with Psi^n of the
 * neighbours (nb: kt_leg order) and Psi^{n-1} (p) from the registers.  The
 * entries are found by the list's bit index (R->fold.word): the first
 * listed node's is r0 (its wall code, blocked legs and loss the caller
 * loaded beside the planes' values), the next ones' follow.  (A binary
 * search of the row's entries, behind a load of the row's first, held the
 * warps along a round hall's wall a few memory latencies a plane: the
 * hall ran hardly faster than its whole box, 57-71 % of the box's rate,
 * H200, 2026-11-26.) */
template <typename REAL, int V>
__device__ __forceinline__ void shape_fold_nodes(const kt_cuda_room::shape_fold &f, double l2,
                                                 unsigned hit, int r0, unsigned code0,
                                                 unsigned legs0, double ls0, REAL out[V],
                                                 const REAL cc[V], REAL left, REAL right,
                                                 const REAL ym[V], const REAL yp[V],
                                                 const REAL zm[V], const REAL zp[V],
                                                 const REAL p[V])
{
    int r = r0;
#pragma unroll
    for (int e = 0; e < V; e++) {
        if (!(hit & (1u << e)))
            continue;
        const bool first = r == r0;
        const unsigned code = first ? code0 : __ldg(f.wall + r);
        const unsigned legs = first ? legs0 : __ldg(f.blocked + r);
        const double ls = first ? ls0 : __ldg(f.loss + r);
        r++;
        if (code == ROOM_SHAPE_SOLID) {
            out[e] = (REAL)0;
            continue;
        }
        const double *c = f.coef + 4 * code;
        const REAL nb[6] = {e < V - 1 ? cc[e + 1] : right, e ? cc[e - 1] : left,
                            yp[e], ym[e], zp[e], zm[e]};
        const double ci = (double)cc[e];
        double c_now = 0;
#pragma unroll
        for (int d = 0; d < 6; d++)
            if (legs & (1u << d))
                c_now = __dadd_rn(c_now, __dmul_rn(__ldg(c + d / 2), __dsub_rn(ci, (double)nb[d])));
        const double B = __dmul_rn(l2, c_now);
        const double one_lb = __dadd_rn(1.0, __ldg(c + 3));
        if (ls == 0)
            out[e] = rn_field_add(out[e], __ddiv_rn(B, one_lb));
        else
            out[e] = (REAL)__ddiv_rn(__dadd_rn(__dadd_rn(__dmul_rn((double)out[e], one_lb), B),
                                               __dmul_rn(ls, (double)p[e])),
                                     __dadd_rn(one_lb, ls));
    }
}

/* The list's bit index at device node i (a multiple of V): which of the V
 * nodes from i are on the list (bits 28..31) and the first one's entry
 * (bits 0..27; the host folds lists of fewer entries only). */
template <int V>
__device__ __forceinline__ unsigned fold_at(const kt_cuda_room::shape_fold &f, long long i)
{
    const uint2 w = __ldg(f.word + (i >> 5));
    const unsigned s = (unsigned)(i & 31);
    return ((w.x >> s) & ((1u << V) - 1u)) << 28 | (w.y + __popc(w.x & ((1u << s) - 1u)));
}

/* Whether a per-column byte table (at y nx + x) marks any of columns x0 ..
 * x0+V-1 of row y: read once a thread, so that threads away from a list
 * never read its per-node data. */
template <int V>
__device__ __forceinline__ bool any_column(const unsigned char *col, int nx, int x0, int y)
{
    bool any = false;
    for (int e = 0; e < V && x0 + e < nx; e++)
        any |= __ldg(col + (long long)y * nx + x0 + e) != 0;
    return any;
}

/* V bytes of the list mask, one load. */
template <int V> struct maskn;
template <> struct maskn<2> { typedef uchar2 T; };
template <> struct maskn<4> { typedef uchar4 T; };

/* Two grids: pn holds Psi^{n-1} and receives Psi^{n+1}.  A thread owns V
 * consecutive nodes of x (float4 or double2: one 16-byte load per array and
 * plane instead of V; 80 -> 87 % of the copy bandwidth on 640 x 400 x 400 in
 * double, 83 -> 85 % in single, H100, 2026-11-24; with centre_coef and four
 * times the slabs 92 % in both) and marches up their columns; each node's
 * sums are neighbours()' in the same order.  At most 64 registers (four
 * blocks an SM): the walls' ghosts took the double kernel to 70, three.
 * K: sweep_box for a box in single precision, else sweep_coef (launch_sweep
 * says why). */
template <typename REAL, int V, bool SHAPED, typename K>
__global__ void __launch_bounds__(256, 4) sweep2(REAL *__restrict__ pn, const REAL *__restrict__ c,
                                              const unsigned char *__restrict__ listed, K k)
{
    /* a room with solids is cut along z only: its whole rows, the grid's
     * columns (the constants keep the instance's registers: 64, no spills) */
    const int xto = SHAPED ? k.nx : k.xto, gx = SHAPED ? k.nx : k.gx, gy = SHAPED ? k.ny : k.gy;
    const int x0 = (SHAPED ? 0 : k.xfrom) + V * (blockIdx.x * blockDim.x + threadIdx.x);
    const int y = (SHAPED ? 0 : k.yfrom) + blockIdx.y * blockDim.y + threadIdx.y;
    int z0 = k.zfrom + blockIdx.z * k.zslab, z1 = min(z0 + k.zslab, k.zto);
    if (x0 >= xto || y >= (SHAPED ? k.ny : k.yto))
        return;
    const int xg = SHAPED ? x0 : x0 + k.xoff, yg = SHAPED ? y : y + k.yoff; /* the walls' */
    if constexpr (SHAPED)   /* the box's instance keeps its registers (64, no spills) */
        air_planes(k, x0, V, y, &z0, &z1);
    if (z0 >= z1)
        return;
    /* the solids' list has nodes in the thread's columns */
    bool listed_cols = false;
    if constexpr (SHAPED)
        listed_cols = k.fold.word && any_column<V>(k.fold.column, k.nx, x0, y);
    const int wy = (yg == 0) + (yg == gy - 1);   /* walls: x's counted per node (registers) */
    const bool whole = x0 + V <= xto;
    /* a thread whose nodes lie on an x or y wall (every thread, at z = 0 and nz - 1) */
    const bool edge_xy = k.ghosts && (xg == 0 || xg + V >= gx || yg == 0 || yg == gy - 1);
    /* the drums' shells: read the mask only in the few columns that hold them */
    const bool shells = listed && any_column<V>(k.listed_column, k.nx, x0, y);
    long long i = k.lead + ((long long)(z0 + 1) * k.rows + (y + 1)) * k.py + x0;
    REAL zm[V], cc[V], zp[V], ym[V], yp[V], p[V], out[V];
    vload<REAL, V>(c + i - k.pz, zm, false);
    vload<REAL, V>(c + i, cc, false);
    /* Psi^{n-1} a plane ahead in the box, so that its load is never issued
     * after the plane's first wait on memory (the solids' instance has no
     * registers to spare) */
    REAL pnext[V];
    if constexpr (!SHAPED)
        vload<REAL, V>(pn + i, pnext, true);
    /* the solids' list at this plane's nodes (fold_at), read a plane ahead */
    unsigned fold = 0;
    if constexpr (SHAPED)
        fold = listed_cols ? fold_at<V>(k.fold, i) : 0;
    for (int z = z0; z < z1; z++, i += k.pz) {
        vload<REAL, V>(c + i + k.pz, zp, false);
        vload<REAL, V>(c + i - k.py, ym, false);
        vload<REAL, V>(c + i + k.py, yp, false);
        if constexpr (SHAPED) {
            vload<REAL, V>(pn + i, p, true);
        } else {
#pragma unroll
            for (int e = 0; e < V; e++)
                p[e] = pnext[e];
            vload<REAL, V>(pn + i + k.pz, pnext, true);
        }
        const REAL left = __ldg(c + i - 1), right = __ldg(c + i + V);
        /* the first listed node's entry, loaded beside the plane's values
         * rather than after them (a thread along a wall then waits on
         * memory no longer than one inside), and the next plane's bits */
        const unsigned hit = fold >> 28;
        const int r0 = (int)(fold & 0x0fffffffu);
        unsigned code0 = 0, legs0 = 0;
        double ls0 = 0;
        if constexpr (SHAPED) {
            if (hit) {
                code0 = __ldg(k.fold.wall + r0);
                legs0 = __ldg(k.fold.blocked + r0);
                ls0 = __ldg(k.fold.loss + r0);
            }
            if (listed_cols)
                fold = fold_at<V>(k.fold, i + k.pz);
        }
        REAL xl[V], xr[V];   /* the x-neighbours */
#pragma unroll
        for (int e = 0; e < V; e++) {
            xl[e] = e ? cc[e - 1] : left;
            xr[e] = e < V - 1 ? cc[e + 1] : right;
        }
        const int zg = z + k.zoff;
        const int zw = (zg == 0) + (zg == k.nz - 1);
        if (edge_xy || (k.ghosts && zw)) { /* a neighbour beyond a wall: its ghost */
            const sweep_theta<REAL> t = thetas(k);
#pragma unroll
            for (int e = 0; e < V; e++) {
                if (xg + e == 0)
                    xl[e] = ghost(t.x0, xr[e], cc[e]);
                if (xg + e == gx - 1)
                    xr[e] = ghost(t.x1, xl[e], cc[e]);
                if (yg == 0)
                    ym[e] = ghost(t.y0, yp[e], cc[e]);
                if (yg == gy - 1)
                    yp[e] = ghost(t.y1, ym[e], cc[e]);
                if (zg == 0)
                    zm[e] = ghost(t.z0, zp[e], cc[e]);
                if (zg == k.nz - 1)
                    zp[e] = ghost(t.z1, zm[e], cc[e]);
            }
        }
#pragma unroll
        for (int e = 0; e < V; e++) {
            const int m = (xg + e == 0) + (xg + e == gx - 1) + wy + zw;
            out[e] = node_update(k, m, xg + e, yg, zg, cc[e], xl[e], xr[e], ym[e], yp[e], zm[e],
                                 zp[e], p[e]);
        }
        if (shells) { /* the drums' shells: a few nodes of a few columns */
            typedef typename maskn<V>::T MT;
            const MT mv = *(const MT *)(listed + i);
            unsigned char mask[V];
            memcpy(mask, &mv, sizeof mv);
#pragma unroll
            for (int e = 0; e < V; e++)
                if (mask[e]) {
                    const REAL nb[6] = {e < V - 1 ? cc[e + 1] : right, e ? cc[e - 1] : left,
                                        yp[e], ym[e], zp[e], zm[e]};
                    out[e] = list_correct(out[e], mask[e], cc[e], nb, list_l2(k));
                }
        }
        if constexpr (SHAPED)
            if (hit)
                shape_fold_nodes<REAL, V>(k.fold, k.l2_list, hit, r0, code0, legs0, ls0, out,
                                          cc, left, right, ym, yp, zm, zp, p);
        if (whole) {
            typename vecn<REAL, V>::T o;
            memcpy(&o, out, sizeof o);
            *(typename vecn<REAL, V>::T *)(pn + i) = o;
        } else {
            for (int e = 0; e < V && x0 + e < xto; e++)
                pn[i + e] = out[e];
        }
#pragma unroll
        for (int e = 0; e < V; e++) {
            zm[e] = cc[e];
            cc[e] = zp[e];
        }
    }
}

/* Three grids with viscosity:
 * out = [2 c + (lambda^2 + eta) L c - eta L p - (1 - lambda beta) p] / (1 + lambda beta),
 * L f = (sum of the six neighbours) - K f, K = 6 - m. */
template <typename REAL>
__global__ void __launch_bounds__(256) sweep3(REAL *__restrict__ out,
                                              const REAL *__restrict__ c,
                                              const REAL *__restrict__ p, sweep_coef<REAL> k)
{
    int wxy, z0, z1;
    long long i;
    if (!column(k, &wxy, &z0, &z1, &i))
        return;
    const int x = k.xfrom + blockIdx.x * blockDim.x + threadIdx.x + k.xoff;
    const int y = k.yfrom + blockIdx.y * blockDim.y + threadIdx.y + k.yoff;   /* the grid's */
    REAL czm = __ldg(c + i - k.pz), cc = __ldg(c + i);
    REAL pzm = __ldg(p + i - k.pz), pc = __ldg(p + i);
    for (int z = z0; z < z1; z++, i += k.pz) {
        const REAL czp = __ldg(c + i + k.pz), pzp = __ldg(p + i + k.pz);
        const int zg = z + k.zoff;
        const int m = wxy + (zg == 0) + (zg == k.nz - 1);
        const REAL kk = (REAL)(6 - m);
        const REAL lc = sub(neighbours(c, i, k.py, czm, czp), mul(kk, cc));
        const REAL lp = sub(neighbours(p, i, k.py, pzm, pzp), mul(kk, pc));
        const REAL v = sub(add(mul((REAL)2, cc), mul(k.l2e, lc)), mul(k.eta, lp));
        if (m) {
            REAL lm, li;
            wall_pair(k, x, y, zg, &lm, &li);
            out[i] = mul(sub(v, mul(lm, pc)), li);
        } else {
            out[i] = sub(v, pc);
        }
        czm = cc;
        cc = czp;
        pzm = pc;
        pc = pzp;
    }
}

/* The walls' halo of the three-grid 7-point sweep (room_sweep_impl.h
 * fill_row; the two-grid sweep computes its ghosts where it needs them):
 * beside each end node theta (inward - end), in the field's precision.
 * blockIdx.y picks the axis; a thread writes both ends of its line. */
typedef struct wall_fill {
    int nx, ny, nz;                  /* the slab's columns, rows and planes */
    int wall[3][2];                  /* the slab's ends are the grid's walls (not halos) */
    long long lead, py, pz;          /* device index of node (0, 0, 0) less the halo; strides */
    double t[3][2];                  /* room_walls.theta */
} wall_fill;

template <typename REAL> __global__ void fill_walls(REAL *f, wall_fill g)
{
    const int axis = blockIdx.y;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int n[3] = {g.nx, g.ny, g.nz};
    const int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;   /* the other two axes */
    if (t >= (long long)n[u] * n[v])
        return;
    int c[3];
    c[u] = (int)(t % n[u]);
    c[v] = (int)(t / n[u]);
    const long long step = axis == 0 ? 1 : axis == 1 ? g.py : g.pz;
    c[axis] = 0;
    const long long lo = g.lead + (long long)(c[2] + 1) * g.pz + (long long)(c[1] + 1) * g.py + c[0];
    const long long hi = lo + (long long)(n[axis] - 1) * step;
    const REAL t0 = (REAL)g.t[axis][0], t1 = (REAL)g.t[axis][1];
    if (g.wall[axis][0])
        f[lo - step] = rn_mul(t0, rn_sub(f[lo + step], f[lo]));
    if (g.wall[axis][1])
        f[hi + step] = rn_mul(t1, rn_sub(f[hi - step], f[hi]));
}

/* ---- host side ---- */

/* The device's wall table: the plan's 27 loss pairs of wall nodes in the
 * field's precision, then (at SWEEP_WALLS_AT) the box sweep's sweep_walls. */
#define SWEEP_WALLS_AT 512
static_assert(sizeof(double[27][2]) <= SWEEP_WALLS_AT, "the pairs before the walls' part");

static void *sweep_walls_at(const kt_cuda_room *R)
{
    return (char *)R->wall_pairs + SWEEP_WALLS_AT;
}

#define SWEEP_BLOCK_X 32
#define SWEEP_BLOCK_Y 8
/* A two-grid block sweeps at most this many planes: the concert hall's 4
 * slabs of 116 planes were 3.4 waves of blocks, the last a third full (0.982
 * ms a step single, 1.917 double, H100, 2026-11-26); slabs of 32 planes,
 * 12.6 waves: 0.895 and 1.875 ms, and the drums' kernels, which run beside
 * the sweep, find an SM sooner (the hall with its drums 1.25 -> 1.05-1.15 ms
 * single); 640 x 400 x 400 0.463 -> 0.454 ms single, 0.952 -> 0.931 double. */
#define SWEEP_MOST_PLANES 32

template <typename REAL> static void launch_walls(kt_cuda_room *R, void *field,
                                                  cudaStream_t stream)
{
    wall_fill g;
    const room_plan *P = &R->plan;
    g.nx = P->x_end - P->x0;
    g.ny = P->y_end - P->y0;
    g.nz = P->z_end - P->z0;
    g.wall[0][0] = P->x0 == 0;
    g.wall[0][1] = P->x_end == P->grid.nx;
    g.wall[1][0] = P->y0 == 0;
    g.wall[1][1] = P->y_end == P->grid.ny;
    g.wall[2][0] = P->z0 == 0;
    g.wall[2][1] = P->z_end == P->grid.nz;
    g.lead = (long long)R->lead;
    g.py = (long long)R->pitch;
    g.pz = (long long)R->plane;
    memcpy(g.t, R->plan.walls.theta, sizeof g.t);
    const long long most = (long long)g.nx * g.ny > (long long)g.ny * g.nz
                               ? ((long long)g.nx * g.ny > (long long)g.nx * g.nz
                                      ? (long long)g.nx * g.ny : (long long)g.nx * g.nz)
                               : ((long long)g.ny * g.nz > (long long)g.nx * g.nz
                                      ? (long long)g.ny * g.nz : (long long)g.nx * g.nz);
    const dim3 grid(kt_cuda_blocks(most, KT_CUDA_BLOCK), 3);
    fill_walls<REAL><<<grid, KT_CUDA_BLOCK, 0, stream>>>((REAL *)field, g);
}

/* The nodes lo .. hi-1 (local; the whole slab or room: all it holds), in
 * z slabs of the whole room's length, so a whole room sweeps as it did;
 * first: the part of the step that runs first (it fills the walls' halo). */
template <typename REAL>
static void launch_sweep(kt_cuda_room *R, const int lo[3], const int hi[3], int first,
                         cudaStream_t stream)
{
    sweep_coef<REAL> k = coefficients<REAL>(R);
    const int za = lo[2], zb = hi[2], planes = zb - za, nzl = k.zto;
    k.zfrom = za;
    k.zto = zb;
    k.xfrom = lo[0];
    k.xto = hi[0];
    k.yfrom = lo[1];
    k.yto = hi[1];
    if (R->plan.grids == 3 && !R->abc_sums && first) {
        launch_walls<REAL>(R, R->now, stream);
        launch_walls<REAL>(R, R->prev, stream);
    }
    /* a few columns or a row (a slab's face on a cut along x or y): the
     * block's threads down the rows or along the row, so that none idles,
     * and short slabs */
    const int width = k.xto - k.xfrom, vx = R->plan.grids == 2 ? 16 / (int)sizeof(REAL) : 1;
    const int narrow = width <= KT_CUDA_SWEEP_ALIGN, bx = narrow ? (width + vx - 1) / vx : 0;
    const int thin = !narrow && k.yto - k.yfrom == 1;
    dim3 block(narrow ? bx : thin ? 256 : SWEEP_BLOCK_X,
               narrow ? 256 / bx : thin ? 1 : SWEEP_BLOCK_Y);
    k.zslab = (nzl + R->slabs - 1) / R->slabs;
    k.zslab = k.zslab < planes ? k.zslab : planes;
    dim3 grid(kt_cuda_blocks(width, block.x), kt_cuda_blocks(k.yto - k.yfrom, block.y),
              (unsigned)((planes + k.zslab - 1) / k.zslab));
    if (R->plan.grids == 2) {
        /* V times fewer threads a slab than columns: four times the slabs
         * measured best (H100, 2026-11-24, 640 x 400 x 400 lossy: 2x 92/89 %,
         * 3x 92/91-92 %, 4x 92/92-93 % of the copy bandwidth, double/single;
         * 32 x 4 and 16 x 16 blocks no better than 32 x 8) */
        enum { V = 16 / sizeof(REAL) };
        k.zslab = (nzl + 4 * R->slabs - 1) / (4 * R->slabs);
        k.zslab = k.zslab < SWEEP_MOST_PLANES ? k.zslab : SWEEP_MOST_PLANES;
        k.zslab = (narrow || thin) && k.zslab > 8 ? 8 : k.zslab;
        k.zslab = k.zslab < planes ? k.zslab : planes;
        const dim3 g2(kt_cuda_blocks((width + V - 1) / V, block.x), grid.y,
                      (unsigned)((planes + k.zslab - 1) / k.zslab));
        /* the box in single precision takes sweep_box, a parameter of at most
         * 128 bytes (room_sweep_node.cuh): with Psi^{n-1} a plane ahead 0.987
         * -> 0.908 ms a step on the concert hall's grid (739 x 591 x 462,
         * lossy), 0.498 -> 0.461 on 640 x 400 x 400; the struct alone 0.978,
         * the plane ahead alone 0.991.  In double the plane ahead alone gains
         * (1.887 -> 1.812, 0.940 -> 0.888 ms) and sweep_box then does not
         * (1.888).  H100, 2026-11-26, `kettle bench room --gpu --ranks 1`. */
        if (k.zrange)   /* solids: a second instance, the box's keeps its registers */
            sweep2<REAL, V, true><<<g2, block, 0, stream>>>((REAL *)R->prev,
                                                            (const REAL *)R->now, R->listed, k);
        else if constexpr (sizeof(REAL) == sizeof(float))
            sweep2<REAL, V, false><<<g2, block, 0, stream>>>(
                (REAL *)R->prev, (const REAL *)R->now, R->listed,
                box_of(k, (const sweep_walls<REAL> *)sweep_walls_at(R)));
        else
            sweep2<REAL, V, false><<<g2, block, 0, stream>>>((REAL *)R->prev,
                                                             (const REAL *)R->now, R->listed, k);
    } else {
        sweep3<REAL><<<grid, block, 0, stream>>>((REAL *)R->next, (const REAL *)R->now,
                                                 (const REAL *)R->prev, k);
    }
}

/* The device's wall table (see SWEEP_WALLS_AT) on the host. */
template <typename REAL> static void wall_table(const kt_cuda_room *R, unsigned char *table)
{
    REAL pairs[27][2];
    for (int q = 0; q < 27; q++) {
        pairs[q][0] = (REAL)R->plan.wall_pair[q][0];
        pairs[q][1] = (REAL)R->plan.wall_pair[q][1];
    }
    memcpy(table, pairs, sizeof pairs);
    const sweep_walls<REAL> w = walls_of(coefficients<REAL>(R));
    memcpy(table + SWEEP_WALLS_AT, &w, sizeof w);
}

static int upload_wall_pairs(kt_cuda_room *R, kt_error *err)
{
    unsigned char table[SWEEP_WALLS_AT + sizeof(sweep_walls<double>)];
    memset(table, 0, sizeof table);
    if (R->esize == sizeof(float))
        wall_table<float>(R, table);
    else
        wall_table<double>(R, table);
    int rc = kt_cuda_alloc(sizeof table, &R->wall_pairs, err);
    return rc < 0 ? rc : kt_cuda_upload(R->wall_pairs, table, sizeof table, err);
}

/* Enough z slabs for about one wave of threads on the device (columns alone
 * are too few on a small cross-section), and no more: every slab re-reads
 * the two planes at its ends, and long columns measured fastest (638 x 400
 * x 400 single on the H100: 2 slabs 86 %, 3 85 %, 10 78 % of copy). */
static int choose_slabs(const kt_room_grid *g)
{
    int sms = 132;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) {
        cudaGetLastError();
        sms = 132;
    }
    const double want = (double)sms * 2048;
    const double columns = (double)g->nx * g->ny;
    int slabs = (int)ceil(want / columns);
    if (slabs > g->nz / 8)
        slabs = g->nz / 8; /* at least 8 planes per slab to amortise the column start */
    return slabs < 1 ? 1 : slabs;
}

/* What the device cannot do yet (the CPU refuses the rest through
 * kt_room_estimate): lossy walls and viscosity with the other schemes. */
static int device_check(const kt_room_params *p, const kt_scheme_info *info, kt_error *err)
{
    if (p->scheme == KT_SCHEME_SLF7)
        return KT_OK;
    if (p->scheme != KT_SCHEME_IWB27 && p->scheme != KT_SCHEME_STENCIL &&
        p->scheme != KT_SCHEME_FCC13)
        return kt_fail(err, KT_ENOTSUP, "the GPU has no kernel for the %s scheme yet; "
                                        "render this room with --device cpu", info->name);
    if (p->wall_beta > 0 || p->viscosity_m > 0)
        return kt_fail(err, KT_ENOTSUP, "the GPU runs the %s scheme with rigid walls and "
                                        "no viscosity only", info->name);
    return KT_OK;
}

/* The generic kernel keeps the stencil's leg offsets in 32 bits. */
static int stencil_check(kt_cuda_room *R, kt_error *err)
{
    if (!R->plan.st)
        return KT_OK;
    kt_cuda_stencil_prepare();
    const double reach = (double)R->plan.st->reach * ((double)R->plane + (double)R->pitch + 1);
    if (reach > 2147483647.0)
        return kt_fail(err, KT_EINVAL, "room too large for the GPU stencil kernel's "
                                       "32-bit leg offsets (%d x %d planes)", R->plan.grid.nx,
                       R->plan.grid.ny);
    return KT_OK;
}

extern "C" int kt_cuda_room_set_kernel(kt_cuda_room *R, kt_cuda_kernel kernel, kt_error *err)
{
    if (!R || (kernel != KT_CUDA_KERNEL_AUTO && kernel != KT_CUDA_KERNEL_GENERIC &&
               kernel != KT_CUDA_KERNEL_GENERIC_LIST))
        return kt_fail(err, KT_EINVAL, "kt_cuda_room_set_kernel: NULL room or unknown kernel %d",
                       (int)kernel);
    if (kernel != KT_CUDA_KERNEL_AUTO && R->plan.params.scheme == KT_SCHEME_FCC13)
        return kt_fail(err, KT_ENOTSUP, "the FCC layout has its own kernel only (the generic "
                                        "kernel runs cubic stencils)");
    R->kernel = (int)kernel;
    return KT_OK;
}

extern "C" const char *kt_cuda_room_kernel_name(const kt_cuda_room *R)
{
    if (!R->plan.st)
        return "7-point";
    if (R->plan.params.scheme == KT_SCHEME_FCC13)
        return "fcc";
    if (R->kernel == KT_CUDA_KERNEL_AUTO && kt_cuda_iwb_matches(R))
        return "iwb";
    return R->kernel != KT_CUDA_KERNEL_GENERIC_LIST && kt_cuda_ring_matches(R) ? "generic"
                                                                             : "generic-list";
}

extern "C" int kt_cuda_room_create(const kt_room_params *p, kt_cuda_room **out, kt_error *err)
{
    return kt_cuda_room_create_planes(p, 0, -1, out, err);
}

int kt_cuda_room_create_planes(const kt_room_params *p, int z0, int z_end, kt_cuda_room **out,
                               kt_error *err)
{
    const int lo[3] = {0, 0, z0}, hi[3] = {-1, -1, z_end};
    return kt_cuda_room_create_box(p, lo, hi, out, err);
}

int kt_cuda_room_create_box(const kt_room_params *p, const int lo[3], const int hi[3],
                            kt_cuda_room **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_cuda_room_create: out is NULL");
    *out = NULL;
    if (!p)
        return kt_fail(err, KT_EINVAL, "kt_cuda_room_create: parameters are NULL");
    kt_room_grid g;
    kt_scheme_info info;
    int rc = kt_room_estimate(p, &g, err);
    if (rc == KT_OK)
        rc = kt_room_scheme_info(p, &info, err);
    if (rc == KT_OK)
        rc = device_check(p, &info, err);
    if (rc < 0)
        return rc;
    const int slab = hi[2] >= 0;
    if (slab && (p->scheme != KT_SCHEME_SLF7 || p->wall_model != KT_WALL_LOSSY))
        return kt_fail(err, KT_ENOTSUP, "a room split over GPUs runs the 7-point scheme with "
                                        "lossy or rigid walls only");
    const int whole_hi[3] = {-1, -1, g.nz};   /* the caller checked the memory */
    kt_cuda_room *R = (kt_cuda_room *)calloc(1, sizeof *R);
    if (!R)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU room");
    if ((rc = room_plan_build_box(p, lo, slab ? hi : whole_hi, &R->plan, err)) < 0) {
        free(R);
        return rc;
    }
    /* The host's rows, each shifted so that x = 0 starts a 128-byte line
     * and its ghosts fit before it. */
    R->esize = kt_precision_bytes(p->precision);
    const size_t h = (size_t)R->plan.halo, line = 128 / R->esize;
    R->lead = (h + line - 1) / line * line;
    R->pitch = (R->plan.px + line - 1) / line * line;
    R->plane = R->pitch * R->plan.py;
    R->points = room_device_points(R->plan.px, R->plan.py, R->plan.pz, h, R->esize);
    R->bad_plane = -1;
    R->band[0] = 1; /* no band handed over */
    R->band[1] = 0;
    room_gpu_block_init(R);
    kt_room_grid mine = g;   /* the nodes this room holds */
    mine.nx = R->plan.x_end - R->plan.x0;
    mine.ny = R->plan.y_end - R->plan.y0;
    mine.nz = R->plan.z_end - R->plan.z0;
    R->slabs = choose_slabs(&mine);
    size_t free_bytes = 0;
    if ((rc = kt_cuda_memory(&free_bytes, NULL, err)) == KT_OK) {
        size_t need = R->points * R->esize * (size_t)R->plan.grids;
        if (need > free_bytes)
            rc = kt_fail(err, KT_ENOMEM,
                         "room of %d x %d x %d nodes needs %.2f GiB on the GPU, %.2f GiB free",
                         g.nx, g.ny, g.nz, need / 1073741824.0, free_bytes / 1073741824.0);
    }
    if (rc == KT_OK)
        rc = stencil_check(R, err);
    if (rc == KT_OK)
        rc = upload_wall_pairs(R, err);
    if (rc == KT_OK && R->plan.fcc)
        rc = kt_cuda_fcc_setup(R, err);
    for (int b = 0; rc == KT_OK && b < R->plan.grids; b++)
        rc = kt_cuda_alloc(R->points * R->esize, &R->field[b], err);
    if (rc == KT_OK)
        rc = kt_cuda_abc_setup(R, err);
    if (rc < 0) {
        kt_cuda_room_free(R);
        return rc;
    }
    R->now = R->field[0];
    R->prev = R->field[1];
    R->next = R->plan.grids == 3 ? R->field[2] : R->field[1];
    *out = R;
    return KT_OK;
}

extern "C" void kt_cuda_room_free(kt_cuda_room *R)
{
    if (!R)
        return;
    for (int b = 0; b < 3; b++)
        kt_cuda_free(R->field[b]);
    for (int b = 0; b < 2; b++)
        kt_cuda_free(R->alt[b]);
    kt_cuda_free(R->abc_sums);
    kt_cuda_free(R->fcc_cut_node);
    kt_cuda_free(R->fcc_cut_coef);
    kt_cuda_free(R->listed);
    kt_cuda_free(R->listed_column);
    kt_cuda_free(R->wall_pairs);
    kt_cuda_shape_free(R);
    free(R->abc);
    room_plan_free(&R->plan);
    free(R);
}

extern "C" const kt_room_grid *kt_cuda_room_grid(const kt_cuda_room *R) { return &R->plan.grid; }
extern "C" size_t kt_cuda_room_padded_points(const kt_cuda_room *R) { return R->plan.padded_points; }
extern "C" int kt_cuda_room_grids(const kt_cuda_room *R) { return R->plan.grids; }
extern "C" int64_t kt_cuda_room_step_index(const kt_cuda_room *R) { return R->n; }
extern "C" long long kt_cuda_room_node(const kt_cuda_room *R, int x, int y, int z)
{
    const room_plan *P = &R->plan;
    /* a slab holds its planes and one below (its columns and rows only, cut
     * along x or y) */
    if (z < P->z0 - 1 || z >= P->z_end || x < P->x0 || x >= P->x_end || y < P->y0 ||
        y >= P->y_end)
        ((kt_cuda_room *)R)->bad_plane = z;
    return kt_cuda_room_index(R, x, y, z);
}
extern "C" size_t kt_cuda_room_pitch(const kt_cuda_room *R) { return R->pitch; }

/* One padded CPU row (px elements, x = -halo .. nx + halo - 1) per device
 * row, starting halo elements before the line that holds x = 0 (px <=
 * pitch: rows never overlap). */
static int copy_field(const kt_cuda_room *R, void *device, void *host, int to_device,
                      kt_error *err)
{
    char *row0 = (char *)device + (R->lead - (size_t)R->plan.halo) * R->esize;
    const size_t dpitch = R->pitch * R->esize, hpitch = R->plan.px * R->esize;
    cudaError_t e = to_device
                        ? kt_cuda_landed(cudaMemcpy2D(row0, dpitch, host, hpitch, hpitch,
                                                      R->plan.py * R->plan.pz,
                                                      cudaMemcpyHostToDevice))
                        : cudaMemcpy2D(host, hpitch, row0, dpitch, hpitch, R->plan.py * R->plan.pz,
                                       cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? KT_OK
                            : kt_cuda_fail(err, e, to_device ? "uploading a room field"
                                                             : "downloading a room field");
}

extern "C" int kt_cuda_room_upload(kt_cuda_room *R, const void *now, const void *prev,
                                   kt_error *err)
{
    if (!R || !now || !prev)
        return kt_fail(err, KT_EINVAL, "kt_cuda_room_upload: NULL room or field");
    int rc = copy_field(R, R->now, (void *)now, 1, err);
    if (rc == KT_OK)
        rc = copy_field(R, R->prev, (void *)prev, 1, err);
    /* the blocked pass's pair is copied again from the new halos */
    for (int b = 0; b < 2; b++) {
        kt_cuda_free(R->alt[b]);
        R->alt[b] = NULL;
    }
    return rc;
}

extern "C" int kt_cuda_room_download(const kt_cuda_room *R, void *now, void *prev,
                                     kt_error *err)
{
    if (!R || !now || !prev)
        return kt_fail(err, KT_EINVAL, "kt_cuda_room_download: NULL room or field");
    int rc = copy_field(R, R->now, now, 0, err);
    return rc < 0 ? rc : copy_field(R, R->prev, prev, 0, err);
}

void kt_cuda_room_sweep_region_on(kt_cuda_room *R, const int lo[3], const int hi[3], int walls,
                                  cudaStream_t stream)
{
    if (R->plan.params.precision == KT_SINGLE)
        launch_sweep<float>(R, lo, hi, walls, stream);
    else
        launch_sweep<double>(R, lo, hi, walls, stream);
}

void kt_cuda_room_sweep_planes_on(kt_cuda_room *R, int za, int zb, cudaStream_t stream)
{
    const int nzl = R->plan.z_end - R->plan.z0, planes = zb - za;
    const int lo[3] = {0, 0, za};
    const int hi[3] = {R->plan.x_end - R->plan.x0, R->plan.y_end - R->plan.y0, zb};
    /* the walls' halo, once a step, by the part that runs first: the whole
     * room, a slab's interior, or its first end plane when it has none */
    const int first = nzl <= 2 ? za == 0 : planes == nzl || za == 1;
    kt_cuda_room_sweep_region_on(R, lo, hi, first, stream);
}

void kt_cuda_room_sweep_on(kt_cuda_room *R, cudaStream_t stream)
{
    if (R->plan.st)
        kt_cuda_room_stencil_sweep_on(R, stream);
    else
        kt_cuda_room_sweep_planes_on(R, 0, R->plan.z_end - R->plan.z0, stream);
    kt_cuda_abc_apply_on(R, stream); /* absorbing walls overwrite the boundary nodes */
}

/* The field rotation of room/room_step.c. */
void kt_cuda_room_rotate(kt_cuda_room *R)
{
    if (R->plan.grids == 2) {
        void *t = R->now;
        R->now = R->next;
        R->prev = t;
        R->next = t;
    } else {
        void *t = R->prev;
        R->prev = R->now;
        R->now = R->next;
        R->next = t;
    }
}

/* One step of kt_cuda_room_run: the sweep, the rotation. */
static int bulk_step(void *ctx, kt_error *err)
{
    kt_cuda_room *R = (kt_cuda_room *)ctx;
    kt_cuda_room_sweep_on(R, 0);
    int rc = kt_cuda_launch_check(err, "launching the room sweep");
    if (rc < 0)
        return rc;
    kt_cuda_room_rotate(R);
    R->n++;
    return KT_OK;
}

extern "C" int kt_cuda_room_run(kt_cuda_room *R, int steps, kt_error *err)
{
    if (!R || steps < 0)
        return kt_fail(err, KT_EINVAL, "kt_cuda_room_run: NULL room or steps < 0");
    for (int s = 0; s < steps;) {
        int rc = room_gpu_block_advance(R, steps - s, NULL, NULL, 0, bulk_step, R, err);
        if (rc > 1)
            rc = kt_cuda_launch_check(err, "launching the blocked room pass") < 0 ? -1 : rc;
        if (rc < 0)
            return rc;
        s += rc;
    }
    return KT_OK;
}
