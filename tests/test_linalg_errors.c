/* test_linalg_errors.c - bad input comes back as a status and a message,
 * never a crash: NULLs, negative sizes, out-of-range entries, dimension
 * mismatches, unknown format names, bad stencils, and DIA/ELL conversions
 * whose storage would exceed the cap (a scattered matrix has thousands of
 * bands). */
#include "kt_linalg.h"
#include "kt_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT(call, want)                                                                  \
    do {                                                                                    \
        kt_error err_;                                                                      \
        kt_error_clear(&err_);                                                              \
        kt_error *err = &err_;                                                              \
        int rc_ = (call);                                                                   \
        KT_CHECK(rc_ == (want), "%s returned %d, expected %d", #call, rc_, (int)(want));    \
        KT_CHECK(err_.code == (want) && err_.message[0] != '\0',                            \
                 "%s: error record code %d, message '%s'", #call, err_.code, err_.message); \
        (void)err;                                                                          \
    } while (0)

static uint64_t rng_state = 99;
static int below(int n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (int)((double)(rng_state >> 11) * 0x1.0p-53 * n);
}

static kt_matrix *scattered(int n, int count)
{
    kt_matrix *T;
    kt_matrix_triplet(n, n, count, &T, NULL);
    for (int k = 0; k < count; k++)
        kt_matrix_entry(T, below(n), below(n), 1.0 + k, NULL);
    return T;
}

static void test_assembly_errors(void)
{
    kt_matrix *T = NULL;
    EXPECT(kt_matrix_triplet(-1, 3, 0, &T, err), KT_EINVAL);
    KT_CHECK(T == NULL, "no matrix on failure");
    EXPECT(kt_matrix_triplet(3, -2, 0, &T, err), KT_EINVAL);
    EXPECT(kt_matrix_triplet(3, 3, -5, &T, err), KT_EINVAL);
    EXPECT(kt_matrix_triplet(3, 3, 0, NULL, err), KT_EINVAL);
    KT_CHECK(kt_matrix_triplet(3, 4, 0, &T, NULL) == KT_OK, "3x4 triplet");
    EXPECT(kt_matrix_entry(T, 3, 0, 1.0, err), KT_EINVAL);
    EXPECT(kt_matrix_entry(T, 0, 4, 1.0, err), KT_EINVAL);
    EXPECT(kt_matrix_entry(T, -1, 0, 1.0, err), KT_EINVAL);
    EXPECT(kt_matrix_entry(NULL, 0, 0, 1.0, err), KT_EINVAL);
    KT_CHECK(T->nrows == 3 && T->ncols == 4 && T->cs->m == 3 && T->cs->n == 4,
             "a rejected entry must not grow the matrix");
    kt_matrix *C;
    kt_matrix_convert(T, KT_CSR, 0, &C, NULL);
    EXPECT(kt_matrix_entry(C, 0, 0, 1.0, err), KT_EINVAL); /* not a triplet */
    kt_matrix_free(C);
    kt_matrix_free(T);
}

static void test_conversion_errors(void)
{
    kt_matrix *A = NULL, *B = NULL, *out = NULL;
    EXPECT(kt_matrix_convert(NULL, KT_CSR, 0, &out, err), KT_EINVAL);
    KT_CHECK(kt_matrix_triplet(4, 4, 0, &A, NULL) == KT_OK, "4x4");
    EXPECT(kt_matrix_convert(A, (kt_format)17, 0, &out, err), KT_EINVAL);
    EXPECT(kt_matrix_convert(A, KT_CSR, 0, NULL, err), KT_EINVAL);
    kt_format f;
    EXPECT(kt_format_parse("blocked-csr", &f, err), KT_EINVAL);
    EXPECT(kt_format_parse(NULL, &f, err), KT_EINVAL);
    KT_CHECK(strcmp(kt_format_name((kt_format)42), "unknown") == 0, "name of a bad format");

    /* a malformed matrix (fields missing for its format) is refused, not read */
    kt_matrix broken = {.format = KT_CSR, .nrows = 5, .ncols = 5};
    double x[5] = {0}, y[5];
    EXPECT(kt_spmv(&broken, x, y, 0, 1, err), KT_EINVAL);
    EXPECT(kt_matrix_convert(&broken, KT_CSC, 0, &out, err), KT_EINVAL);
    KT_CHECK(kt_matrix_nnz(&broken) < 0 && kt_matrix_bytes(&broken) == 0, "broken matrix sizes");
    KT_CHECK(kt_matrix_nnz(NULL) < 0, "nnz of NULL");
    kt_matrix_free(NULL);

    /* 3,000 scattered entries: thousands of bands */
    kt_matrix *S = scattered(3000, 3000);
    kt_error err;
    int rc = kt_matrix_convert(S, KT_DIA, (size_t)1 << 20, &out, &err);
    KT_CHECK(rc == KT_ENOMEM && out == NULL, "DIA over a 1 MiB cap returned %d", rc);
    KT_CHECK(strstr(err.message, "bytes") != NULL, "cap message names the bytes: '%s'",
             err.message);
    /* the default cap (1 GiB): 100,000 rows with thousands of bands need
     * gigabytes; refused before anything is allocated */
    kt_matrix *big = scattered(100000, 20000);
    rc = kt_matrix_convert(big, KT_DIA, 0, &out, &err);
    KT_CHECK(rc == KT_ENOMEM && strstr(err.message, "bytes"), "default DIA cap: %d '%s'", rc,
             err.message);
    /* ELL over its cap too: one dense row makes every row that wide */
    kt_matrix *W;
    kt_matrix_triplet(5000, 5000, 5000, &W, NULL);
    for (int j = 0; j < 5000; j++)
        kt_matrix_entry(W, 7, j, 1.0, NULL);
    EXPECT(kt_matrix_convert(W, KT_ELL, (size_t)1 << 20, &out, err), KT_ENOMEM);
    /* under a cap that fits, the same conversions succeed */
    rc = kt_matrix_convert(S, KT_DIA, (size_t)1 << 30, &out, &err);
    KT_CHECK(rc == KT_OK && out->ndiags > 1000, "scattered DIA under 1 GiB: rc %d, %d bands", rc,
             out ? out->ndiags : -1);
    kt_matrix_free(out);
    kt_matrix_free(S), kt_matrix_free(big), kt_matrix_free(W);

    /* dimension mismatches */
    kt_matrix_triplet(4, 5, 0, &B, NULL);
    EXPECT(kt_matrix_add(A, B, 1.0, 1.0, &out, err), KT_EINVAL);
    EXPECT(kt_matrix_multiply(B, A, &out, err), KT_EINVAL);
    EXPECT(kt_matrix_add(NULL, B, 1.0, 1.0, &out, err), KT_EINVAL);
    EXPECT(kt_matrix_multiply(A, NULL, &out, err), KT_EINVAL);
    EXPECT(kt_matrix_transpose(NULL, &out, err), KT_EINVAL);
    EXPECT(kt_matrix_scale(NULL, 2.0, err), KT_EINVAL);
    KT_CHECK(kt_matrix_multiply(A, B, &out, NULL) == KT_OK && out->nrows == 4 && out->ncols == 5,
             "4x4 times 4x5");
    kt_matrix_free(out);
    EXPECT(kt_spmv(A, NULL, y, 0, 1, err), KT_EINVAL);
    EXPECT(kt_spmv(A, x, NULL, 0, 1, err), KT_EINVAL);
    EXPECT(kt_spmv(NULL, x, y, 0, 1, err), KT_EINVAL);
    EXPECT(kt_spmv(A, x, y, 2, 1, err), KT_EINVAL);
    kt_matrix_free(A), kt_matrix_free(B);
}

static void test_stencil_errors(void)
{
    unsigned char mask[16];
    memset(mask, 1, sizeof mask);
    kt_stencil s;
    EXPECT(kt_stencil_init(&s, 4, NULL, 5, 1, 1, 0, err), KT_EINVAL);
    EXPECT(kt_stencil_init(&s, 0, mask, 5, 1, 1, 0, err), KT_EINVAL);
    EXPECT(kt_stencil_init(&s, -3, mask, 5, 1, 1, 0, err), KT_EINVAL);
    EXPECT(kt_stencil_init(&s, 4, mask, 9, 1, 1, 0, err), KT_EINVAL);
    EXPECT(kt_stencil_init(NULL, 4, mask, 5, 1, 1, 0, err), KT_EINVAL);
    mask[5] = 2;
    EXPECT(kt_stencil_init(&s, 4, mask, 13, 1, 1, 0, err), KT_EINVAL);
    kt_matrix *out;
    EXPECT(kt_stencil_matrix(&s, &out, err), KT_EINVAL); /* s was left empty */
    EXPECT(kt_stencil_matrix(NULL, &out, err), KT_EINVAL);
    kt_stencil_release(&s);
    kt_stencil_release(NULL);
}

int main(void)
{
    test_assembly_errors();
    test_conversion_errors();
    test_stencil_errors();
    return kt_test_finish("test_linalg_errors");
}
