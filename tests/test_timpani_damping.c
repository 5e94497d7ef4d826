/* test_timpani_damping.c - kt_timpani_set_damping, the damper on the head
 * (a term -2 sigma0 rhoM w_t, centred in time; docs/timpani.md "Damping"):
 *
 *  - rate: an uncoupled linear lossless head, struck and then damped, loses
 *    energy as exp(-2 sigma0 t) (every mode decays at sigma0: least-squares
 *    slope of ln H within 2 %); coupled to the air of an anechoic box, the
 *    damper adds 70 .. 110 % of that rate to the free drum's: the air that
 *    moves with the head adds mass the damper does not act on (the loading
 *    that lowers the (1,1) from 150 to 97 Hz), so the coupled modes decay
 *    somewhat slower than the bare head's;
 *  - balance: a coupled nonlinear drum in a rigid box (no other loss) keeps
 *    H(air + membrane) + the damper's dissipated work sum k 2 sigma0 rhoM h^2
 *    |(u^{n+1}-u^{n-1})/2k|^2 constant to 1e-10 while H never rises, with
 *    the reduced and the direct solves (the direct one refactors I + G);
 *  - sigma0 = 0, and sigma0 set then lifted before the next step, leave every
 *    format and solve bit-identical to a run without the call;
 *  - with damping on, CSC, CSR, DIA/ELL and matrix-free agree within 1e-10,
 *    the reduced solve gives the Jacobi iterates and the direct solve the
 *    converged Jacobi solution;
 *  - negative or non-finite sigma0 is refused with a message.
 *
 * Small: a 23-inch drum in a 0.7 m box at 22.05 kHz. */
#include "kt_instrument.h"
#include "kt_physics.h"
#include "kt_test.h"
#include "timpani.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_RATE 22050.0
#define STRIKE_N 100.0
#define STRIKE_S 1e-3

typedef struct drum_case {
    kt_timpani_format format;
    kt_timpani_solver solver;
    int iterations;
    double tolerance;
    int coupled, nonlinear;
    double wall_beta;
    double loss_s;
} drum_case;

typedef struct rig {
    kt_room *room;
    kt_timpani *t;
    int nn;
    double h, k, rho;
} rig;

static drum_case base_case(void)
{
    drum_case c = {KT_TIMPANI_MATRIX_FREE, KT_SOLVE_JACOBI, 10, 0.0, 1, 1, 0.5, 0.0};
    return c;
}

static int rig_open(const drum_case *c, rig *r)
{
    kt_error err = {0};
    memset(r, 0, sizeof *r);
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.size_m[0] = rp.size_m[1] = rp.size_m[2] = 0.7;
    rp.sample_rate_hz = SAMPLE_RATE;
    rp.wall_beta = c->wall_beta;
    rp.viscosity_m = 0.0;
    rp.nthreads = 1;
    KT_CHECK(kt_room_create(&rp, &r->room, &err) == KT_OK, "room: %s", err.message);
    if (!r->room)
        return -1;
    kt_timpani_params p;
    kt_timpani_params_standard(&p, 23, &err);
    p.loss_s = c->loss_s;
    p.rim_centre_m[0] = p.rim_centre_m[1] = 0.35;
    p.rim_centre_m[2] = 0.5;
    p.format = c->format;
    p.solver = c->solver;
    p.solver_iterations = c->iterations;
    p.solver_tolerance = c->tolerance;
    p.coupled = c->coupled;
    p.nonlinear = c->nonlinear;
    if (createTimpani(r->room, &p, &r->t, &err) != KT_OK ||
        kt_timpani_strike(r->t, 0.0, STRIKE_N, STRIKE_S, 0.09, 0.05, &err) != KT_OK) {
        KT_CHECK(0, "drum (%s): %s", kt_timpani_format_name(c->format), err.message);
        kt_room_destroy(r->room);
        r->room = NULL;
        return -1;
    }
    kt_timpani_info info;
    kt_timpani_get_info(r->t, &info);
    r->nn = info.membrane_n * info.membrane_n;
    r->h = info.membrane_spacing_m;
    r->k = 1.0 / SAMPLE_RATE;
    r->rho = p.surface_density_kg_per_m2;
    return 0;
}

static int rig_step(rig *r)
{
    kt_error err = {0};
    if (kt_room_step(r->room, &err) == KT_OK)
        return 0;
    KT_CHECK(0, "step %lld: %s", (long long)kt_room_step_index(r->room), err.message);
    return -1;
}

static int set_damping(rig *r, double sigma0)
{
    kt_error err = {0};
    int rc = kt_timpani_set_damping(r->t, sigma0, &err);
    KT_CHECK(rc == KT_OK, "set_damping(%g): %s", sigma0, err.message);
    return rc;
}

