/* timpani_fused.cu - one step of a matrix-free drum (stage D of
 * timpani_step.c) as one kernel on one thread-block cluster, every scalar on
 * the chip; agrees with the CPU to rounding.  docs/gpu.md, "The drum's fused
 * kernel". */
#include "kt_cuda_kernel.h"
#include "kt_cuda_room.h"
#include "timpani_gpu.h"

#include "timpani_plan.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef TP_THREADS
#define TP_THREADS 1024
#endif
/* Blocks in the drum's cluster (8: the portable maximum). */
#define TP_CLUSTER 8

/* ---- device helpers ---- */

namespace cg = cooperative_groups;

/* Where a thread stands in the cluster: loops over membrane or window nodes
 * start at `first` and stride by `stride` (all the cluster's threads). */
struct tp_pos {
    int first, stride;
};

/* Shared scratch of the cluster sums: warp partials of two values, the
 * block totals in two alternating slots, the result. */
struct tp_sums {
    double warp[2][32];
    double total[2][2];         /* [slot][value] */
    double result[2];
};

/* Two sums over the whole cluster, the same bits in every block: each
 * warp's partials go to shared memory, thread 0 adds them into the block's
 * totals (slot 0 or 1, alternating, so the next sum cannot overwrite totals
 * another block is still reading: a slot is rewritten only after the
 * following sum's cluster barrier), and after one cluster barrier thread 0
 * of every block adds the blocks' totals in rank order.  Sequential sums
 * (every lane of warp 0 forms the same, so the warp reaches the barrier
 * converged): a shuffle tree for the second level costs more (measured).
 * The warp partials and the result need no barrier before they are
 * rewritten: their readers are done before the next sum's cluster barrier. */
__device__ double cluster_sum2(double v0, double v1, tp_sums *sh, int *parity, double *sum1)
{
    cg::cluster_group cl = cg::this_cluster();
    const int slot = *parity;
    *parity ^= 1;
    v0 = tp_warp_sum(v0);
    v1 = tp_warp_sum(v1);
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = (int)(blockDim.x >> 5);
    if (lane == 0) {
        sh->warp[0][w] = v0;
        sh->warp[1][w] = v1;
    }
    __syncthreads();
    if (w == 0) { /* the whole warp, every lane the same sums: no divergence at the barrier */
        double t0 = 0.0, t1 = 0.0;
        for (int k = 0; k < warps; k++) {
            t0 += sh->warp[0][k];
            t1 += sh->warp[1][k];
        }
        if (lane == 0) {
            sh->total[slot][0] = t0;
            sh->total[slot][1] = t1;
        }
    }
    cl.sync();
    if (w == 0) {
        double t0 = 0.0, t1 = 0.0;
#pragma unroll
        for (int b = 0; b < TP_CLUSTER; b++) {
            const double *rt = cl.map_shared_rank(&sh->total[slot][0], b);
            t0 += rt[0];
            t1 += rt[1];
        }
        if (lane == 0) {
            sh->result[0] = t0;
            sh->result[1] = t1;
        }
    }
    __syncthreads();
    *sum1 = sh->result[1];
    return sh->result[0];
}

__device__ __forceinline__ double cluster_sum(double v, tp_sums *sh, int *parity)
{
    double unused;
    return cluster_sum2(v, 0.0, sh, parity, &unused);
}

/* The first half of E x (bilinear, separable; timpani_membrane.c
 * e_separable): sep = the chi-masked window vector, already in d.pad
 * (padded by one), interpolated along the rows at the membrane's columns. */
__device__ void e_rows(const tp_dev &d, tp_pos p)
{
    const int s = d.nwy + 2, n = d.n, cols = d.mhi - d.mlo;
    for (int idx = p.first; idx < (d.nwx + 2) * cols; idx += p.stride) {
        const int pi = idx / cols, m = d.mlo + (idx - pi * cols);
        const int j = d.e_jm[m];
        const double b = d.e_fb[m];
        const double *pr = d.pad + pi * s + 1;
        d.sep[pi * n + m] = (1.0 - b) * pr[j] + b * pr[j + 1];
    }
}

