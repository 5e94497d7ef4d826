/* kt_stencil.c - masked constant-coefficient 2D stencils on an n x n grid:
 * the unrolled, matrix-free form of the membrane operators (thesis 7.3.5),
 * and the stored matrix of the same operator, for checking and for the
 * matrix-based schemes.
 *
 * With M the mask and D = M L5 M the masked 5-point Laplacian,
 *   stencil5:  y = c0 M x + c1 D x
 *   stencil13: y = c0 M x + c1 D x + c2 D D x.
 * Written out at a masked point p (m_q = mask, 0 outside the grid;
 * mx_q = x_q where m_q = 1, else 0; N, S, W, E the four neighbours):
 *   (D x)_p   = -4 x_p + S1,        S1 = mx_N + mx_S + mx_W + mx_E
 *   (D D x)_p = (16 + nmask_p) x_p - 8 S1 + T,
 *   T = (m_N + m_W) mx_NW + (m_N + m_E) mx_NE + (m_S + m_W) mx_SW
 *     + (m_S + m_E) mx_SE + m_N mx_NN + m_S mx_SS + m_W mx_WW + m_E mx_EE
 * where nmask_p counts the masked 4-neighbours (each contributes one path
 * p -> q -> p), a diagonal point is reached through both common neighbours,
 * and a point two steps along an axis through the midpoint.  At unmasked
 * points y = 0.  Interior rows run a branch-free loop over j that the
 * compiler vectorises; the two-point rim uses the checked per-point form.
 * Nothing is written but y, so one stencil may be applied from many threads. */
#include "kt_linalg.h"
#include "kt_linalg_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- set-up ---- */

static int mask_at(const kt_stencil *s, int i, int j);

