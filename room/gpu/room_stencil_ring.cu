/* room_stencil_ring.cu - the generic stencil kernel compiled for the offset
 * lists of a catalogue (IWB, compact reach 1-4, leggy M = 1-4): a register
 * ring per column worked out by constexpr code from the list, the CPU's sum
 * order (room/room_stencil_impl.h).  docs/gpu.md, "The generic kernel
 * compiled for its list". */
#include "room_gpu.h"
#include "kt_cuda_rn.cuh"
#include "room_stencil_coef.cuh"


#include <cuda_runtime.h>
#include <string.h>

#define RING_MAX_PAIRS 16 /* the largest list in the catalogue (compact reach 4) */
#define RING_MAX_CELLS 81 /* (2 * 4 + 1)^2: leggy M = 4 */

/* An offset list in the CPU's pair order. */
struct leg_table {
    int pairs;
    int d[RING_MAX_PAIRS][3];
};

/* room_iwb_stencil's list (as room_stencil_iwb.cu's iwb_legs). */
__host__ __device__ constexpr leg_table iwb_table()
{
    leg_table t{13, {{1, 0, 0},  {0, 1, 0},  {0, 0, 1},  {1, 1, 0},  {1, 0, 1},
                     {0, 1, 1},  {1, -1, 0}, {1, 0, -1}, {0, 1, -1}, {1, 1, 1},
                     {1, 1, -1}, {1, -1, 1}, {1, -1, -1}}};
    return t;
}

/* compact_stencil's list for reach^2 = r2 (|q|^2 <= r2, first non-zero
 * component positive, x then y then z ascending).  A longer list than
 * RING_MAX_PAIRS would be cut short and so never match a room's. */
__host__ __device__ constexpr leg_table compact_table(int r2)
{
    leg_table t{};
    int r = 0;
    while ((r + 1) * (r + 1) <= r2)
        r++;
    for (int x = -r; x <= r; x++)
        for (int y = -r; y <= r; y++)
            for (int z = -r; z <= r; z++) {
                const int s = x * x + y * y + z * z;
                const bool lead = x > 0 || (x == 0 && (y > 0 || (y == 0 && z > 0)));
                if (s == 0 || s > r2 || !lead || t.pairs == RING_MAX_PAIRS)
                    continue;
                t.d[t.pairs][0] = x;
                t.d[t.pairs][1] = y;
                t.d[t.pairs][2] = z;
                t.pairs++;
            }
    return t;
}

/* leggy_stencil's list: +m e_x, +m e_y, +m e_z for m = 1 .. M. */
__host__ __device__ constexpr leg_table leggy_table(int M)
{
    leg_table t{};
    for (int m = 1; m <= M; m++)
        for (int a = 0; a < 3; a++) {
            t.d[t.pairs][a] = m;
            t.pairs++;
        }
    return t;
}

/* Where everything lives in a thread's registers, worked out from a list.
 * Cell c is (dy, dx) = (c / nx - ry, c % nx - rx); it holds planes
 * lo[c] .. lo[c] + span[c] - 1 (relative to the node's) in registers
 * base[c] ..; plus[p] and minus[p] are the registers of +d_p and -d_p. */
struct ring_plan {
    int pairs, rx, ry, rz, nx, cells, total, centre;
    int lo[RING_MAX_CELLS], span[RING_MAX_CELLS], base[RING_MAX_CELLS];
    int plus[RING_MAX_PAIRS], minus[RING_MAX_PAIRS];
};

__host__ __device__ constexpr int abs_int(int v) { return v < 0 ? -v : v; }
__host__ __device__ constexpr int max_int(int a, int b) { return a > b ? a : b; }
__host__ __device__ constexpr int min_int(int a, int b) { return a < b ? a : b; }

/* Widens cell c's plane range to take plane dz. */
__host__ __device__ constexpr void plan_reach(ring_plan &P, int *hi, int c, int dz)
{
    if (P.span[c] == 0) {
        P.lo[c] = hi[c] = dz;
        P.span[c] = 1;
        return;
    }
    P.lo[c] = min_int(P.lo[c], dz);
    hi[c] = max_int(hi[c], dz);
    P.span[c] = hi[c] - P.lo[c] + 1;
}

__host__ __device__ constexpr int plan_cell(const ring_plan &P, int dx, int dy)
{
    return (dy + P.ry) * P.nx + dx + P.rx;
}

