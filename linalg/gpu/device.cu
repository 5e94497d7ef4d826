/* device.cu - GPU discovery for `kettle --version` and --device auto. */
#include "kt_cuda.h"

#include <cuda_runtime.h>
#include <stdio.h>

extern "C" int kt_cuda_devices(kt_gpu_info *info, int max)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no driver" error */
        return 0;
    }
    for (int d = 0; d < count && info && d < max; d++) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess)
            return d;
        snprintf(info[d].name, sizeof info[d].name, "%.127s", prop.name);
        info[d].memory_gib = (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0);
        info[d].compute_major = prop.major;
        info[d].compute_minor = prop.minor;
    }
    return count;
}
