/* timpani_split.cu - the drum's direct solve (timpani_step.c solve_direct,
 * design note 9.2) on the GPU as three kernels a step on the drum's own
 * stream, the membrane's part overlapping the room's next step; agrees with
 * the CPU to rounding.  docs/gpu.md, "The direct solve in split kernels". */
#include "kt_cuda_kernel.h"
#include "kt_cuda_room.h"
#include "timpani_gpu.h"

#include "timpani_plan.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace cg = cooperative_groups;

#define SP_BAND_THREADS 512     /* the membrane kernel's block */
#ifndef SP_BAND_PARTS
#define SP_BAND_PARTS 2         /* membrane kernel blocks a window row: column parts */
#endif
#define SP_STRIP 2              /* window nodes of one column a thread owns: 2 rather
                                   than 4 halves each sweep's serial work a thread, 1 us a
                                   step on the H100 (more threads, the same barriers) */
#define SP_W_CLUSTER 8          /* blocks of the window kernel's cluster */
#define SP_M3_ROWS 2            /* window rows each block of M3 owns */
#define SP_W_THREADS 768        /* the window kernel's block size limit: 80 registers a
                                   thread, enough for every standard drum at 44.1 and 48 kHz
                                   but the 32-inch at 48 kHz (test_gpu_timpani) */
#define SP_M3_THREADS 512       /* M3's */
#define SP_MAX_TAPS 64          /* membrane rows one window row gathers */
#define SP_MAX_BAND_ROWS 60     /* membrane rows the membrane kernel's block forms */
#define SP_MAX_SWEEPS 24        /* Chebyshev sweeps (g < 0.5 needs at most 20) */
#define SP_ACCURACY 0x1p-56     /* the window solves' error bound, relative */

/* Scalars passed between the kernels of a step, in device memory. */
typedef struct sp_scalars {
    double aa, au, ag;          /* a^T a, a^T u^{n-1}, a^T g of the coming step (M3) */
    double fx[2];               /* (F a)^T x_a, (F a)^T x_g (M3's last block) */
    unsigned m3_done;           /* M3's blocks done this step (the last one resets it) */
    double c;                   /* Sherman-Morrison coefficient of the last step (W) */
    long long n;                /* the room's step index at the last W */
} sp_scalars;

/* Column part p of the membrane kernel (make_parts): window columns
 * [win_lo, win_hi), membrane columns formed [col_lo, col_hi), of which it
 * owns [own_lo, own_hi). */
typedef struct sp_parts {
    int win_lo[SP_BAND_PARTS], win_hi[SP_BAND_PARTS], col_lo[SP_BAND_PARTS],
        col_hi[SP_BAND_PARTS], own_lo[SP_BAND_PARTS], own_hi[SP_BAND_PARTS];
} sp_parts;

/* What the three kernels take by value besides tp_dev: the step's buffers,
 * picked by the host from the drum's phase. */
typedef struct sp_args {
    int K, sw, w_rows, m3_blocks, w_buf_rows, m3_buf_rows;
    const int *band_lo, *band_hi, *own_lo, *own_hi; /* membrane rows of each window row's block */
    sp_parts parts;
    long long pd0, pu0, pitch;  /* device index of the layers at window node (i, j): p0 + j pitch + i */
    double kappa;
    double cheb_dc;             /* Chebyshev: the centre 1 + g/2 of the spectrum */
    double cheb_keep[SP_MAX_SWEEPS], cheb_step[SP_MAX_SWEEPS]; /* per sweep (sp_sweeps) */
    const int *e_il;            /* membrane row l lies between window rows e_il[l], +1 */
    const double *e_fa;         /*   at fraction e_fa[l] */
    const double *u, *u1;       /* u^n, u^{n-1} */
    double *unew;               /* u^{n+1} */
    const double *a, *g;        /* a^n, g^n of this step */
    double *a2, *g2;            /* a^{n+1}, g^{n+1} (UM), or this step's when priming */
    const double *w1;           /* w^{n-1} */
    double *wnew;               /* w^{n+1} */
    double *D1;                 /* D^{n-1} in, D^{n+1} out */
    double *qpad;               /* q on the window padded by one (E's input) */
    double *fa, *fg, *xa, *xg;  /* F a, F g, x_a, x_g */
    double *um_part, *m3_part, *w_part;
    sp_scalars *sc;
    int rot_u, rot_w, rot_d;    /* the rotation after this step (download) */
} sp_args;

struct tp_split {
    tp_plan *t;
    const kt_cuda_room *R;
    int K, sw, w_rows, w_threads, w_buf_rows, m3_blocks, m3_threads, m3_buf_rows;
    sp_parts parts;
    size_t band_smem;
    double g;                   /* G's largest row sum: (I + G) has eigenvalues in [1, 1 + g] */
    double cheb_keep[SP_MAX_SWEEPS], cheb_step[SP_MAX_SWEEPS]; /* made by shape() */
    size_t w_smem, m3_smem;
    int phase;                  /* steps launched mod 6: u, w rotate by 3, D, a, g by 2 */
    int launched;               /* a step ran since the last priming */
    int m3_due;                 /* the last step's M3 is not launched yet (tp_split_launch) */
    int w_due;                  /* the room's stream has not waited for this step's W yet */
    int *e_il, *band;           /* band: band_lo, band_hi, own_lo, own_hi, nwx each */
    double *e_fa, *A[2], *Gm[2], *qpad, *fa, *fg, *xa, *xg, *um_part, *m3_part, *w_part;
    sp_scalars *sc;
    cudaStream_t side;
    cudaEvent_t ev_air, ev_w, ev_m; /* this step's air; W done; the membrane terms done */
};
#define SP_EVENTS(S) {&(S)->ev_air, &(S)->ev_w, &(S)->ev_m}

/* `to` waits for what `from` has launched so far. */
static void hand_over(cudaEvent_t ev, cudaStream_t from, cudaStream_t to)
{
    cudaEventRecord(ev, from);
    cudaStreamWaitEvent(to, ev, 0);
}

/* ---- device helpers ---- */

/* NV sums over the block, the same order every time; the results in
 * thread 0's v. */
template <int NV>
__device__ void sp_block_sum(double v[NV], double (*red)[32])
{
    const int tid = threadIdx.x, wid = tid >> 5, lane = tid & 31;
    const int warps = (int)((blockDim.x + 31) >> 5);
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const double s = tp_warp_sum(v[k]);
        if (lane == 0)
            red[k][wid] = s;
    }
    __syncthreads();
    if (tid == 0)
#pragma unroll
        for (int k = 0; k < NV; k++) {
            double s = 0.0;
            for (int q = 0; q < warps; q++)
                s += red[k][q];
            v[k] = s;
        }
}

/* NV sums of partials part[NV q + k], q < count, by the whole block (each
 * thread loads its share at once, from L2: other blocks wrote them; a fixed
 * order, so the same bits every time); the results in thread 0's out. */
template <int NV>
__device__ void sp_sum_partials(const double *part, int count, double out[NV], double (*red)[32])
{
    const int tid = threadIdx.x, nthreads = blockDim.x;
#pragma unroll
    for (int k = 0; k < NV; k++)
        out[k] = 0.0;
    for (int q = tid; q < count; q += nthreads)
#pragma unroll
        for (int k = 0; k < NV; k++)
            out[k] += __ldcg(part + NV * q + k);
    sp_block_sum<NV>(out, red);
}

/* SP_STRIP window nodes of one column (rows r .., column j) and G's rows for
 * them, in the order (r-1, j-1) (r-1, j) (r-1, j+1) (r, j-1) ... (r+1, j+1).
 * Neighbouring threads take neighbouring columns, so a warp's shared-memory
 * loads are consecutive doubles (a thread per row strip reads with a stride
 * and its loads conflict four ways: measured 3x slower).  Rows past `last`
 * get zero rows. */
