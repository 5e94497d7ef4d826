/* test_gpu_room_schemes.c - the other air schemes and the absorbing walls on
 * the GPU (room/gpu/room_stencil*.cu, room_fcc.cu, room_abc.cu) against the CPU's
 * (room/room_stencil_impl.h, room_fcc_impl.h, room_abc_impl.h).
 *
 * Stage A alone: a room of odd size (thread blocks and z slabs end part-way)
 * is stepped past an impulse on the CPU, both fields (ghost layers too) go to
 * the device, then both step on; Psi^n and Psi^{n-1} must equal the CPU's
 * bit for bit, ghosts included, for IWB by its hand-written kernel and by
 * both forms of the generic one (compiled for the list, runtime list), for
 * the 7-point stencil through both forms, for FCC on its half-row layout by its own kernel, and for
 * compact, box-compact and leggy stencils up to 125 points and a 16-layer
 * halo, in double and single precision; and the 7-point scheme with
 * absorbing walls (room/gpu/room_abc.cu).  The sums run
 * in the CPU's order through non-contracting intrinsics, so any difference
 * at all is a bug (a wrong leg, weight, ghost or index).
 *
 * The whole step: a room with a source and a fixed and a moving microphone
 * is mirrored to the device (kt_cuda_mirror: sources and microphones on the
 * wider halo's layout, CUDA graphs) and its microphone signals must equal
 * the CPU room's; with absorbing walls, the energy that left through them
 * must be the CPU's to 1e-9 (the device adds it with atomics, in no fixed
 * order).  What the device cannot do yet (lossy walls with these
 * schemes) is refused with a message.  Skipped (77) without a GPU or a CUDA
 * build. */
#include "kt_physics.h"
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_room_schemes: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kettle.h"
#include "kt_cuda_room.h"
#include "room_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct scheme_case {
    const char *name;
    kt_air_scheme scheme;
    kt_stencil_family family;
    int reach;
    kt_precision precision;
    kt_cuda_kernel kernel;
    const char *expect_kernel; /* what the device must say it runs */
    kt_wall_model walls;
} scheme_case;

/* A box of about nx x ny x nz nodes for the case's scheme (Courant back-off 0.4 %). */
static int scheme_box(const scheme_case *sc, int nx, int ny, int nz, kt_room_params *p)
{
    kt_room_params_default(p);
    p->precision = sc->precision;
    p->scheme = sc->scheme;
    p->stencil_family = sc->family;
    p->stencil_reach = sc->reach;
    p->courant_backoff = KT_SINGLE_COURANT_BACKOFF;
    p->nthreads = 2;
    p->wall_model = sc->walls;
    kt_scheme_info info;
    kt_error err;
    if (kt_room_scheme_info(p, &info, &err) < 0) {
        KT_CHECK(0, "%s: scheme: %s", sc->name, err.message);
        return -1;
    }
    const int nodes[3] = {nx, ny, nz};
    kt_room_params_fit(p, nodes);
    return 0;
}

/* Number of elements (of the whole padded arrays) where a and b differ bitwise. */
static size_t bit_differences(const void *a, const void *b, size_t n, size_t esize)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += memcmp((const char *)a + i * esize, (const char *)b + i * esize, esize) != 0;
    return bad;
}

static double largest(const kt_room *room, const void *f)
{
    double m = 0;
    for (size_t i = 0; i < room->plan.padded_points; i++)
        m = fmax(m, fabs(room_get(room, f, i)));
    return m;
}

