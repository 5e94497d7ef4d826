/* test_cli_checkpoint_forged.c - a checkpoint is untrusted input (issue #24).
 * Its FNV checksum catches accidents, not forgeries: here fields of a real
 * checkpoint are changed and the checksum recomputed, as a forger would, and
 * `kettle resume` must refuse each with exit status 2 and a message naming
 * the field, never crash (a negative damping index, a microphone sample
 * count of 2^61 and a thread count of 100000 crashed it).  The untouched
 * checkpoint, re-signed the same way, must still resume (the forging itself
 * is sound).  A part of a room split over two ranks is refused by one
 * process, naming the ranks to resume it with.  The checkpoint is a drum
 * with a damped note and a pedal glide,
 * stopped after both began, so that every section has content. */
#include "kt_checkpoint.h"
#include "kt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRAILER 24

static char dir[64];

static const char *orc = "sr = 11025\nroom = 0.75 0.75 0.85\nbeta = 0.2\nprecision = single\n"
                         "mic near 0.37 0.37 0.72\n"
                         "instr 1\n  size = 20\n  pitch = E3\n  pos = 0.37 0.37 0.58\nendin\n";
static const char *sco = "i 1 0 0.01 ff 0.5 0 1 0.02\npedal 1 0.012 0.01 F3\n"
                         "i 1 0.015 0.01 mf 0.3 90\n";

/* Where each forged field lies in the file. */
typedef struct layout {
    long step, total, ranks, rank, rate, ints, reals, out_rate, clip, text_count, text_length;
    long tension, pedal, damp_next, room_step, mic_count, drum_steps, drum_values;
} layout;

static int stop_at(void *user)
{
    int *calls = user;
    return ++*calls >= 200;   /* 0.018 s: the damper is on, the glide under way */
}

static int make_checkpoint(const char *out, const char *ck)
{
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    int rc = kt_score_parse(&perf, "f.orc", orc, "f.sco", sco, &err), calls = 0;
    if (rc == 0) {
        kt_render_options o;
        kt_render_options_default(&o);
        o.device = KT_DEVICE_CPU;
        o.nthreads = 1;
        o.tail_s = 0.01;
        o.checkpoint_path = ck;
        o.block = 1;   /* the stop polled every step (blocked: every 48 steps) */
        o.stop = stop_at;
        o.user = &calls;
        kt_render_result res;
        rc = kt_render(&perf, out, &o, &res, &err);
        kt_render_result_free(&res);
    }
    kt_performance_free(&perf);
    return rc == KT_EINTR ? 0 : -1;
}

static uint32_t u32_at(const unsigned char *b, long at)
{
    uint32_t v;
    memcpy(&v, b + at, 4);
    return v;
}

static int64_t i64_at(const unsigned char *b, long at)
{
    int64_t v;
    memcpy(&v, b + at, 8);
    return v;
}

/* Past a string field (u32 length, 0xffffffff for none, then the bytes). */
static long skip_string(const unsigned char *b, long at)
{
    uint32_t n = u32_at(b, at);
    return at + 4 + (n == 0xffffffffu ? 0 : n);
}

