/* kt_base.h - what every Kettle module shares: status codes, the error record
 * that carries a message back to the caller, and thread-count resolution.
 *
 * Library code never prints, aborts or exits on bad input: it fills a
 * kt_error (when the caller passed one) and returns a negative status. */
#ifndef KT_BASE_H
#define KT_BASE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kt_status {
    KT_OK = 0,
    KT_EINVAL = -1,    /* bad argument: NULL, dimension mismatch, impossible value */
    KT_ENOMEM = -2,    /* allocation failed or would exceed a memory cap */
    KT_EIO = -3,       /* file could not be read or written */
    KT_EUNSTABLE = -4, /* the simulation blew up (NaN, Inf, energy growth) */
    KT_ENOTSUP = -5,   /* not available in this build or for this scheme */
    KT_EINTR = -6      /* interrupted by the user */
};

#define KT_ERROR_MESSAGE_MAX 512

typedef struct kt_error {
    int code;                            /* one of enum kt_status */
    char message[KT_ERROR_MESSAGE_MAX];  /* human-readable, no trailing newline */
} kt_error;

/* Record an error (err may be NULL) and return code, so callers can write
 * `return kt_fail(err, KT_EINVAL, "x must be positive, got %g", x);`. */
int kt_fail(kt_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clear an error record. */
void kt_error_clear(kt_error *err);

/* Number of threads to use for a request: n > 0 is taken as is, n <= 0 means
 * "all cores" (the number of processors OpenMP sees). */
int kt_threads_resolve(int n);

/* A render's thread count is bounded by the machine: more threads than
 * processors only wait on each other (20000 ran 9 steps in 120 s, 100000
 * overflowed the OpenMP runtime's stack).  KT_EINVAL with a message when n
 * is above the processors this process may use; n <= 0 (all cores) is fine. */
int kt_threads_check(int n, kt_error *err);
/* Never accepted from anywhere (a checkpoint's field, say), whatever the machine. */
#define KT_THREADS_MAX 4096

/* Make denormal numbers count as zero on the calling thread and on every
 * thread of an OpenMP team of up to nthreads (x86 FTZ/DAZ; elsewhere a no-op).
 * A decaying field passes through denormals for thousands of steps and each
 * one costs ~100 cycles; values below 1e-308 Pa are inaudible.  Process-wide
 * in effect, so the program, not the library, decides to call it. */
void kt_flush_denormals(int nthreads);

/* On a function with a long, vectorisable inner loop: compile it for
 * AVX-512F, AVX2 and the baseline, and pick at load time by the CPU (GCC's
 * target_clones).  No FMA is enabled and no sum is reassociated, so the
 * clones round alike and results do not depend on the machine.  AVX-512F:
 * +8-10 % on the 250 m^3 room's sweep on the AMD EPYC (Zen 4) host. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(KT_NO_VECTOR_CLONES)
#define KT_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KT_VECTOR_CLONES
#endif

/* Monotonic wall-clock time in seconds, for timings. */
double kt_seconds(void);

/* Median of v[0..n-1] (reorders v); 0 for n = 0. */
double kt_median(double *v, int n);

/* MemAvailable from /proc/meminfo in bytes, 0 when unknown. */
size_t kt_memory_available_bytes(void);

/* Short name of a status code ("invalid argument", ...). */
const char *kt_status_name(int code);

#ifdef __cplusplus
}
#endif

#endif
