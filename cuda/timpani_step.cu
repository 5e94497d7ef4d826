/* timpani_step.cu - the kettledrum's stage D (instruments/timpani_step.c,
 * processTimpani) on the GPU, inside the device room of room_step.cu.  A
 * drum in a stored format (CSR, DIA/ELL, CSC as CSR) goes to the
 * stage-by-stage path of timpani_stored.cu, which borrows the arrays made
 * here; a matrix-free drum runs the fused kernel below: the
 * matrix-free right-hand side (Algorithm 17: the masked 5-point Laplacian D,
 * B = cB0 M + cB1 D + cB2 D^2, C = cC0 M + cC1 D (cB0 = 2, cC0 = -1 without
 * damping), a = V u = cV1 D u and the Sherman-Morrison scalars), the
 * strikes, the coupling term, the reduced-space Jacobi solve of design note
 * 9.1 (the iteration runs on the window with G stored as its 9 bands) and
 * the stage-6 layer correction.  The coefficients tension and damping change
 * are re-read from the CPU drum by kt_cuda_timpani_update.
 *
 * The membrane is small (the reference 29-inch drum: 170^2 grid, 55^2
 * window) and every stage depends on a reduction of the one before, so one
 * thread block does the whole step: __syncthreads between stages, block
 * reductions in shared memory, every scalar (a^T a, a^T u^{n-1}, the Jacobi
 * coefficient, the increment) stays on the chip, and nothing returns to the
 * host.  The rotating histories (u, w = I23 u, D) are picked by indices kept
 * in device memory, so the step is graph-capturable.  Sums run in another
 * order than the CPU's, so results agree to rounding (1e-10 relative is the
 * test's bound), not bit for bit. */
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

/* Everything the kernel reads, by value. */
typedef struct tp_dev {
    int n, nn, ninside, nwx, nwy, nw, mlo, mhi, iterations, coupled, adaptive, nstrikes, lossy;
    double cV1, cB0, cB1, cB2, cC0, cC1, mu_c, Bf, gamma6, hq2, k, strike_scale, tol;
    const int *inside, *run_lo, *run_hi, *e_il, *e_jm;
    const double *e_fa, *e_fb;
    const unsigned char *chi;
    const int *row_ptr, *row_l, *col_ptr, *col_m, *chi_lo, *chi_hi;
    const double *row_w, *col_w;
    const double *g[5];         /* band d at window index i: g[d][i] (padded) */
    const long long *pd_idx, *pu_idx;
    const double *st_start, *st_force, *st_dur;
    const int *st_node;
    double *U[3], *W[3], *D[2];
    double *a, *r, *tmp, *pad, *sep, *sep2, *eI, *s, *y, *Dhat, *v; /* y: the reduced iterate */
    tp_dev_state *state;
} tp_dev;

