/* kt_linalg.h - Kettle's sparse linear algebra: one matrix type in five
 * storage formats, SpMV in both gaxpy modes, vector kernels, and a
 * matrix-free operator interface (thesis ch. 6, 7.3).
 *
 * Every kernel exists single- and multi-threaded; `nthreads` <= 0 means all
 * cores.  Threaded kernels partition rows (and dot products sum fixed-size
 * blocks in a fixed order), so results are bit-identical for any thread count.
 * Indices are int, values double (CSparse's int/double API). */
#ifndef KT_LINALG_H
#define KT_LINALG_H

#include "kt_base.h"
#include <cs.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kt_format {
    KT_TRIPLET = 0, /* COO, for assembly: a CSparse triplet (cs with nz >= 0) */
    KT_CSC,         /* compressed column: a CSparse cs; SpMV through cs_gaxpy */
    KT_CSR,         /* compressed row */
    KT_DIA,         /* bands, column-major, with an integer offset map (6.1.2) */
    KT_ELL          /* ELLPACK, column-major, column -1 marks padding (6.1.3) */
} kt_format;

typedef struct kt_matrix {
    kt_format format;
    int nrows, ncols;
    cs *cs;            /* TRIPLET and CSC */
    int *row_ptr;      /* CSR: nrows+1 */
    int *col_idx;      /* CSR: nnz */
    double *val;       /* CSR: nnz */
    int ndiags;        /* DIA: number of bands */
    int *offsets;      /* DIA: band offsets (col - row), ascending */
    double *diags;     /* DIA: diags[d*nrows + i] = A(i, i+offsets[d]) or 0 */
    int ell_width;     /* ELL: slots per row */
    int *ell_col;      /* ELL: ell_col[s*nrows + i], -1 = padding */
    double *ell_val;   /* ELL: ell_val[s*nrows + i] */
} kt_matrix;

/* Largest DIA or ELL storage a conversion may allocate unless told otherwise
 * (a scattered matrix can have thousands of bands). */
#define KT_DEFAULT_DENSE_CAP_BYTES ((size_t)1 << 30)

/* ---- construction and conversion ---- */
int kt_matrix_triplet(int nrows, int ncols, int capacity, kt_matrix **out, kt_error *err);
int kt_matrix_entry(kt_matrix *T, int row, int col, double value, kt_error *err); /* T triplet; duplicates add */
int kt_matrix_convert(const kt_matrix *A, kt_format to, size_t cap_bytes,
                      kt_matrix **out, kt_error *err); /* cap 0 = default */
int kt_matrix_transpose(const kt_matrix *A, kt_matrix **out, kt_error *err); /* same format */
int kt_matrix_scale(kt_matrix *A, double alpha, kt_error *err);               /* in place */
int kt_matrix_add(const kt_matrix *A, const kt_matrix *B, double alpha, double beta,
                  kt_matrix **out, kt_error *err); /* alpha*A + beta*B, format of A */
int kt_matrix_multiply(const kt_matrix *A, const kt_matrix *B, kt_matrix **out,
                       kt_error *err); /* A*B, format of A */
int kt_matrix_nnz(const kt_matrix *A);           /* stored structural entries, no padding */
size_t kt_matrix_bytes(const kt_matrix *A);      /* bytes of index and value arrays */
const char *kt_format_name(kt_format f);         /* "csc", "csr", "dia", "ell", "triplet" */
int kt_format_parse(const char *name, kt_format *f, kt_error *err);
void kt_matrix_free(kt_matrix *A);

/* ---- kernels ---- */
/* y = A*x (accumulate = 0) or y = y + A*x (accumulate = 1): thesis 7.3.3's two modes. */
int kt_spmv(const kt_matrix *A, const double *x, double *y, int accumulate, int nthreads,
            kt_error *err);
void kt_axpy(int n, double alpha, const double *x, double *y, int nthreads); /* y += alpha*x */
double kt_dot(int n, const double *x, const double *y, int nthreads);
void kt_copy(int n, const double *x, double *y, int nthreads);


/* ---- operators: one interface for stored matrices and unrolled stencils ---- */
typedef void (*kt_apply_fn)(const void *ctx, const double *x, double *y, int accumulate,
                            int nthreads);
typedef struct kt_operator {
    int nrows, ncols;
    const void *ctx;
    kt_apply_fn apply;      /* y = Op*x or y += Op*x */
} kt_operator;

kt_operator kt_operator_matrix(const kt_matrix *A); /* A must outlive the operator */
static inline void kt_operator_apply(const kt_operator *op, const double *x, double *y,
                                     int accumulate, int nthreads)
{
    op->apply(op->ctx, x, y, accumulate, nthreads);
}

/* Masked constant-coefficient 2D stencils on an n x n grid (index i*n + j),
 * with mask[i*n+j] in {0,1}.  D is the masked 5-point Laplacian
 * D = M*L5*M (L5: -4 centre, +1 at the four neighbours, zero outside the grid).
 *   stencil5:  y = c0*M*x + c1*D*x            (5 bands; the thesis' C and V)
 *   stencil13: y = c0*M*x + c1*D*x + c2*D*D*x (13 bands; the thesis' B)
 * The stencil computes exactly what kt_stencil_matrix stores, up to rounding. */
typedef struct kt_stencil {
    int n;                  /* grid is n x n */
    const unsigned char *mask; /* borrowed, n*n */
    double c0, c1, c2;
    int points;             /* 5 or 13 */
    unsigned char *nmask;   /* owned: number of masked 4-neighbours per point,
                               the varying centre weight of D*D at the rim */
    int *spans;             /* owned: per row i, spans[4i..4i+3] = a, lo, hi, b: the
                               row's masked points lie in columns [a, b), and over
                               [lo, hi) the whole stencil is masked (the mask-free,
                               constant-coefficient fast path) */
} kt_stencil;

int kt_stencil_init(kt_stencil *s, int n, const unsigned char *mask, int points,
                    double c0, double c1, double c2, kt_error *err);
void kt_stencil_release(kt_stencil *s);
kt_operator kt_operator_stencil(const kt_stencil *s);
/* The stored matrix of the same stencil, in triplet form (convert as needed). */
int kt_stencil_matrix(const kt_stencil *s, kt_matrix **out, kt_error *err);

#ifdef __cplusplus
}
#endif

#endif
