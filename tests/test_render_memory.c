/* test_render_memory.c - kt_render_to_memory: a render into memory holds, for
 * every microphone, the very samples a render to a file writes (bit for bit:
 * the file's 64-bit floats are raw gain x the same pascals), at the
 * simulation's rate and length; a render into memory refuses checkpoints and
 * estimates, and its score errors point at the statement as kt_render's do. */
#include "kt_render.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

/* A small, coarse room so that the test stays fast: 16 kHz, a 23-inch drum
 * and an impulse, two microphones. */
static const char *orc =
    "sr = 16000\n"
    "room = 0.8 0.8 0.9\n"
    "beta = 0.2\n"
    "mic near 0.4 0.4 0.75\n"
    "mic far 0.15 0.2 0.3\n"
    "impulse 0.2 0.6 0.3 0.001 0.5ms\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.4 0.4 0.6\n"
    "endin\n";
static const char *sco = "i 1 0 0.02 ff\n";

static void options(kt_render_options *o)
{
    kt_render_options_default(o);
    o->nthreads = 1;
    o->tail_s = 0.01;
    o->device = KT_DEVICE_CPU;
    o->tuning = 1;    /* the formula's tensions: no tuning runs */
}

static void test_same_as_file(void)
{
    kt_render_options o;
    options(&o);
    kt_render_result file_res, res;
    int64_t count = 0;
    double *file = kt_test_render_all(orc, sco, &o, &count, &file_res);
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    kt_render_audio audio;
    int rc = kt_score_parse(&perf, "m.orc", orc, "m.sco", sco, &err);
    if (rc == 0)
        rc = kt_render_to_memory(&perf, &o, &audio, &res, &err);
    KT_CHECK(rc == 0, "render to memory: %s", err.message);
    if (rc == 0 && file) {
        KT_CHECK(audio.channels == 2 && audio.sample_rate_hz == 16000.0,
                 "%d channels at %g Hz", audio.channels, audio.sample_rate_hz);
        KT_CHECK(audio.frames == res.total_steps && audio.frames == (int64_t)(0.03 * 16000),
                 "%lld frames, %lld steps", (long long)audio.frames, (long long)res.total_steps);
        KT_CHECK(count == 2 * audio.frames, "the file has %lld samples", (long long)count);
        int64_t differ = 0;
        double peak = 0;
        for (int64_t i = 0; i < audio.frames && count == 2 * audio.frames; i++)
            for (int c = 0; c < 2; c++) {
                double p = audio.pascals[c * audio.frames + i];
                differ += file[2 * i + c] != 1e-3 * p;   /* kt_test_render_all's gain */
                peak = fmax(peak, fabs(p));
            }
        KT_CHECK(differ == 0, "%lld samples differ from the file's", (long long)differ);
        KT_CHECK(peak > 1e-3, "the microphones hear the drum and the impulse (peak %g Pa)",
                 peak);
    }
    kt_render_audio_free(&audio);
    KT_CHECK(audio.pascals == NULL && audio.channels == 0, "freed and cleared");
    kt_render_result_free(&res);
    kt_render_result_free(&file_res);
    free(file);
    kt_performance_free(&perf);
}

static void test_refusals(void)
{
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    kt_render_audio audio;
    kt_render_result res;
    kt_render_options o;
    options(&o);
    o.checkpoint_path = "never.ckpt";
    int rc = kt_score_parse(&perf, "m.orc", orc, "m.sco", sco, &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    rc = kt_render_to_memory(&perf, &o, &audio, &res, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "checkpoint") && !audio.pascals,
             "a checkpoint is refused: %d %s", rc, err.message);
    options(&o);
    o.estimate_steps = 10;
    rc = kt_render_to_memory(&perf, &o, &audio, &res, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "estimate"), "an estimate is refused: %s",
             err.message);
    kt_performance_free(&perf);

    /* a strike off the head: the error points at its `i` statement */
    kt_performance_init(&perf);
    memset(&err, 0, sizeof err);
    options(&o);
    rc = kt_score_parse(&perf, "m.orc", orc, "m.sco", "i 1 0 0.02 ff\ni 1 0.01 0.01 ff 1.5\n",
                        &err);
    if (rc == 0)
        rc = kt_render_to_memory(&perf, &o, &audio, &res, &err);
    KT_CHECK(rc < 0 && strcmp(err.file, "m.sco") == 0 && err.line == 2,
             "the error is at m.sco:2, not %s:%d (%s)", err.file, err.line, err.message);
    KT_CHECK(!audio.pascals, "a failed render keeps no audio");
    kt_render_result_free(&res);
    kt_performance_free(&perf);
}

int main(void)
{
    test_same_as_file();
    test_refusals();
    return kt_test_finish("test_render_memory");
}
