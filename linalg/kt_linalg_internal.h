/* kt_linalg_internal.h - what the linalg sources share but do not publish:
 * the fixed row-block grid every threaded kernel works on, and the rule for
 * when threading is worth its overhead.
 *
 * Determinism across thread counts rests on one idea: work is cut into
 * blocks whose boundaries depend only on the problem size, never on the
 * number of threads, and each block is computed by the same code in the same
 * order whichever thread runs it.  Threads only decide who runs a block. */
#ifndef KT_LINALG_INTERNAL_H
#define KT_LINALG_INTERNAL_H

#include "kt_linalg.h"

/* Rows per block of the SpMV kernels (also the size of their on-stack
 * accumulator, 8 KiB: it stays in L1). */
#define KT_ROW_BLOCK 1024

/* Below this much work (rows, or vector length) a kernel runs on one thread:
 * starting a parallel region costs more than the work itself. */
#define KT_PARALLEL_MIN 20000

/* Threads to use for `work` items when the caller asked for `nthreads`. */
static inline int kt_team_size(long work, int nthreads)
{
    return work < KT_PARALLEL_MIN ? 1 : kt_threads_resolve(nthreads);
}

/* KT_OK when A is non-NULL and holds the arrays its format needs; else
 * KT_EINVAL with a message naming `who` (kt_matrix.c). */
int kt_matrix_check(const kt_matrix *A, const char *who, kt_error *err);

#endif
