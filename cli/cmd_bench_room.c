/* cmd_bench_room.c - `kettle bench room`: speed of the room's time step in
 * million point updates per second (Mvox/s) on three grids (1 m^3 = 75^3,
 * the thesis' 38 m^3 test of 256 x 296 x 208 nodes, and 250 m^3 of
 * 640 x 400 x 400), single and double precision, one thread and all threads,
 * with rigid walls, lossy walls, viscosity and absorbing (Engquist-Majda)
 * walls.  Beside each figure: the fraction of the copy bandwidth the step
 * reaches when it moves only its minimum traffic (12/24 bytes per update
 * single/double, 16/32 with viscosity: one read of Psi^n, one read and one
 * write of Psi^{n-1}, plus one read of the third grid), each run against a
 * copy with the same threads timed just before it.  Each figure is the
 * median over --repeats runs.  Rigid and lossy walls again with temporal
 * blocking (several steps per pass, kt_room_set_blocking), each against one
 * step at a time in runs taken in turn: the same minimum traffic per update,
 * so their fraction of the copy may pass 100 %.  On the grids at least 2 m
 * tall, lossy walls again with two drums struck in the room, one step at a
 * time against the blocked passes handed over around the drums' planes
 * (their Mvox/s count the air's nodes, the drums' work included). */
#include "bench_gpu.h"
#include "bench_report.h"
#include "kettle.h"
#include "kt_cli.h"
#include "kt_physics.h"
#include "timpani.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct grid_case {
    const char *name;
    int n[3];
} grid_case;

static const grid_case grid_cases[] = {
    {"1m3-75^3", {75, 75, 75}},
    {"38m3-256x296x208", {256, 296, 208}},
    {"250m3-640x400x400", {640, 400, 400}},
};

typedef struct wall_case {
    const char *name;
    double beta, viscosity_m;
    kt_wall_model model;
} wall_case;

/* The GPU rows take the first three. */
static const wall_case wall_cases[] = {
    {"rigid", 0.0, 0.0, KT_WALL_LOSSY},
    {"lossy", 0.3, 0.0, KT_WALL_LOSSY},
    {"viscous", 0.3, 8e-8, KT_WALL_LOSSY},
    {"absorb", 0.0, 0.0, KT_WALL_ENGQUIST_MAJDA},
};
#define WALL_CASES 4

/* The grid whose name is `name` up to its '-' ("38m3"), or -1. */
static int grid_named(const char *name)
{
    size_t len = strlen(name);
    for (int g = 0; g < (int)(sizeof grid_cases / sizeof grid_cases[0]); g++)
        if (strncmp(grid_cases[g].name, name, len) == 0 && grid_cases[g].name[len] == '-')
            return g;
    return -1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kettle bench room [--quick] [--grid NAME] [--block D[:T]] [--gpu]\n"
            "                         [--gpu-only]\n"
            "                         [--json FILE] [--threads N] [--repeats N]\n"
            "                         [--shape FILE [--sr HZ]]\n\n"
            "Mvox/s (million point updates per second) of the room's fused step on 75^3,\n"
            "256x296x208 and 640x400x400 grids, single and double precision, one thread and\n"
            "all threads, rigid walls, lossy walls (beta 0.3), viscosity and absorbing\n"
            "(Engquist-Majda) walls, as a fraction of the copy bandwidth (a copy timed\n"
            "before each run), with the plan each room's sweep chose over its first steps;\n"
            "rigid and lossy walls also temporally blocked (several steps per pass through\n"
            "memory), against one step at a time in the same run; on the grids at least 2 m\n"
            "tall lossy walls with two drums struck (drums, drums+blk: the blocked passes\n"
            "step the drums' planes one step at a time).\n"
            "--quick: the two smaller grids, fewer steps.\n"
            "  --grid NAME  only that grid: 1m3, 38m3 or 250m3 (the GPU's table of depths\n"
            "          and tiles is on 250m3 whatever the grid)\n"
            "  --block D[:T]  the blocked rows at depth D (2..8), tiles of T rows (default:\n"
            "          both timed over each room's first passes); on the GPU depth 2..4 and\n"
            "          T 1..4 the extended tile (kt_cuda_room_set_blocking)\n"
            "  --gpu   add GPU rows (device \"gpu\"): the bulk update on the device on all three\n"
            "          grids, against the device copy bandwidth measured in the same run, one\n"
            "          step per pass and temporally blocked side by side (with the two\n"
            "          drums too on the grids at least 2 m tall), and a table of every\n"
            "          depth and tile of the blocked pass on the largest grid\n"
            "  --gpu-only  the GPU rows alone\n"
            "  --ranks N  the room split over N MPI ranks, or with --gpu over N GPUs: strong\n"
            "          scaling and the largest room per GPU count (--largest: that table\n"
            "          alone; kettle bench room --ranks N --help)\n"
            "  --shape FILE  a room with solids (an orchestra with `solid`/`hole`, or a closed\n"
            "          mesh as `room = \"FILE\"`) against the box that holds it, CPU (and with\n"
            "          --gpu GPU) rows: the air's Mvox/s over the box's (--sr HZ: another rate)\n");
}

