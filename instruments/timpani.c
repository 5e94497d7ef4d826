/* timpani.c - the kettledrum's life cycle: standard sizes, parameter checks,
 * createTimpani (geometry, coefficients, operators, registration with the
 * room), strikes, sizes and accessors, deleteTimpani.  The scheme itself is
 * in timpani_step.c; its coefficients follow design note sections 1, 4, 5. */
#include "timpani_internal.h"
#include "kt_physics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const format_names[KT_TIMPANI_FORMAT_COUNT] = {"csc", "csr", "dia-ell",
                                                                   "matrix-free"};

const char *kt_timpani_format_name(kt_timpani_format f)
{
    return (unsigned)f < KT_TIMPANI_FORMAT_COUNT ? format_names[f] : "unknown";
}

int kt_timpani_format_parse(const char *name, kt_timpani_format *f, kt_error *err)
{
    for (int i = 0; i < KT_TIMPANI_FORMAT_COUNT; i++)
        if (name && strcmp(name, format_names[i]) == 0) {
            *f = (kt_timpani_format)i;
            return KT_OK;
        }
    return kt_fail(err, KT_EINVAL,
                   "unknown timpani format '%s' (csc, csr, dia-ell or matrix-free)",
                   name ? name : "(null)");
}

int kt_timpani_params_standard(kt_timpani_params *p, int inches, kt_error *err)
{
    if (!p)
        return kt_fail(err, KT_EINVAL, "kt_timpani_params_standard: NULL parameters");
    if (inches != 23 && inches != 26 && inches != 29 && inches != 32)
        return kt_fail(err, KT_EINVAL,
                       "no standard %d-inch timpani: the sizes are 23, 26, 29 and 32 inches", inches);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "timp%d", inches);
    /* scaled from the thesis' 29-inch drum (R = 0.37 m, bowl 0.5 m deep) */
    double scale = inches / 29.0;
    p->diameter_m = 2.0 * KT_REFERENCE_RADIUS_M * scale;
    p->bowl_depth_m = KT_REFERENCE_BOWL_DEPTH_M * scale;
    p->tension_N_per_m = KT_REFERENCE_TENSION_N_PER_M;
    p->surface_density_kg_per_m2 = KT_MYLAR_SURFACE_DENSITY_KG_PER_M2;
    p->thickness_m = KT_MYLAR_THICKNESS_M;
    p->youngs_modulus_Pa = KT_MYLAR_YOUNGS_MODULUS_PA;
    p->poisson_ratio = KT_MYLAR_POISSON_RATIO;
    p->loss_s = KT_TIMPANI_THESIS_LOSS_S;
    /* the reference position: centred in the thesis' 1 m box, rim at 0.6 m */
    p->rim_centre_m[0] = 0.5;
    p->rim_centre_m[1] = 0.5;
    p->rim_centre_m[2] = 0.6;
    p->nonlinear = 1;
    p->coupled = 1;
    p->membrane_intervals = 0;
    p->format = KT_TIMPANI_MATRIX_FREE;
    p->solver = KT_SOLVE_REDUCED;
    p->solver_iterations = 10;
    p->solver_tolerance = 0.0;
    p->nthreads = 0;
    return KT_OK;
}

static int positive(double v)
{
    return isfinite(v) && v > 0.0;
}

