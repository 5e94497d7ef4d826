/* room_plan.c - the room's plan (room_plan.h): from the parameters, the
 * grid they produce (design note 2.1, thesis 5.8), the padded layout, the
 * scheme's coefficients, the walls and their loss pairs, the absorbing
 * walls' faces and lines; built once, read by the CPU and GPU steppers. */
#include "room_internal.h"
#include "kt_physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double effective_backoff(const kt_room_params *p)
{
    if (p->courant_backoff >= 0)
        return p->courant_backoff;
    return p->precision == KT_SINGLE ? KT_SINGLE_COURANT_BACKOFF : 0.0;
}

static int check_params(const kt_room_params *p, kt_error *err)
{
    static const char axis[3] = {'x', 'y', 'z'};
    if (!p)
        return kt_fail(err, KT_EINVAL, "room parameters are NULL");
    for (int d = 0; d < 3; d++)
        if (!(p->size_m[d] > 0) || !isfinite(p->size_m[d]))
            return kt_fail(err, KT_EINVAL, "room size along %c must be positive, got %g m",
                           axis[d], p->size_m[d]);
    /* below 1 Hz the time step overflows (a denormal rate gives k = inf) */
    if (!(p->sample_rate_hz >= 1) || !isfinite(p->sample_rate_hz))
        return kt_fail(err, KT_EINVAL, "sample rate must be at least 1 Hz, got %g Hz",
                       p->sample_rate_hz);
    if (!(p->sound_speed_m_per_s > 0) || !isfinite(p->sound_speed_m_per_s))
        return kt_fail(err, KT_EINVAL, "sound speed must be positive, got %g m/s",
                       p->sound_speed_m_per_s);
    if (!(p->air_density_kg_per_m3 > 0) || !isfinite(p->air_density_kg_per_m3))
        return kt_fail(err, KT_EINVAL, "air density must be positive, got %g kg/m^3",
                       p->air_density_kg_per_m3);
    if (p->precision != KT_DOUBLE && p->precision != KT_SINGLE)
        return kt_fail(err, KT_EINVAL, "unknown precision %d", (int)p->precision);
    if (!(p->courant_backoff < 1) || isnan(p->courant_backoff))
        return kt_fail(err, KT_EINVAL, "Courant back-off must be below 1, got %g",
                       p->courant_backoff);
    if (!(p->wall_beta >= 0) || !isfinite(p->wall_beta))
        return kt_fail(err, KT_EINVAL, "wall beta must be >= 0, got %g", p->wall_beta);
    if (!(p->viscosity_m >= 0) || !isfinite(p->viscosity_m))
        return kt_fail(err, KT_EINVAL, "viscosity length must be >= 0, got %g m",
                       p->viscosity_m);
    int rc = room_abc_check(p, err);
    return rc < 0 ? rc : room_scheme_check(p, err);
}

/* In single precision, lambda^2 rounded down to a multiple of 2^-20 (the
 * sound speed moves by under 2e-6 of itself).  Then lambda^2, lambda^2 w and
 * the centre coefficient 2 - lambda^2 sum w are floats exactly for the
 * 7-point, IWB and FCC weights (dyadic), so a constant field stays constant
 * in float arithmetic.  Rounded separately they summed to 2 + delta with
 * |delta| ~ 1e-8, and where delta > 0 the constant mode grew as
 * e^{sqrt(delta) n}, ~4 per second at 44.1 kHz: walls damp it in the open
 * room, but inside a drum's closed bowl nothing does, and it pushed the head
 * until the render blew up (issue 18; docs/room.md, "Precision"). */
static double single_precision_courant(const kt_room_params *p, double courant)
{
    if (p->precision != KT_SINGLE)
        return courant;
    return sqrt(ldexp(floor(ldexp(courant * courant, 20)), -20));
}

/* Design note 2.1 with the stability limit of thesis 5.8 and the back-off:
 * Q >= sqrt(3 c^2 k^2 + 6 c alpha_v k) / (1 - backoff); N_x = floor(L_x / that),
 * Q = L_x / N_x; N_y, N_z from Q; N+1 nodes per axis. */
static double min_spacing(const kt_room_params *p, const kt_scheme_info *scheme)
{
    double c = p->sound_speed_m_per_s, k = 1.0 / p->sample_rate_hz;
    double hmin = sqrt(3 * c * c * k * k + 6 * c * p->viscosity_m * k);
    if (p->scheme != KT_SCHEME_SLF7)
        hmin = c * k / scheme->max_courant;
    return hmin / (1.0 - effective_backoff(p));
}

