/* kt_score.h - Kettle's orchestra and score language (thesis 7.5.1: drums and
 * strikes "stored in a similar manner to a Csound orchestra and score").
 *
 * An orchestra (.orc) sets up the room, its microphones and sound sources and
 * defines persistent drums in `instr ... endin` blocks; a score (.sco) plays
 * them with Csound statements (i, t, s, b, f, e, plus `pedal`).  A .csd file
 * holds both.  Parsing produces a kt_performance: every time in seconds,
 * every drum as complete kt_timpani_params, every item remembering the source
 * line it came from so that errors found later (when the drums are created)
 * still point at the right line.  docs/score-language.md is the reference.
 *
 * Errors come back as a kt_score_error: file, line, column, message and the
 * text of the offending line, which kt_score_error_format turns into the
 * compiler-style "file:line:col: error: message" + line + caret. */
#ifndef KT_SCORE_H
#define KT_SCORE_H

#include "kettle.h"
#include "timpani.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KT_SCORE_NAME_MAX 64
#define KT_SCORE_PATH_MAX 1024
#define KT_SCORE_LINE_MAX 512
/* `midipedal = on`: seconds a drum's pedal takes to reach a new note's pitch. */
#define KT_MIDI_DEFAULT_GLIDE_S 0.25

/* Where something was written: a source file (index into kt_performance's
 * list of texts), 1-based line and column.  source < 0: nowhere (built in). */
typedef struct kt_score_loc {
    int source;
    int line;
    int col;
} kt_score_loc;

typedef struct kt_score_error {
    int code;                             /* a kt_status; KT_OK when clear */
    char file[KT_SCORE_PATH_MAX];         /* "" when the error has no place */
    int line, col;
    char message[KT_ERROR_MESSAGE_MAX];
    char source_line[KT_SCORE_LINE_MAX];  /* the offending line, as written */
    int warning;                          /* 1: a warning (kt_tuning_mic_warnings) */
} kt_score_error;

/* "file:line:col: error: message\n<line>\n<caret>\n" (or "error: message\n"
 * when the error has no place; "warning" for a warning).  Returns the
 * length written (snprintf-like). */
int kt_score_error_format(const kt_score_error *e, char *buf, size_t size);

typedef struct kt_score_drum {
    kt_score_loc loc;                     /* the `instr` line */
    char name[KT_SCORE_NAME_MAX];         /* "1" for instr 1, or the given name */
    int number;                           /* instr number, -1 for a named drum */
    kt_timpani_params params;             /* complete, tension resolved */
    int solver_given;                     /* `solver =` was in the instr (else a render's device picks) */
    double pitch_hz;                      /* the tuning asked for, 0 if a tension was given */
    char pitch_name[16];                  /* "G2", "98Hz" or "" */
    /* Kept by an excerpt, whose membrane grid is the whole piece's (0: none
     * kept): the highest and lowest tensions the whole piece's pedals reach
     * and its strongest stroke on this drum (docs/timpani.md, "Loud strokes"). */
    double tension_max_N_per_m, tension_min_N_per_m;
    double stroke_force_max_N;
} kt_score_drum;

typedef struct kt_score_waypoint {
    kt_score_loc loc;
    double time_s;
    double pos_m[3];
} kt_score_waypoint;

typedef struct kt_score_mic {
    kt_score_loc loc;
    char name[KT_SCORE_NAME_MAX];
    double pos_m[3];
    kt_score_waypoint *waypoints;
    int waypoint_count;
} kt_score_mic;

typedef enum kt_score_source_kind { KT_SOURCE_IMPULSE = 0, KT_SOURCE_FILE } kt_score_source_kind;

typedef struct kt_score_source {
    kt_score_loc loc;
    kt_score_source_kind kind;
    double pos_m[3];
    double start_s;
    double duration_s;                    /* impulse: pulse length (0: 8 time steps) */
    double amplitude;                     /* impulse: peak, Psi per step (m^2/s) */
    double gain;                          /* file: dry-signal gain */
    char path[KT_SCORE_PATH_MAX];         /* file: as resolved against the orchestra's folder */
} kt_score_source;

/* A `solid` or `hole` statement: a box or an upright cylinder inside the
 * room (kettle.h, kt_room_add_solids). */
