/* test_linalg_stencil.c - the unrolled membrane stencils against their
 * stored matrices, in every format and both modes, on a circular mask; and
 * the stored matrices against the definition they claim: D = M L5 M built
 * independently here, D*D formed by sparse multiplication. */
#include "kt_linalg.h"
#include "kt_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 12345;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

static unsigned char *circle_mask(int n)
{
    unsigned char *m = malloc((size_t)n * n);
    double c = 0.5 * (n - 1), r = 0.5 * n - 0.7;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            m[i * n + j] = (i - c) * (i - c) + (j - c) * (j - c) <= r * r;
    return m;
}

/* stencil apply vs the stored matrix in every format, both modes */
static void check_stencil_vs_matrix(int n, const unsigned char *mask, int points, double c0,
                                    double c1, double c2)
{
    static const kt_format formats[] = {KT_TRIPLET, KT_CSC, KT_CSR, KT_DIA, KT_ELL};
    kt_stencil s;
    kt_error err;
    int N = n * n;
    KT_CHECK(kt_stencil_init(&s, n, mask, points, c0, c1, c2, &err) == KT_OK, "%s",
             err.message);
    kt_matrix *T;
    KT_CHECK(kt_stencil_matrix(&s, &T, &err) == KT_OK, "%s", err.message);
    kt_operator op = kt_operator_stencil(&s);
    KT_CHECK(op.nrows == N && op.ncols == N, "operator size %d x %d", op.nrows, op.ncols);
    double *x = malloc(N * sizeof *x), *ys = malloc(N * sizeof *ys), *ym = malloc(N * sizeof *ym);
    double *y0 = malloc(N * sizeof *y0);
    for (int p = 0; p < N; p++)
        x[p] = 2.0 * uniform() - 1.0;
    for (int f = 0; f < 5; f++) {
        kt_matrix *A;
        KT_CHECK(kt_matrix_convert(T, formats[f], 0, &A, &err) == KT_OK, "%s", err.message);
        kt_operator mop = kt_operator_matrix(A);
        for (int mode = 0; mode <= 1; mode++) {
            for (int p = 0; p < N; p++)
                y0[p] = mode ? uniform() : -7.0;
            memcpy(ys, y0, N * sizeof *ys);
            memcpy(ym, y0, N * sizeof *ym);
            kt_operator_apply(&op, x, ys, mode, 1);
            kt_operator_apply(&mop, x, ym, mode, 1);
            double scale = kt_test_max_abs(ym, N), worst = 0.0;
            for (int p = 0; p < N; p++)
                worst = fmax(worst, fabs(ys[p] - ym[p]));
            KT_CHECK(worst <= 1e-13 * scale, "stencil%d n=%d vs %s, mode %d: error %g of %g",
                     points, n, kt_format_name(formats[f]), mode, worst, scale);
        }
        if (formats[f] == KT_DIA && n >= 7) /* smaller grids lack the far bands */
            KT_CHECK(A->ndiags == (points == 5 ? 5 : 13), "stencil%d stored with %d bands",
                     points, A->ndiags);
        kt_matrix_free(A);
    }
    /* unmasked points: y = 0, and NaN there in x must not leak in */
    for (int p = 0; p < N; p++)
        if (!mask[p])
            x[p] = NAN;
    kt_operator_apply(&op, x, ys, 0, 1);
    int clean = 1;
    for (int p = 0; p < N; p++)
        clean &= mask[p] ? isfinite(ys[p]) : ys[p] == 0.0;
    KT_CHECK(clean, "stencil%d: values outside the mask leak into y", points);
    free(x), free(ys), free(ym), free(y0);
    kt_matrix_free(T);
    kt_stencil_release(&s);
}

/* D = M L5 M assembled here from its definition, as CSC. */
static kt_matrix *masked_laplacian(int n, const unsigned char *m)
{
    kt_matrix *T, *C;
    kt_matrix_triplet(n * n, n * n, 5 * n * n, &T, NULL);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int p = i * n + j;
            kt_matrix_entry(T, p, p, -4.0 * m[p], NULL);
            if (i > 0) kt_matrix_entry(T, p, p - n, m[p] * m[p - n], NULL);
            if (i < n - 1) kt_matrix_entry(T, p, p + n, m[p] * m[p + n], NULL);
            if (j > 0) kt_matrix_entry(T, p, p - 1, m[p] * m[p - 1], NULL);
            if (j < n - 1) kt_matrix_entry(T, p, p + 1, m[p] * m[p + 1], NULL);
        }
    kt_matrix_convert(T, KT_CSC, 0, &C, NULL);
    kt_matrix_free(T);
    return C;
}

