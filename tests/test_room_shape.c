/* test_room_shape.c - rooms with solids inside (room/room_shape.c): the
 * discrete energy of a shaped rigid room constant to rounding; with lossy
 * solids, the energy plus what the solid faces dissipated (computed here
 * from the field and the grid, independently of the room's lists) constant
 * to rounding; solids at the box's edges ringing exactly as the smaller box
 * room; and the refusals (microphones, sources, paths and instruments inside
 * or beside a solid, bad solids). */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_physics.h"
#include "kt_test.h"

#include <stdlib.h>
#include <string.h>

static double share(int i, int n, int axis)
{
    if (i == 0)
        return 0.5;
    if (i == n - 1)
        return axis == 0 ? 0.5 : 1.0;
    return 1.0;
}

/* A stage on the floor against the walls x = 0 and y = 0 with a niche cut
 * into it, a pillar from floor to ceiling, and a balcony one node from the
 * wall x = 0 (the end nodes there keep a blocked inward leg, weighed 1/v).
 * The pillar is round when rigid, square when lossy: a cylinder's faces
 * have their loss scaled to its true area (room_shape.c), which the sums
 * here leave to the T60 test. */
static int hall_solids(const kt_room_params *p, double beta, kt_room_solid s[4])
{
    const double *L = p->size_m, Q = L[0] / 21;   /* the 22-node rooms below */
    s[0] = kt_test_box_solid(-1, -1, -1, 0.35 * L[0], 0.4 * L[1], 0.3 * L[2], beta, 0);
    s[1] = kt_test_box_solid(0.1 * L[0], 0.15 * L[1], -1, 0.2 * L[0], 0.25 * L[1], 0.2 * L[2],
                             0, 1);
    s[2] = beta == 0 ? kt_test_cylinder_solid(0.65 * L[0], 0.6 * L[1], -1, L[2] + 1,
                                              0.12 * L[0], 0, 0)
                     : kt_test_box_solid(0.55 * L[0], 0.5 * L[1], -1, 0.75 * L[0], 0.7 * L[1],
                                         L[2] + 1, beta, 0);
    s[3] = kt_test_box_solid(0.9 * Q, 0.7 * L[1], 0.6 * L[2], 0.3 * L[0], L[1] + 1, 0.8 * L[2],
                             beta, 0);
    return 4;
}

static kt_room *shaped_room(const kt_room_params *p, const kt_room_solid *s, int n)
{
    kt_room *room = NULL;
    kt_error err;
    int rc = kt_room_create(p, &room, &err), bad;
    KT_CHECK(rc == KT_OK, "create: %s", err.message);
    if (rc != KT_OK)
        exit(kt_test_finish("test_room_shape"));
    rc = kt_room_add_solids(room, s, n, &bad, &err);
    KT_CHECK(rc == KT_OK, "solids: %s (solid %d)", err.message, bad);
    const double src[3] = {0.55 * p->size_m[0], 0.3 * p->size_m[1], 0.6 * p->size_m[2]};
    /* a pulse and its negative: no net volume, so rounding stays at the field's level */
    rc = kt_room_add_impulse(room, src, 0.0, 1e-3, 1e-3, &err);
    KT_CHECK(rc == KT_OK, "impulse: %s", err.message);
    rc = kt_room_add_impulse(room, src, 1e-3, 1e-3, -1e-3, &err);
    KT_CHECK(rc == KT_OK, "impulse: %s", err.message);
    return room;
}

static void read_field(kt_room *room, double *f)
{
    const kt_room_grid *g = kt_room_get_grid(room);
    size_t plane = (size_t)g->nx * g->ny;
    double *layer = malloc(sizeof *layer * plane);
    for (int z = 0; z < g->nz; z++) {
        kt_room_read_layer(room, KT_NOW, z, 0, 0, g->nx, g->ny, layer);
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++)   /* the window is x-major */
                f[z * plane + (size_t)y * g->nx + x] = layer[(size_t)x * g->ny + y];
    }
    free(layer);
}