typedef struct kt_score_solid {
    kt_score_loc loc;
    kt_room_solid solid;
} kt_score_solid;

/* One `i` statement, resolved: the strike of drum `drum` (index into drums). */
typedef struct kt_score_strike {
    kt_score_loc loc;
    int drum;
    double start_s;
    double duration_s;                    /* p3 in seconds: how long the note lasts */
    double force_N;                       /* p4 (peak of the raised-cosine force) */
    double radius_fraction;               /* p5: distance from the centre / head radius */
    double angle_deg;                     /* p6: direction, degrees from the room's +x axis */
    double contact_s;                     /* p7 (written in ms) */
    double damp_t60_s;                    /* p8: at start_s + duration_s the head is damped
                                             so that it falls 60 dB in this time (sigma0 =
                                             3 ln 10 / T60) until the drum is next struck;
                                             0: it rings on */
} kt_score_strike;

/* A `pedal` statement: the drum's tension moves from whatever it is at start_s
 * to target_tension over duration_s, so that the pitch glides linearly in
 * cents (the tension follows the square of an exponential). */
typedef struct kt_score_pedal {
    kt_score_loc loc;
    int drum;
    double start_s;
    double duration_s;
    double target_tension_N_per_m;
    double target_hz;                     /* 0 if written as a tension */
} kt_score_pedal;

/* One source text (an .orc, .sco or .csd file), kept for error messages. */
typedef struct kt_score_text {
    char name[KT_SCORE_PATH_MAX];
    char *text;
    size_t length;
} kt_score_text;

typedef struct kt_performance {
    kt_room_params room;                  /* from the orchestra header */
    kt_score_loc room_loc;                /* where `room =` was written */
    kt_score_loc scheme_loc;              /* where `scheme =` was written */
    kt_score_loc sr_loc;                  /* where `sr =` was written (or none) */
    int ksmps;                            /* steps between pedal updates (control period) */
    int channels_declared;                /* nchnls, 0 if not given */
    kt_score_loc channels_loc;
    double full_scale_Pa;                 /* 0dbfs: the pressure written as full scale;
                                             0: not given (KT_FULL_SCALE_PA) */
    double out_sample_rate_hz;            /* out_sr: the files' rate; 0: sr (no resampling) */
    double a4_hz;                         /* A4: the reference of pitch names and MIDI notes */
    int pitch_named;                      /* 1 once a pitch name was read (A4 must come first) */
    int midi_drum[17];                    /* massign: MIDI channel 1..16 (0: any) -> drum
                                             index; -1: the drum tuned nearest the note */
    double midi_pedal_s;                  /* midipedal: glide time to a new note's pitch on
                                             the same drum; 0: off */
    kt_score_drum *drums;        int drum_count;
    kt_score_mic *mics;          int mic_count;
    kt_score_source *sources;    int source_count;
    kt_score_solid *solids;      int solid_count;    /* in the order written */
    kt_score_strike *strikes;    int strike_count;   /* sorted by start time */
    kt_score_pedal *pedals;      int pedal_count;    /* sorted by start time */
    kt_score_pedal *history;     int history_count;  /* an excerpt's pedals from before it,
                                                        at times < 0: the tuner tunes the
                                                        whole piece's pitches and starts each
                                                        drum where they left it */
    double end_s;                         /* end of the score: last note, `e`/`f 0` extents */
    kt_score_loc end_loc;                 /* the statement reaching furthest into its section */
    kt_score_text *texts;        int text_count;
    char options[KT_SCORE_LINE_MAX * 2];  /* a .csd's <CsOptions> as written (comments
                                             blanked), "" if none */
    kt_score_loc options_loc;             /* where options[0] is in the .csd */
} kt_performance;

void kt_performance_init(kt_performance *perf);
void kt_performance_free(kt_performance *perf);

/* Parse an orchestra and a score from files.  On error returns a negative
 * status and fills err (file:line:col and the line). */
int kt_score_load(kt_performance *perf, const char *orc_path, const char *sco_path,
                  kt_score_error *err);
/* An orchestra with a Standard MIDI File as its score (perform/score_midi.c,
 * libsmf): note-ons become strikes of the drum `massign` names for their
 * channel or the drum tuned nearest, velocity the force, the file's tempo
 * map the times; with `midipedal` a drum glides to a new note's pitch.  The
 * converted score is kept as the performance's second text (named after the
 * MIDI file), so messages quote the line that stands for the event. */
