/* kt_ranks.h - one room over several processes (MPI ranks, issue #7;
 * docs/room.md, "Slabs and ranks").  The room is cut into slabs along one
 * axis, one per rank; halo layers travel every step, overlapped with the interior
 * update, and the microphones are gathered on rank 0 at the end.  The result
 * is bit-identical to the same room on one process.
 *
 * Built with MPI (CMake KETTLE_MPI), the kt_mpi_* calls wrap MPI_COMM_WORLD;
 * without it they report one rank and kt_mpi_init refuses with a message.
 * kt_room_create_ranked is kt_room_create when MPI is not running or has one
 * rank, so a program can call it unconditionally. */
#ifndef KT_RANKS_H
#define KT_RANKS_H

#include "kettle.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The job's ranks: MPI's (mpirun), or those `kettle render --gpus N`
 * started on one host (kt_gpu_job_*, below), whichever this process is
 * part of; a lone process is rank 0 of 1. */
int kt_mpi_compiled(void);           /* 1 when built with MPI */
int kt_mpi_launched(void);           /* 1 when started by mpirun (its environment says so) */
int kt_mpi_init(int *argc, char ***argv, kt_error *err);
void kt_mpi_finalize(void);
int kt_mpi_rank(void);               /* 0 when MPI is not running */
int kt_mpi_size(void);               /* 1 when MPI is not running */
void kt_mpi_abort(int code);         /* ends every rank (a failure on one rank) */
void kt_mpi_barrier(void);
double kt_mpi_max(double v);         /* largest v over the ranks */
double kt_mpi_min(double v);
/* Every rank's v[0..n-1] added element by element, the sums on every rank
 * (in place; nothing to do on one rank).  A number only one rank holds,
 * the others passing 0, arrives exactly: how the ranks' parts of a room's
 * energy and of a snapshot's plane meet. */
int kt_mpi_sum(double *v, size_t n, kt_error *err);

/* ---- ranks on GPUs, one per device, over NCCL (room/gpu/room_nccl.cu) ----
 * `kettle render --gpus N` starts N processes of itself on one host, with
 * no MPI: the first makes an NCCL id (kt_gpu_job_new_id, text for the
 * environment) and each joins with its rank (kt_gpu_job_join: its GPU is
 * rank mod the devices, NVLink multicast off).  Under mpirun with --device
 * gpu, kt_gpu_job_ensure joins every MPI rank (the id travels by MPI).
 * Joining is process-wide, like MPI_Init: kt_mpi_rank/size, max, min,
 * barrier then speak for the GPU job, and kt_room_create_ranked splits the
 * room over it.  Builds without NCCL refuse with a message. */
int kt_gpu_job_compiled(void);       /* 1 when built with CUDA and NCCL */
#define KT_GPU_JOB_ID_CHARS 257      /* an NCCL id as hex text, with its NUL */
int kt_gpu_job_new_id(char id[KT_GPU_JOB_ID_CHARS], kt_error *err);
int kt_gpu_job_join(int rank, int ranks, const char *id, kt_error *err);
int kt_gpu_job_ensure(kt_error *err);
int kt_gpu_job_rank(void);           /* 0 outside a GPU job */
int kt_gpu_job_size(void);           /* 0 outside a GPU job */
int kt_gpu_job_device(void);         /* this rank's CUDA device, -1 outside a job */
void kt_gpu_job_leave(void);

/* Which axis a room is cut along.  Along z, the fields' outermost axis, a
 * halo is one contiguous plane and a drum may straddle a cut (the rank
 * below lends its window); along x or y the halo is packed, and the cuts
 * are placed (within a quarter of a slab of the balanced position) where
 * no instrument's box crosses them.  KT_SPLIT_AUTO takes the axis whose
 * halo costs least among those whose cuts can keep clear of every box
 * given in `keep` (z always can): its layer's bytes, a layer across x
 * counted at a 32-byte sector a node (one node of every row, strided). */
