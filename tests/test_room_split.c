/* test_room_split.c - how a room splits over ranks (kt_ranks.h), the plan
 * the CPU ranks and the GPU ranks share: kt_room_split_plan's slabs agree
 * with kt_room_slab_plan's, the halo is one padded z-plane, a GPU slab's
 * fields are at least the host's (rows padded to 128-byte lines), the
 * axis with the smallest plane is named, and a microphone of a whole room
 * is always recorded at once (room_slab_mic_role).  The choice of axis
 * (issue #22): a room 3 m long in x is cut along z (its x layer is the
 * smallest but strided), one 12 m long along x, its slabs cover it and its
 * halo is the x-layer; a drum near a balanced cut moves the cut off it; a
 * drum across every cut near balance sends the choice to the next axis, and
 * an x cut asked for through it is refused with the drum's name.  A rank's
 * layer across x or y packs and unpacks its own rows and planes in order
 * (room_slab_layer_copy, the GPU job's host halo). */
#include "kt_test.h"
#include "kt_ranks.h"
#include "room_ranks.h"
#include "room_slab.h"

#include <stdio.h>
#include <string.h>

/* The layer packing of the rank holding columns (axis 0) or rows (axis 1)
 * 3..6 of a 9 x 8 x 5 room: its layer 3 out in (z, y) or (z, x) order, and
 * back into its halo layer 2. */
static void check_layer_copy(int axis)
{
    kt_room_params p;
    kt_test_box(&p, 9, 8, 5, KT_DOUBLE, 0.0, 0.0);
    int lo[3] = {0, 0, 0}, hi[3] = {-1, -1, -1};
    kt_room_grid g;
    kt_room_estimate(&p, &g, NULL);
    hi[0] = g.nx, hi[1] = g.ny, hi[2] = g.nz;
    lo[axis] = 3, hi[axis] = 7;
    kt_room *room = NULL;
    kt_error err = {0};
    int rc = room_create_box(&p, lo, hi, &room, &err);
    const int cut[3] = {0, 3, 7};
    static const room_transport none = {0};
    if (rc == 0)
        rc = room_slab_attach(room, 1, 2, axis, cut, &none, NULL, &err);
    KT_CHECK(rc == 0, "a rank's box along %c: %s", "xy"[axis], err.message);
    if (rc < 0) {
        kt_room_destroy(room);
        return;
    }
    double *f = room->now;
    for (int z = lo[2]; z < hi[2]; z++)
        for (int y = lo[1]; y < hi[1]; y++)
            for (int x = lo[0]; x < hi[0]; x++)
                f[room_pidx(room, x, y, z)] = 1000.0 * z + 100.0 * y + x;
    const int n1 = axis == 0 ? g.ny : 4, n2 = g.nz, along = axis == 0 ? g.ny : g.nx;
    double buf[512];
    size_t bytes = room_slab_layer_copy(room, f, 3, NULL, 0);
    KT_CHECK(bytes == (size_t)along * g.nz * sizeof(double) && bytes <= sizeof buf,
             "%c: a layer of %zu bytes", "xy"[axis], bytes);
    if (bytes > sizeof buf) {
        kt_room_destroy(room);
        return;
    }
    room_slab_layer_copy(room, f, 3, buf, 1);
    int bad = 0;
    for (int z = 0; z < n2; z++)
        for (int u = 0; u < along; u++) {
            int x = axis == 0 ? 3 : u, y = axis == 0 ? u : 3;
            bad += buf[z * along + u] != 1000.0 * z + 100.0 * y + x;
        }
    room_slab_layer_copy(room, f, 2, buf, 0);   /* into the halo layer */
    for (int z = 0; z < n2; z++)
        for (int u = 0; u < along; u++) {
            int x = axis == 0 ? 2 : u, y = axis == 0 ? u : 2;
            bad += f[room_pidx(room, x, y, z)] != 1000.0 * z + 100.0 * (y + axis) + x + !axis;
        }
    (void)n1;
    KT_CHECK(bad == 0, "%c: %d values of the packed layer out of place", "xy"[axis], bad);
    kt_room_destroy(room);
}

/* Rank r's columns along x under these options. */
static void columns(const kt_room_params *p, int ranks, const kt_split_options *so, int r,
                    int out[2])
{
    int lo[3] = {0}, hi[3] = {0};
    kt_room_split_part(p, ranks, so, r, lo, hi, NULL, NULL);
    out[0] = lo[0], out[1] = hi[0];
}

/* p: a room 3 m long in x (the x layer the smallest, but strided: z is
 * chosen); then one 12 m long (cut along x). */
