/* cmd_bench_spmv.c - `kettle bench spmv`: the thesis' Tables 6.4 and 6.5 on
 * this machine.  5-band (offsets -2..2) and 13-band (offsets
 * {-15,-9,-8,-7,-2,-1,0,1,2,7,8,9,15}) matrices from 1k to 1M rows, with one
 * random value per band (fixed seed), timed as CSR, CSC (CSparse's
 * cs_gaxpy), DIA, ELLPACK and matrix-free: the same bands and values as an
 * unrolled constant-coefficient kernel that reads only x and writes only y.
 *
 * Traffic model: an SpMV y = A x moves the format's index and value arrays
 * (kt_matrix_bytes), reads x once and writes y once; matrix-free moves only
 * x and y.  GB/s = that traffic / time, set against the copy bandwidth
 * (read + write) measured in the same run over arrays far larger than the
 * last-level cache. */
#include "bench_gpu.h"
#include "bench_report.h"
#include "kt_cli.h"
#include "kt_linalg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BANDS 13
/* the roofline's arrays: 256 MiB each, 8x a 32 MiB last-level cache */
#define COPY_BYTES ((size_t)256 << 20)
static const int offsets5[5] = {-2, -1, 0, 1, 2};
static const int offsets13[13] = {-15, -9, -8, -7, -2, -1, 0, 1, 2, 7, 8, 9, 15};

/* ---- the matrix-free band operator ---- */

#define BAND_BLOCK 1024

typedef struct band_operator {
    int n, nbands;
    const int *offsets;
    double values[MAX_BANDS];
} band_operator;

/* Rows [r0, r1), every band inside the matrix: NB is a compile-time
 * constant at each call, so the band loop unrolls and the row loop
 * vectorises.  Four partial sums keep the chain of dependent additions
 * short. */
static inline void band_rows_inner(const band_operator *b, const int NB,
                                   const double *restrict x, double *restrict y, int r0, int r1)
{
    const int *off = b->offsets;
    const double *v = b->values;
    for (int i = r0; i < r1; i++) {
        double s[4] = {0.0, 0.0, 0.0, 0.0};
#pragma GCC unroll 16
        for (int d = 0; d < NB; d++)
            s[d & 3] += v[d] * x[i + off[d]];
        y[i] = (s[0] + s[1]) + (s[2] + s[3]);
    }
}

/* Rows near the ends, where some bands fall outside the matrix. */
static void band_rows_checked(const band_operator *b, const double *x, double *y, int r0,
                              int r1)
{
    for (int i = r0; i < r1; i++) {
        double s = 0.0;
        for (int d = 0; d < b->nbands; d++) {
            int j = i + b->offsets[d];
            if (j >= 0 && j < b->n)
                s += b->values[d] * x[j];
        }
        y[i] = s;
    }
}

static void band_apply(const void *ctx, const double *x, double *y, int accumulate,
                       int nthreads)
{
    (void)accumulate; /* the bench times y = A x only */
    const band_operator *b = ctx;
    const int n = b->n, lo = -b->offsets[0], hi = n - b->offsets[b->nbands - 1];
    const int nblocks = (n + BAND_BLOCK - 1) / BAND_BLOCK;
    const int team = n < 20000 ? 1 : kt_threads_resolve(nthreads);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int k = 0; k < nblocks; k++) {
        int r0 = k * BAND_BLOCK, r1 = r0 + BAND_BLOCK < n ? r0 + BAND_BLOCK : n;
        int a = r0 > lo ? r0 : lo, z = r1 < hi ? r1 : hi;
        if (a >= z) {
            band_rows_checked(b, x, y, r0, r1);
            continue;
        }
        band_rows_checked(b, x, y, r0, a);
        if (b->nbands == 5)
            band_rows_inner(b, 5, x, y, a, z);
        else if (b->nbands == 13)
            band_rows_inner(b, 13, x, y, a, z);
        else
            band_rows_checked(b, x, y, a, z);
        band_rows_checked(b, x, y, z, r1);
    }
}

/* ---- the stored matrices ---- */

static uint64_t rng_state;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

