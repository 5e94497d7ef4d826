/* test_room_io.c - the room's inputs and outputs: audio files (WAV/AIFF/FLAC,
 * sample formats, per-mic and interleaved, the fixed scale, normalisation and
 * raw gain with clipping, float files unclipped, resampling to another rate,
 * temporary + rename, refused extensions), moving microphones, a
 * sound file as a source, the memory check, and messages for bad parameters. */
#include "kettle.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <dirent.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static void small_params(kt_room_params *p)
{
    kt_room_params_default(p);
    p->size_m[0] = 0.5;
    p->size_m[1] = 0.4;
    p->size_m[2] = 0.3;
    p->sample_rate_hz = 16000;
    p->nthreads = 1; /* threading has its own test; small grids gain nothing */
}

static kt_room *small_room(void)
{
    kt_room_params p;
    small_params(&p);
    kt_room *room = NULL;
    kt_error err;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "create: %s", err.message);
    return room;
}

static void path_in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* Reads a whole file; returns frames, fills info, data (caller frees). */
static int64_t read_sound(const char *path, SF_INFO *info, double **data)
{
    memset(info, 0, sizeof *info);
    SNDFILE *f = sf_open(path, SFM_READ, info);
    *data = NULL;
    if (!f)
        return -1;
    *data = malloc(sizeof **data * (size_t)(info->frames * info->channels + 1));
    int64_t got = sf_readf_double(f, *data, info->frames);
    sf_close(f);
    return got;
}

static int files_named_like(const char *fragment)
{
    DIR *d = opendir(dir);
    int count = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        count += strstr(e->d_name, fragment) != NULL;
    if (d)
        closedir(d);
    return count;
}