struct kt_cuda_timpani {
    kt_timpani *t;
    size_t shared_bytes;        /* dynamic shared memory of the step kernel */
    tp_stored *stored;          /* a stored format: stage by stage (timpani_stored.cu) */
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

__device__ __forceinline__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* Sum over this block, returned to every thread of the block; the warps'
 * partials are added by one warp's shuffle tree (deterministic). */
__device__ double block_sum(double v, double *sh)
{
    v = warp_sum(v);
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads(); /* sh may still be read from the last call */
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    if (w == 0) {
        double t = warp_sum(lane < (int)(blockDim.x >> 5) ? sh[lane] : 0.0);
        if (lane == 0)
            sh[32] = t;
    }
    __syncthreads();
    return sh[32];
}

/* Sum over the whole cluster, the same bits in every block: each block
 * publishes its total in its shared memory (slot 33 or 34, alternating, so
 * the next sum cannot overwrite a total another block is still reading: a
 * slot is rewritten only after the following sum's cluster barrier), and one
 * warp of every block adds the blocks' totals by the same shuffle tree. */
__device__ double cluster_sum(double v, double *sh, int *parity)
{
    cg::cluster_group cl = cg::this_cluster();
    const int slot = 33 + *parity;
    *parity ^= 1;
    v = warp_sum(v);
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    if (w == 0) {
        double t = warp_sum(lane < (int)(blockDim.x >> 5) ? sh[lane] : 0.0);
        if (lane == 0)
            sh[slot] = t;
    }
    cl.sync();
    if (w == 0) {
        double t = lane < (int)cl.num_blocks() ? *cl.map_shared_rank(sh + slot, lane) : 0.0;
        t = warp_sum(t);
        if (lane == 0)
            sh[32] = t;
    }
    __syncthreads();
    return sh[32];
}

__device__ double dot_inside(const tp_dev &d, tp_pos p, const double *x, const double *y,
                             double *sh, int *parity)
{
    double part = 0.0;
    for (int q = p.first; q < d.ninside; q += p.stride) {
        const int j = d.inside[q];
        part += x[j] * y[j];
    }
    return cluster_sum(part, sh, parity);
}

/* E x (bilinear, separable; window nodes outside chi read as zero), added
 * into y, or y = base - E x when base is given (timpani_membrane.c e_separable).
 * Ends with the cluster synchronised. */
__device__ void e_apply(const tp_dev &d, tp_pos p, const double *xw, double *y,
                        const double *base)
{
    cg::cluster_group cl = cg::this_cluster();
    const int s = d.nwy + 2, n = d.n, cols = d.mhi - d.mlo;
    for (int i = p.first; i < d.nw; i += p.stride) {
        const int row = i / d.nwy, j = i - row * d.nwy;
        d.pad[(row + 1) * s + 1 + j] = d.chi[i] ? xw[i] : 0.0;
    }
    cl.sync();
    for (int idx = p.first; idx < (d.nwx + 2) * cols; idx += p.stride) {
        const int pi = idx / cols, m = d.mlo + (idx - pi * cols);
        const int j = d.e_jm[m];
        const double b = d.e_fb[m];
        const double *pr = d.pad + pi * s + 1;
        d.sep[pi * n + m] = (1.0 - b) * pr[j] + b * pr[j + 1];
    }
    cl.sync();
    for (int q = p.first; q < d.ninside; q += p.stride) {
        const int jj = d.inside[q], l = jj / n, m = jj - l * n;
        const double a = d.e_fa[l];
        const double *S0 = d.sep + (d.e_il[l] + 1) * n;
        const double val = (1.0 - a) * S0[m] + a * S0[n + m];
        if (base)
            y[jj] = base[jj] - val;
        else
            y[jj] += val;
    }
    cl.sync();
}

/* y1 = I23 x1 (and y2 = I23 x2): rows gather their membrane rows, columns
 * their membrane columns, then the chi mask and h^2/Q^2 (i23_separable).
 * Ends with the cluster synchronised. */
__device__ void i23_apply(const tp_dev &d, tp_pos p, const double *x1, const double *x2,
                          double *y1, double *y2)
{
    cg::cluster_group cl = cg::this_cluster();
    const int n = d.n, cols = d.mhi - d.mlo;
    for (int idx = p.first; idx < d.nwx * cols; idx += p.stride) {
        const int i = idx / cols, m = d.mlo + (idx - i * cols);
        double T = 0.0, T2 = 0.0;
        for (int q = d.row_ptr[i + 1]; q < d.row_ptr[i + 2]; q++) {
            const int l = d.row_l[q];
            if (m < d.run_lo[l] || m >= d.run_hi[l])
                continue;
            T += d.row_w[q] * x1[l * n + m];
            if (x2)
                T2 += d.row_w[q] * x2[l * n + m];
        }
        d.sep[(i + 1) * n + m] = T;
        if (x2)
            d.sep2[(i + 1) * n + m] = T2;
    }
    cl.sync();
    for (int idx = p.first; idx < d.nw; idx += p.stride) {
        const int i = idx / d.nwy, j = idx - i * d.nwy;
        double v = 0.0, v2 = 0.0;
        if (d.chi[idx])
            for (int q = d.col_ptr[j]; q < d.col_ptr[j + 1]; q++) {
                v += d.col_w[q] * d.sep[(i + 1) * n + d.col_m[q]];
                if (x2)
                    v2 += d.col_w[q] * d.sep2[(i + 1) * n + d.col_m[q]];
            }
        y1[idx] = d.hq2 * v;
        if (x2)
            y2[idx] = d.hq2 * v2;
    }
    cl.sync();
}

__device__ __forceinline__ double layer_value(const float *f, long long i) { return (double)f[i]; }
__device__ __forceinline__ double layer_value(const double *f, long long i) { return f[i]; }
/* room_add: float + (float)v, or double + v. */
__device__ __forceinline__ void layer_add(float *f, long long i, double v) { f[i] = __fadd_rn(f[i], (float)v); }
__device__ __forceinline__ void layer_add(double *f, long long i, double v) { f[i] = __dadd_rn(f[i], v); }

/* Window nodes one thread of block 0 owns in the reduced iteration. */
#ifndef TP_ITER_NODES
#define TP_ITER_NODES 4
#endif

/* The reduced iteration (note 9.1) in one block (rank 0): m - 1 steps of
 * y <- s + c(y) eI - G y with c(y) = cf (eI . y).  The two iterates live in
 * shared memory (padded by nwy+1, zero outside the chi runs); each thread
 * keeps its few nodes' s and eI in registers and reads G's bands through
 * the read-only cache.  eI vanishes outside the chi runs, so eI . y_new is
 * gathered while y_new is formed: one block reduction per step, which also
 * orders the step's writes before the next step's reads.  The result is
 * copied to d.y. */
__device__ void reduced_iterations(const tp_dev &d, double cf, double *sh, double *ysh,
                                   int *it_out, double *d2_out, double *y2_out)
{
    const int T = blockDim.x, wy = d.nwy, pad = wy + 1, len = d.nw + 2 * pad;
    double *Y[2] = {ysh + pad, ysh + len + pad};
    for (int i = threadIdx.x; i < 2 * len; i += T)
        ysh[i] = 0.0;
    __syncthreads();
    for (int i = threadIdx.x; i < d.nw; i += T)
        Y[0][i] = d.y[i];
    int idx[TP_ITER_NODES];
    double sv[TP_ITER_NODES], ev[TP_ITER_NODES];
#pragma unroll
    for (int k = 0; k < TP_ITER_NODES; k++) {
        const int i = threadIdx.x + k * T;
        int in = i < d.nw;
        if (in) {
            const int row = i / wy, j = i - row * wy;
            in = j >= d.chi_lo[row] && j < d.chi_hi[row];
        }
        idx[k] = in ? i : -1;
        sv[k] = in ? d.s[i] : 0.0;
        ev[k] = in ? d.eI[i] : 0.0;
    }
    __syncthreads();
    double pe = 0.0;
#pragma unroll
    for (int k = 0; k < TP_ITER_NODES; k++)
        if (idx[k] >= 0)
            pe += ev[k] * Y[0][idx[k]];
    double ey = block_sum(pe, sh), d2 = 0.0, y2 = 0.0;
    const double *g0 = d.g[0], *g1 = d.g[1], *g2 = d.g[2], *g3 = d.g[3], *g4 = d.g[4];
    int it = 1, cur = 0;
    for (; it < d.iterations; it++) {
        const double *y = Y[cur];
        double *yn = Y[cur ^ 1];
        const double c = cf * ey;
        const int need = d.adaptive || it == d.iterations - 1;
        double pd = 0.0, py = 0.0;
        pe = 0.0;
#pragma unroll
        for (int k = 0; k < TP_ITER_NODES; k++) {
            const int i = idx[k];
            if (i < 0)
                continue;
            const double v =
                sv[k] + c * ev[k] -
                (__ldg(g0 + i) * y[i] + __ldg(g1 + i) * y[i + 1] + __ldg(g1 + i - 1) * y[i - 1] +
                 __ldg(g2 + i) * y[i + wy - 1] + __ldg(g2 + i - wy + 1) * y[i - wy + 1] +
                 __ldg(g3 + i) * y[i + wy] + __ldg(g3 + i - wy) * y[i - wy] +
                 __ldg(g4 + i) * y[i + wy + 1] + __ldg(g4 + i - wy - 1) * y[i - wy - 1]);
            yn[i] = v;
            pe += ev[k] * v;
            if (need) {
                const double df = v - y[i];
                pd += df * df;
                py += v * v;
            }
        }
        ey = block_sum(pe, sh);
        if (need) {
            d2 = block_sum(pd, sh);
            y2 = block_sum(py, sh);
        }
        cur ^= 1;
        if (d.tol > 0.0 && d2 <= d.tol * d.tol * y2) {
            it++;
            break;
        }
    }
    for (int i = threadIdx.x; i < d.nw; i += T)
        d.y[i] = Y[cur][i];
    *it_out = it;
    *d2_out = d2;
    *y2_out = y2;
}

/* One drum step, on a cluster of TP_CLUSTER blocks: the membrane-wide and
 * window-wide passes are shared by all its threads (cluster barriers
 * between them), the reduced iteration runs in block 0. */
template <typename REAL>
__global__ void __cluster_dims__(TP_CLUSTER, 1, 1) __launch_bounds__(TP_THREADS)
timpani_step(tp_dev d, REAL *__restrict__ next, const long long *__restrict__ step_n)
{
    extern __shared__ double ysh[]; /* block 0: the reduced iterates */
    __shared__ double sh[35];
    int parity = 0;
    __shared__ double res_d[2];
    __shared__ int res_i[1];
    cg::cluster_group cl = cg::this_cluster();
    const tp_pos P = {(int)(cl.block_rank() * blockDim.x + threadIdx.x),
                      (int)(cl.num_blocks() * blockDim.x)};
    const int n = d.n, lead = cl.block_rank() == 0 && threadIdx.x == 0;
    tp_dev_state *st = d.state;
    const int ru = st->rot_u, rw = st->rot_w, rd = st->rot_d;
    if (st->bad)
        return; /* frozen after a blow-up: the host reports it */
    const double *u = d.U[ru], *u1 = d.U[(ru + 2) % 3];
    double *unew = d.U[(ru + 1) % 3];
    const double *w = d.W[rw], *w1 = d.W[(rw + 2) % 3];
    double *wnew = d.W[(rw + 1) % 3];
    const double *Dn1 = d.D[rd ^ 1];

    /* Stage 3, pass 1: L = D u, a = cV1 L, a^T a, a^T u^{n-1}. */
    double saa = 0.0, sau = 0.0;
    for (int q = P.first; q < d.ninside; q += P.stride) {
        const int j = d.inside[q];
        const double L = u[j - n] + u[j + n] + u[j - 1] + u[j + 1] - 4.0 * u[j];
        const double av = d.cV1 * L;
        d.tmp[j] = L;
        d.a[j] = av;
        saa += av * av;
        sau += av * u1[j];
    }
    const double aa = cluster_sum(saa, sh, &parity);
    const double au1 = cluster_sum(sau, sh, &parity);
    if (!isfinite(aa)) {
        if (lead) {
            st->bad = 1;
            st->bad_step = st->steps;
        }
        cl.sync(); /* no block leaves while another may read its shared memory */
        return;
    }
    const double ainv = 1.0 / (1.0 + aa);
    /* Pass 2: r = B u + C u^{n-1} - a (a^T u^{n-1}), then the strikes on
     * their nodes (in the CPU's order: after r, one strike after another). */
    const double time_s = (double)(*step_n) * d.k;
    for (int q = P.first; q < d.ninside; q += P.stride) {
        const int j = d.inside[q];
        const double *Lr = d.tmp;
        const double DD = Lr[j - n] + Lr[j + n] + Lr[j - 1] + Lr[j + 1] - 4.0 * Lr[j];
        double rv = d.cB0 * u[j] + d.cB1 * Lr[j] + d.cB2 * DD + d.cC0 * u1[j];
        if (d.lossy)
            rv += d.cC1 * (u1[j - n] + u1[j + n] + u1[j - 1] + u1[j + 1] - 4.0 * u1[j]);
        rv -= au1 * d.a[j];
        for (int k = 0; k < d.nstrikes; k++) {
            const double tau = time_s - d.st_start[k];
            if (d.st_node[k] == j && tau >= 0.0 && tau < d.st_dur[k])
                rv += d.strike_scale * 0.5 * d.st_force[k] *
                      (1.0 - cos(2.0 * 3.14159265358979323846 * tau / d.st_dur[k]));
        }
        d.r[j] = rv;
    }
    if (!d.coupled) {
        cl.sync();
        const double c = dot_inside(d, P, d.a, d.r, sh, &parity) * ainv;
        for (int q = P.first; q < d.ninside; q += P.stride) {
            const int j = d.inside[q];
            unew[j] = d.r[j] - d.a[j] * c;
        }
        if (lead) {
            st->last_iterations = 1;
            st->last_increment = 0.0;
            st->rot_u = (ru + 1) % 3;
            st->steps++;
        }
        cl.sync();
        return;
    }

    /* Coupling: r += E (mu_c w^{n-1} + Bf (Dhat - D^{n-1})), Dhat from Psi^{n+1}. */
    for (int i = P.first; i < d.nw; i += P.stride) {
        const long long ip = d.pd_idx[i], iu = d.pu_idx[i];
        double Dh = ip >= 0 ? layer_value(next, ip) : 0.0;
        const double up = iu >= 0 ? layer_value(next, iu) : 0.0;
        Dh -= up;
        d.Dhat[i] = Dh;
        d.v[i] = d.mu_c * w1[i] + d.Bf * (Dh - Dn1[i]);
    }
    cl.sync();
    e_apply(d, P, d.v, d.r, NULL);

    /* Stage 4, reduced (note 9.1): y0 = mu (2 w - w1); m - 1 steps; then
     * u = (I + a a^T)^{-1} (r - E y). */
    i23_apply(d, P, d.a, d.r, d.eI, d.s);
    const double ar = dot_inside(d, P, d.a, d.r, sh, &parity) * ainv;
    const double mu = d.mu_c;
    for (int i = P.first; i < d.nw; i += P.stride) {
        d.s[i] = mu * (d.s[i] - d.eI[i] * ar);
        d.y[i] = mu * (2.0 * w[i] - w1[i]);
    }
    cl.sync();
    if (cl.block_rank() == 0) {
        int it;
        double d2, y2;
        reduced_iterations(d, mu * ainv / d.hq2, sh, ysh, &it, &d2, &y2);
        if (threadIdx.x == 0) {
            res_i[0] = it;
            res_d[0] = d2;
            res_d[1] = y2;
        }
    }
    cl.sync();
    const int it = *cl.map_shared_rank(res_i, 0);
    const double d2 = *cl.map_shared_rank(res_d, 0), y2 = *cl.map_shared_rank(res_d + 1, 0);
    e_apply(d, P, d.y, d.tmp, d.r);
    const double c2 = dot_inside(d, P, d.a, d.tmp, sh, &parity) * ainv;
    for (int q = P.first; q < d.ninside; q += P.stride) {
        const int j = d.inside[q];
        unew[j] = d.tmp[j] - d.a[j] * c2;
    }
    cl.sync();

    /* Stage 6: yv = w^{n+1} - w^{n-1}; Psi_pd -= g6 yv, Psi_pu += g6 yv;
     * D^{n+1} = Dhat - 2 g6 yv. */
    i23_apply(d, P, unew, NULL, wnew, NULL);
    const double g6 = d.gamma6;
    double *Dout = d.D[rd ^ 1];
    for (int i = P.first; i < d.nw; i += P.stride) {
        const double yv = wnew[i] - w1[i];
        Dout[i] = d.Dhat[i] - 2.0 * g6 * yv;
        if (d.pd_idx[i] >= 0)
            layer_add(next, d.pd_idx[i], -g6 * yv);
        if (d.pu_idx[i] >= 0)
            layer_add(next, d.pu_idx[i], g6 * yv);
    }
    if (lead) {
        st->last_iterations = it;
        st->last_increment = y2 > 0.0 ? sqrt(d2 / y2) : 0.0;
        st->rot_u = (ru + 1) % 3;
        st->rot_w = (rw + 1) % 3;
        st->rot_d = rd ^ 1;
        st->steps++;
    }
    cl.sync();
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
    d->nstrikes = t->nstrikes;
    int rc;
#define UP(field, host, count)                                                                 \
    if ((rc = dev_copy(T, &field, host, (size_t)(count), err)) < 0)                            \
        return rc;
    int *ip;
    double *dp;
    unsigned char *cp;
    UP(ip, t->inside, t->ninside) d->inside = ip;
    UP(ip, t->run_lo, n) d->run_lo = ip;
    UP(ip, t->run_hi, n) d->run_hi = ip;
    UP(ip, t->e_il, n) d->e_il = ip;
    UP(ip, t->e_jm, n) d->e_jm = ip;
    UP(dp, t->e_fa, n) d->e_fa = dp;
    UP(dp, t->e_fb, n) d->e_fb = dp;
    UP(cp, t->chi, nw) d->chi = cp;
    UP(ip, t->row_ptr, t->nwx + 3) d->row_ptr = ip;
    UP(ip, t->row_l, t->row_ptr[t->nwx + 2]) d->row_l = ip;
    UP(dp, t->row_w, t->row_ptr[t->nwx + 2]) d->row_w = dp;
    UP(ip, t->col_ptr, t->nwy + 1) d->col_ptr = ip;
    UP(ip, t->col_m, t->col_ptr[t->nwy]) d->col_m = ip;
    UP(dp, t->col_w, t->col_ptr[t->nwy]) d->col_w = dp;
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
        UP(d->eI, (const double *)NULL, nw) UP(d->s, (const double *)NULL, nw)
        UP(d->Dhat, (const double *)NULL, nw) UP(d->v, (const double *)NULL, nw)
        UP(dp, (const double *)NULL, nw) d->y = dp;
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

/* What the fused kernel does not do (the stored formats' path checks its own). */
static int fused_accepts(const kt_timpani *t, kt_error *err)
{
    if (t->p.coupled && t->p.solver == KT_SOLVE_DIRECT)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': the direct solve has no GPU form; use the reduced solve",
                       t->p.name);
    if (t->p.coupled && t->p.solver == KT_SOLVE_JACOBI && t->p.solver_tolerance > 0)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': the matrix-free GPU kernel iterates in the reduced space "
                       "(note 9.1), whose stopping test differs from Jacobi's: use the reduced "
                       "solver, a fixed count, or a stored format (csr, dia-ell)",
                       t->p.name);
    if (t->p.coupled && !t->G.ptr)
        return kt_fail(err, KT_ENOTSUP, "timpani '%s': no reduced matrix", t->p.name);
    if (t->p.coupled && t->nw > TP_ITER_NODES * TP_THREADS)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': a window of %d nodes is more than the GPU's reduced "
                       "iteration holds (%d)",
                       t->p.name, t->nw, TP_ITER_NODES * TP_THREADS);
    return KT_OK;
}

