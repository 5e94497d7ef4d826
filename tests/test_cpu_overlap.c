/* test_cpu_overlap.c - the drums beside each other and the air on the CPU's
 * threads (issue 21, kt_room_set_overlap, room/room_overlap.c).  The
 * five-drum set rendered with every stage in turn on one thread, split on
 * one thread and on two, and with only the drums side by side on two gives
 * the same samples bit for bit, and the split renders really split their
 * steps.  Rooms with three drums, an
 * impulse inside a drum's box and one outside, lossy and absorbing walls:
 * split on two threads and serial on one agree bit for bit in samples and
 * fields, the steps while the inner impulse sounds and every step of the
 * absorbing room take the serial order (drums still side by side).  An
 * instrument whose process_z planes leave its box is refused. */
#include "kt_render.h"
#include "kt_test.h"
#include "kt_test_drums.h"
#include "kt_test_room.h"
#include "timpani.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The sweep times its plans over the room's first steps (room_sweep.c);
 * those are not split. */
#define TIMED_STEPS 12

static double *render_set(int threads, kt_overlap overlap, int64_t *count, int64_t *split)
{
    static const int order[5] = {0, 1, 2, 3, 4};
    char orc[4096], sco[1024];
    kt_test_set_orc(orc, sizeof orc, 11025, order, 5);
    kt_test_set_sco(sco, sizeof sco, 5);
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_CPU;
    o.nthreads = threads;
    o.cpu_overlap = overlap;
    o.tail_s = 0.01;
    kt_render_result res;
    double *x = kt_test_render_all(orc, sco, &o, count, &res);
    *split = res.overlapped_steps;
    const int64_t expect = overlap == KT_OVERLAP_AIR ? res.steps - TIMED_STEPS : 0;
    KT_CHECK(res.overlapped_steps == expect,
             "%d thread(s), overlap %d: %lld of %lld steps split", threads, overlap,
             (long long)res.overlapped_steps, (long long)res.steps);
    kt_render_result_free(&res);
    return x;
}

static void five_drums(void)
{
    const int threads = omp_get_num_procs() >= 2 ? 2 : 1;
    static const kt_overlap mode[4] = {KT_OVERLAP_NONE, KT_OVERLAP_AIR, KT_OVERLAP_AIR,
                                       KT_OVERLAP_DRUMS};
    int64_t n[4], split[4];
    double *x[4];
    for (int k = 0; k < 4; k++)
        x[k] = render_set(k < 2 ? 1 : threads, mode[k], &n[k], &split[k]);
    for (int k = 1; k < 4; k++) {
        KT_CHECK(x[0] && x[k] && n[k] == n[0] &&
                     memcmp(x[k], x[0], sizeof *x[0] * (size_t)n[0]) == 0,
                 "five drums, mode %d on %d thread(s), differ from the serial render by %.3g of "
                 "the peak", (int)mode[k], k < 2 ? 1 : threads,
                 kt_test_relative_difference(x[k], n[k], x[0], n[0]));
        free(x[k]);
    }
    KT_CHECK(x[0] && kt_test_max_abs(x[0], (int)n[0]) > 1e-6, "the set was not heard");
    printf("five drums: %lld samples compared, %lld of the steps split\n", (long long)n[0],
           (long long)split[2]);
    free(x[0]);
}

/* A 2.6 x 1.3 x 1.0 m room, three drums in a row, an impulse inside the 26
 * inch drum's box (in its bowl) while `inner` and one in the open,
 * two microphones. */
static kt_room *build(int absorbing, int threads, int inner, kt_error *err)
{
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.size_m[0] = 2.6;
    rp.size_m[1] = 1.3;
    rp.size_m[2] = 1.0;
    rp.sample_rate_hz = 11025;
    rp.nthreads = threads;
    rp.wall_beta = absorbing ? 0.0 : 0.4;
    rp.wall_model = absorbing ? KT_WALL_ENGQUIST_MAJDA : KT_WALL_LOSSY;
    kt_room *room = NULL;
    if (kt_room_create(&rp, &room, err) < 0)
        return NULL;
    static const struct { int inches; double x_m, y_m; } set[3] = {
        {23, 0.45, 0.60}, {26, 1.25, 0.62}, {29, 2.10, 0.60}};
    for (int k = 0; k < 3; k++) {
        kt_timpani_params p;
        kt_timpani *t = NULL;
        if (kt_timpani_params_standard(&p, set[k].inches, err) < 0)
            goto fail;
        p.rim_centre_m[0] = set[k].x_m;
        p.rim_centre_m[1] = set[k].y_m;
        p.rim_centre_m[2] = 0.75;
        p.nthreads = threads;
        if (createTimpani(room, &p, &t, err) < 0 ||
            kt_timpani_strike(t, 1e-3 * (k + 1), 60.0 + 20 * k, 1e-3, 0.2, 0.05, err) < 0)
            goto fail;
    }
    const double in_box[3] = {1.25, 0.62, 0.6}, open[3] = {1.7, 1.1, 0.8};
    const double m1[3] = {1.0, 0.95, 0.9}, m2[3] = {0.3, 0.2, 0.7};
    if ((inner && kt_room_add_impulse(room, in_box, 2e-3, 2e-3, 1e-3, err) < 0) ||
        kt_room_add_impulse(room, open, 1e-3, 1e-3, 1e-3, err) < 0 ||
        kt_room_add_mic(room, "a", m1, err) < 0 || kt_room_add_mic(room, "b", m2, err) < 0)
        goto fail;
    return room;
fail:
    kt_room_destroy(room);
    return NULL;
}

