/* timpani_state.c - a drum's state for checkpoints (kt_timpani_state.h):
 * what one step hands the next (u^n, u^{n-1}, a^n, I23 u^n, I23 u^{n-1}, the
 * window buffers D^n and D^{n-1}, the step count) and the two settings the
 * score changes while it plays (tension and damping).  Geometry, operators
 * and the strike queue are rebuilt from the score; the strike count is kept
 * as a check.  Also a cheap scan of the head for the render's guard. */
#include "timpani_internal.h"
#include "kt_timpani_state.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t kt_timpani_state_bytes(const kt_timpani *t)
{
    return 96 + 3 * (size_t)t->plan.nn * sizeof(double) + 4 * (size_t)t->plan.nw * sizeof(double);
}

static int put_arrays(const kt_timpani *t, kt_state_io *io, kt_error *err)
{
    const double *nn[] = {t->state.u, t->state.u1, t->state.a};
    const double *nw[] = {t->state.w, t->state.w1, t->state.Dn, t->state.Dn1};
    int rc = KT_OK;
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = kt_state_put(io, nn[i], (size_t)t->plan.nn * sizeof(double), err);
    for (int i = 0; rc == 0 && i < 4; i++)
        rc = kt_state_put(io, nw[i], (size_t)t->plan.nw * sizeof(double), err);
    return rc;
}

int kt_timpani_save_state(const kt_timpani *t, kt_state_io *io, kt_error *err)
{
    int32_t shape[4] = {t->plan.n, t->plan.nw, t->state.nstrikes, t->state.last_iterations};
    double values[3] = {t->plan.p.tension_N_per_m, t->plan.sigma0, t->state.last_increment};
    int rc = kt_state_put_tag(io, "DRUM", err);
    if (rc == 0)
        rc = kt_state_put(io, shape, sizeof shape, err);
    if (rc == 0)
        rc = kt_state_put(io, &t->state.steps, sizeof t->state.steps, err);
    if (rc == 0)
        rc = kt_state_put(io, values, sizeof values, err);
    return rc < 0 ? rc : put_arrays(t, io, err);
}

/* Tension and damping as they were: the setters rebuild every coefficient
 * from scratch, as the render's own calls did. */
static int restore_settings(kt_timpani *t, double tension, double sigma0, kt_error *err)
{
    int rc = KT_OK;
    if (tension != t->plan.p.tension_N_per_m)
        rc = kt_timpani_set_tension(t, tension, err);
    if (rc == 0 && sigma0 != t->plan.sigma0)
        rc = kt_timpani_set_damping(t, sigma0, err);
    return rc;
}

int kt_timpani_load_state(kt_timpani *t, kt_state_io *io, kt_error *err)
{
    int32_t shape[4];
    double values[3];
    int rc = kt_state_expect_tag(io, "DRUM", err);
    if (rc == 0)
        rc = kt_state_get(io, shape, sizeof shape, err);
    if (rc == 0 && (shape[0] != t->plan.n || shape[1] != t->plan.nw || shape[2] != t->state.nstrikes))
        return kt_fail(err, KT_EINVAL,
                       "the checkpoint's drum (%d x %d head, %d strikes) does not match '%s' of "
                       "the score (%d x %d, %d strikes)", shape[0], shape[0], shape[2],
                       t->plan.p.name, t->plan.n, t->plan.n, t->state.nstrikes);
    if (rc == 0)
        rc = kt_state_get(io, &t->state.steps, sizeof t->state.steps, err);
    if (rc == 0)
        rc = kt_state_get(io, values, sizeof values, err);
    if (rc == 0 && (t->state.steps < 0 || shape[3] < 0 || !(values[2] >= 0)))
        return kt_fail(err, KT_EINVAL, "the checkpoint is damaged or forged: drum '%s' has step "
                       "count %lld, solver iterations %d, increment %g", t->plan.p.name,
                       (long long)t->state.steps, shape[3], values[2]);
    if (rc == 0 && (rc = restore_settings(t, values[0], values[1], err)) < 0) {
        char why[KT_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", err ? err->message : "");
        return kt_fail(err, rc, "the checkpoint's drum '%s' (tension %g N/m, damping %g /s): %s",
                       t->plan.p.name, values[0], values[1], why);
    }
    double *nn[] = {t->state.u, t->state.u1, t->state.a};
    double *nw[] = {t->state.w, t->state.w1, t->state.Dn, t->state.Dn1};
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = kt_state_get(io, nn[i], (size_t)t->plan.nn * sizeof(double), err);
    for (int i = 0; rc == 0 && i < 4; i++)
        rc = kt_state_get(io, nw[i], (size_t)t->plan.nw * sizeof(double), err);
    t->state.last_iterations = shape[3];
    t->state.last_increment = values[2];
    return rc;
}

double kt_timpani_scan(const kt_timpani *t, int *bad)
{
    double peak = 0;
    *bad = 0;
    for (int q = 0; q < t->plan.ninside; q++) {
        double v = fabs(t->state.u[t->plan.inside[q]]);
        if (!(v <= peak)) {
            if (isnan(v) || isinf(v)) {
                *bad = isnan(v) ? 2 : 1;
                return v;
            }
            peak = v;
        }
    }
    return peak;
}

const char *kt_timpani_name(const kt_timpani *t)
{
    return t->plan.p.name;
}
