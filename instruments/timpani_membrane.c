/* timpani_membrane.c - the membrane's operators in the four implementations
 * of thesis 7.3: B, C, V (masked stencils of design note 4.4), E = I32
 * (bilinear, 5.1), I23 = (h^2/Q^2) E^T, plus the reduced matrix G = mu_c I23 E
 * of note 9 and the Cholesky factor of I + G for the direct solve.
 *
 *   CSC          B, C, V, E, I23 as CSparse matrices, applied with cs_gaxpy
 *   CSR          the same in compressed rows through kt_spmv, multi-threaded
 *   DIA/ELL      B, C, V in bands, E and I23 in ELLPACK
 *   matrix-free  B, C, V unrolled over the inside rows of the circle (one
 *                fused two-pass kernel); E and I23 computed on the fly from
 *                the separable bilinear fractions (two short passes each);
 *                G as its diagonal and four upper bands on the window. */
#include "timpani_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int build_column_gather(kt_timpani *t, kt_error *err);

void tp_csr_free(tp_csr *m)
{
    free(m->ptr);
    free(m->col);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* The (up to 4) window entries and weights of E's row for inside node (l, m). */
static int e_row(const kt_timpani *t, int l, int m, int *cols, double *w)
{
    int il = t->plan.e_il[l], jm = t->plan.e_jm[m];
    double a = t->plan.e_fa[l], b = t->plan.e_fb[m];
    const double wt[4] = {(1 - a) * (1 - b), (1 - a) * b, a * (1 - b), a * b};
    const int di[4] = {0, 0, 1, 1}, dj[4] = {0, 1, 0, 1};
    int count = 0;
    for (int q = 0; q < 4; q++) {
        int i = il + di[q], j = jm + dj[q];
        if (i < 0 || j < 0 || i >= t->plan.nwx || j >= t->plan.nwy || wt[q] == 0.0 || !t->plan.chi[i * t->plan.nwy + j])
            continue;
        cols[count] = i * t->plan.nwy + j;
        w[count++] = wt[q];
    }
    return count;
}

/* E as a CSparse compressed matrix (nn x nw). */
static cs *e_csparse(const kt_timpani *t)
{
    cs *T = cs_spalloc(t->plan.nn, t->plan.nw, 4 * (size_t)t->plan.ninside + 1, 1, 1);
    if (!T)
        return NULL;
    int cols[4];
    double w[4];
    for (int q = 0; q < t->plan.ninside; q++) {
        int j = t->plan.inside[q], c = e_row(t, j / t->plan.n, j % t->plan.n, cols, w);
        for (int e = 0; e < c; e++)
            if (!cs_entry(T, j, cols[e], w[e])) {
                cs_spfree(T);
                return NULL;
            }
    }
    cs *E = cs_compress(T);
    cs_spfree(T);
    return E;
}

/* I + s G0 in CSC (NULL when out of memory). */
static cs *identity_plus_g(const kt_timpani *t, double s)
{
    cs *T = cs_spalloc(t->plan.nw, t->plan.nw, t->plan.nw, 1, 1), *I = NULL, *IG = NULL;
    int ok = T != NULL;
    for (int i = 0; ok && i < t->plan.nw; i++)
        ok = cs_entry(T, i, i, 1.0);
    if (ok && (I = cs_compress(T)))
        IG = cs_add(I, t->plan.G0c, 1.0, s);
    cs_spfree(T);
    cs_spfree(I);
    return IG;
}

/* Numeric Cholesky factor of I + s G0 (s = 1/(1 + sigma0 k), the damping's
 * scale) on the symbolic analysis made at creation (the pattern is fixed). */
static int factor_i_plus_g(kt_timpani *t, kt_error *err)
{
    cs *IG = identity_plus_g(t, 1.0 / (1.0 + t->plan.sigma0 * t->plan.k));
    if (!IG)
        return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory for the reduced matrix",
                       t->plan.p.name);
    if (!t->plan.chol_S)
        t->plan.chol_S = cs_schol(1, IG);
    csn *N = t->plan.chol_S ? cs_chol(IG, t->plan.chol_S) : NULL;
    cs_spfree(IG);
    if (!N)
        return kt_fail(err, KT_EINVAL, "timpani '%s': Cholesky of I + G failed", t->plan.p.name);
    cs_nfree(t->plan.chol_N);
    t->plan.chol_N = N;
    return KT_OK;
}

