/* kt_cuda.h - host-side entry points of Kettle's CUDA backend.  Only declared
 * when the build has CUDA (KETTLE_CUDA_ENABLED in kt_config.h). */
#ifndef KT_CUDA_H
#define KT_CUDA_H

#include "kt_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kt_gpu_info {
    char name[128];
    double memory_gib;
    int compute_major, compute_minor;
} kt_gpu_info;

/* Number of usable GPUs (0 when there is no device or no driver); fills up to
 * `max` entries of `info` (may be NULL). */
int kt_cuda_devices(kt_gpu_info *info, int max);

#ifdef __cplusplus
}
#endif
#endif
