/* test_gpu_room_block.c - the device room's temporally blocked pass
 * (room/gpu/room_block.cu) against its one-step sweep, bit for bit: the
 * same state, past an impulse, is stepped 37 times (not a multiple of any
 * depth: the last steps run one at a time) on two device rooms, one step
 * per pass and blocked at depths 2, 3 and 4 with each extended tile, and
 * the timed default over 100 steps; rigid and lossy walls, single and
 * double.  Both fields must be byte for byte those of the one-step sweep at
 * every node, and must have moved.  Then the whole step (kt_cuda_mirror)
 * with a source and a fixed and a moving microphone, blocked and not: the
 * same samples and fields, byte for byte.  The box (77 x 121 x 53) cuts into
 * several tiles each way, tiles ending part-way, several z slabs, and for
 * every depth and tile some tiles off the x and y walls (the pass's PLAIN
 * iterations) besides those on them (EDGE).  A
 * room with viscosity refuses a depth.  Skipped (77) without a GPU or a
 * CUDA build. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_room_block: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kettle.h"
#include "kt_cuda_room.h"
#include "kt_test_room.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Nodes (not the halo) whose bytes differ between two host fields. */
static long differing_nodes(const kt_room *room, const void *a, const void *b)
{
    const size_t es = kt_precision_bytes(room->plan.params.precision);
    long bad = 0;
    for (int z = 0; z < room->plan.grid.nz; z++)
        for (int y = 0; y < room->plan.grid.ny; y++)
            for (int x = 0; x < room->plan.grid.nx; x++) {
                const size_t i = room_node_index(room, x, y, z) * es;
                bad += memcmp((const char *)a + i, (const char *)b + i, es) != 0;
            }
    return bad;
}

/* `steps` steps of a device room from the CPU room's state at the blocking
 * asked for; its fields into now, prev. */
static int run_gpu(const kt_room_params *p, const kt_room *room, int depth, int tile, int steps,
                   void *now, void *prev, char *name, size_t name_len)
{
    kt_cuda_room *gpu = NULL;
    kt_error err;
    int rc = kt_cuda_room_create(p, &gpu, &err);
    if (rc == KT_OK)
        rc = kt_cuda_room_set_blocking(gpu, depth, tile, &err);
    if (rc == KT_OK)
        rc = kt_cuda_room_upload(gpu, room->now, room->prev, &err);
    if (rc == KT_OK)
        rc = kt_cuda_room_run(gpu, steps, &err);
    if (rc == KT_OK)
        rc = kt_cuda_sync(&err);
    if (rc == KT_OK)
        rc = kt_cuda_room_download(gpu, now, prev, &err);
    KT_CHECK(rc == KT_OK, "device room (depth %d, tile %d): %s", depth, tile, err.message);
    KT_CHECK(rc != KT_OK || kt_cuda_room_step_index(gpu) == steps, "depth %d: step index %lld",
             depth, (long long)kt_cuda_room_step_index(gpu));
    const char *b = gpu ? kt_cuda_room_blocking(gpu) : NULL;
    snprintf(name, name_len, "%s", b ? b : "(not chosen)");
    kt_cuda_room_free(gpu);
    return rc;
}

