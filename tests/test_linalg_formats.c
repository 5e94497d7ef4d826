/* test_linalg_formats.c - every storage format, every conversion between
 * them and both SpMV modes, checked against a dense reference (or, for the
 * drum-sized interpolant, against the entry list); the thesis' 5- and 13-band
 * matrices, empty rows, 1 x 1, and the algebra (transpose, scale, add,
 * multiply). */
#include "kt_linalg.h"
#include "kt_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const kt_format formats[] = {KT_TRIPLET, KT_CSC, KT_CSR, KT_DIA, KT_ELL};
#define NFORMATS 5

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static double uniform(void) /* [0, 1) */
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}
static int below(int n) { return (int)(uniform() * n); }

/* A matrix kept three ways: the triplet as assembled, its dense sum, and
 * the raw entry list (duplicates included). */
typedef struct test_matrix {
    int nrows, ncols, count;
    int *row, *col;
    double *val;
    double *dense; /* NULL when too large */
    kt_matrix *T;
} test_matrix;

static void test_matrix_add(test_matrix *t, int i, int j, double v)
{
    t->row[t->count] = i, t->col[t->count] = j, t->val[t->count] = v;
    t->count++;
    if (t->dense)
        t->dense[(size_t)i * t->ncols + j] += v;
    kt_error err;
    KT_CHECK(kt_matrix_entry(t->T, i, j, v, &err) == KT_OK, "%s", err.message);
}

static void test_matrix_init(test_matrix *t, int nrows, int ncols, int capacity, int dense)
{
    memset(t, 0, sizeof *t);
    t->nrows = nrows, t->ncols = ncols;
    t->row = malloc(((size_t)capacity + 1) * sizeof(int));
    t->col = malloc(((size_t)capacity + 1) * sizeof(int));
    t->val = malloc(((size_t)capacity + 1) * sizeof(double));
    t->dense = dense ? calloc((size_t)nrows * ncols + 1, sizeof(double)) : NULL;
    kt_error err;
    KT_CHECK(kt_matrix_triplet(nrows, ncols, 4, &t->T, &err) == KT_OK, "%s", err.message);
}

static void test_matrix_free(test_matrix *t)
{
    free(t->row), free(t->col), free(t->val), free(t->dense);
    kt_matrix_free(t->T);
}

/* Random sparse: about `density` of the entries, some duplicated, and every
 * `empty_every`-th row left empty. */
static void random_matrix(test_matrix *t, int nrows, int ncols, double density, int empty_every)
{
    int target = (int)(density * nrows * ncols) + 1;
    test_matrix_init(t, nrows, ncols, target + target / 4 + 1, 1);
    for (int k = 0; k < target; k++) {
        int i = below(nrows), j = below(ncols);
        if (empty_every && i % empty_every == 0)
            continue;
        double v = 2.0 * uniform() - 1.0;
        test_matrix_add(t, i, j, v);
        if (k % 4 == 0)
            test_matrix_add(t, i, j, 0.5 * v); /* a duplicate: must be summed */
    }
}

/* Banded square matrix with the given offsets, random values. */
static void band_matrix(test_matrix *t, int n, const int *offsets, int nbands)
{
    test_matrix_init(t, n, n, n * nbands, n <= 2000);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < nbands; d++) {
            int j = i + offsets[d];
            if (j >= 0 && j < n)
                test_matrix_add(t, i, j, 1.0 + uniform());
        }
}

static void reference_product(const test_matrix *t, const double *x, double *y)
{
    memset(y, 0, (size_t)t->nrows * sizeof *y);
    for (int k = 0; k < t->count; k++)
        y[t->row[k]] += t->val[k] * x[t->col[k]];
}