/* The second half: (E x) at inside node q, from sep (the offset and weight
 * come precomputed per inside node, so no index is chased). */
__device__ __forceinline__ double e_at(const tp_dev &d, int q)
{
    const double a = d.in_efa[q];
    const double *S0 = d.sep + d.in_eoff[q];
    return (1.0 - a) * S0[0] + a * S0[d.n];
}

/* The chi-masked window value v at window node i into E's padded input. */
__device__ __forceinline__ void pad_store(const tp_dev &d, int i, double v)
{
    const int row = i / d.nwy, j = i - row * d.nwy;
    d.pad[(row + 1) * (d.nwy + 2) + 1 + j] = d.chi[i] ? v : 0.0;
}

/* u^{n+1} = tmp - a c (Sherman-Morrison); the one formula both the store
 * and the I23 gather that reads it on the fly use, so both see the same bits. */
__device__ __forceinline__ double sm_value(double t, double a, double c) { return t - a * c; }

/* The first half of I23 (i23_separable): window rows gather their membrane
 * rows, sep = rows of x1 and sep2 = rows of x2 (when given).  With `sub`,
 * x1 is read as sm_value(x1, sub, c), the u^{n+1} not yet stored.  Each
 * window row's list (membrane row, weight, that row's inside run) comes
 * flattened to row_k entries (padding: an empty run), so no index is
 * chased before the operand loads. */
__device__ void i23_rows(const tp_dev &d, tp_pos p, const double *x1, const double *x2,
                         const double *sub, double c)
{
    const int n = d.n, cols = d.mhi - d.mlo, K = d.row_k;
    for (int idx = p.first; idx < d.nwx * cols; idx += p.stride) {
        const int i = idx / cols, m = d.mlo + (idx - i * cols);
        double T = 0.0, T2 = 0.0;
        for (int q = i * K; q < (i + 1) * K; q++) {
            const int4 e = d.row_gather[q]; /* l, run_lo[l], run_hi[l], unused */
            if (m < e.y || m >= e.z)
                continue;
            const int jm = e.x * n + m;
            const double wq = d.row_gw[q];
            T += wq * (sub ? sm_value(x1[jm], sub[jm], c) : x1[jm]);
            if (x2)
                T2 += wq * x2[jm];
        }
        d.sep[(i + 1) * n + m] = T;
        if (x2)
            d.sep2[(i + 1) * n + m] = T2;
    }
}

/* The second half at window node idx: the column gather from `sep`, the
 * chi mask and h^2/Q^2.  Each window column's list (membrane column,
 * weight) comes flattened to col_k entries (padding: weight 0). */
__device__ __forceinline__ double i23_at(const tp_dev &d, const double *sep, int idx)
{
    const int i = idx / d.nwy, j = idx - i * d.nwy, K = d.col_k;
    const double *row = sep + (i + 1) * d.n;
    double v = 0.0;
    if (d.chi[idx])
        for (int q = j * K; q < (j + 1) * K; q++)
            v += d.col_gw[q] * row[d.col_gm[q]];
    return d.hq2 * v;
}

__device__ __forceinline__ double layer_value(const float *f, long long i) { return (double)f[i]; }
__device__ __forceinline__ double layer_value(const double *f, long long i) { return f[i]; }
/* room_add: float + (float)v, or double + v. */
__device__ __forceinline__ void layer_add(float *f, long long i, double v) { f[i] = __fadd_rn(f[i], (float)v); }
__device__ __forceinline__ void layer_add(double *f, long long i, double v) { f[i] = __dadd_rn(f[i], v); }

/* Inside nodes one thread takes at a time in a membrane pass (the
 * reference drum's ~22,700 over the cluster's 8192 threads: 3). */
#ifndef TP_BATCH
#define TP_BATCH 3
#endif

/* A membrane pass: store(j, value(q, j)) for this thread's inside nodes q
 * (membrane index j), TP_BATCH at a time: every value of a batch is formed
 * before any is stored, so the compiler may issue all their loads at once
 * (a store might alias a later load otherwise) - the passes are chains of
 * dependent loads, and this overlaps the chains of the batch. */
