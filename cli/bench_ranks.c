/* bench_ranks.c - `kettle bench room --ranks N` (or `mpirun -np N kettle bench
 * room`): the room's step split into slabs over MPI ranks (kt_ranks.h).  Rank
 * 0 first times the whole grid alone, then every rank times its slab; each
 * rank's Mvox/s and the strong-scaling efficiency T1 / (N T_N) against that
 * one-rank run on the same grid.  Without mpirun, --ranks starts mpirun on
 * this program. */
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
} ranks_options;

static void usage(FILE *f)
{
    fprintf(f, "usage: kettle bench room --ranks N [--grid NXxNYxNZ] [--steps S]\n"
               "                         [--threads T] [--single]\n"
               "       mpirun -np N kettle bench room [same options]\n\n"
               "The room split into N slabs of z-planes over MPI ranks: each rank's Mvox/s\n"
               "and the scaling efficiency against one rank on the same grid (default\n"
               "256x296x208, 200 steps, 1 thread per rank, double precision).\n");
}

static int parse(int argc, char **argv, ranks_options *o)
{
    *o = (ranks_options){0, 200, 1, {256, 296, 208}, KT_DOUBLE};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--single"))
            o->precision = KT_SINGLE;
        else if (!strcmp(a, "--ranks") && v && ++i)
            o->ranks = atoi(v);
        else if (!strcmp(a, "--steps") && v && ++i)
            o->steps = atoi(v);
        else if (!strcmp(a, "--threads") && v && ++i)
            o->threads = atoi(v);
        else if (!strcmp(a, "--grid") && v && ++i) {
            if (sscanf(v, "%dx%dx%d", &o->n[0], &o->n[1], &o->n[2]) != 3)
                return -1;
        } else
            return -1;
    }
    return o->steps > 0 && o->threads > 0 && o->n[0] > 2 && o->n[1] > 2 && o->n[2] > 2 ? 0 : -1;
}

int kt_bench_wants_ranks(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--ranks"))
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
    if (rc >= 0 && (rc = kt_room_create_ranked(&p, &room, &err)) >= 0) {
        rc = time_steps(room, o->steps, &tn, &err);
        kt_room_destroy(room);
    }
    if (rc < 0) {
        fprintf(stderr, "kettle bench room (rank %d): %s\n", rank, err.message);
        return KT_EXIT_FAIL;
    }
    int planes[2] = {0, o->n[2]};
    kt_room_slab_plan(&p, ranks, rank, planes, NULL, NULL);
    double slab = points / o->n[2] * (planes[1] - planes[0]), slowest = kt_mpi_max(tn);
    if (rank == 0)
        printf("grid %d x %d x %d, %s, %d steps, %d thread%s per rank\n"
               "1 rank (whole grid): %.1f Mvox/s\n", o->n[0], o->n[1], o->n[2],
               o->precision == KT_SINGLE ? "single" : "double", o->steps, o->threads,
               o->threads == 1 ? "" : "s", points * o->steps / t1 / 1e6);
    for (int r = 0; r < ranks; r++) {
        fflush(stdout);
        kt_mpi_barrier();
        if (r == rank)
            printf("rank %-3d z-planes %d..%d: %.1f Mvox/s\n", rank, planes[0], planes[1] - 1,
                   slab * o->steps / tn / 1e6);
    }
    fflush(stdout);
    kt_mpi_barrier();
    if (rank == 0)
        printf("%d ranks: %.1f Mvox/s in all, speed-up %.2f, scaling efficiency %.0f %%\n",
               ranks, points * o->steps / slowest / 1e6, t1 / slowest,
               100 * t1 / (ranks * slowest));
    return KT_EXIT_OK;
}

int kt_bench_room_ranks(int argc, char **argv)
{
    ranks_options o;
    if (parse(argc, argv, &o) < 0) {
        usage(stderr);
        return KT_EXIT_USAGE;
    }
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