/* Is the whole stencil around (i, j) inside the grid and masked? */
static int stencil_full(const kt_stencil *s, int i, int j)
{
    static const int five[5][2] = {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    static const int more[8][2] = {{-1, -1}, {-1, 1}, {1, -1}, {1, 1},
                                   {-2, 0},  {2, 0},  {0, -2}, {0, 2}};
    for (int k = 0; k < 5; k++)
        if (!mask_at(s, i + five[k][0], j + five[k][1]))
            return 0;
    for (int k = 0; s->points == 13 && k < 8; k++)
        if (!mask_at(s, i + more[k][0], j + more[k][1]))
            return 0;
    return 1;
}

/* spans of row i (see kt_stencil): masked extent, and its longest run of
 * points whose stencil is whole. */
static void row_spans(const kt_stencil *s, int i, int *sp)
{
    const int n = s->n;
    int a = 0, b = 0, lo = 0, hi = 0;
    while (a < n && !s->mask[i * n + a])
        a++;
    for (b = n; b > a && !s->mask[i * n + b - 1]; b--)
        ;
    for (int j = a; j < b;) {
        if (!stencil_full(s, i, j)) {
            j++;
            continue;
        }
        int k = j;
        while (k < b && stencil_full(s, i, k))
            k++;
        if (k - j > hi - lo)
            lo = j, hi = k;
        j = k;
    }
    if (hi == lo)
        lo = hi = a;
    sp[0] = a, sp[1] = lo, sp[2] = hi, sp[3] = b;
}

int kt_stencil_init(kt_stencil *s, int n, const unsigned char *mask, int points, double c0,
                    double c1, double c2, kt_error *err)
{
    if (!s)
        return kt_fail(err, KT_EINVAL, "kt_stencil_init: stencil is NULL");
    memset(s, 0, sizeof *s);
    if (n < 1 || n > 46340)
        return kt_fail(err, KT_EINVAL, "kt_stencil_init: grid size n = %d outside 1..46340", n);
    if (!mask)
        return kt_fail(err, KT_EINVAL, "kt_stencil_init: mask is NULL");
    if (points != 5 && points != 13)
        return kt_fail(err, KT_EINVAL, "kt_stencil_init: points must be 5 or 13, got %d",
                       points);
    for (size_t p = 0; p < (size_t)n * n; p++)
        if (mask[p] > 1)
            return kt_fail(err, KT_EINVAL,
                           "kt_stencil_init: mask[%zu] = %d, masks hold only 0 or 1", p,
                           mask[p]);
    s->nmask = malloc((size_t)n * n);
    if (!s->nmask)
        return kt_fail(err, KT_ENOMEM, "kt_stencil_init: out of memory for a %d x %d grid", n,
                       n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int c = 0;
            c += i > 0 && mask[(i - 1) * n + j];
            c += i + 1 < n && mask[(i + 1) * n + j];
            c += j > 0 && mask[i * n + j - 1];
            c += j + 1 < n && mask[i * n + j + 1];
            s->nmask[i * n + j] = (unsigned char)c;
        }
    s->n = n;
    s->mask = mask;
    s->points = points;
    s->spans = malloc(4 * (size_t)n * sizeof *s->spans);
    if (!s->spans) {
        free(s->nmask);
        memset(s, 0, sizeof *s);
        return kt_fail(err, KT_ENOMEM, "kt_stencil_init: out of memory for a %d x %d grid", n,
                       n);
    }
    for (int i = 0; i < n; i++)
        row_spans(s, i, s->spans + 4 * (size_t)i);
    s->c0 = c0;
    s->c1 = c1;
    s->c2 = c2;
    return KT_OK;
}

void kt_stencil_release(kt_stencil *s)
{
    if (!s)
        return;
    free(s->nmask);
    free(s->spans);
    memset(s, 0, sizeof *s);
}

/* ---- the checked per-point form (grid rim; also the reference) ---- */

static int mask_at(const kt_stencil *s, int i, int j)
{
    return i >= 0 && i < s->n && j >= 0 && j < s->n ? s->mask[i * s->n + j] : 0;
}

static double mx_at(const kt_stencil *s, const double *x, int i, int j)
{
    return mask_at(s, i, j) ? x[i * s->n + j] : 0.0;
}

static double point_value(const kt_stencil *s, const double *x, int i, int j)
{
    const int p = i * s->n + j;
    if (!s->mask[p])
        return 0.0;
    double S1 = mx_at(s, x, i - 1, j) + mx_at(s, x, i + 1, j) + mx_at(s, x, i, j - 1) +
                mx_at(s, x, i, j + 1);
    if (s->points == 5)
        return (s->c0 - 4.0 * s->c1) * x[p] + s->c1 * S1;
    double mN = mask_at(s, i - 1, j), mS = mask_at(s, i + 1, j);
    double mW = mask_at(s, i, j - 1), mE = mask_at(s, i, j + 1);
    double T = (mN + mW) * mx_at(s, x, i - 1, j - 1) + (mN + mE) * mx_at(s, x, i - 1, j + 1) +
               (mS + mW) * mx_at(s, x, i + 1, j - 1) + (mS + mE) * mx_at(s, x, i + 1, j + 1) +
               mN * mx_at(s, x, i - 2, j) + mS * mx_at(s, x, i + 2, j) +
               mW * mx_at(s, x, i, j - 2) + mE * mx_at(s, x, i, j + 2);
    double centre = (s->c0 - 4.0 * s->c1 + 16.0 * s->c2) + s->c2 * s->nmask[p];
    return centre * x[p] + (s->c1 - 8.0 * s->c2) * S1 + s->c2 * T;
}

static void rim_points(const kt_stencil *s, const double *x, double *y, int accumulate, int i,
                       int j0, int j1)
{
    for (int j = j0; j < j1; j++) {
        double v = point_value(s, x, i, j);
        y[i * s->n + j] = accumulate ? y[i * s->n + j] + v : v;
    }
}

/* ---- unrolled interior rows ---- */

/* v where m = 1, else +0: an AND with the mask widened to all-ones or zero.
 * Branch-free (so the loops vectorise; GCC will not if-convert a select on
 * doubles under trapping math) and exact (a NaN outside the mask stays out). */
static inline double keep_if(double v, unsigned char m)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits &= (uint64_t)0 - (uint64_t)m;
    memcpy(&v, &bits, sizeof v);
    return v;
}
#define MX(xr, mr, j) keep_if((xr)[j], (mr)[j])

