/* test_room_threads.c - a multi-threaded run equals the single-threaded run
 * bit for bit (mic signals and both field buffers), for rigid and lossy walls,
 * with viscosity, in double and single precision.  Every plan of the sweep
 * (row bands or whole planes, prefetch or not) gives the same bits too, and
 * a room settles on one after timing them. */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_test.h"
#include "room_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct variant {
    const char *name;
    kt_precision precision;
    double beta, viscosity_m;
} variant;

static kt_room *run(const variant *v, int threads, int steps)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 0.61; /* odd node counts: slabs split unevenly */
    p.size_m[1] = 0.47;
    p.size_m[2] = 0.39;
    p.sample_rate_hz = 16000;
    p.precision = v->precision;
    p.wall_beta = v->beta;
    p.viscosity_m = v->viscosity_m;
    p.nthreads = threads;
    kt_room *room = NULL;
    kt_error err;
    if (kt_room_create(&p, &room, &err) != KT_OK) {
        KT_CHECK(0, "create: %s", err.message);
        return NULL;
    }
    const double src[3] = {0.13, 0.21, 0.11}, m1[3] = {0.47, 0.31, 0.29}, m2[3] = {0.05, 0.4, 0.3};
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);
    kt_room_add_mic(room, "a", m1, &err);
    kt_room_add_mic(room, "b", m2, &err);
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    return room;
}

/* The latest time level of the whole field as doubles; comparing it again a
 * step later covers the other buffer too. */
static double *field_copy(const kt_room *room)
{
    const kt_room_grid *g = kt_room_get_grid(room);
    size_t layer = (size_t)g->nx * g->ny;
    double *f = malloc(sizeof *f * layer * g->nz);
    for (int z = 0; z < g->nz; z++)
        kt_room_read_layer(room, KT_NOW, z, 0, 0, g->nx, g->ny, f + z * layer);
    return f;
}

/* A room wide enough that its sweep goes in several row bands (315 x 252
 * nodes a plane: bands of 52 rows, 29 with viscosity), held to `plan`
 * (-1: left to time its plans), after `steps` steps. */
static kt_room *run_plan(double viscosity_m, int plan, int steps)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.sample_rate_hz = 16000;
    p.viscosity_m = viscosity_m;
    p.wall_beta = 0.2;
    p.nthreads = 2;
    const double q = sqrt(3.0) * p.sound_speed_m_per_s / p.sample_rate_hz * 1.05; /* > Q */
    p.size_m[0] = 299.5 * q;
    p.size_m[1] = 239.5 * q;
    p.size_m[2] = 9.5 * q;
    kt_room *room = NULL;
    kt_error err;
    if (kt_room_create(&p, &room, &err) != KT_OK) {
        KT_CHECK(0, "create: %s", err.message);
        return NULL;
    }
    if (plan >= 0) {
        room->sweep_plan = plan;
        room->tune_sweeps = ROOM_TUNED;
    }
    const double src[3] = {0.3 * p.size_m[0], 0.6 * p.size_m[1], 0.5 * p.size_m[2]};
    kt_room_add_impulse(room, src, 0, 2e-3, 1.0, &err);
    for (int s = 0; s < steps; s++) {
        if (plan < 0 && s < 12) /* kettle.h: timed over the first 12 steps */
            KT_CHECK(kt_room_sweep_plan(room) == NULL, "plan settled after only %d steps", s);
        if (kt_room_step(room, &err) < 0) {
            KT_CHECK(0, "step %d: %s", s, err.message);
            break;
        }
    }
    return room;
}

