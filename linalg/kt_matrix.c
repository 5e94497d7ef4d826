/* kt_matrix.c - the matrix type: triplet assembly, conversion between the five
 * storage formats (thesis 6.1), transpose, scale, add, multiply and sizes.
 *
 * CSparse's compressed column form is the hub: every conversion goes from the
 * source to a duplicate-free CSC with sorted row indices, and from there to
 * the target (CSR is the transpose of a CSC; DIA and ELL are filled from CSR,
 * row by row).  Algebra (transpose, add, multiply) is CSparse's, done on the
 * hub and converted back to the format of the first operand. */
#include "kt_linalg.h"
#include "kt_linalg_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static kt_matrix *matrix_new(kt_format f, int nrows, int ncols)
{
    kt_matrix *A = calloc(1, sizeof *A);
    if (A) {
        A->format = f;
        A->nrows = nrows;
        A->ncols = ncols;
    }
    return A;
}

void kt_matrix_free(kt_matrix *A)
{
    if (!A)
        return;
    cs_spfree(A->cs);
    free(A->row_ptr);
    free(A->col_idx);
    free(A->val);
    free(A->offsets);
    free(A->diags);
    free(A->ell_col);
    free(A->ell_val);
    free(A);
}

/* malloc that never returns NULL for a zero-sized request, so "NULL" always
 * means out of memory. */
static void *alloc_array(size_t count, size_t size)
{
    return malloc(count ? count * size : 1);
}

const char *kt_format_name(kt_format f)
{
    switch (f) {
    case KT_TRIPLET: return "triplet";
    case KT_CSC: return "csc";
    case KT_CSR: return "csr";
    case KT_DIA: return "dia";
    case KT_ELL: return "ell";
    }
    return "unknown";
}

int kt_format_parse(const char *name, kt_format *f, kt_error *err)
{
    static const struct { const char *name; kt_format f; } names[] = {
        {"triplet", KT_TRIPLET}, {"coo", KT_TRIPLET}, {"csc", KT_CSC}, {"csr", KT_CSR},
        {"dia", KT_DIA},         {"ell", KT_ELL},     {"ellpack", KT_ELL},
    };
    if (!name || !f)
        return kt_fail(err, KT_EINVAL, "kt_format_parse: NULL argument");
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcasecmp(name, names[k].name) == 0) {
            *f = names[k].f;
            return KT_OK;
        }
    return kt_fail(err, KT_EINVAL,
                   "unknown matrix format '%s' (expected triplet, csc, csr, dia or ell)", name);
}

/* Does A hold what its format says it holds?  Catches NULL and half-built
 * matrices before any kernel dereferences them. */
int kt_matrix_check(const kt_matrix *A, const char *who, kt_error *err)
{
    if (!A)
        return kt_fail(err, KT_EINVAL, "%s: matrix is NULL", who);
    if (A->nrows < 0 || A->ncols < 0)
        return kt_fail(err, KT_EINVAL, "%s: negative dimensions %d x %d", who, A->nrows,
                       A->ncols);
    int ok;
    switch (A->format) {
    case KT_TRIPLET:
        ok = A->cs && A->cs->nz >= 0 && A->cs->m == A->nrows && A->cs->n == A->ncols;
        break;
    case KT_CSC:
        ok = A->cs && A->cs->nz == -1 && A->cs->m == A->nrows && A->cs->n == A->ncols;
        break;
    case KT_CSR: ok = A->row_ptr && A->col_idx && A->val; break;
    case KT_DIA:
        ok = A->ndiags >= 0 && (A->ndiags == 0 || (A->offsets && A->diags));
        break;
    case KT_ELL:
        ok = A->ell_width >= 0 && (A->ell_width == 0 || (A->ell_col && A->ell_val));
        break;
    default: ok = 0;
    }
    if (!ok)
        return kt_fail(err, KT_EINVAL, "%s: malformed %s matrix (%d x %d)", who,
                       kt_format_name(A->format), A->nrows, A->ncols);
    return KT_OK;
}

/* ---- assembly ---- */