template <typename V, typename S>
__device__ __forceinline__ void each_inside(const tp_dev &d, tp_pos p, V value, S store)
{
    for (int q0 = p.first; q0 < d.ninside; q0 += TP_BATCH * p.stride) {
        int j[TP_BATCH];
        decltype(value(0, 0)) v[TP_BATCH];
#pragma unroll
        for (int k = 0; k < TP_BATCH; k++) {
            const int q = q0 + k * p.stride;
            j[k] = q < d.ninside ? d.inside[q] : -1;
        }
#pragma unroll
        for (int k = 0; k < TP_BATCH; k++)
            if (j[k] >= 0)
                v[k] = value(q0 + k * p.stride, j[k]);
#pragma unroll
        for (int k = 0; k < TP_BATCH; k++)
            if (j[k] >= 0)
                store(j[k], v[k]);
    }
}

/* The masked 5-point Laplacian of x at membrane node j (row length n). */
__device__ __forceinline__ double lap(const double *x, int j, int n)
{
    return x[j - n] + x[j + n] + x[j - 1] + x[j + 1] - 4.0 * x[j];
}

/* L = D u at node j as stage 3 stores it: 0 off the membrane's mask. */
__device__ __forceinline__ double lap_masked(const tp_dev &d, const double *u, int j)
{
    return d.mask[j] ? lap(u, j, d.n) : 0.0;
}

/* r = r' - a (a^T u^{n-1}), then the strikes on their nodes (the CPU's
 * order: after r, one strike after another). */
__device__ __forceinline__ double r_finish(const tp_dev &d, int j, double rp, double au1,
                                           double time_s)
{
    double rv = rp - au1 * d.a[j];
    for (int k = 0; k < d.nstrikes; k++) {
        const double tau = time_s - d.st_start[k];
        if (d.st_node[k] == j && tau >= 0.0 && tau < d.st_dur[k])
            rv += d.strike_scale * 0.5 * d.st_force[k] *
                  (1.0 - cos(2.0 * 3.14159265358979323846 * tau / d.st_dur[k]));
    }
    return rv;
}

/* a^T a is not finite: the drum stops here, frozen, and the host reports
 * the step.  No block leaves while another may read its shared memory. */
__device__ void blow_up(tp_dev_state *st, int lead)
{
    if (lead) {
        st->bad = 1;
        st->bad_step = st->steps;
    }
    cg::this_cluster().sync();
}

/* ---- the reduced iteration, spread over the cluster ---- */

/* Development aid (TP_PHASE_TIMES): clock marks inside one iteration. */
#ifdef TP_PHASE_TIMES
__shared__ long long tp_clk[6];
#define TP_CLK(k) (threadIdx.x == 0 && cg::this_cluster().block_rank() == 0 ? (void)(tp_clk[k] = clock64()) : (void)0)
#else
#define TP_CLK(k) ((void)0)
#endif


/* The iteration's sums (eI.y, and at the last step |dy|^2, |y|^2): warp
 * partials, block totals and the cluster-wide result, each in two
 * alternating slots. */
struct tp_iter_sums {
    double warp[2][32][3];
    double total[2][3];
    double result[2][3];
};

/* NV of those sums over the cluster (1: eI.y alone, the steps that need no
 * increment), the same bits in every block: warp partials to shared
 * memory, warp 0 adds them into the block's total (every lane the same
 * sequential sum, so the warp stays converged), one cluster barrier, warp 0
 * adds the blocks' totals in rank order and hands the result to its block.  A slot is rewritten two sums later, after every thread of the
 * cluster has passed a barrier of the sum between, i.e. finished with it.
 * (Every warp reading every other warp's partials floods the cluster's
 * network, 14 us an iteration; shuffle trees for the second level cost
 * ~1,000 cycles more than one thread's sequential sums.) */
