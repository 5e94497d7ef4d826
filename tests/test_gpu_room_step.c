/* test_gpu_room_step.c - the whole room step on the GPU (room/gpu/room_step.cu,
 * kt_cuda_mirror_*) against kt_room_step: two identical rooms, each with a
 * rigid plate (a list-only instrument whose boundary list blocks the z legs
 * across a rectangle), two impulse sources (one on a list node, one starting
 * late) and three microphones (fixed, on a grid node, and one moving along
 * waypoints), lossy walls; one steps on the CPU, the other is mirrored to the
 * GPU and stepped there in pieces (single launches and CUDA graphs, across a
 * microphone block boundary), then handed back to the CPU for a few more
 * steps.  Microphone signals and fields must agree within 1e-10 relative in
 * double (1e-5 in single), the plate must change the sound (it is really
 * applied) and the microphones must hear something.  Skipped (77) without a
 * GPU or a CUDA build. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_room_step: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kettle.h"
#include "kt_cuda_room.h"
#include "kt_instrument.h"
#include "kt_test_room.h"

#include <stdlib.h>
#include <string.h>

/* A rigid plate between layers z0 and z0+1 over x0..x1, y0..y1: the nodes of
 * layer z0 have their +z leg blocked, those of z0+1 their -z leg. */
typedef struct plate {
    kt_instrument ins;
    int64_t node[2 * 16 * 12];
    uint8_t open[2 * 16 * 12];
} plate;

static void make_plate(plate *pl, const kt_room_grid *g, int x0, int y0, int z0)
{
    const int wx = 16, wy = 12;
    memset(pl, 0, sizeof *pl);
    pl->ins.kind = "plate";
    strcpy(pl->ins.name, "test plate");
    pl->ins.self = pl;
    int r = 0;
    for (int layer = 0; layer < 2; layer++)
        for (int y = y0; y < y0 + wy; y++)
            for (int x = x0; x < x0 + wx; x++) {
                int z = z0 + layer;
                pl->node[r] = ((int64_t)z * g->ny + y) * g->nx + x;
                pl->open[r] = (uint8_t)(KT_LEG_ALL & ~(layer ? KT_LEG_ZM : KT_LEG_ZP));
                r++;
            }
    pl->ins.boundary_node = pl->node;
    pl->ins.boundary_open = pl->open;
    pl->ins.boundary_count = r;
    int lo[3] = {x0, y0, z0}, hi[3] = {x0 + wx - 1, y0 + wy - 1, z0 + 1};
    memcpy(pl->ins.box_lo, lo, sizeof lo);
    memcpy(pl->ins.box_hi, hi, sizeof hi);
}

/* The room of every case; `with_plate` = 0 gives the control without it. */
static kt_room *build(const kt_room_params *p, plate *pl, int with_plate, kt_error *err)
{
    kt_room *room = NULL;
    if (kt_room_create(p, &room, err) < 0)
        return NULL;
    const kt_room_grid *g = kt_room_get_grid(room);
    const double Q = g->spacing_m;
    make_plate(pl, g, 10, 8, 40);
    int ok = !with_plate || kt_room_add_instrument(room, &pl->ins, err) >= 0;
    /* One source just above the plate (a list node), one late and far. */
    const double s1[3] = {14 * Q, 11 * Q, 41 * Q};
    const double s2[3] = {0.8 * p->size_m[0], 0.7 * p->size_m[1], 0.2 * p->size_m[2]};
    ok = ok && kt_room_add_impulse(room, s1, 0.0, 10.0 / p->sample_rate_hz, 1e-2, err) >= 0;
    ok = ok && kt_room_add_impulse(room, s2, 40.0 / p->sample_rate_hz, 6.0 / p->sample_rate_hz,
                                   -5e-3, err) >= 0;
    const double m1[3] = {0.31 * p->size_m[0], 0.47 * p->size_m[1], 0.29 * p->size_m[2]};
    const double m2[3] = {20 * Q, 10 * Q, 30 * Q};
    int mic = -1;
    ok = ok && kt_room_add_mic(room, "fixed", m1, err) >= 0;
    ok = ok && kt_room_add_mic(room, "node", m2, err) >= 0;
    ok = ok && (mic = kt_room_add_mic(room, "moving", m1, err)) >= 0;
    const double w0[3] = {0.2 * p->size_m[0], 0.3 * p->size_m[1], 0.6 * p->size_m[2]};
    const double w1[3] = {0.7 * p->size_m[0], 0.6 * p->size_m[1], 0.3 * p->size_m[2]};
    const double w2[3] = {0.5 * p->size_m[0], 0.9 * p->size_m[1], 0.8 * p->size_m[2]};
    const double k = g->time_step_s;
    ok = ok && kt_room_mic_waypoint(room, mic, 20 * k, w0, err) >= 0;
    ok = ok && kt_room_mic_waypoint(room, mic, 200 * k, w1, err) >= 0;
    ok = ok && kt_room_mic_waypoint(room, mic, 3000 * k, w2, err) >= 0;
    if (!ok) {
        kt_room_destroy(room);
        return NULL;
    }
    return room;
}

