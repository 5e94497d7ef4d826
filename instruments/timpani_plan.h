/* timpani_plan.h - the drum's plan and state: the plain data its set-up
 * computes (geometry, coefficients, gathers, bands, operators) and what a
 * step changes, read by the CPU stepper (instruments/timpani*.c) and the
 * GPU (instruments/gpu/).  The only private drum header a .cu file
 * includes.  docs/gpu.md, "The plans".
 *
 * Symbols follow design note timpani-scheme.md: u^n membrane displacement on
 * the (N+1)^2 grid (index l*n + m, l along x), D^n = Psi_pd - Psi_pu on the
 * nwx x nwy window (index i*nwy + j, i along x), E = I32 bilinear, I23 =
 * (h^2/Q^2) E^T, F = mu_c I23, G = F E. */
#ifndef TIMPANI_PLAN_H
#define TIMPANI_PLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kt_config.h"
#include "kt_instrument.h"
#include "kt_linalg.h"
#include "timpani.h"

/* A compressed-row matrix owned by the drum (G, for the reduced and direct solves). */
typedef struct tp_csr {
    int nrows, ncols;
    int *ptr, *col;
    double *val;
} tp_csr;

typedef struct tp_plan {
    kt_timpani_params p;                /* as now: tension and damping change */

    /* air grid and drum placement */
    int nx, ny, nz;
    double Q, k, lambda2;
    int ic, jc, pd, pu;
    double xc, yc, zmem, R;

    /* boundary list (shell + lid) */
    int64_t *bnode;
    uint8_t *bopen;
    int bcount;

    /* interaction window: bounding box of the footprint chi */
    int wx0, wy0, nwx, nwy, nw;
    unsigned char *chi;                 /* nw: window node inside r < R */
    int nchi;

    /* membrane grid */
    int N, n, nn;                       /* N intervals, n = N+1, nn = n*n */
    double h;
    unsigned char *mask;                /* nn, strict r < R */
    int *inside;                        /* indices of mask nodes, ascending */
    int ninside;
    int *run_lo, *run_hi;               /* row l is inside for m in [run_lo[l], run_hi[l]) */

    /* physical and scheme coefficients */
    double cM2, kappa2, DM, Phi, vfac;
    double sigma0;                      /* damping -2 sigma0 rhoM w_t (1/s), 0: free (set_damping) */
    double mu_free, Bf_free;            /* mu_c and Bf undamped (G0 below is built with mu_free) */
    /* The membrane equation divided by 1 + sigma0 k (design note 12.3), so
     * that the solve keeps the form (I + a a^T + P) u = r.  With D the
     * unscaled masked 5-point Laplacian and s = 1/(1 + sigma0 k):
     * B = cB0 M + cB1 D + cB2 D^2, C = cC0 M + cC1 D, V = cV1 D, cB0 = 2s,
     * cC0 = -(1 - sigma0 k) s, cB1, cB2, cC1 carry s, cV1 carries sqrt(s);
     * mu_c = s mu_free, Bf = s Bf_free, strike_scale = s k^2/(rhoM h^2).
     * At sigma0 = 0 every one is the undamped value bit for bit. */
    double cB0, cB1, cB2, cC0, cC1, cV1;
    double Bf, mu_c, strike_scale, gamma6, hq2;   /* hq2 = h^2/Q^2 */

    /* bilinear interpolation, separable: row l lies between window rows
     * e_il[l] and e_il[l]+1 at fraction e_fa[l]; column m likewise */
    int *e_il, *e_jm;
    double *e_fa, *e_fb;
    tp_csr G;                           /* G = mu_c I23 E, nw x nw (reduced and direct solves) */
    double *G0val;                      /* G's values undamped (mu_free): G.val = s G0val */
    cs *G0c;                            /* direct solve: G undamped, CSC, to refactor I + s G0 */

    /* stored matrices of the format in use (NULL for matrix-free) */
    kt_matrix *B, *C, *V, *E, *I23m;

    /* direct solve: Cholesky of I + G */
    css *chol_S;
    csn *chol_N;

    /* the I23 gathers: columns m that any row's run covers; padded window
     * row pi gathers membrane rows row_l[row_ptr[pi]..row_ptr[pi+1]) with
     * weights row_w; window column j likewise */
    int mlo, mhi;
    int *row_ptr, *row_l;
    double *row_w;
    int *col_ptr, *col_m;
    double *col_w;
    /* G (symmetric) as its diagonal and 4 upper bands on the window, offsets
     * 0, 1, nwy-1, nwy, nwy+1; band arrays and the iterates are padded by
     * nwy+1 on both sides; gband[0] NULL when G does not fit */
    double *gband[5];
    int *chi_lo, *chi_hi;               /* window row i: chi covers j in [chi_lo, chi_hi) */
} tp_plan;

typedef struct tp_strike {
    double start_s, force_N, duration_s;
    int node;                           /* membrane index l*n + m */
} tp_strike;

/* What a step changes, and the strikes to come. */
typedef struct tp_state {
    double *u, *u1, *unew;              /* u^n, u^{n-1}, u^{n+1} (rotated) */
    double *a;                          /* a^n = V u^n of the last step (V damped) */
    double *w, *w1, *wnew;              /* I23 u^n, I23 u^{n-1}, I23 u^{n+1} */
    double *Dn, *Dn1;                   /* D^n, D^{n-1} on the window */
    int64_t steps;
    tp_strike *strikes;
    int nstrikes, strikes_cap;
    double last_increment;
    int last_iterations;
} tp_state;

/* A drum's plan and state (timpani.c). */
tp_plan *tp_plan_of(kt_timpani *t);
tp_state *tp_state_of(kt_timpani *t);
#if KETTLE_CUDA_ENABLED
/* The drum's GPU form, its kt_instrument_gpu (instruments/gpu/timpani_gpu.cu). */
const kt_instrument_gpu *tp_gpu_ops(void);
#endif

#ifdef __cplusplus
}
#endif

#endif
