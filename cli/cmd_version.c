/* cmd_version.c - `kettle --version`: what this binary is and what it sees. */
#include "kt_cli.h"
#include "kt_config.h"
#include "kt_base.h"

#include <stdio.h>
#if KETTLE_CUDA_ENABLED
#include "kt_cuda.h"
#endif

int kt_cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("kettle %s\n", KT_VERSION);
    printf("build:    %s, %s, built %s\n", KT_BUILD_TYPE, KT_COMPILER, KT_BUILD_DATE);
    printf("threads:  %d cores available\n", kt_threads_resolve(0));
#if KETTLE_CUDA_ENABLED
    kt_gpu_info gpus[16];
    int n = kt_cuda_devices(gpus, 16);
    printf("CUDA:     on\n");
    if (n == 0)
        printf("GPUs:     none detected\n");
    for (int i = 0; i < n && i < 16; i++)
        printf("GPU %d:    %s, %.1f GiB, compute %d.%d\n", i, gpus[i].name, gpus[i].memory_gib,
               gpus[i].compute_major, gpus[i].compute_minor);
#else
    printf("CUDA:     off (built without the CUDA toolkit)\nGPUs:     none (CPU-only build)\n");
#endif
    return KT_EXIT_OK;
}
