/* test_gpu_shape.c - rooms with solids on the GPU (room/gpu/room_shape.cu)
 * against the CPU (room/room_shape.c).
 * 1. The whole step: two identical rooms (lossy walls; a stage of lossy
 *    solid with a cylindrical niche cut into it, a floor-to-ceiling pillar,
 *    a balcony one node from a wall; impulses, fixed and moving microphones)
 *    step on the CPU and through the mirror, in single and double
 *    precision, 2 and 3 grids; fields and microphones must agree within the
 *    box tests' bounds (1e-10 relative in double, 1e-5 in single), and bit
 *    for bit wherever the same box without solids agrees bit for bit (the
 *    count of nodes whose bits differ is printed for both).  The solids must
 *    change the sound (a box without them differs by more than 1e-3).
 * 2. Energy: a rigid room with rigid solids stepped on the GPU keeps its
 *    discrete energy to 1e-12 relative over 3,000 steps (double).
 * 3. A render with a drum (kt_render, --device gpu against --device cpu):
 *    every sample within 1e-10 of the loudest in double, 1e-4 in single
 *    (test_gpu_render's bounds); --device auto picks the GPU.
 * 4. That render on the GPU stopped with a checkpoint and resumed on the GPU
 *    ends within 1e-10 of the one never stopped.
 * Skipped (77) without a CUDA build or a GPU of compute capability 9.0. */
#include "kt_config.h"
#include "kt_test.h"

#if !KETTLE_CUDA_ENABLED
int main(void)
{
    printf("test_gpu_shape: built without CUDA, skipped\n");
    return 77;
}
#else

#include "kettle.h"
#include "kt_checkpoint.h"
#include "kt_cuda.h"
#include "kt_cuda_room.h"
#include "kt_render.h"
#include "kt_test_room.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A stage against the walls x = 0 and y = 0 with a round niche, a pillar
 * through the whole height, a balcony one node from the wall x = 0. */
static int solids_of(const kt_room_params *p, double Q, double beta, kt_room_solid s[5])
{
    const double *L = p->size_m;
    s[0] = kt_test_box_solid(-1, -1, -1, 0.4 * L[0], 0.45 * L[1], 0.25 * L[2], beta, 0);
    s[1] = kt_test_cylinder_solid(0.4 * L[0], 0.2 * L[1], -1, 0.15 * L[2], 0.1 * L[0], 0, 1);
    s[2] = kt_test_box_solid(0.6 * L[0], 0.55 * L[1], -1, 0.72 * L[0], 0.7 * L[1], L[2] + 1,
                             beta, 0);
    s[3] = kt_test_box_solid(0.9 * Q, 0.75 * L[1], 0.6 * L[2], 0.3 * L[0], L[1] + 1, 0.75 * L[2],
                             beta, 0);
    s[4] = kt_test_cylinder_solid(0.8 * L[0], 0.25 * L[1], -1, L[2] + 1, 0.06 * L[0], beta, 0);
    return 5;
}

static kt_room *build(const kt_room_params *p, int with_solids, double solid_beta,
                      kt_error *err)
{
    kt_room *room = NULL;
    if (kt_room_create(p, &room, err) < 0)
        return NULL;
    const kt_room_grid *g = kt_room_get_grid(room);
    const double *L = p->size_m, k = g->time_step_s;
    kt_room_solid s[5];
    int n = solids_of(p, g->spacing_m, solid_beta, s), bad = -1, mic = -1;
    int ok = !with_solids || kt_room_add_solids(room, s, n, &bad, err) >= 0;
    const double s1[3] = {0.5 * L[0], 0.35 * L[1], 0.5 * L[2]};
    const double s2[3] = {0.85 * L[0], 0.8 * L[1], 0.3 * L[2]};
    ok = ok && kt_room_add_impulse(room, s1, 0.0, 10 * k, 1e-2, err) >= 0;
    ok = ok && kt_room_add_impulse(room, s2, 40 * k, 6 * k, -5e-3, err) >= 0;
    const double m1[3] = {0.3 * L[0], 0.6 * L[1], 0.5 * L[2]};
    const double w0[3] = {0.5 * L[0], 0.3 * L[1], 0.6 * L[2]};
    const double w1[3] = {0.85 * L[0], 0.5 * L[1], 0.35 * L[2]};
    ok = ok && kt_room_add_mic(room, "fixed", m1, err) >= 0;
    ok = ok && (mic = kt_room_add_mic(room, "moving", w0, err)) >= 0;
    ok = ok && kt_room_mic_waypoint(room, mic, 20 * k, w0, err) >= 0;
    ok = ok && kt_room_mic_waypoint(room, mic, 900 * k, w1, err) >= 0;
    if (!ok) {
        kt_room_destroy(room);
        return NULL;
    }
    return room;
}

