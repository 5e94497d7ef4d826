/* room_ranks_gpu.h - a room split over GPU ranks (room/gpu/room_ranks.cu,
 * room/room_nccl.c): what the device mirror of room_step.cu calls when its CPU
 * room is a slab (room/room_slab.h).  The rules of who owns what are the
 * CPU's (room_slab_runner, room_slab_mic_role); only the transport differs:
 * NCCL on the device, its halos on a stream of their own. */
#ifndef ROOM_RANKS_GPU_H
#define ROOM_RANKS_GPU_H

#include "room_gpu.h"
#include "room_ranks.h"
#include "kt_config.h"

#include <cuda_runtime.h>

/* Microphone samples gathered on the device before one copy back. */
#define MIRROR_BLOCK KT_CUDA_MIRROR_BLOCK

/* One microphone at one step: the device index of its cell's lower corner
 * and the eight trilinear weights in the CPU's corner order; base < 0: no
 * sample here. */
typedef struct mic_tap {
    long long base;
    double w[8];
} mic_tap;

/* sum over the tap's corners of w (newer - older), in the CPU's corner order
 * (room/room_mics.c); newer - older is Psi^{n+1} - Psi^n, times rho/k the
 * pressure.  Every product and sum rounded as the CPU's. */
template <typename REAL>
__device__ __forceinline__ double tap_difference(const mic_tap *t, const REAL *newer,
                                                 const REAL *older, long long py, long long pz)
{
    double v = 0;
    for (int c = 0; c < 8; c++) {
        const double w = t->w[c];
        if (w == 0)
            continue;
        const long long i = t->base + (c & 1) + ((c >> 1) & 1) * py + (c >> 2) * pz;
        v = __dadd_rn(v, __dmul_rn(w, __dsub_rn((double)newer[i], (double)older[i])));
    }
    return v;
}

typedef struct mirror_ranks mirror_ranks;

/* For the mirror of a slab room: the halo stream and events, the windows
 * the drums straddling a boundary borrow, the microphone samples that wait
 * for a plane; then one exchange of both fields' halos (after an upload
 * the halos must hold the neighbours' planes: a resumed room's do not). */
int room_ranks_create(kt_room *room, kt_cuda_room *R, cudaStream_t stream, mirror_ranks **out,
                      kt_error *err);
void room_ranks_free(mirror_ranks *K);
/* 1 when this rank steps instrument k of the room (its GPU form lives here). */
int room_ranks_runs(const mirror_ranks *K, int k);
/* After a device instrument was made: KT_EINVAL when it reached for an air
 * layer the slab does not hold (more than one plane below it). */
int room_ranks_check_reach(kt_cuda_room *R, const kt_instrument *ins, kt_error *err);

/* Stage A of a slab: post the halo exchange of Psi^n on the halo stream,
 * sweep the interior planes, wait for the halos, record the samples that
 * waited for them (microphone arrays of the mirror: out[mic][slot], taps by
 * slot for moving microphones), sweep the two end planes. */
typedef struct ranks_mics {
    const int *slot;          /* device: the slot of the step being taken */
    double *out;
    const int *moving;        /* device */
    int count;
    double scale;
} ranks_mics;
void room_ranks_sweep(mirror_ranks *K, kt_cuda_room *R, cudaStream_t stream,
                      const ranks_mics *mics);
/* Stage D around the drums: the windows lent to the rank above travel out
 * (before), and come back corrected (after). */
void room_ranks_lend(mirror_ranks *K, kt_cuda_room *R, cudaStream_t stream);
void room_ranks_return(mirror_ranks *K, kt_cuda_room *R, cudaStream_t stream);
/* A block's end: the halos of Psi^n once more and the last step's waiting
 * samples, so the block's samples are complete when they go home. */
int room_ranks_collect(mirror_ranks *K, kt_cuda_room *R, cudaStream_t stream,
                       const ranks_mics *mics, kt_error *err);

/* Microphone m's tap for slot s at pos, as this rank takes it: *t as made,
 * zeroed (another rank's sample, or one that waits); a waiting one goes to
 * the rank's own taps.  upload sends slots 0 .. len-1 of mic m's. */
void room_ranks_tap(mirror_ranks *K, const kt_room *room, int m, int s, const double pos[3],
                    mic_tap *t);
int room_ranks_upload_taps(mirror_ranks *K, int m, int len, cudaStream_t stream,
                           kt_error *err);

#endif
