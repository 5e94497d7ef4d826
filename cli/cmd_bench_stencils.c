/* cmd_bench_stencils.c - `kettle bench stencils`: compute time per node
 * (CTPN, ns per grid point per step, the bulk sweep only) against stencil
 * size K for the compact-in-space, box-compact and leggy families of seed 000
 * (its Fig. 7, here on the CPU), beside the 7-point and IWB schemes; then
 * the equal-accuracy comparison of its section 4.1: for each scheme the
 * largest kappa Q whose phase-velocity error stays within 2 % in every
 * direction sampled (at the scheme's Courant limit), and the cost of a given
 * band per unit volume and simulated second, which goes as
 *   CTPN / (lambda (kappa Q)^4)          (nodes 1/Q^3, steps c / (lambda Q)),
 * relative to the 7-point scheme (FCC: half the nodes per volume).  With
 * --gpu, the same cases on the GPU (bench/bench_gpu.c) on grids of about 100M
 * nodes in single and double precision, the generic kernel against the
 * hand-written ones, and the band cost from the GPU's CTPN. */
#include "bench_gpu.h"
#include "bench_report.h"
#include "kettle.h"
#include "kt_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stencil_case {
    kt_air_scheme scheme;
    kt_stencil_family family;
    int reach;
} stencil_case;

static const stencil_case cases[] = {
    {KT_SCHEME_SLF7, 0, 0}, {KT_SCHEME_IWB27, 0, 0}, {KT_SCHEME_FCC13, 0, 0},
    {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 1}, {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 2},
    {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 3}, {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 4},
    {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 5}, {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 6},
    {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 8}, {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 9},
    {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 11}, {KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 12},
    {KT_SCHEME_STENCIL, KT_STENCIL_BOX, 1}, {KT_SCHEME_STENCIL, KT_STENCIL_BOX, 2},
    {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 1}, {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 2},
    {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 3}, {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 4},
    {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 6}, {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 8},
    {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 12}, {KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 16},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* The cases the GPU targets are stated in, the first four above
 * (--targets keeps only these). */
static int target_case(int c)
{
    return c < 4;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kettle bench stencils [--quick] [--gpu [--targets]] [--json FILE] "
               "[--threads N] [--repeats N]\n"
               "CTPN (ns per node per step) against stencil size for the compact-in-space,\n"
               "box-compact and leggy families (seed 000, Fig. 7) and the 7-point, IWB and FCC\n"
               "schemes, double precision, on a grid of about 96^3 nodes (64^3 with --quick);\n"
               "then the points each needs for 2 %% dispersion error across a band, times CTPN.\n"
               "  --gpu   the same on the GPU (ps per node, single and double, ~100M nodes),\n"
               "          with the generic kernel (both forms) against the hand-written ones\n"
               "  --targets  only the rows the issue's targets name (7-point, IWB, FCC, the\n"
               "          7-point stencil via the generic kernel), no CPU timing\n");
}

static void case_params(const stencil_case *sc, kt_room_params *p)
{
    kt_room_params_default(p);
    p->scheme = sc->scheme;
    p->stencil_family = sc->family;
    p->stencil_reach = sc->reach;
}

static const char *family_name(const stencil_case *sc)
{
    static const char *names[3] = {"compact", "box", "leggy"};
    if (sc->scheme == KT_SCHEME_SLF7)
        return "7-point";
    if (sc->scheme == KT_SCHEME_IWB27)
        return "iwb";
    if (sc->scheme == KT_SCHEME_FCC13)
        return "fcc";
    return names[sc->family];
}

/* Nodes per Q^3: the FCC lattice holds every other node of the cubic grid. */
static double node_density(const stencil_case *sc)
{
    return sc->scheme == KT_SCHEME_FCC13 ? 0.5 : 1.0;
}