static void test_audio_files(void)
{
    kt_room *room = small_room();
    kt_error err;
    const double src[3] = {0.1, 0.12, 0.08}, a[3] = {0.4, 0.3, 0.2}, b[3] = {0.2, 0.1, 0.25};
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);
    KT_CHECK(kt_room_add_mic(room, "left", a, &err) == 0, "%s", err.message);
    KT_CHECK(kt_room_add_mic(room, "right", b, &err) == 1, "%s", err.message);
    KT_CHECK(kt_room_add_mic(room, "left", b, &err) < 0 && strstr(err.message, "already"),
             "duplicate mic name: %s", err.message);
    KT_CHECK(kt_room_run(room, 800, NULL, NULL, &err) == KT_OK, "%s", err.message);

    char path[512], p1[512];
    kt_output_options o;
    kt_channel_summary sum[2];
    const struct { const char *name; kt_sample_format fmt; int sf; } cases[] = {
        {"ir16.wav", KT_PCM16, SF_FORMAT_WAV | SF_FORMAT_PCM_16},
        {"ir24.wav", KT_PCM24, SF_FORMAT_WAV | SF_FORMAT_PCM_24},
        {"irf.wav", KT_FLOAT32, SF_FORMAT_WAV | SF_FORMAT_FLOAT},
        {"ird.wav", KT_FLOAT64, SF_FORMAT_WAV | SF_FORMAT_DOUBLE},
        {"ir16.flac", KT_PCM16, SF_FORMAT_FLAC | SF_FORMAT_PCM_16},
        {"ir24.FLAC", KT_PCM24, SF_FORMAT_FLAC | SF_FORMAT_PCM_24},
        {"ir32.aif", KT_PCM32, SF_FORMAT_AIFF | SF_FORMAT_PCM_32},
        {"irf.aiff", KT_FLOAT32, SF_FORMAT_AIFF | SF_FORMAT_FLOAT},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kt_output_options_default(&o);
        o.normalize = 1;
        o.sample_format = cases[c].fmt;
        path_in_dir(path, sizeof path, cases[c].name);
        int rc = kt_room_write_audio(room, path, &o, sum, &err);
        KT_CHECK(rc == KT_OK, "%s: %s", cases[c].name, err.message);
        SF_INFO info;
        double *d;
        int64_t frames = read_sound(path, &info, &d);
        KT_CHECK(frames == 800 && info.channels == 2 && info.samplerate == 16000 &&
                     info.format == cases[c].sf,
                 "%s: %lld frames, %d channels, %d Hz, format %x", cases[c].name,
                 (long long)frames, info.channels, info.samplerate, info.format);
        /* Normalised: the loudest channel peaks at -1 dBFS. */
        double peak = 0, target = pow(10, -1.0 / 20);
        for (int64_t i = 0; i < 2 * frames; i++)
            peak = fmax(peak, fabs(d[i]));
        KT_CHECK(fabs(peak - target) < 2e-4, "%s: peak %g, want %g", cases[c].name, peak, target);
        KT_CHECK(fabs(fmax(sum[0].peak, sum[1].peak) - target) < 1e-12 && sum[0].clipped == 0,
                 "%s: summary peak %g", cases[c].name, fmax(sum[0].peak, sum[1].peak));
        free(d);
    }
    /* By default the scale is fixed: full scale is KT_FULL_SCALE_PA, so the
     * same pressure always gives the same sample. */
    int64_t n;
    const double *sig = kt_room_mic_signal(room, 0, &n);
    kt_output_options_default(&o);
    o.sample_format = KT_FLOAT64;
    path_in_dir(path, sizeof path, "fixed.wav");
    KT_CHECK(kt_room_write_audio(room, path, &o, sum, &err) == KT_OK, "%s", err.message);
    double *fixed;
    SF_INFO fi;
    int64_t nf = read_sound(path, &fi, &fixed);
    int same = nf == n && sum[0].gain == 1.0 / KT_FULL_SCALE_PA;
    double sum2 = 0;
    for (int64_t i = 0; i < n && nf == n; i++) {
        same &= fixed[2 * i] == sig[i] * (1.0 / KT_FULL_SCALE_PA);
        sum2 += fixed[2 * i] * fixed[2 * i];
    }
    KT_CHECK(same, "fixed scale: sample = pressure / %g Pa, gain %g", KT_FULL_SCALE_PA,
             sum[0].gain);
    KT_CHECK_REL(sum[0].rms, sqrt(sum2 / (double)n), 1e-12, 0);
    free(fixed);
    /* Per-mic files hold the interleaved file's channels. */
    kt_output_options_default(&o);
    o.sample_format = KT_FLOAT32;
    o.per_mic = 1;
    path_in_dir(path, sizeof path, "take.wav");
    KT_CHECK(kt_room_write_audio(room, path, &o, NULL, &err) == KT_OK, "%s", err.message);
    SF_INFO info, i1;
    double *both, *left;
    int64_t nb = read_sound(path, &info, &both);
    path_in_dir(p1, sizeof p1, "take_left.wav");
    int64_t nl = read_sound(p1, &i1, &left);
    KT_CHECK(nb == 800 && nl == 800 && i1.channels == 1, "per-mic file: %lld frames, %d channels",
             (long long)nl, i1.channels);
    for (int64_t i = 0; i < nl && nb == nl; i++)
        if (left[i] != both[2 * i]) {
            KT_CHECK(0, "per-mic sample %lld differs", (long long)i);
            break;
        }
    path_in_dir(p1, sizeof p1, "take_right.wav");
    KT_CHECK(access(p1, F_OK) == 0, "no %s", p1);
    free(both);
    free(left);
    /* Raw gain: sample = gain * pascals, clipped at full scale and counted. */
    double pmax = 0;
    for (int64_t i = 0; i < n; i++)
        pmax = fmax(pmax, fabs(sig[i]));
    kt_output_options_default(&o);
    o.normalize = 0;
    o.raw_gain = 0.5 / pmax;
    path_in_dir(path, sizeof path, "raw.wav");
    KT_CHECK(kt_room_write_audio(room, path, &o, sum, &err) == KT_OK, "%s", err.message);
    KT_CHECK(fabs(sum[0].peak - 0.5) < 1e-12 && sum[0].clipped == 0, "raw peak %g", sum[0].peak);
    o.raw_gain = 4.0 / pmax;
    KT_CHECK(kt_room_write_audio(room, path, &o, sum, &err) == KT_OK, "%s", err.message);
    double *d16;
    read_sound(path, &fi, &d16);
    KT_CHECK(fabs(sum[0].peak - 4.0) < 1e-12 && sum[0].clipped > 0 && d16 &&
                 kt_test_max_abs(d16, 2 * (int)n) == 1.0,
             "24-bit clipped at full scale: %lld samples, the signal peaks at %g",
             (long long)sum[0].clipped, sum[0].peak);
    free(d16);
    /* Refusals. */
    kt_output_options_default(&o);
    path_in_dir(path, sizeof path, "ir.mp3");
    int rc = kt_room_write_audio(room, path, &o, NULL, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, ".mp3"), "mp3: %s", err.message);
    o.sample_format = KT_FLOAT32;
    path_in_dir(path, sizeof path, "f.flac");
    rc = kt_room_write_audio(room, path, &o, NULL, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "FLAC"), "float flac: %s", err.message);
    o.sample_format = KT_PCM16;
    rc = kt_room_write_audio(room, "/nonexistent-dir-kettle/x.wav", &o, NULL, &err);
    KT_CHECK(rc == KT_EIO, "missing directory: %s", err.message);
    KT_CHECK(files_named_like(".tmp-") == 0, "temporary files left behind");
    kt_room_destroy(room);
}

