/* timpani_step.cu - the kettledrum's stage D (instruments/timpani_step.c,
 * processTimpani) on the GPU, inside the device room of room_step.cu.  A
 * drum in a stored format (CSR, DIA/ELL, CSC as CSR) goes to the
 * stage-by-stage path of timpani_stored.cu, which borrows the arrays made
 * here; a matrix-free drum with the direct solve goes to the split kernels
 * of timpani_split.cu (the same arrays); any other matrix-free drum runs the
 * fused kernel below: the matrix-free right-hand side (Algorithm 17: the
 * masked 5-point Laplacian D,
 * B = cB0 M + cB1 D + cB2 D^2, C = cC0 M + cC1 D (cB0 = 2, cC0 = -1 without
 * damping), a = V u = cV1 D u and the Sherman-Morrison scalars), the
 * strikes, the coupling term, the reduced-space Jacobi solve of design note
 * 9.1 (the iteration runs on the window with G stored as its 9 bands) and
 * the stage-6 layer correction.  The coefficients tension and damping change
 * are re-read from the CPU drum by kt_cuda_timpani_update.
 *
 * The membrane is small (the reference 29-inch drum: 170^2 grid, 55^2
 * window) and every stage depends on a reduction of the one before, so one
 * cluster of TP_CLUSTER blocks does the whole step in one kernel: cluster
 * barriers between the phases, reductions through distributed shared
 * memory, every scalar (a^T a, a^T u^{n-1}, the Jacobi coefficient, the
 * increment) on the chip, nothing back to the host.  Each block owns whole
 * window rows in the reduced iteration (iterates in its shared memory, edge
 * rows pushed to the neighbours, one cluster barrier a step).  What can be
 * made once is made at creation: E's gather offsets per inside node, I23's
 * row and column gathers flattened to fixed-length lists, so the passes
 * chase no index lists.  The rotating histories (u, w = I23 u, D) are
 * picked by indices kept in device memory, so the step is
 * graph-capturable.  Sums run in another order than the CPU's, so results
 * agree to rounding (1e-10 relative is the test's bound), not bit for bit. */
#include "kt_cuda.h"
#include "kt_cuda_internal.h"
#include "timpani_gpu.h"

extern "C" {
#include "timpani_internal.h"
}

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

struct kt_cuda_timpani {
    kt_timpani *t;
    size_t shared_bytes;        /* dynamic shared memory of the step kernel */
    tp_stored *stored;          /* a stored format: stage by stage (timpani_stored.cu) */
    tp_split *split;            /* matrix-free direct solve: timpani_split.cu */
    tp_dev d;
    void *alloc[64];            /* every device allocation, for free */
    int nalloc;
};

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

int kt_cuda_timpani_accepts(const struct kt_instrument *ins)
{
    return ins && ins->process == tp_process;
}

template <typename X>
static int dev_copy(kt_cuda_timpani *T, X **dev, const X *host, size_t n, kt_error *err)
{
    if (T->nalloc == (int)(sizeof T->alloc / sizeof T->alloc[0]))
        return kt_fail(err, KT_ENOMEM, "timpani on the GPU: too many arrays");
    int rc = kt_cuda_alloc((n ? n : 1) * sizeof(X), (void **)dev, err);
    if (rc < 0)
        return rc;
    T->alloc[T->nalloc++] = *dev;
    return host && n ? kt_cuda_upload(*dev, host, n * sizeof(X), err) : KT_OK;
}

/* Device indices of one air layer over the window (-1 outside the room). */
static long long *layer_indices(const kt_timpani *t, const kt_cuda_room *R, int z)
{
    long long *idx = (long long *)malloc(sizeof *idx * (size_t)t->nw);
    if (!idx)
        return NULL;
    const kt_room_grid *g = &R->grid;
    for (int i = 0; i < t->nwx; i++)
        for (int j = 0; j < t->nwy; j++) {
            int x = t->wx0 + i, y = t->wy0 + j;
            int in = z >= 0 && z < g->nz && x >= 0 && x < g->nx && y >= 0 && y < g->ny;
            idx[i * t->nwy + j] = in ? kt_cuda_room_index(R, x, y, z) : -1;
        }
    return idx;
}

