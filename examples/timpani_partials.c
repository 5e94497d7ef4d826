/* timpani_partials.c - the partial frequencies and decay times of one stroke
 * on a drum, for the parameter study of docs/timpani.md ("Partials and
 * decays against measured drums").
 *
 * A standard drum (or one with any parameter changed) stands in the middle of
 * a room (absorbing walls by default: the open air), is struck once, and its
 * head is followed for the given time.  Each step the displacement is
 * projected onto J_m(j_m1 r/R) cos(m (theta - theta_s)) and sin(...), m = 0..5
 * (theta_s the strike's angle): the coordinates of the (m,1) modes, every
 * other angular order removed.  For each mode the frequency is the
 * Hann-windowed spectral peak over the fit window, refined by complex
 * demodulation: the signal times exp(-i omega t), averaged over 0.1 s Hann
 * blocks every 0.05 s, gives the amplitude and phase of the partial through
 * the window; a straight line through the log amplitude (the cos and sin
 * components' power added, so the beat of a split pair does not bias it)
 * gives the decay rate sigma, T60 = 3 ln 10 / sigma, and one through the
 * phase the frequency offset (three rounds).
 *
 *   timpani_partials [--inches 29] [--room 3] [--room-xyz X Y Z] [--sr 22050]
 *                    [--walls absorbing|lossy|rigid] [--beta 0.5] [--seconds 1.6]
 *                    [--fit 0.1 1.6] [--force 5] [--contact 1e-3] [--at 0.22 0.07]
 *                    [--density KG_M2] [--tension N_M] [--thickness M] [--youngs PA]
 *                    [--poisson NU] [--depth M] [--loss S] [--damping SIGMA0]
 *                    [--intervals N] [--linear] [--uncoupled] [--threads N]
 *
 * Prints one line per mode: frequency, ratio to (1,1), T60 and the fit's rms
 * deviation of the log amplitude (dB). */
#include "kettle.h"
#include "timpani.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODES 6
#define PI 3.14159265358979323846

/* First zeros j_m1 of J_m, m = 0..5. */
static const double bessel_zero[MODES] = {2.404825557695773, 3.831705970207512,
                                          5.135622301840683, 6.380161895923983,
                                          7.588342434503804, 8.771483815959954};

static double bessel_j(int m, double x)
{
    double term = 1.0, sum;
    for (int k = 1; k <= m; k++)
        term *= x / (2.0 * k);
    sum = term;
    for (int k = 1; k < 60; k++) {
        term *= -(x * x / 4.0) / (k * (double)(k + m));
        sum += term;
    }
    return sum;
}

typedef struct options {
    int inches, threads, linear, uncoupled, intervals;
    double room[3], sr, beta, seconds, fit0, fit1, force, contact, at[2];
    double density, tension, thickness, youngs, poisson, depth, loss, damping;
    kt_wall_model walls;
} options;

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->inches = 29;
    o->room[0] = o->room[1] = o->room[2] = 3.0;
    o->sr = 22050;
    o->walls = KT_WALL_ENGQUIST_MAJDA;
    o->beta = 0.5;
    o->seconds = 1.6;
    o->fit0 = 0.1;
    o->fit1 = 1.6;
    o->force = 5;
    o->contact = 1e-3;
    o->at[0] = 0.22;
    o->at[1] = 0.07;
    o->density = o->tension = o->thickness = o->youngs = o->poisson = o->depth = o->loss = -1;
    o->threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int left = argc - i - 1;
#define ARG1(name, field)                                                                  \
    if (!strcmp(a, name) && left >= 1) {                                                   \
        field = atof(argv[++i]);                                                           \
        continue;                                                                          \
    }
        ARG1("--room", o->room[0] = o->room[1] = o->room[2])
        ARG1("--sr", o->sr)
        ARG1("--beta", o->beta)
        ARG1("--seconds", o->seconds)
        ARG1("--force", o->force)
        ARG1("--contact", o->contact)
        ARG1("--density", o->density)
        ARG1("--tension", o->tension)
        ARG1("--thickness", o->thickness)
        ARG1("--youngs", o->youngs)
        ARG1("--poisson", o->poisson)
        ARG1("--depth", o->depth)
        ARG1("--loss", o->loss)
        ARG1("--damping", o->damping)