static void run_case(kt_precision prec, double beta, const char *what)
{
    const int steps = 37;
    kt_room_params p;
    kt_test_box(&p, 77, 121, 53, prec, beta, 0.0);
    kt_room *room = NULL;
    kt_error err;
    int rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_OK, "%s: room: %s", what, err.message);
    if (rc != KT_OK)
        return;
    /* a short pulse near a corner, heard at walls, edges and corners */
    const double src[3] = {0.13 * p.size_m[0], 0.21 * p.size_m[1], 0.11 * p.size_m[2]};
    kt_room_add_impulse(room, src, 0.0, 8.0 / p.sample_rate_hz, 1e-2, &err);
    for (int s = 0; s < 20; s++)
        kt_room_step(room, &err);
    const size_t bytes = room->plan.padded_points * kt_precision_bytes(prec);
    void *now1 = calloc(1, bytes), *prev1 = calloc(1, bytes);
    void *now = calloc(1, bytes), *prev = calloc(1, bytes);
    char name[160];
    rc = run_gpu(&p, room, 1, 0, steps, now1, prev1, name, sizeof name);
    KT_CHECK(rc != KT_OK || strcmp(name, "off") == 0, "%s: depth 1 is 'off', not '%s'", what,
             name);
    const long moved = rc == KT_OK ? differing_nodes(room, room->now, now1) : 0;
    KT_CHECK(moved > 1000, "%s: the field did not move (%ld nodes changed)", what, moved);
    for (int d = 2; rc == KT_OK && d <= 4; d++)
        for (int t = 1; t <= 4; t++) {
            if (run_gpu(&p, room, d, t, steps, now, prev, name, sizeof name) != KT_OK)
                continue;
            long bad_now = differing_nodes(room, now1, now);
            long bad_prev = differing_nodes(room, prev1, prev);
            KT_CHECK(bad_now == 0 && bad_prev == 0,
                     "%s, %s: %ld nodes of Psi^n and %ld of Psi^{n-1} differ from one step "
                     "at a time", what, name, bad_now, bad_prev);
        }
    /* the timed default: its choice, whatever it is, gives the same bits */
    void *now100 = calloc(1, bytes), *prev100 = calloc(1, bytes);
    if (rc == KT_OK && run_gpu(&p, room, 1, 0, 100, now100, prev100, name, sizeof name) == KT_OK &&
        run_gpu(&p, room, 0, 0, 100, now, prev, name, sizeof name) == KT_OK) {
        KT_CHECK(strcmp(name, "(not chosen)") != 0, "%s: the timed blocking chose nothing",
                 what);
        KT_CHECK(differing_nodes(room, now100, now) == 0 &&
                     differing_nodes(room, prev100, prev) == 0,
                 "%s, timed (%s): 100 steps differ from one step at a time", what, name);
        printf("%s: timed choice after 100 steps: %s\n", what, name);
    }
    free(now100);
    free(prev100);
    free(now1);
    free(prev1);
    free(now);
    free(prev);
    kt_room_destroy(room);
}

/* An air-only room with a source that starts part-way and a fixed and a
 * moving microphone, for the mirror. */
static kt_room *mirror_room(kt_precision prec, double beta)
{
    kt_room_params p;
    kt_test_box(&p, 45, 37, 41, prec, beta, 0.0);
    kt_room *room = NULL;
    kt_error err;
    int rc = kt_room_create(&p, &room, &err);
    const double src[3] = {0.31 * p.size_m[0], 0.62 * p.size_m[1], 0.27 * p.size_m[2]};
    const double fixed[3] = {0.71 * p.size_m[0], 0.33 * p.size_m[1], 0.58 * p.size_m[2]};
    const double a[3] = {0.2 * p.size_m[0], 0.2 * p.size_m[1], 0.8 * p.size_m[2]};
    const double b[3] = {0.8 * p.size_m[0], 0.7 * p.size_m[1], 0.1 * p.size_m[2]};
    if (rc == KT_OK)
        rc = kt_room_add_impulse(room, src, 37.0 / p.sample_rate_hz, 11.0 / p.sample_rate_hz,
                                 1e-2, &err);
    if (rc == KT_OK)
        rc = kt_room_add_mic(room, "fixed", fixed, &err) < 0 ? -1 : KT_OK;
    int moving = rc == KT_OK ? kt_room_add_mic(room, "moving", a, &err) : -1;
    if (moving >= 0)
        rc = kt_room_mic_waypoint(room, moving, 0.0, a, &err);
    if (rc == KT_OK && moving >= 0)
        rc = kt_room_mic_waypoint(room, moving, 3000.0 / p.sample_rate_hz, b, &err);
    KT_CHECK(rc == KT_OK && moving >= 0, "mirror room: %s", err.message);
    return room;
}

/* `steps` steps of the room mirrored on the GPU at the blocking asked for;
 * the state comes home.  The blocking's name into name. */
