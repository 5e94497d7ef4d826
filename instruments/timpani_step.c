/* timpani_step.c - one time step of the drum inside the room's step (design
 * note 7.2, single pass): the room has swept the air, applied the shell/lid
 * list and the sources; here we form the membrane right-hand side (stage 3,
 * Algorithm 17), solve (I + a a^T + P) u^{n+1} = r (stage 4: Jacobi with
 * Sherman-Morrison, its reduced form on the window, or the direct Woodbury
 * solve of note 9), and push the membrane flux into the two air layers
 * (stage 6).  No allocation happens here. */
#include "timpani_internal.h"
#include "kt_physics.h"

#include <math.h>
#include <string.h>

static void add_strikes(kt_timpani *t, double time_s)
{
    double scale = t->plan.strike_scale;
    for (int s = 0; s < t->state.nstrikes; s++) {
        const tp_strike *st = &t->state.strikes[s];
        double tau = time_s - st->start_s;
        if (tau >= 0.0 && tau < st->duration_s)
            t->r[st->node] +=
                scale * 0.5 * st->force_N * (1.0 - cos(2.0 * KT_PI * tau / st->duration_s));
    }
}

/* x.y over the inside runs of two membrane vectors (per-row partials). */
static double dot_inside(const kt_timpani *t, const double *x, const double *y)
{
    int n = t->plan.n, nt = tp_threads(t);
    double *part = t->rowpart, s = 0.0;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int l = 0; l < n; l++) {
        size_t o = (size_t)l * n + t->plan.run_lo[l];
        part[l] = tp_dot4(x + o, y + o, t->plan.run_hi[l] - t->plan.run_lo[l]);
    }
    for (int l = 0; l < n; l++)
        s += part[l];
    return s;
}

/* u = (I + a a^T)^{-1} p by Sherman-Morrison over the inside runs.  With
 * want_increment, also |u_new - u_old|^2 in *d2 and |u_new|^2 in *u2 (u
 * holds the old iterate on entry). */
static void sm_update(const kt_timpani *t, const double *p, double ainv, double *u,
                      int want_increment, double *d2, double *u2)
{
    const double *a = t->state.a;
    int n = t->plan.n, nt = tp_threads(t);
    double *pa = t->rowpart, *pd = t->rowpart + n, *pu = t->rowpart + 2 * n, c = 0.0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        TP_OMP_FOR
        for (int l = 0; l < n; l++) {
            size_t o = (size_t)l * n + t->plan.run_lo[l];
            pa[l] = tp_dot4(a + o, p + o, t->plan.run_hi[l] - t->plan.run_lo[l]);
        }
#pragma omp single
        {
            double s = 0.0;
            for (int l = 0; l < n; l++)
                s += pa[l];
            c = s * ainv;
        }
        TP_OMP_FOR
        for (int l = 0; l < n; l++) {
            size_t o = (size_t)l * n;
            const double *restrict pr = p + o, *restrict ar = a + o;
            double *restrict ur = u + o;
            int lo = t->plan.run_lo[l], hi = t->plan.run_hi[l];
            double dd = 0.0, uu = 0.0, cc = c;
            if (want_increment)
                for (int m = lo; m < hi; m++) {
                    double v = pr[m] - ar[m] * cc, d = v - ur[m];
                    dd += d * d;
                    uu += v * v;
                    ur[m] = v;
                }
            else
                for (int m = lo; m < hi; m++)
                    ur[m] = pr[m] - ar[m] * cc;
            pd[l] = dd;
            pu[l] = uu;
        }
    }
    double dd = 0.0, uu = 0.0;
    for (int l = 0; l < n; l++) {
        dd += pd[l];
        uu += pu[l];
    }
    *d2 = dd;
    *u2 = uu;
}

static int converged(const kt_timpani *t, double d2, double u2)
{
    double tol = t->plan.p.solver_tolerance;
    return tol > 0.0 && d2 <= tol * tol * u2;
}

static void record_increment(kt_timpani *t, int iterations, double d2, double u2)
{
    t->state.last_iterations = iterations;
    t->state.last_increment = u2 > 0.0 ? sqrt(d2 / u2) : 0.0;
}

