/* test_room_schemes_walls.c - lossy walls of the schemes other than the
 * 7-point one (issue #8; docs/room.md, "Lossy walls of the other schemes"):
 * with beta > 0 the discrete energy never increases, step after step, for
 * every scheme; and the reverberation time measured by Schroeder backward
 * integration falls as beta rises and lies within a factor 1.5 of Eyring's
 * estimate for the diffuse-field absorption of a wall of impedance 1/(2 beta)
 * (the same check as test_room_walls for the 7-point scheme), which would
 * fail if a scheme's wall loss were off by a factor of two.  Lossy rooms
 * give the same bits with 1 and 3 threads. */
#include "kettle.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

typedef struct scheme_case {
    const char *name;
    kt_air_scheme scheme;
    kt_stencil_family family;
    int reach;
} scheme_case;

static const scheme_case cases[] = {
    {"IWB", KT_SCHEME_IWB27, 0, 0},
    {"FCC", KT_SCHEME_FCC13, 0, 0},
    {"compact R=3 (27)", KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 3},
    {"compact R=5 (57)", KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 5},
    {"box q=2 (125)", KT_SCHEME_STENCIL, KT_STENCIL_BOX, 2},
    {"leggy M=3 (19)", KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 3},
    {"leggy M=8 (49)", KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 8},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static void set_scheme(kt_room_params *p, const scheme_case *sc)
{
    kt_room_params_default(p);
    p->scheme = sc->scheme;
    p->stencil_family = sc->family;
    p->stencil_reach = sc->reach;
    p->nthreads = 1; /* threading has its own test; small grids gain nothing */
}

static kt_room *make(const kt_room_params *p)
{
    kt_room *room = NULL;
    kt_error err;
    int rc = kt_room_create(p, &room, &err);
    KT_CHECK(rc == KT_OK, "create: %s", err.message);
    return rc == KT_OK ? room : NULL;
}

/* A 20 x 16 x 12-node box (more along an axis the stencil reaches further)
 * with walls of `beta`, a pulse and its negative near a corner (so the
 * edges and corners of the walls see sound early): the energy after each
 * step may not exceed the one before by more than rounding (1e-13 of the
 * largest), and must have fallen well below its start by the end. */
static void energy_falls(const scheme_case *sc, double beta, int steps, kt_precision prec)
{
    kt_room_params p;
    set_scheme(&p, sc);
    kt_scheme_info info;
    kt_room_scheme_info(&p, &info, NULL);
    double Q = p.sound_speed_m_per_s / p.sample_rate_hz / info.max_courant * (1 + 1e-9);
    p.size_m[0] = 19 * Q;
    p.size_m[1] = 15 * Q;
    p.size_m[2] = 11 * Q;
    p.wall_beta = beta;
    p.precision = prec;
    kt_room *room = make(&p);
    if (!room)
        return;
    kt_error err;
    const double src[3] = {2 * Q, 3 * Q, 1.4 * Q};
    kt_room_add_impulse(room, src, 0.0, 0.3e-3, 1e-3, &err);
    kt_room_add_impulse(room, src, 0.3e-3, 0.3e-3, -1e-3, &err);
    double last = 0, top = 0, worst_rise = 0, first = 0;
    int rises = 0;
    for (int s = 0; s < steps; s++) {
        KT_CHECK(kt_room_step(room, &err) == KT_OK, "step: %s", err.message);
        double e = kt_room_air_energy(room);
        if (s == 40)
            first = e;
        if (s > 40) {               /* the sources have stopped */
            double rise = (e - last) / top;
            worst_rise = fmax(worst_rise, rise);
            rises += rise > (prec == KT_SINGLE ? 1e-6 : 1e-13);
        }
        top = fmax(top, e);
        last = e;
    }
    KT_CHECK(rises == 0, "%s beta %g: the energy rose %d times (worst %.3g of its peak)",
             sc->name, beta, rises, worst_rise);
    KT_CHECK(last < 0.5 * first, "%s beta %g: energy %g J after %d steps from %g J", sc->name,
             beta, last, steps, first);
    printf("%s, beta %.2f, %s: energy %.4e -> %.4e J over %d steps, largest rise %.2e of "
           "the peak\n", sc->name, beta, prec == KT_SINGLE ? "single" : "double", first, last,
           steps - 40, worst_rise);
    kt_room_destroy(room);
}

static double diffuse_absorption(double beta)
{
    double z = 1.0 / (2.0 * beta);
    return 8.0 / z * (1.0 + 1.0 / (1.0 + z) - 2.0 / z * log(1.0 + z));
}

/* Two passes of a second-order Butterworth low-pass (bilinear transform)
 * at f0, in place. */
static void low_pass(double *x, int64_t n, double f0, double rate)
{
    double w = tan(KT_PI * f0 / rate), r2 = sqrt(2.0), d = 1 + r2 * w + w * w;
    double b0 = w * w / d, b1 = 2 * b0, a1 = 2 * (w * w - 1) / d, a2 = (1 - r2 * w + w * w) / d;
    for (int pass = 0; pass < 2; pass++) {
        double x1 = 0, x2 = 0, y1 = 0, y2 = 0;
        for (int64_t i = 0; i < n; i++) {
            double y = b0 * x[i] + b1 * x1 + b0 * x2 - a1 * y1 - a2 * y2;
            x2 = x1, x1 = x[i], y2 = y1, y1 = y;
            x[i] = y;
        }
    }
}

/* T60 below 1 kHz from the Schroeder curve of the summed energy of the
 * room's mics: regression of the decay between -5 and -25 dB.  The band
 * keeps out the wide stencils' content near the Nyquist frequency, whose
 * group velocity is nearly 0 (the IWB scheme's on the whole planes
 * kappa_d = pi): it hardly reaches the walls and decays very slowly. */
static double schroeder_t60(const kt_room *room, double rate)
{
    int64_t n;
    kt_room_mic_signal(room, 0, &n);
    double *e = malloc(sizeof *e * (size_t)n), acc = 0;
    double *band = malloc(sizeof *band * (size_t)n * kt_room_mic_count(room));
    for (int m = 0; m < kt_room_mic_count(room); m++) {
        memcpy(band + m * n, kt_room_mic_signal(room, m, NULL), sizeof *band * (size_t)n);
        low_pass(band + m * n, n, 1000, rate);
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        for (int m = 0; m < kt_room_mic_count(room); m++)
            acc += band[m * n + i] * band[m * n + i];
        e[i] = acc;
    }
    free(band);
    double t60 = kt_test_decay_t60(e, n, rate);
    free(e);
    return t60;
}

/* A 2.5 x 2.0 x 1.5 m room at 8 kHz; the box's effective lengths are the
 * distances between its walls (n Q, or (n - 1) Q for the FCC walls through
 * the end nodes). */
static double measure_t60(const scheme_case *sc, double beta, double *eyring)
{
    kt_room_params p;
    set_scheme(&p, sc);
    p.size_m[0] = 2.5;
    p.size_m[1] = 2.0;
    p.size_m[2] = 1.5;
    p.sample_rate_hz = 8000;
    p.wall_beta = beta;
    kt_room *room = make(&p);
    if (!room)
        return NAN;
    const kt_room_grid *g = kt_room_get_grid(room);
    int extra = sc->scheme == KT_SCHEME_FCC13 ? -1 : 0;
    double Q = g->spacing_m;
    double L[3] = {(g->nx + extra) * Q, (g->ny + extra) * Q, (g->nz + extra) * Q};
    double V = L[0] * L[1] * L[2], S = 2 * (L[0] * L[1] + L[1] * L[2] + L[0] * L[2]);
    double alpha = diffuse_absorption(beta);
    *eyring = 24 * log(10.0) * V / (p.sound_speed_m_per_s * S * -log(1 - alpha));
    const double src[3] = {0.27, 0.33, 0.18};
    const double mic[4][3] = {{1.67, 1.27, 0.97}, {0.71, 1.43, 0.52}, {2.03, 0.57, 1.21},
                              {1.13, 0.81, 0.33}};
    kt_error err;
    kt_room_add_impulse(room, src, 0, 1.5e-3, 1.0, &err);
    kt_room_add_impulse(room, src, 3e-3, 1.5e-3, -1.0, &err);
    for (int m = 0; m < 4; m++) {
        char name[8] = {'m', (char)('0' + m), 0};
        kt_room_add_mic(room, name, mic[m], &err);
    }
    int64_t steps = (int64_t)(0.8 * *eyring * p.sample_rate_hz) + 800;
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    double t60 = schroeder_t60(room, p.sample_rate_hz);
    printf("%s, beta %.3f: %d x %d x %d nodes, T60 measured %.4f s, Eyring %.4f s, ratio %.2f\n",
           sc->name, beta, g->nx, g->ny, g->nz, t60, *eyring, t60 / *eyring);
    kt_room_destroy(room);
    return t60;
}

static void reverberation(const scheme_case *sc)
{
    const double betas[3] = {0.01, 0.02, 0.05};
    double last = INFINITY;
    for (int i = 0; i < 3; i++) {
        double eyring, t60 = measure_t60(sc, betas[i], &eyring);
        KT_CHECK(t60 < last, "%s: T60 %g s at beta %g is not below %g s", sc->name, t60,
                 betas[i], last);
        KT_CHECK(t60 < 1.5 * eyring && t60 > eyring / 1.5, "%s beta %g: T60 %g s against "
                 "Eyring %g s", sc->name, betas[i], t60, eyring);
        last = t60;
    }
}

/* The same lossy room with 1 and 3 threads: microphone signals bit for bit. */
static void same_bits(const scheme_case *sc, kt_precision prec)
{
    const double *sig[2];
    kt_room *room[2];
    int64_t n = 0;
    for (int t = 0; t < 2; t++) {
        kt_room_params p;
        set_scheme(&p, sc);
        p.size_m[0] = 0.41;
        p.size_m[1] = 0.33;
        p.size_m[2] = 0.27;
        p.wall_beta = 0.07;
        p.precision = prec;
        p.nthreads = t ? 3 : 1;
        room[t] = make(&p);
        if (!room[t])
            return;
        kt_error err;
        const double src[3] = {0.05, 0.11, 0.2}, mic[3] = {0.003, 0.3, 0.13};
        kt_room_add_impulse(room[t], src, 0, 0.3e-3, 1e-3, &err);
        kt_room_add_mic(room[t], "m", mic, &err);
        KT_CHECK(kt_room_run(room[t], 300, NULL, NULL, &err) == KT_OK, "%s", err.message);
        sig[t] = kt_room_mic_signal(room[t], 0, &n);
    }
    KT_CHECK(memcmp(sig[0], sig[1], sizeof *sig[0] * (size_t)n) == 0 &&
                 kt_test_max_abs(sig[0], (int)n) > 0,
             "%s %s: 1 and 3 threads differ", sc->name, prec == KT_SINGLE ? "single" : "double");
    kt_room_destroy(room[0]);
    kt_room_destroy(room[1]);
}

int main(void)
{
    for (int c = 0; c < NCASES; c++)
        same_bits(&cases[c], KT_DOUBLE);
    same_bits(&cases[1], KT_SINGLE);
    for (int c = 0; c < NCASES; c++) {
        int steps = c < 2 ? 4000 : 1500;
        energy_falls(&cases[c], 0.05, steps, KT_DOUBLE);
        energy_falls(&cases[c], 0.5, steps / 4, KT_DOUBLE);
    }
    energy_falls(&cases[1], 0.05, 2000, KT_SINGLE);
    reverberation(&cases[0]);
    reverberation(&cases[1]);
    reverberation(&cases[2]);
    reverberation(&cases[5]);
    /* viscosity stays the 7-point scheme's */
    kt_room_params p;
    set_scheme(&p, &cases[1]);
    p.viscosity_m = 1e-5;
    kt_error err;
    KT_CHECK(kt_room_estimate(&p, NULL, &err) == KT_EINVAL, "viscosity with FCC accepted");
    return kt_test_finish("test_room_schemes_walls");
}