/* Nodes whose value differs in any bit between two rooms' fields. */
static long differing_bits(const kt_room *a, const void *fa, const void *fb)
{
    long count = 0;
    const size_t esize = kt_precision_bytes(a->plan.params.precision);
    for (int z = 0; z < a->plan.grid.nz; z++)
        for (int y = 0; y < a->plan.grid.ny; y++)
            for (int x = 0; x < a->plan.grid.nx; x++) {
                const size_t i = room_node_index(a, x, y, z);
                count += memcmp((const char *)fa + i * esize, (const char *)fb + i * esize,
                                esize) != 0;
            }
    return count;
}

typedef struct outcome {
    double mic, now, prev;
    long bits;
} outcome;

/* Steps a CPU room and a mirrored twin `steps` steps (after a few on the
 * CPU) and compares them. */
static outcome side_by_side(const kt_room_params *p, int with_solids, int batch, int64_t steps,
                            kt_room **keep_cpu, const char *what)
{
    outcome o = {INFINITY, INFINITY, INFINITY, -1};
    kt_error err;
    kt_room *cpu = build(p, with_solids, 0.05, &err);
    KT_CHECK(cpu != NULL, "%s: CPU room: %s", what, err.message);
    kt_room *gpu = cpu ? build(p, with_solids, 0.05, &err) : NULL;
    KT_CHECK(gpu != NULL, "%s: mirrored room: %s", what, err.message);
    if (!gpu) {
        kt_room_destroy(cpu);
        return o;
    }
    for (int s = 0; s < 5; s++) {
        kt_room_step(cpu, &err);
        kt_room_step(gpu, &err);
    }
    const int64_t piece[2] = {steps / 3 + 1, steps - steps / 3 - 1};
    const int rc = kt_test_mirror_pieces(gpu, batch, piece, 2, what);
    for (int64_t s = 0; s < steps; s++)
        kt_room_step(cpu, &err);
    if (rc == KT_OK) {
        o.mic = kt_test_mic_difference(cpu, gpu, NULL);
        o.now = kt_test_node_difference(cpu, cpu->now, gpu, gpu->now);
        o.prev = kt_test_node_difference(cpu, cpu->prev, gpu, gpu->prev);
        o.bits = differing_bits(cpu, cpu->now, gpu->now) +
                 differing_bits(cpu, cpu->prev, gpu->prev);
    }
    kt_room_destroy(gpu);
    if (keep_cpu)
        *keep_cpu = cpu;
    else
        kt_room_destroy(cpu);
    return o;
}

static void step_case(kt_precision prec, double viscosity_m, int batch, const char *what)
{
    kt_room_params p;
    kt_test_box(&p, 41, 33, 29, prec, 0.2, viscosity_m);
    const int64_t steps = 700;
    kt_room *shaped = NULL, *box = NULL;
    outcome s = side_by_side(&p, 1, batch, steps, &shaped, what);
    outcome b = side_by_side(&p, 0, batch, steps, &box, what);
    const double tol = prec == KT_SINGLE ? 1e-5 : 1e-10;
    printf("%s: solids: mics %.3g, Psi^n %.3g, Psi^{n-1} %.3g relative, %ld node values "
           "differ in bits; the box alone: %.3g, %.3g, %.3g, %ld\n",
           what, s.mic, s.now, s.prev, s.bits, b.mic, b.now, b.prev, b.bits);
    KT_CHECK(s.mic <= tol && s.now <= tol && s.prev <= tol,
             "%s: the GPU's shaped room differs from the CPU's by %.3g, %.3g, %.3g (bound %g)",
             what, s.mic, s.now, s.prev, tol);
    KT_CHECK(b.bits != 0 || s.bits == 0,
             "%s: the box agrees bit for bit but the shaped room differs at %ld values", what,
             s.bits);
    if (shaped && box) {
        double effect = kt_test_mic_difference(shaped, box, NULL);
        KT_CHECK(effect > 1e-3, "%s: the solids changed the sound by only %.3g", what, effect);
    }
    kt_room_destroy(shaped);
    kt_room_destroy(box);
}

