/* bench_ranks.c - `kettle bench room --ranks N` (or `mpirun -np N kettle bench
 * room`): the room's step split into slabs over MPI ranks (kt_ranks.h).  Rank
 * 0 first times the whole grid alone, then every rank times its slab; each
 * rank's Mvox/s and the strong-scaling efficiency T1 / (N T_N) against that
 * one-rank run on the same grid.  Without mpirun, --ranks starts mpirun on
 * this program.  With --gpu the ranks are GPUs of this host (started as
 * --gpus starts them, or under mpirun): bench/bench_gpu.c times one GPU and
 * the N, in single and double precision, and gives the largest room per GPU
 * count from the GPUs' free memory (--largest: that table alone); --weak:
 * the N GPUs on N times the one GPU's points. */
#include "bench_gpu.h"
#include "bench_report.h"
#include "kt_physics.h"
#include "kt_cli.h"
#include "kt_ranks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct ranks_options {
    int ranks, steps, threads, n[3];
    kt_precision precision;
    int gpu, largest, both;          /* --gpu; --largest; no --single/--double: both */
    int weak;                        /* --weak: N GPUs on N times the grid */
    int split_axis;                  /* --split-axis (a kt_split_axis) */
    double reserve_gib;
    const char *json;
} ranks_options;

static void usage(FILE *f)
{
    fprintf(f, "usage: kettle bench room --ranks N [--grid NXxNYxNZ] [--steps S]\n"
               "                         [--threads T] [--single] [--split-axis A]\n"
               "       kettle bench room --gpu --ranks N [--grid NXxNYxNZ] [--steps S]\n"
               "                         [--single | --double] [--largest | --weak]\n"
               "                         [--reserve GIB] [--json FILE] [--split-axis A]\n"
               "       mpirun -np N kettle bench room [same options]\n\n"
               "The room split into N slabs over MPI ranks, along x, y or z (--split-axis;\n"
               "default auto: the axis of the smallest halo layer): each rank's Mvox/s\n"
               "and the scaling efficiency against one rank on the same grid (default\n"
               "256x296x208, 200 steps, 1 thread per rank, double precision).\n\n"
               "--gpu: over N GPUs of this host (one process each, NCCL, as render --gpus):\n"
               "the 7-point sweep with lossy walls on one GPU, then on N, in double and\n"
               "single precision unless one is named (default grid 1024x1024x960, 1.0e9\n"
               "points, 30 steps a run, median of 3): ms per step, Gvox/s and the strong\n"
               "scaling T1 / (N T_N); then the largest room (m^3 at 44.1 kHz) for 1 .. N GPUs\n"
               "and each precision from the GPUs' free memory less --reserve GiB each\n"
               "(default 2: drums, microphones, NCCL).  --largest: only that table.\n"
               "--weak: weak scaling instead: the N GPUs run a grid N times as long along\n"
               "the axis of the cut (z unless --split-axis names x or y), each GPU the one\n"
               "GPU's points; the efficiency is T1 / T_N.\n");
}

