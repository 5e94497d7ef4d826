/* mpi_checkpoint.c - a render whose room is split over MPI ranks, stopped
 * part-way, leaves one checkpoint part per rank; resumed over the same
 * ranks it writes the same samples as the render that was never stopped.
 * The piece has a drum whose membrane layers straddle the slab boundary, a
 * microphone whose cell straddles it (its samples wait a step for the
 * plane above, so a checkpoint must not lose them) and one moving across
 * it; the guard's energy checks run on the split room all along (over
 * ranks they were skipped before: the energy was NaN), and a room whose
 * energy grows is stopped on every rank at once.  Rank 0 also checks
 * that the checkpoint is refused by another number of ranks, naming the
 * number to resume it with.  The stop and resume again in the same room
 * with a lossy solid across the boundary (a shaped room's ranks keep the
 * list of their own planes).  And split along x (issue #22): a room long in
 * x, its drum clear of the cut, a microphone whose cell straddles the cut
 * and one moving across it, stopped and resumed (the axis is kept in the
 * checkpoint) to the samples of the render never stopped (tests/mpi_snapshot.sh
 * compares such a render with one process's).  Run under mpirun -np 2. */
#include "kt_checkpoint.h"
#include "kt_guard.h"
#include "kt_ranks.h"
#include "kt_test.h"
#include "kt_tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SR_HZ 16000

static char dir[96];
static int split_x;               /* kt_test_piece_along's room, split along x */

static void options(kt_render_options *opt)
{
    kt_render_options_default(opt);
    opt->device = KT_DEVICE_CPU;
    opt->nthreads = 1;
    opt->tail_s = 0.05;
    opt->tuning = KT_TUNING_MODEL;
    opt->output.sample_format = KT_FLOAT64;
    opt->output.raw_gain = 1;
    /* checks every 256 steps, never spaced out by their cost: on a loaded
     * host a check over 0.1 s stretched the period and the stop missed step
     * 1024 (kt_guard.h) */
    opt->check_every_steps = KT_GUARD_CHECK_STEPS;
    if (split_x)
        opt->split_axis = KT_SPLIT_X;
}

/* Stopping after `stop` steps (0: never), checkpointing to ck. */
static int render(const char *orc, const char *sco, const char *out, const char *ck,
                  int64_t stop, kt_render_result *res, kt_score_error *err)
{
    kt_performance perf;
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "piece.orc", orc, "piece.sco", sco, err);
    kt_test_stopper st = {0, stop};
    if (rc == 0) {
        kt_render_options opt;
        options(&opt);
        opt.checkpoint_path = ck;
        opt.stop = stop > 0 ? kt_test_stop_at : NULL;
        opt.user = &st;
        rc = kt_render(&perf, out, &opt, res, err);
        KT_CHECK(rc < 0 || res->split_axis == (split_x ? 0 : 2),
                 "rank %d: split along %d", kt_mpi_rank(), res->split_axis);
    }
    kt_performance_free(&perf);
    return rc;
}

static int resume(const char *ck, kt_render_result *res, kt_score_error *err)
{
    kt_checkpoint *c;
    kt_error e = {0};
    int rc = kt_checkpoint_open(ck, &c, &e);
    KT_CHECK(rc == 0, "rank %d opens its part of %s: %s", kt_mpi_rank(), ck, e.message);
    if (rc < 0)
        return rc;
    kt_performance perf;
    kt_performance_init(&perf);
    rc = kt_checkpoint_performance(c, &perf, err);
    if (rc == 0) {
        kt_render_options opt;
        kt_checkpoint_options(c, &opt);
        rc = kt_render(&perf, kt_checkpoint_output(c), &opt, res, err);
    }
    kt_performance_free(&perf);
    kt_checkpoint_close(c);
    return rc;
}

static void compare_samples(const char *full, const char *resumed)
{
    double peak = 0;
    long differ = kt_test_wav_differ(full, resumed, &peak);
    KT_CHECK(differ == 0, "the resumed render equals the unstopped one bit for bit (%ld bytes "
             "of the samples differ; -1: files missing or of another layout)", differ);
    KT_CHECK(peak > 1e-6, "the microphones heard the drum (peak %g)", peak);
}

/* The guard over ranks: a single-precision rigid box whose energy drifts
 * up (test_render_guard's case; one process stops it at step 47,360) is
 * stopped on every rank at one check, with the air named, and rank 0 alone
 * keeps the audio up to the last good check. */
static void check_guard(void)
{
    char out[160], partial[200];
    snprintf(out, sizeof out, "%s/grow.wav", dir);
    kt_render_partial_path(out, partial, sizeof partial);
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    int rc = kt_score_parse(&perf, "g.orc", "sr = 16000\nroom = 0.6 0.6 0.6\n"
                            "precision = single\nmic m 0.3 0.3 0.3\nimpulse 0.3 0.3 0.3 0 0.5ms\n",
                            "g.sco", "f 0 6\n", &err);
    kt_render_result res = {0};
    if (rc == 0) {
        kt_render_options opt;
        options(&opt);
        opt.tail_s = 0;
        rc = kt_render(&perf, out, &opt, &res, &err);
    }
    KT_CHECK(rc == KT_EUNSTABLE && strstr(err.message, "energy grew") &&
                 strstr(err.message, "the air") && res.steps < res.total_steps / 2,
             "rank %d: the growth stopped at step %lld of %lld: %s", kt_mpi_rank(),
             (long long)res.steps, (long long)res.total_steps, err.message);
    double steps = (double)res.steps;
    KT_CHECK(kt_mpi_min(steps) == kt_mpi_max(steps), "rank %d: every rank stopped at one step",
             kt_mpi_rank());
    KT_CHECK(kt_mpi_rank() == 0 ? res.partial_path[0] && access(partial, F_OK) == 0
                                : !res.partial_path[0],
             "rank %d: the partial audio kept by rank 0 alone (%s)", kt_mpi_rank(),
             res.partial_path);
    kt_render_result_free(&res);
    kt_performance_free(&perf);
}