struct sp_strip {
    double g[SP_STRIP][9];
};

__device__ void sp_strip_load(const tp_dev &d, int r, int j, int last, sp_strip *S)
{
    const int w = d.nwy;
#pragma unroll
    for (int k = 0; k < SP_STRIP; k++) {
        const int i = (r + k) * w + j;
        const bool in = r + k < last;
        S->g[k][0] = in ? d.g[4][i - w - 1] : 0.0;
        S->g[k][1] = in ? d.g[3][i - w] : 0.0;
        S->g[k][2] = in ? d.g[2][i - w + 1] : 0.0;
        S->g[k][3] = in ? d.g[1][i - 1] : 0.0;
        S->g[k][4] = in ? d.g[0][i] : 0.0;
        S->g[k][5] = in ? d.g[1][i] : 0.0;
        S->g[k][6] = in ? d.g[2][i] : 0.0;
        S->g[k][7] = in ? d.g[3][i] : 0.0;
        S->g[k][8] = in ? d.g[4][i] : 0.0;
    }
}

/* out[k] = (G y) at the strip's nodes; y in shared memory with row stride
 * sw, `at` the strip's first node. */
__device__ __forceinline__ void sp_strip_apply(const sp_strip &S, const double *at, int sw,
                                               double out[SP_STRIP])
{
    double y[SP_STRIP + 2][3];
#pragma unroll
    for (int r = 0; r < SP_STRIP + 2; r++)
#pragma unroll
        for (int c = 0; c < 3; c++)
            y[r][c] = at[(r - 1) * sw + c - 1];
#pragma unroll
    for (int k = 0; k < SP_STRIP; k++) {
        double v = 0.0;
#pragma unroll
        for (int dr = 0; dr < 3; dr++)
#pragma unroll
            for (int dc = 0; dc < 3; dc++)
                v += S.g[k][dr * 3 + dc] * y[k + dr][dc];
        out[k] = v;
    }
}

/* The Chebyshev iteration for (I + G) x = t (eigenvalues in [1, 1 + g]):
 * x_1 = t / dc, then K sweeps x_{k+1} = x_k + D_k, D_k = rho_k rho_{k-1}
 * D_{k-1} + (2 rho_k / hw) (t - x_k - G x_k), rho_k = 1 / (2 s1 - rho_{k-1}),
 * on rows [r0 - (K - k), r1 + (K - k)) at sweep k (dc = 1 + g/2, hw = g/2,
 * s1 = dc/hw).  x_1 is already in the first of the two buffers `len` apart
 * from `base` on the rows the block holds; this thread's strip starts at row
 * r (index at), t in tv, x_1 in xv; keep_k = rho_k rho_{k-1} and step_k =
 * 2 rho_k / hw are made by the host (sp_args).  On return xv holds the
 * strip's values after the last sweep that reached it (the block's own
 * rows: x_{K+1}). */
__device__ void sp_sweeps(const sp_args &s, int nwx, const sp_strip &S, bool active, int r,
                          int r0, int r1, double *base, int len, int at,
                          const double tv[SP_STRIP], double xv[SP_STRIP])
{
    double *src = base, *dst = base + len, dx[SP_STRIP];
#pragma unroll
    for (int k = 0; k < SP_STRIP; k++)
        dx[k] = xv[k];
    for (int sweep = 1; sweep <= s.K; sweep++) {
        const int lo = max(0, r0 - (s.K - sweep)), hi = min(nwx, r1 + (s.K - sweep));
        const double keep = s.cheb_keep[sweep - 1], step = s.cheb_step[sweep - 1];
        if (active && r < hi && r + SP_STRIP > lo) {
            double gx[SP_STRIP];
            sp_strip_apply(S, src + at, s.sw, gx);
#pragma unroll
            for (int k = 0; k < SP_STRIP; k++)
                if (r + k >= lo && r + k < hi) {
                    dx[k] = keep * dx[k] + step * (tv[k] - xv[k] - gx[k]);
                    xv[k] += dx[k];
                    dst[at + k * s.sw] = xv[k];
                }
        }
        double *sw = src;
        src = dst;
        dst = sw;
        __syncthreads();
    }
}

/* ---- (UM+M2) the membrane: u^{n+1}, the next step's a, g and F a, F g ---- */

/* E's position of a membrane row (window row il, fraction fa) and column. */
struct sp_erow {
    int il;
    double fa;
};
struct sp_ecol {
    int jm;
    double fb;
};

/* (E q) at a membrane node: q on the padded window interpolated at the
 * node's window position (row il, fraction fa; column jm, fraction fb). */
__device__ __forceinline__ double sp_eq(const sp_args &s, int nwy, const sp_erow &er,
                                        const sp_ecol &ec)
{
    const int sw = nwy + 2;
    const double *r0 = s.qpad + (er.il + 1) * sw + 1 + ec.jm, *r1 = r0 + sw;
    const double q00 = r0[0], q01 = r0[1], q10 = r1[0], q11 = r1[1];
    const double s0 = (1.0 - ec.fb) * q00 + ec.fb * q01, s1 = (1.0 - ec.fb) * q10 + ec.fb * q11;
    return (1.0 - er.fa) * s0 + er.fa * s1;
}

/* The strikes active at some time in [t0_s, t1_s] whose node lies in a
 * block's rows and columns, in index order: warp w scans its share of the
 * list with ballots and keeps up to SP_TILE_STRIKES hits (more: *overflow,
 * and the nodes scan everything).  A window rather than the step's time, so
 * that the membrane kernel can do this before its wait (the step's time is
 * known exactly only after it); sp_strikes_at tests the time itself. */
#define SP_TILE_STRIKES 8
#define SP_STRIKE_WARPS 8       /* warps that scan the strike list (blocks have at least 8) */
struct sp_tile_strikes {
    int count[SP_STRIKE_WARPS];
    int list[SP_STRIKE_WARPS][SP_TILE_STRIKES];
    int overflow;
};

__device__ __forceinline__ bool sp_strike_on(const tp_dev &d, int k, double time_s)
{
    const double tau = time_s - d.st_start[k];
    return tau >= 0.0 && tau < d.st_dur[k];
}

__device__ __forceinline__ double sp_strike_force(const tp_dev &d, int k, double time_s)
{
    const double tau = time_s - d.st_start[k];
    return d.strike_scale * 0.5 * d.st_force[k] *
           (1.0 - cos(2.0 * 3.14159265358979323846 * tau / d.st_dur[k]));
}

__device__ void sp_find_strikes(const tp_dev &d, int l0, int rows, int m0, int cols,
                                double t0_s, double t1_s, sp_tile_strikes *T)
{
    const int tid = threadIdx.x, wid = tid >> 5, lane = tid & 31;
    const int warps = SP_STRIKE_WARPS, share = (d.nstrikes + warps - 1) / warps;
    const int first = wid * share, last = min(d.nstrikes, first + share);
    int count = 0;
    if (tid == 0)
        T->overflow = 0;
    __syncthreads();
    if (wid >= SP_STRIKE_WARPS)
        return;
    for (int base = first; base < last; base += 32) {
        const int k = base + lane;
        bool hit = false;
        if (k < last) {
            const int node = d.st_node[k], l = node / d.n, m = node - l * d.n;
            hit = l >= l0 && l < l0 + rows && m >= m0 && m < m0 + cols &&
                  d.st_start[k] <= t1_s && d.st_start[k] + d.st_dur[k] > t0_s;
        }
        const unsigned ball = __ballot_sync(0xffffffffu, hit);
        const int pos = count + __popc(ball & ((1u << lane) - 1u));
        if (hit && pos < SP_TILE_STRIKES)
            T->list[wid][pos] = k;
        count += __popc(ball);
    }
    if (lane == 0) {
        T->count[wid] = min(count, SP_TILE_STRIKES);
        if (count > SP_TILE_STRIKES)
            T->overflow = 1;
    }
}

