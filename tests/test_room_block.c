/* test_room_block.c - temporal blocking (room_block.c): N steps of kt_room_run
 * in blocked passes equal N steps of kt_room_step bit for bit - both fields
 * node by node and every microphone sample - for rigid and lossy walls,
 * single and double precision, odd sizes, depths 1..4 with tiles that split
 * the rows unevenly (down to one row, narrower than the skew), one and two
 * threads, a source sounding through the passes, a fixed and a moving
 * microphone; the timed default settles and gives the same bits; rooms that
 * cannot be blocked (viscosity, absorbing walls, solids, an instrument half
 * the room's height) refuse with the reason, and an instrument's process()
 * still runs every step inside kt_room_run. */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_test.h"
#include "kt_test_room.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct variant {
    const char *name;
    kt_precision precision;
    double beta;
} variant;

/* 23 x 19 x 17 nodes (odd in every direction), a source and two
 * microphones, the sweep's plan fixed (no timed steps first). */
static kt_room *open_room(const variant *v, int threads)
{
    kt_room_params p;
    kt_room_params_default(&p);
    const int n[3] = {23, 19, 17};
    p.precision = v->precision;
    p.wall_beta = v->beta;
    p.nthreads = threads;
    kt_room_params_fit(&p, n);
    kt_room *room = NULL;
    kt_error err;
    if (kt_room_create(&p, &room, &err) != KT_OK) {
        KT_CHECK(0, "create: %s", err.message);
        return NULL;
    }
    room->sweep_plan = 0;
    room->tune_sweeps = ROOM_TUNED;
    const double *L = p.size_m;
    const double src[3] = {0.31 * L[0], 0.52 * L[1], 0.47 * L[2]};
    const double m1[3] = {0.71 * L[0], 0.33 * L[1], 0.58 * L[2]};
    const double a[3] = {0.1 * L[0], 0.9 * L[1], 0.2 * L[2]}, b[3] = {0.8 * L[0], 0.1 * L[1], 0.9 * L[2]};
    const double dt = kt_room_get_grid(room)->time_step_s;
    int ok = kt_room_add_impulse(room, src, 3 * dt, 20 * dt, 1.0, &err) >= 0 &&
             kt_room_add_mic(room, "fixed", m1, &err) >= 0 &&
             kt_room_add_mic(room, "moving", a, &err) >= 0 &&
             kt_room_mic_waypoint(room, 1, 0, a, &err) >= 0 &&
             kt_room_mic_waypoint(room, 1, 40 * dt, b, &err) >= 0;
    KT_CHECK(ok, "set-up: %s", err.message);
    return room;
}

static kt_room *reference(const variant *v, int steps)
{
    kt_room *r = open_room(v, 1);
    kt_error err;
    for (int s = 0; r && s < steps; s++)
        KT_CHECK(kt_room_step(r, &err) == KT_OK, "step: %s", err.message);
    return r;
}

static void test_variant(const variant *v)
{
    const int steps = 37; /* no depth divides it: the last pass is shorter */
    kt_room *ref = reference(v, steps);
    if (!ref)
        return;
    double peak = 0;
    for (int64_t s = 0; s < ref->plan.mic[0].count; s++)
        peak = fmax(peak, fabs(ref->plan.mic[0].signal[s]));
    KT_CHECK(peak > 0, "%s: the microphone heard nothing", v->name);
    const int tiles[] = {1, 3, 7, 19};
    int cases = 0;
    for (int depth = 1; depth <= 4; depth++)
        for (int t = 0; t < 4; t++)
            for (int threads = 1; threads <= 2; threads++) {
                kt_room *r = open_room(v, threads);
                kt_error err;
                if (!r)
                    continue;
                int rc = KT_OK;
                if (depth == 1) /* passes of one level: the tiles alone (kt_room_run steps) */
                    for (int s = 0; s < steps && rc == KT_OK; s++)
                        rc = room_block_steps(r, 1, tiles[t], &err);
                else if ((rc = kt_room_set_blocking(r, depth, tiles[t], &err)) == KT_OK)
                    rc = kt_room_run(r, steps, NULL, NULL, &err);
                KT_CHECK(rc == KT_OK, "%s: %s", v->name, err.message);
                KT_CHECK(kt_test_same_bits(ref, r), "%s: depth %d, tiles of %d rows, %d threads: not "
                         "the bits of one step at a time", v->name, depth, tiles[t], threads);
                cases++;
                kt_room_destroy(r);
            }
    /* the default: depth and tile timed over the first passes */
    kt_room *r = open_room(v, 2);
    kt_error err;
    if (r) {
        KT_CHECK(kt_room_blocking(r) == NULL, "%s: settled before timing", v->name);
        /* 9 candidates (one step; depths 2, 4, 6, 8 with two tiles), 2 rounds: 82 steps */
        kt_room *ref2 = reference(v, 100);
        KT_CHECK(kt_room_run(r, 100, NULL, NULL, &err) == KT_OK, "%s: %s", v->name,
                 err.message);
        KT_CHECK(ref2 && kt_test_same_bits(ref2, r), "%s: the timed room differs", v->name);
        KT_CHECK(kt_room_blocking(r) != NULL, "%s: did not settle in 100 steps", v->name);
        kt_room_destroy(ref2);
        printf("%s, %d x %d x %d nodes: %d blocked runs of %d steps equal one step at a time; "
               "timed: %s\n", v->name, r->plan.grid.nx, r->plan.grid.ny, r->plan.grid.nz,
               cases, steps, kt_room_blocking(r) ? kt_room_blocking(r) : "?");
        kt_room_destroy(r);
    }
    kt_room_destroy(ref);
}