static int check_params(const kt_timpani_params *p, kt_error *err)
{
    const char *nm = p->name[0] ? p->name : "timpani";
    struct { const char *what; double v; } pos[] = {
        {"diameter_m", p->diameter_m},
        {"tension_N_per_m", p->tension_N_per_m},
        {"surface_density_kg_per_m2", p->surface_density_kg_per_m2},
        {"thickness_m", p->thickness_m},
        {"youngs_modulus_Pa", p->youngs_modulus_Pa},
        {"bowl_depth_m", p->bowl_depth_m},
    };
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (!positive(pos[i].v))
            return kt_fail(err, KT_EINVAL, "timpani '%s': %s must be positive, got %g", nm,
                           pos[i].what, pos[i].v);
    if (!(p->poisson_ratio >= 0.0 && p->poisson_ratio < 0.5))
        return kt_fail(err, KT_EINVAL, "timpani '%s': poisson_ratio must lie in [0, 0.5), got %g",
                       nm, p->poisson_ratio);
    if (!(isfinite(p->loss_s) && p->loss_s >= 0.0))
        return kt_fail(err, KT_EINVAL, "timpani '%s': loss_s must be >= 0, got %g", nm, p->loss_s);
    for (int q = 0; q < 3; q++)
        if (!isfinite(p->rim_centre_m[q]) || p->rim_centre_m[q] < 0.0)
            return kt_fail(err, KT_EINVAL, "timpani '%s': rim centre %c = %g m is not in the room",
                           nm, "xyz"[q], p->rim_centre_m[q]);
    if ((unsigned)p->format >= KT_TIMPANI_FORMAT_COUNT)
        return kt_fail(err, KT_EINVAL, "timpani '%s': unknown format %d", nm, (int)p->format);
    if (p->solver != KT_SOLVE_JACOBI && p->solver != KT_SOLVE_REDUCED &&
        p->solver != KT_SOLVE_DIRECT)
        return kt_fail(err, KT_EINVAL, "timpani '%s': unknown solver %d", nm, (int)p->solver);
    if (p->solver_iterations < 1)
        return kt_fail(err, KT_EINVAL, "timpani '%s': solver_iterations must be >= 1, got %d", nm,
                       p->solver_iterations);
    if (!(isfinite(p->solver_tolerance) && p->solver_tolerance >= 0.0))
        return kt_fail(err, KT_EINVAL, "timpani '%s': solver_tolerance must be >= 0, got %g", nm,
                       p->solver_tolerance);
    if (p->membrane_intervals < 0)
        return kt_fail(err, KT_EINVAL, "timpani '%s': membrane_intervals must be >= 0, got %d", nm,
                       p->membrane_intervals);
    return KT_OK;
}

/* The coefficients that depend on the tension and the damping: the membrane
 * equation times k^2/rhoM, then divided by 1 + sigma0 k (s below; s = 1
 * leaves every value exactly as without damping). */
static void scheme_coefficients(kt_timpani *t)
{
    const kt_timpani_params *p = &t->plan.p;
    double k = t->plan.k, h = t->plan.h, sk = t->plan.sigma0 * k, s = 1.0 / (1.0 + sk);
    t->plan.cM2 = p->tension_N_per_m / p->surface_density_kg_per_m2;
    t->plan.cB0 = 2.0 * s;
    t->plan.cB1 = (t->plan.cM2 * k * k + t->plan.cM2 * p->loss_s * k) / (h * h) * s;
    t->plan.cB2 = -t->plan.kappa2 * k * k / (h * h * h * h) * s;
    t->plan.cC0 = -(1.0 - sk) * s;
    t->plan.cC1 = -t->plan.cM2 * p->loss_s * k / (h * h) * s;
    t->plan.cV1 = t->plan.vfac / (h * h) * sqrt(s);
    t->plan.Bf = t->plan.Bf_free * s;
    t->plan.mu_c = t->plan.mu_free * s;
    t->plan.strike_scale = k * k / (p->surface_density_kg_per_m2 * h * h) * s;
}

static void set_coefficients(kt_timpani *t, const kt_room *room)
{
    const kt_timpani_params *p = &t->plan.p;
    double k = t->plan.k, h = t->plan.h, rho = p->surface_density_kg_per_m2, nu = p->poisson_ratio;
    double rhoA = kt_room_get_params(room)->air_density_kg_per_m3;
    t->plan.DM = p->youngs_modulus_Pa * pow(p->thickness_m, 3) / (12.0 * (1.0 - nu * nu));
    t->plan.kappa2 = t->plan.DM / rho;
    t->plan.Phi = p->nonlinear ? p->youngs_modulus_Pa * p->thickness_m /
                                (2.0 * (1.0 - nu * nu) * KT_PI * t->plan.R * t->plan.R)
                          : 0.0;
    t->plan.vfac = h * k * sqrt(t->plan.Phi / (2.0 * rho));
    t->plan.Bf_free = rhoA * k / (2.0 * rho);
    t->plan.mu_free = p->coupled ? rhoA * t->plan.lambda2 * t->plan.Q / (2.0 * rho) : 0.0;
    t->plan.gamma6 = t->plan.lambda2 * t->plan.Q / (2.0 * k);
    t->plan.hq2 = h * h / (t->plan.Q * t->plan.Q);
    t->plan.sigma0 = 0.0;
    scheme_coefficients(t);
}