/* G = mu_c (h^2/Q^2) E^T E, kept as CSR in t->plan.G (and undamped in G0val);
 * if want_chol, also G in CSC (G0c) and the Cholesky factorisation of I + G
 * (AMD ordering).  Built undamped (mu_free). */
static int build_reduced(kt_timpani *t, int want_chol, kt_error *err)
{
    int rc = KT_OK;
    cs *E = e_csparse(t), *ET = NULL, *Gc = NULL, *Gt = NULL;
    if (!E || !(ET = cs_transpose(E, 1)) || !(Gc = cs_multiply(ET, E)))
        goto nomem;
    for (int p = 0; p < Gc->p[Gc->n]; p++)
        Gc->x[p] *= t->plan.mu_free * t->plan.hq2;
    if (!(Gt = cs_transpose(Gc, 1)))   /* CSC of G^T = CSR of G */
        goto nomem;
    t->plan.G.nrows = t->plan.G.ncols = t->plan.nw;
    int nnz = Gt->p[Gt->n];
    t->plan.G.ptr = malloc(((size_t)t->plan.nw + 1) * sizeof(int));
    t->plan.G.col = malloc((size_t)(nnz ? nnz : 1) * sizeof(int));
    t->plan.G.val = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
    t->plan.G0val = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
    if (!t->plan.G.ptr || !t->plan.G.col || !t->plan.G.val || !t->plan.G0val)
        goto nomem;
    memcpy(t->plan.G.ptr, Gt->p, ((size_t)t->plan.nw + 1) * sizeof(int));
    memcpy(t->plan.G.col, Gt->i, (size_t)nnz * sizeof(int));
    memcpy(t->plan.G.val, Gt->x, (size_t)nnz * sizeof(double));
    memcpy(t->plan.G0val, Gt->x, (size_t)nnz * sizeof(double));
    if (want_chol) {
        t->plan.G0c = Gc;
        Gc = NULL;
        rc = factor_i_plus_g(t, err);
    }
    goto out;
nomem:
    rc = kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory for the reduced matrix", t->plan.p.name);
out:
    cs_spfree(E);
    cs_spfree(ET);
    cs_spfree(Gc);
    cs_spfree(Gt);
    return rc;
}

static int stencil_stored(kt_timpani *t, int points, double c0, double c1, double c2,
                          kt_format f, kt_matrix **out, kt_error *err)
{
    kt_stencil s;
    kt_matrix *T = NULL;
    int rc = kt_stencil_init(&s, t->plan.n, t->plan.mask, points, c0, c1, c2, err);
    if (rc < 0)
        return rc;
    rc = kt_stencil_matrix(&s, &T, err);
    if (rc == KT_OK)
        rc = kt_matrix_convert(T, f, 0, out, err);
    kt_matrix_free(T);
    kt_stencil_release(&s);
    return rc;
}

static int interp_stored(kt_timpani *t, kt_format f, kt_error *err)
{
    kt_matrix *TE = NULL, *TI = NULL;
    int rc = kt_matrix_triplet(t->plan.nn, t->plan.nw, 4 * t->plan.ninside + 1, &TE, err);
    if (rc == KT_OK)
        rc = kt_matrix_triplet(t->plan.nw, t->plan.nn, 4 * t->plan.ninside + 1, &TI, err);
    int cols[4];
    double w[4];
    for (int q = 0; rc == KT_OK && q < t->plan.ninside; q++) {
        int j = t->plan.inside[q], c = e_row(t, j / t->plan.n, j % t->plan.n, cols, w);
        for (int e = 0; rc == KT_OK && e < c; e++) {
            rc = kt_matrix_entry(TE, j, cols[e], w[e], err);
            if (rc == KT_OK)
                rc = kt_matrix_entry(TI, cols[e], j, t->plan.hq2 * w[e], err);
        }
    }
    if (rc == KT_OK)
        rc = kt_matrix_convert(TE, f, 0, &t->plan.E, err);
    if (rc == KT_OK)
        rc = kt_matrix_convert(TI, f, 0, &t->plan.I23m, err);
    kt_matrix_free(TE);
    kt_matrix_free(TI);
    return rc;
}