static double max_matrix_diff(const kt_matrix *A, const kt_matrix *B)
{
    kt_matrix *Dm;
    kt_matrix_add(A, B, 1.0, -1.0, &Dm, NULL);
    double worst = 0.0;
    for (int k = 0; k < Dm->cs->p[Dm->ncols]; k++)
        worst = fmax(worst, fabs(Dm->cs->x[k]));
    kt_matrix_free(Dm);
    return worst;
}

/* The stored stencils are what the header says: c0 M + c1 D (+ c2 D D). */
static void check_definition(int n, const unsigned char *mask)
{
    const double c0 = 0.75, c1 = -0.3, c2 = 0.05;
    kt_matrix *D = masked_laplacian(n, mask), *DD, *Mi, *expect5, *expect13;
    kt_error err;
    KT_CHECK(kt_matrix_multiply(D, D, &DD, &err) == KT_OK, "%s", err.message);
    kt_matrix *T;
    kt_matrix_triplet(n * n, n * n, n * n, &T, NULL);
    for (int p = 0; p < n * n; p++)
        if (mask[p])
            kt_matrix_entry(T, p, p, 1.0, NULL);
    kt_matrix_convert(T, KT_CSC, 0, &Mi, NULL);
    kt_matrix_free(T);
    kt_matrix_add(Mi, D, c0, c1, &expect5, NULL);
    kt_matrix_add(expect5, DD, 1.0, c2, &expect13, NULL);

    for (int points = 5; points <= 13; points += 8) {
        kt_stencil s;
        kt_stencil_init(&s, n, mask, points, c0, c1, c2, NULL);
        kt_matrix *S, *Sc;
        KT_CHECK(kt_stencil_matrix(&s, &S, &err) == KT_OK, "%s", err.message);
        kt_matrix_convert(S, KT_CSC, 0, &Sc, NULL);
        double worst = max_matrix_diff(Sc, points == 5 ? expect5 : expect13);
        KT_CHECK(worst <= 1e-14, "stored stencil%d differs from its definition by %g", points,
                 worst);
        kt_matrix_free(S), kt_matrix_free(Sc);
        kt_stencil_release(&s);
    }
    /* and a rim point by hand: D*D's centre is 16 + (masked 4-neighbours) */
    int p = -1;
    for (int q = n; q < n * n - n && p < 0; q++)
        if (q % n > 0 && q % n < n - 1 && mask[q] && !mask[q - 1])
            p = q; /* leftmost masked point of a row: west neighbour unmasked */
    KT_CHECK(p >= 0, "no rim point found");
    int nm = mask[p - n] + mask[p + n] + mask[p - 1] + mask[p + 1];
    double centre = 0.0;
    for (int k = DD->cs->p[p]; k < DD->cs->p[p + 1]; k++)
        if (DD->cs->i[k] == p)
            centre = DD->cs->x[k];
    KT_CHECK(centre == 16.0 + nm && nm < 4, "D*D centre at the rim %g, nmask %d", centre, nm);
    kt_matrix_free(D), kt_matrix_free(DD), kt_matrix_free(Mi);
    kt_matrix_free(expect5), kt_matrix_free(expect13);
}

int main(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 7, 33, 64};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        unsigned char *mask = circle_mask(n);
        if (n <= 3)
            memset(mask, 1, (size_t)n * n); /* tiny grids: all masked, all rim */
        check_stencil_vs_matrix(n, mask, 5, 1.3, -0.21, 0.0);
        check_stencil_vs_matrix(n, mask, 13, 2.0, -0.5, 0.031);
        free(mask);
    }
    unsigned char *mask = circle_mask(40);
    check_definition(40, mask);
    /* a ragged mask with holes: single points, thin lines */
    for (int p = 0; p < 40 * 40; p++)
        mask[p] = uniform() < 0.7;
    check_definition(40, mask);
    check_stencil_vs_matrix(40, mask, 13, -1.0, 0.7, 0.2);
    free(mask);
    /* an annulus: two masked runs in the middle rows, only one of which can
     * take the unmasked fast path */
    const int n = 48;
    mask = malloc((size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double r2 = (i - 23.5) * (i - 23.5) + (j - 23.5) * (j - 23.5);
            mask[i * n + j] = r2 <= 23.0 * 23.0 && r2 >= 9.0 * 9.0;
        }
    check_definition(n, mask);
    check_stencil_vs_matrix(n, mask, 5, 0.4, 1.1, 0.0);
    check_stencil_vs_matrix(n, mask, 13, 0.4, 1.1, -0.07);
    free(mask);
    return kt_test_finish("test_linalg_stencil");
}
