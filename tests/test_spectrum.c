/* test_spectrum.c - the frequency reader behind the tuner and `kettle plot`
 * (perform/include/kt_spectrum.h) on signals whose partials are known exactly: what
 * the tuner reads (the drum's membrane projected on the (1,1) shape, ten
 * periods of it) and what a microphone hears after the attack (the (1,1),
 * the last of the radiation-damped (0,1) 18 % above it, the (2,1), a room
 * mode, a little noise), on one channel or two.  The (1,1) must come out
 * within 0.01 cent (the weaker (2,1) within 0.05): that is what makes the
 * tuning tests' 3-cent checks a test of the drum, not of the reader.  Also
 * the nearest note and its cents, and refusals. */
#include "kt_spectrum.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RATE 22050.0

typedef struct partial {
    double hz, amplitude, decay_per_s, phase;
} partial;

/* channels interleaved; channel c gets each partial with sign (-1)^(c * k) */
static double *synth(const partial *p, int np, int64_t n, int channels, double noise)
{
    double *x = malloc(sizeof *x * (size_t)n * channels);
    unsigned s = 12345;
    for (int64_t i = 0; i < n; i++)
        for (int c = 0; c < channels; c++) {
            double t = i / RATE, v = 0;
            for (int k = 0; k < np; k++)
                v += ((c * k) % 2 ? -1 : 1) * p[k].amplitude * exp(-p[k].decay_per_s * t) *
                     cos(2 * KT_PI * p[k].hz * t + p[k].phase);
            s = s * 1103515245u + 12345u;
            x[i * channels + c] = v + noise * ((s >> 8) / 16777216.0 - 0.5);
        }
    return x;
}

static void check_peak(const double *x, int64_t n, int channels, double lo, double hi,
                       double want, const char *what, double cents)
{
    kt_spectrum sp;
    kt_error e = {0};
    kt_peak pk = {0};
    KT_CHECK(kt_spectrum_compute(&sp, x, n, channels, channels, RATE, 8, &e) == 0, "%s",
             e.message);
    KT_CHECK(kt_spectrum_peak(&sp, lo, hi, &pk) == 0, "%s: no peak", what);
    KT_CHECK(fabs(kt_cents(pk.hz, want)) < cents, "%s: %.5f Hz, want %.5f (%.4f cents)", what,
             pk.hz, want, kt_cents(pk.hz, want));
    kt_spectrum_free(&sp);
}

