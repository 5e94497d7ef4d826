/* kt_tuning.h - every drum sounds the pitch it is given.  A drum's pitch is
 * its (1,1) mode, which the air, the bowl, the room and the grids move a
 * long way from any formula; so Kettle finds the tension that makes the
 * discrete system that will actually run sound the asked pitch: the whole
 * room of the render (its grid, scheme, walls, sample rate and precision)
 * with every drum in it, the drum struck softly and measured after the
 * attack (perform/tuning_run.c), the tension corrected by a secant step in
 * log tension against log frequency until a measured run lies within a few
 * cents of the pitch (perform/tuning.c says how close, and why).  The
 * measured (tension, frequency) points of a drum form its tuning curve:
 * held pitches are read off it next to measured points, pedal glides follow
 * it between them.  Points are kept in a file cache keyed by the drum,
 * the grid and its surroundings, so a later render or `kettle tune` of the
 * same set-up runs nothing.  docs/score-language.md, "Tuning", has the
 * method, its cost and its accuracy. */
#ifndef KT_TUNING_H
#define KT_TUNING_H

#include "kt_score.h"

/* calibrated: the discrete system is measured (the default); model: the
 * first-order formula kt_timpani_tension_for_pitch, no runs (fast previews). */
typedef enum kt_tuning_mode { KT_TUNING_CALIBRATED = 0, KT_TUNING_MODEL = 1 } kt_tuning_mode;

typedef struct kt_tuning_options {
    kt_tuning_mode mode;
    const char *cache_dir;          /* NULL: $XDG_CACHE_HOME/kettle (else ~/.cache/kettle);
                                       "": no cache */
    int nthreads;                   /* the runs' room threads (<= 0: all cores) */
    void (*note)(void *user, const char *line);  /* what is being done, a line at a time */
    int (*stop)(void *user);        /* polled between runs: non-zero stops (KT_EINTR) */
    void *user;
} kt_tuning_options;

/* One point of a drum's tuning curve: its (1,1) at a tension. */
typedef struct kt_tuning_point {
    double tension_N_per_m;
    double hz;
} kt_tuning_point;

typedef struct kt_tuning_drum {
    int membrane_intervals;         /* the grid the render must build the drum on */
    double tension_N_per_m;         /* its tuning before any pedal */
    kt_tuning_point *points;        /* its curve, ascending in hz (none in model mode) */
    int point_count;
    char key[24];                   /* the cache key's hash, hex */
} kt_tuning_drum;

/* A pitch a drum is asked for: its own tuning, or a pedal's target. */
typedef struct kt_tuning_target {
    int drum;
    int pedal;                      /* -1: the drum's tuning in its instr block */
    int past;                       /* 1: pedal indexes an excerpt's history */
    double asked_hz;                /* 0: asked as a tension */
    double model_tension_N_per_m;   /* what the first-order formula gives */
    double tension_N_per_m;         /* what the drum gets */
    double sounding_hz;             /* its (1,1) there, from the curve */
    int runs;                       /* runs made for it now (0: from the cache) */
    double seconds;                 /* their wall-clock time */
} kt_tuning_target;

typedef struct kt_tuning {
    kt_tuning_mode mode;
    kt_tuning_drum *drums;
    int drum_count;
    kt_tuning_target *targets;
    int target_count;
    double *pedal_tension_N_per_m;  /* per pedal of the performance: its target tension */
    int runs;                       /* runs made in all */
    double seconds;                 /* wall-clock time of the whole plan */
    char cache_dir[1024];           /* "" when no cache was used */
} kt_tuning;

void kt_tuning_options_default(kt_tuning_options *o);
void kt_tuning_free(kt_tuning *t);

/* Tensions for every drum and pedal target of perf in the room `room` (the
 * render's: kt_render_room_params).  Errors point at the drum or pedal whose
 * pitch is out of reach. */
int kt_tuning_plan(const kt_performance *perf, const kt_room_params *room,
                   const kt_tuning_options *opt, kt_tuning *out, kt_score_error *err);

/* The drum's curve: the tension that sounds hz, and the (1,1) a tension
 * sounds (between measured points by interpolation of log tension in log
 * frequency; beyond them along the end segment; the first-order formula when
 * the drum has no points). */
double kt_tuning_tension(const kt_tuning *t, const kt_performance *perf, int drum, double hz);
double kt_tuning_pitch(const kt_tuning *t, const kt_performance *perf, int drum,
                       double tension_N_per_m);

/* Where a pedal glide of drum `drum` is at u (0..1), from tension from_T to
 * to_T (to_hz: its pitch when asked as one, else 0): the pitch moves
 * linearly in cents along the drum's curve, so every instant is in tune;
 * with the formula's tuning the tension moves geometrically. */
double kt_tuning_glide(const kt_tuning *t, const kt_performance *perf, int drum, double from_T,
                       double to_T, double to_hz, double u);

/* What a drum sounds at a tension in the room, the other drums holding
 * their planned tunings: the (1,1) pair (along the room's x and y; apart
 * when walls or neighbours break the drum's symmetry), their centre, and
 * the next partials (2,1), (3,1), (4,1) (0 where none was found). */
typedef struct kt_tuning_sound {
    double hz;                      /* the (1,1): the geometric mean of the pair */
    double pair_hz[2];
    double partial_hz[3];
} kt_tuning_sound;
int kt_tuning_measure(const kt_performance *perf, const kt_room_params *room,
                      const kt_tuning *t, int drum, double tension_N_per_m, int nthreads,
                      kt_tuning_sound *out, kt_error *err);

/* Microphones where a drum's (1,1) mode, its pitch, is all but silent: on
 * or near the drum's axis (the mode is odd about it; its level goes as the
 * sine of the angle from the axis).  Fills up to max warnings (`warning`
 * set), each at the microphone's line or waypoint, and returns how many
 * there are. */
#define KT_TUNING_AXIS_WARN_DEG 6.0
int kt_tuning_mic_warnings(const kt_performance *perf, const kt_room_params *room,
                           kt_score_error *out, int max);

#endif
