/* test_render_guard.c - the render's stability checks and limits (issue #9):
 *  - energy growth: a single-precision room with rigid walls drifts upward
 *    (thesis 5.4.2); the render stops, names the time, the air and single
 *    precision as the likely cause, keeps an older output file untouched and
 *    leaves the audio up to the last good check as a valid partial file;
 *  - NaN: a strike of 1e300 N overflows the membrane; the message names the
 *    drum, its line and a parameter as the cause;
 *  - the air: a sound file pulse of 1e308 grows the field beyond 1e30, two
 *    overflow it to infinity; the message names the place in metres and a
 *    source's amplitude as the likely cause;
 *  - absorbing walls: a soft stroke on a 29-inch drum in a 1 m box with
 *    absorbing walls runs to the end (their second-order update gave the
 *    drum energy back and the guard stopped it, issue #20); the guard counts
 *    the energy that leaves through those walls, and still stops energy that
 *    appears inside with nothing feeding the room, or walls that give back
 *    more than they took, each with its cause;
 *  - costly checks (a GPU bringing a hall's fields home) come less often;
 *  - limits: sample rate over 384 kHz, more than 64 drums and over an hour
 *    of audio are refused before anything is built, unless overridden; a
 *    memory estimate above the limit is refused with both figures. */
#include "kt_guard.h"
#include "kt_test.h"
#include "room_internal.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static int render(const char *orc, const char *sco, const char *out, int single,
                  kt_render_options *o, kt_render_result *res, kt_score_error *err)
{
    kt_performance perf;
    kt_performance_init(&perf);
    memset(res, 0, sizeof *res);
    int rc = kt_score_parse(&perf, "g.orc", orc, "g.sco", sco, err);
    if (rc == 0) {
        if (single)
            perf.room.memory_limit_bytes = 1 << 20;
        rc = kt_render(&perf, out, o, res, err);
    }
    kt_performance_free(&perf);
    return rc;
}

static int render_plain(const char *orc, const char *sco, const char *out, kt_render_result *res,
                        kt_score_error *err)
{
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_CPU;   /* the times asserted are the CPU's 256-step checks */
    o.nthreads = 1;
    o.tail_s = 0;
    return render(orc, sco, out, 0, &o, res, err);
}

static sf_count_t frames_of(const char *path)
{
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    if (!f)
        return -1;
    float *x = calloc((size_t)info.frames * info.channels + 1, sizeof *x);
    sf_count_t got = sf_readf_float(f, x, info.frames);
    int finite = 1;
    for (sf_count_t i = 0; i < got * info.channels; i++)
        finite &= x[i] == x[i] && x[i] <= 1 && x[i] >= -1;
    free(x);
    sf_close(f);
    return finite && got == info.frames ? info.frames : -2;
}

static void check_energy_growth(void)
{
    char out[128], partial[160];
    snprintf(out, sizeof out, "%s/grow.wav", dir);
    FILE *f = fopen(out, "w");
    fputs("an older take", f);
    fclose(f);
    const char *orc = "sr = 16000\nroom = 0.6 0.6 0.6\nprecision = single\n"
                      "mic m 0.3 0.3 0.3\nimpulse 0.3 0.3 0.3 0 0.5ms\n";
    kt_render_result res;
    kt_score_error err = {0};
    /* The pulse leaves a uniform offset in Psi that grows a little every
     * step (the rigid box's uniform mode; docs/room.md "Precision"): single
     * precision loses digits of p = Psi^{n+1} - Psi^n in it, and the noise's
     * energy grows until the guard stops the render (step 27,904). */
    int rc = render_plain(orc, "f 0 6\n", out, &res, &err);
    KT_CHECK(rc == KT_EUNSTABLE && strstr(err.message, "energy grew") &&
                 strstr(err.message, "the air") && strstr(err.message, "single precision") &&
                 strstr(err.message, "t = "),
             "energy growth reported: %s", err.message);
    fprintf(stderr, "energy growth: %s\n", err.message);
    KT_CHECK(res.steps < res.total_steps / 2, "stopped early: %lld of %lld steps",
             (long long)res.steps, (long long)res.total_steps);
    kt_render_partial_path(out, partial, sizeof partial);
    sf_count_t n = frames_of(partial);
    KT_CHECK(strcmp(res.partial_path, partial) == 0 && n > 0 && n <= res.steps && n % 256 == 0,
             "partial file %s valid with %lld frames (up to the last good check)",
             res.partial_path, (long long)n);
    char buf[64] = {0};
    f = fopen(out, "r");
    KT_CHECK(f && fgets(buf, sizeof buf, f) && strcmp(buf, "an older take") == 0,
             "the older output is untouched");
    if (f)
        fclose(f);
    kt_render_result_free(&res);
    remove(partial);
    remove(out);
}

