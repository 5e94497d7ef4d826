/* test_render_keep.c - nothing computed is lost when a write fails during a
 * render (issue #24).  The folders are taken away while the render runs
 * (from its progress callback), as a full or vanished disk would:
 *  - checkpoints that can no longer be written are warned about once and
 *    the render goes on to write its whole output (it used to end there,
 *    with nothing written);
 *  - a stop request whose checkpoint cannot be written still stops
 *    (KT_EINTR) and keeps the audio so far in the partial file;
 *  - an output that cannot be written at the end leaves the whole audio in
 *    a partial file where one can be written (here: the working folder),
 *    named in the result;
 *  - a snapshot that cannot be written is a warning, not the end. */
#include "kt_checkpoint.h"
#include "kt_test.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *orc = "sr = 8000\nroom = 0.5 0.4 0.45\nmic m 0.25 0.2 0.2\n"
                         "impulse 0.1 0.1 0.1\n";

typedef struct saboteur {
    char folder[128];               /* removed at the first progress report */
    int64_t stop_at;                /* > 0: stop after this many steps */
    int64_t calls;
    int warnings;
    char warning[KT_ERROR_MESSAGE_MAX + 256];
} saboteur;

static int take_folder(void *user, int64_t done, int64_t total)
{
    saboteur *s = user;
    (void)done;
    (void)total;
    if (s->folder[0]) {
        kt_test_remove_dir(s->folder);
        s->folder[0] = '\0';
    }
    return 0;
}

static int stop_at(void *user)
{
    saboteur *s = user;
    return s->stop_at > 0 && ++s->calls >= s->stop_at;
}

static void note_warning(void *user, const char *message)
{
    saboteur *s = user;
    s->warnings++;
    snprintf(s->warning, sizeof s->warning, "%s", message);
}

static int render(const char *out, const char *ck, const char *snapshot_stem, saboteur *s,
                  kt_render_result *res, kt_score_error *err)
{
    static const double snapshot_s = 0.015;   /* step 120, after the folder went */
    kt_performance perf;
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "k.orc", orc, "k.sco", "f 0 0.02\n", err);
    if (rc == 0) {
        kt_render_options o;
        kt_render_options_default(&o);
        o.device = KT_DEVICE_CPU;
        o.nthreads = 1;
        o.tail_s = 0.01;            /* 240 steps; progress every 64 */
        o.checkpoint_path = ck;
        o.checkpoint_every_s = 1e-9;   /* after every step */
        o.block = 1;               /* stops and checkpoints at exact steps */
        o.progress = take_folder;
        o.stop = stop_at;
        o.warn = note_warning;
        o.user = s;
        o.snapshot_stem = snapshot_stem;
        o.snapshot_count = snapshot_stem ? 1 : 0;
        o.snapshot_times_s = &snapshot_s;
        o.snapshot_position_m = 0.2;
        rc = kt_render(&perf, out, &o, res, err);
    }
    kt_performance_free(&perf);
    return rc;
}

static sf_count_t frames_of(const char *path)
{
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    if (f)
        sf_close(f);
    return f ? info.frames : -1;
}

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

/* A render whose folder `gone` (made here) is taken away at the first
 * progress report; out and ck (NULL: none) are named inside or beside it. */
static int sabotaged(const char *gone, const char *out, const char *ck, const char *snapshots,
                     int64_t stop_steps, saboteur *s, kt_render_result *res, kt_score_error *err)
{
    memset(s, 0, sizeof *s);
    path_in(s->folder, sizeof s->folder, gone);
    mkdir(s->folder, 0755);
    s->stop_at = stop_steps;
    return render(out, ck, snapshots, s, res, err);
}

