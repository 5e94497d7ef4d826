/* test_gpu_spmv.c - the GPU's sparse products agree with the CPU's: CSR
 * (cuSPARSE), DIA and ELL (Kettle's kernels) in both gaxpy modes on a
 * 13-band matrix, a rectangular matrix and a masked membrane stencil's
 * matrix; the matrix-free stencil on the device against the CPU stencil;
 * the cuBLAS dot and axpy against kt_dot and kt_axpy.  Agreement within
 * 1e-10 relative in double.  Skipped (77) without a GPU or a CUDA build. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_spmv: built without CUDA, skipped\n");
    return 77;
}
#else

#include "bench_bandwidth.h"
#include "kt_cuda.h"
#include "kt_linalg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-10

/* Deterministic values in [-1, 1). */
static double next_value(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 4503599627370496.0 - 1.0;
}

static void fill(double *v, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        v[i] = next_value(&seed);
}

/* Largest |a - b| over max |b|. */
static double relative_error(const double *a, const double *b, int n)
{
    double diff = 0, scale = 0;
    for (int i = 0; i < n; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

/* A banded matrix with the given offsets and pseudo-random values (a band
 * entry is left out now and then, so DIA stores zeros and ELL pads). */
static kt_matrix *banded(int nrows, int ncols, const int *offsets, int nbands, uint64_t seed)
{
    kt_matrix *T = NULL;
    kt_error err;
    if (kt_matrix_triplet(nrows, ncols, nrows * nbands, &T, &err) != KT_OK)
        return NULL;
    for (int i = 0; i < nrows; i++)
        for (int d = 0; d < nbands; d++) {
            int j = i + offsets[d];
            double v = next_value(&seed);
            if (j >= 0 && j < ncols && fabs(v) > 0.05)
                kt_matrix_entry(T, i, j, v, &err);
        }
    return T;
}

/* y = A x and y += A x on the device in `format`, against the CPU's CSR product. */
static void check_format(const kt_matrix *T, kt_format format, const char *what)
{
    kt_error err;
    kt_matrix *A = NULL, *C = NULL;
    int rc = kt_matrix_convert(T, format, 0, &A, &err);
    KT_CHECK(rc == KT_OK, "%s: convert to %s: %s", what, kt_format_name(format), err.message);
    rc = kt_matrix_convert(T, KT_CSR, 0, &C, &err);
    KT_CHECK(rc == KT_OK, "%s: convert to csr: %s", what, err.message);
    if (!A || !C) {
        kt_matrix_free(A);
        kt_matrix_free(C);
        return;
    }
    const int m = A->nrows, n = A->ncols;
    double *x = malloc(n * sizeof *x), *y0 = malloc(m * sizeof *y0);
    double *want = malloc(m * sizeof *want), *got = malloc(m * sizeof *got);
    fill(x, n, 7);
    fill(y0, m, 11);
    double *dx = NULL, *dy = NULL;
    kt_cuda_matrix *M = NULL;
    rc = kt_cuda_matrix_upload(A, &M, &err);
    KT_CHECK(rc == KT_OK, "%s: upload %s: %s", what, kt_format_name(format), err.message);
    KT_CHECK(rc != KT_OK || kt_cuda_matrix_format(M) == format, "%s: format kept", what);
    if (rc == KT_OK && kt_cuda_alloc(n * sizeof *x, (void **)&dx, &err) == KT_OK &&
        kt_cuda_alloc(m * sizeof *x, (void **)&dy, &err) == KT_OK) {
        for (int accumulate = 0; accumulate <= 1; accumulate++) {
            memcpy(want, y0, m * sizeof *want);
            kt_spmv(C, x, want, accumulate, 1, &err);
            kt_cuda_upload(dx, x, n * sizeof *x, &err);
            kt_cuda_upload(dy, y0, m * sizeof *y0, &err);
            rc = kt_cuda_spmv(M, dx, dy, accumulate, &err);
            if (rc == KT_OK)
                rc = kt_cuda_sync(&err);
            KT_CHECK(rc == KT_OK, "%s %s: %s", what, kt_format_name(format), err.message);
            kt_cuda_download(got, dy, m * sizeof *got, &err);
            double e = relative_error(got, want, m);
            KT_CHECK(e <= TOL, "%s, %s, accumulate %d: relative error %.3g", what,
                     kt_format_name(format), accumulate, e);
        }
    }
    kt_cuda_free(dx);
    kt_cuda_free(dy);
    kt_cuda_matrix_free(M);
    kt_matrix_free(A);
    kt_matrix_free(C);
    free(x);
    free(y0);
    free(want);
    free(got);
}

static void check_all_formats(const kt_matrix *T, const char *what)
{
    check_format(T, KT_CSR, what);
    check_format(T, KT_DIA, what);
    check_format(T, KT_ELL, what);
}

static void test_banded(void)
{
    static const int thirteen[13] = {-15, -9, -8, -7, -2, -1, 0, 1, 2, 7, 8, 9, 15};
    kt_matrix *T = banded(20011, 20011, thirteen, 13, 3);
    KT_CHECK(T != NULL, "13-band matrix");
    if (T)
        check_all_formats(T, "13-band");
    kt_matrix_free(T);
    /* An even row count: DIA's two-rows kernel (the odd one above takes the
     * one-row kernel). */
    T = banded(20010, 20010, thirteen, 13, 4);
    KT_CHECK(T != NULL, "13-band matrix, even");
    if (T)
        check_all_formats(T, "13-band, even");
    kt_matrix_free(T);
    /* Rectangular, with bands that run off the right edge: DIA's column test
     * (300 rows, 5 bands: the two-rows kernel's checked rows). */
    static const int wide[5] = {-40, -3, 0, 5, 90};
    T = banded(300, 257, wide, 5, 5);
    KT_CHECK(T != NULL, "rectangular matrix");
    if (T)
        check_all_formats(T, "300x257");
    kt_matrix_free(T);
}

/* A disc of ones inside an n x n grid: the membrane's mask. */
static unsigned char *disc_mask(int n)
{
    unsigned char *mask = malloc((size_t)n * n);
    double r = 0.5 * (n - 1), c = 0.5 * (n - 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            mask[i * n + j] = (i - c) * (i - c) + (j - c) * (j - c) <= r * r;
    return mask;
}

/* The stored stencil matrix in every format, and the matrix-free stencil on
 * the device, against the CPU's matrix-free stencil. */
static void test_stencil(int points)
{
    const int n = 61, N = n * n;
    unsigned char *mask = disc_mask(n);
    kt_stencil s;
    kt_error err;
    int rc = kt_stencil_init(&s, n, mask, points, 1.7, -0.3, 0.05, &err);
    KT_CHECK(rc == KT_OK, "stencil: %s", err.message);
    kt_matrix *T = NULL;
    if (rc == KT_OK && kt_stencil_matrix(&s, &T, &err) == KT_OK)
        check_all_formats(T, points == 5 ? "stencil5 matrix" : "stencil13 matrix");
    kt_matrix_free(T);

    double *x = malloc(N * sizeof *x), *y0 = malloc(N * sizeof *y0);
    double *want = malloc(N * sizeof *want), *got = malloc(N * sizeof *got);
    fill(x, N, 13);
    fill(y0, N, 17);
    kt_operator op = kt_operator_stencil(&s);
    kt_cuda_stencil *S = NULL;
    double *dx = NULL, *dy = NULL;
    rc = kt_cuda_stencil_upload(&s, &S, &err);
    KT_CHECK(rc == KT_OK, "stencil upload: %s", err.message);
    if (rc == KT_OK && kt_cuda_alloc(N * sizeof *x, (void **)&dx, &err) == KT_OK &&
        kt_cuda_alloc(N * sizeof *x, (void **)&dy, &err) == KT_OK) {
        kt_cuda_upload(dx, x, N * sizeof *x, &err);
        for (int accumulate = 0; accumulate <= 1; accumulate++) {
            memcpy(want, y0, N * sizeof *want);
            kt_operator_apply(&op, x, want, accumulate, 1);
            kt_cuda_upload(dy, y0, N * sizeof *y0, &err);
            rc = kt_cuda_stencil_apply(S, dx, dy, accumulate, &err);
            if (rc == KT_OK)
                rc = kt_cuda_sync(&err);
            KT_CHECK(rc == KT_OK, "stencil apply: %s", err.message);
            kt_cuda_download(got, dy, N * sizeof *got, &err);
            double e = relative_error(got, want, N);
            KT_CHECK(e <= TOL, "matrix-free stencil%d, accumulate %d: relative error %.3g",
                     points, accumulate, e);
        }
    }
    kt_cuda_free(dx);
    kt_cuda_free(dy);
    kt_cuda_stencil_free(S);
    kt_stencil_release(&s);
    free(mask);
    free(x);
    free(y0);
    free(want);
    free(got);
}

/* The matrix-free band operator against the stored matrix of the same bands. */
static void test_bands(void)
{
    static const int offsets[13] = {-15, -9, -8, -7, -2, -1, 0, 1, 2, 7, 8, 9, 15};
    const double values[13] = {0.3, -0.2, 0.7, -1.1, 0.05, 2.5, -4.0, 1.5, 0.25, -0.6, 0.9,
                               -0.35, 0.15};
    const int n = 5003;
    kt_matrix *T = NULL, *C = NULL;
    kt_error err;
    kt_matrix_triplet(n, n, 13 * n, &T, &err);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 13; d++)
            if (i + offsets[d] >= 0 && i + offsets[d] < n)
                kt_matrix_entry(T, i, i + offsets[d], values[d], &err);
    int rc = kt_matrix_convert(T, KT_CSR, 0, &C, &err);
    KT_CHECK(rc == KT_OK, "band matrix: %s", err.message);
    double *x = malloc(n * sizeof *x), *y0 = malloc(n * sizeof *y0);
    double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    double *dx = NULL, *dy = NULL;
    fill(x, n, 31);
    fill(y0, n, 37);
    if (rc == KT_OK && kt_cuda_alloc(n * sizeof *x, (void **)&dx, &err) == KT_OK &&
        kt_cuda_alloc(n * sizeof *x, (void **)&dy, &err) == KT_OK) {
        kt_cuda_upload(dx, x, n * sizeof *x, &err);
        for (int accumulate = 0; accumulate <= 1; accumulate++) {
            memcpy(want, y0, n * sizeof *want);
            kt_spmv(C, x, want, accumulate, 1, &err);
            kt_cuda_upload(dy, y0, n * sizeof *y0, &err);
            rc = kt_cuda_bands_apply(n, 13, offsets, values, dx, dy, accumulate, &err);
            if (rc == KT_OK)
                rc = kt_cuda_sync(&err);
            KT_CHECK(rc == KT_OK, "bands: %s", err.message);
            kt_cuda_download(got, dy, n * sizeof *got, &err);
            double e = relative_error(got, want, n);
            KT_CHECK(e <= TOL, "matrix-free bands, accumulate %d: relative error %.3g",
                     accumulate, e);
        }
    }
    KT_CHECK(kt_cuda_bands_apply(n, KT_CUDA_MAX_BANDS + 1, offsets, values, dx, dy, 0, &err) ==
                 KT_EINVAL,
             "too many bands refused");
    kt_cuda_free(dx);
    kt_cuda_free(dy);
    kt_matrix_free(T);
    kt_matrix_free(C);
    free(x);
    free(y0);
    free(want);
    free(got);
}

static void test_vectors(void)
{
    const int n = 100003;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *got = malloc(n * sizeof *y);
    fill(x, n, 19);
    fill(y, n, 23);
    kt_error err;
    kt_cuda_blas *b = NULL;
    double *dx = NULL, *dy = NULL, *dz = NULL;
    int rc = kt_cuda_blas_create(&b, &err);
    KT_CHECK(rc == KT_OK, "cuBLAS: %s", err.message);
    if (rc == KT_OK && kt_cuda_alloc(n * sizeof *x, (void **)&dx, &err) == KT_OK &&
        kt_cuda_alloc(n * sizeof *x, (void **)&dy, &err) == KT_OK &&
        kt_cuda_alloc(n * sizeof *x, (void **)&dz, &err) == KT_OK) {
        kt_cuda_upload(dx, x, n * sizeof *x, &err);
        kt_cuda_upload(dy, y, n * sizeof *y, &err);
        double dot = 0;
        rc = kt_cuda_dot(b, n, dx, dy, &dot, &err);
        KT_CHECK(rc == KT_OK, "dot: %s", err.message);
        /* Sums of 1e5 terms in different orders: agree to rounding. */
        KT_CHECK_REL(dot, kt_dot(n, x, y, 1), 1e-12, sqrt((double)n));
        rc = kt_cuda_axpy(b, n, -0.75, dx, dy, &err);
        KT_CHECK(rc == KT_OK, "axpy: %s", err.message);
        kt_cuda_download(got, dy, n * sizeof *got, &err);
        kt_axpy(n, -0.75, x, y, 1);
        KT_CHECK(relative_error(got, y, n) <= TOL, "axpy differs from kt_axpy");
        /* The copy of the device's own axpy result must be bit-exact. */
        rc = kt_cuda_copy(n, dy, dz, &err);
        if (rc == KT_OK)
            rc = kt_cuda_sync(&err);
        KT_CHECK(rc == KT_OK, "copy: %s", err.message);
        kt_cuda_download(y, dz, n * sizeof *y, &err);
        KT_CHECK(memcmp(got, y, n * sizeof *y) == 0, "device copy is not exact");
    }
    kt_cuda_free(dx);
    kt_cuda_free(dy);
    kt_cuda_free(dz);
    kt_cuda_blas_free(b);
    free(x);
    free(y);
    free(got);
}

static void test_refusals(void)
{
    static const int three[3] = {-1, 0, 1};
    kt_matrix *T = banded(50, 50, three, 3, 29), *A = NULL;
    kt_cuda_matrix *M = NULL;
    kt_error err;
    KT_CHECK(kt_cuda_matrix_upload(T, &M, &err) == KT_ENOTSUP && M == NULL,
             "a triplet matrix is refused");
    if (kt_matrix_convert(T, KT_CSC, 0, &A, &err) == KT_OK) {
        KT_CHECK(kt_cuda_matrix_upload(A, &M, &err) == KT_ENOTSUP, "a CSC matrix is refused");
        KT_CHECK(strstr(err.message, "convert") != NULL, "message says what to do: %s",
                 err.message);
    }
    KT_CHECK(kt_cuda_matrix_upload(NULL, &M, &err) == KT_EINVAL, "NULL matrix refused");
    kt_matrix_free(A);
    kt_matrix_free(T);
}

/* The read rate the SpMV bench quotes as DIA's floor: of the order of the
 * copy rate (a kernel whose loads the compiler dropped would read "faster"
 * than any memory), and bad arguments refused. */
static void test_read_rate(void)
{
    kt_error err;
    double read_bps = 0.0, copy_bps = 0.0;
    const size_t bytes = 256u << 20;
    int rc = bench_cuda_read_bandwidth(bytes, 3, &read_bps, &err);
    KT_CHECK(rc == KT_OK, "read rate: %s", err.message);
    rc = bench_cuda_copy_bandwidth(bytes, 3, 1, &copy_bps, &err);
    KT_CHECK(rc == KT_OK, "copy rate: %s", err.message);
    KT_CHECK(read_bps > 0.5 * copy_bps && read_bps < 3.0 * copy_bps,
             "read rate %.0f GB/s against copy %.0f GB/s", read_bps * 1e-9, copy_bps * 1e-9);
    KT_CHECK(bench_cuda_read_bandwidth(8, 3, &read_bps, &err) == KT_EINVAL, "8 bytes refused");
    KT_CHECK(bench_cuda_read_bandwidth(bytes, 0, &read_bps, &err) == KT_EINVAL, "0 repeats refused");
}

int main(void)
{
    if (kt_cuda_devices(NULL, 0) == 0) {
        printf("test_gpu_spmv: no GPU, skipped\n");
        return 77;
    }
    test_banded();
    test_stencil(5);
    test_stencil(13);
    test_bands();
    test_vectors();
    test_refusals();
    test_read_rate();
    return kt_test_finish("test_gpu_spmv");
}
#endif
