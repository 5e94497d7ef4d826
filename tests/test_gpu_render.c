/* test_gpu_render.c - `kettle render --device gpu` against the CPU: a short
 * piece with everything the renderer drives between steps (a pedal glide
 * every ksmps steps, a damped note and its damper lifted by the next
 * stroke, strikes before and after both, an impulse source, a fixed and a
 * moving microphone, two pressure snapshots) is rendered through kt_render
 * on the CPU and on the GPU, raw (no normalisation, 64-bit float WAV).  In
 * double precision every sample must agree within 1e-10 of the loudest (the
 * drum's sums run in another order on the device, so not bit for bit); in
 * single precision within 1e-4.  Agreement proves that every strike, the
 * pedal's new tension and the damping reached the device: a render of the
 * same piece without the pedal, or without the damping, differs far more.
 * --device auto picks the GPU here and says so.  In a room 2.4 m tall the
 * GPU's temporal blocking hands the drum's planes over a step at a time
 * (kt_render_options.block, `--block`): depths 2 and 4 and the timed choice
 * give the samples of --block off byte for byte and say so in the result;
 * depth 8 is refused with the GPU's range (under --device auto the CPU
 * renders it).  Skipped (77) without a CUDA
 * build or a GPU of compute capability 9.0 or newer. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_render: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kt_cuda.h"
#include "kt_render.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *orc =
    "sr = 16000\n"
    "room = 0.8 0.8 0.9\n"
    "beta = 0.3\n"
    "ksmps = 16\n"
    "mic m 0.4 0.4 0.75\n"
    "mic walker 0.2 0.3 0.7\n"
    "move walker 0.15 0.6 0.5 0.7\n"
    "impulse 0.2 0.6 0.3 0.01 1ms 0.5\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.4 0.4 0.6\n"
    "endin\n";
/* Struck at 0 and damped from 0.06 s (T60 0.05 s); the glide runs from
 * 0.03 s to 0.07 s; the stroke at 0.1 s lifts the damper. */
static const char *sco_full =
    "i 1 0 0.06 f 0.6 10 1 0.05\n"
    "i 1 0.1 0.08 mf 0.4 -30\n"
    "pedal 1 0.03 0.04 G3\n";
static const char *sco_no_pedal =
    "i 1 0 0.06 f 0.6 10 1 0.05\n"
    "i 1 0.1 0.08 mf 0.4 -30\n";
static const char *sco_no_damping =
    "i 1 0 0.06 f 0.6 10 1\n"
    "i 1 0.1 0.08 mf 0.4 -30\n"
    "pedal 1 0.03 0.04 G3\n";

/* The same piece in a room 2.4 m tall: the drum's planes are a fraction of
 * the height, so the room can be blocked around them. */
static const char *orc_tall =
    "sr = 16000\n"
    "room = 0.8 0.8 2.4\n"
    "beta = 0.3\n"
    "ksmps = 16\n"
    "mic m 0.4 0.4 0.75\n"
    "mic walker 0.2 0.3 1.9\n"
    "move walker 0.15 0.6 0.3 0.7\n"
    "impulse 0.2 0.6 1.6 0.01 1ms 0.5\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.4 0.4 0.6\n"
    "endin\n";

static char dir[64];

static int gpu_usable(void)
{
    kt_gpu_info info;
    return kt_cuda_devices(&info, 1) > 0 && info.compute_major >= 9;
}

/* Renders the piece raw (kt_test_render_all) with two pressure snapshots
 * into dir; returns the interleaved samples (caller frees) and their count,
 * or NULL. */
static double *render(const char *sco, kt_device device, int precision, const char *name,
                      int64_t *count, kt_render_result *res)
{
    char stem[128];
    snprintf(stem, sizeof stem, "%s/%s_snap", dir, name);
    static const double snaps[] = {0.02, 0.11};
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = device;
    o.precision = precision;
    o.tail_s = 0.02;
    o.snapshot_times_s = snaps;
    o.snapshot_count = 2;
    o.snapshot_position_m = 0.45;
    o.snapshot_stem = stem;
    double *x = kt_test_render_all(orc, sco, &o, count, res);
    KT_CHECK(x != NULL, "%s: no samples rendered", name);
    KT_CHECK(!x || (res->snapshots_written == 2 && res->summary[0].clipped == 0 &&
                    res->summary[1].clipped == 0),
             "%s: %d snapshots, clipped %lld", name, res->snapshots_written,
             x ? (long long)res->summary[0].clipped : 0LL);
    return x;
}

