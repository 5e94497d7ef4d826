/* kettle.h - the public API of Kettle's room engine: a box of air simulated by
 * the 7-point FDTD scheme (thesis ch. 3, 5; seed paper 003), with lossy walls,
 * optional viscosity, soft sources, (moving) microphones, embedded
 * instruments, and audio output through libsndfile.
 *
 * Life cycle: kt_room_params_default -> edit -> kt_room_create -> add sources,
 * microphones and instruments -> kt_room_step (or kt_room_run) -> read or
 * write the microphone signals -> kt_room_destroy.
 *
 * Conventions (design note section 2): the field is a velocity potential Psi;
 * pressure p = rho * dPsi/dt.  Nodes sit at x = i*Q, i = 0..nx-1; the walls sit
 * at 0 (through node 0) and at the size asked for, part of a cell beyond node
 * n-1 (docs/room.md, "Walls where they were asked for").  Linear index =
 * (z*ny + y)*nx + x. */
#ifndef KETTLE_H
#define KETTLE_H

#include "kt_base.h"
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kt_precision { KT_DOUBLE = 0, KT_SINGLE = 1 } kt_precision;

/* Bytes of one air value (a field's element) in precision p. */
static inline size_t kt_precision_bytes(kt_precision p)
{
    return p == KT_SINGLE ? sizeof(float) : sizeof(double);
}

/* The air scheme (docs/room.md has one section per scheme).  Drums are
 * derived for the 7-point grid only. */
typedef enum kt_air_scheme {
    KT_SCHEME_SLF7 = 0,              /* 7-point standard leapfrog (thesis ch. 3), the default */
    KT_SCHEME_IWB27 = 1,             /* 27-point interpolated wideband, a = 1/4, b = 1/16,
                                        Courant number 1 (thesis 4.3.1) */
    KT_SCHEME_FCC13 = 2,             /* 13-point face-centred cubic, half the nodes of a cubic
                                        grid, Courant number 1 (thesis 4.3.2) */
    KT_SCHEME_STENCIL = 3            /* a stencil of seed 000's families (stencil_family) */
} kt_air_scheme;

/* The stencil families of seed 000 (section 2): compact-in-space (every
 * offset q with |q|^2 <= R), box-compact (|q_x|, |q_y|, |q_z| <= q, a cube of
 * (2q+1)^3 points) and leggy (6M + 1 points along the axes, the (2,2M)
 * weights).  The compact families take one weight per shell |q|^2 = s, each
 * shell an equal share of the Laplacian (docs/room.md). */
typedef enum kt_stencil_family {
    KT_STENCIL_COMPACT = 0,
    KT_STENCIL_BOX = 1,
    KT_STENCIL_LEGGY = 2
} kt_stencil_family;

/* What the six walls are (docs/room.md).  KT_WALL_LOSSY: locally reacting
 * walls of admittance wall_beta at the room's size (the default).
 * KT_WALL_ENGQUIST_MAJDA: the first-order Engquist-Majda (Mur) absorbing
 * condition on the end nodes, for anechoic work (7-point scheme, wall_beta
 * 0, no viscosity). */
typedef enum kt_wall_model {
    KT_WALL_LOSSY = 0,
    KT_WALL_ENGQUIST_MAJDA = 1
} kt_wall_model;

typedef struct kt_room_params {
    double size_m[3];                /* box dimensions x, y, z */
    double sample_rate_hz;
    double sound_speed_m_per_s;
    double air_density_kg_per_m3;
    kt_precision precision;
    double courant_backoff;          /* fraction the Courant number is lowered by;
                                        < 0 = default (0 double, 0.4 % single) */
    double wall_beta;                /* 0 rigid, 0.5 anechoic at normal incidence */
    double viscosity_m;              /* alpha_v of design note 2.3; 0 = off */
    int nthreads;                    /* <= 0: all cores */
    size_t memory_limit_bytes;       /* 0 = what the machine has available */
    kt_air_scheme scheme;            /* default KT_SCHEME_SLF7 */
    kt_stencil_family stencil_family; /* with KT_SCHEME_STENCIL */
    int stencil_reach;               /* R (compact), q (box) or M (leggy) */
    kt_wall_model wall_model;        /* default KT_WALL_LOSSY */
} kt_room_params;

