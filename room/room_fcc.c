/* room_fcc.c - the 13-point face-centred cubic scheme (thesis 4.3.2; issue
 * #8): the nodes (x, y, z) of the cubic grid with x + y + z even, each
 * coupled to its 12 nearest neighbours with weight 1/4 (in 1/Q^2), stored
 * without redundancy in half-length rows (docs/room.md, "FCC 13-point"):
 *   index = ((z + 1) sy + (y + 1)) sx + 1 + floor(x / 2),
 *   sx = (nx + 1) / 2 + 2, sy = ny + 2, nz + 2 planes.
 * Walls (docs/room.md, "Walls"): the wall at 0 runs through the end nodes,
 * the far one lies (v - 1/2) Q beyond them, v = wall_v in [1/2, 3/2)
 * (room_plan.h): a finite volume whose end node holds a share v of a
 * cell along that axis.  The sweep mirrors the lattice about the end nodes
 * (node -t takes node t, which keeps the sub-lattice), right for v = 1/2;
 * room_fcc_weight gives each leg's weight for any v, and where v != 1/2 the
 * sweep adds the difference at the end nodes (fcc_cut_*, cut_walls).  The operator is
 * symmetric for the node volumes V_i = prod_d v_d(i) and leg weights
 * W = 1/4 prod_(axes the leg keeps at an end) v_d, which give the energy
 * below.  Lossy walls: beta_i = beta / v per wall (the wall area per volume
 * of the cut cell); the derivation is in docs/room.md. */
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

const int room_fcc_legs[12][3] = {{1, 1, 0},  {1, -1, 0}, {-1, 1, 0},  {-1, -1, 0},
                                   {1, 0, 1},  {1, 0, -1}, {-1, 0, 1},  {-1, 0, -1},
                                   {0, 1, 1},  {0, 1, -1}, {0, -1, 1},  {0, -1, -1}};

/* The walls node i lies on: their count, and the shares (1/2 for all when
 * `mirror`: the sweep's mirror ghosts) along each axis (1 off the walls). */
static int fcc_walls(const kt_room_grid *g, const room_walls *w, const int i[3], int mirror,
                     double v[3])
{
    const int n[3] = {g->nx, g->ny, g->nz};
    int m = 0;
    for (int d = 0; d < 3; d++) {
        int end = room_wall_code(i[d], n[d]);
        v[d] = !end ? 1 : mirror ? 0.5 : w->v[d][end - 1];
        m += end > 0;
    }
    return m;
}

/* A wall node's volume V (in lattice cells of 2 Q^3) and the weight of its
 * legs (1/4 inside).  On one wall of share v: V = v, legs across the wall
 * 1 / (4 v) (the wall's normal flux, 1/v of the inside's), legs in its plane
 * (1 - 1 / (4 v)) / 2 (the tangential Laplacian unchanged).  On two or three
 * walls the weights are those the symmetry V_i w_ij = V_j w_ji takes from
 * the neighbours, with V = (v1 + v2 - 1/2) / 2 on an edge, which keeps the
 * Laplacian along it, and V = v1 v2 v3 at a corner (which keeps the scheme
 * stable at Courant number 1; a sum like the edge's did not).  At v = 1/2
 * these are the mirror's: V = 2^-m and 2^(walls the leg crosses) / 4. */
double room_fcc_volume(const kt_room_grid *g, const room_walls *w, const int i[3], int mirror)
{
    const int n[3] = {g->nx, g->ny, g->nz};
    double v[3], s = 0;   /* s: the shares of the walls the node is on */
    int m = fcc_walls(g, w, i, mirror, v);
    for (int d = 0; d < 3; d++)
        if (room_wall_code(i[d], n[d]))
            s += v[d];
    return m == 0 ? 1 : m == 1 ? s : m == 2 ? (s - 0.5) / 2 : v[0] * v[1] * v[2];
}

double room_fcc_weight(const kt_room_grid *g, const room_walls *w, const int i[3],
                       const int j[3], int mirror)
{
    const int n[3] = {g->nx, g->ny, g->nz};
    double v[3];
    int m = fcc_walls(g, w, i, mirror, v);
    if (m == 0)
        return 0.25;
    if (m == 1) {
        for (int d = 0; d < 3; d++)
            if (room_wall_code(i[d], n[d]))
                return j[d] != i[d] ? 0.25 / v[d] : (1 - 0.25 / v[d]) / 2;
    }
    /* the leg keeps (stays in the plane of) one of the node's walls, or none */
    double kept = 0;
    for (int d = 0; d < 3; d++)
        if (room_wall_code(i[d], n[d]) && j[d] == i[d])
            kept = v[d];
    double V = room_fcc_volume(g, w, i, mirror);
    return kept > 0 ? (kept - 0.25) / (2 * V) : 0.25 / V;
}

