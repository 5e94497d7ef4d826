/* kt_ranks.h - one room over several processes (MPI ranks, issue #7;
 * docs/room.md, "Slabs and ranks").  The room is cut into slabs of z-planes,
 * one per rank; halo planes travel every step, overlapped with the interior
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

/* The slab rank `rank` of `ranks` would hold: planes[0] .. planes[1]-1 and
 * the bytes of its fields (halo planes included). */
int kt_room_slab_plan(const kt_room_params *p, int ranks, int rank, int planes[2],
                      size_t *bytes, kt_error *err);

/* Collective over MPI_COMM_WORLD: every rank passes the same parameters and
 * gets its slab.  Refused on every rank, before allocating, when the ranks
 * sharing a machine would need more than it has available (or one rank more
 * than memory_limit_bytes), with the bytes needed and available. */
int kt_room_create_ranked(const kt_room_params *p, kt_room **out, kt_error *err);
int kt_room_rank(const kt_room *room);   /* 0 for a whole room */
int kt_room_ranks(const kt_room *room);  /* 1 for a whole room */
/* Collective: records the samples still waiting for a neighbour's plane and
 * gathers every microphone's signal on rank 0 (other ranks keep their part).
 * Call after the last step, before reading or writing the signals; a
 * no-op for a whole room.  Steps may follow. */
int kt_room_collect(kt_room *room, kt_error *err);

#endif