#undef ARG1
        if (!strcmp(a, "--inches") && left >= 1) {
            o->inches = atoi(argv[++i]);
        } else if (!strcmp(a, "--intervals") && left >= 1) {
            o->intervals = atoi(argv[++i]);
        } else if (!strcmp(a, "--threads") && left >= 1) {
            o->threads = atoi(argv[++i]);
        } else if (!strcmp(a, "--room-xyz") && left >= 3) {
            for (int d = 0; d < 3; d++)
                o->room[d] = atof(argv[++i]);
        } else if (!strcmp(a, "--fit") && left >= 2) {
            o->fit0 = atof(argv[++i]);
            o->fit1 = atof(argv[++i]);
        } else if (!strcmp(a, "--at") && left >= 2) {
            o->at[0] = atof(argv[++i]);
            o->at[1] = atof(argv[++i]);
        } else if (!strcmp(a, "--walls") && left >= 1) {
            const char *w = argv[++i];
            if (!strcmp(w, "absorbing"))
                o->walls = KT_WALL_ENGQUIST_MAJDA;
            else if (!strcmp(w, "lossy"))
                o->walls = KT_WALL_LOSSY;
            else if (!strcmp(w, "rigid")) {
                o->walls = KT_WALL_LOSSY;
                o->beta = 0;
            } else {
                fprintf(stderr, "unknown walls '%s' (absorbing, lossy, rigid)\n", w);
                return -1;
            }
        } else if (!strcmp(a, "--linear")) {
            o->linear = 1;
        } else if (!strcmp(a, "--uncoupled")) {
            o->uncoupled = 1;
        } else {
            fprintf(stderr, "unknown or incomplete option '%s' (see the head of "
                            "examples/timpani_partials.c)\n", a);
            return -1;
        }
    }
    if (!(o->fit0 >= 0 && o->fit1 > o->fit0 + 0.2 && o->fit1 <= o->seconds + 1e-9)) {
        fprintf(stderr, "the fit window %g..%g s must lie in 0..%g s and span 0.2 s or more\n",
                o->fit0, o->fit1, o->seconds);
        return -1;
    }
    return 0;
}

/* Power of the Hann-windowed signal at frequency f. */
static double power_at(const double *xw, int n, double fs, double f)
{
    double complex acc = 0;
    double complex step = cexp(-2.0 * I * PI * f / fs), ph = 1;
    for (int i = 0; i < n; i++) {
        acc += xw[i] * ph;
        ph *= step;
        if ((i & 1023) == 1023)
            ph /= cabs(ph);
    }
    return creal(acc) * creal(acc) + cimag(acc) * cimag(acc);
}

/* Largest spectral peak of x[0..n-1] in [f0, f1]: a scan at a quarter of the
 * window's bin, refined by golden section. */
static double peak(const double *x, int n, double fs, double f0, double f1)
{
    double *xw = malloc(sizeof *xw * (size_t)n);
    for (int i = 0; i < n; i++)
        xw[i] = (0.5 - 0.5 * cos(2 * PI * i / (n - 1))) * x[i];
    double df = fs / n / 4, best = -1, bf = f0;
    for (double f = f0; f <= f1; f += df) {
        double p = power_at(xw, n, fs, f);
        if (p > best) {
            best = p;
            bf = f;
        }
    }
    double a = bf - df, b = bf + df, g = (sqrt(5.0) - 1) / 2;
    for (int it = 0; it < 40; it++) {
        double c = b - g * (b - a), d = a + g * (b - a);
        if (power_at(xw, n, fs, c) > power_at(xw, n, fs, d))
            b = d;
        else
            a = c;
    }
    free(xw);
    return (a + b) / 2;
}

typedef struct partial {
    double f_hz, t60_s, rms_db;
} partial;

/* Frequency and decay of the mode in c (cos) and s (sin) over samples
 * [i0, i1), starting from the spectral peak in [f0, f1]. */