/* The grid the parameters produced. */
typedef struct kt_room_grid {
    int nx, ny, nz;                  /* nodes per axis */
    double spacing_m;                /* Q (the thesis' X) */
    double time_step_s;              /* k = 1/sample rate */
    double courant;                  /* lambda = c k / Q */
    double viscosity_eta;            /* eta = c alpha_v k / Q^2 */
    double nodes;                    /* nodes updated per step: nx ny nz, half for FCC */
    size_t bytes;                    /* memory the room holds */
} kt_room_grid;

typedef struct kt_room kt_room;

/* What a scheme is: its name, stencil points, the ghost layers its walls
 * need, and its stability limit on the Courant number c k / Q. */
typedef struct kt_scheme_info {
    const char *name;
    int points;
    int halo_nodes;
    double max_courant;
} kt_scheme_info;
int kt_room_scheme_info(const kt_room_params *p, kt_scheme_info *info, kt_error *err);
/* Scheme names, as in the orchestra's `scheme =` and `kettle render --scheme`:
 * standard, iwb, fcc, and the families compact, box and leggy, which take a
 * whole reach 1..64 (R, q, M).  kt_room_scheme_reach_kind: 1 for a family
 * name, 0 for the others, -1 for an unknown name.  kt_room_scheme_set sets
 * scheme, stencil_family and stencil_reach (reach ignored for the others). */
int kt_room_scheme_reach_kind(const char *name);
int kt_room_scheme_set(kt_room_params *p, const char *name, int reach, kt_error *err);
/* The scheme's analytic dispersion relation: phase velocity / c of a plane
 * wave of wavenumber kappa (radians per node along x, y, z) at Courant number
 * `courant`; NAN for a bad scheme or a wave beyond the scheme's band. */
double kt_room_scheme_phase_velocity(const kt_room_params *p, double courant,
                                     const double kappa_rad[3]);

void kt_room_params_default(kt_room_params *p);
/* The smallest grid spacing the parameters' scheme allows at their rate: its
 * stability limit (with viscosity for the 7-point scheme, design note 2.1)
 * lowered by the Courant back-off; a room's spacing is its size along x
 * over the whole intervals this leaves.  NAN for a bad scheme. */
double kt_room_min_spacing(const kt_room_params *p);
/* Sets p->size_m (the rest of p as it is) so that the room has exactly
 * nodes[0] x nodes[1] x nodes[2] nodes: benchmarks' and tests' grids. */
void kt_room_params_fit(kt_room_params *p, const int nodes[3]);
/* Bytes a room with these parameters would need (fields only, no sources). */
int kt_room_estimate(const kt_room_params *p, kt_room_grid *grid, kt_error *err);
int kt_room_create(const kt_room_params *p, kt_room **out, kt_error *err);
void kt_room_destroy(kt_room *room);
const kt_room_grid *kt_room_get_grid(const kt_room *room);
const kt_room_params *kt_room_get_params(const kt_room *room);
int64_t kt_room_step_index(const kt_room *room);  /* n: steps taken so far */
/* Steps a room can count at all: times n k and sample counts stay exact. */
#define KT_MAX_STEPS 9007199254740992.0   /* 2^53 */

/* ---- sources (soft: added to Psi^{n+1} at the nearest node, thesis 3.2) ---- */
/* Raised-cosine pulse of peak `amplitude` (in units of Psi per step, m^2/s). */
int kt_room_add_impulse(kt_room *room, const double pos_m[3], double start_s,
                        double duration_s, double amplitude, kt_error *err);
/* Mono sound file (any libsndfile format) injected as dry audio, scaled by gain;
 * a file at another sample rate is refused with a message. */
int kt_room_add_file_source(kt_room *room, const char *path, const double pos_m[3],
                            double start_s, double gain, kt_error *err);
/* A sound file's length in seconds.  Only regular files are opened: a FIFO,
 * a device or a folder is refused at once (opening a FIFO would block). */
