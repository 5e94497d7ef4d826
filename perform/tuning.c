/* tuning.c - pitch to tension on the system that runs (kt_tuning.h).  For
 * each drum, in the orchestra's order, and each pitch it is asked for (its
 * tuning, its pedals' targets): measure at a guess, add the point to the
 * drum's curve, guess again from the curve (log tension against log
 * frequency: a secant step between the nearest points, the frequency going
 * almost as the square root of the tension), until a point lies close
 * enough to the pitch (ACCEPT_CENTS below); the tension is then read off
 * the curve there.  A first guess comes from the first-order formula, shifted
 * by what the drums tuned before it showed the formula to be off by.  The
 * other drums hold their best tensions so far (a neighbour's tuning moves a
 * drum by about a tenth of a cent; it is not iterated).
 *
 * Each drum is built on a membrane grid for 8 % above the highest tension
 * the formula gives it (kt_timpani_rule_intervals), so that the calibrated
 * tensions stay inside the stability rule; a grid asked for with `intervals`
 * is kept as it is, and a drum whose pitch needs more tension than its grid
 * carries is tuned again on a coarser one (or refused, with the grid asked
 * for). */
#include "tuning_internal.h"
#include "score_internal.h"
#include "kt_physics.h"
#include "kt_ranks.h"
#include "kt_spectrum.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID_MARGIN 1.08      /* tension headroom of the membrane grid (about 65 cents) */
/* When the search ends: the tension read off the curve from a point e cents
 * from the pitch carries e times the error of the slope used (d ln T / d ln f),
 * which the drum's own points give to a few per cent once they lie 10 cents
 * apart, and the drums tuned before it to about ten.  So a run within 1 cent
 * always ends it, within 4 cents with the drum's own slope, within 2 cents
 * with the learned one: each leaves under 0.2 cent. */
#define ACCEPT_CENTS 1.0
#define ACCEPT_OWN_SLOPE_CENTS 4.0
#define ACCEPT_LEARNED_SLOPE_CENTS 2.0
#define OWN_SLOPE_SPREAD_CENTS 10.0
#define MAX_RUNS 8            /* per pitch */
#define NEED_GRID 1           /* solve(): the pitch needs a coarser membrane grid */
#define GLIDE_GAP_CENTS 200.0 /* measured points along a glide at most this far apart */

typedef struct plan_state {
    const kt_performance *perf;
    const kt_room_params *room;
    const kt_tuning_options *opt;
    kt_tuning *out;
    int *intervals;
    double *tensions;
    tuning_setup setup;
    char *key;                /* the current drum's cache key, and its hash */
    uint64_t hash;
    double offset_sum, slope_sum;  /* what earlier drums showed: ln(T / T_formula), slope */
    int offset_n, slope_n;
    double need_tension;      /* with NEED_GRID */
    kt_tuning_point *hints;   /* the drum's points on the grid it had before */
    int hint_count;
} plan_state;

void kt_tuning_options_default(kt_tuning_options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = KT_TUNING_CALIBRATED;
}

void kt_tuning_free(kt_tuning *t)
{
    for (int d = 0; d < t->drum_count; d++)
        free(t->drums[d].points);
    free(t->drums);
    free(t->targets);
    free(t->pedal_tension_N_per_m);
    memset(t, 0, sizeof *t);
}

static void note(const plan_state *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const plan_state *ps, const char *fmt, ...)
{
    if (!ps->opt->note)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ps->opt->note(ps->opt->user, line);
}

/* ---- the search ---- */

static int by_hz(const void *a, const void *b)
{
    double x = ((const kt_tuning_point *)a)->hz, y = ((const kt_tuning_point *)b)->hz;
    return (x > y) - (x < y);
}

static double learned_slope(const plan_state *ps)
{
    return ps->slope_n ? ps->slope_sum / ps->slope_n : 2.0;
}

static double guess(const plan_state *ps, int d, double hz)
{
    const kt_tuning_drum *dr = &ps->out->drums[d];
    if (dr->point_count)
        return tuning_curve_tension(dr->points, dr->point_count, hz, learned_slope(ps));
    /* a coarser grid moves the pitch by a few cents: its old points guess well */
    if (ps->hint_count)
        return tuning_curve_tension(ps->hints, ps->hint_count, hz, learned_slope(ps));
    double shift = ps->offset_n ? ps->offset_sum / ps->offset_n : 0;
    return tuning_formula_tension(ps->perf, d, hz) * exp(shift);
}

