/* test_score_parse.c - the orchestra/score language: every statement, carry,
 * '+', ramps, tempo, sections, macros, the .csd form, pitch <-> tension, and
 * every error message with its file:line:col and caret line. */
#include "kt_score.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORC_HEAD "sr = 44100\nroom = 3 2.5 2\nmic main 1.5 1.2 1.6\n"
#define DRUM1 "instr 1\n  size = 29\n  pitch = G2\n  pos = 1.0 1.0 0.9\nendin\n"
#define DRUM2 "instr low\n  size = 32in\n  tension = 1800\n  pos = 2.0 1.2 0.9\nendin\n"

static int parse_ok(kt_performance *perf, const char *orc, const char *sco)
{
    kt_score_error err = {0};
    kt_performance_init(perf);
    int rc = kt_score_parse(perf, "t.orc", orc, "t.sco", sco, &err);
    if (rc != 0) {
        char buf[2048];
        kt_score_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "unexpected parse error:\n%s", buf);
    }
    return rc;
}

/* Parse, expect an error at file:line:col whose message contains `what`,
 * and check the formatted text: header, the source line, the caret. */
static void expect_error_at(int line_of_test, const char *orc, const char *sco, const char *file,
                            int line, int col, const char *what)
{
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "t.orc", orc, "t.sco", sco, &err);
    char buf[4096];
    kt_score_error_format(&err, buf, sizeof buf);
    KT_CHECK(rc == KT_EINVAL, "test line %d: expected an error, got rc %d", line_of_test, rc);
    KT_CHECK(strcmp(err.file, file) == 0 && err.line == line && err.col == col,
             "test line %d: expected %s:%d:%d, got %s:%d:%d (%s)", line_of_test, file, line, col,
             err.file, err.line, err.col, err.message);
    KT_CHECK(strstr(err.message, what) != NULL, "test line %d: message '%s' lacks '%s'",
             line_of_test, err.message, what);
    char head[256];
    snprintf(head, sizeof head, "%s:%d:%d: error: ", file, line, col);
    KT_CHECK(strncmp(buf, head, strlen(head)) == 0, "test line %d: formatted '%s'", line_of_test,
             buf);
    /* Line 2 of the output is the offending source line, line 3 the caret. */
    const char *src = strchr(buf, '\n');
    const char *caret = src ? strchr(src + 1, '\n') : NULL;
    KT_CHECK(src && caret, "test line %d: no source/caret lines in '%s'", line_of_test, buf);
    if (src && caret) {
        const char *text = strcmp(file, "t.orc") == 0 ? orc : sco;
        for (int l = 1; l < line && text; l++) {
            text = strchr(text, '\n');
            text = text ? text + 1 : NULL;
        }
        size_t n = text ? strcspn(text, "\n") : 0;
        KT_CHECK(text && (size_t)(caret - src - 1) == n && strncmp(src + 1, text, n) == 0,
                 "test line %d: source line shown is '%.*s'", line_of_test,
                 (int)(caret - src - 1), src + 1);
        int spaces = 0;
        const char *c = caret + 1;
        while (*c == ' ' || *c == '\t')
            c++, spaces++;
        KT_CHECK(*c == '^' && spaces == col - 1, "test line %d: caret at %d, want column %d",
                 line_of_test, spaces + 1, col);
    }
    kt_performance_free(&perf);
}
#define EXPECT_ERR(orc, sco, file, line, col, what) \
    expect_error_at(__LINE__, orc, sco, file, line, col, what)

static void test_pitch(void)
{
    double hz;
    KT_CHECK(kt_pitch_parse("A4", &hz) == 0, "A4");
    KT_CHECK_REL(hz, 440.0, 1e-12, 1);
    KT_CHECK(kt_pitch_parse("G2", &hz) == 0, "G2");
    KT_CHECK_REL(hz, 97.998858995, 1e-9, 1);
    double fs, bf;
    KT_CHECK(kt_pitch_parse("F#2", &fs) == 0 && kt_pitch_parse("Gb2", &bf) == 0, "F#2 Gb2");
    KT_CHECK_REL(fs, bf, 1e-12, 1);
    KT_CHECK(kt_pitch_parse("c3", &hz) == 0, "c3");
    KT_CHECK_REL(hz, 130.812782650, 1e-9, 1);
    KT_CHECK(kt_pitch_parse("Bb2", &hz) == 0, "Bb2");
    KT_CHECK_REL(hz, 116.540940379, 1e-9, 1);
    KT_CHECK(kt_pitch_parse("H2", &hz) < 0 && kt_pitch_parse("G", &hz) < 0 &&
                 kt_pitch_parse("G2x", &hz) < 0, "bad names refused");
    /* The model reproduces the reference drum exactly and scales as
     * sqrt(T): a quarter of the tension is an octave down. */
    double f = kt_timpani_pitch_hz(KT_REFERENCE_RADIUS_M, KT_MYLAR_SURFACE_DENSITY_KG_PER_M2,
                                   KT_REFERENCE_TENSION_N_PER_M);
    KT_CHECK_REL(f, KT_REFERENCE_FUNDAMENTAL_HZ, 1e-12, 1);
    double f4 = kt_timpani_pitch_hz(KT_REFERENCE_RADIUS_M, KT_MYLAR_SURFACE_DENSITY_KG_PER_M2,
                                    KT_REFERENCE_TENSION_N_PER_M / 4);
    KT_CHECK_REL(f4, f / 2, 1e-12, 1);
    /* A smaller drum at the same tension is higher, but by less than 1/R
     * because it carries less air mass per area. */
    double fs23 = kt_timpani_pitch_hz(KT_REFERENCE_RADIUS_M * 23 / 29.0,
                                      KT_MYLAR_SURFACE_DENSITY_KG_PER_M2, 2200);
    KT_CHECK(fs23 > f * 29 / 23.0 && fs23 < f * 29 / 23.0 * 1.2, "23-inch: %g Hz", fs23);
    double T = kt_timpani_tension_for_pitch(0.3, 0.3, 123.0);
    KT_CHECK_REL(kt_timpani_pitch_hz(0.3, 0.3, T), 123.0, 1e-12, 1);
    double F;
    KT_CHECK(kt_dynamic_force("ff", &F) == 0 && F == 100, "ff");
    KT_CHECK(kt_dynamic_force("pp", &F) == 0 && F == 5, "pp");
    KT_CHECK(kt_dynamic_force("sfz", &F) < 0, "unknown mark");
}

