/* tuning_curve.c - a drum's tuning curve: the measured (tension, (1,1))
 * points, read as log tension against log frequency, and the first-order
 * formula that stands in where a drum has no points (kt_tuning.h). */
#include "tuning_internal.h"

#include <math.h>
#include <stdlib.h>

#define SEGMENT_MIN 0.003     /* points closer than this in ln (5 cents in f) give no slope */

double tuning_formula_tension(const kt_performance *perf, int d, double hz)
{
    const kt_timpani_params *p = &perf->drums[d].params;
    return kt_timpani_tension_for_pitch(p->diameter_m / 2, p->surface_density_kg_per_m2, hz);
}

double tuning_formula_pitch(const kt_performance *perf, int d, double T)
{
    const kt_timpani_params *p = &perf->drums[d].params;
    return kt_timpani_pitch_hz(p->diameter_m / 2, p->surface_density_kg_per_m2, T);
}

/* y at x along points (x[i], y[i]): the line through the point nearest x
 * and a partner at least SEGMENT_MIN from it (the nearest one on the other
 * side of x when there is one, so that inside the points this interpolates
 * between neighbours; else the nearest beyond it).  With no partner, or a
 * single point, the line takes `slope`; slopes are clamped to [lo, hi]. */
static double along(const double *x, const double *y, int n, double at, double slope,
                    double lo, double hi)
{
    int j = 0, k = -1, k_across = 0;
    for (int i = 1; i < n; i++)
        if (fabs(x[i] - at) < fabs(x[j] - at))
            j = i;
    for (int i = 0; i < n; i++) {
        if (fabs(x[i] - x[j]) < SEGMENT_MIN)
            continue;
        int across = (x[i] - at) * (x[j] - at) <= 0;
        int nearer = k < 0 || fabs(x[i] - at) < fabs(x[k] - at);
        if (k < 0 || across > k_across || (across == k_across && nearer)) {
            k = i;
            k_across = across;
        }
    }
    double s = k >= 0 ? (y[k] - y[j]) / (x[k] - x[j]) : slope;
    return y[j] + fmin(fmax(s, lo), hi) * (at - x[j]);
}

/* ln T and ln f of the points. */
static int logs(const kt_tuning_point *p, int n, double **lnT, double **lnf)
{
    *lnT = malloc(sizeof **lnT * (size_t)n);
    *lnf = malloc(sizeof **lnf * (size_t)n);
    if (!*lnT || !*lnf) {
        free(*lnT);
        free(*lnf);
        return KT_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        (*lnT)[i] = log(p[i].tension_N_per_m);
        (*lnf)[i] = log(p[i].hz);
    }
    return KT_OK;
}

double tuning_curve_tension(const kt_tuning_point *p, int n, double hz, double slope)
{
    double *lnT, *lnf;
    if (n < 1 || logs(p, n, &lnT, &lnf) < 0)
        return NAN;
    double T = exp(along(lnf, lnT, n, log(hz), slope, TUNING_SLOPE_MIN, TUNING_SLOPE_MAX));
    free(lnT);
    free(lnf);
    return T;
}

double tuning_curve_pitch(const kt_tuning_point *p, int n, double T, double slope)
{
    double *lnT, *lnf;
    if (n < 1 || logs(p, n, &lnT, &lnf) < 0)
        return NAN;
    double f = exp(along(lnT, lnf, n, log(T), 1 / slope, 1 / TUNING_SLOPE_MAX,
                         1 / TUNING_SLOPE_MIN));
    free(lnT);
    free(lnf);
    return f;
}

double kt_tuning_tension(const kt_tuning *t, const kt_performance *perf, int drum, double hz)
{
    const kt_tuning_drum *d = &t->drums[drum];
    return d->point_count ? tuning_curve_tension(d->points, d->point_count, hz, 2.0)
                          : tuning_formula_tension(perf, drum, hz);
}

double kt_tuning_pitch(const kt_tuning *t, const kt_performance *perf, int drum,
                       double tension_N_per_m)
{
    const kt_tuning_drum *d = &t->drums[drum];
    return d->point_count ? tuning_curve_pitch(d->points, d->point_count, tension_N_per_m, 2.0)
                          : tuning_formula_pitch(perf, drum, tension_N_per_m);
}

double kt_tuning_glide(const kt_tuning *t, const kt_performance *perf, int drum, double from_T,
                       double to_T, double to_hz, double u)
{
    if (u >= 1)
        return to_T;
    if (t->mode == KT_TUNING_MODEL)
        return from_T * pow(to_T / from_T, u);
    double f0 = kt_tuning_pitch(t, perf, drum, from_T);
    double f1 = to_hz > 0 ? to_hz : kt_tuning_pitch(t, perf, drum, to_T);
    return kt_tuning_tension(t, perf, drum, f0 * pow(f1 / f0, u));
}

/* Head centre a before b (x, then y, then z). */
static int placed_before(const kt_performance *perf, int a, int b)
{
    const double *x = perf->drums[a].params.rim_centre_m, *y = perf->drums[b].params.rim_centre_m;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k])
            return x[k] < y[k];
    return a < b;
}

void tuning_drum_order(const kt_performance *perf, int *order)
{
    /* insertion: a set has a few drums */
    for (int d = 0; d < perf->drum_count; d++) {
        int i = d;
        for (; i > 0 && placed_before(perf, d, order[i - 1]); i--)
            order[i] = order[i - 1];
        order[i] = d;
    }
}