static const char *drum_orc = "sr = 16000\nroom = 0.8 0.8 0.9\nbeta = 0.2\n"
                              "mic near 0.4 0.4 0.75\n"
                              "instr 1\n  size = 23\n  pitch = D3\n  pos = 0.4 0.4 0.6\nendin\n";

static void check_nan_drum(void)
{
    char out[128];
    snprintf(out, sizeof out, "%s/nan.wav", dir);
    kt_render_result res;
    kt_score_error err = {0};
    int rc = render_plain(drum_orc, "i 1 0.01 0.05 1e300\n", out, &res, &err);
    KT_CHECK(rc == KT_EUNSTABLE && strstr(err.message, "drum '1'") &&
                 strstr(err.message, "a parameter of drum") && err.line == 5,
             "NaN on the head reported at the drum's line (%d): %s", err.line, err.message);
    KT_CHECK(strstr(err.message, "t = 0.01") != NULL, "at the time of the strike: %s",
             err.message);
    KT_CHECK(access(out, F_OK) != 0, "no output under the real name");
    kt_render_result_free(&res);
    char partial[160];
    kt_render_partial_path(out, partial, sizeof partial);
    remove(partial);
}

/* A pulse of peak 1e308 as a 64-bit float sound file: a source the score
 * refuses as an impulse (kt_physics.h: KT_SOURCE_MAX_PRESSURE_PA) but can
 * play from a file, whose samples it does not read in advance. */
static void write_blast(const char *path)
{
    SF_INFO info = {0};
    info.samplerate = 16000;
    info.channels = 1;
    info.format = SF_FORMAT_WAV | SF_FORMAT_DOUBLE;
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    double x[17];
    for (int m = 0; m < 17; m++)
        x[m] = 0.5e308 * (1 - cos(2 * 3.14159265358979 * m / 16));
    KT_CHECK(f && sf_writef_double(f, x, 17) == 17, "cannot write %s", path);
    if (f)
        sf_close(f);
}

/* The air: one pulse of 1e308 stays finite but absurd; two at one place
 * overflow to infinity, which the scheme turns into NaN (0 x inf) next door. */
static void check_air(int pulses, const char *words, const char *what)
{
    char out[128], blast[128], orc[512];
    snprintf(out, sizeof out, "%s/air.wav", dir);
    snprintf(blast, sizeof blast, "%s/blast.wav", dir);
    write_blast(blast);
    snprintf(orc, sizeof orc, "sr = 16000\nroom = 0.6 0.6 0.6\nbeta = 0.3\nmic m 0.3 0.3 0.3\n"
             "soundfile \"%s\" 0.2 0.3 0.4\n%s%s%s", blast, pulses > 1 ? "soundfile \"" : "",
             pulses > 1 ? blast : "", pulses > 1 ? "\" 0.2 0.3 0.4\n" : "");
    kt_render_result res;
    kt_score_error err = {0};
    int rc = render_plain(orc, "f 0 0.1\n", out, &res, &err);
    int kind = words ? strstr(err.message, words) != NULL
                     : strstr(err.message, "infinity in the air") || strstr(err.message, "NaN in the air");
    KT_CHECK(rc == KT_EUNSTABLE && kind &&
                 strstr(err.message, "in the air at (") &&
                 strstr(err.message, "a source's amplitude") && strstr(err.message, "t = 0.016"),
             "%s: reported with time, place and cause: %s", what, err.message);
    kt_render_result_free(&res);
    char partial[160];
    kt_render_partial_path(out, partial, sizeof partial);
    remove(partial);
    remove(blast);
}

/* G2 on the 29-inch drum, pianissimo, in a 1 m box with absorbing walls
 * (the head at 0.75 m, the bowl's bottom 0.25 m above the floor: the old
 * walls fed it most there and the guard stopped it at 0.18 s). */