/* Copy G's values into its diagonal and four upper bands. */
static void fill_g_bands(kt_timpani *t)
{
    int w = t->plan.nwy, pad = w + 1;
    for (int i = 0; i < t->plan.nw; i++)
        for (int p = t->plan.G.ptr[i]; p < t->plan.G.ptr[i + 1]; p++) {
            int c = t->plan.G.col[p], off = c - i, di = c / w - i / w;
            int d = off == 0 ? 0 : off == 1 && di == 0 ? 1 : off == w - 1 ? 2 : off == w ? 3
                  : off == w + 1 ? 4 : -1;
            if (d >= 0)
                t->plan.gband[d][pad + i] = t->plan.G.val[p];
        }
}

/* G's rows touch only the 3x3 window neighbourhood (h <= Q), and G is
 * symmetric: keep its diagonal and its four upper bands, so the reduced
 * iteration streams 5 arrays and no indices.  Leaves gband[0] NULL (CSR is
 * used) if an entry falls outside those offsets. */
static int build_g_bands(kt_timpani *t, kt_error *err)
{
    int w = t->plan.nwy, pad = w + 1;
    for (int i = 0; i < t->plan.nw; i++)
        for (int p = t->plan.G.ptr[i]; p < t->plan.G.ptr[i + 1]; p++) {
            int c = t->plan.G.col[p], di = c / w - i / w, dj = c % w - i % w;
            if (di < -1 || di > 1 || dj < -1 || dj > 1)
                return KT_OK;
        }
    t->plan.chi_lo = malloc((size_t)t->plan.nwx * sizeof *t->plan.chi_lo);
    t->plan.chi_hi = malloc((size_t)t->plan.nwx * sizeof *t->plan.chi_hi);
    if (!t->plan.chi_lo || !t->plan.chi_hi)
        return kt_fail(err, KT_ENOMEM, "timpani: out of memory for G");
    for (int i = 0; i < t->plan.nwx; i++) {
        int lo = w, hi = 0;
        for (int j = 0; j < w; j++)
            if (t->plan.chi[i * w + j]) {
                if (j < lo) lo = j;
                hi = j + 1;
            }
        t->plan.chi_lo[i] = lo < hi ? lo : 0;
        t->plan.chi_hi[i] = lo < hi ? hi : 0;
    }
    for (int d = 0; d < 5; d++)
        if (!(t->plan.gband[d] = calloc((size_t)t->plan.nw + 2 * (size_t)pad, sizeof(double))))
            return kt_fail(err, KT_ENOMEM, "timpani: out of memory for G");
    fill_g_bands(t);
    for (int b = 0; b < 2; b++)
        if (!(t->ypad[b] = calloc((size_t)t->plan.nw + 2 * (size_t)pad, sizeof(double))))
            return kt_fail(err, KT_ENOMEM, "timpani: out of memory for G");
    return KT_OK;
}

int tp_operators_build(kt_timpani *t, kt_error *err)
{
    /* every inside node's bilinear cell must lie in the padded window */
    for (int l = 0; l < t->plan.n; l++)
        if (t->plan.run_hi[l] > t->plan.run_lo[l] && (t->plan.e_il[l] < -1 || t->plan.e_il[l] > t->plan.nwx - 1))
            return kt_fail(err, KT_EINVAL, "timpani '%s': membrane row %d outside the window",
                           t->plan.p.name, l);
    for (int m = t->plan.mlo; m < t->plan.mhi; m++)
        if (t->plan.e_jm[m] < -1 || t->plan.e_jm[m] > t->plan.nwy - 1)
            return kt_fail(err, KT_EINVAL, "timpani '%s': membrane column %d outside the window",
                           t->plan.p.name, m);
    int rc = build_column_gather(t, err);
    if (rc == KT_OK && t->plan.p.coupled)
        rc = build_reduced(t, t->plan.p.solver == KT_SOLVE_DIRECT, err);
    if (rc == KT_OK && t->plan.p.coupled && t->plan.p.solver == KT_SOLVE_REDUCED)
        rc = build_g_bands(t, err);
    if (rc < 0 || t->plan.p.format == KT_TIMPANI_MATRIX_FREE)
        return rc;
    kt_format sf = KT_CSC, inf = KT_CSC;
    if (t->plan.p.format == KT_TIMPANI_CSR)
        sf = inf = KT_CSR;
    else if (t->plan.p.format == KT_TIMPANI_DIA_ELL) {
        sf = KT_DIA;
        inf = KT_ELL;
    }
    if ((rc = stencil_stored(t, 13, t->plan.cB0, t->plan.cB1, t->plan.cB2, sf, &t->plan.B, err)) < 0 ||
        (rc = stencil_stored(t, 5, t->plan.cC0, t->plan.cC1, 0.0, sf, &t->plan.C, err)) < 0 ||
        (rc = stencil_stored(t, 5, 0.0, t->plan.cV1, 0.0, sf, &t->plan.V, err)) < 0)
        return rc;
    return interp_stored(t, inf, err);
}

