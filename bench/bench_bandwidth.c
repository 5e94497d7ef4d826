/* bench_bandwidth.c - the CPU's copy bandwidth, the roofline every benchmark
 * quotes (bench_bandwidth.h). */
#include "bench_bandwidth.h"
#include "kt_linalg.h"

#include <stdlib.h>

double bench_copy_bandwidth(size_t bytes, int repeats, int nthreads)
{
    size_t n = bytes / sizeof(double);
    if (n == 0 || n > (size_t)0x7fffffff || repeats <= 0)
        return 0.0;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *times = malloc((size_t)repeats * sizeof *times);
    double bandwidth = 0.0;
    if (a && b && times) {
        /* first touch by the same static schedule the copy will use */
        const int team = kt_threads_resolve(nthreads);
#pragma omp parallel for schedule(static) num_threads(team)
        for (size_t i = 0; i < n; i++) {
            a[i] = (double)(i & 1023);
            b[i] = 0.0;
        }
        kt_copy((int)n, a, b, nthreads); /* warm-up */
        for (int r = 0; r < repeats; r++) {
            double t0 = kt_seconds();
            kt_copy((int)n, a, b, nthreads);
            times[r] = kt_seconds() - t0;
        }
        double t = kt_median(times, repeats);
        bandwidth = t > 0.0 ? 2.0 * (double)(n * sizeof(double)) / t : 0.0;
    }
    free(a);
    free(b);
    free(times);
    return bandwidth;
}
