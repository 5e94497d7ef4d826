/* kt_cuda_room.h - the room on the GPU (room/gpu/): its bulk update alone,
 * and the device mirror that runs whole steps of a CPU room there.  Only
 * declared when the build has CUDA (KETTLE_CUDA_ENABLED in kt_config.h). */
#ifndef KT_CUDA_ROOM_H
#define KT_CUDA_ROOM_H

#include "kt_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "kettle.h"

/* ---- the room's bulk update on the device (room/gpu/room_sweep.cu) ---- */
/* The room's fields on the device, in the room's precision, 2 grids
 * (Psi^{n+1} written over Psi^{n-1}) or 3 with viscosity, with the plan the
 * CPU room builds (room/room_plan.h).  Host arrays are in the CPU's padded
 * layout (for the 7-point scheme padded index ((z+1)*py + (y+1))*px + (x+1),
 * px = nx+2, py = ny+2); on the device each row is shifted so that x = 0
 * starts a 128-byte line (docs/gpu.md says why).  This is stage A of the
 * step alone; the whole step is kt_cuda_mirror below. */
typedef struct kt_cuda_room kt_cuda_room;
/* Grid and coefficients from the parameters, as kt_room_create would make
 * them; the fields start at zero. */
int kt_cuda_room_create(const kt_room_params *p, kt_cuda_room **out, kt_error *err);
void kt_cuda_room_free(kt_cuda_room *R);
const kt_room_grid *kt_cuda_room_grid(const kt_cuda_room *R);
size_t kt_cuda_room_padded_points(const kt_cuda_room *R); /* elements per field */
int kt_cuda_room_grids(const kt_cuda_room *R);            /* 2 or 3 */
/* Copy Psi^n and Psi^{n-1} in (upload) or out (download): host arrays of
 * kt_cuda_room_padded_points elements of the room's precision. */
int kt_cuda_room_upload(kt_cuda_room *R, const void *now, const void *prev, kt_error *err);
int kt_cuda_room_download(const kt_cuda_room *R, void *now, void *prev, kt_error *err);
/* With absorbing walls, the energy they exchanged with the air inside them
 * (room/room_abc.c's inflow and known part, joules; 0 otherwise): read, or
 * set (after an upload). */
int kt_cuda_room_wall_exchange(const kt_cuda_room *R, double *inflow_J, double *known_J,
                               kt_error *err);
int kt_cuda_room_set_wall_exchange(kt_cuda_room *R, double inflow_J, double known_J,
                                   kt_error *err);
/* `steps` bulk updates, rotating the fields as kt_room_step does.
 * Asynchronous: kt_cuda_sync() waits. */
int kt_cuda_room_run(kt_cuda_room *R, int steps, kt_error *err);
int64_t kt_cuda_room_step_index(const kt_cuda_room *R);
/* Temporal blocking (room/gpu/room_block.cu, docs/gpu.md): the air of a
 * 7-point room with two grids and rigid or lossy walls advances `depth`
 * steps per pass through memory, with the bits of one step at a time.
 * depth 0: timed over the first passes of kt_cuda_room_run (one step at a
 * time and depths 2..4, each extended tile), 1: off, 2..4: that depth;
 * tile 0: timed, 1..4: extended tiles (the halo of `depth` columns each
 * side included) of 32 x 32 columns on 32 x 8 threads, 32 x 32 on 32 x 16,
 * 32 x 64 on 32 x 16, 32 x 32 on 32 x 32.  A depth of 2
 * or more is refused (KT_EINVAL, with the reason) for a room that keeps
 * the one-step sweep: other schemes, viscosity, absorbing walls, solids,
 * instruments, a room split over GPUs.  A blocked room holds two more
 * fields on the device. */
int kt_cuda_room_set_blocking(kt_cuda_room *R, int depth, int tile, kt_error *err);
/* "off", the depth and tile chosen ("depth 3, tiles of ..."), or NULL while
 * they are being timed. */
const char *kt_cuda_room_blocking(const kt_cuda_room *R);
/* The stencil schemes (IWB, the seed-000 families) run on the device too
 * (room/gpu/room_stencil.cu, room/room_stencil.c's mirror ghosts and sweep):
 * IWB by a hand-written kernel, any stencil by the generic one (offsets and
 * weights in constant memory), FCC on its half-row layout by its own kernel
 * (room/gpu/room_fcc.cu).  Rigid walls only for these (lossy walls, viscosity
 * and Engquist-Majda walls are refused: KT_ENOTSUP).  The generic kernel
 * comes in two forms: compiled for the offset lists of its catalogue
 * (room/gpu/room_stencil_ring.cu: IWB, compact reach 1-4, leggy M = 1-4, each
 * value loaded once per column) and the runtime-list form for any other
 * list (room/gpu/room_stencil.cu).  KT_CUDA_KERNEL_GENERIC makes the generic
 * kernel run a stencil that has its own (to compare the two; refused for
 * FCC), KT_CUDA_KERNEL_GENERIC_LIST the runtime-list form whatever the
 * list; the 7-point scheme keeps its kernel whatever is asked. */
typedef enum kt_cuda_kernel {
    KT_CUDA_KERNEL_AUTO = 0,        /* the hand-written kernel where there is one */
    KT_CUDA_KERNEL_GENERIC = 1,     /* the generic stencil kernel */
    KT_CUDA_KERNEL_GENERIC_LIST = 2 /* its runtime-list form */
} kt_cuda_kernel;
int kt_cuda_room_set_kernel(kt_cuda_room *R, kt_cuda_kernel kernel, kt_error *err);
/* The kernel a step runs now: "7-point", "iwb", "fcc", "generic" (the
 * compiled form) or "generic-list". */