static void test_orchestra(void)
{
    kt_performance perf;
    const char *orc =
        "; a full orchestra\n"
        "sr = 22050\n"
        "ksmps = 16\n"
        "nchnls = 4\n"
        "precision = single\n"
        "room = 300cm, 2.5, 2000mm   // with units\n"
        "absorption = 0.75\n"
        "viscosity = on\n"
        "temperature = 20\n"
        "mic main 1.5 1.2 1.6\n"
        "pair oh 1.5, 2.0, 1.8, 0.4, 90\n"
        "mic walker 0.5 0.5 1.2\n"
        "move walker 2 2.5 0.5 1.2\n"
        "impulse 1 1 1 0.01 2ms 3\n"
        "/* a drum\n   over two lines */\n"
        DRUM1
        "instr low\n"
        "  size = 32in\n"
        "  tension = 1800\n"
        "  pos = 2.0 1.2 0.9\n"
        "  depth = 40cm\n"
        "  head = mylar\n"
        "  thickness = 0.25mm\n"
        "  loss = 0\n"
        "  nonlinear = off\n"
        "  solver = direct\n"
        "endin\n";
    KT_CHECK(parse_ok(&perf, orc, "i 1 0 1 mf\n") == 0, "orchestra parses");
    KT_CHECK(perf.room.sample_rate_hz == 22050 && perf.ksmps == 16 &&
                 perf.room.precision == KT_SINGLE, "sr %g ksmps %d", perf.room.sample_rate_hz,
             perf.ksmps);
    KT_CHECK_REL(perf.room.size_m[0], 3.0, 1e-12, 1);
    KT_CHECK_REL(perf.room.size_m[2], 2.0, 1e-12, 1);
    /* absorption 0.75: R = 0.5 = (1 - 2b)/(1 + 2b) -> b = 1/6 */
    KT_CHECK_REL(perf.room.wall_beta, 1.0 / 6, 1e-12, 1);
    KT_CHECK(perf.room.viscosity_m == KT_AIR_VISCOSITY_LENGTH_M, "viscosity on");
    KT_CHECK_REL(perf.room.sound_speed_m_per_s, 343.2146, 1e-5, 1);
    KT_CHECK(perf.mic_count == 4, "mics: %d", perf.mic_count);
    if (perf.mic_count == 4) {
        KT_CHECK(strcmp(perf.mics[1].name, "oh_L") == 0 && strcmp(perf.mics[2].name, "oh_R") == 0,
                 "pair names");
        /* azimuth 90: the pair lies along y */
        KT_CHECK_REL(perf.mics[1].pos_m[1], 1.8, 1e-12, 1);
        KT_CHECK_REL(perf.mics[2].pos_m[1], 2.2, 1e-12, 1);
        KT_CHECK_REL(perf.mics[2].pos_m[0], 1.5, 1e-12, 1);
        KT_CHECK(perf.mics[3].waypoint_count == 1 && perf.mics[3].waypoints[0].time_s == 2 &&
                     perf.mics[3].waypoints[0].pos_m[0] == 2.5, "waypoint");
    }
    KT_CHECK(perf.source_count == 1 && perf.sources[0].kind == KT_SOURCE_IMPULSE, "impulse");
    if (perf.source_count == 1) {
        KT_CHECK_REL(perf.sources[0].duration_s, 0.002, 1e-12, 1);
        KT_CHECK(perf.sources[0].start_s == 0.01 && perf.sources[0].amplitude == 3, "impulse args");
    }
    KT_CHECK(perf.drum_count == 2, "drums: %d", perf.drum_count);
    if (perf.drum_count == 2) {
        const kt_timpani_params *a = &perf.drums[0].params, *b = &perf.drums[1].params;
        KT_CHECK(perf.drums[0].loc.line == 17 && perf.drums[0].loc.col == 1,
                 "instr 1 at line %d", perf.drums[0].loc.line);
        KT_CHECK(strcmp(perf.drums[1].name, "low") == 0 && perf.drums[1].number == -1, "named");
        /* G2 on the reference drum: (98.0/96.56)^2 * 2200 N/m */
        KT_CHECK_REL(a->tension_N_per_m, 2200 * pow(97.998858995 / 96.56, 2), 1e-9, 1);
        KT_CHECK_REL(a->diameter_m, 2 * KT_REFERENCE_RADIUS_M, 1e-12, 1);
        KT_CHECK(a->nonlinear == 1 && a->coupled == 1, "defaults kept");
        KT_CHECK_REL(b->tension_N_per_m, 1800.0, 1e-12, 1);
        KT_CHECK_REL(b->bowl_depth_m, 0.4, 1e-12, 1);
        KT_CHECK_REL(b->thickness_m, 0.25e-3, 1e-12, 1);
        /* thicker Mylar: the same volume density, more mass per area */
        KT_CHECK_REL(b->surface_density_kg_per_m2,
                     KT_MYLAR_SURFACE_DENSITY_KG_PER_M2 * 0.25 / 0.19, 1e-12, 1);
        KT_CHECK(b->loss_s == 0 && b->nonlinear == 0 && b->solver == KT_SOLVE_DIRECT,
                 "overrides");
        KT_CHECK(a->rim_centre_m[0] == 1.0 && a->rim_centre_m[2] == 0.9, "position");
    }
    kt_performance_free(&perf);
}

