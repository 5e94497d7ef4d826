/* cmd_bench_shape.c - `kettle bench room --shape FILE`: the step rate of a
 * room with solids (an orchestra's `solid`/`hole` statements, or a closed
 * mesh taken as `room = "FILE"` takes it) against the box that holds it,
 * on the CPU (all threads) and with --gpu on the device, single and double
 * precision.  Rates count the air's nodes for the shaped room and every
 * node for the box, so a ratio of 1 means the solids' inside costs nothing
 * (the sweeps skip it: docs/room.md, "Rooms of any shape"). */
#include "bench_gpu.h"
#include "bench_report.h"
#include "kettle.h"
#include "kt_cli.h"
#include "kt_render.h"
#include "kt_score.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The orchestra: the file's text, or `room = "FILE"` for a mesh. */
static char *orchestra_text(const char *path)
{
    const size_t len = strlen(path);
    if (len < 4 || strcmp(path + len - 4, ".orc") != 0) {
        char *t = malloc(len + 16);
        if (t)
            snprintf(t, len + 16, "room = \"%s\"\n", path);
        return t;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *t = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (t = malloc((size_t)n + 1))) {
        if (fread(t, 1, (size_t)n, f) != (size_t)n) {
            free(t);
            t = NULL;
        } else
            t[n] = '\0';
    }
    fclose(f);
    return t;
}

/* A room of p with the solids (none: the box) and a short pulse in its air:
 * the first of a few points that the room takes; for the CPU (settle)
 * stepped until its sweep has settled on a plan. */
static int shape_room(const kt_room_params *p, const kt_room_solid *s, int n, int settle,
                      kt_room **out, kt_error *err)
{
    static const double at[][3] = {{0.5, 0.5, 0.5}, {0.37, 0.41, 0.43}, {0.5, 0.5, 0.7},
                                   {0.7, 0.5, 0.6}, {0.3, 0.6, 0.8}, {0.6, 0.3, 0.3}};
    int rc = kt_room_create(p, out, err), bad = -1;
    if (rc == KT_OK && n > 0)
        rc = kt_room_add_solids(*out, s, n, &bad, err);
    int placed = 0;
    for (size_t k = 0; rc == KT_OK && !placed && k < sizeof at / sizeof at[0]; k++) {
        const double pos[3] = {at[k][0] * p->size_m[0], at[k][1] * p->size_m[1],
                               at[k][2] * p->size_m[2]};
        kt_error e;
        placed = kt_room_add_impulse(*out, pos, 0, 1e-3, 1.0, &e) == KT_OK;
    }
    if (rc == KT_OK && !placed)
        rc = kt_fail(err, KT_EINVAL, "found no air for the bench's pulse");
    while (rc == KT_OK && settle && !kt_room_sweep_plan(*out))
        rc = kt_room_step(*out, err);
    if (rc < 0) {
        kt_room_destroy(*out);
        *out = NULL;
    }
    return rc;
}

/* Median seconds per step of the box and of the shaped room over `repeats`
 * runs of `steps` steps each, the two taking turns: on a shared machine
 * whatever else runs slows both alike (timed one after the other, their
 * ratio moved by 20 points from run to run on the 2-core host). */
static int cpu_seconds(kt_room *box, kt_room *shaped, int steps, int repeats, double *box_s,
                       double *shaped_s, kt_error *err)
{
    double *t = malloc(sizeof *t * 2 * (size_t)repeats);
    int rc = t ? KT_OK : kt_fail(err, KT_ENOMEM, "out of memory");
    for (int r = 0; r < repeats && rc == KT_OK; r++)
        for (int k = 0; k < 2 && rc == KT_OK; k++) {
            kt_room *room = k ? shaped : box;
            double t0 = kt_seconds();
            for (int s = 0; s < steps && rc == KT_OK; s++)
                rc = kt_room_step(room, err);
            t[k * repeats + r] = (kt_seconds() - t0) / steps;
        }
    if (rc == KT_OK) {
        *box_s = kt_median(t, repeats);
        *shaped_s = kt_median(t + repeats, repeats);
    }
    free(t);
    return rc;
}

typedef struct shape_case {
    const char *name;
    kt_room_params p;
    const kt_room_solid *solids;
    int count;
} shape_case;