/* G = mu_c I23 E as its diagonal and four upper bands on the window
 * (offsets 0, 1, nwy-1, nwy, nwy+1; the lower ones by symmetry), padded by
 * nwy+1 on both sides, and the chi runs of each window row: what
 * timpani_membrane.c build_g_bands makes for the reduced solve, made here
 * from the CSR G for any coupled solver. */
static int g_bands(const kt_timpani *t, double **band_out, int **lo_out, int **hi_out,
                   kt_error *err)
{
    const int w = t->nwy, nw = t->nw, pad = w + 1;
    const size_t stride = (size_t)nw + 2 * (size_t)pad;
    double *band = (double *)calloc(5 * stride, sizeof(double));
    int *lo = (int *)calloc((size_t)t->nwx, sizeof(int)), *hi = (int *)calloc((size_t)t->nwx, sizeof(int));
    if (!band || !lo || !hi) {
        free(band);
        free(lo);
        free(hi);
        return kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory for G");
    }
    for (int i = 0; i < nw; i++)
        for (int q = t->G.ptr[i]; q < t->G.ptr[i + 1]; q++) {
            int c = t->G.col[q], off = c - i, di = c / w - i / w, dj = c % w - i % w;
            if (di < -1 || di > 1 || dj < -1 || dj > 1) {
                free(band);
                free(lo);
                free(hi);
                return kt_fail(err, KT_ENOTSUP,
                               "timpani '%s': G does not fit 9 bands on the window (h > Q)",
                               t->p.name);
            }
            int b = off == 0 ? 0 : off == 1 && di == 0 ? 1 : off == w - 1 ? 2 : off == w ? 3
                  : off == w + 1 ? 4 : -1;
            if (b >= 0)
                band[(size_t)b * stride + pad + i] = t->G.val[q];
        }
    for (int i = 0; i < t->nwx; i++) {
        int l = w, h = 0;
        for (int j = 0; j < w; j++)
            if (t->chi[i * w + j]) {
                if (j < l)
                    l = j;
                h = j + 1;
            }
        lo[i] = l < h ? l : 0;
        hi[i] = l < h ? h : 0;
    }
    *band_out = band;
    *lo_out = lo;
    *hi_out = hi;
    return KT_OK;
}

/* The drum's scalar coefficients as the CPU object has them now (tension
 * and damping change them: kt_timpani_set_tension, kt_timpani_set_damping). */
static void set_scalars(tp_dev *d, const kt_timpani *t)
{
    d->iterations = t->p.solver_iterations;
    d->coupled = t->p.coupled;
    d->tol = t->p.solver_tolerance;
    d->adaptive = d->tol > 0.0;
    d->lossy = t->cC1 != 0.0;
    d->cV1 = t->cV1;
    d->cB0 = t->cB0;
    d->cB1 = t->cB1;
    d->cB2 = t->cB2;
    d->cC0 = t->cC0;
    d->cC1 = t->cC1;
    d->mu_c = t->mu_c;
    d->Bf = t->Bf;
    d->gamma6 = t->gamma6;
    d->hq2 = t->hq2;
    d->k = t->k;
    d->strike_scale = t->strike_scale;
}

/* G's five bands from the CPU drum's CSR G into the device arrays (made
 * here on the first call, overwritten after); the chi runs on the first. */
static int upload_g(kt_cuda_timpani *T, kt_error *err)
{
    const kt_timpani *t = T->t;
    tp_dev *d = &T->d;
    const int nw = t->nw, pad = t->nwy + 1;
    const size_t len = (size_t)nw + 2 * (size_t)pad;
    const int first = d->g[0] == NULL;
    double *band = NULL;
    int *lo = NULL, *hi = NULL;
    int rc = g_bands(t, &band, &lo, &hi, err);
    for (int b = 0; b < 5 && rc == KT_OK; b++) {
        double *dp = first ? NULL : (double *)d->g[b] - pad;
        if (first && (rc = dev_copy(T, &dp, (const double *)band + b * len, len, err)) == KT_OK)
            d->g[b] = dp + pad;
        else if (!first)
            rc = kt_cuda_upload(dp, band + b * len, len * sizeof(double), err);
    }
    int *ip;
    if (first && rc == KT_OK && (rc = dev_copy(T, &ip, (const int *)lo, (size_t)t->nwx, err)) == KT_OK)
        d->chi_lo = ip;
    if (first && rc == KT_OK && (rc = dev_copy(T, &ip, (const int *)hi, (size_t)t->nwx, err)) == KT_OK)
        d->chi_hi = ip;
    free(band);
    free(lo);
    free(hi);
    return rc;
}

