/* timpani_test.c - the thesis' reference test case (Table 7.2): a 29-inch
 * drum tuned to G2 (T = 2200 N/m) in a 1 m^3 box with anechoic walls
 * (beta = 0.5) at 44.1 kHz, struck once, ten solver iterations per step.
 * Renders a stereo WAV from two microphones above the drum (left, right) and
 * prints the grid sizes beside thesis Table 7.3.
 *
 *   timpani_test OUT.wav [SECONDS]      (default 1 s) */
#include "kettle.h"
#include "timpani.h"

#include <stdio.h>
#include <stdlib.h>

static int progress(void *user, int64_t done, int64_t total)
{
    (void)user;
    if (done % 4410 == 0 || done == total) {
        fprintf(stderr, "\r%5.1f %%", 100.0 * (double)done / (double)total);
        fflush(stderr);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s OUT.wav [SECONDS]\n", argv[0]);
        return 2;
    }
    double seconds = argc == 3 ? atof(argv[2]) : 1.0;
    if (!(seconds > 0.0 && seconds <= 600.0)) {
        fprintf(stderr, "%s: SECONDS must lie in (0, 600], got '%s'\n", argv[0], argv[2]);
        return 2;
    }
    kt_error err = {0};
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.wall_beta = 0.5;
    kt_room *room = NULL;
    kt_timpani *drum = NULL;
    kt_timpani_params p;
    const double left[3] = {0.3, 0.5, 0.85}, right[3] = {0.7, 0.5, 0.85};
    if (kt_room_create(&rp, &room, &err) < 0 || kt_timpani_params_standard(&p, 29, &err) < 0 ||
        createTimpani(room, &p, &drum, &err) < 0 ||
        kt_timpani_strike(drum, 0.0, 100.0, 2e-3, 0.22, 0.07, &err) < 0 ||
        kt_room_add_mic(room, "left", left, &err) < 0 ||
        kt_room_add_mic(room, "right", right, &err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        kt_room_destroy(room);
        return 1;
    }
    const kt_room_grid *g = kt_room_get_grid(room);
    kt_timpani_info info;
    kt_timpani_get_info(drum, &info);
    printf("                     this run              thesis Table 7.3\n");
    printf("air grid             %d x %d x %d          75 x 75 x 75\n", g->nx, g->ny, g->nz);
    printf("membrane grid        %d x %d (h %.3f mm)  170 x 170\n", info.membrane_n,
           info.membrane_n, 1e3 * info.membrane_spacing_m);
    printf("interaction window   %d x %d              55 x 55\n", info.window_nx, info.window_ny);
    printf("shell + lid rows     %d                12416 (docs/timpani.md)\n", info.boundary_rows);
    printf("membrane layers      %d / %d (0-based)\n", info.layer_below, info.layer_above);

    int64_t steps = (int64_t)(seconds * rp.sample_rate_hz + 0.5);
    double t0 = kt_seconds();
    int rc = kt_room_run(room, steps, progress, NULL, &err);
    double wall = kt_seconds() - t0;
    fprintf(stderr, "\n");
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        kt_room_destroy(room);
        return 1;
    }
    kt_output_options o;
    kt_output_options_default(&o);
    o.interleaved = 1;
    o.normalize = 1;
    kt_channel_summary sum[2];
    if (kt_room_write_audio(room, argv[1], &o, sum, &err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        kt_room_destroy(room);
        return 1;
    }
    kt_timpani_timing tt;
    kt_timpani_get_timing(drum, &tt);
    kt_timpani_get_info(drum, &info);
    printf("rendered %.2f s in %.2f s (%.3f ms per step; membrane %.3f ms of it), last solve "
           "%d iterations, increment %.2g\n",
           seconds, wall, 1e3 * wall / (double)steps,
           1e3 * (tt.rhs_s + tt.solve_s + tt.correct_s) / (double)tt.steps,
           info.last_iterations, info.last_increment);
    printf("wrote %s (peaks %.3f / %.3f of full scale)\n", argv[1], sum[0].peak, sum[1].peak);
    kt_room_destroy(room);
    return 0;
}
