/* kt_checkpoint.h - nothing lost, nothing crashes (issue #9): checkpoints of a
 * render and their resumption, the render's stability checks, and its limits.
 *
 * A checkpoint is the performance's source texts, the render options and
 * output path, the step index, and the raw state: the room's fields and
 * microphone signals so far, every drum's membrane and window buffers, and
 * each drum's pedal progress.  Resuming parses the texts again, builds the
 * room and drums exactly as the first render did, then overwrites their
 * state, so the final audio is byte-identical to an uninterrupted render.
 * The file (docs/render.md, "Checkpoints") has a versioned header with a
 * magic, an endianness mark and an FNV-1a checksum over everything; it is
 * written to a temporary, fsynced and renamed.
 *
 * State I/O goes through kt_state_io, which the room (engine/room_state.c)
 * and the drum (instruments/timpani_state.c) use to save and load themselves. */
#ifndef KT_CHECKPOINT_H
#define KT_CHECKPOINT_H

#include "kt_score.h"

#include <stdint.h>
#include <stdio.h>

/* ---- a checksummed byte stream (engine/checkpoint.c) ---- */

typedef struct kt_state_io {
    FILE *f;
    uint64_t hash;                 /* FNV-1a 64 of every byte put or got so far */
    uint64_t bytes;
    uint64_t limit;                /* reading: at most this many bytes (0: no limit) */
} kt_state_io;

int kt_state_put(kt_state_io *io, const void *data, size_t bytes, kt_error *err);
/* Fails with KT_EIO "the checkpoint is truncated" at the end of the file or
 * of the limit. */
int kt_state_get(kt_state_io *io, void *data, size_t bytes, kt_error *err);
/* Can `count` items of `size` bytes still be read: count >= 0, no overflow,
 * within the limit?  A checkpoint's counts are checked with it before any
 * memory is sized by them (a checksum stops accidents, not forgeries). */
int kt_state_fits(const kt_state_io *io, int64_t count, size_t size);
/* A 4-character section tag, written and checked on reading. */
int kt_state_put_tag(kt_state_io *io, const char tag[4], kt_error *err);
int kt_state_expect_tag(kt_state_io *io, const char tag[4], kt_error *err);

/* ---- the room's state (engine/room_state.c) ---- */

/* Bytes kt_room_save_state writes: both field buffers and the microphone signals. */
size_t kt_room_state_bytes(const kt_room *room);
/* Step index, Psi^n and Psi^{n-1} (padded, in the room's precision) and every
 * microphone's samples so far. */
int kt_room_save_state(const kt_room *room, kt_state_io *io, kt_error *err);
/* Into a room built from the same parameters with the same microphones;
 * anything else is refused with a message. */
int kt_room_load_state(kt_room *room, kt_state_io *io, kt_error *err);
/* Keep only the first `samples` samples of every microphone. */
void kt_room_truncate_mics(kt_room *room, int64_t samples);

/* Largest |Psi^n| over the room, and the first node holding a NaN or an
 * infinity (scan order z, y, x).  *bad is 0 (all finite), 1 (infinity) or
 * 2 (NaN); node[] is that node, or the largest one when all are finite. */
typedef struct kt_field_scan {
    double max_abs;
    int bad;
    int node[3];
} kt_field_scan;
void kt_room_scan_field(const kt_room *room, kt_field_scan *scan);

/* ---- a drum's state (instruments/timpani_state.c) ---- */

size_t kt_timpani_state_bytes(const kt_timpani *t);
/* Steps, tension, damping, u^n, u^{n-1}, a^n, I23 u^n, I23 u^{n-1}, the two
 * window buffers D^n, D^{n-1}, and the strike count (as a check). */
int kt_timpani_save_state(const kt_timpani *t, kt_state_io *io, kt_error *err);
/* Into a drum created from the same parameters in the same room. */
int kt_timpani_load_state(kt_timpani *t, kt_state_io *io, kt_error *err);
/* Largest |u^n| over the head; *bad as for kt_room_scan_field. */
double kt_timpani_scan(const kt_timpani *t, int *bad);
const char *kt_timpani_name(const kt_timpani *t);

/* ---- checkpoints (engine/checkpoint.c) ---- */

