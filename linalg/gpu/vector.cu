/* vector.cu - device memory, the vector kernels (axpy and dot through cuBLAS,
 * copy), and the device copy bandwidth every GPU benchmark quotes: the GPU
 * side of the vector part of linalg/kt_spmv.c. */
#include "kt_cuda.h"
#include "kt_cuda_kernel.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdlib.h>

/* ---- device memory ---- */

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
    if ((e = cudaMemset(p, 0, bytes)) != cudaSuccess) {
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
    cudaError_t e = cudaMemcpy(dst_dev, src_host, bytes, cudaMemcpyHostToDevice);
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

/* ---- copy bandwidth ---- */

/* 16-byte vector loads and stores, grid-stride: the plainest kernel that
 * reaches the memory system's limit. */
__global__ void copy_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

static int sm_count(void)
{
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    return sms;
}

/* The median over `repeats` timed runs (after one untimed) of run(), which
 * moves bytes_per_run bytes; in bytes/s. */
template <typename Run>
static int median_rate(int repeats, double bytes_per_run, Run run, const char *doing,
                       double *bytes_per_s, kt_error *err)
{
    double *rate = (double *)malloc((size_t)repeats * sizeof *rate);
    if (!rate)
        return kt_fail(err, KT_ENOMEM, "out of memory");
    cudaEvent_t start = NULL, stop = NULL;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaError_t e = cudaSuccess;
    for (int r = -1; r < repeats && e == cudaSuccess; r++) { /* -1: warm-up */
        cudaEventRecord(start);
        run();
        cudaEventRecord(stop);
        float ms = 0.0f;
        e = cudaEventSynchronize(stop);
        if (e == cudaSuccess)
            e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms, start, stop);
        if (r >= 0)
            rate[r] = bytes_per_run / (ms * 1e-3);
    }
    if (e == cudaSuccess)
        *bytes_per_s = kt_median(rate, repeats);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    free(rate);
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, doing);
}

/* Reads n float4 (grid-stride, four loads in flight a thread) and sums
 * them, so that the loads stay; the sum is stored only if it is -1, which
 * the zeroed array never gives. */
#define READ_UNROLL 4
__global__ void read_kernel(const float4 *__restrict__ src, size_t n, float *out)
{
    float s = 0.0f;
    const size_t step = (size_t)blockDim.x, stride = (size_t)gridDim.x * step * READ_UNROLL;
    for (size_t i = (size_t)blockIdx.x * step * READ_UNROLL + threadIdx.x; i < n; i += stride) {
        float4 v[READ_UNROLL];
#pragma unroll
        for (int u = 0; u < READ_UNROLL; u++)
            v[u] = i + u * step < n ? __ldcs(src + i + u * step) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int u = 0; u < READ_UNROLL; u++)
            s += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    if (s == -1.0f)
        *out = s;
}

extern "C" int kt_cuda_read_bandwidth(size_t bytes, int repeats, double *bytes_per_s,
                                      kt_error *err)
{
    const int passes = 20;
    if (!bytes_per_s || repeats < 1 || bytes < sizeof(float4))
        return kt_fail(err, KT_EINVAL, "kt_cuda_read_bandwidth: bad arguments");
    const size_t n = bytes / sizeof(float4);
    void *a = NULL, *out = NULL;
    int rc = kt_cuda_alloc(n * sizeof(float4), &a, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc(sizeof(float), &out, err);
    const int blocks = sm_count() * 4;
    if (rc == KT_OK)
        rc = median_rate(repeats, (double)passes * (double)(n * sizeof(float4)),
                         [&] {
                             for (int p = 0; p < passes; p++)
                                 read_kernel<<<blocks, 256>>>((const float4 *)a, n, (float *)out);
                         },
                         "measuring the read rate", bytes_per_s, err);
    kt_cuda_free(a);
    kt_cuda_free(out);
    return rc;
}

extern "C" int kt_cuda_copy_bandwidth(size_t bytes, int repeats, int use_kernel,
                                      double *bytes_per_s, kt_error *err)
{
    if (!bytes_per_s || repeats < 1 || bytes < sizeof(float4))
        return kt_fail(err, KT_EINVAL, "kt_cuda_copy_bandwidth: bad arguments");
    bytes = bytes / sizeof(float4) * sizeof(float4);
    void *a = NULL, *b = NULL;
    int rc = kt_cuda_alloc(bytes, &a, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc(bytes, &b, err);
    const int blocks = sm_count() * 8;
    if (rc == KT_OK)
        rc = median_rate(repeats, 2.0 * (double)bytes,
                         [&] {
                             if (use_kernel)
                                 copy_kernel<<<blocks, 256>>>((const float4 *)a, (float4 *)b,
                                                              bytes / sizeof(float4));
                             else
                                 cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
                         },
                         "measuring the copy bandwidth", bytes_per_s, err);
    kt_cuda_free(a);
    kt_cuda_free(b);
    return rc;
}
