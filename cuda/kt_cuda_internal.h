/* kt_cuda_internal.h - what the .cu files of cuda/ share but do not publish:
 * turning a CUDA error into a kt_error. */
#ifndef KT_CUDA_INTERNAL_H
#define KT_CUDA_INTERNAL_H

#include "kt_cuda.h"

extern "C" {
#include "room_internal.h"   /* room_walls: the walls the CPU and GPU share */
}

#include <cuda_runtime.h>

/* The room's fields on the device (cuda/room_sweep.cu); cuda/room_step.cu
 * runs the rest of the step on them. */
struct kt_cuda_room {
    kt_room_params params;
    kt_room_grid grid;
    int grids;
    size_t px, py, pz, padded_points, esize; /* the CPU's padded layout */
    size_t lead;                 /* device: elements before node x = 0 of the first row
                                    (whole lines, at least the halo) */
    size_t pitch, plane, points; /* device: row and plane strides, elements per field */
    void *field[3];
    void *now, *prev, *next;
    double lambda, l2, eta;
    int64_t n;
    int slabs;                   /* z slabs the grid is cut into (parallelism) */
    /* The stencil schemes (cuda/room_stencil.cu): NULL for the 7-point one. */
    int halo;                    /* ghost layers on every side: 1, or the stencil's reach */
    struct room_stencil *st;     /* the CPU's stencil, pairs in the CPU's order */
    int kernel;                  /* KT_CUDA_KERNEL_*: which sweep runs it */
    double *abc_sums;            /* absorbing walls' energy sums (cuda/room_abc.cu), or NULL */
    room_walls walls;            /* where the walls sit (engine/room.c's, same parameters) */
    void *wall_pairs;            /* the wall nodes' 27 loss pairs (lm, li), field precision */
    /* FCC: the end nodes the mirror ghosts miss (engine/room_fcc.c's list),
     * coordinates (3 ints) and 12 coefficients each, on the device. */
    int fcc_cut_count;
    int *fcc_cut_node;
    double *fcc_cut_coef;
    /* The boundary lists folded into the two-grid sweep (cuda/room_step.cu):
     * per device node, ROOM_LISTED | its blocked legs on a list node, else 0;
     * NULL when the lists run as their own kernels.  Owned by R. */
    unsigned char *listed;
};
#define ROOM_LISTED 0x80u

/* Stage A of a stencil scheme (cuda/room_stencil.cu): the mirror ghosts of
 * `now`, then the sweep by R->kernel. */
void kt_cuda_room_stencil_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* The generic kernel's L1 preference (idempotent; once per room is plenty). */
void kt_cuda_stencil_prepare(void);
/* The hand-written 27-point IWB sweep (cuda/room_stencil_iwb.cu); 1 when
 * R's stencil is IWB's in the CPU's pair order (so the kernel can run it). */
int kt_cuda_iwb_matches(const kt_cuda_room *R);
void kt_cuda_iwb_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* The generic kernel compiled for a catalogue of offset lists
 * (cuda/room_stencil_ring.cu): 1 when R's list is in it, pair for pair;
 * the sweep launches and returns 1, or returns 0 having launched nothing. */
int kt_cuda_ring_matches(const kt_cuda_room *R);
int kt_cuda_ring_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* Absorbing walls (cuda/room_abc.cu): their energy sums (nothing for lossy
 * walls) and the boundary update after the sweep. */
int kt_cuda_abc_setup(kt_cuda_room *R, kt_error *err);
void kt_cuda_abc_apply_on(kt_cuda_room *R, cudaStream_t stream);
/* The FCC scheme's ghosts and sweep on its half-row layout (cuda/room_fcc.cu),
 * and the list of the end nodes its mirror misses (engine/room_fcc.c's),
 * uploaded once. */
void kt_cuda_fcc_sweep_on(kt_cuda_room *R, cudaStream_t stream);
int kt_cuda_fcc_setup(kt_cuda_room *R, kt_error *err);

/* Stage A on the current fields, on `stream` (no rotation, no step count). */
void kt_cuda_room_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* Stage F: the field rotation of engine/room_step.c (host pointers only). */
void kt_cuda_room_rotate(kt_cuda_room *R);

/* Device index of room node (x, y, z) (room_sweep.cu's layout). */
static inline long long kt_cuda_room_index(const kt_cuda_room *R, int x, int y, int z)
{
    return (long long)R->lead + ((long long)(z + R->halo) * (long long)R->py + (y + R->halo)) *
                                    (long long)R->pitch + x;
}