static void run_case(kt_precision prec, double viscosity_m, int batch, int64_t steps,
                     const char *what)
{
    kt_room_params p;
    kt_test_box(&p, 45, 29, 83, prec, 0.3, viscosity_m);
    kt_error err;
    plate pc, pg, pn;
    kt_room *cpu = build(&p, &pc, 1, &err);
    KT_CHECK(cpu != NULL, "%s: CPU room: %s", what, err.message);
    kt_room *gpu = cpu ? build(&p, &pg, 1, &err) : NULL;
    KT_CHECK(gpu != NULL, "%s: mirrored room: %s", what, err.message);
    kt_room *bare = gpu ? build(&p, &pn, 0, &err) : NULL;
    KT_CHECK(bare != NULL, "%s: control room: %s", what, err.message);
    if (!bare) {
        kt_room_destroy(cpu);
        kt_room_destroy(gpu);
        return;
    }
    /* Both start a few steps in on the CPU, so the mirror picks up a live
     * state, a non-zero step index and microphones that already hold samples. */
    const int lead = 7, tail = 5;
    for (int s = 0; s < lead; s++) {
        kt_room_step(cpu, &err);
        kt_room_step(gpu, &err);
    }
    for (int64_t s = 0; s < lead + steps + tail; s++)
        kt_room_step(bare, &err);
    /* In three uneven pieces: partial batches, whole graphs, a block boundary. */
    const int64_t piece[3] = {steps / 5 + 1, steps / 2, steps - steps / 5 - 1 - steps / 2};
    kt_test_mirror_pieces(gpu, batch, piece, 3, what);
    for (int64_t s = 0; s < steps; s++)
        kt_room_step(cpu, &err);
    KT_CHECK(kt_room_step_index(gpu) == kt_room_step_index(cpu), "%s: step index %lld, CPU %lld",
             what, (long long)kt_room_step_index(gpu), (long long)kt_room_step_index(cpu));

    const double tol = prec == KT_SINGLE ? 1e-5 : 1e-10;
    int64_t n = -1;
    double e_mic = kt_test_mic_difference(cpu, gpu, &n);
    double e_now = kt_test_node_difference(cpu, cpu->now, gpu, gpu->now);
    double e_prev = kt_test_node_difference(cpu, cpu->prev, gpu, gpu->prev);
    KT_CHECK(n == lead + steps, "%s: %lld microphone samples, expected %lld", what,
             (long long)n, (long long)(lead + steps));
    KT_CHECK(e_mic <= tol, "%s: microphones differ from the CPU's by %.3g relative", what,
             e_mic);
    KT_CHECK(e_now <= tol && e_prev <= tol, "%s: fields differ by %.3g, %.3g relative", what,
             e_now, e_prev);
    /* Back on the CPU: the handed-back state must go on exactly as the CPU's. */
    for (int s = 0; s < tail; s++) {
        kt_room_step(cpu, &err);
        kt_room_step(gpu, &err);
    }
    double e_tail = kt_test_mic_difference(cpu, gpu, &n);
    KT_CHECK(e_tail <= tol, "%s: after handing back, microphones differ by %.3g", what, e_tail);
    /* The plate and the sources really act: the control room sounds different. */
    double plate_effect = kt_test_mic_difference(cpu, bare, &n);
    KT_CHECK(plate_effect > 1e-3, "%s: the plate changed the sound by only %.3g", what,
             plate_effect);
    double loudest = 0;
    for (int m = 0; m < kt_room_mic_count(gpu); m++) {
        int64_t c;
        const double *sig = kt_room_mic_signal(gpu, m, &c);
        double peak = 0;
        for (int64_t s = 0; s < c; s++)
            peak = fmax(peak, fabs(sig[s]));
        KT_CHECK(peak > 0, "%s: microphone %d heard nothing", what, m);
        loudest = fmax(loudest, peak);
    }
    printf("%s, batch %d: %lld steps, relative difference mics %.3g, Psi^n %.3g, "
           "Psi^{n-1} %.3g, after hand-back %.3g (peak %.3g Pa)\n",
           what, batch, (long long)steps, e_mic, e_now, e_prev, e_tail, loudest);
    kt_room_destroy(cpu);
    kt_room_destroy(gpu);
    kt_room_destroy(bare);
}

