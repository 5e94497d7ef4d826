/* test_room_shape_acoustics.c - shaped rooms against acoustics' closed
 * forms: the lowest modes of a rigid upright cylinder against Bessel's
 * (f = j'_mn c / (2 pi a) for the modes uniform along the axis), and the
 * reverberation time of lossy shaped rooms against Eyring's with the
 * shape's own volume and surface (solids of another beta than the walls),
 * and a cylinder's staircase side, whose faces' loss is scaled so that it
 * measures the true side (unscaled, 4/pi of it; room_shape.c). */
#include "kettle.h"
#include "kt_physics.h"
#include "kt_spectrum.h"
#include "kt_test.h"

#include <stdlib.h>

/* The room filled but for an upright cylinder of air, radius a about (cx, cy). */
static void cylinder_room(kt_room_solid s[2], double cx, double cy, double a, double beta)
{
    s[0] = kt_test_box_solid(-1, -1, -1, 99, 99, 99, beta, 0);
    s[1] = kt_test_cylinder_solid(cx, cy, -1, 99, a, 0, 1);
}

static kt_room *make(const kt_room_params *p, const kt_room_solid *s, int n)
{
    kt_room *room = NULL;
    kt_error err;
    KT_CHECK(kt_room_create(p, &room, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_solids(room, s, n, NULL, &err) == KT_OK, "%s", err.message);
    return room;
}

/* j'_mn: zeros of the derivative of Bessel's J_m, the modes (m, n) of a
 * rigid circle, lowest first: (1,1), (2,1), (0,1), (3,1). */
static const double jprime[4] = {1.841184, 3.054237, 3.831706, 4.201189};

static void test_cylinder_modes(void)
{
    const int n = 47, steps = 1 << 15;
    kt_room_params p;
    kt_test_node_box(&p, n, n, 4, 44100);
    double Q = p.size_m[0] / (n - 1), a = 21.3 * Q, c0 = 23 * Q;
    kt_room_solid s[2];
    cylinder_room(s, c0, c0, a, 0);
    kt_room *room = make(&p, s, 2);
    kt_error err;
    const double src[3] = {c0 + 7.3 * Q, c0 + 4.1 * Q, 1.2 * Q};
    const double mic[3] = {c0 - 9.2 * Q, c0 + 11.7 * Q, 1.6 * Q};
    KT_CHECK(kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_impulse(room, src, 2e-3, 1e-3, -1.0, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_mic(room, "m", mic, &err) == 0, "%s", err.message);
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "%s", err.message);
    int64_t count;
    const double *sig = kt_room_mic_signal(room, 0, &count);
    kt_spectrum sp;
    KT_CHECK(kt_spectrum_compute(&sp, sig, count, 1, 1, p.sample_rate_hz, 8, &err) == KT_OK,
             "%s", err.message);
    double courant = kt_room_get_grid(room)->courant;
    for (int m = 0; m < 4; m++) {
        double f = jprime[m] * p.sound_speed_m_per_s / (2 * KT_PI * a);
        /* the scheme's own phase velocity at that wavenumber, along x and the diagonal */
        double kq = jprime[m] / a * Q;
        const double kx[3] = {kq, 0, 0}, kd[3] = {kq / sqrt(2.0), kq / sqrt(2.0), 0};
        double vx = kt_room_scheme_phase_velocity(&p, courant, kx);
        double vd = kt_room_scheme_phase_velocity(&p, courant, kd);
        kt_peak pk;
        int rc = kt_spectrum_peak(&sp, 0.96 * f, 1.04 * f, &pk);
        double dev = pk.hz / f - 1;
        printf("cylinder a = %.1f Q: mode j'%d = %.4f: %.2f Hz against Bessel's %.2f Hz: %+.3f %% "
               "(the scheme's dispersion %+.3f .. %+.3f %%)\n", a / Q, m, jprime[m], pk.hz, f,
               100 * dev, 100 * (vd - 1), 100 * (vx - 1));
        /* the staircase lowers them by O(Q/a): -0.34 to -1.87 % at a = 21.3 Q, -0.12 to
         * -0.79 % at 42.6 Q (docs/room.md) */
        KT_CHECK(rc == KT_OK && fabs(dev) < 0.5 * Q / a, "mode %d: %g Hz against %g Hz", m,
                 pk.hz, f);
    }
    kt_spectrum_free(&sp);
    kt_room_destroy(room);
}

/* Diffuse-field absorption of a beta surface (Paris; test_room_walls.c). */
static double diffuse_absorption(double beta)
{
    double z = 1.0 / (2.0 * beta);
    return 8.0 / z * (1.0 + 1.0 / (1.0 + z) - 2.0 / z * log(1.0 + z));
}

/* T60 of the summed microphones' Schroeder curve, -5 to -25 dB. */
static double measure_t60(kt_room *room, const double src[3], const double (*mic)[3], int mics,
                          double eyring)
{
    kt_error err;
    kt_room_add_impulse(room, src, 0, 1e-3, 1.0, &err);
    kt_room_add_impulse(room, src, 2e-3, 1e-3, -1.0, &err);
    for (int m = 0; m < mics; m++) {
        char name[8] = {'m', (char)('0' + m), 0};
        KT_CHECK(kt_room_add_mic(room, name, mic[m], &err) >= 0, "%s", err.message);
    }
    double rate = kt_room_get_params(room)->sample_rate_hz;
    const int64_t steps = (int64_t)(1.2 * eyring * rate) + 2000;
    KT_CHECK(kt_room_run(room, steps, NULL, NULL, &err) == KT_OK, "%s", err.message);
    return kt_test_schroeder_t60(room, rate);
}

static double eyring_t60(double V, double c, double S_total, double absorption_area)
{
    return 24 * log(10.0) * V / (c * S_total * -log(1 - absorption_area / S_total));
}

/* A solid box's effective extent on the grid along an axis of length L:
 * its faces lie half-way between its last node and the first air node (a
 * node on the surface is solid), or on the wall it reaches. */
static void extent(double lo, double hi, double Q, double L, double out[2])
{
    const double e = 1e-9;
    out[0] = lo <= 0 ? 0 : (ceil(lo / Q - e) - 0.5) * Q;
    out[1] = hi >= L ? L : (floor(hi / Q + e) + 0.5) * Q;
}

/* Its volume, its faces in the air and those on the walls. */
static void box_measure(const kt_room_solid *s, double Q, const double L[3], double *V,
                        double *exposed, double *covered)
{
    double ext[3][2];
    for (int d = 0; d < 3; d++)
        extent(s->lo_m[d], s->hi_m[d], Q, L[d], ext[d]);
    *V = 1;
    for (int d = 0; d < 3; d++)
        *V *= ext[d][1] - ext[d][0];
    for (int d = 0; d < 3; d++) {
        double face = *V / (ext[d][1] - ext[d][0]);
        *(ext[d][0] == 0 ? covered : exposed) += face;
        *(ext[d][1] == L[d] ? covered : exposed) += face;
    }
}

/* A 2.5 x 2 x 1.5 m room (walls beta 0.02) with a stage in one corner and
 * a balcony along the far wall over part of its width (solids beta 0.06):
 * Eyring's T60 with V and S of the air, each surface with its own
 * absorption, V and the solids' area also as kt_room_air_measure gives them. */
static void test_t60_stage(void)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 2.5, p.size_m[1] = 2.0, p.size_m[2] = 1.5;
    p.sample_rate_hz = 12000;
    p.wall_beta = 0.02;
    p.nthreads = 1;
    kt_room *room = NULL;
    kt_error err;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    double Q = kt_room_get_grid(room)->spacing_m;
    const double st_lo[3] = {-1, -1, -1}, st_hi[3] = {0.8, 1.3, 0.4};
    const double ba_lo[3] = {1.9, 0.6, 1.0}, ba_hi[3] = {3, 3, 1.15};
    kt_room_solid s[2] = {
        kt_test_box_solid(st_lo[0], st_lo[1], st_lo[2], st_hi[0], st_hi[1], st_hi[2], 0.06, 0),
        kt_test_box_solid(ba_lo[0], ba_lo[1], ba_lo[2], ba_hi[0], ba_hi[1], ba_hi[2], 0.06, 0)};
    KT_CHECK(kt_room_add_solids(room, s, 2, NULL, &err) == KT_OK, "%s", err.message);
    const double *L = p.size_m;
    double V = L[0] * L[1] * L[2], S_box = 2 * (L[0] * L[1] + L[1] * L[2] + L[0] * L[2]);
    double S_solids = 0, covered = 0;
    for (int k = 0; k < 2; k++) {
        double v;
        box_measure(&s[k], Q, L, &v, &S_solids, &covered);
        V -= v;
    }
    double S_walls = S_box - covered;
    double A = S_walls * diffuse_absorption(0.02) + S_solids * diffuse_absorption(0.06);
    double eyring = eyring_t60(V, p.sound_speed_m_per_s, S_walls + S_solids, A);
    double V_grid, S_grid;
    kt_room_air_measure(room, &V_grid, &S_grid);
    KT_CHECK_REL(V_grid, V, 1e-12, 0);
    KT_CHECK_REL(S_grid, S_solids, 1e-12, 0);
    const double src[3] = {1.27, 0.33, 0.78};
    const double mic[4][3] = {{1.67, 1.27, 0.67}, {1.11, 1.43, 0.52}, {2.03, 0.37, 0.61},
                              {0.41, 1.61, 1.21}};
    double t60 = measure_t60(room, src, mic, 4, eyring);
    /* the same walls without the solids' extra absorption, for scale */
    double A_rigid = S_walls * diffuse_absorption(0.02);
    double eyring_rigid = eyring_t60(V, p.sound_speed_m_per_s, S_walls + S_solids, A_rigid);
    printf("stage and balcony (walls beta 0.02, solids 0.06): T60 %.4f s, Eyring %.4f s, "
           "ratio %.3f (Eyring with rigid solids %.4f s)\n", t60, eyring, t60 / eyring,
           eyring_rigid);
    KT_CHECK(t60 < 1.15 * eyring && t60 > eyring / 1.15, "T60 %g s against Eyring %g s", t60,
             eyring);
    kt_room_destroy(room);
}

