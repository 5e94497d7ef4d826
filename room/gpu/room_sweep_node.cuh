/* room_sweep_node.cuh - the 7-point update of one air node on the device,
 * shared by the one-step sweep (room_sweep.cu, sweep2) and the temporally
 * blocked pass (room_block.cu), so that both give the same bits: the same
 * operations in the same order, every one an _rn intrinsic (never
 * contracted into an FMA, whatever nvcc's flags), as the CPU's
 * room/room_sweep_impl.h.  Also the kernels' coefficient struct and its
 * host-side filling. */
#ifndef ROOM_SWEEP_NODE_CUH
#define ROOM_SWEEP_NODE_CUH

#include "room_gpu.h"
#include "kt_cuda_rn.cuh"

#include <string.h>

/* ---- arithmetic that is never contracted ---- */
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }

template <typename REAL> struct sweep_coef {
    REAL l2;          /* lambda^2 */
    double l2_list;   /* lambda^2 in double, for the folded lists' corrections */
    const REAL *pairs; /* the wall nodes' loss pairs (lm, li) by wall_index (R->wall_pairs) */
    REAL tx0, tx1, ty0, ty1, tz0, tz1; /* room_walls.theta: the ghosts beyond the walls */
    int ghosts;       /* 2-grid sweep: compute the ghosts (lossy walls), else read the halo */
    REAL a[4];        /* 2-grid: 2 - (6 - m) lambda^2 for a node on m walls */
    REAL l2e, eta;    /* 3-grid: lambda^2 + eta, eta */
    int nx, ny, nz, zslab, rows, lead; /* nx, ny: the columns and rows held here */
    int zfrom, zto, zoff; /* planes zfrom .. zto-1 of the fields are swept; plane z of them
                             is the grid's z + zoff (a slab of a split room) */
    int xfrom, xto, yfrom, yto; /* the columns and rows swept (local) */
    int xoff, yoff, gx, gy; /* column x here is the grid's x + xoff; the grid's columns, rows */
    long long py, pz; /* device row and plane strides (elements) */
    const unsigned char *listed_column; /* R->listed_column: columns holding list nodes */
    const int2 *zrange; /* solids: the planes of each column that hold air (R->zrange), or NULL */
    kt_cuda_room::shape_fold fold; /* solids: their list folded into sweep2 (R->fold) */
};

/* sweep_coef in three parts of at most 128 bytes, which a kernel may take as
 * parameters of their own and join: the compiler reads a by-value kernel
 * parameter larger than 128 bytes through its address (sweep_box below says
 * what that cost the one-step sweep).  The double blocked pass gains from
 * the parts (room_block_pass.cuh, block_pass_parts); the one-step sweep
 * taking them did not (the joined copy spilled: 0.988 -> 1.003 ms a step).
 * The field lists: each part's, in sweep_coef's order (a field added to
 * sweep_coef goes into one of them and its part). */
#define SWEEP_COEF_A(X) X(l2) X(l2_list) X(pairs) X(tx0) X(tx1) X(ty0) X(ty1) X(tz0) X(tz1) \
    X(ghosts) X(a[0]) X(a[1]) X(a[2]) X(a[3]) X(l2e) X(eta)
#define SWEEP_COEF_B(X) X(nx) X(ny) X(nz) X(zslab) X(rows) X(lead) X(zfrom) X(zto) X(zoff) \
    X(xfrom) X(xto) X(yfrom) X(yto) X(xoff) X(yoff) X(gx) X(gy) X(py) X(pz) X(listed_column) \
    X(zrange)
template <typename REAL> struct sweep_coef_a {
    REAL l2;
    double l2_list;
    const REAL *pairs;
    REAL tx0, tx1, ty0, ty1, tz0, tz1;
    int ghosts;
    REAL a[4];
    REAL l2e, eta;
};
struct sweep_coef_b {
    int nx, ny, nz, zslab, rows, lead, zfrom, zto, zoff, xfrom, xto, yfrom, yto, xoff, yoff, gx, gy;
    long long py, pz;
    const unsigned char *listed_column;
    const int2 *zrange;
};
struct sweep_coef_c {
    kt_cuda_room::shape_fold fold;
};
static_assert(sizeof(sweep_coef_a<double>) <= 128 && sizeof(sweep_coef_b) <= 128 &&
                  sizeof(sweep_coef_c) <= 128,
              "each part of the coefficients a kernel parameter of at most 128 bytes");
#define SWEEP_COEF_COPY(f) to.f = from.f;

template <typename TO, typename FROM>
__host__ __device__ __forceinline__ void sweep_coef_copy_a(TO &to, const FROM &from)
{
    SWEEP_COEF_A(SWEEP_COEF_COPY)
}
template <typename TO, typename FROM>
__host__ __device__ __forceinline__ void sweep_coef_copy_b(TO &to, const FROM &from)
{
    SWEEP_COEF_B(SWEEP_COEF_COPY)
}

/* The parts of k (host), and k from its parts (kernel: field by field, each
 * one load of the parameter space). */