static void sweep_case(const scheme_case *sc)
{
    const int warmup = 12, steps = 23;
    kt_room_params p;
    if (scheme_box(sc, 37, 29, 45, &p) < 0)
        return;
    kt_room *room = NULL;
    kt_cuda_room *gpu = NULL;
    kt_error err;
    int rc = kt_room_create(&p, &room, &err);
    KT_CHECK(rc == KT_OK, "%s: room: %s", sc->name, err.message);
    if (rc == KT_OK)
        rc = kt_cuda_room_create(&p, &gpu, &err);
    KT_CHECK(rc == KT_OK, "%s: GPU room: %s", sc->name, err.message);
    if (rc == KT_OK)
        rc = kt_cuda_room_set_kernel(gpu, sc->kernel, &err);
    if (rc != KT_OK) {
        kt_cuda_room_free(gpu);
        kt_room_destroy(room);
        return;
    }
    KT_CHECK(strcmp(kt_cuda_room_kernel_name(gpu), sc->expect_kernel) == 0,
             "%s: runs the %s kernel, expected %s", sc->name, kt_cuda_room_kernel_name(gpu),
             sc->expect_kernel);
    KT_CHECK(kt_cuda_room_padded_points(gpu) == room->plan.padded_points, "%s: same layout",
             sc->name);
    const double src[3] = {0.13 * p.size_m[0], 0.71 * p.size_m[1], 0.21 * p.size_m[2]};
    kt_room_add_impulse(room, src, 0.0, 6.0 / p.sample_rate_hz, 1e-2, &err);
    for (int s = 0; s < warmup; s++)
        kt_room_step(room, &err);
    const size_t esize = kt_precision_bytes(p.precision);
    const size_t n = room->plan.padded_points, bytes = n * esize;
    void *now = malloc(bytes), *prev = malloc(bytes);
    rc = kt_cuda_room_upload(gpu, room->now, room->prev, &err);
    KT_CHECK(rc == KT_OK, "%s: upload: %s", sc->name, err.message);
    const double before = largest(room, room->now);
    for (int s = 0; s < steps; s++)
        kt_room_step(room, &err);
    rc = kt_cuda_room_run(gpu, steps, &err);
    if (rc == KT_OK)
        rc = kt_cuda_sync(&err);
    if (rc == KT_OK)
        rc = kt_cuda_room_download(gpu, now, prev, &err);
    KT_CHECK(rc == KT_OK, "%s: GPU run: %s", sc->name, err.message);
    size_t bad_now = bit_differences(room->now, now, n, esize);
    size_t bad_prev = bit_differences(room->prev, prev, n, esize);
    KT_CHECK(bad_now == 0 && bad_prev == 0,
             "%s: %zu (Psi^n) and %zu (Psi^{n-1}) of %zu values differ from the CPU's", sc->name,
             bad_now, bad_prev, n);
    const double after = largest(room, room->now);
    KT_CHECK(after > 0 && after != before, "%s: the field did not evolve", sc->name);
    printf("%-34s %d x %d x %d, halo %d, %s kernel: %zu values differ\n", sc->name,
           room->plan.grid.nx, room->plan.grid.ny, room->plan.grid.nz, room->plan.halo,
           kt_cuda_room_kernel_name(gpu), bad_now + bad_prev);
    free(now);
    free(prev);
    kt_cuda_room_free(gpu);
    kt_room_destroy(room);
}

/* A room with a source, a fixed and a moving microphone, built twice. */
static int mic_room(const scheme_case *sc, kt_room **out, kt_error *err)
{
    kt_room_params p;
    if (scheme_box(sc, 31, 26, 23, &p) < 0)
        return -1;
    int rc = kt_room_create(&p, out, err);
    if (rc < 0)
        return rc;
    const double *L = p.size_m;
    const double src[3] = {0.3 * L[0], 0.4 * L[1], 0.6 * L[2]};
    const double fixed[3] = {0.71 * L[0], 0.33 * L[1], 0.52 * L[2]};
    const double a[3] = {0.1 * L[0], 0.2 * L[1], 0.3 * L[2]}, b[3] = {0.9 * L[0], 0.7 * L[1],
                                                                        0.8 * L[2]};
    rc = kt_room_add_impulse(*out, src, 0.0, 5.0 / p.sample_rate_hz, 1e-2, err);
    if (rc >= 0)
        rc = kt_room_add_mic(*out, "fixed", fixed, err);
    if (rc >= 0)
        rc = kt_room_add_mic(*out, "moving", a, err);
    if (rc >= 0)
        rc = kt_room_mic_waypoint(*out, 1, 0.0, a, err);
    if (rc >= 0)
        rc = kt_room_mic_waypoint(*out, 1, 200.0 / p.sample_rate_hz, b, err);
    return rc < 0 ? rc : KT_OK;
}