/* E's second half per inside node, made once: where it reads the
 * row-interpolated sep (rows e_il + 1 and e_il + 2 at its column) and the
 * weight, so the kernel loads them by the node's position in the list
 * instead of chasing node -> row -> table. */
static int upload_e_gather(kt_cuda_timpani *T, kt_error *err)
{
    const kt_timpani *t = T->t;
    const int n = t->n, count = t->ninside;
    int *off = (int *)malloc(sizeof *off * (size_t)(count ? count : 1));
    double *fa = (double *)malloc(sizeof *fa * (size_t)(count ? count : 1));
    int rc = off && fa ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (int q = 0; rc == KT_OK && q < count; q++) {
        const int j = t->inside[q], l = j / n, m = j - l * n;
        off[q] = (t->e_il[l] + 1) * n + m;
        fa[q] = t->e_fa[l];
    }
    int *doff = NULL;
    double *dfa = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &doff, (const int *)off, (size_t)count, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &dfa, (const double *)fa, (size_t)count, err);
    free(off);
    free(fa);
    T->d.in_eoff = doff;
    T->d.in_efa = dfa;
    return rc;
}

/* The longest list of a CSR-like gather (ptr[first + i] .. ptr[first + i + 1]). */
static int longest(const int *ptr, int first, int count)
{
    int k = 0;
    for (int i = 0; i < count; i++)
        if (ptr[first + i + 1] - ptr[first + i] > k)
            k = ptr[first + i + 1] - ptr[first + i];
    return k;
}

/* I23's row gather flattened: window row i (padded row i + 1 of the CPU's
 * lists) gets row_k entries (membrane row, its inside run, weight); the
 * padding has an empty run, so the kernel skips it. */
static int upload_i23_rows(kt_cuda_timpani *T, kt_error *err)
{
    const kt_timpani *t = T->t;
    const int K = longest(t->row_ptr, 1, t->nwx);
    const size_t count = (size_t)((unsigned)t->nwx * (unsigned)(K ? K : 1));
    int4 *g = (int4 *)calloc(count, sizeof *g);
    double *w = (double *)calloc(count, sizeof *w);
    int rc = g && w ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (int i = 0; rc == KT_OK && i < t->nwx; i++)
        for (int q = t->row_ptr[i + 1], k = 0; q < t->row_ptr[i + 2]; q++, k++) {
            const int l = t->row_l[q];
            g[i * K + k] = make_int4(l, t->run_lo[l], t->run_hi[l], 0);
            w[i * K + k] = t->row_w[q];
        }
    int4 *dg = NULL;
    double *dw = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &dg, (const int4 *)g, count, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &dw, (const double *)w, count, err);
    free(g);
    free(w);
    T->d.row_k = K;
    T->d.row_gather = dg;
    T->d.row_gw = dw;
    return rc;
}

/* I23's column gather flattened: window column j gets col_k entries
 * (membrane column, weight); the padding reads column mlo with weight 0,
 * which adds nothing. */
static int upload_i23_cols(kt_cuda_timpani *T, kt_error *err)
{
    const kt_timpani *t = T->t;
    const int K = longest(t->col_ptr, 0, t->nwy);
    const size_t count = (size_t)((unsigned)t->nwy * (unsigned)(K ? K : 1));
    int *m = (int *)malloc(sizeof *m * count);
    double *w = (double *)calloc(count, sizeof *w);
    int rc = m && w ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (size_t q = 0; rc == KT_OK && q < count; q++)
        m[q] = t->mlo;
    for (int j = 0; rc == KT_OK && j < t->nwy; j++)
        for (int q = t->col_ptr[j], k = 0; q < t->col_ptr[j + 1]; q++, k++) {
            m[j * K + k] = t->col_m[q];
            w[j * K + k] = t->col_w[q];
        }
    int *dm = NULL;
    double *dw = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &dm, (const int *)m, count, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &dw, (const double *)w, count, err);
    free(m);
    free(w);
    T->d.col_k = K;
    T->d.col_gm = dm;
    T->d.col_gw = dw;
    return rc;
}

