/* test_checkpoint.c - a render stopped part-way writes a checkpoint and the
 * audio so far; resuming from the checkpoint gives a file byte-identical to
 * the uninterrupted render (with a pedal glide and a damped note across the
 * stop, in a single-precision room with viscosity, whose three field
 * buffers take another path, and with the drums tuned by the formula, which
 * the resumed render must keep); a damaged, truncated, foreign or
 * future-version checkpoint is refused with a message saying which. */
#include "kt_checkpoint.h"
#include "kt_test.h"
#include "kt_tuning.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *orc =
    "sr = 16000\n"
    "room = 0.8 0.8 0.9\n"
    "beta = 0.2\n"
    "mic near 0.4 0.4 0.75\n"
    "mic far 0.15 0.2 0.3\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.4 0.4 0.6\n"
    "endin\n";
/* A damped note ends at 0.04 s, the pedal glides 0.05..0.09 s, the stop
 * comes at step 1000 (0.0625 s), the second note at 0.08 s. */
static const char *sco = "i 1 0 0.04 ff 0.5 0 1 0.02\npedal 1 0.05 0.04 E3\n"
                         "i 1 0.08 0.02 mf 0.3 90\n";
static const char *orc_visc =
    "sr = 16000\nroom = 0.6 0.5 0.5\nbeta = 0.1\nviscosity = on\nprecision = single\n"
    "mic m 0.3 0.25 0.25\nimpulse 0.1 0.2 0.2 0 1ms\n";

static char dir[64];

static int parse(kt_performance *perf, const char *o, const char *s)
{
    kt_score_error err = {0};
    kt_performance_init(perf);
    int rc = kt_score_parse(perf, "ck.orc", o, "ck.sco", s, &err);
    if (rc < 0)
        fprintf(stderr, "parse: %d:%d: %s\n", err.line, err.col, err.message);
    return rc;
}

/* The tuning of the renders below: the checkpoint must carry it. */
static int tuning_mode = KT_TUNING_CALIBRATED;

/* Render, stopping after `stop` steps when stop > 0 (checkpoint to ck). */
static int render(const char *o, const char *s, const char *out, const char *ck, int64_t stop,
                  kt_render_result *res, kt_score_error *err)
{
    kt_performance perf;
    int rc = parse(&perf, o, s);
    kt_test_stopper st = {0, stop};
    if (rc == 0) {
        kt_render_options opt;
        kt_render_options_default(&opt);
        opt.device = KT_DEVICE_CPU;   /* stops at exact steps: the GPU stops per block */
        opt.block = 1;            /* and blocked passes between events (every 48 steps) */
        opt.nthreads = 1;
        opt.tail_s = 0.05;
        opt.checkpoint_path = ck;
        opt.tuning = tuning_mode;
        opt.stop = stop > 0 ? kt_test_stop_at : NULL;
        opt.user = &st;
        rc = kt_render(&perf, out, &opt, res, err);
    }
    kt_performance_free(&perf);
    return rc;
}

static int resume(const char *ck, kt_render_result *res, kt_score_error *err)
{
    kt_checkpoint *c;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_checkpoint_open(ck, &c, &e);
    if (rc < 0) {
        fprintf(stderr, "open: %s\n", e.message);
        return rc;
    }
    kt_performance perf;
    kt_performance_init(&perf);
    rc = kt_checkpoint_performance(c, &perf, err);
    if (rc == 0) {
        kt_render_options opt;
        kt_checkpoint_options(c, &opt);
        rc = kt_render(&perf, kt_checkpoint_output(c), &opt, res, err);
        if (rc < 0)
            fprintf(stderr, "resume: %s\n", err->message);
    }
    kt_performance_free(&perf);
    kt_checkpoint_close(c);
    return rc;
}

static int same_file(const char *a, const char *b)
{
    long na = 0, nb = 0;
    unsigned char *x = kt_test_slurp(a, &na), *y = kt_test_slurp(b, &nb);
    int same = x && y && na == nb && na > 100 && memcmp(x, y, (size_t)na) == 0;
    free(x);
    free(y);
    return same;
}

static sf_count_t frames_of(const char *path)
{
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    if (!f)
        return -1;
    sf_close(f);
    return info.frames;
}

