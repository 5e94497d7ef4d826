/* test_render_block.c - a render with drums in temporally blocked passes
 * (kt_render_options.block, `kettle render --block`): a 3 m tall room
 * with a 29 and a 23 inch drum, a stroke on each, a pedal glide (tension
 * every ksmps steps), damping changes, a microphone in the drums' planes and
 * one above, rendered with blocking off, timed (the default) and at depths 3
 * and 8 on two threads: the same WAV samples bit for bit, the blocked runs
 * having taken most of their steps in passes.  A short room's render steps
 * one at a time whatever is asked, and --block 4 there says why. */
#include "kt_render.h"
#include "kt_score.h"
#include "kt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A room `height_m` tall, the drums' rims at `rim_m`, a microphone in
 * their planes and one above them. */
static void orchestra(char *buf, size_t size, double height_m, double rim_m)
{
    snprintf(buf, size,
             "sr = 11025\nroom = 3.0 2.3 %g\nbeta = 0.3\nksmps = 16\nnchnls = 2\n"
             "mic low 1.2 1.1 %g\nmic high 2.6 1.9 %g\n"
             "instr 29\n  size = 29\n  pitch = G2\n  pos = 0.9 0.7 %g\nendin\n"
             "instr 23\n  size = 23\n  pitch = E3\n  pos = 2.1 1.5 %g\nendin\n",
             height_m, rim_m - 0.05, height_m - 0.6 > rim_m ? height_m - 0.6 : rim_m + 0.1,
             rim_m, rim_m);
}

static const char sco[] = "i 29 0 0.05 ff 0.6 10\ni 23 0.004 0.03 mf 0.6 35\n"
                          "pedal 29 0.01 0.03 A2\ne\n";

static double *render(const char *orchestra, int block, int64_t *count, kt_render_result *res)
{
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_CPU;
    o.nthreads = 2;
    o.tail_s = 0.02;
    o.block = block;
    return kt_test_render_all(orchestra, sco, &o, count, res);
}

int main(void)
{
    char orc[1024], low[1024];
    orchestra(orc, sizeof orc, 3.0, 0.95);
    static const int blocks[4] = {1, 0, 3, 8};
    double *x[4];
    int64_t n[4];
    for (int k = 0; k < 4; k++) {
        kt_render_result res;
        x[k] = render(orc, blocks[k], &n[k], &res);
        KT_CHECK(x[k] != NULL, "--block %d: no render", blocks[k]);
        /* timed: the candidates' passes at least (one step at a time may win) */
        if (k == 0)
            KT_CHECK(res.blocked_steps == 0, "blocking off: %lld steps blocked",
                     (long long)res.blocked_steps);
        else
            KT_CHECK(k == 1 ? res.blocked_steps > 0 : 2 * res.blocked_steps > res.steps,
                     "--block %d: %lld of %lld steps blocked", blocks[k],
                     (long long)res.blocked_steps, (long long)res.steps);
        if (k > 0 && x[k] && x[0])
            KT_CHECK(n[k] == n[0] && memcmp(x[k], x[0], sizeof *x[0] * (size_t)n[0]) == 0,
                     "--block %d: the samples differ from one step at a time (%.3g of the "
                     "peak)", blocks[k], kt_test_relative_difference(x[k], n[k], x[0], n[0]));
        printf("--block %d: %lld samples, %lld of %lld steps in blocked passes\n", blocks[k],
               (long long)n[k], (long long)res.blocked_steps, (long long)res.steps);
        kt_render_result_free(&res);
    }
    KT_CHECK(x[0] && kt_test_max_abs(x[0], (int)n[0]) > 1e-6, "the drums were not heard");
    for (int k = 0; k < 4; k++)
        free(x[k]);
    /* 0.85 m tall: the drums' planes are most of it */
    orchestra(low, sizeof low, 0.85, 0.62);
    kt_render_result res;
    int64_t count;
    double *y = render(low, 0, &count, &res);
    KT_CHECK(y && res.blocked_steps == 0, "a short room blocked %lld steps",
             (long long)res.blocked_steps);
    kt_render_result_free(&res);
    free(y);
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_CPU;
    o.block = 4;
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error e;
    int rc = kt_score_parse(&perf, "low.orc", low, "t.sco", sco, &e);
    KT_CHECK(rc == KT_OK, "parse: %s", e.message);
    if (rc == KT_OK) {
        kt_render_audio audio;
        rc = kt_render_to_memory(&perf, &o, &audio, &res, &e);
        KT_CHECK(rc == KT_EINVAL && strstr(e.message, "--block 4") &&
                     strstr(e.message, "instruments' planes"),
                 "--block 4 in a short room: %s", rc == KT_OK ? "rendered" : e.message);
        printf("short room, --block 4: %s\n", e.message);
        if (rc == KT_OK)
            kt_render_audio_free(&audio);
        kt_render_result_free(&res);
    }
    kt_performance_free(&perf);
    return kt_test_finish("test_render_block");
}
