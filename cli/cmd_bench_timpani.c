/* cmd_bench_timpani.c - `kettle bench timpani`: per-stage cost of one time
 * step of the reference drum (29-inch, 1 m^3 anechoic box, 44.1 kHz, thesis
 * Tables 7.2 and 7.5) for each CPU implementation of the membrane.
 *
 * Stages as in thesis Table 7.5: 1+5 the room's fused sweep, 2 the shell/lid
 * list, 3 the membrane right-hand side, 4 the solve, 6 the layer correction,
 * 7 the microphones; plus the total wall time per step, the seconds one
 * second of audio would take, the speed-up over CSC in the same run, and
 * the process's peak memory.  Timed after a strike, like the thesis.
 * Each figure is the median over --repeats runs of --steps steps.  --gpu
 * adds the same drum per implementation on the device (bench_gpu.c,
 * thesis Tables 7.6 and 7.7). */
#include "bench_gpu.h"
#include "bench_report.h"
#include "kt_cli.h"
#include "kt_linalg.h"
#include "timpani.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define STAGES 7
static const char *const stage_name[STAGES] = {"air_1_5", "list_2",   "rhs_3",  "solve_4",
                                                "layer_6", "output_7", "total"};

typedef struct bench_args {
    int formats[KT_TIMPANI_FORMAT_COUNT], nformats;
    int solver;                     /* -1: auto (Jacobi for stored formats, reduced for matrix-free) */
    int steps;
    int gpu_steps;                  /* steps per GPU run */
    bench_options common;
} bench_args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kettle bench timpani [--format all|csc|csr|dia-ell|matrix-free]\n"
            "                            [--solver auto|jacobi|reduced|direct] [--steps N]\n"
            "                            [--repeats N] [--threads N] [--quick] [--gpu]\n"
            "                            [--gpu-steps N] [--json FILE]\n\n"
            "Per-stage microseconds per step of the thesis' reference drum (29-inch, G2,\n"
            "1 m^3 anechoic box, 44.1 kHz, 10 solver iterations), timed after a strike.\n"
            "--solver auto runs Algorithm 18 (Jacobi) for the stored formats, as the\n"
            "thesis did, and the reduced iteration for matrix-free.  --threads N sets the\n"
            "room's and the membrane's threads (default: all cores; on a busy machine\n"
            "--threads 1 gives steadier figures).  --gpu adds rows for the whole step on\n"
            "the GPU (device \"gpu\": air, list, drum, microphones) per implementation,\n"
            "with the same solver as its CPU row: csr through cuSPARSE and dia-ell through\n"
            "Kettle's DIA/ELL kernels stage by stage, matrix-free as one fused kernel\n"
            "(--solver direct: the split kernels, the GPU's fastest; csc has no GPU form\n"
            "and runs as CSR); each launched kernel by kernel, with the\n"
            "stages timed by CUDA events, and as CUDA graphs; --gpu-steps N steps per run\n"
            "(default 2880, 65 ms of audio).\n");
}

static const char *solver_name(int s)
{
    return s == KT_SOLVE_JACOBI ? "jacobi" : s == KT_SOLVE_REDUCED ? "reduced" : "direct";
}

static int parse_args(int argc, char **argv, bench_args *a)
{
    memset(a, 0, sizeof *a);
    a->solver = -1;
    a->steps = 400;
    a->gpu_steps = 2880;
    a->common.repeats = 5;
    for (int f = 0; f < KT_TIMPANI_FORMAT_COUNT; f++)
        a->formats[a->nformats++] = f;
    for (int i = 1; i < argc; i++) {
        int c = bench_parse_common(argc, argv, &i, &a->common);
        if (c < 0)
            return -1;
        if (c > 0)
            continue;
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(argv[i], "--format") == 0 && next) {
            i++;
            if (strcmp(next, "all") != 0) {
                kt_timpani_format f;
                kt_error err = {0};
                if (kt_timpani_format_parse(next, &f, &err) < 0) {
                    fprintf(stderr, "kettle: %s\n", err.message);
                    return -1;
                }
                a->formats[0] = f;
                a->nformats = 1;
            }
        } else if (strcmp(argv[i], "--solver") == 0 && next) {
            i++;
            if (strcmp(next, "auto") == 0)
                a->solver = -1;
            else if (strcmp(next, "jacobi") == 0)
                a->solver = KT_SOLVE_JACOBI;
            else if (strcmp(next, "reduced") == 0)
                a->solver = KT_SOLVE_REDUCED;
            else if (strcmp(next, "direct") == 0)
                a->solver = KT_SOLVE_DIRECT;
            else {
                fprintf(stderr, "kettle: unknown solver '%s' (auto, jacobi, reduced, direct)\n",
                        next);
                return -1;
            }
        } else if (strcmp(argv[i], "--gpu-steps") == 0 && next) {
            i++;
            a->gpu_steps = atoi(next);
            if (a->gpu_steps <= 0) {
                fprintf(stderr, "kettle: --gpu-steps needs a positive integer, got '%s'\n",
                        next);
                return -1;
            }
        } else if (strcmp(argv[i], "--steps") == 0 && next) {
            i++;
            a->steps = atoi(next);
            if (a->steps <= 0) {
                fprintf(stderr, "kettle: --steps needs a positive integer, got '%s'\n", next);
                return -1;
            }
        } else {
            fprintf(stderr, "kettle: bench timpani: unknown or incomplete option '%s'\n\n",
                    argv[i]);
            usage(stderr);
            return -1;
        }
    }
    if (a->common.quick) {
        a->steps = a->steps > 100 ? 100 : a->steps;
        a->common.repeats = 3;
    }
    return 0;
}