/* Checkpoints fail from step 64 on: one warning, the whole output written. */
static void checkpoint_fails(void)
{
    char out[128], ck[160];
    path_in(out, sizeof out, "a.wav");
    path_in(ck, sizeof ck, "ck_folder/a.ckpt");
    saboteur s;
    kt_render_result res;
    kt_score_error err = {0};
    int rc = sabotaged("ck_folder", out, ck, NULL, 0, &s, &res, &err);
    KT_CHECK(rc == 0 && frames_of(out) == res.total_steps && res.total_steps == 240,
             "the render goes on past failing checkpoints: rc %d, %lld of %lld frames: %s", rc,
             (long long)frames_of(out), (long long)res.total_steps, err.message);
    KT_CHECK(s.warnings == 1 && strstr(s.warning, "a.ckpt") && strstr(s.warning, "goes on"),
             "warned once (%d): %s", s.warnings, s.warning);
    kt_render_result_free(&res);
    remove(out);
}

/* A stop whose checkpoint cannot be written: stopped, the audio so far kept. */
static void stop_without_checkpoint(void)
{
    char out[128], ck[160], partial[160];
    path_in(out, sizeof out, "b.wav");
    path_in(ck, sizeof ck, "ck_folder2/b.ckpt");
    saboteur s;
    kt_render_result res;
    kt_score_error err = {0};
    int rc = sabotaged("ck_folder2", out, ck, NULL, 100, &s, &res, &err);
    kt_render_partial_path(out, partial, sizeof partial);
    KT_CHECK(rc == KT_EINTR && strstr(err.message, "stopped") && strstr(err.message, "b.ckpt"),
             "stopped, saying the checkpoint failed: rc %d: %s", rc, err.message);
    KT_CHECK(strcmp(res.partial_path, partial) == 0 && frames_of(partial) == 100,
             "the 100 steps done are in %s (%lld frames)", res.partial_path,
             (long long)frames_of(partial));
    KT_CHECK(access(out, F_OK) != 0, "no file under the real name after a stop");
    kt_render_result_free(&res);
    remove(partial);
}

/* The output's folder vanishes: the whole audio goes to the working folder. */
static void output_fails(void)
{
    char out[160], want[160];
    path_in(out, sizeof out, "out_folder/c.wav");
    path_in(want, sizeof want, "c.partial.wav");
    saboteur s;
    kt_render_result res;
    kt_score_error err = {0};
    int rc = sabotaged("out_folder", out, NULL, NULL, 0, &s, &res, &err);
    KT_CHECK(rc < 0 && strstr(err.message, "cannot write the audio"),
             "the output cannot be written: rc %d: %s", rc, err.message);
    KT_CHECK(strcmp(res.partial_path, want) == 0 && frames_of(want) == res.total_steps &&
                 res.total_steps == 240,
             "all 240 steps kept in the working folder: '%s' (%lld frames)", res.partial_path,
             (long long)frames_of(want));
    kt_render_result_free(&res);
    remove(want);
}

/* The snapshots' folder vanishes: a warning, the output whole. */
static void snapshot_fails(void)
{
    char out[128], stem[160];
    path_in(out, sizeof out, "d.wav");
    path_in(stem, sizeof stem, "pictures/d_snap");
    saboteur s;
    kt_render_result res;
    kt_score_error err = {0};
    int rc = sabotaged("pictures", out, NULL, stem, 0, &s, &res, &err);
    KT_CHECK(rc == 0 && frames_of(out) == 240 && res.snapshots_written == 0,
             "the render goes on past a snapshot it cannot write: rc %d, %lld frames, %d "
             "pictures: %s", rc, (long long)frames_of(out), res.snapshots_written, err.message);
    KT_CHECK(s.warnings == 1 && strstr(s.warning, "snapshot"), "warned (%d): %s", s.warnings,
             s.warning);
    kt_render_result_free(&res);
    remove(out);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_keep_XXXXXX");
    char here[4096];
    /* the working folder is the scratch folder: the last place a partial file may go */
    if (!mkdtemp(dir) || !getcwd(here, sizeof here) || chdir(dir) != 0)
        return 1;
    checkpoint_fails();
    stop_without_checkpoint();
    output_fails();
    snapshot_fails();
    if (chdir(here) == 0)
        kt_test_remove_dir(dir);
    return kt_test_finish("test_render_keep");
}
