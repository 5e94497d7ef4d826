/* test_room_energy.c - the room's discrete energy (design note 8): constant
 * to rounding with rigid walls and no viscosity, also around a rigid cube
 * registered as an instrument's boundary list; never increasing with lossy
 * walls or viscosity.  A wide room's banded sweep against the generic
 * stencil code.  Also the instrument registration checks. */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

static int sanitized(void) { return getenv("KETTLE_TEST_SANITIZED") != NULL; }

static kt_room *make_room(const kt_room_params *p)
{
    kt_room *room = NULL;
    kt_error err;
    int rc = kt_room_create(p, &room, &err);
    KT_CHECK(rc == KT_OK, "create: %s", err.message);
    if (rc != KT_OK)
        exit(kt_test_finish("test_room_energy"));
    const double src[3] = {0.31 * p->size_m[0], 0.42 * p->size_m[1], 0.57 * p->size_m[2]};
    /* A pulse and its negative: no net volume injected, so the rigid box's
     * uniform mode does not drift and rounding stays at the level of the field. */
    rc = kt_room_add_impulse(room, src, 0.0, 1e-3, 1e-3, &err);
    KT_CHECK(rc == KT_OK, "impulse: %s", err.message);
    rc = kt_room_add_impulse(room, src, 1e-3, 1e-3, -1e-3, &err);
    KT_CHECK(rc == KT_OK, "impulse: %s", err.message);
    return room;
}

/* Steps the room; returns the largest relative spread of the energy after
 * the source ended (settle steps), and the largest step-to-step rise. */
static void run_energy(kt_room *room, int steps, int settle, double *spread, double *rise,
                       double *first, double *last)
{
    kt_error err;
    double lo = INFINITY, hi = -INFINITY, prev = 0, max_rise = -INFINITY;
    for (int s = 0; s < steps; s++) {
        int rc = kt_room_step(room, &err);
        if (rc != KT_OK) {
            KT_CHECK(rc == KT_OK, "step: %s", err.message);
            break;
        }
        double e = kt_room_total_energy(room);
        if (s >= settle) {
            if (s == settle)
                *first = e;
            else
                max_rise = fmax(max_rise, (e - prev) / prev);
            lo = fmin(lo, e);
            hi = fmax(hi, e);
        }
        prev = e;
    }
    *spread = (hi - lo) / hi;
    *rise = max_rise;
    *last = prev;
}

static void test_lossless(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 20, 16, 12, 44100);
    kt_room *room = make_room(&p);
    const kt_room_grid *g = kt_room_get_grid(room);
    KT_CHECK(g->nx == 20 && g->ny == 16 && g->nz == 12, "grid %d x %d x %d", g->nx, g->ny, g->nz);
    double spread, rise, first, last;
    run_energy(room, sanitized() ? 2000 : 10000, 120, &spread, &rise, &first, &last);
    KT_CHECK(first > 0, "energy after the impulse: %g J", first);
    KT_CHECK(spread < 1e-12, "rigid lossless energy spread %.3g", spread);
    printf("lossless: H = %.6e J, relative spread %.2e\n", first, spread);
    kt_room_destroy(room);
}

/* A room whose planes exceed 512 KiB (double): the 7-point sweep runs in
 * row bands down each chunk of planes (room_sweep_impl.h).  The same scheme
 * through the generic stencil code (compact R = 1: the same 7 points and
 * weights, whole planes, another order of summation) must give the same
 * field to rounding in every layer; a band that skipped or repeated a row
 * would not (energy alone cannot tell: a frozen row drops out of the
 * balance). */
static void test_wide_banded(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 300, 240, 6, 44100);
    p.nthreads = 2;
    kt_room *banded = make_room(&p);
    p.scheme = KT_SCHEME_STENCIL;
    p.stencil_family = KT_STENCIL_COMPACT;
    p.stencil_reach = 1;
    kt_room *generic = make_room(&p);
    const kt_room_grid *ga = kt_room_get_grid(banded), *gb = kt_room_get_grid(generic);
    KT_CHECK(ga->nx == gb->nx && ga->ny == gb->ny && ga->nz == gb->nz &&
                 ga->spacing_m == gb->spacing_m,
             "the two schemes' grids differ");
    kt_error err;
    const int steps = sanitized() ? 100 : 300;
    for (int s = 0; s < steps; s++)
        if (kt_room_step(banded, &err) < 0 || kt_room_step(generic, &err) < 0) {
            KT_CHECK(0, "step %d: %s", s, err.message);
            break;
        }
    const size_t n = (size_t)ga->nx * ga->ny;
    double *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb), peak = 0, diff = 0;
    for (int z = 0; z < ga->nz && la && lb; z++) {
        kt_room_read_layer(banded, KT_NOW, z, 0, 0, ga->nx, ga->ny, la);
        kt_room_read_layer(generic, KT_NOW, z, 0, 0, ga->nx, ga->ny, lb);
        for (size_t i = 0; i < n; i++) {
            peak = fmax(peak, fabs(la[i]));
            diff = fmax(diff, fabs(la[i] - lb[i]));
        }
    }
    KT_CHECK(peak > 0, "the wide room's field did not move");
    KT_CHECK(diff <= 1e-10 * peak, "banded 7-point sweep differs from the generic stencil by %.3g "
             "of the peak", diff / peak);
    printf("wide room 300 x 240 x 6: banded 7-point sweep vs generic stencil, %d steps, "
           "%.2e of the peak\n", steps, diff / peak);
    free(la);
    free(lb);
    kt_room_destroy(banded);
    kt_room_destroy(generic);
}

