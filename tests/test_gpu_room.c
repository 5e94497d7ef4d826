/* test_gpu_room.c - the GPU's bulk update of the room (room/gpu/room_sweep.cu)
 * against the CPU's (room/room_sweep_impl.h): the same room is stepped on
 * both from the same state, past an impulse, with lossy walls, in single and
 * double precision, with and without viscosity (3 and 2 grids), and both
 * fields must agree within 1e-10 relative in double (1e-5 in single), the
 * halo too (it holds the walls' ghosts: room/room_sweep_impl.h), and the
 * field must actually have moved.  The box has
 * odd sizes so thread blocks and z slabs end part-way.  Skipped (77)
 * without a GPU or a CUDA build. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_room: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kettle.h"
#include "kt_cuda_room.h"
#include "kt_test_room.h"

#include <stdlib.h>
#include <string.h>

/* Largest |gpu - cpu| over max |cpu|, nodes only (kt_test_room.h). */
static double compare(const kt_room *room, const void *cpu, const void *gpu)
{
    return kt_test_node_difference(room, cpu, room, gpu);
}

static void run_case(kt_precision prec, double viscosity_m, const char *what)
{
    const int warmup = 25, steps = 40;
    kt_room_params p;
    kt_test_box(&p, 45, 29, 83, prec, 0.3, viscosity_m);
    kt_room *room = NULL;
    kt_cuda_room *gpu = NULL;
    kt_error err;
    int rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_OK, "%s: room: %s", what, err.message);
    if (rc == KT_OK)
        rc = kt_cuda_room_create(&p, &gpu, &err);
    KT_CHECK(rc == KT_OK, "%s: GPU room: %s", what, err.message);
    if (rc != KT_OK) {
        kt_room_destroy(room);
        return;
    }
    const kt_room_grid *g = kt_cuda_room_grid(gpu);
    KT_CHECK(g->nx == room->plan.grid.nx && g->ny == room->plan.grid.ny && g->nz == room->plan.grid.nz,
             "%s: same grid (%d x %d x %d)", what, g->nx, g->ny, g->nz);
    KT_CHECK(kt_cuda_room_grids(gpu) == room->plan.grids, "%s: same number of grids", what);
    KT_CHECK(kt_cuda_room_padded_points(gpu) == room->plan.padded_points, "%s: same layout", what);

    /* A short pulse near a corner, so the wave reaches walls, edges and corners. */
    const double src[3] = {0.13 * p.size_m[0], 0.21 * p.size_m[1], 0.11 * p.size_m[2]};
    kt_room_add_impulse(room, src, 0.0, 8.0 / p.sample_rate_hz, 1e-2, &err);
    for (int s = 0; s < warmup; s++)
        kt_room_step(room, &err);

    const size_t bytes = room->plan.padded_points * kt_precision_bytes(prec);
    void *start = malloc(bytes), *now = malloc(bytes), *prev = malloc(bytes);
    memcpy(start, room->now, bytes);
    rc = kt_cuda_room_upload(gpu, room->now, room->prev, &err);
    KT_CHECK(rc == KT_OK, "%s: upload: %s", what, err.message);
    for (int s = 0; s < steps; s++)
        kt_room_step(room, &err);
    rc = kt_cuda_room_run(gpu, steps, &err);
    if (rc == KT_OK)
        rc = kt_cuda_sync(&err);
    KT_CHECK(rc == KT_OK, "%s: GPU run: %s", what, err.message);
    KT_CHECK(kt_cuda_room_step_index(gpu) == steps, "%s: step index", what);
    rc = kt_cuda_room_download(gpu, now, prev, &err);
    KT_CHECK(rc == KT_OK, "%s: download: %s", what, err.message);

    const double tol = prec == KT_SINGLE ? 1e-5 : 1e-10;
    double e_now = compare(room, room->now, now);
    double e_prev = compare(room, room->prev, prev);
    KT_CHECK(e_now <= tol, "%s: Psi^n differs from the CPU's by %.3g relative", what, e_now);
    KT_CHECK(e_prev <= tol, "%s: Psi^{n-1} differs from the CPU's by %.3g relative", what,
             e_prev);
    double moved_by = compare(room, start, now);
    KT_CHECK(moved_by > 0.1, "%s: the field did not evolve (%.3g)", what, moved_by);
    printf("%s: %d x %d x %d, relative difference %.3g (Psi^n), %.3g (Psi^{n-1})\n", what,
           g->nx, g->ny, g->nz, e_now, e_prev);
    free(start);
    free(now);
    free(prev);
    kt_cuda_room_free(gpu);
    kt_room_destroy(room);
}

static void test_refusals(void)
{
    kt_room_params p;
    kt_test_box(&p, 10, 10, 10, KT_DOUBLE, 0.1, 0);
    kt_cuda_room *gpu = NULL;
    kt_error err;
    KT_CHECK(kt_cuda_room_create(NULL, &gpu, &err) == KT_EINVAL, "NULL parameters refused");
    p.size_m[0] = 1e-4;
    KT_CHECK(kt_cuda_room_create(&p, &gpu, &err) == KT_EINVAL && gpu == NULL,
             "a room too small for the grid is refused");
}

int main(void)
{
    if (kt_cuda_devices(NULL, 0) == 0) {
        printf("test_gpu_room: no GPU, skipped\n");
        return 77;
    }
    run_case(KT_DOUBLE, 0.0, "double, 2 grids");
    run_case(KT_SINGLE, 0.0, "single, 2 grids");
    run_case(KT_DOUBLE, 2e-5, "double, 3 grids (viscosity)");
    run_case(KT_SINGLE, 2e-5, "single, 3 grids (viscosity)");
    test_refusals();
    return kt_test_finish("test_gpu_room");
}
#endif