int kt_matrix_triplet(int nrows, int ncols, int capacity, kt_matrix **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_matrix_triplet: out is NULL");
    *out = NULL;
    if (nrows < 0 || ncols < 0 || capacity < 0)
        return kt_fail(err, KT_EINVAL,
                       "kt_matrix_triplet: negative size (%d x %d, capacity %d)", nrows, ncols,
                       capacity);
    kt_matrix *T = matrix_new(KT_TRIPLET, nrows, ncols);
    if (T)
        T->cs = cs_spalloc(nrows, ncols, capacity > 0 ? capacity : 1, 1, 1);
    if (!T || !T->cs) {
        kt_matrix_free(T);
        return kt_fail(err, KT_ENOMEM, "kt_matrix_triplet: out of memory for %d entries",
                       capacity);
    }
    *out = T;
    return KT_OK;
}

int kt_matrix_entry(kt_matrix *T, int row, int col, double value, kt_error *err)
{
    if (!T || T->format != KT_TRIPLET || !T->cs)
        return kt_fail(err, KT_EINVAL, "kt_matrix_entry: not a triplet matrix");
    if (row < 0 || row >= T->nrows || col < 0 || col >= T->ncols)
        return kt_fail(err, KT_EINVAL, "kt_matrix_entry: (%d, %d) outside the %d x %d matrix",
                       row, col, T->nrows, T->ncols);
    if (!cs_entry(T->cs, row, col, value))
        return kt_fail(err, KT_ENOMEM, "kt_matrix_entry: out of memory at %d entries",
                       T->cs->nz);
    return KT_OK;
}

/* ---- the hub: any format to a sorted, duplicate-free CSC ---- */

/* Sort row indices within columns (CSparse's trick: transpose twice).
 * Consumes C. */
static cs *csc_sorted(cs *C)
{
    if (!C)
        return NULL;
    cs *T = cs_transpose(C, 1);
    cs_spfree(C);
    if (!T)
        return NULL;
    cs *S = cs_transpose(T, 1);
    cs_spfree(T);
    return S;
}

/* CSR arrays are the CSC arrays of the transpose: a read-only view. */
static cs csr_as_csc_of_transpose(const kt_matrix *A)
{
    cs v = {.nzmax = A->row_ptr[A->nrows], .m = A->ncols, .n = A->nrows,
            .p = A->row_ptr, .i = A->col_idx, .x = A->val, .nz = -1};
    return v;
}

/* Entries of a DIA or ELL matrix, row by row, as a compressed CSC.  Inserted in
 * row order, each column's rows come out ascending from cs_compress.  DIA
 * cannot tell a stored zero from band padding, so its zeros are dropped. */
static cs *banded_to_csc(const kt_matrix *A)
{
    int n = A->nrows;
    size_t slots = A->format == KT_DIA ? (size_t)A->ndiags * (size_t)n
                                       : (size_t)A->ell_width * (size_t)n;
    if (slots > INT32_MAX)
        return NULL;
    cs *T = cs_spalloc(A->nrows, A->ncols, slots > 0 ? (int)slots : 1, 1, 1);
    if (!T)
        return NULL;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (A->format == KT_DIA) {
            for (int d = 0; d < A->ndiags; d++) {
                int j = i + A->offsets[d];
                double v = A->diags[(size_t)d * n + i];
                if (j >= 0 && j < A->ncols && v != 0.0) {
                    T->i[k] = i, T->p[k] = j, T->x[k] = v;
                    k++;
                }
            }
        } else {
            for (int s = 0; s < A->ell_width; s++) {
                int j = A->ell_col[(size_t)s * n + i];
                if (j >= 0) {
                    T->i[k] = i, T->p[k] = j, T->x[k] = A->ell_val[(size_t)s * n + i];
                    k++;
                }
            }
        }
    }
    T->nz = k;
    cs *C = cs_compress(T);
    cs_spfree(T);
    return C;
}

static cs *csc_copy(const cs *A)
{
    int nnz = A->p[A->n];
    cs *C = cs_spalloc(A->m, A->n, nnz > 0 ? nnz : 1, 1, 0);
    if (!C)
        return NULL;
    memcpy(C->p, A->p, (size_t)(A->n + 1) * sizeof *C->p);
    memcpy(C->i, A->i, (size_t)nnz * sizeof *C->i);
    memcpy(C->x, A->x, (size_t)nnz * sizeof *C->x);
    return C;
}