int main(void)
{
    const double g2 = 97.998858995;
    /* What the tuner reads: the membrane projected on the (1,1) shape, where
     * only the (1,2) (2.3 times up) and a little noise remain; ten periods. */
    partial series[] = {
        {g2, 1.0, 3.0, 0.3},
        {2.3 * g2, 0.1, 8.0, 1.0},
    };
    int64_t ten = (int64_t)ceil(10 / g2 * RATE), half = (int64_t)(0.45 * RATE);
    double *x = synth(series, 2, ten, 1, 1e-3);
    check_peak(x, ten, 1, g2 / 1.4, g2 * 1.4, g2, "(1,1) over ten periods", 0.01);
    free(x);
    /* What a microphone hears from 50 ms after the stroke: the (1,1), the
     * radiation-damped (0,1) 18 % above it nearly gone (-3 dB width 30 Hz:
     * it decays at 94/s), the (2,1), a room mode; 0.45 s of it. */
    partial drum[] = {
        {g2, 1.0, 3.0, 0.3},
        {1.18 * g2, 3.0 * exp(-94 * 0.05), 94.0, 1.1},
        {1.503 * g2, 0.6, 5.0, 2.0},
        {1.71 * g2, 0.2, 1.0, 0.7},
    };
    x = synth(drum, 4, half, 1, 1e-3);
    check_peak(x, half, 1, g2 / 1.4, g2 * 1.1, g2, "(1,1) at a microphone", 0.01);
    check_peak(x, half, 1, 1.4 * g2, 1.6 * g2, 1.503 * g2, "(2,1) at a microphone", 0.05);
    free(x);

    /* Two channels, partials in opposite phase on the second: powers add. */
    double *st = synth(drum, 4, half, 2, 0);
    check_peak(st, half, 2, g2 / 1.4, g2 * 1.1, g2, "(1,1) over two channels", 0.01);

    /* The list of peaks: strongest first, each refined, none twice. */
    kt_spectrum sp;
    kt_error e = {0};
    kt_peak pk[8];
    KT_CHECK(kt_spectrum_compute(&sp, st, half, 2, 2, RATE, 8, &e) == 0, "%s", e.message);
    int n = kt_spectrum_peaks(&sp, 50, 400, 60, 30, pk, 8);
    KT_CHECK(n >= 3, "%d peaks", n);
    for (int i = 0; i < n && i < 3; i++) {
        double best = 1e9;
        for (int k = 0; k < 4; k++)
            best = fmin(best, fabs(kt_cents(pk[i].hz, drum[k].hz)));
        KT_CHECK(best < 0.05 || (pk[i].hz > 1.1 * g2 && pk[i].hz < 1.3 * g2),
                 "peak %d at %.4f Hz is no partial (%.3f cents off)", i, pk[i].hz, best);
        KT_CHECK(i == 0 || pk[i].power <= pk[i - 1].power, "peaks not strongest first");
    }
    KT_CHECK(fabs(kt_cents(pk[0].hz, g2)) < 0.01 && pk[0].db > -0.01 && pk[0].db < 0.5,
             "strongest peak %.4f Hz (%.2f dB), want the (1,1)", pk[0].hz, pk[0].db);
    KT_CHECK(fabs(kt_spectrum_power_at(&sp, pk[0].hz) - pk[0].power) <= 1e-9 * pk[0].power,
             "power at the peak");
    kt_spectrum_free(&sp);
    free(st);

    /* Notes. */
    char name[16];
    double cents = 99;
    KT_CHECK(kt_note_nearest(440, name, sizeof name, &cents) == 69 && !strcmp(name, "A4") &&
             fabs(cents) < 1e-9, "440 Hz: %s %+.3f", name, cents);
    KT_CHECK(kt_note_nearest(g2 * pow(2, 3.2 / 1200), name, sizeof name, &cents) == 43 &&
             !strcmp(name, "G2") && fabs(cents - 3.2) < 1e-6, "G2 + 3.2 c: %s %+.4f", name, cents);
    KT_CHECK(kt_note_nearest(138.59, name, sizeof name, &cents) == 49 && !strcmp(name, "C#3"),
             "138.59 Hz: %s", name);
    KT_CHECK(kt_note_nearest(116.54, name, sizeof name, NULL) == 46 && !strcmp(name, "Bb2"),
             "116.54 Hz: %s (a timpanist's Bb, not A#)", name);
    KT_CHECK(kt_note_nearest(0, name, sizeof name, &cents) == -1 &&
             kt_note_nearest(NAN, name, sizeof name, &cents) == -1, "no note for 0 or NaN");
    KT_CHECK(fabs(kt_cents(2 * g2, g2) - 1200) < 1e-9, "an octave is 1200 cents");

    /* Refusals: too short, no channel, no rate; an empty band; silence. */
    double z[64] = {0};
    KT_CHECK(kt_spectrum_compute(&sp, z, 3, 1, 1, RATE, 8, &e) == KT_EINVAL, "3 samples");
    KT_CHECK(kt_spectrum_compute(&sp, z, 64, 0, 1, RATE, 8, &e) == KT_EINVAL, "0 channels");
    KT_CHECK(kt_spectrum_compute(&sp, z, 64, 1, 1, 0, 8, &e) == KT_EINVAL, "rate 0");
    KT_CHECK(kt_spectrum_compute(&sp, z, 64, 1, 1, RATE, 8, &e) == 0, "%s", e.message);
    KT_CHECK(kt_spectrum_peak(&sp, 100, 200, &pk[0]) == KT_EINVAL, "silence has no peak");
    KT_CHECK(kt_spectrum_peak(&sp, 200, 100, &pk[0]) == KT_EINVAL, "an empty band");
    KT_CHECK(kt_spectrum_peaks(&sp, 100, 200, 40, 10, pk, 8) == 0, "silence has no peaks");
    kt_spectrum_free(&sp);
    return kt_test_finish("test_spectrum");
}