template <int NV>
__device__ __forceinline__ void iter_sum(const tp_dev &d, double v[3], tp_iter_sums *S, int slot)
{
    cg::cluster_group cl = cg::this_cluster();
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, W = d.iter_warps;
#pragma unroll
    for (int c = 0; c < NV; c++)
        v[c] = tp_warp_sum(v[c]);
    if (lane == 0 && w < W)
        for (int c = 0; c < NV; c++)
            S->warp[slot][w][c] = v[c];
    __syncthreads();
    TP_CLK(2);
    if (w == 0) { /* the whole warp, every lane the same sums: no divergence at the barrier */
        double t[NV];
#pragma unroll
        for (int c = 0; c < NV; c++)
            t[c] = 0.0;
        for (int k = 0; k < W; k++)
#pragma unroll
            for (int c = 0; c < NV; c++)
                t[c] += S->warp[slot][k][c];
        if (lane == 0)
#pragma unroll
            for (int c = 0; c < NV; c++)
                S->total[slot][c] = t[c];
    }
    TP_CLK(3);
    cl.sync();
    TP_CLK(4);
    if (w == 0) {
        double t[NV];
#pragma unroll
        for (int c = 0; c < NV; c++)
            t[c] = 0.0;
#pragma unroll
        for (int b = 0; b < TP_CLUSTER; b++) {
            const double *p = cl.map_shared_rank(&S->total[slot][0], b);
#pragma unroll
            for (int c = 0; c < NV; c++)
                t[c] += p[c];
        }
        if (lane == 0)
#pragma unroll
            for (int c = 0; c < NV; c++)
                S->result[slot][c] = t[c];
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < NV; c++)
        v[c] = S->result[slot][c];
}

/* What one thread keeps through the iteration: its window node (-1: none;
 * one a thread, the block's rows are at most TP_THREADS nodes), whether it
 * lies in a chi run (the only nodes the iteration moves), its s, eI and
 * the nine entries of its row of G; and the block's rows. */
struct tp_iter {
    int idx;
    bool run;
    double sv, ev;
    double g[9];                /* G at (i, i), (i, i+1), (i, i-1), then rows below and above */
    int r0, r1;                 /* the block's window rows [r0, r1) */
};

/* y[i] = v in this block's iterate buffer `buf`, and in the neighbouring
 * block's when i lies in an edge row of this block (that block's stencil
 * reads it): remote stores, which the next cluster barrier makes visible,
 * so every read of the iteration is a local shared-memory load. */
__device__ __forceinline__ void iter_put(const tp_dev &d, const tp_iter *I, double *buf, int i,
                                         double v, int rank)
{
    buf[i] = v;
    const int row = i / d.nwy;
    if (row == I->r0 && rank > 0)
        *cg::this_cluster().map_shared_rank(buf + i, rank - 1) = v;
    if (row == I->r1 - 1 && I->r1 < d.nwx)
        *cg::this_cluster().map_shared_rank(buf + i, rank + 1) = v;
}

/* The start of the reduced iteration (note 9.1), on the node this thread
 * owns: block b of the cluster owns rows_per_block window rows.  The second
 * half of I23 on (a, r) (sep and sep2 hold their rows) gives eI and
 * s = mu (I23 r - eI ar); y0 = mu (2 w - w^{n-1}) goes into buffer 0 of
 * the iterates; G's row comes into registers once for all the steps.
 * Returns this thread's part of eI . y0. */
