/* tuning_internal.h - what the tuner's files share (perform/tuning.c plans,
 * tuning_run.c measures, tuning_curve.c reads a drum's curve,
 * tuning_cache.c remembers, tuning_mics.c warns) and nothing else. */
#ifndef TUNING_INTERNAL_H
#define TUNING_INTERNAL_H

#include "kt_tuning.h"

#include <stdint.h>

/* The system a run builds: the render's room with every drum of the
 * performance, each on its planned membrane grid, the others holding the
 * tensions given here. */
typedef struct tuning_setup {
    const kt_performance *perf;
    const kt_room_params *room;
    const int *intervals;           /* per drum */
    const double *tensions;         /* per drum */
    int nthreads;
} tuning_setup;

/* The drums in an order that does not depend on the orchestra's (by the
 * centre of the head: x, then y, then z), so that the set sounds the same
 * however it is written down: the tuner calibrates in this order and the
 * cache keys list the drums in it.  order has drum_count entries. */
void tuning_drum_order(const kt_performance *perf, int *order);

/* Strike `drum` at tension_N_per_m softly and measure its (1,1) pair (and
 * with `partials` its (2,1)..(4,1)) after the attack; expect_hz says where
 * to look for the (1,1) (within a factor 1.4). */
int tuning_run(const tuning_setup *s, int drum, double tension_N_per_m, double expect_hz,
               int partials, kt_tuning_sound *out, kt_error *err);

/* The curve (tuning_curve.c): log tension against log frequency through
 * the points, `slope` (d ln T / d ln f) where they give none; and the
 * first-order formula for drum d. */
#define TUNING_SLOPE_MIN 1.2  /* slopes are clamped to this (2 at a fixed head) */
#define TUNING_SLOPE_MAX 3.2
double tuning_curve_tension(const kt_tuning_point *p, int n, double hz, double slope);
double tuning_curve_pitch(const kt_tuning_point *p, int n, double tension, double slope);
double tuning_formula_tension(const kt_performance *perf, int d, double hz);
double tuning_formula_pitch(const kt_performance *perf, int d, double tension);

/* The cache: the key names everything the (1,1) of `drum` depends on but
 * its own tension (the room, its grid, every drum's make and place and
 * membrane grid, the build and the measurement); points are its curve. */
int tuning_cache_key(const tuning_setup *s, int drum, char **text, uint64_t *hash);
/* asked NULL: the default folder; "": none (dir set to ""). */
void tuning_cache_dir(const char *asked, char *dir, size_t size);
/* Points stored under the key (none when there is no file or it is not
 * this key's or not well formed). */
int tuning_cache_load(const char *dir, const char *key, uint64_t hash, kt_tuning_point **pts,
                      int *count);
int tuning_cache_save(const char *dir, const char *key, uint64_t hash,
                      const kt_tuning_point *pts, int count, kt_error *err);

#endif