int kt_sound_file_seconds(const char *path, double *seconds, kt_error *err);

/* ---- microphones ---- */
/* Returns the microphone's index (>= 0) or a negative status. */
int kt_room_add_mic(kt_room *room, const char *name, const double pos_m[3], kt_error *err);
/* A moving microphone passes through waypoints at the given times (linear in
 * between, held before the first and after the last). */
int kt_room_mic_waypoint(kt_room *room, int mic, double time_s, const double pos_m[3],
                         kt_error *err);
int kt_room_mic_count(const kt_room *room);
const char *kt_room_mic_name(const kt_room *room, int mic);
/* Recorded pressure in pascals, one sample per step taken. */
const double *kt_room_mic_signal(const kt_room *room, int mic, int64_t *nsamples);

/* ---- time stepping ---- */
int kt_room_step(kt_room *room, kt_error *err);
/* Progress callback: return non-zero to stop early (kt_room_run then returns KT_EINTR). */
typedef int (*kt_progress_fn)(void *user, int64_t done, int64_t total);
int kt_room_run(kt_room *room, int64_t nsteps, kt_progress_fn progress, void *user,
                kt_error *err);
/* nsteps steps as kt_room_run takes them (in blocked passes where the room
 * allows), without its stability checks and progress: for a caller with
 * its own between steps (kettle render's guard).  On failure the room's
 * step index (kt_room_step_index) is the step that failed. */
int kt_room_advance(kt_room *room, int64_t nsteps, kt_error *err);

/* Cumulative wall-clock seconds per phase of kt_room_step, for benchmarks. */
typedef struct kt_room_timing {
    double bulk_s;        /* the fused sweep (thesis stages 1 and 5) */
    double boundary_s;    /* boundary-list corrections (stage 2) */
    double sources_s;     /* soft sources */
    double instruments_s; /* process() of every instrument (stages 3, 4, 6) */
    double output_s;      /* microphones (stage 7) */
    int64_t steps;
    /* Steps split over the threads (kt_room_set_overlap): their sweep, lists
     * and process() side by side, not in the four figures above. */
    double overlap_s;
    int64_t overlapped_steps;
    int64_t blocked_steps;  /* steps taken in temporally blocked passes (in the above) */
} kt_room_timing;
void kt_room_get_timing(const kt_room *room, kt_room_timing *t);
/* How a step's instruments share the room's threads; the samples are the
 * same bit for bit.  AIR (the default): a step whose room allows it sweeps
 * each instrument's box, corrects its list and runs its process() as one
 * work item beside the other instruments' and beside the sweep of the rest
 * of the room; where it does not (slab rooms, absorbing walls, other
 * schemes, the sweep's first timed steps, a source sounding inside a box),
 * as DRUMS: the sweep and the lists first, then the process() calls side by
 * side.  NONE: every stage in turn, each instrument with its own threads. */
typedef enum kt_overlap {
    KT_OVERLAP_NONE = 0,
    KT_OVERLAP_DRUMS = 1,
    KT_OVERLAP_AIR = 2
} kt_overlap;
void kt_room_set_overlap(kt_room *room, kt_overlap mode);
/* How the 7-point sweep goes through the room on this machine.  It times
 * its plans (row bands or whole planes, prefetching the next row or not;
 * every plan gives the same bits) over the room's first 12 steps and keeps
 * the fastest.  The plan's name ("planes", "bands", "planes+prefetch",
 * "bands+prefetch"), NULL while the room is still timing them, "-" for the
 * other schemes and absorbing walls, which have one plan.  A rank's slab of
 * a room split over MPI keeps the default plan untimed. */
const char *kt_room_sweep_plan(const kt_room *room);

