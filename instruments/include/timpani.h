/* timpani.h - a kettledrum embedded in a room (thesis ch. 7; design note
 * ../shared/design/timpani-scheme.md, mirrored in docs/timpani-scheme.md).
 *
 * A stiff circular membrane with Berger tension modulation over a rigid
 * parabolic bowl, coupled both ways to the room's air through the two air
 * layers around it.  createTimpani registers the drum with the room; the room
 * calls processTimpani once per step; deleteTimpani removes and frees it.
 *
 * Positions are in metres in room coordinates; the rim centre is snapped to
 * the nearest air node in x, y and to the nearest mid-layer in z. */
#ifndef TIMPANI_H
#define TIMPANI_H

#include "kettle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Membrane loss alpha (s) inferred for thesis Table 7.3's 170^2 grid at
 * 44.1 kHz (design note 4.2); kt_timpani_params_standard uses it. */
#define KT_TIMPANI_THESIS_LOSS_S 9.6e-6

/* The four CPU implementations of thesis 7.3 (and the GPU ones of issue #6). */
typedef enum kt_timpani_format {
    KT_TIMPANI_CSC = 0,      /* every matrix stage through CSparse's cs_gaxpy */
    KT_TIMPANI_CSR,          /* CSR, multi-threaded */
    KT_TIMPANI_DIA_ELL,      /* DIA for B, C, V; ELLPACK for the interpolants */
    KT_TIMPANI_MATRIX_FREE,  /* B, C, V, I32 unrolled; I23 stored */
    KT_TIMPANI_FORMAT_COUNT
} kt_timpani_format;

/* How stage 4 solves (I + a a^T + P) u = r (design note 6, 9). */
typedef enum kt_timpani_solver {
    KT_SOLVE_JACOBI = 0,     /* Algorithm 18 on the membrane grid */
    KT_SOLVE_REDUCED,        /* the same iterates on the 55x55 interaction layer */
    KT_SOLVE_DIRECT          /* Woodbury + Sherman-Morrison, exact */
} kt_timpani_solver;

typedef struct kt_timpani_params {
    char name[64];                      /* for messages ("timp29") */
    double diameter_m;
    double tension_N_per_m;
    double surface_density_kg_per_m2;
    double thickness_m;
    double youngs_modulus_Pa;
    double poisson_ratio;
    double loss_s;                      /* alpha: c_M^2 alpha Lap(w_t) */
    double bowl_depth_m;
    double rim_centre_m[3];             /* centre of the membrane, room coordinates */
    int nonlinear;                      /* 1: Berger tension modulation on */
    int coupled;                        /* 1: membrane coupled to the air */
    int membrane_intervals;             /* 0: from the stability rule; else a coarser override */
    kt_timpani_format format;
    kt_timpani_solver solver;
    int solver_iterations;              /* fixed count (default 10, as in the thesis test) */
    double solver_tolerance;            /* > 0: stop when |du| <= tol |u| (max iterations above) */
    int nthreads;                       /* membrane threads; <= 0: 1 (serial beside the room's sweep) */
} kt_timpani_params;

typedef struct kt_timpani kt_timpani;

/* Standard concert sizes: 23, 26, 29 or 32 inches (others are refused).
 * Fills Mylar head, reference tension and a bowl depth for that size. */
int kt_timpani_params_standard(kt_timpani_params *p, int inches, kt_error *err);

/* The membrane's stability rule (design note 4.2): the most intervals across
 * the head its grid may have at p's tension and this sample rate, and the
 * highest tension a grid of `intervals` carries (0 if none). */
int kt_timpani_rule_intervals(const kt_timpani_params *p, double sample_rate_hz);
double kt_timpani_max_tension(const kt_timpani_params *p, int intervals, double sample_rate_hz);

int createTimpani(kt_room *room, const kt_timpani_params *p, kt_timpani **out, kt_error *err);
int processTimpani(kt_timpani *t, kt_room *room, kt_error *err);
void deleteTimpani(kt_room *room, kt_timpani *t);