/* A float file holds gain x pressure unclipped: --bits 64f --gain 1 writes
 * the computed pascals exactly, however loud (issue 20; it was clipped at 1). */
static void test_float_unclipped(void)
{
    kt_room *room = small_room();
    kt_error err;
    const double src[3] = {0.1, 0.12, 0.08}, a[3] = {0.4, 0.3, 0.2};
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);
    kt_room_add_mic(room, "a", a, &err);
    KT_CHECK(kt_room_run(room, 400, NULL, NULL, &err) == KT_OK, "%s", err.message);
    int64_t n;
    const double *sig = kt_room_mic_signal(room, 0, &n);
    double pmax = 0;
    for (int64_t i = 0; i < n; i++)
        pmax = fmax(pmax, fabs(sig[i]));
    KT_CHECK(pmax > 10, "a loud impulse: %g Pa", pmax);
    const kt_sample_format formats[2] = {KT_FLOAT64, KT_FLOAT32};
    for (int f = 0; f < 2; f++) {
        kt_output_options o;
        kt_output_options_default(&o);
        o.normalize = 0;
        o.raw_gain = 1.0;
        o.sample_format = formats[f];
        char path[512];
        path_in_dir(path, sizeof path, f ? "unclipped32.wav" : "unclipped64.wav");
        KT_CHECK(kt_room_write_audio(room, path, &o, NULL, &err) == KT_OK, "%s", err.message);
        SF_INFO info;
        double *d;
        int64_t got = read_sound(path, &info, &d);
        int exact = got == n;
        for (int64_t i = 0; exact && i < n; i++)
            exact = f ? d[i] == (double)(float)sig[i] : d[i] == sig[i];
        KT_CHECK(exact && kt_test_max_abs(d, (int)got) == (f ? (double)(float)pmax : pmax),
                 "%s: the computed pascals, unclipped (file peak %g, computed %g)",
                 f ? "32f" : "64f", d ? kt_test_max_abs(d, (int)got) : 0.0, pmax);
        free(d);
    }
    kt_room_destroy(room);
}

/* --out-sr: a 16 kHz room written at 44.1 kHz through libsamplerate keeps
 * the signal's timing and its energy per second; rates out of reach are
 * refused. */