/* A rigid room with rigid solids keeps its energy on the GPU. */
static void energy_case(void)
{
    kt_room_params p;
    kt_test_box(&p, 41, 33, 29, KT_DOUBLE, 0.0, 0.0);
    kt_error err;
    kt_room *room = build(&p, 1, 0.0, &err);
    KT_CHECK(room != NULL, "energy: room: %s", err.message);
    if (!room)
        return;
    for (int s = 0; s < 80; s++)   /* past both impulses */
        kt_room_step(room, &err);
    const double e0 = kt_room_air_energy(room);
    double lo = e0, hi = e0;
    kt_cuda_mirror *M = NULL;
    int rc = kt_cuda_mirror_create(room, &M, &err);
    KT_CHECK(rc == KT_OK, "energy: mirror: %s", err.message);
    for (int k = 0; k < 10 && rc == KT_OK; k++) {
        rc = kt_cuda_mirror_run(M, 300, &err);
        if (rc == KT_OK)
            rc = kt_cuda_mirror_download(M, &err);
        KT_CHECK(rc == KT_OK, "energy: GPU run: %s", err.message);
        const double e = kt_room_air_energy(room);
        lo = fmin(lo, e);
        hi = fmax(hi, e);
    }
    kt_cuda_mirror_free(M);
    const double spread = (hi - lo) / e0;
    printf("energy of a rigid shaped room on the GPU: %.6g J, relative spread %.3g over "
           "3000 steps\n", e0, spread);
    KT_CHECK(e0 > 0 && spread < 1e-12, "energy: spread %.3g of %.3g J", spread, e0);
    kt_room_destroy(room);
}

/* ---- a render with a drum ---- */

static const char *orc_solids =
    "sr = 16000\n"
    "room = 1.5 1.0 1.0\n"
    "beta = 0.2\n"
    "ksmps = 16\n"
    "solid stage box 1.0 0.5 0  1.5 1.0 0.25 beta 0.05\n"
    "hole niche cylinder 1.0 0.75 0 0.2 0.12\n"
    "solid pillar box 1.1 0.1 0  1.2 0.22 1.0 beta 0.1\n"
    "mic m 0.95 0.35 0.55\n"
    "mic walker 0.85 0.3 0.7\n"
    "move walker 0.15 1.3 0.4 0.7\n"
    "impulse 1.35 0.3 0.3 0.01 1ms 0.5\n"
    "instr 1\n"
    "  size = 23\n"
    "  pitch = D3\n"
    "  pos = 0.42 0.5 0.6\n"
    "endin\n";
static const char *sco = "i 1 0 0.06 f 0.6 10\n"
                         "i 1 0.08 0.08 mf 0.4 -30\n";
/* Longer than one run of the GPU render between stop polls (4 microphone
 * blocks, 11,520 steps = 0.72 s at 16 kHz), so that the first poll comes
 * before the end. */
static const char *sco_long = "i 1 0 0.06 f 0.6 10\n"
                              "i 1 0.9 0.1 mf 0.4 -30\n";

static char dir[64];

/* The piece rendered raw on a device (kt_test_render_all). */
static double *render(const char *score, kt_device device, int precision, int64_t *count,
                      kt_render_result *res)
{
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = device;
    o.precision = precision;
    o.tail_s = 0.02;
    return kt_test_render_all(orc_solids, score, &o, count, res);
}

/* The same render on the GPU in double, to out, checkpointed to ck and
 * stopped at the first poll. */
static void render_stopped(const char *out, const char *ck, kt_render_result *res)
{
    kt_test_stopper st = {0, 1};
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "s.orc", orc_solids, "s.sco", sco_long, &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_GPU;
    o.precision = KT_DOUBLE;
    o.tail_s = 0.02;
    kt_test_raw_output(&o);
    o.checkpoint_path = ck;
    o.stop = kt_test_stop_at;
    o.user = &st;
    if (rc == 0)
        rc = kt_render(&perf, out, &o, res, &err);
    kt_performance_free(&perf);
    KT_CHECK(rc == KT_EINTR && res->checkpoints_written == 1,
             "stopped with a checkpoint (rc %d: %s)", rc, err.message);
}