/* Temporal blocking (docs/room.md): kt_room_run advances a room of air
 * (7-point scheme, rigid or lossy walls, no viscosity or solids, not split
 * over ranks; instruments' planes, if less than half its height, a step at
 * a time within the pass) `depth` steps per pass through memory,
 * with its sources and microphones, the same bits as one step at a time;
 * kt_room_step always takes one.  depth 0 (the default): the depth and
 * tile are timed over the run's first passes, one step at a time among
 * them; 1: off; 2 .. 8: that depth.  tile_rows 0: timed, else rows of y
 * per tile.  Asking for a depth of 2 or more where the room cannot be
 * blocked is KT_EINVAL with the reason. */
int kt_room_set_blocking(kt_room *room, int depth, int tile_rows, kt_error *err);
/* "depth D, tiles of T rows", "off" (asked, found slowest, or the room
 * cannot be blocked: kt_room_set_blocking says why), or NULL while timing. */
const char *kt_room_blocking(const kt_room *room);

/* Discrete energy (joules) at n-1/2 of the air, with every registered
 * boundary list's blocked legs removed; instruments add their own share through
 * kt_room_total_energy.  Exactly conserved for rigid walls without viscosity.
 * On a room split over ranks (kt_ranks.h) these three are collective: every
 * rank gets the whole room's figure, the same bits as one process's. */
double kt_room_air_energy(const kt_room *room);
double kt_room_total_energy(const kt_room *room);
/* Energy (joules) that has left the air through absorbing walls since the
 * room was created or its state loaded; 0 with other walls.  It falls when
 * the walls give energy back. */
double kt_room_wall_outflow(const kt_room *room);
/* What a render's guard watches: with absorbing walls, the energy of the air
 * inside them (the faces, edges and corners are the walls' layer) plus
 * kt_room_wall_outflow, which stays constant to rounding while nothing feeds
 * the air and nothing inside it grows; with other walls kt_room_air_energy. */
double kt_room_accounted_energy(const kt_room *room);

/* ---- output ---- */
/* The samples of a file are gain x pressure (Pa).  Float files hold them
 * unclipped (KT_FLOAT64 keeps the computed samples exactly); integer files
 * clip at full scale.  The tags are not bit counts: 32 is float. */
typedef enum kt_sample_format {
    KT_PCM16 = 16, KT_PCM24 = 24, KT_FLOAT32 = 32, KT_FLOAT64 = 64, KT_PCM32 = 33
} kt_sample_format;

typedef struct kt_output_options {
    kt_sample_format sample_format;  /* default 24-bit PCM */
    int normalize;                   /* 1: scale the loudest channel to peak_dbfs */
    double peak_dbfs;                /* with normalize (default -1) */
    double raw_gain;                 /* without: sample = gain * pascals (default
                                        1 / KT_FULL_SCALE_PA, docs/render.md "Levels") */
    double sample_rate_hz;           /* > 0: resample the microphones to this rate
                                        (libsamplerate); 0: the room's rate */
    int per_mic;                     /* 1: one file per microphone (path stem + _name) */
    int interleaved;                 /* 1: one file, one channel per microphone */
} kt_output_options;

typedef struct kt_channel_summary {
    double peak;                     /* largest |gain x pressure|, full scale = 1 (an
                                        integer file holds at most 1 of it) */
    double rms;                      /* root mean square of the samples written */
    double gain;                     /* the factor applied: sample = gain * pascals */
    int64_t clipped;                 /* samples at or beyond full scale: clipped in an
                                        integer file, kept in a float one */
} kt_channel_summary;

void kt_output_options_default(kt_output_options *o);
/* KT_OK when the files can be written at o's rate from a room at room_rate_hz
 * (a whole number of Hz in 1000..768000, within a factor 256), else KT_EINVAL
 * with the reason: a render checks this before its first step. */
int kt_output_rate_check(const kt_output_options *o, double room_rate_hz, kt_error *err);
/* Writes WAV, AIFF or FLAC (by extension) to a temporary file and renames it
 * over `path` only when complete.  summary (may be NULL) gets one entry per mic.
 * The file's comment names its channels: KT_AUDIO_NAMES_HEADER, then each
 * microphone's name on a line of its own. */
#define KT_AUDIO_NAMES_HEADER "kettle microphones:"
int kt_room_write_audio(const kt_room *room, const char *path, const kt_output_options *o,
                        kt_channel_summary *summary, kt_error *err);

