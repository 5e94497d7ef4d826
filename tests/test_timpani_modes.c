/* test_timpani_modes.c - the membrane alone (uncoupled, linear, lossless)
 * rings at the clamped circular membrane's frequencies j_mn c_M / (2 pi R)
 * (design note 10): the first four modes (0,1), (1,1), (2,1), (0,2) within
 * 1 % (the scheme sits ~0.35 % low; a wrong coefficient in B, a wrong mask
 * or spacing moves them by far more).
 *
 * 29-inch drum, 44.1 kHz, grid from the lossless stability rule (205^2)
 * (under the sanitizer: 22.05 kHz and half the steps, the same 0.37 s);
 * a short strike at r = 0.3 R, the displacement observed at r = 0.6 R, one
 * radian round, where all four modes show; 2^14 steps; the peak of the
 * Hann-windowed spectrum is located by a fine scan within +-5 % of each
 * Bessel value and must be an interior maximum of that band. */
#include "kt_physics.h"
#include "kt_test.h"
#include "timpani.h"

#include <math.h>
#include <stdlib.h>


static double power_at(const double *xw, int n, double fs, double f)
{
    double re = 0.0, im = 0.0, w = 2.0 * KT_PI * f / fs;
    for (int i = 0; i < n; i++) {
        re += xw[i] * cos(w * i);
        im -= xw[i] * sin(w * i);
    }
    return re * re + im * im;
}

/* Peak frequency in [f0, f1]; *edge set when the maximum sits on the band edge. */
static double peak_in_band(const double *xw, int n, double fs, double f0, double f1, int *edge)
{
    double best = -1.0, bestf = f0, step = 0.2;
    for (double f = f0; f <= f1; f += step) {
        double p = power_at(xw, n, fs, f);
        if (p > best) {
            best = p;
            bestf = f;
        }
    }
    *edge = bestf - f0 < step || f1 - bestf < step;
    double centre = bestf;
    for (double f = centre - step; f <= centre + step; f += 0.005) {
        double p = power_at(xw, n, fs, f);
        if (p > best) {
            best = p;
            bestf = f;
        }
    }
    return bestf;
}

int main(void)
{
    kt_error err = {0};
    int sanitized = getenv("KETTLE_TEST_SANITIZED") != NULL;
    int steps = sanitized ? 8192 : 16384;
    kt_room_params rp;
    kt_room_params_default(&rp);
    if (sanitized)
        rp.sample_rate_hz = 22050.0;
    kt_room *room = NULL;
    KT_CHECK(kt_room_create(&rp, &room, &err) == KT_OK, "room: %s", err.message);
    if (!room)
        return kt_test_finish("test_timpani_modes");
    kt_timpani_params p;
    kt_timpani_params_standard(&p, 29, &err);
    p.coupled = 0;
    p.nonlinear = 0;
    p.loss_s = 0.0;
    kt_timpani *t = NULL;
    KT_CHECK(createTimpani(room, &p, &t, &err) == KT_OK, "createTimpani: %s", err.message);
    if (!t) {
        kt_room_destroy(room);
        return kt_test_finish("test_timpani_modes");
    }
    kt_timpani_info info;
    kt_timpani_get_info(t, &info);
    if (!sanitized)
        KT_CHECK(info.membrane_n == 205, "lossless grid %d, expected 205", info.membrane_n);
    double R = 0.5 * p.diameter_m, h = info.membrane_spacing_m;
    KT_CHECK(kt_timpani_strike(t, 0.0, 5.0, 0.5e-3, 0.3 * R, 0.0, &err) == KT_OK, "%s",
             err.message);
    double ox = 0.6 * R * cos(1.0), oy = 0.6 * R * sin(1.0);
    int jo = (int)lround((ox + R) / h) * info.membrane_n + (int)lround((oy + R) / h);

    double *x = malloc((size_t)steps * sizeof *x);
    for (int s = 0; s < steps; s++) {
        if (kt_room_step(room, &err) != KT_OK) {
            KT_CHECK(0, "step %d: %s", s, err.message);
            break;
        }
        x[s] = kt_timpani_displacement(t)[jo];
    }
    for (int i = 0; i < steps; i++)
        x[i] *= 0.5 - 0.5 * cos(2.0 * KT_PI * i / (steps - 1));

    const char *name[4] = {"(0,1)", "(1,1)", "(2,1)", "(0,2)"};
    const double j_mn[4] = {2.404825557695773, 3.831705970207512, 5.135622301840683,
                            5.520078110286311};
    double cM = sqrt(p.tension_N_per_m / p.surface_density_kg_per_m2);
    for (int m = 0; m < 4; m++) {
        double fb = j_mn[m] * cM / (2.0 * KT_PI * R);
        int edge = 0;
        double f = peak_in_band(x, steps, rp.sample_rate_hz, 0.95 * fb, 1.05 * fb, &edge);
        printf("mode %s: %.3f Hz, Bessel %.3f Hz (%+.3f %%)\n", name[m], f, fb,
               100.0 * (f / fb - 1.0));
        KT_CHECK(!edge, "mode %s: no peak inside 0.95..1.05 of %.2f Hz", name[m], fb);
        KT_CHECK(fabs(f / fb - 1.0) < 0.01, "mode %s at %.3f Hz, Bessel %.3f Hz", name[m], f, fb);
    }
    free(x);
    kt_room_destroy(room);
    return kt_test_finish("test_timpani_modes");
}