/* Rebuild the stored B and C after a change of tension (V, E, I23, G do not
 * depend on it; the matrix-free kernel reads the coefficients directly). */
int tp_operators_retension(kt_timpani *t, kt_error *err)
{
    if (t->plan.p.format == KT_TIMPANI_MATRIX_FREE)
        return KT_OK;
    kt_format sf = t->plan.B->format;
    kt_matrix *B = NULL, *C = NULL;
    int rc = stencil_stored(t, 13, t->plan.cB0, t->plan.cB1, t->plan.cB2, sf, &B, err);
    if (rc == KT_OK)
        rc = stencil_stored(t, 5, t->plan.cC0, t->plan.cC1, 0.0, sf, &C, err);
    if (rc < 0) {
        kt_matrix_free(B);
        return rc;
    }
    kt_matrix_free(t->plan.B);
    kt_matrix_free(t->plan.C);
    t->plan.B = B;
    t->plan.C = C;
    return KT_OK;
}

/* After a change of damping: B, C and V carry 1/(1 + sigma0 k) (V its
 * square root), G = mu_c I23 E carries it through mu_c, and the direct
 * solve's factor is that of I + G.  E and I23 do not change; the
 * matrix-free kernels read the coefficients directly. */
int tp_operators_redamp(kt_timpani *t, kt_error *err)
{
    if (t->plan.p.format != KT_TIMPANI_MATRIX_FREE) {
        kt_matrix *V = NULL;
        int rc = stencil_stored(t, 5, 0.0, t->plan.cV1, 0.0, t->plan.V->format, &V, err);
        if (rc == KT_OK)
            rc = tp_operators_retension(t, err);
        if (rc < 0) {
            kt_matrix_free(V);
            return rc;
        }
        kt_matrix_free(t->plan.V);
        t->plan.V = V;
    }
    if (!t->plan.p.coupled)
        return KT_OK;
    double s = 1.0 / (1.0 + t->plan.sigma0 * t->plan.k);
    int nnz = t->plan.G.ptr[t->plan.G.nrows];
    for (int p = 0; p < nnz; p++)
        t->plan.G.val[p] = t->plan.G0val[p] * s;
    if (t->plan.gband[0])
        fill_g_bands(t);
    return t->plan.G0c ? factor_i_plus_g(t, err) : KT_OK;
}

void tp_operators_free(kt_timpani *t)
{
    kt_matrix_free(t->plan.B);
    kt_matrix_free(t->plan.C);
    kt_matrix_free(t->plan.V);
    kt_matrix_free(t->plan.E);
    kt_matrix_free(t->plan.I23m);
    t->plan.B = t->plan.C = t->plan.V = t->plan.E = t->plan.I23m = NULL;
    tp_csr_free(&t->plan.G);
    free(t->plan.G0val);
    t->plan.G0val = NULL;
    cs_spfree(t->plan.G0c);
    t->plan.G0c = NULL;
    for (int d = 0; d < 5; d++) {
        free(t->plan.gband[d]);
        t->plan.gband[d] = NULL;
    }
    free(t->plan.chi_lo);
    free(t->plan.chi_hi);
    t->plan.chi_lo = t->plan.chi_hi = NULL;
    free(t->plan.row_ptr);
    free(t->plan.row_l);
    free(t->plan.row_w);
    t->plan.row_ptr = t->plan.row_l = NULL;
    t->plan.row_w = NULL;
    free(t->plan.col_ptr);
    free(t->plan.col_m);
    free(t->plan.col_w);
    t->plan.col_ptr = t->plan.col_m = NULL;
    t->plan.col_w = NULL;
    free(t->ypad[0]);
    free(t->ypad[1]);
    t->ypad[0] = t->ypad[1] = NULL;
    cs_sfree(t->plan.chol_S);
    cs_nfree(t->plan.chol_N);
    t->plan.chol_S = NULL;
    t->plan.chol_N = NULL;
}