/* Before a render (nothing is written): the format from the extension and
 * sample format, and that every file of the output (the interleaved one,
 * PATH_NAME.ext per microphone) can be written, with room on its disk for
 * `frames` samples a channel (kt_files.h).  KT_EINVAL for a bad name or
 * folder, KT_EIO for a disk that fails or is full. */
int kt_output_check(const char *path, const kt_output_options *o, const char *const *mic_names,
                    int mics, int64_t frames, kt_error *err);

/* ---- the room's shape: solids inside the box (docs/room.md, "Rooms of any shape") ---- */
/* A box (corners lo_m, hi_m), an upright cylinder (axis at centre_m, from
 * lo_m[2] to hi_m[2], radius_m) or the inside of a closed triangle mesh
 * (mesh_xyz: 9 coordinates in metres a triangle; the room copies them; an
 * edge must border exactly two triangles) of rigid or lossy material inside
 * the room,
 * or, with hole = 1, air carved back out of the solids before it: a node's
 * matter is that of the last solid or hole containing it (a node on a
 * surface is inside).  beta: the admittance of the solid's surface as the
 * walls' wall_beta (0 rigid); < 0: the room's wall_beta.  name: for messages. */
typedef enum kt_solid_kind {
    KT_SOLID_BOX = 0, KT_SOLID_CYLINDER = 1, KT_SOLID_MESH = 2
} kt_solid_kind;
typedef struct kt_room_solid {
    kt_solid_kind kind;
    int hole;
    double lo_m[3], hi_m[3];         /* box corners; a cylinder's z range in [2]; a
                                        mesh's bounds (set by the room) */
    double centre_m[2], radius_m;    /* cylinder */
    const double *mesh_xyz;          /* mesh */
    int mesh_triangles;
    double beta;
    char name[64];
} kt_room_solid;

/* Voxelises the solids onto the 7-point grid: every leg between an air node
 * and a solid node is blocked from both ends, the air nodes beside a solid
 * take its surface's loss, the nodes inside solids stay at zero.  Once per
 * room, before its first step and before any microphone, source or
 * instrument, which are then refused inside a solid or too close to one.
 * *culprit (may be NULL) gets the index of the solid an error is about, or
 * -1.  The 7-point scheme only; with absorbing walls, solids two nodes from
 * them.  A room split into slabs (kt_ranks.h) takes the same solids on every
 * rank, each rank listing its own planes.  The sweeps skip the solids' inside. */
int kt_room_add_solids(kt_room *room, const kt_room_solid *solids, int count, int *culprit,
                       kt_error *err);
/* 1 when node (x, y, z) is air (every node of a room without solids), 0 when
 * it lies inside a solid or outside the grid. */
int kt_room_is_air(const kt_room *room, int x, int y, int z);
/* The same for the whole row (y, z): air[x] for x = 0 .. nx-1, at the cost
 * of one line through a mesh rather than one per node (snapshots).
 * KT_EINVAL for a row outside the grid, KT_ENOMEM. */
int kt_room_air_row(const kt_room *room, int y, int z, uint8_t *air);
/* Air nodes next to a solid and solid nodes next to the air (0 without
 * solids); on a rank of a split room, those of its own planes. */
int64_t kt_room_shape_nodes(const kt_room *room);
/* Nodes in the air: every node of a room without solids. */
int64_t kt_room_air_nodes(const kt_room *room);
/* The air's volume on the grid (the cells of its nodes, cut by the walls)
 * and the area of the solids' surface it touches, each staircase face
 * weighed as its loss is (a cylinder's side by 1 / (|n_x| + |n_y|), so
 * that it adds up to the true area): what Sabine's and Eyring's formulas take. */
void kt_room_air_measure(const kt_room *room, double *volume_m3, double *solid_area_m2);

/* ---- embedded instruments (room/include/kt_instrument.h has the interface) ---- */
struct kt_instrument;
int kt_room_add_instrument(kt_room *room, struct kt_instrument *ins, kt_error *err);

#ifdef __cplusplus
}
#endif

#endif
