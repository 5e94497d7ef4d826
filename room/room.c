/* room.c - a room's life cycle: parameters, the grid they produce (design
 * note 2.1, thesis 5.8), the memory check before allocation, creation and
 * destruction, and the accessors. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE (Linux) */
#include "room_internal.h"
#include "room_slab.h"
#include "kt_physics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void kt_room_params_default(kt_room_params *p)
{
    memset(p, 0, sizeof *p);
    p->size_m[0] = p->size_m[1] = p->size_m[2] = 1.0;
    p->sample_rate_hz = KT_SAMPLE_RATE_HZ;
    p->sound_speed_m_per_s = KT_SOUND_SPEED_M_PER_S;
    p->air_density_kg_per_m3 = KT_AIR_DENSITY_KG_PER_M3;
    p->precision = KT_DOUBLE;
    p->courant_backoff = -1.0;
    p->wall_beta = 0.0;
    p->viscosity_m = 0.0;
    p->nthreads = 0;
    p->memory_limit_bytes = 0;
}

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
    size_t esize = p->precision == KT_SINGLE ? sizeof(float) : sizeof(double);
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

static void set_coefficients(kt_room *r)
{
    const kt_room_grid *g = &r->grid;
    r->lambda = g->courant;
    r->l2 = g->courant * g->courant;
    r->eta = g->viscosity_eta;
}

/* Where the walls sit (room_internal.h, docs/room.md "Walls"): through node
 * 0, and at the room's size beyond node n-1 (a fraction of a cell: the grid
 * rule makes n-1 whole cells the largest that fit).  A stencil that reaches
 * further than one node can only mirror the room about a node or a
 * half-cell plane: its far wall takes the nearer of the two. */
