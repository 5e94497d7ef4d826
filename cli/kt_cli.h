/* kt_cli.h - the `kettle` program's subcommands.  Each lives in its own
 * cli/cmd_*.c file, takes argc/argv starting at its own name, prints its own
 * --help, and returns the process exit status (0 ok, 1 failure, 2 bad input).
 * Only the CLI exits; the library below returns errors. */
#ifndef KT_CLI_H
#define KT_CLI_H

#include "kt_exit.h"

#include <stddef.h>
#include <stdio.h>

int kt_cmd_version(int argc, char **argv);
int kt_cmd_render(int argc, char **argv);
int kt_cmd_resume(int argc, char **argv);
int kt_cmd_plot(int argc, char **argv);
int kt_cmd_tune(int argc, char **argv);
int kt_cmd_bench_spmv(int argc, char **argv);
int kt_cmd_bench_room(int argc, char **argv);
/* bench_ranks.c: `bench room --ranks N` or under mpirun. */
int kt_bench_wants_ranks(int argc, char **argv);
/* --gpus N (gpu_ranks.c): the N asked (0 none); this process's joining of
 * the GPU job its starter made (nothing when it is no GPU rank); starting N
 * ranks of this program with these arguments, returning the job's status. */
int kt_cli_gpus_asked(int argc, char **argv);
int kt_cli_gpu_rank_join(void);
int kt_cli_start_gpu_ranks(int argc, char **argv, int ranks);
int kt_bench_room_ranks(int argc, char **argv);
/* cmd_bench_shape.c: `bench room --shape FILE [--sr HZ]` (0: the orchestra's rate). */
struct bench_options;
int kt_bench_room_shape(const char *path, double sr_hz, const struct bench_options *o);
int kt_cmd_bench_timpani(int argc, char **argv);
int kt_cmd_bench_stencils(int argc, char **argv);
int kt_cmd_bench_load(int argc, char **argv);
int kt_cmd_bench_section(int argc, char **argv);

/* cli_safety.c: SIGINT/SIGTERM become a stop request (kt_render_options.stop);
 * the exit status after one is 128 + the signal (130, 143), 0 if none came. */
void kt_cli_catch_signals(void);
int kt_cli_stop_requested(void *user);
int kt_cli_signal_exit_status(void);
/* kt_render_options.warn: "kettle: warning: MESSAGE" on stderr. */
void kt_cli_warn(void *user, const char *message);
/* "90", "30s", "10m", "1h" -> seconds; -1 if malformed or not positive. */
int kt_cli_duration(const char *s, double *seconds);
/* "dir/take.wav" -> "dir/take.ckpt". */
void kt_cli_default_checkpoint(const char *output, char *buf, size_t size);

struct kt_score_error;
struct kt_render_result;
/* The exit status for a failed render: bad input or options (a statement, an
 * option, a checkpoint's field) KT_EXIT_USAGE, else KT_EXIT_FAIL. */
int kt_cli_exit_status(const struct kt_score_error *e);
/* After a failed or stopped render: say where the partial audio and the
 * checkpoint are; returns the exit status (128 + signal after a stop). */
int kt_cli_after_failure(const struct kt_score_error *err, const struct kt_render_result *res,
                         const char *checkpoint, int status);


/* cli_levels.c: each channel's peak, RMS and gain (stdout), and a warning
 * for each channel that clipped (stderr); the latter returns
 * KT_EXIT_CLIPPED when it warned and opt->clipping_fails, else KT_EXIT_OK. */
struct kt_performance;
struct kt_render_options;
void kt_cli_print_levels(const struct kt_performance *perf, const struct kt_render_result *r);
int kt_cli_clip_warnings(const struct kt_performance *perf, const struct kt_render_result *r,
                         const struct kt_render_options *opt);

#endif