/* y = A x or y += A x through the format's kernel; CSC goes through cs_gaxpy. */
static void apply_stored(const kt_timpani *t, const kt_matrix *A, const double *x, double *y,
                         int accumulate)
{
    if (A->format == KT_CSC) {
        if (!accumulate)
            memset(y, 0, (size_t)A->nrows * sizeof *y);
        cs_gaxpy(A->cs, x, y);
        return;
    }
    kt_spmv(A, x, y, accumulate, tp_threads(t), NULL);
}

/* Row kernels of the separable E and I23 below; each is one vectorisable
 * loop (AVX2 clone where the CPU has it). */
KT_VECTOR_CLONES static void masked_copy_row(const double *restrict x,
                                             const unsigned char *restrict mask,
                                             double *restrict out, int len)
{
    for (int j = 0; j < len; j++)
        out[j] = mask[j] ? x[j] : 0.0;
}

/* out[m] = (1 - b_m) in[j_m] + b_m in[j_m + 1]: one bilinear pass along a row. */
KT_VECTOR_CLONES static void lerp_gather_row(const double *restrict in, const int *restrict jm,
                                             const double *restrict fb, double *restrict out,
                                             int lo, int hi)
{
    for (int m = lo; m < hi; m++)
        out[m] = (1.0 - fb[m]) * in[jm[m]] + fb[m] * in[jm[m] + 1];
}

/* y = base - (a1 S0 + a S1), or y += a1 S0 + a S1 without a base. */
KT_VECTOR_CLONES static void blend_rows(const double *restrict S0, const double *restrict S1,
                                        double a, const double *restrict base,
                                        double *restrict y, int lo, int hi)
{
    double a1 = 1.0 - a;
    if (base)
        for (int m = lo; m < hi; m++)
            y[m] = base[m] - (a1 * S0[m] + a * S1[m]);
    else
        for (int m = lo; m < hi; m++)
            y[m] += a1 * S0[m] + a * S1[m];
}

KT_VECTOR_CLONES static void scaled_add_run(double *restrict T, double w,
                                            const double *restrict x, int lo, int hi)
{
    for (int m = lo; m < hi; m++)
        T[m] += w * x[m];
}

/* Matrix-free E: the bilinear weights are separable, so E x is one pass
 * along the window's columns (every padded window row, at each membrane
 * column m) and one along its rows (each membrane row l mixes two of those
 * results).  Window nodes outside chi are read as zero: dropping a weight
 * (design note 5.1) is the same as reading a zero. */
static void e_separable(kt_timpani *t, const double *xw, double *y, int accumulate,
                        const double *base)
{
    int s = t->plan.nwy + 2, n = t->plan.n, nt = tp_threads(t);
    double *pad = t->pad, *S = t->sep;
    if (!accumulate && !base)
        memset(y, 0, (size_t)t->plan.nn * sizeof *y);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        TP_OMP_FOR
        for (int i = 0; i < t->plan.nwx; i++)
            masked_copy_row(xw + (size_t)i * t->plan.nwy, t->plan.chi + (size_t)i * t->plan.nwy,
                            pad + (size_t)(i + 1) * s + 1, t->plan.nwy);
        TP_OMP_FOR
        for (int pi = 0; pi < t->plan.nwx + 2; pi++)
            lerp_gather_row(pad + (size_t)pi * s + 1, t->plan.e_jm, t->plan.e_fb, S + (size_t)pi * n,
                            t->plan.mlo, t->plan.mhi);
        TP_OMP_FOR
        for (int l = 0; l < n; l++) {
            const double *S0 = S + (size_t)(t->plan.e_il[l] + 1) * n;
            blend_rows(S0, S0 + n, t->plan.e_fa[l], base ? base + (size_t)l * n : NULL,
                       y + (size_t)l * n, t->plan.run_lo[l], t->plan.run_hi[l]);
        }
    }
}

