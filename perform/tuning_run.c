/* tuning_run.c - one measurement of what a drum sounds: the render's room
 * is built with every drum of the performance in it (the others hold their
 * tensions and ring only with what reaches them), the drum is struck softly
 * with its head linear (the pitch at rest: the Berger term vanishes with the
 * amplitude), and its membrane is projected, every step, on the shapes of
 * the modes wanted: J_m(j_m1 r/R) times cos or sin of m theta.  On the
 * drum's symmetric grids those projections separate the angular orders
 * exactly, so the (1,1) series is free of the (0,1) and (2,1) that a
 * microphone also hears.  After the attack (20 ms) ten periods of the
 * series give the frequency (kt_spectrum.h: a Hann window and the refined
 * DTFT peak; runs of 0.1 and 0.4 s agree to 0.01 cent on the reference drum).
 *
 * The strike falls at 45 degrees to the room's x axis, so both members of
 * the (1,1) pair, the mode along x and the mode along y, ring alike: where
 * walls or neighbours break the drum's symmetry the two split (a drum a
 * third of a metre from two walls: 36 cents), and the pitch is their
 * geometric mean, as a run's two projections measure them. */
#define _DEFAULT_SOURCE /* jn(), the Bessel functions */
#include "tuning_internal.h"
#include "kt_physics.h"
#include "kt_ranks.h"
#include "kt_spectrum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RUN_FORCE_N 10.0
#define RUN_CONTACT_S 1e-3
#define RUN_RADIUS_FRACTION 0.6
#define RUN_ANGLE_RAD (KT_PI / 4)
#define RUN_SKIP_S 0.02            /* the attack and the air's first response */
#define RUN_PERIODS 10.0           /* of the (1,1) in the measured stretch */
#define RUN_MIN_WINDOW_S 0.05
#define RUN_PAD 8

/* First zeros j_m1 of the Bessel functions J_1 .. J_4. */
static const double bessel_zero[5] = {0, 3.8317059702075125, 5.1356223018406826,
                                      6.3801618959239835, 7.5883424345038044};

/* The shapes: (1,1) along x, along y, then (m,1) along the strike, m = 2..4;
 * each over the inside nodes (index list, weights), for one membrane. */
#define SHAPES 5
typedef struct run_shapes {
    int count, inside;
    int *node;
    double *w[SHAPES];
} run_shapes;

static void shapes_free(run_shapes *s)
{
    free(s->node);
    for (int k = 0; k < SHAPES; k++)
        free(s->w[k]);
}

static int shapes_make(run_shapes *s, const kt_timpani *t, double R, int count)
{
    kt_timpani_info info;
    kt_timpani_get_info(t, &info);
    int n = info.membrane_n;
    double h = info.membrane_spacing_m;
    memset(s, 0, sizeof *s);
    s->count = count;
    s->node = malloc(sizeof *s->node * (size_t)n * n);
    if (!s->node)
        return KT_ENOMEM;
    for (int k = 0; k < count; k++)
        if (!(s->w[k] = malloc(sizeof *s->w[k] * (size_t)n * n)))
            return KT_ENOMEM;
    long N = n - 1;
    for (int l = 0; l < n; l++)
        for (int m = 0; m < n; m++) {
            /* the drum's own test for the head's nodes (timpani_geometry.c) */
            long di = 2L * l - N, dj = 2L * m - N;
            if (di * di + dj * dj >= N * N)
                continue;
            double x = l * h - R, y = m * h - R, r = hypot(x, y), th = atan2(y, x);
            int i = s->inside++;
            s->node[i] = l * n + m;
            double j1 = jn(1, bessel_zero[1] * r / R);
            s->w[0][i] = j1 * cos(th);
            s->w[1][i] = j1 * sin(th);
            for (int k = 2; k < count; k++)
                s->w[k][i] = jn(k, bessel_zero[k] * r / R) * cos(k * (th - RUN_ANGLE_RAD));
        }
    return KT_OK;
}

static int add_drums(const tuning_setup *s, kt_room *room, int drum, double tension,
                     kt_timpani **out, kt_error *err)
{
    for (int d = 0; d < s->perf->drum_count; d++) {
        kt_timpani_params p = s->perf->drums[d].params;
        p.tension_N_per_m = d == drum ? tension : s->tensions[d];
        p.membrane_intervals = s->intervals[d];
        p.nonlinear = 0;
        /* the formats agree to 1e-13 (test_timpani_impl); this is the fast one */
        p.format = KT_TIMPANI_MATRIX_FREE;
        p.nthreads = 1;
        kt_timpani *t = NULL;
        int rc = createTimpani(room, &p, &t, err);
        if (rc < 0)
            return rc;
        if (d == drum)
            *out = t;
    }
    return KT_OK;
}

/* On a room split over MPI ranks only the rank that steps the drum sees it
 * move; every rank takes that rank's figure (the others report -1). */
static double agreed(double v)
{
    return kt_mpi_size() > 1 ? kt_mpi_max(v) : v;
}