/* Least-squares slope of ln H against time over samples (t_i, H_i). */
static double log_slope(const double *t, const double *H, int n)
{
    double st = 0, sy = 0, stt = 0, sty = 0;
    for (int i = 0; i < n; i++) {
        double y = log(H[i]);
        st += t[i];
        sy += y;
        stt += t[i] * t[i];
        sty += t[i] * y;
    }
    return (n * sty - st * sy) / (n * stt - st * st);
}

/* Strike, let it ring 20 ms, damp with sigma0 and fit the membrane energy's
 * decay rate over the next `span_s`, from 2 ms after the damper went on
 * (sampled every step; the ripple at twice the mode frequencies averages
 * out of the fit).  Returns the rate (1/s) or -1. */
static double membrane_decay_rate(const drum_case *c, double sigma0, double span_s)
{
    rig r;
    if (rig_open(c, &r) < 0)
        return -1;
    int before = (int)(0.02 * SAMPLE_RATE), skip = (int)(0.002 * SAMPLE_RATE);
    int n = (int)(span_s * SAMPLE_RATE);
    double *tt = malloc((size_t)n * sizeof *tt), *H = malloc((size_t)n * sizeof *H);
    int ok = 0;
    for (int s = 0; s < before && rig_step(&r) == 0; s++)
        ;
    if (set_damping(&r, sigma0) == KT_OK) {
        for (int s = 0; s < skip && rig_step(&r) == 0; s++)
            ;
        for (ok = 0; ok < n && rig_step(&r) == 0; ok++) {
            tt[ok] = ok * r.k;
            H[ok] = kt_timpani_energy(r.t);
        }
    }
    double rate = ok == n ? -log_slope(tt, H, n) : -1;
    free(tt);
    free(H);
    kt_room_destroy(r.room);
    return rate;
}

static void check_decay_rate(void)
{
    const double t60_s = 0.1, sigma0 = 3.0 * log(10.0) / t60_s;
    double k = 1.0 / SAMPLE_RATE;
    /* the scheme's exact per-step energy factor (1 - sigma0 k)/(1 + sigma0 k) */
    double expected = -log((1.0 - sigma0 * k) / (1.0 + sigma0 * k)) / k;
    drum_case c = base_case();
    c.coupled = 0;
    c.nonlinear = 0;
    double rate = membrane_decay_rate(&c, sigma0, 0.06);
    printf("uncoupled head, T60 %.2f s: energy decay %.2f 1/s, expected %.2f (2 sigma0 = %.2f)\n",
           t60_s, rate, expected, 2.0 * sigma0);
    KT_CHECK(fabs(rate / expected - 1.0) < 0.02, "uncoupled decay rate %.3f 1/s, expected %.3f",
             rate, expected);

    c = base_case();
    c.solver = KT_SOLVE_REDUCED;
    double free_rate = membrane_decay_rate(&c, 0.0, 0.06);
    rate = membrane_decay_rate(&c, sigma0, 0.06);
    printf("coupled drum, anechoic box: membrane energy decay %.2f 1/s damped (expected %.2f), "
           "%.2f 1/s free\n", rate, expected, free_rate);
    KT_CHECK(rate - free_rate > 0.7 * expected && rate - free_rate < 1.1 * expected,
             "damping added %.3f 1/s to the coupled drum's %.3f 1/s, expected about %.3f",
             rate - free_rate, free_rate, expected);
}

/* Damping loss of one step: k 2 sigma0 rhoM h^2 |(u^{n+1}-u^{n-1})/2k|^2. */
static double damper_work(const rig *r, double sigma0, const double *unew, const double *uold)
{
    double s = 0.0;
    for (int j = 0; j < r->nn; j++) {
        double d = unew[j] - uold[j];
        s += d * d;
    }
    return sigma0 * r->rho * r->h * r->h * s / (2.0 * r->k);
}