static int alloc_state(kt_timpani *t, kt_error *err)
{
    double **nn[] = {&t->state.u, &t->state.u1, &t->state.unew, &t->state.a, &t->r, &t->tmp};
    double **nw[] = {&t->state.w, &t->state.w1, &t->state.wnew, &t->state.Dn, &t->state.Dn1, &t->Dhat,
                     &t->wa, &t->wb, &t->wc, &t->wd, &t->we};
    for (size_t i = 0; i < sizeof nn / sizeof nn[0]; i++)
        if (!(*nn[i] = calloc((size_t)t->plan.nn, sizeof(double))))
            return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory", t->plan.p.name);
    for (size_t i = 0; i < sizeof nw / sizeof nw[0]; i++)
        if (!(*nw[i] = calloc((size_t)t->plan.nw, sizeof(double))))
            return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory", t->plan.p.name);
    t->pad = calloc((size_t)(t->plan.nwx + 2) * (t->plan.nwy + 2), sizeof(double));
    t->sep = calloc((size_t)(t->plan.nwx + 2) * t->plan.n, sizeof(double));
    t->sep2 = calloc((size_t)(t->plan.nwx + 2) * t->plan.n, sizeof(double));
    t->rowpart = calloc(3 * (size_t)(t->plan.n > 2 * t->plan.nwx ? t->plan.n : 2 * t->plan.nwx), sizeof(double));
    if (!t->pad || !t->sep || !t->sep2 || !t->rowpart)
        return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory", t->plan.p.name);
    return KT_OK;
}

static void timpani_free(kt_timpani *t)
{
    if (!t)
        return;
    tp_operators_free(t);
    void *ptrs[] = {t->plan.bnode, t->plan.bopen, t->plan.chi, t->plan.mask, t->plan.inside, t->plan.run_lo, t->plan.run_hi,
                    t->plan.e_il, t->plan.e_jm, t->plan.e_fa, t->plan.e_fb, t->state.u, t->state.u1, t->state.unew, t->state.a, t->r,
                    t->tmp, t->state.w, t->state.w1, t->state.wnew, t->state.Dn, t->state.Dn1, t->Dhat,
                    t->wa, t->wb, t->wc, t->wd, t->we, t->pad, t->sep, t->sep2, t->rowpart, t->state.strikes};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        free(ptrs[i]);
    free(t);
}

static void tp_destroy(void *self)
{
    timpani_free(self);
}

