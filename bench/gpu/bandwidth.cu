/* bandwidth.cu - the device's copy and read rates every GPU benchmark quotes
 * as its roofline (bench_bandwidth.h). */
#include "kt_cuda_kernel.h"
#include "bench_bandwidth.h"

#include <cuda_runtime.h>
#include <stdlib.h>

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

extern "C" int bench_cuda_read_bandwidth(size_t bytes, int repeats, double *bytes_per_s,
                                         kt_error *err)
{
    const int passes = 20;
    if (!bytes_per_s || repeats < 1 || bytes < sizeof(float4))
        return kt_fail(err, KT_EINVAL, "bench_cuda_read_bandwidth: bad arguments");
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

extern "C" int bench_cuda_copy_bandwidth(size_t bytes, int repeats, int use_kernel,
                                         double *bytes_per_s, kt_error *err)
{
    if (!bytes_per_s || repeats < 1 || bytes < sizeof(float4))
        return kt_fail(err, KT_EINVAL, "bench_cuda_copy_bandwidth: bad arguments");
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