static void test_score(void)
{
    kt_performance perf;
    const char *sco =
        "#define ROLL # i 1 + 0.25 #\n"
        "t 0 120            ; two beats per second\n"
        "i 1 0 1 50 0.5 30 2\n"
        "i 1 + .  ff\n"            /* start 1 beat, carry p3, p5..p7 from note 1 */
        "$ROLL\n"                  /* start 2 beats, p3 0.25 */
        "$ROLL.  pp\n"
        "i \"low\" 4 1 <\n"          /* ramp between 20 and 80 at beats 4..6 */
        "i low 5 1 <\n"
        "i low 6 1 80\n"
        "i low 3 0.5 20\n"          /* written late, sorted by time */
        "pedal low 6 2 A1\n"
        "s\n"
        "t 0 60 4 120\n"
        "b 1\n"
        "i1 3 1 10\n"
        "f 0 10\n"
        "e\n"
        "i 1 99 1 10 ; after e: ignored\n";
    KT_CHECK(parse_ok(&perf, ORC_HEAD DRUM1 DRUM2, sco) == 0, "score parses");
    KT_CHECK(perf.strike_count == 9, "strikes: %d", perf.strike_count);
    if (perf.strike_count == 9) {
        const kt_score_strike *s = perf.strikes;
        KT_CHECK(s[0].start_s == 0 && s[0].duration_s == 0.5 && s[0].force_N == 50 &&
                     s[0].radius_fraction == 0.5 && s[0].angle_deg == 30 &&
                     fabs(s[0].contact_s - 0.002) < 1e-15, "note 1");
        KT_CHECK(s[1].start_s == 0.5 && s[1].duration_s == 0.5 && s[1].force_N == 100 &&
                     s[1].radius_fraction == 0.5, "carry and +: %g %g", s[1].start_s, s[1].duration_s);
        KT_CHECK(s[2].start_s == 1.0 && s[2].duration_s == 0.125 && s[2].force_N == 100,
                 "macro roll: %g %g %g", s[2].start_s, s[2].duration_s, s[2].force_N);
        KT_CHECK(s[3].start_s == 1.125 && s[3].force_N == 5, "macro with '.' and pp");
        KT_CHECK(s[4].start_s == 1.5 && s[4].force_N == 20 && s[4].drum == 1, "sorted: %g",
                 s[4].start_s);
        KT_CHECK(s[5].start_s == 2.0 && fabs(s[5].force_N - 40) < 1e-12, "ramp 1/3: %g",
                 s[5].force_N);
        KT_CHECK(fabs(s[6].force_N - 60) < 1e-12, "ramp 2/3: %g", s[6].force_N);
        KT_CHECK(s[7].force_N == 80 && s[7].start_s == 3.0, "ramp end");
        KT_CHECK(s[5].radius_fraction == 0.6 && s[5].angle_deg == 0 && s[5].contact_s == 1e-3,
                 "defaults for p5..p7");
        /* Section 1 ends at beat 8 (the pedal) = 4 s.  Section 2: b 1 puts
         * the note at beat 4, accelerando 60 -> 120 over 4 beats:
         * 60/15 * ln(120/60) = 4 ln 2 seconds. */
        KT_CHECK_REL(s[8].start_s, 4.0 + 4 * log(2.0), 1e-12, 1);
        /* f 0 10 (+ clock 1): beat 11 = 4 ln 2 + 7 beats at 120 bpm */
        KT_CHECK_REL(perf.end_s, 4.0 + 4 * log(2.0) + 3.5, 1e-12, 1);
    }
    KT_CHECK(perf.pedal_count == 1, "pedal");
    if (perf.pedal_count == 1) {
        double a1;
        kt_pitch_parse("A1", &a1);
        KT_CHECK(perf.pedals[0].start_s == 3 && perf.pedals[0].duration_s == 1 &&
                     perf.pedals[0].drum == 1 && perf.pedals[0].target_hz == a1, "pedal values");
        KT_CHECK_REL(perf.pedals[0].target_tension_N_per_m,
                     kt_timpani_tension_for_pitch(perf.drums[1].params.diameter_m / 2,
                                                  perf.drums[1].params.surface_density_kg_per_m2, a1),
                     1e-12, 1);
    }
    kt_performance_free(&perf);
}

/* p8, the damping after p3: seconds (or ms), carried like p5..p7, ramped,
 * 0 or absent = ring on. */
static void test_damping_field(void)
{
    kt_performance perf;
    const char *sco =
        "i 1 0 1 f 0.5 0 1 0.3      ; damped at 1 s: 60 dB in 0.3 s\n"
        "i 1 2 1 f                  ; p5..p8 carried from drum 1's last note\n"
        "i low 0 1 20               ; never damped: default 0\n"
        "i low 1 1 . 0.6 0 1 250ms  ; p4 '.' from the note above, p8 in ms\n"
        "i 1 4 1 f . . . <\n"
        "i 1 6 1 f . . . 0.1\n"
        "i 1 8 1 f . . . 0          ; rings again\n"
        "i 1 9 1 f 0.5 0 1 2s\n";
    KT_CHECK(parse_ok(&perf, ORC_HEAD DRUM1 DRUM2, sco) == 0, "score with p8 parses");
    KT_CHECK(perf.strike_count == 8, "strikes: %d", perf.strike_count);
    if (perf.strike_count == 8) {
        const kt_score_strike *s = perf.strikes;  /* by time: 0 (1), 0 (low), 1, 2, 4, 6, 8, 9 */
        KT_CHECK(s[0].drum == 0 && s[0].damp_t60_s == 0.3, "p8 written: %g", s[0].damp_t60_s);
        KT_CHECK(s[1].drum == 1 && s[1].damp_t60_s == 0.0, "p8 default: %g", s[1].damp_t60_s);
        KT_CHECK(s[2].drum == 1 && fabs(s[2].damp_t60_s - 0.25) < 1e-15 && s[2].force_N == 20,
                 "p8 in ms: %g", s[2].damp_t60_s);
        KT_CHECK(s[3].start_s == 2 && s[3].damp_t60_s == 0.3, "p8 implicit carry: %g",
                 s[3].damp_t60_s);
        KT_CHECK(fabs(s[4].damp_t60_s - 0.2) < 1e-12, "p8 ramp 0.3 -> 0.1 at its middle: %g",
                 s[4].damp_t60_s);
        KT_CHECK(s[5].damp_t60_s == 0.1 && s[6].damp_t60_s == 0.0 && s[7].damp_t60_s == 2.0,
                 "p8: %g %g %g", s[5].damp_t60_s, s[6].damp_t60_s, s[7].damp_t60_s);
    }
    kt_performance_free(&perf);
}

