/* room_ranks.h - what the rest of room/ (the GPU mirror's .cu files among
 * them, which include no *_internal.h) needs of a room split over ranks
 * (room_slab.c; docs/room.md, "Slabs and ranks"): who records a microphone
 * and who steps an instrument, by the same rules on the CPU and the GPU,
 * and the GPU job's side of the CPU room (room_nccl.c).  Private to room/. */
#ifndef ROOM_RANKS_H
#define ROOM_RANKS_H

#ifdef __cplusplus
extern "C" {
#endif

#include "kettle.h"
#include "kt_ranks.h"

#include <stddef.h>

/* A microphone at pos is recorded by the owner of its trilinear cell's
 * lower plane: now, or, when the cell's upper plane (with a non-zero
 * weight) is the next rank's, one step later, once the halo has brought
 * that plane.  On a whole room every sample is ROOM_MIC_NOW. */
enum { ROOM_MIC_ELSEWHERE = 0, ROOM_MIC_NOW = 1, ROOM_MIC_LATER = 2 };
int room_slab_mic_role(const kt_room *room, const double pos[3]);
/* The rank that steps instrument k of the room (the owner of its box's top
 * plane) and whether it borrows the rank below's top plane (its box reaches
 * under that rank's slab): *borrow = 1 then, and the rank below lends it. */
int room_slab_runner_of(const kt_room *room, int k, int *borrow);

/* The GPU job's side of the CPU room (room_nccl.c; builds without NCCL
 * refuse or do nothing): kt_room_create_ranked's slab with the job's
 * transport; one number reduced over the job's ranks (op ROOM_REDUCE_*;
 * *out = v outside a job); the job's communicator ended after a failure. */
enum { ROOM_REDUCE_MAX = 0, ROOM_REDUCE_MIN = 1, ROOM_REDUCE_SUM = 2 };
int room_gpu_job_create_slab(const kt_room_params *p, const kt_split_options *so, kt_room **out,
                             kt_error *err);
int room_gpu_job_reduce(double v, int op, double *out, kt_error *err);
/* The same for n numbers at once, in place. */
int room_gpu_job_reduce_array(double *v, size_t n, int op, kt_error *err);
void room_gpu_job_abort(void);
/* The job's NCCL communicator (an ncclComm_t), NULL outside a GPU job. */
void *room_gpu_job_comm(void);
/* MPI (room_mpi.c): rank 0's `bytes` at buf to every rank; -1 on every rank
 * when rank 0 says it failed (bad != 0 there) or MPI does. */
int room_mpi_share(void *buf, size_t bytes, int bad);

#ifdef __cplusplus
}
#endif

#endif