void room_walls_compute(const kt_room_params *p, const kt_room_grid *g, int reach,
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

/* A field of at least this many bytes asks for 2 MiB pages. */
#define ROOM_HUGE_PAGE_BYTES ((size_t)2 << 20)
#define ROOM_HUGE_FIELD_MIN ((size_t)16 << 20)

/* One field's buffer.  A field far bigger than the caches goes on 2 MiB
 * pages where the kernel offers them (transparent huge pages in madvise
 * mode): the sweep walks up to seven planes at once, and with 4 KiB pages
 * every plane change costs page walks (250 m^3 single viscous: ~5 % faster).
 * The advice may be refused; the buffer works either way. */
static void *allocate_field(size_t bytes)
{
    size_t align = bytes >= ROOM_HUGE_FIELD_MIN ? ROOM_HUGE_PAGE_BYTES : 64;
    size_t rounded = (bytes + align - 1) / align * align;
    void *f = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
    if (f && align == ROOM_HUGE_PAGE_BYTES)
        (void)madvise(f, rounded, MADV_HUGEPAGE);
#endif
    return f;
}

/* Zeroed buffers, touched first by the threads that will sweep them so that
 * pages land near those threads (first touch) with the same z-slab split. */
static int allocate_fields(kt_room *r, kt_error *err)
{
    size_t esize = r->params.precision == KT_SINGLE ? sizeof(float) : sizeof(double);
    size_t bytes = r->padded_points * esize;
    for (int b = 0; b < r->grids; b++) {
        r->field[b] = allocate_field(bytes);
        if (!r->field[b])
            return kt_fail(err, KT_ENOMEM, "could not allocate %zu bytes for the room's fields",
                           bytes * r->grids);
        char *f = r->field[b];
        long planes = (long)r->pz;
        size_t plane_bytes = r->plane * esize;
#pragma omp parallel for schedule(static) num_threads(r->nthreads)
        for (long z = 0; z < planes; z++)
            memset(f + (size_t)z * plane_bytes, 0, plane_bytes);
    }
    r->now = r->field[0];
    r->prev = r->field[1];
    r->next = r->grids == 3 ? r->field[2] : r->field[1];
    return KT_OK;
}

int kt_room_create(const kt_room_params *p, kt_room **out, kt_error *err)
{
    return room_create_planes(p, 0, -1, out, err);
}

int room_create_planes(const kt_room_params *p, int z0, int z_end, kt_room **out,
                       kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_room_create: out is NULL");
    *out = NULL;
    kt_room_grid g;
    int grids, rc = check_params(p, err);
    if (rc < 0)
        return rc;
    memset(&g, 0, sizeof g);
    if ((rc = compute_grid(p, &g, &grids, err)) < 0 ||
        (z_end < 0 && (rc = check_memory(p, &g, err)) < 0))
        return rc;
    if (z_end < 0)
        z_end = g.nz;
    if (z0 < 0 || z_end > g.nz || z0 >= z_end)
        return kt_fail(err, KT_EINVAL, "planes %d..%d are not part of a room of %d planes", z0,
                       z_end - 1, g.nz);
    kt_room *r = calloc(1, sizeof *r);
    if (!r)
        return kt_fail(err, KT_ENOMEM, "out of memory creating a room");
    r->params = *p;
    r->params.courant_backoff = effective_backoff(p);
    r->grid = g;
    r->grids = grids;
    r->nthreads = kt_threads_resolve(p->nthreads);
    kt_scheme_info scheme;
    kt_room_scheme_info(p, &scheme, NULL); /* checked by compute_grid */
    r->halo = scheme.halo_nodes;
    r->px = (size_t)g.nx + 2 * (size_t)r->halo;
    r->py = (size_t)g.ny + 2 * (size_t)r->halo;
    r->z0 = z0;
    r->z_end = z_end;
    r->pz = (size_t)(z_end - z0) + 2 * (size_t)r->halo;
    r->plane = r->px * r->py;
    r->padded_points = r->plane * r->pz;
    if (p->scheme == KT_SCHEME_FCC13) {  /* the FCC layout (room_fcc.c) */
        size_t dims[3];
        room_fcc_dims(g.nx, g.ny, g.nz, dims);
        r->fcc = 1;
        r->px = dims[0];
        r->py = dims[1];
        r->pz = dims[2];
        r->plane = r->px * r->py;
        r->padded_points = r->plane * r->pz;
    }
    set_coefficients(r);
    if ((rc = room_scheme_setup(r, err)) < 0 || (rc = allocate_fields(r, err)) < 0 ||
        (rc = room_abc_setup(r, err)) < 0) {
        kt_room_destroy(r);
        return rc;
    }
    room_walls_compute(&r->params, &r->grid, r->st && !r->fcc ? r->st->reach : 1, &r->walls);
    if (r->fcc && (rc = room_fcc_cut_build(&r->params, &r->grid, &r->walls, &r->fcc_cut, err)) < 0) {
        kt_room_destroy(r);
        return rc;
    }
    room_sweep_plan_init(r);
    *out = r;
    return KT_OK;
}

static void free_instrument_copy(room_instrument *ri)
{
    free(ri->node);
    free(ri->blocked);
    free(ri->leg);
    free(ri->leg_axis);
}

void kt_room_destroy(kt_room *room)
{
    if (!room)
        return;
    /* The room owns registered instruments; take each out before destroying
     * it so that a destroy() that calls kt_room_remove_instrument is harmless. */
    while (room->ins_count > 0) {
        room_instrument ri = room->ins[room->ins_count - 1];
        room->ins_count--;
        free_instrument_copy(&ri);
        if (ri.ins->destroy)
            ri.ins->destroy(ri.ins->self);
    }
    free(room->ins);
    room_free_sources(room);
    room_free_mics(room);
    for (int b = 0; b < 3; b++)
        free(room->field[b]);
    free(room->st);
    room_fcc_cut_free(&room->fcc_cut);
    room_abc_free(room);
    room_slab_free(room->slab);
    free(room);
}

const kt_room_grid *kt_room_get_grid(const kt_room *room) { return &room->grid; }
const kt_room_params *kt_room_get_params(const kt_room *room) { return &room->params; }
int64_t kt_room_step_index(const kt_room *room) { return room->n; }

void kt_room_get_timing(const kt_room *room, kt_room_timing *t)
{
    *t = room->timing;
}

void room_leg_offsets(const kt_room *room, ptrdiff_t off[6])
{
    off[0] = 1;
    off[1] = -1;
    off[2] = (ptrdiff_t)room->px;
    off[3] = -(ptrdiff_t)room->px;
    off[4] = (ptrdiff_t)room->plane;
    off[5] = -(ptrdiff_t)room->plane;
}

int room_check_position(const kt_room *room, const double pos_m[3], const char *what,
                        kt_error *err)
{
    static const char axis[3] = {'x', 'y', 'z'};
    if (!pos_m)
        return kt_fail(err, KT_EINVAL, "%s: position is NULL", what);
    for (int d = 0; d < 3; d++)
        if (!(pos_m[d] >= 0 && pos_m[d] <= room->params.size_m[d]))
            return kt_fail(err, KT_EINVAL, "%s: %c = %g m lies outside the room (0 to %g m)",
                           what, axis[d], pos_m[d], room->params.size_m[d]);
    return KT_OK;
}

int room_nearest_node(const kt_room *room, const double pos_m[3], int node[3], kt_error *err)
{
    int rc = room_check_position(room, pos_m, "source", err);
    if (rc < 0)
        return rc;
    int n[3] = {room->grid.nx, room->grid.ny, room->grid.nz};
    for (int d = 0; d < 3; d++) {
        long i = lround(pos_m[d] / room->grid.spacing_m);
        node[d] = (int)(i < 0 ? 0 : i >= n[d] ? n[d] - 1 : i);
    }
    return KT_OK;
}

/* ---- the layer window calls instruments use (kt_instrument.h) ---- */

static const void *layer_buffer(const kt_room *room, kt_time_level level)
{
    return level == KT_NEXT && room->in_step ? room->next : room->now;
}

/* The window lies inside this process's planes of a cubic double-precision
 * room: the drum's case every step, read and written without per-node tests. */
static int layer_window_plain(const kt_room *room, int z, int x0, int y0, int wx, int wy)
{
    int zin = room->slab ? room_slab_layer_ok(room, z) : z >= 0 && z < room->grid.nz;
    return zin && !room->fcc && room->params.precision == KT_DOUBLE && x0 >= 0 && y0 >= 0 &&
           x0 + wx <= room->grid.nx && y0 + wy <= room->grid.ny;
}

void kt_room_read_layer(const kt_room *room, kt_time_level level, int z, int x0, int y0,
                        int wx, int wy, double *out)
{
    const void *f = layer_buffer(room, level);
    if (layer_window_plain(room, z, x0, y0, wx, wy)) {
        const double *corner = (const double *)f + room_pidx(room, x0, y0, z);
        for (int i = 0; i < wx; i++)
            for (int j = 0; j < wy; j++)
                out[(size_t)i * wy + j] = corner[i + (size_t)j * room->px];
        return;
    }
    int zin = room->slab ? room_slab_layer_ok(room, z) : z >= 0 && z < room->grid.nz;
    for (int i = 0; i < wx; i++) {
        int x = x0 + i, xin = x >= 0 && x < room->grid.nx;
        for (int j = 0; j < wy; j++) {
            int y = y0 + j;
            int in = zin && xin && y >= 0 && y < room->grid.ny;
            /* Outside the room the window reads 0. */
            if (in && room->fcc)
                out[(size_t)i * wy + j] = room_fcc_value(room, f, x, y, z);
            else
                out[(size_t)i * wy + j] = in ? room_get(room, f, room_pidx(room, x, y, z)) : 0.0;
        }
    }
}

void kt_room_add_to_layer(kt_room *room, int z, int x0, int y0, int wx, int wy,
                          const double *v, double scale)
{
    if (room->slab ? !room_slab_layer_ok(room, z) : z < 0 || z >= room->grid.nz)
        return;
    void *f = room->in_step ? room->next : room->now;
    if (layer_window_plain(room, z, x0, y0, wx, wy)) {
        double *corner = (double *)f + room_pidx(room, x0, y0, z);
        for (int i = 0; i < wx; i++)
            for (int j = 0; j < wy; j++)
                corner[i + (size_t)j * room->px] += scale * v[(size_t)i * wy + j];
        return;
    }
    for (int i = 0; i < wx; i++) {
        int x = x0 + i;
        if (x < 0 || x >= room->grid.nx)
            continue;
        for (int j = 0; j < wy; j++) {
            int y = y0 + j;
            /* an FCC room takes its lattice nodes only */
            if (y >= 0 && y < room->grid.ny && !(room->fcc && ((x + y + z) & 1)))
                room_add(room, f, room_node_index(room, x, y, z), scale * v[(size_t)i * wy + j]);
        }
    }
}