/* sum over air nodes of V_i lambda beta_i: the area of its faces on a solid
 * (the cross-section W of each leg from it into a solid), times beta lambda. */
static double *face_areas(kt_room *room)
{
    const kt_room_grid *g = kt_room_get_grid(room);
    const int n[3] = {g->nx, g->ny, g->nz};
    double *A = calloc((size_t)n[0] * n[1] * n[2], sizeof *A);
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++) {
                if (!kt_room_is_air(room, x, y, z))
                    continue;
                const int c[3] = {x, y, z};
                double v[3] = {share(x, n[0], 0), share(y, n[1], 1), share(z, n[2], 2)};
                double a = 0;
                for (int d = 0; d < 6; d++) {
                    int q[3] = {x, y, z};
                    q[d / 2] += d % 2 ? -1 : 1;
                    if (q[d / 2] < 0 || q[d / 2] >= n[d / 2] ||
                        kt_room_is_air(room, q[0], q[1], q[2]))
                        continue;
                    (void)c;
                    a += v[0] * v[1] * v[2] / v[d / 2];
                }
                A[((size_t)z * n[1] + y) * n[0] + x] = a;
            }
    return A;
}

/* Rigid and lossy solids: H (+ dissipated) constant to rounding. */
static void test_energy(double beta, int viscous)
{
    kt_room_params p;
    kt_test_node_box(&p, 22, 18, 14, 44100);
    if (viscous)
        p.viscosity_m = 2e-5;
    kt_room_solid s[4];
    int ns = hall_solids(&p, beta, s);
    kt_room *room = shaped_room(&p, s, ns);
    const kt_room_grid *g = kt_room_get_grid(room);
    KT_CHECK(kt_room_shape_nodes(room) > 500, "%lld list nodes", (long long)kt_room_shape_nodes(room));
    size_t N = (size_t)g->nx * g->ny * g->nz;
    double *f[3] = {calloc(N, sizeof(double)), calloc(N, sizeof(double)),
                    calloc(N, sizeof(double))};
    double *A = face_areas(room);
    const double rho = p.air_density_kg_per_m3, c = p.sound_speed_m_per_s;
    const double Q = g->spacing_m, k = g->time_step_s;
    const double Dw = rho * Q * Q * Q / (2 * c * c * k * k) * g->courant * beta;
    const int settle = 200, steps = 2500;
    double dissipated = 0, first = 0, lo = INFINITY, hi = -INFINITY, rise = -INFINITY, prev = 0;
    double min_h = INFINITY, solid_max = 0;
    kt_error err;
    for (int n = 0; n < steps; n++) {
        KT_CHECK(kt_room_step(room, &err) == KT_OK, "step: %s", err.message);
        double *t = f[2];
        f[2] = f[1], f[1] = f[0], f[0] = t;   /* f[0] Psi^{n+1}, f[2] Psi^{n-1} */
        read_field(room, f[0]);
        double h = kt_room_air_energy(room);
        if (n >= settle) {
            for (size_t i = 0; i < N; i++)
                if (A[i] > 0)
                    dissipated += Dw * A[i] * (f[0][i] - f[2][i]) * (f[0][i] - f[2][i]);
            double e = h + dissipated;
            if (n == settle)
                first = e;
            else
                rise = fmax(rise, (h - prev) / prev);
            lo = fmin(lo, e), hi = fmax(hi, e);
            min_h = fmin(min_h, h);
        }
        prev = h;
    }
    for (int z = 0; z < g->nz; z++)
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++)
                if (!kt_room_is_air(room, x, y, z))
                    solid_max = fmax(solid_max, fabs(f[0][((size_t)z * g->ny + y) * g->nx + x]));
    double spread = (hi - lo) / first;
    printf("beta %g%s: energy (+ dissipated) spread %.3g over %d steps, energy fell to %.3g "
           "of its start\n", beta, viscous ? " viscous" : "", spread, steps - settle,
           min_h / first);
    KT_CHECK(solid_max == 0, "the solid's nodes hold %g", solid_max);
    if (viscous) {
        KT_CHECK(rise <= 1e-13, "viscous: the energy rose by %g of itself in a step", rise);
        KT_CHECK(min_h < 0.99 * first, "viscous: the energy fell only to %g", min_h / first);
    } else {
        KT_CHECK(spread < 1e-12, "energy + dissipated spread %g", spread);
        if (beta > 0)
            KT_CHECK(min_h < 0.5 * first, "the lossy solids took too little: %g", min_h / first);
    }
    for (int i = 0; i < 3; i++)
        free(f[i]);
    free(A);
    kt_room_destroy(room);
}

