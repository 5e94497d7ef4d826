/* kt_test_drums.h - a timpani set as orchestra text for the tests that play
 * several drums (test_render_drum_order, test_gpu_drum_set): up to eight
 * drums of standard and custom sizes in a 4 x 3 m room, written in any
 * order, and a score that strikes every drum and glides one by pedal. */
#ifndef KT_TEST_DRUMS_H
#define KT_TEST_DRUMS_H

#include <stdio.h>
#include <string.h>

typedef struct kt_test_drum {
    int inches;
    const char *pitch;
    double x_m, y_m;
} kt_test_drum;

/* The five-drum set first (20 and 32 inches outside the four standard
 * sizes' range of tunings: 20 is a custom size), then three more. */
static const kt_test_drum kt_test_set[8] = {
    {32, "D2", 0.65, 0.62}, {29, "G2", 1.55, 0.62}, {26, "C3", 2.40, 0.62},
    {23, "E3", 1.00, 1.60}, {20, "A3", 1.85, 1.62}, {25, "D3", 3.30, 0.62},
    {28, "A2", 2.80, 1.62}, {21, "G3", 3.55, 1.55},
};

/* Orchestra with the drums order[0..n) of kt_test_set, in that order. */
static inline void kt_test_set_orc(char *buf, size_t size, double sr, const int *order, int n)
{
    int len = snprintf(buf, size,
                       "sr = %g\nroom = %s 2.3 1.4\nbeta = 0.3\nksmps = 16\nnchnls = 2\n"
                       "mic a 1.2 1.1 1.25\nmic b 2.6 1.9 1.2\n",
                       sr, n > 5 ? "4.0" : "3.0");
    for (int k = 0; k < n && len > 0 && (size_t)len < size; k++) {
        const kt_test_drum *d = &kt_test_set[order[k]];
        len += snprintf(buf + len, size - (size_t)len,
                        "instr %d\n  size = %d\n  pitch = %s\n  pos = %.2f %.2f 0.95\nendin\n",
                        d->inches, d->inches, d->pitch, d->x_m, d->y_m);
    }
}

/* Every drum of the first n struck in turn, forte to piano, 5 ms apart; the
 * 29-inch glides from G2 to A2 between 20 and 60 ms. */
static inline void kt_test_set_sco(char *buf, size_t size, int n)
{
    static const char *marks[4] = {"f", "mf", "ff", "mp"};
    int len = 0;
    for (int k = 0; k < n && len >= 0 && (size_t)len < size; k++)
        len += snprintf(buf + len, size - (size_t)len, "i %d %.3f 0.1 %s 0.6 %d\n",
                        kt_test_set[k].inches, 0.005 * k, marks[k % 4], 10 + 25 * k);
    if (len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, "pedal 29 0.02 0.04 A2\ne\n");
}

#endif