/* A drum's pedal progress in the renderer. */
typedef struct kt_checkpoint_drum {
    double tension_N_per_m;         /* what it has now */
    double glide_from_N_per_m;      /* tension when the current pedal began */
    int pedal;                      /* index of the active or next pedal, -1 none */
} kt_checkpoint_drum;

/* What a render hands the writer. */
typedef struct kt_checkpoint_source {
    const kt_performance *perf;
    const kt_render_options *opt;
    const char *out_path;
    int64_t total_steps;
    const kt_room *room;
    kt_timpani *const *drums;
    const kt_checkpoint_drum *pedals;
    int drum_count;
    int damp_next;                  /* damping changes (p8) applied so far */
} kt_checkpoint_source;

/* Write a checkpoint atomically: PATH.tmp-PID-XXXXXX, fsync, rename, fsync of the folder. */
int kt_checkpoint_write(const char *path, const kt_checkpoint_source *src, kt_error *err);

/* Before a render: a checkpoint can be written at path (kt_file_check_writable),
 * and whatever is there already is a Kettle checkpoint, since Kettle
 * overwrites only its own files (KT_EINVAL otherwise). */
int kt_checkpoint_check_path(const char *path, kt_error *err);

typedef struct kt_checkpoint kt_checkpoint;

/* Open and verify (magic, version, byte order, checksum, length); a corrupt or
 * truncated file is refused with a message naming what is wrong. */
int kt_checkpoint_open(const char *path, kt_checkpoint **out, kt_error *err);
void kt_checkpoint_close(kt_checkpoint *ck);
/* Parse the stored source texts again into perf (kt_performance_init first). */
int kt_checkpoint_performance(const kt_checkpoint *ck, kt_performance *perf, kt_score_error *err);
/* The render options as they were (pointers into ck, valid while it is open);
 * progress, stop and user are cleared, resume is set to ck. */
void kt_checkpoint_options(const kt_checkpoint *ck, kt_render_options *opt);
const char *kt_checkpoint_output(const kt_checkpoint *ck);
/* The working folder of the first render (relative paths are relative to it). */
const char *kt_checkpoint_folder(const kt_checkpoint *ck);
int64_t kt_checkpoint_step(const kt_checkpoint *ck);
int64_t kt_checkpoint_total_steps(const kt_checkpoint *ck);
/* Overwrite the state of a freshly built room and drums; pedals gets each
 * drum's progress, *damp_next the damping changes applied so far. */
int kt_checkpoint_restore(const kt_checkpoint *ck, kt_room *room, kt_timpani *const *drums,
                          kt_checkpoint_drum *pedals, int drum_count, int *damp_next,
                          kt_error *err);

/* "dir/take.wav" -> "dir/take.partial.wav": where a stopped or failed render
 * leaves the audio it has (never over the real output). */
void kt_render_partial_path(const char *out_path, char *buf, size_t size);

/* ---- the render's guard (engine/render_guard.c) ---- */

/* Steps a render can count at all: times n k and sample counts stay exact. */
#define KT_RENDER_MAX_STEPS 9007199254740992.0   /* 2^53 */
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
/* MemAvailable from /proc/meminfo in bytes, 0 when unknown (engine/room.c). */
size_t kt_memory_available_bytes(void);
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
 * checkpoint (a GPU render sets it; NULL on the CPU). */
typedef int (*kt_guard_sync_fn)(void *user, kt_error *err);

int kt_guard_create(kt_render_guard **out, const kt_performance *perf,
                    const kt_render_options *opt, const char *out_path, int64_t total_steps,
                    kt_room *room, kt_timpani *const *drums, kt_guard_export_fn export_pedals,
                    void *user);
void kt_guard_set_sync(kt_render_guard *g, kt_guard_sync_fn sync, void *user);
void kt_guard_destroy(kt_render_guard *g);
/* After step `done` (steps taken so far): the stability check every few
 * hundred steps, a checkpoint when one is due, and the stop request.
 * Returns KT_OK, or fills err: KT_EUNSTABLE (message: time, drum or region,
 * likely cause), KT_EINTR (stopped; a checkpoint was written). */
int kt_guard_after_step(kt_render_guard *g, int64_t done, kt_score_error *err);
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
