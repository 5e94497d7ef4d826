/* test_score_midi.c - MIDI files as scores: the shipped part.mid means
 * exactly what part.sco means (strikes, pedal glides, end, tempo change
 * included); notes go to the drum `massign` names for their channel or else
 * the one tuned nearest; velocity maps onto the dynamic marks' forces; bad
 * files (empty, foreign, truncated, without notes) get a clear error.  The
 * test files are written with libsmf, the library Kettle reads them with. */
#include "kt_score.h"
#include "kt_test.h"

#include <smf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ORC "sr = 44100\nroom = 3 2.5 2\nmic main 1.5 1.2 1.6\n" \
            "instr 1\n  size = 29\n  pitch = G2\n  pos = 1.0 1.0 0.9\nendin\n" \
            "instr low\n  size = 32\n  pitch = D2\n  pos = 2.0 1.2 0.9\nendin\n"

static char dir[256], scores[1024];

typedef struct note { int tick, channel, key, velocity, ticks; } note;

/* A one-track MIDI file at 120 bpm (the default), 480 ticks a beat. */
static void write_midi(const char *path, const note *notes, int n)
{
    smf_t *smf = smf_new();
    int rc = smf_set_ppqn(smf, 480);
    smf_track_t *track = smf_track_new();
    smf_add_track(smf, track);
    for (int i = 0; i < n; i++) {
        const note *x = &notes[i];
        smf_track_add_event_pulses(track, smf_event_new_from_bytes(0x90 | (x->channel - 1),
                                                                    x->key, x->velocity), x->tick);
        smf_track_add_event_pulses(track, smf_event_new_from_bytes(0x80 | (x->channel - 1),
                                                                    x->key, 0),
                                   x->tick + x->ticks);
    }
    rc |= smf_track_add_eot_delta_pulses(track, 480);
    rc |= smf_save(smf, path);
    KT_CHECK(rc == 0, "writing %s", path);
    smf_delete(smf);
}

static int load_midi(kt_performance *perf, const char *orc, const char *mid, kt_score_error *err)
{
    char orc_path[512];
    snprintf(orc_path, sizeof orc_path, "%s/t.orc", dir);
    FILE *f = fopen(orc_path, "w");
    if (f) {
        fputs(orc, f);
        fclose(f);
    }
    kt_performance_init(perf);
    memset(err, 0, sizeof *err);
    return kt_score_load_midi(perf, orc_path, mid, err);
}

/* scores/part.mid against scores/part.sco, both with scores/concert.orc. */
static void test_shipped_twins(void)
{
    char orc[1200], sco[1200], mid[1200];
    snprintf(orc, sizeof orc, "%s/concert.orc", scores);
    snprintf(sco, sizeof sco, "%s/part.sco", scores);
    snprintf(mid, sizeof mid, "%s/part.mid", scores);
    kt_performance a, b;
    kt_score_error ea = {0}, eb = {0};
    kt_performance_init(&a);
    kt_performance_init(&b);
    int ra = kt_score_load(&a, orc, sco, &ea), rb = kt_score_load_midi(&b, orc, mid, &eb);
    KT_CHECK(ra == 0 && rb == 0, "part.sco: %s / part.mid: %s", ea.message, eb.message);
    KT_CHECK(a.strike_count == 11 && b.strike_count == a.strike_count && a.pedal_count == 2 &&
                 b.pedal_count == a.pedal_count,
             "%d and %d strikes, %d and %d pedals", a.strike_count, b.strike_count, a.pedal_count,
             b.pedal_count);
    for (int i = 0; ra == 0 && rb == 0 && i < a.strike_count && i < b.strike_count; i++) {
        const kt_score_strike *x = &a.strikes[i], *y = &b.strikes[i];
        KT_CHECK(x->drum == y->drum && fabs(x->start_s - y->start_s) < 1e-9 &&
                     fabs(x->duration_s - y->duration_s) < 1e-9 &&
                     fabs(x->force_N - y->force_N) < 1e-9 * x->force_N &&
                     x->radius_fraction == y->radius_fraction && x->angle_deg == y->angle_deg &&
                     x->contact_s == y->contact_s && x->damp_t60_s == y->damp_t60_s,
                 "strike %d: drum %s at %.9f s for %g s, %g N (.sco) against drum %s at %.9f s "
                 "for %g s, %g N (.mid)", i, a.drums[x->drum].name, x->start_s, x->duration_s,
                 x->force_N, b.drums[y->drum].name, y->start_s, y->duration_s, y->force_N);
    }
    for (int i = 0; ra == 0 && rb == 0 && i < a.pedal_count && i < b.pedal_count; i++) {
        const kt_score_pedal *x = &a.pedals[i], *y = &b.pedals[i];
        KT_CHECK(x->drum == y->drum && fabs(x->start_s - y->start_s) < 1e-9 &&
                     fabs(x->duration_s - y->duration_s) < 1e-9 &&
                     x->target_tension_N_per_m == y->target_tension_N_per_m,
                 "pedal %d: %g s + %g s to %g N/m (.sco), %g s + %g s to %g N/m (.mid)", i,
                 x->start_s, x->duration_s, x->target_tension_N_per_m, y->start_s, y->duration_s,
                 y->target_tension_N_per_m);
    }
    KT_CHECK(fabs(a.end_s - 7.0) < 1e-9 && fabs(b.end_s - a.end_s) < 1e-9,
             "both end at beat 12 = 7 s: %g, %g", a.end_s, b.end_s);
    kt_performance_free(&a);
    kt_performance_free(&b);
}