/* Room parameters that give exactly n[0] x n[1] x n[2] nodes: the sizes sit
 * half a cell past the last node, so the floor() of the grid rule is safe. */
static void exact_params(kt_room_params *p, const int n[3], kt_precision prec, const wall_case *w,
                         int threads)
{
    kt_room_params_default(p);
    p->precision = prec;
    p->wall_beta = w->beta;
    p->viscosity_m = w->viscosity_m;
    p->wall_model = w->model;
    p->nthreads = threads;
    kt_room_params_fit(p, n);
}

/* The copy that every fraction is measured against: memcpy of per-thread
 * chunks of a buffer far larger than the caches, bytes read + written. */
typedef struct copy_probe {
    char *a, *b;
    size_t bytes;
} copy_probe;

static int copy_probe_open(copy_probe *c)
{
    c->bytes = (size_t)512 << 20;
    c->a = malloc(c->bytes);
    c->b = malloc(c->bytes);
    if (!c->a || !c->b) {
        free(c->a);
        free(c->b);
        return -1;
    }
    memset(c->a, 1, c->bytes);
    memset(c->b, 0, c->bytes);
    return 0;
}

static void copy_probe_close(copy_probe *c)
{
    free(c->a);
    free(c->b);
}

/* GB/s of one copy with `threads` threads. */
static double copy_probe_gbps(copy_probe *c, int threads)
{
    double t0 = kt_seconds();
#pragma omp parallel num_threads(threads)
    {
        int id = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t lo = c->bytes / (size_t)nt * (size_t)id;
        size_t hi = id == nt - 1 ? c->bytes : c->bytes / (size_t)nt * (size_t)(id + 1);
        memcpy(c->b + lo, c->a + lo, hi - lo);
    }
    return 2.0 * (double)c->bytes / (kt_seconds() - t0) / 1e9;
}

/* Median GB/s of `repeats` copies. */
static double copy_bandwidth(copy_probe *c, int threads, int repeats)
{
    double *g = malloc(sizeof *g * (size_t)repeats);
    if (!g)
        return NAN;
    for (int r = 0; r < repeats; r++)
        g[r] = copy_probe_gbps(c, threads);
    double gbps = kt_median(g, repeats);
    free(g);
    return gbps;
}

/* Temporal blocking of a room: off (depth 1), or the depth and tile asked
 * for (0: timed); drums: a 29 and a 26 inch drum in the room, struck. */
typedef struct block_ask {
    int depth, tile;
    int drums;
} block_ask;

/* Two drums side by side, rims 0.75 m up, struck at once (a room at least
 * 2 m tall: their planes a third of it or less). */
static int add_drums(kt_room *room, const kt_room_params *p, kt_error *err)
{
    static const struct { int inches; double x, y; } set[2] = {{29, 0.3, 0.4},
                                                               {26, 0.65, 0.45}};
    for (int k = 0; k < 2; k++) {
        kt_timpani_params tp;
        kt_timpani *t = NULL;
        int rc = kt_timpani_params_standard(&tp, set[k].inches, err);
        if (rc < 0)
            return rc;
        tp.rim_centre_m[0] = set[k].x * p->size_m[0];
        tp.rim_centre_m[1] = set[k].y * p->size_m[1];
        tp.rim_centre_m[2] = 0.75;
        if ((rc = createTimpani(room, &tp, &t, err)) < 0 ||
            (rc = kt_timpani_strike(t, 0, 60.0, 1e-3, 0.2, 0.05, err)) < 0)
            return rc;
    }
    return KT_OK;
}

