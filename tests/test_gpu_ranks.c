/* test_gpu_ranks.c - a room split over two GPUs (kettle render --gpus 2:
 * two ranks, NCCL halos, no MPI) against the same room on one GPU, bit for
 * bit, in single and double precision: lossy walls, a drum whose membrane
 * layers straddle the slab boundary (rank 1 steps it with rank 0's top
 * plane lent across), a fixed microphone whose cell straddles the boundary
 * (its samples wait a step for the halo) and one moving across it.  The
 * output is raw 64-bit float, so equal data chunks mean equal samples.  With
 * the argument `checkpoint` (ctest test_gpu_ranks_checkpoint): a render over
 * two GPUs (and one on one GPU) stopped after a checkpoint resumes over the
 * same GPUs to the same samples.  The same piece in a shaped room (a lossy
 * post across the boundary, beside the drum), with and without viscosity
 * (the solids folded into the sweep, or their own kernel after it), over
 * two GPUs against one, and stopped and resumed over two.  Split along x
 * (issue #22; a room long in x, --split-axis x): lossy walls with and
 * without viscosity, a drum clear of the cut, a microphone whose cell
 * straddles the cut and one moving across it, over two GPUs against one in
 * both precisions, and stopped and resumed over two; the same along y in
 * single precision.  With three or four GPUs also the box over 3 and 4 z
 * slabs, and the shaped room over 4 (issue 23).  `kettle bench room --gpu
 * --ranks 1` prints the one-GPU row alone, --ranks 2 both rows.  Needs two
 * GPUs and a build with NCCL; skipped (77) otherwise. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_ranks: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kt_cuda.h"
#include "kt_ranks.h"
#include "kettle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SR_HZ 16000
static char dir[64];

/* "alongx..." or "alongy...": 'x' or 'y'; 0 for the other rooms. */
static char along(const char *room) { return !strncmp(room, "along", 5) ? room[5] : 0; }

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The piece (kt_test.h's split pieces); room: "box", "shaped" (a post in a
 * corner, clear of the drum's box, across the boundary) or "viscous" (the
 * same with viscosity), cut along z over two ranks; "alongx",
 * "alongx_viscous" or "alongy", cut along x or y. */
static int write_piece(const char *orc_path, const char *sco_path, const char *room)
{
    char orc[1024];
    if (along(room)) {
        kt_test_piece_along(orc, sizeof orc, along(room) == 'y', strstr(room, "viscous") != NULL,
                            SR_HZ);
    } else {
        kt_test_piece_across_z(orc, sizeof orc, 2, strcmp(room, "box") != 0,
                               !strcmp(room, "viscous"), SR_HZ);
    }
    return write_text(orc_path, orc) < 0 || write_text(sco_path, KT_TEST_SPLIT_SCORE) < 0 ? -1 : 0;
}

/* The render's arguments, with room for `extra` more; returns their count. */
static int render_args(char **argv, const char *orc, const char *sco, const char *out,
                       const char *precision, const char *tail)
{
    int n = 0;
    argv[n++] = KETTLE_EXE;
    argv[n++] = "render";
    argv[n++] = (char *)orc;
    argv[n++] = (char *)sco;
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = "--device";
    argv[n++] = "gpu";
    argv[n++] = "--precision";
    argv[n++] = (char *)precision;
    argv[n++] = "--bits";
    argv[n++] = "64f";
    argv[n++] = "--gain";
    argv[n++] = "1";
    argv[n++] = "--tail";
    argv[n++] = (char *)tail;
    argv[n++] = "--tuning";
    argv[n++] = "formula";
    argv[n] = NULL;
    return n;
}

static int run_kettle(char **argv, const char *what)
{
    static char err[8192];
    int rc = kt_test_run(argv, NULL, 600, NULL, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "%s exited %d:\n%s\n", what, rc, err);
    return rc;
}

static int render(const char *orc, const char *sco, const char *out, const char *precision,
                  const char *gpus, char axis)
{
    char *argv[32];
    int n = render_args(argv, orc, sco, out, precision, "0.05");
    if (gpus) {
        argv[n++] = "--gpus";
        argv[n++] = (char *)gpus;
    }
    static char name[2][2] = {"x", "y"};
    if (axis) {
        argv[n++] = "--split-axis";
        argv[n++] = name[axis == 'y'];
    }
    argv[n] = NULL;
    char what[128];
    snprintf(what, sizeof what, "kettle render (%s, --gpus %s)", precision, gpus ? gpus : "1");
    return run_kettle(argv, what);
}