/* The strikes' force at membrane node j (processTimpani's add_strikes, in
 * the list's order). */
__device__ double sp_strikes_at(const tp_dev &d, const sp_tile_strikes *T, int j, double time_s)
{
    double f = 0.0;
    if (T->overflow) {
        for (int k = 0; k < d.nstrikes; k++)
            if (d.st_node[k] == j && sp_strike_on(d, k, time_s))
                f += sp_strike_force(d, k, time_s);
        return f;
    }
    for (int w = 0; w < SP_STRIKE_WARPS; w++)
        for (int q = 0; q < T->count[w]; q++) {
            const int k = T->list[w][q];
            if (d.st_node[k] == j && sp_strike_on(d, k, time_s))
                f += sp_strike_force(d, k, time_s);
        }
    return f;
}

/* (UM+M2) one block per window row i and column part (blockIdx.y).  ADVANCE
 * 1: u^{n+1} = g - (sigma + c) a + E q from this step's a, g, then
 * a2 = cV1 D u^{n+1}, g2 = B u^{n+1} +
 * C u^n + strikes at (n+1) k; ADVANCE 0 (priming): a2, g2 from u^n, u^{n-1}
 * at prime_time_s.  The block forms them on the membrane rows that window
 * row i gathers (band_lo[i] .. band_hi[i]: e_il = i-1 or i), u^{n+1} over
 * those rows and two around them in shared memory, L = D u over one around;
 * it stores u^{n+1}, a2, g2 and the partial sums of a^T a, a^T u_old,
 * a^T g for the rows it owns (e_il = i; row 0 also e_il = -1), and then
 * I23's separable gathers of a2 and g2 for window row i from shared memory:
 * F a and F g (times kappa = mu_c h^2/Q^2, zero off chi).  Rows next to
 * two window rows are formed by both blocks with the same formula.  A part
 * does this on the membrane columns its window columns gather (col_lo ..
 * col_hi) and stores only its own columns (own_lo .. own_hi), so the
 * parts' stores and partial sums partition the membrane: SP_BAND_PARTS
 * blocks a window row halve each block's latency-bound loops (the middle
 * row's block took 10.4 us after its wait with the whole width, H100). */
template <int ADVANCE>
__global__ void __launch_bounds__(SP_BAND_THREADS)
split_band(tp_dev d, sp_args s, double prime_time_s)
{
    extern __shared__ double bs[];
    __shared__ double red[3][32];
    __shared__ double rw[SP_MAX_TAPS];
    __shared__ int rl[SP_MAX_TAPS];
    __shared__ sp_tile_strikes T;
    __shared__ long long n_pre;
    __shared__ sp_erow er[SP_MAX_BAND_ROWS + 4];
    const int i = blockIdx.x, part = blockIdx.y, n = d.n, tid = threadIdx.x, nt = blockDim.x;
    const int l0 = s.band_lo[i], rows = s.band_hi[i] - l0, own0 = s.own_lo[i], own1 = s.own_hi[i];
    const int m0 = s.parts.col_lo[part], cols = s.parts.col_hi[part] - m0;
    const int uc = cols + 4, lc = cols + 2, oc0 = s.parts.own_lo[part], oc1 = s.parts.own_hi[part];
    const int nu = (rows + 4) * uc, nl = (rows + 2) * lc;
    double *U = bs, *L = U + nu, *A2 = L + nl, *G2 = A2 + (size_t)rows * cols,
           *sepA = G2 + (size_t)rows * cols, *sepG = sepA + cols, *AU = sepG + cols,
           *UO = AU + nu, *cw = UO + nl;
    sp_ecol *ec = (sp_ecol *)(cw + d.nwy * d.col_k);
    int *cm = (int *)(ec + uc);
    unsigned char *MK = (unsigned char *)(cm + d.nwy * d.col_k);
    const double *uo = ADVANCE ? s.u : s.u1;
    const int KR = d.row_k, KC = d.col_k;
    for (int q = tid; q < KR; q += nt) {
        rl[q] = d.row_gather[i * KR + q].x;
        rw[q] = d.row_gw[i * KR + q];
    }
    for (int q = tid; q < d.nwy * KC; q += nt) {
        cw[q] = d.col_gw[q];
        cm[q] = d.col_gm[q] - d.mlo;
    }
    for (int q = tid; q < rows + 4; q += nt) {
        const int l = min(max(l0 - 2 + q, 0), n - 1);
        er[q].il = s.e_il[l];
        er[q].fa = s.e_fa[l];
    }
    for (int q = tid; q < uc; q += nt) {
        const int m = min(max(m0 - 2 + q, 0), n - 1);
        ec[q].jm = d.e_jm[m];
        ec[q].fb = d.e_fb[m];
    }
    /* The membrane's own arrays need nothing from W either: over the U
     * region the mask, g^n and a^n (u^n when priming), over the L region
     * the u the new g takes its C terms from. */
#pragma unroll 4
    for (int k = tid; k < nu; k += nt) {
        const int ll = k / uc, mm = k - ll * uc, l = l0 - 2 + ll, m = m0 - 2 + mm;
        const bool inb = l >= 0 && l < n && m >= 0 && m < n;
        const int j = inb ? l * n + m : 0;
        const unsigned char in = inb ? d.mask[j] : 0;
        const double gv = inb ? (ADVANCE ? s.g[j] : s.u[j]) : 0.0, av = inb && ADVANCE ? s.a[j] : 0.0;
        MK[k] = in;
        U[k] = in ? gv : 0.0;
        AU[k] = in ? av : 0.0;
    }
#pragma unroll 4
    for (int k = tid; k < nl; k += nt) {
        const int ll = k / lc, mm = k - ll * lc, l = l0 - 1 + ll, m = m0 - 1 + mm;
        UO[k] = l >= 0 && l < n && m >= 0 && m < n ? uo[l * n + m] : 0.0;
    }
    /* This step's time is (n + 1) k with n the room's step at W's end.  W
     * may or may not have stored n yet (n_pre is the last step's or this
     * one's), so the strikes are found over a step either side of both
     * times it can be, and sp_strikes_at tests each at the time itself. */
    if (tid == 0)
        n_pre = __ldcg(&s.sc->n);
    __syncthreads();
    if (ADVANCE)
        sp_find_strikes(d, l0, rows, m0, cols, (double)n_pre * d.k, (double)(n_pre + 3) * d.k, &T);
    else
        sp_find_strikes(d, l0, rows, m0, cols, prime_time_s - d.k, prime_time_s + d.k, &T);
    __syncthreads();
    /* The tables above are the drum's own; what W wrote comes after this. */
    kt_wait_prior_grid();
    if (d.state->bad)
        return;
    const double cs = ADVANCE ? s.sc->au + s.sc->c : 0.0;
    const long long n_now = s.sc->n;
    const double time_s = ADVANCE ? (double)(n_now + 1) * d.k : prime_time_s;
    if (ADVANCE && n_now != n_pre && n_now != n_pre + 1) { /* the first step after a prime */
        sp_find_strikes(d, l0, rows, m0, cols, time_s - d.k, time_s + d.k, &T);
        __syncthreads();
    }
    /* u^{n+1} = g - (sigma + c) a + E q on the U region (priming: u^n,
     * staged above) */
    if (ADVANCE)
#pragma unroll 4
        for (int k = tid; k < nu; k += nt)
            if (MK[k]) {
                const int ll = k / uc, mm = k - ll * uc;
                U[k] = U[k] - cs * AU[k] + sp_eq(s, d.nwy, er[ll], ec[mm]);
            }
    __syncthreads();
    for (int k = tid; k < nl; k += nt) {
        const int ll = k / lc, mm = k - ll * lc;
        const double *c = U + (ll + 1) * uc + mm + 1;
        L[k] = MK[(ll + 1) * uc + mm + 1] ? c[-uc] + c[uc] + c[-1] + c[1] - 4.0 * c[0] : 0.0;
    }
    __syncthreads();
    double psum[3] = {0.0, 0.0, 0.0};
#pragma unroll 2
    for (int k = tid; k < rows * cols; k += nt) {
        const int ll = k / cols, mm = k - ll * cols, l = l0 + ll, m = m0 + mm, j = l * n + m;
        double av = 0.0, gv = 0.0;
        if (MK[(ll + 2) * uc + mm + 2]) {
            const double *c = L + (ll + 1) * lc + mm + 1, *o = UO + (ll + 1) * lc + mm + 1;
            const double un = U[(ll + 2) * uc + mm + 2], Lc = c[0];
            const double DD = c[-lc] + c[lc] + c[-1] + c[1] - 4.0 * Lc;
            const double uoc = o[0];
            gv = d.cB0 * un + d.cB1 * Lc + d.cB2 * DD + d.cC0 * uoc;
            if (d.lossy)
                gv += d.cC1 * (o[-lc] + o[lc] + o[-1] + o[1] - 4.0 * uoc);
            gv += sp_strikes_at(d, &T, j, time_s);
            av = d.cV1 * Lc;
            if (l >= own0 && l < own1 && m >= oc0 && m < oc1) {
                s.a2[j] = av;
                s.g2[j] = gv;
                if (ADVANCE)
                    s.unew[j] = un;
                psum[0] += av * av;
                psum[1] += av * uoc;
                psum[2] += av * gv;
            }
        }
        A2[k] = av;
        G2[k] = gv;
    }
    __syncthreads();
    /* F a, F g for window row i: its membrane rows (all in this band), then
     * each window column's membrane columns */
    for (int c = tid; c < cols; c += nt) {
        double ta = 0.0, tg = 0.0;
        for (int q = 0; q < KR; q++) {
            const int ll = rl[q] - l0;
            if (ll >= 0 && ll < rows) {
                ta += rw[q] * A2[ll * cols + c];
                tg += rw[q] * G2[ll * cols + c];
            }
        }
        sepA[c] = ta;
        sepG[c] = tg;
    }
    __syncthreads();
    for (int j = s.parts.win_lo[part] + tid; j < s.parts.win_hi[part]; j += nt) {
        const int idx = i * d.nwy + j;
        double va = 0.0, vg = 0.0;
        if (d.chi[idx])
            for (int q = j * KC; q < (j + 1) * KC; q++) {
                const int c = cm[q] - (m0 - d.mlo); /* padding (weight 0) may fall outside */
                if (c >= 0 && c < cols) {
                    va += cw[q] * sepA[c];
                    vg += cw[q] * sepG[c];
                }
            }
        s.fa[idx] = s.kappa * va;
        s.fg[idx] = s.kappa * vg;
    }
    sp_block_sum<3>(psum, red);
    if (tid == 0)
        for (int k = 0; k < 3; k++)
            s.um_part[3 * (i * SP_BAND_PARTS + part) + k] = psum[k];
}