static int run_mirror(kt_room *room, int depth, int tile, int64_t steps, char *name,
                      size_t name_len)
{
    kt_cuda_mirror *M = NULL;
    kt_error err;
    int rc = kt_cuda_mirror_create(room, &M, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_set_blocking(M, depth, tile, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_run(M, steps, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_download(M, &err);
    KT_CHECK(rc == KT_OK, "mirror (depth %d, tile %d): %s", depth, tile, err.message);
    const char *b = M ? kt_cuda_mirror_blocking(M) : NULL;
    snprintf(name, name_len, "%s", b ? b : "(not chosen)");
    kt_cuda_mirror_free(M);
    return rc;
}

/* Samples of every microphone that differ in their bytes; -1 when the
 * counts differ. */
static long differing_samples(const kt_room *a, const kt_room *b)
{
    long bad = 0;
    for (int m = 0; m < kt_room_mic_count(a); m++) {
        int64_t na, nb;
        const double *sa = kt_room_mic_signal(a, m, &na), *sb = kt_room_mic_signal(b, m, &nb);
        if (na != nb)
            return -1;
        for (int64_t s = 0; s < na; s++)
            bad += memcmp(sa + s, sb + s, sizeof *sa) != 0;
    }
    return bad;
}

/* The whole step on the device (kt_cuda_mirror): blocked passes serve the
 * source and both microphones at every level, through 3001 steps (a
 * microphone block of 2880 and part of the next; graphs of 96 steps and
 * single passes after them): samples and fields byte for byte those of the
 * mirror stepping one step at a time. */
static void mirror_case(kt_precision prec, double beta, int depth, int tile, const char *what)
{
    const int64_t steps = 3001;
    kt_room *one = mirror_room(prec, beta), *blk = mirror_room(prec, beta);
    char name[160];
    if (!one || !blk || run_mirror(one, 1, 0, steps, name, sizeof name) != KT_OK ||
        run_mirror(blk, depth, tile, steps, name, sizeof name) != KT_OK) {
        kt_room_destroy(one);
        kt_room_destroy(blk);
        return;
    }
    /* timed, a small room may well choose one step at a time */
    KT_CHECK(depth ? strncmp(name, "depth", 5) == 0 : strcmp(name, "(not chosen)") != 0,
             "%s: the mirror's blocking ('%s')", what, name);
    int64_t n = 0;
    const double *sig = kt_room_mic_signal(one, 1, &n);
    double peak = 0;
    for (int64_t s = 0; s < n; s++)
        peak = fmax(peak, fabs(sig[s]));
    KT_CHECK(n == steps && peak > 0, "%s: the moving microphone heard the source (%lld "
             "samples, peak %.3g)", what, (long long)n, peak);
    long bad = differing_samples(one, blk);
    KT_CHECK(bad == 0, "%s, %s: %ld microphone samples differ from one step at a time", what,
             name, bad);
    KT_CHECK(differing_nodes(one, one->now, blk->now) == 0 &&
                 differing_nodes(one, one->prev, blk->prev) == 0,
             "%s, %s: the fields differ from one step at a time", what, name);
    printf("%s: mirror blocked (%s): %lld samples, same bits\n", what, name, (long long)n);
    kt_room_destroy(one);
    kt_room_destroy(blk);
}

static void test_refusals(void)
{
    kt_room_params p;
    kt_test_box(&p, 12, 11, 10, KT_DOUBLE, 0.3, 2e-5);
    kt_cuda_room *gpu = NULL;
    kt_error err;
    int rc = kt_cuda_room_create(&p, &gpu, &err);
    KT_CHECK(rc == KT_OK, "viscous room: %s", err.message);
    if (rc != KT_OK)
        return;
    KT_CHECK(kt_cuda_room_set_blocking(gpu, 3, 0, &err) == KT_EINVAL &&
                 strstr(err.message, "viscosity"),
             "a viscous room refuses a depth, saying why ('%s')", err.message);
    KT_CHECK(strcmp(kt_cuda_room_blocking(gpu), "off") == 0, "a viscous room says 'off'");
    KT_CHECK(kt_cuda_room_set_blocking(gpu, 5, 0, &err) == KT_EINVAL, "depth 5 is refused");
    KT_CHECK(kt_cuda_room_set_blocking(gpu, 1, 0, &err) == KT_OK, "depth 1 (off) is taken");
    kt_cuda_room_free(gpu);
}

int main(void)
{
    if (kt_cuda_devices(NULL, 0) == 0) {
        printf("test_gpu_room_block: no GPU, skipped\n");
        return 77;
    }
    run_case(KT_DOUBLE, 0.3, "double, lossy");
    run_case(KT_SINGLE, 0.3, "single, lossy");
    run_case(KT_DOUBLE, 0.0, "double, rigid");
    run_case(KT_SINGLE, 0.0, "single, rigid");
    mirror_case(KT_DOUBLE, 0.3, 3, 1, "mirror, double, lossy, depth 3");
    mirror_case(KT_SINGLE, 0.0, 4, 2, "mirror, single, rigid, depth 4");
    mirror_case(KT_SINGLE, 0.3, 0, 0, "mirror, single, lossy, timed");
    test_refusals();
    return kt_test_finish("test_gpu_room_block");
}
#endif