static void test_csd(void)
{
    const char *csd =
        "<CsoundSynthesizer>\n"
        "<CsOptions>\n"
        "--tail 0.5 ; ring out\n"
        "</CsOptions>\n"
        "<CsInstruments>\n"
        ORC_HEAD DRUM1
        "</CsInstruments>\n"
        "<CsScore>\n"
        "i 1 0 1 f\n"
        "i 1 1 1 0\n"
        "</CsScore>\n"
        "</CsoundSynthesizer>\n";
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse_csd(&perf, "t.csd", csd, &err);
    /* The error is in the csd's line 17, not line 2 of the score. */
    KT_CHECK(rc == KT_EINVAL && strcmp(err.file, "t.csd") == 0 && err.line == 17 && err.col == 9,
             "csd error at %s:%d:%d %s", err.file, err.line, err.col, err.message);
    KT_CHECK(strcmp(err.source_line, "i 1 1 1 0") == 0, "line text '%s'", err.source_line);
    kt_performance_free(&perf);

    char *good = strdup(csd);
    good[strstr(good, "i 1 1 1 0") - good + 8] = '9';
    kt_performance_init(&perf);
    rc = kt_score_parse_csd(&perf, "t.csd", good, &err);
    KT_CHECK(rc == 0 && perf.strike_count == 2 && perf.drum_count == 1, "csd parses");
    KT_CHECK(strstr(perf.options, "--tail 0.5") && !strstr(perf.options, "ring"), "options '%s'",
             perf.options);
    kt_performance_free(&perf);
    free(good);

    kt_performance_init(&perf);
    rc = kt_score_parse_csd(&perf, "t.csd", "<CsoundSynthesizer>\n<CsInstruments>\n"
                                            "</CsInstruments>\n</CsoundSynthesizer>\n", &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "no <CsScore>") && err.line == 1,
             "missing CsScore: %s", err.message);
    kt_performance_free(&perf);
    kt_performance_init(&perf);
    rc = kt_score_parse_csd(&perf, "t.csd", "hello\n", &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "not a .csd"), "not a csd: %s", err.message);
    kt_performance_free(&perf);
    kt_performance_init(&perf);
    rc = kt_score_parse_csd(&perf, "t.csd", "<CsoundSynthesizer>\n<CsScore>\n", &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "no <CsInstruments>"), "%s", err.message);
    kt_performance_free(&perf);
    kt_performance_init(&perf);
    rc = kt_score_parse_csd(&perf, "t.csd",
                            "<CsoundSynthesizer>\n<CsInstruments>\nsr = 1\n<CsScore>\n", &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "never closed") && err.line == 2, "%s",
             err.message);
    kt_performance_free(&perf);
}


/* Csound's header statements (0dbfs, kr, A4, nchnls_i), Kettle's out_sr and
 * the MIDI settings (massign, midipedal); a bare number for `pitch` is
 * refused with both ways to write it. */
static void test_csound_header(void)
{
    kt_performance perf;
    const char *orc = "sr = 44100\nkr = 1378.125\n0dbfs = 20\nA4 = 442\nnchnls_i = 0\n"
                      "out_sr = 48000Hz\nmidipedal = on\nmassign 2, low\n"
                      "room = 3 2.5 2\nmic main 1.5 1.2 1.6\n" DRUM1 DRUM2;
    KT_CHECK(parse_ok(&perf, orc, "i 1 0 1 f\n") == 0, "Csound header parses");
    KT_CHECK(perf.ksmps == 32 && perf.full_scale_Pa == 20 && perf.out_sample_rate_hz == 48000 &&
                 perf.midi_pedal_s == KT_MIDI_DEFAULT_GLIDE_S && perf.midi_drum[2] == 1 &&
                 perf.midi_drum[1] == -1,
             "ksmps %d, 0dbfs %g, out_sr %g, midipedal %g, massign %d", perf.ksmps,
             perf.full_scale_Pa, perf.out_sample_rate_hz, perf.midi_pedal_s, perf.midi_drum[2]);
    double g2;
    kt_pitch_parse("G2", &g2);
    KT_CHECK_REL(perf.drums[0].pitch_hz, g2 * 442 / 440, 1e-12, 1.0);
    kt_performance_free(&perf);
    const char *room = "room = 3 2.5 2\nmic main 1.5 1.2 1.6\n";
    char o[1024];
    snprintf(o, sizeof o, "sr = 44100\nkr = 1000\n%s", room);
    EXPECT_ERR(o, "", "t.orc", 2, 1, "not a whole number of samples");
    snprintf(o, sizeof o, "sr = 44100\nksmps = 16\nkr = 1378.125\n%s", room);
    EXPECT_ERR(o, "", "t.orc", 3, 1, "but ksmps = 16");
    snprintf(o, sizeof o, "0dbfs = -1\n%s", room);
    EXPECT_ERR(o, "", "t.orc", 1, 9, "must be positive");
    snprintf(o, sizeof o, "%s%sA4 = 442\n", room, DRUM1);
    EXPECT_ERR(o, "", "t.orc", 8, 1, "A4 must come before");
    snprintf(o, sizeof o, "nchnls_i = 1\n%s", room);
    EXPECT_ERR(o, "", "t.orc", 1, 12, "no live audio input");
    snprintf(o, sizeof o, "out_sr = 44100.5\n%s", room);
    EXPECT_ERR(o, "", "t.orc", 1, 10, "whole number of Hz");
    snprintf(o, sizeof o, "massign 17, 1\n%s", room);
    EXPECT_ERR(o, "", "t.orc", 1, 9, "1..16");
    snprintf(o, sizeof o, "%sinstr 1\n size = 29\n pitch = 98\n pos = 1 1 0.9\nendin\n", room);
    EXPECT_ERR(o, "", "t.orc", 5, 10, "write 98Hz or a note name such as G2, or set the head's "
                                     "tension with `tension = 98`");
    snprintf(o, sizeof o, "%sinstr 1\n size = 32\n pitch = 73.42\n pos = 1 1 0.9\nendin\n",
             room);
    EXPECT_ERR(o, "", "t.orc", 5, 10, "73.42Hz or a note name such as D2");
    snprintf(o, sizeof o, "%sinstr 1\n size = 32\n tension = G2\n pos = 1 1 0.9\nendin\n", room);
    EXPECT_ERR(o, "", "t.orc", 5, 12, "tension takes a number in N/m");
    EXPECT_ERR(ORC_HEAD DRUM1, "i 1 0 1 f\npedal 1 1 1 2000\n", "t.sco", 2, 13,
               "a pitch needs a unit or a name");
}