static int fused_size(kt_cuda_timpani *T, kt_error *err)
{
    const kt_timpani *t = T->t;
    T->shared_bytes = t->p.coupled ? 2 * ((size_t)t->nw + 2 * ((size_t)t->nwy + 1)) * sizeof(double) : 0;
    cudaError_t e = cudaFuncSetAttribute((const void *)timpani_step<double>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)T->shared_bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute((const void *)timpani_step<float>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)T->shared_bytes);
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
    const int stored = t->p.format != KT_TIMPANI_MATRIX_FREE;
    int rc = stored ? KT_OK : fused_accepts(t, err);
    if (rc < 0)
        return rc;
    kt_cuda_timpani *T = (kt_cuda_timpani *)calloc(1, sizeof *T);
    if (!T)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU timpani");
    T->t = t;
    rc = stored ? KT_OK : fused_size(T, err);
    if (rc == KT_OK)
        rc = upload_all(T, R, stored, err);
    if (rc == KT_OK && stored)
        rc = stored_make(T, stream, err);
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
    return T->t->p.coupled ? upload_g(T, err) : KT_OK;
}

int kt_cuda_timpani_launch(kt_cuda_timpani *T, void *next, int single, const long long *step_n,
                           cudaStream_t stream, cudaEvent_t marks[2], kt_error *err)
{
    if (T->stored) {
        int rc = tp_stored_launch(T->stored, next, single, step_n, stream, marks, err);
        return rc < 0 ? rc : marks != NULL;
    }
    if (single)
        timpani_step<float><<<TP_CLUSTER, TP_THREADS, T->shared_bytes, stream>>>(T->d, (float *)next, step_n);
    else
        timpani_step<double><<<TP_CLUSTER, TP_THREADS, T->shared_bytes, stream>>>(T->d, (double *)next, step_n);
    return kt_cuda_launch_check(err, "launching the drum kernel");
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
    if (rc == KT_OK)
        rc = kt_cuda_download(t->a, T->d.a, nn, err);
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
    for (int k = 0; k < T->nalloc; k++)
        kt_cuda_free(T->alloc[k]);
    free(T);
}