/* Median CTPN in ns of `repeats` runs of `steps` steps on an n^3 grid. */
static int measure_ctpn(const stencil_case *sc, int n, int steps, int repeats, int threads,
                        double *ctpn_ns)
{
    kt_room_params p;
    case_params(sc, &p);
    kt_scheme_info info;
    kt_error err;
    if (kt_room_scheme_info(&p, &info, &err) < 0) {
        fprintf(stderr, "kettle bench stencils: %s\n", err.message);
        return -1;
    }
    double Q = p.sound_speed_m_per_s / p.sample_rate_hz / info.max_courant * (1 + 1e-9);
    p.size_m[0] = p.size_m[1] = p.size_m[2] = (n - 1) * Q;
    p.nthreads = threads;
    double t[16];
    if (repeats > 16)
        repeats = 16;
    for (int r = 0; r < repeats; r++) {
        kt_room *room;
        if (kt_room_create(&p, &room, &err) < 0) {
            fprintf(stderr, "kettle bench stencils: %s\n", err.message);
            return -1;
        }
        const double src[3] = {p.size_m[0] / 3, p.size_m[1] / 2, p.size_m[2] / 2};
        kt_room_add_impulse(room, src, 0, 1e-3, 1e-3, &err);
        kt_room_run(room, 1, NULL, NULL, &err); /* first touch, ghosts */
        kt_room_timing t0, t1;
        kt_room_get_timing(room, &t0);
        kt_room_run(room, steps, NULL, NULL, &err);
        kt_room_get_timing(room, &t1);
        const kt_room_grid *g = kt_room_get_grid(room);
        double nodes = (double)g->nx * g->ny * g->nz * node_density(sc);
        t[r] = (t1.bulk_s - t0.bulk_s) / (steps * nodes) * 1e9;
        kt_room_destroy(room);
    }
    for (int a = 1; a < repeats; a++) /* insertion sort for the median */
        for (int b = a; b > 0 && t[b] < t[b - 1]; b--) {
            double s = t[b];
            t[b] = t[b - 1];
            t[b - 1] = s;
        }
    *ctpn_ns = t[repeats / 2];
    return 0;
}

/* Largest kappa Q (radians per node) below which |v/c - 1| <= tol in every
 * sampled direction, at the scheme's Courant limit. */
static double band_limit(const kt_room_params *p, double courant, double tol)
{
    static const double dirs[7][3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {2, 1, 0},
                                      {2, 1, 1}, {3, 2, 1}, {2, 2, 1}};
    const int steps = 2000;
    for (int s = 1; s <= steps; s++) {
        double kq = 3.14159265358979323846 * s / steps;
        for (int d = 0; d < 7; d++) {
            double len = sqrt(dirs[d][0] * dirs[d][0] + dirs[d][1] * dirs[d][1] +
                              dirs[d][2] * dirs[d][2]);
            double kappa[3] = {kq * dirs[d][0] / len, kq * dirs[d][1] / len,
                               kq * dirs[d][2] / len};
            double v = kt_room_scheme_phase_velocity(p, courant, kappa);
            if (!(fabs(v - 1) <= tol))
                return 3.14159265358979323846 * (s - 1) / steps;
        }
    }
    return 3.14159265358979323846;
}

#if KETTLE_CUDA_ENABLED
#define GPU_NODES 1.0e8 /* bandwidth-bound, not launch-bound */
#define GPU_STEPS 4     /* per timed call (an even number: the fields end where they began) */
#define IWB_CASE 1
#define FCC_CASE 2
#define COMPACT1_CASE 3 /* the 7-point stencil through the generic kernel */

/* The case on a cube of about GPU_NODES nodes (FCC: lattice nodes). */
static void gpu_params(const stencil_case *sc, kt_precision prec, kt_room_params *p)
{
    case_params(sc, p);
    p->precision = prec;
    kt_scheme_info info;
    kt_room_scheme_info(p, &info, NULL);
    double n = cbrt(GPU_NODES / node_density(sc));
    double Q = p->sound_speed_m_per_s / p->sample_rate_hz / info.max_courant;
    p->size_m[0] = p->size_m[1] = p->size_m[2] = n * Q;
}

/* CTPN in ps, single [0] and double [1], by kernel choice (kt_cuda_kernel:
 * 0 the scheme's own, 1 the generic one, 2 its runtime-list form), recorded
 * as "sweep", "sweep-generic" or "sweep-generic-list". */
