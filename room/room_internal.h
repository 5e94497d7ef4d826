/* room_internal.h - the room's private state, shared by the room/room*.c
 * files and by nothing else.
 *
 * Fields are stored padded with one zero node on every side (a halo of
 * zeros, thesis 5.1.2): the fused sweep then needs no neighbour tests, and
 * the halo costs O(surface), not O(volume).  A padded index is
 *   ((z+1)*py + (y+1))*px + (x+1),  px = nx+2, py = ny+2.
 * The wider stencil schemes use `halo` ghost layers instead of one (the +1s
 * become +halo) and fill them by mirroring before each sweep.
 * Public linear indices (z*ny + y)*nx + x are converted at the API edge. */
#ifndef ROOM_INTERNAL_H
#define ROOM_INTERNAL_H

#include "kettle.h"
#include "kt_instrument.h"

#include <stddef.h>
#include <stdint.h>

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

/* Builds the stencil of p->scheme (not the 7-point one); fills a message on error. */
int room_scheme_stencil(const kt_room_params *p, room_stencil *st, kt_error *err);
/* sum_p 2 w_p (1 - cos(kappa . d_p)): minus the stencil's symbol at the
 * wavenumber kappa (radians per node); never negative for these stencils. */
double room_stencil_symbol(const room_stencil *st, const double kappa[3]);
/* Largest symbol over the Brillouin zone; the scheme is stable for lambda^2 * it <= 4. */
double room_stencil_symbol_max(const room_stencil *st);
/* Refuses what the stencil schemes do not support (viscosity, lossy walls). */
int room_scheme_check(const kt_room_params *p, kt_error *err);
/* The room's stencil and sweep coefficients; nothing for the 7-point scheme. */
int room_scheme_setup(kt_room *r, kt_error *err);
/* The compact, box-compact and leggy families (room_stencil_families.c). */
int room_family_stencil(const kt_room_params *p, room_stencil *st, kt_error *err);
/* The IWB weights (room_scheme_iwb.c). */
void room_iwb_stencil(room_stencil *st);

typedef struct room_waypoint {
    double time_s;
    double pos_m[3];
} room_waypoint;

typedef struct room_mic {
    char name[64];
    double pos_m[3];
    room_waypoint *way;
    int way_count, way_capacity;
    double *signal;
    int64_t count, capacity;
} room_mic;

/* Where the walls sit (room.c; docs/room.md, "Walls"): along axis d, the
 * wall at 0 runs through node 0 and the one at the room's size lies
 * (v[d][1] - 1/2) Q beyond node n-1; v is the end node's share of a cell
 * along d (1/2 on a wall, 1 half a cell before it; 1 on both ends with
 * absorbing walls, whose end nodes are their own).  A ghost beyond an end
 * node stands for end + theta (inward - end), theta = 1/v - 1: the leg to the
 * inward neighbour then weighs 1/v, the finite volume of a cell cut by the
 * wall.  loss[d][0] = 0 and loss[d][1 + end] = beta / v: a node's loss is
 * their sum.  The GPU room computes the same from the same parameters. */
typedef struct room_walls {
    double v[3][2];
    double theta[3][2];
    double loss[3][3];
} room_walls;
/* The walls of a room of these parameters on this grid, for a scheme whose
 * stencil reaches `reach` nodes (1 for the 7-point and FCC ones). */
void room_walls_compute(const kt_room_params *p, const kt_room_grid *g, int reach,
                        room_walls *w);

/* The FCC end nodes the sweep's mirror ghosts do not get right, on walls
 * that do not run through them (room_fcc.c): each node's coordinates and,
 * per leg of room_fcc_legs, what the mirror's weight lacks, times lambda^2
 * and the node's loss factor. */
typedef struct room_fcc_cut {
    int count;
    int (*node)[3];
    double (*coef)[12];
} room_fcc_cut;
int room_fcc_cut_build(const kt_room_params *p, const kt_room_grid *g, const room_walls *w,
                       room_fcc_cut *cut, kt_error *err);
void room_fcc_cut_free(room_fcc_cut *cut);

/* How the 7-point sweep goes through the room (bits; room_sweep_impl.h):
 * in row bands that stay in the L2 cache, each down a chunk's planes, or in
 * whole planes; asking for the next row's lines ahead or not.  Every plan
 * gives the same bits. */
