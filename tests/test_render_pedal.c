/* test_render_pedal.c - a `pedal` statement retunes a ringing drum: the
 * fundamental heard after the glide sits at the new pitch's ratio to the old
 * one (D3 -> G3, a fourth: 4/3 in equal temperament, 1.335).  The glide
 * tightens the head, so it also checks that the renderer builds the drum on
 * the membrane grid of its highest tension (else kt_timpani_set_tension
 * refuses the new tension). */
#include "kt_score.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *orc =
    "sr = 16000\n"
    "room = 0.8 0.8 0.9\n"
    "beta = 0.3\n"
    "ksmps = 16\n"
    "mic m 0.4 0.4 0.75\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.4 0.4 0.6\n"
    "  nonlinear = off\n"          /* no tension modulation: a clean pitch */
    "endin\n";
static const char *sco =
    "i 1 0 0.36 mf 0.55 0\n"
    "pedal 1 0.16 0.04 G3\n";

/* Frequency (0.25 Hz grid) of the strongest Hann-windowed DFT bin of
 * x[a .. a+n) between f0 and f1. */
static double peak_hz(const float *x, int a, int n, double sr, double f0, double f1)
{
    double best = 0, best_f = 0;
    for (double f = f0; f <= f1; f += 0.25) {
        double re = 0, im = 0;
        for (int i = 0; i < n; i++) {
            double w = 0.5 - 0.5 * cos(2 * KT_PI * i / (n - 1));
            re += w * x[a + i] * cos(2 * KT_PI * f * i / sr);
            im -= w * x[a + i] * sin(2 * KT_PI * f * i / sr);
        }
        if (re * re + im * im > best) {
            best = re * re + im * im;
            best_f = f;
        }
    }
    return best_f;
}

int main(void)
{
    int n = 0;
    float *x = kt_test_render_mono(orc, sco, &n);
    KT_CHECK(x && n == 5760, "file with 0.36 s, got %d frames", n);
    if (x && n == 5760) {
        double d3 = 146.832, g3 = 195.998;
        /* before: 20..160 ms; after: 220..360 ms (the glide ends at 200 ms) */
        double before = peak_hz(x, 320, 2240, 16000, d3 * 0.85, d3 * 1.15);
        double after = peak_hz(x, 3520, 2240, 16000, g3 * 0.85, g3 * 1.15);
        KT_CHECK(fabs(after / before / (g3 / d3) - 1) < 0.04,
                 "pitch ratio after the pedal %.4f (%.1f -> %.1f Hz), want %.4f", after / before,
                 before, after, g3 / d3);
    }
    free(x);
    return kt_test_finish("test_render_pedal");
}