static void check_choice(const kt_room_params *p3)
{
    kt_split_options so;
    kt_split_options_default(&so);
    kt_room_split sp;
    kt_error err = {0};
    KT_CHECK(kt_room_split_plan(p3, 2, &so, &sp, &err) == 0 && sp.axis == 2 && sp.best_axis == 0,
             "a room 3 m long: cut along %d (want z: an x layer of %zu bytes costs more than "
             "z's %zu, strided)", sp.axis, sp.best_halo_bytes, sp.halo_bytes);
    kt_room_params room = *p3, *p = &room;
    room.size_m[0] = 12.0;
    kt_room_grid grid, *g = &grid;
    kt_room_estimate(p, g, NULL);
    for (int ranks = 2; ranks <= 3; ranks++) {
        KT_CHECK(kt_room_split_plan(p, ranks, &so, &sp, &err) == 0 && sp.axis == 0 &&
                     sp.halo_bytes == (size_t)(g->ny + 2) * (g->nz + 2) * sizeof(double),
                 "%d ranks: a room long in x is cut along x (axis %d, %s)", ranks, sp.axis,
                 err.message);
        int covered = 0, c[2];
        for (int r = 0; r < ranks; r++) {
            columns(p, ranks, &so, r, c);
            covered += c[0] == covered ? c[1] - c[0] : -g->nx;
        }
        KT_CHECK(covered == g->nx, "%d ranks: the x slabs cover the %d columns", ranks, g->nx);
    }
    /* a drum of 0.6 m just past the middle: the cut of 2 ranks moves off it */
    kt_room_keep drum = {"drum timp26", {5.8, 0.2, 0.2}, {6.4, 0.8, 0.8}};
    so.keep = &drum;
    so.keep_count = 1;
    int c[2];
    columns(p, 2, &so, 1, c);
    double Q = g->spacing_m;
    KT_CHECK(kt_room_split_plan(p, 2, &so, &sp, &err) == 0 && sp.axis == 0 &&
                 (c[0] - 1) * Q < 5.8 - Q && c[0] != g->nx / 2,
             "a cut moved off the drum: rank 1 from column %d (x = %.3f m), drum from 5.8 m",
             c[0], c[0] * Q);
    /* a region of 4 m across the middle: no x cut near balance; z is next */
    kt_room_keep wide = {"drum wide", {4.0, 0.2, 0.2}, {8.0, 0.8, 0.8}};
    so.keep = &wide;
    KT_CHECK(kt_room_split_plan(p, 2, &so, &sp, &err) == 0 && sp.axis == 2,
             "a drum across every x cut near balance: split along %d (want z)", sp.axis);
    so.axis = KT_SPLIT_X;
    int rc = kt_room_split_plan(p, 2, &so, &sp, &err);
    KT_CHECK(rc < 0 && strstr(err.message, "drum wide") && strstr(err.message, "along x"),
             "an x cut through the drum refused: %d (%s)", rc, err.message);
    so.axis = KT_SPLIT_Y;
    KT_CHECK(kt_room_split_plan(p, 2, &so, &sp, &err) < 0 && strstr(err.message, "drum wide"),
             "a y cut through the drum refused (%s)", err.message);
    kt_split_axis axis;
    KT_CHECK(kt_split_axis_parse("y", &axis) == 0 && axis == KT_SPLIT_Y &&
                 kt_split_axis_parse("auto", &axis) == 0 && axis == KT_SPLIT_AUTO &&
                 kt_split_axis_parse("w", &axis) < 0,
             "the axis' names");
}

int main(void)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 3.0, p.size_m[1] = 1.0, p.size_m[2] = 1.2; /* longest along x */
    p.sample_rate_hz = 8000;
    kt_room_grid g;
    KT_CHECK(kt_room_estimate(&p, &g, NULL) == 0, "the room has a grid");
    for (int ranks = 1; ranks <= 5; ranks++) {
        kt_room_split sp;
        kt_error err = {0};
        kt_split_options zo;
        kt_split_options_default(&zo);
        zo.axis = KT_SPLIT_Z;
        KT_CHECK(kt_room_split_plan(&p, ranks, &zo, &sp, &err) == 0, "%d ranks: planned (%s)", ranks,
                 err.message);
        int lo = g.nz, hi = 0, total = 0;
        size_t most = 0;
        for (int r = 0; r < ranks; r++) {
            int planes[2];
            size_t bytes = 0;
            kt_room_slab_plan(&p, ranks, r, planes, &bytes, NULL);
            int k = planes[1] - planes[0];
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
            total += k;
            most = bytes > most ? bytes : most;
        }
        KT_CHECK(total == g.nz && sp.planes_min == lo && sp.planes_max == hi && hi - lo <= 1,
                 "%d ranks: slabs of %d..%d planes cover the %d planes", ranks, sp.planes_min,
                 sp.planes_max, g.nz);
        KT_CHECK(sp.host_bytes_max == most, "%d ranks: the largest slab's bytes (%zu, %zu)",
                 ranks, sp.host_bytes_max, most);
        KT_CHECK(sp.device_bytes_max >= sp.host_bytes_max,
                 "%d ranks: a GPU slab holds at least the host's (%zu >= %zu)", ranks,
                 sp.device_bytes_max, sp.host_bytes_max);
        KT_CHECK(sp.halo_bytes == (size_t)(g.nx + 2) * (g.ny + 2) * sizeof(double),
                 "%d ranks: the halo is one padded z-plane (%zu bytes)", ranks, sp.halo_bytes);
        KT_CHECK(sp.axis == 2 && sp.best_axis == 0 &&
                     sp.best_halo_bytes == (size_t)(g.ny + 2) * (g.nz + 2) * sizeof(double),
                 "%d ranks: split along z, and x named as the axis of the smallest plane",
                 ranks);
    }
    kt_room_split sp;
    kt_split_options zo;
    kt_split_options_default(&zo);
    zo.axis = KT_SPLIT_Z;
    KT_CHECK(kt_room_split_plan(&p, g.nz + 1, &zo, &sp, NULL) < 0,
             "more ranks than planes refused");
    check_choice(&p);
    check_layer_copy(0);
    check_layer_copy(1);
    kt_room *room = NULL;
    KT_CHECK(kt_room_create(&p, &room, NULL) == 0, "a whole room");
    double pos[3] = {1.0, 0.5, 0.6};
    KT_CHECK(room && room_slab_mic_role(room, pos) == ROOM_MIC_NOW,
             "a whole room records every microphone at once");
    kt_room_destroy(room);
    return kt_test_finish("test_room_split");
}
