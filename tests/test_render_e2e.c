/* test_render_e2e.c - orchestra + score to a sound file, end to end: the file
 * has the right rate, channels and length and is not silent; the same input
 * and thread count give the same bytes; a room with only an impulse renders
 * its impulse response (sound arrives after distance / c); a render that fails
 * leaves no file behind and points at the offending line. */
#include "kt_render.h"
#include "kt_png.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <dirent.h>
#include <png.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small, coarse room so that the test stays fast: 16 kHz, a 23-inch drum. */
static const char *small_orc =
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
static const char *small_sco = "i 1 0 0.05 ff\ni 1 + . mf 0.3 90\n";

static char dir[256];
static double tail_s = 0.1;  /* shorter under the sanitizers */

static int parse(kt_performance *perf, const char *orc, const char *sco)
{
    kt_score_error err = {0};
    kt_performance_init(perf);
    int rc = kt_score_parse(perf, "e2e.orc", orc, "e2e.sco", sco, &err);
    if (rc < 0)
        fprintf(stderr, "parse: %s:%d:%d: %s\n", err.file, err.line, err.col, err.message);
    return rc;
}

static int render(const char *orc, const char *sco, const char *out, int threads, double tail,
                  kt_render_result *res, kt_score_error *err)
{
    kt_performance perf;
    int rc = parse(&perf, orc, sco);
    if (rc == 0) {
        kt_render_options o;
        kt_render_options_default(&o);
        o.nthreads = threads;
        o.tail_s = tail;
        rc = kt_render(&perf, out, &o, res, err);
        if (rc < 0)
            fprintf(stderr, "render: %s:%d:%d: %s\n", err->file, err->line, err->col, err->message);
    }
    kt_performance_free(&perf);
    return rc;
}