/* Solids filling the box beyond y = (my - 1/2) Q and z = (mz - 1/2) Q: the
 * air is the my x mz box room whose far walls lie half a cell beyond its end
 * nodes (v = 1), and both must ring alike to rounding, walls and solids of
 * the same beta, the room's (beta < 0 on the solids). */
static void test_edge_box(double beta, int viscous)
{
    const int nx = 16, ny = 14, nz = 13, my = 10, mz = 9, steps = 1200;
    kt_room_params big, small;
    kt_test_node_box(&big, nx, ny, nz, 44100);
    kt_test_node_box(&small, nx, my, mz, 44100);
    big.wall_beta = small.wall_beta = beta;
    big.viscosity_m = small.viscosity_m = viscous ? 2e-5 : 0;
    kt_room *room[2];
    kt_error err;
    int rc = kt_room_create(&big, &room[0], &err);
    KT_CHECK(rc == KT_OK, "%s", err.message);
    rc = kt_room_create(&small, &room[1], &err);
    KT_CHECK(rc == KT_OK, "%s", err.message);
    double Q = kt_room_get_grid(room[0])->spacing_m;
    KT_CHECK(Q == kt_room_get_grid(room[1])->spacing_m, "spacings differ");
    kt_room_solid s[2] = {kt_test_box_solid(-1, (my - 0.5) * Q, -1, 9, 9, 9, -1, 0),
                          kt_test_box_solid(-1, -1, (mz - 0.5) * Q, 9, 9, 9, -1, 0)};
    rc = kt_room_add_solids(room[0], s, 2, NULL, &err);
    KT_CHECK(rc == KT_OK, "%s", err.message);
    const double src[3] = {4.2 * Q, 3.1 * Q, 2.6 * Q};
    double energy[2];
    const double mic[2][3] = {{(nx - 1.3) * Q, (my - 1.2) * Q, (mz - 1.4) * Q},
                              {0.4 * Q, 6.3 * Q, (mz - 1.1) * Q}};
    for (int r = 0; r < 2; r++) {
        kt_room_add_impulse(room[r], src, 0.0, 1e-3, 1e-3, &err);
        kt_room_add_impulse(room[r], src, 1e-3, 1e-3, -1e-3, &err);
        for (int m = 0; m < 2; m++)
            KT_CHECK(kt_room_add_mic(room[r], m ? "b" : "a", mic[m], &err) >= 0, "%s",
                     err.message);
        /* the energies early, before the lossy rooms have decayed to rounding */
        KT_CHECK(kt_room_run(room[r], 300, NULL, NULL, &err) == KT_OK, "%s", err.message);
        energy[r] = kt_room_air_energy(room[r]);
        KT_CHECK(kt_room_run(room[r], steps - 300, NULL, NULL, &err) == KT_OK, "%s", err.message);
    }
    double worst = 0;
    for (int m = 0; m < 2; m++) {
        int64_t n0, n1;
        const double *a = kt_room_mic_signal(room[0], m, &n0), *b = kt_room_mic_signal(room[1], m, &n1);
        double d = kt_test_max_diff(a, b, (int)n0) / kt_test_max_abs(b, (int)n1);
        worst = fmax(worst, d);
    }
    double e0 = energy[0], e1 = energy[1];
    printf("edge solids, beta %g%s: microphones differ by %.3g of their peak, energies by "
           "%.3g\n", beta, viscous ? " viscous" : "", worst, fabs(e0 - e1) / e1);
    KT_CHECK(worst < 1e-11, "the shaped room and the smaller box differ by %g", worst);
    KT_CHECK_REL(e0, e1, 1e-11, 0);
    kt_room_destroy(room[0]);
    kt_room_destroy(room[1]);
}