int createTimpani(kt_room *room, const kt_timpani_params *p, kt_timpani **out, kt_error *err)
{
    if (!room || !p || !out)
        return kt_fail(err, KT_EINVAL, "createTimpani: NULL argument");
    *out = NULL;
    int rc = check_params(p, err);
    if (rc < 0)
        return rc;
    kt_timpani *t = calloc(1, sizeof *t);
    if (!t)
        return kt_fail(err, KT_ENOMEM, "createTimpani: out of memory");
    t->plan.p = *p;
    if (!t->plan.p.name[0])
        snprintf(t->plan.p.name, sizeof t->plan.p.name, "timpani");
    /* by default the membrane runs serially beside the room's threaded sweep:
     * its loops are short, and many short parallel regions on a busy machine
     * cost more than they save */
    t->nthreads = p->nthreads > 0 ? p->nthreads : 1;
    t->ops = tp_format_ops_for(t->plan.p.format);   /* the backend, once */
    t->solve = tp_solver_for(&t->plan.p);
    if ((rc = tp_geometry_build(t, room, err)) < 0)
        goto fail;
    set_coefficients(t, room);
    if (t->plan.p.coupled && t->plan.p.solver != KT_SOLVE_DIRECT && t->plan.mu_c >= 0.5) {
        rc = kt_fail(err, KT_EINVAL,
                     "timpani '%s': coupling mu_c = %.3g is too strong for the Jacobi iteration "
                     "(membrane too light for the air grid); use the direct solver",
                     t->plan.p.name, t->plan.mu_c);
        goto fail;
    }
    if ((rc = tp_operators_build(t, err)) < 0 || (rc = alloc_state(t, err)) < 0)
        goto fail;
    /* a drum placed into a sounding room starts from the air as it is */
    if (t->plan.p.coupled) {
        kt_room_read_layer(room, KT_NOW, t->plan.pd, t->plan.wx0, t->plan.wy0, t->plan.nwx, t->plan.nwy, t->state.Dn);
        kt_room_read_layer(room, KT_NOW, t->plan.pu, t->plan.wx0, t->plan.wy0, t->plan.nwx, t->plan.nwy, t->wa);
        for (int i = 0; i < t->plan.nw; i++) {
            t->state.Dn[i] -= t->wa[i];
            t->state.Dn1[i] = t->state.Dn[i];
        }
    }
    t->ins.kind = "timpani";
    snprintf(t->ins.name, sizeof t->ins.name, "%s", t->plan.p.name);
    t->ins.self = t;
    t->ins.boundary_node = t->plan.bnode;
    t->ins.boundary_open = t->plan.bopen;
    t->ins.boundary_count = t->plan.bcount;
    t->ins.process = tp_process;
    t->ins.energy = tp_energy;
    t->ins.destroy = tp_destroy;
    t->ins.process_z[0] = t->plan.pd;   /* the two air layers of stages 3 and 6 */
    t->ins.process_z[1] = t->plan.pu;
#if KETTLE_CUDA_ENABLED
    t->ins.gpu = tp_gpu_ops();
#endif
    if ((rc = kt_room_add_instrument(room, &t->ins, err)) < 0)
        goto fail;
    *out = t;
    return KT_OK;
fail:
    timpani_free(t);
    return rc;
}

void deleteTimpani(kt_room *room, kt_timpani *t)
{
    if (!t)
        return;
    if (room)
        kt_room_remove_instrument(room, &t->ins);
    timpani_free(t);
}

int kt_timpani_strike(kt_timpani *t, double start_s, double force_N, double duration_s,
                      double x_m, double y_m, kt_error *err)
{
    if (!t)
        return kt_fail(err, KT_EINVAL, "kt_timpani_strike: NULL timpani");
    if (!(isfinite(start_s) && start_s >= 0.0))
        return kt_fail(err, KT_EINVAL, "timpani '%s': strike time must be >= 0 s, got %g",
                       t->plan.p.name, start_s);
    if (!(isfinite(force_N) && force_N >= 0.0))
        return kt_fail(err, KT_EINVAL, "timpani '%s': strike force must be >= 0 N, got %g",
                       t->plan.p.name, force_N);
    if (!positive(duration_s))
        return kt_fail(err, KT_EINVAL, "timpani '%s': strike duration must be positive, got %g",
                       t->plan.p.name, duration_s);
    int node = isfinite(x_m) && isfinite(y_m) ? tp_nearest_inside(t, x_m, y_m) : -1;
    if (node < 0)
        return kt_fail(err, KT_EINVAL,
                       "timpani '%s': strike at (%g, %g) m is off the head (radius %g m)",
                       t->plan.p.name, x_m, y_m, t->plan.R);
    if (t->state.nstrikes == t->state.strikes_cap) {
        int cap = t->state.strikes_cap ? 2 * t->state.strikes_cap : 8;
        tp_strike *s = realloc(t->state.strikes, (size_t)cap * sizeof *s);
        if (!s)
            return kt_fail(err, KT_ENOMEM, "timpani '%s': out of memory for strikes", t->plan.p.name);
        t->state.strikes = s;
        t->state.strikes_cap = cap;
    }
    t->state.strikes[t->state.nstrikes++] = (tp_strike){start_s, force_N, duration_s, node};
    return KT_OK;
}

