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

/* Room parameters for a box of exactly nx x ny x nz nodes at 44.1 kHz, with
 * the single-precision Courant back-off (0.4 %), wall beta and viscosity. */
struct kt_room_params;
void kt_test_box(struct kt_room_params *p, int nx, int ny, int nz, int precision, double beta,
                 double viscosity_m);

/* Parse an orchestra and a score given as text, render them on the CPU with
 * one thread, no tail and raw 32-bit float samples to a temporary WAV, and
 * return its first channel (malloc'd; *frames set), or NULL after recording
 * a failed check. */
float *kt_test_render_mono(const char *orc, const char *sco, int *frames);
/* The same, scaled so that the loudest sample is at -1 dBFS (nothing clips
 * however loud the render: for spectra and ratios). */
float *kt_test_render_mono_normalized(const char *orc, const char *sco, int *frames);

/* Remove the files in a scratch folder (not its subfolders), then the folder. */
void kt_test_remove_dir(const char *dir);

/* Print a summary line and return the exit status. */
int kt_test_finish(const char *name);

#endif
