/* timpani_geometry.c - where the drum sits in the room and on its own grid:
 * the bowl interior and its boundary list (design note 3), the membrane grid
 * from the stability rule and its staircase mask (4.2-4.3), the interaction
 * window with its footprint chi, and the separable bilinear weights of E
 * (5.1).  Everything here runs once, in createTimpani. */
#include "timpani_internal.h"
#include "kt_physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* h_min = sqrt(X + sqrt(X^2 + 16 kappa^2 k^2)), X = c_M^2 k^2 + 2 c_M^2 alpha k (note 4.2). */
double tp_membrane_h_min(const kt_timpani_params *p, double k)
{
    double cM2 = p->tension_N_per_m / p->surface_density_kg_per_m2;
    double nu = p->poisson_ratio;
    double DM = p->youngs_modulus_Pa * pow(p->thickness_m, 3) / (12.0 * (1.0 - nu * nu));
    double kap2 = DM / p->surface_density_kg_per_m2;
    double X = cM2 * k * k + 2.0 * cM2 * p->loss_s * k;
    return sqrt(X + sqrt(X * X + 16.0 * kap2 * k * k));
}

int kt_timpani_rule_intervals(const kt_timpani_params *p, double sample_rate_hz)
{
    double n = floor(p->diameter_m / tp_membrane_h_min(p, 1.0 / sample_rate_hz));
    return n < 1e9 ? (int)n : 1000000000;   /* (NaN falls here too) */
}

/* h_min(T) <= h solved for T: with H = h^2, X <= (H^2 - 16 kappa^2 k^2) / (2 H),
 * X = c_M^2 (k^2 + 2 alpha k); a hair below, so that rounding keeps it stable. */
double kt_timpani_max_tension(const kt_timpani_params *p, int intervals, double sample_rate_hz)
{
    double k = 1.0 / sample_rate_hz, h = p->diameter_m / intervals, H = h * h;
    double nu = p->poisson_ratio;
    double DM = p->youngs_modulus_Pa * pow(p->thickness_m, 3) / (12.0 * (1.0 - nu * nu));
    double kap2 = DM / p->surface_density_kg_per_m2;
    double room = H * H - 16.0 * kap2 * k * k;
    if (!(room > 0) || intervals < 1)
        return 0;
    double cM2 = room / (2.0 * H * (k * k + 2.0 * p->loss_s * k));
    return cM2 * p->surface_density_kg_per_m2 * (1 - 1e-9);
}

/* int_0^inf sin^2(pi x) / (x (x^2 - 1)^2) dx: an infinite membrane of
 * tension T takes the energy W = I F^2 / (4 pi T) from a raised-cosine point
 * force of peak F, whatever the contact time (its real admittance is
 * omega / (4 T)). */
#define TP_STROKE_ENERGY_INTEGRAL 3.44645

double kt_timpani_stroke_stretch(const kt_timpani_params *p, double tension_N_per_m,
                                 double force_N)
{
    if (!p->nonlinear || !(force_N > 0))
        return 0.0;
    double nu = p->poisson_ratio, R = p->diameter_m / 2, T = tension_N_per_m;
    double phi = p->youngs_modulus_Pa * p->thickness_m / (2 * (1 - nu * nu) * KT_PI * R * R);
    double work = TP_STROKE_ENERGY_INTEGRAL * force_N * force_N / (4 * KT_PI * T);
    /* A budget beyond doubling the tension would only make a stroke that
     * blows the head up anyway cost a coarse grid (or refuse the score). */
    return fmin(phi * work / (T * T) / 6, 1.0);
}

int kt_timpani_stroke_intervals(const kt_timpani_params *p, double tension_N_per_m,
                                double stroke_tension_N_per_m, double force_N,
                                double time_step_s)
{
    double g = kt_timpani_stroke_stretch(p, stroke_tension_N_per_m, force_N);
    kt_timpani_params q = *p;
    q.tension_N_per_m = tension_N_per_m * (1 + g);
    return kt_timpani_rule_intervals(&q, 1.0 / time_step_s);
}

