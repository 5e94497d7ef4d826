/* room_plan.h - the room's plan: the plain data its set-up computes once and
 * both steppers read, the CPU's (room/room*.c) and the GPU's (room/gpu/), as
 * PFFDTD's SimData is for its engines.  The only private room header a .cu
 * file includes.  docs/gpu.md, "The plans". */
#ifndef ROOM_PLAN_H
#define ROOM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kettle.h"
#include "kt_instrument.h"

/* A symmetric stencil on the cubic lattice other than the 7-point one
 * (room_scheme.c): L Psi_i = sum_p w_p (Psi_{i+d_p} + Psi_{i-d_p} - 2 Psi_i),
 * one entry per pair of opposite legs +-d_p, weights in units of 1/Q^2. */
#define ROOM_STENCIL_MAX_PAIRS 256
#define ROOM_STENCIL_MAX_REACH 32
typedef struct room_stencil {
    int pairs;
    int d[ROOM_STENCIL_MAX_PAIRS][3];
    double w[ROOM_STENCIL_MAX_PAIRS];
    int reach;                   /* largest |component| of any d: the ghost layers needed */
} room_stencil;

/* Where the walls sit (room_plan.c; docs/room.md, "Walls"): along axis d,
 * the wall at 0 runs through node 0 and the one at the room's size lies
 * (v[d][1] - 1/2) Q beyond node n-1; v is the end node's share of a cell
 * (1 on both ends with absorbing walls).  A ghost beyond an end node stands
 * for end + theta (inward - end), theta = 1/v - 1.  loss[d][0] = 0 and
 * loss[d][1 + end] = beta / v: a node's loss is their sum. */
typedef struct room_walls {
    double v[3][2];
    double theta[3][2];
    double loss[3][3];
} room_walls;

/* The FCC end nodes the sweep's mirror ghosts do not get right (room_fcc.c):
 * each node's coordinates and, per leg of room_fcc_legs, what the mirror's
 * weight lacks, times lambda^2 and the node's loss factor. */
typedef struct room_fcc_cut {
    int count;
    int (*node)[3];
    double (*coef)[12];
} room_fcc_cut;

/* Absorbing walls (room_abc.c): a face's node (fast 0, slow 0) and its fast,
 * slow and inward steps as node vectors; an edge less its corners or one
 * corner: `count` nodes `along` apart, each updated from its neighbour
 * `diag` away with Mur's coefficient r.  Each stepper turns the vectors
 * into offsets of its own layout. */
typedef struct room_abc_face {
    int origin[3], fast[3], slow[3], inward[3];
    int n_fast, n_slow;
} room_abc_face;
typedef struct room_abc_line {
    int origin[3], along[3], diag[3];
    int count;
    double r;                    /* (lambda_d - 1)/(lambda_d + 1) */
} room_abc_line;
typedef struct room_abc_plan {
    room_abc_face face[6];       /* x = 0, x = nx-1, y = 0, y = ny-1, z = 0, z = nz-1 */
    room_abc_line line[20];      /* 12 edges, 8 corners */
    double r;                    /* the faces' (lambda - 1)/(lambda + 1) */
    double flux_scale;           /* rho Q / 2: the exchange's joules */
} room_abc_plan;

/* One registered instrument with the room's own copy of its boundary list. */
typedef struct room_instrument {
    kt_instrument *ins;
    size_t *node;                /* padded indices of its list nodes */
    uint8_t *blocked;            /* blocked-leg masks (complement of the open mask) */
    int count;
    size_t *leg;                 /* each blocked leg once: padded index of its lower end */
    uint8_t *leg_axis;           /* 0, 1, 2 = the leg points +x, +y, +z from that end */
    int leg_count;
} room_instrument;

/* A soft source: samples added to Psi^{n+1} at one node from step first_level on. */
typedef struct room_source {
    size_t node;                 /* padded index */
    int64_t first_level;         /* time level n+1 that gets samples[0] */
    double *samples;
    int64_t count;
} room_source;

typedef struct room_waypoint {
    double time_s;
    double pos_m[3];
} room_waypoint;

/* A microphone: where it is (fixed, or along waypoints) and what it heard. */
typedef struct room_mic {
    char name[64];
    double pos_m[3];
    room_waypoint *way;
    int way_count, way_capacity;
    double *signal;
    int64_t count, capacity;
} room_mic;

