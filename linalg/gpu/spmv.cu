/* spmv.cu - matrix by vector products on the GPU in both of the thesis'
 * gaxpy modes (7.3.3): CSR through cuSPARSE, DIA and ELLPACK by Kettle's
 * kernels (thesis 6.4; a thread a row, the CPU's order of terms), and the
 * matrix-free stencil of linalg/kt_stencil.c.  docs/gpu.md, "The API". */
#include "kt_cuda.h"
#include "kt_cuda_kernel.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdlib.h>
#include <string.h>

struct kt_cuda_matrix {
    kt_format format;
    int nrows, ncols, nnz;
    size_t bytes;
    /* CSR */
    int *row_ptr, *col_idx;
    double *val;
    cusparseHandle_t sparse;
    cusparseSpMatDescr_t descr;
    cusparseDnVecDescr_t vec_x, vec_y;
    void *buffer;
    int preprocessed;
    /* DIA */
    int ndiags;
    int *offsets;
    double *diags;
    int dia_lo, dia_hi;         /* rows with every band inside x: [dia_lo, dia_hi) */
    /* ELL */
    int ell_width;
    int *ell_col;
    double *ell_val;
};

static int sparse_fail(kt_error *err, cusparseStatus_t s, const char *doing)
{
    return kt_fail(err, KT_EIO, "cuSPARSE error %s: %s", doing, cusparseGetErrorString(s));
}

/* ---- kernels ---- */

template <bool ACCUMULATE>
__global__ void dia_kernel(int nrows, int ncols, int ndiags, const int *__restrict__ offsets,
                           const double *__restrict__ diags, const double *__restrict__ x,
                           double *__restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nrows)
        return;
    double s = 0.0;
#pragma unroll 4
    for (int d = 0; d < ndiags; d++) {
        int j = i + __ldg(offsets + d);
        if (j >= 0 && j < ncols)
            s += __ldcs(diags + (size_t)d * nrows + i) * __ldg(x + j);
    }
    y[i] = ACCUMULATE ? y[i] + s : s;
}

/* DIA with NB bands known at compile time, two rows a thread: every band's
 * two values in one 16-byte load and all NB of them issued before the
 * first is used, so a thread has NB loads in flight instead of a few (the
 * 13-band product at 1M rows is bound by DRAM, and the bytes in flight set
 * how close it gets).  Rows [lo, hi) have every band inside x; the rest take
 * the checked loop.  Needs nrows even (16-byte aligned bands); the same sum
 * order as dia_kernel. */
template <bool ACCUMULATE, int NB>
__global__ void dia_pair_kernel(int nrows, int ncols, int lo, int hi,
                                const int *__restrict__ offsets, const double *__restrict__ diags,
                                const double *__restrict__ x, double *__restrict__ y)
{
    const int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= nrows)
        return;
    int off[NB];
#pragma unroll
    for (int d = 0; d < NB; d++)
        off[d] = __ldg(offsets + d);
    double s0 = 0.0, s1 = 0.0;
    if (i >= lo && i + 1 < hi) {
        double2 a[NB];
#pragma unroll
        for (int d = 0; d < NB; d++)
            a[d] = __ldcs((const double2 *)(diags + (size_t)d * nrows + i));
#pragma unroll
        for (int d = 0; d < NB; d++) {
            s0 += a[d].x * __ldg(x + i + off[d]);
            s1 += a[d].y * __ldg(x + i + 1 + off[d]);
        }
    } else
#pragma unroll
        for (int d = 0; d < NB; d++) {
            const int j = i + off[d];
            if (j >= 0 && j < ncols)
                s0 += __ldcs(diags + (size_t)d * nrows + i) * __ldg(x + j);
            if (j + 1 >= 0 && j + 1 < ncols)
                s1 += __ldcs(diags + (size_t)d * nrows + i + 1) * __ldg(x + j + 1);
        }
    y[i] = ACCUMULATE ? y[i] + s0 : s0;
    y[i + 1] = ACCUMULATE ? y[i + 1] + s1 : s1;
}

