/* kt_checkpoint.h - nothing lost, nothing crashes (issue #9): checkpoints of a
 * render and their resumption (perform/checkpoint.c).
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
 * A room split over ranks (MPI, or GPUs under --gpus) is checkpointed in
 * parts, one file per rank: PATH is rank 0's, PATH.rankK rank K's, each
 * with the same header and texts, its slab of the room, its part of the
 * signals and its drums' state.  Every rank writes its temporary before any
 * renames, and a resume needs the same number of ranks, each opening its
 * part, all at the same step. */
#ifndef KT_CHECKPOINT_H
#define KT_CHECKPOINT_H

#include "kt_render.h"
#include "kt_room_state.h"
#include "kt_timpani_state.h"

#include <stdint.h>
#include <stdio.h>

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

/* Most ranks a checkpoint may name (a bound for damaged files). */
#define KT_CHECKPOINT_MAX_RANKS 65536
/* The file of rank `rank`'s part: path itself for rank 0, else path.rankK. */
void kt_checkpoint_part_path(const char *path, int rank, char *buf, size_t size);

/* Write a checkpoint atomically: PATH.tmp-PID-XXXXXX, fsync, rename, fsync of
 * the folder.  Over ranks, collective: each writes its part (the room's
 * kt_room_flush first, so no sample waits for a neighbour's plane). */
int kt_checkpoint_write(const char *path, const kt_checkpoint_source *src, kt_error *err);

/* Before a render: a checkpoint can be written at path (kt_file_check_writable),
 * and whatever is there already is a Kettle checkpoint, since Kettle
 * overwrites only its own files (KT_EINVAL otherwise). */
int kt_checkpoint_check_path(const char *path, kt_error *err);

typedef struct kt_checkpoint kt_checkpoint;

/* Open and verify (magic, version, byte order, checksum, length); a corrupt or
 * truncated file is refused with a message naming what is wrong.  This
 * process's part (kt_mpi_rank of kt_mpi_size); a checkpoint written over
 * another number of ranks is refused with the command that resumes it. */
int kt_checkpoint_open(const char *path, kt_checkpoint **out, kt_error *err);
/* The same for rank `rank` of `ranks`. */
int kt_checkpoint_open_part(const char *path, int rank, int ranks, kt_checkpoint **out,
                            kt_error *err);
int kt_checkpoint_ranks(const kt_checkpoint *ck);
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

#endif
