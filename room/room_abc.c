/* room_abc.c - absorbing walls for anechoic work: Mur's first-order condition
 * (thesis 5.2) on the end nodes of the six faces and along the diagonal at
 * edges and corners, and the energy they exchange with the air inside them
 * (kt_room_wall_outflow).  The faces x = 0 and x = nx-1 are updated by the
 * sweep plane by plane (room_abc_plane), the rest after it (room_abc_apply).
 * Why first order, and the energy's books: docs/room.md, "Absorbing walls". */
#include "room_internal.h"

#include <stdlib.h>
#include <string.h>

/* One face: its node (fast 0, slow 0) as a padded index, the padded steps of
 * its fast and slow indices and towards the inside, and its size. */
typedef struct abc_face {
    size_t origin;
    ptrdiff_t fast, slow, inward;
    int n_fast, n_slow;
} abc_face;

/* An edge less its corners, or one corner: `count` nodes `along` apart, each
 * updated from its diagonal inward neighbour `diag` away. */
typedef struct abc_line {
    size_t origin;
    ptrdiff_t along, diag;
    int count;
    double r;                    /* (lambda_d - 1)/(lambda_d + 1) */
} abc_line;

typedef struct room_abc {
    abc_face face[6];
    abc_line line[20];           /* 12 edges, 8 corners */
    int lines;
    double r;                    /* (lambda - 1)/(lambda + 1) */
    double *flux;                /* per face and row: the two sums of face_rows */
    size_t flux_base[6];
    double flux_scale;           /* rho Q / 2 */
    double inflow_J;             /* energy that entered the inside through the walls */
    double known_J;              /* the part of the next step's inflow already known */
} room_abc;

#define REAL double
#define ABC_NAME(x) abc_##x##_double
#include "room_abc_impl.h"
#undef REAL
#undef ABC_NAME

#define REAL float
#define ABC_NAME(x) abc_##x##_float
#include "room_abc_impl.h"
#undef REAL
#undef ABC_NAME

int room_abc_check(const kt_room_params *p, kt_error *err)
{
    if (p->wall_model == KT_WALL_LOSSY)
        return KT_OK;
    if (p->wall_model != KT_WALL_ENGQUIST_MAJDA)
        return kt_fail(err, KT_EINVAL, "unknown wall model %d", (int)p->wall_model);
    if (p->scheme != KT_SCHEME_SLF7)
        return kt_fail(err, KT_ENOTSUP, "absorbing (Engquist-Majda) walls run with the "
                                        "standard 7-point air scheme only");
    if (p->wall_beta != 0)
        return kt_fail(err, KT_EINVAL, "wall beta %g has no meaning with absorbing "
                                       "(Engquist-Majda) walls: leave it at 0", p->wall_beta);
    if (p->viscosity_m > 0)
        return kt_fail(err, KT_ENOTSUP, "absorbing (Engquist-Majda) walls do not run with "
                                        "viscosity yet");
    return KT_OK;
}

/* A node vector of the plan as an offset of the padded layout. */
static ptrdiff_t offset(const kt_room *r, const int v[3])
{
    return v[0] + v[1] * (ptrdiff_t)r->plan.px + v[2] * (ptrdiff_t)r->plan.plane;
}

/* The plan's faces and lines on the padded layout. */
static void set_geometry(const kt_room *r, room_abc *a)
{
    const room_abc_plan *g = &r->plan.abc_plan;
    size_t base = 0;
    for (int k = 0; k < 6; k++) {
        const room_abc_face *f = &g->face[k];
        a->face[k] = (abc_face){room_pidx(r, f->origin[0], f->origin[1], f->origin[2]),
                                offset(r, f->fast), offset(r, f->slow), offset(r, f->inward),
                                f->n_fast, f->n_slow};
        a->flux_base[k] = base;
        base += 2 * (size_t)f->n_slow;
    }
    for (int k = 0; k < 20; k++) {
        const room_abc_line *l = &g->line[k];
        a->line[k] = (abc_line){room_pidx(r, l->origin[0], l->origin[1], l->origin[2]),
                                offset(r, l->along), offset(r, l->diag), l->count, l->r};
    }
    a->lines = 20;
    a->r = g->r;
    a->flux_scale = g->flux_scale;
}

int room_abc_setup(kt_room *room, kt_error *err)
{
    if (room->plan.params.wall_model != KT_WALL_ENGQUIST_MAJDA)
        return KT_OK;
    const room_plan *pl = &room->plan;
    if (pl->z0 != 0 || pl->z_end != pl->grid.nz || pl->x0 != 0 || pl->x_end != pl->grid.nx ||
        pl->y0 != 0 || pl->y_end != pl->grid.ny)
        return kt_fail(err, KT_ENOTSUP, "absorbing (Engquist-Majda) walls cannot be split "
                                        "over MPI ranks yet");
    room_abc *a = calloc(1, sizeof *a);
    if (!a)
        return kt_fail(err, KT_ENOMEM, "out of memory for the absorbing walls");
    room->abc = a;
    set_geometry(room, a);
    a->flux = calloc(a->flux_base[5] + 2 * (size_t)a->face[5].n_slow, sizeof *a->flux);
    if (!a->flux)
        return kt_fail(err, KT_ENOMEM, "out of memory for the absorbing walls");
    return KT_OK;
}

void room_abc_free(kt_room *room)
{
    if (!room->abc)
        return;
    free(room->abc->flux);
    free(room->abc);
    room->abc = NULL;
}

/* The step's exchange from the face rows' sums, added in a fixed order. */
static void add_exchange(room_abc *a)
{
    double now_part = 0, next_part = 0;
    for (int F = 0; F < 6; F++)
        for (int sl = 1; sl < a->face[F].n_slow - 1; sl++) {
            now_part += a->flux[a->flux_base[F] + 2 * (size_t)sl];
            next_part += a->flux[a->flux_base[F] + 2 * (size_t)sl + 1];
        }
    a->inflow_J += a->known_J + a->flux_scale * now_part;
    a->known_J = a->flux_scale * next_part;
}

void room_abc_apply(kt_room *room)
{
    if (!room->abc)
        return;
    if (room->plan.params.precision == KT_SINGLE)
        abc_apply_float(room);
    else
        abc_apply_double(room);
    add_exchange(room->abc);
}

void room_abc_plane(kt_room *room, int z)
{
    if (room->plan.params.precision == KT_SINGLE)
        abc_plane_float(room, z);
    else
        abc_plane_double(room, z);
}

void room_abc_sync(kt_room *room)
{
    if (!room->abc)
        return;
    room_abc *a = room->abc;
    a->inflow_J = 0;
    a->known_J = a->flux_scale * (room->plan.params.precision == KT_SINGLE ? abc_known_part_float(room)
                                                                       : abc_known_part_double(room));
}

double kt_room_wall_outflow(const kt_room *room)
{
    return room->abc ? -room->abc->inflow_J : 0.0;
}

void room_abc_set_exchange(kt_room *room, double inflow_J, double known_J)
{
    if (!room->abc)
        return;
    room->abc->inflow_J = inflow_J;
    room->abc->known_J = known_J;
}

void room_abc_exchange(const kt_room *room, double *inflow_J, double *known_J)
{
    *inflow_J = room->abc ? room->abc->inflow_J : 0.0;
    *known_J = room->abc ? room->abc->known_J : 0.0;
}