/* Row i, columns [j0, j1) within [1, n-1), for 1 <= i < n-1: every
 * 4-neighbour is in the grid, any may be unmasked. */
static inline void row5(const kt_stencil *s, const double *restrict x, double *restrict y,
                        const int accumulate, int i, int j0, int j1)
{
    const int n = s->n;
    const double *restrict xn = x + (size_t)(i - 1) * n, *restrict xc = x + (size_t)i * n,
                           *restrict xs = x + (size_t)(i + 1) * n;
    const unsigned char *restrict mn = s->mask + (size_t)(i - 1) * n,
                                  *restrict mc = s->mask + (size_t)i * n,
                                  *restrict ms = s->mask + (size_t)(i + 1) * n;
    double *restrict yc = y + (size_t)i * n;
    const double k0 = s->c0 - 4.0 * s->c1, k1 = s->c1;
    for (int j = j0; j < j1; j++) {
        double S1 = MX(xn, mn, j) + MX(xs, ms, j) + MX(xc, mc, j - 1) + MX(xc, mc, j + 1);
        double v = keep_if(k0 * xc[j] + k1 * S1, mc[j]);
        if (accumulate)
            yc[j] += v;
        else
            yc[j] = v;
    }
}

/* Row i, columns [j0, j1) within [2, n-2), for 2 <= i < n-2: all 13 points
 * are in the grid, any may be unmasked. */
static inline void row13(const kt_stencil *s, const double *restrict x, double *restrict y,
                         const int accumulate, int i, int j0, int j1)
{
    const int n = s->n;
    const size_t r = (size_t)i * n;
    const double *restrict xa = x + r - 2 * (size_t)n, *restrict xb = x + r - n,
                           *restrict xc = x + r, *restrict xd = x + r + n,
                           *restrict xe = x + r + 2 * (size_t)n;
    const unsigned char *restrict ma = s->mask + r - 2 * (size_t)n,
                                  *restrict mb = s->mask + r - n, *restrict mc = s->mask + r,
                                  *restrict md = s->mask + r + n,
                                  *restrict me = s->mask + r + 2 * (size_t)n;
    const unsigned char *restrict nm = s->nmask + r;
    double *restrict yc = y + r;
    const double k0 = s->c0 - 4.0 * s->c1 + 16.0 * s->c2, k1 = s->c1 - 8.0 * s->c2,
                 k2 = s->c2;
    for (int j = j0; j < j1; j++) {
        double mN = mb[j], mS = md[j], mW = mc[j - 1], mE = mc[j + 1];
        double S1 = MX(xb, mb, j) + MX(xd, md, j) + MX(xc, mc, j - 1) + MX(xc, mc, j + 1);
        double T = (mN + mW) * MX(xb, mb, j - 1) + (mN + mE) * MX(xb, mb, j + 1) +
                   (mS + mW) * MX(xd, md, j - 1) + (mS + mE) * MX(xd, md, j + 1) +
                   mN * MX(xa, ma, j) + mS * MX(xe, me, j) + mW * MX(xc, mc, j - 2) +
                   mE * MX(xc, mc, j + 2);
        double v = (k0 + k2 * nm[j]) * xc[j] + k1 * S1 + k2 * T;
        v = keep_if(v, mc[j]);
        if (accumulate)
            yc[j] += v;
        else
            yc[j] = v;
    }
}

