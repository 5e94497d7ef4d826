/* test_bench_render.c - a benchmark's case renders as its row says
 * (bench/bench_render.c): `kettle bench section --score ORC SCO --precision
 * single` rendered an orchestra that says `precision = double` in double
 * precision while its rows said single (the precision never reached
 * kt_render_options).  A tiny room, two steps each on the CPU:
 *  - the options carry the precision asked into the room a render makes
 *    (kt_render_room_params), single and double, and -1 keeps the
 *    orchestra's;
 *  - rendered, the single-precision room holds less memory than the
 *    double one (the fields in float);
 *  - the sample rate, device, threads and steps asked are in force. */
#include "bench_render.h"
#include "kt_test.h"

#include <stdio.h>
#include <unistd.h>

static const char orc[] = "sr = 8000\nroom = 0.6 0.5 0.4\nprecision = double\n"
                          "mic m 0.3 0.25 0.2\n";
static const char sco[] = "f 0 1\n";

/* The room's bytes of a two-step render with precision p, 0 on failure. */
static size_t room_bytes(const kt_performance *perf, int p)
{
    kt_render_options o;
    bench_render_options(&o, 16000, p, KT_DEVICE_CPU, KT_OVERLAP_AIR, 1, 2);
    kt_render_result res;
    kt_score_error err = {0};
    char out[64];
    snprintf(out, sizeof out, "/tmp/test_bench_render_%ld.wav", (long)getpid());
    int rc = kt_render(perf, out, &o, &res, &err);
    KT_CHECK(rc == 0, "render (precision %d): %s", p, err.message);
    KT_CHECK(rc != 0 || (res.steps == 2 && res.sample_rate_hz == 16000),
             "%lld steps at %g Hz, expected 2 at 16000", (long long)res.steps,
             res.sample_rate_hz);
    size_t bytes = rc == 0 ? res.grid.bytes : 0;
    kt_render_result_free(&res);
    return bytes;
}

int main(void)
{
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "bench.orc", orc, "bench.sco", sco, &err);
    KT_CHECK(rc == 0, "score: %s", err.message);
    if (rc != 0)
        return kt_test_finish("test_bench_render");
    static const int asked[3] = {KT_SINGLE, KT_DOUBLE, -1}, got[3] = {KT_SINGLE, KT_DOUBLE,
                                                                       KT_DOUBLE};
    for (int k = 0; k < 3; k++) {
        kt_render_options o;
        bench_render_options(&o, 16000, asked[k], KT_DEVICE_GPU, KT_OVERLAP_NONE, 3, 7);
        kt_room_params rp;
        kt_render_room_params(&perf, &o, &rp);
        KT_CHECK((int)rp.precision == got[k], "precision %d asked: the room is %d, expected %d",
                 asked[k], rp.precision, got[k]);
        KT_CHECK(o.device == KT_DEVICE_GPU && o.nthreads == 3 && o.estimate_steps == 7 &&
                     o.sample_rate_hz == 16000,
                 "options: device %d, %d threads, %lld steps, %g Hz", o.device, o.nthreads,
                 (long long)o.estimate_steps, o.sample_rate_hz);
    }
    size_t single = room_bytes(&perf, KT_SINGLE), dbl = room_bytes(&perf, KT_DOUBLE);
    printf("room: %zu bytes single, %zu double\n", single, dbl);
    KT_CHECK(single > 0 && single < dbl, "rendered single %zu bytes, double %zu", single, dbl);
    kt_performance_free(&perf);
    return kt_test_finish("test_bench_render");
}