static double nearest_cents(const kt_tuning_drum *dr, double hz)
{
    double best = INFINITY;
    for (int i = 0; i < dr->point_count; i++)
        best = fmin(best, fabs(kt_cents(dr->points[i].hz, hz)));
    return best;
}

static int close_enough(const plan_state *ps, const kt_tuning_drum *dr, double hz)
{
    double near = nearest_cents(dr, hz);
    double spread = dr->point_count
                        ? kt_cents(dr->points[dr->point_count - 1].hz, dr->points[0].hz) : 0;
    return near <= ACCEPT_CENTS ||
           (near <= ACCEPT_OWN_SLOPE_CENTS && spread >= OWN_SLOPE_SPREAD_CENTS) ||
           (near <= ACCEPT_LEARNED_SLOPE_CENTS && ps->slope_n > 0);
}

static int add_point(plan_state *ps, int d, double T, double hz)
{
    kt_tuning_drum *dr = &ps->out->drums[d];
    kt_tuning_point *p = kt_push((void **)&dr->points, &dr->point_count, sizeof *p);
    if (!p)
        return KT_ENOMEM;
    *p = (kt_tuning_point){T, hz};
    qsort(dr->points, (size_t)dr->point_count, sizeof *p, by_hz);
    kt_error e;
    if (tuning_cache_save(ps->out->cache_dir, ps->key, ps->hash, dr->points, dr->point_count,
                          &e) < 0) {
        note(ps, "tuning: %s (going on without the cache)", e.message);
        ps->out->cache_dir[0] = '\0';
    }
    return KT_OK;
}

/* One run of drum d at tension T; the point joins its curve. */
static int measure(plan_state *ps, int d, double T, double expect_hz, double *hz,
                   kt_score_error *err)
{
    const kt_performance *perf = ps->perf;
    if (ps->opt->stop && ps->opt->stop(ps->opt->user))
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_EINTR, "interrupted");
    kt_tuning_sound s;
    kt_error e;
    kt_error_clear(&e);
    int rc = tuning_run(&ps->setup, d, T, expect_hz, 0, &s, &e);
    if (rc < 0)
        return kt_score_fail_at(perf, perf->drums[d].loc, err, rc,
                                "cannot tune drum %s (a run at %.1f N/m): %s",
                                perf->drums[d].name, T, e.message);
    ps->out->runs++;
    *hz = s.hz;
    return add_point(ps, d, T, s.hz) < 0
               ? kt_score_fail_at(perf, perf->drums[d].loc, err, KT_ENOMEM, "out of memory")
               : KT_OK;
}

/* A target's pedal: one of the performance's, or of an excerpt's history. */
static const kt_score_pedal *target_pedal(const kt_performance *perf, const kt_tuning_target *tg)
{
    return tg->pedal < 0 ? NULL : tg->past ? &perf->history[tg->pedal] : &perf->pedals[tg->pedal];
}

static kt_score_loc target_loc(const kt_performance *perf, const kt_tuning_target *tg)
{
    return tg->pedal >= 0 ? target_pedal(perf, tg)->loc : perf->drums[tg->drum].loc;
}

/* Tension limits for drum d: the score's (a fifth to five times the
 * reference) and its membrane grid's. */
static void limits(const plan_state *ps, int d, double *lo, double *hi)
{
    kt_timpani_params p = ps->perf->drums[d].params;
    *lo = KT_REFERENCE_TENSION_N_PER_M / 5;
    *hi = fmin(5 * KT_REFERENCE_TENSION_N_PER_M,
               kt_timpani_max_tension(&p, ps->intervals[d], ps->room->sample_rate_hz));
}

