/* bench_gpu.h - the GPU rows of `kettle bench spmv --gpu` and `kettle bench
 * room --gpu`, kept apart so the CPU benches stay readable.  Records carry
 * device "gpu" and threads 0.  Without CUDA (KETTLE_CUDA_ENABLED 0) only
 * bench_gpu_check exists: it says why --gpu cannot run. */
#ifndef BENCH_GPU_H
#define BENCH_GPU_H

#include "bench_bandwidth.h"
#include "bench_report.h"
#include "kettle.h"
#include "kt_config.h"
#include "kt_linalg.h"

/* Whether `bench` can take --gpu: KT_EXIT_OK (and the device's name printed),
 * else the message on stderr and KT_EXIT_USAGE when this build has no CUDA,
 * KT_EXIT_FAIL when it has but finds no device. */
int bench_gpu_check(const char *bench);

/* The reference case of `kettle bench timpani` (cmd_bench_timpani.c): a
 * 29-inch drum (format, solver, 10 iterations; format < 0: none) in the 1 m^3
 * box with beta 0.5, struck with 50 N at t = 0, two microphones above it.
 * Threads <= 0 take the library defaults.  *drum may be NULL. */
struct kt_timpani;
int bench_reference_drum(int format, int solver, int room_threads, int membrane_threads,
                         kt_room **room, struct kt_timpani **drum, kt_error *err);

#if KETTLE_CUDA_ENABLED
/* Measures the device copy bandwidth (copy kernel and cudaMemcpy device to
 * device over 2 x 1 GiB), prints and records both, and returns the higher in
 * GB/s (read + write counted), or a negative value on failure. */
double bench_gpu_copy_bandwidth(bench_report *r, int repeats);

/* One SpMV case on the GPU: CSR through cuSPARSE, DIA and ELL through
 * Kettle's kernels, and the matrix-free band operator (offsets, values);
 * checks each against `ref` = A x on the CPU (1e-10 relative), prints one
 * table row per implementation (the CPU table's columns, threads "gpu") and
 * records time_per_spmv, seconds_per_44100, gbps, ratio_to_csr (against
 * cuSPARSE CSR), fraction_of_copy and speedup_vs_cpu_best (against
 * `cpu_best_s`, the fastest CPU time of the case).  Returns 0, or -1 when a
 * result disagrees or the device fails. */
int bench_gpu_spmv_case(bench_report *r, const char *case_name, const kt_matrix *csr,
                        const kt_matrix *dia, const kt_matrix *ell, int nbands,
                        const int *offsets, const double *values, const double *x,
                        const double *ref, double cpu_best_s, int repeats, double copy_gbps);

/* One room case on the GPU: the bulk update of a room with parameters p for
 * `steps` steps, median of `repeats` runs, one step per pass and (where the
 * room allows it) temporally blocked at `depth` and `tile`
 * (kt_cuda_room_set_blocking; 0: timed); prints a row of the room table for
 * each and their ratio, and records mvox_per_s, min_traffic_gbps (12/24
 * bytes per update single/double: Psi^n read, Psi^{n-1} read, Psi^{n+1}
 * written; the third grid of the viscous scheme is written without being
 * read: so a blocked pass passes 100 % of the copy) and fraction_of_copy
 * (walls "lossy+blk" for the blocked rows) and blocking_speedup.  Returns 0
 * or -1. */
int bench_gpu_room_case(bench_report *r, const char *grid_name, const char *walls,
                        const kt_room_params *p, int steps, int repeats, double copy_gbps,
                        int depth, int tile);
/* Every depth and tile of the blocked pass fixed in turn on room p, against
 * one step at a time: a table of Gvox/s and ratios.  Returns 0 or -1. */
int bench_gpu_room_blocking(bench_report *r, const char *grid_name, const kt_room_params *p,
                            int steps, int repeats);

/* Seconds per step of a CPU room's whole step mirrored on the GPU
 * (kt_cuda_mirror_run, CUDA graphs, one step at a time: no temporal
 * blocking), median of `repeats` runs of about 0.25 s; the mirror is freed after (the CPU room then lags: destroy it).
 * `kettle bench room --shape` times shaped rooms and their boxes so. */
int bench_gpu_mirror_seconds(kt_room *room, int repeats, double *seconds, kt_error *err);