/* Matrix-free I23 = (h^2/Q^2) E^T: the same two passes transposed, one
 * window row at a time (it gathers its few membrane rows, then each window
 * column gathers its few membrane columns), then the chi mask and the area
 * scale.  Rows are independent, so they are shared among threads.  With x2,
 * a second product rides along on the same index work. */
static void i23_separable(kt_timpani *t, const double *x, const double *x2, double *yw,
                          double *yw2)
{
    int n = t->plan.n, mlo = t->plan.mlo, mhi = t->plan.mhi, nt = tp_threads(t), pair = x2 != NULL;
    const int *cp = t->plan.col_ptr, *cm = t->plan.col_m;
    const double *cw = t->plan.col_w;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int i = 0; i < t->plan.nwx; i++) {
        double *restrict T = t->sep + (size_t)(i + 1) * n;
        double *restrict T2 = t->sep2 + (size_t)(i + 1) * n;
        memset(T + mlo, 0, (size_t)(mhi - mlo) * sizeof *T);
        if (pair)
            memset(T2 + mlo, 0, (size_t)(mhi - mlo) * sizeof *T2);
        for (int q = t->plan.row_ptr[i + 1]; q < t->plan.row_ptr[i + 2]; q++) {
            int l = t->plan.row_l[q], lo = t->plan.run_lo[l], hi = t->plan.run_hi[l];
            double w = t->plan.row_w[q];
            scaled_add_run(T, w, x + (size_t)l * n, lo, hi);
            if (pair)
                scaled_add_run(T2, w, x2 + (size_t)l * n, lo, hi);
        }
        const unsigned char *cr = t->plan.chi + (size_t)i * t->plan.nwy;
        double *yr = yw + (size_t)i * t->plan.nwy, *y2r = pair ? yw2 + (size_t)i * t->plan.nwy : NULL;
        for (int j = 0; j < t->plan.nwy; j++) {
            double v = 0.0, v2 = 0.0;
            if (cr[j])
                for (int q = cp[j]; q < cp[j + 1]; q++) {
                    v += cw[q] * T[cm[q]];
                    v2 += cw[q] * T2[cm[q]];
                }
            yr[j] = t->plan.hq2 * v;
            if (pair)
                y2r[j] = t->plan.hq2 * v2;
        }
    }
}

/* Which membrane columns m feed window column j, with their weights. */
static int build_column_gather(kt_timpani *t, kt_error *err)
{
    int w = t->plan.nwy;
    t->plan.col_ptr = calloc((size_t)w + 1, sizeof *t->plan.col_ptr);
    t->plan.col_m = malloc(2 * (size_t)(t->plan.mhi - t->plan.mlo + 1) * sizeof *t->plan.col_m);
    t->plan.col_w = malloc(2 * (size_t)(t->plan.mhi - t->plan.mlo + 1) * sizeof *t->plan.col_w);
    if (!t->plan.col_ptr || !t->plan.col_m || !t->plan.col_w)
        return kt_fail(err, KT_ENOMEM, "timpani: out of memory for the interpolation");
    int q = 0;
    for (int j = 0; j < w; j++) {
        t->plan.col_ptr[j] = q;
        for (int m = t->plan.mlo; m < t->plan.mhi; m++) {
            double b = t->plan.e_fb[m];
            if (t->plan.e_jm[m] == j && b != 1.0) {
                t->plan.col_m[q] = m;
                t->plan.col_w[q++] = 1.0 - b;
            } else if (t->plan.e_jm[m] + 1 == j && b != 0.0) {
                t->plan.col_m[q] = m;
                t->plan.col_w[q++] = b;
            }
        }
    }
    t->plan.col_ptr[w] = q;
    /* padded window row pi takes membrane row l with weight 1-a if il+1 == pi, a if il+2 == pi */
    int pr = t->plan.nwx + 2;
    t->plan.row_ptr = calloc((size_t)pr + 1, sizeof *t->plan.row_ptr);
    t->plan.row_l = malloc(2 * (size_t)t->plan.n * sizeof *t->plan.row_l);
    t->plan.row_w = malloc(2 * (size_t)t->plan.n * sizeof *t->plan.row_w);
    if (!t->plan.row_ptr || !t->plan.row_l || !t->plan.row_w)
        return kt_fail(err, KT_ENOMEM, "timpani: out of memory for the interpolation");
    q = 0;
    for (int pi = 0; pi < pr; pi++) {
        t->plan.row_ptr[pi] = q;
        for (int l = 0; l < t->plan.n; l++) {
            if (t->plan.run_hi[l] <= t->plan.run_lo[l])
                continue;
            double a = t->plan.e_fa[l];
            if (t->plan.e_il[l] + 1 == pi && a != 1.0) {
                t->plan.row_l[q] = l;
                t->plan.row_w[q++] = 1.0 - a;
            } else if (t->plan.e_il[l] + 2 == pi && a != 0.0) {
                t->plan.row_l[q] = l;
                t->plan.row_w[q++] = a;
            }
        }
    }
    t->plan.row_ptr[pr] = q;
    return KT_OK;
}

