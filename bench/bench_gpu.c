/* bench_gpu.c - the GPU rows of `kettle bench spmv --gpu` and `kettle bench
 * room --gpu` (room/include/kt_cuda_room.h underneath).  Kernels are launched back to
 * back and timed from the host around a final synchronisation, so a figure
 * is the device's throughput, launch latency hidden as it is in a real run;
 * each figure is the median of --repeats runs of at least ~20 ms. */
#include "bench_gpu.h"
#include "kt_exit.h"

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

#include "kt_cuda_room.h"
#include "kt_ranks.h"
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
        if (bench_cuda_copy_bandwidth(bytes, repeats < 3 ? 3 : repeats, k, &bw[k], &err) < 0) {
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
        double e = bench_max_rel_diff(host_y, ref, w->n);
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
        /* the floor: DIA must at least read its bands */
        const size_t bands = kt_matrix_bytes(stored[1]);
        double read_bps = 0.0;
        if (bench_cuda_read_bandwidth(bands, repeats < 3 ? 3 : repeats, &read_bps, &err) == KT_OK) {
            const double floor_us = (double)bands / read_bps * 1e6;
            printf("  %s, gpu: reading DIA's %.0f MB of bands alone takes %.1f us here (%.0f GB/s, "
                   "back to back); 2x cuSPARSE CSR is the whole product in %.1f us\n",
                   case_name, (double)bands * 1e-6, floor_us, read_bps * 1e-9,
                   seconds[0] / 2.0 * 1e6);
            bench_report_add(r, case_name, "dia", "gpu", "double", 0, "bands_read_us", floor_us,
                             "us");
        } else
            fprintf(stderr, "kettle: %s gpu read rate: %s\n", case_name, err.message);
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

/* Seconds per step of `steps`-step runs of the room at the temporal
 * blocking asked for (depth 1: off; 0: timed, its choice settled first by
 * runs until it is made), median of `repeats`. */
static int room_seconds(kt_cuda_room *room, int depth, int tile, int steps, int repeats,
                        double *per_step, char name[128], kt_error *err)
{
    int rc = kt_cuda_room_set_blocking(room, depth, tile, err);
    for (int k = 0; rc == KT_OK && !kt_cuda_room_blocking(room) && k < 1000; k++)
        rc = kt_cuda_room_run(room, steps, err);
    double t = 0;
    room_work w = {room, steps};
    if (rc == KT_OK)
        rc = time_gpu(room_steps, &w, repeats, 0.25, &t, err);
    *per_step = t / steps;
    snprintf(name, 128, "%s", rc == KT_OK ? kt_cuda_room_blocking(room) : "");
    return rc;
}

/* One row of the GPU room table and its records; returns Mvox/s. */
static double room_row(bench_report *r, const char *grid_name, const char *walls,
                       const kt_room_grid *g, int single, double per_step, double copy_gbps,
                       const char *blocking, const char *how)
{
    const double mvox = (double)g->nx * g->ny * g->nz / per_step / 1e6;
    const double gbps = mvox * 1e6 * (single ? 12.0 : 24.0) / 1e9, frac = gbps / copy_gbps;
    const char *pn = single ? "single" : "double";
    char name[64];
    snprintf(name, sizeof name, "%s%s", walls, how);
    printf("%-18s %-6s %-7s %-9s %9.1f %9.2f %7.0f%%  %s\n", grid_name, pn, "gpu", name, mvox,
           gbps, 100 * frac, blocking);
    fflush(stdout);
    bench_report_add(r, grid_name, name, "gpu", pn, 0, "mvox_per_s", mvox, "Mvox/s");
    bench_report_add(r, grid_name, name, "gpu", pn, 0, "min_traffic_gbps", gbps, "GB/s");
    bench_report_add(r, grid_name, name, "gpu", pn, 0, "fraction_of_copy", frac, "ratio");
    return mvox;
}

int bench_gpu_room_case(bench_report *r, const char *grid_name, const char *walls,
                        const kt_room_params *p, int steps, int repeats, double copy_gbps,
                        int depth, int tile)
{
    kt_cuda_room *room = NULL;
    kt_error err;
    int rc = kt_cuda_room_create(p, &room, &err);
    double one = 0, blocked = 0;
    char name[128];
    if (rc == KT_OK)
        rc = room_seconds(room, 1, 0, steps, repeats, &one, name, &err);
    const int can_block = rc == KT_OK && kt_cuda_room_set_blocking(room, 2, 0, NULL) == KT_OK;
    if (rc == KT_OK && can_block)
        rc = room_seconds(room, depth, tile, steps, repeats, &blocked, name, &err);
    if (rc < 0) {
        fprintf(stderr, "kettle bench room: %s gpu: %s\n", grid_name, err.message);
        kt_cuda_room_free(room);
        return -1;
    }
    const kt_room_grid *g = kt_cuda_room_grid(room);
    const int single = p->precision == KT_SINGLE;
    const double m1 = room_row(r, grid_name, walls, g, single, one, copy_gbps,
                               "one step per pass", "");
    if (can_block) {
        const double mb = room_row(r, grid_name, walls, g, single, blocked, copy_gbps, name,
                                   "+blk");
        printf("%-18s %-6s %-7s temporal blocking x%.2f over one step at a time (%s)\n",
               grid_name, single ? "single" : "double", "gpu", mb / m1, walls);
        bench_report_add(r, grid_name, walls, "gpu", single ? "single" : "double", 0,
                         "blocking_speedup", mb / m1, "x");
    }
    kt_cuda_room_free(room);
    return 0;
}

/* The depth x tile table of one room (kettle bench room --gpu on the
 * largest grid): each candidate fixed, Gvox/s and its ratio to one step at
 * a time, so the timed choice can be checked. */
int bench_gpu_room_blocking(bench_report *r, const char *grid_name, const kt_room_params *p,
                            int steps, int repeats)
{
    kt_cuda_room *room = NULL;
    kt_error err;
    int rc = kt_cuda_room_create(p, &room, &err);
    double one = 0;
    char name[128];
    if (rc == KT_OK)
        rc = room_seconds(room, 1, 0, steps, repeats, &one, name, &err);
    const kt_room_grid *g = rc == KT_OK ? kt_cuda_room_grid(room) : NULL;
    const double points = g ? (double)g->nx * g->ny * g->nz : 0;
    const char *pn = p->precision == KT_SINGLE ? "single" : "double";
    if (rc == KT_OK)
        printf("%s %s, one step per pass: %.1f Gvox/s\n", grid_name, pn, points / one * 1e-9);
    for (int d = 2; rc == KT_OK && d <= 4; d++)
        for (int t = 1; rc == KT_OK && t <= 4; t++) {
            double s = 0;
            rc = room_seconds(room, d, t, steps, repeats, &s, name, &err);
            if (rc < 0)
                break;
            printf("  %-72s %7.1f Gvox/s  x%.2f\n", name,
                   points / s * 1e-9, one / s);
            char name[32];
            snprintf(name, sizeof name, "blk-d%d-t%d", d, t);
            bench_report_add(r, grid_name, name, "gpu", pn, 0, "mvox_per_s", points / s * 1e-6,
                             "Mvox/s");
        }
    if (rc < 0)
        fprintf(stderr, "kettle bench room: %s gpu blocking: %s\n", grid_name, err.message);
    kt_cuda_room_free(room);
    return rc < 0 ? -1 : 0;
}

static int mirror_steps(void *ctx, kt_error *err)
{
    return kt_cuda_mirror_run((kt_cuda_mirror *)ctx, 96, err);
}

/* Seconds per step of `room` mirrored at the blocking asked for (depth 1:
 * one step at a time; 0 timed), once its choice is made; its name into
 * name.  The mirror is freed after. */
static int mirror_seconds_at(kt_room *room, int depth, int tile, int repeats, double *seconds,
                             char name[192], kt_error *err)
{
    kt_cuda_mirror *M = NULL;
    int rc = kt_cuda_mirror_create(room, &M, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_set_blocking(M, depth, tile, err);
    for (int k = 0; rc == KT_OK && !kt_cuda_mirror_blocking(M) && k < 100; k++)
        rc = mirror_steps(M, err);
    if (rc == KT_OK)
        rc = time_gpu(mirror_steps, M, repeats, 0.25, seconds, err);
    *seconds /= 96;
    if (name)
        snprintf(name, 192, "%s", rc == KT_OK ? kt_cuda_mirror_blocking(M) : "");
    kt_cuda_mirror_free(M);
    return rc;
}

int bench_gpu_mirror_seconds(kt_room *room, int repeats, double *seconds, kt_error *err)
{
    /* one step at a time: a box against its shaped room (which cannot be
     * blocked) compares like with like */
    return mirror_seconds_at(room, 1, 0, repeats, seconds, NULL, err);
}

int bench_gpu_drum_rows(bench_report *r, const char *grid_name, int single,
                        bench_room_maker make, void *ctx, int repeats, double copy_gbps,
                        int depth, int tile)
{
    double t[2] = {0, 0};
    char name[2][192] = {"", ""};
    const int depths[2] = {1, depth}, tiles[2] = {0, tile};
    kt_error err;
    int rc = KT_OK;
    kt_room_grid g;
    memset(&g, 0, sizeof g);
    for (int k = 0; k < 2 && rc == KT_OK; k++) {
        kt_room *room = NULL;
        rc = make(ctx, &room, &err);
        if (rc == KT_OK) {
            g = *kt_room_get_grid(room);
            rc = mirror_seconds_at(room, depths[k], tiles[k], repeats, &t[k], name[k], &err);
        }
        kt_room_destroy(room);
    }
    if (rc < 0) {
        fprintf(stderr, "kettle bench room: %s gpu, with drums: %s\n", grid_name, err.message);
        return -1;
    }
    const double m1 = room_row(r, grid_name, "drums", &g, single, t[0], copy_gbps, name[0], "");
    const double mb = room_row(r, grid_name, "drums", &g, single, t[1], copy_gbps, name[1],
                               "+blk");
    printf("%-18s %-6s %-7s with two drums, temporal blocking x%.2f over one step at a time "
           "(%.1f -> %.1f us a step)\n", grid_name, single ? "single" : "double", "gpu",
           mb / m1, 1e6 * t[0], 1e6 * t[1]);
    bench_report_add(r, grid_name, "drums-vs-1step", "gpu", single ? "single" : "double", 0,
                     "blocking_speedup", mb / m1, "x");
    return 0;
}

/* ---- a room over the GPUs of a job (kettle bench room --gpu --ranks N) ---- */

/* Steps per CUDA graph of the mirror in these runs (a multiple of its 6
 * phases): the halo exchange captured with the sweep, as a render runs it. */
#define RANKS_BATCH 6

/* The room (whole, or this rank's slab when ranked) with an impulse at its
 * centre, mirrored on this rank's GPU, its graphs captured. */
static int ranks_room(const kt_room_params *p, int ranked, int axis, kt_room **room,
                      kt_cuda_mirror **M, kt_error *err)
{
    *room = NULL;
    *M = NULL;
    kt_split_options so;
    kt_split_options_default(&so);
    so.axis = (kt_split_axis)axis;
    int rc = ranked ? kt_room_create_split(p, &so, room, err) : kt_room_create(p, room, err);
    const double centre[3] = {p->size_m[0] / 2, p->size_m[1] / 2, p->size_m[2] / 2};
    if (rc == KT_OK)
        rc = kt_room_add_impulse(*room, centre, 0.0, 1e-3, 1.0, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_create(*room, M, err);
    /* one step a pass on one GPU too: a room split over GPUs is not
     * temporally blocked, and timing the blocked pass's candidates inside
     * these short runs had halved the one-GPU rate */
    if (rc == KT_OK && !ranked)
        rc = kt_cuda_mirror_set_blocking(*M, 1, 0, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_set_batch(*M, RANKS_BATCH, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_run(*M, 2 * RANKS_BATCH, err);
    return rc;
}

/* The median over `repeats` runs of `steps` steps of the slowest rank's
 * seconds (ranked: every rank starts together and takes part). */
static int ranks_time(kt_cuda_mirror *M, int ranked, int steps, int repeats, double *seconds,
                      kt_error *err)
{
    double *t = calloc((size_t)repeats, sizeof *t);
    int rc = t ? KT_OK : kt_fail(err, KT_ENOMEM, "out of memory");
    for (int r = 0; r < repeats && rc == KT_OK; r++) {
        if (ranked)
            kt_mpi_barrier();
        double t0 = kt_seconds();
        rc = kt_cuda_mirror_run(M, steps, err);
        t[r] = kt_seconds() - t0;
        if (ranked)
            t[r] = kt_mpi_max(rc < 0 ? INFINITY : t[r]);
        if (rc == KT_OK && !isfinite(t[r]))
            rc = kt_fail(err, KT_EIO, "another GPU rank failed its run");
    }
    if (rc == KT_OK)
        *seconds = kt_median(t, repeats);
    free(t);
    return rc;
}

static void ranks_free(kt_room *room, kt_cuda_mirror *M)
{
    kt_cuda_mirror_free(M);
    kt_room_destroy(room);
}

/* The one-GPU row of a ranks case (rank 0): printed and reported. */
static int ranks_report_one(bench_report *r, const char *grid_name, const kt_room_params *p,
                            int steps, double one_s)
{
    if (kt_mpi_rank() > 0)
        return 0;
    kt_room_grid g;
    kt_room_estimate(p, &g, NULL);
    const double gv1 = (double)g.nx * g.ny * g.nz * steps / one_s / 1e9;
    const char *pn = p->precision == KT_SINGLE ? "single" : "double";
    printf("%-22s %-6s %5d %12.3f %10.2f\n", grid_name, pn, 1, 1e3 * one_s / steps, gv1);
    fflush(stdout);
    bench_report_add(r, grid_name, "lossy-1gpu", "gpu", pn, 0, "gvox_per_s", gv1, "Gvox/s");
    bench_report_add(r, grid_name, "lossy-1gpu", "gpu", pn, 0, "ms_per_step", 1e3 * one_s / steps,
                     "ms");
    return 0;
}

int bench_gpu_ranks_case(bench_report *r, const char *grid_name, const kt_room_params *p,
                         const kt_room_params *p_many, int split_axis, int steps, int repeats)
{
    const int weak = p_many != NULL;
    p_many = weak ? p_many : p;
    const int rank = kt_mpi_rank(), ranks = kt_mpi_size();
    kt_room *room = NULL;
    kt_cuda_mirror *M = NULL;
    kt_error err = {0};
    double one = 0, many = 0;
    int rc = KT_OK;
    if (rank == 0) {                  /* one GPU, the whole grid, while the others wait */
        rc = ranks_room(p, 0, split_axis, &room, &M, &err);
        if (rc == KT_OK)
            rc = ranks_time(M, 0, steps, repeats, &one, &err);
        ranks_free(room, M);
    }
    if (kt_mpi_max(rc < 0) > 0)
        return rank == 0 ? (fprintf(stderr, "kettle bench room: one GPU: %s\n", err.message), -1)
                         : -1;
    if (ranks == 1)   /* nothing to split: the one-GPU row alone */
        return ranks_report_one(r, grid_name, p, steps, one);
    rc = ranks_room(p_many, 1, split_axis, &room, &M, &err);
    const int axis = room ? kt_room_split_axis(room) : 2;
    if (kt_mpi_max(rc < 0) == 0)
        rc = ranks_time(M, 1, steps, repeats, &many, &err);
    else if (rc == KT_OK)
        rc = kt_fail(&err, KT_EIO, "another GPU rank could not make its slab");
    ranks_free(room, M);
    if (rc < 0) {
        fprintf(stderr, "kettle bench room (GPU rank %d): %s\n", rank, err.message);
        return -1;
    }
    if (rank > 0)
        return 0;
    kt_room_grid gn;
    kt_room_estimate(p_many, &gn, NULL);
    const double gvn = (double)gn.nx * gn.ny * gn.nz * steps / many / 1e9;
    /* strong: the same grid, T1 / (N T_N); weak: N times the points, T1 / T_N */
    const double scaling = weak ? one / many : one / (ranks * many);
    const char *pn = p->precision == KT_SINGLE ? "single" : "double";
    char impl[32], grid_n[48];
    snprintf(grid_n, sizeof grid_n, "%dx%dx%d", gn.nx, gn.ny, gn.nz);
    ranks_report_one(r, grid_name, p, steps, one);
    if (weak)
        printf("%-22s %-6s %5d %12.3f %10.2f   weak scaling %.1f %% (T1 / T%d), split along %c\n",
               grid_n, pn, ranks, 1e3 * many / steps, gvn, 100 * scaling, ranks, "xyz"[axis]);
    else
        printf("%-22s %-6s %5d %12.3f %10.2f   speed-up %.2f, scaling %.1f %%, split along %c\n",
               grid_name, pn, ranks, 1e3 * many / steps, gvn, one / many, 100 * scaling,
               "xyz"[axis]);
    fflush(stdout);
    snprintf(impl, sizeof impl, "lossy-%dgpus-%c%s", ranks, "xyz"[axis], weak ? "-weak" : "");
    grid_name = weak ? grid_n : grid_name;
    bench_report_add(r, grid_name, impl, "gpu", pn, 0, "gvox_per_s", gvn, "Gvox/s");
    bench_report_add(r, grid_name, impl, "gpu", pn, 0, "ms_per_step", 1e3 * many / steps, "ms");
    bench_report_add(r, grid_name, impl, "gpu", pn, 0, "scaling_efficiency", scaling, "ratio");
    return 0;
}

/* The side (m) of the largest cube at sr whose slab over `gpus` GPUs takes
 * at most device_bytes on each and whose slabs all take at most host_bytes
 * of the host (each rank keeps its slab there too): bisection on the side
 * with the split plan's own bytes (padding and halos counted). */
static double largest_side(kt_precision prec, double sr, int gpus, double device_bytes,
                           double host_bytes, kt_room_split *fit)
{
    double lo = 0.5, hi = 2000;
    for (int it = 0; it < 60; it++) {
        double mid = 0.5 * (lo + hi);
        kt_room_params p;
        kt_room_params_default(&p);
        p.precision = prec;
        p.sample_rate_hz = sr;
        p.wall_beta = 0.3;
        p.size_m[0] = p.size_m[1] = p.size_m[2] = mid;
        kt_room_split sp;
        int ok = kt_room_split_plan(&p, gpus, NULL, &sp, NULL) == KT_OK &&
                 (double)sp.device_bytes_max <= device_bytes &&
                 (double)sp.host_bytes_max * gpus <= host_bytes;
        if (ok) {
            lo = mid;
            *fit = sp;
        } else {
            hi = mid;
        }
    }
    return lo;
}

int bench_gpu_largest(bench_report *r, double sr, double reserve_bytes)
{
    const int ranks = kt_mpi_size();
    size_t free_bytes = 0;
    kt_error err = {0};
    int rc = kt_cuda_memory(&free_bytes, NULL, &err);
    /* every GPU of the job measured, the least free one binding */
    double least = kt_mpi_min(rc == KT_OK ? (double)free_bytes : 0);
    if (kt_mpi_rank() > 0)
        return least > 0 ? 0 : -1;
    if (!(least > 0)) {
        fprintf(stderr, "kettle bench room: free GPU memory: %s\n",
                rc < 0 ? err.message : "another GPU rank could not say");
        return -1;
    }
    const double host = (double)kt_memory_available_bytes(), usable = least - reserve_bytes;
    printf("\nlargest room at %.0f Hz (a cube, lossy walls): %.2f GiB free on the least free "
           "GPU, %.2f GiB kept back, %.1f GiB of host memory available\n", sr,
           least / 1073741824.0, reserve_bytes / 1073741824.0, host / 1073741824.0);
    printf("%-5s %-6s %10s %10s %14s %12s  %s\n", "GPUs", "prec", "side m", "m^3", "points",
           "B/point", "bound by");
    for (int gpus = 1; gpus <= ranks; gpus++)
        for (int prec = 0; prec < 2; prec++) {
            kt_precision pr = prec ? KT_SINGLE : KT_DOUBLE;
            kt_room_split fit = {0}, gpu_only = {0};
            double side = largest_side(pr, sr, gpus, usable, host, &fit);
            double gpu_side = largest_side(pr, sr, gpus, usable, INFINITY, &gpu_only);
            kt_room_params p;
            kt_room_params_default(&p);
            p.precision = pr;
            p.sample_rate_hz = sr;
            p.size_m[0] = p.size_m[1] = p.size_m[2] = side;
            kt_room_grid g;
            kt_room_estimate(&p, &g, NULL);
            double points = (double)g.nx * g.ny * g.nz, m3 = side * side * side;
            double per_point = (double)fit.device_bytes_max * gpus / points;
            const char *pn = prec ? "single" : "double";
            printf("%-5d %-6s %10.2f %10.0f %14.4g %12.2f  %s\n", gpus, pn, side, m3, points,
                   per_point, side < gpu_side * (1 - 1e-9) ? "host memory" : "GPU memory");
            char impl[32];
            snprintf(impl, sizeof impl, "%dgpus", gpus);
            bench_report_add(r, "largest-room-44k", impl, "gpu", pn, 0, "largest_room_m3", m3,
                             "m^3");
            bench_report_add(r, "largest-room-44k", impl, "gpu", pn, 0, "largest_room_points",
                             points, "points");
        }
    return 0;
}

int bench_gpu_stencil_ctpn(const kt_room_params *p, int kernel, int steps, int repeats,
                           double *ctpn_ps, double *nodes, const char **kernel_name)
{
    kt_cuda_room *room = NULL;
    kt_error err;
    double t = 0;
    int rc = kt_cuda_room_create(p, &room, &err);
    if (rc == KT_OK && kernel != KT_CUDA_KERNEL_AUTO)
        rc = kt_cuda_room_set_kernel(room, (kt_cuda_kernel)kernel, &err);
    if (rc == KT_OK) {
        room_work w = {room, steps};
        rc = time_gpu(room_steps, &w, repeats, 0.1, &t, &err);
    }
    if (rc < 0) {
        fprintf(stderr, "kettle bench stencils: gpu: %s\n", err.message);
        kt_cuda_room_free(room);
        return -1;
    }
    const kt_room_grid *g = kt_cuda_room_grid(room);
    *nodes = (double)g->nx * g->ny * g->nz;
    if (p->scheme == KT_SCHEME_FCC13)
        *nodes /= 2; /* the lattice holds every other node of the cubic grid */
    *ctpn_ps = t / steps / *nodes * 1e12;
    *kernel_name = kt_cuda_room_kernel_name(room);
    kt_cuda_room_free(room);
    return 0;
}

/* ---- the reference drum, whole step on the device ---- */

/* A fresh room mirrored and warmed up (graphs captured, cuSPARSE and cuBLAS
 * ready): the part of a run that is not timed.  Two batches from phase 0
 * leave the room at phase 0 again, so the timed run's batches use the graph
 * captured here (a warm-up that ended at another phase left the timed run
 * to capture and instantiate its graph: a few ms, ~1 us a step of 2880). */
static int mirror_ready(int format, int solver, int batch, kt_room **room, kt_cuda_mirror **M,
                        kt_error *err)
{
    *room = NULL;
    *M = NULL;
    int rc = bench_reference_drum(format, solver, 0, 0, room, NULL, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_create(*room, M, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_set_batch(*M, batch, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_run(*M, batch > 0 ? 2 * batch : 1, err);
    return rc;
}

/* Median seconds of `repeats` runs of `steps` steps, each on a fresh room
 * (so every run hears the strike; the mirror's creation is not timed). */
static int time_mirror(int format, int solver, int batch, int steps, int repeats,
                       double *median, kt_error *err)
{
    double t[64];
    int n = repeats < 1 ? 1 : repeats > 64 ? 64 : repeats;
    for (int k = 0; k < n; k++) {
        kt_room *room = NULL;
        kt_cuda_mirror *M = NULL;
        int rc = mirror_ready(format, solver, batch, &room, &M, err);
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

/* One run of `steps` steps launched kernel by kernel with CUDA events
 * between the stages. */
static int stage_mirror(int format, int solver, int steps, kt_cuda_stage_times *st,
                        kt_error *err)
{
    kt_room *room = NULL;
    kt_cuda_mirror *M = NULL;
    int rc = mirror_ready(format, solver, 0, &room, &M, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_profile(M, 1, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_run(M, steps, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_stage_times(M, st, err);
    kt_cuda_mirror_free(M);
    kt_room_destroy(room);
    return rc;
}

static const char *gpu_impl_name(int format)
{
    switch (format) {
    case KT_TIMPANI_CSR: return "csr-cusparse";
    case KT_TIMPANI_DIA_ELL: return "dia-ell";
    case KT_TIMPANI_CSC: return "csc-as-csr";
    case KT_TIMPANI_MATRIX_FREE: return "matrix-free";
    default: return "air-only";
    }
}

static void add_record(bench_report *r, const char *case_name, const char *impl,
                       const char *metric, double value, const char *unit)
{
    bench_report_add(r, case_name, impl, "gpu", "double", 0, metric, value, unit);
}

/* The row of one path: stage columns from the events run (launch rows of
 * a drum), the whole step, seconds per second of audio, the speed-up over
 * the CPU row of the same format. */
static void drum_row(bench_report *r, const char *case_name, const bench_gpu_drum *d,
                     const char *path, const kt_cuda_stage_times *st, double us)
{
    char impl[32], label[25];
    snprintf(label, sizeof label, "%s%s%s", gpu_impl_name(d->format), d->format >= 0 ? "+" : "",
             d->format >= 0 ? d->solver_name : "");
    snprintf(impl, sizeof impl, "%.24s/%.6s", label, path);
    const double per_second = us * 1e-6 * 44100.0;
    printf("%-26s %-6s ", label, path);
    if (st) {
        printf("%8.1f %8.1f ", st->sweep_us, st->list_us);
        if (st->drum_split)
            printf("%8.1f %8.1f %8.1f ", st->rhs_us, st->solve_us, st->layer_us);
        else
            printf("%8s %8.1f %8s ", "(drum", st->drum_us, "fused)");
        printf("%8.1f ", st->output_us);
    } else
        printf("%8s %8s %8s %8s %8s %8s ", "-", "-", "-", "-", "-", "-");
    printf("%9.1f %9.3f", us, per_second);
    if (d->cpu_us > 0)
        printf(" %7.1fx", d->cpu_us / us);
    printf("\n");
    fflush(stdout);
    add_record(r, case_name, impl, "us_per_step", us, "us");
    add_record(r, case_name, impl, "seconds_per_audio_second", per_second, "s");
    if (d->cpu_us > 0)
        add_record(r, case_name, impl, "speedup_vs_cpu", d->cpu_us / us, "x");
    if (!st)
        return;
    add_record(r, case_name, impl, "us_air_1_5", st->sweep_us, "us");
    add_record(r, case_name, impl, "us_list_2", st->list_us, "us");
    add_record(r, case_name, impl, "us_drum_3_4_6", st->drum_us, "us");
    if (st->drum_split) {
        add_record(r, case_name, impl, "us_rhs_3", st->rhs_us, "us");
        add_record(r, case_name, impl, "us_solve_4", st->solve_us, "us");
        add_record(r, case_name, impl, "us_layer_6", st->layer_us, "us");
    }
    add_record(r, case_name, impl, "us_output_7", st->output_us, "us");
}

/* One implementation: the whole step with one launch per kernel (and the
 * stage times of an events run beside it) and with CUDA graphs. */
static int drum_case(bench_report *r, const char *case_name, const bench_gpu_drum *d, int steps,
                     int repeats)
{
    kt_error err;
    kt_cuda_stage_times st;
    double launch_s = 0, graph_s = 0;
    int rc = d->format >= 0 ? stage_mirror(d->format, d->solver, steps, &st, &err) : KT_OK;
    if (rc == KT_OK && d->format >= 0)
        rc = time_mirror(d->format, d->solver, 0, steps, repeats, &launch_s, &err);
    if (rc == KT_OK)
        rc = time_mirror(d->format, d->solver, 96, steps, repeats, &graph_s, &err);
    if (rc < 0) {
        fprintf(stderr, "kettle bench timpani --gpu: %s: %s\n", gpu_impl_name(d->format),
                err.message);
        return -1;
    }
    if (d->format >= 0)
        drum_row(r, case_name, d, "launch", &st, launch_s / steps * 1e6);
    drum_row(r, case_name, d, "graph", NULL, graph_s / steps * 1e6);
    return 0;
}

int bench_gpu_timpani_case(bench_report *r, const char *case_name, const bench_gpu_drum *drums,
                           int ndrums, int steps, int repeats)
{
    printf("\nGPU, whole step on the device: %d steps, median of %d fresh rooms; stage columns\n"
           "from CUDA events between the stages of one run launched kernel by kernel (us per\n"
           "step; the events add a little); vs cpu: the CPU row of the same format above\n\n",
           steps, repeats);
    printf("%-26s %-6s %8s %8s %8s %8s %8s %8s %9s %9s %8s\n", "gpu", "path", "air 1+5",
           "list 2", "rhs 3", "solve 4", "layer 6", "out 7", "total", "s per 1s", "vs cpu");
    for (int k = 0; k < ndrums; k++)
        if (drum_case(r, case_name, &drums[k], steps, repeats) < 0)
            return -1;
    const bench_gpu_drum air = {-1, 0, "", 0.0};
    return drum_case(r, case_name, &air, steps, repeats);
}

#endif
