/* room_block_gpu.h - the device room's temporally blocked pass
 * (room/gpu/room_block.cu): D steps of the air per pass through memory,
 * for the room's bulk run (kt_cuda_room_run) and the device mirror
 * (room/gpu/room_step.cu), which hands it its sources and microphones. */
#ifndef ROOM_BLOCK_GPU_H
#define ROOM_BLOCK_GPU_H

#include "room_gpu.h"
#include "room_ranks_gpu.h"

/* The per-step work a pass serves at every level (stage C and E of the
 * mirror): its device arrays and state.  NULL hooks: the air alone. */
typedef struct room_gpu_hooks {
    long long *n;               /* device: steps taken before the pass (+= D after it, by
                                   block_mics or, handing a band over, its steps) */
    int *slot;                  /* device: the microphone slot of level 1 (+= D) */
    int src_count;
    const int4 *src_xyz;        /* each source's node (x, y, z) */
    const long long *src_first, *src_start, *src_len;
    const double *src_samples;
    int mic_count;
    const mic_tap *taps;        /* [mic][MIRROR_BLOCK], by slot where moving */
    const int *moving;
    double *out;                /* [mic][MIRROR_BLOCK] samples */
    double *diff;               /* [D][mic][8] corner differences of a pass */
    double scale;               /* rho / k */
} room_gpu_hooks;

/* The hand-over (docs/gpu.md, "Temporal blocking"): a pass leaves the
 * planes lo .. hi of R->band to its caller, which steps them level by level
 * as one ordinary step each (the instruments' stages with them): step(ctx,
 * level, z_lo, z_hi) on R->now (level - 1) and R->prev = R->next (level -
 * 2, written with level), planes z_lo .. z_hi, the band widened by level -
 * 1 planes each side. */
typedef int (*room_gpu_band_fn)(void *ctx, int level, int z_lo, int z_hi, kt_error *err);
typedef struct room_gpu_band {
    room_gpu_band_fn step;
    void *ctx;
} room_gpu_band;

/* Why R's air cannot be blocked, or NULL. */
const char *room_gpu_block_obstacle(const kt_cuda_room *R);
/* The timed candidates from what was asked (kt_cuda_room_create). */
void room_gpu_block_init(kt_cuda_room *R);
/* The other pair of buffers a pass writes, allocated (and filled with
 * copies of the fields) if need be: before a graph captures passes. */
int room_gpu_block_prepare(kt_cuda_room *R, kt_error *err);
/* One pass of `depth` steps with extended tile `tile` (0 .. ROOM_GPU_TILES-1)
 * on `stream`, handing R->band over to `band` (NULL: none): the fields
 * change buffers and R->n moves on by depth. */
int room_gpu_block_pass(kt_cuda_room *R, int depth, int tile, const room_gpu_hooks *hooks,
                        const room_gpu_band *band, cudaStream_t stream, kt_error *err);
/* One step of the caller's (the one-step sweep and what goes with it). */
typedef int (*room_gpu_step_fn)(void *ctx, kt_error *err);
/* The next steps, at most `avail`: a blocked pass at the chosen depth, a
 * timed candidate while the choice is being made, or one step of `step`
 * where the room cannot be blocked.  Returns the steps taken (< 0: error). */
int room_gpu_block_advance(kt_cuda_room *R, int avail, const room_gpu_hooks *hooks,
                           const room_gpu_band *band, cudaStream_t stream, room_gpu_step_fn step,
                           void *ctx, kt_error *err);

#endif