/* The stored formats' stages: the drum's own matrices, through apply_stored. */
static void stored_E(kt_timpani *t, const double *xw, double *y, int accumulate)
{
    apply_stored(t, t->plan.E, xw, y, accumulate);
}

static void stored_E_sub(kt_timpani *t, const double *xw, const double *base, double *y)
{
    apply_stored(t, t->plan.E, xw, y, 0);
    for (int i = 0; i < t->plan.nn; i++)
        y[i] = base[i] - y[i];
}

static void stored_I23(kt_timpani *t, const double *x, double *yw)
{
    apply_stored(t, t->plan.I23m, x, yw, 0);
}

static void stored_I23_pair(kt_timpani *t, const double *x1, const double *x2, double *y1,
                            double *y2)
{
    apply_stored(t, t->plan.I23m, x1, y1, 0);
    apply_stored(t, t->plan.I23m, x2, y2, 0);
}

/* The matrix-free stages: E and I23 as separable gathers. */
static void free_E(kt_timpani *t, const double *xw, double *y, int accumulate)
{
    e_separable(t, xw, y, accumulate, NULL);
}

static void free_E_sub(kt_timpani *t, const double *xw, const double *base, double *y)
{
    e_separable(t, xw, y, 0, base);
}

static void free_I23(kt_timpani *t, const double *x, double *yw)
{
    i23_separable(t, x, NULL, yw, NULL);
}

static void free_I23_pair(kt_timpani *t, const double *x1, const double *x2, double *y1,
                          double *y2)
{
    i23_separable(t, x1, x2, y1, y2);
}

void tp_apply_G(const kt_timpani *t, const double *xw, double *yw)
{
    const tp_csr *m = &t->plan.G;
    for (int i = 0; i < m->nrows; i++) {
        double s = 0.0;
        for (int p = m->ptr[i]; p < m->ptr[i + 1]; p++)
            s += m->val[p] * xw[m->col[p]];
        yw[i] = s;
    }
}

/* Unscaled masked Laplacian over the inside runs; entries outside stay 0
 * (x is zero outside the mask, so plain neighbours are masked neighbours). */
void tp_laplacian(const kt_timpani *t, const double *x, double *y)
{
    int n = t->plan.n;
    for (int l = 0; l < n; l++) {
        const double *xr = x + (size_t)l * n;
        double *yr = y + (size_t)l * n;
        for (int m = t->plan.run_lo[l]; m < t->plan.run_hi[l]; m++)
            yr[m] = xr[m - n] + xr[m + n] + xr[m - 1] + xr[m + 1] - 4.0 * xr[m];
    }
}

/* Pass 1 of the matrix-free stage 3 on one inside run: L = Lap u, a = cV1 L,
 * with a.a and a.u^{n-1} of the run.  The element loop vectorises; the two
 * sums run in dot4's fixed order. */
KT_VECTOR_CLONES static void rhs_row_first(const double *restrict ur, const double *restrict u1r,
                                           double *restrict Lr, double *restrict ar, int lo,
                                           int hi, int n, double cV1, double *aa, double *au1)
{
    for (int m = lo; m < hi; m++) {
        double L = ur[m - n] + ur[m + n] + ur[m - 1] + ur[m + 1] - 4.0 * ur[m];
        Lr[m] = L;
        ar[m] = cV1 * L;
    }
    *aa = tp_dot4(ar + lo, ar + lo, hi - lo);
    *au1 = tp_dot4(ar + lo, u1r + lo, hi - lo);
}

