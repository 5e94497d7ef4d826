/* bench_drum.c - the reference case of `kettle bench timpani` and of its GPU
 * rows: the thesis' 29-inch drum in the 1 m^3 box (bench_gpu.h). */
#include "bench_gpu.h"
#include "timpani.h"

int bench_reference_drum(int format, int solver, int room_threads, int membrane_threads,
                         kt_room **room_out, kt_timpani **drum_out, kt_error *err)
{
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.wall_beta = 0.5;
    rp.nthreads = room_threads;
    kt_timpani_params p;
    const double left[3] = {0.3, 0.5, 0.85}, right[3] = {0.7, 0.5, 0.85};
    kt_room *room = NULL;
    kt_timpani *drum = NULL;
    int rc = kt_room_create(&rp, &room, err);
    if (rc == KT_OK && format >= 0) {
        rc = kt_timpani_params_standard(&p, 29, err);
        if (rc == KT_OK) {
            p.format = (kt_timpani_format)format;
            p.solver = (kt_timpani_solver)solver;
            p.solver_iterations = 10;   /* as the thesis' test */
            p.nthreads = membrane_threads;
            rc = createTimpani(room, &p, &drum, err);
        }
        if (rc == KT_OK)
            rc = kt_timpani_strike(drum, 0.0, 50.0, 1e-3, 0.22, 0.07, err);
    }
    if (rc == KT_OK && kt_room_add_mic(room, "left", left, err) < 0)
        rc = err->code;
    if (rc == KT_OK && kt_room_add_mic(room, "right", right, err) < 0)
        rc = err->code;
    if (rc < 0) {
        kt_room_destroy(room);
        return rc;
    }
    *room_out = room;
    if (drum_out)
        *drum_out = drum;
    return KT_OK;
}
