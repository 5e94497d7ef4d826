/* test_tuning.c - every drum sounds the pitch it is given (issue 19): each
 * standard size at the bottom and the top of its range, at 11,025 and
 * 22,050 Hz, a custom size, and a pedal glide, rendered the way a user
 * renders them (kt_render, tuning calibrated) and heard by a microphone; the
 * (1,1) must lie within 3 cents of the pitch asked for.  Under the formula
 * that came before (kettle render --tuning formula) the same cases are off
 * by up to 50 cents.
 *
 * Cheap: a room only a little larger than the drum (15 cm of air around
 * the rim, walls with beta 0.3), a soft stroke, 0.4 s of sound.  Why the
 * reading is good to far better than a cent: the (1,1) is read from 0.1 s
 * on (past the attack, when the (0,1) 18 % above it has died away: it
 * decays at about 94/s) over 0.3 s, where the nearest other peaks are a
 * dozen Hann bins away; test_spectrum shows the reader within 0.01 cent on
 * such a sound; and each reading here is checked against a second window
 * (0.2 .. 0.4 s), which agrees within 0.3 cent.  The nonlinear head (on at
 * 22,050 Hz, off at 11,025 Hz) is heard at rest: a soft stroke raises its
 * pitch by far less than a cent.
 *
 * The glide (32 inch, D2 to A2 at 22,050 Hz) is heard after it ends, and
 * on the way: the tensions the drum's curve gives for the pitches a
 * quarter, half and three quarters of the way up are measured on the drum
 * in the same room and must sound them within 1 cent. */
#include "kt_render.h"
#include "kt_spectrum.h"
#include "kt_test.h"
#include "kt_tuning.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tcase {
    double inches;
    const char *pitch;
    double rate_hz;
    int nonlinear;
} tcase;

/* A square room around the drum, the microphone 45 degrees off its axis. */
static void orchestra(const tcase *c, const char *extra, char *orc, size_t n)
{
    double R = c->inches * 0.0254 / 2, depth = 0.5 * c->inches / 29, L = 2 * R + 0.3;
    double z = depth + 0.15, H = z + 0.45;
    snprintf(orc, n,
             "sr = %g\nroom = %.3f %.3f %.3f\nbeta = 0.3\n"
             "mic m %.3f %.3f %.3f\n"
             "instr 1\n size = %gin\n pitch = %s\n pos = %.3f %.3f %.3f\n nonlinear = %s\n%s"
             "endin\n",
             c->rate_hz, L, L, H, L / 2 + 0.7 * R, L / 2 + 0.2 * R, z + 0.25, c->inches,
             c->pitch, L / 2, L / 2, z, c->nonlinear ? "on" : "off", extra);
}

/* The (1,1) the microphone hears over [a, b) s, within a semitone of hz. */
static double heard(const float *x, int frames, double rate, double a, double b, double hz)
{
    int i0 = (int)(a * rate), i1 = (int)(b * rate);
    if (i1 > frames)
        return -1;
    double *v = malloc(sizeof *v * (size_t)(i1 - i0));
    for (int i = i0; i < i1; i++)
        v[i - i0] = x[i];
    kt_spectrum sp;
    kt_peak pk = {-1, 0, 0};
    if (kt_spectrum_compute(&sp, v, i1 - i0, 1, 1, rate, 8, NULL) == 0) {
        if (kt_spectrum_peak(&sp, hz / 1.06, hz * 1.06, &pk) < 0)
            pk.hz = -1;
        kt_spectrum_free(&sp);
    }
    free(v);
    return pk.hz;
}