int tp_membrane_grid(const kt_timpani_params *p, double k, int *N, kt_error *err)
{
    double hmin = tp_membrane_h_min(p, k);
    int rule = (int)floor(p->diameter_m / hmin);
    if (p->membrane_intervals > rule)
        return kt_fail(err, KT_EINVAL,
                       "timpani '%s': membrane grid of %d intervals is finer than the stability "
                       "rule allows (at most %d at %.0f Hz: h >= %.4g mm)",
                       p->name, p->membrane_intervals, rule, 1.0 / k, hmin * 1e3);
    *N = p->membrane_intervals > 0 ? p->membrane_intervals : rule;
    if (*N < TP_MIN_MEMBRANE_INTERVALS)
        return kt_fail(err, KT_EINVAL,
                       "timpani '%s': sample rate %.0f Hz is too low for the membrane: the stable "
                       "grid has only %d intervals across the head (need >= %d)",
                       p->name, 1.0 / k, *N, TP_MIN_MEMBRANE_INTERVALS);
    return KT_OK;
}

/* Design note 3.1: strictly inside the paraboloid and below the membrane
 * plane, plus the rim closure (all of layer p_d with r < R). */
static int bowl_inside(const kt_timpani *t, int i, int j, int p)
{
    double dx = i * t->plan.Q - t->plan.xc, dy = j * t->plan.Q - t->plan.yc;
    double r2 = dx * dx + dy * dy, R2 = t->plan.R * t->plan.R;
    if (!(r2 < R2))
        return 0;
    double Z = p * t->plan.Q;
    double zs = t->plan.zmem - t->plan.p.bowl_depth_m * (1.0 - r2 / R2);
    if (Z < t->plan.zmem && Z > zs)
        return 1;
    return fabs(Z - t->plan.pd * t->plan.Q) < 1e-9;
}

typedef struct scratch_box {
    int lo[3], dim[3];
    unsigned char *in;
} scratch_box;

static unsigned char box_in(const scratch_box *b, int i, int j, int p)
{
    return b->in[((size_t)(p - b->lo[2]) * b->dim[1] + (j - b->lo[1])) * b->dim[0] + (i - b->lo[0])];
}

/* Open-leg mask of node (i,j,p); a leg is blocked iff exactly one end is inside. */
static uint8_t open_legs(const scratch_box *b, int i, int j, int p)
{
    static const int d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    unsigned char c = box_in(b, i, j, p);
    uint8_t open = 0;
    for (int q = 0; q < 6; q++)
        if (box_in(b, i + d[q][0], j + d[q][1], p + d[q][2]) == c)
            open |= (uint8_t)(1u << q);
    return open;
}

static int build_boundary_list(kt_timpani *t, kt_error *err)
{
    int rr = (int)ceil(t->plan.R / t->plan.Q) + 2;
    int zlo = (int)floor((t->plan.zmem - t->plan.p.bowl_depth_m) / t->plan.Q) - 2;
    scratch_box b = {{t->plan.ic - rr, t->plan.jc - rr, zlo}, {2 * rr + 1, 2 * rr + 1, t->plan.pu + 2 - zlo + 1}, NULL};
    size_t cells = (size_t)b.dim[0] * b.dim[1] * b.dim[2];
    b.in = calloc(cells, 1);
    if (!b.in)
        return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory for the shell", t->plan.p.name);
    for (int p = 0; p < b.dim[2]; p++)
        for (int j = 0; j < b.dim[1]; j++)
            for (int i = 0; i < b.dim[0]; i++)
                b.in[((size_t)p * b.dim[1] + j) * b.dim[0] + i] =
                    (unsigned char)bowl_inside(t, b.lo[0] + i, b.lo[1] + j, b.lo[2] + p);
    /* count, then fill, the nodes with a blocked leg (the scratch box has a
     * margin of one node beyond any possible list node) */
    int lo[3] = {1 << 30, 1 << 30, 1 << 30}, hi[3] = {-(1 << 30), -(1 << 30), -(1 << 30)};
    int count = 0;
    for (int pass = 0; pass < 2; pass++) {
        count = 0;
        for (int p = b.lo[2] + 1; p < b.lo[2] + b.dim[2] - 1; p++)
            for (int j = b.lo[1] + 1; j < b.lo[1] + b.dim[1] - 1; j++)
                for (int i = b.lo[0] + 1; i < b.lo[0] + b.dim[0] - 1; i++) {
                    uint8_t open = open_legs(&b, i, j, p);
                    if (open == KT_LEG_ALL)
                        continue;
                    if (pass == 1) {
                        t->plan.bnode[count] = ((int64_t)p * t->plan.ny + j) * t->plan.nx + i;
                        t->plan.bopen[count] = open;
                    } else {
                        int c[3] = {i, j, p};
                        for (int q = 0; q < 3; q++) {
                            if (c[q] < lo[q]) lo[q] = c[q];
                            if (c[q] > hi[q]) hi[q] = c[q];
                        }
                    }
                    count++;
                }
        if (pass == 0) {
            int n[3] = {t->plan.nx, t->plan.ny, t->plan.nz};
            for (int q = 0; q < 3; q++)
                if (lo[q] < 1 || hi[q] > n[q] - 2) {
                    free(b.in);
                    return kt_fail(err, KT_EINVAL,
                                   "timpani '%s' does not fit in the room: its bowl needs nodes "
                                   "%d..%d along %c but the room has 1..%d away from the walls "
                                   "(move the rim centre or enlarge the room)",
                                   t->plan.p.name, lo[q], hi[q], "xyz"[q], n[q] - 2);
                }
            t->plan.bnode = malloc((size_t)count * sizeof *t->plan.bnode);
            t->plan.bopen = malloc((size_t)count);
            if (!t->plan.bnode || !t->plan.bopen) {
                free(b.in);
                return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory for the shell list",
                               t->plan.p.name);
            }
            for (int q = 0; q < 3; q++) {
                t->ins.box_lo[q] = lo[q];
                t->ins.box_hi[q] = hi[q];
            }
        }
    }
    t->plan.bcount = count;
    free(b.in);
    return KT_OK;
}

