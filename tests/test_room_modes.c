/* test_room_modes.c - the impulse response of a rigid box rings at the
 * analytic room modes f = (c/2) sqrt((l/Lx)^2 + (m/Ly)^2 + (n/Lz)^2), with the
 * effective lengths L = (N+1) Q of the fold-back walls (design note 10), for
 * the first ten modes within 0.5 %.  Peaks are found by a Hann-windowed DFT
 * around each predicted mode with parabolic interpolation of log magnitude. */
#include "kettle.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

typedef struct mode {
    int l, m, n;
    double f_hz;
} mode;

static int compare_modes(const void *a, const void *b)
{
    double x = ((const mode *)a)->f_hz, y = ((const mode *)b)->f_hz;
    return (x > y) - (x < y);
}

/* The lowest `count` non-zero modes of a box of effective lengths L. */
static void predicted_modes(const double L[3], double c, mode *out, int count)
{
    mode all[512];
    int n = 0;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            for (int d = 0; d < 8; d++) {
                if (a + b + d == 0)
                    continue;
                double s = pow(a / L[0], 2) + pow(b / L[1], 2) + pow(d / L[2], 2);
                all[n++] = (mode){a, b, d, 0.5 * c * sqrt(s)};
            }
    qsort(all, (size_t)n, sizeof *all, compare_modes);
    memcpy(out, all, sizeof *out * (size_t)count);
}

/* |DFT| of the windowed signal at frequency f (Hz). */
static double dft_magnitude(const double *w, int64_t n, double f, double rate)
{
    double re = 0, im = 0, step = 2 * KT_PI * f / rate;
    double cs = cos(step), sn = sin(step), c = 1, s = 0;
    for (int64_t i = 0; i < n; i++) {
        re += w[i] * c;
        im -= w[i] * s;
        double c2 = c * cs - s * sn;
        s = s * cs + c * sn;
        c = c2;
    }
    return hypot(re, im);
}

/* The spectral peak nearest f0 within +-span (relative), refined by a parabola
 * through the log magnitudes of the best bin and its neighbours; NAN if the
 * largest value lies on the edge of the search range (no peak there). */
static double find_peak(const double *w, int64_t n, double rate, double f0, double span)
{
    double bin = rate / (double)n / 4; /* 4x zero-padded bin spacing */
    int lo = (int)floor(f0 * (1 - span) / bin), hi = (int)ceil(f0 * (1 + span) / bin);
    int best = lo;
    double best_mag = -1;
    for (int b = lo; b <= hi; b++) {
        double m = dft_magnitude(w, n, b * bin, rate);
        if (m > best_mag) {
            best_mag = m;
            best = b;
        }
    }
    if (best == lo || best == hi)
        return NAN;
    double a = log(dft_magnitude(w, n, (best - 1) * bin, rate));
    double m = log(best_mag), c = log(dft_magnitude(w, n, (best + 1) * bin, rate));
    double shift = 0.5 * (a - c) / (a - 2 * m + c);
    return (best + shift) * bin;
}

int main(void)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 1.0;
    p.size_m[1] = 0.8;
    p.size_m[2] = 0.6;
    /* 16 kHz keeps the axial dispersion of the (0,2,0) mode near 0.25 %. */
    p.sample_rate_hz = 16000;
    p.nthreads = 1; /* threading has its own test; small grids gain nothing */
    kt_room *room;
    kt_error err;
    if (kt_room_create(&p, &room, &err) != KT_OK) {
        KT_CHECK(0, "create: %s", err.message);
        return kt_test_finish("test_room_modes");
    }
    const kt_room_grid *g = kt_room_get_grid(room);
    double Q = g->spacing_m;
    double L[3] = {g->nx * Q, g->ny * Q, g->nz * Q}; /* (N+1) Q with N+1 nodes */
    printf("grid %d x %d x %d, Q = %.5f m, L_eff = %.4f x %.4f x %.4f m\n", g->nx, g->ny, g->nz,
           Q, L[0], L[1], L[2]);
    const double src[3] = {0.11, 0.13, 0.07}, mic[3] = {0.87, 0.61, 0.49};
    KT_CHECK(kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_impulse(room, src, 2e-3, 1e-3, -1.0, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_mic(room, "mic", mic, &err) == 0, "%s", err.message);
    int64_t steps = 1 << 15;
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "run: %s", err.message);

    int64_t n;
    const double *sig = kt_room_mic_signal(room, 0, &n);
    double *w = malloc(sizeof *w * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        w[i] = sig[i] * 0.5 * (1 - cos(2 * KT_PI * (double)i / (double)(n - 1)));
    mode modes[10];
    predicted_modes(L, p.sound_speed_m_per_s, modes, 10);
    for (int i = 0; i < 10; i++) {
        double f = find_peak(w, n, p.sample_rate_hz, modes[i].f_hz, 0.008);
        double rel = (f - modes[i].f_hz) / modes[i].f_hz;
        printf("mode (%d,%d,%d): predicted %8.3f Hz, measured %8.3f Hz, %+.3f %%\n", modes[i].l,
               modes[i].m, modes[i].n, modes[i].f_hz, f, 100 * rel);
        KT_CHECK(isfinite(f) && fabs(rel) < 0.005, "mode (%d,%d,%d) at %g Hz, predicted %g Hz",
                 modes[i].l, modes[i].m, modes[i].n, f, modes[i].f_hz);
    }
    /* And the plain lengths (1.0 x 0.8 x 0.6) would not fit: the effective
     * length is what the walls mean. */
    double f_plain = 0.5 * p.sound_speed_m_per_s / p.size_m[0];
    double f_meas = find_peak(w, n, p.sample_rate_hz, modes[0].f_hz, 0.008);
    KT_CHECK(fabs(f_meas - f_plain) > 3 * fabs(f_meas - modes[0].f_hz),
             "(1,0,0) at %g Hz: L_eff predicts %g, L predicts %g", f_meas, modes[0].f_hz, f_plain);
    free(w);
    kt_room_destroy(room);
    return kt_test_finish("test_room_modes");
}