double kt_room_min_spacing(const kt_room_params *p)
{
    kt_scheme_info scheme;
    return kt_room_scheme_info(p, &scheme, NULL) < 0 ? NAN : min_spacing(p, &scheme);
}

void kt_room_params_fit(kt_room_params *p, const int nodes[3])
{
    double h = kt_room_min_spacing(p);
    double Q = h * (nodes[0] - 0.5) / (nodes[0] - 1); /* the spacing L_x / (n_x - 1) will give */
    p->size_m[0] = (nodes[0] - 0.5) * h;
    p->size_m[1] = (nodes[1] - 0.5) * Q;
    p->size_m[2] = (nodes[2] - 0.5) * Q;
}

static int compute_grid(const kt_room_params *p, kt_room_grid *g, int *grids, kt_error *err)
{
    static const char axis[3] = {'x', 'y', 'z'};
    double c = p->sound_speed_m_per_s, k = 1.0 / p->sample_rate_hz;
    kt_scheme_info scheme;
    int rc = kt_room_scheme_info(p, &scheme, err);
    if (rc < 0)
        return rc;
    double hmin = min_spacing(p, &scheme);
    double intervals_x = floor(p->size_m[0] / hmin);
    if (intervals_x < 2)
        return kt_fail(err, KT_EINVAL,
                       "room is %g m along x: fewer than 3 nodes at spacing %g m "
                       "(sample rate %g Hz); make it larger or raise the sample rate",
                       p->size_m[0], hmin, p->sample_rate_hz);
    double Q = p->size_m[0] / intervals_x;
    double intervals[3] = {intervals_x, floor(p->size_m[1] / Q + 1e-9),
                           floor(p->size_m[2] / Q + 1e-9)};
    for (int d = 1; d < 3; d++)
        if (intervals[d] < 2)
            return kt_fail(err, KT_EINVAL,
                           "room is %g m along %c: fewer than 3 nodes at spacing %g m; "
                           "make it larger or raise the sample rate",
                           p->size_m[d], axis[d], Q);
    for (int d = 0; d < 3; d++)
        if (intervals[d] + 1 > 1e6)
            return kt_fail(err, KT_EINVAL, "room has %g nodes along %c: too many",
                           intervals[d] + 1, axis[d]);
    g->nx = (int)intervals[0] + 1;
    g->ny = (int)intervals[1] + 1;
    g->nz = (int)intervals[2] + 1;
    g->spacing_m = Q;
    g->time_step_s = k;
    g->courant = single_precision_courant(p, c * k / Q);
    g->viscosity_eta = c * p->viscosity_m * k / (Q * Q);
    *grids = p->viscosity_m > 0 ? 3 : 2;
    int n[3] = {g->nx, g->ny, g->nz}, h2 = 2 * scheme.halo_nodes;
    for (int d = 0; d < 3; d++)
        if (scheme.halo_nodes >= n[d])
            return kt_fail(err, KT_EINVAL,
                           "room has %d nodes along %c but the %s stencil reaches %d: "
                           "make it larger", n[d], axis[d], scheme.name, scheme.halo_nodes);
    size_t esize = kt_precision_bytes(p->precision);
    double padded = (double)(g->nx + h2) * (g->ny + h2) * (g->nz + h2);
    if (p->scheme == KT_SCHEME_FCC13) {  /* half-length rows (room_fcc.c) */
        size_t dims[3];
        room_fcc_dims(g->nx, g->ny, g->nz, dims);
        padded = (double)dims[0] * dims[1] * dims[2];
    }
    /* The FCC lattice holds the nodes with x + y + z even. */
    g->nodes = (double)g->nx * g->ny * g->nz / (p->scheme == KT_SCHEME_FCC13 ? 2.0 : 1.0);
    double bytes = padded * esize * *grids;
    if (bytes > (double)SIZE_MAX / 2)
        return kt_fail(err, KT_ENOMEM, "room needs %.3g bytes: too large", bytes);
    g->bytes = (size_t)bytes;
    return KT_OK;
}

int kt_room_estimate(const kt_room_params *p, kt_room_grid *grid, kt_error *err)
{
    int grids, rc = check_params(p, err);
    if (rc < 0)
        return rc;
    kt_room_grid g;
    memset(&g, 0, sizeof g);
    if ((rc = compute_grid(p, &g, &grids, err)) < 0)
        return rc;
    if (grid)
        *grid = g;
    return KT_OK;
}