static int build_window(kt_timpani *t, kt_error *err)
{
    double R2 = t->plan.R * t->plan.R;
    int rr = (int)ceil(t->plan.R / t->plan.Q) + 1;
    int lo[2] = {1 << 30, 1 << 30}, hi[2] = {-1, -1};
    for (int i = t->plan.ic - rr; i <= t->plan.ic + rr; i++)
        for (int j = t->plan.jc - rr; j <= t->plan.jc + rr; j++) {
            double dx = i * t->plan.Q - t->plan.xc, dy = j * t->plan.Q - t->plan.yc;
            if (dx * dx + dy * dy < R2) {
                if (i < lo[0]) lo[0] = i;
                if (i > hi[0]) hi[0] = i;
                if (j < lo[1]) lo[1] = j;
                if (j > hi[1]) hi[1] = j;
            }
        }
    t->plan.wx0 = lo[0];
    t->plan.wy0 = lo[1];
    t->plan.nwx = hi[0] - lo[0] + 1;
    t->plan.nwy = hi[1] - lo[1] + 1;
    t->plan.nw = t->plan.nwx * t->plan.nwy;
    t->plan.chi = calloc((size_t)t->plan.nw, 1);
    if (!t->plan.chi)
        return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory for the window", t->plan.p.name);
    t->plan.nchi = 0;
    for (int i = 0; i < t->plan.nwx; i++)
        for (int j = 0; j < t->plan.nwy; j++) {
            double dx = (t->plan.wx0 + i) * t->plan.Q - t->plan.xc, dy = (t->plan.wy0 + j) * t->plan.Q - t->plan.yc;
            t->plan.chi[i * t->plan.nwy + j] = dx * dx + dy * dy < R2;
            t->plan.nchi += t->plan.chi[i * t->plan.nwy + j];
        }
    return KT_OK;
}