static int out_of_reach(const plan_state *ps, const kt_tuning_target *tg, double T, double lo,
                        double hi, kt_score_error *err)
{
    const kt_score_drum *dr = &ps->perf->drums[tg->drum];
    return kt_score_fail_at(ps->perf, target_loc(ps->perf, tg), err, KT_EINVAL,
                            "%.2f Hz is out of reach for drum %s (%.3g inch): it needs about "
                            "%.0f N/m, and the drum takes %.0f..%.0f N/m%s",
                            tg->asked_hz, dr->name, kt_score_drum_inches(&dr->params),
                            T, lo, hi,
                            dr->params.membrane_intervals > 0
                                ? " on the membrane grid asked for (intervals)" : "");
}

/* A membrane grid asked for (intervals) too fine for any tension the
 * score allows: the drum cannot be built, as the renderer would say. */
static int no_grid(const plan_state *ps, int d, double lo, double hi, kt_score_error *err)
{
    const kt_score_drum *dr = &ps->perf->drums[d];
    return kt_score_fail_at(ps->perf, dr->loc, err, KT_EINVAL,
                            "cannot create drum %s: a membrane grid of %d intervals carries at "
                            "most %.0f N/m at %.0f Hz (the stability rule), under the lowest "
                            "tension a drum takes (%.0f N/m); ask for fewer intervals",
                            dr->name, ps->intervals[d], hi, ps->room->sample_rate_hz, lo);
}

static int solve(plan_state *ps, kt_tuning_target *tg, kt_score_error *err)
{
    int d = tg->drum;
    kt_tuning_drum *dr = &ps->out->drums[d];
    double lo, hi, hz = tg->asked_hz, t0 = kt_seconds();
    limits(ps, d, &lo, &hi);
    if (hi < lo)
        return no_grid(ps, d, lo, hi, err);
    while (!close_enough(ps, dr, hz)) {
        double T = guess(ps, d, hz), want = T, f;
        if (tg->runs == MAX_RUNS || !isfinite(T))
            return kt_score_fail_at(ps->perf, target_loc(ps->perf, tg), err, KT_EUNSTABLE,
                                    "cannot tune drum %s to %.2f Hz: %d runs did not come within "
                                    "%.1f cent (nearest %.2f cents)", ps->perf->drums[d].name,
                                    hz, MAX_RUNS, ACCEPT_CENTS, nearest_cents(dr, hz));
        /* beyond what the grid carries, once a run has shown the way: a
         * coarser grid (unless one was asked for) */
        int grid = ps->perf->drums[d].params.membrane_intervals <= 0 &&
                   hi < 5 * KT_REFERENCE_TENSION_N_PER_M;
        ps->need_tension = want;
        if (T > hi && grid && dr->point_count)
            return NEED_GRID;
        T = fmin(fmax(T, lo), hi);
        /* a second run at a limit means the pitch lies beyond it */
        for (int i = 0; i < dr->point_count && T != want; i++)
            if (dr->points[i].tension_N_per_m == T)
                return T == hi && grid ? NEED_GRID : out_of_reach(ps, tg, want, lo, hi, err);
        int rc = measure(ps, d, T, hz, &f, err);
        if (rc < 0)
            return rc;
        tg->runs++;
        note(ps, "tuning drum %s: run %d at %.1f N/m sounds %.3f Hz (%+.2f cents from %.3f Hz)",
             ps->perf->drums[d].name, tg->runs, T, f, kt_cents(f, hz), hz);
    }
    tg->seconds = kt_seconds() - t0;
    double T = tuning_curve_tension(dr->points, dr->point_count, hz, learned_slope(ps));
    ps->offset_sum += log(T / tg->model_tension_N_per_m);
    ps->offset_n++;
    return KT_OK;
}

/* The tension of a pitch, read off the drum's curve once all its runs are
 * in: a later plan from the cache reads the same points the same way, so a
 * render and its resumption agree to the bit. */