static int parse(int argc, char **argv, ranks_options *o)
{
    *o = (ranks_options){0, 200, 1, {256, 296, 208}, KT_DOUBLE, 0, 0, 1, 0, KT_SPLIT_AUTO, 2.0,
                         NULL};
    int steps_given = 0, grid_given = 0, threads_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--single") || !strcmp(a, "--double")) {
            o->precision = a[2] == 's' ? KT_SINGLE : KT_DOUBLE;
            o->both = 0;
        } else if (!strcmp(a, "--gpu"))
            o->gpu = 1;
        else if (!strcmp(a, "--largest"))
            o->largest = 1;
        else if (!strcmp(a, "--weak"))
            o->weak = 1;
        else if (!strcmp(a, "--reserve") && v && ++i)
            o->reserve_gib = atof(v);
        else if (!strcmp(a, "--json") && v && ++i)
            o->json = v;
        else if (!strcmp(a, "--ranks") && v && ++i)
            o->ranks = atoi(v);
        else if (!strcmp(a, "--split-axis") && v && ++i) {
            kt_split_axis axis;
            if (kt_split_axis_parse(v, &axis) < 0)
                return -1;
            o->split_axis = (int)axis;
        }
        else if (!strcmp(a, "--steps") && v && ++i)
            o->steps = atoi(v), steps_given = 1;
        else if (!strcmp(a, "--threads") && v && ++i)
            o->threads = atoi(v), threads_given = 1;
        else if (!strcmp(a, "--grid") && v && ++i) {
            if (sscanf(v, "%dx%dx%d", &o->n[0], &o->n[1], &o->n[2]) != 3)
                return -1;
            grid_given = 1;
        } else
            return -1;
    }
    if (o->gpu && !steps_given)
        o->steps = 30;              /* ~0.25 s a run on one GPU at 1e9 points in double */
    if (o->gpu && !grid_given)
        memcpy(o->n, (int[3]){1024, 1024, 960}, sizeof o->n);
    if (o->gpu && !threads_given) {   /* the host copies' first touch and the guard's sums */
        o->threads = kt_threads_resolve(0) / (o->ranks > 1 ? o->ranks : 1);
        o->threads = o->threads > 0 ? o->threads : 1;
    }
    return o->steps > 0 && o->threads > 0 && o->n[0] > 2 && o->n[1] > 2 && o->n[2] > 2 &&
                   o->reserve_gib >= 0
               ? 0
               : -1;
}

int kt_bench_wants_ranks(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--ranks") || !strcmp(argv[i], "--largest"))
            return 1;
    return kt_mpi_size() > 1;
}

/* Not under mpirun: run this program under it with the same arguments. */
static int start_mpirun(int argc, char **argv, int ranks)
{
    char np[16], self[4096];
    snprintf(np, sizeof np, "%d", ranks);
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return KT_EXIT_FAIL;
    self[len] = '\0';
    char **args = calloc((size_t)argc + 12, sizeof *args);
    if (!args)
        return KT_EXIT_FAIL;
    int n = 0;
    args[n++] = "mpirun";
    if (geteuid() == 0)
        args[n++] = "--allow-run-as-root";
    args[n++] = "--oversubscribe";
    args[n++] = "-np";
    args[n++] = np;
    args[n++] = self;
    args[n++] = "bench";
    for (int i = 0; i < argc; i++)
        args[n++] = argv[i];
    fflush(NULL);
    execvp("mpirun", args);
    fprintf(stderr, "kettle bench room: cannot start mpirun (Debian: openmpi-bin)\n");
    free(args);
    return KT_EXIT_FAIL;
}

static void grid_params(const ranks_options *o, kt_room_params *p)
{
    kt_room_params_default(p);
    p->precision = o->precision;
    p->nthreads = o->threads;
    p->courant_backoff = KT_SINGLE_COURANT_BACKOFF;
    kt_room_params_fit(p, o->n);
}

/* Seconds for `steps` steps after a short warm-up (an impulse keeps it
 * non-trivial); a room over ranks starts the clock on every rank together. */
static int time_steps(kt_room *room, int steps, double *seconds, kt_error *err)
{
    const kt_room_params *p = kt_room_get_params(room);
    double centre[3] = {p->size_m[0] / 3, p->size_m[1] / 2, p->size_m[2] / 2};
    int rc = kt_room_add_impulse(room, centre, 0.0, 1e-3, 1.0, err);
    if (rc >= 0)
        rc = kt_room_run(room, 8, NULL, NULL, err);
    if (kt_room_ranks(room) > 1)
        kt_mpi_barrier();
    double t0 = kt_seconds();
    if (rc >= 0)
        rc = kt_room_run(room, steps, NULL, NULL, err);
    *seconds = kt_seconds() - t0;
    return rc;
}