/* The reference room and drum, struck and run past the strike. */
static int setup(kt_timpani_format f, int solver, int threads, kt_room **room_out,
                 kt_timpani **drum_out, kt_error *err)
{
    /* the membrane shares the room's threads */
    int rc = bench_reference_drum((int)f, solver, threads, kt_threads_resolve(threads), room_out,
                                  drum_out, err);
    if (rc == KT_OK)   /* each stage in turn, so that each is timed (kt_room_timing) */
        kt_room_set_overlap(*room_out, KT_OVERLAP_NONE);
    if (rc == KT_OK && (rc = kt_room_run(*room_out, 100, NULL, NULL, err)) < 0)
        kt_room_destroy(*room_out);
    return rc;
}

/* One timed run: microseconds per step of each stage. */
static int time_run(kt_room *room, kt_timpani *drum, int steps, double us[STAGES],
                    kt_error *err)
{
    kt_room_timing r0, r1;
    kt_timpani_timing t0, t1;
    kt_room_get_timing(room, &r0);
    kt_timpani_get_timing(drum, &t0);
    double w0 = kt_seconds();
    int rc = kt_room_run(room, steps, NULL, NULL, err);
    double wall = kt_seconds() - w0;
    if (rc < 0)
        return rc;
    kt_room_get_timing(room, &r1);
    kt_timpani_get_timing(drum, &t1);
    double s = 1e6 / steps;
    us[0] = (r1.bulk_s - r0.bulk_s) * s;
    us[1] = (r1.boundary_s - r0.boundary_s) * s;
    us[2] = (t1.rhs_s - t0.rhs_s) * s;
    us[3] = (t1.solve_s - t0.solve_s) * s;
    us[4] = (t1.correct_s - t0.correct_s) * s;
    us[5] = (r1.output_s - r0.output_s) * s;
    us[6] = wall * s;
    return KT_OK;
}

static double peak_memory_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;   /* Linux reports kilobytes */
}

/* Resident memory now, in MiB (Linux /proc; 0 where unavailable): the
 * process's own baseline (code, and the CUDA libraries where linked). */
static double resident_mib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0.0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static int bench_format(const bench_args *a, int f, double median[STAGES], int *solver_used)
{
    int solver = a->solver >= 0 ? a->solver
                                : (f == KT_TIMPANI_MATRIX_FREE ? KT_SOLVE_REDUCED : KT_SOLVE_JACOBI);
    *solver_used = solver;
    kt_error err = {0};
    kt_room *room = NULL;
    kt_timpani *drum = NULL;
    if (setup((kt_timpani_format)f, solver, a->common.threads, &room, &drum, &err) < 0) {
        fprintf(stderr, "kettle: bench timpani (%s): %s\n",
                kt_timpani_format_name((kt_timpani_format)f), err.message);
        return -1;
    }
    int reps = a->common.repeats;
    double *runs = calloc((size_t)reps * STAGES, sizeof *runs), col[64];
    int rc = 0;
    for (int r = 0; r < reps && rc == 0; r++)
        if (time_run(room, drum, a->steps, runs + (size_t)r * STAGES, &err) < 0) {
            fprintf(stderr, "kettle: bench timpani: %s\n", err.message);
            rc = -1;
        }
    for (int s = 0; s < STAGES && rc == 0; s++) {
        int n = reps < 64 ? reps : 64;
        for (int r = 0; r < n; r++)
            col[r] = runs[(size_t)r * STAGES + s];
        median[s] = kt_median(col, n);
    }
    free(runs);
    kt_room_destroy(room);
    return rc;
}

#if KETTLE_CUDA_ENABLED
/* The GPU rows: each benched format with its CPU row's solver and total;
 * csc runs as CSR on the device, so beside csr it adds nothing. */
static int gpu_rows(const bench_args *a, bench_report *rep, const char *cs, const int *ok,
                    const int *solver, double (*med)[STAGES])
{
    bench_gpu_drum drums[KT_TIMPANI_FORMAT_COUNT];
    int n = 0, have_csr = 0;
    for (int i = 0; i < a->nformats; i++)
        have_csr |= a->formats[i] == KT_TIMPANI_CSR;
    for (int i = 0; i < a->nformats; i++) {
        int f = a->formats[i];
        if (f == KT_TIMPANI_CSC && have_csr) {
            printf("\ncsc: no GPU form (CSparse); the device runs a csc drum as CSR (the csr rows)\n");
            continue;
        }
        drums[n].format = f;
        drums[n].solver = solver[i];
        drums[n].solver_name = solver_name(solver[i]);
        drums[n].cpu_us = ok[i] ? med[i][6] : 0.0;
        n++;
    }
    return bench_gpu_timpani_case(rep, cs, drums, n, a->gpu_steps, a->common.repeats);
}
#endif

