/* test_bench_timeline.c - the GPU timeline's analysis (bench/bench_timeline.c)
 * on made-up activity records, no GPU needed:
 *  - kernel names: return type, parameters and anonymous namespaces dropped;
 *  - steps cut at the sweep's launches in launch order (records given
 *    shuffled; one graph launch, then single launches; a stray record before
 *    the first sweep and a partial step after the last left out);
 *  - each step's time split between sweep, drums, the air's other kernels,
 *    copies and idle, counting a drum kernel that runs on into the next
 *    step's window there (under its sweep) and adding up to the step;
 *  - idle gaps, the drums' chains (two drums on two streams, overlapping),
 *    the median step, the slowest, what bounds the step;
 *  - fewer than two sweeps: no whole step, an error;
 *  - Chrome trace events of the steps around the median one. */
#include "bench_timeline.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

static void short_names(void)
{
    static const char *const cases[][2] = {
        {"void sweep2<double, 2>(double*, double const*, sweep_coef)", "sweep2<double, 2>"},
        {"void split_band<1>(tp_dev, sp_args, double)", "split_band<1>"},
        {"void (anonymous namespace)::fill<int>(int*, int)", "fill<int>"},
        {"record_mics", "record_mics"},
        {"void ring_sweep<float, (anonymous namespace)::ring<3> >(float*)",
         "ring_sweep<float, ring<3> >"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char out[64];
        bench_tl_short_name(cases[k][0], out, sizeof out);
        KT_CHECK(!strcmp(out, cases[k][1]), "'%s' -> '%s', expected '%s'", cases[k][0], out,
                 cases[k][1]);
    }
    char small[7];
    bench_tl_short_name("void sweep2<double, 2>(double*)", small, sizeof small);
    KT_CHECK(!strcmp(small, "sweep2"), "cut to the buffer: '%s'", small);
}

#define US 1000u   /* ns */
#define T0 1000000u

/* Step 0 in one graph launch (10, nodes 1-9), steps 1 and 2 launched one by
 * one (11-18), the sweep of a partial step 3 (19); a stray kernel (1) before. */
static const bench_tl_record records[] = {
    {"split_band<1>", BENCH_TL_KERNEL, 2, T0 - 5 * US, T0 - 1 * US, 1, 0},
    /* step 0: the sweep, a list, two drums side by side, the microphones */
    {"sweep2<double, 2>", BENCH_TL_KERNEL, 1, T0, T0 + 30 * US, 10, 1},
    {"correct_list<double>", BENCH_TL_KERNEL, 1, T0 + 30500, T0 + 31500, 10, 2},
    {"split_solve_a", BENCH_TL_KERNEL, 2, T0 + 32 * US, T0 + 36 * US, 10, 3},
    {"split_window<double>", BENCH_TL_KERNEL, 2, T0 + 36500, T0 + 45 * US, 10, 4},
    {"split_band<1>", BENCH_TL_KERNEL, 2, T0 + 45500, T0 + 50 * US, 10, 5},
    {"split_solve_a", BENCH_TL_KERNEL, 3, T0 + 32 * US, T0 + 34 * US, 10, 6},
    {"split_window<double>", BENCH_TL_KERNEL, 3, T0 + 34500, T0 + 40 * US, 10, 7},
    {"split_band<1>", BENCH_TL_KERNEL, 3, T0 + 40500, T0 + 43 * US, 10, 8},
    {"record_mics<double>", BENCH_TL_KERNEL, 1, T0 + 50500, T0 + 51 * US, 10, 9},
    /* step 1: a copy after the sweep; the drum's last kernel runs past the next sweep's start */
    {"sweep2<double, 2>", BENCH_TL_KERNEL, 1, T0 + 52 * US, T0 + 82 * US, 11, 0},
    {"memcpy DtoH", BENCH_TL_MEMCPY, 1, T0 + 82 * US, T0 + 90 * US, 12, 0},
    {"split_solve_a", BENCH_TL_KERNEL, 2, T0 + 90 * US, T0 + 94 * US, 13, 0},
    {"split_window<double>", BENCH_TL_KERNEL, 2, T0 + 94 * US, T0 + 100 * US, 14, 0},
    {"split_band<1>", BENCH_TL_KERNEL, 2, T0 + 100 * US, T0 + 128 * US, 15, 0},
    {"record_mics<double>", BENCH_TL_KERNEL, 1, T0 + 100500, T0 + 101 * US, 16, 0},
    /* step 2: the sweep (beside step 1's drum, which outlasts it), the microphones */
    {"sweep2<double, 2>", BENCH_TL_KERNEL, 1, T0 + 104 * US, T0 + 124 * US, 17, 0},
    {"record_mics<double>", BENCH_TL_KERNEL, 1, T0 + 134500, T0 + 135 * US, 18, 0},
    /* step 3, never finished */
    {"sweep2<double, 2>", BENCH_TL_KERNEL, 1, T0 + 136 * US, T0 + 166 * US, 19, 0},
};
#define NREC (sizeof records / sizeof records[0])

/* The records in a scrambled order: the analysis must sort them. */
static void shuffled(bench_tl_record *out)
{
    for (size_t i = 0; i < NREC; i++)
        out[i] = records[(i * 7 + 3) % NREC];   /* 7 is prime to 19 */
}

static void check_shares(const bench_tl_step *s, const double want[BENCH_TL_SHARES], int k)
{
    double sum = 0;
    for (int c = 0; c < BENCH_TL_SHARES; c++) {
        KT_CHECK(fabs(s->share_us[c] - want[c]) < 1e-9, "step %d share %d: %.4f us, expected %.4f",
                 k, c, s->share_us[c], want[c]);
        sum += s->share_us[c];
    }
    KT_CHECK(fabs(sum - s->length_us) < 1e-9, "step %d: shares %.4f us, length %.4f", k, sum,
             s->length_us);
}

static void steps(void)
{
    bench_tl_record in[NREC];
    shuffled(in);
    bench_timeline tl;
    kt_error err;
    kt_error_clear(&err);
    int rc = bench_tl_analyse(in, NREC, bench_tl_kettle_rules(), &tl, &err);
    KT_CHECK(rc == KT_OK, "analyse: %s", err.message);
    if (rc != KT_OK)
        return;
    KT_CHECK(tl.steps == 3, "%d whole steps, expected 3", tl.steps);
    static const size_t first[3] = {1, 10, 16}, count[3] = {9, 6, 2};
    static const double length[3] = {52, 52, 32}, start[3] = {0, 52, 104}, sweep[3] = {30, 30, 20};
    /* sweep, drums, air, copies, idle */
    static const double share[3][BENCH_TL_SHARES] = {
        {30, 17.5, 1.5, 0, 3.0}, {30, 14, 0, 8, 0}, {20, 4, 0.5, 0, 7.5}};
    static const int gaps[3] = {5, 0, 2}, drums[3] = {2, 1, 0};
    for (int k = 0; k < 3 && k < tl.steps; k++) {
        const bench_tl_step *s = &tl.step[k];
        KT_CHECK(s->first == first[k] && s->count == count[k], "step %d: records %zu+%zu, "
                 "expected %zu+%zu", k, s->first, s->count, first[k], count[k]);
        KT_CHECK(fabs(s->length_us - length[k]) < 1e-9 && fabs(s->start_us - start[k]) < 1e-9,
                 "step %d: %.3f us from %.3f", k, s->length_us, s->start_us);
        KT_CHECK(fabs(s->sweep_us - sweep[k]) < 1e-9, "step %d: sweep %.3f us", k, s->sweep_us);
        check_shares(s, share[k], k);
        KT_CHECK(s->gaps == gaps[k], "step %d: %d gaps, expected %d", k, s->gaps, gaps[k]);
        KT_CHECK(s->drums == drums[k], "step %d: %d drum chains, expected %d", k, s->drums,
                 drums[k]);
    }
    const bench_tl_step *s0 = &tl.step[0], *s1 = &tl.step[1];
    KT_CHECK(fabs(s0->gap_max_us - 1.0) < 1e-9 && fabs(s0->gap_max_at_us - 51.0) < 1e-9,
             "step 0's longest gap %.3f us at %.3f", s0->gap_max_us, s0->gap_max_at_us);
    KT_CHECK(fabs(s0->chain_us[0] - 18) < 1e-9 && fabs(s0->chain_us[1] - 11) < 1e-9,
             "step 0's chains %.3f, %.3f us, expected 18, 11", s0->chain_us[0], s0->chain_us[1]);
    KT_CHECK(fabs(s1->chain_us[0] - 38) < 1e-9, "step 1's chain %.3f us (to its end in step 2)",
             s1->chain_us[0]);
    /* drum numbers: step 0's second split_window is drum 2's */
    KT_CHECK(tl.drum[1] == 0 && tl.drum[3] == 1 && tl.drum[7] == 2 && tl.drum[9] == 0,
             "drums of step 0's records: %d %d %d %d", tl.drum[1], tl.drum[3], tl.drum[7],
             tl.drum[9]);
    const bench_tl_step *t = &tl.typical;
    KT_CHECK(tl.median == 0 && tl.slowest == 0, "median step %d, slowest %d", tl.median,
             tl.slowest);
    KT_CHECK(fabs(t->length_us - 52) < 1e-9 && fabs(t->share_us[BENCH_TL_IDLE] - 3) < 1e-9 &&
                 t->drums == 1 && fabs(t->chain_us[0] - 28) < 1e-9,
             "typical: %.3f us, idle %.3f, %d drums, chain %.3f", t->length_us,
             t->share_us[BENCH_TL_IDLE], t->drums, t->chain_us[0]);
    KT_CHECK(strstr(bench_tl_bound(t), "sweep") != NULL, "bound: %s", bench_tl_bound(t));
    bench_tl_step drum_bound = *t;
    drum_bound.share_us[BENCH_TL_DRUMS] = 40;
    KT_CHECK(strstr(bench_tl_bound(&drum_bound), "drums") != NULL, "bound: %s",
             bench_tl_bound(&drum_bound));

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int firstev = 1;
    bench_tl_chrome(f, &tl, 5, "5 \"drums\"", 8, &firstev);
    bench_tl_print(f, &tl);
    fclose(f);
    int events = 0;
    for (const char *p = text; (p = strstr(p, "\"ph\": \"X\"")); p++)
        events++;
    KT_CHECK(events == 17, "%d trace events, expected 17 (steps 0-2)", events);
    KT_CHECK(strstr(text, "5 \\\"drums\\\"") != NULL, "the label's quotes escaped");
    KT_CHECK(strstr(text, "bound by: the air's sweep") != NULL, "the printed bound");
    fputs(strstr(text, "  the median step's"), stdout);
    free(text);
    bench_tl_free(&tl);
}

static void no_whole_step(void)
{
    bench_timeline tl;
    kt_error err;
    kt_error_clear(&err);
    int rc = bench_tl_analyse(records, 4, bench_tl_kettle_rules(), &tl, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "no whole step"), "one sweep: %d %s", rc,
             err.message);
}

int main(void)
{
    short_names();
    steps();
    no_whole_step();
    return kt_test_finish("test_bench_timeline");
}