static int build_membrane(kt_timpani *t, kt_error *err)
{
    t->plan.n = t->plan.N + 1;
    t->plan.nn = t->plan.n * t->plan.n;
    t->plan.h = 2.0 * t->plan.R / t->plan.N;
    t->plan.mask = calloc((size_t)t->plan.nn, 1);
    t->plan.inside = malloc((size_t)t->plan.nn * sizeof *t->plan.inside);
    t->plan.e_il = malloc((size_t)t->plan.n * sizeof *t->plan.e_il);
    t->plan.e_jm = malloc((size_t)t->plan.n * sizeof *t->plan.e_jm);
    t->plan.e_fa = malloc((size_t)t->plan.n * sizeof *t->plan.e_fa);
    t->plan.e_fb = malloc((size_t)t->plan.n * sizeof *t->plan.e_fb);
    t->plan.run_lo = malloc((size_t)t->plan.n * sizeof *t->plan.run_lo);
    t->plan.run_hi = malloc((size_t)t->plan.n * sizeof *t->plan.run_hi);
    if (!t->plan.mask || !t->plan.inside || !t->plan.e_il || !t->plan.e_jm || !t->plan.e_fa || !t->plan.e_fb || !t->plan.run_lo ||
        !t->plan.run_hi)
        return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory for the membrane", t->plan.p.name);
    /* Inside means r < R, tested in exact integers (2r/h)^2 < N^2: node
     * positions computed in metres from the drum's centre round differently
     * for each placement, and a rim node that rounded inside put the
     * Laplacian's neighbours outside the grid. */
    t->plan.ninside = 0;
    for (int l = 0; l < t->plan.n; l++) {
        long di = 2L * l - t->plan.N;
        t->plan.run_lo[l] = t->plan.run_hi[l] = 0;
        for (int m = 0; m < t->plan.n; m++) {
            long dj = 2L * m - t->plan.N;
            if (di * di + dj * dj < (long)t->plan.N * t->plan.N) {
                if (t->plan.run_hi[l] == 0)
                    t->plan.run_lo[l] = m;
                else if (t->plan.run_hi[l] != m)
                    return kt_fail(err, KT_EINVAL, "timpani '%s': membrane row %d is not one run",
                                   t->plan.p.name, l);
                t->plan.run_hi[l] = m + 1;
                t->plan.mask[l * t->plan.n + m] = 1;
                t->plan.inside[t->plan.ninside++] = l * t->plan.n + m;
            }
        }
    }
    t->plan.mlo = t->plan.n;
    t->plan.mhi = 0;
    for (int l = 0; l < t->plan.n; l++)
        if (t->plan.run_hi[l] > t->plan.run_lo[l]) {
            if (t->plan.run_lo[l] < t->plan.mlo) t->plan.mlo = t->plan.run_lo[l];
            if (t->plan.run_hi[l] > t->plan.mhi) t->plan.mhi = t->plan.run_hi[l];
        }
    /* bilinear position of each membrane row/column in window units */
    for (int l = 0; l < t->plan.n; l++) {
        double xi = (((t->plan.xc - t->plan.R) + l * t->plan.h) - t->plan.wx0 * t->plan.Q) / t->plan.Q;
        t->plan.e_il[l] = (int)floor(xi);
        t->plan.e_fa[l] = xi - t->plan.e_il[l];
    }
    for (int m = 0; m < t->plan.n; m++) {
        double eta = (((t->plan.yc - t->plan.R) + m * t->plan.h) - t->plan.wy0 * t->plan.Q) / t->plan.Q;
        t->plan.e_jm[m] = (int)floor(eta);
        t->plan.e_fb[m] = eta - t->plan.e_jm[m];
    }
    return KT_OK;
}

int tp_geometry_build(kt_timpani *t, const kt_room *room, kt_error *err)
{
    const kt_room_grid *gr = kt_room_get_grid(room);
    t->plan.nx = gr->nx;
    t->plan.ny = gr->ny;
    t->plan.nz = gr->nz;
    t->plan.Q = gr->spacing_m;
    t->plan.k = gr->time_step_s;
    t->plan.lambda2 = gr->courant * gr->courant;
    t->plan.R = 0.5 * t->plan.p.diameter_m;
    const double *c = t->plan.p.rim_centre_m;
    t->plan.ic = (int)lround(c[0] / t->plan.Q);
    t->plan.jc = (int)lround(c[1] / t->plan.Q);
    t->plan.pd = (int)lround(c[2] / t->plan.Q - 0.5);
    t->plan.pu = t->plan.pd + 1;
    t->plan.xc = t->plan.ic * t->plan.Q;
    t->plan.yc = t->plan.jc * t->plan.Q;
    t->plan.zmem = (t->plan.pd + 0.5) * t->plan.Q;
    int rc;
    if ((rc = tp_membrane_grid(&t->plan.p, t->plan.k, &t->plan.N, err)) < 0)
        return rc;
    if ((rc = build_boundary_list(t, err)) < 0)
        return rc;
    if ((rc = build_window(t, err)) < 0)
        return rc;
    return build_membrane(t, err);
}

/* Nearest inside membrane node to the point (x, y) relative to the axis, or -1
 * when the point is not on the head. */
int tp_nearest_inside(const kt_timpani *t, double x_m, double y_m)
{
    if (!(x_m * x_m + y_m * y_m < t->plan.R * t->plan.R))
        return -1;
    int l0 = (int)lround((x_m + t->plan.R) / t->plan.h), m0 = (int)lround((y_m + t->plan.R) / t->plan.h);
    int best = -1;
    double bestd = INFINITY;
    for (int l = l0 - 2; l <= l0 + 2; l++)
        for (int m = m0 - 2; m <= m0 + 2; m++) {
            if (l < 0 || m < 0 || l >= t->plan.n || m >= t->plan.n || !t->plan.mask[l * t->plan.n + m])
                continue;
            double dx = l * t->plan.h - t->plan.R - x_m, dy = m * t->plan.h - t->plan.R - y_m;
            double d = dx * dx + dy * dy;
            if (d < bestd) {
                bestd = d;
                best = l * t->plan.n + m;
            }
        }
    return best;
}