/* The band matrix as CSC, with the band values of b. */
static kt_matrix *band_matrix_csc(const band_operator *b, kt_error *err)
{
    kt_matrix *T = NULL, *C = NULL;
    if (kt_matrix_triplet(b->n, b->n, b->n * b->nbands, &T, err) != KT_OK)
        return NULL;
    for (int i = 0; i < b->n; i++)
        for (int d = 0; d < b->nbands; d++) {
            int j = i + b->offsets[d];
            if (j >= 0 && j < b->n && kt_matrix_entry(T, i, j, b->values[d], err) != KT_OK) {
                kt_matrix_free(T);
                return NULL;
            }
        }
    kt_matrix_convert(T, KT_CSC, 0, &C, err);
    kt_matrix_free(T);
    return C;
}

/* ---- timing ---- */

typedef struct impl {
    const char *name;
    kt_operator op;
    size_t traffic_bytes; /* per SpMV, by the traffic model */
    kt_matrix *matrix;    /* owned; NULL for matrix-free */
} impl;

/* Seconds per SpMV: median over `repeats` runs, each timing enough SpMVs to
 * last about `run_s`. */
static void apply_many(const kt_operator *op, const double *x, double *y, int threads,
                       long iters)
{
    for (long k = 0; k < iters; k++)
        kt_operator_apply(op, x, y, 0, threads);
}

/* Seconds per SpMV of each of the `count` operators: the median over
 * `repeats` runs, each timing enough SpMVs to last about `run_s`.  The runs
 * of the operators are interleaved (run 1 of each, then run 2 of each, ...)
 * so that a change in the machine's load falls on all of them alike. */
static void time_interleaved(const kt_operator *ops, int count, const double *x, double *y,
                             int threads, int repeats, double run_s, double *seconds)
{
    long iters[8];
    double *t = malloc((size_t)count * (size_t)repeats * sizeof *t);
    for (int k = 0; k < count; k++) {
        double t0 = kt_seconds();
        apply_many(&ops[k], x, y, threads, 1); /* warm-up and calibration */
        double once = kt_seconds() - t0;
        long n = once > 0 ? (long)(run_s / once) : 1000;
        iters[k] = n < 1 ? 1 : n > 1000000 ? 1000000 : n;
    }
    for (int r = 0; r < repeats && t; r++)
        for (int k = 0; k < count; k++) {
            double t0 = kt_seconds();
            apply_many(&ops[k], x, y, threads, iters[k]);
            t[k * repeats + r] = (kt_seconds() - t0) / (double)iters[k];
        }
    for (int k = 0; k < count; k++)
        seconds[k] = t ? kt_median(t + k * repeats, repeats) : INFINITY;
    free(t);
}

typedef struct bench_case {
    int nbands, nrows;
    char name[32];
} bench_case;

#define NIMPL 5
typedef struct results {
    double seconds[NIMPL][2]; /* [impl][thread setting] */
} results;

static const char *size_label(int n, char *buf, size_t size)
{
    if (n >= 1000000 && n % 1000000 == 0)
        snprintf(buf, size, "%dM", n / 1000000);
    else if (n >= 1000 && n % 1000 == 0)
        snprintf(buf, size, "%dk", n / 1000);
    else
        snprintf(buf, size, "%d", n);
    return buf;
}

/* Build every implementation of one case; 0 on success. */
static int build_impls(const bench_case *c, band_operator *band, impl *im, kt_error *err)
{
    band->n = c->nrows;
    band->nbands = c->nbands;
    band->offsets = c->nbands == 5 ? offsets5 : offsets13;
    rng_state = 0x5eed0000u + (uint64_t)c->nbands; /* same values at every size */
    for (int d = 0; d < c->nbands; d++)
        band->values[d] = uniform() - 0.5;
    memset(im, 0, NIMPL * sizeof *im);
    static const kt_format fmts[4] = {KT_CSR, KT_CSC, KT_DIA, KT_ELL};
    kt_matrix *C = band_matrix_csc(band, err);
    if (!C)
        return -1;
    size_t vectors = 2 * (size_t)c->nrows * sizeof(double);
    for (int f = 0; f < 4; f++)
        if (fmts[f] != KT_CSC && kt_matrix_convert(C, fmts[f], 0, &im[f].matrix, err) != KT_OK) {
            kt_matrix_free(C);
            return -1;
        }
    im[1].matrix = C;
    for (int f = 0; f < 4; f++) {
        im[f].name = kt_format_name(fmts[f]);
        im[f].op = kt_operator_matrix(im[f].matrix);
        im[f].traffic_bytes = kt_matrix_bytes(im[f].matrix) + vectors;
    }
    im[4].name = "matrix-free";
    im[4].op = (kt_operator){c->nrows, c->nrows, band, band_apply};
    im[4].traffic_bytes = vectors;
    return 0;
}