static int bench(const ranks_options *o)
{
    int rank = kt_mpi_rank(), ranks = kt_mpi_size();
    kt_room_params p;
    grid_params(o, &p);
    kt_error err = {0};
    double points = (double)o->n[0] * o->n[1] * o->n[2], t1 = 0, tn = 0;
    kt_room *room = NULL;
    int rc = KT_OK;
    if (rank == 0 && (rc = kt_room_create(&p, &room, &err)) >= 0) {
        rc = time_steps(room, o->steps, &t1, &err);
        kt_room_destroy(room);
    }
    kt_mpi_barrier();
    kt_split_options so;
    kt_split_options_default(&so);
    so.axis = (kt_split_axis)o->split_axis;
    int lo[3] = {0, 0, 0}, hi[3] = {o->n[0], o->n[1], o->n[2]}, axis = 2;
    if (rc >= 0 && (rc = kt_room_create_split(&p, &so, &room, &err)) >= 0) {
        axis = kt_room_split_axis(room);
        rc = time_steps(room, o->steps, &tn, &err);
        kt_room_destroy(room);
    }
    if (rc < 0) {
        fprintf(stderr, "kettle bench room (rank %d): %s\n", rank, err.message);
        return KT_EXIT_FAIL;
    }
    kt_room_split_part(&p, ranks, &so, rank, lo, hi, NULL, NULL);
    double slab = points / o->n[axis] * (hi[axis] - lo[axis]), slowest = kt_mpi_max(tn);
    if (rank == 0)
        printf("grid %d x %d x %d, %s, %d steps, %d thread%s per rank\n"
               "1 rank (whole grid): %.1f Mvox/s\n", o->n[0], o->n[1], o->n[2],
               o->precision == KT_SINGLE ? "single" : "double", o->steps, o->threads,
               o->threads == 1 ? "" : "s", points * o->steps / t1 / 1e6);
    for (int r = 0; r < ranks; r++) {
        fflush(stdout);
        kt_mpi_barrier();
        if (r == rank)
            printf("rank %-3d %c %d..%d: %.1f Mvox/s\n", rank, "xyz"[axis], lo[axis],
                   hi[axis] - 1, slab * o->steps / tn / 1e6);
    }
    fflush(stdout);
    kt_mpi_barrier();
    if (rank == 0)
        printf("%d ranks: %.1f Mvox/s in all, speed-up %.2f, scaling efficiency %.0f %%\n",
               ranks, points * o->steps / slowest / 1e6, t1 / slowest,
               100 * t1 / (ranks * slowest));
    return KT_EXIT_OK;
}

/* --gpu: the ranks as --gpus starts them (this program again, once per GPU). */
static int start_gpu_ranks(int argc, char **argv, int ranks)
{
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return KT_EXIT_FAIL;
    args[0] = "kettle";
    args[1] = "bench";
    for (int i = 0; i < argc; i++)
        args[i + 2] = argv[i];
    int status = kt_cli_start_gpu_ranks(argc + 2, args, ranks);
    free(args);
    return status;
}

#if KETTLE_CUDA_ENABLED
/* The axis a weak-scaling run stretches and cuts: the one asked for, else z. */
static int weak_axis(const ranks_options *o)
{
    return o->split_axis == KT_SPLIT_AUTO ? KT_SPLIT_Z : o->split_axis;
}
#endif

/* Every rank of the GPU job (or a lone process: one GPU): the scaling rows,
 * then the largest rooms. */
