/* room_scheme.c - the air schemes other than the 7-point one: building each
 * scheme's stencil, its symbol and stability limit, kt_room_scheme_info, the
 * parameter checks they add, and the coefficients a room keeps (issue #8;
 * docs/room.md, "Air schemes"). */
#include "room_internal.h"
#include "kt_physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int room_scheme_stencil(const kt_room_params *p, room_stencil *st, kt_error *err)
{
    memset(st, 0, sizeof *st);
    switch (p->scheme) {
    case KT_SCHEME_IWB27:
        room_iwb_stencil(st);
        return KT_OK;
    case KT_SCHEME_FCC13:
        room_fcc_stencil(st);
        return KT_OK;
    case KT_SCHEME_STENCIL:
        return room_family_stencil(p, st, err);
    default:
        return kt_fail(err, KT_EINVAL, "unknown air scheme %d", (int)p->scheme);
    }
}

double room_stencil_symbol(const room_stencil *st, const double kappa[3])
{
    double s = 0;
    for (int q = 0; q < st->pairs; q++) {
        double phase = kappa[0] * st->d[q][0] + kappa[1] * st->d[q][1] + kappa[2] * st->d[q][2];
        s += 2 * st->w[q] * (1 - cos(phase));
    }
    return s;
}

/* Coordinate ascent from a start point, halving the step down to 1e-12 rad. */
static double refine_max(const room_stencil *st, double kappa[3], double best)
{
    for (double step = 0.05; step > 1e-12; step *= 0.5) {
        int moved = 1;
        while (moved) {
            moved = 0;
            for (int d = 0; d < 3; d++)
                for (int sgn = -1; sgn <= 1; sgn += 2) {
                    double t[3] = {kappa[0], kappa[1], kappa[2]};
                    t[d] = fmin(KT_PI, fmax(0, t[d] + sgn * step));
                    double v = room_stencil_symbol(st, t);
                    if (v > best) {
                        best = v;
                        memcpy(kappa, t, sizeof t);
                        moved = 1;
                    }
                }
        }
    }
    return best;
}

/* The symbol is even in each component and symmetric under axis swaps, so
 * kappa_x >= kappa_y >= kappa_z in [0, pi] covers the zone: a grid of pi/32
 * there, then the best point refined. */
double room_stencil_symbol_max(const room_stencil *st)
{
    const int n = 32;
    double best = -1, at[3] = {0, 0, 0};
    for (int i = 0; i <= n; i++)
        for (int j = 0; j <= i; j++)
            for (int l = 0; l <= j; l++) {
                double kappa[3] = {KT_PI * i / n, KT_PI * j / n, KT_PI * l / n};
                double v = room_stencil_symbol(st, kappa);
                if (v > best) {
                    best = v;
                    memcpy(at, kappa, sizeof at);
                }
            }
    return refine_max(st, at, best);
}

static const char *const plain_names[3] = {"standard", "iwb", "fcc"};
static const kt_air_scheme plain_schemes[3] = {KT_SCHEME_SLF7, KT_SCHEME_IWB27, KT_SCHEME_FCC13};
static const char *const family_names[3] = {"compact", "box", "leggy"};

int kt_room_scheme_reach_kind(const char *name)
{
    for (int i = 0; i < 3; i++) {
        if (!strcmp(name, plain_names[i]))
            return 0;
        if (!strcmp(name, family_names[i]))
            return 1;
    }
    return -1;
}

int kt_room_scheme_set(kt_room_params *p, const char *name, int reach, kt_error *err)
{
    for (int i = 0; i < 3; i++) {
        if (!strcmp(name, plain_names[i])) {
            p->scheme = plain_schemes[i];
            return KT_OK;
        }
        if (!strcmp(name, family_names[i])) {
            if (reach < 1 || reach > 64)
                return kt_fail(err, KT_EINVAL, "the %s stencil's reach must be a whole "
                               "number 1..64, got %d", name, reach);
            p->scheme = KT_SCHEME_STENCIL;
            p->stencil_family = (kt_stencil_family)i;
            p->stencil_reach = reach;
            return KT_OK;
        }
    }
    return kt_fail(err, KT_EINVAL, "unknown air scheme '%s' (standard, iwb, fcc, compact R, "
                   "box q, leggy M)", name);
}

int kt_room_scheme_info(const kt_room_params *p, kt_scheme_info *info, kt_error *err)
{
    if (!p || !info)
        return kt_fail(err, KT_EINVAL, "kt_room_scheme_info: NULL argument");
    if (p->scheme == KT_SCHEME_SLF7) {
        info->name = "7-point";
        info->points = 7;
        info->halo_nodes = 1;
        info->max_courant = 1 / sqrt(3.0);
        return KT_OK;
    }
    room_stencil *st = malloc(sizeof *st);
    if (!st)
        return kt_fail(err, KT_ENOMEM, "out of memory building a stencil");
    int rc = room_scheme_stencil(p, st, err);
    if (rc == KT_OK) {
        info->points = 2 * st->pairs + 1;
        info->halo_nodes = st->reach;
        if (p->scheme == KT_SCHEME_IWB27) {
            info->name = "IWB 27-point";
            info->max_courant = 1.0; /* the symbol peaks at exactly 4 (thesis 4.3.1) */
        } else if (p->scheme == KT_SCHEME_FCC13) {
            info->name = "FCC 13-point";
            /* S = 3 - (cx cy + cy cz + cz cx) peaks at exactly 4, at (0, pi, pi) */
            info->max_courant = 1.0;
        } else {
            static const char *names[3] = {"compact-in-space", "box-compact", "leggy"};
            info->name = names[p->stencil_family];
            /* The peak is found by search, so the limit is kept 1e-6 below it. */
            info->max_courant = 2 / sqrt(room_stencil_symbol_max(st) * (1 + 2e-6));
        }
    }
    free(st);
    return rc;
}