/* A new CSC copy of A (which has passed kt_matrix_check); NULL when out of memory. */
static cs *to_csc(const kt_matrix *A)
{
    switch (A->format) {
    case KT_TRIPLET: {
        cs *C = cs_compress(A->cs);
        if (C && !cs_dupl(C)) {
            cs_spfree(C);
            return NULL;
        }
        return csc_sorted(C);
    }
    case KT_CSC: return csc_copy(A->cs);
    case KT_CSR: {
        cs view = csr_as_csc_of_transpose(A);
        return cs_transpose(&view, 1);
    }
    case KT_DIA:
    case KT_ELL: return banded_to_csc(A);
    }
    return NULL;
}

/* ---- from the hub to every format ---- */

static int out_of_memory(kt_error *err, const char *what, int nrows, int ncols)
{
    return kt_fail(err, KT_ENOMEM, "out of memory building a %d x %d %s matrix", nrows, ncols,
                   what);
}

static int csc_to_triplet(const cs *C, kt_matrix *M)
{
    int nnz = C->p[C->n];
    M->cs = cs_spalloc(C->m, C->n, nnz > 0 ? nnz : 1, 1, 1);
    if (!M->cs)
        return KT_ENOMEM;
    for (int j = 0, k = 0; j < C->n; j++)
        for (int p = C->p[j]; p < C->p[j + 1]; p++, k++) {
            M->cs->i[k] = C->i[p];
            M->cs->p[k] = j;
            M->cs->x[k] = C->x[p];
        }
    M->cs->nz = nnz;
    return KT_OK;
}

static int csc_to_csr(const cs *C, kt_matrix *M)
{
    cs *T = cs_transpose(C, 1); /* rows of C become sorted columns of T */
    if (!T)
        return KT_ENOMEM;
    int nnz = T->p[T->n];
    M->row_ptr = alloc_array((size_t)M->nrows + 1, sizeof *M->row_ptr);
    M->col_idx = alloc_array((size_t)nnz, sizeof *M->col_idx);
    M->val = alloc_array((size_t)nnz, sizeof *M->val);
    if (M->row_ptr && M->col_idx && M->val) {
        memcpy(M->row_ptr, T->p, ((size_t)M->nrows + 1) * sizeof *M->row_ptr);
        memcpy(M->col_idx, T->i, (size_t)nnz * sizeof *M->col_idx);
        memcpy(M->val, T->x, (size_t)nnz * sizeof *M->val);
    }
    cs_spfree(T);
    return M->row_ptr && M->col_idx && M->val ? KT_OK : KT_ENOMEM;
}

/* DIA from CSR: find the distinct offsets col - row, one band each (6.1.2). */
static int csr_to_dia(const kt_matrix *R, kt_matrix *M, size_t cap, kt_error *err)
{
    int n = R->nrows, m = R->ncols;
    size_t span = (size_t)n + (size_t)m; /* offsets -(n-1) .. m-1, shifted by n-1 */
    int *band = alloc_array(span, sizeof *band);
    if (!band)
        return out_of_memory(err, "dia", n, m);
    for (size_t k = 0; k < span; k++)
        band[k] = -1;
    int ndiags = 0;
    for (int i = 0; i < n; i++)
        for (int p = R->row_ptr[i]; p < R->row_ptr[i + 1]; p++) {
            size_t key = (size_t)(R->col_idx[p] - i + n - 1);
            if (band[key] < 0)
                band[key] = ndiags++;
        }
    size_t bytes = (size_t)ndiags * (size_t)n * sizeof(double) + (size_t)ndiags * sizeof(int);
    if (bytes > cap) {
        free(band);
        return kt_fail(err, KT_ENOMEM,
                       "DIA storage of this %d x %d matrix needs %zu bytes (%d bands x %d rows),"
                       " over the cap of %zu bytes",
                       n, m, bytes, ndiags, n, cap);
    }
    /* number the bands in ascending offset order */
    for (size_t key = 0, d = 0; key < span; key++)
        if (band[key] >= 0)
            band[key] = (int)d++;
    M->ndiags = ndiags;
    M->offsets = alloc_array((size_t)ndiags, sizeof *M->offsets);
    M->diags = calloc((size_t)ndiags * (size_t)n + 1, sizeof *M->diags);
    if (!M->offsets || !M->diags) {
        free(band);
        return out_of_memory(err, "dia", n, m);
    }
    for (size_t key = 0; key < span; key++)
        if (band[key] >= 0)
            M->offsets[band[key]] = (int)key - (n - 1);
    for (int i = 0; i < n; i++)
        for (int p = R->row_ptr[i]; p < R->row_ptr[i + 1]; p++) {
            int d = band[R->col_idx[p] - i + n - 1];
            M->diags[(size_t)d * n + i] += R->val[p];
        }
    free(band);
    return KT_OK;
}