/* Carry as Csound's score reader does it (Engine/sread.c: ifa, setprv,
 * pcopy): '.', '+' and the implicit carry of trailing p-fields take the
 * previous i statement of the same instrument in the section (not of any
 * instrument); '.' in p1 the statement just before, if it is an i; a carried
 * '+' is a '+'; '^+x' adds to the last start; '!' stops the implicit carry;
 * sections start afresh.  The expected p-fields are written out by hand, as
 * Csound would hand them to instruments 1 and 2 (times in beats = seconds). */
static void test_csound_carry(void)
{
    const char *orc = ORC_HEAD DRUM1
        "instr 2\n  size = 26\n  pitch = C3\n  pos = 2.0 1.2 0.9\nendin\n";
    const char *sco =
        "i 1 0    1   20 0.5\n"            /* 1 */
        "i 2 0.25 0.5 30 0.4 90\n"         /* 2 */
        "i 1 +    .   .\n"                 /* 3: from line 1, not line 2 */
        "i 2 .    .   40\n"                /* 4: from line 2 */
        "i .  +   2\n"                     /* 5: p1 from line 4; + from line 4 */
        "i 1\n"                            /* 6: all from line 3, its '+' again */
        "i 1 ^+0.25 0.5 50\n"              /* 7: last start (line 6) + 0.25 */
        "i 2 4    1   60 0.7 !\n"          /* 8: '!' - no carry of p6 */
        "s\n"
        "i 1 0 1 70\n"                     /* 10: section 2 starts at 5 */
        "i 1 . . .\n";                     /* 11 */
    static const struct { int line, drum; double p2, p3, p4, p5, p6; } want[] = {
        {1, 0, 0, 1, 20, 0.5, 0},         {2, 1, 0.25, 0.5, 30, 0.4, 90},
        {3, 0, 1, 1, 20, 0.5, 0},         {4, 1, 0.25, 0.5, 40, 0.4, 90},
        {5, 1, 0.75, 2, 40, 0.4, 90},     {6, 0, 2, 1, 20, 0.5, 0},
        {7, 0, 2.25, 0.5, 50, 0.5, 0},    {8, 1, 4, 1, 60, 0.7, 0},
        {10, 0, 5, 1, 70, 0.6, 0},        {11, 0, 5, 1, 70, 0.6, 0},
    };
    kt_performance perf;
    KT_CHECK(parse_ok(&perf, orc, sco) == 0, "Csound carry score parses");
    int n = (int)(sizeof want / sizeof *want);
    KT_CHECK(perf.strike_count == n, "%d strikes", perf.strike_count);
    for (int w = 0; w < n; w++) {
        const kt_score_strike *st = NULL;
        for (int i = 0; i < perf.strike_count; i++)
            if (perf.strikes[i].loc.line == want[w].line)
                st = &perf.strikes[i];
        KT_CHECK(st && st->drum == want[w].drum && fabs(st->start_s - want[w].p2) < 1e-12 &&
                     fabs(st->duration_s - want[w].p3) < 1e-12 && st->force_N == want[w].p4 &&
                     st->radius_fraction == want[w].p5 && st->angle_deg == want[w].p6,
                 "line %d: want i%d %g %g %g %g %g, got i%d %g %g %g %g %g", want[w].line,
                 want[w].drum + 1, want[w].p2, want[w].p3, want[w].p4, want[w].p5, want[w].p6,
                 st ? st->drum + 1 : 0, st ? st->start_s : 0, st ? st->duration_s : 0,
                 st ? st->force_N : 0, st ? st->radius_fraction : 0, st ? st->angle_deg : 0);
    }
    kt_performance_free(&perf);
    /* Ramps: '>' is linear like '<'; '(' and ')' exponential. */
    KT_CHECK(parse_ok(&perf, orc, "i 1 0 1 10\ni 1 1 1 >\ni 1 2 1 (\ni 1 3 1 )\ni 1 4 1 160\n")
                 == 0 && perf.strike_count == 5, "ramps parse");
    if (perf.strike_count == 5) {
        /* '>' at beat 1 runs linearly over its numeric neighbours 10 (beat 0) and 160 (beat 4);
         * the exponential ones likewise: 10 * 16^(2/4) = 40, 10 * 16^(3/4) = 80. */
        KT_CHECK_REL(perf.strikes[1].force_N, 47.5, 1e-12, 1.0);
        KT_CHECK_REL(perf.strikes[2].force_N, 40.0, 1e-12, 1.0);
        KT_CHECK_REL(perf.strikes[3].force_N, 80.0, 1e-12, 1.0);
    }
    kt_performance_free(&perf);
}

/* Section and score extents, #undef, and '.' in p1 (the statement before). */
static void test_extents(void)
{
    kt_performance perf;
    KT_CHECK(parse_ok(&perf, ORC_HEAD DRUM1 DRUM2,
                      "i 1 0 1 f\ns 3\ni low 0.5 0.5 p\ni . . . .\ne 4\n") == 0,
             "extents parse");
    /* section 1 lasts 3 beats (s 3 > the note's 1); the score then lasts to 3 + 4 */
    KT_CHECK(perf.strike_count == 3 && perf.strikes[1].start_s == 3.5 &&
                 perf.strikes[2].start_s == 3.5 && perf.strikes[2].drum == 1 &&
                 perf.strikes[2].force_N == 10,
             "s 3 and '.' in p1");
    KT_CHECK(perf.end_s == 7, "e 4: end %g", perf.end_s);
    kt_performance_free(&perf);
    EXPECT_ERR("#define R #44100#\n#undef R\nsr = $R\n", "i 1 0 1 f\n", "t.orc", 3, 6,
               "undefined macro $R");
    KT_CHECK(parse_ok(&perf, "#define R #22050#\n#define R #32000#\nsr = $R.\n"
                             "room = 3 2.5 2\nmic m 1 1 1\n", "f 0 1\n") == 0 &&
                 perf.room.sample_rate_hz == 32000 && perf.end_s == 1,
             "redefinition replaces; $NAME. terminator; f 0 sets the length");
    kt_performance_free(&perf);
}