/* Columns [j0, j1) of row i where the whole stencil is masked (and inside
 * the grid): the constant-coefficient stencil, no masks to read.  This is
 * the bulk of a drum. */
static inline void full5(const kt_stencil *s, const double *restrict x, double *restrict y,
                         const int accumulate, int i, int j0, int j1)
{
    const int n = s->n;
    const double *restrict xn = x + (size_t)(i - 1) * n, *restrict xc = x + (size_t)i * n,
                           *restrict xs = x + (size_t)(i + 1) * n;
    double *restrict yc = y + (size_t)i * n;
    const double k0 = s->c0 - 4.0 * s->c1, k1 = s->c1;
    for (int j = j0; j < j1; j++) {
        double v = k0 * xc[j] + k1 * ((xn[j] + xs[j]) + (xc[j - 1] + xc[j + 1]));
        if (accumulate)
            yc[j] += v;
        else
            yc[j] = v;
    }
}

static inline void full13(const kt_stencil *s, const double *restrict x, double *restrict y,
                          const int accumulate, int i, int j0, int j1)
{
    const int n = s->n;
    const size_t r = (size_t)i * n;
    const double *restrict xa = x + r - 2 * (size_t)n, *restrict xb = x + r - n,
                           *restrict xc = x + r, *restrict xd = x + r + n,
                           *restrict xe = x + r + 2 * (size_t)n;
    double *restrict yc = y + r;
    /* every point masked: nmask = 4, diagonals reached by two paths */
    const double k0 = s->c0 - 4.0 * s->c1 + 20.0 * s->c2, k1 = s->c1 - 8.0 * s->c2,
                 kd = 2.0 * s->c2, k2 = s->c2;
    for (int j = j0; j < j1; j++) {
        double v = k0 * xc[j] + k1 * ((xb[j] + xd[j]) + (xc[j - 1] + xc[j + 1])) +
                   kd * ((xb[j - 1] + xb[j + 1]) + (xd[j - 1] + xd[j + 1])) +
                   k2 * ((xa[j] + xe[j]) + (xc[j - 2] + xc[j + 2]));
        if (accumulate)
            yc[j] += v;
        else
            yc[j] = v;
    }
}

/* Columns [j0, j1) of row i through the masked kernels: per point with
 * checks where the stencil leaves the grid, unrolled elsewhere.  Each
 * kernel is called with a constant `accumulate`, so its loop is branch-free. */
static void masked_span(const kt_stencil *s, const double *x, double *y, int accumulate, int i,
                        int j0, int j1)
{
    const int n = s->n, r = s->points == 5 ? 1 : 2;
    int a = j0 > r ? j0 : r, b = j1 < n - r ? j1 : n - r;
    if (i < r || i >= n - r || a >= b) {
        rim_points(s, x, y, accumulate, i, j0, j1);
        return;
    }
    rim_points(s, x, y, accumulate, i, j0, a);
    if (s->points == 5 && accumulate)
        row5(s, x, y, 1, i, a, b);
    else if (s->points == 5)
        row5(s, x, y, 0, i, a, b);
    else if (accumulate)
        row13(s, x, y, 1, i, a, b);
    else
        row13(s, x, y, 0, i, a, b);
    rim_points(s, x, y, accumulate, i, b, j1);
}

static void full_span(const kt_stencil *s, const double *x, double *y, int accumulate, int i,
                      int j0, int j1)
{
    if (s->points == 5 && accumulate)
        full5(s, x, y, 1, i, j0, j1);
    else if (s->points == 5)
        full5(s, x, y, 0, i, j0, j1);
    else if (accumulate)
        full13(s, x, y, 1, i, j0, j1);
    else
        full13(s, x, y, 0, i, j0, j1);
}

/* Row i: zero outside the masked columns [a, b), the masked kernels on the
 * rim [a, lo) and [hi, b), the constant stencil on [lo, hi). */
