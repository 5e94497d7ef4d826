/* kt_test.h - a very small test harness: checks count failures and report the
 * file and line; a test program returns kt_test_finish(). */
#ifndef KT_TEST_H
#define KT_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

extern int kt_test_failures;
extern int kt_test_checks;

#define KT_CHECK(cond, ...)                                                            \
    do {                                                                               \
        kt_test_checks++;                                                              \
        if (!(cond)) {                                                                 \
            kt_test_failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
        }                                                                              \
    } while (0)

/* |a - b| <= tol * max(|b|, floor) */
#define KT_CHECK_REL(a, b, tol, floor_)                                                \
    KT_CHECK(fabs((a) - (b)) <= (tol) * fmax(fabs(b), (floor_)),                       \
             "%s = %.17g, %s = %.17g, tolerance %g", #a, (double)(a), #b, (double)(b), \
             (double)(tol))

/* max_i |x_i|, and max_i |x_i - y_i| (0 for n = 0). */
double kt_test_max_abs(const double *x, int n);
double kt_test_max_diff(const double *x, const double *y, int n);
/* T60 in s from a Schroeder curve e[0..n) (energy still to come, sampled at
 * rate_hz): the least-squares line through its -5 to -25 dB part. */
double kt_test_decay_t60(const double *e, int64_t n, double rate_hz);
/* T60 of the Schroeder curve of all the room's microphones' energy summed
 * (a spatial average, which smooths single-position mode beating):
 * kt_test_decay_t60 on the backward-integrated energy. */
struct kt_room;
double kt_test_schroeder_t60(const struct kt_room *room, double rate_hz);
/* A render's stop callback (kt_render_options.stop, user = the struct):
 * true from the at-th call on. */
typedef struct kt_test_stopper {
    int64_t calls, at;
} kt_test_stopper;
int kt_test_stop_at(void *user);

/* Room parameters for a box of exactly nx x ny x nz nodes at 44.1 kHz, with
 * the single-precision Courant back-off (0.4 %), wall beta and viscosity. */
struct kt_room_params;
void kt_test_box(struct kt_room_params *p, int nx, int ny, int nz, int precision, double beta,
                 double viscosity_m);
/* A box of exactly nx x ny x nz nodes at rate_hz, one thread: the walls
 * through the end nodes along x and at the low ends of y and z (share
 * v = 1/2), half a cell beyond the high ends of y and z (v = 1). */
void kt_test_node_box(struct kt_room_params *p, int nx, int ny, int nz, double rate_hz);
/* Solids for kt_room_add_solids (metres; hole: carved back out, beta: the
 * surface's loss): a box from (x0, y0, z0) to (x1, y1, z1), an upright
 * cylinder of radius r about (x, y) from z0 to z1. */
struct kt_room_solid;
struct kt_room_solid kt_test_box_solid(double x0, double y0, double z0, double x1, double y1,
                                       double z1, double beta, int hole);
struct kt_room_solid kt_test_cylinder_solid(double x, double y, double z0, double z1, double r,
                                            double beta, int hole);

/* The pieces of the split tests (mpi_checkpoint, test_gpu_ranks), at sr_hz
 * with walls of beta 0.3, into orc (n bytes); their score is
 * KT_TEST_SPLIT_SCORE, a 23-inch drum struck twice.  Each has an impulse, a
 * microphone in a cell across the cut and one walking across it.
 * across_z: a room of 0.8 x 0.8 x 1.3 m cut along z over `ranks`: the
 * drum's layers are the last plane of rank 0 and the first of rank 1; shaped:
 * a post in a corner across the cut too, clear of the drum's box.  along: a
 * room 2 m long along x (axis 0) or y (1), 0.8 m the other ways, cut between
 * its layers n/2 - 1 and n/2 along that axis, the drum 0.5 m along it.
 * viscous: with viscosity. */
#define KT_TEST_SPLIT_SCORE "i 1 0 0.05 f 0.6 10\ni 1 0.06 0.05 mf 0.4 -30\n"
void kt_test_piece_across_z(char *orc, size_t n, int ranks, int shaped, int viscous, int sr_hz);
void kt_test_piece_along(char *orc, size_t n, int axis, int viscous, int sr_hz);

/* Parse an orchestra and a score given as text, render them on the CPU with
 * one thread, no tail and raw 32-bit float samples to a temporary WAV, and
 * return its first channel (malloc'd; *frames set), or NULL after recording
 * a failed check. */
float *kt_test_render_mono(const char *orc, const char *sco, int *frames);
/* The same for the passage [from_s, until_s) of the score (kettle render
 * --from/--until; until_s = 0: to the end). */
float *kt_test_render_excerpt(const char *orc, const char *sco, double from_s, double until_s,
                              int *frames);

/* Every interleaved sample of a sound file as doubles (malloc'd, *count of
 * them), or NULL when it cannot be read. */
double *kt_test_read_wav(const char *path, int64_t *count);

/* The output kt_test_render_all writes: 64-bit float, 1e-3 x pascals,
 * unnormalised (for renders compared with its samples). */
struct kt_render_options;
void kt_test_raw_output(struct kt_render_options *o);

/* Parse and render with these options (CPU/GPU, precision, format...) to a
 * temporary 64-bit float WAV of 1e-3 x pascals, unnormalised; return every
 * interleaved sample (malloc'd, *count of them) or NULL after a failed
 * check.  res is filled (free it with kt_render_result_free). */
struct kt_render_result;
double *kt_test_render_all(const char *orc, const char *sco, const struct kt_render_options *opt,
                           int64_t *count, struct kt_render_result *res);
/* max |a - b| / max |b|; 1 when the lengths differ or b is silent. */
double kt_test_relative_difference(const double *a, int64_t na, const double *b, int64_t nb);

/* Run a program: argv[0] is its path; env (NULL-terminated, may be NULL)
 * holds "NAME=value" to set and "NAME" to unset in its environment; it is
 * killed (SIGALRM) after timeout_s.  Its stdout and stderr go to out and err
 * (NUL-terminated, n bytes each; either may be NULL).  Returns the exit
 * status, 128 + the signal that ended it, or -1 when it could not run. */
int kt_test_run(char *const argv[], const char *const env[], int timeout_s, char *out, char *err,
                size_t n);

/* The shipped scores/ folder (beside tests/), in buf. */
void kt_test_scores_dir(char *buf, size_t n);
/* Load scores/a with scores/b (b NULL: a is a .csd) into perf (initialised
 * here); returns the loader's status, err says why. */
struct kt_performance;
struct kt_score_error;
int kt_test_load_piece(struct kt_performance *perf, const char *a, const char *b,
                       struct kt_score_error *err);

/* A whole file in memory (malloc'd; *n its bytes), or NULL. */
unsigned char *kt_test_slurp(const char *path, long *n);
/* Two WAV files of 64-bit float samples compared from their data chunks on
 * (a PEAK chunk before it holds the time of writing): the bytes that differ,
 * or -1 when either cannot be read or their layouts differ; *peak gets the
 * first file's largest |sample|. */
long kt_test_wav_differ(const char *a, const char *b, double *peak);

/* Remove the files in a scratch folder (not its subfolders), then the folder. */
void kt_test_remove_dir(const char *dir);

/* Print a summary line and return the exit status. */
int kt_test_finish(const char *name);

#endif