/* Rank 0: one process, or three ranks, cannot resume a two-rank checkpoint. */
static void check_refusals(const char *ck)
{
    for (int ranks = 1; ranks <= 3; ranks += 2) {
        kt_checkpoint *c = NULL;
        kt_error e = {0};
        char want[64];
        snprintf(want, sizeof want, "split over %d ranks; resume it over %d", kt_mpi_size(),
                 kt_mpi_size());
        int rc = kt_checkpoint_open_part(ck, 0, ranks, &c, &e);
        KT_CHECK(rc < 0 && !c && strstr(e.message, want),
                 "a %d-rank checkpoint opened by %d rank(s): %d, %s", kt_mpi_size(), ranks, rc,
                 e.message);
        kt_checkpoint_close(c);
    }
}

/* The piece rendered whole, then stopped with a checkpoint and resumed:
 * the same samples. */
static void stop_and_resume(const char *orc, const char *sco, int shaped)
{
    int rank = kt_mpi_rank();
    const char *what = split_x ? "along x" : shaped ? "shaped" : "box";
    char full[160], out[160], ck[160];
    snprintf(full, sizeof full, "%s/%s_full.wav", dir, what);
    snprintf(out, sizeof out, "%s/%s_out.wav", dir, what);
    snprintf(ck, sizeof ck, "%s/%s_out.ckpt", dir, what);
    kt_render_result res;
    kt_score_error err = {0};
    int rc = render(orc, sco, full, NULL, 0, &res, &err);
    KT_CHECK(rc == 0, "%s, rank %d: the unstopped render: %s", what, rank, err.message);
    kt_render_result_free(&res);
    /* stopped at step 1000, so at the guard's check of step 1024 (the ranks
     * agree at a check): the drum's first note has sounded, the second not */
    rc = render(orc, sco, out, ck, 1000, &res, &err);
    KT_CHECK(rc == KT_EINTR && res.checkpoints_written == 1 && res.steps == 1024,
             "%s, rank %d: stopped at step %lld with %d checkpoint(s): %d %s", what, rank,
             (long long)res.steps, res.checkpoints_written, rc, err.message);
    kt_render_result_free(&res);
    char part[200];
    kt_checkpoint_part_path(ck, rank, part, sizeof part);
    KT_CHECK(access(part, F_OK) == 0, "%s: rank %d wrote its part %s", what, rank, part);
    if (rank == 0 && !shaped)
        check_refusals(ck);

    rc = resume(ck, &res, &err);
    KT_CHECK(rc == 0, "%s: rank %d resumed: %s", what, rank, err.message);
    kt_render_result_free(&res);
    if (rank == 0)
        compare_samples(full, out);
}

int main(int argc, char **argv)
{
    kt_error e = {0};
    if (kt_mpi_init(&argc, &argv, &e) < 0) {
        fprintf(stderr, "mpi_checkpoint: %s\n", e.message);
        return 1;
    }
    if (kt_mpi_size() < 2) {
        fprintf(stderr, "mpi_checkpoint: run it under mpirun -np 2 (or more)\n");
        kt_mpi_finalize();
        return 77;
    }
    int rank = kt_mpi_rank();
    long id = (long)kt_mpi_max(rank == 0 ? (double)getpid() : 0);   /* one folder for all */
    snprintf(dir, sizeof dir, "/tmp/kt_mpi_ck_%ld", id);
    if (rank == 0 && mkdir(dir, 0700) != 0)
        kt_mpi_abort(1);
    kt_mpi_barrier();
    /* kt_test.h's split pieces: the drum's layers across the cut along z, a
     * box and a shaped room; then a room cut along x */
    for (int shaped = 0; shaped <= 1; shaped++) {
        char orc[1024];
        kt_test_piece_across_z(orc, sizeof orc, kt_mpi_size(), shaped, 0, SR_HZ);
        stop_and_resume(orc, KT_TEST_SPLIT_SCORE, shaped);
        kt_mpi_barrier();
    }
    {
        char orc[1024];
        split_x = 1;
        kt_test_piece_along(orc, sizeof orc, 0, 0, SR_HZ);
        stop_and_resume(orc, KT_TEST_SPLIT_SCORE, 0);
        split_x = 0;
        kt_mpi_barrier();
    }
    check_guard();
    kt_mpi_barrier();
    if (rank == 0)
        kt_test_remove_dir(dir);
    int status = kt_test_finish(rank == 0 ? "mpi_checkpoint (rank 0)" : "mpi_checkpoint");
    kt_mpi_finalize();
    return status;
}