/* SpMV of A (any format) in both modes against the reference product. */
static void check_spmv(const kt_matrix *A, const test_matrix *t, const char *what)
{
    int m = t->nrows, n = t->ncols;
    double *x = malloc(((size_t)n + 1) * sizeof *x), *y = malloc(((size_t)m + 1) * sizeof *y);
    double *ref = malloc(((size_t)m + 1) * sizeof *ref), *y0 = malloc(((size_t)m + 1) * sizeof *y0);
    for (int j = 0; j < n; j++)
        x[j] = 2.0 * uniform() - 1.0;
    reference_product(t, x, ref);
    double scale = fmax(kt_test_max_abs(ref, m), 1e-300);
    kt_error err;
    for (int mode = 0; mode <= 1; mode++) {
        for (int i = 0; i < m; i++)
            y0[i] = y[i] = mode ? uniform() : 1e30; /* garbage must be overwritten in mode 0 */
        KT_CHECK(kt_spmv(A, x, y, mode, 1, &err) == KT_OK, "%s: %s", what, err.message);
        double worst = 0.0;
        for (int i = 0; i < m; i++)
            worst = fmax(worst, fabs(y[i] - (mode ? y0[i] : 0.0) - ref[i]));
        KT_CHECK(worst <= 1e-13 * fmax(scale, 1.0), "%s, mode %d: error %g (scale %g)", what,
                 mode, worst, scale);
    }
    free(x), free(y), free(ref), free(y0);
}

/* Dense image of A, via a product with each unit vector (so it tests SpMV too). */
static double *dense_of(const kt_matrix *A)
{
    int m = A->nrows, n = A->ncols;
    double *D = calloc((size_t)m * n + 1, sizeof *D);
    double *e = calloc((size_t)n + 1, sizeof *e), *col = malloc(((size_t)m + 1) * sizeof *col);
    for (int j = 0; j < n; j++) {
        e[j] = 1.0;
        kt_spmv(A, e, col, 0, 1, NULL);
        for (int i = 0; i < m; i++)
            D[(size_t)i * n + j] = col[i];
        e[j] = 0.0;
    }
    free(e), free(col);
    return D;
}

static double dense_diff(const double *a, const double *b, size_t count)
{
    double worst = 0.0;
    for (size_t k = 0; k < count; k++)
        worst = fmax(worst, fabs(a[k] - b[k]));
    return worst;
}

/* Every format from the triplet, then every format to every format (DIA
 * left out where `no_dia`: a matrix without band structure). */
static void check_conversions(const test_matrix *t, const char *name, int no_dia)
{
    kt_matrix *A[NFORMATS] = {0};
    kt_error err;
    char what[160];
    for (int f = 0; f < NFORMATS; f++) {
        if (no_dia && formats[f] == KT_DIA)
            continue;
        int rc = kt_matrix_convert(t->T, formats[f], 0, &A[f], &err);
        KT_CHECK(rc == KT_OK, "%s -> %s: %s", name, kt_format_name(formats[f]), err.message);
        if (rc != KT_OK)
            return;
        KT_CHECK(A[f]->format == formats[f] && A[f]->nrows == t->nrows &&
                     A[f]->ncols == t->ncols,
                 "%s: %s has the wrong header", name, kt_format_name(formats[f]));
        snprintf(what, sizeof what, "%s as %s", name, kt_format_name(formats[f]));
        check_spmv(A[f], t, what);
        KT_CHECK(kt_matrix_bytes(A[f]) > 0 || t->count == 0, "%s: zero bytes", what);
    }
    for (int f = 0; f < NFORMATS; f++)
        for (int g = 0; g < NFORMATS; g++) {
            if (no_dia && (formats[f] == KT_DIA || formats[g] == KT_DIA))
                continue;
            kt_matrix *B;
            int rc = kt_matrix_convert(A[f], formats[g], 0, &B, &err);
            snprintf(what, sizeof what, "%s, %s -> %s", name, kt_format_name(formats[f]),
                     kt_format_name(formats[g]));
            KT_CHECK(rc == KT_OK, "%s: %s", what, err.message);
            if (rc == KT_OK) {
                check_spmv(B, t, what);
                kt_matrix_free(B);
            }
        }
    /* duplicates are summed once: the compressed forms agree on nnz */
    int nnz = kt_matrix_nnz(A[1]);
    KT_CHECK(kt_matrix_nnz(A[2]) == nnz && kt_matrix_nnz(A[4]) == nnz,
             "%s: nnz csc %d, csr %d, ell %d", name, nnz, kt_matrix_nnz(A[2]),
             kt_matrix_nnz(A[4]));
    KT_CHECK(kt_matrix_nnz(A[0]) == t->count, "%s: triplet nnz %d, entries %d", name,
             kt_matrix_nnz(A[0]), t->count);
    if (t->dense) {
        for (int f = 0; f < NFORMATS; f++) {
            if (!A[f])
                continue;
            double *D = dense_of(A[f]);
            double worst = dense_diff(D, t->dense, (size_t)t->nrows * t->ncols);
            KT_CHECK(worst <= 1e-14, "%s: dense image of %s differs by %g", name,
                     kt_format_name(formats[f]), worst);
            free(D);
        }
    }
    for (int f = 0; f < NFORMATS; f++)
        kt_matrix_free(A[f]);
}

