/* room_internal.h - the room's private state and the functions the
 * room/room*.c files share, and nothing else; the plan they and the GPU
 * read (grid, padded layout, coefficients, walls, lists) is room_plan.h.
 * Public linear indices (z*ny + y)*nx + x are converted at the API edge. */
#ifndef ROOM_INTERNAL_H
#define ROOM_INTERNAL_H

#include "room_block_choice.h"
#include "room_plan.h"

#include <stddef.h>
#include <stdint.h>

/* Builds the stencil of p->scheme (not the 7-point one); fills a message on error. */
int room_scheme_stencil(const kt_room_params *p, room_stencil *st, kt_error *err);
/* sum_p 2 w_p (1 - cos(kappa . d_p)): minus the stencil's symbol at the
 * wavenumber kappa (radians per node); never negative for these stencils. */
double room_stencil_symbol(const room_stencil *st, const double kappa[3]);
/* Largest symbol over the Brillouin zone; the scheme is stable for lambda^2 * it <= 4. */
double room_stencil_symbol_max(const room_stencil *st);
/* Refuses what the stencil schemes do not support (viscosity, lossy walls). */
int room_scheme_check(const kt_room_params *p, kt_error *err);
/* The plan's stencil, its sweep coefficients and wall profile; nothing for
 * the 7-point scheme. */
int room_scheme_setup(room_plan *plan, kt_error *err);
/* The compact, box-compact and leggy families (room_stencil_families.c). */
int room_family_stencil(const kt_room_params *p, room_stencil *st, kt_error *err);

/* The FCC end nodes the mirror misses (room_fcc.c), for the plan. */
int room_fcc_cut_build(const kt_room_params *p, const kt_room_grid *g, const room_walls *w,
                       room_fcc_cut *cut, kt_error *err);
void room_fcc_cut_free(room_fcc_cut *cut);

/* How the 7-point sweep goes through the room (bits; room_sweep_impl.h):
 * in row bands that stay in the L2 cache, each down a chunk's planes, or in
 * whole planes; asking for the next row's lines ahead or not.  Every sweep
 * plan gives the same bits. */
enum { ROOM_PLAN_BANDS = 1, ROOM_PLAN_PREFETCH = 2, ROOM_PLANS = 4 };
#define ROOM_TUNED (-1)
/* The most instruments whose step is split (room_overlap.c); a room with
 * more steps them one after the other. */
#define ROOM_OVERLAP_MAX 32

/* Temporal blocking (room_block.c): the timed choice of depth and tile
 * (room_block_choice.h) that kt_room_run uses. */
#define ROOM_BLOCK_MAX_DEPTH 8

/* One blocked pass (room_sweep_impl.h, block): `depth` steps from step n,
 * tiles of `tile` rows; field[0] is Psi^n, field[1] Psi^{n-1}; level l
 * sweeps planes z[0] + l shrink[0] .. z[1] - l shrink[1] - 1 (the whole
 * room, or a trapezoid beside the instruments' band); done[t]: the
 * last wavefront position tile t has finished.  With hooks, after each
 * level's rows of a plane the sources of that level are added there and the
 * microphones' corners read (mic_diff[(l-1) mics + m][c], corner c of the
 * cell mic_cell[(l-1) mics + m]). */
typedef struct room_block_pass {
    int depth, tile;
    int z[2], shrink[2];
    int64_t n;
    void *field[2];
    int *done;
    int hooks;
    int (*mic_cell)[3];
    double (*mic_frac)[3];
    double (*mic_diff)[8];
} room_block_pass;

struct kt_room {
    room_plan plan;              /* grid, layout, coefficients, walls, lists, sources, mics */
    int nthreads;
    void *field[3];              /* allocated buffers */
    void *now, *prev, *next;     /* Psi^n, Psi^{n-1}, where Psi^{n+1} goes (== prev in 2-grid) */
    int64_t n;
    int in_step;                 /* 1 while instruments' process() run */
    kt_room_timing timing;
    struct room_slab *slab;      /* NULL: the whole room lives here */
    struct room_abc *abc;        /* Engquist-Majda walls (room_abc.c); NULL for lossy walls */
    /* The 7-point sweep's plan (ROOM_PLAN_* bits, room_sweep.c), timed over
     * the first sweeps and then kept: tune_sweeps counts those timed so far,
     * ROOM_TUNED once the plan is fixed; tune_best_s: each plan's fastest. */
    int sweep_plan;
    int tune_sweeps;
    double tune_best_s[ROOM_PLANS];
    int overlap;                 /* kt_room_set_overlap's mode, from KT_OVERLAP_NONE */
    room_block_choice block;     /* temporal blocking of kt_room_run (room_block.c) */
};