static void test_orchestra_errors(void)
{
    const char *sco = "i 1 0 1 f\n";
    EXPECT_ERR("sr = 44100\nfoo 1 2\n", sco, "t.orc", 2, 1, "unknown orchestra statement 'foo'");
    EXPECT_ERR("srr = 44100\n", sco, "t.orc", 1, 1, "unknown orchestra setting 'srr'");
    EXPECT_ERR("sr = abc\n", sco, "t.orc", 1, 6, "expected a number");
    EXPECT_ERR("sr = -8000\n", sco, "t.orc", 1, 6, "must be positive");
    EXPECT_ERR("sr = 44k1\n", sco, "t.orc", 1, 6, "malformed number");
    EXPECT_ERR("sr =\n", sco, "t.orc", 1, 5, "missing the sample rate");
    EXPECT_ERR("room = 3 -2 2\n", sco, "t.orc", 1, 10, "must be positive");
    EXPECT_ERR("room = 3 2\n", sco, "t.orc", 1, 11, "missing the room's height");
    EXPECT_ERR("room = 3ft 2 2\n", sco, "t.orc", 1, 8, "unknown length unit 'ft'");
    EXPECT_ERR("room = 3 2 2 4\n", sco, "t.orc", 1, 14, "unexpected '4'");
    EXPECT_ERR("precision = quad\n", sco, "t.orc", 1, 13, "single or double");
    EXPECT_ERR("beta = 0.7\n", sco, "t.orc", 1, 8, "0..0.5");
    EXPECT_ERR("absorption = 2\n", sco, "t.orc", 1, 14, "0..1");
    EXPECT_ERR("viscosity = maybe\n", sco, "t.orc", 1, 13, "on or off");
    EXPECT_ERR("temperature = 99\n", sco, "t.orc", 1, 15, "outside");
    EXPECT_ERR("ksmps = 0.5\n", sco, "t.orc", 1, 9, "whole number");
    EXPECT_ERR("sr\n", sco, "t.orc", 1, 3, "expected '=' after sr");
    EXPECT_ERR(ORC_HEAD "instr 1\n  size = 29\n  pos = 1 1 0.9\n", sco, "t.orc", 4, 1,
               "instr 1 has no endin");
    EXPECT_ERR(ORC_HEAD "endin\n", sco, "t.orc", 4, 1, "endin without instr");
    EXPECT_ERR(ORC_HEAD "instr 1\ninstr 2\n", sco, "t.orc", 5, 1, "instr inside instr 1");
    EXPECT_ERR(ORC_HEAD "instr 1\n  pitch = G2\n  pos = 1 1 0.9\nendin\n", sco, "t.orc", 4, 1,
               "does not say its size");
    EXPECT_ERR(ORC_HEAD "instr 1\n  size = 29\n  pitch = G2\nendin\n", sco, "t.orc", 4, 1,
               "does not say its position");
    EXPECT_ERR(ORC_HEAD "instr 1\n  size = 29\n  pos = 1 1 0.9\nendin\n", sco, "t.orc", 4, 1,
               "does not say its tuning");
    EXPECT_ERR(ORC_HEAD DRUM1 DRUM1, sco, "t.orc", 9, 7, "instr 1 is already defined (line 4)");
    EXPECT_ERR(ORC_HEAD "instr 0\n", sco, "t.orc", 4, 7, "whole number >= 1");
    EXPECT_ERR(ORC_HEAD "instr\n", sco, "t.orc", 4, 6, "missing the instrument's number");
    EXPECT_ERR(ORC_HEAD "instr 1\n  colour = red\n", sco, "t.orc", 5, 3,
               "unknown drum setting 'colour'");
    EXPECT_ERR(ORC_HEAD "instr 1\n  size 29\n", sco, "t.orc", 5, 8, "expected '=' after size");
    EXPECT_ERR(ORC_HEAD "instr 1\n  size = 29\n  pitch = G5\n  pos = 1 1 0.9\nendin\n", sco,
               "t.orc", 6, 11, "out of reach for drum 1 (29 inch)");
    /* a standard drum is named by its size, not its scaled diameter (32.15 in) */
    EXPECT_ERR(ORC_HEAD "instr 1\n  size = 32\n  pitch = C4\n  pos = 1 1 0.9\nendin\n", sco,
               "t.orc", 6, 11, "out of reach for drum 1 (32 inch)");
    EXPECT_ERR(ORC_HEAD "instr 1\n  size = 30.5in\n  pitch = C5\n  pos = 1 1 0.9\nendin\n", sco,
               "t.orc", 6, 11, "out of reach for drum 1 (30.5 inch)");
    EXPECT_ERR(ORC_HEAD "instr 1\n  pitch = H2\n", sco, "t.orc", 5, 11, "not a pitch name");
    EXPECT_ERR(ORC_HEAD "instr 1\n  pitch = 0Hz\n", sco, "t.orc", 5, 11, "must be positive");
    EXPECT_ERR(ORC_HEAD "instr 1\n  tension = G2\n", sco, "t.orc", 5, 13, "tension takes a number");
    EXPECT_ERR(ORC_HEAD "instr 1\n  pitch = G2\n  tension = 2000\n", sco, "t.orc", 6, 3,
               "tuning is already set (line 5)");
    EXPECT_ERR(ORC_HEAD "instr 1\n  head = calfskin\n", sco, "t.orc", 5, 10,
               "unknown head material 'calfskin'");
    EXPECT_ERR(ORC_HEAD "instr 1\n  poisson = 0.7\n", sco, "t.orc", 5, 13, "0..0.5");
    EXPECT_ERR(ORC_HEAD "instr 1\n  solver = magic\n", sco, "t.orc", 5, 12, "jacobi, reduced");
    EXPECT_ERR(ORC_HEAD "instr 1\n  intervals = 8\n", sco, "t.orc", 5, 15, ">= 16");
    EXPECT_ERR(ORC_HEAD "instr 1\n  size = 29\n  pos = 1 1\n", sco, "t.orc", 6, 12,
               "missing the z coordinate");
    EXPECT_ERR(ORC_HEAD "mic main 1 1 1\n", sco, "t.orc", 4, 5, "microphone main is already defined (line 3)");
    EXPECT_ERR(ORC_HEAD "move nobody 1 1 1 1\n", sco, "t.orc", 4, 6, "no microphone called nobody");
    EXPECT_ERR(ORC_HEAD "move main 2 1 1 1\nmove main 1 1 1 1\n", sco, "t.orc", 5, 11,
               "increasing time");
    EXPECT_ERR(ORC_HEAD "pair oh 1 1 1 0\n", sco, "t.orc", 4, 15, "spacing must be positive");
    EXPECT_ERR(ORC_HEAD "impulse 1 1 1 -1\n", sco, "t.orc", 4, 15, "cannot be negative");
    EXPECT_ERR(ORC_HEAD "soundfile \"/nonexistent/x.wav\" 1 1 1\n", sco, "t.orc", 4, 11,
               "cannot read sound file /nonexistent/x.wav");
    EXPECT_ERR(ORC_HEAD "soundfile x.wav 1 1 1\n", sco, "t.orc", 4, 11, "in quotes");
    EXPECT_ERR("sr = 44100\nmic m 1 1 1\n", sco, "t.orc", 1, 1, "how big the room is");
    EXPECT_ERR("sr = 44100\nroom = 2 2 2\n", sco, "t.orc", 2, 1, "no microphone");
    EXPECT_ERR("nchnls = 2\n" ORC_HEAD, sco, "t.orc", 1, 1, "nchnls = 2 but the orchestra defines 1");
    EXPECT_ERR("sr = 44100 /* open\n\n", sco, "t.orc", 1, 12, "unterminated comment");
    EXPECT_ERR(ORC_HEAD "soundfile \"x.wav 1 1 1\n", sco, "t.orc", 4, 11, "unterminated string");
    EXPECT_ERR("sr = $RATE\n", sco, "t.orc", 1, 6, "undefined macro $RATE");
    EXPECT_ERR("#define RATE 44100\n", sco, "t.orc", 1, 14, "expected '#' to open");
    EXPECT_ERR("#define RATE #44100\n", sco, "t.orc", 1, 14, "unterminated macro body");
    EXPECT_ERR("#define RATE(x) #44100#\n", sco, "t.orc", 1, 13, "arguments are not supported");
    EXPECT_ERR("#define A #$A#\nsr = $A\n", sco, "t.orc", 2, 6, "expands too deeply");
    EXPECT_ERR("#include \"other.orc\"\n", sco, "t.orc", 1, 1, "unknown directive");
    EXPECT_ERR("#undef NOPE\n", sco, "t.orc", 1, 8, "#undef of undefined macro NOPE");
    /* A macro that expands to a bad value is reported at its use. */
    EXPECT_ERR("#define SR #fast#\n\tsr = $SR\n", sco, "t.orc", 2, 7, "expected a number");
}