__host__ __device__ constexpr ring_plan make_plan(const leg_table t)
{
    ring_plan P{};
    int hi[RING_MAX_CELLS] = {};
    P.pairs = t.pairs;
    for (int q = 0; q < t.pairs; q++) {
        P.rx = max_int(P.rx, abs_int(t.d[q][0]));
        P.ry = max_int(P.ry, abs_int(t.d[q][1]));
        P.rz = max_int(P.rz, abs_int(t.d[q][2]));
    }
    P.nx = 2 * P.rx + 1;
    P.cells = P.nx * (2 * P.ry + 1);
    plan_reach(P, hi, plan_cell(P, 0, 0), 0); /* the node itself */
    for (int q = 0; q < t.pairs; q++) {
        plan_reach(P, hi, plan_cell(P, t.d[q][0], t.d[q][1]), t.d[q][2]);
        plan_reach(P, hi, plan_cell(P, -t.d[q][0], -t.d[q][1]), -t.d[q][2]);
    }
    for (int c = 0; c < P.cells; c++) {
        P.base[c] = P.total;
        P.total += P.span[c];
    }
    const int c0 = plan_cell(P, 0, 0);
    P.centre = P.base[c0] - P.lo[c0];
    for (int q = 0; q < t.pairs; q++) {
        const int cp = plan_cell(P, t.d[q][0], t.d[q][1]);
        const int cm = plan_cell(P, -t.d[q][0], -t.d[q][1]);
        P.plus[q] = P.base[cp] + t.d[q][2] - P.lo[cp];
        P.minus[q] = P.base[cm] - t.d[q][2] - P.lo[cm];
    }
    return P;
}

/* A catalogue entry: the list and its plan, both constants. */
template <int KIND, int REACH> struct ring_shape {
    __host__ __device__ static constexpr leg_table legs()
    {
        return KIND == 0 ? iwb_table() : KIND == 1 ? compact_table(REACH) : leggy_table(REACH);
    }
    static constexpr ring_plan plan = make_plan(legs());
    static_assert(plan.cells <= RING_MAX_CELLS, "footprint wider than RING_MAX_CELLS");
};

template <typename REAL> struct ring_coef {
    int nx, ny, nz, zslab;
    long long origin, py, pz; /* device index of node (0, 0, 0); row and plane strides */
    REAL centre;              /* 2 - lambda^2 sum_p 2 w_p */
    REAL l2w[RING_MAX_PAIRS]; /* lambda^2 w_p in the list's order */
};

/* Device offset of cell C at plane dz. */
template <typename S, int C>
__device__ __forceinline__ long long cell_offset(int dz, long long py, long long pz)
{
    constexpr int dy = C / S::plan.nx - S::plan.ry, dx = C % S::plan.nx - S::plan.rx;
    return dz * pz + dy * py + dx;
}

/* Before the march: every cell's planes but its highest, for node i. */
template <typename REAL, typename S, int C = 0>
__device__ __forceinline__ void ring_preload(REAL *v, const REAL *__restrict__ c, long long i,
                                             long long py, long long pz)
{
    if constexpr (C < S::plan.cells) {
        constexpr int lo = S::plan.lo[C], span = S::plan.span[C], base = S::plan.base[C];
#pragma unroll
        for (int k = 0; k + 1 < span; k++)
            v[base + k] = __ldg(c + i + cell_offset<S, C>(lo + k, py, pz));
        ring_preload<REAL, S, C + 1>(v, c, i, py, pz);
    }
}

/* Each step: every cell's highest plane for node i (one load per cell). */
template <typename REAL, typename S, int C = 0>
__device__ __forceinline__ void ring_load_top(REAL *v, const REAL *__restrict__ c, long long i,
                                              long long py, long long pz)
{
    if constexpr (C < S::plan.cells) {
        constexpr int lo = S::plan.lo[C], span = S::plan.span[C], base = S::plan.base[C];
        if constexpr (span > 0)
            v[base + span - 1] = __ldg(c + i + cell_offset<S, C>(lo + span - 1, py, pz));
        ring_load_top<REAL, S, C + 1>(v, c, i, py, pz);
    }
}

/* After a node: every cell's planes move down one. */
template <typename REAL, typename S, int C = 0> __device__ __forceinline__ void ring_shift(REAL *v)
{
    if constexpr (C < S::plan.cells) {
        constexpr int span = S::plan.span[C], base = S::plan.base[C];
#pragma unroll
        for (int k = 0; k + 1 < span; k++)
            v[base + k] = v[base + k + 1];
        ring_shift<REAL, S, C + 1>(v);
    }
}

/* The pairs from Q on, in the list's order, added to acc. */
template <typename REAL, typename S, int Q = 0>
__device__ __forceinline__ REAL ring_pairs(REAL acc, const REAL *v, const REAL *l2w)
{
    if constexpr (Q < S::plan.pairs) {
        constexpr int a = S::plan.plus[Q], b = S::plan.minus[Q];
        return ring_pairs<REAL, S, Q + 1>(rn_pair(acc, l2w[Q], v[a], v[b]), v, l2w);
    } else {
        return acc;
    }
}

/* One node of the march: its top planes in, its update out, the ring down. */
template <typename REAL, typename S>
__device__ __forceinline__ void ring_node(REAL *__restrict__ pn, const REAL *__restrict__ c,
                                          REAL *v, long long i, const ring_coef<REAL> &k)
{
    ring_load_top<REAL, S>(v, c, i, k.py, k.pz);
    const REAL first = rn_sub(rn_mul(k.centre, v[S::plan.centre]), __ldcg(pn + i));
    pn[i] = ring_pairs<REAL, S>(first, v, k.l2w);
    ring_shift<REAL, S>(v);
}