static void check_balance(kt_timpani_solver solver, int steps)
{
    drum_case c = base_case();
    c.solver = solver;
    c.wall_beta = 0.0;
    c.iterations = 40;
    c.tolerance = 1e-15;
    rig r;
    if (rig_open(&c, &r) < 0)
        return;
    const double sigma0 = 3.0 * log(10.0) / 0.05;
    int strike_steps = (int)ceil(STRIKE_S * SAMPLE_RATE) + 2;
    double *u1 = calloc((size_t)r.nn, sizeof *u1), *u0 = calloc((size_t)r.nn, sizeof *u0);
    for (int s = 0; s < strike_steps && rig_step(&r) == 0; s++) {
        memcpy(u0, u1, (size_t)r.nn * sizeof *u0);
        memcpy(u1, kt_timpani_displacement(r.t), (size_t)r.nn * sizeof *u1);
    }
    double H0 = kt_room_total_energy(r.room), Hprev = H0, lost = 0.0, worst = 0.0, rise = 0.0;
    double H = H0;
    if (set_damping(&r, sigma0) == KT_OK)
        for (int s = 0; s < steps && rig_step(&r) == 0; s++) {
            const double *u = kt_timpani_displacement(r.t);
            lost += damper_work(&r, sigma0, u, u0);
            memcpy(u0, u1, (size_t)r.nn * sizeof *u0);
            memcpy(u1, u, (size_t)r.nn * sizeof *u1);
            H = kt_room_total_energy(r.room);
            worst = fmax(worst, fabs(H + lost - H0));
            rise = fmax(rise, H - Hprev);
            Hprev = H;
        }
    printf("solver %d, rigid box: H %.6g -> %.6g J over %d damped steps, damper took %.6g J; "
           "balance %.3g, largest rise %.3g (relative)\n",
           (int)solver, H0, H, steps, lost, worst / H0, rise / H0);
    KT_CHECK(worst <= 1e-10 * H0, "H + damper work drifted by %.3g J of %.3g J", worst, H0);
    KT_CHECK(rise <= 1e-12 * H0, "the energy rose by %.3g J in one step (of %.3g J)", rise, H0);
    KT_CHECK(H < 0.9 * H0, "the damper took too little: %.4g J -> %.4g J", H0, H);
    free(u0);
    free(u1);
    kt_room_destroy(r.room);
}

/* Run `steps` steps, calling set_damping(first) then set_damping(second)
 * before step `at` (negative values: no call); the displacement and the air
 * just above the membrane come back in u (nn) and air (a 9x9 block). */
static int run_case(const drum_case *c, int steps, int at, double first, double second,
                    double **u, double *air, int *nn)
{
    rig r;
    *u = NULL;
    if (rig_open(c, &r) < 0)
        return -1;
    for (int s = 0; s < steps; s++) {
        if (s == at && first >= 0.0)
            set_damping(&r, first);
        if (s == at && second >= 0.0)
            set_damping(&r, second);
        if (rig_step(&r) < 0)
            break;
    }
    *nn = r.nn;
    *u = malloc((size_t)r.nn * sizeof **u);
    memcpy(*u, kt_timpani_displacement(r.t), (size_t)r.nn * sizeof **u);
    kt_timpani_info info;
    kt_timpani_get_info(r.t, &info);
    kt_room_read_layer(r.room, KT_NOW, info.layer_above + 1, info.centre_node[0] - 4,
                       info.centre_node[1] - 4, 9, 9, air);
    kt_room_destroy(r.room);
    return 0;
}

static double rel_diff(const double *x, const double *y, int n)
{
    return kt_test_max_diff(x, y, n) / fmax(kt_test_max_abs(x, n), 1e-300);
}

static void check_free_is_identical(void)
{
    const drum_case cases[] = {
        {KT_TIMPANI_CSC, KT_SOLVE_JACOBI, 6, 0.0, 1, 1, 0.5, KT_TIMPANI_THESIS_LOSS_S},
        {KT_TIMPANI_CSR, KT_SOLVE_DIRECT, 1, 0.0, 1, 1, 0.5, KT_TIMPANI_THESIS_LOSS_S},
        {KT_TIMPANI_DIA_ELL, KT_SOLVE_REDUCED, 6, 0.0, 1, 1, 0.5, KT_TIMPANI_THESIS_LOSS_S},
        {KT_TIMPANI_MATRIX_FREE, KT_SOLVE_REDUCED, 6, 0.0, 1, 1, 0.5, KT_TIMPANI_THESIS_LOSS_S},
        {KT_TIMPANI_MATRIX_FREE, KT_SOLVE_DIRECT, 1, 0.0, 1, 1, 0.5, 0.0},
        {KT_TIMPANI_MATRIX_FREE, KT_SOLVE_JACOBI, 6, 0.0, 0, 0, 0.5, KT_TIMPANI_THESIS_LOSS_S},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double *ref = NULL, *zero = NULL, *lifted = NULL, a0[81], a1[81], a2[81];
        int nn = 0;
        if (run_case(&cases[i], 40, 20, -1, -1, &ref, a0, &nn) == 0 &&
            run_case(&cases[i], 40, 20, 0.0, -1, &zero, a1, &nn) == 0 &&
            run_case(&cases[i], 40, 20, 500.0, 0.0, &lifted, a2, &nn) == 0) {
            size_t b = (size_t)nn * sizeof *ref;
            KT_CHECK(memcmp(ref, zero, b) == 0 && memcmp(a0, a1, sizeof a0) == 0,
                     "%s/solver %d: set_damping(0) changed the result",
                     kt_timpani_format_name(cases[i].format), (int)cases[i].solver);
            KT_CHECK(memcmp(ref, lifted, b) == 0 && memcmp(a0, a2, sizeof a0) == 0,
                     "%s/solver %d: damping set and lifted again changed the result",
                     kt_timpani_format_name(cases[i].format), (int)cases[i].solver);
        }
        free(ref);
        free(zero);
        free(lifted);
    }
}

