/* test_score_repertoire.c - every piece in scores/ parses, fits its room
 * (kt_performance_check) and has the shape its header promises: the demo
 * lasts about 1.3 s, the roll is one drum, the concert set has four drums in
 * a hall of 500 m^3 simulated at 11025 Hz and written at 44.1 kHz with its own
 * full scale, the passage glides by pedal, the piece has at least 20 events,
 * and part.mid is the MIDI twin of part.sco (tests/test_score_midi.c). */
#include "kt_score.h"
#include "kt_test.h"

#include <stdio.h>
#include <string.h>

static char scores[1024];

static int load(kt_performance *perf, const char *a, const char *b)
{
    kt_score_error err = {0};
    int rc = kt_test_load_piece(perf, a, b, &err);
    if (rc == 0)
        rc = kt_performance_check(perf, &perf->room, &err);
    KT_CHECK(rc == 0, "%s %s: %s:%d:%d: %s", a, b ? b : "", err.file, err.line, err.col,
             err.message);
    return rc;
}

int main(void)
{
    /* __FILE__ is tests/test_score_repertoire.c in the source tree. */
    kt_test_scores_dir(scores, sizeof scores);

    kt_performance p;
    if (load(&p, "demo.csd", NULL) == 0) {
        KT_CHECK(p.drum_count == 1 && p.mic_count == 2 && p.strike_count == 2, "demo shape");
        KT_CHECK(p.room.sample_rate_hz == 44100, "demo at 44.1 kHz");
        double v = p.room.size_m[0] * p.room.size_m[1] * p.room.size_m[2];
        KT_CHECK(v > 0.8 && v < 1.5, "demo room about 1 m^3: %g", v);
        KT_CHECK(strstr(p.options, "--tail") != NULL, "demo sets its tail");
    }
    kt_performance_free(&p);

    if (load(&p, "roll.csd", NULL) == 0) {
        KT_CHECK(p.drum_count == 1 && p.strike_count >= 20, "roll: %d strokes", p.strike_count);
        KT_CHECK(strcmp(p.drums[0].pitch_name, "G2") == 0, "roll on G2");
        /* the roll swells: the strongest stroke is in the middle */
        KT_CHECK(p.strikes[0].force_N < p.strikes[15].force_N, "crescendo");
    }
    kt_performance_free(&p);

    static const char *pieces[3] = {"passage.sco", "piece.sco", "part.sco"};
    for (int k = 0; k < 3; k++) {
        if (load(&p, "concert.orc", pieces[k]) != 0) {
            kt_performance_free(&p);
            continue;
        }
        double v = p.room.size_m[0] * p.room.size_m[1] * p.room.size_m[2];
        KT_CHECK(p.drum_count == 4 && fabs(v - 500) < 50, "concert set: %d drums, %g m^3",
                 p.drum_count, v);
        KT_CHECK(p.room.sample_rate_hz == 11025 && p.out_sample_rate_hz == 44100 &&
                     p.full_scale_Pa > 0, "the hall: simulated at %g Hz, files at %g Hz, "
                     "0dbfs %g Pa", p.room.sample_rate_hz, p.out_sample_rate_hz, p.full_scale_Pa);
        if (k == 0)
            KT_CHECK(p.pedal_count >= 1, "the passage has a pedal glissando");
        else if (k == 1)
            KT_CHECK(p.strike_count + p.pedal_count >= 20, "the piece has %d events",
                     p.strike_count + p.pedal_count);
        kt_performance_free(&p);
    }

    /* the shaped hall: the set on its stage; its solids and microphones fit (on
     * a coarse grid: the drums need the piece's rate) */
    if (load(&p, "hall.orc", "passage.sco") == 0) {
        KT_CHECK(p.drum_count == 4 && p.solid_count == 5 && p.solids[1].solid.hole,
                 "hall: %d drums, %d solids", p.drum_count, p.solid_count);
        kt_room_params rp = p.room;
        rp.sample_rate_hz = 2000;
        rp.nthreads = 1;
        kt_room *room;
        kt_error e;
        int rc = kt_room_create(&rp, &room, &e);
        KT_CHECK(rc == 0, "%s", e.message);
        kt_room_solid s[5];
        for (int k = 0; k < p.solid_count && k < 5; k++)
            s[k] = p.solids[k].solid;
        if (rc == 0)
            KT_CHECK(kt_room_add_solids(room, s, 5, NULL, &e) == 0, "%s", e.message);
        for (int m = 0; rc == 0 && m < p.mic_count; m++)
            KT_CHECK(kt_room_add_mic(room, p.mics[m].name, p.mics[m].pos_m, &e) >= 0, "%s",
                     e.message);
        if (rc == 0)
            kt_room_destroy(room);
    }
    kt_performance_free(&p);
    return kt_test_finish("test_score_repertoire");
}