static partial fit(const double *c, const double *s, int i0, int i1, double fs, double f0,
                   double f1)
{
    partial r = {peak(c + i0, i1 - i0, fs, f0, f1), NAN, NAN};
    int block = (int)(0.1 * fs), hop = block / 2, nb = (i1 - i0 - block) / hop + 1;
    double *t = malloc(sizeof *t * (size_t)nb), *la = malloc(sizeof *la * (size_t)nb);
    double *ph = malloc(sizeof *ph * (size_t)nb);
    for (int round = 0; round < 3; round++) {
        double w = 2 * PI * r.f_hz / fs;
        for (int b = 0; b < nb; b++) {
            int start = i0 + b * hop;
            double complex zc = 0, zs = 0;
            for (int j = 0; j < block; j++) {
                double hann = 0.5 - 0.5 * cos(2 * PI * (j + 0.5) / block);
                double complex e = cexp(-I * w * (start + j));
                zc += hann * c[start + j] * e;
                zs += hann * s[start + j] * e;
            }
            t[b] = (start + block / 2.0) / fs;
            la[b] = 0.5 * log(cabs(zc) * cabs(zc) + cabs(zs) * cabs(zs));
            ph[b] = carg(zc);
            if (b > 0) /* unwrap */
                while (fabs(ph[b] - ph[b - 1]) > PI)
                    ph[b] += ph[b] > ph[b - 1] ? -2 * PI : 2 * PI;
        }
        double st = 0, sa = 0, sp = 0, stt = 0, sta = 0, stp = 0;
        for (int b = 0; b < nb; b++) {
            st += t[b];
            sa += la[b];
            sp += ph[b];
            stt += t[b] * t[b];
            sta += t[b] * la[b];
            stp += t[b] * ph[b];
        }
        double den = nb * stt - st * st;
        double slope_a = (nb * sta - st * sa) / den, slope_p = (nb * stp - st * sp) / den;
        double icpt = (sa - slope_a * st) / nb, dev = 0;
        for (int b = 0; b < nb; b++)
            dev += pow(la[b] - icpt - slope_a * t[b], 2);
        r.t60_s = slope_a < 0 ? 3 * log(10.0) / -slope_a : INFINITY;
        r.rms_db = 20 / log(10.0) * sqrt(dev / nb);
        r.f_hz += slope_p / (2 * PI);
    }
    free(t);
    free(la);
    free(ph);
    return r;
}

