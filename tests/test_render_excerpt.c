/* test_render_excerpt.c - kettle render --from/--until renders the passage as
 * the whole render has it, when nothing rings from before the passage:
 *
 *  - a stroke at 0.1 s heard from --from 0.06 gives the whole render's
 *    samples from 0.06 s on, bit for bit (the room is at rest before it);
 *  - a pedal glide under way at --from (ksmps = 1) goes on from the tension
 *    it has reached: a stroke during the glide sounds as in the whole render
 *    (1e-9 of the peak; the glide's powers are taken from another origin);
 *  - strokes before --from are left out, --until stops the audio there,
 *    and a --from past the end of the score is refused. */
#include "kt_score.h"
#include "kt_test.h"

#include <math.h>
#include <stdlib.h>

static const char *orc =
    "sr = 16000\n"
    "ksmps = 1\n"
    "room = 0.8 0.8 0.9\n"
    "beta = 0.3\n"
    "mic m 0.5 0.45 0.75\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.4 0.4 0.6\n"
    "endin\n";

/* max |a[off + i] - b[i]| / max |b| over the excerpt's frames */
static double excerpt_difference(const float *whole, int nwhole, const float *part, int npart,
                                 int offset)
{
    if (!whole || !part || offset + npart > nwhole)
        return 1.0;
    double diff = 0, peak = 0;
    for (int i = 0; i < npart; i++) {
        diff = fmax(diff, fabs((double)whole[offset + i] - part[i]));
        peak = fmax(peak, fabs((double)part[i]));
    }
    return peak > 0 ? diff / peak : 1.0;
}

static void check_same_passage(const char *sco, double from_s, double tol, const char *what)
{
    int nw = 0, np = 0;
    float *whole = kt_test_render_mono(orc, sco, &nw);
    float *part = kt_test_render_excerpt(orc, sco, from_s, 0, &np);
    int offset = (int)lround(from_s * 16000);
    double d = excerpt_difference(whole, nw, part, np, offset);
    printf("%s: %d frames from %d, %.3g of the peak from the whole render\n", what, np, offset, d);
    KT_CHECK(np == nw - offset, "%s: %d frames, expected %d", what, np, nw - offset);
    KT_CHECK(d <= tol, "%s: the excerpt differs by %.3g of its peak (bound %g)", what, d, tol);
    free(whole);
    free(part);
}

static double peak_of(const float *x, int n, int from, int to)
{
    double p = 0;
    for (int i = from; i < to && i < n; i++)
        p = fmax(p, fabs((double)x[i]));
    return p;
}

int main(void)
{
    check_same_passage("i 1 0.1 0.1 f 0.6 10\n", 0.06, 0.0, "stroke after --from");
    check_same_passage("pedal 1 0.02 0.15 G3\ni 1 0.1 0.1 f 0.6 10\n", 0.06, 1e-9,
                       "glide under way at --from");

    /* a stroke before --from is left out; --until cuts the audio */
    int n = 0;
    float *x = kt_test_render_excerpt(orc, "i 1 0 0.05 ff 0.6 10\ni 1 0.1 0.05 p 0.6 10\n",
                                      0.08, 0.14, &n);
    KT_CHECK(n == (int)lround(0.06 * 16000), "--from 0.08 --until 0.14: %d frames", n);
    KT_CHECK(x && peak_of(x, n, 0, 300) < 1e-3 * peak_of(x, n, 300, n),
             "the ff stroke before --from was heard in the excerpt");
    free(x);

    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    KT_CHECK(kt_score_parse(&perf, "t.orc", orc, "t.sco", "i 1 0 0.1 f 0.6 10\n", &err) == 0,
             "parse: %s", err.message);
    KT_CHECK(kt_performance_excerpt(&perf, 5.0, NULL, &err) == KT_EINVAL,
             "--from past the end accepted");
    kt_performance_free(&perf);
    return kt_test_finish("test_render_excerpt");
}