/* The 12 triangles of the box of half-sizes h about c, turned by angle
 * `turn` (radians) about the vertical through c, outward-facing. */
static void box_mesh(const double c[3], const double h[3], double turn, double xyz[108])
{
    static const int face[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                   {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    double v[8][3];
    for (int i = 0; i < 8; i++) {
        double x = (i & 1 ? 1 : -1) * h[0], y = (i & 2 ? 1 : -1) * h[1];
        v[i][0] = c[0] + x * cos(turn) - y * sin(turn);
        v[i][1] = c[1] + x * sin(turn) + y * cos(turn);
        v[i][2] = c[2] + (i & 4 ? 1 : -1) * h[2];
    }
    for (int f = 0; f < 6; f++) {
        const int tri[2][3] = {{face[f][0], face[f][1], face[f][2]},
                               {face[f][0], face[f][2], face[f][3]}};
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 3; k++)
                memcpy(xyz + 18 * f + 9 * t + 3 * k, v[tri[t][k]], 3 * sizeof(double));
    }
}

static kt_room_solid mesh_solid(const double *xyz, int triangles, double beta)
{
    kt_room_solid s;
    memset(&s, 0, sizeof s);
    s.kind = KT_SOLID_MESH;
    s.mesh_xyz = xyz;
    s.mesh_triangles = triangles;
    s.beta = beta;
    return s;
}

/* A box as a mesh voxelises as the same box written as one, corners on
 * nodes (a node on the surface is inside) or between them, also turned a
 * quarter round; a box turned 30 degrees holds the nodes it should; a mesh
 * with a triangle missing is refused with the edge where it leaks. */
static void test_mesh(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 26, 22, 18, 44100);
    kt_room *room;
    kt_error err;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    const double Q = kt_room_get_grid(room)->spacing_m;
    const kt_room_grid grid = *kt_room_get_grid(room), *g = &grid;   /* the rooms below alike */
    double xyz[3][108];
    const double c0[3] = {9 * Q, 8 * Q, 7 * Q}, h0[3] = {4 * Q, 3 * Q, 5 * Q};
    const double c1[3] = {18.3 * Q, 13.6 * Q, 9.2 * Q}, h1[3] = {2.55 * Q, 4.3 * Q, 3.1 * Q};
    const double c2[3] = {18.3 * Q, 5.1 * Q, 8.7 * Q}, h2[3] = {4.3 * Q, 2.55 * Q, 3.1 * Q};
    box_mesh(c0, h0, 0, xyz[0]);
    box_mesh(c1, h1, 0, xyz[1]);
    box_mesh(c2, h2, KT_PI / 2, xyz[2]);     /* turned: 2.55 Q along x, 4.3 Q along y */
    kt_room_solid s[3] = {mesh_solid(xyz[0], 12, 0.1), mesh_solid(xyz[1], 12, 0.1),
                          mesh_solid(xyz[2], 12, 0.1)};
    KT_CHECK(kt_room_add_solids(room, s, 3, NULL, &err) == KT_OK, "%s", err.message);
    kt_room_solid b[3] = {
        kt_test_box_solid(c0[0] - h0[0], c0[1] - h0[1], c0[2] - h0[2], c0[0] + h0[0],
                          c0[1] + h0[1], c0[2] + h0[2], 0.1, 0),
        kt_test_box_solid(c1[0] - h1[0], c1[1] - h1[1], c1[2] - h1[2], c1[0] + h1[0],
                          c1[1] + h1[1], c1[2] + h1[2], 0.1, 0),
        kt_test_box_solid(c2[0] - h2[1], c2[1] - h2[0], c2[2] - h2[2], c2[0] + h2[1],
                          c2[1] + h2[0], c2[2] + h2[2], 0.1, 0)};
    int differ = 0, solid = 0;
    for (int z = 0; z < g->nz; z++)
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++) {
                const double q[3] = {x * Q, y * Q, z * Q};
                int in_box = 0;
                for (int k = 0; k < 3; k++) {
                    int in = 1;
                    for (int d = 0; d < 3; d++)
                        in &= q[d] >= b[k].lo_m[d] - 1e-9 * Q && q[d] <= b[k].hi_m[d] + 1e-9 * Q;
                    in_box |= in;
                }
                differ += in_box == kt_room_is_air(room, x, y, z);
                solid += in_box;
            }
    KT_CHECK(differ == 0 && solid > 1000, "meshes and boxes differ at %d of %d solid nodes",
             differ, solid);
    kt_room_destroy(room);

    /* a box turned 30 degrees: the nodes inside it, off its surface */
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    const double c3[3] = {12.2 * Q, 10.7 * Q, 8.4 * Q}, h3[3] = {6.3 * Q, 3.4 * Q, 4.6 * Q};
    box_mesh(c3, h3, KT_PI / 6, xyz[0]);
    s[0] = mesh_solid(xyz[0], 12, 0);
    KT_CHECK(kt_room_add_solids(room, s, 1, NULL, &err) == KT_OK, "%s", err.message);
    differ = solid = 0;
    for (int z = 0; z < g->nz; z++)
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++) {
                double dx = x * Q - c3[0], dy = y * Q - c3[1], dz = z * Q - c3[2];
                double u = dx * cos(KT_PI / 6) + dy * sin(KT_PI / 6);
                double w = -dx * sin(KT_PI / 6) + dy * cos(KT_PI / 6);
                int in = fabs(u) <= h3[0] && fabs(w) <= h3[1] && fabs(dz) <= h3[2];
                differ += in == kt_room_is_air(room, x, y, z);
                solid += in;
            }
    KT_CHECK(differ == 0 && solid > 500, "the turned box differs at %d of %d nodes", differ,
             solid);
    /* whole rows (the snapshots') as node by node */
    uint8_t air[64];
    differ = 0;
    for (int z = 0; z < g->nz; z++)
        for (int y = 0; y < g->ny; y++) {
            KT_CHECK(kt_room_air_row(room, y, z, air) == KT_OK, "row %d %d", y, z);
            for (int x = 0; x < g->nx; x++)
                differ += air[x] != kt_room_is_air(room, x, y, z);
        }
    KT_CHECK(differ == 0, "kt_room_air_row differs from kt_room_is_air at %d nodes", differ);
    KT_CHECK(kt_room_air_row(room, g->ny, 0, air) == KT_EINVAL, "a row beyond the grid");
    kt_room_destroy(room);

    /* one triangle missing: refused, naming an edge of the hole */
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    box_mesh(c0, h0, 0, xyz[0]);
    s[0] = mesh_solid(xyz[0], 11, 0);
    snprintf(s[0].name, sizeof s[0].name, "the mesh 'hall.obj'");
    int bad, rc = kt_room_add_solids(room, s, 1, &bad, &err);
    KT_CHECK(rc == KT_EINVAL && bad == 0 && strstr(err.message, "hall.obj' is not a closed") &&
                 strstr(err.message, "borders 1 triangle"), "%s", err.message);
    kt_room_destroy(room);
}