enum { ROOM_PLAN_BANDS = 1, ROOM_PLAN_PREFETCH = 2, ROOM_PLANS = 4 };
#define ROOM_TUNED (-1)

struct kt_room {
    kt_room_params params;
    kt_room_grid grid;
    int nthreads;
    size_t px, py, pz, plane;    /* padded dimensions; plane = px*py */
    size_t padded_points;
    int grids;                   /* 2, or 3 with viscosity */
    void *field[3];              /* allocated buffers */
    void *now, *prev, *next;     /* Psi^n, Psi^{n-1}, where Psi^{n+1} goes (== prev in 2-grid) */
    /* Scheme coefficients (design note 2.2, 2.3). */
    double lambda, l2, eta;
    int64_t n;
    int in_step;                 /* 1 while instruments' process() run */
    room_instrument *ins;
    int ins_count, ins_capacity;
    room_source *src;
    int src_count, src_capacity;
    room_mic *mic;
    int mic_count, mic_capacity;
    kt_room_timing timing;
    int halo;                    /* ghost layers on every side: 1, or the stencil's reach */
    int fcc;                     /* 1: the FCC layout of room_fcc.c (px = row stride) */
    room_walls walls;            /* where the walls sit (room.c) */
    /* Lossy walls of the stencil and FCC schemes (room_scheme.c): node layer l
     * from a wall (l < wall_layers) takes wall_profile[l] beta per wall. */
    double wall_profile[ROOM_STENCIL_MAX_REACH];
    int wall_layers;
    room_stencil *st;            /* NULL for the 7-point scheme */
    room_fcc_cut fcc_cut;        /* FCC: the end nodes the mirror misses */
    double st_centre;            /* 2 - lambda^2 sum_p 2 w_p */
    double st_l2w[ROOM_STENCIL_MAX_PAIRS];   /* lambda^2 w_p */
    ptrdiff_t st_off[ROOM_STENCIL_MAX_PAIRS]; /* padded offset of +d_p */
    /* Planes z0 .. z_end-1 are this process's (all of them but on a rank of
     * a slab room, room_slab.h); the fields hold them plus the halo. */
    int z0, z_end;
    struct room_slab *slab;      /* NULL: the whole room lives here */
    struct room_abc *abc;        /* Engquist-Majda walls (room_abc.c); NULL for lossy walls */
    /* The 7-point sweep's plan (ROOM_PLAN_* bits, room_sweep.c), timed over
     * the first sweeps and then kept: tune_sweeps counts those timed so far,
     * ROOM_TUNED once the plan is fixed; tune_best_s: each plan's fastest. */
    int sweep_plan;
    int tune_sweeps;
    double tune_best_s[ROOM_PLANS];
};

/* kt_room_create for planes z0 .. z_end-1 of the grid (z_end < 0: all of them,
 * after the memory check; otherwise the caller checked memory). */
int room_create_planes(const kt_room_params *p, int z0, int z_end, kt_room **out,
                       kt_error *err);

/* Offsets of the six neighbours in the padded layout, in enum kt_leg order
 * (+x, -x, +y, -y, +z, -z). */
void room_leg_offsets(const kt_room *room, ptrdiff_t off[6]);

/* Elements of one field of the GPU room (room/gpu/room_sweep.cu): `lead`
 * elements that put node x = 0 on a 128-byte line, then pz planes of py
 * rows of px elements, each row padded to whole lines.  Here so that
 * estimates on the host size a GPU's slab as the device does. */
static inline size_t room_device_points(size_t px, size_t py, size_t pz, size_t halo,
                                        size_t esize)
{
    const size_t line = 128 / esize;
    const size_t lead = (halo + line - 1) / line * line, pitch = (px + line - 1) / line * line;
    return lead + pitch * py * pz;
}

/* Padded index of node (x, y, z). */
static inline size_t room_pidx(const kt_room *room, int x, int y, int z)
{
    const size_t h = (size_t)room->halo;
    return ((size_t)(z - room->z0) + h) * room->plane + ((size_t)y + h) * room->px + (size_t)x + h;
}