/* Algorithm 18 on the membrane grid from the extrapolated guess. */
static void solve_jacobi(kt_timpani *t, double ainv)
{
    double *u = t->state.unew, *p = t->tmp, *wa = t->wa;
    for (int q = 0; q < t->plan.ninside; q++) {
        int j = t->plan.inside[q];
        u[j] = 2.0 * t->state.u[j] - t->state.u1[j];
    }
    double d2 = 0.0, u2 = 0.0;
    int it, m = t->plan.p.solver_iterations, adaptive = t->plan.p.solver_tolerance > 0.0;
    for (it = 1; it <= m; it++) {
        t->ops->I23(t, u, wa);                  /* p = r - E (mu_c I23 u) = r - P u */
        for (int i = 0; i < t->plan.nw; i++)
            wa[i] *= -t->plan.mu_c;
        memcpy(p, t->r, (size_t)t->plan.nn * sizeof *p);
        t->ops->E(t, wa, p, 1);
        sm_update(t, p, ainv, u, adaptive || it == m, &d2, &u2);
        if (converged(t, d2, u2))
            break;
    }
    record_increment(t, it > t->plan.p.solver_iterations ? t->plan.p.solver_iterations : it, d2, u2);
}

/* One row of yn = s + c eI - G y, i in [lo, hi): G from its diagonal g0 and
 * upper bands g1..g4 (offsets 1, w-1, w, w+1), the lower ones by symmetry. */
KT_VECTOR_CLONES static void g_band_row(int lo, int hi, int w, double c,
                                        const double *restrict s, const double *restrict eI,
                                        const double *restrict g0, const double *restrict g1,
                                        const double *restrict g2, const double *restrict g3,
                                        const double *restrict g4, const double *restrict y,
                                        double *restrict yn)
{
    for (int i = lo; i < hi; i++)
        yn[i] = s[i] + c * eI[i] -
                (g0[i] * y[i] + g1[i] * y[i + 1] + g1[i - 1] * y[i - 1] + g2[i] * y[i + w - 1] +
                 g2[i - w + 1] * y[i - w + 1] + g3[i] * y[i + w] + g3[i - w] * y[i - w] +
                 g4[i] * y[i + w + 1] + g4[i - w - 1] * y[i - w - 1]);
}

/* |yn - y|^2 over [lo, hi), four partial sums in a fixed order. */
static double diff2(const double *y, const double *yn, int lo, int hi)
{
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    for (int i = lo; i < hi; i++) {
        double d = yn[i] - y[i];
        s[(i - lo) & 3] += d * d;
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
}

/* Window row `row` of one reduced step, with its share of the next step's
 * eI.y in part[0] and, when asked, of the increment in part[1], part[2]. */
static void reduced_row(const kt_timpani *t, int row, const double *s, const double *eI, double c,
                        const double *y, double *yn, int want_increment, double part[3])
{
    int w = t->plan.nwy, pad = w + 1, lo = row * w + t->plan.chi_lo[row], hi = row * w + t->plan.chi_hi[row];
    g_band_row(lo, hi, w, c, s, eI, t->plan.gband[0] + pad, t->plan.gband[1] + pad, t->plan.gband[2] + pad,
               t->plan.gband[3] + pad, t->plan.gband[4] + pad, y, yn);
    part[0] = tp_dot4(eI + lo, yn + lo, hi - lo);
    if (want_increment) {
        part[1] = diff2(y, yn, lo, hi);
        part[2] = tp_dot4(yn + lo, yn + lo, hi - lo);
    }
}

/* The reduced steps 1..m-1 in one parallel region: each step is one shared
 * loop over the window rows, whose implicit barrier is the only one; every
 * thread then adds the per-row partials in row order itself (same value in
 * all threads, no single section).  Partials alternate between two sets so
 * that a thread one step ahead cannot overwrite what another still reads.
 * Returns the last iterate; *d2, *y2 its increment, *iters the count. */
static double *reduced_iterations(const kt_timpani *t, const double *s, const double *eI,
                                  double cf, double *y, double *yn, int *iters, double *d2,
                                  double *y2)
{
    int rows = t->plan.nwx, m = t->plan.p.solver_iterations, nt = tp_threads(t);
    int adaptive = t->plan.p.solver_tolerance > 0.0;
    double *part = t->rowpart, c0 = cf * tp_dot4(eI, y, t->plan.nw), *last = y;
    int count = 1;
    double dd = 0.0, yy = 0.0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *ya = y, *yb = yn, c = c0, sd = 0.0, sy = 0.0;
        int it = 1;
        for (; it < m; it++) {
            int inc = adaptive || it == m - 1;
            double *pset = part + (size_t)(it & 1) * 3 * rows, se = 0.0;
            TP_OMP_FOR
            for (int row = 0; row < rows; row++)
                reduced_row(t, row, s, eI, c, ya, yb, inc, pset + 3 * row);
            if (inc)
                sd = sy = 0.0;
            for (int row = 0; row < rows; row++) {
                se += pset[3 * row];
                if (inc) {
                    sd += pset[3 * row + 1];
                    sy += pset[3 * row + 2];
                }
            }
            double *sw = ya;
            ya = yb;
            yb = sw;
            c = cf * se;
            if (inc && converged(t, sd, sy)) {
                it++;
                break;
            }
        }
#pragma omp master
        {
            last = ya;
            count = it;
            dd = sd;
            yy = sy;
        }
    }
    *iters = count;
    *d2 = dd;
    *y2 = yy;
    return last;
}