/* A room of the case's grid with an impulse in it, stepped until its sweep
 * has settled on a plan (kt_room_sweep_plan; at least once: warm-up) and,
 * blocked, on its depth and tile (kt_room_blocking). */
static int open_room(const kt_room_params *p, const int n[3], block_ask block, kt_room **out,
                     double *points, kt_error *err)
{
    int rc = kt_room_create(p, out, err);
    if (rc >= 0)
        rc = kt_room_set_blocking(*out, block.depth, block.tile, err);
    if (rc < 0) {
        kt_room_destroy(*out);
        *out = NULL;
        return rc;
    }
    const kt_room_grid *g = kt_room_get_grid(*out);
    *points = (double)g->nx * g->ny * g->nz;
    if (g->nx != n[0] || g->ny != n[1] || g->nz != n[2])
        fprintf(stderr, "kettle bench room: asked for %d x %d x %d nodes, got %d x %d x %d\n",
                n[0], n[1], n[2], g->nx, g->ny, g->nz);
    const double src[3] = {0.37 * p->size_m[0], 0.41 * p->size_m[1], 0.43 * p->size_m[2]};
    rc = kt_room_add_impulse(*out, src, 0, 1e-3, 1.0, err);
    if (rc >= 0 && block.drums)
        rc = add_drums(*out, p, err);
    do {
        if (rc >= 0)
            rc = kt_room_step(*out, err);
    } while (rc >= 0 && !kt_room_sweep_plan(*out));
    while (rc >= 0 && !kt_room_blocking(*out))
        rc = kt_room_run(*out, 16, NULL, NULL, err);
    if (rc < 0) {
        kt_room_destroy(*out);
        *out = NULL;
    }
    return rc;
}

static int timed_steps(kt_room *room, int steps, double *seconds, kt_error *err)
{
    double t0 = kt_seconds();
    int rc = kt_room_run(room, steps, NULL, NULL, err);
    *seconds = kt_seconds() - t0;
    return rc;
}

/* What measure() finds for one wall case. */
typedef struct case_figures {
    double mvox;      /* median Mvox/s */
    double ratio;     /* median over runs of time(case) / time(case before); 1 for the first */
    double fraction;  /* median over runs of the minimum traffic's GB/s over the copy's */
    const char *plan; /* the sweep's plan (kt_room_sweep_plan) */
    char blocking[96]; /* kt_room_blocking */
} case_figures;

/* `repeats` runs of `steps` steps for each of `count` rooms (wall cases),
 * their runs interleaved (copy, a, b, copy, a, b, ...) so that other work on
 * the machine weighs on each alike: each run's fraction is taken against the
 * copy measured just before it, which on a shared host moves by 1.5x within
 * a minute.  bytes[w]: case w's minimum traffic per update. */
static int measure(const kt_room_params *p, const double *bytes, const block_ask *block,
                   int count, const int n[3], int steps, int repeats, copy_probe *copy,
                   case_figures *out, kt_error *err)
{
    kt_room *room[3] = {NULL, NULL, NULL};
    double points = 0, *t = calloc((size_t)repeats * 5, sizeof *t);
    double *g = t + 3 * repeats, *q = g + repeats;
    int rc = t ? KT_OK : kt_fail(err, KT_ENOMEM, "out of memory");
    for (int w = 0; w < count && rc >= 0; w++)
        rc = open_room(&p[w], n, block[w], &room[w], &points, err);
    for (int r = 0; r < repeats && rc >= 0; r++) {
        g[r] = copy_probe_gbps(copy, p[0].nthreads);
        for (int w = 0; w < count && rc >= 0; w++)
            rc = timed_steps(room[w], steps, &t[w * repeats + r], err);
    }
    for (int w = 0; w < count && rc >= 0; w++) {
        for (int r = 0; r < repeats; r++)
            q[r] = t[w * repeats + r] / t[(w > 0 ? w - 1 : 0) * repeats + r];
        out[w].ratio = kt_median(q, repeats);
        for (int r = 0; r < repeats; r++)
            q[r] = points * steps / t[w * repeats + r] * bytes[w] / 1e9 / g[r];
        out[w].fraction = kt_median(q, repeats);
        out[w].mvox = points * steps / kt_median(t + w * repeats, repeats) / 1e6;
        out[w].plan = kt_room_sweep_plan(room[w]);
        snprintf(out[w].blocking, sizeof out[w].blocking, "%s", kt_room_blocking(room[w]));
    }
    for (int w = 0; w < count; w++)
        kt_room_destroy(room[w]);
    free(t);
    return rc;
}