static int read_off(plan_state *ps, kt_tuning_target *tg, kt_score_error *err)
{
    const kt_tuning_drum *dr = &ps->out->drums[tg->drum];
    double lo, hi;
    limits(ps, tg->drum, &lo, &hi);
    tg->tension_N_per_m = tuning_curve_tension(dr->points, dr->point_count, tg->asked_hz,
                                               learned_slope(ps));
    if (tg->tension_N_per_m < lo || tg->tension_N_per_m > hi)
        return out_of_reach(ps, tg, tg->tension_N_per_m, lo, hi, err);
    tg->sounding_hz = tuning_curve_pitch(dr->points, dr->point_count, tg->tension_N_per_m, 2.0);
    note(ps, "tuning drum %s: %s %.3f Hz -> %.1f N/m (formula %.1f N/m, %+.1f cents)%s",
         ps->perf->drums[tg->drum].name,
         tg->pedal < 0 ? ps->perf->drums[tg->drum].pitch_name : "pedal", tg->asked_hz,
         tg->tension_N_per_m, tg->model_tension_N_per_m,
         600 * log2(tg->tension_N_per_m / tg->model_tension_N_per_m),
         tg->runs ? "" : ", no new run");
    return KT_OK;
}

/* A glide that starts or ends at a tension needs that tension's pitch: a
 * run there, unless the curve already has a point within a cent. */
static int cover(plan_state *ps, int d, double T, kt_score_loc at, kt_score_error *err)
{
    kt_tuning_drum *dr = &ps->out->drums[d];
    for (int i = 0; i < dr->point_count; i++)
        if (fabs(600 * log2(T / dr->points[i].tension_N_per_m)) <= ACCEPT_CENTS)
            return KT_OK;
    double lo, hi, f;
    limits(ps, d, &lo, &hi);
    if (T > hi)
        return kt_score_fail_at(ps->perf, at, err, KT_EINVAL,
                                "drum %s: %.0f N/m is more than its membrane grid carries "
                                "(%.0f N/m)", ps->perf->drums[d].name, T, hi);
    int rc = measure(ps, d, T, tuning_formula_pitch(ps->perf, d, T), &f, err);
    if (rc == 0)
        note(ps, "tuning drum %s: %.1f N/m sounds %.3f Hz", ps->perf->drums[d].name, T, f);
    return rc;
}

/* The pitch a target asks for, or its tension's on the curve. */
static double target_hz(const plan_state *ps, const kt_tuning_target *tg)
{
    return tg->asked_hz > 0 ? tg->asked_hz
                            : kt_tuning_pitch(ps->out, ps->perf, tg->drum, tg->tension_N_per_m);
}

/* The glide of target j's pedal, from the target before it (the drum's
 * targets are in time order: its tuning, then its pedals'): its two ends in
 * hertz (0 when it is a jump, or j no pedal). */
static void glide_ends(const plan_state *ps, int j, double *from_hz, double *to_hz)
{
    const kt_tuning_target *t = ps->out->targets, *tg = &t[j];
    const kt_score_pedal *p = target_pedal(ps->perf, tg);
    *from_hz = *to_hz = 0;
    if (!p || !(p->duration_s > 0))
        return;
    for (int i = j - 1; i >= 0 && !*from_hz; i--)
        if (t[i].drum == tg->drum)
            *from_hz = target_hz(ps, &t[i]);
    *to_hz = target_hz(ps, tg);
}

/* A glide follows the drum's curve between its ends; where the measured
 * points along it lie more than GLIDE_GAP_CENTS apart, a run in the middle
 * of the gap adds one (linear interpolation of log tension in log pitch is
 * then within about 0.2 cent: the 32-inch drum's D2 -> A2 glide is 2.4
 * cents off halfway with its ends alone). */
static int cover_glide(plan_state *ps, int j, kt_score_error *err)
{
    int d = ps->out->targets[j].drum;
    kt_tuning_drum *dr = &ps->out->drums[d];
    double a, b, lo, hi;
    glide_ends(ps, j, &a, &b);
    if (!(a > 0 && b > 0))
        return KT_OK;
    double f0 = fmin(a, b), f1 = fmax(a, b);
    limits(ps, d, &lo, &hi);
    for (int guard = 0; guard < 64; guard++) {
        double prev = f0, gap_lo = 0, gap_hi = 0;
        for (int i = 0; i <= dr->point_count; i++) {
            double f = i < dr->point_count ? fmin(fmax(dr->points[i].hz, f0), f1) : f1;
            if (kt_cents(f, prev) > GLIDE_GAP_CENTS && !gap_lo) {
                gap_lo = prev;
                gap_hi = f;
            }
            prev = fmax(prev, f);
        }
        if (!gap_lo)
            return KT_OK;
        double mid = sqrt(gap_lo * gap_hi), T = fmin(fmax(guess(ps, d, mid), lo), hi), f;
        int rc = measure(ps, d, T, mid, &f, err);
        if (rc < 0)
            return rc;
        note(ps, "tuning drum %s: along a glide, %.1f N/m sounds %.3f Hz",
             ps->perf->drums[d].name, T, f);
    }
    return KT_OK;
}