/* The samples of two renders equal bit for bit, and not silence. */
static void same_samples(const char *path_a, const char *path_b, const char *what)
{
    double peak = 0;
    long differ = kt_test_wav_differ(path_a, path_b, &peak);
    KT_CHECK(differ == 0, "%s: equal bit for bit (%ld bytes differ; -1: files missing or of "
             "another layout)", what, differ);
    KT_CHECK(peak > 1e-6, "%s: the microphones heard the drum (peak %g)", what, peak);
}

static void compare_over(const char *room, const char *precision, const char *gpus)
{
    char orc[128], sco[128], one[128], two[128], what[80];
    snprintf(orc, sizeof orc, "%s/%s.orc", dir, room);
    snprintf(sco, sizeof sco, "%s/%s.sco", dir, room);
    snprintf(one, sizeof one, "%s/one_%s_%s.wav", dir, room, precision);
    snprintf(two, sizeof two, "%s/n%s_%s_%s.wav", dir, gpus, room, precision);
    snprintf(what, sizeof what, "%s %s", room, precision);
    KT_CHECK(write_piece(orc, sco, room) == 0, "%s: the piece was written", what);
    /* the one-GPU render of this piece once, for every GPU count compared */
    KT_CHECK(access(one, F_OK) == 0 || render(orc, sco, one, precision, NULL, 0) == 0,
             "%s: one GPU rendered", what);
    KT_CHECK(render(orc, sco, two, precision, gpus, along(room)) == 0,
             "%s: %s GPUs rendered", what, gpus);
    snprintf(what, sizeof what, "%s %s, %s GPUs against one", room, precision, gpus);
    same_samples(one, two, what);
}

static void compare(const char *room, const char *precision)
{
    compare_over(room, precision, "2");
}

/* A render over `gpus` GPUs (1 or 2) stopped by SIGTERM (sent to the first
 * kettle, which passes it on to the ranks) after its first checkpoint: each
 * rank writes its part at the next check, and `kettle resume [--gpus 2]`
 * ends it with the samples of the render that was never stopped; one
 * process cannot resume a two-GPU checkpoint.  One GPU too, so that a
 * failure says whether resuming on the GPU or its split is at fault. */