/* One row: the box and the shaped room on one device and precision. */
static int shape_row(bench_report *rep, const shape_case *c, int gpu, const bench_options *o)
{
    kt_error err = {0};
    kt_room *box = NULL, *shaped = NULL;
    int rc = shape_room(&c->p, NULL, 0, !gpu, &box, &err);
    if (rc == KT_OK)
        rc = shape_room(&c->p, c->solids, c->count, !gpu, &shaped, &err);
    double tb = 0, ts = 0, nodes = 0, air = 0, list = 0;
    if (rc == KT_OK) {
        const kt_room_grid *g = kt_room_get_grid(box);
        nodes = (double)g->nx * g->ny * g->nz;
        air = (double)kt_room_air_nodes(shaped);
        list = (double)kt_room_shape_nodes(shaped);
        const double updates = o->quick ? 4e7 : 4e8;
        int steps = (int)(updates / nodes);
        steps = steps < 2 ? 2 : steps > 400 ? 400 : steps;
#if KETTLE_CUDA_ENABLED
        if (gpu) {
            rc = bench_gpu_mirror_seconds(box, o->repeats, &tb, &err);
            if (rc == KT_OK)
                rc = bench_gpu_mirror_seconds(shaped, o->repeats, &ts, &err);
        } else
#endif
            rc = cpu_seconds(box, shaped, steps, o->repeats, &tb, &ts, &err);
    }
    kt_room_destroy(box);
    kt_room_destroy(shaped);
    if (rc < 0) {
        fprintf(stderr, "kettle bench room --shape: %s: %s\n", c->name, err.message);
        return rc;
    }
    const char *pn = c->p.precision == KT_SINGLE ? "single" : "double";
    const int threads = gpu ? 0 : kt_threads_resolve(c->p.nthreads);
    const double box_rate = nodes / tb / 1e6, air_rate = air / ts / 1e6;
    char th[16];
    snprintf(th, sizeof th, "%d", threads);
    printf("%-7s %-6s %-7s %6.1f%% %6.2f%% %12.1f %12.1f %12.1f %7.1f%%\n", gpu ? "gpu" : "cpu",
           pn, gpu ? "-" : th, 100 * air / nodes, 100 * list / nodes, box_rate, air_rate,
           nodes / ts / 1e6, 100 * air_rate / box_rate);
    fflush(stdout);
    bench_report_add(rep, c->name, "box", gpu ? "gpu" : "cpu", pn, threads, "mvox_per_s",
                     box_rate, "Mvox/s");
    bench_report_add(rep, c->name, "shaped-air", gpu ? "gpu" : "cpu", pn, threads,
                     "mvox_per_s", air_rate, "Mvox/s");
    bench_report_add(rep, c->name, "shaped-vs-box", gpu ? "gpu" : "cpu", pn, threads,
                     "rate_ratio", air_rate / box_rate, "ratio");
    return KT_OK;
}

int kt_bench_room_shape(const char *path, double sr_hz, const bench_options *o)
{
    char *text = orchestra_text(path);
    if (!text) {
        fprintf(stderr, "kettle bench room: cannot read '%s'\n", path);
        return KT_EXIT_USAGE;
    }
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error serr = {0};
    int rc = kt_score_parse(&perf, path, text, "(none)", "", &serr);
    free(text);
    if (rc < 0 || perf.solid_count == 0) {
        fprintf(stderr, "kettle bench room --shape: %s\n",
                rc < 0 ? serr.message : "the orchestra has no solid: nothing to compare");
        kt_performance_free(&perf);
        return KT_EXIT_USAGE;
    }
    kt_room_solid *s = malloc(sizeof *s * (size_t)perf.solid_count);
    if (!s) {
        kt_performance_free(&perf);
        return KT_EXIT_FAIL;
    }
    for (int k = 0; k < perf.solid_count; k++)
        s[k] = perf.solids[k].solid;
    bench_report rep;
    bench_report_init(&rep, "room-shape");
    kt_render_options ro;
    kt_render_options_default(&ro);
    ro.sample_rate_hz = sr_hz;
    ro.nthreads = o->threads;
    int status = KT_EXIT_OK, header = 0;
    for (int prec = 0; prec < 2; prec++) {
        shape_case c;
        memset(&c, 0, sizeof c);
        c.name = path;
        c.solids = s;
        c.count = perf.solid_count;
        ro.precision = prec ? KT_SINGLE : KT_DOUBLE;
        kt_render_room_params(&perf, &ro, &c.p);
        if (!header++) {
            kt_room_grid g;
            kt_error e;
            if (kt_room_estimate(&c.p, &g, &e) == KT_OK)
                printf("%s: %d x %d x %d nodes (%.3g million) at %.0f Hz\n", path, g.nx, g.ny,
                       g.nz, (double)g.nx * g.ny * g.nz / 1e6, c.p.sample_rate_hz);
            printf("%-7s %-6s %-7s %7s %7s %12s %12s %12s %8s\n", "device", "prec", "threads",
                   "air", "list", "box Mvox/s", "air Mvox/s", "all Mvox/s", "air/box");
        }
        if (shape_row(&rep, &c, 0, o) < 0)
            status = KT_EXIT_FAIL;
        if (o->gpu && shape_row(&rep, &c, 1, o) < 0)
            status = KT_EXIT_FAIL;
    }
    printf("air, list: the shaped room's air nodes and the solids' boundary list (stage B) "
           "as shares of the box's nodes;\nair Mvox/s: the shaped room's air nodes updated per "
           "second; all: every node of its box; air/box: the air's rate over the box's\n");
    if (o->json_path && bench_report_write_json(&rep, o->json_path) < 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    free(s);
    kt_performance_free(&perf);
    return status;
}