/* Files in the test folder whose names start with prefix. */
static int count_files(const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_drum_render(void)
{
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/a.wav", dir);
    snprintf(b, sizeof b, "%s/b.wav", dir);
    kt_render_result res;
    kt_score_error err = {0};
    /* Score: 0.1 s of notes + the tail (0.2 s in all, 1920 samples sanitized). */
    int64_t frames = (int64_t)llround((0.1 + tail_s) * 16000);
    int rc = render(small_orc, small_sco, a, 1, tail_s, &res, &err);
    KT_CHECK(rc == 0, "render a");
    KT_CHECK(res.total_steps == frames && res.channels == 2, "steps %lld channels %d",
             (long long)res.total_steps, res.channels);
    KT_CHECK(res.summary && res.summary[0].gain == 1.0 / KT_FULL_SCALE_PA &&
                 res.summary[0].peak > 1e-3 && res.summary[1].peak > 0 && res.output_rate_hz == 16000,
             "the fixed scale (0 dBFS = %g Pa): peaks %g %g", KT_FULL_SCALE_PA,
             res.summary ? res.summary[0].peak : 0, res.summary ? res.summary[1].peak : 0);
    kt_render_result_free(&res);

    SF_INFO info = {0};
    SNDFILE *f = sf_open(a, SFM_READ, &info);
    KT_CHECK(f != NULL, "output readable");
    if (f) {
        KT_CHECK(info.samplerate == 16000 && info.channels == 2 && info.frames == frames,
                 "rate %d channels %d frames %lld", info.samplerate, info.channels,
                 (long long)info.frames);
        float *pcm = calloc((size_t)info.frames * info.channels, sizeof *pcm);
        sf_readf_float(f, pcm, info.frames);
        sf_close(f);
        double energy[2] = {0, 0}, late = 0;
        for (sf_count_t i = 0; i < info.frames; i++)
            for (int c = 0; c < 2; c++) {
                energy[c] += pcm[i * 2 + c] * pcm[i * 2 + c];
                if (i >= 1200 && c == 0)
                    late += pcm[i * 2] * pcm[i * 2];
            }
        KT_CHECK(energy[0] > 1 && energy[1] > 1e-3, "not silent: %g %g", energy[0], energy[1]);
        /* The second strike at 0.05 s keeps the drum sounding after 75 ms. */
        KT_CHECK(late > 1e-6 * energy[0], "the drum rings on: %g of %g", late, energy[0]);
        free(pcm);
    }

    /* Determinism with two threads, on a short piece: barriers are slow on
     * a busy machine. */
    const char *short_sco = "i 1 0 0.003 ff\ni 1 + . mf 0.3 90\n";
    rc = render(small_orc, short_sco, a, 2, 0.004, &res, &err);
    kt_render_result_free(&res);
    if (rc == 0)
        rc = render(small_orc, short_sco, b, 2, 0.004, &res, &err);
    kt_render_result_free(&res);
    long na = 0, nb = 0;
    unsigned char *ba = kt_test_slurp(a, &na), *bb = kt_test_slurp(b, &nb);
    KT_CHECK(rc == 0 && ba && bb && na > 500 && na == nb && memcmp(ba, bb, (size_t)na) == 0,
             "same input, same threads: identical bytes (%ld vs %ld)", na, nb);
    free(ba);
    free(bb);
    remove(a);
    remove(b);
}

/* No drum: an impulse in the room; the microphones hear it after d/c. */
static void test_impulse_response(void)
{
    char out[300];
    snprintf(out, sizeof out, "%s/ir.wav", dir);
    const char *orc = "sr = 16000\nroom = 2 1 1\nbeta = 0.5\n"
                      "mic a 0.5 0.5 0.5\nmic b 1.5 0.5 0.5\n"
                      "impulse 0.3 0.5 0.5 0 0.5ms\n";
    kt_render_result res;
    kt_score_error err = {0};
    int rc = render(orc, "f 0 0.01\n", out, 1, 0.0, &res, &err);
    KT_CHECK(rc == 0 && res.channels == 2 && res.total_steps == 160, "IR render: %lld steps",
             (long long)res.total_steps);
    kt_render_result_free(&res);
    SF_INFO info = {0};
    SNDFILE *f = sf_open(out, SFM_READ, &info);
    KT_CHECK(f != NULL, "IR file readable");
    if (!f)
        return;
    float *pcm = calloc((size_t)info.frames * 2, sizeof *pcm);
    sf_readf_float(f, pcm, info.frames);
    sf_close(f);
    /* Arrival of the pulse peak at each mic: centre of the 0.5 ms pulse
     * (0.25 ms) plus distance / c. */
    int first[2] = {-1, -1};
    float peak[2] = {0, 0};
    for (int c = 0; c < 2; c++)
        for (sf_count_t i = 0; i < info.frames; i++)
            peak[c] = fmaxf(peak[c], fabsf(pcm[i * 2 + c]));
    for (int c = 0; c < 2; c++)
        for (sf_count_t i = 0; i < info.frames && first[c] < 0; i++)
            if (fabsf(pcm[i * 2 + c]) > 0.05f * peak[c])
                first[c] = (int)i;
    double c_air = 344.0, sr = 16000;
    int expect_a = (int)(0.2 / c_air * sr), expect_b = (int)(1.2 / c_air * sr);
    KT_CHECK(peak[0] > 0 && peak[1] > 0, "both mics hear it");
    KT_CHECK(first[0] > 0 && abs(first[0] - expect_a) <= 4, "mic a: first sound at %d, d/c = %d",
             first[0], expect_a);
    KT_CHECK(abs(first[1] - expect_b) <= 4, "mic b: first sound at %d, d/c = %d", first[1],
             expect_b);
    /* Before the sound can arrive, mic b is silent (up to the scheme's small
     * numerical precursor: on the grid, influence can outrun c). */
    double before = 0;
    for (int i = 0; i < expect_b - 6; i++)
        before = fmax(before, fabsf(pcm[i * 2 + 1]));
    KT_CHECK(before < 1e-2 * peak[1], "silence before arrival: %g", before);
    free(pcm);
    remove(out);
}

/* Read a PNG; counts of strongly red (positive) and blue (negative) pixels. */
static int read_png(const char *path, int *w, int *h, long *red, long *blue)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        return -1;
    img.format = PNG_FORMAT_RGB;
    unsigned char *buf = malloc(PNG_IMAGE_SIZE(img));
    if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        free(buf);
        return -1;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    *red = *blue = 0;
    for (size_t i = 0; i < (size_t)img.width * img.height; i++) {
        unsigned char *p = buf + 3 * i;
        *red += p[0] > 150 && p[2] < 120;
        *blue += p[2] > 150 && p[0] < 120;
    }
    free(buf);
    return 0;
}

