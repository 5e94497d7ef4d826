/* test_linalg_threads.c - threaded kernels give the same bits as one thread:
 * SpMV in every threaded format and both modes, dot, axpy, copy and the
 * stencil operators, with 1, 2 and 3 threads, at sizes above the point where
 * the kernels go parallel (rows split unevenly across threads on purpose). */
#include "kt_linalg.h"
#include "kt_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 777;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

/* 13-band rows plus a few off-pattern entries and some empty rows, so rows
 * differ in length and the ELL has padding. */
static kt_matrix *test_matrix(int n)
{
    static const int map[13] = {-15, -9, -8, -7, -2, -1, 0, 1, 2, 7, 8, 9, 15};
    kt_matrix *T;
    kt_matrix_triplet(n, n, 14 * n, &T, NULL);
    for (int i = 0; i < n; i++) {
        if (i % 97 == 5)
            continue;
        for (int d = 0; d < 13; d++)
            if (i + map[d] >= 0 && i + map[d] < n && (d != 3 || i % 3))
                kt_matrix_entry(T, i, i + map[d], uniform() - 0.5, NULL);
        if (i % 11 == 0 && i + 40 < n) /* a few off-pattern entries, few extra bands */
            kt_matrix_entry(T, i, i + 31 + i % 4, uniform(), NULL);
    }
    return T;
}

static void check_spmv_threads(const kt_matrix *T, kt_format f, int n)
{
    kt_matrix *A;
    kt_error err;
    KT_CHECK(kt_matrix_convert(T, f, 0, &A, &err) == KT_OK, "%s", err.message);
    double *x = malloc(n * sizeof *x), *y1 = malloc(n * sizeof *y1), *yk = malloc(n * sizeof *yk);
    for (int i = 0; i < n; i++)
        x[i] = uniform() - 0.5;
    for (int mode = 0; mode <= 1; mode++) {
        for (int i = 0; i < n; i++)
            y1[i] = 0.25 * i;
        KT_CHECK(kt_spmv(A, x, y1, mode, 1, &err) == KT_OK, "%s", err.message);
        for (int threads = 2; threads <= 3; threads++) {
            for (int i = 0; i < n; i++)
                yk[i] = 0.25 * i;
            KT_CHECK(kt_spmv(A, x, yk, mode, threads, &err) == KT_OK, "%s", err.message);
            KT_CHECK(memcmp(y1, yk, n * sizeof *y1) == 0,
                     "%s spmv mode %d: %d threads differ from 1", kt_format_name(f), mode,
                     threads);
        }
    }
    free(x), free(y1), free(yk);
    kt_matrix_free(A);
}

static void check_vectors(int n)
{
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (int i = 0; i < n; i++)
        x[i] = uniform() - 0.5, y[i] = (uniform() - 0.5) * 1e3;
    double d1 = kt_dot(n, x, y, 1);
    double plain = 0.0;
    for (int i = 0; i < n; i++)
        plain += x[i] * y[i];
    KT_CHECK_REL(d1, plain, 1e-10, 1.0);
    for (int threads = 2; threads <= 3; threads++) {
        double dk = kt_dot(n, x, y, threads);
        KT_CHECK(memcmp(&d1, &dk, sizeof d1) == 0, "dot, n=%d: %d threads %.17g, 1 thread %.17g",
                 n, threads, dk, d1);
        memcpy(a, y, n * sizeof *a);
        memcpy(b, y, n * sizeof *b);
        kt_axpy(n, 0.3, x, a, 1);
        kt_axpy(n, 0.3, x, b, threads);
        KT_CHECK(memcmp(a, b, n * sizeof *a) == 0, "axpy, %d threads", threads);
        kt_copy(n, x, b, threads);
        KT_CHECK(memcmp(x, b, n * sizeof *x) == 0, "copy, %d threads", threads);
    }
    KT_CHECK(kt_dot(n, x, y, 0) == d1, "dot with all cores");
    free(x), free(y), free(a), free(b);
}

static void check_stencil_threads(int n, int points)
{
    unsigned char *mask = malloc((size_t)n * n);
    double c = 0.5 * (n - 1), r = 0.45 * n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            mask[i * n + j] = (i - c) * (i - c) + (j - c) * (j - c) <= r * r;
    kt_stencil s;
    kt_error err;
    KT_CHECK(kt_stencil_init(&s, n, mask, points, 1.1, -0.4, 0.02, &err) == KT_OK, "%s",
             err.message);
    kt_operator op = kt_operator_stencil(&s);
    int N = n * n;
    double *x = malloc(N * sizeof *x), *y1 = malloc(N * sizeof *y1), *yk = malloc(N * sizeof *yk);
    for (int p = 0; p < N; p++)
        x[p] = uniform() - 0.5;
    for (int mode = 0; mode <= 1; mode++) {
        for (int p = 0; p < N; p++)
            y1[p] = yk[p] = 1.0 / (p + 1);
        kt_operator_apply(&op, x, y1, mode, 1);
        for (int threads = 2; threads <= 3; threads++) {
            for (int p = 0; p < N; p++)
                yk[p] = 1.0 / (p + 1);
            kt_operator_apply(&op, x, yk, mode, threads);
            KT_CHECK(memcmp(y1, yk, N * sizeof *y1) == 0, "stencil%d mode %d: %d threads",
                     points, mode, threads);
        }
    }
    free(x), free(y1), free(yk), free(mask);
    kt_stencil_release(&s);
}

int main(void)
{
    const int n = 60013; /* above the parallel threshold, not a multiple of a block */
    kt_matrix *T = test_matrix(n);
    const kt_format formats[] = {KT_CSC, KT_CSR, KT_DIA, KT_ELL};
    for (int f = 0; f < 4; f++)
        check_spmv_threads(T, formats[f], n);
    kt_matrix_free(T);
    check_vectors(1000003);
    check_vectors(20001);
    check_stencil_threads(181, 5);
    check_stencil_threads(181, 13);
    return kt_test_finish("test_linalg_threads");
}