static void free_impls(impl *im)
{
    for (int k = 0; k < NIMPL; k++)
        kt_matrix_free(im[k].matrix);
}

/* The GPU rows of a case (--gpu): cuSPARSE CSR, DIA, ELL and matrix-free on
 * the device, against the fastest CPU time of the case (bench/bench_gpu.c). */
static int gpu_rows(const bench_case *c, const band_operator *band, const impl *im,
                    const double *x, const double *ref, const results *res, int nsettings,
                    int repeats, double gpu_copy_gbps, bench_report *report)
{
#if KETTLE_CUDA_ENABLED
    double best = INFINITY;
    for (int k = 0; k < NIMPL; k++)
        for (int s = 0; s < nsettings; s++)
            best = fmin(best, res->seconds[k][s]);
    return bench_gpu_spmv_case(report, c->name, im[0].matrix, im[2].matrix, im[3].matrix,
                               band->nbands, band->offsets, band->values, x, ref, best, repeats,
                               gpu_copy_gbps);
#else
    (void)c, (void)band, (void)im, (void)x, (void)ref, (void)res, (void)nsettings;
    (void)repeats, (void)gpu_copy_gbps, (void)report;
    return -1;
#endif
}

static int run_case(const bench_case *c, const int *threads, int nsettings, int repeats,
                    double run_s, const double copy_bw[2], double gpu_copy_gbps,
                    bench_report *report, results *res)
{
    band_operator band;
    impl im[NIMPL];
    kt_error err;
    kt_error_clear(&err);
    if (build_impls(c, &band, im, &err) != 0) {
        fprintf(stderr, "kettle: %s: %s\n", c->name, err.message);
        free_impls(im);
        return -1;
    }
    int n = c->nrows;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *ref = malloc((size_t)n * sizeof *ref);
    if (!x || !y || !ref) {
        fprintf(stderr, "kettle: out of memory for %s\n", c->name);
        free(x), free(y), free(ref), free_impls(im);
        return -1;
    }
    rng_state = 0xabcdefu;
    for (int i = 0; i < n; i++)
        x[i] = uniform() - 0.5;
    kt_operator_apply(&im[0].op, x, ref, 0, 1); /* CSR, one thread: the reference */
    int status = 0;
    for (int k = 0; k < NIMPL; k++) {
        kt_operator_apply(&im[k].op, x, y, 0, threads[nsettings - 1]);
        double e = bench_max_rel_diff(y, ref, n);
        if (e > 1e-13) {
            fprintf(stderr, "kettle: %s %s disagrees with CSR by %g\n", c->name, im[k].name, e);
            status = -1;
        }
    }
    double case_copy[2] = {copy_bw[0], copy_bw[nsettings - 1]};
    for (int s = 0; s < nsettings; s++) {
        kt_operator ops[NIMPL];
        double seconds[NIMPL];
        for (int k = 0; k < NIMPL; k++)
            ops[k] = im[k].op;
        /* at 1M rows, where the targets are judged, the roofline again just
         * before the case: on a shared machine the load drifts during a run,
         * and the ratio should compare like with like */
        double copy_now = n >= 1000000 ? bench_copy_bandwidth(COPY_BYTES, repeats, threads[s]) : 0;
        if (copy_now > 0)
            bench_report_add(report, c->name, "copy", "cpu", "double", threads[s],
                             "copy_bandwidth", copy_now * 1e-9, "GB/s");
        else
            copy_now = copy_bw[s];
        case_copy[s] = copy_now;
        time_interleaved(ops, NIMPL, x, y, threads[s], repeats, run_s, seconds);
        for (int k = 0; k < NIMPL; k++)
            res->seconds[k][s] = seconds[k];
        for (int k = 0; k < NIMPL; k++) {
            double t = res->seconds[k][s], gbps = im[k].traffic_bytes / t * 1e-9;
            double vs_csr = res->seconds[0][s] / t, of_copy = gbps / (copy_now * 1e-9);
            printf("%-12s %-12s %7d %14.2f %11.3f %9.2f %9.2fx %9.0f%%%s\n", c->name,
                   im[k].name, threads[s], t * 1e6, t * 44100, gbps, vs_csr, 100.0 * of_copy,
                   k == 1 && threads[s] > 1 ? "  (cs_gaxpy is serial)" : "");
            bench_report_add(report, c->name, im[k].name, "cpu", "double", threads[s],
                             "time_per_spmv", t * 1e6, "us");
            bench_report_add(report, c->name, im[k].name, "cpu", "double", threads[s], "gbps",
                             gbps, "GB/s");
            bench_report_add(report, c->name, im[k].name, "cpu", "double", threads[s],
                             "ratio_to_csr", vs_csr, "x");
            bench_report_add(report, c->name, im[k].name, "cpu", "double", threads[s],
                             "seconds_per_44100", t * 44100, "s");
            bench_report_add(report, c->name, im[k].name, "cpu", "double", threads[s],
                             "fraction_of_copy", of_copy, "ratio");
        }
    }
    /* the targets, judged at 1M rows: the best stored format against the
     * roofline, and matrix-free against every stored format */
    if (n >= 1000000) {
        for (int s = 0; s < nsettings; s++) {
            int best = 0;
            double slowest_ratio = INFINITY;
            for (int k = 0; k < NIMPL - 1; k++) {
                if (res->seconds[k][s] < res->seconds[best][s])
                    best = k;
                slowest_ratio = fmin(slowest_ratio, res->seconds[k][s] / res->seconds[4][s]);
            }
            double frac = im[best].traffic_bytes / res->seconds[best][s] / case_copy[s];
            printf("  %s, %d thread%s: best stored format %s at %.0f%% of copy bandwidth "
                   "(%.1f GB/s, target 60%%): %s; matrix-free %.1fx faster than the fastest "
                   "stored (target 2x): %s\n",
                   c->name, threads[s], threads[s] > 1 ? "s" : "", im[best].name, 100 * frac,
                   case_copy[s] * 1e-9, frac >= 0.6 ? "met" : "MISSED", slowest_ratio,
                   slowest_ratio >= 2.0 ? "met" : "MISSED");
            bench_report_add(report, c->name, im[best].name, "cpu", "double", threads[s],
                             "best_stored_fraction_of_copy", frac, "ratio");
            bench_report_add(report, c->name, "matrix-free", "cpu", "double", threads[s],
                             "speedup_vs_fastest_stored", slowest_ratio, "x");
        }
    }
    if (gpu_copy_gbps > 0 &&
        gpu_rows(c, &band, im, x, ref, res, nsettings, repeats, gpu_copy_gbps, report) != 0)
        status = -1;
    free(x), free(y), free(ref);
    free_impls(im);
    return status;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kettle bench spmv [--quick] [--gpu] [--json FILE] [--threads N]\n"
            "                         [--repeats N]\n\n"
            "Sparse matrix by vector products (thesis Tables 6.4, 6.5): 5- and 13-band\n"
            "matrices, 1k..1M rows, as CSR, CSC (CSparse), DIA, ELLPACK and matrix-free,\n"
            "on one thread and on N threads (default: all cores).  Prints time per SpMV\n"
            "(median of the repeats), GB/s of matrix arrays + x read + y written, the\n"
            "speed-up over CSR and the share of the copy bandwidth measured in the same run.\n"
            "  --quick      10k and 1M rows, fewer and shorter repeats (under 30 s)\n"
            "  --json FILE  also write every figure as JSON records\n"
            "  --threads N  threads for the multi-threaded runs\n"
            "  --repeats N  timed runs per figure (default 5, quick 3)\n"
            "  --gpu        add GPU rows (device \"gpu\"): cuSPARSE CSR, DIA, ELL and\n"
            "               matrix-free kernels, their speed-up over the best CPU figure and\n"
            "               GB/s against the device copy bandwidth measured in the same run\n");
}