__device__ __forceinline__ double iter_start(const tp_dev &d, tp_iter *I, double *Y0,
                                             const double *w, const double *w1, double ar,
                                             int rank)
{
    const int wy = d.nwy;
    I->r0 = min(d.nwx, rank * d.rows_per_block);
    I->r1 = min(d.nwx, I->r0 + d.rows_per_block);
    const int i = I->r0 * wy + threadIdx.x;
    I->idx = i < I->r1 * wy ? i : -1;
    I->run = false;
    I->sv = I->ev = 0.0;
    if (I->idx < 0)
        return 0.0;
    const double mu = d.mu_c;
    const int row = i / wy, j = i - row * wy;
    const double y0 = mu * (2.0 * w[i] - w1[i]);
    iter_put(d, I, Y0, i, y0, rank);
    if (j < d.chi_lo[row] || j >= d.chi_hi[row])
        return 0.0;
    const double e = i23_at(d, d.sep, i), s = i23_at(d, d.sep2, i);
    const double *const *g = d.g;
    const double gi[9] = {g[0][i],          g[1][i], g[1][i - 1], g[2][i], g[2][i - wy + 1],
                          g[3][i],          g[3][i - wy], g[4][i], g[4][i - wy - 1]};
#pragma unroll
    for (int c = 0; c < 9; c++)
        I->g[c] = gi[c];
    I->run = true;
    I->ev = e;
    I->sv = mu * (s - e * ar);
    return e * y0;
}

/* m - 1 steps of y <- s + c(y) eI - G y with c(y) = cf (eI . y), each
 * block on its rows: its two iterates in its shared memory (padded by
 * nwy+1; its own rows, and the edge rows its neighbours push).  eI
 * vanishes outside the chi runs, so eI . y_new is gathered while y_new is
 * formed: one cluster barrier per step, which also orders the step's
 * writes before the next step's reads.  Returns the buffer holding the
 * result; *it, *d2, *y2 as the CPU's solver reports them. */
__device__ __forceinline__ int iter_run(const tp_dev &d, const tp_iter *I, double *ysh,
                                        double cf, double ey, tp_iter_sums *parts, int *it_out,
                                        double *d2_out, double *y2_out)
{
    const int wy = d.nwy, padn = wy + 1, len = d.nw + 2 * padn;
    const int rank = (int)cg::this_cluster().block_rank();
    double *const Y0 = ysh + padn, *const Y1 = ysh + len + padn;
    double d2 = 0.0, y2 = 0.0;
    int it = 1, cur = 0, slot = 1;
    for (; it < d.iterations; it++) {
        TP_CLK(0);
        const double c = cf * ey;
        const int need = d.adaptive || it == d.iterations - 1;
        const double *y = cur ? Y1 : Y0;
        double *yn = cur ? Y0 : Y1;
        double sums[3] = {0.0, 0.0, 0.0};
        if (I->run) {
            const int i = I->idx;
            const double *g = I->g;
            const double v =
                I->sv + c * I->ev -
                (g[0] * y[i] + g[1] * y[i + 1] + g[2] * y[i - 1] + g[3] * y[i + wy - 1] +
                 g[4] * y[i - wy + 1] + g[5] * y[i + wy] + g[6] * y[i - wy] +
                 g[7] * y[i + wy + 1] + g[8] * y[i - wy - 1]);
            iter_put(d, I, yn, i, v, rank);
            sums[0] = I->ev * v;
            if (need) {
                const double df = v - y[i];
                sums[1] = df * df;
                sums[2] = v * v;
            }
        }
        TP_CLK(1);
        if (need)
            iter_sum<3>(d, sums, parts, slot);
        else
            iter_sum<1>(d, sums, parts, slot);
        TP_CLK(5);
        slot ^= 1;
        ey = sums[0];
        if (need) {
            d2 = sums[1];
            y2 = sums[2];
        }
        cur ^= 1;
        if (d.tol > 0.0 && d2 <= d.tol * d.tol * y2) {
            it++;
            break;
        }
    }
    *it_out = it;
    *d2_out = d2;
    *y2_out = y2;
    return cur;
}

/* A development aid, off by default: built with -DTP_PHASE_TIMES, the
 * lead thread notes the SM clock as it passes each phase and prints the
 * phases' cycles at every 1000th drum step. */
#ifdef TP_PHASE_TIMES
#define TP_MARK(k) (lead ? (void)(marks[k] = clock64()) : (void)0)
#else
#define TP_MARK(k) ((void)0)
#endif

/* One drum step, on a cluster of TP_CLUSTER blocks: the membrane-wide and
 * window-wide passes are shared by all its threads (cluster barriers
 * between them), the reduced iteration by rows of the window. */