static void check_absorbing_soft_stroke(void)
{
    char out[128];
    snprintf(out, sizeof out, "%s/soft.wav", dir);
    const char *orc = "sr = 16000\nroom = 1 1 1\nwalls = absorbing\nmic m 0.5 0.3 0.8\n"
                      "instr 1\n  size = 29\n  pitch = G2\n  pos = 0.5 0.5 0.75\nendin\n";
    kt_render_result res;
    kt_score_error err = {0};
    int rc = render_plain(orc, "i 1 0 0.8 pp\n", out, &res, &err);
    KT_CHECK(rc == 0 && res.steps == res.total_steps, "soft stroke by absorbing walls stopped "
             "at step %lld of %lld: %s", (long long)res.steps, (long long)res.total_steps,
             err.message);
    KT_CHECK(frames_of(out) == res.total_steps, "the whole take was written");
    kt_render_result_free(&res);
    remove(out);
}

static void no_pedals(void *user, kt_checkpoint_drum *out, int *damp_next)
{
    (void)user, (void)out;
    *damp_next = 0;
}

/* The guard on an absorbing room after an impulse (a feed over its 0.5 ms):
 * `kick` 1 puts energy into the air at step 1200 with nothing feeding it,
 * 2 makes the walls' books show 1 % of the energy coming back in; 0 nothing.
 * Returns the guard's status at the end (or when it stopped); *stop the step. */
static int guard_absorbing(int kick, kt_guard_sync_fn sync, void *sync_user, int every,
                           kt_score_error *err, int64_t *stop)
{
    kt_performance perf;
    kt_performance_init(&perf);
    const char *orc = "sr = 16000\nroom = 0.8 0.7 0.6\nwalls = absorbing\n"
                      "mic m 0.3 0.3 0.3\nimpulse 0.4 0.3 0.3 0 0.5ms\n";
    int rc = kt_score_parse(&perf, "g.orc", orc, "g.sco", "f 0 0.2\n", err);
    kt_room *room = NULL;
    kt_render_guard *g = NULL;
    kt_error e;
    kt_render_options o;
    kt_render_options_default(&o);
    o.check_every_steps = every;
    const int total = 3200;
    if (rc == 0)
        rc = kt_room_create(&perf.room, &room, &e);
    if (rc == 0) {
        const double at[3] = {0.4, 0.3, 0.3};
        rc = kt_room_add_impulse(room, at, 0, 0.5e-3, perf.sources[0].amplitude, &e);
    }
    if (rc == 0)
        rc = kt_guard_create(&g, &perf, &o, "g.wav", total, room, NULL, no_pedals, NULL);
    if (rc == 0 && sync)
        kt_guard_set_sync(g, sync, sync_user, 0);
    KT_CHECK(rc == 0, "guard setup: %s", e.message);
    for (int64_t n = 1; rc == 0 && n <= total; n++) {
        rc = kt_room_step(room, &e);
        if (rc == 0 && n == 1200 && kick == 1) {   /* something inside blows up */
            double v = 0.1 * perf.sources[0].amplitude;   /* 1.6 % of the impulse's energy */
            kt_room_add_to_layer(room, 10, 10, 10, 1, 1, &v, 1.0);
        }
        if (rc == 0 && n == 1200 && kick == 2) {   /* the walls give energy back */
            double inflow, known;
            room_abc_exchange(room, &inflow, &known);
            room_abc_set_exchange(room, inflow + 0.01 * kt_room_wall_outflow(room), known);
        }
        if (rc == 0)
            rc = kt_guard_after_step(g, n, err);
        *stop = n;
    }
    kt_guard_destroy(g);
    kt_room_destroy(room);
    kt_performance_free(&perf);
    return rc;
}

static void check_absorbing_guard(void)
{
    kt_score_error err = {0};
    int64_t stop = 0;
    int rc = guard_absorbing(0, NULL, NULL, 0, &err, &stop);
    KT_CHECK(rc == 0 && stop == 3200, "the impulse leaving through absorbing walls was "
             "stopped at %lld: %s", (long long)stop, err.message);
    memset(&err, 0, sizeof err);
    rc = guard_absorbing(1, NULL, NULL, 0, &err, &stop);
    KT_CHECK(rc == KT_EUNSTABLE && strstr(err.message, "energy grew") &&
                 strstr(err.message, "the air") && stop <= 1280,
             "energy appearing inside an absorbing room: stopped at %lld: %s", (long long)stop,
             err.message);
    memset(&err, 0, sizeof err);
    rc = guard_absorbing(2, NULL, NULL, 0, &err, &stop);
    KT_CHECK(rc == KT_EUNSTABLE && strstr(err.message, "absorbing walls gave back") &&
                 strstr(err.message, "likely cause: the absorbing walls") && stop <= 1280,
             "absorbing walls giving energy back: stopped at %lld: %s", (long long)stop,
             err.message);
}

