/* test_room_precision.c - single and double precision agree: on the same
 * grid (the single-precision Courant back-off used by both), the microphone
 * signals over 2,000 steps differ by under 1e-3 relative RMS. */
#include "kettle.h"
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

int main(void)
{
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