static void test_score_errors(void)
{
    const char *orc = ORC_HEAD DRUM1 DRUM2;
    EXPECT_ERR(orc, "i 1 0 1 f\nz 1 2\n", "t.sco", 2, 1, "unknown score statement 'z'");
    EXPECT_ERR(orc, "r 3\n", "t.sco", 1, 1, "Csound statement 'r' is not supported");
    EXPECT_ERR(orc, "{ 4 CNT\n", "t.sco", 1, 1, "loops");
    EXPECT_ERR(orc, "i 1 0\n", "t.sco", 1, 6, "missing p3");
    EXPECT_ERR(orc, "i\n", "t.sco", 1, 2, "missing p1");
    EXPECT_ERR(orc, "i 1 zero 1 f\n", "t.sco", 1, 5, "expected a number for p2");
    EXPECT_ERR(orc, "i 1 0 1s f\n", "t.sco", 1, 7, "plain number");
    EXPECT_ERR(orc, "i 7 0 1 f\n", "t.sco", 1, 3, "undefined drum: the orchestra has no instr 7");
    EXPECT_ERR(orc, "i high 0 1 f\n", "t.sco", 1, 3, "no instr high");
    EXPECT_ERR(orc, "i 1 -1 1 f\n", "t.sco", 1, 5, "start time cannot be negative");
    EXPECT_ERR(orc, "i 1 0 -1 f\n", "t.sco", 1, 7, "duration cannot be negative");
    EXPECT_ERR(orc, "i 1 0 1 f 1.2\n", "t.sco", 1, 11, "strike off the head");
    EXPECT_ERR(orc, "i 1 0 1 f -0.1\n", "t.sco", 1, 11, "strike off the head");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 0 90\n", "t.sco", 1, 17, "contact time");
    EXPECT_ERR(orc, "i 1 0 1 0\n", "t.sco", 1, 9, "force must be positive");
    EXPECT_ERR(orc, "i 1 0 1 fp\n", "t.sco", 1, 9, "neither a force in newtons nor a dynamic");
    EXPECT_ERR(orc, "i 1 0 1\n", "t.sco", 1, 8, "missing p4");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 0 1 0.4 9\n", "t.sco", 1, 23, "too many p-fields");
    EXPECT_ERR(orc, "i 1 0 + f\n", "t.sco", 1, 7, "'+' is only allowed in p2");
    EXPECT_ERR(orc, "i 1 + 1 f\n", "t.sco", 1, 5, "no earlier note");
    EXPECT_ERR(orc, "i . 0 1 f\n", "t.sco", 1, 3, "statement just before");
    EXPECT_ERR(orc, "i 1 0 1 f\nt 0 60\ni . 1 1 f\n", "t.sco", 3, 3, "statement just before");
    EXPECT_ERR(orc, "i 1 0 1 f\nf 0 4\ni . 1 1 f\n", "t.sco", 3, 3, "statement just before");
    EXPECT_ERR(orc, "i 1 0 1 f\ns\ni 1 . 1 f\n", "t.sco", 3, 5, "no earlier note in this section");
    EXPECT_ERR(orc, "i 1 0 1 f\ni 1 1 1 f . \n", "t.sco", 2, 11, "previous note (line 1) has no p5");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 ! 3\n", "t.sco", 1, 17, "nothing may follow '!'");
    EXPECT_ERR(orc, "i 1 ^+1 1 f\n", "t.sco", 1, 5, "no earlier start");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 -10\ni 1 1 1 f 0.5 (\ni 1 2 1 f 0.5 20\n", "t.sco", 2, 15,
               "exponential ramp");
    EXPECT_ERR(orc, "i 1 0 . f\n", "t.sco", 1, 7, "no earlier note");
    EXPECT_ERR(orc, "i 1 < 1 f\n", "t.sco", 1, 5, "only allowed in p4..p8");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 0 1 -0.3\n", "t.sco", 1, 19, "p8: the damping time");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 0 1 0.2\ni 1 1 1 f . . . -2\n", "t.sco", 2, 17,
               "cannot be negative, got -2 s");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 0 1 0.3N\n", "t.sco", 1, 19, "p8 (damping after p3");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 0 1 soft\n", "t.sco", 1, 19, "expected a number for p8");
    EXPECT_ERR(orc, "i 1 0 1 f 0.5 0 1 <\ni 1 1 1 f . . . 0.2\n", "t.sco", 1, 19,
               "a ramp in p8 needs");
    EXPECT_ERR(orc, "i 1 0 1 f\ni 1 1 1 <\n", "t.sco", 2, 9, "a ramp in p4 needs");
    EXPECT_ERR(orc, "t 0 60\nt 0 90\n", "t.sco", 2, 1, "second t statement");
    EXPECT_ERR(orc, "t 1 60\n", "t.sco", 1, 3, "starts at beat 0");
    EXPECT_ERR(orc, "t 0 -60\n", "t.sco", 1, 5, "tempo must be positive");
    EXPECT_ERR(orc, "t 0 60 4\n", "t.sco", 1, 9, "missing the tempo");
    EXPECT_ERR(orc, "t 0 60 4 90 2 80\n", "t.sco", 1, 13, "must not go back");
    EXPECT_ERR(orc, "t\n", "t.sco", 1, 2, "missing the tempo");
    EXPECT_ERR(orc, "f 1 0 1024 10 1\n", "t.sco", 1, 1, "function tables");
    EXPECT_ERR(orc, "f 0\n", "t.sco", 1, 4, "missing the length");
    EXPECT_ERR(orc, "s -2\n", "t.sco", 1, 3, "cannot be negative");
    EXPECT_ERR(orc, "b x\n", "t.sco", 1, 3, "expected a number");
    EXPECT_ERR(orc, "pedal low 0 1 A1\npedal low 0.5 1 G1\n", "t.sco", 2, 1,
               "before the one at line 1");
    EXPECT_ERR(orc, "pedal low 0 1 C5\n", "t.sco", 1, 15, "out of reach for drum low");
    EXPECT_ERR(orc, "pedal 1 0 1\n", "t.sco", 1, 12, "missing tuning");
    EXPECT_ERR(orc, "pedal 1 0 -1 G2\n", "t.sco", 1, 11, "duration cannot be negative");
    EXPECT_ERR(orc, "pedal 9 0 1 G2\n", "t.sco", 1, 7, "no instr 9");
    EXPECT_ERR(orc, "i 1 0 1 $LOUD\n", "t.sco", 1, 9, "undefined macro $LOUD");
}