template <typename REAL>
__global__ void __cluster_dims__(TP_CLUSTER, 1, 1) __launch_bounds__(TP_THREADS)
timpani_step(tp_dev d, REAL *__restrict__ next, const long long *__restrict__ step_n)
{
    extern __shared__ double ysh[]; /* this block's reduced iterates */
    __shared__ tp_sums sh;
    __shared__ tp_iter_sums parts;
    int parity = 0;
#ifdef TP_PHASE_TIMES
    long long marks[13];
#endif
    cg::cluster_group cl = cg::this_cluster();
    const int rank = (int)cl.block_rank();
    const tp_pos P = {(int)(rank * blockDim.x + threadIdx.x), (int)(cl.num_blocks() * blockDim.x)};
    const int n = d.n, lead = rank == 0 && threadIdx.x == 0;
    tp_dev_state *st = d.state;
    const int ru = st->rot_u, rw = st->rot_w, rd = st->rot_d;
    if (st->bad)
        return; /* frozen after a blow-up: the host reports it */
    TP_MARK(0);
    const double *u = d.U[ru], *u1 = d.U[(ru + 2) % 3];
    double *unew = d.U[(ru + 1) % 3];
    const double *w = d.W[rw], *w1 = d.W[(rw + 2) % 3];
    double *wnew = d.W[(rw + 1) % 3];
    const double *Dn1 = d.D[rd ^ 1];
    if (d.coupled) /* rows other blocks own and the padding read as zero (a barrier comes first) */
        for (int i = threadIdx.x; i < 2 * (d.nw + 2 * (d.nwy + 1)); i += blockDim.x)
            ysh[i] = 0.0;

    /* Stage 3 in one pass: L = D u, a = cV1 L, a^T a, a^T u^{n-1}, and
     * r' = B u + C u^{n-1}, whose D^2 u takes L at the four neighbours from
     * u directly (the 13-point stencil; L reads as 0 off the mask, as the
     * two-pass form's stored L does: the same bits); r = r' - a (a^T
     * u^{n-1}) + strikes is finished once a^T u^{n-1} is known (r_finish). */
    double saa = 0.0, sau = 0.0;
    each_inside(
        d, P,
        [&](int, int j) {
            const double L = lap(u, j, n);
            const double DD = lap_masked(d, u, j - n) + lap_masked(d, u, j + n) +
                              lap_masked(d, u, j - 1) + lap_masked(d, u, j + 1) - 4.0 * L;
            double rv = d.cB0 * u[j] + d.cB1 * L + d.cB2 * DD + d.cC0 * u1[j];
            if (d.lossy)
                rv += d.cC1 * lap(u1, j, n);
            const double av = d.cV1 * L;
            saa += av * av;
            sau += av * u1[j];
            return make_double2(av, rv);
        },
        [&](int j, double2 ar) {
            d.a[j] = ar.x;
            d.r[j] = ar.y;
        });
    const double time_s = (double)(*step_n) * d.k;
    if (!d.coupled) {
        double au1;
        const double aa = cluster_sum2(saa, sau, &sh, &parity, &au1);
        if (!isfinite(aa)) {
            blow_up(st, lead);
            return;
        }
        double part = 0.0;
        each_inside(
            d, P,
            [&](int, int j) {
                const double rv = r_finish(d, j, d.r[j], au1, time_s);
                part += d.a[j] * rv;
                return rv;
            },
            [&](int j, double rv) { d.r[j] = rv; });
        const double c = cluster_sum(part, &sh, &parity) * (1.0 / (1.0 + aa));
        each_inside(
            d, P, [&](int, int j) { return d.r[j] - d.a[j] * c; },
            [&](int j, double v) { unew[j] = v; });
        if (lead) {
            st->last_iterations = 1;
            st->last_increment = 0.0;
            st->rot_u = (ru + 1) % 3;
            st->steps++;
        }
        cl.sync(); /* no block leaves while another may read its shared memory */
        return;
    }

    /* Coupling (in the same phase, independent of r): v = mu_c w^{n-1} +
     * Bf (Dhat - D^{n-1}), Dhat from Psi^{n+1}, straight into E's input. */
    for (int i = P.first; i < d.nw; i += P.stride) {
        const long long ip = d.pd_idx[i], iu = d.pu_idx[i];
        double Dh = ip >= 0 ? layer_value(next, ip) : 0.0;
        const double up = iu >= 0 ? layer_value(next, iu) : 0.0;
        Dh -= up;
        d.Dhat[i] = Dh;
        pad_store(d, i, d.mu_c * w1[i] + d.Bf * (Dh - Dn1[i]));
    }
    double au1;
    const double aa = cluster_sum2(saa, sau, &sh, &parity, &au1);
    TP_MARK(1);
    if (!isfinite(aa)) {
        blow_up(st, lead);
        return;
    }
    const double ainv = 1.0 / (1.0 + aa);
    TP_MARK(2);
    e_rows(d, P);
    cl.sync();
    TP_MARK(3);
    /* r += E v, and a^T r for the reduced right-hand side. */
    double part = 0.0;
    each_inside(
        d, P,
        [&](int q, int j) {
            const double rv = r_finish(d, j, d.r[j], au1, time_s) + e_at(d, q);
            part += d.a[j] * rv;
            return rv;
        },
        [&](int j, double rv) { d.r[j] = rv; });
    const double ar = cluster_sum(part, &sh, &parity) * ainv;
    TP_MARK(4);

    /* Stage 4, reduced (note 9.1): eI = I23 a, s = mu (I23 r - eI ar),
     * y0 = mu (2 w - w1); m - 1 steps; then u = (I + a a^T)^{-1} (r - E y). */
    i23_rows(d, P, d.a, d.r, NULL, 0.0);
    cl.sync();
    TP_MARK(5);
    tp_iter I;
    double ev3[3] = {iter_start(d, &I, ysh + d.nwy + 1, w, w1, ar, rank), 0.0, 0.0};
    iter_sum<1>(d, ev3, &parts, 0);
    TP_MARK(6);
    int it;
    double d2, y2;
    const int cur = iter_run(d, &I, ysh, d.mu_c * ainv / d.hq2, ev3[0], &parts, &it, &d2, &y2);
    TP_MARK(7);
    const double *yres = ysh + cur * (d.nw + 2 * (d.nwy + 1)) + d.nwy + 1;
    if (I.idx >= 0) /* this thread wrote the value it reads here */
        pad_store(d, I.idx, yres[I.idx]);
    cl.sync();
    TP_MARK(8);
    e_rows(d, P);
    cl.sync();
    TP_MARK(9);
    part = 0.0;
    each_inside(
        d, P,
        [&](int q, int j) {
            const double t = d.r[j] - e_at(d, q);
            part += d.a[j] * t;
            return t;
        },
        [&](int j, double t) { d.tmp[j] = t; });
    const double c2 = cluster_sum(part, &sh, &parity) * ainv;
    TP_MARK(10);
    each_inside(
        d, P, [&](int, int j) { return sm_value(d.tmp[j], d.a[j], c2); },
        [&](int j, double v) { unew[j] = v; });

    /* Stage 6, in the same pass: w^{n+1} = I23 u^{n+1} (its rows from tmp
     * and a); yv = w^{n+1} - w^{n-1}; Psi_pd -= g6 yv, Psi_pu += g6 yv;
     * D^{n+1} = Dhat - 2 g6 yv. */
    i23_rows(d, P, d.tmp, NULL, d.a, c2);
    cl.sync();
    TP_MARK(11);
    const double g6 = d.gamma6;
    double *Dout = d.D[rd ^ 1];
    for (int i = P.first; i < d.nw; i += P.stride) {
        const double wv = i23_at(d, d.sep, i);
        const double yv = wv - w1[i];
        wnew[i] = wv;
        Dout[i] = d.Dhat[i] - 2.0 * g6 * yv;
        if (d.pd_idx[i] >= 0)
            layer_add(next, d.pd_idx[i], -g6 * yv);
        if (d.pu_idx[i] >= 0)
            layer_add(next, d.pu_idx[i], g6 * yv);
    }
    TP_MARK(12);
#ifdef TP_PHASE_TIMES
    if (lead && st->steps % 1000 == 0) {
        printf("drum step %lld, cycles:", st->steps);
        for (int k = 1; k < 13; k++)
            printf(" %lld", marks[k] - marks[k - 1]);
        printf(" total %lld; last iteration: compute %lld, warp sums+bar %lld, block total %lld, "
               "cluster barrier %lld, remote+bar %lld\n",
               marks[12] - marks[0], tp_clk[1] - tp_clk[0], tp_clk[2] - tp_clk[1],
               tp_clk[3] - tp_clk[2], tp_clk[4] - tp_clk[3], tp_clk[5] - tp_clk[4]);
    }
#endif
    if (lead) {
        st->last_iterations = it;
        st->last_increment = y2 > 0.0 ? sqrt(d2 / y2) : 0.0;
        st->rot_u = (ru + 1) % 3;
        st->rot_w = (rw + 1) % 3;
        st->rot_d = rd ^ 1;
        st->steps++;
    }
    /* No closing barrier: the last reads of another block's shared memory
     * (the sum of a^T tmp) came before the cluster barrier above. */
}