static void check_all_conversions(const test_matrix *t, const char *name)
{
    check_conversions(t, name, 0);
}

static void test_random_matrices(void)
{
    test_matrix t;
    random_matrix(&t, 120, 120, 0.04, 7);
    check_all_conversions(&t, "random 120x120");
    test_matrix_free(&t);
    random_matrix(&t, 150, 60, 0.05, 0);
    check_all_conversions(&t, "random 150x60");
    test_matrix_free(&t);
    random_matrix(&t, 40, 170, 0.05, 3);
    check_all_conversions(&t, "random 40x170");
    test_matrix_free(&t);
}

/* Structure of CSR/DIA/ELL on the thesis' band matrices (6.4.1). */
static void check_band_structure(const test_matrix *t, const int *offsets, int nbands,
                                 const char *name)
{
    kt_matrix *D, *E, *R;
    kt_error err;
    KT_CHECK(kt_matrix_convert(t->T, KT_DIA, 0, &D, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_matrix_convert(t->T, KT_ELL, 0, &E, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_matrix_convert(t->T, KT_CSR, 0, &R, &err) == KT_OK, "%s", err.message);
    KT_CHECK(D->ndiags == nbands, "%s: %d bands, expected %d", name, D->ndiags, nbands);
    for (int d = 0; d < nbands && d < D->ndiags; d++)
        KT_CHECK(D->offsets[d] == offsets[d], "%s: offset %d is %d, expected %d", name, d,
                 D->offsets[d], offsets[d]);
    KT_CHECK(E->ell_width == nbands, "%s: ELL width %d", name, E->ell_width);
    int n = t->nrows, diag_first = 1, dia_ok = 1;
    for (int i = 0; i < n; i++)
        diag_first &= E->ell_col[i] == i; /* slot 0 holds the diagonal (6.1.3) */
    /* the DIA table holds A(i, i + offset[d]) column-major, zero off the matrix */
    for (int d = 0; d < D->ndiags; d++)
        for (int i = 0; i < n; i++) {
            int j = i + D->offsets[d];
            double v = D->diags[(size_t)d * n + i];
            if (j < 0 || j >= n)
                dia_ok &= v == 0.0;
            else if (t->dense)
                dia_ok &= v == t->dense[(size_t)i * n + j];
        }
    KT_CHECK(diag_first, "%s: ELL slot 0 is not the diagonal", name);
    KT_CHECK(dia_ok, "%s: DIA table does not match the matrix", name);
    KT_CHECK(kt_matrix_nnz(D) == t->count && kt_matrix_nnz(E) == t->count &&
                 kt_matrix_nnz(R) == t->count,
             "%s: nnz dia %d ell %d csr %d, entries %d", name, kt_matrix_nnz(D),
             kt_matrix_nnz(E), kt_matrix_nnz(R), t->count);
    KT_CHECK(kt_matrix_bytes(D) == (size_t)nbands * (4 + 8 * (size_t)n), "%s: DIA bytes %zu",
             name, kt_matrix_bytes(D));
    KT_CHECK(kt_matrix_bytes(R) == 4 * ((size_t)n + 1) + 12 * (size_t)t->count,
             "%s: CSR bytes %zu", name, kt_matrix_bytes(R));
    kt_matrix_free(D), kt_matrix_free(E), kt_matrix_free(R);
}

static void test_band_matrices(void)
{
    static const int five[5] = {-2, -1, 0, 1, 2};
    static const int thirteen[13] = {-15, -9, -8, -7, -2, -1, 0, 1, 2, 7, 8, 9, 15};
    test_matrix t;
    band_matrix(&t, 1000, five, 5);
    check_all_conversions(&t, "5-band 1000");
    check_band_structure(&t, five, 5, "5-band 1000");
    test_matrix_free(&t);
    band_matrix(&t, 1000, thirteen, 13);
    check_all_conversions(&t, "13-band 1000");
    check_band_structure(&t, thirteen, 13, "13-band 1000");
    test_matrix_free(&t);
    band_matrix(&t, 30000, thirteen, 13); /* several row blocks, threaded sizes */
    check_all_conversions(&t, "13-band 30000");
    test_matrix_free(&t);
}

/* Shaped like the drum's interpolant (thesis 7.3.4): 28,900 x 3,025, the
 * 170^2 points of a room plane from the 55^2 membrane points, four bilinear
 * weights per row.  Banded but far from diagonal: no DIA. */
static void test_interpolant_shape(void)
{
    const int room = 170, side = 55, rows = room * room, cols = side * side;
    test_matrix t;
    test_matrix_init(&t, rows, cols, 4 * rows, 0);
    for (int i = 0; i < rows; i++) {
        double u = (double)(i / room) * (side - 1) / room, v = (double)(i % room) * (side - 1) / room;
        int a0 = (int)u, b0 = (int)v, c = a0 * side + b0;
        double a = u - a0, b = v - b0;
        test_matrix_add(&t, i, c, (1 - a) * (1 - b));
        test_matrix_add(&t, i, c + side, a * (1 - b));
        test_matrix_add(&t, i, c + 1, (1 - a) * b);
        test_matrix_add(&t, i, c + side + 1, a * b);
    }
    check_conversions(&t, "interpolant 28900x3025", 1);
    kt_matrix *E, *Tt;
    kt_error err;
    KT_CHECK(kt_matrix_convert(t.T, KT_ELL, 0, &E, &err) == KT_OK, "%s", err.message);
    KT_CHECK(E->ell_width == 4, "interpolant ELL width %d, expected 4", E->ell_width);
    KT_CHECK(kt_matrix_transpose(E, &Tt, &err) == KT_OK, "%s", err.message);
    KT_CHECK(Tt->nrows == cols && Tt->ncols == rows && Tt->format == KT_ELL,
             "transpose of the interpolant is %d x %d", Tt->nrows, Tt->ncols);
    kt_matrix_free(E), kt_matrix_free(Tt);
    test_matrix_free(&t);
}

static void test_small_cases(void)
{
    test_matrix t;
    test_matrix_init(&t, 1, 1, 1, 1);
    test_matrix_add(&t, 0, 0, -3.25);
    check_all_conversions(&t, "1x1");
    test_matrix_free(&t);

    test_matrix_init(&t, 1, 1, 1, 1); /* 1 x 1 with no entry at all */
    check_all_conversions(&t, "empty 1x1");
    test_matrix_free(&t);

    test_matrix_init(&t, 0, 5, 1, 1); /* no rows */
    check_all_conversions(&t, "0x5");
    test_matrix_free(&t);
    test_matrix_init(&t, 5, 0, 1, 1); /* no columns: y = 0 */
    check_all_conversions(&t, "5x0");
    test_matrix_free(&t);

    /* empty first and last rows, and an empty run in the middle */
    test_matrix_init(&t, 9, 6, 20, 1);
    test_matrix_add(&t, 1, 0, 1.5);
    test_matrix_add(&t, 2, 5, -2.0);
    test_matrix_add(&t, 2, 2, 4.0);
    test_matrix_add(&t, 6, 3, 0.25);
    test_matrix_add(&t, 7, 1, 8.0);
    check_all_conversions(&t, "empty rows 9x6");
    kt_matrix *E;
    kt_error err;
    KT_CHECK(kt_matrix_convert(t.T, KT_ELL, 0, &E, &err) == KT_OK, "%s", err.message);
    KT_CHECK(E->ell_width == 2 && E->ell_col[0] == -1 && E->ell_col[8] == -1 &&
                 E->ell_col[9 + 8] == -1,
             "ELL padding of empty rows");
    KT_CHECK(E->ell_col[2] == 2 && E->ell_val[2] == 4.0, "ELL: diagonal of row 2 not first");
    kt_matrix_free(E);
    test_matrix_free(&t);
}

/* transpose, scale, add and multiply in every format against dense algebra */
static void test_algebra(void)
{
    test_matrix a, b, c;
    random_matrix(&a, 30, 20, 0.15, 0);
    random_matrix(&b, 30, 20, 0.15, 5);
    random_matrix(&c, 20, 25, 0.15, 0);
    kt_error err;
    for (int f = 0; f < NFORMATS; f++) {
        const char *fn = kt_format_name(formats[f]);
        kt_matrix *A, *B, *C, *R;
        KT_CHECK(kt_matrix_convert(a.T, formats[f], 0, &A, &err) == KT_OK, "%s", err.message);
        KT_CHECK(kt_matrix_convert(b.T, KT_CSR, 0, &B, &err) == KT_OK, "%s", err.message);
        KT_CHECK(kt_matrix_convert(c.T, KT_DIA, 0, &C, &err) == KT_OK, "%s", err.message);

        KT_CHECK(kt_matrix_transpose(A, &R, &err) == KT_OK, "%s: %s", fn, err.message);
        double *D = dense_of(R), worst = 0.0;
        KT_CHECK(R->format == formats[f] && R->nrows == 20 && R->ncols == 30, "%s transpose", fn);
        for (int i = 0; i < 30; i++)
            for (int j = 0; j < 20; j++)
                worst = fmax(worst, fabs(D[j * 30 + i] - a.dense[i * 20 + j]));
        KT_CHECK(worst == 0.0, "%s transpose differs by %g", fn, worst);
        free(D), kt_matrix_free(R);

        KT_CHECK(kt_matrix_add(A, B, 2.0, -0.5, &R, &err) == KT_OK, "%s: %s", fn, err.message);
        D = dense_of(R), worst = 0.0;
        KT_CHECK(R->format == formats[f], "%s add kept format", fn);
        for (int k = 0; k < 600; k++)
            worst = fmax(worst, fabs(D[k] - (2.0 * a.dense[k] - 0.5 * b.dense[k])));
        KT_CHECK(worst <= 1e-15, "%s add differs by %g", fn, worst);
        free(D), kt_matrix_free(R);

        KT_CHECK(kt_matrix_multiply(A, C, &R, &err) == KT_OK, "%s: %s", fn, err.message);
        D = dense_of(R), worst = 0.0;
        KT_CHECK(R->format == formats[f] && R->nrows == 30 && R->ncols == 25, "%s multiply", fn);
        for (int i = 0; i < 30; i++)
            for (int j = 0; j < 25; j++) {
                double s = 0.0;
                for (int k = 0; k < 20; k++)
                    s += a.dense[i * 20 + k] * c.dense[k * 25 + j];
                worst = fmax(worst, fabs(D[i * 25 + j] - s));
            }
        KT_CHECK(worst <= 1e-14, "%s multiply differs by %g", fn, worst);
        free(D), kt_matrix_free(R);

        KT_CHECK(kt_matrix_scale(A, -3.0, &err) == KT_OK, "%s: %s", fn, err.message);
        D = dense_of(A), worst = 0.0;
        for (int k = 0; k < 600; k++)
            worst = fmax(worst, fabs(D[k] + 3.0 * a.dense[k]));
        KT_CHECK(worst <= 1e-14, "%s scale differs by %g", fn, worst); /* triplet: duplicates scaled apart */
        free(D);
        kt_matrix_free(A), kt_matrix_free(B), kt_matrix_free(C);
    }
    test_matrix_free(&a), test_matrix_free(&b), test_matrix_free(&c);
}

static void test_format_names(void)
{
    for (int f = 0; f < NFORMATS; f++) {
        kt_format g = (kt_format)-1;
        kt_error err;
        KT_CHECK(kt_format_parse(kt_format_name(formats[f]), &g, &err) == KT_OK && g == formats[f],
                 "format name round trip of %s", kt_format_name(formats[f]));
    }
    kt_format g;
    KT_CHECK(kt_format_parse("ELLPACK", &g, NULL) == KT_OK && g == KT_ELL, "ELLPACK alias");
}

static void test_vector_kernels(void)
{
    enum { N = 1003 };
    double x[N], y[N], z[N];
    for (int i = 0; i < N; i++)
        x[i] = uniform() - 0.5, y[i] = uniform() - 0.5;
    double ref = 0.0;
    for (int i = 0; i < N; i++)
        ref += x[i] * y[i];
    KT_CHECK_REL(kt_dot(N, x, y, 1), ref, 1e-13, 1.0);
    KT_CHECK(kt_dot(0, x, y, 1) == 0.0, "empty dot");
    kt_copy(N, y, z, 1);
    KT_CHECK(memcmp(y, z, sizeof z) == 0, "copy");
    kt_axpy(N, 2.0, x, z, 1);
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= z[i] == y[i] + 2.0 * x[i];
    KT_CHECK(ok, "axpy");
}

int main(void)
{
    test_random_matrices();
    test_band_matrices();
    test_interpolant_shape();
    test_small_cases();
    test_algebra();
    test_format_names();
    test_vector_kernels();
    return kt_test_finish("test_linalg_formats");
}
