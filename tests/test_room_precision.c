/* test_room_precision.c - single and double precision agree: on the same
 * grid (the single-precision Courant back-off used by both), the microphone
 * signals over 2,000 steps differ by under 1e-3 relative RMS.
 *
 * And the uniform mode is neutral in float arithmetic (issue 18): the sum S
 * of Psi over a rigid box obeys S^{n+1} = 2 S^n - S^{n-1} once a net-volume
 * pulse has ended, so S grows in a straight line.  When lambda^2 and the
 * centre coefficient 2 - 6 lambda^2 were rounded to floats separately they
 * summed to 2 + delta with |delta| ~ 1e-8, and S bent away as cosh or cos of
 * sqrt(delta) n: that mode, closed inside a drum's bowl, blew renders up. */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdlib.h>

static kt_room *run(kt_precision precision, double beta, int steps)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 0.9;
    p.size_m[1] = 0.7;
    p.size_m[2] = 0.5;
    p.sample_rate_hz = 16000;
    p.precision = precision;
    p.courant_backoff = KT_SINGLE_COURANT_BACKOFF;
    p.wall_beta = beta;
    p.nthreads = 1; /* threading has its own test; small grids gain nothing */
    kt_room *room = NULL;
    kt_error err;
    if (kt_room_create(&p, &room, &err) != KT_OK) {
        KT_CHECK(0, "create: %s", err.message);
        return NULL;
    }
    const double src[3] = {0.13, 0.21, 0.11}, m1[3] = {0.67, 0.31, 0.29}, m2[3] = {0.35, 0.6, 0.4};
    /* Pulses weighted 1, -2, 1: no net volume and no net displacement of the
     * rigid box's uniform mode, whose constant offset in Psi would otherwise
     * cost single precision digits in p ~ Psi^{n+1} - Psi^n. */
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);
    kt_room_add_impulse(room, src, 2e-3, 1e-3, -2.0, &err);
    kt_room_add_impulse(room, src, 4e-3, 1e-3, 1.0, &err);
    kt_room_add_mic(room, "a", m1, &err);
    kt_room_add_mic(room, "b", m2, &err);
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    return room;
}

/* Sum of Psi^n over the whole room. */
static double field_sum(const kt_room *room, double *layer)
{
    const kt_room_grid *g = kt_room_get_grid(room);
    double sum = 0;
    for (int z = 0; z < g->nz; z++) {
        kt_room_read_layer(room, KT_NOW, z, 0, 0, g->nx, g->ny, layer);
        for (int i = 0; i < g->nx * g->ny; i++)
            sum += layer[i];
    }
    return sum;
}

static const char *scheme_name(kt_air_scheme s)
{
    return s == KT_SCHEME_SLF7 ? "7-point" : s == KT_SCHEME_IWB27 ? "IWB" : "FCC";
}

/* A rigid single-precision box, one positive pulse, then 3 x 8,000 steps:
 * S's second difference over the three spans stays within 2e-2 of S
 * (round-off: under 3e-3; with the bias: 0.26 to 0.72). */
static void check_uniform_mode(kt_air_scheme scheme, double sample_rate_hz, double extra)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.sample_rate_hz = sample_rate_hz;
    p.scheme = scheme;
    double lambda_max = scheme == KT_SCHEME_SLF7 ? 1 / sqrt(3.0) : 1.0;
    double Q = 343.2 / lambda_max / sample_rate_hz / (1 - KT_SINGLE_COURANT_BACKOFF);
    p.size_m[0] = (9 + extra) * Q;   /* 9 intervals: lambda^2 from (9 / (9 + extra))^2 */
    p.size_m[1] = 8.5 * Q;
    p.size_m[2] = 7.5 * Q;
    p.precision = KT_SINGLE;
    p.wall_beta = 0;
    p.nthreads = 1;
    kt_room *room = NULL;
    kt_error err;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "create: %s", err.message);
    if (!room)
        return;
    const double src[3] = {3.2 * Q, 4.1 * Q, 2.7 * Q};
    kt_room_add_impulse(room, src, 0, 20 / sample_rate_hz, 1.0, &err);
    const kt_room_grid *g = kt_room_get_grid(room);
    double *layer = malloc(sizeof *layer * (size_t)g->nx * g->ny), S[3];
    KT_CHECK(kt_room_run(room, 100, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    for (int i = 0; i < 3; i++) {
        S[i] = field_sum(room, layer);
        KT_CHECK(kt_room_run(room, 8000, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    }
    double bend = fabs(S[2] - 2 * S[1] + S[0]) / fabs(S[2]);
    printf("%s, %g Hz, lambda^2 = %.9f: uniform mode bends by %.2e of itself over 16,000 steps\n",
           scheme_name(scheme), sample_rate_hz, g->courant * g->courant, bend);
    KT_CHECK(bend < 2e-2, "%s, %g Hz: the uniform mode is not neutral in single precision (%.3g)",
             scheme_name(scheme), sample_rate_hz, bend);
    free(layer);
    kt_room_destroy(room);
}

int main(void)
{
    const double rates[] = {8000, 11025, 16000, 22050, 44100, 48000, 96000};
    for (int r = 0; r < 7; r++)
        check_uniform_mode(KT_SCHEME_SLF7, rates[r], 0.02 + 0.11 * r);
    for (int r = 0; r < 7; r += 3) {
        check_uniform_mode(KT_SCHEME_IWB27, rates[r], 0.07 + 0.13 * r);
        check_uniform_mode(KT_SCHEME_FCC13, rates[r], 0.07 + 0.13 * r);
    }
    const int steps = 2000;
    const double betas[2] = {0, 0.2};
    for (int b = 0; b < 2; b++) {
        kt_room *d = run(KT_DOUBLE, betas[b], steps), *s = run(KT_SINGLE, betas[b], steps);
        if (!d || !s)
            break;
        const kt_room_grid *gd = kt_room_get_grid(d), *gs = kt_room_get_grid(s);
        KT_CHECK(gd->nx == gs->nx && gd->spacing_m == gs->spacing_m, "grids differ");
        KT_CHECK(gs->courant < (1 - 0.9 * KT_SINGLE_COURANT_BACKOFF) / sqrt(3.0),
                 "courant %.8f is not backed off", gs->courant);
        for (int m = 0; m < 2; m++) {
            int64_t n;
            const double *x = kt_room_mic_signal(d, m, &n), *y = kt_room_mic_signal(s, m, NULL);
            double diff = 0, ref = 0;
            for (int64_t i = 0; i < n; i++) {
                diff += (x[i] - y[i]) * (x[i] - y[i]);
                ref += x[i] * x[i];
            }
            double rel = sqrt(diff / ref);
            printf("beta %.1f, mic %d: single vs double relative RMS %.2e\n", betas[b], m, rel);
            KT_CHECK(ref > 0 && rel < 1e-3, "beta %g mic %d: relative RMS %g", betas[b], m, rel);
        }
        kt_room_destroy(d);
        kt_room_destroy(s);
    }
    return kt_test_finish("test_room_precision");
}