/* The room's shape (room_shape.c; docs/room.md, "Rooms of any shape"): the
 * solids as given and the boundary list their voxelisation gives, which
 * stage B corrects as an instrument's (blocked legs weighed as the sweep
 * weighs them, 1/v along an axis the node ends) and, on air nodes, with the
 * loss of the solid faces.  wall: 9 xw + 3 yw + zw, the box walls the node
 * lies on, or ROOM_SHAPE_SOLID for a solid node (held at 0).  loss: lambda
 * beta_i of its solid faces.  saved: Psi^{n-1} of the lossy nodes before a
 * two-grid sweep overwrites it.  Each blocked leg once, from its lower end,
 * with its cross-section leg_w (the energy's W_ij). */
#define ROOM_SHAPE_SOLID 255
typedef struct room_shape {
    kt_room_solid *solid;
    int solid_count;
    int count;
    size_t *node;
    uint8_t *blocked;
    uint8_t *wall;
    double *loss;
    double *saved;
    int lossy;
    size_t *leg;
    uint8_t *leg_axis;
    double *leg_w;
    int leg_count;
    double volume_cells, area_cells;   /* the air's volume, the solids' faces' area (corrected) */
    /* Where the air is, so that the sweeps skip the solids' inside (it stays
     * 0): per row (y, z) the x range [xspan[2r], xspan[2r+1]) that holds
     * its air nodes, r = z ny + y; per column (x, y) the planes [zspan[2c],
     * zspan[2c+1]), c = y nx + x; empty ranges are [0, 0). */
    int32_t *xspan, *zspan;
    int32_t *row_first;          /* [ny nz + 1]: the list's first entry of row (y, z) */
    int64_t air_nodes;
    /* Per wall code: the weights 1/v of a blocked leg along x, y, z (1 off
     * the walls) and lambda beta of the box walls, as stage B uses them. */
    double coef[27][4];
} room_shape;

/* The plan.  Fields are stored padded with `halo` ghost layers on every side
 * (thesis 5.1.2: the sweep needs no neighbour tests, the halo costs
 * O(surface)): a padded index is ((z-z0+h)*py + (y-y0+h))*px + (x-x0+h); FCC
 * rooms keep half-length rows (room_fcc.c).  The layout is the host's; the
 * GPU re-pitches the same rows (room/gpu/room_sweep.cu). */
typedef struct room_plan {
    kt_room_params params;       /* as given, the back-off resolved */
    kt_room_grid grid;
    int grids;                   /* 2, or 3 with viscosity */
    int halo;                    /* ghost layers on every side: 1, or the stencil's reach */
    int fcc;                     /* 1: the FCC layout of room_fcc.c (px = row stride) */
    int z0, z_end;               /* the planes held here (all but on a rank of a slab room) */
    int x0, x_end, y0, y_end;    /* the columns and rows held here (all but on a rank of a
                                  * room split along x or y) */
    size_t px, py, pz, plane;    /* padded dimensions; plane = px*py */
    size_t padded_points;
    /* Scheme coefficients (design note 2.2, 2.3). */
    double lambda, l2, eta;
    room_walls walls;
    double wall_pair[27][2];     /* (lm, li) of a node on walls coded 9 xw + 3 yw + zw */
    /* The stencil schemes (room_scheme.c): NULL for the 7-point one. */
    room_stencil *st;
    double st_centre;            /* 2 - lambda^2 sum_p 2 w_p */
    double st_l2w[ROOM_STENCIL_MAX_PAIRS];    /* lambda^2 w_p */
    ptrdiff_t st_off[ROOM_STENCIL_MAX_PAIRS]; /* padded offset of +d_p */
    /* Their lossy walls: node layer l from a wall (l < wall_layers) takes
     * wall_profile[l] beta per wall. */
    double wall_profile[ROOM_STENCIL_MAX_REACH];
    int wall_layers;
    room_fcc_cut fcc_cut;        /* FCC: the end nodes the mirror misses */
    int abc;                     /* 1: absorbing walls, abc_plan says where */
    room_abc_plan abc_plan;
    /* Set up after creation, before the steps: the instruments' boundary
     * lists, the sources and the microphones. */
    room_instrument *ins;
    int ins_count, ins_capacity;
    room_source *src;
    int src_count, src_capacity;
    room_mic *mic;
    int mic_count, mic_capacity;
    room_shape shape;            /* solids inside the box (none: count 0) */
} room_plan;

/* The plan of planes z0 .. z_end-1 of a room of these parameters (z_end < 0:
 * all of them, after the host memory check), lists, sources and microphones
 * empty.  room_plan_free frees what the builder made. */
