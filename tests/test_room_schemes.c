/* test_room_schemes.c - the air schemes of issue #8 against their physics:
 * rigid-wall energy conserved to rounding; the phase velocity measured on
 * standing modes along an axis and a body diagonal equal to the scheme's
 * analytic dispersion relation (which also checks that the mirror walls keep
 * the box's modes exact); and a raised-cosine plane wave that keeps its shape
 * over 5 m far better with the wideband and FCC schemes than with the
 * 7-point one.  (A box's modes against the size asked for: test_room_modes.) */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

/* A scheme under test: the scheme, and the family and reach of a stencil. */
typedef struct scheme_case {
    const char *name;
    kt_air_scheme scheme;
    kt_stencil_family family;
    int reach;
} scheme_case;

static const scheme_case slf7 = {"7-point", KT_SCHEME_SLF7, 0, 0};
static const scheme_case iwb = {"IWB", KT_SCHEME_IWB27, 0, 0};
static const scheme_case fcc = {"FCC", KT_SCHEME_FCC13, 0, 0};
static const scheme_case families[] = {
    {"compact R=3 (27)", KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 3},
    {"compact R=5 (57)", KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 5},
    {"box q=2 (125)", KT_SCHEME_STENCIL, KT_STENCIL_BOX, 2},
    {"leggy M=3 (19)", KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 3},
    {"leggy M=8 (49)", KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 8},
};

/* A box of exactly nx x ny x nz nodes at the scheme's Courant limit (to 1e-9). */
static void scheme_box(kt_room_params *p, const scheme_case *sc, int nx, int ny, int nz)
{
    kt_room_params_default(p);
    p->scheme = sc->scheme;
    p->stencil_family = sc->family;
    p->stencil_reach = sc->reach;
    p->nthreads = 1; /* threading has its own test; small grids gain nothing */
    kt_scheme_info info;
    kt_error err;
    int rc = kt_room_scheme_info(p, &info, &err);
    KT_CHECK(rc == KT_OK, "scheme info: %s", err.message);
    double Q = p->sound_speed_m_per_s / p->sample_rate_hz / info.max_courant * (1 + 1e-9);
    p->size_m[0] = (nx - 1) * Q;
    p->size_m[1] = (ny - 1) * Q;
    p->size_m[2] = (nz - 1) * Q;
}

static kt_room *make(const kt_room_params *p)
{
    kt_room *room = NULL;
    kt_error err;
    int rc = kt_room_create(p, &room, &err);
    KT_CHECK(rc == KT_OK, "create: %s", err.message);
    if (rc != KT_OK)
        exit(kt_test_finish("test_room_schemes"));
    return room;
}

static void energy_rigid(const scheme_case *sc, int steps)
{
    const char *name = sc->name;
    kt_room_params p;
    scheme_box(&p, sc, 20, 16, 12);
    kt_room *room = make(&p);
    kt_error err;
    const double src[3] = {0.31 * p.size_m[0], 0.42 * p.size_m[1], 0.57 * p.size_m[2]};
    KT_CHECK(kt_room_add_impulse(room, src, 0.0, 1e-3, 1e-3, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_impulse(room, src, 1e-3, 1e-3, -1e-3, &err) == KT_OK, "%s",
             err.message);
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < steps; s++) {
        KT_CHECK(kt_room_step(room, &err) == KT_OK, "step: %s", err.message);
        double e = kt_room_air_energy(room);
        if (s >= 120) {
            lo = fmin(lo, e);
            hi = fmax(hi, e);
        }
    }
    double spread = (hi - lo) / hi;
    KT_CHECK(lo > 0, "%s: energy %g J", name, lo);
    KT_CHECK(spread < 1e-12, "%s: rigid lossless energy spread %.3g", name, spread);
    printf("%s: energy %.6e J, relative spread %.2e over %d steps\n", name, hi, spread,
           steps - 120);
    kt_room_destroy(room);
}

/* Minus the symbol of each scheme in closed form, s_d = sin^2(kappa_d / 2):
 * the 7-point Laplacian, the IWB product form (thesis 4.3.1, a = 1/4,
 * b = 1/16) and the sixth-order leggy stencil (weights 3/2, -3/20, 1/90);
 * the other stencils through the library's relation (-1). */
static double closed_symbol(kt_air_scheme scheme, int leggy3, const double kq[3])
{
    if (scheme == KT_SCHEME_FCC13) {
        double c[3] = {cos(kq[0]), cos(kq[1]), cos(kq[2])};
        return 3 - (c[0] * c[1] + c[1] * c[2] + c[2] * c[0]);
    }
    if (leggy3) {
        static const double c[3] = {1.5, -0.15, 1.0 / 90};
        double v = 0;
        for (int d = 0; d < 3; d++)
            for (int m = 1; m <= 3; m++)
                v += 2 * c[m - 1] * (1 - cos(m * kq[d]));
        return v;
    }
    double s[3];
    for (int d = 0; d < 3; d++)
        s[d] = sin(kq[d] / 2) * sin(kq[d] / 2);
    double lin = 4 * (s[0] + s[1] + s[2]);
    if (scheme == KT_SCHEME_SLF7)
        return lin;
    const double a = 0.25, b = 0.0625;
    return lin - 16 * a * (s[0] * s[1] + s[1] * s[2] + s[2] * s[0]) + 64 * b * s[0] * s[1] * s[2];
}