/* UNROLL: nodes per pass of the march (0: nvcc's choice). */
template <typename REAL, typename S, int UNROLL>
__global__ void __launch_bounds__(256)
    ring_sweep(REAL *__restrict__ pn, const REAL *__restrict__ c,
               const __grid_constant__ ring_coef<REAL> k)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z0 = blockIdx.z * k.zslab, z1 = min(z0 + k.zslab, k.nz);
    if (x >= k.nx || y >= k.ny || z0 >= z1)
        return;
    long long i = k.origin + (long long)z0 * k.pz + (long long)y * k.py + x;
    REAL v[S::plan.total];
    ring_preload<REAL, S>(v, c, i, k.py, k.pz);
    if constexpr (UNROLL == 0) {
        for (int z = z0; z < z1; z++, i += k.pz)
            ring_node<REAL, S>(pn, c, v, i, k);
    } else {
#pragma unroll UNROLL
        for (int z = z0; z < z1; z++, i += k.pz)
            ring_node<REAL, S>(pn, c, v, i, k);
    }
}

/* ---- host side ---- */

#define RING_BLOCK_X 32
#define RING_BLOCK_Y 8
/* Nodes per pass of the z march: double precision keeps four nodes' loads
 * in flight (IWB 16.1 -> 13.4 ps on the H100), single precision does best
 * with nvcc's own choice (IWB 6.4 ps, not unrolled; 7.7 ps unrolled by 4);
 * docs/gpu.md has the table. */
#define RING_UNROLL(REAL) (sizeof(REAL) == 8 ? 4 : 0)

template <typename REAL, typename S> static void ring_launch(kt_cuda_room *R, cudaStream_t stream)
{
    ring_coef<REAL> k;
    stencil_coefficients(R, &k);
    dim3 block(RING_BLOCK_X, RING_BLOCK_Y);
    dim3 grid(kt_cuda_blocks(k.nx, RING_BLOCK_X), kt_cuda_blocks(k.ny, RING_BLOCK_Y),
              (unsigned)R->slabs);
    ring_sweep<REAL, S, RING_UNROLL(REAL)>
        <<<grid, block, 0, stream>>>((REAL *)R->prev, (const REAL *)R->now, k);
}

/* A list and its sweeps; a NULL sweep leaves that precision to the
 * runtime-list kernel. */
typedef struct ring_entry {
    leg_table legs;
    void (*launch_single)(kt_cuda_room *, cudaStream_t);
    void (*launch_double)(kt_cuda_room *, cudaStream_t);
} ring_entry;

#define RING_ENTRY(KIND, REACH)                                                                \
    {ring_shape<KIND, REACH>::legs(), ring_launch<float, ring_shape<KIND, REACH>>,             \
     ring_launch<double, ring_shape<KIND, REACH>>}
#define RING_ENTRY_SINGLE(KIND, REACH)                                                         \
    {ring_shape<KIND, REACH>::legs(), ring_launch<float, ring_shape<KIND, REACH>>, NULL}

/* IWB, compact reach^2 = 1 .. 4 (box q = 1 is compact 3's list), leggy
 * M = 1 .. 4.  Compact 4 and leggy 2 in double precision were slower here
 * than on the runtime-list kernel on the H100 (21.4 vs 17.7 and 12.1 vs 11.4
 * ps per node, docs/benchmarks.md), so they keep it. */
static const ring_entry ring_catalogue[] = {
    RING_ENTRY(0, 0),        RING_ENTRY(1, 1), RING_ENTRY(1, 2), RING_ENTRY(1, 3),
    RING_ENTRY_SINGLE(1, 4), RING_ENTRY(2, 1), RING_ENTRY_SINGLE(2, 2), RING_ENTRY(2, 3),
    RING_ENTRY(2, 4),
};
#define RING_ENTRIES ((int)(sizeof ring_catalogue / sizeof ring_catalogue[0]))

/* The catalogue entry whose list is R's, pair for pair in order, with a
 * sweep in R's precision; -1 if none. */
static int ring_find(const kt_cuda_room *R)
{
    if (!R->plan.st)
        return -1;
    const int single = R->plan.params.precision == KT_SINGLE;
    for (int e = 0; e < RING_ENTRIES; e++) {
        const leg_table *t = &ring_catalogue[e].legs;
        if (t->pairs != R->plan.st->pairs ||
            !(single ? ring_catalogue[e].launch_single : ring_catalogue[e].launch_double))
            continue;
        int same = 1;
        for (int q = 0; q < t->pairs && same; q++)
            same = memcmp(t->d[q], R->plan.st->d[q], sizeof t->d[q]) == 0;
        if (same)
            return e;
    }
    return -1;
}

int kt_cuda_ring_matches(const kt_cuda_room *R) { return ring_find(R) >= 0; }

int kt_cuda_ring_sweep_on(kt_cuda_room *R, cudaStream_t stream)
{
    const int e = ring_find(R);
    if (e < 0)
        return 0;
    if (R->plan.params.precision == KT_SINGLE)
        ring_catalogue[e].launch_single(R, stream);
    else
        ring_catalogue[e].launch_double(R, stream);
    return 1;
}