const char *kt_cuda_room_kernel_name(const kt_cuda_room *R);

/* ---- the whole room step on the device (room/gpu/room_step.cu) ---- */
/* A device mirror of a CPU room: its fields, its instruments' boundary lists
 * (stage B), its sources (C) and its microphones (E) move to the GPU, and
 * kt_cuda_mirror_run steps there with no host round trip per step: the step
 * index lives on the device, microphone samples gather in a device buffer
 * and are appended to the CPU room's microphone signals a block of steps at
 * a time (so kt_room_mic_signal and kt_room_write_audio work unchanged), and
 * whole batches of steps are replayed as one CUDA graph.  The CPU room keeps
 * its step index in line with the device; its fields are stale until
 * kt_cuda_mirror_download.  Sources, microphones and instruments must all be
 * in the room before the mirror is made (strikes too); a drum's tension or
 * damping may change later through kt_cuda_mirror_update_drums.  A Kettle timpani
 * runs its stage D on the device, by its format: matrix-free as one fused
 * kernel (instruments/gpu/timpani_fused.cu: matrix-free RHS, reduced-space Jacobi of
 * note 9.1, layer correction), CSR and DIA/ELL stage by stage with its own
 * stored matrices (instruments/gpu/timpani_stored.cu: cuSPARSE or Kettle's SpMV,
 * cuBLAS, Algorithm 18; CSC runs as CSR); its CPU state follows a block at
 * a time.  Another instrument with a process() stage is refused
 * (KT_ENOTSUP), as is the direct solve (and a tolerance where the path's
 * stopping test would differ from the CPU's).
 * The air alone agrees with kt_room_step bit for bit in both precisions; with
 * a drum, to rounding (the membrane's sums run in another order). */
typedef struct kt_cuda_mirror kt_cuda_mirror;
/* Microphone samples gathered on the device before one copy back (a
 * multiple of every batch length the mirror chooses: ~65 ms at 44.1 kHz). */
#define KT_CUDA_MIRROR_BLOCK 2880
int kt_cuda_mirror_create(kt_room *room, kt_cuda_mirror **out, kt_error *err);
void kt_cuda_mirror_free(kt_cuda_mirror *M);
/* `steps` full room steps; returns after the last block's samples are on the host.
 * KT_EUNSTABLE when a drum blew up: the CPU room's step index then says at
 * which step (the microphones hold the whole block; the mirror is spent). */
int kt_cuda_mirror_run(kt_cuda_mirror *M, int64_t steps, kt_error *err);
/* Psi^n and Psi^{n-1} back into the CPU room (then kt_room_step may go on). */
int kt_cuda_mirror_download(kt_cuda_mirror *M, kt_error *err);
/* After kt_timpani_set_tension or kt_timpani_set_damping on a mirrored
 * drum: every drum's coefficients (cB0 .. cC1, cV1, mu_c, Bf, the strike
 * scale) and G's bands are read again from its CPU object, and the CUDA
 * graphs, which hold the old values, are dropped (re-captured at the next
 * whole batch).  The next kt_cuda_mirror_run steps with the new values. */
int kt_cuda_mirror_update_drums(kt_cuda_mirror *M, kt_error *err);
/* Temporal blocking of the mirror's air (kt_cuda_room_set_blocking's depth
 * and tile): a room of the 7-point scheme, two grids, rigid or lossy walls
 * and no solids runs its batches as blocked passes that add the sources'
 * samples and take the microphones' at every step inside the pass, and
 * hand its instruments' band of planes (less than half its height) to
 * their per-step work a level at a time (the same samples and fields, bit
 * for bit); by default timed
 * over the first steps.  Refused (KT_EINVAL, why) for another room;
 * kt_cuda_mirror_blocking says "off" there, or the choice (NULL while it
 * is being timed). */
int kt_cuda_mirror_set_blocking(kt_cuda_mirror *M, int depth, int tile, kt_error *err);
const char *kt_cuda_mirror_blocking(const kt_cuda_mirror *M);
/* Steps per CUDA graph (0 = launch every kernel one by one; default 96). */
int kt_cuda_mirror_set_batch(kt_cuda_mirror *M, int steps, kt_error *err);

/* Per-stage device time of the mirror's steps, from CUDA events between the
 * stages (thesis Tables 7.6 and 7.7).  Microseconds per step, averaged over
 * `steps`: the bulk sweep (A), the boundary lists and sources (B, C), the
 * drums (D), the microphones (E).  With drum_split, the first drum runs the
 * stage-by-stage path (a stored format) and rhs/solve/layer are its stages
 * 3, 4 and 6 (with any other drums in layer); without it (the fused
 * matrix-free kernel) only drum_us is meaningful and it sits in rhs_us. */
typedef struct kt_cuda_stage_times {
    long long steps;
    int drum_split;
    double sweep_us, list_us, drum_us, rhs_us, solve_us, layer_us, output_us;
} kt_cuda_stage_times;
/* on = 1: the following runs launch kernel by kernel (no graphs) with
 * events between the stages, and the sums start from zero; on = 0: back to
 * graphs.  Events cost a little: time whole runs without them. */
int kt_cuda_mirror_profile(kt_cuda_mirror *M, int on, kt_error *err);
int kt_cuda_mirror_stage_times(kt_cuda_mirror *M, kt_cuda_stage_times *out, kt_error *err);

/* Where a device instrument (kt_instrument_gpu) finds the air: the device
 * index of node (x, y, z) in a field, and the elements between rows. */
long long kt_cuda_room_node(const kt_cuda_room *R, int x, int y, int z);
size_t kt_cuda_room_pitch(const kt_cuda_room *R);

#ifdef __cplusplus
}
#endif
#endif
