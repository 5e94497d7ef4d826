/* room_gpu.h - what the room's .cu files share (room/gpu/): the device room
 * and the stages of its step. */
#ifndef ROOM_GPU_H
#define ROOM_GPU_H

#include "kt_cuda_kernel.h"
#include "kt_cuda_room.h"

#include "room_block_choice.h"
#include "room_plan.h"

#include <cuda_runtime.h>

/* Temporal blocking of the device room (room/gpu/room_block.cu): depths
 * 2 .. ROOM_GPU_MAX_DEPTH, each with one of ROOM_GPU_TILES extended tiles
 * (kt_cuda_room_set_blocking's tile is that index + 1, 0 timed). */
#define ROOM_GPU_MAX_DEPTH 4
#define ROOM_GPU_TILES 4

/* The room's fields on the device (room/gpu/room_sweep.cu); room/gpu/room_step.cu
 * runs the rest of the step on them. */
struct kt_cuda_room {
    room_plan plan;              /* grid, the host's padded layout, coefficients, walls */
    size_t esize;
    size_t lead;                 /* device: elements before node x = 0 of the first row
                                    (whole lines, at least the halo) */
    size_t pitch, plane, points; /* device: row and plane strides, elements per field */
    void *field[3];
    void *now, *prev, *next;
    /* The blocked pass's output pair (room_block.cu: a pass reads now and
     * prev and writes these, then the pairs trade places), or NULL. */
    void *alt[2];
    room_block_choice blocking;  /* temporal blocking's choice (room/gpu/room_block.cu) */
    int band[2];                 /* planes band[0] .. band[1] a pass hands over to the
                                    instruments (the mirror's); band[0] > band[1]: none */
    int block_no_memory;         /* the blocked pass's second pair of fields did not fit */
    int64_t n;
    int slabs;                   /* z slabs the grid is cut into (parallelism) */
    int kernel;                  /* KT_CUDA_KERNEL_*: which sweep runs a stencil */
    void *wall_pairs;            /* plan.wall_pair on the device, field precision, and the box
                                    sweep's wall-only coefficients (room_sweep.cu) */
    /* FCC: plan.fcc_cut on the device, coordinates (3 ints) and 12
     * coefficients each. */
    int *fcc_cut_node;
    double *fcc_cut_coef;
    struct cuda_abc *abc;        /* absorbing walls on the device layout (room_abc.cu), or NULL */
    double *abc_sums;            /* their energy sums */
    /* The boundary lists folded into the two-grid sweep (room/gpu/room_step.cu):
     * per device node, ROOM_LISTED | its blocked legs on a list node, else 0;
     * NULL when the lists run as their own kernels.  Owned by R. */
    unsigned char *listed;
    /* Per column (x, y) at y nx + x: 1 if a folded list has a node in it.  The
     * drums' shells lie in a few columns; the sweep's other threads never read
     * `listed` (the hall's four drums: the mask's reads took its sweep from
     * 980 to 1154 us a step, H100). */
    unsigned char *listed_column;
    /* A slab of a room split over GPU ranks (room/gpu/room_ranks.cu) holds
     * planes plan.z0 .. plan.z_end-1 (or columns x0 .. x_end-1, or rows y0
     * .. y_end-1) and a halo layer each side; bad_plane: a layer a device
     * instrument asked for beyond its reach (kt_cuda_room_node), or -1. */
    int bad_plane;
    /* The solids' boundary list (room/gpu/room_shape.cu), or NULL; and per
     * column (x, y) at y nx + x the planes [lo, hi) that hold air (empty: lo
     * >= hi), which each thread of the sweeps keeps to, or NULL. */
    struct cuda_shape *shape;
    int2 *zrange;
    /* The solids' list folded into the two-grid sweep (no viscosity, no
     * absorbing walls): the sweep corrects its list nodes where it computes
     * them, with Psi^{n-1} still in registers; shape_fold.word NULL: the
     * list runs as room_shape.cu's kernels. */
    struct shape_fold {
        const uint2 *word;       /* per 32 device nodes: the bits of those on the list,
                                    the entry of the lowest (room_shape_bit_index) */
        const unsigned char *column; /* per column (x, y) at y nx + x: 1 if the list has
                                        a node in it (the others never read word) */
        const unsigned char *blocked, *wall;
        const double *loss;      /* lambda beta of its solid faces */
        const double *coef;      /* room_shape.coef: [27][4] */
    } fold;
};
#define ROOM_LISTED 0x80u

/* Stage A of a stencil scheme (room/gpu/room_stencil.cu): the mirror ghosts of
 * `now`, then the sweep by R->kernel. */
void kt_cuda_room_stencil_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* The generic kernel's L1 preference (idempotent; once per room is plenty). */
void kt_cuda_stencil_prepare(void);
/* The hand-written 27-point IWB sweep (room/gpu/room_stencil_iwb.cu); 1 when
 * R's stencil is IWB's in the CPU's pair order (so the kernel can run it). */
int kt_cuda_iwb_matches(const kt_cuda_room *R);
void kt_cuda_iwb_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* The generic kernel compiled for a catalogue of offset lists
 * (room/gpu/room_stencil_ring.cu): 1 when R's list is in it, pair for pair;
 * the sweep launches and returns 1, or returns 0 having launched nothing. */