/* The same iterates on y = F u (note 9.1): y0 = F(2u^n - u^{n-1}) from the
 * cached I23 u; m-1 reduced steps; then u = M^{-1}(r - E y). */
static void solve_reduced(kt_timpani *t, double ainv)
{
    int nw = t->plan.nw, pad = t->plan.nwy + 1, m = t->plan.p.solver_iterations;
    int adaptive = t->plan.p.solver_tolerance > 0.0;
    double *eI = t->wc, *s = t->wd, mu = t->plan.mu_c;
    double *y = t->ypad[0] ? t->ypad[0] + pad : t->wa, *yn = t->ypad[1] ? t->ypad[1] + pad : t->wb;
    t->ops->I23_pair(t, t->state.a, t->r, eI, s);
    double ar = dot_inside(t, t->state.a, t->r) * ainv;
    for (int i = 0; i < nw; i++) {
        s[i] = mu * (s[i] - eI[i] * ar);
        y[i] = mu * (2.0 * t->state.w[i] - t->state.w1[i]);
    }
    double cf = mu * ainv / t->plan.hq2, d2 = 0.0, y2 = 0.0;
    int it = 1;
    if (t->plan.gband[0])
        y = reduced_iterations(t, s, eI, cf, y, yn, &it, &d2, &y2);
    else
        for (; it < m; it++) {
            double c = cf * tp_dot4(eI, y, nw);
            tp_apply_G(t, y, yn);
            for (int i = 0; i < nw; i++)
                yn[i] = s[i] - yn[i] + c * eI[i];
            if (adaptive || it == m - 1) {
                d2 = diff2(y, yn, 0, nw);
                y2 = tp_dot4(yn, yn, nw);
            }
            double *sw = y;
            y = yn;
            yn = sw;
            if (converged(t, d2, y2)) {
                it++;
                break;
            }
        }
    double ud2, uu2;
    t->ops->E_sub(t, y, t->r, t->tmp);
    sm_update(t, t->tmp, ainv, t->state.unew, 0, &ud2, &uu2);
    record_increment(t, it, d2, y2);
}

/* out = A0^{-1} v = v - E (I + G)^{-1} F v (Woodbury). */
static void a0_inverse(kt_timpani *t, const double *v, double *out)
{
    double *x = t->wa, *b = t->we;
    t->ops->I23(t, v, b);
    for (int i = 0; i < t->plan.nw; i++)
        b[i] *= -t->plan.mu_c;                        /* negated so E adds -E(...) below */
    cs_ipvec(t->plan.chol_S->pinv, b, x, t->plan.nw);
    cs_lsolve(t->plan.chol_N->L, x);
    cs_ltsolve(t->plan.chol_N->L, x);
    cs_pvec(t->plan.chol_S->pinv, x, b, t->plan.nw);
    memcpy(out, v, (size_t)t->plan.nn * sizeof *out);
    t->ops->E(t, b, out, 1);
}

static void solve_direct(kt_timpani *t)
{
    double *zr = t->state.unew, *za = t->tmp;
    a0_inverse(t, t->r, zr);
    a0_inverse(t, t->state.a, za);
    double c = dot_inside(t, t->state.a, zr) / (1.0 + dot_inside(t, t->state.a, za));
    for (int q = 0; q < t->plan.ninside; q++) {
        int j = t->plan.inside[q];
        zr[j] -= za[j] * c;
    }
    record_increment(t, 1, 0.0, 1.0);
}