/* The layout of perform/checkpoint.c, read the way the loader reads it. */
static int find_fields(const unsigned char *b, long n, layout *l)
{
    long p = 24;
    if (memcmp(b + p, "META", 4) != 0)
        return -1;
    p = skip_string(b, skip_string(b, p + 4));       /* folder, output */
    l->step = p;
    l->total = p + 8;
    l->ranks = p + 16;                               /* the split: ranks, this part's rank */
    l->rank = p + 20;
    l->rate = p + 24;
    l->ints = p + 32;
    l->reals = l->ints + 18 * 4;
    int32_t snapshots;
    memcpy(&snapshots, b + l->ints + 8 * 4, 4);
    l->out_rate = l->reals + 5 * 8;                  /* --out-sr, then --fail-on-clip */
    l->clip = l->out_rate + 8;
    p = l->clip + 4 + 8L * snapshots;
    p = skip_string(b, skip_string(b, skip_string(b, p)));   /* snapshot stem, checkpoint
                                                                 path, tuning cache */
    l->text_count = p;
    p += 4;
    if (snapshots < 0 || p > n - TRAILER)   /* a layout this test does not know */
        return -1;
    uint32_t texts = u32_at(b, l->text_count);
    for (uint32_t i = 0; i < texts && p + 8 <= n - TRAILER; i++) {
        p = skip_string(b, p);
        if (i == 0)
            l->text_length = p;
        if (p + 4 > n - TRAILER)
            return -1;
        p += 4 + u32_at(b, p);
    }
    if (p + 8 > n - TRAILER || memcmp(b + p, "PEDL", 4) != 0 || u32_at(b, p + 4) != 1)
        return -1;
    l->tension = p + 8;
    l->pedal = p + 8 + 16;
    l->damp_next = p + 8 + 20;
    p += 8 + 20 + 4;
    if (memcmp(b + p, "ROOM", 4) != 0)
        return -1;
    l->room_step = p + 4 + 10 * 4;                  /* past the grid's and the slab's shape */
    /* the fields' size is the room's: find the microphone's padded name */
    char name[64] = "near";
    const unsigned char *m = NULL;
    for (long q = l->room_step + 8; !m && q + 64 + 8 <= n; q++)
        if (memcmp(b + q, name, sizeof name) == 0)
            m = b + q;
    if (!m)
        return -1;
    l->mic_count = (m - b) + 64;
    p = l->mic_count + 8 + 8 * i64_at(b, l->mic_count);
    if (p + 4 + 16 + 8 + 24 > n - TRAILER || memcmp(b + p, "DRUM", 4) != 0)
        return -1;
    l->drum_steps = p + 4 + 16;
    l->drum_values = l->drum_steps + 8;
    return 0;
}

/* The copy with its trailer re-signed: FNV-1a 64 of everything before it. */
static void write_signed(const char *path, unsigned char *b, long n)
{
    uint64_t h = 14695981039346656037ull;
    for (long i = 0; i < n - TRAILER; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    memcpy(b + n - TRAILER + 8, &h, 8);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, (size_t)n, f);
        fclose(f);
    }
}