static void render_case(int precision, double tol)
{
    const char *p = precision == KT_SINGLE ? "single" : "double";
    kt_render_result rc, rg;
    int64_t nc = 0, ng = 0;
    double *c = render(sco, KT_DEVICE_CPU, precision, &nc, &rc);
    kt_device dev = precision == KT_SINGLE ? KT_DEVICE_AUTO : KT_DEVICE_GPU;
    double *g = render(sco, dev, precision, &ng, &rg);
    KT_CHECK(c && g && strncmp(rg.device, "GPU ", 4) == 0, "devices '%s' and '%s'",
             c ? rc.device : "?", g ? rg.device : "?");
    double d = kt_test_relative_difference(g, ng, c, nc), peak = 0;
    for (int64_t i = 0; c && i < nc; i++)
        peak = fmax(peak, fabs(c[i]));
    printf("render with a drum, %s: %lld samples, peak %.3g Pa, GPU vs CPU %.3g relative (%s)\n",
           p, (long long)nc / 2, peak / 1e-3, d, g ? rg.device : "?");
    KT_CHECK(d <= tol, "%s: GPU and CPU renders differ by %.3g of the peak (bound %g)", p, d,
             tol);
    KT_CHECK(peak > 1e-6, "%s: the microphones heard nothing (peak %g)", p, peak);
    free(c);
    free(g);
    kt_render_result_free(&rc);
    kt_render_result_free(&rg);
}

/* A GPU render of the shaped room stopped after a checkpoint and resumed
 * (on the GPU again: the options it carries) ends as the render never stopped. */
static void checkpoint_case(void)
{
    char ck[128], out[128];
    snprintf(ck, sizeof ck, "%s/stopped.ckpt", dir);
    snprintf(out, sizeof out, "%s/stopped.wav", dir);
    kt_render_result r0, r1, r2;
    int64_t n0 = 0, n1 = 0;
    double *full = render(sco_long, KT_DEVICE_GPU, KT_DOUBLE, &n0, &r0);
    render_stopped(out, ck, &r1);
    kt_checkpoint *c = NULL;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_checkpoint_open(ck, &c, &e);
    KT_CHECK(rc == 0, "checkpoint: open: %s", e.message);
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    if (rc == 0 && (rc = kt_checkpoint_performance(c, &perf, &err)) == 0) {
        kt_render_options opt;
        kt_checkpoint_options(c, &opt);
        opt.device = KT_DEVICE_GPU;
        rc = kt_render(&perf, kt_checkpoint_output(c), &opt, &r2, &err);
        KT_CHECK(rc == 0 && strncmp(r2.device, "GPU ", 4) == 0 && r2.steps == r2.total_steps,
                 "checkpoint: resumed on the GPU to the end (rc %d, %s): %s", rc, r2.device,
                 err.message);
        kt_render_result_free(&r2);
    }
    kt_performance_free(&perf);
    kt_checkpoint_close(c);
    double *resumed = rc == 0 ? kt_test_read_wav(out, &n1) : NULL;
    double d = full && resumed ? kt_test_relative_difference(resumed, n1, full, n0) : INFINITY;
    printf("checkpoint: stopped at step %lld of %lld and resumed on the GPU: %.3g relative to "
           "the unstopped render\n", (long long)r1.steps, (long long)r1.total_steps, d);
    KT_CHECK(d <= 1e-10 && r1.steps > 0 && r1.steps < r1.total_steps,
             "checkpoint: the resumed render differs by %.3g (stopped at %lld of %lld)", d,
             (long long)r1.steps, (long long)r1.total_steps);
    free(full);
    free(resumed);
    kt_render_result_free(&r0);
    kt_render_result_free(&r1);
}

int main(void)
{
    kt_gpu_info info;
    if (kt_cuda_devices(&info, 1) == 0 || info.compute_major < 9) {
        printf("test_gpu_shape: no GPU of compute capability 9.0 or newer, skipped\n");
        return 77;
    }
    step_case(KT_DOUBLE, 0.0, 96, "double, 2 grids");
    step_case(KT_DOUBLE, 0.0, 0, "double, 2 grids, no graphs");
    step_case(KT_SINGLE, 0.0, 96, "single, 2 grids");
    step_case(KT_DOUBLE, 2e-5, 96, "double, 3 grids (viscosity)");
    step_case(KT_SINGLE, 2e-5, 6, "single, 3 grids (viscosity)");
    energy_case();
    snprintf(dir, sizeof dir, "/tmp/kettle_gpu_shape_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    render_case(KT_DOUBLE, 1e-10);
    render_case(KT_SINGLE, 1e-4);
    checkpoint_case();
    kt_test_remove_dir(dir);
    return kt_test_finish("test_gpu_shape");
}
#endif
