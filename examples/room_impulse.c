/* room_impulse.c - the impulse response of a box of air: a raised-cosine
 * source and two microphones in a 1.2 x 1.0 x 0.8 m room with slightly
 * absorbing walls, 0.3 s at 44.1 kHz, written as a stereo WAV.
 *
 *   room_impulse [OUT.wav [SECONDS]]      (default room_impulse.wav, 0.3 s) */
#include "kettle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, const kt_error *err)
{
    fprintf(stderr, "room_impulse: %s: %s\n", what, err->message);
    return 1;
}

static int progress(void *user, int64_t done, int64_t total)
{
    (void)user;
    if (done % 4096 == 0 || done == total)
        fprintf(stderr, "\r%lld / %lld steps", (long long)done, (long long)total);
    if (done == total)
        fputc('\n', stderr);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "room_impulse.wav";
    double seconds = argc > 2 ? atof(argv[2]) : 0.3;
    if (argc > 3 || !(seconds > 0.0 && seconds <= 60.0)) {
        fprintf(stderr, "usage: room_impulse [OUT.wav [SECONDS]]   (SECONDS in (0, 60])\n");
        return 2;
    }
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 1.2;
    p.size_m[1] = 1.0;
    p.size_m[2] = 0.8;
    p.wall_beta = 0.05;
    kt_error err;
    kt_room *room;
    if (kt_room_create(&p, &room, &err) < 0)
        return fail("creating the room", &err);
    const kt_room_grid *g = kt_room_get_grid(room);
    printf("grid %d x %d x %d nodes, spacing %.2f mm, Courant %.6f, %.1f MiB\n", g->nx, g->ny,
           g->nz, 1e3 * g->spacing_m, g->courant, g->bytes / 1048576.0);
    const double source[3] = {0.3, 0.35, 0.25};
    const double left[3] = {0.8, 0.55, 0.5}, right[3] = {0.9, 0.7, 0.5};
    if (kt_room_add_impulse(room, source, 0.0, 0.5e-3, 1e-3, &err) < 0 ||
        kt_room_add_mic(room, "left", left, &err) < 0 ||
        kt_room_add_mic(room, "right", right, &err) < 0) {
        kt_room_destroy(room);
        return fail("setting up", &err);
    }
    int64_t steps = (int64_t)(seconds * p.sample_rate_hz);
    if (kt_room_run(room, steps, progress, NULL, &err) < 0) {
        kt_room_destroy(room);
        return fail("running", &err);
    }
    /* air alone: several steps per pass through memory (kettle.h, kt_room_set_blocking) */
    printf("temporal blocking: %s\n", kt_room_blocking(room) ? kt_room_blocking(room) : "timing");
    kt_output_options o;
    kt_output_options_default(&o);
    kt_channel_summary sum[2];
    if (kt_room_write_audio(room, path, &o, sum, &err) < 0) {
        kt_room_destroy(room);
        return fail("writing", &err);
    }
    for (int m = 0; m < 2; m++)
        printf("%s: %-5s peak %.3f (%.2f dBFS), %lld clipped samples\n", path,
               kt_room_mic_name(room, m), sum[m].peak, 20 * log10(sum[m].peak),
               (long long)sum[m].clipped);
    kt_room_destroy(room);
    return 0;
}
