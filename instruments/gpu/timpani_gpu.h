/* timpani_gpu.h - what the GPU forms of the drum's stage D share (not
 * published): the per-drum state kept in device memory, and the paths the
 * drum's device object (timpani_gpu.cu) dispatches to: the fused kernel
 * (timpani_fused.cu), the stage-by-stage path (timpani_stored.cu) and the
 * split direct solve (timpani_split.cu). */
#ifndef KT_TIMPANI_GPU_H
#define KT_TIMPANI_GPU_H

#include "kt_cuda_kernel.h"
#include "kt_cuda_room.h"
#include "timpani_plan.h"

#include <cuda_runtime.h>


/* The drum's counters on the device.  The histories rotate as on the CPU:
 * u^n = U[rot_u], u^{n+1} = U[rot_u+1], u^{n-1} = U[rot_u+2] (mod 3); w
 * alike; D^n = D[rot_d]. */
typedef struct tp_dev_state {
    int rot_u, rot_w, rot_d;
    int last_iterations;
    double last_increment;
    long long steps;
    int bad;                    /* the membrane blew up (a^T a not finite) */
    long long bad_step;
} tp_dev_state;

/* Everything the drum kernels read, by value (timpani_gpu.cu fills it; the
 * fused kernel and the split kernels of timpani_split.cu take it). */
typedef struct tp_dev {
    int n, nn, ninside, nwx, nwy, nw, mlo, mhi, iterations, coupled, adaptive, nstrikes, lossy;
    int rows_per_block;         /* window rows each block owns in the reduced iteration */
    int iter_warps;             /* warps per block that own window nodes there */
    double cV1, cB0, cB1, cB2, cC0, cC1, mu_c, Bf, gamma6, hq2, k, strike_scale, tol;
    const int *inside, *e_jm;
    const unsigned char *mask;  /* nn: the membrane's inside nodes */
    const int *in_eoff;         /* inside node q: E reads sep at in_eoff[q] and + n ... */
    const double *in_efa;       /* ... with weights 1 - in_efa[q] and in_efa[q] */
    const double *e_fb;
    const unsigned char *chi;
    const int *chi_lo, *chi_hi;
    int row_k, col_k;           /* entries per window row / column in the I23 gathers */
    const int4 *row_gather;     /* window row i, entry k: (membrane row, its run lo, hi, 0) */
    const double *row_gw;       /*   and weight; padding: an empty run */
    const int *col_gm;          /* window column j, entry k: membrane column ... */
    const double *col_gw;       /*   and weight; padding: column mlo, weight 0 */
    const double *g[5];         /* band d at window index i: g[d][i] (padded) */
    const long long *pd_idx, *pu_idx;
    const double *st_start, *st_force, *st_dur;
    const int *st_node;
    double *U[3], *W[3], *D[2];
    double *a, *r, *tmp, *pad, *sep, *sep2, *Dhat, *v;
    tp_dev_state *state;
} tp_dev;

/* A warp's sum of v in lane 0 (shuffles down; the same order every time). */
__device__ __forceinline__ double tp_warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* The device arrays timpani_gpu.cu makes for every drum, lent to the
 * stage-by-stage path (it owns none of them). */
typedef struct tp_stored_arrays {
    double *U[3], *W[3], *D[2];
    double *a, *r, *tmp, *Dhat, *v;             /* membrane (nn) and window (nw) scratch */
    const long long *pd_idx, *pu_idx;           /* the two air layers over the window */
    const double *st_start, *st_force, *st_dur;
    const int *st_node;
    int nstrikes;
    tp_dev_state *state;
} tp_stored_arrays;

/* The fused kernel (timpani_fused.cu): what it does not do (KT_ENOTSUP with
 * the reason: Jacobi with a tolerance, a window over 4096 nodes), its
 * shared memory (the kernel's limit raised to it), the reduced iteration's
 * rows per block, and one step's launch on `stream`. */
int tp_fused_accepts(const tp_plan *t, kt_error *err);
int tp_fused_size(const tp_plan *t, size_t *shared_bytes, kt_error *err);
void tp_fused_rows(tp_dev *d);
int tp_fused_launch(const tp_dev *d, size_t shared_bytes, void *next, int single,
                    const long long *step_n, cudaStream_t stream, kt_error *err);

typedef struct tp_stored tp_stored;

/* Uploads the drum's own B, C, V, E and I23 (kt_cuda_matrix: CSR through
 * cuSPARSE, DIA and ELL through Kettle's kernels; CSC converted to CSR),
 * makes a cuBLAS handle in device pointer mode bound to `stream`, and runs
 * every product once so that no buffer is made later (graph capture).
 * Launches on another stream rebind the handles.
 * KT_ENOTSUP for what it does not do (the direct solve; the reduced solver
 * with a tolerance, whose stopping test is on the reduced iterate). */
int tp_stored_create(tp_plan *t, const tp_stored_arrays *arr, cudaStream_t stream,
                     tp_stored **out, kt_error *err);
/* After a change of tension or damping: B, C, V again from the CPU drum,
 * and every coefficient.  The stream must be idle. */
int tp_stored_update(tp_stored *S, kt_error *err);
/* One step of stage D on the stream: stage 3, 4 and 6 as separate kernels,
 * library calls and copies.  marks (may be NULL): events recorded after
 * stage 3 and after stage 4. */
int tp_stored_launch(tp_stored *S, void *next, int single, const long long *step_n,
                     cudaStream_t stream, cudaEvent_t marks[2], kt_error *err);
void tp_stored_free(tp_stored *S);

/* The direct solve (Woodbury + Sherman-Morrison, design note 9.2) split into
 * three kernels so that the membrane's work overlaps the air (timpani_split.cu).
 * tp_split_accepts: KT_OK, or KT_ENOTSUP with the reason, for a coupled
 * matrix-free drum with the direct solver.  tp_split_create makes its arrays
 * and computes the first step's membrane terms from the drum's state (the
 * room's step index R->n dates the strikes).  tp_split_update does that again
 * after a change of tension or damping (stream idle).  tp_split_launch: one
 * step's window solve and layer correction, then the next step's membrane
 * terms, on the drum's own stream (or all on `stream`, `serial`);
 * tp_split_wait then makes `stream` wait for the window solve, so that the
 * room launches every drum's solve before waiting for any: the drums of a
 * room run side by side (issue 21).  tp_split_join finishes the membrane terms
 * and makes `stream` wait for them: before a sync, a graph capture's start
 * and its end.  tp_split_last_a: a^n = V u^n of the last step
 * on the device (NULL before the first step). */
typedef struct tp_split tp_split;
int tp_split_wanted(const tp_plan *t);
int tp_split_accepts(const tp_plan *t, kt_error *err);
int tp_split_create(tp_plan *t, const tp_dev *d, const kt_cuda_room *R,
                    tp_split **out, kt_error *err);
int tp_split_update(tp_split *S, const tp_dev *d, kt_error *err);
int tp_split_launch(tp_split *S, const tp_dev *d, void *next, int single,
                    const long long *step_n, cudaStream_t stream, int serial, kt_error *err);
void tp_split_wait(tp_split *S, cudaStream_t stream);
void tp_split_join(tp_split *S, const tp_dev *d, cudaStream_t stream);
const double *tp_split_last_a(const tp_split *S);
void tp_split_free(tp_split *S);

#endif