/* ---- the plan ---- */

/* Drum d's pedal i of the history (past) or the performance, or NULL. */
static const kt_score_pedal *pedal_of(const kt_performance *perf, int d, int past, int i)
{
    const kt_score_pedal *p = past ? &perf->history[i] : &perf->pedals[i];
    return p->drum == d ? p : NULL;
}

static int push_target(kt_tuning *out, const kt_performance *perf, int d, int past, int i)
{
    const kt_score_pedal *p = i >= 0 ? pedal_of(perf, d, past, i) : NULL;
    if (i >= 0 && !p)
        return KT_OK;
    double hz = p ? p->target_hz : perf->drums[d].pitch_hz;
    double T = p ? p->target_tension_N_per_m : perf->drums[d].params.tension_N_per_m;
    kt_tuning_target *tg = kt_push((void **)&out->targets, &out->target_count, sizeof *tg);
    if (!tg)
        return KT_ENOMEM;
    *tg = (kt_tuning_target){d, i, past, hz, T, T, hz > 0 ? 0 : tuning_formula_pitch(perf, d, T),
                             0, 0};
    return KT_OK;
}

/* Each drum's targets in time order: its tuning, an excerpt's history,
 * its pedals. */
static int collect_targets(plan_state *ps)
{
    const kt_performance *perf = ps->perf;
    int rc = KT_OK;
    for (int d = 0; rc == 0 && d < perf->drum_count; d++) {
        rc = push_target(ps->out, perf, d, 0, -1);
        for (int i = 0; rc == 0 && i < perf->history_count; i++)
            rc = push_target(ps->out, perf, d, 1, i);
        for (int i = 0; rc == 0 && i < perf->pedal_count; i++)
            rc = push_target(ps->out, perf, d, 0, i);
    }
    return rc;
}

static int has_pedals(const kt_performance *perf, int d)
{
    for (int past = 0; past < 2; past++)
        for (int i = 0; i < (past ? perf->history_count : perf->pedal_count); i++)
            if (pedal_of(perf, d, past, i))
                return 1;
    return 0;
}

static int asks_pitch(const kt_performance *perf, int d)
{
    int any = perf->drums[d].pitch_hz > 0;
    for (int past = 0; past < 2; past++)
        for (int i = 0; i < (past ? perf->history_count : perf->pedal_count); i++) {
            const kt_score_pedal *p = pedal_of(perf, d, past, i);
            any |= p && p->target_hz > 0;
        }
    return any;
}

/* The membrane grid: the stability rule's for the drum's highest tension
 * with the margin its strongest stroke needs (kt_performance_membrane_intervals),
 * and for a drum tuned by calibration headroom above the formula's tensions.
 * `intervals` as asked when it is coarser, or finer than the rule allows at
 * the drum's own tension (createTimpani refuses it, naming the limit). */
static int plan_intervals(const plan_state *ps, int d, int calibrated)
{
    const kt_score_drum *dr = &ps->perf->drums[d];
    int asked = dr->params.membrane_intervals;
    double k = 1.0 / ps->room->sample_rate_hz;
    double scale = calibrated && asks_pitch(ps->perf, d) ? GRID_MARGIN : 1.0;
    int want = kt_performance_membrane_intervals(ps->perf, d, k, scale);
    if (asked <= 0)
        return want;
    if (scale > 1.0 || asked <= want)
        return asked;
    return asked > kt_timpani_rule_intervals(&dr->params, ps->room->sample_rate_hz) ? asked : want;
}