/* Where a thread of a sweep kernel stands: its strip's first row r (rows
 * from `first`, SP_STRIP a strip), its column j, and the strip's first node in
 * the block's buffers (which hold rows first-1 .. with stride sw, one zero
 * column either side). */
struct sp_place {
    int r, j, at;
    bool active;
};

__device__ __forceinline__ sp_place sp_place_of(const sp_args &s, int nwy, int first, int last)
{
    sp_place p;
    const int tid = threadIdx.x, group = tid / nwy;
    p.j = tid - group * nwy;
    p.r = first + SP_STRIP * group;
    p.active = p.r < last;
    p.at = (p.r - first + 1) * s.sw + p.j + 1;
    return p;
}

/* Zero-fills len doubles of a block's buffers (their padding must read 0). */
__device__ __forceinline__ void sp_zero(double *buf, int len)
{
    for (int k = threadIdx.x; k < len; k += blockDim.x)
        buf[k] = 0.0;
}

/* ---- (M3) x_a and x_g on the window ---- */

/* Block (x, 0) solves for x_a, block (x, 1) for x_g, on window rows
 * [x SP_M3_ROWS, (x+1) SP_M3_ROWS) and K rows either side. */
__global__ void __launch_bounds__(SP_M3_THREADS, 1) split_solve_a(tp_dev d, sp_args s)
{
    extern __shared__ double sm[];
    __shared__ double red[3][32];
    const int b = blockIdx.x, rhs = blockIdx.y, w = d.nwy;
    const int r0 = b * SP_M3_ROWS, r1 = min(d.nwx, r0 + SP_M3_ROWS);
    const int e0 = max(0, r0 - s.K), e1 = min(d.nwx, r1 + s.K);
    const int len = s.m3_buf_rows * s.sw;
    const double *rhs_in = rhs ? s.fg : s.fa;
    double *out = rhs ? s.xg : s.xa;
    const sp_place p = sp_place_of(s, w, e0, e1);
    kt_let_next_grid_start(); /* W may start its air-only part */
    if (d.state->bad)
        return;
    sp_strip S;
    double tv[SP_STRIP], yv[SP_STRIP];
    if (p.active)
        sp_strip_load(d, p.r, p.j, e1, &S);
    sp_zero(sm, 2 * len);
#pragma unroll
    for (int k = 0; k < SP_STRIP; k++) {
        const bool in = p.active && p.r + k < e1;
        tv[k] = in ? rhs_in[(p.r + k) * w + p.j] : 0.0;
        yv[k] = tv[k] / s.cheb_dc;
    }
    __syncthreads();
    if (p.active)
#pragma unroll
        for (int k = 0; k < SP_STRIP; k++)
            sm[p.at + k * s.sw] = yv[k];
    __syncthreads();
    sp_sweeps(s, d.nwx, S, p.active, p.r, r0, r1, sm, len, p.at, tv, yv);
    /* (F a)^T x over the own rows (tv is F a itself for x_a) */
    double part[1] = {0.0};
    if (p.active)
#pragma unroll
        for (int k = 0; k < SP_STRIP; k++) {
            const int r = p.r + k;
            if (r >= r0 && r < r1) {
                out[r * w + p.j] = yv[k];
                part[0] += (rhs ? s.fa[r * w + p.j] : tv[k]) * yv[k];
            }
        }
    __shared__ int last;
    sp_block_sum<1>(part, red);
    if (threadIdx.x == 0) {
        s.m3_part[2 * b + rhs] = part[0];
        __threadfence(); /* the partial before the count, for the last block */
        last = atomicAdd(&s.sc->m3_done, 1u) == 2u * gridDim.x - 1u;
    }
    __syncthreads();
    if (last) { /* W's sums, so that W after its wait only loads them */
        __threadfence();
        double fx[2];
        sp_sum_partials<2>(s.m3_part, s.m3_blocks, fx, red);
        if (threadIdx.x == 0) {
            s.sc->fx[0] = fx[0];
            s.sc->fx[1] = fx[1];
            s.sc->m3_done = 0;
        }
    }
    if (b == 0 && rhs == 0) { /* the membrane's partial sums */
        __syncthreads();
        double t[3];
        sp_sum_partials<3>(s.um_part, d.nwx * SP_BAND_PARTS, t, red); /* one a membrane block */
        if (threadIdx.x == 0) {
            s.sc->aa = t[0];
            s.sc->au = t[1];
            s.sc->ag = t[2];
        }
    }
}

/* ---- (W) the window step, after the air ---- */