int kt_cmd_bench_timpani(int argc, char **argv)
{
    bench_args a;
    int pr = parse_args(argc, argv, &a);
    if (pr != 0)
        return pr > 0 ? KT_EXIT_OK : KT_EXIT_USAGE;
    if (a.common.gpu) {
        int gc = bench_gpu_check("timpani");
        if (gc != KT_EXIT_OK)
            return gc;
    }
    int threads = kt_threads_resolve(a.common.threads);
    const char *cs = "timp29-1m3-44k";
    double med[KT_TIMPANI_FORMAT_COUNT][STAGES], mem[KT_TIMPANI_FORMAT_COUNT];
    int solver[KT_TIMPANI_FORMAT_COUNT], ok[KT_TIMPANI_FORMAT_COUNT] = {0};
    int status = KT_EXIT_OK;
    /* matrix-free first, so that its peak memory is its own (ru_maxrss only
     * grows); the test case's memory is the peak less the process baseline. */
    double baseline_mib = resident_mib();
    for (int i = a.nformats - 1; i >= 0; i--) {
        int f = a.formats[i];
        ok[i] = bench_format(&a, f, med[i], &solver[i]) == 0;
        mem[i] = peak_memory_mib() - baseline_mib;
        if (!ok[i])
            status = KT_EXIT_FAIL;
    }
    double bw = bench_copy_bandwidth((size_t)64 << 20, 5, threads);
    bench_report rep;
    bench_report_init(&rep, "timpani");
    bench_report_add(&rep, cs, "copy", "cpu", "double", threads, "copy_bandwidth", bw / 1e9,
                     "GB/s");
    printf("kettle bench timpani: %s, %d steps x %d repeats after a 50 N strike, %d threads\n"
           "(room and membrane); copy bandwidth %.1f GB/s; microseconds per step (median)\n\n",
           cs, a.steps, a.common.repeats, threads, bw / 1e9);
    printf("%-12s %-8s %8s %8s %8s %8s %8s %8s %9s %9s %8s %8s\n", "format", "solver",
           "air 1+5", "list 2", "rhs 3", "solve 4", "layer 6", "out 7", "total", "s per 1s",
           "vs csc", "MiB");
    double csc_total = 0.0;
    for (int i = 0; i < a.nformats; i++)
        if (ok[i] && a.formats[i] == KT_TIMPANI_CSC)
            csc_total = med[i][6];
    for (int i = 0; i < a.nformats; i++) {
        if (!ok[i])
            continue;
        int f = a.formats[i];
        const double *m = med[i];
        char impl[48];
        snprintf(impl, sizeof impl, "%s+%s", kt_timpani_format_name((kt_timpani_format)f),
                 solver_name(solver[i]));
        double per_second = m[6] * 1e-6 * 44100.0;
        double speedup = csc_total > 0.0 ? csc_total / m[6] : 0.0;
        printf("%-12s %-8s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f %9.2f ",
               kt_timpani_format_name((kt_timpani_format)f), solver_name(solver[i]), m[0], m[1],
               m[2], m[3], m[4], m[5], m[6], per_second);
        if (speedup > 0.0)
            printf("%7.1fx", speedup);
        else
            printf("%8s", "-");
        printf(" %8.1f\n", mem[i]);
        for (int s = 0; s < STAGES; s++) {
            char metric[32];
            snprintf(metric, sizeof metric, "us_%s", stage_name[s]);
            bench_report_add(&rep, cs, impl, "cpu", "double", threads, metric, m[s], "us");
        }
        bench_report_add(&rep, cs, impl, "cpu", "double", threads, "seconds_per_audio_second",
                         per_second, "s");
        if (speedup > 0.0)
            bench_report_add(&rep, cs, impl, "cpu", "double", threads, "speedup_vs_csc", speedup,
                             "x");
        bench_report_add(&rep, cs, impl, "cpu", "double", threads, "peak_memory", mem[i], "MiB");
    }
    printf("\nstages (thesis Table 7.5): 1+5 fused air sweep, 2 shell/lid list, 3 membrane RHS,\n"
           "4 solve, 6 layer correction, 7 microphones.  MiB: the test case's memory, the\n"
           "process peak (ru_maxrss) after that format ran less the %.1f MiB resident before\n"
           "any drum was built (program and libraries); matrix-free runs first, so its\n"
           "figure is its own.\n", baseline_mib);
#if KETTLE_CUDA_ENABLED
    if (a.common.gpu && (bench_gpu_copy_bandwidth(&rep, a.common.repeats) < 0 ||
                  gpu_rows(&a, &rep, cs, ok, solver, med) != 0))
        status = KT_EXIT_FAIL;
#endif
    if (a.common.json_path && bench_report_write_json(&rep, a.common.json_path) != 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    return status;
}