static void test_plans(double viscosity_m)
{
    const int steps = 40;
    kt_room *ref = run_plan(viscosity_m, 0, steps), *tuned = run_plan(viscosity_m, -1, steps);
    if (!ref || !tuned) {
        kt_room_destroy(ref);
        kt_room_destroy(tuned);
        return;
    }
    const kt_room_grid *g = kt_room_get_grid(ref);
    size_t points = (size_t)g->nx * g->ny * g->nz;
    double *fr = field_copy(ref), *ft = field_copy(tuned), peak = 0;
    for (size_t j = 0; j < points; j++)
        peak = fmax(peak, fabs(fr[j]));
    KT_CHECK(peak > 0, "plans: field is zero");
    const char *settled = kt_room_sweep_plan(tuned);
    KT_CHECK(settled && strcmp(settled, "-") != 0, "the room did not settle on a plan");
    KT_CHECK(memcmp(fr, ft, sizeof *fr * points) == 0, "a room timing its plans differs");
    for (int plan = 1; plan < ROOM_PLANS; plan++) {
        kt_room *r = run_plan(viscosity_m, plan, steps);
        double *f = r ? field_copy(r) : NULL;
        KT_CHECK(f && memcmp(fr, f, sizeof *fr * points) == 0, "plan %d differs from plan 0",
                 plan);
        free(f);
        kt_room_destroy(r);
    }
    printf("%s: %d x %d x %d nodes, four sweep plans identical over %d steps; the timed room "
           "chose %s\n", viscosity_m > 0 ? "viscous" : "lossy", g->nx, g->ny, g->nz, steps,
           settled ? settled : "nothing");
    free(fr);
    free(ft);
    kt_room_destroy(ref);
    kt_room_destroy(tuned);
}

int main(void)
{
    test_plans(0);
    test_plans(5e-6);
    const variant variants[] = {
        {"double rigid", KT_DOUBLE, 0, 0},
        {"double lossy", KT_DOUBLE, 0.3, 0},
        {"double viscous", KT_DOUBLE, 0.1, 5e-6},
        {"single lossy", KT_SINGLE, 0.3, 0},
        {"single viscous", KT_SINGLE, 0.1, 5e-6},
    };
    int steps = getenv("KETTLE_TEST_SANITIZED") ? 200 : 600;
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        const variant *v = &variants[i];
        kt_room *one = run(v, 1, steps), *many = run(v, 5, steps);
        if (!one || !many)
            break;
        const kt_room_grid *g = kt_room_get_grid(one);
        size_t points = (size_t)g->nx * g->ny * g->nz;
        for (int m = 0; m < 2; m++) {
            int64_t n1, n2;
            const double *a = kt_room_mic_signal(one, m, &n1), *b = kt_room_mic_signal(many, m, &n2);
            KT_CHECK(n1 == steps && n2 == steps, "%s: %lld and %lld samples", v->name,
                     (long long)n1, (long long)n2);
            KT_CHECK(memcmp(a, b, sizeof *a * (size_t)n1) == 0, "%s: mic %d differs", v->name, m);
        }
        double *fa = field_copy(one), *fb = field_copy(many);
        KT_CHECK(memcmp(fa, fb, sizeof *fa * points) == 0, "%s: fields differ", v->name);
        double e1 = kt_room_air_energy(one), e2 = kt_room_air_energy(many);
        KT_CHECK(memcmp(&e1, &e2, sizeof e1) == 0, "%s: energy %.17g vs %.17g", v->name, e1, e2);
        /* And the run did something. */
        double peak = 0;
        for (size_t j = 0; j < points; j++)
            peak = fmax(peak, fabs(fa[j]));
        KT_CHECK(peak > 0, "%s: field is zero", v->name);
        /* One more step compares the other time level too. */
        kt_error err;
        kt_room_step(one, &err);
        kt_room_step(many, &err);
        free(fa);
        free(fb);
        fa = field_copy(one);
        fb = field_copy(many);
        KT_CHECK(memcmp(fa, fb, sizeof *fa * points) == 0, "%s: fields differ a step later",
                 v->name);
        printf("%s: %d x %d x %d nodes, 1 and 5 threads identical over %d steps\n", v->name,
               g->nx, g->ny, g->nz, steps + 1);
        free(fa);
        free(fb);
        kt_room_destroy(one);
        kt_room_destroy(many);
    }
    return kt_test_finish("test_room_threads");
}