static int count_process(void *self, kt_room *room, kt_error *err)
{
    (void)room, (void)err;
    ++*(int *)self;
    return KT_OK;
}

/* A room with an instrument: its process() is called every step inside
 * kt_room_run's blocked passes (the hand-over around its planes,
 * test_room_block_drums has the bits); one whose box spans half the room's
 * height or more keeps the one-step sweep and says why. */
static void test_instrument(int lo, int hi, int blocked)
{
    kt_room_params p;
    kt_room_params_default(&p);
    const int n[3] = {15, 15, 15};
    kt_room_params_fit(&p, n);
    kt_room *r = NULL;
    kt_error err;
    int calls = 0;
    kt_instrument ins = {.kind = "counter", .name = "counter", .self = &calls,
                         .box_lo = {5, 5, lo}, .box_hi = {9, 9, hi}, .process = count_process};
    if (kt_room_create(&p, &r, &err) != KT_OK || kt_room_set_blocking(r, 3, 0, &err) != KT_OK ||
        kt_room_add_instrument(r, &ins, &err) != KT_OK) {
        KT_CHECK(0, "instrument: %s", err.message);
        kt_room_destroy(r);
        return;
    }
    KT_CHECK(kt_room_run(r, 40, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    KT_CHECK(calls == 40, "process() ran %d times in 40 steps", calls);
    const char *how = kt_room_blocking(r);
    KT_CHECK(how && (strcmp(how, "off") != 0) == blocked, "box z = %d..%d of 15: blocking %s",
             lo, hi, how ? how : "not settled");
    if (!blocked) {
        KT_CHECK(kt_room_set_blocking(r, 2, 0, &err) == KT_EINVAL &&
                     strstr(err.message, "instrument"),
                 "blocking a room with a tall instrument: no refusal naming it");
        printf("refused: %s\n", err.message);
    }
    kt_room_remove_instrument(r, &ins);
    kt_room_destroy(r);
}

/* Rooms the blocked pass does not serve keep the one-step sweep and say why. */
static void test_refusals(void)
{
    {
        kt_room_params p;
        kt_room_params_default(&p);
        const int n[3] = {15, 15, 15};
        kt_room_params_fit(&p, n);
        kt_room *r = NULL;
        kt_error err;
        kt_room_solid box = {.kind = KT_SOLID_BOX, .beta = 0, .name = "block"};
        for (int d = 0; d < 3; d++) {
            box.lo_m[d] = 0.3 * p.size_m[d];
            box.hi_m[d] = 0.6 * p.size_m[d];
        }
        int culprit;
        if (kt_room_create(&p, &r, &err) == KT_OK &&
            kt_room_set_blocking(r, 3, 0, &err) == KT_OK &&
            kt_room_add_solids(r, &box, 1, &culprit, &err) == KT_OK) {
            KT_CHECK(strcmp(kt_room_blocking(r), "off") == 0, "solids: blocking not off");
            KT_CHECK(kt_room_set_blocking(r, 3, 0, &err) == KT_EINVAL &&
                         strstr(err.message, "solids"),
                     "blocking a room with solids: no refusal naming them");
            printf("refused: %s\n", err.message);
        } else {
            KT_CHECK(0, "solids: %s", err.message);
        }
        kt_room_destroy(r);
    }
    struct {
        double viscosity_m;
        kt_wall_model model;
        const char *word;
    } cases[] = {{5e-6, KT_WALL_LOSSY, "viscosity"}, {0, KT_WALL_ENGQUIST_MAJDA, "absorbing"}};
    for (int c = 0; c < 2; c++) {
        kt_room_params p;
        kt_room_params_default(&p);
        const int n[3] = {9, 9, 9};
        p.viscosity_m = cases[c].viscosity_m;
        p.wall_model = cases[c].model;
        kt_room_params_fit(&p, n);
        kt_room *r = NULL;
        kt_error err;
        if (kt_room_create(&p, &r, &err) != KT_OK) {
            KT_CHECK(0, "create: %s", err.message);
            continue;
        }
        KT_CHECK(kt_room_set_blocking(r, 3, 0, &err) == KT_EINVAL &&
                     strstr(err.message, cases[c].word),
                 "blocking a room with %s: no refusal naming it", cases[c].word);
        KT_CHECK(strcmp(kt_room_blocking(r), "off") == 0, "%s: blocking not off",
                 cases[c].word);
        printf("refused: %s\n", err.message);
        kt_room_destroy(r);
    }
    kt_room_params p;
    kt_room_params_default(&p);
    kt_room *r = NULL;
    kt_error err;
    const int n[3] = {9, 9, 9};
    kt_room_params_fit(&p, n);
    if (kt_room_create(&p, &r, &err) == KT_OK) {
        KT_CHECK(kt_room_set_blocking(r, 9, 0, &err) == KT_EINVAL, "depth 9 accepted");
        KT_CHECK(kt_room_set_blocking(r, 2, 10, &err) == KT_EINVAL, "10 rows of 9 accepted");
        kt_room_destroy(r);
    }
}

int main(void)
{
    const variant variants[] = {
        {"double rigid", KT_DOUBLE, 0},
        {"double lossy", KT_DOUBLE, 0.3},
        {"single rigid", KT_SINGLE, 0},
        {"single lossy", KT_SINGLE, 0.3},
    };
    for (int v = 0; v < 4; v++)
        test_variant(&variants[v]);
    test_refusals();
    test_instrument(5, 9, 1);
    test_instrument(3, 11, 0);
    return kt_test_finish("test_room_block");
}