/* The reduced iteration's split of the window: whole rows per block. */
static void split_rows(tp_dev *d)
{
    d->rows_per_block = (d->nwx + TP_CLUSTER - 1) / TP_CLUSTER;
    const int nodes = d->rows_per_block * d->nwy;
    d->iter_warps = ((nodes < TP_THREADS ? nodes : TP_THREADS) + 31) / 32;
}

static int upload_all(kt_cuda_timpani *T, const kt_cuda_room *R, int stored, kt_error *err)
{
    kt_timpani *t = T->t;
    tp_dev *d = &T->d;
    const int n = t->n, nn = t->nn, nw = t->nw;
    d->n = n;
    d->nn = nn;
    d->ninside = t->ninside;
    d->nwx = t->nwx;
    d->nwy = t->nwy;
    d->nw = nw;
    d->mlo = t->mlo;
    d->mhi = t->mhi;
    set_scalars(d, t);
    split_rows(d);
    d->nstrikes = t->nstrikes;
    int rc = upload_e_gather(T, err);
    if (rc < 0)
        return rc;
#define UP(field, host, count)                                                                 \
    if ((rc = dev_copy(T, &field, host, (size_t)(count), err)) < 0)                            \
        return rc;
    int *ip;
    double *dp;
    unsigned char *cp;
    UP(ip, t->inside, t->ninside) d->inside = ip;
    unsigned char *mp;
    UP(mp, t->mask, nn) d->mask = mp;
    UP(ip, t->e_jm, n) d->e_jm = ip;
    UP(dp, t->e_fb, n) d->e_fb = dp;
    UP(cp, t->chi, nw) d->chi = cp;
    if ((rc = upload_i23_rows(T, err)) < 0 || (rc = upload_i23_cols(T, err)) < 0)
        return rc;
    if (t->p.coupled) {
        if (!stored && (rc = upload_g(T, err)) < 0)
            return rc;
        long long *lp = layer_indices(t, R, t->pd), *lu = layer_indices(t, R, t->pu);
        long long *dl = NULL, *du = NULL;
        rc = lp && lu ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
        if (rc == KT_OK)
            rc = dev_copy(T, &dl, (const long long *)lp, (size_t)nw, err);
        if (rc == KT_OK)
            rc = dev_copy(T, &du, (const long long *)lu, (size_t)nw, err);
        free(lp);
        free(lu);
        if (rc < 0)
            return rc;
        d->pd_idx = dl;
        d->pu_idx = du;
    }
    /* strikes as columns */
    int ns = t->nstrikes;
    double *s_start = (double *)calloc((size_t)ns + 1, sizeof(double));
    double *s_force = (double *)calloc((size_t)ns + 1, sizeof(double));
    double *s_dur = (double *)calloc((size_t)ns + 1, sizeof(double));
    int *s_node = (int *)calloc((size_t)ns + 1, sizeof(int));
    rc = s_start && s_force && s_dur && s_node
             ? KT_OK
             : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (int k = 0; rc == KT_OK && k < ns; k++) {
        s_start[k] = t->strikes[k].start_s;
        s_force[k] = t->strikes[k].force_N;
        s_dur[k] = t->strikes[k].duration_s;
        s_node[k] = t->strikes[k].node;
    }
    double *a1 = NULL, *a2 = NULL, *a3 = NULL;
    int *a4 = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &a1, (const double *)s_start, (size_t)ns, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &a2, (const double *)s_force, (size_t)ns, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &a3, (const double *)s_dur, (size_t)ns, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &a4, (const int *)s_node, (size_t)ns, err);
    free(s_start);
    free(s_force);
    free(s_dur);
    free(s_node);
    if (rc < 0)
        return rc;
    d->st_start = a1;
    d->st_force = a2;
    d->st_dur = a3;
    d->st_node = a4;
    /* state: u = U0, u^{n+1} = U1, u^{n-1} = U2; w likewise; Dn = D0 */
    UP(d->U[0], t->u, nn) UP(d->U[1], (const double *)NULL, nn) UP(d->U[2], t->u1, nn)
    UP(d->a, t->a, nn) UP(d->r, (const double *)NULL, nn) UP(d->tmp, (const double *)NULL, nn)
    UP(d->pad, (const double *)NULL, (t->nwx + 2) * (t->nwy + 2))
    UP(d->sep, (const double *)NULL, (t->nwx + 2) * n)
    UP(d->sep2, (const double *)NULL, (t->nwx + 2) * n)
    if (t->p.coupled) {
        UP(d->W[0], t->w, nw) UP(d->W[1], (const double *)NULL, nw) UP(d->W[2], t->w1, nw)
        UP(d->D[0], t->Dn, nw) UP(d->D[1], t->Dn1, nw)
        UP(d->Dhat, (const double *)NULL, nw) UP(d->v, (const double *)NULL, nw)
    }
    tp_dev_state s0;
    memset(&s0, 0, sizeof s0);
    s0.last_iterations = t->last_iterations;
    s0.last_increment = t->last_increment;
    s0.steps = t->steps;
    tp_dev_state *sp;
    UP(sp, (const tp_dev_state *)&s0, 1) d->state = sp;
