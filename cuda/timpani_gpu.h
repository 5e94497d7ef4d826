/* timpani_gpu.h - what the two GPU forms of the drum's stage D share (not
 * published): the per-drum state kept in device memory, and the
 * stage-by-stage path of cuda/timpani_stored.cu that cuda/timpani_step.cu
 * hands a drum in a stored format (CSR, DIA/ELL; CSC through CSR) to.  The
 * fused matrix-free kernel stays in timpani_step.cu. */
#ifndef KT_TIMPANI_GPU_H
#define KT_TIMPANI_GPU_H

#include "kt_cuda_internal.h"

#include <cuda_runtime.h>

struct kt_timpani;

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

/* The device arrays timpani_step.cu makes for every drum, lent to the
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

typedef struct tp_stored tp_stored;

/* Uploads the drum's own B, C, V, E and I23 (kt_cuda_matrix: CSR through
 * cuSPARSE, DIA and ELL through Kettle's kernels; CSC converted to CSR),
 * makes a cuBLAS handle in device pointer mode bound to `stream`, and runs
 * every product once so that no buffer is made later (graph capture).
 * Launches on another stream rebind the handles.
 * KT_ENOTSUP for what it does not do (the direct solve; the reduced solver
 * with a tolerance, whose stopping test is on the reduced iterate). */
int tp_stored_create(struct kt_timpani *t, const tp_stored_arrays *arr, cudaStream_t stream,
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

#endif