/* Nearest drum, massign, velocity -> force. */
static void test_mapping(void)
{
    char mid[512];
    snprintf(mid, sizeof mid, "%s/map.mid", dir);
    const note notes[] = {
        {0, 1, 43, 127, 240},      /* G2 fff: drum 1 (G2) */
        {480, 1, 40, 16, 240},     /* E2 ppp: nearer D2 (2 semitones) than G2 (3): low */
        {960, 2, 43, 1, 240},      /* G2, channel 2: massign 2 -> low */
        {1440, 1, 44, 64, 240},    /* G#2 mp: drum 1, a semitone off its tuning */
    };
    write_midi(mid, notes, 4);
    kt_performance p;
    kt_score_error e;
    int rc = load_midi(&p, ORC "massign 2, low\n", mid, &e);
    KT_CHECK(rc == 0 && p.strike_count == 4, "map.mid: %s", e.message);
    if (rc == 0 && p.strike_count == 4) {
        const kt_score_strike *s = p.strikes;
        KT_CHECK(s[0].drum == 0 && s[1].drum == 1 && s[2].drum == 1 && s[3].drum == 0,
                 "drums %d %d %d %d", s[0].drum, s[1].drum, s[2].drum, s[3].drum);
        KT_CHECK(fabs(s[0].force_N - 200) < 1e-9 && fabs(s[1].force_N - 2) < 1e-9 &&
                     s[2].force_N < 2 && s[2].force_N > 0 && fabs(s[3].force_N - 20) < 1e-9,
                 "forces %g %g %g %g N", s[0].force_N, s[1].force_N, s[2].force_N, s[3].force_N);
        KT_CHECK(fabs(s[1].start_s - 0.5) < 1e-12 && fabs(s[1].duration_s - 0.25) < 1e-12,
                 "120 bpm: beat 1 at %g s for %g s", s[1].start_s, s[1].duration_s);
        KT_CHECK(p.pedal_count == 0, "no glides without midipedal");
    }
    kt_performance_free(&p);
    /* With midipedal the G#2 glides drum 1 up a semitone in the 0.1 s before it. */
    rc = load_midi(&p, ORC "midipedal = 0.1s\n", mid, &e);
    KT_CHECK(rc == 0 && p.pedal_count == 2, "midipedal: %d glides (%s)", p.pedal_count, e.message);
    if (rc == 0 && p.pedal_count == 2) {
        double gs2;
        kt_pitch_parse("G#2", &gs2);
        const kt_score_pedal *g = &p.pedals[1];
        KT_CHECK(g->drum == 0 && fabs(g->start_s - 1.4) < 1e-12 && fabs(g->duration_s - 0.1) <
                     1e-12 && g->target_hz == gs2, "glide at %g s for %g s to %g Hz",
                 g->start_s, g->duration_s, g->target_hz);
    }
    kt_performance_free(&p);
    rc = load_midi(&p, ORC "massign 3, 7\n", mid, &e);
    KT_CHECK(rc == KT_EINVAL && strstr(e.message, "no instr 7") && e.line == 14,
             "massign to a missing drum: %d %s", e.line, e.message);
    kt_performance_free(&p);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
}

