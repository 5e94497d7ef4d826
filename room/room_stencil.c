/* room_stencil.c - stage A and the discrete energy of the stencil schemes
 * (IWB and the generic stencils; docs/room.md, "Air schemes").  The sweep
 * is room_stencil_impl.h compiled for float and double.  The energy at
 * n+1/2 after a step (now = Psi^{n+1}, prev = Psi^n) is
 *   H = rho Q^3 / (2 c^2 k^2) sum_i V_i (Psi_i^{n+1} - Psi_i^n)^2
 *     - rho Q / 2 sum_i V_i (Psi_i^{n+1} - c) (L Psi^n)_i,
 *   (L Psi)_i = sum_p w_p (Psi_{i+d_p} + Psi_{i-d_p} - 2 Psi_i) through the walls' ghosts,
 * V_i the node's share of a cell (room_plan.h), which the scheme
 * conserves exactly because the walled L is symmetric for those volumes; it
 * is non-negative for lambda^2 max(symbol) <= 4.  L Psi^n reads Psi^n's
 * ghosts as the sweep filled them (the buffer keeps them after the step).
 * The constant c, Psi^{n+1} at the middle node, changes no value (L sums to
 * zero against V) but keeps a uniform drift of the field from spoiling the
 * sum with rounding. */
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
    if (room->plan.fcc) {
        room_fcc_sweep(room);
        return;
    }
    if (room->plan.params.precision == KT_SINGLE)
        stencil_sweep_float(room);
    else
        stencil_sweep_double(room);
}

/* Kinetic and potential sums of one z-plane (c the offset above). */
static void plane_energy(const kt_room *r, int z, double *kin, double *pot)
{
    const room_stencil *st = r->plan.st;
    const int nx = r->plan.grid.nx, ny = r->plan.grid.ny;
    const double c = room_get(r, r->now, room_pidx(r, nx / 2, ny / 2, r->plan.grid.nz / 2));
    const double vz = room_wall_share(r, 2, z, r->plan.grid.nz);
    double k_sum = 0, p_sum = 0;
    for (int y = 0; y < ny; y++) {
        const double vyz = room_wall_share(r, 1, y, ny) * vz;
        for (int x = 0; x < nx; x++) {
            size_t i = room_pidx(r, x, y, z);
            double a = room_get(r, r->now, i), b = room_get(r, r->prev, i), lap = 0;
            for (int q = 0; q < st->pairs; q++)
                lap += st->w[q] * ((room_get(r, r->prev, i + (size_t)r->plan.st_off[q]) - b) +
                                   (room_get(r, r->prev, i - (size_t)r->plan.st_off[q]) - b));
            const double v = room_wall_share(r, 0, x, nx) * vyz;
            k_sum += v * (a - b) * (a - b);
            p_sum += v * (a - c) * lap;
        }
    }
    *kin = k_sum;
    *pot = p_sum;
}

int room_energy_sums(const kt_room *r, room_plane_energy_fn plane, double *kin, double *pot)
{
    int nz = r->plan.grid.nz;
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
    if (r->plan.fcc)
        return room_fcc_energy(r);
    double kin, pot;
    if (room_energy_sums(r, plane_energy, &kin, &pot) < 0)
        return NAN;
    double rho = r->plan.params.air_density_kg_per_m3, c = r->plan.params.sound_speed_m_per_s;
    double Q = r->plan.grid.spacing_m, k = r->plan.grid.time_step_s;
    return rho * Q * Q * Q / (2 * c * c * k * k) * kin - 0.5 * rho * Q * pot;
}