template <bool ACCUMULATE>
__global__ void ell_kernel(int nrows, int width, const int *__restrict__ col,
                           const double *__restrict__ val, const double *__restrict__ x,
                           double *__restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nrows)
        return;
    double s = 0.0;
#pragma unroll 4
    for (int k = 0; k < width; k++) {
        size_t slot = (size_t)k * nrows + i;
        int j = __ldcs(col + slot);
        if (j >= 0)
            s += __ldcs(val + slot) * __ldg(x + j);
    }
    y[i] = ACCUMULATE ? y[i] + s : s;
}

/* ---- upload ---- */

template <typename T>
static int upload_array(T **dst, const T *src, size_t count, size_t *bytes, kt_error *err)
{
    int rc = kt_cuda_alloc(count * sizeof(T), (void **)dst, err);
    if (rc == KT_OK && count)
        rc = kt_cuda_upload(*dst, src, count * sizeof(T), err);
    *bytes += count * sizeof(T);
    return rc;
}

static int upload_csr(kt_cuda_matrix *M, const kt_matrix *A, kt_error *err)
{
    const size_t nnz = (size_t)A->row_ptr[A->nrows];
    M->nnz = (int)nnz;
    int rc = upload_array(&M->row_ptr, A->row_ptr, (size_t)A->nrows + 1, &M->bytes, err);
    if (rc == KT_OK)
        rc = upload_array(&M->col_idx, A->col_idx, nnz, &M->bytes, err);
    if (rc == KT_OK)
        rc = upload_array(&M->val, A->val, nnz, &M->bytes, err);
    if (rc < 0)
        return rc;
    cusparseStatus_t s = cusparseCreate(&M->sparse);
    if (s != CUSPARSE_STATUS_SUCCESS) {
        M->sparse = NULL;
        return sparse_fail(err, s, "creating a handle");
    }
    s = cusparseCreateCsr(&M->descr, A->nrows, A->ncols, (int64_t)nnz, M->row_ptr, M->col_idx,
                          M->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
    if (s != CUSPARSE_STATUS_SUCCESS) {
        M->descr = NULL;
        return sparse_fail(err, s, "describing a CSR matrix");
    }
    return KT_OK;
}

static int upload_dia(kt_cuda_matrix *M, const kt_matrix *A, kt_error *err)
{
    M->ndiags = A->ndiags;
    int lo = 0, hi = A->nrows;
    for (int d = 0; d < A->ndiags; d++) {
        lo = -A->offsets[d] > lo ? -A->offsets[d] : lo;
        hi = A->ncols - A->offsets[d] < hi ? A->ncols - A->offsets[d] : hi;
    }
    M->dia_lo = lo;
    M->dia_hi = hi;
    int rc = upload_array(&M->offsets, A->offsets, (size_t)A->ndiags, &M->bytes, err);
    if (rc == KT_OK)
        rc = upload_array(&M->diags, A->diags, (size_t)A->ndiags * A->nrows, &M->bytes, err);
    return rc;
}

static int upload_ell(kt_cuda_matrix *M, const kt_matrix *A, kt_error *err)
{
    M->ell_width = A->ell_width;
    size_t slots = (size_t)A->ell_width * A->nrows;
    int rc = upload_array(&M->ell_col, A->ell_col, slots, &M->bytes, err);
    if (rc == KT_OK)
        rc = upload_array(&M->ell_val, A->ell_val, slots, &M->bytes, err);
    return rc;
}

extern "C" int kt_cuda_matrix_upload(const kt_matrix *A, kt_cuda_matrix **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_cuda_matrix_upload: out is NULL");
    *out = NULL;
    if (!A)
        return kt_fail(err, KT_EINVAL, "kt_cuda_matrix_upload: matrix is NULL");
    if (A->format != KT_CSR && A->format != KT_DIA && A->format != KT_ELL)
        return kt_fail(err, KT_ENOTSUP,
                       "the GPU holds CSR, DIA and ELL matrices, not %s: convert first",
                       kt_format_name(A->format));
    kt_cuda_matrix *M = (kt_cuda_matrix *)calloc(1, sizeof *M);
    if (!M)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU matrix");
    M->format = A->format;
    M->nrows = A->nrows;
    M->ncols = A->ncols;
    int rc = A->format == KT_CSR   ? upload_csr(M, A, err)
             : A->format == KT_DIA ? upload_dia(M, A, err)
                                   : upload_ell(M, A, err);
    if (rc < 0) {
        kt_cuda_matrix_free(M);
        return rc;
    }
    *out = M;
    return KT_OK;
}

extern "C" void kt_cuda_matrix_free(kt_cuda_matrix *M)
{
    if (!M)
        return;
    if (M->vec_x)
        cusparseDestroyDnVec(M->vec_x);
    if (M->vec_y)
        cusparseDestroyDnVec(M->vec_y);
    if (M->descr)
        cusparseDestroySpMat(M->descr);
    if (M->sparse)
        cusparseDestroy(M->sparse);
    kt_cuda_free(M->buffer);
    kt_cuda_free(M->row_ptr);
    kt_cuda_free(M->col_idx);
    kt_cuda_free(M->val);
    kt_cuda_free(M->offsets);
    kt_cuda_free(M->diags);
    kt_cuda_free(M->ell_col);
    kt_cuda_free(M->ell_val);
    free(M);
}

extern "C" kt_format kt_cuda_matrix_format(const kt_cuda_matrix *M) { return M->format; }
extern "C" size_t kt_cuda_matrix_bytes(const kt_cuda_matrix *M) { return M->bytes; }

/* ---- products ---- */

/* Points the cached dense-vector descriptors at x and y (created on first use). */
static int csr_vectors(kt_cuda_matrix *M, const double *x, double *y, kt_error *err)
{
    cusparseStatus_t s;
    if (!M->vec_x) {
        s = cusparseCreateDnVec(&M->vec_x, M->ncols, (void *)x, CUDA_R_64F);
        if (s != CUSPARSE_STATUS_SUCCESS) {
            M->vec_x = NULL;
            return sparse_fail(err, s, "describing x");
        }
        s = cusparseCreateDnVec(&M->vec_y, M->nrows, (void *)y, CUDA_R_64F);
        if (s != CUSPARSE_STATUS_SUCCESS) {
            M->vec_y = NULL;
            return sparse_fail(err, s, "describing y");
        }
        return KT_OK;
    }
    s = cusparseDnVecSetValues(M->vec_x, (void *)x);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseDnVecSetValues(M->vec_y, (void *)y);
    return s == CUSPARSE_STATUS_SUCCESS ? KT_OK : sparse_fail(err, s, "setting x and y");
}

/* The work buffer is sized once, for the larger of the two modes, and the
 * matrix is analysed (preprocessed) once: both are costs of set-up, not of
 * the product. */
static int csr_prepare(kt_cuda_matrix *M, kt_error *err)
{
    if (M->preprocessed)
        return KT_OK;
    const double one = 1.0, zero = 0.0;
    size_t size0 = 0, size1 = 0;
    cusparseStatus_t s =
        cusparseSpMV_bufferSize(M->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, M->descr,
                                M->vec_x, &zero, M->vec_y, CUDA_R_64F,
                                CUSPARSE_SPMV_CSR_ALG1, &size0);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseSpMV_bufferSize(M->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                    M->descr, M->vec_x, &one, M->vec_y, CUDA_R_64F,
                                    CUSPARSE_SPMV_CSR_ALG1, &size1);
    if (s != CUSPARSE_STATUS_SUCCESS)
        return sparse_fail(err, s, "sizing the SpMV buffer");
    int rc = kt_cuda_alloc(size0 > size1 ? size0 : size1, &M->buffer, err);
    if (rc < 0)
        return rc;
    s = cusparseSpMV_preprocess(M->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, M->descr,
                                M->vec_x, &zero, M->vec_y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1,
                                M->buffer);
    if (s != CUSPARSE_STATUS_SUCCESS)
        return sparse_fail(err, s, "analysing the matrix");
    M->preprocessed = 1;
    return KT_OK;
}

static int csr_spmv(kt_cuda_matrix *M, const double *x, double *y, int accumulate,
                    cudaStream_t stream, kt_error *err)
{
    if (M->nnz == 0) {
        cudaError_t e = accumulate ? cudaSuccess
                                   : cudaMemsetAsync(y, 0, (size_t)M->nrows * sizeof(double),
                                                     stream);
        return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "clearing y");
    }
    cusparseStatus_t bs = cusparseSetStream(M->sparse, stream);
    if (bs != CUSPARSE_STATUS_SUCCESS)
        return sparse_fail(err, bs, "choosing the stream");
    int rc = csr_vectors(M, x, y, err);
    if (rc == KT_OK)
        rc = csr_prepare(M, err);
    if (rc < 0)
        return rc;
    const double one = 1.0, beta = accumulate ? 1.0 : 0.0;
    cusparseStatus_t s = cusparseSpMV(M->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                      M->descr, M->vec_x, &beta, M->vec_y, CUDA_R_64F,
                                      CUSPARSE_SPMV_CSR_ALG1, M->buffer);
    return s == CUSPARSE_STATUS_SUCCESS ? KT_OK : sparse_fail(err, s, "in SpMV");
}