/* Snapshots of a spreading pulse, and a plot of the audio. */
static void test_pictures(void)
{
    char out[300], snap[300], plot[300];
    snprintf(out, sizeof out, "%s/pic.wav", dir);
    snprintf(snap, sizeof snap, "%s/pic_snap_t0.0020s.png", dir);
    snprintf(plot, sizeof plot, "%s/pic.png", dir);
    kt_performance perf;
    int rc = parse(&perf, "sr = 16000\nroom = 1 1 1\nbeta = 0.5\nmic a 0.2 0.5 0.5\n"
                          "impulse 0.5 0.5 0.5 0 0.5ms\n", "f 0 0.01\n");
    kt_render_options o;
    kt_render_options_default(&o);
    o.nthreads = 1;
    double t = 0.002;
    o.snapshot_times_s = &t;
    o.snapshot_count = 1;
    o.snapshot_axis = 2;
    o.snapshot_position_m = 0.5;
    char stem[300];
    snprintf(stem, sizeof stem, "%s/pic_snap", dir);
    o.snapshot_stem = stem;
    kt_render_result res;
    kt_score_error err = {0};
    if (rc == 0)
        rc = kt_render(&perf, out, &o, &res, &err);
    KT_CHECK(rc == 0 && res.snapshots_written == 1, "snapshot render: %s", err.message);
    kt_render_result_free(&res);
    int w = 0, h = 0;
    long red = 0, blue = 0;
    KT_CHECK(read_png(snap, &w, &h, &red, &blue) == 0, "snapshot is a PNG");
    /* 2 ms after a 0.5 ms pulse: a ring of 0.6 m radius, compression
     * (red) outside rarefaction (blue), both present. */
    KT_CHECK(w > 300 && h > 300 && red > 100 && blue > 100, "%dx%d red %ld blue %ld", w, h, red,
             blue);
    kt_error e;
    kt_error_clear(&e);
    KT_CHECK(kt_png_plot_file(out, plot, NULL, NULL, &e) == 0, "plot: %s", e.message);
    KT_CHECK(read_png(plot, &w, &h, &red, &blue) == 0 && w >= 900, "plot is a PNG %dx%d", w, h);
    KT_CHECK(kt_png_plot_file("/nonexistent.wav", plot, NULL, NULL, &e) == KT_EIO, "plot of nothing");
    remove(out);
    remove(snap);
    remove(plot);
    kt_performance_free(&perf);
}

/* A recording played into a drum-less room, and one at the wrong rate. */
static void test_sound_file_source(void)
{
    char wav[300], wav8k[300], out[300], orc[1400];
    snprintf(wav, sizeof wav, "%s/src.wav", dir);
    snprintf(wav8k, sizeof wav8k, "%s/src8k.wav", dir);
    snprintf(out, sizeof out, "%s/heard.wav", dir);
    for (int k = 0; k < 2; k++) {
        SF_INFO info = {0};
        info.samplerate = k ? 8000 : 16000;
        info.channels = 1;
        info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
        SNDFILE *f = sf_open(k ? wav8k : wav, SFM_WRITE, &info);
        float x[800];
        for (int i = 0; i < 800; i++)
            x[i] = (float)sin(2 * 3.14159265 * 500 * i / info.samplerate);
        if (f) {
            sf_writef_float(f, x, 800);
            sf_close(f);
        }
    }
    snprintf(orc, sizeof orc,
             "sr = 16000\nroom = 1 1 1\nbeta = 0.5\nmic a 0.8 0.5 0.5\n"
             "soundfile \"%s\" 0.2 0.5 0.5 0.01 2\n", wav);
    kt_render_result res;
    kt_score_error err = {0};
    /* No score, no tail: the file's 50 ms + 10 ms start set the length. */
    int rc = render(orc, "", out, 1, 0.0, &res, &err);
    KT_CHECK(rc == 0 && res.total_steps == 960, "file source render: %lld steps",
             (long long)res.total_steps);
    KT_CHECK(res.summary && res.summary[0].peak > 0.5, "the mic hears the file");
    kt_render_result_free(&res);
    remove(out);
    snprintf(orc, sizeof orc,
             "sr = 16000\nroom = 1 1 1\nmic a 0.8 0.5 0.5\nsoundfile \"%s\" 0.2 0.5 0.5\n",
             wav8k);
    rc = render(orc, "", out, 1, 0.0, &res, &err);
    kt_render_result_free(&res);
    KT_CHECK(rc < 0 && err.line == 4 && err.col == 1 && count_files("heard") == 0,
             "8 kHz file in a 16 kHz room: refused at 4:1, got %d:%d %s", err.line, err.col,
             err.message);
    remove(wav);
    remove(wav8k);
}