/* ELLPACK from CSR: width = longest row; the diagonal entry, where a row has
 * one, goes in slot 0 (the thesis' convention, 6.1.3); padding is col -1. */
static int csr_to_ell(const kt_matrix *R, kt_matrix *M, size_t cap, kt_error *err)
{
    int n = R->nrows, width = 0;
    for (int i = 0; i < n; i++)
        if (R->row_ptr[i + 1] - R->row_ptr[i] > width)
            width = R->row_ptr[i + 1] - R->row_ptr[i];
    size_t slots = (size_t)width * (size_t)n;
    size_t bytes = slots * (sizeof(double) + sizeof(int));
    if (bytes > cap)
        return kt_fail(err, KT_ENOMEM,
                       "ELLPACK storage of this %d x %d matrix needs %zu bytes (width %d x %d "
                       "rows), over the cap of %zu bytes",
                       n, R->ncols, bytes, width, n, cap);
    M->ell_width = width;
    M->ell_col = alloc_array(slots, sizeof *M->ell_col);
    M->ell_val = calloc(slots + 1, sizeof *M->ell_val);
    if (!M->ell_col || !M->ell_val)
        return out_of_memory(err, "ell", n, R->ncols);
    for (size_t k = 0; k < slots; k++)
        M->ell_col[k] = -1;
    for (int i = 0; i < n; i++) {
        int s = 0;
        for (int p = R->row_ptr[i]; p < R->row_ptr[i + 1]; p++)
            if (R->col_idx[p] == i) {
                M->ell_col[i] = i;
                M->ell_val[i] = R->val[p];
                s = 1;
            }
        for (int p = R->row_ptr[i]; p < R->row_ptr[i + 1]; p++)
            if (R->col_idx[p] != i) {
                M->ell_col[(size_t)s * n + i] = R->col_idx[p];
                M->ell_val[(size_t)s * n + i] = R->val[p];
                s++;
            }
    }
    return KT_OK;
}

/* Build a matrix of format `to` from the CSC C, which is consumed. */
static int from_csc(cs *C, kt_format to, size_t cap, kt_matrix **out, kt_error *err)
{
    if (!C)
        return kt_fail(err, KT_ENOMEM, "out of memory in a sparse matrix conversion");
    kt_matrix *M = matrix_new(to, C->m, C->n);
    if (!M) {
        cs_spfree(C);
        return out_of_memory(err, kt_format_name(to), C->m, C->n);
    }
    int rc = KT_OK;
    switch (to) {
    case KT_TRIPLET: rc = csc_to_triplet(C, M); break;
    case KT_CSC:
        M->cs = C;
        C = NULL;
        break;
    case KT_CSR: rc = csc_to_csr(C, M); break;
    case KT_DIA:
    case KT_ELL: {
        kt_matrix R = {.format = KT_CSR, .nrows = C->m, .ncols = C->n};
        rc = csc_to_csr(C, &R);
        if (rc == KT_OK) /* these two write their own message (the cap, mostly) */
            rc = to == KT_DIA ? csr_to_dia(&R, M, cap, err) : csr_to_ell(&R, M, cap, err);
        else
            out_of_memory(err, kt_format_name(to), M->nrows, M->ncols);
        free(R.row_ptr);
        free(R.col_idx);
        free(R.val);
        break;
    }
    }
    if (rc != KT_OK && (to == KT_TRIPLET || to == KT_CSR))
        out_of_memory(err, kt_format_name(to), M->nrows, M->ncols);
    cs_spfree(C);
    if (rc != KT_OK) {
        kt_matrix_free(M);
        return rc;
    }
    *out = M;
    return KT_OK;
}

/* ---- conversion, copies ---- */

