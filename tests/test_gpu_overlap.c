/* test_gpu_overlap.c - the drums beside the air on the GPU (issue 21,
 * kt_cuda_mirror_set_overlap): two identical rooms with three drums, an
 * impulse and a fixed and a moving microphone, one mirrored with the sweep
 * split around the drums (far part on its own stream beside the drums),
 * the other with every stage in turn.  Samples and fields must agree bit for
 * bit after graph batches and single launches, in both precisions, with
 * lossy and with absorbing walls; a room the split cannot serve (viscosity)
 * must say so and still step.  Skipped (77) without a CUDA build or a GPU. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_overlap: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kt_cuda.h"
#include "kt_cuda_room.h"
#include "kt_test_room.h"
#include "timpani.h"

#include <string.h>

typedef struct room_case {
    kt_precision prec;
    int absorbing;
    double viscosity_m;
} room_case;

/* A 2.6 x 1.3 x 1.0 m room, three drums in a row struck at once (the
 * regions of the 23 and 26 inch drums overlap in y only), an impulse above
 * the 26 inch drum (its region over the drum's columns), a microphone above
 * and one walking past the drums. */
static kt_room *build(const room_case *c, kt_error *err)
{
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.size_m[0] = 2.6;
    rp.size_m[1] = 1.3;
    rp.size_m[2] = 1.0;
    rp.precision = c->prec;
    rp.wall_beta = c->absorbing ? 0.0 : 0.4;
    rp.wall_model = c->absorbing ? KT_WALL_ENGQUIST_MAJDA : KT_WALL_LOSSY;
    rp.viscosity_m = c->viscosity_m;
    kt_room *room = NULL;
    if (kt_room_create(&rp, &room, err) < 0)
        return NULL;
    static const struct { int inches; double x_m, y_m; } set[3] = {
        {23, 0.45, 0.60}, {26, 1.20, 0.62}, {29, 2.10, 0.60}};
    for (int k = 0; k < 3; k++) {
        kt_timpani_params p;
        kt_timpani *t = NULL;
        if (kt_timpani_params_standard(&p, set[k].inches, err) < 0)
            goto fail;
        p.rim_centre_m[0] = set[k].x_m;
        p.rim_centre_m[1] = set[k].y_m;
        p.rim_centre_m[2] = 0.75;
        if (createTimpani(room, &p, &t, err) < 0 ||
            kt_timpani_strike(t, 1e-4 * (k + 1), 60.0 + 20 * k, 1e-3, 0.2, 0.05, err) < 0)
            goto fail;
    }
    const double impulse[3] = {1.2, 0.62, 0.9}, above[3] = {1.0, 0.95, 0.9};
    const double from[3] = {0.2, 1.1, 0.7}, to[3] = {2.4, 0.3, 0.8};
    int walker;
    if (kt_room_add_impulse(room, impulse, 2e-4, 3e-4, 1e-3, err) < 0 ||
        kt_room_add_mic(room, "above", above, err) < 0 ||
        (walker = kt_room_add_mic(room, "walker", from, err)) < 0 ||
        kt_room_mic_waypoint(room, walker, 0.0, from, err) < 0 ||
        kt_room_mic_waypoint(room, walker, 0.02, to, err) < 0)
        goto fail;
    return room;
fail:
    kt_room_destroy(room);
    return NULL;
}

/* Steps the room on the GPU in a graph-sized piece and an odd one; returns
 * what kt_cuda_mirror_set_overlap said. */
static int run(kt_room *room, int overlap, int steps, const char *what)
{
    kt_error err;
    kt_cuda_mirror *M = NULL;
    int rc = kt_cuda_mirror_create(room, &M, &err);
    KT_CHECK(rc == KT_OK, "%s: mirror: %s", what, err.message);
    if (rc < 0)
        return -1;
    const int said = kt_cuda_mirror_set_overlap(M, overlap, &err);
    rc = kt_cuda_mirror_run(M, 2 * 96, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_run(M, steps - 2 * 96, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_download(M, &err);
    KT_CHECK(rc == KT_OK, "%s: GPU run: %s", what, err.message);
    kt_cuda_mirror_free(M);
    return said;
}

static void compare(const room_case *c, int expect_overlap, const char *what)
{
    kt_error err;
    kt_room *split = build(c, &err), *serial = split ? build(c, &err) : NULL;
    KT_CHECK(split && serial, "%s: rooms: %s", what, err.message);
    if (!split || !serial) {
        kt_room_destroy(split);
        return;
    }
    const int steps = 2 * 96 + 61;
    const int said = run(split, 1, steps, what);
    KT_CHECK(said == expect_overlap, "%s: overlap %d, expected %d", what, said, expect_overlap);
    KT_CHECK(run(serial, 0, steps, what) == 0, "%s: overlap off refused", what);
    for (int m = 0; m < kt_room_mic_count(split); m++) {
        int64_t na = 0, nb = 0;
        const double *a = kt_room_mic_signal(split, m, &na), *b = kt_room_mic_signal(serial, m, &nb);
        KT_CHECK(na == steps && nb == steps, "%s: %lld and %lld samples", what, (long long)na,
                 (long long)nb);
        if (na == nb && na == steps) {
            KT_CHECK(memcmp(a, b, sizeof *a * (size_t)na) == 0,
                     "%s: microphone %d differs by %.3g relative", what, m,
                     kt_test_max_diff(a, b, (int)na) / kt_test_max_abs(b, (int)nb));
            KT_CHECK(kt_test_max_abs(a, (int)na) > 0, "%s: microphone %d heard nothing", what, m);
        }
    }
    void *an, *ap, *bn, *bp;
    room_fields(split, &an, &ap);
    room_fields(serial, &bn, &bp);
    const double dn = kt_test_node_difference(serial, bn, split, an);
    const double dp = kt_test_node_difference(serial, bp, split, ap);
    KT_CHECK(dn == 0 && dp == 0, "%s: fields differ by %.3g and %.3g relative", what, dn, dp);
    kt_room_destroy(split);
    kt_room_destroy(serial);
}

int main(void)
{
    if (kt_cuda_devices(NULL, 0) == 0) {
        printf("test_gpu_overlap: no GPU, skipped\n");
        return 77;
    }
    const room_case lossy_d = {KT_DOUBLE, 0, 0}, lossy_s = {KT_SINGLE, 0, 0};
    const room_case absorbing_d = {KT_DOUBLE, 1, 0}, viscous = {KT_DOUBLE, 0, 1e-5};
    compare(&lossy_d, 1, "lossy walls, double");
    compare(&lossy_s, 1, "lossy walls, single");
    compare(&absorbing_d, 1, "absorbing walls, double");
    compare(&viscous, 0, "viscosity (three grids: not split)");
    return kt_test_finish("test_gpu_overlap");
}
#endif
