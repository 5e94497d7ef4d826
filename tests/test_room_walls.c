/* test_room_walls.c - lossy walls: the reverberation time measured by
 * Schroeder backward integration of an impulse response (T from the -5 to
 * -25 dB decay, scaled to 60 dB) falls as beta rises and lies within 15 % of
 * Eyring's estimate for the diffuse-field absorption of the wall (1.05-1.07
 * times it; 1.2-1.35 times before issue #20, when the walls sat half a cell
 * beyond the end nodes and edges and corners took a single beta).
 *
 * beta -> absorption (docs/room.md): the wall's normal-incidence reflection
 * R = (1 - 2 beta)/(1 + 2 beta) (design note 2.2) is that of a locally
 * reacting surface of normalised impedance zeta = 1/(2 beta); Paris' formula
 * integrates its oblique-incidence absorption 4 zeta cos t / (zeta cos t + 1)^2
 * over the diffuse field:  alpha = 8/zeta [1 + 1/(1+zeta) - (2/zeta) ln(1+zeta)]. */
#include "kettle.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdlib.h>

static double diffuse_absorption(double beta)
{
    double z = 1.0 / (2.0 * beta);
    return 8.0 / z * (1.0 + 1.0 / (1.0 + z) - 2.0 / z * log(1.0 + z));
}

/* Paris' integral done numerically, to check the closed form above. */
static double diffuse_absorption_numeric(double beta)
{
    double z = 1.0 / (2.0 * beta), sum = 0;
    int n = 2000;
    for (int i = 0; i < n; i++) {
        double mu = (i + 0.5) / n; /* cos(theta) */
        sum += 4 * z * mu / pow(z * mu + 1, 2) * 2 * mu / n;
    }
    return sum;
}

static double measure_t60(double beta, double *eyring)
{
    kt_room_params p;
    kt_room_params_default(&p);
    /* Large enough in wavelengths for a roughly diffuse field, coarse enough to be quick. */
    p.size_m[0] = 2.5;
    p.size_m[1] = 2.0;
    p.size_m[2] = 1.5;
    p.sample_rate_hz = 12000;
    p.wall_beta = beta;
    p.nthreads = 1; /* threading has its own test; small grids gain nothing */
    kt_room *room;
    kt_error err;
    if (kt_room_create(&p, &room, &err) != KT_OK) {
        KT_CHECK(0, "create: %s", err.message);
        return NAN;
    }
    const double *L = p.size_m;   /* the walls sit where asked (docs/room.md) */
    double V = L[0] * L[1] * L[2], S = 2 * (L[0] * L[1] + L[1] * L[2] + L[0] * L[2]);
    double alpha = diffuse_absorption(beta);
    *eyring = 24 * log(10.0) * V / (p.sound_speed_m_per_s * S * -log(1 - alpha));
    const double src[3] = {0.27, 0.33, 0.18};
    const double mic[4][3] = {{1.67, 1.27, 0.97}, {0.71, 1.43, 0.52}, {2.03, 0.57, 1.21},
                              {1.13, 0.81, 0.33}};
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);
    kt_room_add_impulse(room, src, 2e-3, 1e-3, -1.0, &err);
    for (int m = 0; m < 4; m++) {
        char name[8] = {'m', (char)('0' + m), 0};
        kt_room_add_mic(room, name, mic[m], &err);
    }
    int64_t steps = (int64_t)(1.2 * *eyring * p.sample_rate_hz) + 2000;
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    double t60 = kt_test_schroeder_t60(room, p.sample_rate_hz);
    printf("beta %.3f: diffuse alpha %.3f, T60 measured %.4f s, Eyring %.4f s, ratio %.2f\n",
           beta, alpha, t60, *eyring, t60 / *eyring);
    kt_room_destroy(room);
    return t60;
}

int main(void)
{
    for (double beta = 0.02; beta < 2; beta *= 3)
        KT_CHECK_REL(diffuse_absorption(beta), diffuse_absorption_numeric(beta), 1e-5, 0);
    const double betas[3] = {0.01, 0.02, 0.05};
    double last = INFINITY;
    for (int i = 0; i < 3; i++) {
        double eyring, t60 = measure_t60(betas[i], &eyring);
        KT_CHECK(t60 < last, "T60 %g s at beta %g is not below %g s", t60, betas[i], last);
        KT_CHECK(t60 < 1.15 * eyring && t60 > eyring / 1.15,
                 "beta %g: T60 %g s against Eyring %g s", betas[i], t60, eyring);
        last = t60;
    }
    return kt_test_finish("test_room_walls");
}
