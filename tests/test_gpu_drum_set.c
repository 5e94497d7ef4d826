/* test_gpu_drum_set.c - a timpani set on the GPU (issue 18): drums of
 * different sizes in any order, every GPU path, both precisions.
 *
 *  - parity: the five-drum set (20-32 in, a stroke on every drum, a pedal
 *    glide) written largest first (which failed at t = 0 when each drum set
 *    its kernels' shared-memory limit for its own size) gives the CPU's
 *    samples to 1e-10 of the peak in double precision;
 *  - order: written smallest first and shuffled, the GPU gives the same
 *    samples to 1e-12 of the peak;
 *  - paths: matrix-free with the reduced iteration, CSR and DIA/ELL with
 *    Jacobi agree with the CPU's same format and solver to 1e-10; CSC either
 *    renders or is refused before the first step;
 *  - single precision: the set agrees with the CPU's single-precision render
 *    to 1e-4; eight drums agree in double.
 * Skipped (77) without a CUDA build or a GPU of compute capability 9.0+. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_drum_set: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kt_cuda.h"
#include "kt_render.h"
#include "kt_test_drums.h"

#include <stdlib.h>
#include <string.h>

typedef struct setup {
    kt_device device;
    int precision, format;   /* format: -1 auto */
    const char *solver;      /* NULL: the device's default */
} setup;

static double *render_set(const int *order, int n, setup s, int64_t *count, int *steps)
{
    char orc[4096], sco[1024];
    kt_test_set_orc(orc, sizeof orc, 16000, order, n);
    if (s.solver) {   /* every drum takes it */
        char with[4096], *o = with;
        for (const char *p = orc; *p && o < with + sizeof with - 64; p++) {
            *o++ = *p;
            if (!strncmp(p, "endin", 5) && p > orc && p[-1] == '\n') {
                o--;
                o += sprintf(o, "  solver = %s\n", s.solver);
                *o++ = *p;
            }
        }
        *o = '\0';
        memcpy(orc, with, sizeof orc);
    }
    kt_test_set_sco(sco, sizeof sco, n);
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = s.device;
    o.precision = s.precision;
    o.format = s.format;
    o.tail_s = 0.02;
    kt_render_result res;
    double *x = kt_test_render_all(orc, sco, &o, count, &res);
    if (steps)
        *steps = (int)res.steps;
    KT_CHECK(s.device != KT_DEVICE_GPU || !x || strncmp(res.device, "GPU ", 4) == 0,
             "rendered on %s", res.device);
    kt_render_result_free(&res);
    return x;
}

static void compare(const char *what, const int *order, int n, setup cpu, setup gpu, double tol)
{
    int64_t nc = 0, ng = 0;
    double *c = render_set(order, n, cpu, &nc, NULL);
    double *g = render_set(order, n, gpu, &ng, NULL);
    double d = kt_test_relative_difference(g, ng, c, nc);
    printf("%-44s GPU vs CPU %.3g of the peak (%lld samples)\n", what, d, (long long)nc);
    KT_CHECK(d <= tol, "%s: GPU and CPU differ by %.3g of the peak (bound %g)", what, d, tol);
    KT_CHECK(c && kt_test_max_abs(c, (int)nc) > 1e-6, "%s: not heard", what);
    free(c);
    free(g);
}

static int gpu_usable(void)
{
    kt_gpu_info info;
    return kt_cuda_devices(&info, 1) > 0 && info.compute_major >= 9;
}

int main(void)
{
    if (!gpu_usable()) {
        printf("test_gpu_drum_set: no GPU of compute capability 9.0 or newer, skipped\n");
        return 77;
    }
    static const int largest[5] = {0, 1, 2, 3, 4}, smallest[5] = {4, 3, 2, 1, 0},
                     shuffled[5] = {2, 4, 0, 3, 1}, eight[8] = {7, 0, 6, 1, 5, 2, 4, 3};
    const setup cpu = {KT_DEVICE_CPU, KT_DOUBLE, -1, NULL}, gpu = {KT_DEVICE_GPU, KT_DOUBLE, -1, NULL};
    compare("five drums, largest first, double", largest, 5, cpu, gpu, 1e-10);

    int64_t n0 = 0, n1 = 0, n2 = 0;
    double *g0 = render_set(largest, 5, gpu, &n0, NULL);
    double *g1 = render_set(smallest, 5, gpu, &n1, NULL);
    double *g2 = render_set(shuffled, 5, gpu, &n2, NULL);
    double d1 = kt_test_relative_difference(g1, n1, g0, n0);
    double d2 = kt_test_relative_difference(g2, n2, g0, n0);
    printf("GPU, smallest first / shuffled vs largest first: %.3g, %.3g of the peak\n", d1, d2);
    KT_CHECK(d1 <= 1e-12 && d2 <= 1e-12, "the GPU set depends on the order: %.3g, %.3g", d1, d2);
    free(g0);
    free(g1);
    free(g2);

    static const struct { int format; const char *solver; } paths[3] = {
        {KT_TIMPANI_MATRIX_FREE, "reduced"}, {KT_TIMPANI_CSR, "jacobi"},
        {KT_TIMPANI_DIA_ELL, "jacobi"}};
    for (int p = 0; p < 3; p++) {
        char what[64];
        snprintf(what, sizeof what, "five drums, %s + %s",
                 kt_timpani_format_name((kt_timpani_format)paths[p].format), paths[p].solver);
        setup c = {KT_DEVICE_CPU, KT_DOUBLE, paths[p].format, paths[p].solver};
        setup g = {KT_DEVICE_GPU, KT_DOUBLE, paths[p].format, paths[p].solver};
        compare(what, largest, 5, c, g, 1e-10);
    }
    /* CSC: rendered, or refused with a reason before any step */
    {
        char orc[4096], sco[1024];
        kt_test_set_orc(orc, sizeof orc, 16000, largest, 5);
        kt_test_set_sco(sco, sizeof sco, 5);
        kt_performance perf;
        kt_score_error err = {0};
        kt_performance_init(&perf);
        int rc = kt_score_parse(&perf, "t.orc", orc, "t.sco", sco, &err);
        kt_render_options o;
        kt_render_options_default(&o);
        o.device = KT_DEVICE_GPU;
        o.format = KT_TIMPANI_CSC;
        o.tail_s = 0.02;
        o.output.normalize = 0;
        kt_render_result res;
        if (rc == 0)
            rc = kt_render(&perf, "/tmp/kettle_gpu_set_csc.wav", &o, &res, &err);
        printf("five drums, csc on the GPU: %s%s\n", rc == 0 ? "rendered" : "refused: ",
               rc == 0 ? "" : err.message);
        KT_CHECK(rc == 0 || res.steps == 0, "csc failed after %lld steps: %s",
                 (long long)res.steps, err.message);
        kt_render_result_free(&res);
        kt_performance_free(&perf);
        remove("/tmp/kettle_gpu_set_csc.wav");
    }

    const setup cpu1 = {KT_DEVICE_CPU, KT_SINGLE, -1, "direct"},
                gpu1 = {KT_DEVICE_GPU, KT_SINGLE, -1, "direct"};
    compare("five drums, single precision", largest, 5, cpu1, gpu1, 1e-4);
    compare("eight drums, double", eight, 8, cpu, gpu, 1e-10);
    return kt_test_finish("test_gpu_drum_set");
}
#endif