static void compare(const char *what, const drum_case *a, const drum_case *b, double sigma0,
                    double tol)
{
    double *ua = NULL, *ub = NULL, aa[81], ab[81];
    int nn = 0;
    if (run_case(a, 60, 20, sigma0, -1, &ua, aa, &nn) == 0 &&
        run_case(b, 60, 20, sigma0, -1, &ub, ab, &nn) == 0) {
        double du = rel_diff(ua, ub, nn), da = rel_diff(aa, ab, 81);
        printf("damped %-26s membrane %.3g, air %.3g\n", what, du, da);
        KT_CHECK(du <= tol && da <= tol, "%s: differ by %.3g (membrane), %.3g (air)", what, du,
                 da);
    }
    free(ua);
    free(ub);
}

static void check_formats_agree(void)
{
    const double sigma0 = 3.0 * log(10.0) / 0.02;
    drum_case ref = base_case(), c;
    ref.format = KT_TIMPANI_CSC;
    ref.loss_s = KT_TIMPANI_THESIS_LOSS_S;
    /* damping really changes the drum */
    double *u0 = NULL, *u1 = NULL, a0[81], a1[81];
    int nn = 0;
    if (run_case(&ref, 60, 20, -1, -1, &u0, a0, &nn) == 0 &&
        run_case(&ref, 60, 20, sigma0, -1, &u1, a1, &nn) == 0)
        KT_CHECK(rel_diff(u0, u1, nn) > 1e-3, "damping changed the head by only %.3g",
                 rel_diff(u0, u1, nn));
    free(u0);
    free(u1);
    for (int f = KT_TIMPANI_CSR; f < KT_TIMPANI_FORMAT_COUNT; f++) {
        c = ref;
        c.format = (kt_timpani_format)f;
        char what[64];
        snprintf(what, sizeof what, "%s vs csc", kt_timpani_format_name(c.format));
        compare(what, &ref, &c, sigma0, 1e-10);
    }
    c = ref;
    c.format = KT_TIMPANI_MATRIX_FREE;
    c.solver = KT_SOLVE_REDUCED;
    compare("reduced vs jacobi", &ref, &c, sigma0, 1e-12);
    ref.format = KT_TIMPANI_CSR;
    ref.iterations = 40;
    ref.tolerance = 1e-15;
    c = ref;
    c.solver = KT_SOLVE_DIRECT;
    compare("direct vs converged jacobi", &ref, &c, sigma0, 1e-10);
}

static void check_errors(void)
{
    rig r;
    drum_case c = base_case();
    if (rig_open(&c, &r) < 0)
        return;
    kt_error err = {0};
    set_damping(&r, 10.0);
    int rc = kt_timpani_set_damping(r.t, -1.0, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "sigma0") && strstr(err.message, "-1"),
             "negative sigma0: rc %d, '%s'", rc, err.message);
    kt_error_clear(&err);
    rc = kt_timpani_set_damping(r.t, NAN, &err);
    KT_CHECK(rc == KT_EINVAL && err.message[0], "NaN sigma0: rc %d, '%s'", rc, err.message);
    KT_CHECK(kt_timpani_damping(r.t) == 10.0, "a refused value changed the damping to %g",
             kt_timpani_damping(r.t));
    kt_error_clear(&err);
    rc = kt_timpani_set_damping(NULL, 1.0, &err);
    KT_CHECK(rc == KT_EINVAL && err.message[0], "NULL drum: rc %d", rc);
    kt_room_destroy(r.room);
}

int main(void)
{
    check_errors();
    check_free_is_identical();
    check_formats_agree();
    check_decay_rate();
    int sanitized = getenv("KETTLE_TEST_SANITIZED") != NULL;
    check_balance(KT_SOLVE_REDUCED, sanitized ? 300 : 1500);
    check_balance(KT_SOLVE_DIRECT, sanitized ? 100 : 400);
    return kt_test_finish("test_timpani_damping");
}