/* Queue a raised-cosine strike: peak force in newtons, contact duration,
 * position relative to the drum axis in metres (must lie on the head). */
int kt_timpani_strike(kt_timpani *t, double start_s, double force_N, double duration_s,
                      double x_m, double y_m, kt_error *err);

/* Change the head's tension from the next step on (the pedal; used by the
 * score's `pedal` statement, which calls it every ksmps steps during a glide).
 * The membrane grid stays the one chosen at creation, so a tension above the
 * one the grid was built for may break the stability rule: create the drum
 * with membrane_intervals set for the largest tension it will reach (the
 * renderer does).  Returns KT_EINVAL for a non-positive tension or one the grid
 * cannot carry. */
int kt_timpani_set_tension(kt_timpani *t, double tension_N_per_m, kt_error *err);

/* Damp the head from the next step on (a hand or a cloth on it): a
 * frequency-independent loss -2 sigma0 rhoM w_t on the membrane, so that on
 * its own the head's amplitude falls as exp(-sigma0 t), 60 dB in
 * T60 = 3 ln(10) / sigma0.  0 lifts the damping (the drum rings freely, and
 * the update is bit for bit the undamped one); negative or non-finite values
 * are refused with KT_EINVAL.  Any sigma0 >= 0 keeps the scheme stable: the
 * discrete energy loses 2 sigma0 rhoM h^2 |(u^{n+1}-u^{n-1})/2k|^2 per unit
 * time (docs/timpani.md, "Damping").  The score's p8 uses it. */
int kt_timpani_set_damping(kt_timpani *t, double sigma0_per_s, kt_error *err);
/* The damping in force (1/s). */
double kt_timpani_damping(const kt_timpani *t);

/* Loud strokes (docs/timpani.md, "Loud strokes"): the Berger tension rises
 * with the head's stretch, and grid-scale modes on the rule's grid then break
 * its bound and fill the head with noise.  The fraction g by which to budget
 * the tension for strokes of up to force_N at this tension (0 for a linear
 * head), and the grid that leaves that margin above `tension_N_per_m` (the
 * drum's highest): the rule's grid at tension (1 + g). */
double kt_timpani_stroke_stretch(const kt_timpani_params *p, double tension_N_per_m,
                                 double force_N);
int kt_timpani_stroke_intervals(const kt_timpani_params *p, double tension_N_per_m,
                                double stroke_tension_N_per_m, double force_N,
                                double time_step_s);

/* Sizes, for printing and for comparison with thesis Table 7.3. */
typedef struct kt_timpani_info {
    int membrane_n;                     /* membrane grid is n x n */
    int membrane_inside;                /* nodes inside the head */
    double membrane_spacing_m;
    int window_nx, window_ny;           /* interaction layer */
    int boundary_rows;                  /* shell + lid list */
    int layer_below, layer_above;       /* air layer indices p_d, p_u */
    int centre_node[2];                 /* drum axis node (x, y) */
    double last_increment;              /* |u^(m) - u^(m-1)| / |u^(m)| of the last solve */
    int last_iterations;
} kt_timpani_info;
void kt_timpani_get_info(const kt_timpani *t, kt_timpani_info *info);

/* Membrane displacement u^n (metres, (n x n) grid, index l*n + m). */
const double *kt_timpani_displacement(const kt_timpani *t);
/* Membrane energy at n-1/2 (design note 8), joules. */
double kt_timpani_energy(const kt_timpani *t);

/* Cumulative seconds in stages 3 (RHS), 4 (solve) and 6 (layer correction). */
typedef struct kt_timpani_timing { double rhs_s, solve_s, correct_s; int64_t steps; } kt_timpani_timing;
void kt_timpani_get_timing(const kt_timpani *t, kt_timpani_timing *timing);

const char *kt_timpani_format_name(kt_timpani_format f);
int kt_timpani_format_parse(const char *name, kt_timpani_format *f, kt_error *err);

#ifdef __cplusplus
}
#endif

#endif