static int gpu_row(bench_report *rep, const stencil_case *sc, int choice, int repeats,
                   double ps[2], const char **kernel)
{
    static const kt_precision precs[2] = {KT_SINGLE, KT_DOUBLE};
    static const char *pname[2] = {"single", "double"};
    kt_room_params p;
    kt_scheme_info info;
    case_params(sc, &p);
    kt_room_scheme_info(&p, &info, NULL);
    char name[48];
    snprintf(name, sizeof name, "%s-%d-K%d", family_name(sc), sc->reach, info.points);
    for (int k = 0; k < 2; k++) {
        double nodes;
        gpu_params(sc, precs[k], &p);
        static const char *what[3] = {"sweep", "sweep-generic", "sweep-generic-list"};
        if (bench_gpu_stencil_ctpn(&p, choice, GPU_STEPS, repeats, &ps[k], &nodes, kernel) < 0)
            return -1;
        bench_report_add(rep, name, what[choice], "gpu", pname[k], 0, "ctpn", ps[k], "ps");
    }
    return 0;
}

/* One extra row: a case through the kernel `choice` (1 generic, 2 its
 * runtime-list form), with its CTPN relative to the 7-point scheme's. */
static int gpu_extra_row(bench_report *rep, int c, int choice, int repeats, const double ps7[2],
                         double ps[2])
{
    const char *kernel = "";
    if (gpu_row(rep, &cases[c], choice, repeats, ps, &kernel) < 0)
        return -1;
    printf("%-8s %5d %5s %-12s %9.2f %10.2f %8.2f %8.2f\n", family_name(&cases[c]), cases[c].reach,
           c == IWB_CASE ? "27" : "7", kernel, ps[0], ps[1], ps[0] / ps7[0], ps[1] / ps7[1]);
    fflush(stdout);
    return 0;
}

/* Every case on the GPU (or the target cases only), then the generic
 * kernel on IWB's stencil, the runtime-list form on IWB's and the 7-point
 * stencil (the kernel before the compiled form), and the ratios the targets
 * are stated in. */
static int gpu_table(bench_report *rep, const double *updates, int repeats, int targets)
{
    double ps[NCASES][2], generic_iwb[2], list_iwb[2], list_7[2];
    const char *kernel = "";
    printf("\nGPU: about %.0fM nodes per grid (FCC: lattice nodes), rigid walls, %d steps per "
           "call, median of %d runs\n",
           GPU_NODES / 1e6, GPU_STEPS, repeats);
    printf("%-8s %5s %5s %-12s %9s %10s %8s %8s %10s %10s\n", "family", "reach", "K", "kernel",
           "ps single", "ps double", "s/7pt", "d/7pt", "cost s", "cost d");
    for (int c = 0; c < NCASES; c++) {
        if (targets && !target_case(c))
            continue;
        if (gpu_row(rep, &cases[c], 0, repeats, ps[c], &kernel) < 0)
            return -1;
        kt_room_params p;
        kt_scheme_info info;
        case_params(&cases[c], &p);
        kt_room_scheme_info(&p, &info, NULL);
        double cost[2];
        for (int k = 0; k < 2; k++)
            cost[k] = updates[c] * ps[c][k] / (updates[0] * ps[0][k]);
        printf("%-8s %5d %5d %-12s %9.2f %10.2f %8.2f %8.2f %10.3f %10.3f\n",
               family_name(&cases[c]), cases[c].reach, info.points, kernel, ps[c][0], ps[c][1],
               ps[c][0] / ps[0][0], ps[c][1] / ps[0][1], cost[0], cost[1]);
        fflush(stdout);
        char name[48];
        snprintf(name, sizeof name, "%s-%d-K%d", family_name(&cases[c]), cases[c].reach,
                 info.points);
        bench_report_add(rep, name, "2pct-band", "gpu", "single", 0, "cost_vs_7point", cost[0], "");
        bench_report_add(rep, name, "2pct-band", "gpu", "double", 0, "cost_vs_7point", cost[1], "");
    }
    if (gpu_extra_row(rep, IWB_CASE, 1, repeats, ps[0], generic_iwb) < 0 ||
        gpu_extra_row(rep, IWB_CASE, 2, repeats, ps[0], list_iwb) < 0 ||
        gpu_extra_row(rep, COMPACT1_CASE, 2, repeats, ps[0], list_7) < 0)
        return -1;
    for (int k = 0; k < 2; k++)
        printf("%s: IWB / 7-point %.2f, FCC / 7-point %.2f (target <= 1.5); generic / "
               "hand-written: IWB %.2f, 7-point stencil %.2f (target <= 1.2); runtime-list "
               "form: IWB %.2f, 7-point stencil %.2f\n",
               k ? "double" : "single", ps[IWB_CASE][k] / ps[0][k], ps[FCC_CASE][k] / ps[0][k],
               generic_iwb[k] / ps[IWB_CASE][k], ps[COMPACT1_CASE][k] / ps[0][k],
               list_iwb[k] / ps[IWB_CASE][k], list_7[k] / ps[0][k]);
    return 0;
}
#else
static int gpu_table(bench_report *rep, const double *updates, int repeats, int targets)
{
    (void)rep;
    (void)updates;
    (void)repeats;
    (void)targets;
    return -1; /* unreachable: bench_gpu_check refuses --gpu first */
}
#endif

