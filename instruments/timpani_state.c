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
    return 96 + 3 * (size_t)t->nn * sizeof(double) + 4 * (size_t)t->nw * sizeof(double);
}

static int put_arrays(const kt_timpani *t, kt_state_io *io, kt_error *err)
{
    const double *nn[] = {t->u, t->u1, t->a};
    const double *nw[] = {t->w, t->w1, t->Dn, t->Dn1};
    int rc = KT_OK;
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = kt_state_put(io, nn[i], (size_t)t->nn * sizeof(double), err);
    for (int i = 0; rc == 0 && i < 4; i++)
        rc = kt_state_put(io, nw[i], (size_t)t->nw * sizeof(double), err);
    return rc;
}

int kt_timpani_save_state(const kt_timpani *t, kt_state_io *io, kt_error *err)
{
    int32_t shape[4] = {t->n, t->nw, t->nstrikes, t->last_iterations};
    double values[3] = {t->p.tension_N_per_m, t->sigma0, t->last_increment};
    int rc = kt_state_put_tag(io, "DRUM", err);
    if (rc == 0)
        rc = kt_state_put(io, shape, sizeof shape, err);
    if (rc == 0)
        rc = kt_state_put(io, &t->steps, sizeof t->steps, err);
    if (rc == 0)
        rc = kt_state_put(io, values, sizeof values, err);
    return rc < 0 ? rc : put_arrays(t, io, err);
}

/* Tension and damping as they were: the setters rebuild every coefficient
 * from scratch, as the render's own calls did. */
static int restore_settings(kt_timpani *t, double tension, double sigma0, kt_error *err)
{
    int rc = KT_OK;
    if (tension != t->p.tension_N_per_m)
        rc = kt_timpani_set_tension(t, tension, err);
    if (rc == 0 && sigma0 != t->sigma0)
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
    if (rc == 0 && (shape[0] != t->n || shape[1] != t->nw || shape[2] != t->nstrikes))
        return kt_fail(err, KT_EINVAL,
                       "the checkpoint's drum (%d x %d head, %d strikes) does not match '%s' of "
                       "the score (%d x %d, %d strikes)", shape[0], shape[0], shape[2],
                       t->p.name, t->n, t->n, t->nstrikes);
    if (rc == 0)
        rc = kt_state_get(io, &t->steps, sizeof t->steps, err);
    if (rc == 0)
        rc = kt_state_get(io, values, sizeof values, err);
    if (rc == 0 && (t->steps < 0 || shape[3] < 0 || !(values[2] >= 0)))
        return kt_fail(err, KT_EINVAL, "the checkpoint is damaged or forged: drum '%s' has step "
                       "count %lld, solver iterations %d, increment %g", t->p.name,
                       (long long)t->steps, shape[3], values[2]);
    if (rc == 0 && (rc = restore_settings(t, values[0], values[1], err)) < 0) {
        char why[KT_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", err ? err->message : "");
        return kt_fail(err, rc, "the checkpoint's drum '%s' (tension %g N/m, damping %g /s): %s",
                       t->p.name, values[0], values[1], why);
    }
    double *nn[] = {t->u, t->u1, t->a};
    double *nw[] = {t->w, t->w1, t->Dn, t->Dn1};
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = kt_state_get(io, nn[i], (size_t)t->nn * sizeof(double), err);
    for (int i = 0; rc == 0 && i < 4; i++)
        rc = kt_state_get(io, nw[i], (size_t)t->nw * sizeof(double), err);
    t->last_iterations = shape[3];
    t->last_increment = values[2];
    return rc;
}

double kt_timpani_scan(const kt_timpani *t, int *bad)
{
    double peak = 0;
    *bad = 0;
    for (int q = 0; q < t->ninside; q++) {
        double v = fabs(t->u[t->inside[q]]);
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
    return t->p.name;
}