/* Bad files: a clear message naming the file, never a crash. */
static void test_bad_files(void)
{
    char good[512], bad[512];
    snprintf(good, sizeof good, "%s/good.mid", dir);
    snprintf(bad, sizeof bad, "%s/bad.mid", dir);
    const note one[] = {{0, 1, 43, 100, 480}, {480, 1, 38, 100, 480}};
    write_midi(good, one, 2);
    FILE *f = fopen(good, "rb");
    unsigned char bytes[4096];
    size_t n = f ? fread(bytes, 1, sizeof bytes, f) : 0;
    if (f)
        fclose(f);
    KT_CHECK(n > 30, "good.mid: %zu bytes", n);
    kt_performance p;
    kt_score_error e;
    struct { const char *what; size_t len; const char *expect; } cases[] = {
        {"empty", 0, "not a valid MIDI file"},
        {"a WAV header", 12, "not a valid MIDI file"},
        {"cut in the header", 10, "not a valid MIDI file"},
        {"cut in the track", n - 7, "not a valid MIDI file"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        if (c == 1)
            write_bytes(bad, "RIFF\x24\0\0\0WAVE", cases[c].len);
        else
            write_bytes(bad, bytes, cases[c].len);
        int rc = load_midi(&p, ORC, bad, &e);
        KT_CHECK(rc == KT_EINVAL && strstr(e.message, cases[c].expect) && strstr(e.message, bad),
                 "%s: %d %s", cases[c].what, rc, e.message);
        kt_performance_free(&p);
    }
    /* A well-formed track with an F7 (escape) event: libsmf 1.3 asserts on it
     * (expected_sysex_length), which ended the program; found by fuzz_midi. */
    static const unsigned char f7[] = {
        0x4d, 0x54, 0x68, 0x64, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01, 0x01,
        0xe0, 0x4d, 0x54, 0x72, 0x6b, 0x00, 0x00, 0x00, 0x84, 0x00, 0xff, 0x03, 0x07,
        0x54, 0x69, 0x6d, 0x70, 0x61, 0x6e, 0x69, 0x00, 0xff, 0x51, 0x03, 0x09, 0x89,
        0x68, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x60, 0x83, 0x60, 0x80, 0x00, 0x00,
        0x00, 0xf7, 0x2b, 0x50, 0x83, 0x60, 0x80, 0x2b, 0x00, 0x00, 0x90, 0x30, 0x50,
        0x83, 0x60, 0x80, 0x30, 0x00, 0x00, 0x90, 0x34, 0x60, 0x83, 0x9b, 0x80, 0x34,
        0x00, 0x00, 0x90, 0x2b, 0x70, 0x87, 0x40, 0x80, 0x2b, 0x00, 0x00, 0x90, 0x2d,
        0x60, 0x83, 0x60, 0x80, 0x2d, 0x00, 0x83, 0x60, 0xff, 0x50, 0x03, 0x07, 0xa1,
        0x20, 0x00, 0x90, 0x26, 0x06, 0x31, 0x00, 0x00, 0x00, 0x00, 0x13, 0x00, 0xff,
        0x51, 0x03, 0x07, 0xa1, 0x24, 0x81, 0x40, 0xff, 0x51, 0x03, 0x06, 0x1a, 0x80,
        0x00, 0xff, 0x2f, 0x00, 0x4d, 0x54, 0x72, 0x6b, 0x00, 0x00, 0x00, 0x1f, 0x54,
        0x68, 0x64, 0x00, 0x00, 0x00, 0x06, 0x00, 0x01, 0x00, 0x02, 0x6d
    };
    write_bytes(bad, f7, sizeof f7);
    int rc = load_midi(&p, ORC, bad, &e);
    KT_CHECK(rc == KT_EINVAL && strstr(e.message, "libsmf stops on one of its events"),
             "an F7 event: %d %s", rc, e.message);
    kt_performance_free(&p);
    const note none[] = {{0, 1, 43, 0, 480}};   /* velocity 0: a note-off */
    write_midi(bad, none, 1);
    rc = load_midi(&p, ORC, bad, &e);
    KT_CHECK(rc == KT_EINVAL && strstr(e.message, "no notes"), "no notes: %s", e.message);
    kt_performance_free(&p);
    rc = load_midi(&p, "sr = 44100\nroom = 3 2.5 2\nmic main 1.5 1.2 1.6\n", good, &e);
    KT_CHECK(rc == KT_EINVAL && strstr(e.message, "no drum"), "no drums: %s", e.message);
    kt_performance_free(&p);
    rc = load_midi(&p, ORC, "/nonexistent/x.mid", &e);
    KT_CHECK(rc == KT_EIO && strstr(e.message, "cannot read"), "missing: %s", e.message);
    kt_performance_free(&p);
    unlink(good);
    unlink(bad);
}

int main(void)
{
    kt_test_scores_dir(scores, sizeof scores);
    snprintf(dir, sizeof dir, "/tmp/kettle_midi_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_shipped_twins();
    test_mapping();
    test_bad_files();
    kt_test_remove_dir(dir);
    return kt_test_finish("test_score_midi");
}