static void check_case(const tcase *c)
{
    char orc[1024];
    double hz = 0;
    orchestra(c, "", orc, sizeof orc);
    kt_pitch_parse(c->pitch, &hz);
    int frames = 0;
    float *x = kt_test_render_mono(orc, "i 1 0 0.4 p 0.6 0\n", &frames);
    double f = x ? heard(x, frames, c->rate_hz, 0.1, 0.4, hz) : -1;
    double f2 = x ? heard(x, frames, c->rate_hz, 0.2, 0.4, hz) : -1;
    double cents = kt_cents(f, hz);
    printf("%2.0f in %-3s at %5.0f Hz (%s): heard %8.3f Hz, %+5.2f cents\n", c->inches, c->pitch,
           c->rate_hz, c->nonlinear ? "nonlinear" : "linear", f, cents);
    KT_CHECK(f > 0 && fabs(cents) <= 3, "%g in %s at %g Hz: heard %.3f Hz, %+.2f cents",
             c->inches, c->pitch, c->rate_hz, f, cents);
    KT_CHECK(f2 > 0 && fabs(kt_cents(f2, f)) <= 0.3,
             "%g in %s at %g Hz: the two windows disagree (%.3f and %.3f Hz)", c->inches,
             c->pitch, c->rate_hz, f, f2);
    free(x);
}

/* D2 -> A2 on the 32-inch drum, held from 0.3 s. */
static void check_glide(void)
{
    tcase c = {32, "D2", 22050, 1};
    char orc[1024];
    orchestra(&c, "", orc, sizeof orc);
    const char *sco = "i 1 0 0.7 p 0.6 0\npedal 1 0.1 0.2 A2\n";
    double d2, a2;
    kt_pitch_parse("D2", &d2);
    kt_pitch_parse("A2", &a2);
    int frames = 0;
    float *x = kt_test_render_mono(orc, sco, &frames);
    double f = x ? heard(x, frames, c.rate_hz, 0.35, 0.7, a2) : -1;
    printf("32 in D2 -> A2 at 22050 Hz: heard %.3f Hz after the glide, %+.2f cents\n", f,
           kt_cents(f, a2));
    KT_CHECK(f > 0 && fabs(kt_cents(f, a2)) <= 3, "after the glide: %.3f Hz, %+.2f cents", f,
             kt_cents(f, a2));
    free(x);

    /* Halfway: the curve's tension for the pitch halfway up, measured. */
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    KT_CHECK(kt_score_parse(&perf, "t.orc", orc, "t.sco", sco, &err) == 0, "%s", err.message);
    kt_tuning tu;
    kt_tuning_options o;
    kt_tuning_options_default(&o);
    o.nthreads = 1;
    int rc = kt_tuning_plan(&perf, &perf.room, &o, &tu, &err);
    KT_CHECK(rc == 0 && tu.runs == 0, "the render's tuning is in the cache (%d runs): %s",
             tu.runs, err.message);
    for (int q = 1; rc == 0 && q <= 3; q++) {
        double hz = d2 * pow(a2 / d2, q / 4.0), T = kt_tuning_tension(&tu, &perf, 0, hz);
        kt_tuning_sound s = {0};
        kt_error e = {0};
        KT_CHECK(kt_tuning_measure(&perf, &perf.room, &tu, 0, T, 1, &s, &e) == 0, "%s",
                 e.message);
        printf("%d/4 of the way: %.1f N/m sounds %.3f Hz, %+.2f cents from %.3f Hz\n", q, T,
               s.hz, kt_cents(s.hz, hz), hz);
        KT_CHECK(fabs(kt_cents(s.hz, hz)) <= 1, "%d/4 of the way: %.3f Hz for %.3f Hz", q, s.hz,
                 hz);
    }
    if (rc == 0)
        kt_tuning_free(&tu);
    kt_performance_free(&perf);
}

int main(void)
{
    static const tcase cases[] = {
        {23, "D3", 22050, 1}, {23, "A3", 22050, 1}, {26, "Bb2", 22050, 1}, {26, "F3", 22050, 1},
        {29, "F2", 22050, 1}, {29, "C3", 22050, 1}, {32, "D2", 22050, 1}, {32, "A2", 22050, 1},
        {23, "D3", 11025, 0}, {23, "A3", 11025, 0}, {26, "Bb2", 11025, 0}, {26, "F3", 11025, 0},
        {29, "F2", 11025, 0}, {29, "C3", 11025, 0}, {32, "D2", 11025, 0}, {32, "A2", 11025, 0},
        {25, "C3", 22050, 1},                                      /* a custom size */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i]);
    check_glide();
    return kt_test_finish("test_tuning");
}