#undef UP
    return KT_OK;
}

/* What the fused kernel does not do (the stored formats' path and the split
 * direct solve check their own). */
static int fused_accepts(const kt_timpani *t, kt_error *err)
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

static int fused_size(kt_cuda_timpani *T, kt_error *err)
{
    const kt_timpani *t = T->t;
    T->shared_bytes = t->p.coupled ? 2 * ((size_t)t->nw + 2 * ((size_t)t->nwy + 1)) * sizeof(double) : 0;

    cudaError_t e = kt_cuda_allow_smem((const void *)timpani_step<double>, T->shared_bytes);
    if (e == cudaSuccess)
        e = kt_cuda_allow_smem((const void *)timpani_step<float>, T->shared_bytes);
    return e == cudaSuccess ? KT_OK
                            : kt_cuda_fail(err, e, "sizing the timpani kernel's shared memory");
}

/* The stage-by-stage path borrows the arrays upload_all made. */
static int stored_make(kt_cuda_timpani *T, cudaStream_t stream, kt_error *err)
{
    const tp_dev *d = &T->d;
    tp_stored_arrays a;
    memset(&a, 0, sizeof a);
    for (int k = 0; k < 3; k++) {
        a.U[k] = d->U[k];
        a.W[k] = d->W[k];
    }
    a.D[0] = d->D[0];
    a.D[1] = d->D[1];
    a.a = d->a;
    a.r = d->r;
    a.tmp = d->tmp;
    a.Dhat = d->Dhat;
    a.v = d->v;
    a.pd_idx = d->pd_idx;
    a.pu_idx = d->pu_idx;
    a.st_start = d->st_start;
    a.st_force = d->st_force;
    a.st_dur = d->st_dur;
    a.st_node = d->st_node;
    a.nstrikes = d->nstrikes;
    a.state = d->state;
    return tp_stored_create(T->t, &a, stream, &T->stored, err);
}

int kt_cuda_timpani_create(void *timpani, const kt_cuda_room *R, cudaStream_t stream,
                           kt_cuda_timpani **out, kt_error *err)
{
    *out = NULL;
    kt_timpani *t = (kt_timpani *)timpani;
    const int stored = t->p.format != KT_TIMPANI_MATRIX_FREE, split = tp_split_wanted(t);
    int rc = stored ? KT_OK : split ? tp_split_accepts(t, err) : fused_accepts(t, err);
    if (rc < 0)
        return rc;
    kt_cuda_timpani *T = (kt_cuda_timpani *)calloc(1, sizeof *T);
    if (!T)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU timpani");
    T->t = t;
    rc = stored || split ? KT_OK : fused_size(T, err);
    if (rc == KT_OK)
        rc = upload_all(T, R, stored, err);
    if (rc == KT_OK && stored)
        rc = stored_make(T, stream, err);
    if (rc == KT_OK && split)
        rc = tp_split_create(t, &T->d, R, &T->split, err);
    if (rc < 0) {
        kt_cuda_timpani_free(T);
        return rc;
    }
    *out = T;
    return KT_OK;
}

