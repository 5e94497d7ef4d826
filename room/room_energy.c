/* room_energy.c - the discrete energy of the air (design note 8) at n+1/2,
 * from the two current buffers after a step (now = Psi^{n+1}, prev = Psi^n):
 *
 *   H = rho Q^3/(2 c^2 k^2) sum_i V_i (Psi_i^{n+1} - Psi_i^n)^2
 *     + rho Q/2 sum_{open legs (i,j)} W_ij (Psi_j^{n+1} - Psi_i^{n+1}) (Psi_j^n - Psi_i^n)
 *     - rho Q^3 eta/(4 c^2 k^2) sum_{open legs} W_ij (g_j - g_i)^2,  g = Psi^{n+1} - Psi^n.
 *
 * V_i is node i's share of a cell, the product over the axes of its share
 * along each (1, or wall_v at an end: room_plan.h), and W_ij a leg's
 * cross-section, the product of the shares along the two other axes: the
 * finite volumes of the cells the walls cut (docs/room.md, "Walls").  Open
 * legs are box-interior legs minus every registered boundary list's blocked
 * legs (each counted once; they lie inside, where V = W = 1) and the solids'
 * blocked legs (each with its W_ij: solids may touch the walls).  The last line
 * is the correction the backward-differenced viscous term needs (docs/room.md
 * derives it): with it the energy can only fall when viscosity is on.  Sums
 * go per z-plane into an array and are added in plane order, so any thread
 * count, and any number of ranks a room is split over, gives the same bits. */
#include "room_slab.h"
#include "kt_instrument.h"
#include "kt_ranks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct plane_sums {
    double kin, pot, visc;
} plane_sums;

/* Row (y, z)'s sums over its nodes xa .. xb-1 at least `in` nodes from every
 * wall and their legs up, added on to *s in x order (in = 0: the whole box;
 * 1: inside absorbing walls, whose shares are all 1). */
#define ROW_SUMS(REAL, NAME)                                                             \
    static void NAME(const kt_room *r, int y, int z, int in, int xa, int xb, plane_sums *s) \
    {                                                                                    \
        const REAL *a = r->now, *b = r->prev;                                            \
        const size_t step[3] = {1, r->plan.px, r->plan.plane};                           \
        const int nx = r->plan.grid.nx - in, ny = r->plan.grid.ny - in;                  \
        const int up = z + 1 < r->plan.grid.nz - in;                                     \
        const double vz = room_wall_share(r, 2, z, r->plan.grid.nz);                     \
        const double vy = room_wall_share(r, 1, y, r->plan.grid.ny);                     \
        size_t i = room_pidx(r, xa, y, z);                                               \
        for (int x = xa; x < xb; x++, i++) {                                             \
            const double vx = room_wall_share(r, 0, x, r->plan.grid.nx);                 \
            double gi = (double)a[i] - (double)b[i];                                     \
            s->kin += vx * vy * vz * gi * gi;                                            \
            int open[3] = {x + 1 < nx, y + 1 < ny, up};                                  \
            const double w[3] = {vy * vz, vx * vz, vx * vy};                             \
            for (int d = 0; d < 3; d++) {                                                \
                if (!open[d])                                                            \
                    continue;                                                            \
                size_t j = i + step[d];                                                  \
                double da = (double)a[j] - (double)a[i], db = (double)b[j] - (double)b[i]; \
                s->pot += w[d] * da * db;                                                \
                s->visc += w[d] * (da - db) * (da - db);                                 \
            }                                                                            \
        }                                                                                \
    }

ROW_SUMS(double, row_sums_double)
ROW_SUMS(float, row_sums_float)

/* Takes what one blocked leg of cross-section w contributed (instruments'
 * legs lie inside: w = 1, exactly no factor). */
static void remove_leg(const kt_room *r, size_t i, size_t j, double w, plane_sums *s)
{
    double da = room_get(r, r->now, j) - room_get(r, r->now, i);
    double db = room_get(r, r->prev, j) - room_get(r, r->prev, i);
    s->pot -= w * da * db;
    s->visc -= w * (da - db) * (da - db);
}

/* The plane of padded index i. */
static int plane_of(const kt_room *r, size_t i)
{
    int p[3];
    room_plan_node_xyz(&r->plan, i, p);
    return p[2];
}

/* The row (z ny + y) of padded index i. */
static size_t row_of(const kt_room *r, size_t i)
{
    int p[3];
    room_plan_node_xyz(&r->plan, i, p);
    return (size_t)p[2] * (size_t)r->plan.grid.ny + (size_t)p[1];
}

/* This rank's part of every row's sums, rs[z ny + y] (zero where it holds
 * none of the row).  A rank of a room split along x carries on each row's
 * sums from the rank below's, in x order, and passes them up: the last
 * rank's are the rows' whole sums, added in the same order as on one
 * process. */