typedef enum { KT_SPLIT_AUTO = -1, KT_SPLIT_X = 0, KT_SPLIT_Y = 1, KT_SPLIT_Z = 2 } kt_split_axis;
/* A region no cut along x or y may cross (metres; an instrument's extent),
 * named in the messages. */
typedef struct kt_room_keep {
    char name[64];
    double lo_m[3], hi_m[3];
} kt_room_keep;
typedef struct kt_split_options {
    kt_split_axis axis;
    const kt_room_keep *keep;
    int keep_count;
} kt_split_options;
void kt_split_options_default(kt_split_options *o);   /* auto, nothing kept clear */
/* "x", "y", "z" or "auto" into *axis; -1 for anything else. */
int kt_split_axis_parse(const char *text, kt_split_axis *axis);

/* How a room splits over `ranks` (GPUs or processes) with these options
 * (NULL: the defaults): the axis chosen, the thinnest and thickest slab
 * (layers along that axis), the largest slab's fields' bytes on the host
 * and on a GPU (rows padded to whole 128-byte lines), the bytes of one halo
 * layer of one field, and the axis across which a layer is smallest, with
 * its layer's bytes.  A requested axis that cannot be cut clear of a kept
 * region is refused with a message naming it. */
typedef struct kt_room_split {
    int ranks, axis;                 /* axis 0, 1, 2 = x, y, z */
    int planes_min, planes_max;
    size_t host_bytes_max, device_bytes_max;
    size_t halo_bytes;
    int best_axis;
    size_t best_halo_bytes;
} kt_room_split;
int kt_room_split_plan(const kt_room_params *p, int ranks, const kt_split_options *so,
                       kt_room_split *out, kt_error *err);
/* The box rank `rank` would hold (nodes lo .. hi-1) and its fields' bytes
 * (halo layers included). */
int kt_room_split_part(const kt_room_params *p, int ranks, const kt_split_options *so, int rank,
                       int lo[3], int hi[3], size_t *bytes, kt_error *err);

/* The slab rank `rank` of `ranks` would hold along z: planes[0] ..
 * planes[1]-1 and the bytes of its fields (halo planes included). */
int kt_room_slab_plan(const kt_room_params *p, int ranks, int rank, int planes[2],
                      size_t *bytes, kt_error *err);

/* Collective over MPI_COMM_WORLD: every rank passes the same parameters and
 * gets its slab.  Refused on every rank, before allocating, when the ranks
 * sharing a machine would need more than it has available (or one rank more
 * than memory_limit_bytes), with the bytes needed and available. */
int kt_room_create_ranked(const kt_room_params *p, kt_room **out, kt_error *err);
/* The same, split as the options say (NULL: the defaults);
 * kt_room_create_ranked splits along z, where instruments may lie anywhere. */
int kt_room_create_split(const kt_room_params *p, const kt_split_options *so, kt_room **out,
                         kt_error *err);
int kt_room_rank(const kt_room *room);   /* 0 for a whole room */
int kt_room_ranks(const kt_room *room);  /* 1 for a whole room */
int kt_room_split_axis(const kt_room *room);  /* 0, 1, 2: x, y, z (z for a whole room) */
/* Collective: records the samples still waiting for a neighbour's plane and
 * gathers every microphone's signal on rank 0 (other ranks keep their part).
 * Call after the last step, before reading or writing the signals; a
 * no-op for a whole room.  Steps may follow. */
int kt_room_collect(kt_room *room, kt_error *err);
/* Collective: records the samples still waiting for a neighbour's plane,
 * so that every rank's signals are complete up to the step (a no-op for a
 * whole room).  Before a checkpoint; steps may follow. */
int kt_room_flush(kt_room *room, kt_error *err);
/* 1 when this rank steps the instrument whose self is `self` (every
 * registered instrument of a whole room), 0 otherwise: a drum's state and
 * energy are that rank's. */
int kt_room_runs_instrument(const kt_room *room, const void *self);

#ifdef __cplusplus
}
#endif

#endif
