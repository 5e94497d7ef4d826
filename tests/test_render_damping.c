/* test_render_damping.c - p8 damps a drum at the end of its note (p2 + p3)
 * and the drum's next strike lifts the damper again (docs/score-language.md).
 *
 * A 23-inch drum in a small, fairly dead room, rendered without
 * normalisation so that the renders compare in pascals:
 *  - up to p2 + p3 the damped note's audio is bit-identical to the free one;
 *  - over 20 .. 200 ms after p2 + p3 the drum's band (60 .. 600 Hz, the
 *    partials of this D3 drum) holds under 1 % of the free note's energy
 *    (T60 = 50 ms on the head).  Broadband the margin is smaller: the strike
 *    also set the box's own high air modes (2 - 3 kHz) ringing, and a damper
 *    on the head does not reach them;
 *  - a second strike after the damped note rings freely again: its band
 *    energy falls from 20..90 ms to 90..160 ms after the strike as a free
 *    note's does over the same stretch, within a factor of 2 (with the damper
 *    left on it would fall by orders of magnitude more). */
#include "kt_score.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SR 16000

static const char *orc =
    "sr = 16000\n"
    "room = 0.8 0.8 0.9\n"
    "beta = 0.3\n"
    "mic m 0.4 0.4 0.75\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.4 0.4 0.6\n"
    "endin\n";

/* Energy of x over [t0, t1) seconds in the drum's band: the Hann-windowed
 * DFT's power summed over 60 .. 600 Hz in 5 Hz steps. */
static double energy(const float *x, int n, double t0, double t1)
{
    int a = (int)(t0 * SR), b = (int)(t1 * SR) < n ? (int)(t1 * SR) : n;
    double e = 0;
    for (double f = 60; f <= 600; f += 5) {
        double re = 0, im = 0;
        for (int i = a; i < b; i++) {
            double w = (0.5 - 0.5 * cos(2 * KT_PI * (i - a) / (b - a - 1))) * x[i];
            re += w * cos(2 * KT_PI * f * i / SR);
            im -= w * sin(2 * KT_PI * f * i / SR);
        }
        e += re * re + im * im;
    }
    return e;
}

int main(void)
{
    int nf = 0, nd = 0, nr = 0;
    /* the f 0 statements make every render 0.5 s long */
    float *ring = kt_test_render_mono(orc, "i 1 0 0.1 mf 0.55 0 1\nf 0 0.5\n", &nf);
    float *damp = kt_test_render_mono(orc, "i 1 0 0.1 mf 0.55 0 1 0.05\nf 0 0.5\n", &nd);
    float *again = kt_test_render_mono(orc, "i 1 0 0.1 mf 0.55 0 1 0.05\ni 1 0.2 0.1 mf . . . 0\nf 0 0.5\n", &nr);
    KT_CHECK(ring && damp && again && nf == SR / 2 && nd == nf && nr == nf,
             "three 0.5 s renders (%d, %d, %d samples)", nf, nd, nr);
    if (ring && damp && again && nd == nf && nr == nf) {
        int before = (int)(0.1 * SR) - 1;
        KT_CHECK(memcmp(ring, damp, (size_t)before * sizeof *ring) == 0,
                 "the damped note differs from the free one before p2 + p3");
        double e_ring = energy(ring, nf, 0.12, 0.3), e_damp = energy(damp, nd, 0.12, 0.3);
        printf("band energy 20..200 ms after p2 + p3: free %.4g, damped (T60 50 ms) %.4g, "
               "ratio %.3g\n", e_ring, e_damp, e_damp / e_ring);
        KT_CHECK(e_ring > 0 && e_damp < 0.01 * e_ring,
                 "damped note kept %.3g of the free note's energy", e_damp / e_ring);
        double free_fall = energy(ring, nf, 0.02, 0.09) / energy(ring, nf, 0.09, 0.16);
        double lifted_fall = energy(again, nr, 0.22, 0.29) / energy(again, nr, 0.29, 0.36);
        printf("band energy fall 20..90 -> 90..160 ms after a strike: free note %.3g, struck "
               "again after a damped note %.3g\n", free_fall, lifted_fall);
        KT_CHECK(lifted_fall < 2.0 * free_fall && lifted_fall > 0.5 * free_fall,
                 "the second strike fell by %.3g, a free note by %.3g: damper not lifted?",
                 lifted_fall, free_fall);
    }
    free(ring);
    free(damp);
    free(again);
    return kt_test_finish("test_render_damping");
}