#if KETTLE_CUDA_ENABLED
/* A room of lossy walls with an impulse and the two drums (bench_room_maker). */
static int drum_room(void *ctx, kt_room **room, kt_error *err)
{
    const kt_room_params *p = ctx;
    int rc = kt_room_create(p, room, err);
    const double src[3] = {0.37 * p->size_m[0], 0.41 * p->size_m[1], 0.43 * p->size_m[2]};
    if (rc >= 0)
        rc = kt_room_add_impulse(*room, src, 0, 1e-3, 1.0, err);
    if (rc >= 0)
        rc = add_drums(*room, p, err);
    return rc < 0 ? rc : KT_OK;
}
#endif

/* The GPU rows (--gpu, bench/bench_gpu.c): every grid, both precisions, every
 * wall case, whatever --quick says (the device runs them in seconds); on the
 * grids at least 2 m tall, lossy walls with the two drums, one step at a time
 * and blocked around their planes. */
static int gpu_rows(bench_report *rep, int repeats, block_ask blk, int only)
{
#if KETTLE_CUDA_ENABLED
    double copy = bench_gpu_copy_bandwidth(rep, repeats);
    if (copy <= 0)
        return -1;
    int status = 0;
    const int last = (int)(sizeof grid_cases / sizeof grid_cases[0]) - 1;
    printf("\n%-18s %-6s %-7s %-9s %9s %9s %8s  %s\n", "grid", "prec", "device", "walls",
           "Mvox/s", "GB/s", "of copy", "temporal blocking");
    /* 24 steps a run: whole passes at depth 2, 3 or 4 */
    for (int gi = 0; gi <= last; gi++)
        for (int prec = 0; prec < 2 && (only < 0 || gi == only); prec++)
            for (int w = 0; w < 3; w++) {
                kt_room_params p;
                exact_params(&p, grid_cases[gi].n, prec ? KT_SINGLE : KT_DOUBLE,
                             &wall_cases[w], 1);
                if (bench_gpu_room_case(rep, grid_cases[gi].name, wall_cases[w].name, &p, 24,
                                        repeats, copy, blk.depth <= 4 ? blk.depth : 4,
                                        blk.tile <= 4 ? blk.tile : 0) != 0)
                    status = -1;
                if (w == 1 && p.size_m[2] >= 2.0 &&
                    bench_gpu_drum_rows(rep, grid_cases[gi].name, prec, drum_room, &p, repeats,
                                        copy, blk.depth <= 4 ? blk.depth : 4,
                                        blk.tile <= 4 ? blk.tile : 0) != 0)
                    status = -1;
            }
    printf("\nThe blocked pass's depths and tiles on %s, lossy walls:\n",
           grid_cases[last].name);
    for (int prec = 0; prec < 2; prec++) {
        kt_room_params p;
        exact_params(&p, grid_cases[last].n, prec ? KT_SINGLE : KT_DOUBLE, &wall_cases[1], 1);
        if (bench_gpu_room_blocking(rep, grid_cases[last].name, &p, 24, repeats) != 0)
            status = -1;
    }
    return status;
#else
    (void)rep, (void)repeats, (void)blk, (void)only;
    return -1;
#endif
}

static int steps_for(const int n[3], int quick)
{
    double points = (double)n[0] * n[1] * n[2];
    double target = quick ? 4e7 : 4e8; /* point updates per timed run */
    int s = (int)(target / points);
    return s < 2 ? 2 : s > 400 ? 400 : s;
}

