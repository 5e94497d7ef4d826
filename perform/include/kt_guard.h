/* kt_guard.h - the render's guard (perform/render_guard.c): its limits, the
 * memory estimate checked before anything is allocated, the stability checks
 * between steps, checkpoints when due, and the partial audio of a render
 * that stopped or failed. */
#ifndef KT_GUARD_H
#define KT_GUARD_H

#include "kt_checkpoint.h"

/* Limits a render refuses unless opt->override_limits is set. */
#define KT_LIMIT_DURATION_S 3600.0
#define KT_LIMIT_DRUMS 64
#define KT_LIMIT_SAMPLE_RATE_HZ 384000.0
/* Steps between stability checks by default. */
#define KT_GUARD_CHECK_STEPS 256

/* Drum count and sample rate against the limits, and the memory
 * estimate (room fields, microphone signals, drums) against the memory
 * available (or rp->memory_limit_bytes), before anything is allocated. */
int kt_render_check_limits(const kt_performance *perf, const kt_room_params *rp,
                           const kt_render_options *opt, int64_t total_steps,
                           kt_score_error *err);
/* Bytes the render would hold, by part. */
typedef struct kt_render_memory {
    double room_bytes, mic_bytes, drum_bytes, total_bytes;
} kt_render_memory;
void kt_render_memory_estimate(const kt_performance *perf, const kt_room_params *rp,
                               int64_t total_steps, kt_render_memory *m);

typedef struct kt_render_guard kt_render_guard;
/* Pedal progress of every drum and the damping changes applied, from the
 * renderer, for a checkpoint. */
typedef void (*kt_guard_export_fn)(void *user, kt_checkpoint_drum *out, int *damp_next);
/* Device hook: copy the fields back to the host before a check or a
 * checkpoint (a GPU render sets it; NULL on the CPU).  stride_steps: the
 * steps between the caller's calls of kt_guard_after_step, so that checks
 * spaced out for their cost still fall on them. */
typedef int (*kt_guard_sync_fn)(void *user, kt_error *err);

int kt_guard_create(kt_render_guard **out, const kt_performance *perf,
                    const kt_render_options *opt, const char *out_path, int64_t total_steps,
                    kt_room *room, kt_timpani *const *drums, kt_guard_export_fn export_pedals,
                    void *user);
void kt_guard_set_sync(kt_render_guard *g, kt_guard_sync_fn sync, void *user,
                       int64_t stride_steps);
void kt_guard_destroy(kt_render_guard *g);
/* After step `done` (steps taken so far): the stability check every few
 * hundred steps (fewer where a check costs over 2 % of the stepping and
 * 0.1 s), a checkpoint when one is due, and the stop request.
 * Returns KT_OK, or fills err: KT_EUNSTABLE (message: time, drum or region,
 * likely cause), KT_EINTR (stopped; a checkpoint was written). */
int kt_guard_after_step(kt_render_guard *g, int64_t done, kt_score_error *err);
/* The first step after `done` whose kt_guard_after_step checks the field
 * (INT64_MAX: none): a render's blocked pass of several steps ends there. */
int64_t kt_guard_next_check(const kt_render_guard *g, int64_t done);
/* A step failed with KT_EUNSTABLE (a drum's own check): the same message. */
int kt_guard_unstable(kt_render_guard *g, int64_t done, const char *what, kt_score_error *err);
/* The output could not be written at the end: kt_guard_finish keeps the audio. */
void kt_guard_output_failed(kt_render_guard *g);
/* After the run: when it stopped, blew up or could not write its output,
 * write the audio so far to the partial path, or where that fails beside the
 * checkpoint, in the working folder or in $TMPDIR (/tmp): res->partial_path
 * names it.  Returns rc unchanged. */
int kt_guard_finish(kt_render_guard *g, int rc, kt_render_result *res);

#endif