/* ---- a drum on the device (cuda/timpani_step.cu), driven by room_step.cu ---- */
typedef struct kt_cuda_timpani kt_cuda_timpani;
struct kt_instrument;
/* 1 when the instrument is a Kettle timpani (its process() is tp_process). */
int kt_cuda_timpani_accepts(const struct kt_instrument *ins);
/* Uploads the drum's geometry, operators and state; the path follows its
 * format: matrix-free runs the fused kernel of timpani_step.cu, a stored
 * format (CSR, DIA/ELL; CSC as CSR) the stage-by-stage path of
 * timpani_stored.cu, whose library handles are bound to `stream`; the
 * matrix-free direct solve runs the split kernels of timpani_split.cu, part
 * of them on the drum's own stream (see kt_cuda_timpani_join).
 * KT_ENOTSUP for what the device does not do (stored: the direct solve, the
 * reduced solver with a tolerance; matrix-free: Jacobi with a tolerance, a
 * window whose G does not fit 9 bands). */
int kt_cuda_timpani_create(void *timpani, const kt_cuda_room *R, cudaStream_t stream,
                           kt_cuda_timpani **out, kt_error *err);
/* Re-reads every coefficient that tension or damping change (cB0 .. cC1,
 * cV1, mu_c, Bf, the strike scale, the solver settings) and G's bands from
 * the CPU drum.  Synchronous: call between runs, with the stream idle.
 * Launches after it use the new values (graphs captured before do not). */
int kt_cuda_timpani_update(kt_cuda_timpani *T, kt_error *err);
/* Stage D of one step on `stream`: reads and corrects the layers of `next`
 * (Psi^{n+1}); *step_n (device) is the room's step index n.  marks (may be
 * NULL): two events the stage-by-stage path records after stage 3 and after
 * stage 4.  Returns 1 when it recorded them, 0 when not (the fused kernel),
 * negative on a failed launch. */
int kt_cuda_timpani_launch(kt_cuda_timpani *T, void *next, int single, const long long *step_n,
                           cudaStream_t stream, cudaEvent_t marks[2], kt_error *err);
/* Makes `stream` wait for this step's stage D where the drum ran it on its
 * own stream (the split direct solve): after every drum's launch, so that
 * the drums of a room run side by side. */
void kt_cuda_timpani_wait(kt_cuda_timpani *T, cudaStream_t stream);
/* Makes `stream` wait for the drum's work on its own stream (the split
 * direct solve overlaps the next step's air with the membrane): call before
 * synchronising `stream`, before a graph capture begins and before it ends. */
void kt_cuda_timpani_join(kt_cuda_timpani *T, cudaStream_t stream);
/* The device state back into the CPU drum (displacement, history, window
 * buffers, counters); KT_EUNSTABLE if the membrane blew up on the device,
 * with *bad_after (may be NULL) the steps it took since the last download
 * before the step that failed. */
int kt_cuda_timpani_download(kt_cuda_timpani *T, cudaStream_t stream, int64_t *bad_after,
                             kt_error *err);
void kt_cuda_timpani_free(kt_cuda_timpani *T);

/* Fills err with CUDA's message for e and what we were `doing`; returns KT_EIO. */
int kt_cuda_fail(kt_error *err, cudaError_t e, const char *doing);
/* KT_OK, or KT_EIO naming `kernel` when the last launch failed. */
int kt_cuda_launch_check(kt_error *err, const char *kernel);
/* Lets `kernel` take at least `bytes` of dynamic shared memory.  The limit
 * belongs to the kernel, not to a drum: it is only ever raised, so a smaller
 * drum created after a larger one does not shrink it under the larger. */
cudaError_t kt_cuda_allow_smem(const void *kernel, size_t bytes);
/* kt_cuda_spmv on a given stream (CSR: the matrix's cuSPARSE handle is
 * bound to it).  The first CSR product sizes cuSPARSE's buffer and analyses
 * the matrix (allocations): make it before any graph capture. */
int kt_cuda_spmv_on(kt_cuda_matrix *M, const double *x, double *y, int accumulate,
                    cudaStream_t stream, kt_error *err);

/* Threads per block of the one-thread-per-row kernels. */
#define KT_CUDA_BLOCK 256

static inline unsigned kt_cuda_blocks(long long n, int block)
{
    return (unsigned)((n + block - 1) / block);
}

/* Programmatic dependent launch (Hopper): kt_launch_dependent starts k's
 * blocks once every block of the kernel before it on `stream` has called
 * cudaTriggerProgrammaticLaunchCompletion or exited, so the launch gap and
 * whatever k does before kt_wait_prior_grid (which waits for that kernel to
 * finish, its writes visible) overlap it.  In a graph this holds when that
 * kernel is the node's only dependency; otherwise, and before sm_90, the
 * launch is an ordinary one. */
__device__ __forceinline__ void kt_wait_prior_grid(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
}

__device__ __forceinline__ void kt_let_next_grid_start(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

template <typename... Args>
static inline void kt_launch_dependent(void (*k)(Args...), dim3 grid, dim3 block, size_t smem,
                                       cudaStream_t stream, Args... args)
{
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    cudaLaunchKernelEx(&cfg, k, args...);
}

#endif