static void solve_uncoupled(kt_timpani *t, double ainv)
{
    double d2, u2;
    sm_update(t, t->r, ainv, t->state.unew, 0, &d2, &u2);
    record_increment(t, 1, 0.0, 1.0);
}

/* b-term (note 5.3) and P u^{n-1}: r += E (mu_c I23 u^{n-1} + Bf (Dhat - D^{n-1})). */
static void add_coupling(kt_timpani *t, kt_room *room)
{
    double *Dh = t->Dhat, *up = t->wa, *v = t->wb;
    kt_room_read_layer(room, KT_NEXT, t->plan.pd, t->plan.wx0, t->plan.wy0, t->plan.nwx, t->plan.nwy, Dh);
    kt_room_read_layer(room, KT_NEXT, t->plan.pu, t->plan.wx0, t->plan.wy0, t->plan.nwx, t->plan.nwy, up);
    for (int i = 0; i < t->plan.nw; i++) {
        Dh[i] -= up[i];
        v[i] = t->plan.mu_c * t->state.w1[i] + t->plan.Bf * (Dh[i] - t->state.Dn1[i]);
    }
    t->ops->E(t, v, t->r, 1);
}

/* Stage 6: y = I23 (u^{n+1} - u^{n-1}) = w^{n+1} - w^{n-1}; Psi_pd -= g6 y,
 * Psi_pu += g6 y; D^{n+1} = Dhat - 2 g6 y replaces D^{n-1}. */
static void correct_layers(kt_timpani *t, kt_room *room)
{
    double *y = t->wa, g6 = t->plan.gamma6;
    t->ops->I23(t, t->state.unew, t->state.wnew);
    for (int i = 0; i < t->plan.nw; i++) {
        y[i] = t->state.wnew[i] - t->state.w1[i];
        t->state.Dn1[i] = t->Dhat[i] - 2.0 * g6 * y[i];
    }
    kt_room_add_to_layer(room, t->plan.pd, t->plan.wx0, t->plan.wy0, t->plan.nwx, t->plan.nwy, y, -g6);
    kt_room_add_to_layer(room, t->plan.pu, t->plan.wx0, t->plan.wy0, t->plan.nwx, t->plan.nwy, y, g6);
    double *sw = t->state.Dn;
    t->state.Dn = t->state.Dn1;
    t->state.Dn1 = sw;
    sw = t->state.w1;
    t->state.w1 = t->state.w;
    t->state.w = t->state.wnew;
    t->state.wnew = sw;
}

static void solve_direct_step(kt_timpani *t, double ainv)
{
    (void)ainv;  /* the factor of I + G holds a's term */
    solve_direct(t);
}

tp_solve_fn tp_solver_for(const kt_timpani_params *p)
{
    if (!p->coupled)
        return solve_uncoupled;
    if (p->solver == KT_SOLVE_REDUCED)
        return solve_reduced;
    return p->solver == KT_SOLVE_DIRECT ? solve_direct_step : solve_jacobi;
}

int processTimpani(kt_timpani *t, kt_room *room, kt_error *err)
{
    double t0 = kt_seconds();
    double aa;
    t->ops->rhs(t, &aa);
    if (!isfinite(aa))
        return kt_fail(err, KT_EUNSTABLE, "timpani '%s': membrane blew up at step %lld",
                       t->plan.p.name, (long long)t->state.steps);
    double ainv = 1.0 / (1.0 + aa);
    add_strikes(t, (double)kt_room_step_index(room) * t->plan.k);
    if (t->plan.p.coupled)
        add_coupling(t, room);
    double t1 = kt_seconds();
    t->solve(t, ainv);
    double t2 = kt_seconds();
    if (t->plan.p.coupled)
        correct_layers(t, room);
    double *sw = t->state.u1;
    t->state.u1 = t->state.u;
    t->state.u = t->state.unew;
    t->state.unew = sw;
    double t3 = kt_seconds();
    t->timing.rhs_s += t1 - t0;
    t->timing.solve_s += t2 - t1;
    t->timing.correct_s += t3 - t2;
    t->timing.steps++;
    t->state.steps++;
    return KT_OK;
}

int tp_process(void *self, kt_room *room, kt_error *err)
{
    return processTimpani(self, room, err);
}
