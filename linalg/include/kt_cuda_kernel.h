/* kt_cuda_kernel.h - what every .cu file of Kettle shares (CUDA only): a
 * CUDA error as a kt_error, launch checks, shared-memory limits, block
 * counts and programmatic dependent launch. */
#ifndef KT_CUDA_KERNEL_H
#define KT_CUDA_KERNEL_H

#include "kt_cuda.h"

#include <cuda_runtime.h>

/* Fills err with CUDA's message for e and what we were `doing`; returns KT_EIO. */
int kt_cuda_fail(kt_error *err, cudaError_t e, const char *doing);
/* e, or once e is cudaSuccess the default stream's work done: a fill or a
 * copy on the default stream then lands before any other stream reads it
 * (the rooms' and drums' streams are non-blocking: linalg/gpu/vector.cu). */
cudaError_t kt_cuda_landed(cudaError_t e);
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