/* MemAvailable from /proc/meminfo in bytes, or 0 when it cannot be read. */
static int check_memory(const kt_room_params *p, const kt_room_grid *g, kt_error *err)
{
    size_t limit = p->memory_limit_bytes ? p->memory_limit_bytes : kt_memory_available_bytes();
    if (limit && g->bytes > limit)
        return kt_fail(err, KT_ENOMEM,
                       "room of %d x %d x %d nodes needs %zu bytes (%.2f GiB) but %s is "
                       "%zu bytes (%.2f GiB)",
                       g->nx, g->ny, g->nz, g->bytes, g->bytes / 1073741824.0,
                       p->memory_limit_bytes ? "the memory limit" : "available memory", limit,
                       limit / 1073741824.0);
    return KT_OK;
}

/* Where the walls sit (room_plan.h, docs/room.md "Walls"): through node
 * 0, and at the room's size beyond node n-1 (a fraction of a cell: the grid
 * rule makes n-1 whole cells the largest that fit).  A stencil that reaches
 * further than one node can only mirror the room about a node or a
 * half-cell plane: its far wall takes the nearer of the two. */
static void walls_compute(const kt_room_params *p, const kt_room_grid *g, int reach,
                          room_walls *w)
{
    const int n[3] = {g->nx, g->ny, g->nz};
    for (int d = 0; d < 3; d++) {
        double frac = p->size_m[d] / g->spacing_m - (n[d] - 1);
        frac = frac < 1e-9 ? 0 : frac > 1 ? 1 : frac;
        double v[2] = {0.5, 0.5 + frac};
        if (p->wall_model == KT_WALL_ENGQUIST_MAJDA)
            v[0] = v[1] = 1;
        else if (reach > 1)
            v[1] = frac < 0.25 ? 0.5 : 1;
        w->loss[d][0] = 0;
        for (int e = 0; e < 2; e++) {
            w->v[d][e] = v[e];
            w->theta[d][e] = 1 / v[e] - 1;
            w->loss[d][1 + e] = p->wall_beta / v[e];
        }
    }
}


/* Mur's first-order absorbing update's coefficient at Courant number
 * `courant` along the wave's path. */
static double mur1(double courant)
{
    return (courant - 1) / (courant + 1);
}

/* The 27 loss pairs by the walls a node lies on. */
static void wall_pairs(room_plan *pl)
{
    for (int xw = 0; xw < 3; xw++)
        for (int yw = 0; yw < 3; yw++)
            for (int zw = 0; zw < 3; zw++) {
                double *q = pl->wall_pair[9 * xw + 3 * yw + zw];
                room_wall_pair(&pl->walls, pl->lambda, xw, yw, zw, &q[0], &q[1]);
            }
}

static void vec3(int v[3], int x, int y, int z)
{
    v[0] = x;
    v[1] = y;
    v[2] = z;
}

/* Absorbing walls: the six faces in the order x = 0, x = nx-1, y = 0, y =
 * ny-1, z = 0, z = nz-1; the twelve edges along each axis at both ends of
 * the two others, less their corners; the eight corners. */
static void abc_faces(const kt_room_grid *g, room_abc_plan *a)
{
    const int nx = g->nx, ny = g->ny, nz = g->nz;
    const int end[6] = {0, nx - 1, 0, ny - 1, 0, nz - 1};
    for (int k = 0; k < 6; k++) {
        room_abc_face *f = &a->face[k];
        const int axis = k / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
        const int n[3] = {nx, ny, nz};
        vec3(f->origin, 0, 0, 0);
        f->origin[axis] = end[k];
        vec3(f->fast, 0, 0, 0);
        vec3(f->slow, 0, 0, 0);
        vec3(f->inward, 0, 0, 0);
        f->fast[fast] = 1;
        f->slow[slow] = 1;
        f->inward[axis] = k % 2 ? -1 : 1;
        f->n_fast = n[fast];
        f->n_slow = n[slow];
    }
}

static void abc_lines(const kt_room_grid *g, double lambda, room_abc_plan *a)
{
    const int n[3] = {g->nx, g->ny, g->nz};
    const double re = mur1(lambda / sqrt(2.0)), rc = mur1(lambda / sqrt(3.0));
    int k = 0;
    for (int axis = 0; axis < 3; axis++) {
        int u = (axis + 1) % 3, v = (axis + 2) % 3;
        for (int eu = 0; eu < 2; eu++)
            for (int ev = 0; ev < 2; ev++) {
                room_abc_line *l = &a->line[k++];
                memset(l, 0, sizeof *l);
                l->origin[axis] = 1;
                l->origin[u] = eu ? n[u] - 1 : 0;
                l->origin[v] = ev ? n[v] - 1 : 0;
                l->along[axis] = 1;
                l->diag[u] = eu ? -1 : 1;
                l->diag[v] = ev ? -1 : 1;
                l->count = n[axis] - 2;
                l->r = re;
            }
    }
    for (int c = 0; c < 8; c++) {
        room_abc_line *l = &a->line[k++];
        memset(l, 0, sizeof *l);
        for (int d = 0; d < 3; d++) {
            int hi = (c >> d) & 1;
            l->origin[d] = hi ? n[d] - 1 : 0;
            l->diag[d] = hi ? -1 : 1;
        }
        l->count = 1;
        l->r = rc;
    }
}