static int copy_same_format(const kt_matrix *A, kt_matrix **out, kt_error *err)
{
    kt_matrix *M = matrix_new(A->format, A->nrows, A->ncols);
    if (!M)
        return out_of_memory(err, kt_format_name(A->format), A->nrows, A->ncols);
    int ok = 1;
    size_t n = (size_t)A->nrows;
    switch (A->format) {
    case KT_TRIPLET:
        M->cs = cs_spalloc(A->nrows, A->ncols, A->cs->nzmax, 1, 1);
        if ((ok = M->cs != NULL)) {
            memcpy(M->cs->i, A->cs->i, (size_t)A->cs->nz * sizeof(int));
            memcpy(M->cs->p, A->cs->p, (size_t)A->cs->nz * sizeof(int));
            memcpy(M->cs->x, A->cs->x, (size_t)A->cs->nz * sizeof(double));
            M->cs->nz = A->cs->nz;
        }
        break;
    case KT_CSC: ok = (M->cs = csc_copy(A->cs)) != NULL; break;
    case KT_CSR: {
        size_t nnz = (size_t)A->row_ptr[A->nrows];
        M->row_ptr = alloc_array(n + 1, sizeof(int));
        M->col_idx = alloc_array(nnz, sizeof(int));
        M->val = alloc_array(nnz, sizeof(double));
        if ((ok = M->row_ptr && M->col_idx && M->val)) {
            memcpy(M->row_ptr, A->row_ptr, (n + 1) * sizeof(int));
            memcpy(M->col_idx, A->col_idx, nnz * sizeof(int));
            memcpy(M->val, A->val, nnz * sizeof(double));
        }
        break;
    }
    case KT_DIA: {
        size_t slots = (size_t)A->ndiags * n;
        M->ndiags = A->ndiags;
        M->offsets = alloc_array((size_t)A->ndiags, sizeof(int));
        M->diags = alloc_array(slots, sizeof(double));
        if ((ok = M->offsets && M->diags)) {
            memcpy(M->offsets, A->offsets, (size_t)A->ndiags * sizeof(int));
            memcpy(M->diags, A->diags, slots * sizeof(double));
        }
        break;
    }
    case KT_ELL: {
        size_t slots = (size_t)A->ell_width * n;
        M->ell_width = A->ell_width;
        M->ell_col = alloc_array(slots, sizeof(int));
        M->ell_val = alloc_array(slots, sizeof(double));
        if ((ok = M->ell_col && M->ell_val)) {
            memcpy(M->ell_col, A->ell_col, slots * sizeof(int));
            memcpy(M->ell_val, A->ell_val, slots * sizeof(double));
        }
        break;
    }
    }
    if (!ok) {
        kt_matrix_free(M);
        return out_of_memory(err, kt_format_name(A->format), A->nrows, A->ncols);
    }
    *out = M;
    return KT_OK;
}

static int valid_format(kt_format f)
{
    return f == KT_TRIPLET || f == KT_CSC || f == KT_CSR || f == KT_DIA || f == KT_ELL;
}

int kt_matrix_convert(const kt_matrix *A, kt_format to, size_t cap_bytes, kt_matrix **out,
                      kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_matrix_convert: out is NULL");
    *out = NULL;
    int rc = kt_matrix_check(A, "kt_matrix_convert", err);
    if (rc != KT_OK)
        return rc;
    if (!valid_format(to))
        return kt_fail(err, KT_EINVAL, "kt_matrix_convert: unknown target format %d", (int)to);
    if (to == A->format)
        return copy_same_format(A, out, err);
    return from_csc(to_csc(A), to, cap_bytes ? cap_bytes : KT_DEFAULT_DENSE_CAP_BYTES, out, err);
}

/* ---- algebra ---- */

int kt_matrix_transpose(const kt_matrix *A, kt_matrix **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_matrix_transpose: out is NULL");
    *out = NULL;
    int rc = kt_matrix_check(A, "kt_matrix_transpose", err);
    if (rc != KT_OK)
        return rc;
    cs *C = to_csc(A);
    cs *T = C ? cs_transpose(C, 1) : NULL;
    cs_spfree(C);
    return from_csc(T, A->format, KT_DEFAULT_DENSE_CAP_BYTES, out, err);
}

int kt_matrix_scale(kt_matrix *A, double alpha, kt_error *err)
{
    int rc = kt_matrix_check(A, "kt_matrix_scale", err);
    if (rc != KT_OK)
        return rc;
    double *v = NULL;
    size_t count = 0;
    switch (A->format) {
    case KT_TRIPLET: v = A->cs->x, count = (size_t)A->cs->nz; break;
    case KT_CSC: v = A->cs->x, count = (size_t)A->cs->p[A->ncols]; break;
    case KT_CSR: v = A->val, count = (size_t)A->row_ptr[A->nrows]; break;
    case KT_DIA: v = A->diags, count = (size_t)A->ndiags * (size_t)A->nrows; break;
    case KT_ELL: v = A->ell_val, count = (size_t)A->ell_width * (size_t)A->nrows; break;
    }
    for (size_t k = 0; k < count; k++)
        v[k] *= alpha;
    return KT_OK;
}