/* A CPU room with drums, made afresh for each run by `make`. */
typedef int (*bench_room_maker)(void *ctx, kt_room **room, kt_error *err);
/* The room with its drums mirrored on the GPU one step at a time, then
 * blocked at depth, tile (0: timed) with the drums' planes handed over a
 * step at a time: rows "drums" and "drums+blk" (Mvox/s of the air's nodes,
 * the drums' work included) and the speed-up.  Returns 0 or -1. */
int bench_gpu_drum_rows(bench_report *r, const char *grid_name, int single,
                        bench_room_maker make, void *ctx, int repeats, double copy_gbps,
                        int depth, int tile);

/* `kettle bench room --gpu --ranks N` (cli/bench_ranks.c), called by every
 * rank of a GPU job: the 7-point lossy room p, first on rank 0's GPU alone
 * (the whole grid), then split over the job's GPUs (NCCL halos overlapped
 * with the sweep, the mirror's step as a render takes it, in CUDA graphs);
 * the median of `repeats` runs of `steps` steps, the slowest rank's time.
 * Rank 0 prints the two rows (ms per step, Gvox/s, speed-up and the strong
 * scaling T1 / (N T_N)) and records gvox_per_s, ms_per_step and
 * scaling_efficiency; a job of one rank, the one-GPU row alone.  p_many:
 * the room the N GPUs run instead (weak scaling: N times p's points; the
 * efficiency is then T1 / T_N), or NULL for p.  One GPU steps one step a pass, as the split room does (no
 * temporal blocking).  split_axis: a kt_split_axis (auto: the smallest
 * halo).  Returns 0 or -1. */
int bench_gpu_ranks_case(bench_report *r, const char *grid_name, const kt_room_params *p,
                         const kt_room_params *p_many, int split_axis, int steps, int repeats);
/* The largest room (a cube with lossy walls, at sr) for 1 .. N GPUs of the
 * job in each precision, like thesis Table 5.7: the GPUs' free memory
 * measured now (the least free one binding) less reserve_bytes per GPU,
 * against the split plan's bytes per slab (kt_room_split_plan), and the
 * host's available memory against the ranks' host copies.  Rank 0 prints
 * the table and records largest_room_m3 and largest_room_points. */
int bench_gpu_largest(bench_report *r, double sr, double reserve_bytes);

/* One air scheme's bulk update on the GPU (`kettle bench stencils --gpu`):
 * mirror ghosts and sweep of a room with parameters p (rigid walls), by the
 * kernel `kernel` picks (a kt_cuda_kernel: 0 the hand-written one where the
 * scheme has one, 1 the generic stencil kernel), `steps` steps per timed
 * call, median of `repeats` runs.  Gives the CTPN in picoseconds per node update (FCC: per lattice
 * node), the nodes updated per step and the kernel's name; prints nothing.
 * Returns 0, or -1 with the message on stderr. */
int bench_gpu_stencil_ctpn(const kt_room_params *p, int kernel, int steps, int repeats,
                           double *ctpn_ps, double *nodes, const char **kernel_name);

/* The reference drum on the GPU (`kettle bench timpani --gpu`): per
 * implementation (the drum's format picks the device path: csr through
 * cuSPARSE, dia-ell through Kettle's kernels, stage by stage; matrix-free
 * as the fused kernel), the whole step (air, list, sources, drum, two
 * microphones) through kt_cuda_mirror_run for `steps` steps, median of
 * `repeats` fresh rooms, launched kernel by kernel and as CUDA graphs of 96
 * steps, with per-stage figures from CUDA events beside the launch row;
 * then the air alone.  Prints rows and records us_per_step,
 * seconds_per_audio_second, speedup_vs_cpu and us_<stage> (device "gpu").
 * Returns 0 or -1. */
typedef struct bench_gpu_drum {
    int format;                 /* kt_timpani_format */
    int solver;                 /* kt_timpani_solver */
    const char *solver_name;
    double cpu_us;              /* the CPU's whole step for this format in the same run, 0: none */
} bench_gpu_drum;
int bench_gpu_timpani_case(bench_report *r, const char *case_name, const bench_gpu_drum *drums,
                           int ndrums, int steps, int repeats);
#endif

#endif