static int bench_gpus(const ranks_options *o)
{
#if KETTLE_CUDA_ENABLED
    kt_error err = {0};
    if (kt_mpi_size() == 1 && bench_gpu_check("room") != KT_EXIT_OK)
        return KT_EXIT_FAIL;
    if (kt_mpi_size() > 1 && kt_gpu_job_ensure(&err) < 0) {
        fprintf(stderr, "kettle bench room --gpu: %s\n", err.message);
        return KT_EXIT_FAIL;
    }
    int rank = kt_mpi_rank(), status = KT_EXIT_OK;
    bench_report rep;
    bench_report_init(&rep, "room");
    char grid[48];
    snprintf(grid, sizeof grid, "%dx%dx%d", o->n[0], o->n[1], o->n[2]);
    if (rank == 0 && !o->largest)
        printf("GPU ranks %d, grid %s (%.3g points), lossy walls, %d steps a run, median of 3\n"
               "%-22s %-6s %5s %12s %10s\n", kt_mpi_size(), grid,
               (double)o->n[0] * o->n[1] * o->n[2], o->steps, "grid", "prec", "GPUs",
               "ms/step", "Gvox/s");
    for (int prec = 0; prec < 2 && !o->largest; prec++) {
        kt_precision pr = prec ? KT_SINGLE : KT_DOUBLE;
        if (!o->both && pr != o->precision)
            continue;
        kt_room_params p;
        kt_room_params_default(&p);
        p.precision = pr;
        p.wall_beta = 0.3;
        p.nthreads = o->threads;
        kt_room_params_fit(&p, o->n);
        kt_room_params many = p;
        if (o->weak) {   /* stretched along the cut, which is then asked for */
            int n[3] = {o->n[0], o->n[1], o->n[2]};
            n[weak_axis(o)] *= kt_mpi_size();
            kt_room_params_fit(&many, n);
        }
        if (bench_gpu_ranks_case(&rep, grid, &p, o->weak ? &many : NULL,
                                 o->weak ? weak_axis(o) : o->split_axis, o->steps, 3) < 0)
            status = KT_EXIT_FAIL;
    }
    if (status == KT_EXIT_OK && bench_gpu_largest(&rep, 44100.0, o->reserve_gib * 1073741824.0) < 0)
        status = KT_EXIT_FAIL;
    if (rank == 0 && o->json && bench_report_write_json(&rep, o->json) < 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    return status;
#else
    (void)o;
    return KT_EXIT_USAGE;
#endif
}

int kt_bench_room_ranks(int argc, char **argv)
{
    ranks_options o;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return KT_EXIT_OK;
        }
    if (parse(argc, argv, &o) < 0) {
        usage(stderr);
        return KT_EXIT_USAGE;
    }
    if (o.gpu && (!kt_gpu_job_compiled() || !KETTLE_CUDA_ENABLED)) {
        fprintf(stderr, "kettle bench room: --gpu --ranks needs a kettle built with CUDA and "
                        "NCCL\n");
        return KT_EXIT_USAGE;
    }
    if (o.weak && (o.largest || !o.gpu)) {
        fprintf(stderr, "kettle bench room: --weak is the GPUs' scaling rows: add --gpu, leave "
                        "out --largest\n");
        return KT_EXIT_USAGE;
    }
    if (o.largest && !o.gpu) {
        fprintf(stderr, "kettle bench room: --largest is the GPUs' table: add --gpu\n");
        return KT_EXIT_USAGE;
    }
    if (o.gpu && kt_mpi_size() == 1 && o.ranks > 1 && !kt_mpi_launched())
        return start_gpu_ranks(argc, argv, o.ranks);
    if (o.gpu && o.ranks > 0 && o.ranks != kt_mpi_size()) {
        if (kt_mpi_rank() == 0)
            fprintf(stderr, "kettle bench room: --ranks %d but %d ranks started\n", o.ranks,
                    kt_mpi_size());
        return KT_EXIT_USAGE;
    }
    if (o.gpu)
        return bench_gpus(&o);
    if (kt_mpi_size() == 1) {
        if (!kt_mpi_compiled()) {
            fprintf(stderr, "kettle bench room: --ranks needs a kettle built with MPI\n");
            return KT_EXIT_USAGE;
        }
        if (o.ranks > 1 && !kt_mpi_launched())
            return start_mpirun(argc, argv, o.ranks);
    }
    if (o.ranks > 0 && o.ranks != kt_mpi_size()) {
        if (kt_mpi_rank() == 0)
            fprintf(stderr, "kettle bench room: --ranks %d but mpirun started %d\n", o.ranks,
                    kt_mpi_size());
        return KT_EXIT_USAGE;
    }
    return bench(&o);
}