static void compare(int precision, double tol)
{
    const char *p = precision == KT_SINGLE ? "single" : "double";
    char cpu_name[32], gpu_name[32];
    snprintf(cpu_name, sizeof cpu_name, "cpu_%s", p);
    snprintf(gpu_name, sizeof gpu_name, "gpu_%s", p);
    kt_render_result rc, rg;
    int64_t nc = 0, ng = 0;
    double *c = render(sco_full, KT_DEVICE_CPU, precision, cpu_name, &nc, &rc);
    /* the double run names the GPU, the single run lets auto find it */
    kt_device dev = precision == KT_SINGLE ? KT_DEVICE_AUTO : KT_DEVICE_GPU;
    double *g = render(sco_full, dev, precision, gpu_name, &ng, &rg);
    KT_CHECK(strcmp(rc.device, "CPU") == 0 && strncmp(rg.device, "GPU ", 4) == 0,
             "devices '%s' and '%s'", rc.device, rg.device);
    double d = kt_test_relative_difference(g, ng, c, nc), peak = 0;
    for (int64_t i = 0; c && i < nc; i++)
        peak = fmax(peak, fabs(c[i]));
    printf("%s: %lld samples, peak %.3g Pa, GPU vs CPU %.3g relative (%s)\n", p,
           (long long)nc / 2, peak / 1e-3, d, rg.device);
    KT_CHECK(d <= tol, "%s: GPU and CPU differ by %.3g of the peak (bound %g)", p, d, tol);
    KT_CHECK(peak > 1e-6, "%s: the microphones heard nothing (peak %g)", p, peak);
    if (precision == KT_DOUBLE) {
        /* The pedal and the damping change the sound far beyond the bound. */
        kt_render_result r1, r2;
        int64_t n1 = 0, n2 = 0;
        double *x1 = render(sco_no_pedal, KT_DEVICE_GPU, precision, "gpu_no_pedal", &n1, &r1);
        double *x2 = render(sco_no_damping, KT_DEVICE_GPU, precision, "gpu_no_damp", &n2, &r2);
        double d1 = kt_test_relative_difference(x1, n1, c, nc), d2 = kt_test_relative_difference(x2, n2, c, nc);
        printf("without the pedal %.3g, without the damping %.3g relative\n", d1, d2);
        KT_CHECK(d1 > 1e-3 && d2 > 1e-3, "pedal and damping must matter: %.3g, %.3g", d1, d2);
        free(x1);
        free(x2);
        kt_render_result_free(&r1);
        kt_render_result_free(&r2);
    }
    free(c);
    free(g);
    kt_render_result_free(&rc);
    kt_render_result_free(&rg);
}

/* The GPU render blocked at `block` (kt_render_options.block) in the tall
 * room, raw; its samples (caller frees) and count, or NULL. */
static double *render_blocked(int block, int precision, int64_t *count, kt_render_result *res)
{
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_GPU;
    o.precision = precision;
    o.tail_s = 0.05;
    o.block = block;
    return kt_test_render_all(orc_tall, sco_full, &o, count, res);
}

static void blocked(int precision)
{
    const char *p = precision == KT_SINGLE ? "single" : "double";
    kt_render_result r0;
    int64_t n0 = 0;
    double *x0 = render_blocked(1, precision, &n0, &r0);
    KT_CHECK(x0 && strcmp(r0.blocking, "off") == 0, "%s, --block off: blocking '%s'", p,
             r0.blocking);
    static const int depths[] = {2, 4, 0};
    for (int k = 0; x0 && k < 3; k++) {
        kt_render_result r;
        int64_t n = 0;
        double *x = render_blocked(depths[k], precision, &n, &r);
        char want[16];
        snprintf(want, sizeof want, "depth %d,", depths[k]);
        KT_CHECK(x && (depths[k] == 0 || (strncmp(r.blocking, want, strlen(want)) == 0 &&
                                          strstr(r.blocking, "a step at a time"))),
                 "%s, --block %d: blocking '%s'", p, depths[k], r.blocking);
        KT_CHECK(x && n == n0 && memcmp(x, x0, sizeof *x * (size_t)n) == 0,
                 "%s, --block %d (%s): not the samples of --block off", p, depths[k],
                 r.blocking);
        printf("%s, --block %d: %s: %lld samples, the same bytes as off\n", p, depths[k],
               r.blocking, (long long)n / 2);
        free(x);
        kt_render_result_free(&r);
    }
    free(x0);
    kt_render_result_free(&r0);
}

/* --block 8 on the GPU: refused, naming the GPU's range; under --device
 * auto the CPU, which takes depths up to 8, renders it and says why. */
static void block_refused(void)
{
    kt_performance perf;
    kt_score_error err = {0};
    kt_render_result res;
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_GPU;
    o.block = 8;
    char out[96];
    snprintf(out, sizeof out, "%s/refused.wav", dir);
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "t.orc", orc_tall, "t.sco", sco_full, &err);
    if (rc == 0)
        rc = kt_render(&perf, out, &o, &res, &err);
    KT_CHECK(rc < 0 && strstr(err.message, "--block 8") && strstr(err.message, "out of range"),
             "--block 8 on the GPU: rc %d, '%s'", rc, err.message);
    printf("--block 8 on the GPU: %s\n", err.message);
    kt_render_result_free(&res);
    kt_performance_free(&perf);
    o.device = KT_DEVICE_AUTO;
    int64_t n = 0;
    double *x = kt_test_render_all(orc_tall, sco_full, &o, &n, &res);
    KT_CHECK(x && strncmp(res.device, "CPU (", 5) == 0 && strstr(res.device, "--block 8") &&
                 strncmp(res.blocking, "depth 8", 7) == 0,
             "--block 8 under --device auto: device '%s', blocking '%s'", res.device,
             res.blocking);
    printf("--block 8 under --device auto: %s; %s\n", res.device, res.blocking);
    free(x);
    kt_render_result_free(&res);
}

int main(void)
{
    if (!gpu_usable()) {
        printf("test_gpu_render: no GPU of compute capability 9.0 or newer, skipped\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/kettle_gpu_render_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    compare(KT_DOUBLE, 1e-10);
    compare(KT_SINGLE, 1e-4);
    blocked(KT_DOUBLE);
    blocked(KT_SINGLE);
    block_refused();
    kt_test_remove_dir(dir);
    return kt_test_finish("test_gpu_render");
}
#endif