/* Rooms the mirror cannot take are refused with a reason. */
static int dummy_process(void *self, kt_room *room, kt_error *err)
{
    (void)self;
    (void)room;
    (void)err;
    return KT_OK;
}

static void test_refusals(void)
{
    kt_room_params p;
    kt_test_box(&p, 45, 29, 83, KT_DOUBLE, 0.1, 0);
    kt_error err;
    plate pl;
    kt_cuda_mirror *M = NULL;
    KT_CHECK(kt_cuda_mirror_create(NULL, &M, &err) == KT_EINVAL, "NULL room refused");
    kt_room *room = build(&p, &pl, 0, &err);
    if (!room)
        return;
    pl.ins.process = dummy_process;
    KT_CHECK(kt_room_add_instrument(room, &pl.ins, &err) >= 0, "plate: %s", err.message);
    KT_CHECK(kt_cuda_mirror_create(room, &M, &err) == KT_ENOTSUP && M == NULL,
             "an instrument with a CPU-only process() is refused");
    kt_room_remove_instrument(room, &pl.ins);
    KT_CHECK(kt_cuda_mirror_create(room, &M, &err) == KT_OK, "plain room: %s", err.message);
    KT_CHECK(kt_cuda_mirror_set_batch(M, 7, &err) == KT_EINVAL, "batch 7 refused");
    kt_cuda_mirror_free(M);
    kt_room_destroy(room);
}

int main(void)
{
    if (kt_cuda_devices(NULL, 0) == 0) {
        printf("test_gpu_room_step: no GPU, skipped\n");
        return 77;
    }
    const char *san = getenv("KETTLE_TEST_SANITIZED");
    const int64_t long_run = san && *san && *san != '0' ? 600 : 3000;
    run_case(KT_DOUBLE, 0.0, 96, long_run, "double, 2 grids");
    run_case(KT_DOUBLE, 0.0, 0, 400, "double, 2 grids, no graphs");
    run_case(KT_SINGLE, 0.0, 96, 400, "single, 2 grids");
    run_case(KT_DOUBLE, 2e-5, 96, 400, "double, 3 grids (viscosity)");
    run_case(KT_SINGLE, 2e-5, 6, 400, "single, 3 grids (viscosity)");
    test_refusals();
    return kt_test_finish("test_gpu_room_step");
}
#endif