static void test_failures_leave_nothing(void)
{
    char out[300];
    snprintf(out, sizeof out, "%s/fail.wav", dir);
    kt_render_result res;
    kt_score_error err = {0};
    /* Overlapping drums: found when checking the room, before any output. */
    const char *two =
        "sr = 16000\nroom = 2 1 1\nmic m 1 0.5 0.8\n"
        "instr 1\n size = 23\n pitch = D3\n pos = 0.5 0.5 0.6\nendin\n"
        "instr 2\n size = 23\n pitch = E3\n pos = 0.9 0.5 0.6\nendin\n";
    int rc = render(two, "i 1 0 0.01 f\n", out, 1, 0.01, &res, &err);
    kt_render_result_free(&res);
    KT_CHECK(rc == KT_EINVAL && err.line == 9 && err.col == 1 && strstr(err.message, "overlaps"),
             "overlap at 9:1: %d:%d %s", err.line, err.col, err.message);
    KT_CHECK(count_files("fail") == 0, "no file after a failed render");

    /* A membrane grid finer than the stability rule allows: refused by the
     * timpani when the drum is created, reported at the instr line. */
    const char *fine =
        "sr = 16000\nroom = 0.8 0.8 0.9\nmic m 0.4 0.4 0.75\n"
        "instr 1\n size = 23\n pitch = D3\n pos = 0.4 0.4 0.6\n intervals = 5000\nendin\n";
    rc = render(fine, "i 1 0 0.01 f\n", out, 1, 0.01, &res, &err);
    kt_render_result_free(&res);
    KT_CHECK(rc < 0 && strcmp(err.file, "e2e.orc") == 0 && err.line == 4 && err.col == 1 &&
                 strstr(err.message, "cannot create drum 1"),
             "drum creation error at 4:1: %s:%d:%d %s", err.file, err.line, err.col, err.message);
    KT_CHECK(count_files("fail") == 0, "no file after a failed render");

    /* An unwritable destination: refused before the first step (issue #24). */
    rc = render(small_orc, "i 1 0 0.01 f\n", "/nonexistent-dir/x.wav", 1, 0.0, &res, &err);
    kt_render_result_free(&res);
    KT_CHECK(rc == KT_EINVAL && res.steps == 0 && strstr(err.message, "/nonexistent-dir/x.wav"),
             "write: %d after %lld steps: %s", rc, (long long)res.steps, err.message);

    kt_performance perf;
    KT_CHECK(parse(&perf, small_orc, small_sco) == 0, "parse");
    kt_render_options o;
    kt_render_options_default(&o);
    o.nthreads = 1;
    o.device = KT_DEVICE_GPU;
    rc = kt_render(&perf, out, &o, &res, &err);
    /* Without CUDA or without a GPU: refused, nothing written; with one: on it. */
    KT_CHECK(rc == KT_ENOTSUP ? strstr(err.message, "--device gpu") != NULL
                              : rc == 0 && strncmp(res.device, "GPU ", 4) == 0,
             "gpu: %d %s", rc, rc ? err.message : res.device);
    KT_CHECK(rc == 0 || count_files("fail") == 0, "no file after a refused --device gpu");
    if (rc == 0)
        remove(out);
    kt_render_result_free(&res);
    /* Estimate: a few steps timed, nothing written. */
    kt_render_options_default(&o);
    o.nthreads = 1;
    o.estimate_steps = 50;
    o.tail_s = 0.1;
    rc = kt_render(&perf, out, &o, &res, &err);
    KT_CHECK(rc == 0 && res.steps == 50 && res.total_steps == 3200 && res.seconds_per_step > 0 &&
                 res.estimated_wall_s > 0, "estimate: %lld steps", (long long)res.steps);
    KT_CHECK(count_files("fail") == 0, "estimate writes nothing");
    kt_render_result_free(&res);
    kt_performance_free(&perf);
}

int main(void)
{
    if (getenv("KETTLE_TEST_SANITIZED"))
        tail_s = 0.02;
    snprintf(dir, sizeof dir, "/tmp/kettle_render_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_drum_render();
    test_impulse_response();
    test_pictures();
    test_sound_file_source();
    test_failures_leave_nothing();
    rmdir(dir);
    return kt_test_finish("test_render_e2e");
}