int kt_score_load_midi(kt_performance *perf, const char *orc_path, const char *mid_path,
                       kt_score_error *err);
int kt_score_parse_midi(kt_performance *perf, const char *orc_name, const char *orc_text,
                        const char *mid_name, const void *mid_bytes, size_t mid_size,
                        kt_score_error *err);
/* Parse a .csd (<CsoundSynthesizer> with <CsInstruments> and <CsScore>). */
int kt_score_load_csd(kt_performance *perf, const char *csd_path, kt_score_error *err);
/* The same from text in memory; `name` is used in messages, and relative
 * sound-file paths resolve against the working directory. */
int kt_score_parse(kt_performance *perf, const char *orc_name, const char *orc_text,
                   const char *sco_name, const char *sco_text, kt_score_error *err);
int kt_score_parse_csd(kt_performance *perf, const char *name, const char *text,
                       kt_score_error *err);

/* Check everything that depends on the final room parameters (sample rate,
 * size): drums inside the room and not overlapping, membrane grid fine enough,
 * microphones and sources inside.  Errors point at the statement. */
int kt_performance_check(const kt_performance *perf, const kt_room_params *room,
                         kt_score_error *err);

/* Keep only what happens from from_s on, with from_s moved to 0 (kettle
 * render --from): strikes and sources that begin before it are left out
 * (counted in *cut, which may be NULL), each drum starts at the tension its
 * pedals give it at from_s (a glide under way goes on), moving microphones
 * start where they are, and every drum keeps the membrane grid of the whole
 * piece, so the passage sounds as it does in the whole render but for what
 * still rang from before it. */
typedef struct kt_excerpt_cut {
    int strikes, sources;
} kt_excerpt_cut;
int kt_performance_excerpt(kt_performance *perf, double from_s, kt_excerpt_cut *cut,
                           kt_score_error *err);

/* The highest tension drum d reaches (its own, its pedals', an excerpt's
 * whole piece): the membrane grid is chosen for it. */
double kt_score_drum_max_tension(const kt_performance *perf, int d);
/* The strongest stroke on drum d (newtons; an excerpt's whole piece). */
double kt_score_drum_max_force(const kt_performance *perf, int d);
/* A drum's size in inches as a timpanist names it: 23, 26, 29 or 32 for the
 * standard drums (scaled from the thesis' 0.74 m head, so 32.15 in across),
 * else its diameter in inches. */
double kt_score_drum_inches(const kt_timpani_params *p);

/* Fill err with a message located at loc (used by the renderer). */
int kt_score_fail_at(const kt_performance *perf, kt_score_loc loc, kt_score_error *err,
                     int code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- pitch and tension (docs/score-language.md, "Tuning") ---- */

/* "G2", "F#2", "Bb2", "c3" -> Hz in equal temperament, A4 = 440 Hz.
 * Returns 0 on success, KT_EINVAL if the text is no pitch name. */
int kt_pitch_parse(const char *name, double *hz);
/* The equal-tempered note nearest hz (A4 = 440 Hz), as "G2", "F#2", "Bb2". */
int kt_pitch_name(double hz, char *name, size_t size);
/* The membrane grid (intervals across) drum d needs at time step k: the
 * stability rule's at its highest tension, with the margin its strongest
 * stroke needs at its lowest (docs/timpani.md, "Loud strokes"), every
 * tension of the drum times tension_scale (the tuner's headroom). */
int kt_performance_membrane_intervals(const kt_performance *perf, int d, double k,
                                      double tension_scale);

/* Air-loaded (1,1) frequency of a drum of this radius and head at this
 * tension, and the inverse.  First-order model calibrated on the reference
 * drum (29 inch, 2200 N/m -> KT_REFERENCE_FUNDAMENTAL_HZ). */
double kt_timpani_pitch_hz(double radius_m, double surface_density_kg_per_m2,
                           double tension_N_per_m);
double kt_timpani_tension_for_pitch(double radius_m, double surface_density_kg_per_m2,
                                    double pitch_hz);
/* Dynamic marks ppp..fff -> peak strike force in newtons; KT_EINVAL if unknown. */
int kt_dynamic_force(const char *mark, double *force_N);

#ifdef __cplusplus
}
#endif

#endif