/* The padded layout of the box held here (room_plan.h). */
static void layout(room_plan *pl)
{
    const kt_room_grid *g = &pl->grid;
    const size_t h = (size_t)pl->halo;
    pl->px = (size_t)(pl->x_end - pl->x0) + 2 * h;
    pl->py = (size_t)(pl->y_end - pl->y0) + 2 * h;
    pl->pz = (size_t)(pl->z_end - pl->z0) + 2 * h;
    if (pl->fcc) { /* half-length rows (room_fcc.c) */
        size_t dims[3];
        room_fcc_dims(g->nx, g->ny, g->nz, dims);
        pl->px = dims[0];
        pl->py = dims[1];
        pl->pz = dims[2];
    }
    pl->plane = pl->px * pl->py;
    pl->padded_points = pl->plane * pl->pz;
}

int room_plan_build(const kt_room_params *p, int z0, int z_end, room_plan *pl, kt_error *err)
{
    const int lo[3] = {0, 0, z0}, hi[3] = {-1, -1, z_end};
    return room_plan_build_box(p, lo, hi, pl, err);
}

int room_plan_build_box(const kt_room_params *p, const int lo[3], const int hi[3], room_plan *pl,
                        kt_error *err)
{
    memset(pl, 0, sizeof *pl);
    kt_room_grid g;
    int grids, rc = check_params(p, err);
    if (rc < 0)
        return rc;
    memset(&g, 0, sizeof g);
    if ((rc = compute_grid(p, &g, &grids, err)) < 0 ||
        (hi[2] < 0 && (rc = check_memory(p, &g, err)) < 0))
        return rc;
    const int n[3] = {g.nx, g.ny, g.nz};
    static const char *const what[3] = {"columns", "rows", "planes"};
    int a[3], b[3];
    for (int d = 0; d < 3; d++) {
        a[d] = lo[d];
        b[d] = hi[d] < 0 ? n[d] : hi[d];
        if (a[d] < 0 || b[d] > n[d] || a[d] >= b[d])
            return kt_fail(err, KT_EINVAL, "%s %d..%d are not part of a room of %d %s",
                           what[d], a[d], b[d] - 1, n[d], what[d]);
    }
    if ((a[0] || a[1] || b[0] < n[0] || b[1] < n[1]) && p->scheme != KT_SCHEME_SLF7)
        return kt_fail(err, KT_EINVAL, "only the 7-point air scheme can be cut along x or y");
    pl->params = *p;
    pl->params.courant_backoff = effective_backoff(p);
    pl->grid = g;
    pl->grids = grids;
    kt_scheme_info scheme;
    kt_room_scheme_info(p, &scheme, NULL); /* checked by compute_grid */
    pl->halo = scheme.halo_nodes;
    pl->fcc = p->scheme == KT_SCHEME_FCC13;
    pl->x0 = a[0];
    pl->x_end = b[0];
    pl->y0 = a[1];
    pl->y_end = b[1];
    pl->z0 = a[2];
    pl->z_end = b[2];
    layout(pl);
    pl->lambda = g.courant;
    pl->l2 = g.courant * g.courant;
    pl->eta = g.viscosity_eta;
    if ((rc = room_scheme_setup(pl, err)) < 0) {
        room_plan_free(pl);
        return rc;
    }
    walls_compute(&pl->params, &g, pl->st && !pl->fcc ? pl->st->reach : 1, &pl->walls);
    wall_pairs(pl);
    if (pl->fcc && (rc = room_fcc_cut_build(&pl->params, &g, &pl->walls, &pl->fcc_cut, err)) < 0) {
        room_plan_free(pl);
        return rc;
    }
    pl->abc = p->wall_model == KT_WALL_ENGQUIST_MAJDA;
    if (pl->abc) {
        abc_faces(&g, &pl->abc_plan);
        abc_lines(&g, pl->lambda, &pl->abc_plan);
        pl->abc_plan.r = mur1(pl->lambda);
        pl->abc_plan.flux_scale = 0.5 * p->air_density_kg_per_m3 * g.spacing_m;
    }
    return KT_OK;
}

void room_plan_free(room_plan *pl)
{
    free(pl->st);
    pl->st = NULL;
    room_fcc_cut_free(&pl->fcc_cut);
}