/* The two-rows kernel for the band counts of the thesis' matrices (5 and
 * 13), the one-row kernel otherwise. */
template <bool ACCUMULATE>
static void dia_launch(const kt_cuda_matrix *M, const double *x, double *y, cudaStream_t stream)
{
    const unsigned pairs = kt_cuda_blocks((M->nrows + 1) / 2, KT_CUDA_BLOCK);
    const bool even = M->nrows % 2 == 0;
    if (even && M->ndiags == 13)
        dia_pair_kernel<ACCUMULATE, 13><<<pairs, KT_CUDA_BLOCK, 0, stream>>>(
            M->nrows, M->ncols, M->dia_lo, M->dia_hi, M->offsets, M->diags, x, y);
    else if (even && M->ndiags == 5)
        dia_pair_kernel<ACCUMULATE, 5><<<pairs, KT_CUDA_BLOCK, 0, stream>>>(
            M->nrows, M->ncols, M->dia_lo, M->dia_hi, M->offsets, M->diags, x, y);
    else
        dia_kernel<ACCUMULATE><<<kt_cuda_blocks(M->nrows, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0,
                                 stream>>>(M->nrows, M->ncols, M->ndiags, M->offsets, M->diags,
                                           x, y);
}

static int dia_spmv(const kt_cuda_matrix *M, const double *x, double *y, int accumulate,
                    cudaStream_t stream, kt_error *err)
{
    if (accumulate)
        dia_launch<true>(M, x, y, stream);
    else
        dia_launch<false>(M, x, y, stream);
    return kt_cuda_launch_check(err, "launching the DIA kernel");
}

int kt_cuda_spmv_on(kt_cuda_matrix *M, const double *x, double *y, int accumulate,
                    cudaStream_t stream, kt_error *err)
{
    if (!M || !x || !y)
        return kt_fail(err, KT_EINVAL, "kt_cuda_spmv: NULL matrix or vector");
    if (M->nrows == 0)
        return KT_OK;
    const unsigned blocks = kt_cuda_blocks(M->nrows, KT_CUDA_BLOCK);
    switch (M->format) {
    case KT_CSR:
        return csr_spmv(M, x, y, accumulate, stream, err);
    case KT_DIA:
        return dia_spmv(M, x, y, accumulate, stream, err);
    case KT_ELL:
        if (accumulate)
            ell_kernel<true><<<blocks, KT_CUDA_BLOCK, 0, stream>>>(M->nrows, M->ell_width,
                                                                   M->ell_col, M->ell_val, x, y);
        else
            ell_kernel<false><<<blocks, KT_CUDA_BLOCK, 0, stream>>>(M->nrows, M->ell_width,
                                                                    M->ell_col, M->ell_val, x, y);
        return kt_cuda_launch_check(err, "launching the ELL kernel");
    default:
        return kt_fail(err, KT_ENOTSUP, "kt_cuda_spmv: format %s", kt_format_name(M->format));
    }
}

extern "C" int kt_cuda_spmv(kt_cuda_matrix *M, const double *x, double *y, int accumulate,
                            kt_error *err)
{
    return kt_cuda_spmv_on(M, x, y, accumulate, 0, err);
}

/* ---- the matrix-free stencil (linalg/kt_stencil.c's formulas) ---- */

struct kt_cuda_stencil {
    int n, points;
    double c0, c1, c2;
    unsigned char *mask, *nmask;
};

extern "C" int kt_cuda_stencil_upload(const kt_stencil *s, kt_cuda_stencil **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_cuda_stencil_upload: out is NULL");
    *out = NULL;
    if (!s || !s->nmask || !s->mask)
        return kt_fail(err, KT_EINVAL, "kt_cuda_stencil_upload: stencil is not initialised");
    kt_cuda_stencil *S = (kt_cuda_stencil *)calloc(1, sizeof *S);
    if (!S)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU stencil");
    S->n = s->n;
    S->points = s->points;
    S->c0 = s->c0;
    S->c1 = s->c1;
    S->c2 = s->c2;
    size_t points = (size_t)s->n * s->n, bytes = 0;
    int rc = upload_array(&S->mask, s->mask, points, &bytes, err);
    if (rc == KT_OK)
        rc = upload_array(&S->nmask, s->nmask, points, &bytes, err);
    if (rc < 0) {
        kt_cuda_stencil_free(S);
        return rc;
    }
    *out = S;
    return KT_OK;
}

extern "C" void kt_cuda_stencil_free(kt_cuda_stencil *S)
{
    if (!S)
        return;
    kt_cuda_free(S->mask);
    kt_cuda_free(S->nmask);
    free(S);
}

struct stencil_view {
    int n;
    const unsigned char *__restrict__ mask;
    const double *__restrict__ x;
    __device__ double m(int i, int j) const
    {
        return i >= 0 && i < n && j >= 0 && j < n ? (double)__ldg(mask + i * n + j) : 0.0;
    }
    __device__ double mx(int i, int j) const
    {
        return i >= 0 && i < n && j >= 0 && j < n && __ldg(mask + i * n + j)
                   ? __ldg(x + i * n + j)
                   : 0.0;
    }
};

/* One thread per grid point, j fastest so a warp reads a row segment. */
template <int POINTS, bool ACCUMULATE>
__global__ void stencil_kernel(stencil_view v, const unsigned char *__restrict__ nmask,
                               double k0, double k1, double k2, double *__restrict__ y)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= v.n)
        return;
    const int p = i * v.n + j;
    double out = 0.0;
    if (__ldg(v.mask + p)) {
        double S1 = v.mx(i - 1, j) + v.mx(i + 1, j) + v.mx(i, j - 1) + v.mx(i, j + 1);
        if (POINTS == 5) {
            out = k0 * __ldg(v.x + p) + k1 * S1;
        } else {
            double mN = v.m(i - 1, j), mS = v.m(i + 1, j), mW = v.m(i, j - 1),
                   mE = v.m(i, j + 1);
            double T = (mN + mW) * v.mx(i - 1, j - 1) + (mN + mE) * v.mx(i - 1, j + 1) +
                       (mS + mW) * v.mx(i + 1, j - 1) + (mS + mE) * v.mx(i + 1, j + 1) +
                       mN * v.mx(i - 2, j) + mS * v.mx(i + 2, j) + mW * v.mx(i, j - 2) +
                       mE * v.mx(i, j + 2);
            out = (k0 + k2 * __ldg(nmask + p)) * __ldg(v.x + p) + k1 * S1 + k2 * T;
        }
    }
    y[p] = ACCUMULATE ? y[p] + out : out;
}