/* One row of the table and its JSON records. */
static void print_row(bench_report *rep, const grid_case *gc, const char *pn, int threads,
                      const char *walls, const case_figures *f, double bytes, const char *plan)
{
    double gbps = f->mvox * 1e6 * bytes / 1e9;
    printf("%-18s %-6s %-7d %-9s %9.1f %9.2f %7.0f%%  %s\n", gc->name, pn, threads, walls,
           f->mvox, gbps, 100 * f->fraction, plan);
    bench_report_add(rep, gc->name, walls, "cpu", pn, threads, "mvox_per_s", f->mvox, "Mvox/s");
    bench_report_add(rep, gc->name, walls, "cpu", pn, threads, "min_traffic_gbps", gbps, "GB/s");
    bench_report_add(rep, gc->name, walls, "cpu", pn, threads, "fraction_of_copy", f->fraction,
                     "ratio");
}

/* Wall case `wall` (with the two drums or not) one step at a time against
 * the blocking asked for, in runs taken in turn: f[0] and f[1], at the
 * one-step traffic of *bytes an update. */
static int paired_blocking(const grid_case *gc, kt_precision pr, int threads, copy_probe *copy,
                           const bench_options *o, int wall, block_ask blk, int drums,
                           case_figures f[2], double *bytes)
{
    const block_ask asks[2] = {{1, 0, drums}, {blk.depth, blk.tile, drums}};
    *bytes = pr == KT_SINGLE ? 12.0 : 24.0;
    const double both[2] = {*bytes, *bytes};
    /* whole passes of the deepest depth a few times over */
    int steps = steps_for(gc->n, o->quick);
    steps = steps < 24 ? 24 : steps;
    kt_room_params p[2];
    kt_error err = {0};
    exact_params(&p[0], gc->n, pr, &wall_cases[wall], threads);
    p[1] = p[0];
    if (measure(p, both, asks, 2, gc->n, steps, o->repeats, copy, f, &err) < 0) {
        fprintf(stderr, "kettle bench room: %s %s: %s\n", gc->name,
                drums ? "with drums" : "blocked", err.message);
        return -1;
    }
    return 0;
}

/* Rigid and lossy walls blocked, each against one step at a time: rows
 * "rigid+blk", "lossy+blk" and the speed-up. */
static int blocked_rows(bench_report *rep, const grid_case *gc, kt_precision pr, int threads,
                        copy_probe *copy, const bench_options *o, block_ask blk)
{
    const char *pn = pr == KT_SINGLE ? "single" : "double";
    double speedup[2];
    for (int w = 0; w < 2; w++) {
        case_figures f[2];
        double bytes;
        if (paired_blocking(gc, pr, threads, copy, o, w, blk, 0, f, &bytes) < 0)
            return -1;
        char walls[16];
        snprintf(walls, sizeof walls, "%s+blk", wall_cases[w].name);
        print_row(rep, gc, pn, threads, walls, &f[1], bytes, f[1].blocking);
        speedup[w] = 1 / f[1].ratio;
        snprintf(walls, sizeof walls, "%s-vs-1step", wall_cases[w].name);
        bench_report_add(rep, gc->name, walls, "cpu", pn, threads, "blocking_speedup",
                         speedup[w], "ratio");
        bench_report_add(rep, gc->name, walls, "cpu", pn, threads, "unblocked_mvox_per_s",
                         f[0].mvox, "Mvox/s");
    }
    printf("%-18s %-6s %-7d temporal blocking x%.2f rigid, x%.2f lossy over one step at a "
           "time (median of paired runs)\n", gc->name, pn, threads, speedup[0], speedup[1]);
    return 0;
}

/* Lossy walls and two drums, one step at a time against the blocked passes
 * handed over around the drums: rows "drums" and "drums+blk", the speed-up. */
static int drum_rows(bench_report *rep, const grid_case *gc, kt_precision pr, int threads,
                     copy_probe *copy, const bench_options *o, block_ask blk)
{
    const char *pn = pr == KT_SINGLE ? "single" : "double";
    case_figures f[2];
    double bytes;
    if (paired_blocking(gc, pr, threads, copy, o, 1, blk, 1, f, &bytes) < 0)
        return -1;
    print_row(rep, gc, pn, threads, "drums", &f[0], bytes, f[0].plan);
    print_row(rep, gc, pn, threads, "drums+blk", &f[1], bytes, f[1].blocking);
    printf("%-18s %-6s %-7d with two drums, temporal blocking x%.2f over one step at a time "
           "(median of paired runs)\n", gc->name, pn, threads, 1 / f[1].ratio);
    bench_report_add(rep, gc->name, "drums-vs-1step", "cpu", pn, threads, "blocking_speedup",
                     1 / f[1].ratio, "ratio");
    return 0;
}