/* Errors that need the final room: placement, overlap, sample rate. */
static void check_room(int line_of_test, const char *orc, const char *sco, int line, int col,
                       const char *what)
{
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "t.orc", orc, "t.sco", sco, &err);
    KT_CHECK(rc == 0, "test line %d: parses (%s)", line_of_test, err.message);
    if (rc == 0)
        rc = kt_performance_check(&perf, &perf.room, &err);
    if (!what) {
        KT_CHECK(rc == 0, "test line %d: check passes (%s)", line_of_test, err.message);
    } else {
        KT_CHECK(rc == KT_EINVAL && err.line == line && err.col == col &&
                     strstr(err.message, what),
                 "test line %d: got %d at %d:%d '%s', want %d:%d '%s'", line_of_test, rc, err.line,
                 err.col, err.message, line, col, what);
    }
    kt_performance_free(&perf);
}

static void test_room_checks(void)
{
    const char *sco = "i 1 0 1 f\n";
    check_room(__LINE__, ORC_HEAD DRUM1 DRUM2, sco, 0, 0, NULL);
    /* x = 0.3 m: the 0.37 m radius pokes through the wall. */
    check_room(__LINE__,
               ORC_HEAD "instr 1\n size = 29\n pitch = G2\n pos = 0.3 1 0.9\nendin\n", sco, 4, 1,
               "drum 1 does not fit in the room");
    /* bowl 0.5 m deep under a head at 0.4 m */
    check_room(__LINE__,
               ORC_HEAD "instr 1\n size = 29\n pitch = G2\n pos = 1 1 0.4\nendin\n", sco, 4, 1,
               "bowl");
    check_room(__LINE__,
               ORC_HEAD DRUM1 "instr 2\n size = 26\n pitch = C3\n pos = 1.6 1.3 0.9\nendin\n", sco,
               9, 1, "drum 2 overlaps drum 1 (defined at line 4)");
    /* 4 kHz: an air cell of 15 cm, five across the head; 1 kHz: the
     * membrane grid itself is too coarse.  Both reported at the sr line. */
    check_room(__LINE__, "sr = 4000\nroom = 3 2.5 2\nmic m 1 1 1\n" DRUM1, sco, 1, 1,
               "sample rate 4000 Hz is too low for drum 1: the air grid");
    check_room(__LINE__, "sr = 1000\nroom = 3 2.5 2\nmic m 1 1 1\n" DRUM1, sco, 1, 1,
               "sample rate 1000 Hz is too low for drum 1: its membrane");
    check_room(__LINE__, ORC_HEAD "mic out 4 1 1\n" DRUM1, sco, 4, 5,
               "microphone out at (4, 1, 1) m is outside");
    check_room(__LINE__, ORC_HEAD "impulse 1 1 9\n", "f 0 1\n", 4, 1, "the source at");
    check_room(__LINE__, ORC_HEAD "impulse 1 1 1\n", "f 0 1\n", 0, 0, NULL);
}

static void test_format(void)
{
    kt_score_error e = {0};
    snprintf(e.file, sizeof e.file, "a.sco");
    e.line = 3;
    e.col = 4;
    snprintf(e.message, sizeof e.message, "bad");
    snprintf(e.source_line, sizeof e.source_line, "\ti 1 x");
    char buf[256];
    kt_score_error_format(&e, buf, sizeof buf);
    KT_CHECK(strcmp(buf, "a.sco:3:4: error: bad\n\ti 1 x\n\t  ^\n") == 0, "tab caret: '%s'", buf);
    e.file[0] = '\0';
    kt_score_error_format(&e, buf, sizeof buf);
    KT_CHECK(strcmp(buf, "error: bad\n") == 0, "no place: '%s'", buf);
}

int main(void)
{
    test_pitch();
    test_orchestra();
    test_score();
    test_damping_field();
    test_csd();
    test_csound_header();
    test_csound_carry();
    test_extents();
    test_orchestra_errors();
    test_score_errors();
    test_room_checks();
    test_format();
    return kt_test_finish("test_score_parse");
}
