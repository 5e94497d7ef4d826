/* bench_gpu.c - the GPU rows of `kettle bench spmv --gpu` and `kettle bench
 * room --gpu` (cuda/kt_cuda.h underneath).  Kernels are launched back to
 * back and timed from the host around a final synchronisation, so a figure
 * is the device's throughput, launch latency hidden as it is in a real run;
 * each figure is the median of --repeats runs of at least ~20 ms. */
#include "bench_gpu.h"
#include "kt_cli.h"

#include <stdio.h>

#if !KETTLE_CUDA_ENABLED

int bench_gpu_check(const char *bench)
{
    fprintf(stderr,
            "kettle bench %s: --gpu needs a build with the CUDA backend; this one has none "
            "(configure with -DKETTLE_CUDA=ON where nvcc is installed)\n",
            bench);
    return KT_EXIT_USAGE;
}

#else

#include "kt_cuda.h"
#include "timpani.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int bench_gpu_check(const char *bench)
{
    kt_gpu_info info;
    if (kt_cuda_devices(&info, 1) == 0) {
        fprintf(stderr, "kettle bench %s: --gpu: no CUDA device found (driver missing?)\n",
                bench);
        return KT_EXIT_FAIL;
    }
    printf("GPU: %s, %.1f GiB, compute capability %d.%d\n", info.name, info.memory_gib,
           info.compute_major, info.compute_minor);
    return KT_EXIT_OK;
}

double bench_gpu_copy_bandwidth(bench_report *r, int repeats)
{
    const size_t bytes = (size_t)1 << 30;
    double bw[2];
    kt_error err;
    static const char *names[2] = {"memcpy-d2d", "copy-kernel"};
    for (int k = 0; k < 2; k++) {
        if (kt_cuda_copy_bandwidth(bytes, repeats < 3 ? 3 : repeats, k, &bw[k], &err) < 0) {
            fprintf(stderr, "kettle: GPU copy bandwidth: %s\n", err.message);
            return -1;
        }
        bw[k] *= 1e-9;
        printf("GPU copy bandwidth (read + write, 2 x 1 GiB, %s): %.1f GB/s\n", names[k], bw[k]);
        bench_report_add(r, "gpu-copy-1GiB", names[k], "gpu", "-", 0, "copy_bandwidth", bw[k],
                         "GB/s");
    }
    return fmax(bw[0], bw[1]);
}

/* ---- timing ---- */

typedef int (*gpu_work_fn)(void *ctx, kt_error *err);

/* Seconds per call of `work`: median of `repeats` runs of enough back-to-back
 * calls to last about run_s, each run ending in a synchronisation. */
static int time_gpu(gpu_work_fn work, void *ctx, int repeats, double run_s, double *seconds,
                    kt_error *err)
{
    int rc = work(ctx, err);                        /* warm-up */
    if (rc == KT_OK)
        rc = kt_cuda_sync(err);
    double t0 = kt_seconds();
    for (int k = 0; k < 10 && rc == KT_OK; k++)     /* calibration */
        rc = work(ctx, err);
    if (rc == KT_OK)
        rc = kt_cuda_sync(err);
    if (rc < 0)
        return rc;
    double once = (kt_seconds() - t0) / 10;
    long iters = once > 0 ? (long)(run_s / once) : 1000;
    iters = iters < 3 ? 3 : iters > 100000 ? 100000 : iters;
    double *t = malloc((size_t)repeats * sizeof *t);
    if (!t)
        return kt_fail(err, KT_ENOMEM, "out of memory");
    for (int r = 0; r < repeats && rc == KT_OK; r++) {
        t0 = kt_seconds();
        for (long k = 0; k < iters && rc == KT_OK; k++)
            rc = work(ctx, err);
        if (rc == KT_OK)
            rc = kt_cuda_sync(err);
        t[r] = (kt_seconds() - t0) / (double)iters;
    }
    if (rc == KT_OK)
        *seconds = kt_median(t, repeats);
    free(t);
    return rc;
}

/* ---- SpMV ---- */

