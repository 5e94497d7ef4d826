/* kt_cuda.h - host-side entry points of Kettle's CUDA backend.  Only declared
 * when the build has CUDA (KETTLE_CUDA_ENABLED in kt_config.h).
 *
 * Everything here is callable from C.  Device arrays are plain pointers
 * returned by kt_cuda_alloc; kernels are launched on the default stream, so
 * calls run in order and kt_cuda_sync() waits for all of them (and reports an
 * error a kernel raised).  The sparse formats, the vector kernels and the
 * room's bulk update mirror their CPU files one-to-one:
 *   linalg/kt_spmv.c, linalg/kt_stencil.c -> cuda/spmv.cu
 *   vector kernels and copy bandwidth     -> cuda/vector.cu
 *   engine/room_sweep_impl.h              -> cuda/room_sweep.cu
 *   engine/room_stencil.c, _impl.h        -> cuda/room_stencil.cu (+ room_stencil_iwb.cu) */
#ifndef KT_CUDA_H
#define KT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
/* The C headers below declare C functions but say nothing of linkage: give
 * them C linkage here.  The system headers they pull in (and cs.h, which is
 * C++-aware) are included first, outside the block. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cs.h>
extern "C" {
#endif

#include "kettle.h"
#include "kt_base.h"
#include "kt_linalg.h"

typedef struct kt_gpu_info {
    char name[128];
    double memory_gib;
    int compute_major, compute_minor;
} kt_gpu_info;

/* Number of usable GPUs (0 when there is no device or no driver); fills up to
 * `max` entries of `info` (may be NULL). */
int kt_cuda_devices(kt_gpu_info *info, int max);

/* ---- device memory (cuda/vector.cu) ---- */
int kt_cuda_alloc(size_t bytes, void **out, kt_error *err);   /* zero-filled */
void kt_cuda_free(void *p);
int kt_cuda_upload(void *dst_dev, const void *src_host, size_t bytes, kt_error *err);
int kt_cuda_download(void *dst_host, const void *src_dev, size_t bytes, kt_error *err);
/* Waits for every launched kernel; KT_EIO with CUDA's message if one failed. */
int kt_cuda_sync(kt_error *err);
/* Free and total device memory in bytes. */
int kt_cuda_memory(size_t *free_bytes, size_t *total_bytes, kt_error *err);

/* ---- vector kernels through cuBLAS (cuda/vector.cu) ---- */
typedef struct kt_cuda_blas kt_cuda_blas;
int kt_cuda_blas_create(kt_cuda_blas **out, kt_error *err);
void kt_cuda_blas_free(kt_cuda_blas *b);
int kt_cuda_axpy(kt_cuda_blas *b, int n, double alpha, const double *x, double *y,
                 kt_error *err);                               /* y += alpha*x */
int kt_cuda_dot(kt_cuda_blas *b, int n, const double *x, const double *y, double *result,
                kt_error *err);                                /* result on the host */
int kt_cuda_copy(int n, const double *x, double *y, kt_error *err); /* device to device */

/* Measured device copy bandwidth in bytes/s (read + write counted, as
 * kt_copy_bandwidth): the median over `repeats` runs of a copy kernel
 * (use_kernel = 1) or of cudaMemcpy device to device (use_kernel = 0) between
 * two arrays of `bytes` each.  The roofline every GPU benchmark quotes. */
int kt_cuda_copy_bandwidth(size_t bytes, int repeats, int use_kernel, double *bytes_per_s,
                           kt_error *err);
/* Measured device read rate in bytes/s: the median over `repeats` runs of
 * 20 back-to-back passes of a read-only kernel (16-byte evict-first loads,
 * four in flight a thread) over one array of `bytes`: the floor under any
 * kernel that must stream that much, e.g. DIA's bands. */
int kt_cuda_read_bandwidth(size_t bytes, int repeats, double *bytes_per_s, kt_error *err);

/* ---- sparse matrices on the device (cuda/spmv.cu) ---- */
/* A matrix uploaded in one format: KT_CSR goes through cuSPARSE's generic
 * SpMV API, KT_DIA and KT_ELL through Kettle's own column-major kernels (one
 * thread per row; consecutive threads read consecutive entries of a band or
 * slot, so every load is coalesced; thesis 6.4). */
