/* kt_spmv.c - matrix by vector products for every storage format, in both
 * of the thesis' gaxpy modes (7.3.3: y = A x, or y = y + A x), the vector
 * kernels (axpy, dot, copy), the copy-bandwidth roofline, and the operator
 * wrapper of a stored matrix.
 *
 * Threaded kernels run over a fixed grid of KT_ROW_BLOCK-row blocks (see
 * kt_linalg_internal.h): a row's sum is formed by the same instructions in the
 * same order whichever thread owns its block, so y is bit-identical for any
 * thread count.  CSC goes through CSparse's serial cs_gaxpy, as the thesis'
 * CSparse version did (7.3.2); triplet SpMV is serial too (it is for checks,
 * not for time stepping). */
#include "kt_linalg.h"
#include "kt_linalg_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-format kernels over rows [r0, r1) of one block ---- */

static void store_rows(double *restrict y, const double *restrict t, int r0, int r1,
                       int accumulate)
{
    if (accumulate)
        for (int i = r0; i < r1; i++)
            y[i] += t[i - r0];
    else
        for (int i = r0; i < r1; i++)
            y[i] = t[i - r0];
}

static void csr_block(const kt_matrix *A, const double *restrict x, double *restrict y,
                      int accumulate, int r0, int r1)
{
    const int *restrict rp = A->row_ptr;
    const int *restrict ci = A->col_idx;
    const double *restrict v = A->val;
    for (int i = r0; i < r1; i++) {
        double s = 0.0;
        for (int k = rp[i]; k < rp[i + 1]; k++)
            s += v[k] * x[ci[k]];
        y[i] = accumulate ? y[i] + s : s;
    }
}

/* Bands over the block, into an L1-resident accumulator: the inner loops
 * are unit-stride multiply-adds the compiler vectorises, and y is written
 * once.  Four bands go per pass where all four lie inside A for the whole
 * block (the bulk of a large matrix), else band by band over the rows where
 * each lies inside A.  Either way a row's sum is 0 + a_0 + a_1 + ... in band
 * order, rounded term by term: the same bits for every block layout. */
static void dia_band(double *restrict t, const double *restrict band, const double *restrict x,
                     int o, int r0, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        t[i - r0] += band[i] * x[i + o];
}

static void dia_four_bands(double *restrict t, const double *restrict b0,
                           const double *restrict b1, const double *restrict b2,
                           const double *restrict b3, const double *restrict x, const int *o,
                           int r0, int r1)
{
    const int o0 = o[0], o1 = o[1], o2 = o[2], o3 = o[3];
    for (int i = r0; i < r1; i++)
        t[i - r0] = t[i - r0] + b0[i] * x[i + o0] + b1[i] * x[i + o1] + b2[i] * x[i + o2] +
                    b3[i] * x[i + o3];
}

static void dia_block(const kt_matrix *A, const double *restrict x, double *restrict y,
                      int accumulate, int r0, int r1)
{
    double t[KT_ROW_BLOCK];
    const size_t n = (size_t)A->nrows;
    const int *off = A->offsets, m = A->ncols;
    for (int i = 0; i < r1 - r0; i++)
        t[i] = 0.0;
    int d = 0;
    for (; d + 4 <= A->ndiags; d += 4) {
        /* offsets ascend: bands d and d+3 bound the group's reach */
        if (r0 + off[d] >= 0 && r1 + off[d + 3] <= m) {
            const double *b = A->diags + (size_t)d * n;
            dia_four_bands(t, b, b + n, b + 2 * n, b + 3 * n, x, off + d, r0, r1);
            continue;
        }
        for (int k = d; k < d + 4; k++) {
            int lo = r0 > -off[k] ? r0 : -off[k], hi = r1 < m - off[k] ? r1 : m - off[k];
            dia_band(t, A->diags + (size_t)k * n, x, off[k], r0, lo, hi);
        }
    }
    for (; d < A->ndiags; d++) {
        int lo = r0 > -off[d] ? r0 : -off[d], hi = r1 < m - off[d] ? r1 : m - off[d];
        dia_band(t, A->diags + (size_t)d * n, x, off[d], r0, lo, hi);
    }
    store_rows(y, t, r0, r1, accumulate);
}

static void ell_block(const kt_matrix *A, const double *restrict x, double *restrict y,
                      int accumulate, int r0, int r1)
{
    double t[KT_ROW_BLOCK];
    const size_t n = (size_t)A->nrows;
    for (int i = 0; i < r1 - r0; i++)
        t[i] = 0.0;
    for (int s = 0; s < A->ell_width; s++) {
        const int *restrict col = A->ell_col + (size_t)s * n;
        const double *restrict val = A->ell_val + (size_t)s * n;
        for (int i = r0; i < r1; i++) {
            int j = col[i];
            if (j >= 0)
                t[i - r0] += val[i] * x[j];
        }
    }
    store_rows(y, t, r0, r1, accumulate);
}