/* A device hook that takes 0.12 s, as bringing a hall's fields home does. */
static int slow_sync(void *user, kt_error *err)
{
    (void)err;
    ++*(int *)user;
    nanosleep(&(struct timespec){0, 120000000}, NULL);
    return KT_OK;
}

/* Checks that cost more than 2 % of the stepping between them (and over
 * 0.1 s) come less often, the last still made; an asked-for period is kept. */
static void check_costly_checks(void)
{
    kt_score_error err = {0};
    int64_t stop = 0;
    int calls = 0;
    int rc = guard_absorbing(0, slow_sync, &calls, 0, &err, &stop);
    KT_CHECK(rc == 0 && stop == 3200 && calls >= 2 && calls <= 3,
             "12 checks of 0.12 s over 3200 cheap steps: %d made (want 2-3), stop %lld: %s",
             calls, (long long)stop, err.message);
    calls = 0;
    rc = guard_absorbing(0, slow_sync, &calls, 800, &err, &stop);
    KT_CHECK(rc == 0 && calls == 4, "check_every_steps 800 over 3200 steps: %d checks, "
             "want 4", calls);
}

static void expect_limit(const char *orc, const char *sco, int override, int code,
                         const char *words, const char *what)
{
    char out[128];
    snprintf(out, sizeof out, "%s/limit.wav", dir);
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_CPU;
    o.override_limits = override;
    kt_render_result res;
    kt_score_error err = {0};
    /* memory_limit 1 MiB: with the limit overridden, the memory check refuses
     * instead, still before anything is allocated */
    int rc = render(orc, sco, out, 1, &o, &res, &err);
    KT_CHECK(rc == code && strstr(err.message, words), "%s: %d '%s': %s", what, rc, words,
             err.message);
    KT_CHECK(res.setup_s == 0 && res.steps == 0, "%s: refused before the build", what);
    kt_render_result_free(&res);
}

static char *many_drums(int n)
{
    char *orc = malloc(64 * 1024);
    int len = sprintf(orc, "sr = 16000\nroom = 7 7 1.2\nmic m 0.3 0.3 1\n");
    for (int d = 0; d < n; d++)
        len += sprintf(orc + len, "instr %d\n size = 23\n pitch = D3\n pos = %.2f %.2f 0.8\nendin\n",
                       d + 1, 0.45 + 0.75 * (d % 9), 0.45 + 0.75 * (d / 9));
    return orc;
}

static void check_limits(void)
{
    const char *small = "sr = 400000\nroom = 0.1 0.1 0.1\nmic m 0.05 0.05 0.05\n";
    expect_limit(small, "f 0 0.001\n", 0, KT_EINVAL, "above 384 kHz", "sample rate");
    expect_limit(small, "f 0 0.001\n", 1, KT_ENOMEM, "memory limit", "sample rate overridden");
    char *orc = many_drums(65);
    expect_limit(orc, "f 0 0.001\n", 0, KT_EINVAL, "65 drums are more than 64", "65 drums");
    expect_limit(orc, "f 0 0.001\n", 1, KT_ENOMEM, "memory limit", "65 drums overridden");
    free(orc);
    const char *room = "sr = 8000\nroom = 0.3 0.3 0.3\nmic m 0.1 0.1 0.1\n";
    expect_limit(room, "f 0 4000\n", 0, KT_EINVAL, "over an hour", "4000 s of audio");
    /* 4000 s of one microphone: 3 x 8 bytes x 32 million samples > 1 MiB */
    expect_limit(room, "f 0 4000\n", 1, KT_ENOMEM, "needs about 732.7 MiB", "long piece overridden");
    expect_limit(small, "f 0 0.001\n", 1, KT_ENOMEM,
                 "needs about 19.0 MiB (room fields 5.2 MiB, microphone signals 13.7 MiB, "
                 "drums 0 KiB) but the memory limit is 1.0 MiB", "both figures");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_guard_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    check_energy_growth();
    check_nan_drum();
    check_air(1, "a value beyond 1e30", "largest magnitude");
    check_air(2, NULL, "overflow to infinity or NaN");
    check_limits();
    check_absorbing_soft_stroke();
    check_absorbing_guard();
    check_costly_checks();
    rmdir(dir);
    return kt_test_finish("test_render_guard");
}