/* Pass 2 on one inside run: r = B u + C u^{n-1} - (a.u^{n-1}) a, with the
 * lossy C term only when cC1 != 0. */
KT_VECTOR_CLONES static void rhs_row_second(const kt_timpani *t, const double *restrict ur,
                                            const double *restrict u1r,
                                            const double *restrict Lr,
                                            const double *restrict ar, double *restrict rr,
                                            int lo, int hi, double au1)
{
    int n = t->plan.n;
    double cB0 = t->plan.cB0, cB1 = t->plan.cB1, cB2 = t->plan.cB2, cC0 = t->plan.cC0, cC1 = t->plan.cC1;
    if (cC1 != 0.0)
        for (int m = lo; m < hi; m++) {
            double DD = Lr[m - n] + Lr[m + n] + Lr[m - 1] + Lr[m + 1] - 4.0 * Lr[m];
            double L1 = u1r[m - n] + u1r[m + n] + u1r[m - 1] + u1r[m + 1] - 4.0 * u1r[m];
            rr[m] = cB0 * ur[m] + cB1 * Lr[m] + cB2 * DD + cC0 * u1r[m] + cC1 * L1 - au1 * ar[m];
        }
    else
        for (int m = lo; m < hi; m++) {
            double DD = Lr[m - n] + Lr[m + n] + Lr[m - 1] + Lr[m + 1] - 4.0 * Lr[m];
            rr[m] = cB0 * ur[m] + cB1 * Lr[m] + cB2 * DD + cC0 * u1r[m] - au1 * ar[m];
        }
}

/* Matrix-free stage 3 (without coupling): pass 1 forms D u, a = V u and the
 * two dot products; pass 2 the rest of B (and C). */
static void rhs_fused(kt_timpani *t, double *aa_out)
{
    int n = t->plan.n, nt = tp_threads(t);
    double *p_aa = t->rowpart, *p_au1 = t->rowpart + n, au1 = 0.0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        TP_OMP_FOR
        for (int l = 0; l < n; l++) {
            size_t o = (size_t)l * n;
            rhs_row_first(t->state.u + o, t->state.u1 + o, t->tmp + o, t->state.a + o, t->plan.run_lo[l], t->plan.run_hi[l],
                          n, t->plan.cV1, &p_aa[l], &p_au1[l]);
        }
#pragma omp single
        {
            double s = 0.0;
            for (int l = 0; l < n; l++) {
                s += p_aa[l];
                au1 += p_au1[l];
            }
            *aa_out = s;
        }
        TP_OMP_FOR
        for (int l = 0; l < n; l++) {
            size_t o = (size_t)l * n;
            rhs_row_second(t, t->state.u + o, t->state.u1 + o, t->tmp + o, t->state.a + o, t->r + o, t->plan.run_lo[l],
                           t->plan.run_hi[l], au1);
        }
    }
}

static void stored_rhs(kt_timpani *t, double *aa)
{
    apply_stored(t, t->plan.V, t->state.u, t->state.a, 0);
    *aa = kt_dot(t->plan.nn, t->state.a, t->state.a, tp_threads(t));
    double au1 = kt_dot(t->plan.nn, t->state.a, t->state.u1, tp_threads(t));
    apply_stored(t, t->plan.B, t->state.u, t->r, 0);
    apply_stored(t, t->plan.C, t->state.u1, t->r, 1);
    kt_axpy(t->plan.nn, -au1, t->state.a, t->r, tp_threads(t));
}

/* ---- the table of each form, chosen once (createTimpani) ---- */

static const tp_format_ops stored_ops = {stored_rhs, stored_E, stored_E_sub, stored_I23,
                                         stored_I23_pair};
static const tp_format_ops free_ops = {rhs_fused, free_E, free_E_sub, free_I23, free_I23_pair};

const tp_format_ops *tp_format_ops_for(kt_timpani_format f)
{
    return f == KT_TIMPANI_MATRIX_FREE ? &free_ops : &stored_ops;
}
