/* test_room_split.c - how a room splits over ranks (kt_ranks.h), the plan
 * the CPU ranks and the GPU ranks share: kt_room_split_plan's slabs agree
 * with kt_room_slab_plan's, the halo is one padded z-plane, a GPU slab's
 * fields are at least the host's (rows padded to 128-byte lines), the
 * axis with the smallest plane is named, and a microphone of a whole room
 * is always recorded at once (room_slab_mic_role). */
#include "kt_test.h"
#include "kt_ranks.h"
#include "room_ranks.h"

#include <stdio.h>

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
        KT_CHECK(kt_room_split_plan(&p, ranks, &sp, &err) == 0, "%d ranks: planned (%s)", ranks,
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
    KT_CHECK(kt_room_split_plan(&p, g.nz + 1, &sp, NULL) < 0, "more ranks than planes refused");
    kt_room *room = NULL;
    KT_CHECK(kt_room_create(&p, &room, NULL) == 0, "a whole room");
    double pos[3] = {1.0, 0.5, 0.6};
    KT_CHECK(room && room_slab_mic_role(room, pos) == ROOM_MIC_NOW,
             "a whole room records every microphone at once");
    kt_room_destroy(room);
    return kt_test_finish("test_room_split");
}