/* Padded index of FCC node (x, y, z), x + y + z even (room_fcc.c has the
 * layout; x from -1 to nx): row (y, z) holds x = 2m + parity at slot m. */
static inline size_t room_fcc_index(const kt_room *room, int x, int y, int z)
{
    size_t row = ((size_t)(z - room->z0) + 1) * room->py + (size_t)(y + 1);
    return row * room->px + (size_t)((x + 2) / 2);
}

/* Padded index of a node of either layout (on the FCC one, a lattice node). */
static inline size_t room_node_index(const kt_room *room, int x, int y, int z)
{
    return room->fcc ? room_fcc_index(room, x, y, z) : room_pidx(room, x, y, z);
}

/* Which end of axis d node i lies on: 0 none, 1 the low end, 2 the high end. */
static inline int room_wall_code(int i, int n)
{
    return i == 0 ? 1 : i == n - 1 ? 2 : 0;
}

/* A node's share of a cell along axis d (wall_v at an end, else 1). */
static inline double room_wall_share(const kt_room *room, int d, int i, int n)
{
    int w = room_wall_code(i, n);
    return w ? room->walls.v[d][w - 1] : 1.0;
}

/* The loss pair (1 - lambda beta_i, 1 / (1 + lambda beta_i)) of a node on
 * the walls coded xw, yw, zw (room_wall_code), beta_i the sum of beta / v
 * over its walls, in this order of operations (the GPU's too). */
static inline void room_wall_pair(const room_walls *w, double lambda, int xw, int yw, int zw,
                                  double *lm, double *li)
{
    double lb = lambda * ((w->loss[0][xw] + w->loss[1][yw]) + w->loss[2][zw]);
    *lm = 1.0 - lb;
    *li = 1.0 / (1.0 + lb);
}

/* Field access whatever the precision. */
static inline double room_get(const kt_room *room, const void *f, size_t i)
{
    return room->params.precision == KT_SINGLE ? (double)((const float *)f)[i]
                                               : ((const double *)f)[i];
}
static inline void room_add(const kt_room *room, void *f, size_t i, double v)
{
    if (room->params.precision == KT_SINGLE)
        ((float *)f)[i] += (float)v;
    else
        ((double *)f)[i] += v;
}

/* Stage A and the energy for the stencil schemes (room_stencil.c): mirror
 * ghosts (room_walls), then one sweep. */
void room_stencil_sweep(kt_room *room);
double room_stencil_energy(const kt_room *room);
/* The two sums of a scheme's energy, plane by plane in parallel and then
 * added in plane order (any thread count, same bits): `plane` gives plane
 * z's kinetic and potential parts.  KT_ENOMEM when out of memory. */
typedef void (*room_plane_energy_fn)(const kt_room *r, int z, double *kin, double *pot);
int room_energy_sums(const kt_room *r, room_plane_energy_fn plane, double *kin, double *pot);

/* Lossy walls of the stencil schemes: the sum over the walls of axis d of
 * the layer weights of node i of n, each over the end's share wall_v (its
 * wall area per volume; room_scheme.c). */
double room_wall_weight(const kt_room *room, int d, int i, int n);

/* The FCC scheme (room_fcc.c): its stencil, the padded dimensions of its
 * layout (row stride, rows per plane, planes), stage A, the energy, the
 * lattice node nearest a cubic node, and a value at any cubic node (the
 * mean of the six axis neighbours off the lattice) for microphones/layers. */
void room_fcc_stencil(room_stencil *st);
/* The 12 legs in a fixed order; node i's volume (in lattice cells) and the
 * weight of its leg to j (1/4 inside), for the walls where they are
 * (mirror 0) or as the sweep's mirror ghosts make them (mirror 1); the loss
 * pair of node i, as the sweep forms it. */
extern const int room_fcc_legs[12][3];
double room_fcc_volume(const kt_room_grid *g, const room_walls *w, const int i[3], int mirror);
double room_fcc_weight(const kt_room_grid *g, const room_walls *w, const int i[3],
                       const int j[3], int mirror);