template <int POINTS>
static void launch_stencil(const kt_cuda_stencil *S, const double *x, double *y,
                           int accumulate)
{
    dim3 grid(kt_cuda_blocks(S->n, 128), (unsigned)S->n);
    stencil_view v = {S->n, S->mask, x};
    const double k0 = POINTS == 5 ? S->c0 - 4.0 * S->c1 : S->c0 - 4.0 * S->c1 + 16.0 * S->c2;
    const double k1 = POINTS == 5 ? S->c1 : S->c1 - 8.0 * S->c2;
    if (accumulate)
        stencil_kernel<POINTS, true><<<grid, 128>>>(v, S->nmask, k0, k1, S->c2, y);
    else
        stencil_kernel<POINTS, false><<<grid, 128>>>(v, S->nmask, k0, k1, S->c2, y);
}

extern "C" int kt_cuda_stencil_apply(const kt_cuda_stencil *S, const double *x, double *y,
                                     int accumulate, kt_error *err)
{
    if (!S || !x || !y)
        return kt_fail(err, KT_EINVAL, "kt_cuda_stencil_apply: NULL stencil or vector");
    if (S->points == 5)
        launch_stencil<5>(S, x, y, accumulate);
    else
        launch_stencil<13>(S, x, y, accumulate);
    return kt_cuda_launch_check(err, "launching the stencil kernel");
}