typedef void (*block_fn)(const kt_matrix *, const double *, double *, int, int, int);

static void run_blocks(block_fn f, const kt_matrix *A, const double *x, double *y,
                       int accumulate, int nthreads)
{
    const int nrows = A->nrows;
    const int nblocks = (nrows + KT_ROW_BLOCK - 1) / KT_ROW_BLOCK;
    const int team = kt_team_size(nrows, nthreads);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int b = 0; b < nblocks; b++) {
        int r0 = b * KT_ROW_BLOCK;
        int r1 = r0 + KT_ROW_BLOCK < nrows ? r0 + KT_ROW_BLOCK : nrows;
        f(A, x, y, accumulate, r0, r1);
    }
}

static void triplet_spmv(const cs *T, const double *x, double *y, int accumulate)
{
    if (!accumulate)
        memset(y, 0, (size_t)T->m * sizeof *y);
    for (int k = 0; k < T->nz; k++)
        y[T->i[k]] += T->x[k] * x[T->p[k]];
}

int kt_spmv(const kt_matrix *A, const double *x, double *y, int accumulate, int nthreads,
            kt_error *err)
{
    int rc = kt_matrix_check(A, "kt_spmv", err);
    if (rc != KT_OK)
        return rc;
    if ((!x && A->ncols > 0) || (!y && A->nrows > 0))
        return kt_fail(err, KT_EINVAL, "kt_spmv: x or y is NULL");
    if (accumulate != 0 && accumulate != 1)
        return kt_fail(err, KT_EINVAL, "kt_spmv: accumulate must be 0 or 1, got %d",
                       accumulate);
    switch (A->format) {
    case KT_TRIPLET: triplet_spmv(A->cs, x, y, accumulate); break;
    case KT_CSC:
        /* cs_gaxpy only ever accumulates (7.3.2): clear y for the first mode */
        if (!accumulate && A->nrows > 0)
            memset(y, 0, (size_t)A->nrows * sizeof *y);
        if (!cs_gaxpy(A->cs, x, y))
            return kt_fail(err, KT_EINVAL, "kt_spmv: cs_gaxpy rejected the matrix");
        break;
    case KT_CSR: run_blocks(csr_block, A, x, y, accumulate, nthreads); break;
    case KT_DIA: run_blocks(dia_block, A, x, y, accumulate, nthreads); break;
    case KT_ELL: run_blocks(ell_block, A, x, y, accumulate, nthreads); break;
    }
    return KT_OK;
}

/* ---- vector kernels ---- */

void kt_axpy(int n, double alpha, const double *x, double *y, int nthreads)
{
    const int team = kt_team_size(n, nthreads);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int i = 0; i < n; i++)
        y[i] += alpha * x[i];
}

void kt_copy(int n, const double *x, double *y, int nthreads)
{
    const int team = kt_team_size(n, nthreads);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int i = 0; i < n; i++)
        y[i] = x[i];
}

/* The dot product's summation tree depends on n only: blocks of
 * KT_DOT_BLOCK elements are summed with four interleaved partial sums; the
 * blocks are split into KT_DOT_GROUPS contiguous groups, each summed block by
 * block in order; the groups are then added in order.  Threads only choose
 * who sums which group. */
#define KT_DOT_BLOCK 4096
#define KT_DOT_GROUPS 64

static double dot_block(const double *restrict x, const double *restrict y, int lo, int hi)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int i = lo;
    for (; i + 4 <= hi; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    for (; i < hi; i++)
        s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
}

double kt_dot(int n, const double *x, const double *y, int nthreads)
{
    if (n <= 0)
        return 0.0;
    const int nblocks = (n + KT_DOT_BLOCK - 1) / KT_DOT_BLOCK;
    const int groups = nblocks < KT_DOT_GROUPS ? nblocks : KT_DOT_GROUPS;
    double partial[KT_DOT_GROUPS];
    const int team = kt_team_size(n, nthreads);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int g = 0; g < groups; g++) {
        int b0 = (int)((long)nblocks * g / groups), b1 = (int)((long)nblocks * (g + 1) / groups);
        double s = 0.0;
        for (int b = b0; b < b1; b++) {
            int lo = b * KT_DOT_BLOCK;
            int hi = lo + KT_DOT_BLOCK < n ? lo + KT_DOT_BLOCK : n;
            s += dot_block(x, y, lo, hi);
        }
        partial[g] = s;
    }
    double sum = 0.0;
    for (int g = 0; g < groups; g++)
        sum += partial[g];
    return sum;
}

/* ---- operator of a stored matrix ---- */

static void matrix_apply(const void *ctx, const double *x, double *y, int accumulate,
                         int nthreads)
{
    kt_spmv((const kt_matrix *)ctx, x, y, accumulate, nthreads, NULL);
}

kt_operator kt_operator_matrix(const kt_matrix *A)
{
    kt_operator op = {A ? A->nrows : 0, A ? A->ncols : 0, A, matrix_apply};
    return op;
}