/* 1 / (1 + lambda beta_i) of node i, as the sweep forms it (room_wall_weight
 * with FCC's layer weight 1: 1/v per wall). */
static double fcc_loss_inverse(const kt_room_params *p, const kt_room_grid *g,
                               const room_walls *w, const int i[3])
{
    const int n[3] = {g->nx, g->ny, g->nz};
    double a[3];
    for (int d = 0; d < 3; d++) {
        int end = room_wall_code(i[d], n[d]);
        a[d] = end ? 1 / w->v[d][end - 1] : 0;
    }
    double lam_beta = g->courant * p->wall_beta;
    double lb = lam_beta * (a[1] + a[2]);
    lb += lam_beta * a[0];
    return 1 / (1 + lb);
}

void room_fcc_cut_free(room_fcc_cut *cut)
{
    free(cut->node);
    free(cut->coef);
    memset(cut, 0, sizeof *cut);
}

int room_fcc_cut_build(const kt_room_params *p, const kt_room_grid *g, const room_walls *w,
                       room_fcc_cut *cut, kt_error *err)
{
    const int n[3] = {g->nx, g->ny, g->nz};
    const double l2 = g->courant * g->courant;
    size_t most = 2 * ((size_t)n[0] * n[1] + (size_t)n[1] * n[2] + (size_t)n[0] * n[2]);
    memset(cut, 0, sizeof *cut);
    cut->node = malloc(sizeof *cut->node * most);
    cut->coef = malloc(sizeof *cut->coef * most);
    if (!cut->node || !cut->coef) {
        room_fcc_cut_free(cut);
        return kt_fail(err, KT_ENOMEM, "out of memory for the FCC walls");
    }
    /* the lattice nodes of the far end layers of cut walls, each once */
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = (y + z) & 1; x < n[0]; x += 2) {
                const int i[3] = {x, y, z};
                int cut_here = 0;
                for (int d = 0; d < 3; d++)
                    cut_here |= i[d] == n[d] - 1 && w->v[d][1] != 0.5;
                if (!cut_here)
                    continue;
                double coef[12], li = fcc_loss_inverse(p, g, w, i);
                int any = 0;
                for (int q = 0; q < 12; q++) {
                    int j[3], in = 1;
                    for (int d = 0; d < 3; d++) {
                        j[d] = i[d] + room_fcc_legs[q][d];
                        in &= j[d] >= 0 && j[d] < n[d];
                    }
                    coef[q] = in ? l2 * li * (room_fcc_weight(g, w, i, j, 0) -
                                              room_fcc_weight(g, w, i, j, 1))
                                 : 0;
                    any |= coef[q] != 0;
                }
                if (!any)
                    continue;
                memcpy(cut->node[cut->count], i, sizeof *cut->node);
                memcpy(cut->coef[cut->count], coef, sizeof coef);
                cut->count++;
            }
    return KT_OK;
}

void room_fcc_dims(int nx, int ny, int nz, size_t dims[3])
{
    dims[0] = (size_t)(nx + 1) / 2 + 2;
    dims[1] = (size_t)ny + 2;
    dims[2] = (size_t)nz + 2;
}

void room_fcc_sweep(kt_room *room)
{
    if (room->plan.params.precision == KT_SINGLE)
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
    if (room_energy_sums(r, r->plan.params.precision == KT_SINGLE ? fcc_plane_energy_float
                                                             : fcc_plane_energy_double,
                         &kin, &pot) < 0)
        return NAN;
    double rho = r->plan.params.air_density_kg_per_m3, c = r->plan.params.sound_speed_m_per_s;
    double Q = r->plan.grid.spacing_m, k = r->plan.grid.time_step_s;
    return rho * Q * Q * Q / (c * c * k * k) * kin + rho * Q * pot;
}

/* The nearest lattice node to pos from the nearest cubic node: when that one
 * is off the lattice, the coordinate rounded furthest moves one node towards
 * pos (the other way at a wall). */
void room_fcc_snap(const kt_room *room, const double pos_m[3], int node[3])
{
    if (((node[0] + node[1] + node[2]) & 1) == 0)
        return;
    const int n[3] = {room->plan.grid.nx, room->plan.grid.ny, room->plan.grid.nz};
    int worst = 0;
    double gap[3];
    for (int d = 0; d < 3; d++) {
        gap[d] = pos_m[d] / room->plan.grid.spacing_m - node[d];
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
    const int n[3] = {room->plan.grid.nx, room->plan.grid.ny, room->plan.grid.nz};
    double sum = 0;
    for (int d = 0; d < 3; d++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            int at[3] = {x, y, z};
            at[d] = mirror_node(at[d] + sgn, n[d]);
            sum += room_get(room, f, room_fcc_index(room, at[0], at[1], at[2]));
        }
    return sum / 6;
}