static int open_drum(plan_state *ps, int d)
{
    kt_tuning_drum *dr = &ps->out->drums[d];
    free(ps->key);
    ps->key = NULL;
    if (dr->point_count) {
        free(ps->hints);
        ps->hints = dr->points;
        ps->hint_count = dr->point_count;
    } else {
        free(dr->points);
    }
    dr->points = NULL;
    dr->point_count = 0;
    int rc = tuning_cache_key(&ps->setup, d, &ps->key, &ps->hash);
    if (rc < 0)
        return rc;
    snprintf(dr->key, sizeof dr->key, "%016llx", (unsigned long long)ps->hash);
    return tuning_cache_load(ps->out->cache_dir, ps->key, ps->hash, &dr->points,
                             &dr->point_count);
}

/* Every pitch of drum d, and the tensions its glides start or end at. */
static int tune_drum(plan_state *ps, int d, kt_score_error *err)
{
    const kt_performance *perf = ps->perf;
    kt_tuning *out = ps->out;
    int rc = KT_OK;
    for (int i = 0; rc == 0 && i < out->target_count; i++) {
        kt_tuning_target *tg = &out->targets[i];
        if (tg->drum != d)
            continue;
        if (tg->asked_hz > 0)
            rc = solve(ps, tg, err);
        else if (has_pedals(perf, d))
            rc = cover(ps, d, tg->tension_N_per_m, target_loc(perf, tg), err);
    }
    for (int j = 0; rc == 0 && j < out->target_count; j++)
        if (out->targets[j].drum == d)
            rc = cover_glide(ps, j, err);
    for (int i = 0; rc == 0 && i < out->target_count; i++)
        if (out->targets[i].drum == d && out->targets[i].asked_hz > 0)
            rc = read_off(ps, &out->targets[i], err);
    return rc;
}

static void learn_slope(plan_state *ps, int d)
{
    const kt_tuning_drum *dr = &ps->out->drums[d];
    if (dr->point_count < 2)
        return;
    const kt_tuning_point *a = &dr->points[0], *b = &dr->points[dr->point_count - 1];
    double dlnf = log(b->hz / a->hz);
    if (dlnf >= 0.01) {
        ps->slope_sum += fmin(fmax(log(b->tension_N_per_m / a->tension_N_per_m) / dlnf,
                                   TUNING_SLOPE_MIN), TUNING_SLOPE_MAX);
        ps->slope_n++;
    }
}

/* Drum d's pitches, on a coarser membrane grid when they need one. */
static int calibrate_drum(plan_state *ps, int d, kt_score_error *err)
{
    const kt_performance *perf = ps->perf;
    kt_tuning *out = ps->out;
    int rc = NEED_GRID;
    free(ps->hints);
    ps->hints = NULL;
    ps->hint_count = 0;
    for (int attempt = 0; rc == NEED_GRID && attempt < 3; attempt++) {
        if (attempt > 0) {
            double scale = ps->need_tension * 1.02 / kt_score_drum_max_tension(perf, d);
            ps->intervals[d] = kt_performance_membrane_intervals(perf, d,
                                                                 1.0 / ps->room->sample_rate_hz,
                                                                 scale);
            note(ps, "tuning drum %s: a coarser membrane grid (%d intervals) for %.0f N/m",
                 perf->drums[d].name, ps->intervals[d], ps->need_tension);
            for (int i = 0; i < out->target_count; i++)
                if (out->targets[i].drum == d)
                    out->targets[i].runs = 0;
        }
        if ((rc = open_drum(ps, d)) < 0)
            return kt_score_fail_at(perf, perf->drums[d].loc, err, rc, "out of memory");
        rc = tune_drum(ps, d, err);
    }
    if (rc == NEED_GRID)
        return kt_score_fail_at(perf, perf->drums[d].loc, err, KT_EINVAL,
                                "drum %s: no membrane grid carries %.0f N/m",
                                perf->drums[d].name, ps->need_tension);
    if (rc < 0)
        return rc;
    learn_slope(ps, d);
    for (int i = 0; i < out->target_count; i++)
        if (out->targets[i].drum == d && out->targets[i].pedal < 0)
            ps->tensions[d] = out->targets[i].tension_N_per_m;
    return KT_OK;
}