typedef struct spmv_work {
    kt_cuda_matrix *matrix;      /* NULL: the band operator */
    int n, nbands;
    const int *offsets;
    const double *values;
    const double *x;
    double *y;
} spmv_work;

static int spmv_once(void *ctx, kt_error *err)
{
    spmv_work *w = ctx;
    if (w->matrix)
        return kt_cuda_spmv(w->matrix, w->x, w->y, 0, err);
    return kt_cuda_bands_apply(w->n, w->nbands, w->offsets, w->values, w->x, w->y, 0, err);
}

static double max_rel_diff(const double *a, const double *b, int n)
{
    double diff = 0.0, scale = 0.0;
    for (int i = 0; i < n; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

#define GPU_IMPLS 4

/* Times one implementation; checks its y against ref first.  Returns 0 or -1. */
static int spmv_impl(spmv_work *w, const double *ref, double *host_y, int repeats,
                     const char *case_name, const char *impl, double *seconds)
{
    kt_error err;
    int rc = spmv_once(w, &err);
    if (rc == KT_OK)
        rc = kt_cuda_sync(&err);
    if (rc == KT_OK)
        rc = kt_cuda_download(host_y, w->y, (size_t)w->n * sizeof *host_y, &err);
    if (rc == KT_OK) {
        double e = max_rel_diff(host_y, ref, w->n);
        if (e > 1e-10) {
            fprintf(stderr, "kettle: %s gpu %s disagrees with the CPU by %g\n", case_name, impl,
                    e);
            return -1;
        }
        rc = time_gpu(spmv_once, w, repeats, 0.02, seconds, &err);
    }
    if (rc < 0) {
        fprintf(stderr, "kettle: %s gpu %s: %s\n", case_name, impl, err.message);
        return -1;
    }
    return 0;
}

static void spmv_row(bench_report *r, const char *case_name, const char *impl, double t,
                     size_t traffic, double csr_t, double cpu_best_s, double copy_gbps)
{
    double gbps = (double)traffic / t * 1e-9, vs_csr = csr_t / t, of_copy = gbps / copy_gbps;
    double vs_cpu = cpu_best_s / t;
    printf("%-12s %-12s %7s %14.2f %11.3f %9.2f %9.2fx %9.0f%%  %.1fx the best CPU\n",
           case_name, impl, "gpu", t * 1e6, t * 44100, gbps, vs_csr, 100.0 * of_copy, vs_cpu);
    bench_report_add(r, case_name, impl, "gpu", "double", 0, "time_per_spmv", t * 1e6, "us");
    bench_report_add(r, case_name, impl, "gpu", "double", 0, "seconds_per_44100", t * 44100,
                     "s");
    bench_report_add(r, case_name, impl, "gpu", "double", 0, "gbps", gbps, "GB/s");
    bench_report_add(r, case_name, impl, "gpu", "double", 0, "ratio_to_csr", vs_csr, "x");
    bench_report_add(r, case_name, impl, "gpu", "double", 0, "fraction_of_copy", of_copy,
                     "ratio");
    bench_report_add(r, case_name, impl, "gpu", "double", 0, "speedup_vs_cpu_best", vs_cpu,
                     "x");
}

int bench_gpu_spmv_case(bench_report *r, const char *case_name, const kt_matrix *csr,
                        const kt_matrix *dia, const kt_matrix *ell, int nbands,
                        const int *offsets, const double *values, const double *x,
                        const double *ref, double cpu_best_s, int repeats, double copy_gbps)
{
    const kt_matrix *stored[3] = {csr, dia, ell};
    static const char *names[GPU_IMPLS] = {"cusparse-csr", "dia", "ell", "matrix-free"};
    const int n = csr->nrows;
    const size_t vectors = 2 * (size_t)n * sizeof(double);
    kt_cuda_matrix *dev[3] = {NULL, NULL, NULL};
    double *dx = NULL, *dy = NULL, *host_y = malloc((size_t)n * sizeof *host_y);
    double seconds[GPU_IMPLS] = {0};
    kt_error err;
    int status = host_y ? 0 : -1;
    if (status == 0 && (kt_cuda_alloc((size_t)n * sizeof *dx, (void **)&dx, &err) < 0 ||
                        kt_cuda_alloc((size_t)n * sizeof *dy, (void **)&dy, &err) < 0 ||
                        kt_cuda_upload(dx, x, (size_t)n * sizeof *dx, &err) < 0)) {
        fprintf(stderr, "kettle: %s gpu: %s\n", case_name, err.message);
        status = -1;
    }
    for (int k = 0; k < 3 && status == 0; k++)
        if (kt_cuda_matrix_upload(stored[k], &dev[k], &err) < 0) {
            fprintf(stderr, "kettle: %s gpu %s: %s\n", case_name, names[k], err.message);
            status = -1;
        }
    for (int k = 0; k < GPU_IMPLS && status == 0; k++) {
        spmv_work w = {k < 3 ? dev[k] : NULL, n, nbands, offsets, values, dx, dy};
        status = spmv_impl(&w, ref, host_y, repeats, case_name, names[k], &seconds[k]);
    }
    for (int k = 0; k < GPU_IMPLS && status == 0; k++)
        spmv_row(r, case_name, names[k], seconds[k],
                 (k < 3 ? kt_matrix_bytes(stored[k]) : 0) + vectors, seconds[0], cpu_best_s,
                 copy_gbps);
    if (status == 0 && n >= 1000000) {
        double ratio = seconds[0] / seconds[1];
        printf("  %s, gpu: DIA %.2fx cuSPARSE CSR (target 2x): %s\n", case_name, ratio,
               ratio >= 2.0 ? "met" : "MISSED");
        bench_report_add(r, case_name, "dia", "gpu", "double", 0, "speedup_vs_cusparse_csr",
                         ratio, "x");
    }
    for (int k = 0; k < 3; k++)
        kt_cuda_matrix_free(dev[k]);
    kt_cuda_free(dx);
    kt_cuda_free(dy);
    free(host_y);
    return status;
}

/* ---- the room ---- */

typedef struct room_work {
    kt_cuda_room *room;
    int steps;
} room_work;

static int room_steps(void *ctx, kt_error *err)
{
    room_work *w = ctx;
    return kt_cuda_room_run(w->room, w->steps, err);
}

int bench_gpu_room_case(bench_report *r, const char *grid_name, const char *walls,
                        const kt_room_params *p, int steps, int repeats, double copy_gbps)
{
    kt_cuda_room *room = NULL;
    kt_error err;
    int rc = kt_cuda_room_create(p, &room, &err);
    double t = 0;
    if (rc == KT_OK) {
        room_work w = {room, steps};
        rc = time_gpu(room_steps, &w, repeats, 0.25, &t, &err);
    }
    if (rc < 0) {
        fprintf(stderr, "kettle bench room: %s gpu: %s\n", grid_name, err.message);
        kt_cuda_room_free(room);
        return -1;
    }
    const kt_room_grid *g = kt_cuda_room_grid(room);
    const double points = (double)g->nx * g->ny * g->nz;
    const double mvox = points * steps / t / 1e6; /* t is per call of `steps` steps */
    const int single = p->precision == KT_SINGLE;
    const double gbps = mvox * 1e6 * (single ? 12.0 : 24.0) / 1e9, frac = gbps / copy_gbps;
    const char *pn = single ? "single" : "double";
    printf("%-18s %-6s %-7s %-7s %9.1f %9.2f %7.0f%%\n", grid_name, pn, "gpu", walls, mvox, gbps,
           100 * frac);
    fflush(stdout);
    bench_report_add(r, grid_name, walls, "gpu", pn, 0, "mvox_per_s", mvox, "Mvox/s");
    bench_report_add(r, grid_name, walls, "gpu", pn, 0, "min_traffic_gbps", gbps, "GB/s");
    bench_report_add(r, grid_name, walls, "gpu", pn, 0, "fraction_of_copy", frac, "ratio");
    kt_cuda_room_free(room);
    return 0;
}

/* ---- the reference drum, whole step on the device ---- */


/* The reference setup of cmd_bench_timpani.c (29-inch, 1 m^3 box, beta 0.5,
 * matrix-free + reduced, 10 iterations, 50 N strike, two microphones). */
static int drum_room(int with_drum, kt_room **out, kt_error *err)
{
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.wall_beta = 0.5;
    kt_room *room = NULL;
    kt_timpani *drum = NULL;
    kt_timpani_params p;
    const double left[3] = {0.3, 0.5, 0.85}, right[3] = {0.7, 0.5, 0.85};
    int rc = kt_room_create(&rp, &room, err);
    if (rc == KT_OK && with_drum) {
        rc = kt_timpani_params_standard(&p, 29, err);
        if (rc == KT_OK) {
            p.format = KT_TIMPANI_MATRIX_FREE;
            p.solver = KT_SOLVE_REDUCED;
            p.solver_iterations = 10;
            rc = createTimpani(room, &p, &drum, err);
        }
        if (rc == KT_OK)
            rc = kt_timpani_strike(drum, 0.0, 50.0, 1e-3, 0.22, 0.07, err);
    }
    if (rc == KT_OK && kt_room_add_mic(room, "left", left, err) < 0)
        rc = err->code;
    if (rc == KT_OK && kt_room_add_mic(room, "right", right, err) < 0)
        rc = err->code;
    if (rc < 0) {
        kt_room_destroy(room);
        return rc;
    }
    *out = room;
    return KT_OK;
}

/* Median seconds of `repeats` runs of `steps` steps (each on a fresh room,
 * so every run hears the strike; the mirror's creation is not timed). */
static int time_mirror(int with_drum, int batch, int steps, int repeats, double *median,
                       kt_error *err)
{
    double t[64];
    int n = repeats < 1 ? 1 : repeats > 64 ? 64 : repeats;
    for (int k = 0; k < n; k++) {
        kt_room *room = NULL;
        kt_cuda_mirror *M = NULL;
        int rc = drum_room(with_drum, &room, err);
        if (rc == KT_OK)
            rc = kt_cuda_mirror_create(room, &M, err);
        if (rc == KT_OK)
            rc = kt_cuda_mirror_set_batch(M, batch, err);
        if (rc == KT_OK)
            rc = kt_cuda_mirror_run(M, 2 * batch + 1, err); /* warm-up: graphs captured */
        double t0 = kt_seconds();
        if (rc == KT_OK)
            rc = kt_cuda_mirror_run(M, steps, err);
        t[k] = kt_seconds() - t0;
        kt_cuda_mirror_free(M);
        kt_room_destroy(room);
        if (rc < 0)
            return rc;
    }
    *median = kt_median(t, n);
    return KT_OK;
}

int bench_gpu_timpani_case(bench_report *r, const char *case_name, int steps, int repeats)
{
    static const struct {
        const char *impl;
        int drum, batch;
    } rows[3] = {{"mirror+graph", 1, 96}, {"mirror+launch", 1, 0}, {"air-only+graph", 0, 96}};
    kt_error err;
    printf("\n%-16s %10s %10s   (GPU, whole step on the device, %d steps, median of %d)\n",
           "gpu", "us/step", "s per 1s", steps, repeats);
    for (int k = 0; k < 3; k++) {
        double s = 0;
        if (time_mirror(rows[k].drum, rows[k].batch, steps, repeats, &s, &err) < 0) {
            fprintf(stderr, "kettle bench timpani --gpu: %s: %s\n", rows[k].impl, err.message);
            return -1;
        }
        const double us = s / steps * 1e6, per_second = us * 1e-6 * 44100.0;
        printf("%-16s %10.2f %10.3f\n", rows[k].impl, us, per_second);
        fflush(stdout);
        bench_report_add(r, case_name, rows[k].impl, "gpu", "double", 0, "us_per_step", us, "us");
        bench_report_add(r, case_name, rows[k].impl, "gpu", "double", 0,
                         "seconds_per_audio_second", per_second, "s");
    }
    return 0;
}

#endif