/* The wall cases of one grid, precision and thread count: rigid, lossy and
 * absorbing measured interleaved (lossy against rigid and absorbing against
 * lossy pairwise), viscous alone; then rigid and lossy blocked. */
static int grid_rows(bench_report *rep, const grid_case *gc, kt_precision pr, int threads,
                     copy_probe *copy, const bench_options *o, block_ask blk)
{
    kt_room_params p[WALL_CASES];
    double bytes[WALL_CASES];
    for (int w = 0; w < WALL_CASES; w++) {
        exact_params(&p[w], gc->n, pr, &wall_cases[w], threads);
        const double viscous = wall_cases[w].viscosity_m > 0 ? 4.0 / 3.0 : 1.0;
        bytes[w] = (pr == KT_SINGLE ? 12.0 : 24.0) * viscous;
    }
    kt_room_params trio[3] = {p[0], p[1], p[3]};
    const double trio_bytes[3] = {bytes[0], bytes[1], bytes[3]};
    const block_ask off[3] = {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}};
    case_figures f[WALL_CASES], f3[3];
    kt_error err = {0};
    int steps = steps_for(gc->n, o->quick);
    int rc = measure(trio, trio_bytes, off, 3, gc->n, steps, o->repeats, copy, f3, &err);
    f[0] = f3[0], f[1] = f3[1], f[3] = f3[2];
    if (rc >= 0)
        rc = measure(p + 2, bytes + 2, off, 1, gc->n, steps, o->repeats, copy, f + 2, &err);
    if (rc < 0) {
        fprintf(stderr, "kettle bench room: %s: %s\n", gc->name, err.message);
        return rc;
    }
    const char *pn = pr == KT_SINGLE ? "single" : "double";
    for (int w = 0; w < WALL_CASES; w++)
        print_row(rep, gc, pn, threads, wall_cases[w].name, &f[w], bytes[w], f[w].plan);
    /* What lossy walls cost over rigid ones (target: at most 5 %), pairwise. */
    double cost = f[1].ratio - 1;
    printf("%-18s %-6s %-7d lossy walls cost %+.1f %% over rigid (median of paired runs)\n",
           gc->name, pn, threads, 100 * cost);
    bench_report_add(rep, gc->name, "lossy-vs-rigid", "cpu", pn, threads, "lossy_cost", cost,
                     "ratio");
    /* What the absorbing walls' face, edge and corner updates cost over lossy walls. */
    double absorb = f[3].ratio - 1;
    printf("%-18s %-6s %-7d absorbing walls cost %+.1f %% over lossy (median of paired runs)\n",
           gc->name, pn, threads, 100 * absorb);
    bench_report_add(rep, gc->name, "absorbing-vs-lossy", "cpu", pn, threads, "absorbing_cost",
                     absorb, "ratio");
    rc = blocked_rows(rep, gc, pr, threads, copy, o, blk);
    if (rc >= 0 && p[0].size_m[2] >= 2.0)
        rc = drum_rows(rep, gc, pr, threads, copy, o, blk);
    fflush(stdout);
    return rc < 0 ? rc : KT_OK;
}