int kt_cmd_bench_stencils(int argc, char **argv)
{
    bench_options o = {.repeats = 3};
    int targets = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--targets") == 0) {
            targets = 1;
            continue;
        }
        int c = bench_parse_common(argc, argv, &i, &o);
        if (c < 0)
            return KT_EXIT_USAGE;
        if (c > 0)
            continue;
        return bench_other_option("stencils", argv[i], usage);
    }
    if (o.gpu) {
        int rc = bench_gpu_check("stencils");
        if (rc != KT_EXIT_OK)
            return rc;
    }
    const int n = o.quick ? 64 : 96, steps = o.quick ? 4 : 10;
    const int threads = kt_threads_resolve(o.threads);
    bench_report rep;
    bench_report_init(&rep, "stencils");
    double ctpn[NCASES], cost[NCASES], updates_of[NCASES], updates7 = 0, cost7 = 0;
    printf("grid %d^3, double precision, %d thread%s, median of %d runs of %d steps\n", n,
           threads, threads > 1 ? "s" : "", o.repeats, steps);
    printf("%-8s %5s %5s %9s %10s %10s %12s %10s\n", "family", "reach", "K", "lambda",
           "CTPN ns", "kQ(2%)/pi", "updates rel", "cost rel");
    int status = KT_EXIT_OK;
    for (int c = 0; c < NCASES; c++) {
        kt_room_params p;
        case_params(&cases[c], &p);
        kt_scheme_info info;
        kt_room_scheme_info(&p, &info, NULL);
        if (targets) { /* the GPU's band cost needs the updates only */
            if (!target_case(c))
                continue;
            double kq = band_limit(&p, info.max_courant, 0.02);
            updates_of[c] = node_density(&cases[c]) / (info.max_courant * pow(kq, 4));
            continue;
        }
        if (measure_ctpn(&cases[c], n, steps, o.repeats, threads, &ctpn[c]) < 0) {
            status = KT_EXIT_FAIL;
            break;
        }
        double kq = band_limit(&p, info.max_courant, 0.02);
        double updates = node_density(&cases[c]) / (info.max_courant * pow(kq, 4));
        updates_of[c] = updates;
        cost[c] = updates * ctpn[c];
        if (c == 0) {
            updates7 = updates;
            cost7 = cost[c];
        }
        char name[48];
        snprintf(name, sizeof name, "%s-%d-K%d", family_name(&cases[c]), cases[c].reach,
                 info.points);
        printf("%-8s %5d %5d %9.6f %10.3f %10.4f %12.4f %10.4f\n", family_name(&cases[c]),
               cases[c].reach, info.points, info.max_courant, ctpn[c], kq / 3.14159265358979323846,
               updates / updates7, cost[c] / cost7);
        bench_report_add(&rep, name, "sweep", "cpu", "double", threads, "ctpn", ctpn[c], "ns");
        bench_report_add(&rep, name, "2pct-band", "cpu", "double", threads, "kappa_q_over_pi",
                         kq / 3.14159265358979323846, "");
        bench_report_add(&rep, name, "2pct-band", "cpu", "double", threads, "cost_vs_7point",
                         cost[c] / cost7, "");
    }
    if (status == KT_EXIT_OK && o.gpu && gpu_table(&rep, updates_of, o.repeats, targets) < 0)
        status = KT_EXIT_FAIL;
    if (status == KT_EXIT_OK && o.json_path && bench_report_write_json(&rep, o.json_path) < 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    return status;
}