/* A cylinder's staircase side, each face weighed by 1 / (|n_x| + |n_y|),
 * measures the true side (unweighed it is 4/pi of it on average), and the
 * air's volume that of the cylinder. */
static void test_cylinder_area(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 71, 71, 20, 44100);
    double Q = p.size_m[0] / 70, a = 31.7 * Q, c0 = 35.2 * Q;
    kt_room_solid s[2];
    cylinder_room(s, c0, c0, a, 0.05);
    kt_room *room = make(&p, s, 2);
    double V, S;
    kt_room_air_measure(room, &V, &S);
    double h = p.size_m[2], V_true = KT_PI * a * a * h, S_true = 2 * KT_PI * a * h;
    printf("cylinder a = %.1f Q: air %.5f m^3 against %.5f (%+.3f %%), side %.5f m^2 against "
           "%.5f (%+.3f %%)\n", a / Q, V, V_true, 100 * (V / V_true - 1), S, S_true,
           100 * (S / S_true - 1));
    KT_CHECK_REL(V, V_true, 0.01, 0);
    KT_CHECK_REL(S, S_true, 0.01, 0);
    kt_room_destroy(room);
}

int main(void)
{
    test_cylinder_modes();
    test_t60_stage();
    test_cylinder_area();
    return kt_test_finish("test_room_shape_acoustics");
}