__device__ __forceinline__ double sp_layer(const float *f, long long i) { return (double)f[i]; }
__device__ __forceinline__ double sp_layer(const double *f, long long i) { return f[i]; }
/* f[i] = old + dv as room_add rounds it (float + (float)dv, or double + dv). */
__device__ __forceinline__ void sp_layer_set(float *f, long long i, double old, double dv) { f[i] = __fadd_rn((float)old, (float)dv); }
__device__ __forceinline__ void sp_layer_set(double *f, long long i, double old, double dv) { f[i] = __dadd_rn(old, dv); }

/* One window step on a cluster; block `rank` owns window rows [r0, r1).
 * Shared memory, each array over rows e0-1 .. (ext layout, stride sw): v,
 * the two iterate buffers, and the own rows' layer values and w^{n-1}
 * staged while the layers are read (the strip threads keep only G's rows
 * and their iterates in registers; one thread a node after the sweeps). */
#define SP_W_ARRAYS 7
template <typename REAL>
__global__ void __cluster_dims__(SP_W_CLUSTER, 1, 1) __launch_bounds__(SP_W_THREADS, 1)
split_window(tp_dev d, sp_args s, REAL *__restrict__ next, const long long *__restrict__ step_n)
{
    extern __shared__ double sm[];
    __shared__ double red[3][32];
    __shared__ double coef;
    cg::cluster_group cl = cg::this_cluster();
    tp_dev_state *st = d.state;
    const int rank = (int)cl.block_rank(), w = d.nwy, nwx = d.nwx;
    if (st->bad)
        return;
#ifdef SP_PHASES
    long long mk[8];
#define SPM(k) (mk[k] = clock64())
#else
#define SPM(k) ((void)0)
#endif
    SPM(0);
    const int r0 = min(nwx, rank * s.w_rows), r1 = min(nwx, r0 + s.w_rows);
    const int e0 = max(0, r0 - s.K - 1), e1 = min(nwx, r1 + s.K + 1);
    const int t0 = max(0, r0 - s.K), t1 = min(nwx, r1 + s.K);
    const int len = s.w_buf_rows * s.sw;
    double *vbuf = sm, *ybuf = sm + len, *pd_s = sm + 3 * len, *pu_s = sm + 4 * len,
           *w1_s = sm + 5 * len, *fa_s = sm + 6 * len;
    const sp_place p = sp_place_of(s, w, e0, e1);
    const bool in_t = p.active && p.r < t1 && p.r + SP_STRIP > t0;
    sp_strip S;
    if (in_t) /* loads in flight while the layers are read */
        sp_strip_load(d, p.r, p.j, e1, &S);
    sp_zero(sm, 3 * len);
    /* v = mu_c w^{n-1} + Bf (Dhat - D^{n-1}) on chi, read before the cluster
     * barrier below (other blocks write these rows after it). */
    double v[SP_STRIP];
    {
        double w1v[SP_STRIP], d1v[SP_STRIP], fav[SP_STRIP];
        long long ip[SP_STRIP], iu[SP_STRIP];
        bool inw[SP_STRIP], chi[SP_STRIP], own[SP_STRIP];
#pragma unroll
        for (int k = 0; k < SP_STRIP; k++) {
            const int r = p.r + k, i = r * w + p.j;
            inw[k] = p.active && r < e1;
            own[k] = inw[k] && r >= r0 && r < r1;
            ip[k] = inw[k] ? s.pd0 + p.j * s.pitch + r : -1;
            iu[k] = inw[k] ? s.pu0 + p.j * s.pitch + r : -1;
            chi[k] = inw[k] && d.chi[i];
            w1v[k] = inw[k] ? s.w1[i] : 0.0;
            d1v[k] = inw[k] ? s.D1[i] : 0.0;
            fav[k] = own[k] ? s.fa[i] : 0.0; /* the membrane kernel's, done before M3 began */
        }
        __syncthreads(); /* the zero fill is done */
#pragma unroll
        for (int k = 0; k < SP_STRIP; k++) {
            const double pd = ip[k] >= 0 ? sp_layer(next, ip[k]) : 0.0;
            const double pu = iu[k] >= 0 ? sp_layer(next, iu[k]) : 0.0;
            v[k] = chi[k] ? d.mu_c * w1v[k] + d.Bf * ((pd - pu) - d1v[k]) : 0.0;
            const int at = p.at + k * s.sw;
            if (inw[k])
                vbuf[at] = v[k];
            if (own[k]) {
                pd_s[at] = pd;
                pu_s[at] = pu;
                w1_s[at] = w1v[k];
                fa_s[at] = fav[k];
            }
        }
    }
    __syncthreads();
    SPM(1);
    /* t = G v, x_1 = t / dc of y_v = (I + G)^{-1} G v, on rows [t0, t1) */
    double tv[SP_STRIP], yv[SP_STRIP];
    if (in_t) {
        sp_strip_apply(S, vbuf + p.at, s.sw, tv);
#pragma unroll
        for (int k = 0; k < SP_STRIP; k++) {
            yv[k] = tv[k] / s.cheb_dc;
            if (p.r + k >= t0 && p.r + k < t1)
                ybuf[p.at + k * s.sw] = yv[k];
        }
    }
    __syncthreads();
    SPM(2);
    sp_sweeps(s, nwx, S, in_t, p.r, r0, r1, ybuf, len, p.at, tv, yv);
    const double *yfin = ybuf + (s.K & 1) * len; /* the buffer the last sweep wrote */
    SPM(3);
    /* (F a)^T (v - y_v) over the cluster, one thread a node of the own
     * rows; with x_r = x_g - sigma x_a + y_v the coefficient's sum
     * (F a)^T (v - x_r) is that - (F a)^T x_g + sigma (F a)^T x_a, and M3
     * gives the last two. */
    const int nown = (r1 - r0) * w;
    double part[1] = {0.0};
    for (int q = threadIdx.x; q < nown; q += blockDim.x) {
        const int at = (q / w + r0 - e0 + 1) * s.sw + q % w + 1;
        part[0] += fa_s[at] * (vbuf[at] - yfin[at]);
    }
    sp_block_sum<1>(part, red);
    if (threadIdx.x == 0)
        s.w_part[rank] = part[0];
    kt_let_next_grid_start(); /* the membrane kernel may stage its tables */
    SPM(4);
    cl.sync();
    double P = 0.0; /* (F a)^T (v - y_v), the cluster's */
    if (threadIdx.x == 0)
        for (int b = 0; b < SP_W_CLUSTER; b++)
            P += __ldcg(s.w_part + b);
    /* Everything above needed only the air, the membrane kernel's F a and
     * W's own last step; launched as M3's programmatic dependent, W got here
     * while M3 ran, and waits now for x_a, x_g and the scalars. */
    kt_wait_prior_grid();
    SPM(5);
    const double aa = s.sc->aa, sigma = s.sc->au, ag = s.sc->ag;
    if (!isfinite(aa)) { /* the membrane blew up: frozen, the host reports it */
        if (rank == 0 && threadIdx.x == 0) {
            st->bad = 1;
            st->bad_step = st->steps;
        }
        return;
    }
    if (threadIdx.x == 0) {
        const double fx[2] = {s.sc->fx[0], s.sc->fx[1]}; /* (F a)^T x_a, (F a)^T x_g */
        P += sigma * fx[0] - fx[1];
        const double azr = ag - sigma * aa + P / s.kappa;
        coef = azr / (1.0 + aa - fx[0] / s.kappa);
    }
    __syncthreads();
    SPM(6);
    /* w^{n+1} = (x_r - c x_a)/mu_c, y = w^{n+1} - w^{n-1}, the layers
     * Psi_pd -= g6 y and Psi_pu += g6 y, D^{n+1} = Dhat - 2 g6 y, q */
    const double c = coef, g6 = d.gamma6;
    for (int q = threadIdx.x; q < nown; q += blockDim.x) {
        const int r = r0 + q / w, j = q % w, i = r * w + j, at = (r - e0 + 1) * s.sw + j + 1;
        const long long ip = s.pd0 + j * s.pitch + r, iu = s.pu0 + j * s.pitch + r;
        const bool chi = d.chi[i];
        const double xa = s.xa[i], xr = s.xg[i] - sigma * xa + yfin[at];
        const double pd = pd_s[at], pu = pu_s[at];
        const double wv = (xr - c * xa) / d.mu_c;
        const double y = wv - w1_s[at];
        s.wnew[i] = wv;
        s.D1[i] = (pd - pu) - 2.0 * g6 * y;
        sp_layer_set(next, ip, pd, -g6 * y);
        sp_layer_set(next, iu, pu, g6 * y);
        s.qpad[(r + 1) * (w + 2) + 1 + j] = chi ? vbuf[at] - xr + c * xa : 0.0;
    }
    SPM(7);
#ifdef SP_PHASES
    if (rank == 0 && threadIdx.x == 0 && st->steps % 500 == 0)
        printf("W cycles: v %lld  t %lld  sweeps %lld  part %lld  cluster+M3 %lld  coef %lld  out %lld\n",
               mk[1] - mk[0], mk[2] - mk[1], mk[3] - mk[2], mk[4] - mk[3], mk[5] - mk[4],
               mk[6] - mk[5], mk[7] - mk[6]);
#endif
    if (rank == 0 && threadIdx.x == 0) {
        s.sc->c = c;
        s.sc->n = *step_n;
        st->last_iterations = 1;
        st->last_increment = 0.0;
        st->rot_u = s.rot_u;
        st->rot_w = s.rot_w;
        st->rot_d = s.rot_d;
        st->steps++;
    }
}