void room_fcc_dims(int nx, int ny, int nz, size_t dims[3]);
void room_fcc_sweep(kt_room *room);
double room_fcc_energy(const kt_room *room);
void room_fcc_snap(const kt_room *room, const double pos_m[3], int node[3]);
double room_fcc_value(const kt_room *room, const void *f, int x, int y, int z);

/* Sets the plan the room starts with and whether it is timed (room_sweep.c). */
void room_sweep_plan_init(kt_room *room);
/* The fused bulk update (stage A): the whole room, timing the plans over its
 * first sweeps (room_sweep.c). */
void room_sweep(kt_room *room);
/* The same update of planes za .. zb-1 only (7-point scheme; room_slab.c). */
void room_sweep_planes(kt_room *room, int za, int zb);
/* Absorbing walls (room_abc.c, docs/room.md).  The check refuses what they
 * do not support; setup and free manage their geometry and sums; apply
 * overwrites the boundary nodes of Psi^{n+1} right after the bulk sweep and
 * adds up the energy they exchanged with the inside. */
int room_abc_check(const kt_room_params *p, kt_error *err);
int room_abc_setup(kt_room *room, kt_error *err);
void room_abc_free(kt_room *room);
void room_abc_apply(kt_room *room);
/* The faces x = 0 and x = nx-1 within plane z, which the bulk sweep runs right
 * after sweeping that plane (the lines are in cache then); apply does the rest. */
void room_abc_plane(kt_room *room, int z);
/* After fields were loaded (a checkpoint): the exchange starts again from 0,
 * with the part of the next step's already known from Psi^n and Psi^{n-1}. */
void room_abc_sync(kt_room *room);
/* The exchange's two running sums (joules), read and set by the GPU mirror. */
void room_abc_exchange(const kt_room *room, double *inflow_J, double *known_J);
void room_abc_set_exchange(kt_room *room, double inflow_J, double known_J);

/* Stage B: every registered instrument's boundary-list correction (room_step.c). */
void room_boundary_corrections(kt_room *room);
/* Stage C (room_sources.c). */
void room_apply_sources(kt_room *room);
/* Stage E (room_mics.c). */
int room_record_mics(kt_room *room, kt_error *err);
void room_free_sources(kt_room *room);
/* Where microphone m is at time t (seconds): fixed, or along its waypoints. */
/* The output's sample rate for a room and options (room_audio_levels.c):
 * the room's, or the one asked for when libsamplerate can reach it. */
int room_audio_rate(const kt_room *room, const kt_output_options *o, int *rate, kt_error *err);
/* Every microphone at `rate`, times the gain, clipped for integer formats,
 * interleaved into a new array of *frames x mic_count; sum[m] gets channel
 * m's peak, RMS and gain. */
int room_audio_samples(const kt_room *room, const kt_output_options *o, int rate,
                       double **interleaved, int64_t *frames, kt_channel_summary *sum,
                       kt_error *err);
void room_mic_position(const room_mic *m, double t, double pos[3]);
void room_free_mics(kt_room *room);
/* Nearest node to a position, or -1 with a message when outside the room. */
int room_nearest_node(const kt_room *room, const double pos_m[3], int node[3], kt_error *err);
/* Checks that a position lies inside the room (a message names `what`). */
int room_check_position(const kt_room *room, const double pos_m[3], const char *what,
                        kt_error *err);

/* A microphone's trilinear cell: lower corner i0 and fractions f (room_mics.c). */
/* Mur's first-order absorbing update's coefficient at Courant number
 * `courant` along the wave's path (room_abc.c; room/gpu/room_abc.cu). */
static inline double room_mur1(double courant)
{
    return (courant - 1) / (courant + 1);
}

void room_mic_cell(const kt_room *room, const double pos[3], int i0[3], double f[3]);
/* The weight of corner c (bit 0: +x, 1: +y, 2: +z) of that cell. */
static inline double room_mic_weight(const double f[3], int c)
{
    int dx = c & 1, dy = (c >> 1) & 1, dz = c >> 2;
    return (dx ? f[0] : 1 - f[0]) * (dy ? f[1] : 1 - f[1]) * (dz ? f[2] : 1 - f[2]);
}
/* Trilinear interpolation of hi - lo (two fields) at a position. */
double room_mic_difference(const kt_room *room, const void *hi, const void *lo,
                           const double pos[3]);

#endif