/* Standing mode (m_x, m_y, m_z) of a cube of n nodes started at rest; the
 * frequency is read off a microphone by least squares on
 * s_{n+1} + s_{n-1} = 2 cos(omega k) s_n.  Returns the phase velocity / c
 * measured, and the analytic one in *expect. */
static double mode_velocity(const scheme_case *sc, int n, const int m[3], double *expect)
{
    kt_room_params p;
    scheme_box(&p, sc, n, n, n);
    kt_room *room = make(&p);
    const kt_room_grid *g = kt_room_get_grid(room);
    double *plane = malloc(sizeof *plane * (size_t)n * n);
    /* A box of n - 1 whole cells: every scheme's walls are mirror planes
     * through the end nodes, modes cos(pi m x / (n - 1)). */
    const double shift = 0, span = n - 1;
    for (int z = 0; z < n; z++) {
        for (int x = 0; x < n; x++)
            for (int y = 0; y < n; y++)
                plane[x * n + y] = cos(pi * m[0] * (x + shift) / span) *
                                   cos(pi * m[1] * (y + shift) / span) *
                                   cos(pi * m[2] * (z + shift) / span);
        kt_room_add_to_layer(room, z, 0, 0, n, n, plane, 1.0);
    }
    free(plane);
    kt_error err;
    /* a node off every nodal plane of the modes used */
    const double mic[3] = {2 * g->spacing_m, 5 * g->spacing_m, 6 * g->spacing_m};
    kt_room_add_mic(room, "m", mic, &err);
    const int steps = 400;
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "run: %s", err.message);
    int64_t len;
    const double *sig = kt_room_mic_signal(room, 0, &len);
    double num = 0, den = 0;
    for (int64_t i = 1; i + 1 < len; i++) {
        num += sig[i] * (sig[i + 1] + sig[i - 1]);
        den += 2 * sig[i] * sig[i];
    }
    double kq[3], kn = 0;
    for (int d = 0; d < 3; d++) {
        kq[d] = pi * m[d] / span;
        kn += kq[d] * kq[d];
    }
    kn = sqrt(kn);
    double lam = g->courant;
    int leggy3 = sc->scheme == KT_SCHEME_STENCIL && sc->family == KT_STENCIL_LEGGY && sc->reach == 3;
    if (sc->scheme == KT_SCHEME_STENCIL && !leggy3)
        *expect = kt_room_scheme_phase_velocity(&p, lam, kq);
    else
        *expect = acos(1 - lam * lam * closed_symbol(sc->scheme, leggy3, kq) / 2) / (lam * kn);
    kt_room_destroy(room);
    return acos(num / den) / (lam * kn);
}

static void dispersion(const scheme_case *sc)
{
    const char *name = sc->name;
    kt_air_scheme scheme = sc->scheme;
    static const int dirs[2][3] = {{1, 0, 0}, {1, 1, 1}};
    static const char *dname[2] = {"axis", "diagonal"};
    const int n = 16;
    for (int dir = 0; dir < 2; dir++)
        for (int mm = 2; mm <= 8; mm *= 2) {
            int m[3] = {mm * dirs[dir][0], mm * dirs[dir][1], mm * dirs[dir][2]};
            double expect, v = mode_velocity(sc, n, m, &expect);
            KT_CHECK(fabs(v - expect) < 1e-9, "%s %s m=%d: v/c %.12f, analytic %.12f", name,
                     dname[dir], mm, v, expect);
            printf("%s %-8s kappa_d Q = %5.3f pi: v/c = %.6f (analytic %.6f), error %+.3f %%\n",
                   name, dname[dir], (double)mm / (n - 1), v,
                   expect, 100 * (v - 1));
            /* The 7-point scheme at its limit is exact along the diagonal, and
             * the wideband one at Courant number 1 along the axes. */
            if ((scheme == KT_SCHEME_SLF7 && dir == 1) ||
                ((scheme == KT_SCHEME_IWB27 || scheme == KT_SCHEME_FCC13) && dir == 0))
                KT_CHECK(fabs(v - 1) < 1e-6, "%s %s: v/c = %.9f, should be 1", name,
                         dname[dir], v);
        }
}

/* A raised cosine (0.5 ms) from a plane of soft sources travels 641 steps
 * (5.0002 m) along x in a box 3 nodes high and wide (or one more than the
 * stencil reaches), whose mirror walls keep the wave plane; the pressure at the far microphone is compared with the
 * near one shifted by 641 steps.  Returns the relative L2 difference. */