/* Split on two threads against serial on one; expect: which steps split. */
static void compare(int absorbing, int inner, const char *what)
{
    const int steps = 160, threads = omp_get_num_procs() >= 2 ? 2 : 1;
    kt_error err;
    kt_room *split = build(absorbing, threads, inner, &err);
    kt_room *serial = split ? build(absorbing, 1, inner, &err) : NULL;
    KT_CHECK(split && serial, "%s: rooms: %s", what, err.message);
    if (!split || !serial) {
        kt_room_destroy(split);
        return;
    }
    kt_room_set_overlap(serial, KT_OVERLAP_NONE);
    int rc = kt_room_run(split, steps, NULL, NULL, &err);
    KT_CHECK(rc == KT_OK, "%s: split run: %s", what, err.message);
    rc = kt_room_run(serial, steps, NULL, NULL, &err);
    KT_CHECK(rc == KT_OK, "%s: serial run: %s", what, err.message);
    kt_room_timing ts, tr;
    kt_room_get_timing(split, &ts);
    kt_room_get_timing(serial, &tr);
    /* the inner impulse sounds from 2 to 4 ms: levels 23..44 at 11025 Hz */
    const int64_t expect = absorbing ? 0 : steps - TIMED_STEPS - (inner ? 22 : 0);
    KT_CHECK(ts.overlapped_steps == expect && tr.overlapped_steps == 0,
             "%s: %lld steps split (expected %lld), %lld with overlap off", what,
             (long long)ts.overlapped_steps, (long long)expect, (long long)tr.overlapped_steps);
    for (int m = 0; m < kt_room_mic_count(split); m++) {
        int64_t na = 0, nb = 0;
        const double *a = kt_room_mic_signal(split, m, &na);
        const double *b = kt_room_mic_signal(serial, m, &nb);
        KT_CHECK(na == steps && nb == steps && memcmp(a, b, sizeof *a * (size_t)na) == 0,
                 "%s: microphone %d differs by %.3g", what, m,
                 na == nb ? kt_test_max_diff(a, b, (int)na) : -1.0);
        KT_CHECK(kt_test_max_abs(a, (int)na) > 0, "%s: microphone %d heard nothing", what, m);
    }
    void *an, *ap, *bn, *bp;
    room_fields(split, &an, &ap);
    room_fields(serial, &bn, &bp);
    double dn = kt_test_node_difference(serial, bn, split, an);
    double dp = kt_test_node_difference(serial, bp, split, ap);
    KT_CHECK(dn == 0 && dp == 0, "%s: fields differ by %.3g and %.3g", what, dn, dp);
    printf("%s: %lld of %d steps split, samples and fields compared\n", what,
           (long long)ts.overlapped_steps, steps);
    kt_room_destroy(split);
    kt_room_destroy(serial);
}

/* process_z must name planes of the instrument's own box. */
static void bad_planes(void)
{
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.sample_rate_hz = 11025;
    kt_room *room = NULL;
    kt_error err;
    KT_CHECK(kt_room_create(&rp, &room, &err) == KT_OK, "room: %s", err.message);
    if (!room)
        return;
    kt_instrument ins;
    memset(&ins, 0, sizeof ins);
    for (int d = 0; d < 3; d++) {
        ins.box_lo[d] = 3;
        ins.box_hi[d] = 6;
    }
    ins.process_z[0] = 6;
    ins.process_z[1] = 7;
    int rc = kt_room_add_instrument(room, &ins, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "not within its box"),
             "planes 6..7 of a box 3..6 accepted (%d: %s)", rc, rc < 0 ? err.message : "");
    ins.process_z[1] = 6;
    rc = kt_room_add_instrument(room, &ins, &err);
    KT_CHECK(rc == KT_OK, "planes 6..6 of a box 3..6 refused: %s", err.message);
    kt_room_remove_instrument(room, &ins);
    kt_room_destroy(room);
}

int main(void)
{
    bad_planes();
    five_drums();
    compare(0, 0, "lossy walls");
    compare(0, 1, "lossy walls, an impulse inside a box");
    compare(1, 0, "absorbing walls (not split)");
    return kt_test_finish("test_cpu_overlap");
}