int kt_cmd_bench_spmv(int argc, char **argv)
{
    bench_options o = {0};
    for (int i = 1; i < argc; i++) {
        int r = bench_parse_common(argc, argv, &i, &o);
        if (r < 0)
            return KT_EXIT_USAGE;
        if (r == 0)
            return bench_other_option("spmv", argv[i], usage);
    }
    if (o.gpu) {
        int rc = bench_gpu_check("spmv");
        if (rc != KT_EXIT_OK)
            return rc;
    }
    const int full_sizes[] = {1000, 10000, 50000, 100000, 1000000};
    const int quick_sizes[] = {10000, 1000000};
    const int *sizes = o.quick ? quick_sizes : full_sizes;
    int nsizes = o.quick ? 2 : 5;
    int repeats = o.repeats > 0 ? o.repeats : o.quick ? 3 : 5;
    double run_s = o.quick ? 0.03 : 0.1;
    int all = kt_threads_resolve(o.threads);
    int threads[2] = {1, all}, nsettings = all > 1 ? 2 : 1;

    /* the roofline: 256 MiB arrays, 8x a 32 MiB last-level cache */
    const size_t copy_bytes = COPY_BYTES;
    double copy_bw[2];
    for (int s = 0; s < nsettings; s++)
        copy_bw[s] = bench_copy_bandwidth(copy_bytes, repeats, threads[s]);
    if (copy_bw[0] <= 0 || copy_bw[nsettings - 1] <= 0) {
        fprintf(stderr, "kettle: could not measure copy bandwidth (out of memory?)\n");
        return KT_EXIT_FAIL;
    }

    bench_report report;
    bench_report_init(&report, "spmv");
    printf("kettle bench spmv: y = A x, double precision, median of %d runs%s\n", repeats,
           o.quick ? " (quick)" : "");
    printf("traffic model: bytes of the format's index+value arrays + x read + y written "
           "(matrix-free: x + y)\n");
    double load = bench_load_average();
    if (load >= 0) {
        printf("machine load: %.1f runnable on %d cores%s\n", load, kt_threads_resolve(0),
               load > 0.5 * kt_threads_resolve(0)
                   ? " -- busy: the figures (threaded ones most) include contention"
                   : "");
        bench_report_add(&report, "machine", "loadavg", "cpu", "double", 0, "load_average",
                         load, "runnable");
        /* libgomp's threads spin at each barrier by default; against other
         * work that spin steals the core a descheduled sibling needs, and a
         * threaded SpMV then costs a scheduler tick (milliseconds) */
        if (load > 0.5 * kt_threads_resolve(0) && !getenv("OMP_WAIT_POLICY"))
            printf("hint: on a shared machine run with OMP_WAIT_POLICY=passive, or threaded "
                   "figures measure the scheduler\n");
    }
    for (int s = 0; s < nsettings; s++) {
        printf("copy bandwidth (read + write, 2 x %zu MiB arrays), %d thread%s: %.2f GB/s\n",
               copy_bytes >> 20, threads[s], threads[s] > 1 ? "s" : "", copy_bw[s] * 1e-9);
        bench_report_add(&report, "copy-256MiB", "copy", "cpu", "double", threads[s],
                         "copy_bandwidth", copy_bw[s] * 1e-9, "GB/s");
    }
    double gpu_copy = 0;
#if KETTLE_CUDA_ENABLED
    if (o.gpu && (gpu_copy = bench_gpu_copy_bandwidth(&report, repeats)) <= 0) {
        bench_report_free(&report);
        return KT_EXIT_FAIL;
    }
#endif
    printf("\n%-12s %-12s %7s %14s %11s %9s %10s %10s\n", "case", "format", "threads",
           "us per SpMV", "s / 44,100", "GB/s", "vs CSR", "of copy");
    int status = KT_EXIT_OK;
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < nsizes; k++) {
            bench_case c = {b == 0 ? 5 : 13, sizes[k], ""};
            char label[16];
            snprintf(c.name, sizeof c.name, "%dband-%s", c.nbands,
                     size_label(c.nrows, label, sizeof label));
            results res;
            if (run_case(&c, threads, nsettings, repeats, run_s, copy_bw, gpu_copy, &report,
                         &res) != 0)
                status = KT_EXIT_FAIL;
        }
    if (o.json_path && bench_report_write_json(&report, o.json_path) != 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&report);
    return status;
}