static void test_resampled(void)
{
    kt_room *room = small_room();
    kt_error err;
    const double src[3] = {0.1, 0.12, 0.08}, a[3] = {0.4, 0.3, 0.2};
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);   /* 1 ms: below 2 kHz */
    kt_room_add_mic(room, "a", a, &err);
    KT_CHECK(kt_room_run(room, 1600, NULL, NULL, &err) == KT_OK, "%s", err.message);
    int64_t n;
    const double *sig = kt_room_mic_signal(room, 0, &n);
    kt_output_options o;
    kt_output_options_default(&o);
    o.sample_format = KT_FLOAT64;
    o.raw_gain = 1.0;
    o.sample_rate_hz = 44100;
    char path[512];
    path_in_dir(path, sizeof path, "resampled.wav");
    kt_channel_summary sum;
    KT_CHECK(kt_room_write_audio(room, path, &o, &sum, &err) == KT_OK, "%s", err.message);
    SF_INFO info;
    double *d;
    int64_t got = read_sound(path, &info, &d);
    KT_CHECK(info.samplerate == 44100 && got == llround(n * 44100.0 / 16000), "%d Hz, %lld frames",
             info.samplerate, (long long)got);
    double e_in = 0, e_out = 0, peak_in = kt_test_max_abs(sig, (int)n);
    double peak_out = d ? kt_test_max_abs(d, (int)got) : 0;
    int64_t at_in = -1, at_out = -1;   /* the direct sound: first past half the peak */
    for (int64_t i = 0; i < n; i++) {
        e_in += sig[i] * sig[i] / 16000;
        at_in = at_in < 0 && fabs(sig[i]) > 0.5 * peak_in ? i : at_in;
    }
    for (int64_t i = 0; d && i < got; i++) {
        e_out += d[i] * d[i] / 44100;
        at_out = at_out < 0 && fabs(d[i]) > 0.5 * peak_out ? i : at_out;
    }
    KT_CHECK(fabs(e_out / e_in - 1) < 0.01, "energy per second kept: %g of %g", e_out, e_in);
    KT_CHECK(fabs(at_out / 44100.0 - at_in / 16000.0) < 1.0 / 16000, "the direct sound stays at "
             "%g s, not %g s", at_in / 16000.0, at_out / 44100.0);
    KT_CHECK(fabs(sum.peak - peak_out) < 1e-6 * sum.peak, "summary peak %g", sum.peak);
    free(d);
    o.sample_rate_hz = 500;
    KT_CHECK(kt_room_write_audio(room, path, &o, NULL, &err) == KT_EINVAL &&
                 strstr(err.message, "1000..768000"), "500 Hz: %s", err.message);
    o.sample_rate_hz = 44100.5;
    KT_CHECK(kt_room_write_audio(room, path, &o, NULL, &err) == KT_EINVAL, "44100.5 Hz refused");
    kt_room_destroy(room);
}

