/* kt_cuda.h - the C entry points of Kettle's CUDA backend, linear algebra
 * part (linalg/gpu/): devices, device arrays and vectors, sparse matrices
 * and the matrix-free operators; the room's are in kt_cuda_room.h.  Declared
 * only when the build has CUDA (KETTLE_CUDA_ENABLED in kt_config.h);
 * docs/gpu.md, "The API". */
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

/* ---- device memory (linalg/gpu/vector.cu) ---- */
int kt_cuda_alloc(size_t bytes, void **out, kt_error *err);   /* zero-filled */
void kt_cuda_free(void *p);
int kt_cuda_upload(void *dst_dev, const void *src_host, size_t bytes, kt_error *err);
int kt_cuda_download(void *dst_host, const void *src_dev, size_t bytes, kt_error *err);
/* Waits for every launched kernel; KT_EIO with CUDA's message if one failed. */
int kt_cuda_sync(kt_error *err);
/* Free and total device memory in bytes. */
int kt_cuda_memory(size_t *free_bytes, size_t *total_bytes, kt_error *err);

/* ---- vector kernels through cuBLAS (linalg/gpu/vector.cu) ---- */
typedef struct kt_cuda_blas kt_cuda_blas;
int kt_cuda_blas_create(kt_cuda_blas **out, kt_error *err);
void kt_cuda_blas_free(kt_cuda_blas *b);
int kt_cuda_axpy(kt_cuda_blas *b, int n, double alpha, const double *x, double *y,
                 kt_error *err);                               /* y += alpha*x */
int kt_cuda_dot(kt_cuda_blas *b, int n, const double *x, const double *y, double *result,
                kt_error *err);                                /* result on the host */
int kt_cuda_copy(int n, const double *x, double *y, kt_error *err); /* device to device */

/* ---- sparse matrices on the device (linalg/gpu/spmv.cu) ---- */
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

#ifdef __cplusplus
}
#endif
#endif