int room_plan_build(const kt_room_params *p, int z0, int z_end, room_plan *plan,
                    kt_error *err);
/* The plan of the box lo .. hi-1 (hi[2] < 0: the whole room after the
 * memory check; hi[d] < 0 otherwise: all of axis d); 7-point scheme only
 * when cut along x or y. */
int room_plan_build_box(const kt_room_params *p, const int lo[3], const int hi[3],
                        room_plan *plan, kt_error *err);
void room_plan_free(room_plan *plan);

/* The loss pair (1 - lambda beta_i, 1 / (1 + lambda beta_i)) of a node on
 * the walls coded xw, yw, zw (0 none, 1 low end, 2 high end), beta_i the sum
 * of beta / v over its walls, in this order of operations. */
static inline void room_wall_pair(const room_walls *w, double lambda, int xw, int yw, int zw,
                                  double *lm, double *li)
{
    double lb = lambda * ((w->loss[0][xw] + w->loss[1][yw]) + w->loss[2][zw]);
    *lm = 1.0 - lb;
    *li = 1.0 / (1.0 + lb);
}

/* The solids' list as a bit index over a layout of `points` nodes (the
 * GPU's rows), two words per 32 nodes: word[2w] has bit j set when node
 * 32 w + j is on the list, word[2w + 1] is the entry of its lowest such
 * node, so a listed node i's entry is word[2w + 1] plus the bits below it
 * in word[2w], found without a search.  node[r]: entry r's node in that
 * layout, ascending (the list's order). */
int room_shape_bit_index(const long long *node, int count, size_t points, uint32_t *word,
                         kt_error *err);

/* The grid's node (x, y, z) at padded index i of a field laid out by the
 * plan (room_internal.h's room_pidx, inverted). */
static inline void room_plan_node_xyz(const room_plan *pl, size_t i, int xyz[3])
{
    const size_t h = (size_t)pl->halo, rem = i % pl->plane;
    xyz[0] = (int)(rem % pl->px - h) + pl->x0;
    xyz[1] = (int)(rem / pl->px - h) + pl->y0;
    xyz[2] = (int)(i / pl->plane - h) + pl->z0;
}

/* Elements of one field of the GPU room (room/gpu/room_sweep.cu): `lead`
 * elements that put node x = 0 on a 128-byte line, then pz planes of py
 * rows of px elements, each row padded to whole lines.  The GPU room's
 * layout, and what the host's estimates give a GPU's slab. */
static inline size_t room_device_points(size_t px, size_t py, size_t pz, size_t halo,
                                        size_t esize)
{
    const size_t line = 128 / esize;
    const size_t lead = (halo + line - 1) / line * line, pitch = (px + line - 1) / line * line;
    return lead + pitch * py * pz;
}

/* The IWB weights (room_scheme_iwb.c) and the FCC scheme's 12 legs in a
 * fixed order (room_fcc.c), which the GPU's kernels are written for. */
void room_iwb_stencil(room_stencil *st);
extern const int room_fcc_legs[12][3];

/* A microphone's position at time t (seconds), its trilinear cell (lower
 * corner i0, fractions f) and the weight of corner c (bit 0: +x, 1: +y,
 * 2: +z) of that cell (room_mics.c). */
void room_mic_position(const room_mic *m, double t, double pos[3]);
void room_mic_cell(const room_plan *plan, const double pos[3], int i0[3], double f[3]);
static inline double room_mic_weight(const double f[3], int c)
{
    int dx = c & 1, dy = (c >> 1) & 1, dz = c >> 2;
    return (dx ? f[0] : 1 - f[0]) * (dy ? f[1] : 1 - f[1]) * (dz ? f[2] : 1 - f[2]);
}
/* Room for `more` samples after the recorded ones (KT_ENOMEM with its name). */
int room_mic_reserve(room_mic *m, int64_t more, kt_error *err);

/* What a device mirror reads and writes of a CPU room besides its plan: the
 * fields Psi^n and Psi^{n-1}, the step index, the absorbing walls' running
 * exchange (joules; room_abc.c). */
room_plan *room_plan_of(kt_room *room);
void room_fields(kt_room *room, void **now, void **prev);
void room_set_step_index(kt_room *room, int64_t n);
void room_abc_exchange(const kt_room *room, double *inflow_J, double *known_J);
void room_abc_set_exchange(kt_room *room, double inflow_J, double known_J);

#ifdef __cplusplus
}
#endif

#endif