/* kt_room_create for planes z0 .. z_end-1 of the grid (z_end < 0: all of them,
 * after the memory check; otherwise the caller checked memory). */
int room_create_planes(const kt_room_params *p, int z0, int z_end, kt_room **out,
                       kt_error *err);
/* The same for the box lo .. hi-1 (room_plan_build_box). */
int room_create_box(const kt_room_params *p, const int lo[3], const int hi[3], kt_room **out,
                    kt_error *err);

/* Offsets of the six neighbours in the padded layout, in enum kt_leg order
 * (+x, -x, +y, -y, +z, -z). */
void room_leg_offsets(const kt_room *room, ptrdiff_t off[6]);

/* Padded index of node (x, y, z). */
static inline size_t room_pidx(const kt_room *room, int x, int y, int z)
{
    const size_t h = (size_t)room->plan.halo;
    return ((size_t)(z - room->plan.z0) + h) * room->plan.plane +
           ((size_t)(y - room->plan.y0) + h) * room->plan.px + (size_t)(x - room->plan.x0) + h;
}

/* Whether node (x, y, z) is one of this process's own (every node of a
 * whole room; a rank of a split room owns its box). */
static inline int room_holds(const kt_room *room, int x, int y, int z)
{
    const room_plan *pl = &room->plan;
    return x >= pl->x0 && x < pl->x_end && y >= pl->y0 && y < pl->y_end && z >= pl->z0 &&
           z < pl->z_end;
}

/* Offset of node (0, y, z) from a field's start, which lies before the
 * field on a rank that does not hold column 0 (a room split along x): the
 * sweep indexes a row by global x from it. */
static inline ptrdiff_t room_row_base(const kt_room *room, int y, int z)
{
    return (ptrdiff_t)room_pidx(room, room->plan.x0, y, z) - room->plan.x0;
}

/* Padded index of FCC node (x, y, z), x + y + z even (room_fcc.c has the
 * layout; x from -1 to nx): row (y, z) holds x = 2m + parity at slot m. */
static inline size_t room_fcc_index(const kt_room *room, int x, int y, int z)
{
    size_t row = ((size_t)(z - room->plan.z0) + 1) * room->plan.py + (size_t)(y + 1);
    return row * room->plan.px + (size_t)((x + 2) / 2);
}

/* Padded index of a node of either layout (on the FCC one, a lattice node). */
static inline size_t room_node_index(const kt_room *room, int x, int y, int z)
{
    return room->plan.fcc ? room_fcc_index(room, x, y, z) : room_pidx(room, x, y, z);
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
    return w ? room->plan.walls.v[d][w - 1] : 1.0;
}

