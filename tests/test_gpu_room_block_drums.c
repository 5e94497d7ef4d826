/* test_gpu_room_block_drums.c - the GPU's blocked pass handing over to drums
 * (room/gpu/room_block.cu hand_over): a room with two timpani, lossy walls,
 * a source inside the instruments' band and one above it, a microphone on
 * the layers a drum corrects and one moving down through the band, mirrored
 * on the GPU (kt_cuda_mirror) and run 3001 steps (graphs of 96 steps across a
 * microphone block, single passes after them) in blocked passes of depth 2,
 * 3 and 4 (each with another of the tiles), and at the timed choice, equals
 * the same mirror one step at a time bit for bit: both fields node by node,
 * every sample, each drum's membrane and energy; single and double
 * precision.  A room whose drums fill half its height or more keeps the
 * one-step sweep and says why.  Skipped (77) without a GPU or a CUDA build. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_room_block_drums: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kettle.h"
#include "kt_cuda_room.h"
#include "kt_instrument.h"
#include "kt_test_block_drums.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_test_drummed drummed;

/* `steps` steps mirrored on the GPU at the blocking asked for (depth 1: one
 * step at a time; 0: timed); the state comes home, the choice's name into
 * name. */
static int run_mirror(drummed *d, int depth, int tile, int64_t steps, char *name,
                      size_t name_len, kt_error *err)
{
    kt_cuda_mirror *M = NULL;
    int rc = kt_cuda_mirror_create(d->room, &M, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_set_blocking(M, depth, tile, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_run(M, steps, err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_download(M, err);
    const char *b = M ? kt_cuda_mirror_blocking(M) : NULL;
    snprintf(name, name_len, "%s", b ? b : "(not chosen)");
    kt_cuda_mirror_free(M);
    return rc;
}

static void test_precision(kt_precision precision, const char *what)
{
    const int64_t steps = 3001;
    kt_error err;
    char name[200];
    drummed ref;
    int rc = kt_test_drummed_build(precision, 2.4, 0, 2000, &ref, &err);
    if (rc == KT_OK)
        rc = run_mirror(&ref, 1, 0, steps, name, sizeof name, &err);
    KT_CHECK(rc == KT_OK, "%s: one step at a time: %s", what, err.message);
    if (rc != KT_OK) {
        kt_room_destroy(ref.room);
        return;
    }
    int64_t count = 0;
    const double *edge = kt_room_mic_signal(ref.room, 0, &count);
    double peak = 0;
    for (int64_t s = 0; s < count; s++)
        peak = edge[s] > peak ? edge[s] : -edge[s] > peak ? -edge[s] : peak;
    KT_CHECK(count == steps && peak > 0 && kt_timpani_energy(ref.drum[0]) > 0,
             "%s: nothing sounded (%lld samples, peak %g)", what, (long long)count, peak);
    static const struct { int depth, tile; } runs[] = {{2, 1}, {3, 2}, {4, 3}, {4, 4}, {0, 0}};
    for (size_t c = 0; c < sizeof runs / sizeof runs[0]; c++) {
        drummed d;
        rc = kt_test_drummed_build(precision, 2.4, 0, 2000, &d, &err);
        if (rc == KT_OK)
            rc = run_mirror(&d, runs[c].depth, runs[c].tile, steps, name, sizeof name, &err);
        KT_CHECK(rc == KT_OK, "%s: depth %d, tile %d: %s", what, runs[c].depth, runs[c].tile,
                 err.message);
        /* a forced depth says so, with the drums' planes a step at a time */
        KT_CHECK(rc != KT_OK || runs[c].depth == 0 ||
                     (strncmp(name, "depth ", 6) == 0 && strstr(name, "a step at a time")),
                 "%s: depth %d: the mirror's blocking is '%s'", what, runs[c].depth, name);
        KT_CHECK(rc != KT_OK || kt_test_drummed_same_bits(&ref, &d),
                 "%s: %s: not the bits of one step at a time", what, name);
        if (rc == KT_OK)
            printf("%s: %s: %lld steps, same bits\n", what, name, (long long)steps);
        kt_room_destroy(d.room);
    }
    kt_room_destroy(ref.room);
}

/* A room of 1.1 m: the drums' planes are most of it; one step at a time. */
static void test_short_room(void)
{
    kt_error err;
    drummed d;
    kt_cuda_mirror *M = NULL;
    int rc = kt_test_drummed_build(KT_DOUBLE, 1.1, 0, 2000, &d, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_create(d.room, &M, &err);
    KT_CHECK(rc == KT_OK, "short room: %s", err.message);
    if (rc == KT_OK) {
        KT_CHECK(strcmp(kt_cuda_mirror_blocking(M), "off") == 0, "short room: blocking not off");
        KT_CHECK(kt_cuda_mirror_set_blocking(M, 4, 0, &err) == KT_EINVAL &&
                     strstr(err.message, "instruments' planes"),
                 "short room: no refusal naming the instruments' planes");
        printf("1.1 m room: refused: %s\n", err.message);
    }
    kt_cuda_mirror_free(M);
    kt_room_destroy(d.room);
}

int main(void)
{
    if (kt_cuda_devices(NULL, 0) == 0) {
        printf("test_gpu_room_block_drums: no GPU, skipped\n");
        return 77;
    }
    test_precision(KT_DOUBLE, "double");
    test_precision(KT_SINGLE, "single");
    test_short_room();
    return kt_test_finish("test_gpu_room_block_drums");
}

#endif