static double pulse_shape_error(const scheme_case *sc)
{
    const char *name = sc->name;
    kt_room_params p;
    kt_room_params_default(&p);
    p.scheme = sc->scheme;
    p.stencil_family = sc->family;
    p.stencil_reach = sc->reach;
    p.nthreads = 1;
    kt_scheme_info info;
    kt_room_scheme_info(&p, &info, NULL);
    double c = p.sound_speed_m_per_s, k = 1 / p.sample_rate_hz, h0 = c * k / info.max_courant;
    int intervals = (int)(7.0 / h0);
    p.size_m[0] = intervals * h0 * (1 + 1e-9);
    /* a mirror through the end node reaches `halo` nodes in */
    int across = info.halo_nodes + 1 > 3 ? info.halo_nodes + 1 : 3;
    p.size_m[1] = p.size_m[2] = (across - 0.5) * h0;
    kt_room *room = make(&p);
    const kt_room_grid *g = kt_room_get_grid(room);
    KT_CHECK(g->ny == across && g->nz == across, "grid %d x %d x %d", g->nx, g->ny, g->nz);
    const double Q = g->spacing_m, x0 = round(1.0 / Q) * Q;
    const int is_fcc = sc->scheme == KT_SCHEME_FCC13, ix0 = (int)round(x0 / Q);
    kt_error err;
    for (int j = 0; j < across; j++)
        for (int l = 0; l < across; l++) {
            if (is_fcc && ((ix0 + j + l) & 1))
                continue;        /* the FCC lattice's nodes of the plane */
            const double pos[3] = {x0, j * Q, l * Q};
            KT_CHECK(kt_room_add_impulse(room, pos, 0.0, 0.5e-3, 1e-3, &err) == KT_OK, "%s",
                     err.message);
        }
    const int shift = 641;
    /* microphones on nodes (of the FCC lattice too: z picks the parity) */
    const int in = ix0 + (int)round(0.2 / Q), ifar = in + (int)round(shift * c * k / Q);
    const double near[3] = {x0 + round(0.2 / Q) * Q, Q, is_fcc ? ((in + 1) & 1) * Q : Q};
    const double far[3] = {near[0] + shift * c * k, Q, is_fcc ? ((ifar + 1) & 1) * Q : Q};
    kt_room_add_mic(room, "near", near, &err);
    kt_room_add_mic(room, "far", far, &err);
    /* FCC: a microphone off the lattice, beside "near", reads the mean of its
     * six axis neighbours (4 in its plane, 2 one node before and after) */
    const double off[3] = {near[0], Q, Q - near[2]};
    if (is_fcc)
        kt_room_add_mic(room, "off", off, &err);
    KT_CHECK(kt_room_run(room, shift + 160, NULL, NULL, &err) == KT_OK, "%s", err.message);
    int64_t len;
    const double *a = kt_room_mic_signal(room, 0, &len), *b = kt_room_mic_signal(room, 1, &len);
    double diff = 0, ref = 0, off_diff = 0;
    const double *o = is_fcc ? kt_room_mic_signal(room, 2, &len) : a;
    for (int i = 0; i < 160; i++) {
        diff += (b[i + shift] - a[i]) * (b[i + shift] - a[i]);
        ref += a[i] * a[i];
        off_diff += (o[i] - a[i]) * (o[i] - a[i]);
    }
    if (is_fcc) {
        double e_off = sqrt(off_diff / ref);
        printf("%s: microphone off the lattice against on it: relative L2 difference %.2e\n",
               name, e_off);
        KT_CHECK(e_off > 0 && e_off < 0.05, "FCC off-lattice microphone differs by %g", e_off);
    }
    kt_room_destroy(room);
    double e = sqrt(diff / ref);
    printf("%s: raised cosine after %.4f m along x: relative L2 shape error %.2e\n", name,
           shift * c * k, e);
    return e;
}

/* The FCC lattice holds half the cubic grid's nodes: what --estimate and
 * progress count. */
static void fcc_nodes(void)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.scheme = KT_SCHEME_FCC13;
    p.size_m[0] = 1.0;
    p.size_m[1] = 0.8;
    p.size_m[2] = 0.6;
    p.sample_rate_hz = 16000;
    p.nthreads = 1;
    kt_room *room = make(&p);
    const kt_room_grid *g = kt_room_get_grid(room);
    KT_CHECK(g->nodes == (double)g->nx * g->ny * g->nz / 2, "FCC nodes %g for %d x %d x %d",
             g->nodes, g->nx, g->ny, g->nz);
    kt_room_destroy(room);
}

int main(void)
{
    energy_rigid(&slf7, 4000);
    energy_rigid(&iwb, 4000);
    energy_rigid(&fcc, 4000);
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        energy_rigid(&families[f], 600);
    dispersion(&slf7);
    dispersion(&iwb);
    dispersion(&fcc);
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        dispersion(&families[f]);
    double e7 = pulse_shape_error(&slf7);
    double eiwb = pulse_shape_error(&iwb);
    double efcc = pulse_shape_error(&fcc);
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        pulse_shape_error(&families[f]);
    KT_CHECK(e7 > 0.05, "the 7-point scheme should visibly disperse the pulse: %g", e7);
    KT_CHECK(eiwb < 0.1 * e7, "IWB shape error %g not far below the 7-point %g", eiwb, e7);
    KT_CHECK(efcc < 0.1 * e7, "FCC shape error %g not far below the 7-point %g", efcc, e7);
    fcc_nodes();
    return kt_test_finish("test_room_schemes");
}