int kt_cuda_timpani_update(kt_cuda_timpani *T, kt_error *err)
{
    set_scalars(&T->d, T->t);
    if (T->stored)
        return tp_stored_update(T->stored, err);
    int rc = T->t->p.coupled ? upload_g(T, err) : KT_OK;
    return rc == KT_OK && T->split ? tp_split_update(T->split, &T->d, err) : rc;
}

int kt_cuda_timpani_launch(kt_cuda_timpani *T, void *next, int single, const long long *step_n,
                           cudaStream_t stream, cudaEvent_t marks[2], kt_error *err)
{
    if (T->stored) {
        int rc = tp_stored_launch(T->stored, next, single, step_n, stream, marks, err);
        return rc < 0 ? rc : marks != NULL;
    }
    if (T->split)
        return tp_split_launch(T->split, &T->d, next, single, step_n, stream, marks != NULL, err);
    if (single)
        timpani_step<float><<<TP_CLUSTER, TP_THREADS, T->shared_bytes, stream>>>(T->d, (float *)next, step_n);
    else
        timpani_step<double><<<TP_CLUSTER, TP_THREADS, T->shared_bytes, stream>>>(T->d, (double *)next, step_n);
    return kt_cuda_launch_check(err, "launching the drum kernel");
}

void kt_cuda_timpani_wait(kt_cuda_timpani *T, cudaStream_t stream)
{
    tp_split_wait(T->split, stream);
}

void kt_cuda_timpani_join(kt_cuda_timpani *T, cudaStream_t stream)
{
    tp_split_join(T->split, &T->d, stream);
}

int kt_cuda_timpani_download(kt_cuda_timpani *T, cudaStream_t stream, int64_t *bad_after,
                             kt_error *err)
{
    kt_timpani *t = T->t;
    const int64_t before = t->steps; /* the drum's steps at the last download */
    tp_dev_state s;
    cudaError_t e = cudaMemcpyAsync(&s, T->d.state, sizeof s, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
        return kt_cuda_fail(err, e, "reading the GPU timpani's state");
    const size_t nn = (size_t)t->nn * sizeof(double), nw = (size_t)t->nw * sizeof(double);
    int rc = kt_cuda_download(t->u, T->d.U[s.rot_u], nn, err);
    if (rc == KT_OK)
        rc = kt_cuda_download(t->u1, T->d.U[(s.rot_u + 2) % 3], nn, err);
    const double *a = T->split ? tp_split_last_a(T->split) : T->d.a;
    if (rc == KT_OK && a)
        rc = kt_cuda_download(t->a, a, nn, err);
    if (rc == KT_OK && t->p.coupled) {
        rc = kt_cuda_download(t->w, T->d.W[s.rot_w], nw, err);
        if (rc == KT_OK)
            rc = kt_cuda_download(t->w1, T->d.W[(s.rot_w + 2) % 3], nw, err);
        if (rc == KT_OK)
            rc = kt_cuda_download(t->Dn, T->d.D[s.rot_d], nw, err);
        if (rc == KT_OK)
            rc = kt_cuda_download(t->Dn1, T->d.D[s.rot_d ^ 1], nw, err);
    }
    if (rc < 0)
        return rc;
    t->steps = s.steps;
    t->last_iterations = s.last_iterations;
    t->last_increment = s.last_increment;
    if (s.bad && bad_after)
        *bad_after = s.bad_step - before;
    if (s.bad)
        return kt_fail(err, KT_EUNSTABLE, "timpani '%s': membrane blew up at step %lld (GPU)",
                       t->p.name, (long long)s.bad_step);
    return KT_OK;
}

void kt_cuda_timpani_free(kt_cuda_timpani *T)
{
    if (!T)
        return;
    tp_stored_free(T->stored);
    tp_split_free(T->split);
    for (int k = 0; k < T->nalloc; k++)
        kt_cuda_free(T->alloc[k]);
    free(T);
}