/* The pedal: a new tension from the next step on, on the grid chosen at
 * creation (which must still satisfy the stability rule for it). */
int kt_timpani_set_tension(kt_timpani *t, double tension_N_per_m, kt_error *err)
{
    if (!t)
        return kt_fail(err, KT_EINVAL, "kt_timpani_set_tension: NULL timpani");
    if (!positive(tension_N_per_m))
        return kt_fail(err, KT_EINVAL, "timpani '%s': tension must be positive, got %g",
                       t->plan.p.name, tension_N_per_m);
    kt_timpani_params q = t->plan.p;
    q.tension_N_per_m = tension_N_per_m;
    double hmin = tp_membrane_h_min(&q, t->plan.k);
    if (t->plan.h < hmin)
        return kt_fail(err, KT_EINVAL,
                       "timpani '%s': tension %g N/m needs membrane spacing >= %.4g mm, the grid "
                       "has %.4g mm (create the drum with fewer membrane_intervals)",
                       t->plan.p.name, tension_N_per_m, hmin * 1e3, t->plan.h * 1e3);
    double old = t->plan.p.tension_N_per_m;
    t->plan.p.tension_N_per_m = tension_N_per_m;
    scheme_coefficients(t);
    int rc = tp_operators_retension(t, err);
    if (rc < 0 && old != tension_N_per_m) {
        t->plan.p.tension_N_per_m = old;
        scheme_coefficients(t);
    }
    return rc;
}

/* A damper on the head (hand or cloth): -2 sigma0 rhoM w_t, centred in
 * time, from the next step on; every coefficient of the update is divided
 * by 1 + sigma0 k (design note 12.3, docs/timpani.md "Damping"). */
int kt_timpani_set_damping(kt_timpani *t, double sigma0_per_s, kt_error *err)
{
    if (!t)
        return kt_fail(err, KT_EINVAL, "kt_timpani_set_damping: NULL timpani");
    if (!(isfinite(sigma0_per_s) && sigma0_per_s >= 0.0))
        return kt_fail(err, KT_EINVAL,
                       "timpani '%s': damping sigma0 must be >= 0 1/s (0: free), got %g",
                       t->plan.p.name, sigma0_per_s);
    if (sigma0_per_s == t->plan.sigma0)
        return KT_OK;
    double old = t->plan.sigma0;
    t->plan.sigma0 = sigma0_per_s;
    scheme_coefficients(t);
    int rc = tp_operators_redamp(t, err);
    if (rc < 0) {
        t->plan.sigma0 = old;
        scheme_coefficients(t);
        kt_error ignored;
        kt_error_clear(&ignored);
        tp_operators_redamp(t, &ignored);
    }
    return rc;
}

double kt_timpani_damping(const kt_timpani *t)
{
    return t ? t->plan.sigma0 : 0.0;
}

void kt_timpani_get_info(const kt_timpani *t, kt_timpani_info *info)
{
    memset(info, 0, sizeof *info);
    if (!t)
        return;
    info->membrane_n = t->plan.n;
    info->membrane_inside = t->plan.ninside;
    info->membrane_spacing_m = t->plan.h;
    info->window_nx = t->plan.nwx;
    info->window_ny = t->plan.nwy;
    info->boundary_rows = t->plan.bcount;
    info->layer_below = t->plan.pd;
    info->layer_above = t->plan.pu;
    info->centre_node[0] = t->plan.ic;
    info->centre_node[1] = t->plan.jc;
    info->last_increment = t->state.last_increment;
    info->last_iterations = t->state.last_iterations;
}

const double *kt_timpani_displacement(const kt_timpani *t)
{
    return t ? t->state.u : NULL;
}

double kt_timpani_energy(const kt_timpani *t)
{
    return t ? tp_energy(t) : 0.0;
}

void kt_timpani_get_timing(const kt_timpani *t, kt_timpani_timing *timing)
{
    if (t)
        *timing = t->timing;
    else
        memset(timing, 0, sizeof *timing);
}

tp_plan *tp_plan_of(kt_timpani *t) { return &t->plan; }
tp_state *tp_state_of(kt_timpani *t) { return &t->state; }