/* Field access whatever the precision. */
static inline double room_get(const kt_room *room, const void *f, size_t i)
{
    return room->plan.params.precision == KT_SINGLE ? (double)((const float *)f)[i]
                                               : ((const double *)f)[i];
}
static inline void room_add(const kt_room *room, void *f, size_t i, double v)
{
    if (room->plan.params.precision == KT_SINGLE)
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
/* The nodes lo .. hi-1 of the room's own (a rank's inside or its faces on
 * the cuts, room_slab.c). */
void room_sweep_region(kt_room *room, const int lo[3], const int hi[3]);
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

/* The solids (room_shape.c): checks that a position's cell, a moving
 * microphone's path or an instrument's box (and the nodes around it) is air;
 * Psi^{n-1} of the lossy nodes saved before a two-grid sweep; their stage B;
 * the blocked legs' share of the energy's sums; freeing the list. */
int room_shape_check_position(const kt_room *room, const double pos_m[3], const char *what,
                              kt_error *err);
int room_shape_check_path(const kt_room *room, const double a[3], const double b[3],
                          const char *what, kt_error *err);
int room_shape_check_box(const kt_room *room, const int lo[3], const int hi[3],
                         const char *what, kt_error *err);
void room_shape_save(kt_room *room);
void room_shape_correct(kt_room *room);
/* Where the sweep does both row by row (room_shape_save_entries as it
 * goes, room_shape_row_after after each row): a room without absorbing
 * walls (they update the outer layers after the sweep, and stage B must
 * follow them); on a slab too, the end planes' rows being swept once the
 * halo has come. */
static inline int room_shape_in_sweep(const kt_room *room)
{
    return room->plan.shape.count > 0 && !room->abc;
}
void room_shape_save_entries(kt_room *room, int ra, int rb);
void room_shape_row_after(kt_room *room, int y, int z);
void room_shape_free(room_plan *plan);
/* Closed triangle meshes (room_mesh.c): the watertight check (a message
 * naming an edge that does not border two triangles), the bounds, whether
 * a point is inside, and which nodes x0..x1 of the row at (y, z) are
 * (xs: scratch of mesh_triangles doubles).  A point on the surface, within
 * slack, is inside. */
int room_mesh_check(const kt_room_solid *s, const char *name, kt_error *err);
void room_mesh_bounds(kt_room_solid *s);
int room_mesh_contains(const kt_room_solid *s, const double p[3], double slack);
void room_mesh_row(const kt_room_solid *s, double y, double z, double Q, int x0, int x1,
                   double slack, uint8_t *inside, double *xs);

/* Stage B: every registered instrument's boundary-list correction, or
 * instrument k's rows in planes z0 .. z1-1 (room_step.c). */
void room_boundary_corrections(kt_room *room);
void room_correct_list_planes(kt_room *room, int k, int z0, int z1);
/* The split step (room_overlap.c): whether this step can be split; the
 * sweep, lists and process() of the split step side by side; process()
 * alone side by side (after the sweep and lists); the x spans
 * span[2s] .. span[2s+1]-1 of row (y, z) outside every near region (an
 * instrument's box over its process_z planes), their count. */
int room_overlap_ready(const kt_room *room);
int room_overlap_step(kt_room *room, kt_error *err);
int room_run_instruments(kt_room *room, kt_error *err);
int room_far_spans(const kt_room *r, int y, int z, int span[]);
/* The split step's sweeps, on the calling thread (room_sweep.c): planes
 * z0 .. z1-1 outside the instruments' near regions; instrument k's box
 * between planes z0 and z1-1 (its near region). */
void room_sweep_far(kt_room *room, int z0, int z1);
void room_sweep_box(kt_room *room, int k, int z0, int z1);
/* Temporal blocking (room_block.c): the pass over the planes (room_sweep.c);
 * the wait for and the mark of a tile's wavefront position; a level's rows
 * za..zb of plane z done: its sources added, its microphones' corners read;
 * kt_room_run's next steps, blocked where the room allows (the count taken,
 * at most `avail`, or a negative status). */
void room_sweep_block(kt_room *room, room_block_pass *bp);
void room_block_wait(const int *done, int k);
void room_block_post(int *done, int k);
void room_block_level_done(const kt_room *room, room_block_pass *bp, int level, int z, int ya,
                           int yb);
void room_block_init(kt_room *room);
/* One pass of `depth` steps (1 .. ROOM_BLOCK_MAX_DEPTH; a room obstacle()
 * allows, its instruments' band handed over to a step at a time) in
 * tiles of `tile` rows, its microphone samples recorded, the fields rotated
 * as `depth` steps would. */
int room_block_steps(kt_room *room, int depth, int tile, kt_error *err);
int room_block_advance(kt_room *room, int64_t avail, kt_error *err);
/* A microphone's sample from its cell's corner differences hi - lo, in
 * room_mic_difference's order of operations; the factor that makes it
 * pascals (room_mics.c). */
double room_mic_corner_sum(const double f[3], const double d[8]);
double room_mic_scale(const kt_room *room);
/* Stage C (room_sources.c). */
void room_apply_sources(kt_room *room);
/* Stage E (room_mics.c). */
int room_record_mics(kt_room *room, kt_error *err);
void room_free_sources(kt_room *room);
void room_free_mics(kt_room *room);
/* Nearest node to a position, or -1 with a message when outside the room. */
int room_nearest_node(const kt_room *room, const double pos_m[3], int node[3], kt_error *err);
/* Checks that a position lies inside the room (a message names `what`). */
int room_check_position(const kt_room *room, const double pos_m[3], const char *what,
                        kt_error *err);

/* The output's sample rate for a room and options (room_audio_levels.c):
 * the room's, or the one asked for when libsamplerate can reach it. */
int room_audio_rate(const kt_room *room, const kt_output_options *o, int *rate, kt_error *err);
/* Every microphone at `rate`, times the gain, clipped for integer formats,
 * interleaved into a new array of *frames x mic_count; sum[m] gets channel
 * m's peak, RMS and gain. */
int room_audio_samples(const kt_room *room, const kt_output_options *o, int rate,
                       double **interleaved, int64_t *frames, kt_channel_summary *sum,
                       kt_error *err);
/* Trilinear interpolation of hi - lo (two fields) at a position. */
double room_mic_difference(const kt_room *room, const void *hi, const void *lo,
                           const double pos[3]);

#endif