static void stencil_row(const kt_stencil *s, const double *x, double *y, int accumulate, int i)
{
    const int n = s->n, *sp = s->spans + 4 * (size_t)i;
    double *yr = y + (size_t)i * n;
    if (!accumulate) {
        for (int j = 0; j < sp[0]; j++)
            yr[j] = 0.0;
        for (int j = sp[3]; j < n; j++)
            yr[j] = 0.0;
    }
    masked_span(s, x, y, accumulate, i, sp[0], sp[1]);
    full_span(s, x, y, accumulate, i, sp[1], sp[2]);
    masked_span(s, x, y, accumulate, i, sp[2], sp[3]);
}

static void stencil_apply(const void *ctx, const double *x, double *y, int accumulate,
                          int nthreads)
{
    const kt_stencil *s = ctx;
    if (!s || !s->nmask || !s->spans)
        return;
    const int n = s->n;
    const int team = kt_team_size((long)n * n, nthreads);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int i = 0; i < n; i++)
        stencil_row(s, x, y, accumulate, i);
}

kt_operator kt_operator_stencil(const kt_stencil *s)
{
    int N = s ? s->n * s->n : 0;
    kt_operator op = {N, N, s, stencil_apply};
    return op;
}

/* ---- the stored matrix of the same operator ---- */

static int add_entry(kt_matrix *T, const kt_stencil *s, int p, int i, int j, double v,
                     kt_error *err)
{
    if (!mask_at(s, i, j) || v == 0.0)
        return KT_OK;
    return kt_matrix_entry(T, p, i * s->n + j, v, err);
}

static int stencil_point_entries(kt_matrix *T, const kt_stencil *s, int i, int j,
                                 kt_error *err)
{
    const int p = i * s->n + j;
    const double c0 = s->c0, c1 = s->c1, c2 = s->points == 13 ? s->c2 : 0.0;
    static const int nbr[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    int rc = kt_matrix_entry(T, p, p, (c0 - 4.0 * c1 + 16.0 * c2) + c2 * s->nmask[p], err);
    for (int k = 0; k < 4 && rc == KT_OK; k++)
        rc = add_entry(T, s, p, i + nbr[k][0], j + nbr[k][1], c1 - 8.0 * c2, err);
    if (s->points == 5)
        return rc;
    for (int di = -1; di <= 1 && rc == KT_OK; di += 2)
        for (int dj = -1; dj <= 1 && rc == KT_OK; dj += 2) {
            int paths = mask_at(s, i + di, j) + mask_at(s, i, j + dj);
            rc = add_entry(T, s, p, i + di, j + dj, c2 * paths, err);
        }
    for (int k = 0; k < 4 && rc == KT_OK; k++) {
        int mid = mask_at(s, i + nbr[k][0], j + nbr[k][1]);
        rc = add_entry(T, s, p, i + 2 * nbr[k][0], j + 2 * nbr[k][1], c2 * mid, err);
    }
    return rc;
}

int kt_stencil_matrix(const kt_stencil *s, kt_matrix **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_stencil_matrix: out is NULL");
    *out = NULL;
    if (!s || !s->nmask || !s->mask)
        return kt_fail(err, KT_EINVAL, "kt_stencil_matrix: stencil is not initialised");
    const int n = s->n;
    long masked = 0;
    for (long p = 0; p < (long)n * n; p++)
        masked += s->mask[p];
    kt_matrix *T;
    int rc = kt_matrix_triplet(n * n, n * n, (int)(masked * s->points), &T, err);
    if (rc != KT_OK)
        return rc;
    for (int i = 0; i < n && rc == KT_OK; i++)
        for (int j = 0; j < n && rc == KT_OK; j++)
            if (s->mask[i * n + j])
                rc = stencil_point_entries(T, s, i, j, err);
    if (rc != KT_OK) {
        kt_matrix_free(T);
        return rc;
    }
    *out = T;
    return KT_OK;
}