/* The strongest peak of a series in [lo, hi], or -1. */
static double series_peak(const double *q, int64_t n, double rate_hz, double lo, double hi)
{
    kt_spectrum sp;
    kt_peak pk;
    double hz = -1;
    if (kt_spectrum_compute(&sp, q, n, 1, 1, rate_hz, RUN_PAD, NULL) == 0) {
        if (kt_spectrum_peak(&sp, lo, hi, &pk) == 0)
            hz = pk.hz;
        kt_spectrum_free(&sp);
    }
    return hz;
}

static int estimate(double *const q[SHAPES], int count, int64_t n, double rate_hz,
                    double expect_hz, kt_tuning_sound *out, kt_error *err)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < 2; k++)
        out->pair_hz[k] = agreed(series_peak(q[k], n, rate_hz, expect_hz / 1.4, expect_hz * 1.4));
    if (!(out->pair_hz[0] > 0) || !(out->pair_hz[1] > 0))
        return kt_fail(err, KT_EUNSTABLE, "no (1,1) mode near %.2f Hz in the drum's motion",
                       expect_hz);
    out->hz = sqrt(out->pair_hz[0] * out->pair_hz[1]);
    for (int k = 2; k < count; k++) {
        double f = agreed(series_peak(q[k], n, rate_hz, 1.15 * out->hz, 4 * out->hz));
        out->partial_hz[k - 2] = f > 0 ? f : 0;
    }
    return KT_OK;
}

/* Step the room, projecting the drum's membrane from step `first` on. */
static int record(kt_room *room, const kt_timpani *t, const run_shapes *sh, int64_t first,
                  int64_t steps, double *const q[SHAPES], kt_error *err)
{
    for (int64_t n = 0; n < steps; n++) {
        int rc = kt_room_step(room, err);
        if (rc < 0)
            return rc;
        if (n < first)
            continue;
        const double *u = kt_timpani_displacement(t);
        for (int k = 0; k < sh->count; k++) {
            double acc = 0;
            for (int i = 0; i < sh->inside; i++)
                acc += sh->w[k][i] * u[sh->node[i]];
            q[k][n - first] = acc;
        }
    }
    return KT_OK;
}

int tuning_run(const tuning_setup *s, int drum, double tension_N_per_m, double expect_hz,
               int partials, kt_tuning_sound *out, kt_error *err)
{
    kt_room_params rp = *s->room;
    rp.nthreads = s->nthreads;
    double rate = rp.sample_rate_hz, window = fmax(RUN_PERIODS / expect_hz, RUN_MIN_WINDOW_S);
    int64_t first = (int64_t)ceil(RUN_SKIP_S * rate), n = (int64_t)ceil(window * rate);
    int count = partials ? SHAPES : 2;
    double *q[SHAPES] = {0};
    run_shapes sh;
    memset(&sh, 0, sizeof sh);
    kt_room *room = NULL;
    kt_timpani *t = NULL;
    int rc = kt_room_create_ranked(&rp, &room, err);
    if (rc == 0)
        rc = add_drums(s, room, drum, tension_N_per_m, &t, err);
    if (rc == 0) {
        double R = s->perf->drums[drum].params.diameter_m / 2;
        rc = kt_timpani_strike(t, 0.0, RUN_FORCE_N, RUN_CONTACT_S,
                               RUN_RADIUS_FRACTION * R * cos(RUN_ANGLE_RAD),
                               RUN_RADIUS_FRACTION * R * sin(RUN_ANGLE_RAD), err);
        if (rc == 0 && shapes_make(&sh, t, R, count) < 0)
            rc = kt_fail(err, KT_ENOMEM, "out of memory for the tuning run");
    }
    for (int k = 0; rc == 0 && k < count; k++)
        if (!(q[k] = calloc((size_t)n, sizeof *q[k])))
            rc = kt_fail(err, KT_ENOMEM, "out of memory for the tuning run");
    if (rc == 0)
        rc = record(room, t, &sh, first, first + n, q, err);
    if (rc == 0)
        rc = estimate(q, count, n, rate, expect_hz, out, err);
    for (int k = 0; k < SHAPES; k++)
        free(q[k]);
    shapes_free(&sh);
    kt_room_destroy(room);
    return rc;
}

int kt_tuning_measure(const kt_performance *perf, const kt_room_params *room,
                      const kt_tuning *t, int drum, double tension_N_per_m, int nthreads,
                      kt_tuning_sound *out, kt_error *err)
{
    int nd = perf->drum_count;
    if (drum < 0 || drum >= nd || t->drum_count != nd)
        return kt_fail(err, KT_EINVAL, "kt_tuning_measure: no drum %d in this tuning", drum);
    int *intervals = malloc(sizeof *intervals * (size_t)nd);
    double *tensions = malloc(sizeof *tensions * (size_t)nd);
    int rc = intervals && tensions ? KT_OK : kt_fail(err, KT_ENOMEM, "out of memory");
    for (int d = 0; rc == 0 && d < nd; d++) {
        intervals[d] = t->drums[d].membrane_intervals;
        tensions[d] = t->drums[d].tension_N_per_m;
    }
    tuning_setup s = {perf, room, intervals, tensions, nthreads};
    if (rc == 0)
        rc = tuning_run(&s, drum, tension_N_per_m, kt_tuning_pitch(t, perf, drum, tension_N_per_m),
                        1, out, err);
    free(intervals);
    free(tensions);
    return rc;
}