typedef struct kt_cuda_matrix kt_cuda_matrix;
int kt_cuda_matrix_upload(const kt_matrix *A, kt_cuda_matrix **out, kt_error *err);
void kt_cuda_matrix_free(kt_cuda_matrix *M);
kt_format kt_cuda_matrix_format(const kt_cuda_matrix *M);
/* Bytes of the device arrays (as kt_matrix_bytes for the same matrix). */
size_t kt_cuda_matrix_bytes(const kt_cuda_matrix *M);
/* y = A x (accumulate = 0) or y += A x (accumulate = 1); x, y device arrays
 * of ncols and nrows doubles.  Asynchronous: kt_cuda_sync() waits. */
int kt_cuda_spmv(kt_cuda_matrix *M, const double *x, double *y, int accumulate,
                 kt_error *err);

/* The matrix-free form of a kt_stencil (5 or 13 points, masked). */
typedef struct kt_cuda_stencil kt_cuda_stencil;
int kt_cuda_stencil_upload(const kt_stencil *s, kt_cuda_stencil **out, kt_error *err);
void kt_cuda_stencil_free(kt_cuda_stencil *S);
int kt_cuda_stencil_apply(const kt_cuda_stencil *S, const double *x, double *y,
                          int accumulate, kt_error *err);

/* A matrix-free constant-coefficient band operator: y_i = sum_d values[d] *
 * x[i + offsets[d]] over the bands inside the n x n matrix (the matrix-free
 * row of `kettle bench spmv`); at most KT_CUDA_MAX_BANDS bands. */
#define KT_CUDA_MAX_BANDS 32
int kt_cuda_bands_apply(int n, int nbands, const int *offsets, const double *values,
                        const double *x, double *y, int accumulate, kt_error *err);

/* ---- the room's bulk update on the device (cuda/room_sweep.cu) ---- */
/* The room's fields on the device, in the room's precision, 2 grids
 * (Psi^{n+1} written over Psi^{n-1}) or 3 with viscosity, with the same
 * coefficients as the CPU sweep.  Host arrays are in the CPU's padded
 * one-node-halo layout (room_internal.h: padded index ((z+1)*py + (y+1))*px +
 * (x+1), px = nx+2, py = ny+2); on the device each row is shifted so that
 * x = 0 starts a 128-byte line (cuda/room_sweep.cu says why).  This is stage
 * A of the step alone (the fused bulk update with lossy box walls); the
 * whole step is kt_cuda_mirror below. */
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
 * (engine/room_abc.c's inflow and known part, joules; 0 otherwise): read, or
 * set (after an upload). */
int kt_cuda_room_wall_exchange(const kt_cuda_room *R, double *inflow_J, double *known_J,
                               kt_error *err);
int kt_cuda_room_set_wall_exchange(kt_cuda_room *R, double inflow_J, double known_J,
                                   kt_error *err);
/* `steps` bulk updates, rotating the fields as kt_room_step does.
 * Asynchronous: kt_cuda_sync() waits. */
int kt_cuda_room_run(kt_cuda_room *R, int steps, kt_error *err);
int64_t kt_cuda_room_step_index(const kt_cuda_room *R);
/* The stencil schemes (IWB, the seed-000 families) run on the device too
 * (cuda/room_stencil.cu, engine/room_stencil.c's mirror ghosts and sweep):
 * IWB by a hand-written kernel, any stencil by the generic one (offsets and
 * weights in constant memory), FCC on its half-row layout by its own kernel
 * (cuda/room_fcc.cu).  Rigid walls only for these (lossy walls, viscosity
 * and Engquist-Majda walls are refused: KT_ENOTSUP).  The generic kernel
 * comes in two forms: compiled for the offset lists of its catalogue
 * (cuda/room_stencil_ring.cu: IWB, compact reach 1-4, leggy M = 1-4, each
 * value loaded once per column) and the runtime-list form for any other
 * list (cuda/room_stencil.cu).  KT_CUDA_KERNEL_GENERIC makes the generic
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

/* ---- the whole room step on the device (cuda/room_step.cu) ---- */
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
 * kernel (cuda/timpani_step.cu: matrix-free RHS, reduced-space Jacobi of
 * note 9.1, layer correction), CSR and DIA/ELL stage by stage with its own
 * stored matrices (cuda/timpani_stored.cu: cuSPARSE or Kettle's SpMV,
 * cuBLAS, Algorithm 18; CSC runs as CSR); its CPU state follows a block at
 * a time.  Another instrument with a process() stage is refused
 * (KT_ENOTSUP), as is the direct solve (and a tolerance where the path's
 * stopping test would differ from the CPU's).
 * The air alone agrees with kt_room_step bit for bit in both precisions; with
 * a drum, to rounding (the membrane's sums run in another order). */
typedef struct kt_cuda_mirror kt_cuda_mirror;
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

#ifdef __cplusplus
}
#endif
#endif