/* Every drum, in an order that does not depend on the orchestra's. */
static int calibrate(plan_state *ps, kt_score_error *err)
{
    const kt_performance *perf = ps->perf;
    int *order = malloc(sizeof *order * (size_t)(perf->drum_count + 1));
    if (!order)
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_ENOMEM, "out of memory");
    tuning_drum_order(perf, order);
    int rc = KT_OK;
    for (int k = 0; rc == 0 && k < perf->drum_count; k++)
        rc = calibrate_drum(ps, order[k], err);
    free(order);
    return rc;
}

/* Where a drum of an excerpt starts: its tuning moved by the history's
 * pedals as the whole render moves it (with the formula, the excerpt has
 * already put it there). */
static double start_tension(const plan_state *ps, int d, double T)
{
    const kt_tuning *out = ps->out;
    for (int i = 0; out->mode == KT_TUNING_CALIBRATED && i < out->target_count; i++) {
        const kt_tuning_target *tg = &out->targets[i];
        const kt_score_pedal *p = target_pedal(ps->perf, tg);
        if (tg->drum != d || !tg->past)
            continue;
        double u = p->duration_s > 0 ? -p->start_s / p->duration_s : 1;
        T = kt_tuning_glide(out, ps->perf, d, T, tg->tension_N_per_m, tg->asked_hz, u);
    }
    return T;
}

static void finish(plan_state *ps)
{
    kt_tuning *out = ps->out;
    for (int i = 0; i < out->target_count; i++) {
        kt_tuning_target *tg = &out->targets[i];
        if (tg->pedal >= 0 && !tg->past)
            out->pedal_tension_N_per_m[tg->pedal] = tg->tension_N_per_m;
        if (!tg->sounding_hz)
            tg->sounding_hz = kt_tuning_pitch(out, ps->perf, tg->drum, tg->tension_N_per_m);
    }
    for (int d = 0; d < out->drum_count; d++) {
        out->drums[d].membrane_intervals = ps->intervals[d];
        out->drums[d].tension_N_per_m = start_tension(ps, d, ps->tensions[d]);
    }
}

int kt_tuning_plan(const kt_performance *perf, const kt_room_params *room,
                   const kt_tuning_options *opt, kt_tuning *out, kt_score_error *err)
{
    kt_tuning_options defaults;
    if (!opt) {
        kt_tuning_options_default(&defaults);
        opt = &defaults;
    }
    memset(out, 0, sizeof *out);
    double t0 = kt_seconds();
    int nd = perf->drum_count, np = perf->pedal_count;
    plan_state ps = {.perf = perf, .room = room, .opt = opt, .out = out};
    out->mode = opt->mode;
    out->drum_count = nd;
    out->drums = calloc((size_t)(nd ? nd : 1), sizeof *out->drums);
    out->pedal_tension_N_per_m = calloc((size_t)(np ? np : 1), sizeof(double));
    ps.intervals = calloc((size_t)(nd ? nd : 1), sizeof *ps.intervals);
    ps.tensions = calloc((size_t)(nd ? nd : 1), sizeof *ps.tensions);
    int rc = out->drums && out->pedal_tension_N_per_m && ps.intervals && ps.tensions
                 ? collect_targets(&ps) : KT_ENOMEM;
    if (rc < 0)
        rc = kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, rc, "out of memory");
    int calibrated = opt->mode == KT_TUNING_CALIBRATED;
    for (int d = 0; rc == 0 && d < nd; d++) {
        ps.intervals[d] = plan_intervals(&ps, d, calibrated);
        ps.tensions[d] = perf->drums[d].params.tension_N_per_m;
    }
    /* a room over MPI ranks: every rank measures alike, none reads a cache
     * another process may be writing */
    if (calibrated && kt_mpi_size() == 1)
        tuning_cache_dir(opt->cache_dir, out->cache_dir, sizeof out->cache_dir);
    ps.setup = (tuning_setup){perf, room, ps.intervals, ps.tensions, opt->nthreads};
    if (rc == 0 && calibrated)
        rc = calibrate(&ps, err);
    if (rc == 0)
        finish(&ps);
    free(ps.key);
    free(ps.hints);
    free(ps.intervals);
    free(ps.tensions);
    out->seconds = kt_seconds() - t0;
    if (rc < 0)
        kt_tuning_free(out);
    return rc;
}