/* ---- host side ---- */

/* The reduced iteration's split of the window: whole rows per block. */
void tp_fused_rows(tp_dev *d)
{
    d->rows_per_block = (d->nwx + TP_CLUSTER - 1) / TP_CLUSTER;
    const int nodes = d->rows_per_block * d->nwy;
    d->iter_warps = ((nodes < TP_THREADS ? nodes : TP_THREADS) + 31) / 32;
}

/* What the fused kernel does not do (the stored formats' path and the split
 * direct solve check their own). */
int tp_fused_accepts(const tp_plan *t, kt_error *err)
{
    if (t->p.coupled && t->p.solver == KT_SOLVE_JACOBI && t->p.solver_tolerance > 0)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': the matrix-free GPU kernel iterates in the reduced space "
                       "(note 9.1), whose stopping test differs from Jacobi's: use the reduced "
                       "solver, a fixed count, or a stored format (csr, dia-ell)",
                       t->p.name);
    if (t->p.coupled && !t->G.ptr)
        return kt_fail(err, KT_ENOTSUP, "timpani '%s': no reduced matrix", t->p.name);
    const int rows = (t->nwx + TP_CLUSTER - 1) / TP_CLUSTER;
    if (t->p.coupled && (t->nw > 4096 || rows * t->nwy > TP_THREADS))
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': a window of %d x %d nodes is more than the GPU's reduced "
                       "iteration holds (4096 nodes, %d a block of the %d-block cluster)",
                       t->p.name, t->nwx, t->nwy, TP_THREADS, TP_CLUSTER);
    return KT_OK;
}

int tp_fused_size(const tp_plan *t, size_t *shared_bytes, kt_error *err)
{
    *shared_bytes = t->p.coupled ? 2 * ((size_t)t->nw + 2 * ((size_t)t->nwy + 1)) * sizeof(double) : 0;

    cudaError_t e = kt_cuda_allow_smem((const void *)timpani_step<double>, *shared_bytes);
    if (e == cudaSuccess)
        e = kt_cuda_allow_smem((const void *)timpani_step<float>, *shared_bytes);
    return e == cudaSuccess ? KT_OK
                            : kt_cuda_fail(err, e, "sizing the timpani kernel's shared memory");
}

int tp_fused_launch(const tp_dev *d, size_t shared_bytes, void *next, int single,
                    const long long *step_n, cudaStream_t stream, kt_error *err)
{
    if (single)
        timpani_step<float><<<TP_CLUSTER, TP_THREADS, shared_bytes, stream>>>(*d, (float *)next, step_n);
    else
        timpani_step<double><<<TP_CLUSTER, TP_THREADS, shared_bytes, stream>>>(*d, (double *)next, step_n);
    return kt_cuda_launch_check(err, "launching the drum kernel");
}