int kt_cuda_ring_matches(const kt_cuda_room *R);
int kt_cuda_ring_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* Absorbing walls (room/gpu/room_abc.cu): the plan's faces and lines on the
 * device layout and their energy sums (nothing for lossy walls), and the
 * boundary update after the sweep. */
int kt_cuda_abc_setup(kt_cuda_room *R, kt_error *err);
void kt_cuda_abc_apply_on(kt_cuda_room *R, cudaStream_t stream);
/* The FCC scheme's ghosts and sweep on its half-row layout (room/gpu/room_fcc.cu),
 * and the list of the end nodes its mirror misses (room/room_fcc.c's),
 * uploaded once. */
void kt_cuda_fcc_sweep_on(kt_cuda_room *R, cudaStream_t stream);
int kt_cuda_fcc_setup(kt_cuda_room *R, kt_error *err);

/* The solids of a CPU room's plan (room/room_shape.c) on the device layout,
 * uploaded once: before the sweep the lossy nodes' Psi^{n-1} is saved (two
 * grids), after it and the walls stage B corrects the list as
 * room_shape_correct does, in its order of operations. */
int kt_cuda_shape_setup(kt_cuda_room *R, const room_plan *cpu, kt_error *err);
void kt_cuda_shape_save_on(kt_cuda_room *R, cudaStream_t stream);
void kt_cuda_shape_correct_on(kt_cuda_room *R, cudaStream_t stream);
void kt_cuda_shape_free(kt_cuda_room *R);

/* Stage A on the current fields, on `stream` (no rotation, no step count). */
void kt_cuda_room_sweep_on(kt_cuda_room *R, cudaStream_t stream);
/* The 7-point scheme's planes za .. zb-1 of the slab alone (local indices;
 * room/gpu/room_ranks.cu overlaps the interior with the halo exchange). */
void kt_cuda_room_sweep_planes_on(kt_cuda_room *R, int za, int zb, cudaStream_t stream);
/* The same for the nodes lo .. hi-1 (local indices; lo[0] a multiple of
 * KT_CUDA_SWEEP_ALIGN, the nodes a thread of the two-grid sweep takes),
 * the walls' halo of a three-grid room filled first when `walls`. */
#define KT_CUDA_SWEEP_ALIGN 4
void kt_cuda_room_sweep_region_on(kt_cuda_room *R, const int lo[3], const int hi[3], int walls,
                                  cudaStream_t stream);
/* kt_cuda_room_create for planes z0 .. z_end-1 of the grid (a slab of a
 * room split over GPU ranks: the 7-point scheme, lossy or rigid walls). */
int kt_cuda_room_create_planes(const kt_room_params *p, int z0, int z_end, kt_cuda_room **out,
                               kt_error *err);
/* The same for the box lo .. hi-1 (a slab along x, y or z). */
int kt_cuda_room_create_box(const kt_room_params *p, const int lo[3], const int hi[3],
                            kt_cuda_room **out, kt_error *err);
/* Stage F: the field rotation of room/room_step.c (host pointers only). */
void kt_cuda_room_rotate(kt_cuda_room *R);

/* Device index of room node (x, y, z) (room_sweep.cu's layout;
 * kt_cuda_room_node for the layers above). */
static inline long long kt_cuda_room_index(const kt_cuda_room *R, int x, int y, int z)
{
    const long long zz = z - R->plan.z0 + R->plan.halo, yy = y - R->plan.y0 + R->plan.halo;
    return (long long)R->lead + (zz * (long long)R->plan.py + yy) * (long long)R->pitch + x -
           R->plan.x0;
}

/* n host Ts in a new device array (one element allocated when n is 0, so
 * that the pointer is set); KT_OK or the error. */
template <typename T>
static inline int room_gpu_upload(T **dev, const T *host, size_t n, kt_error *err)
{
    int rc = kt_cuda_alloc((n ? n : 1) * sizeof(T), (void **)dev, err);
    return rc < 0 || n == 0 ? rc : kt_cuda_upload(*dev, host, n * sizeof(T), err);
}

/* Marks the column (x, y) of CPU padded index `padded` in a per-column table
 * (at y nx + x, local to a slab's columns and rows): the sweep's tables of
 * columns that hold list nodes. */
static inline void kt_cuda_room_mark_column(const kt_cuda_room *R, unsigned char *column,
                                            size_t padded)
{
    const size_t x = padded % R->plan.px - R->plan.halo,
                 y = padded / R->plan.px % R->plan.py - R->plan.halo;
    column[y * (size_t)(R->plan.x_end - R->plan.x0) + x] = 1;
}

/* Device index of a CPU padded index ((z+h)*py + (y+h))*px + (x+h): the
 * device row of (z+h, y+h), element x (the row pitch and lead lines). */
static inline long long kt_cuda_room_device_index(const kt_cuda_room *R, size_t padded)
{
    const size_t xx = padded % R->plan.px, row = padded / R->plan.px;
    return (long long)(R->lead + row * R->pitch + xx) - R->plan.halo;
}

#endif