/* ---- the matrix-free band operator ---- */

struct band_set {
    int nbands;
    int offsets[KT_CUDA_MAX_BANDS];
    double values[KT_CUDA_MAX_BANDS];
};

/* The bands travel in the kernel's parameters (constant memory): only x is
 * read and y written. */
template <bool ACCUMULATE>
__global__ void band_kernel(int n, band_set b, const double *__restrict__ x,
                            double *__restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double s = 0.0;
#pragma unroll 13
    for (int d = 0; d < b.nbands; d++) {
        int j = i + b.offsets[d];
        if (j >= 0 && j < n)
            s += b.values[d] * __ldg(x + j);
    }
    y[i] = ACCUMULATE ? y[i] + s : s;
}

extern "C" int kt_cuda_bands_apply(int n, int nbands, const int *offsets, const double *values,
                                   const double *x, double *y, int accumulate, kt_error *err)
{
    if (n < 0 || nbands < 0 || nbands > KT_CUDA_MAX_BANDS || !x || !y ||
        (nbands && (!offsets || !values)))
        return kt_fail(err, KT_EINVAL, "kt_cuda_bands_apply: bad arguments (%d bands, at most %d)",
                       nbands, KT_CUDA_MAX_BANDS);
    if (n == 0)
        return KT_OK;
    band_set b;
    memset(&b, 0, sizeof b);
    b.nbands = nbands;
    for (int d = 0; d < nbands; d++) {
        b.offsets[d] = offsets[d];
        b.values[d] = values[d];
    }
    const unsigned blocks = kt_cuda_blocks(n, KT_CUDA_BLOCK);
    if (accumulate)
        band_kernel<true><<<blocks, KT_CUDA_BLOCK>>>(n, b, x, y);
    else
        band_kernel<false><<<blocks, KT_CUDA_BLOCK>>>(n, b, x, y);
    return kt_cuda_launch_check(err, "launching the band kernel");
}