static void check_resume(const char *o, const char *s, int64_t stop, const char *what)
{
    char full[128], out[128], ck[128], partial[160];
    snprintf(full, sizeof full, "%s/full.wav", dir);
    snprintf(out, sizeof out, "%s/part.wav", dir);
    snprintf(ck, sizeof ck, "%s/part.ckpt", dir);
    kt_render_result res;
    kt_score_error err = {0};
    int rc = render(o, s, full, NULL, 0, &res, &err);
    KT_CHECK(rc == 0, "%s: uninterrupted render: %s", what, err.message);
    kt_render_result_free(&res);
    rc = render(o, s, out, ck, stop, &res, &err);
    KT_CHECK(rc == KT_EINTR && res.checkpoints_written == 1, "%s: stopped (rc %d, %d checkpoints)",
             what, rc, res.checkpoints_written);
    KT_CHECK(access(out, F_OK) != 0, "%s: no file under the real name after a stop", what);
    kt_render_partial_path(out, partial, sizeof partial);
    KT_CHECK(strcmp(res.partial_path, partial) == 0 && frames_of(partial) == stop,
             "%s: partial audio %s holds the %lld steps done (%lld)", what, res.partial_path,
             (long long)stop, (long long)frames_of(partial));
    kt_render_result_free(&res);
    rc = resume(ck, &res, &err);
    KT_CHECK(rc == 0 && res.steps == res.total_steps, "%s: resumed to the end", what);
    kt_render_result_free(&res);
    KT_CHECK(same_file(full, out), "%s: resumed output byte-identical to the uninterrupted one",
             what);
    remove(full);
    remove(out);
    remove(partial);
    remove(ck);
}

/* Write a copy of src with `len` bytes (or, len < 0, the byte at -len-1 flipped). */
static void damaged_copy(const char *src, const char *dst, long len)
{
    long n = 0;
    unsigned char *b = kt_test_slurp(src, &n);
    if (!b)
        return;
    if (len < 0)
        b[-len - 1] ^= 0x5a;
    FILE *f = fopen(dst, "wb");
    if (f) {
        fwrite(b, 1, (size_t)(len >= 0 && len < n ? len : n), f);
        fclose(f);
    }
    free(b);
}

static void expect_refused(const char *path, const char *words, const char *what)
{
    kt_checkpoint *c = NULL;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_checkpoint_open(path, &c, &e);
    KT_CHECK(rc < 0 && c == NULL && strstr(e.message, words), "%s: refused with '%s': %s", what,
             words, e.message);
    kt_checkpoint_close(c);
}

static void check_damaged(void)
{
    char out[128], ck[128], bad[128];
    snprintf(out, sizeof out, "%s/d.wav", dir);
    snprintf(ck, sizeof ck, "%s/d.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    kt_render_result res;
    kt_score_error err = {0};
    render(orc, sco, out, ck, 300, &res, &err);
    kt_render_result_free(&res);
    long n = 0;
    free(kt_test_slurp(ck, &n));
    KT_CHECK(n > 1000, "checkpoint written (%ld bytes)", n);
    damaged_copy(ck, bad, -(n / 2) - 1);
    expect_refused(bad, "checksum", "one byte flipped in the middle");
    damaged_copy(ck, bad, n - 100);
    expect_refused(bad, "truncated", "cut short");
    damaged_copy(ck, bad, -9);  /* the version field (byte 8) */
    expect_refused(bad, "version", "another version");
    expect_refused(out, "No such file", "missing file");
    char partial[160];
    kt_render_partial_path(out, partial, sizeof partial);
    expect_refused(partial, "not a Kettle checkpoint", "a WAV file");
    remove(partial);
    remove(ck);
    remove(bad);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_ck_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    check_resume(orc, sco, 1000, "drum, pedal and damper");
    check_resume(orc_visc, "f 0 0.02\n", 200, "single precision with viscosity");
    tuning_mode = KT_TUNING_MODEL;   /* resumed with the formula's tensions, as it began */
    check_resume(orc, sco, 1000, "tuning by the formula");
    tuning_mode = KT_TUNING_CALIBRATED;
    check_damaged();
    rmdir(dir);
    return kt_test_finish("test_checkpoint");
}