static void test_lossy_walls(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 20, 16, 12, 44100);
    p.wall_beta = 0.2;
    kt_room *room = make_room(&p);
    double spread, rise, first, last;
    run_energy(room, sanitized() ? 1500 : 4000, 120, &spread, &rise, &first, &last);
    KT_CHECK(rise <= 1e-14, "lossy walls: energy rose by %.3g relative", rise);
    KT_CHECK(last < 0.1 * first, "lossy walls should drain energy: %g -> %g J", first, last);
    printf("lossy walls: H %.4e -> %.4e J, largest rise %.2e\n", first, last, rise);
    kt_room_destroy(room);
}

static void test_viscosity(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 20, 16, 12, 44100);
    p.viscosity_m = 2e-5; /* far above air's, so the loss shows in a short run */
    kt_room *room = make_room(&p);
    double spread, rise, first, last;
    run_energy(room, sanitized() ? 1500 : 4000, 120, &spread, &rise, &first, &last);
    KT_CHECK(rise <= 1e-14, "viscosity: energy rose by %.3g relative", rise);
    KT_CHECK(last < 0.97 * first, "viscosity should drain energy: %g -> %g J", first, last);
    printf("viscosity: H %.4e -> %.4e J, largest rise %.2e\n", first, last, rise);
    kt_room_destroy(room);
}

/* ---- a fake instrument: a closed rigid cube of nodes lo..hi ---- */
typedef struct cube {
    kt_instrument ins;
    int64_t *node;
    uint8_t *open;
} cube;

static int inside(const int p[3], const int lo[3], const int hi[3])
{
    return p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1] && p[2] >= lo[2] &&
           p[2] <= hi[2];
}

/* Every node with a leg crossing the cube's surface, inside or outside it. */
static void build_cube(cube *c, const kt_room_grid *g, const int lo[3], const int hi[3])
{
    static const int dir[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    memset(c, 0, sizeof *c);
    c->ins.kind = "cube";
    strcpy(c->ins.name, "test cube");
    size_t cap = (size_t)g->nx * g->ny * g->nz;
    c->node = malloc(cap * sizeof *c->node);
    c->open = malloc(cap);
    int n = 0;
    for (int z = 0; z < g->nz; z++)
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++) {
                int p[3] = {x, y, z}, in = inside(p, lo, hi);
                uint8_t open = 0;
                for (int d = 0; d < 6; d++) {
                    int q[3] = {x + dir[d][0], y + dir[d][1], z + dir[d][2]};
                    if (inside(q, lo, hi) == in)
                        open |= (uint8_t)(1 << d);
                }
                if (open != KT_LEG_ALL) {
                    c->node[n] = ((int64_t)z * g->ny + y) * g->nx + x;
                    c->open[n++] = open;
                }
            }
    for (int d = 0; d < 3; d++) {
        c->ins.box_lo[d] = lo[d] - 1;
        c->ins.box_hi[d] = hi[d] + 1;
    }
    c->ins.boundary_node = c->node;
    c->ins.boundary_open = c->open;
    c->ins.boundary_count = n;
}

static void free_cube(cube *c)
{
    free(c->node);
    free(c->open);
}