static void test_moving_mic(void)
{
    kt_room *room = small_room();
    kt_error err;
    double Q = kt_room_get_grid(room)->spacing_m, k = kt_room_get_grid(room)->time_step_s;
    const double src[3] = {0.1, 0.12, 0.08};
    /* A and B one node apart along x, at nodes; the mover goes A -> B. */
    const double A[3] = {5 * Q, 4 * Q, 3 * Q}, B[3] = {6 * Q, 4 * Q, 3 * Q};
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);
    kt_room_add_mic(room, "A", A, &err);
    kt_room_add_mic(room, "B", B, &err);
    int mv = kt_room_add_mic(room, "mover", A, &err);
    double t0 = 100 * k, t1 = 300 * k;
    KT_CHECK(kt_room_mic_waypoint(room, mv, t0, A, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_mic_waypoint(room, mv, t1, B, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_mic_waypoint(room, mv, t0, B, &err) == KT_EINVAL, "time going back accepted");
    const double outside[3] = {9, 0, 0};
    KT_CHECK(kt_room_mic_waypoint(room, mv, 1.0, outside, &err) == KT_EINVAL &&
                 strstr(err.message, "outside"),
             "waypoint outside: %s", err.message);
    kt_room_run(room, 400, NULL, NULL, &err);
    const double *a = kt_room_mic_signal(room, 0, NULL), *b = kt_room_mic_signal(room, 1, NULL);
    const double *m = kt_room_mic_signal(room, mv, NULL);
    double scale = 0;
    for (int i = 0; i < 400; i++)
        scale = fmax(scale, fabs(a[i]));
    /* Sample s is taken at time (s+1) k. */
    for (int s = 0; s < 400; s++) {
        double t = (s + 1) * k, f = t <= t0 ? 0 : t >= t1 ? 1 : (t - t0) / (t1 - t0);
        double want = (1 - f) * a[s] + f * b[s];
        if (fabs(m[s] - want) > 1e-12 * scale) {
            KT_CHECK(0, "moving mic sample %d: %g, want %g", s, m[s], want);
            break;
        }
    }
    KT_CHECK(scale > 0, "silent mics");
    kt_room_destroy(room);
}

static void write_mono(const char *path, const double *x, int n, int rate, int channels)
{
    SF_INFO info = {0};
    info.samplerate = rate;
    info.channels = channels;
    info.format = SF_FORMAT_WAV | SF_FORMAT_DOUBLE;
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    double *buf = calloc((size_t)n * channels, sizeof *buf);
    for (int i = 0; i < n; i++)
        buf[i * channels] = x[i];
    sf_writef_double(f, buf, n);
    sf_close(f);
    free(buf);
}

static void test_file_source(void)
{
    kt_room *r1 = small_room(), *r2 = small_room();
    kt_error err;
    double k = kt_room_get_grid(r1)->time_step_s, tau = 1e-3, amp = 0.7;
    int n = (int)(tau / k) + 1;
    double x[64];
    for (int i = 0; i < n; i++)
        x[i] = 0.5 * (1 - cos(2 * KT_PI * i * k / tau));
    char path[512];
    path_in_dir(path, sizeof path, "pulse.wav");
    write_mono(path, x, n, 16000, 1);
    const double src[3] = {0.1, 0.12, 0.08}, mic[3] = {0.4, 0.3, 0.2};
    KT_CHECK(kt_room_add_file_source(r1, path, src, 5 * k, amp, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_impulse(r2, src, 5 * k, tau, amp, &err) == KT_OK, "%s", err.message);
    kt_room_add_mic(r1, "m", mic, &err);
    kt_room_add_mic(r2, "m", mic, &err);
    kt_room_run(r1, 300, NULL, NULL, &err);
    kt_room_run(r2, 300, NULL, NULL, &err);
    const double *a = kt_room_mic_signal(r1, 0, NULL), *b = kt_room_mic_signal(r2, 0, NULL);
    double diff = 0, ref = 0;
    for (int i = 0; i < 300; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        ref = fmax(ref, fabs(b[i]));
    }
    KT_CHECK(ref > 0 && diff < 1e-9 * ref, "file source differs from the impulse: %g of %g", diff,
             ref);
    /* The per-phase clock counts every step. */
    kt_room_timing tm;
    kt_room_get_timing(r1, &tm);
    KT_CHECK(tm.steps == 300 && tm.bulk_s > 0 && tm.sources_s >= 0 && tm.output_s >= 0,
             "timing: %lld steps, bulk %g s", (long long)tm.steps, tm.bulk_s);
    path_in_dir(path, sizeof path, "pulse8k.wav");
    write_mono(path, x, n, 8000, 1);
    int rc = kt_room_add_file_source(r1, path, src, 0, 1, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "sample rate"), "rate: %s", err.message);
    path_in_dir(path, sizeof path, "stereo.wav");
    write_mono(path, x, n, 16000, 2);
    rc = kt_room_add_file_source(r1, path, src, 0, 1, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "mono"), "stereo: %s", err.message);
    rc = kt_room_add_file_source(r1, "/nonexistent-kettle.wav", src, 0, 1, &err);
    KT_CHECK(rc == KT_EIO, "missing file: %s", err.message);
    kt_room_destroy(r1);
    kt_room_destroy(r2);
}