static void check_resume(const char *room, const char *precision, const char *gpus)
{
    char orc[128], sco[128];
    char full[128], out[128], ck[128], part[160], every[] = "0.001s", what[64];
    snprintf(orc, sizeof orc, "%s/%s.orc", dir, room);
    snprintf(sco, sizeof sco, "%s/%s.sco", dir, room);
    snprintf(full, sizeof full, "%s/full_%s_%s_%s.wav", dir, room, precision, gpus);
    snprintf(out, sizeof out, "%s/out_%s_%s_%s.wav", dir, room, precision, gpus);
    snprintf(ck, sizeof ck, "%s/out_%s_%s_%s.ckpt", dir, room, precision, gpus);
    snprintf(part, sizeof part, "%s%s", ck, strcmp(gpus, "1") ? ".rank1" : "");
    snprintf(what, sizeof what, "%s %s, %s GPU(s)", room, precision, gpus);
    KT_CHECK(write_piece(orc, sco, room) == 0, "%s: the piece was written", what);
    char *argv[40];
    int n = render_args(argv, orc, sco, full, precision, "3");
    argv[n++] = "--gpus";
    argv[n++] = (char *)gpus;
    if (along(room)) {
        argv[n++] = "--split-axis";
        argv[n++] = along(room) == 'y' ? "y" : "x";
    }
    argv[n] = NULL;
    KT_CHECK(run_kettle(argv, "the unstopped render") == 0, "%s: the unstopped render", what);
    n = render_args(argv, orc, sco, out, precision, "3");
    char *more[] = {"--gpus", (char *)gpus, "--checkpoint", ck, "--checkpoint-every", every,
                    "--quiet", "--split-axis",
                    along(room) == 'y' ? "y" : along(room) ? "x" : "auto"};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        argv[n++] = more[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int waited = 0, status = 0;
    while (pid > 0 && (access(ck, F_OK) != 0 || access(part, F_OK) != 0) && waited < 6000 &&
           waitpid(pid, &status, WNOHANG) == 0) {
        nanosleep(&(struct timespec){0, 10000000}, NULL);
        waited++;
    }
    int running = pid > 0 && waitpid(pid, &status, WNOHANG) == 0;
    KT_CHECK(running, "%s: the render was still running at its first checkpoint", what);
    if (running) {
        kill(pid, SIGTERM);
        waitpid(pid, &status, 0);
    }
    KT_CHECK(running && WIFEXITED(status) && WEXITSTATUS(status) == 143,
             "%s: stopped by SIGTERM: exit %d, want 143", what,
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    KT_CHECK(access(ck, F_OK) == 0 && access(part, F_OK) == 0, "%s: the parts of %s", what, ck);
    static char err[8192];
    if (strcmp(gpus, "1")) {
        char *alone[] = {KETTLE_EXE, "resume", ck, NULL};
        int rc = kt_test_run(alone, NULL, 600, NULL, err, sizeof err);
        KT_CHECK(rc == 2 && strstr(err, "resume it over 2 (kettle resume --gpus 2"),
                 "%s: one process refuses the two GPUs' checkpoint: exit %d: %s", what, rc,
                 err);
    }
    char *again[] = {KETTLE_EXE, "resume", "--gpus", (char *)gpus, ck, NULL};
    KT_CHECK(run_kettle(again, "kettle resume") == 0, "%s: resumed", what);
    char label[128];
    snprintf(label, sizeof label, "%s, stopped and resumed against unstopped", what);
    same_samples(full, out, label);
}

/* `kettle bench room --gpu --ranks N`: the rows a grid gets, one per GPU
 * count (a job of one rank had printed a second, split row of its own). */
static void check_bench_rows(const char *ranks, int rows)
{
    char *argv[] = {KETTLE_EXE, "bench", "room", "--gpu", "--ranks", (char *)ranks,
                    "--grid", "48x40x36", "--steps", "4", "--double", NULL};
    static char out[8192], err[8192];
    int rc = kt_test_run(argv, NULL, 300, out, err, sizeof out);
    KT_CHECK(rc == 0, "bench room --ranks %s exited %d: %s", ranks, rc, err);
    int found = 0;
    for (const char *line = out; line; line = strchr(line, '\n')) {
        line += *line == '\n';
        found += !strncmp(line, "48x40x36 ", 9);
    }
    KT_CHECK(found == rows, "bench room --ranks %s: %d rows for the grid, want %d:\n%s", ranks,
             found, rows, out);
}

int main(int argc, char **argv)
{
    kt_gpu_info info[4];
    const int gpus = kt_cuda_devices(info, 4);
    if (!kt_gpu_job_compiled() || gpus < 2 || info[0].compute_major < 9) {
        printf("test_gpu_ranks: needs two GPUs of compute capability 9.0 and NCCL: skipped\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/kt_gpu_ranks_%d", (int)getpid());
    if (mkdir(dir, 0700) != 0)
        return 1;
    int resume = argc > 1 && !strcmp(argv[1], "checkpoint");   /* test_gpu_ranks_checkpoint */
    if (resume) {
        check_resume("box", "double", "1");
        check_resume("box", "double", "2");
        check_resume("box", "single", "2");
        check_resume("shaped", "double", "2");
        check_resume("alongx", "double", "2");
    } else {
        check_bench_rows("1", 1);
        check_bench_rows("2", 2);
        compare("box", "double");
        compare("box", "single");
        compare("shaped", "double");
        compare("shaped", "single");
        compare("viscous", "double");
        compare("alongx", "double");
        compare("alongx", "single");
        compare("alongx_viscous", "double");
        compare("alongy", "single");
        /* more cuts (slabs of 9-12 planes: the drum's 11 planes cross one or
         * two); the pieces along x and y have no 3- or 4-way cut clear of
         * their drum, which the split rightly refuses */
        if (gpus >= 3)
            compare_over("box", "double", "3");
        if (gpus >= 4) {
            compare_over("box", "double", "4");
            compare_over("box", "single", "4");
            compare_over("shaped", "single", "4");
        }
    }
    kt_test_remove_dir(dir);
    return kt_test_finish(resume ? "test_gpu_ranks checkpoint" : "test_gpu_ranks");
}

#endif