/* ---- host side ---- */

int tp_split_wanted(const tp_plan *t)
{
    return t->p.format == KT_TIMPANI_MATRIX_FREE && t->p.coupled &&
           t->p.solver == KT_SOLVE_DIRECT;
}

/* The largest row sum of |G|: a bound on its spectral radius. */
static double g_bound(const tp_plan *t)
{
    double g = 0.0;
    for (int i = 0; i < t->G.nrows; i++) {
        double s = 0.0;
        for (int q = t->G.ptr[i]; q < t->G.ptr[i + 1]; q++)
            s += fabs(t->G.val[q]);
        g = s > g ? s : g;
    }
    return g;
}

/* Chebyshev sweeps after x_1 for the error bound 2 tau^(K+1) <= SP_ACCURACY
 * of the solution, tau = (sqrt(1+g) - 1)/(sqrt(1+g) + 1) (-1: g too large
 * for the kernels' ghost rows, g >= 0.5). */
static int sweeps_for(double g)
{
    if (!(g < 0.5))
        return -1;
    if (g == 0.0)
        return 0;
    const double q = sqrt(1.0 + g), tau = (q - 1.0) / (q + 1.0);
    const int K = (int)ceil(log(SP_ACCURACY / 2.0) / log(tau)) - 1;
    return K < 0 ? 0 : K;
}

/* Launch shapes for K sweeps; KT_ENOTSUP when they do not fit. */
static int shape(tp_split *S, const tp_plan *t, int K, kt_error *err)
{
    S->K = K;
    /* the Chebyshev recurrence's coefficients: rho_k = 1 / (2 s1 - rho_{k-1}) */
    const double hw = 0.5 * S->g, s1 = S->g > 0.0 ? (1.0 + hw) / hw : 1.0;
    double rho_prev = 1.0 / s1;
    for (int k = 0; k < K && k < SP_MAX_SWEEPS; k++) {
        const double rho = 1.0 / (2.0 * s1 - rho_prev);
        S->cheb_keep[k] = rho * rho_prev;
        S->cheb_step[k] = 2.0 * rho / hw;
        rho_prev = rho;
    }
    S->sw = t->nwy + 2;
    S->w_rows = (t->nwx + SP_W_CLUSTER - 1) / SP_W_CLUSTER;
    const int w_groups = (S->w_rows + 2 * (K + 1) + SP_STRIP - 1) / SP_STRIP;
    const int m3_groups = (SP_M3_ROWS + 2 * K + SP_STRIP - 1) / SP_STRIP;
    S->w_threads = (w_groups * t->nwy + 31) / 32 * 32;
    S->m3_threads = (m3_groups * t->nwy + 31) / 32 * 32;
    S->m3_blocks = (t->nwx + SP_M3_ROWS - 1) / SP_M3_ROWS;
    S->w_buf_rows = w_groups * SP_STRIP + 2;
    S->m3_buf_rows = m3_groups * SP_STRIP + 2;
    S->w_smem = SP_W_ARRAYS * (size_t)S->w_buf_rows * (size_t)S->sw * sizeof(double);
    S->m3_smem = 2 * (size_t)S->m3_buf_rows * (size_t)S->sw * sizeof(double);
    if (S->w_threads > SP_W_THREADS || S->m3_threads > SP_M3_THREADS)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': the GPU's direct solve needs %d sweeps on a %d x %d "
                       "window, more than its kernels hold; render on the CPU",
                       t->p.name, K, t->nwx, t->nwy);
    /* (Setting the SM's split towards shared memory for all drum kernels, so
     * that blocks of W and M3 share SMs under one split, was tried: about
     * 1 us a step slower on the H100.) */
    cudaError_t e = kt_cuda_allow_smem((const void *)split_window<double>, S->w_smem);
    if (e == cudaSuccess)
        e = kt_cuda_allow_smem((const void *)split_window<float>, S->w_smem);
    if (e == cudaSuccess)
        e = kt_cuda_allow_smem((const void *)split_solve_a, S->m3_smem);
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "sizing the drum's window kernels");
}

int tp_split_accepts(const tp_plan *t, kt_error *err)
{
    if (t->wx0 < 0 || t->wy0 < 0 || t->wx0 + t->nwx > t->nx || t->wy0 + t->nwy > t->ny ||
        t->pd < 0 || t->pu >= t->nz)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': its interaction window reaches past the room's walls",
                       t->p.name);
    if (!t->G.ptr)
        return kt_fail(err, KT_ENOTSUP, "timpani '%s': no reduced matrix", t->p.name);
    for (int i = 0; i < t->nwx; i++)
        if (t->row_ptr[i + 2] - t->row_ptr[i + 1] > SP_MAX_TAPS)
            return kt_fail(err, KT_ENOTSUP,
                           "timpani '%s': a window row gathers more than %d membrane rows "
                           "(membrane far finer than the air); render on the CPU",
                           t->p.name, SP_MAX_TAPS);
    const double g = g_bound(t);
    if (sweeps_for(g) < 0)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': G's row sums reach %.3g, too much coupling for the GPU's "
                       "iterated direct solve (below 0.5); render on the CPU",
                       t->p.name, g);
    return KT_OK;
}