static void test_memory_and_parameters(void)
{
    kt_room_params p;
    kt_room_grid g;
    kt_error err;
    kt_room *room = NULL;
    small_params(&p);
    KT_CHECK(kt_room_estimate(&p, &g, &err) == KT_OK, "%s", err.message);
    KT_CHECK(g.bytes == 2 * sizeof(double) * (size_t)(g.nx + 2) * (g.ny + 2) * (g.nz + 2),
             "bytes %zu", g.bytes);
    p.memory_limit_bytes = g.bytes - 1;
    int rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_ENOMEM && room == NULL && strstr(err.message, "needs"), "limit: %s",
             err.message);
    /* 1 km^3 at 44.1 kHz would need petabytes: refused before allocating. */
    kt_room_params_default(&p);
    p.size_m[0] = p.size_m[1] = p.size_m[2] = 1000;
    rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_ENOMEM && strstr(err.message, "available"), "huge: %s", err.message);
    /* Viscosity and single precision change the bytes per point. */
    small_params(&p);
    p.viscosity_m = 1e-6;
    p.precision = KT_SINGLE;
    kt_room_estimate(&p, &g, &err);
    KT_CHECK(g.bytes == 3 * sizeof(float) * (size_t)(g.nx + 2) * (g.ny + 2) * (g.nz + 2),
             "viscous single bytes %zu", g.bytes);
    KT_CHECK(3 * g.courant * g.courant + 6 * g.viscosity_eta <= 1 + 1e-12, "unstable grid");

    small_params(&p);
    p.size_m[1] = -1;
    rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "size along y"), "negative: %s", err.message);
    small_params(&p);
    p.sample_rate_hz = 0;
    rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "sample rate"), "rate: %s", err.message);
    small_params(&p);
    p.size_m[2] = 0.05; /* under 2 cells of 3.7 cm */
    rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "3 nodes"), "tiny: %s", err.message);
    small_params(&p);
    p.wall_beta = -0.1;
    rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "beta"), "beta: %s", err.message);
    room = small_room();
    const double outside[3] = {0.1, 0.5, 0.1};
    rc = kt_room_add_impulse(room, outside, 0, 1e-3, 1, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "outside"), "source outside: %s", err.message);
    rc = kt_room_add_mic(room, "m", outside, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "outside"), "mic outside: %s", err.message);
    kt_room_destroy(room);
}

/* The default 1 m^3 room at 44.1 kHz is the thesis' 75^3 grid. */
static void test_default_grid(void)
{
    kt_room_params p;
    kt_room_grid g;
    kt_room_params_default(&p);
    KT_CHECK(kt_room_estimate(&p, &g, NULL) == KT_OK, "estimate");
    KT_CHECK(g.nx == 75 && g.ny == 75 && g.nz == 75, "grid %d x %d x %d", g.nx, g.ny, g.nz);
    KT_CHECK_REL(g.courant, 0.577234, 1e-6, 0);
    p.precision = KT_SINGLE;
    kt_room_estimate(&p, &g, NULL);
    KT_CHECK(g.courant <= (1 - KT_SINGLE_COURANT_BACKOFF) / sqrt(3.0) * (1 + 1e-12),
             "single courant %.8f", g.courant);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle-test-room-io-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_default_grid();
    test_audio_files();
    test_float_unclipped();
    test_resampled();
    test_moving_mic();
    test_file_source();
    test_memory_and_parameters();
    kt_test_remove_dir(dir);   /* the scratch folder */
    return kt_test_finish("test_room_io");
}