static int resume(const char *path, char *err, size_t n)
{
    char *argv[] = {KETTLE_EXE, "resume", (char *)path, "--quiet", NULL};
    return kt_test_run(argv, NULL, 120, NULL, err, n);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_forged_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    char out[128], ck[128], forged[128], err[8192];
    snprintf(out, sizeof out, "%s/f.wav", dir);
    snprintf(ck, sizeof ck, "%s/f.ckpt", dir);
    snprintf(forged, sizeof forged, "%s/forged.ckpt", dir);
    long n = 0;
    unsigned char *orig = make_checkpoint(out, ck) == 0 ? kt_test_slurp(ck, &n) : NULL;
    layout l;
    KT_CHECK(orig && find_fields(orig, n, &l) == 0, "a checkpoint with every section (%ld bytes)",
             n);
    if (!orig || find_fields(orig, n, &l) != 0)
        return kt_test_finish("test_cli_checkpoint_forged");
    unsigned char *b = malloc((size_t)n);
    memcpy(b, orig, (size_t)n);
    write_signed(forged, b, n);
    int st = resume(forged, err, sizeof err);
    KT_CHECK(st == 0 && access(out, F_OK) == 0, "the re-signed original resumes: exit %d: %s", st,
             err);
    remove(out);

    /* Each forgery: the field's place, its new bytes, and the words the
     * message must hold.  Forged counts, indices and reals alike. */
    int32_t total32 = (int32_t)i64_at(orig, l.total);
    struct {
        long at;
        int size;                   /* 4 or 8 bytes; 8 with is_real: a double */
        int is_real;
        double value;
        const char *words;
    } cases[] = {
        {l.ints + 3 * 4, 4, 0, 100000, "thread count"},
        {l.ints + 3 * 4, 4, 0, -3, "thread count"},
        {l.ints + 0 * 4, 4, 0, 7, "precision"},
        {l.ints + 1 * 4, 4, 0, 99, "drum format"},
        {l.ints + 2 * 4, 4, 0, 9, "device"},
        {l.ints + 4 * 4, 4, 0, 17, "sample format"},
        {l.ints + 16 * 4, 4, 0, 2, "tuning mode"},
        {l.ints + 8 * 4, 4, 0, -1, "snapshot count"},
        {l.ints + 9 * 4, 4, 0, 5, "snapshot axis"},
        {l.ints + 17 * 4, 4, 0, 3, "split axis"},
        {l.ints + 12 * 4, 4, 0, 8, "air scheme"},
        {l.ints + 14 * 4, 4, 0, 999, "stencil reach"},
        {l.ints + 15 * 4, 4, 0, 5, "wall model"},
        {l.rate, 8, 1, NAN, "sample rate"},
        {l.rate, 8, 1, 5e-310, "sample rate"},
        {l.reals + 0 * 8, 8, 1, -INFINITY, "tail"},
        {l.out_rate, 8, 1, -44100, "output sample rate"},
        {l.clip, 4, 0, 7, "fail-on-clip flag"},
        {l.reals + 4 * 8, 8, 1, NAN, "checkpoint interval"},
        {l.step, 8, 0, 1e9, "step"},
        {l.ranks, 4, 0, 0, "rank count"},
        {l.rank, 4, 0, 1, "rank (1)"},
        /* a part of a room split over two ranks, resumed by one process */
        {l.ranks, 4, 0, 2, "split over 2 ranks; resume it over 2"},
        {l.total, 8, 0, 4611686018427387904.0, "total step count"},
        {l.total, 8, 0, total32 - 1, "total step count"},
        {l.text_count, 4, 0, 3, "count of source texts"},
        {l.text_length, 4, 0, 2000000000, "source text's length"},
        {l.tension, 8, 1, -1, "drum tension"},
        {l.pedal, 4, 0, 99, "pedal index"},
        {l.pedal, 4, 0, -7, "pedal index"},
        {l.damp_next, 4, 0, -5, "damping index"},
        {l.damp_next, 4, 0, 1000, "damping index"},
        {l.room_step, 8, 0, -1, "room's step"},
        {l.room_step, 8, 0, 2305843009213693952.0, "room's step"},
        {l.mic_count, 8, 0, 2305843009213693952.0, "microphone 'near'"},
        {l.drum_steps, 8, 0, -1, "drum '1'"},
        {l.drum_values, 8, 1, NAN, "tension"},
        {l.drum_values + 8, 8, 1, -3, "damping"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        memcpy(b, orig, (size_t)n);
        if (cases[c].is_real) {
            memcpy(b + cases[c].at, &cases[c].value, 8);
        } else if (cases[c].size == 8) {
            int64_t v = (int64_t)cases[c].value;
            memcpy(b + cases[c].at, &v, 8);
        } else {
            int32_t v = (int32_t)cases[c].value;
            memcpy(b + cases[c].at, &v, 4);
        }
        write_signed(forged, b, n);
        st = resume(forged, err, sizeof err);
        KT_CHECK(st == 2 && strstr(err, cases[c].words),
                 "forged %s (%g at byte %ld): exit %d, want 2 naming it: %s", cases[c].words,
                 cases[c].value, cases[c].at, st, err);
        KT_CHECK(access(out, F_OK) != 0, "forged %s: no output", cases[c].words);
    }
    /* a room step and sample count that agree, below 2^53 but beyond the file */
    memcpy(b, orig, (size_t)n);
    int64_t huge = (int64_t)1 << 40;
    memcpy(b + l.room_step, &huge, 8);
    memcpy(b + l.mic_count, &huge, 8);
    write_signed(forged, b, n);
    st = resume(forged, err, sizeof err);
    KT_CHECK(st == 2 && strstr(err, "sample count") && strstr(err, "more than the file holds"),
             "2^40 samples claimed: exit %d: %s", st, err);
    free(b);
    free(orig);
    kt_test_remove_dir(dir);
    return kt_test_finish("test_cli_checkpoint_forged");
}