/* The step's arguments for the drum's current phase. */
static sp_args args_of(const tp_split *S, const tp_dev *d, int advance)
{
    sp_args s;
    memset(&s, 0, sizeof s);
    const int ph = S->phase, p2 = ph & 1;
    s.K = S->K;
    s.sw = S->sw;
    s.w_buf_rows = S->w_buf_rows;
    s.m3_buf_rows = S->m3_buf_rows;
    s.w_rows = S->w_rows;
    s.pd0 = kt_cuda_room_node(S->R, S->t->wx0, S->t->wy0, S->t->pd);
    s.pu0 = kt_cuda_room_node(S->R, S->t->wx0, S->t->wy0, S->t->pu);
    s.pitch = (long long)kt_cuda_room_pitch(S->R);
    s.band_lo = S->band;
    s.band_hi = S->band + S->t->nwx;
    s.own_lo = S->band + 2 * S->t->nwx;
    s.own_hi = S->band + 3 * S->t->nwx;
    s.m3_blocks = S->m3_blocks;
    s.parts = S->parts;
    s.kappa = S->t->mu_c * S->t->hq2;
    s.cheb_dc = 1.0 + 0.5 * S->g;
    memcpy(s.cheb_keep, S->cheb_keep, sizeof s.cheb_keep);
    memcpy(s.cheb_step, S->cheb_step, sizeof s.cheb_step);
    s.e_il = S->e_il;
    s.e_fa = S->e_fa;
    s.u = d->U[ph % 3];
    s.unew = d->U[(ph + 1) % 3];
    s.u1 = d->U[(ph + 2) % 3];
    s.a = S->A[p2];
    s.g = S->Gm[p2];
    s.a2 = S->A[advance ? p2 ^ 1 : p2];
    s.g2 = S->Gm[advance ? p2 ^ 1 : p2];
    s.w1 = d->W[(ph + 2) % 3];
    s.wnew = d->W[(ph + 1) % 3];
    s.D1 = d->D[p2 ^ 1];
    s.qpad = S->qpad;
    s.fa = S->fa;
    s.fg = S->fg;
    s.xa = S->xa;
    s.xg = S->xg;
    s.um_part = S->um_part;
    s.m3_part = S->m3_part;
    s.w_part = S->w_part;
    s.sc = S->sc;
    s.rot_u = (ph + 1) % 3;
    s.rot_w = (ph + 1) % 3;
    s.rot_d = p2 ^ 1;
    return s;
}

template <typename X>
static int sp_alloc(X **p, size_t n, const X *host, kt_error *err)
{
    int rc = kt_cuda_alloc((n ? n : 1) * sizeof(X), (void **)p, err);
    return rc == KT_OK && host ? kt_cuda_upload(*p, host, n * sizeof(X), err) : rc;
}

/* The membrane kernel (a programmatic dependent of W when it follows W). */
static void launch_band(const tp_split *S, const tp_dev *d, const sp_args &s, int advance,
                        double time_s, cudaStream_t stream)
{
    kt_launch_dependent(advance ? split_band<1> : split_band<0>,
                        dim3((unsigned)d->nwx, SP_BAND_PARTS),
                        dim3(SP_BAND_THREADS), S->band_smem, stream, *d, s,
                        advance ? 0.0 : time_s);
}

static void launch_m3(const tp_split *S, const tp_dev *d, const sp_args &s, cudaStream_t stream)
{
    split_solve_a<<<dim3(S->m3_blocks, 2), S->m3_threads, S->m3_smem, stream>>>(*d, s);
}

/* W; `dependent`: launched as the programmatic dependent of the M3 just
 * before it on `stream`, which must then be W's only dependency. */
static void launch_window(const tp_split *S, const tp_dev *d, const sp_args &s, void *next,
                          int single, const long long *step_n, cudaStream_t stream, int dependent)
{
    if (!dependent) {
        if (single)
            split_window<float><<<SP_W_CLUSTER, S->w_threads, S->w_smem, stream>>>(*d, s, (float *)next, step_n);
        else
            split_window<double><<<SP_W_CLUSTER, S->w_threads, S->w_smem, stream>>>(*d, s, (double *)next, step_n);
        return;
    }
    const dim3 grid(SP_W_CLUSTER);
    if (single)
        kt_launch_dependent(split_window<float>, grid, dim3(S->w_threads), S->w_smem, stream,
                            *d, s, (float *)next, step_n);
    else
        kt_launch_dependent(split_window<double>, grid, dim3(S->w_threads), S->w_smem, stream,
                            *d, s, (double *)next, step_n);
}

/* The membrane kernel's column parts: the window's columns split evenly;
 * part p forms the membrane columns its window columns gather and owns
 * those from its first gathered column to the next part's (the first from
 * mlo, the last to mhi), so the owned ranges partition [mlo, mhi).  Returns
 * the widest part's membrane columns. */
static int make_parts(sp_parts *P, const tp_plan *t)
{
    int cut[SP_BAND_PARTS + 1], widest = 0;
    for (int p = 0; p < SP_BAND_PARTS; p++) {
        P->win_lo[p] = p * t->nwy / SP_BAND_PARTS;
        P->win_hi[p] = (p + 1) * t->nwy / SP_BAND_PARTS;
        int lo = t->mhi, hi = t->mlo;
        for (int q = t->col_ptr[P->win_lo[p]]; q < t->col_ptr[P->win_hi[p]]; q++) {
            lo = t->col_m[q] < lo ? t->col_m[q] : lo;
            hi = t->col_m[q] + 1 > hi ? t->col_m[q] + 1 : hi;
        }
        P->col_lo[p] = lo;
        P->col_hi[p] = hi;
    }
    cut[0] = t->mlo;
    cut[SP_BAND_PARTS] = t->mhi;
    for (int p = 1; p < SP_BAND_PARTS; p++) {
        const int c = P->col_lo[p];
        cut[p] = c < cut[p - 1] ? cut[p - 1] : c > t->mhi ? t->mhi : c;
    }
    for (int p = 0; p < SP_BAND_PARTS; p++) {
        P->own_lo[p] = cut[p];
        P->own_hi[p] = cut[p + 1];
        P->col_lo[p] = P->col_lo[p] < cut[p] ? P->col_lo[p] : cut[p];
        P->col_hi[p] = P->col_hi[p] > cut[p + 1] ? P->col_hi[p] : cut[p + 1];
        widest = P->col_hi[p] - P->col_lo[p] > widest ? P->col_hi[p] - P->col_lo[p] : widest;
    }
    return widest;
}

/* Each window row's membrane rows: those with e_il = i-1 or i (rows
 * without inside nodes left out at the ends), and those it owns (e_il = i,
 * clamped to the window).  KT_ENOTSUP if an inside row falls outside. */
static int make_bands(tp_split *S, const tp_plan *t, const tp_dev *d, kt_error *err)
{
    const int nwx = t->nwx, lmin = t->inside[0] / t->n, lmax = t->inside[t->ninside - 1] / t->n;
    int *b = (int *)malloc(4 * sizeof(int) * (size_t)nwx);
    if (!b)
        return kt_fail(err, KT_ENOMEM, "out of memory for the GPU drum");
    for (int i = 0; i < nwx; i++) {
        b[i] = b[2 * nwx + i] = lmax + 1;
        b[nwx + i] = b[3 * nwx + i] = lmin;
    }
    int rows = 0, rc = KT_OK;
    for (int l = lmin; l <= lmax; l++) {
        const int il = t->e_il[l], own = il < 0 ? 0 : il;
        if (il < -1 || il >= nwx) {
            rc = kt_fail(err, KT_ENOTSUP, "timpani '%s': membrane row %d lies outside the window",
                         t->p.name, l);
            break;
        }
        for (int i = il; i <= il + 1; i++)
            if (i >= 0 && i < nwx) {
                b[i] = l < b[i] ? l : b[i];
                b[nwx + i] = l + 1 > b[nwx + i] ? l + 1 : b[nwx + i];
            }
        b[2 * nwx + own] = l < b[2 * nwx + own] ? l : b[2 * nwx + own];
        b[3 * nwx + own] = l + 1 > b[3 * nwx + own] ? l + 1 : b[3 * nwx + own];
    }
    for (int i = 0; i < nwx; i++) {
        if (b[nwx + i] < b[i]) /* a window row no membrane row reaches */
            b[nwx + i] = b[i];
        rows = b[nwx + i] - b[i] > rows ? b[nwx + i] - b[i] : rows;
    }
    if (rows > SP_MAX_BAND_ROWS && rc == KT_OK)
        rc = kt_fail(err, KT_ENOTSUP, "timpani '%s': %d membrane rows a window row, more than "
                     "the GPU kernel holds (%d)", t->p.name, rows, SP_MAX_BAND_ROWS);
    const size_t cols = (size_t)make_parts(&S->parts, t), kc = (size_t)t->nwy * (size_t)d->col_k;
    const size_t nu = (size_t)(rows + 4) * (cols + 4), nl = (size_t)(rows + 2) * (cols + 2);
    S->band_smem = (2 * nu + 2 * nl + 2 * (size_t)rows * cols + 2 * cols + kc) * sizeof(double) +
                   (cols + 4) * sizeof(sp_ecol) + kc * sizeof(int) + nu;
    if (rc == KT_OK)
        rc = sp_alloc(&S->band, 4 * (size_t)nwx, (const int *)b, err);
    free(b);
    if (rc == KT_OK) {
        cudaError_t e = kt_cuda_allow_smem((const void *)split_band<0>, S->band_smem);
        if (e == cudaSuccess)
            e = kt_cuda_allow_smem((const void *)split_band<1>, S->band_smem);
        if (e != cudaSuccess)
            rc = kt_cuda_fail(err, e, "sizing the drum's membrane kernel");
    }
    return rc;
}