static int rank_rows(const kt_room *r, int in, plane_sums *rs, kt_error *err)
{
    const room_plan *pl = &r->plan;
    const struct room_slab *sl = r->slab;
    const int nx = pl->grid.nx, ny = pl->grid.ny, nz = pl->grid.nz;
    const int along_x = sl && sl->axis == 0 && sl->ranks > 1;
    const size_t rows = (size_t)ny * (size_t)nz, bytes = rows * sizeof *rs;
    if (along_x && sl->rank > 0 &&
        sl->tp->recv(sl->ctx, sl->rank - 1, ROOM_ENERGY_TAG, rs, bytes, err) < 0)
        return KT_EIO;
    const int xa = pl->x0 > in ? pl->x0 : in, xb = pl->x_end < nx - in ? pl->x_end : nx - in;
    const int ya = pl->y0 > in ? pl->y0 : in, yb = pl->y_end < ny - in ? pl->y_end : ny - in;
    const int za = pl->z0 > in ? pl->z0 : in, zb = pl->z_end < nz - in ? pl->z_end : nz - in;
#pragma omp parallel for schedule(static) num_threads(r->nthreads)
    for (int z = za; z < zb; z++)
        for (int y = ya; y < yb && xa < xb; y++) {
            plane_sums *s = &rs[(size_t)z * ny + y];
            if (pl->params.precision == KT_SINGLE)
                row_sums_float(r, y, z, in, xa, xb, s);
            else
                row_sums_double(r, y, z, in, xa, xb, s);
        }
    if (along_x && sl->rank + 1 < sl->ranks) {
        if (sl->tp->send(sl->ctx, sl->rank + 1, ROOM_ENERGY_TAG, rs, bytes, err) < 0)
            return KT_EIO;
        memset(rs, 0, bytes);        /* the last rank holds the whole rows */
    }
    return KT_OK;
}

/* The energy of the nodes at least `in` nodes from every wall (0 or 1).
 * Each row's sums (a solid's blocked leg taken from its lower node's row)
 * are added in row order, then each instrument's blocked legs, plane by
 * plane of their lower nodes, in the order the instruments were added; on
 * a split room each rank fills its own rows and its instruments' planes
 * (an instrument lies on one rank of a room cut along x or y), the job
 * adds the ranks' arrays (each entry from one rank, so exactly) and every
 * rank then adds them as a whole room does: the same bits for any rank
 * count and axis.  Collective on a split room (the legs across a cut read
 * the neighbour's layer, brought first). */
static double box_energy(const kt_room *r, int in)
{
    if (r->plan.st)
        return room_stencil_energy(r);
    const size_t nz = (size_t)r->plan.grid.nz, rows = (size_t)r->plan.grid.ny * nz;
    const size_t entries = rows + (size_t)r->plan.ins_count * nz;
    plane_sums *rs = calloc(entries, sizeof *rs), *ins = rs + rows;
    kt_error err;
    /* after a failure the sum below still meets the other ranks' */
    int bad = !rs || (r->slab && room_slab_refresh_halos((kt_room *)r, &err) < 0);
    if (rs && rank_rows(r, in, rs, &err) < 0)   /* along x: every rank passes its rows on */
        bad = 1;
    /* blocked legs lie inside (instruments keep off the walls); each
     * instrument's on its runner, the nodes' own */
    size_t step[3] = {1, r->plan.px, r->plan.plane};
    for (int k = 0; !bad && k < r->plan.ins_count; k++) {
        const room_instrument *ri = &r->plan.ins[k];
        for (int l = 0; l < ri->leg_count; l++)
            remove_leg(r, ri->leg[l], ri->leg[l] + step[ri->leg_axis[l]], 1.0,
                       &ins[(size_t)k * nz + (size_t)plane_of(r, ri->leg[l])]);
    }
    /* the solids' (on a slab, those from this rank's planes), each with its W_ij */
    const room_shape *sh = &r->plan.shape;
    for (int l = 0; !bad && l < sh->leg_count; l++)
        remove_leg(r, sh->leg[l], sh->leg[l] + step[sh->leg_axis[l]], sh->leg_w[l],
                   &rs[row_of(r, sh->leg[l])]);
    if (r->slab) {               /* every rank joins the sum, also after a failure */
        double *all = rs ? &rs[0].kin : &(double){0};
        bad |= kt_mpi_sum(all, rs ? 3 * entries : 1, &err) < 0;
        bad = kt_mpi_max(bad) > 0;
    }
    double kin = 0, pot = 0, visc = 0;
    for (size_t e = 0; rs && e < entries; e++) {
        kin += rs[e].kin;
        pot += rs[e].pot;
        visc += rs[e].visc;
    }
    free(rs);
    if (bad)
        return NAN;
    double rho = r->plan.params.air_density_kg_per_m3, c = r->plan.params.sound_speed_m_per_s;
    double Q = r->plan.grid.spacing_m, k = r->plan.grid.time_step_s;
    double kin_w = rho * Q * Q * Q / (2 * c * c * k * k);
    return kin_w * kin + 0.5 * rho * Q * pot - 0.5 * kin_w * r->plan.eta * visc;
}

double kt_room_air_energy(const kt_room *room)
{
    return box_energy(room, 0);
}

double kt_room_accounted_energy(const kt_room *room)
{
    return room->abc ? box_energy(room, 1) + kt_room_wall_outflow(room) : box_energy(room, 0);
}

double kt_room_total_energy(const kt_room *room)
{
    double h = kt_room_air_energy(room), ins_J = 0;
    for (int k = 0; k < room->plan.ins_count; k++) {
        const kt_instrument *ins = room->plan.ins[k].ins;
        if (ins->energy && kt_room_runs_instrument(room, ins->self))
            ins_J += ins->energy(ins->self);
    }
    /* on a slab each instrument's energy is its runner's */
    if (room->slab && kt_mpi_sum(&ins_J, 1, NULL) < 0)
        return NAN;
    return h + ins_J;
}