template <typename REAL>
static inline void sweep_coef_split(const sweep_coef<REAL> &k, sweep_coef_a<REAL> *a,
                                    sweep_coef_b *b, sweep_coef_c *c)
{
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    sweep_coef_copy_a(*a, k);
    sweep_coef_copy_b(*b, k);
    c->fold = k.fold;
}
template <typename REAL>
__device__ __forceinline__ sweep_coef<REAL> sweep_coef_join(const sweep_coef_a<REAL> &a,
                                                            const sweep_coef_b &b,
                                                            const sweep_coef_c &c)
{
    sweep_coef<REAL> k;
    sweep_coef_copy_a(k, a);
    sweep_coef_copy_b(k, b);
    k.fold = c.fold;
    return k;
}

/* The one-step sweep's coefficients for a box (a room without solids) as
 * one kernel parameter of at most 128 bytes.  As one 224-byte sweep_coef,
 * read through its address, the single-precision sweep issued its load of
 * Psi^{n-1} after its first wait on memory instead of beside the others
 * (SASS, H100, 2026-11-26) and ran 10 % slower than the same code had at 128
 * bytes (the concert hall's grid 0.895 -> 0.985 ms a step).  What only the
 * wall nodes and the drums' shells use (a[1..3], the thetas, lambda^2 in
 * double) stays in device memory (sweep_walls), read where needed. */
template <typename REAL> struct sweep_walls {
    REAL a[4];                         /* sweep_coef's */
    REAL tx0, tx1, ty0, ty1, tz0, tz1; /* sweep_coef's */
    double l2_list;                    /* sweep_coef's */
};
template <typename REAL> struct sweep_box {
    REAL l2, a0;                       /* lambda^2; a[0] (a node on no wall) */
    const REAL *pairs;                 /* sweep_coef's */
    const sweep_walls<REAL> *walls;    /* the rest, on the device */
    const unsigned char *listed_column;
    long long py, pz;
    int nx, ny, nz, zslab, rows, lead, zfrom, zto, zoff, xfrom, xto, yfrom, yto, xoff, yoff;
    int gx, gy, ghosts;
};
static_assert(sizeof(sweep_box<double>) <= 128 && sizeof(sweep_box<float>) <= 128,
              "the box sweep's coefficients a kernel parameter of at most 128 bytes");

/* The ghosts' thetas and lambda^2 in double, from either struct. */
template <typename REAL> struct sweep_theta { REAL x0, x1, y0, y1, z0, z1; };
template <typename REAL>
__device__ __forceinline__ sweep_theta<REAL> thetas(const sweep_coef<REAL> &k)
{
    return {k.tx0, k.tx1, k.ty0, k.ty1, k.tz0, k.tz1};
}
template <typename REAL>
__device__ __forceinline__ sweep_theta<REAL> thetas(const sweep_box<REAL> &k)
{
    const sweep_walls<REAL> *w = k.walls;
    return {__ldg(&w->tx0), __ldg(&w->tx1), __ldg(&w->ty0), __ldg(&w->ty1), __ldg(&w->tz0),
            __ldg(&w->tz1)};
}
template <typename REAL> __device__ __forceinline__ double list_l2(const sweep_coef<REAL> &k)
{
    return k.l2_list;
}
template <typename REAL> __device__ __forceinline__ double list_l2(const sweep_box<REAL> &k)
{
    return __ldg(&k.walls->l2_list);
}

/* k.a[m] by selects: an index known only at run time made the compiler copy
 * the whole coefficient struct (112 bytes a thread) to local memory, whose
 * lines then crowded the neighbours out of L1. */
template <typename REAL>
__device__ __forceinline__ REAL centre_coef(const sweep_coef<REAL> &k, int m)
{
    return m == 0 ? k.a[0] : m == 1 ? k.a[1] : m == 2 ? k.a[2] : k.a[3];
}
template <typename REAL>
__device__ __forceinline__ REAL centre_coef(const sweep_box<REAL> &k, int m)
{
    return m == 0 ? k.a0 : __ldg(k.walls->a + m);
}

/* The loss pair of a node on the walls, from the table the host filled with
 * room/room_plan.h's room_wall_pair (the CPU's bits): 27 entries, by
 * the wall each axis puts the node on (0 none, 1 the low, 2 the high).  A
 * table read rather than the pair's double division in the sweep, which cost
 * registers and 8-20 % of its rate (H100, 2026-11-26).  K: sweep_coef or
 * sweep_box. */
template <typename REAL, typename K>
__device__ __forceinline__ void wall_pair(const K &k, int x, int y, int z, REAL *lm, REAL *li)
{   /* x, y, z: the grid's */
    const int xw = x == 0 ? 1 : x == k.gx - 1 ? 2 : 0;
    const int yw = y == 0 ? 1 : y == k.gy - 1 ? 2 : 0;
    const int zw = z == 0 ? 1 : z == k.nz - 1 ? 2 : 0; /* z: the grid's plane */
    const int w = 2 * (9 * xw + 3 * yw + zw);
    *lm = __ldg(k.pairs + w);
    *li = __ldg(k.pairs + w + 1);
}