/* The coming step's membrane terms from the drum's state, synchronously. */
static int prime(tp_split *S, const tp_dev *d, kt_error *err)
{
    const sp_args s = args_of(S, d, 0);
    launch_band(S, d, s, 0, (double)kt_cuda_room_step_index(S->R) * S->t->k, S->side);
    launch_m3(S, d, s, S->side);
    S->launched = 0;
    S->m3_due = 0;
    cudaError_t e = cudaStreamSynchronize(S->side);
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "preparing the drum's direct solve");
}

int tp_split_create(tp_plan *t, const tp_dev *d, const kt_cuda_room *R, tp_split **out,
                    kt_error *err)
{
    *out = NULL;
    tp_split *S = (tp_split *)calloc(1, sizeof *S);
    if (!S)
        return kt_fail(err, KT_ENOMEM, "out of memory for the GPU drum");
    S->t = t;
    S->R = R;
    const size_t nn = (size_t)t->nn, nw = (size_t)t->nw;
    S->g = g_bound(t);
    int rc = shape(S, t, sweeps_for(S->g), err);
    if (rc == KT_OK)
        rc = make_bands(S, t, d, err);
    for (int k = 0; k < 2 && rc == KT_OK; k++)
        if ((rc = sp_alloc(&S->A[k], nn, (const double *)NULL, err)) == KT_OK)
            rc = sp_alloc(&S->Gm[k], nn, (const double *)NULL, err);
    if (rc == KT_OK)
        rc = sp_alloc(&S->e_il, (size_t)t->n, (const int *)t->e_il, err);
    if (rc == KT_OK)
        rc = sp_alloc(&S->e_fa, (size_t)t->n, (const double *)t->e_fa, err);
    if (rc == KT_OK)
        rc = sp_alloc(&S->qpad, (size_t)(t->nwx + 2) * (size_t)(t->nwy + 2), (const double *)NULL, err);
    double **win[4] = {&S->fa, &S->fg, &S->xa, &S->xg};
    for (int k = 0; k < 4 && rc == KT_OK; k++)
        rc = sp_alloc(win[k], nw, (const double *)NULL, err);
    if (rc == KT_OK)
        rc = sp_alloc(&S->um_part, 3 * (size_t)t->nwx * SP_BAND_PARTS, (const double *)NULL, err);
    if (rc == KT_OK)
        rc = sp_alloc(&S->m3_part, 2 * (size_t)S->m3_blocks, (const double *)NULL, err);
    if (rc == KT_OK)
        rc = sp_alloc(&S->w_part, (size_t)SP_W_CLUSTER, (const double *)NULL, err);
    if (rc == KT_OK)
        rc = sp_alloc(&S->sc, 1, (const sp_scalars *)NULL, err);
    cudaError_t e = cudaSuccess;
    if (rc == KT_OK)
        e = cudaStreamCreateWithFlags(&S->side, cudaStreamNonBlocking);
    cudaEvent_t *ev[] = SP_EVENTS(S);
    for (size_t k = 0; rc == KT_OK && e == cudaSuccess && k < sizeof ev / sizeof ev[0]; k++)
        e = cudaEventCreateWithFlags(ev[k], cudaEventDisableTiming);
    if (rc == KT_OK && e != cudaSuccess)
        rc = kt_cuda_fail(err, e, "creating the drum's stream");
    if (rc == KT_OK)
        rc = prime(S, d, err);
    if (rc < 0) {
        tp_split_free(S);
        return rc;
    }
    *out = S;
    return KT_OK;
}

int tp_split_update(tp_split *S, const tp_dev *d, kt_error *err)
{
    int rc = tp_split_accepts(S->t, err);
    if (rc == KT_OK) {
        S->g = g_bound(S->t);
        rc = shape(S, S->t, sweeps_for(S->g), err);
    }
    return rc == KT_OK ? prime(S, d, err) : rc;
}

/* Not serial, on the drum's stream: this step's air (an event), the last
 * step's M3, W as M3's programmatic dependent (so its air-only part runs
 * beside M3: M3 waited for the air, so that W depends on M3 alone), the
 * room's stream waits for W, then the membrane kernel as W's dependent.
 * This step's M3 is left for the next step or a join. */
int tp_split_launch(tp_split *S, const tp_dev *d, void *next, int single, const long long *step_n,
                    cudaStream_t stream, int serial, kt_error *err)
{
    const sp_args s = args_of(S, d, 1);
    if (serial) {
        tp_split_join(S, d, stream); /* an M3 left by a step that was not serial */
        launch_window(S, d, s, next, single, step_n, stream, 0);
        launch_band(S, d, s, 1, 0.0, stream);
        launch_m3(S, d, s, stream);
    } else {
        hand_over(S->ev_air, stream, S->side);
        const int after_m3 = S->m3_due;
        if (after_m3)
            launch_m3(S, d, s, S->side); /* M3 reads no phase-dependent buffer */
        launch_window(S, d, s, next, single, step_n, S->side, after_m3);
        cudaEventRecord(S->ev_w, S->side);   /* the room waits for it in tp_split_wait */
        S->w_due = 1;
        launch_band(S, d, s, 1, 0.0, S->side);
        S->m3_due = 1;
    }
    S->phase = (S->phase + 1) % 6;
    S->launched = 1;
    return kt_cuda_launch_check(err, "launching the drum's window and membrane kernels");
}

void tp_split_wait(tp_split *S, cudaStream_t stream)
{
    if (!S || !S->w_due)
        return;
    cudaStreamWaitEvent(stream, S->ev_w, 0);
    S->w_due = 0;
}

void tp_split_join(tp_split *S, const tp_dev *d, cudaStream_t stream)
{
    tp_split_wait(S, stream);
    if (!S || !S->m3_due)
        return;
    launch_m3(S, d, args_of(S, d, 1), S->side);
    hand_over(S->ev_m, S->side, stream);
    S->m3_due = 0;
}

const double *tp_split_last_a(const tp_split *S)
{
    return S->launched ? S->A[(S->phase + 1) & 1] : NULL;
}

void tp_split_free(tp_split *S)
{
    if (!S)
        return;
    if (S->side) {
        cudaStreamSynchronize(S->side);
        cudaStreamDestroy(S->side);
    }
    cudaEvent_t *ev[] = SP_EVENTS(S);
    for (size_t k = 0; k < sizeof ev / sizeof ev[0]; k++)
        if (*ev[k])
            cudaEventDestroy(*ev[k]);
    void *p[] = {S->A[0], S->A[1], S->Gm[0], S->Gm[1], S->e_il, S->band, S->e_fa, S->qpad, S->fa,
                 S->fg, S->xa, S->xg, S->um_part, S->m3_part, S->w_part, S->sc};
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++)
        kt_cuda_free(p[k]);
    free(S);
}
