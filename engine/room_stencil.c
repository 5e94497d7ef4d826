/* room_stencil.c - stage A and the discrete energy of the stencil schemes
 * (IWB and the generic stencils; docs/room.md, "Air schemes").  The sweep
 * is room_stencil_impl.h compiled for float and double.  The energy at
 * n+1/2 after a step (now = Psi^{n+1}, prev = Psi^n) is
 *   H = rho Q^3 / (2 c^2 k^2) sum_i (Psi_i^{n+1} - Psi_i^n)^2
 *     - rho Q / 2 sum_i Psi_i^{n+1} (L Psi^n)_i,
 *   (L Psi)_i = sum_p w_p (Psi_{i+d_p} + Psi_{i-d_p} - 2 Psi_i) with mirror images,
 * which the scheme conserves exactly because the mirrored L is symmetric;
 * it is non-negative for lambda^2 max(symbol) <= 4.  The second sum is taken
 * as the equal leg sum  1/2 sum_i sum_{p, +-} w_p (dPsi^{n+1})(dPsi^n)  over
 * differences along each leg, which a uniform offset of the field cannot
 * spoil with rounding.  For the 7-point stencil it is room_energy.c's sum. */
#include "room_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REAL double
#define STN(x) stencil_##x##_double
#include "room_stencil_impl.h"
#undef REAL
#undef STN

#define REAL float
#define STN(x) stencil_##x##_float
#include "room_stencil_impl.h"
#undef REAL
#undef STN

void room_stencil_sweep(kt_room *room)
{
    if (room->fcc) {
        room_fcc_sweep(room);
        return;
    }
    if (room->params.precision == KT_SINGLE)
        stencil_sweep_float(room);
    else
        stencil_sweep_double(room);
}

/* The node a leg lands on, through the mirror walls: node -j is node j - 1. */
static int mirror(int i, int n)
{
    return i < 0 ? -1 - i : i >= n ? 2 * n - 1 - i : i;
}

static double stencil_neighbour(const kt_room *r, const void *f, int x, int y, int z,
                                const int d[3], int sgn)
{
    int xx = mirror(x + sgn * d[0], r->grid.nx), yy = mirror(y + sgn * d[1], r->grid.ny);
    int zz = mirror(z + sgn * d[2], r->grid.nz);
    return room_get(r, f, room_pidx(r, xx, yy, zz));
}

/* 1 when node i of n is at least `reach` nodes from both walls. */
static int deep(int i, int n, int reach)
{
    return i >= reach && i < n - reach;
}

/* Kinetic and potential sums of one z-plane.  Nodes whose legs all stay in
 * the room read their neighbours at the sweep's offsets (the same values in
 * the same order as through the mirror, which they never need). */
static void plane_energy(const kt_room *r, int z, double *kin, double *pot)
{
    const room_stencil *st = r->st;
    const int reach = st->reach, z_deep = deep(z, r->grid.nz, reach);
    double k_sum = 0, p_sum = 0;
    for (int y = 0; y < r->grid.ny; y++)
        for (int x = 0; x < r->grid.nx; x++) {
            size_t i = room_pidx(r, x, y, z);
            double a = room_get(r, r->now, i), b = room_get(r, r->prev, i), legs = 0;
            int inside = z_deep && deep(y, r->grid.ny, reach) && deep(x, r->grid.nx, reach);
            for (int q = 0; q < st->pairs; q++)
                for (int sgn = -1; sgn <= 1; sgn += 2) {
                    double da, db;
                    if (inside) {
                        size_t j = i + (size_t)(sgn * r->st_off[q]);
                        da = room_get(r, r->now, j) - a;
                        db = room_get(r, r->prev, j) - b;
                    } else {
                        da = stencil_neighbour(r, r->now, x, y, z, st->d[q], sgn) - a;
                        db = stencil_neighbour(r, r->prev, x, y, z, st->d[q], sgn) - b;
                    }
                    legs += st->w[q] * da * db;
                }
            k_sum += (a - b) * (a - b);
            p_sum += legs;
        }
    *kin = k_sum;
    *pot = p_sum;
}

int room_energy_sums(const kt_room *r, room_plane_energy_fn plane, double *kin, double *pot)
{
    int nz = r->grid.nz;
    double *sums = malloc(sizeof *sums * 2 * (size_t)nz);
    if (!sums)
        return KT_ENOMEM;
#pragma omp parallel for schedule(static) num_threads(r->nthreads)
    for (int z = 0; z < nz; z++)
        plane(r, z, &sums[2 * z], &sums[2 * z + 1]);
    *kin = *pot = 0;
    for (int z = 0; z < nz; z++) {
        *kin += sums[2 * z];
        *pot += sums[2 * z + 1];
    }
    free(sums);
    return KT_OK;
}

double room_stencil_energy(const kt_room *room)
{
    const kt_room *r = room;
    if (r->fcc)
        return room_fcc_energy(r);
    double kin, pot;
    if (room_energy_sums(r, plane_energy, &kin, &pot) < 0)
        return NAN;
    double rho = r->params.air_density_kg_per_m3, c = r->params.sound_speed_m_per_s;
    double Q = r->grid.spacing_m, k = r->grid.time_step_s;
    return rho * Q * Q * Q / (2 * c * c * k * k) * kin + 0.25 * rho * Q * pot;
}