int kt_cmd_bench_room(int argc, char **argv)
{
    bench_options o = {.repeats = 3};
    int only = -1; /* --grid: one grid's index */
    int gpu_only = 0; /* --gpu-only: no CPU rows */
    block_ask blk = {0, 0, 0}; /* --block: the blocked rows' depth and tile (0: timed) */
    const char *shape = NULL;   /* --shape: an orchestra with solids, or a mesh */
    double sr_hz = 0;
    if (kt_bench_wants_ranks(argc, argv))
        return kt_bench_room_ranks(argc, argv);
    for (int i = 1; i < argc; i++) {
        int c = bench_parse_common(argc, argv, &i, &o);
        if (c < 0)
            return KT_EXIT_USAGE;
        if (c > 0)
            continue;
        if (strcmp(argv[i], "--grid") == 0) {
            const char *name = i + 1 < argc ? argv[++i] : "";
            only = grid_named(name);
            if (only < 0) {
                fprintf(stderr, "kettle bench room: --grid takes 1m3, 38m3 or 250m3, not '%s'\n",
                        name);
                return KT_EXIT_USAGE;
            }
            continue;
        }
        if (strcmp(argv[i], "--gpu-only") == 0) {
            o.gpu = gpu_only = 1;
            continue;
        }
        if (strcmp(argv[i], "--block") == 0) {
            const char *arg = i + 1 < argc ? argv[++i] : "";
            char *end;
            long d = strtol(arg, &end, 10), t = 0;
            if (*end == ':')
                t = strtol(end + 1, &end, 10);
            if (end == arg || *end || d < 2 || d > 8 || t < 0) {
                fprintf(stderr, "kettle bench room: --block takes a depth 2..8 and optionally "
                                ":rows per tile (3, 4:64), not '%s'\n", arg);
                return KT_EXIT_USAGE;
            }
            blk.depth = (int)d;
            blk.tile = (int)t;
            continue;
        }
        if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
            shape = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--sr") == 0) {
            char *end = NULL;
            sr_hz = i + 1 < argc ? strtod(argv[++i], &end) : 0;
            if (!end || *end || sr_hz <= 0) {
                fprintf(stderr, "kettle bench room: --sr takes a sample rate in Hz\n");
                return KT_EXIT_USAGE;
            }
            continue;
        }
        return bench_other_option("room", argv[i], usage);
    }
    if (o.gpu) {
        int rc = bench_gpu_check("room");
        if (rc != KT_EXIT_OK)
            return rc;
    }
    if (shape)
        return kt_bench_room_shape(shape, sr_hz, &o);
    int all = kt_threads_resolve(o.threads), ngrids = o.quick && only < 0 ? 2 : 3;
    int thread_counts[2] = {1, all}, nthread_counts = all > 1 ? 2 : 1;
    bench_report rep;
    bench_report_init(&rep, "room");
    double load = bench_load_average();
    if (load >= 0) {
        printf("load average %.2f on %d cores%s\n", load, kt_threads_resolve(0),
               load > 0.5 ? " (other work is running: figures are noisy; with more threads "
                            "than free cores, OMP_WAIT_POLICY=passive helps)"
                          : "");
        bench_report_add(&rep, "machine", "loadavg-1min", "cpu", "-", 0, "load_average", load,
                         "");
    }
    copy_probe probe;
    if (copy_probe_open(&probe) < 0) {
        fprintf(stderr, "kettle bench room: no memory for the copy's 2 x 512 MiB\n");
        bench_report_free(&rep);
        return KT_EXIT_FAIL;
    }
    int status = KT_EXIT_OK, shown = 0;
    for (int gi = 0; gi < ngrids && !gpu_only; gi++) {
        const grid_case *gc = &grid_cases[gi];
        if (only >= 0 && gi != only)
            continue;
        /* The copy bandwidth before each grid, for the record; each row's
         * fraction is taken against copies interleaved with its runs (measure). */
        printf("%scopy bandwidth before %s:", shown++ ? "\n" : "", gc->name);
        for (int t = 0; t < nthread_counts; t++) {
            char name[48];
            double copy = copy_bandwidth(&probe, thread_counts[t], o.quick ? 3 : 5);
            snprintf(name, sizeof name, "copy-512MiB-before-%s", gc->name);
            bench_report_add(&rep, name, "memcpy", "cpu", "-", thread_counts[t],
                             "copy_bandwidth", copy, "GB/s");
            printf("  %.1f GB/s with %d thread%s", copy, thread_counts[t],
                   thread_counts[t] > 1 ? "s" : "");
        }
        printf("\n%-18s %-6s %-7s %-9s %9s %9s %8s  %s\n", "grid", "prec", "threads", "walls",
               "Mvox/s", "GB/s", "of copy", "sweep plan / blocking");
        for (int prec = 0; prec < 2; prec++)
            for (int t = 0; t < nthread_counts; t++)
                if (grid_rows(&rep, gc, prec ? KT_SINGLE : KT_DOUBLE, thread_counts[t], &probe,
                              &o, blk) < 0)
                    status = KT_EXIT_FAIL;
    }
    copy_probe_close(&probe);
    if (o.gpu && gpu_rows(&rep, o.repeats, blk, only) != 0)
        status = KT_EXIT_FAIL;
    if (o.json_path && bench_report_write_json(&rep, o.json_path) < 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    return status;
}
