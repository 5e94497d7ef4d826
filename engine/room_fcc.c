/* room_fcc.c - the 13-point face-centred cubic scheme (thesis 4.3.2; issue
 * #8): the nodes (x, y, z) of the cubic grid with x + y + z even, each
 * coupled to its 12 nearest neighbours with weight 1/4 (in 1/Q^2), stored
 * without redundancy in half-length rows (docs/room.md, "FCC 13-point"):
 *   index = ((z + 1) sy + (y + 1)) sx + 1 + floor(x / 2),
 *   sx = (nx + 1) / 2 + 2, sy = ny + 2, nz + 2 planes.
 * Rigid walls are mirror planes through the end nodes (node -t takes node t),
 * which keep the sub-lattice; the mirrored operator is symmetric for the
 * trapezoid node volumes V_i = 2^-(walls through i) and leg weights
 * W = 1/4 2^-(walls containing the leg), which give the energy below.
 * Lossy walls: beta_i = 2 beta per wall through the node (the wall area per
 * volume of a half cell); the derivation is in docs/room.md. */
#include "room_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REAL double
#define FCC(x) fcc_##x##_double
#include "room_fcc_impl.h"
#undef REAL
#undef FCC

#define REAL float
#define FCC(x) fcc_##x##_float
#include "room_fcc_impl.h"
#undef REAL
#undef FCC

/* The six leg pairs (1,+-1,0), (1,0,+-1), (0,1,+-1), weight 1/4 each:
 * sum over the 12 offsets of d d^T = 8 I, so (1/4) sum (Psi_j - Psi_i) ~ Q^2 lap Psi. */
void room_fcc_stencil(room_stencil *st)
{
    static const int d[6][3] = {{1, 1, 0}, {1, -1, 0}, {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1}};
    st->pairs = 6;
    st->reach = 1;
    for (int q = 0; q < 6; q++) {
        memcpy(st->d[q], d[q], sizeof d[q]);
        st->w[q] = 0.25;
    }
}

void room_fcc_dims(int nx, int ny, int nz, size_t dims[3])
{
    dims[0] = (size_t)(nx + 1) / 2 + 2;
    dims[1] = (size_t)ny + 2;
    dims[2] = (size_t)nz + 2;
}

void room_fcc_sweep(kt_room *room)
{
    if (room->params.precision == KT_SINGLE)
        fcc_sweep_float(room);
    else
        fcc_sweep_double(room);
}

static int mirror_node(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
}

/* H = rho Q^3/(c^2 k^2) sum V_i (Psi^{n+1} - Psi^n)^2 + rho Q sum_legs W dPsi^{n+1} dPsi^n
 * (each node stands for a volume 2 Q^3 V_i). */
double room_fcc_energy(const kt_room *room)
{
    const kt_room *r = room;
    double kin, pot;
    if (room_energy_sums(r, r->params.precision == KT_SINGLE ? fcc_plane_energy_float
                                                             : fcc_plane_energy_double,
                         &kin, &pot) < 0)
        return NAN;
    double rho = r->params.air_density_kg_per_m3, c = r->params.sound_speed_m_per_s;
    double Q = r->grid.spacing_m, k = r->grid.time_step_s;
    return rho * Q * Q * Q / (c * c * k * k) * kin + rho * Q * pot;
}

/* The nearest lattice node to pos from the nearest cubic node: when that one
 * is off the lattice, the coordinate rounded furthest moves one node towards
 * pos (the other way at a wall). */
void room_fcc_snap(const kt_room *room, const double pos_m[3], int node[3])
{
    if (((node[0] + node[1] + node[2]) & 1) == 0)
        return;
    const int n[3] = {room->grid.nx, room->grid.ny, room->grid.nz};
    int worst = 0;
    double gap[3];
    for (int d = 0; d < 3; d++) {
        gap[d] = pos_m[d] / room->grid.spacing_m - node[d];
        if (fabs(gap[d]) > fabs(gap[worst]))
            worst = d;
    }
    int step = gap[worst] >= 0 ? 1 : -1;
    if (node[worst] + step < 0 || node[worst] + step >= n[worst])
        step = -step;
    node[worst] += step;
}

/* Field f at cubic node (x, y, z) inside the box: the node's value on the
 * lattice, else the mean of its six axis neighbours (all on the lattice;
 * through the mirror walls), a second-order estimate. */
double room_fcc_value(const kt_room *room, const void *f, int x, int y, int z)
{
    if (((x + y + z) & 1) == 0)
        return room_get(room, f, room_fcc_index(room, x, y, z));
    const int n[3] = {room->grid.nx, room->grid.ny, room->grid.nz};
    double sum = 0;
    for (int d = 0; d < 3; d++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            int at[3] = {x, y, z};
            at[d] = mirror_node(at[d] + sgn, n[d]);
            sum += room_get(room, f, room_fcc_index(room, at[0], at[1], at[2]));
        }
    return sum / 6;
}
