/* test_gpu_timeline.c - the GPU step's timeline recorded for real
 * (bench_tl_render, CUPTI): a 20- and a 23-inch drum (direct solve) in a
 * 1.6 x 1.0 x 1.2 m room at 44.1 kHz.  The recorded chunk holds thousands of
 * whole steps; kernels launched by the render's CUDA graphs are among them
 * (graph node ids); every step begins with the sweep; the median step holds
 * two drum chains, each with one window and one membrane kernel (so launch
 * order keeps a drum's kernels together), and one microphone kernel; it
 * lasts between 1 us and 10 ms, its shares add up to it, the sweep is a part
 * of it, and each chain lies within two steps.  Skipped (77) without a CUDA build with
 * CUPTI or a GPU of compute capability 9.0+. */
#include "bench_timeline.h"
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_timeline: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kt_cuda.h"

#include <string.h>

static const char orc[] = "sr = 44100\nroom = 1.6 1.0 1.2\nbeta = 0.3\n"
                          "pair p 0.8 0.5 1.05 0.2\n"
                          "instr 20\n  size = 20\n  pitch = A3\n  pos = 0.45 0.5 0.7\nendin\n"
                          "instr 23\n  size = 23\n  pitch = E3\n  pos = 1.1 0.5 0.7\nendin\n";
static const char sco[] = "i 20 0 1 f 0.6 0\ni 23 0 1 f 0.6 20\nf 0 60\n";

/* How many kernels of the median step whose name begins with `name` are
 * drum d's (d < 0: anyone's). */
static int kernels(const bench_timeline *tl, const char *name, int d)
{
    const bench_tl_step *s = &tl->step[tl->median];
    int count = 0;
    for (size_t i = s->first; i < s->first + s->count; i++)
        count += !strncmp(tl->rec[i].name, name, strlen(name)) && (d < 0 || tl->drum[i] == d);
    return count;
}

static void check_steps(const bench_timeline *tl)
{
    size_t graph = 0, backwards = 0;
    for (size_t i = 0; i < tl->n; i++) {
        graph += tl->rec[i].node != 0;
        backwards += tl->rec[i].end_ns < tl->rec[i].start_ns;
    }
    KT_CHECK(backwards == 0, "%zu records end before they start", backwards);
    KT_CHECK(graph > tl->n / 2, "%zu of %zu records from CUDA graphs", graph, tl->n);
    int sweep_first = 1;
    for (int k = 0; k < tl->steps; k++)
        sweep_first &= strstr(tl->rec[tl->step[k].first].name, "sweep") != NULL;
    KT_CHECK(sweep_first, "a step begins with something other than the sweep");
    const bench_tl_step *t = &tl->typical, *m = &tl->step[tl->median];
    double sum = 0;
    for (int c = 0; c < BENCH_TL_SHARES; c++)
        sum += m->share_us[c];
    KT_CHECK(t->length_us > 1 && t->length_us < 1e4, "median step %.3f us", t->length_us);
    KT_CHECK(fabs(sum - m->length_us) < 1e-6 * m->length_us, "shares %.4f us of %.4f", sum,
             m->length_us);
    KT_CHECK(m->sweep_us > 0 && m->share_us[BENCH_TL_SWEEP] > 0 &&
                 m->share_us[BENCH_TL_SWEEP] < m->length_us,
             "sweep %.3f us, its share %.3f of %.3f", m->sweep_us, m->share_us[BENCH_TL_SWEEP],
             m->length_us);
    KT_CHECK(t->drums == 2 && m->drums == 2, "%d drum chains (median step %d), expected 2",
             t->drums, m->drums);
    for (int d = 0; d < 2 && d < m->drums; d++) {
        KT_CHECK(m->chain_us[d] > 0 && m->chain_us[d] < 2 * m->length_us, "chain %d: %.3f us",
                 d + 1, m->chain_us[d]);
        KT_CHECK(kernels(tl, "split_window", d + 1) == 1 && kernels(tl, "split_band", d + 1) == 1,
                 "drum %d's chain holds %d window and %d membrane kernels, expected one each",
                 d + 1, kernels(tl, "split_window", d + 1), kernels(tl, "split_band", d + 1));
    }
    KT_CHECK(kernels(tl, "record_mics", 0) == 1, "the median step holds %d microphone kernels",
             kernels(tl, "record_mics", 0));
}

int main(void)
{
    kt_gpu_info info;
    kt_error e;
    kt_error_clear(&e);
    if (kt_cuda_devices(&info, 1) <= 0 || info.compute_major < 9) {
        printf("test_gpu_timeline: no GPU of compute capability 9.0 or newer, skipped\n");
        return 77;
    }
    if (bench_tl_available(&e) < 0) {
        printf("test_gpu_timeline: %s, skipped\n", e.message);
        return 77;
    }
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "timeline.orc", orc, "timeline.sco", sco, &err);
    KT_CHECK(rc == 0, "score: %s", err.message);
    kt_render_options o;
    kt_render_options_default(&o);
    bench_timeline tl;
    int64_t from = 0;
    if (rc == 0)
        rc = bench_tl_render(&perf, &o, bench_tl_kettle_rules(), &tl, &from, &err);
    KT_CHECK(rc == 0, "timeline: %s", err.message);
    if (rc == 0) {
        printf("%d steps from step %lld, %zu records\n", tl.steps, (long long)from, tl.n);
        bench_tl_print(stdout, &tl);
        KT_CHECK(from > 0 && tl.steps > 1000, "%d steps recorded from step %lld", tl.steps,
                 (long long)from);
        if (tl.steps > 0)
            check_steps(&tl);
        bench_tl_free(&tl);
    }
    kt_performance_free(&perf);
    return kt_test_finish("test_gpu_timeline");
}
#endif
