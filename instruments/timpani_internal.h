/* timpani_internal.h - the kettledrum's private state and the functions its
 * source files share (timpani.c: life cycle and parameters; timpani_geometry.c:
 * shell list, membrane grid, window and interpolation; timpani_membrane.c: the
 * operators B, C, V, E, I23 in the four formats; timpani_step.c: processTimpani
 * and the three solves; timpani_energy.c: the membrane energy).
 * The plan and state it holds: timpani_plan.h. */
#ifndef TIMPANI_INTERNAL_H
#define TIMPANI_INTERNAL_H

#include "kt_config.h"
#include "kt_instrument.h"
#include "timpani_plan.h"

#include <omp.h>
#include <stdint.h>

/* Smallest membrane grid (intervals across the diameter) we accept: below it
 * the staircase circle is too crude for a drumhead. */
#define TP_MIN_MEMBRANE_INTERVALS 16


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
    tp_plan plan;                       /* parameters, geometry, coefficients, operators */
    tp_state state;                     /* the membrane's histories, step count, strikes */
    kt_instrument ins;
    int nthreads;
    const tp_format_ops *ops;           /* the stages of its format */
    tp_solve_fn solve;                  /* the solve of its solver */
    /* work buffers of a step */
    double *Dhat;                       /* window buffer */
    double *r, *tmp;                    /* right-hand side, nn scratch */
    double *wa, *wb, *wc, *wd, *we;     /* nw scratch */
    double *pad;                        /* (nwx+2)(nwy+2) padded window for on-the-fly E */
    double *sep, *sep2;                 /* (nwx+2) x n: separable E / I23 intermediates */
    double *rowpart;                    /* 3 max(n, 2 nwx): per-row partial sums (thread-count invariant) */
    double *ypad[2];                    /* padded reduced iterates */
    kt_timpani_timing timing;
};

/* The drum's threads for this step: its own, or one when the room runs it
 * as a work item of a parallel step beside other drums and the air
 * (room_overlap.c); its loops give the same bits either way. */
static inline int tp_threads(const kt_timpani *t)
{
    return omp_in_parallel() ? 1 : t->nthreads;
}

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

/* timpani_energy.c */
double tp_energy(const void *self);

#endif
