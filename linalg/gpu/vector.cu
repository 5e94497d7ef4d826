/* vector.cu - device memory and the vector kernels (axpy and dot through
 * cuBLAS, copy): the GPU side of the vector part of linalg/kt_spmv.c. */
#include "kt_cuda.h"
#include "kt_cuda_kernel.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdlib.h>

/* ---- device memory ---- */

/* cudaMemset and a copy from pageable memory run on the default stream and
 * may return before the device has done them (a pageable upload returns
 * once the last chunk is staged), and the default stream does not order
 * the non-blocking streams the rooms and drums launch on: a kernel started
 * right after could read memory half written.  So every fill and upload
 * here has landed when it returns (setup work, not the steps' path). */
cudaError_t kt_cuda_landed(cudaError_t e)
{
    return e == cudaSuccess ? cudaStreamSynchronize(0) : e;
}

extern "C" int kt_cuda_alloc(size_t bytes, void **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_cuda_alloc: out is NULL");
    *out = NULL;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return kt_fail(err, e == cudaErrorMemoryAllocation ? KT_ENOMEM : KT_EIO,
                       "could not allocate %zu bytes on the GPU: %s", bytes,
                       cudaGetErrorString(e));
    }
    if ((e = kt_cuda_landed(cudaMemset(p, 0, bytes))) != cudaSuccess) {
        cudaFree(p);
        return kt_cuda_fail(err, e, "clearing device memory");
    }
    *out = p;
    return KT_OK;
}

extern "C" void kt_cuda_free(void *p)
{
    if (p)
        cudaFree(p);
}

extern "C" int kt_cuda_upload(void *dst_dev, const void *src_host, size_t bytes, kt_error *err)
{
    cudaError_t e = kt_cuda_landed(cudaMemcpy(dst_dev, src_host, bytes, cudaMemcpyHostToDevice));
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "copying to the GPU");
}

extern "C" int kt_cuda_download(void *dst_host, const void *src_dev, size_t bytes,
                                kt_error *err)
{
    cudaError_t e = cudaMemcpy(dst_host, src_dev, bytes, cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "copying from the GPU");
}

extern "C" int kt_cuda_sync(kt_error *err)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaGetLastError();
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "running a GPU kernel");
}

extern "C" int kt_cuda_memory(size_t *free_bytes, size_t *total_bytes, kt_error *err)
{
    size_t f = 0, t = 0;
    cudaError_t e = cudaMemGetInfo(&f, &t);
    if (e != cudaSuccess)
        return kt_cuda_fail(err, e, "asking for the GPU's memory");
    if (free_bytes)
        *free_bytes = f;
    if (total_bytes)
        *total_bytes = t;
    return KT_OK;
}

int kt_cuda_fail(kt_error *err, cudaError_t e, const char *doing)
{
    cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
    return kt_fail(err, KT_EIO, "CUDA error %s: %s", doing, cudaGetErrorString(e));
}

int kt_cuda_launch_check(kt_error *err, const char *kernel)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, kernel);
}

cudaError_t kt_cuda_allow_smem(const void *kernel, size_t bytes)
{
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, kernel);
    if (e != cudaSuccess || bytes <= (size_t)a.maxDynamicSharedSizeBytes)
        return e;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

/* ---- cuBLAS ---- */

struct kt_cuda_blas {
    cublasHandle_t handle;
};

static int blas_fail(kt_error *err, cublasStatus_t s, const char *doing)
{
    return kt_fail(err, KT_EIO, "cuBLAS error %d %s", (int)s, doing);
}

extern "C" int kt_cuda_blas_create(kt_cuda_blas **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_cuda_blas_create: out is NULL");
    *out = NULL;
    kt_cuda_blas *b = (kt_cuda_blas *)calloc(1, sizeof *b);
    if (!b)
        return kt_fail(err, KT_ENOMEM, "out of memory for a cuBLAS handle");
    cublasStatus_t s = cublasCreate(&b->handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        free(b);
        return blas_fail(err, s, "creating a handle");
    }
    *out = b;
    return KT_OK;
}

extern "C" void kt_cuda_blas_free(kt_cuda_blas *b)
{
    if (!b)
        return;
    cublasDestroy(b->handle);
    free(b);
}

extern "C" int kt_cuda_axpy(kt_cuda_blas *b, int n, double alpha, const double *x, double *y,
                            kt_error *err)
{
    if (!b || n < 0)
        return kt_fail(err, KT_EINVAL, "kt_cuda_axpy: no handle or n < 0");
    cublasStatus_t s = cublasDaxpy(b->handle, n, &alpha, x, 1, y, 1);
    return s == CUBLAS_STATUS_SUCCESS ? KT_OK : blas_fail(err, s, "in axpy");
}

extern "C" int kt_cuda_dot(kt_cuda_blas *b, int n, const double *x, const double *y,
                           double *result, kt_error *err)
{
    if (!b || n < 0 || !result)
        return kt_fail(err, KT_EINVAL, "kt_cuda_dot: no handle, no result or n < 0");
    cublasStatus_t s = cublasDdot(b->handle, n, x, 1, y, 1, result);
    return s == CUBLAS_STATUS_SUCCESS ? KT_OK : blas_fail(err, s, "in dot");
}

extern "C" int kt_cuda_copy(int n, const double *x, double *y, kt_error *err)
{
    if (n < 0)
        return kt_fail(err, KT_EINVAL, "kt_cuda_copy: n < 0");
    cudaError_t e = cudaMemcpyAsync(y, x, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice);
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "copying on the GPU");
}
