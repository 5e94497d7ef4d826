/* cmd_bench_stencils.c - `kettle bench stencils`: compute time per node
 * (CTPN, ns per grid point per step, the bulk sweep only) against stencil
 * size K for the compact-in-space, box-compact and leggy families of seed 000
 * (its Fig. 7, here on the CPU), beside the 7-point and IWB schemes; then
 * the equal-accuracy comparison of its section 4.1: for each scheme the
 * largest kappa Q whose phase-velocity error stays within 2 % in every
 * direction sampled (at the scheme's Courant limit), and the cost of a given
 * band per unit volume and simulated second, which goes as
 *   CTPN / (lambda (kappa Q)^4)          (nodes 1/Q^3, steps c / (lambda Q)),
 * relative to the 7-point scheme. */
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
    {KT_SCHEME_SLF7, 0, 0}, {KT_SCHEME_IWB27, 0, 0},
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

static void usage(FILE *f)
{
    fprintf(f, "usage: kettle bench stencils [--quick] [--json FILE] [--threads N] [--repeats N]\n"
               "CTPN (ns per node per step) against stencil size for the compact-in-space,\n"
               "box-compact and leggy families (seed 000, Fig. 7) and the 7-point and IWB\n"
               "schemes, double precision, on a grid of about 96^3 nodes (64^3 with --quick);\n"
               "then the points each needs for 2 %% dispersion error across a band, times CTPN.\n");
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
    return names[sc->family];
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
        double nodes = (double)g->nx * g->ny * g->nz;
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

int kt_cmd_bench_stencils(int argc, char **argv)
{
    bench_options o = {NULL, 0, 0, 3};
    for (int i = 1; i < argc; i++) {
        int c = bench_parse_common(argc, argv, &i, &o);
        if (c < 0)
            return KT_EXIT_USAGE;
        if (c > 0)
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return KT_EXIT_OK;
        }
        fprintf(stderr, "kettle bench stencils: unknown option '%s'\n", argv[i]);
        usage(stderr);
        return KT_EXIT_USAGE;
    }
    const int n = o.quick ? 64 : 96, steps = o.quick ? 4 : 10;
    const int threads = kt_threads_resolve(o.threads);
    bench_report rep;
    bench_report_init(&rep, "stencils");
    double ctpn[NCASES], cost[NCASES], updates7 = 0, cost7 = 0;
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
        if (measure_ctpn(&cases[c], n, steps, o.repeats, threads, &ctpn[c]) < 0) {
            status = KT_EXIT_FAIL;
            break;
        }
        double kq = band_limit(&p, info.max_courant, 0.02);
        double updates = 1 / (info.max_courant * pow(kq, 4));
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
    if (status == KT_EXIT_OK && o.json_path && bench_report_write_json(&rep, o.json_path) < 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    return status;
}