static void mirror_case(const scheme_case *sc)
{
    const int64_t steps = 250; /* single launches and two graph batches of 96 */
    kt_room *cpu = NULL, *dev = NULL;
    kt_cuda_mirror *M = NULL;
    kt_error err;
    int rc = mic_room(sc, &cpu, &err);
    if (rc == KT_OK)
        rc = mic_room(sc, &dev, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_create(dev, &M, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_run(M, steps, &err);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_download(M, &err);
    for (int64_t s = 0; rc == KT_OK && s < steps; s++)
        rc = kt_room_step(cpu, &err);
    KT_CHECK(rc == KT_OK, "%s mirror: %s", sc->name, err.message);
    if (rc == KT_OK) {
        for (int m = 0; m < 2; m++) {
            int64_t nc = 0, nd = 0;
            const double *a = kt_room_mic_signal(cpu, m, &nc), *b = kt_room_mic_signal(dev, m, &nd);
            KT_CHECK(nc == steps && nd == steps, "%s mirror: %lld and %lld samples", sc->name,
                     (long long)nc, (long long)nd);
            if (nc != nd)
                continue;
            KT_CHECK(memcmp(a, b, sizeof *a * (size_t)nc) == 0,
                     "%s mirror: microphone %d differs from the CPU's (max %.3g)", sc->name, m,
                     kt_test_max_diff(a, b, (int)nc));
            KT_CHECK(kt_test_max_abs(a, (int)nc) > 0, "%s mirror: microphone %d heard nothing",
                     sc->name, m);
        }
        const size_t esize = kt_precision_bytes(cpu->plan.params.precision);
        KT_CHECK(bit_differences(cpu->now, dev->now, cpu->plan.padded_points, esize) == 0,
                 "%s mirror: Psi^n differs from the CPU's", sc->name);
        const double out_cpu = kt_room_wall_outflow(cpu), out_dev = kt_room_wall_outflow(dev);
        KT_CHECK(fabs(out_dev - out_cpu) <= 1e-9 * fabs(out_cpu) &&
                     (sc->walls != KT_WALL_ENGQUIST_MAJDA || out_cpu > 0),
                 "%s mirror: outflow through the walls %.15g J, the CPU's %.15g J", sc->name,
                 out_dev, out_cpu);
        printf("%-34s whole step, %lld steps: microphones and field as the CPU's\n", sc->name,
               (long long)steps);
    }
    kt_cuda_mirror_free(M);
    kt_room_destroy(dev);
    kt_room_destroy(cpu);
}

static void test_refusals(void)
{
    scheme_case sc = {"iwb lossy", KT_SCHEME_IWB27, 0, 0, KT_DOUBLE, 0, "", 0};
    kt_room_params p;
    if (scheme_box(&sc, 10, 10, 10, &p) < 0)
        return;
    kt_cuda_room *gpu = NULL;
    kt_error err;
    KT_CHECK(kt_cuda_room_set_kernel(NULL, KT_CUDA_KERNEL_GENERIC, &err) == KT_EINVAL,
             "set_kernel without a room refused");
    p.wall_beta = 0.3;
    int rc = kt_cuda_room_create(&p, &gpu, &err);
    KT_CHECK(rc < 0 && gpu == NULL, "lossy IWB walls refused on the GPU");
    kt_cuda_room_free(gpu);
    gpu = NULL;
    p.wall_beta = 0;
    p.scheme = KT_SCHEME_FCC13;
    rc = kt_cuda_room_create(&p, &gpu, &err);
    KT_CHECK(rc == KT_OK, "FCC room on the GPU: %s", err.message);
    if (rc == KT_OK)
        KT_CHECK(kt_cuda_room_set_kernel(gpu, KT_CUDA_KERNEL_GENERIC, &err) == KT_ENOTSUP,
                 "the generic kernel refused for the FCC layout");
    kt_cuda_room_free(gpu);
}

int main(void)
{
    if (kt_cuda_devices(NULL, 0) == 0) {
        printf("test_gpu_room_schemes: no GPU, skipped\n");
        return 77;
    }
    const kt_cuda_kernel A = KT_CUDA_KERNEL_AUTO, G = KT_CUDA_KERNEL_GENERIC;
    const kt_cuda_kernel L = KT_CUDA_KERNEL_GENERIC_LIST;
    const kt_precision D = KT_DOUBLE, S = KT_SINGLE;
    const kt_air_scheme I = KT_SCHEME_IWB27, T = KT_SCHEME_STENCIL;
    const kt_air_scheme F = KT_SCHEME_FCC13;
    const kt_wall_model EM = KT_WALL_ENGQUIST_MAJDA;
    static const int n_sweeps = 25;
    const scheme_case sweeps[25] = {
        {"7-point Engquist-Majda double", KT_SCHEME_SLF7, 0, 0, D, A, "7-point", EM},
        {"7-point Engquist-Majda single", KT_SCHEME_SLF7, 0, 0, S, A, "7-point", EM},
        {"fcc double", F, 0, 0, D, A, "fcc", 0},
        {"fcc single", F, 0, 0, S, A, "fcc", 0},
        {"iwb double", I, 0, 0, D, A, "iwb", 0},
        {"iwb single", I, 0, 0, S, A, "iwb", 0},
        {"iwb double, generic kernel", I, 0, 0, D, G, "generic", 0},
        {"iwb single, generic kernel", I, 0, 0, S, G, "generic", 0},
        {"iwb double, runtime-list kernel", I, 0, 0, D, L, "generic-list", 0},
        {"iwb single, runtime-list kernel", I, 0, 0, S, L, "generic-list", 0},
        {"compact R=1 (7) single", T, KT_STENCIL_COMPACT, 1, S, A, "generic", 0},
        {"compact R=1 (7) single, runtime list", T, KT_STENCIL_COMPACT, 1, S, L, "generic-list",
         0},
        {"compact R=2 (19) double", T, KT_STENCIL_COMPACT, 2, D, A, "generic", 0},
        {"compact R=4 (33) double", T, KT_STENCIL_COMPACT, 4, D, A, "generic-list", 0},
        {"compact R=4 (33) single", T, KT_STENCIL_COMPACT, 4, S, A, "generic", 0},
        {"box q=1 (27) single", T, KT_STENCIL_BOX, 1, S, A, "generic", 0},
        {"compact R=5 (57) single", T, KT_STENCIL_COMPACT, 5, S, A, "generic-list", 0},
        {"compact R=9 (123) double", T, KT_STENCIL_COMPACT, 9, D, A, "generic-list", 0},
        {"box q=2 (125) double", T, KT_STENCIL_BOX, 2, D, A, "generic-list", 0},
        {"box q=2 (125) single", T, KT_STENCIL_BOX, 2, S, A, "generic-list", 0},
        {"leggy M=1 (7) double", T, KT_STENCIL_LEGGY, 1, D, A, "generic", 0},
        {"leggy M=2 (13) single", T, KT_STENCIL_LEGGY, 2, S, A, "generic", 0},
        {"leggy M=2 (13) double", T, KT_STENCIL_LEGGY, 2, D, A, "generic-list", 0},
        {"leggy M=4 (25) single", T, KT_STENCIL_LEGGY, 4, S, A, "generic", 0},
        {"leggy M=16 (97) double", T, KT_STENCIL_LEGGY, 16, D, A, "generic-list", 0},
    };
    for (int c = 0; c < n_sweeps; c++)
        sweep_case(&sweeps[c]);
    const scheme_case mirrors[4] = {
        {"iwb single", I, 0, 0, S, A, "iwb", 0},
        {"leggy M=3 (19) double", T, KT_STENCIL_LEGGY, 3, D, A, "generic", 0},
        {"compact R=3 (27) single", T, KT_STENCIL_COMPACT, 3, S, A, "generic", 0},
        {"7-point Engquist-Majda double", KT_SCHEME_SLF7, 0, 0, D, A, "7-point", EM},
    };
    for (int c = 0; c < 4; c++)
        mirror_case(&mirrors[c]);
    test_refusals();
    return kt_test_finish("test_gpu_room_schemes");
}
#endif
