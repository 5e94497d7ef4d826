/* bench_bandwidth.h - the memory rates the benchmarks measure their figures
 * against: the CPU's copy bandwidth, and with CUDA the device's copy and read
 * rates (bench/gpu/bandwidth.cu). */
#ifndef BENCH_BANDWIDTH_H
#define BENCH_BANDWIDTH_H

#include "kt_config.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kt_base.h"

/* Measured copy bandwidth in bytes/s (read + write counted) over arrays of
 * `bytes` each, median of `repeats` runs: the roofline every benchmark quotes. */
double bench_copy_bandwidth(size_t bytes, int repeats, int nthreads);

#if KETTLE_CUDA_ENABLED
/* Measured device copy bandwidth in bytes/s (read + write counted, as
 * bench_copy_bandwidth): the median over `repeats` runs of a copy kernel
 * (use_kernel = 1) or of cudaMemcpy device to device (use_kernel = 0) between
 * two arrays of `bytes` each.  The roofline every GPU benchmark quotes. */
int bench_cuda_copy_bandwidth(size_t bytes, int repeats, int use_kernel, double *bytes_per_s,
                              kt_error *err);
/* Measured device read rate in bytes/s: the median over `repeats` runs of
 * 20 back-to-back passes of a read-only kernel (16-byte evict-first loads,
 * four in flight a thread) over one array of `bytes`: the floor under any
 * kernel that must stream that much, e.g. DIA's bands. */
int bench_cuda_read_bandwidth(size_t bytes, int repeats, double *bytes_per_s, kt_error *err);
#endif

#ifdef __cplusplus
}
#endif
#endif
