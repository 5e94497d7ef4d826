/* test_room_modes.c - a rigid box rings at the modes of the box that was
 * asked for (issue #20): 1.0 x 0.8 x 0.6 m, whose sides are no whole number
 * of cells of any scheme's grid, so that the far walls of y and z cut their
 * last cells part-way (docs/room.md, "Walls").  For the 7-point, IWB 27-point
 * and FCC 13-point schemes, the lowest eight modes of an impulse response
 * must lie within 0.1 % of (c/2) |(l/Lx, m/Ly, n/Lz)| times the scheme's own
 * phase velocity at that wavenumber (kt_room_scheme_phase_velocity), with the
 * lengths asked for.  (Before, the 7-point and IWB walls sat half a cell
 * beyond both end nodes and the box rang as if a cell longer on each axis,
 * 1.4 to 3.5 % flat; FCC's far walls sat on the last nodes, up to a cell
 * short.)  Peaks: a Hann-windowed DFT around each predicted mode with
 * parabolic interpolation of the log magnitude. */
#include "kettle.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

#define RATE_HZ 11025.0
#define STEPS (1 << 14)
#define MODES 8

typedef struct mode {
    int l, m, n;
    double f_hz;
} mode;

static int compare_modes(const void *a, const void *b)
{
    double x = ((const mode *)a)->f_hz, y = ((const mode *)b)->f_hz;
    return (x > y) - (x < y);
}

/* The lowest MODES non-zero modes of a box of lengths L on the scheme's grid
 * (spacing Q, Courant number lambda): the continuum's frequencies times the
 * scheme's phase velocity (relative to c) at their wavenumbers. */
static void predicted_modes(const kt_room_params *p, double Q, double lambda, mode *out)
{
    mode all[512];
    int n = 0;
    const double *L = p->size_m;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            for (int d = 0; d < 8; d++) {
                if (a + b + d == 0)
                    continue;
                double s = pow(a / L[0], 2) + pow(b / L[1], 2) + pow(d / L[2], 2);
                const double kappa[3] = {KT_PI * a * Q / L[0], KT_PI * b * Q / L[1],
                                         KT_PI * d * Q / L[2]};
                double v = kt_room_scheme_phase_velocity(p, lambda, kappa);
                all[n++] = (mode){a, b, d, 0.5 * p->sound_speed_m_per_s * sqrt(s) * v};
            }
    qsort(all, (size_t)n, sizeof *all, compare_modes);
    memcpy(out, all, sizeof *out * MODES);
}

/* |DFT| of the windowed signal at frequency f (Hz). */
static double dft_magnitude(const double *w, int64_t n, double f)
{
    double re = 0, im = 0, step = 2 * KT_PI * f / RATE_HZ;
    double cs = cos(step), sn = sin(step), c = 1, s = 0;
    for (int64_t i = 0; i < n; i++) {
        re += w[i] * c;
        im -= w[i] * s;
        double c2 = c * cs - s * sn;
        s = s * cs + c * sn;
        c = c2;
    }
    return hypot(re, im);
}

/* The spectral peak nearest f0 within +-span (relative), refined by a parabola
 * through the log magnitudes of the best bin and its neighbours; NAN if the
 * largest value lies on the edge of the search range (no peak there). */
static double find_peak(const double *w, int64_t n, double f0, double span)
{
    double bin = RATE_HZ / (double)n / 4; /* 4x zero-padded bin spacing */
    int lo = (int)floor(f0 * (1 - span) / bin), hi = (int)ceil(f0 * (1 + span) / bin);
    int best = lo;
    double best_mag = -1;
    for (int b = lo; b <= hi; b++) {
        double m = dft_magnitude(w, n, b * bin);
        if (m > best_mag) {
            best_mag = m;
            best = b;
        }
    }
    if (best == lo || best == hi)
        return NAN;
    double a = log(dft_magnitude(w, n, (best - 1) * bin));
    double m = log(best_mag), c = log(dft_magnitude(w, n, (best + 1) * bin));
    double shift = 0.5 * (a - c) / (a - 2 * m + c);
    return (best + shift) * bin;
}

static void box_modes(kt_air_scheme scheme, const char *name)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 1.0;
    p.size_m[1] = 0.8;
    p.size_m[2] = 0.6;
    p.sample_rate_hz = RATE_HZ;
    p.scheme = scheme;
    p.nthreads = 1; /* threading has its own test; small grids gain nothing */
    kt_room *room;
    kt_error err;
    if (kt_room_create(&p, &room, &err) != KT_OK) {
        KT_CHECK(0, "%s: create: %s", name, err.message);
        return;
    }
    const kt_room_grid *g = kt_room_get_grid(room);
    printf("%s: %d x %d x %d nodes, Q = %.5f m (%.2f x %.2f x %.2f cells)\n", name, g->nx, g->ny,
           g->nz, g->spacing_m, p.size_m[0] / g->spacing_m, p.size_m[1] / g->spacing_m,
           p.size_m[2] / g->spacing_m);
    const double src[3] = {0.11, 0.13, 0.07}, mic[3] = {0.87, 0.61, 0.49};
    KT_CHECK(kt_room_add_impulse(room, src, 0, 2e-3, 1.0, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_impulse(room, src, 4e-3, 2e-3, -1.0, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_mic(room, "mic", mic, &err) == 0, "%s", err.message);
    KT_CHECK(kt_room_run(room, STEPS, NULL, NULL, &err) == KT_OK, "%s: run: %s", name,
             err.message);
    int64_t n;
    const double *sig = kt_room_mic_signal(room, 0, &n);
    double *w = malloc(sizeof *w * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        w[i] = sig[i] * 0.5 * (1 - cos(2 * KT_PI * (double)i / (double)(n - 1)));
    mode modes[MODES];
    predicted_modes(&p, g->spacing_m, g->courant, modes);
    for (int i = 0; i < MODES; i++) {
        double f = find_peak(w, n, modes[i].f_hz, 0.02);
        double rel = (f - modes[i].f_hz) / modes[i].f_hz;
        printf("  (%d,%d,%d): predicted %8.3f Hz, measured %8.3f Hz, %+.3f %%\n", modes[i].l,
               modes[i].m, modes[i].n, modes[i].f_hz, f, 100 * rel);
        KT_CHECK(isfinite(f) && fabs(rel) < 0.001, "%s: mode (%d,%d,%d) at %g Hz, predicted %g Hz",
                 name, modes[i].l, modes[i].m, modes[i].n, f, modes[i].f_hz);
    }
    free(w);
    kt_room_destroy(room);
}

int main(void)
{
    box_modes(KT_SCHEME_SLF7, "7-point");
    box_modes(KT_SCHEME_IWB27, "IWB 27-point");
    box_modes(KT_SCHEME_FCC13, "FCC 13-point");
    return kt_test_finish("test_room_modes");
}
