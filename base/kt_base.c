/* kt_base.c - error records and thread-count resolution (see kt_base.h). */
#include "kt_base.h"

#include <omp.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int kt_fail(kt_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

void kt_error_clear(kt_error *err)
{
    if (err) {
        err->code = KT_OK;
        err->message[0] = '\0';
    }
}

int kt_threads_resolve(int n)
{
    return n > 0 ? n : omp_get_num_procs();
}

int kt_threads_check(int n, kt_error *err)
{
    int procs = omp_get_num_procs();
    if (n > procs)
        return kt_fail(err, KT_EINVAL,
                       "%d threads are more than the %d processor%s this machine gives Kettle; "
                       "use at most %d (more only wait on each other)", n, procs,
                       procs == 1 ? "" : "s", procs);
    return KT_OK;
}

void kt_flush_denormals(int nthreads)
{
#if defined(__SSE__)
    /* MXCSR is per thread: set it in the caller and in each pooled worker. */
    _mm_setcsr(_mm_getcsr() | 0x8040u);
#pragma omp parallel num_threads(kt_threads_resolve(nthreads))
    _mm_setcsr(_mm_getcsr() | 0x8040u);
#else
    (void)nthreads;
#endif
}

const char *kt_status_name(int code)
{
    switch (code) {
    case KT_OK: return "ok";
    case KT_EINVAL: return "invalid argument";
    case KT_ENOMEM: return "out of memory";
    case KT_EIO: return "input/output error";
    case KT_EUNSTABLE: return "simulation unstable";
    case KT_ENOTSUP: return "not supported";
    case KT_EINTR: return "interrupted";
    default: return "unknown error";
    }
}

double kt_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kt_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

size_t kt_memory_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (size_t)kib * 1024;
}