int room_scheme_check(const kt_room_params *p, kt_error *err)
{
    kt_scheme_info info = {"", 0, 0, 0};
    int rc = kt_room_scheme_info(p, &info, err);
    if (rc < 0 || p->scheme == KT_SCHEME_SLF7)
        return rc;
    if (p->viscosity_m > 0)
        return kt_fail(err, KT_EINVAL, "viscosity is available with the 7-point scheme only, "
                                       "not with the %s scheme", info.name);
    return KT_OK;
}

/* Lossy walls of the mirror-wall stencils: node layer l (0 next to the wall)
 * takes a_l = sum over pairs with |d_x| > l of w_p |d_x|, the weight of the
 * legs from that layer the wall cuts, each counted by how far past the wall
 * it reaches (a leg of length m crosses the wall from m layers), so that
 * sum_l a_l = sum_p w_p d_x^2 = 1: the whole wall loss beta per unit area,
 * spread as the stencil's flux through the wall is.  Negative a_l (leggy
 * stencils' alternating weights) would add energy: they are dropped and
 * the rest scaled back to a sum of 1. */
static void stencil_wall_profile(room_plan *r)
{
    const room_stencil *st = r->st;
    double sum = 0;
    r->wall_layers = st->reach;
    for (int l = 0; l < st->reach; l++) {
        double a = 0;
        for (int q = 0; q < st->pairs; q++) {
            int dx = abs(st->d[q][0]);
            if (dx > l)
                a += st->w[q] * dx;
        }
        r->wall_profile[l] = a > 0 ? a : 0;
        sum += r->wall_profile[l];
    }
    for (int l = 0; l < st->reach; l++)
        r->wall_profile[l] /= sum;
}

double room_wall_weight(const kt_room *room, int d, int i, int n)
{
    double a = 0;
    if (i < room->plan.wall_layers)
        a += room->plan.wall_profile[i] / room->plan.walls.v[d][0];
    if (n - 1 - i < room->plan.wall_layers)
        a += room->plan.wall_profile[n - 1 - i] / room->plan.walls.v[d][1];
    return a;
}

/* The plan's stencil and the per-pair coefficients of its sweep. */
int room_scheme_setup(room_plan *r, kt_error *err)
{
    if (r->params.scheme == KT_SCHEME_SLF7)
        return KT_OK;
    r->st = malloc(sizeof *r->st);
    if (!r->st)
        return kt_fail(err, KT_ENOMEM, "out of memory building a stencil");
    int rc = room_scheme_stencil(&r->params, r->st, err);
    if (rc < 0)
        return rc;
    double sum = 0;
    for (int q = 0; q < r->st->pairs; q++) {
        const int *d = r->st->d[q];
        sum += 2 * r->st->w[q];
        r->st_l2w[q] = r->l2 * r->st->w[q];
        r->st_off[q] = d[0] + d[1] * (ptrdiff_t)r->px + d[2] * (ptrdiff_t)r->plane;
    }
    r->st_centre = 2 - r->l2 * sum;
    if (r->params.scheme == KT_SCHEME_FCC13) {
        /* the end node's share of a cell: wall area per volume 1 / v (room_fcc.c) */
        r->wall_layers = 1;
        r->wall_profile[0] = 1;
    } else {
        stencil_wall_profile(r);
    }
    return KT_OK;
}

double kt_room_scheme_phase_velocity(const kt_room_params *p, double courant,
                                     const double kappa_rad[3])
{
    double kn = sqrt(kappa_rad[0] * kappa_rad[0] + kappa_rad[1] * kappa_rad[1] +
                     kappa_rad[2] * kappa_rad[2]);
    double symbol;
    if (!p || !(kn > 0))
        return NAN;
    if (p->scheme == KT_SCHEME_SLF7) {
        symbol = 0;
        for (int d = 0; d < 3; d++)
            symbol += 2 * (1 - cos(kappa_rad[d]));
    } else {
        room_stencil *st = malloc(sizeof *st);
        if (!st || room_scheme_stencil(p, st, NULL) < 0) {
            free(st);
            return NAN;
        }
        symbol = room_stencil_symbol(st, kappa_rad);
        free(st);
    }
    /* cos(omega k) = 1 - lambda^2 symbol / 2 */
    double cw = 1 - courant * courant * symbol / 2;
    if (!(cw >= -1 && cw <= 1))
        return NAN;
    return acos(cw) / (courant * kn);
}