static void test_cube(int viscous)
{
    kt_room_params p;
    kt_test_node_box(&p, 20, 16, 12, 44100);
    p.viscosity_m = viscous ? 2e-5 : 0;
    kt_room *room = make_room(&p), *plain = make_room(&p);
    const kt_room_grid *g = kt_room_get_grid(room);
    const int lo[3] = {8, 6, 5}, hi[3] = {12, 10, 8};
    cube c;
    build_cube(&c, g, lo, hi);
    kt_error err;
    int rc = kt_room_add_instrument(room, &c.ins, &err);
    KT_CHECK(rc == KT_OK, "cube: %s", err.message);
    const double mic[3] = {0.7 * p.size_m[0], 0.3 * p.size_m[1], 0.4 * p.size_m[2]};
    kt_room_add_mic(room, "m", mic, &err);
    kt_room_add_mic(plain, "m", mic, &err);
    double spread, rise, first, last, s2, r2, f2, l2;
    int steps = sanitized() ? 1500 : 5000;
    run_energy(room, steps, 120, &spread, &rise, &first, &last);
    run_energy(plain, steps, 120, &s2, &r2, &f2, &l2);
    if (!viscous) {
        KT_CHECK(spread < 1e-12, "energy around a rigid cube: spread %.3g", spread);
        printf("cube: %d list rows, energy spread %.2e\n", c.ins.boundary_count, spread);
    } else {
        KT_CHECK(rise <= 1e-14, "viscous energy around a cube rose by %.3g", rise);
        printf("cube with viscosity: largest rise %.2e\n", rise);
    }
    /* The cube must scatter (the signal differs) and keep its inside silent. */
    int64_t n1, n2;
    const double *a = kt_room_mic_signal(room, 0, &n1), *b = kt_room_mic_signal(plain, 0, &n2);
    double diff = 0, ref = 0;
    for (int64_t i = 0; i < n1 && i < n2; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        ref = fmax(ref, fabs(b[i]));
    }
    KT_CHECK(diff > 0.05 * ref, "the cube changed the mic signal by only %g of %g", diff, ref);
    double inner[5 * 5], outer[5 * 5], in_max = 0, out_max = 0;
    for (int z = lo[2]; z <= hi[2]; z++) {
        kt_room_read_layer(room, KT_NOW, z, lo[0], lo[1], 5, 5, inner);
        kt_room_read_layer(room, KT_NOW, z, 2, 2, 5, 5, outer);
        for (int i = 0; i < 25; i++) {
            in_max = fmax(in_max, fabs(inner[i]));
            out_max = fmax(out_max, fabs(outer[i]));
        }
    }
    KT_CHECK(out_max > 0 && in_max < 1e-9 * out_max, "inside the cube %g, outside %g", in_max,
             out_max);
    kt_room_destroy(room);
    kt_room_destroy(plain);
    free_cube(&c);
}

static void test_registration_checks(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 20, 16, 12, 44100);
    kt_room *room = make_room(&p);
    const kt_room_grid *g = kt_room_get_grid(room);
    kt_error err;
    cube a, b, w;
    const int lo[3] = {3, 3, 3}, hi[3] = {6, 6, 6};
    build_cube(&a, g, lo, hi);
    KT_CHECK(kt_room_add_instrument(room, &a.ins, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_instrument(room, &a.ins, &err) == KT_EINVAL, "added twice");
    const int lo2[3] = {7, 3, 3}, hi2[3] = {9, 6, 6}; /* its box touches a's */
    build_cube(&b, g, lo2, hi2);
    int rc = kt_room_add_instrument(room, &b.ins, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "intersects"), "overlap: %s", err.message);
    const int lo3[3] = {14, 10, 1}, hi3[3] = {16, 12, 3}; /* box reaches the floor z = 0 */
    build_cube(&w, g, lo3, hi3);
    rc = kt_room_add_instrument(room, &w.ins, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "wall"), "wall: %s", err.message);
    /* A leg blocked from one end only would not remove an edge: refused. */
    const int lo4[3] = {14, 10, 3}, hi4[3] = {16, 12, 5};
    free_cube(&w);
    build_cube(&w, g, lo4, hi4);
    w.open[0] |= (uint8_t)(~w.open[0] & KT_LEG_ALL);
    rc = kt_room_add_instrument(room, &w.ins, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "does not list"), "asymmetric: %s",
             err.message);
    KT_CHECK(kt_room_remove_instrument(room, &a.ins) == KT_OK, "remove");
    KT_CHECK(kt_room_remove_instrument(room, &a.ins) == KT_EINVAL, "removed twice");
    rc = kt_room_add_instrument(room, &b.ins, &err);
    KT_CHECK(rc == KT_OK, "after removal: %s", err.message);
    kt_room_remove_instrument(room, &b.ins);
    kt_room_destroy(room);
    free_cube(&a);
    free_cube(&b);
    free_cube(&w);
}

int main(void)
{
    test_lossless();
    test_wide_banded();
    test_lossy_walls();
    test_viscosity();
    test_cube(0);
    test_cube(1);
    test_registration_checks();
    return kt_test_finish("test_room_energy");
}