int kt_matrix_add(const kt_matrix *A, const kt_matrix *B, double alpha, double beta,
                  kt_matrix **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_matrix_add: out is NULL");
    *out = NULL;
    int rc = kt_matrix_check(A, "kt_matrix_add", err);
    if (rc == KT_OK)
        rc = kt_matrix_check(B, "kt_matrix_add", err);
    if (rc != KT_OK)
        return rc;
    if (A->nrows != B->nrows || A->ncols != B->ncols)
        return kt_fail(err, KT_EINVAL, "kt_matrix_add: dimension mismatch, %d x %d + %d x %d",
                       A->nrows, A->ncols, B->nrows, B->ncols);
    cs *CA = to_csc(A), *CB = to_csc(B);
    cs *S = CA && CB ? cs_add(CA, CB, alpha, beta) : NULL;
    cs_spfree(CA);
    cs_spfree(CB);
    return from_csc(csc_sorted(S), A->format, KT_DEFAULT_DENSE_CAP_BYTES, out, err);
}

int kt_matrix_multiply(const kt_matrix *A, const kt_matrix *B, kt_matrix **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_matrix_multiply: out is NULL");
    *out = NULL;
    int rc = kt_matrix_check(A, "kt_matrix_multiply", err);
    if (rc == KT_OK)
        rc = kt_matrix_check(B, "kt_matrix_multiply", err);
    if (rc != KT_OK)
        return rc;
    if (A->ncols != B->nrows)
        return kt_fail(err, KT_EINVAL,
                       "kt_matrix_multiply: dimension mismatch, %d x %d times %d x %d", A->nrows,
                       A->ncols, B->nrows, B->ncols);
    cs *CA = to_csc(A), *CB = to_csc(B);
    cs *P = CA && CB ? cs_multiply(CA, CB) : NULL;
    cs_spfree(CA);
    cs_spfree(CB);
    return from_csc(csc_sorted(P), A->format, KT_DEFAULT_DENSE_CAP_BYTES, out, err);
}

/* ---- sizes ---- */

/* Rows i of band `offset` that lie inside the matrix. */
static int band_length(int nrows, int ncols, int offset)
{
    int lo = offset < 0 ? -offset : 0;
    int hi = ncols - offset < nrows ? ncols - offset : nrows;
    return hi > lo ? hi - lo : 0;
}

int kt_matrix_nnz(const kt_matrix *A)
{
    if (kt_matrix_check(A, "kt_matrix_nnz", NULL) != KT_OK)
        return KT_EINVAL;
    switch (A->format) {
    case KT_TRIPLET: return A->cs->nz;
    case KT_CSC: return A->cs->p[A->ncols];
    case KT_CSR: return A->row_ptr[A->nrows];
    case KT_DIA: {
        int nnz = 0;
        for (int d = 0; d < A->ndiags; d++)
            nnz += band_length(A->nrows, A->ncols, A->offsets[d]);
        return nnz;
    }
    case KT_ELL: {
        size_t slots = (size_t)A->ell_width * (size_t)A->nrows;
        int nnz = 0;
        for (size_t k = 0; k < slots; k++)
            nnz += A->ell_col[k] >= 0;
        return nnz;
    }
    }
    return KT_EINVAL;
}

size_t kt_matrix_bytes(const kt_matrix *A)
{
    if (kt_matrix_check(A, "kt_matrix_bytes", NULL) != KT_OK)
        return 0;
    size_t n = (size_t)A->nrows, entry = sizeof(int) + sizeof(double);
    switch (A->format) {
    case KT_TRIPLET: return (size_t)A->cs->nz * (entry + sizeof(int));
    case KT_CSC: return ((size_t)A->ncols + 1) * sizeof(int) + (size_t)A->cs->p[A->ncols] * entry;
    case KT_CSR: return (n + 1) * sizeof(int) + (size_t)A->row_ptr[A->nrows] * entry;
    case KT_DIA: return (size_t)A->ndiags * (sizeof(int) + n * sizeof(double));
    case KT_ELL: return (size_t)A->ell_width * n * entry;
    }
    return 0;
}