/* The ghost beyond a wall, theta (inward - end): fill_row's value (room/room_sweep_impl.h), computed
 * where the sweep needs it instead of stored in the halo by a kernel of its
 * own (which, with its launch, cost 5 us a step on small rooms). */
template <typename REAL>
__device__ __forceinline__ REAL ghost(REAL theta, REAL inward, REAL end)
{
    return rn_mul(theta, rn_sub(inward, end));
}

/* The two-grid update of node (x, y, zg) of the grid from its six neighbours (ghosts
 * already in place beyond the walls), Psi^n at it (cc) and Psi^{n-1} (p): the
 * neighbours summed in the CPU's order x-1, x+1, y-1, y+1, z-1, z+1, then
 * (2 - (6 - m) lambda^2) cc + lambda^2 s, less p, or for a node on m > 0
 * walls the loss pair's ((v - lm p) li). */
template <typename REAL, typename K>
__device__ __forceinline__ REAL node_update(const K &k, int m, int x, int y, int zg, REAL cc,
                                            REAL xl, REAL xr, REAL ym, REAL yp, REAL zm, REAL zp,
                                            REAL p)
{
    REAL s = add(xl, xr);
    s = add(s, ym);
    s = add(s, yp);
    s = add(s, zm);
    s = add(s, zp);
    const REAL v = add(mul(centre_coef(k, m), cc), mul(k.l2, s));
    if (m) {
        REAL lm, li;
        wall_pair(k, x, y, zg, &lm, &li);
        return mul(sub(v, mul(lm, p)), li);
    }
    return sub(v, p);
}

/* ---- host side ---- */

template <typename REAL> static sweep_coef<REAL> coefficients(const kt_cuda_room *R)
{
    sweep_coef<REAL> k;
    memset(&k, 0, sizeof k);
    k.l2 = (REAL)R->plan.l2;
    k.l2_list = R->plan.l2;
    k.pairs = (const REAL *)R->wall_pairs;
    k.tx0 = (REAL)R->plan.walls.theta[0][0];
    k.tx1 = (REAL)R->plan.walls.theta[0][1];
    k.ty0 = (REAL)R->plan.walls.theta[1][0];
    k.ty1 = (REAL)R->plan.walls.theta[1][1];
    k.tz0 = (REAL)R->plan.walls.theta[2][0];
    k.tz1 = (REAL)R->plan.walls.theta[2][1];
    /* absorbing walls rewrite the end nodes and keep a zero halo */
    k.ghosts = R->plan.grids == 2 && !R->abc_sums;
    for (int m = 0; m <= 3; m++)
        k.a[m] = (REAL)(2.0 - (6 - m) * R->plan.l2);
    k.l2e = (REAL)(R->plan.l2 + R->plan.eta);
    k.eta = (REAL)R->plan.eta;
    k.nx = R->plan.x_end - R->plan.x0;
    k.ny = R->plan.y_end - R->plan.y0;
    k.nz = R->plan.grid.nz;
    k.gx = R->plan.grid.nx;
    k.gy = R->plan.grid.ny;
    k.xoff = R->plan.x0;
    k.yoff = R->plan.y0;
    k.xto = k.nx;
    k.yto = k.ny;
    k.zfrom = 0;
    k.zto = R->plan.z_end - R->plan.z0;
    k.zoff = R->plan.z0;
    k.zslab = (k.zto + R->slabs - 1) / R->slabs;
    k.rows = (int)R->plan.py;
    k.lead = (int)R->lead;
    k.py = (long long)R->pitch;
    k.pz = (long long)R->plane;
    k.zrange = R->zrange;
    k.listed_column = R->listed_column;
    k.fold = R->fold;
    return k;
}

/* The wall-only part of k, for the device (sweep_box.walls). */
#define SWEEP_WALLS_SAME(X) X(a[0]) X(a[1]) X(a[2]) X(a[3]) X(tx0) X(tx1) X(ty0) X(ty1) X(tz0) \
    X(tz1) X(l2_list)
template <typename REAL> static sweep_walls<REAL> walls_of(const sweep_coef<REAL> &from)
{
    sweep_walls<REAL> to;
    memset(&to, 0, sizeof to);
    SWEEP_WALLS_SAME(SWEEP_COEF_COPY)
    return to;
}

/* k for a box, its wall-only part at walls (on the device). */
#define SWEEP_BOX_SAME(X) X(l2) X(pairs) X(listed_column) X(py) X(pz) X(nx) X(ny) X(nz) \
    X(zslab) X(rows) X(lead) X(zfrom) X(zto) X(zoff) X(xfrom) X(xto) X(yfrom) X(yto) X(xoff)   \
    X(yoff) X(gx) X(gy) X(ghosts)
template <typename REAL>
static sweep_box<REAL> box_of(const sweep_coef<REAL> &from, const sweep_walls<REAL> *walls)
{
    sweep_box<REAL> to;
    memset(&to, 0, sizeof to);
    SWEEP_BOX_SAME(SWEEP_COEF_COPY)
    to.a0 = from.a[0];
    to.walls = walls;
    return to;
}

#endif