static int no_process(void *self, kt_room *room, kt_error *err)
{
    (void)self, (void)room, (void)err;
    return KT_OK;
}

static void test_refusals(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 22, 18, 14, 44100);
    kt_room_solid s[4];
    int ns = hall_solids(&p, 0, s), bad;
    snprintf(s[0].name, sizeof s[0].name, "the stage");
    const double *L = p.size_m;
    kt_room *room;
    kt_error err;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    kt_room_solid thin = kt_test_box_solid(0.5 * L[0], 0.5 * L[1], 0.5 * L[2], 0.5 * L[0] + 1e-4,
                                           0.9 * L[1], 0.9 * L[2], 0, 0);
    kt_room_solid two[2] = {s[0], thin};
    int rc = kt_room_add_solids(room, two, 2, &bad, &err);
    KT_CHECK(rc == KT_EINVAL && bad == 1 && strstr(err.message, "no node"), "%d %d %s", rc, bad,
             err.message);
    two[1] = kt_test_box_solid(1, 1, 1, 0.5, 2, 2, 0, 0);
    rc = kt_room_add_solids(room, two, 2, &bad, &err);
    KT_CHECK(rc == KT_EINVAL && bad == 1 && strstr(err.message, "below"), "%s", err.message);
    KT_CHECK(kt_room_add_solids(room, s, ns, &bad, &err) == KT_OK, "%s", err.message);
    KT_CHECK(kt_room_add_solids(room, s, ns, &bad, &err) < 0, "solids added twice");
    const double in_stage[3] = {0.3 * L[0], 0.3 * L[1], 0.1 * L[2]};
    rc = kt_room_add_mic(room, "m", in_stage, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "the stage"), "%s", err.message);
    double Q = kt_room_get_grid(room)->spacing_m;
    const double beside[3] = {0.3 * L[0], 0.3 * L[1], 0.3 * L[2] + 0.4 * Q};
    rc = kt_room_add_mic(room, "m", beside, &err);
    KT_CHECK(rc == KT_EINVAL, "a microphone within a cell of the stage was taken");
    const double in_niche[3] = {0.15 * L[0], 0.2 * L[1], 0.1 * L[2]};
    KT_CHECK(kt_room_add_mic(room, "niche", in_niche, &err) >= 0, "%s", err.message);
    rc = kt_room_add_impulse(room, in_stage, 0, 1e-3, 1, &err);
    KT_CHECK(rc == KT_EINVAL, "a source inside the stage was taken");
    const double a[3] = {0.5 * L[0], 0.6 * L[1], 0.5 * L[2]}, b[3] = {0.8 * L[0], 0.6 * L[1],
                                                                      0.5 * L[2]};
    int m = kt_room_add_mic(room, "walker", a, &err);
    KT_CHECK(kt_room_mic_waypoint(room, m, 0, a, &err) == KT_OK, "%s", err.message);
    rc = kt_room_mic_waypoint(room, m, 1, b, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "solid 3"), "path through the pillar: %s",
             err.message);
    /* an instrument whose box comes within a node of the pillar */
    kt_instrument ins;
    memset(&ins, 0, sizeof ins);
    ins.kind = "test";
    ins.process = no_process;
    int px = (int)(0.65 * L[0] / Q), r = (int)(0.12 * L[0] / Q);
    ins.box_lo[0] = px + r + 2, ins.box_hi[0] = px + r + 4;
    ins.box_lo[1] = ins.box_hi[1] = (int)(0.6 * L[1] / Q);
    ins.box_lo[2] = 5, ins.box_hi[2] = 7;
    rc = kt_room_add_instrument(room, &ins, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "solid 3"), "%s", err.message);
    ins.box_lo[0] = px + r + 3;
    rc = kt_room_add_instrument(room, &ins, &err);
    KT_CHECK(rc == KT_OK, "an instrument two nodes from the pillar: %s", err.message);
    kt_room_destroy(room);

    /* absorbing walls own two layers; solids there are refused */
    p.wall_model = KT_WALL_ENGQUIST_MAJDA;
    p.wall_beta = 0;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    rc = kt_room_add_solids(room, s, ns, &bad, &err);
    KT_CHECK(rc == KT_ENOTSUP && bad == 0 && strstr(err.message, "absorbing"), "%s", err.message);
    kt_room_destroy(room);
    /* other schemes */
    p.wall_model = KT_WALL_LOSSY;
    p.scheme = KT_SCHEME_IWB27;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    rc = kt_room_add_solids(room, s, ns, &bad, &err);
    KT_CHECK(rc == KT_ENOTSUP && strstr(err.message, "7-point"), "%s", err.message);
    kt_room_destroy(room);
}

int main(void)
{
    test_energy(0, 0);
    test_energy(0.05, 0);
    test_energy(0.05, 1);
    test_edge_box(0, 0);
    test_edge_box(0.04, 0);
    test_edge_box(0.04, 1);
    test_refusals();
    test_mesh();
    return kt_test_finish("test_room_shape");
}