int main(int argc, char **argv)
{
    options o;
    if (parse(argc, argv, &o) < 0)
        return 2;
    kt_error err = {0};
    kt_room_params rp;
    kt_room_params_default(&rp);
    for (int d = 0; d < 3; d++)
        rp.size_m[d] = o.room[d];
    rp.sample_rate_hz = o.sr;
    rp.wall_model = o.walls;
    rp.wall_beta = o.walls == KT_WALL_LOSSY ? o.beta : 0;
    rp.nthreads = o.threads;
    kt_timpani_params p;
    if (kt_timpani_params_standard(&p, o.inches, &err) < 0) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
#define SET(field, v) if ((v) >= 0) p.field = (v)
    SET(surface_density_kg_per_m2, o.density);
    SET(tension_N_per_m, o.tension);
    SET(thickness_m, o.thickness);
    SET(youngs_modulus_Pa, o.youngs);
    SET(poisson_ratio, o.poisson);
    SET(bowl_depth_m, o.depth);
    SET(loss_s, o.loss);
#undef SET
    p.membrane_intervals = o.intervals;
    p.nonlinear = !o.linear;
    p.coupled = !o.uncoupled;
    /* centred across the room, the bowl in the middle of its height */
    p.rim_centre_m[0] = o.room[0] / 2;
    p.rim_centre_m[1] = o.room[1] / 2;
    p.rim_centre_m[2] = (o.room[2] + p.bowl_depth_m) / 2;
    kt_room *room = NULL;
    kt_timpani *t = NULL;
    if (kt_room_create(&rp, &room, &err) < 0 || createTimpani(room, &p, &t, &err) < 0 ||
        kt_timpani_strike(t, 0.0, o.force, o.contact, o.at[0], o.at[1], &err) < 0 ||
        kt_timpani_set_damping(t, o.damping, &err) < 0) {
        fprintf(stderr, "%s\n", err.message);
        kt_room_destroy(room);
        return 1;
    }
    kt_timpani_info info;
    kt_timpani_get_info(t, &info);
    const kt_room_grid *g = kt_room_get_grid(room);
    int n = info.membrane_n, steps = (int)(o.seconds * o.sr + 0.5);
    double h = info.membrane_spacing_m, R = p.diameter_m / 2, ths = atan2(o.at[1], o.at[0]);
    printf("# %d-inch drum, rho_M %.4g kg/m^2, T %.5g N/m, H %.3g mm, E %.3g GPa, depth %.3g m, "
           "alpha %.3g s, sigma0 %.3g /s, %s, %s\n", o.inches, p.surface_density_kg_per_m2,
           p.tension_N_per_m, 1e3 * p.thickness_m, 1e-9 * p.youngs_modulus_Pa, p.bowl_depth_m,
           p.loss_s, o.damping,
           p.nonlinear ? "nonlinear" : "linear", p.coupled ? "coupled" : "uncoupled");
    printf("# room %.3g x %.3g x %.3g m, %s walls%s, %g Hz, air %d x %d x %d, head %d^2; "
           "stroke %g N for %g ms at (%.3g, %.3g) m; fit %.2f-%.2f s\n", o.room[0], o.room[1],
           o.room[2], o.walls == KT_WALL_ENGQUIST_MAJDA ? "absorbing" : rp.wall_beta > 0 ? "lossy"
                                                                                         : "rigid",
           o.walls == KT_WALL_LOSSY && rp.wall_beta > 0 ? " (beta given)" : "", o.sr, g->nx,
           g->ny, g->nz, n, o.force, 1e3 * o.contact, o.at[0], o.at[1], o.fit0, o.fit1);
    /* the projections' shapes, cos and sin per angular order */
    double *shape = calloc((size_t)2 * MODES * n * n, sizeof *shape);
    double *q = calloc((size_t)2 * MODES * steps, sizeof *q);
    if (!shape || !q) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int l = 0; l < n; l++)
        for (int m = 0; m < n; m++) {
            double x = l * h - R, y = m * h - R, r = sqrt(x * x + y * y), th = atan2(y, x) - ths;
            if (r >= R)
                continue;
            for (int a = 0; a < MODES; a++) {
                double j = bessel_j(a, bessel_zero[a] * r / R);
                shape[((size_t)2 * a * n + l) * n + m] = j * cos(a * th);
                shape[((size_t)(2 * a + 1) * n + l) * n + m] = j * sin(a * th);
            }
        }
    double t0 = kt_seconds();
    for (int s = 0; s < steps; s++) {
        if (kt_room_step(room, &err) < 0) {
            fprintf(stderr, "step %d: %s\n", s, err.message);
            return 1;
        }
        const double *u = kt_timpani_displacement(t);
        for (int c = 0; c < 2 * MODES; c++) {
            const double *sh = shape + (size_t)c * n * n;
            double acc = 0;
            for (int j = 0; j < n * n; j++)
                acc += sh[j] * u[j];
            q[(size_t)c * steps + s] = acc;
        }
        if ((s + 1) % 2205 == 0)
            fprintf(stderr, "\r%5.1f %% (%.0f s)", 100.0 * (s + 1) / steps, kt_seconds() - t0);
    }
    fprintf(stderr, "\n");
    int i0 = (int)(o.fit0 * o.sr), i1 = (int)(o.fit1 * o.sr);
    if (i1 > steps)
        i1 = steps;
    /* (1,1) first, then each (m,1) near its expected ratio */
    static const double guess[MODES] = {1.15, 1.0, 1.5, 2.0, 2.45, 2.9};
    const char *name[MODES] = {"(0,1)", "(1,1)", "(2,1)", "(3,1)", "(4,1)", "(5,1)"};
    partial pr[MODES];
    pr[1] = fit(q + 2 * steps, q + 3 * steps, i0, i1, o.sr, 40, 250);
    printf("mode    f (Hz)    ratio    T60 (s)   fit rms (dB)\n");
    for (int a = 0; a < MODES; a++) {
        if (a != 1) {
            double f = pr[1].f_hz * guess[a], lo = f * (a == 0 ? 0.7 : 0.88);
            double hi = f * (a == 0 ? 1.6 : 1.12);
            pr[a] = fit(q + (size_t)2 * a * steps, q + (size_t)(2 * a + 1) * steps, i0, i1,
                        o.sr, lo, hi);
        }
    }
    for (int a = 1; a < MODES; a++)
        printf("%-6s %9.3f %8.4f %9.3f %9.2f\n", name[a], pr[a].f_hz, pr[a].f_hz / pr[1].f_hz,
               pr[a].t60_s, pr[a].rms_db);
    printf("%-6s %9.3f %8.4f %9.3f %9.2f   (broad: radiation-damped)\n", name[0], pr[0].f_hz,
           pr[0].f_hz / pr[1].f_hz, pr[0].t60_s, pr[0].rms_db);
    printf("# %.1f s wall-clock for %d steps\n", kt_seconds() - t0, steps);
    free(shape);
    free(q);
    kt_room_destroy(room);
    return 0;
}
