/* timpani_internal.h - the kettledrum's private state and the functions its
 * source files share (timpani.c: life cycle and parameters; timpani_geometry.c:
 * shell list, membrane grid, window and interpolation; timpani_membrane.c: the
 * operators B, C, V, E, I23 in the four formats; timpani_step.c: processTimpani
 * and the three solves; timpani_energy.c: the membrane energy).
 *
 * Symbols follow design note timpani-scheme.md: u^n membrane displacement on
 * the (N+1)^2 grid (index l*n + m, l along x), D^n = Psi_pd - Psi_pu on the
 * nwx x nwy window (index i*nwy + j, i along x), E = I32 bilinear, I23 =
 * (h^2/Q^2) E^T, F = mu_c I23, G = F E. */
#ifndef TIMPANI_INTERNAL_H
#define TIMPANI_INTERNAL_H

#include "kt_config.h"
#include "kt_instrument.h"
#include "kt_linalg.h"
#include "timpani.h"

#include <stdint.h>

/* Smallest membrane grid (intervals across the diameter) we accept: below it
 * the staircase circle is too crude for a drumhead. */
#define TP_MIN_MEMBRANE_INTERVALS 16

typedef struct tp_strike {
    double start_s, force_N, duration_s;
    int node;                           /* membrane index l*n + m */
} tp_strike;

/* A compressed-row matrix owned by the timpani (G, for the reduced and direct solves). */
typedef struct tp_csr {
    int nrows, ncols;
    int *ptr, *col;
    double *val;
} tp_csr;

/* A drum's stages by its format (timpani_membrane.c):
 * rhs: r = B u + C u1 - a (a^T u1), a = V u, without coupling or strike;
 *      a^T a in *aa.
 * E: y = E x (x a window vector), accumulate or not.
 * E_sub: y = base - E x on the inside nodes (y zero elsewhere on entry).
 * I23: yw = I23 x; I23_pair: y1 = I23 x1 and y2 = I23 x2. */
typedef struct tp_format_ops {
    void (*rhs)(kt_timpani *t, double *aa);
    void (*E)(kt_timpani *t, const double *xw, double *y, int accumulate);
    void (*E_sub)(kt_timpani *t, const double *xw, const double *base, double *y);
    void (*I23)(kt_timpani *t, const double *x, double *yw);
    void (*I23_pair)(kt_timpani *t, const double *x1, const double *x2, double *y1, double *y2);
} tp_format_ops;
/* Its solve of the window system by its solver (timpani_step.c), given
 * 1 / (1 + a^T a). */
typedef void (*tp_solve_fn)(kt_timpani *t, double ainv);
tp_solve_fn tp_solver_for(const kt_timpani_params *p);

struct kt_timpani {
    kt_timpani_params p;
    kt_instrument ins;
    int nthreads;
    const tp_format_ops *ops;      /* the stages of its format */
    tp_solve_fn solve;             /* the solve of its solver */

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

    /* state */
    double *u, *u1, *unew;              /* u^n, u^{n-1}, u^{n+1} (rotated) */
    double *a;                          /* a^n = V u^n of the last step (V damped) */
    double *w, *w1, *wnew;              /* I23 u^n, I23 u^{n-1}, I23 u^{n+1} */
    double *Dn, *Dn1, *Dhat;            /* window buffers */
    double *r, *tmp;                    /* right-hand side, nn scratch */
    double *wa, *wb, *wc, *wd, *we;     /* nw scratch */
    double *pad;                        /* (nwx+2)(nwy+2) padded window for on-the-fly E */
    double *sep, *sep2;                 /* (nwx+2) x n: separable E / I23 intermediates */
    int mlo, mhi;                       /* columns m that any row's run covers */
    int *row_ptr, *row_l;               /* padded window row pi gathers membrane rows */
    double *row_w;                      /*   row_l[row_ptr[pi]..row_ptr[pi+1]) with weights row_w */
    double *rowpart;                    /* 3 max(n, 2 nwx): per-row partial sums (thread-count invariant) */
    int *col_ptr, *col_m;               /* window column j gathers membrane columns */
    double *col_w;                      /*   col_m[col_ptr[j]..col_ptr[j+1]) with weights col_w */
    /* G (symmetric) as its diagonal and 4 upper bands on the window, offsets
     * 0, 1, nwy-1, nwy, nwy+1; band arrays and the iterates are padded by
     * nwy+1 on both sides; gband[0] NULL when G does not fit */
    double *gband[5];
    int *chi_lo, *chi_hi;               /* window row i: chi covers j in [chi_lo, chi_hi) */
    double *ypad[2];                    /* padded reduced iterates */
    int64_t steps;

    tp_strike *strikes;
    int nstrikes, strikes_cap;

    double last_increment;
    int last_iterations;
    kt_timpani_timing timing;
};

/* timpani_geometry.c */
int tp_geometry_build(kt_timpani *t, const kt_room *room, kt_error *err);
int tp_membrane_grid(const kt_timpani_params *p, double k, int *N, kt_error *err);
double tp_membrane_h_min(const kt_timpani_params *p, double k);
int tp_nearest_inside(const kt_timpani *t, double x_m, double y_m);

/* timpani_membrane.c */
int tp_operators_build(kt_timpani *t, kt_error *err);
void tp_operators_free(kt_timpani *t);
int tp_operators_retension(kt_timpani *t, kt_error *err);
/* After a change of damping: rebuild B, C, V (stored formats), rescale G and
 * its bands, refactor I + G (direct solve). */
int tp_operators_redamp(kt_timpani *t, kt_error *err);
/* yw = G xw (own CSR) */
void tp_apply_G(const kt_timpani *t, const double *xw, double *yw);
/* The table of the drum's stages in its format (stored matrices or
 * matrix-free), chosen once at creation: libsndfile's way, one table of
 * operations instead of a branch on the format in every stage. */
const tp_format_ops *tp_format_ops_for(kt_timpani_format f);
/* Unscaled masked Laplacian D x over the inside nodes (zero elsewhere). */
void tp_laplacian(const kt_timpani *t, const double *x, double *y);
void tp_csr_free(tp_csr *m);

/* Per-row partial sums, summed in row order afterwards, keep every result
 * bit-identical for any thread count. */
#define TP_OMP_FOR _Pragma("omp for schedule(static)")

/* Dot products with four partial sums in a fixed order: deterministic, and
 * not bound by the latency of one long chain of additions. */
static inline double tp_dot4(const double *x, const double *y, int n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    for (; i < n; i++)
        s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
}


/* timpani_step.c */
int tp_process(void *self, kt_room *room, kt_error *err);
#if KETTLE_CUDA_ENABLED
/* The drum's GPU form (instruments/gpu/timpani_gpu.cu). */
const kt_instrument_gpu *tp_gpu_ops(void);
#endif

/* timpani_energy.c */
double tp_energy(const void *self);

#endif
