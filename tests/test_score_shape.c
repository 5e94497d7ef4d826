/* test_score_shape.c - the orchestra's `solid` and `hole` statements: what
 * they parse to, errors at file:line:col for bad ones, and the render's
 * refusals (a microphone in a solid, a solid with no node) pointing at the
 * statement (GPU renders of solids: test_gpu_shape). */
#include "kt_render.h"
#include "kt_score.h"
#include "kt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAD "sr = 8000\nroom = 6 4 3\nbeta = 0.05\nmic main 3 1 1.5\n"
#define SCO "f 0 0.01\ne\n"

static int parse(kt_performance *perf, const char *orc, kt_score_error *err)
{
    memset(err, 0, sizeof *err);
    kt_performance_init(perf);
    return kt_score_parse(perf, "t.orc", orc, "t.sco", SCO, err);
}

static void test_parsed(void)
{
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, HEAD "solid stage box 2 4 0.6  0 0 0  absorption 0.19\n"
                               "hole box 0.5 1.5 0, 1.2 2.5 40cm\n"
                               "solid cylinder 4 2 0 3 30cm beta 0\n"
                               "solid balcony box 4.8 0 1.8 6 4 2.1\n", &err);
    KT_CHECK(rc == 0, "%s (line %d)", err.message, err.line);
    KT_CHECK(perf.solid_count == 4, "%d solids", perf.solid_count);
    if (rc == 0 && perf.solid_count == 4) {
        const kt_room_solid *s = &perf.solids[0].solid;
        KT_CHECK(s->kind == KT_SOLID_BOX && !s->hole && s->lo_m[0] == 0 && s->hi_m[0] == 2 &&
                 s->hi_m[2] == 0.6, "stage %g..%g", s->lo_m[0], s->hi_m[0]);
        /* absorption 0.19 at normal incidence: R = 0.9 = (1 - 2b)/(1 + 2b) */
        KT_CHECK_REL(s->beta, 0.1 / 3.8, 1e-12, 0);
        KT_CHECK(strcmp(s->name, "solid 'stage'") == 0, "name %s", s->name);
        s = &perf.solids[1].solid;
        KT_CHECK(s->hole && s->hi_m[2] == 0.4 && s->beta < 0 &&
                     strcmp(s->name, "the hole of line 6") == 0, "hole: %s", s->name);
        s = &perf.solids[2].solid;
        KT_CHECK(s->kind == KT_SOLID_CYLINDER && s->radius_m == 0.3 && s->centre_m[0] == 4 &&
                 s->hi_m[2] == 3 && s->beta == 0, "pillar");
        KT_CHECK(perf.solids[3].loc.line == 8 && perf.solids[3].solid.beta < 0, "balcony");
    }
    kt_performance_free(&perf);
}

static void expect_error(const char *line, int col, const char *what)
{
    char orc[512];
    snprintf(orc, sizeof orc, HEAD "%s\n", line);
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, orc, &err);
    KT_CHECK(rc < 0 && err.line == 5 && err.col == col && strstr(err.message, what),
             "'%s': rc %d at %d:%d: %s", line, rc, err.line, err.col, err.message);
    kt_performance_free(&perf);
}

static void test_errors(void)
{
    expect_error("solid box 0 0 0 2 4", 20, "missing the z coordinate of the box's opposite");
    expect_error("solid cone 1 1 1", 12, "unknown solid shape '1' after the name 'cone'");
    expect_error("hole box 0 0 0 1 1 1 beta 0.1", 22, "a hole has no surface");
    expect_error("solid cylinder 1 1 2 1 0.3", 22, "top (1 m) must be above");
    expect_error("solid cylinder 1 1 0 1 0", 24, "radius must be positive");
    expect_error("solid box 0 0 0 0 1 1", 7, "flat along x");
    expect_error("solid box 0 0 0 1 1 1 beta 0.7", 28, "beta must lie in 0..0.5");
    expect_error("solid box 0 0 0 1 1 1 absorption 2", 34, "absorption must lie in 0..1");
    expect_error("solid box 0 0 0 1 1 1 0.2", 23, "");
    expect_error("solid", 6, "missing the solid's shape");
}

/* The room refuses; the render says where. */
static void expect_render_error(const char *extra, int line, int col, const char *what,
                                kt_device device)
{
    char orc[512];
    snprintf(orc, sizeof orc, HEAD "solid stage box 0 0 0 2 4 0.6\n%s\n", extra);
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, orc, &err);
    KT_CHECK(rc == 0, "%s", err.message);
    kt_render_options opt;
    kt_render_options_default(&opt);
    opt.nthreads = 1;
    opt.tail_s = 0;
    opt.device = device;
    kt_render_result res;
    char path[64];
    snprintf(path, sizeof path, "/tmp/kt_shape_%d.wav", (int)getpid());
    rc = kt_render(&perf, path, &opt, &res, &err);
    KT_CHECK(rc < 0 && err.line == line && err.col == col && strstr(err.message, what),
             "'%s': rc %d at %d:%d: %s", extra, rc, err.line, err.col, err.message);
    kt_render_result_free(&res);
    kt_performance_free(&perf);
    remove(path);
}

static void test_render_refusals(void)
{
    expect_render_error("mic inside 1 1 0.3", 6, 5, "lies inside solid 'stage'", KT_DEVICE_CPU);
    expect_render_error("mic near 1 1 0.63", 6, 5, "within a grid cell", KT_DEVICE_CPU);
    expect_render_error("impulse 1 1 0.3", 6, 1, "solid 'stage'", KT_DEVICE_CPU);
    expect_render_error("solid thin box 3.41 1 1 3.44 2 2", 6, 1,
                        "solid 'thin' contains no node", KT_DEVICE_CPU);
}

/* A unit cube as OBJ (a face's second triangle left out: leaky). */
static void write_cube(const char *path, int leaky)
{
    FILE *f = fopen(path, "w");
    KT_CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    for (int i = 0; i < 8; i++)
        fprintf(f, "v %d %d %d\n", i & 1, (i >> 1) & 1, i >> 2);
    static const int tri[12][3] = {{1, 4, 2}, {1, 3, 4}, {5, 6, 8}, {5, 8, 7}, {1, 2, 6},
                                   {1, 6, 5}, {2, 4, 8}, {2, 8, 6}, {4, 3, 7}, {4, 7, 8},
                                   {3, 1, 5}, {3, 5, 7}};
    for (int t = 0; t < 12; t++)
        if (!(leaky && t == 7))
            fprintf(f, "f %d %d %d\n", tri[t][0], tri[t][1], tri[t][2]);
    fclose(f);
}

/* solid ... mesh "FILE" scale S at X Y Z: read with libassimp, the room
 * checks that it is closed. */
static void test_mesh(void)
{
    char cube[64], leak[64], orc[512];
    snprintf(cube, sizeof cube, "/tmp/kt_cube_%d.obj", (int)getpid());
    snprintf(leak, sizeof leak, "/tmp/kt_leak_%d.obj", (int)getpid());
    write_cube(cube, 0);
    write_cube(leak, 1);
    snprintf(orc, sizeof orc, HEAD "solid block mesh \"%s\" scale 1.5 at 0.5 0.2 0 beta 0.1\n",
             cube);
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, orc, &err);
    if (rc < 0 && strstr(err.message, "no mesh reader")) {
        printf("built without libassimp: meshes skipped (%s)\n", err.message);
        kt_performance_free(&perf);
        remove(cube);
        remove(leak);
        return;
    }
    KT_CHECK(rc == 0 && perf.solid_count == 1, "%s", err.message);
    if (rc == 0) {
        const kt_room_solid *s = &perf.solids[0].solid;
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int i = 0; i < 3 * s->mesh_triangles; i++)
            for (int d = 0; d < 3; d++) {
                lo[d] = fmin(lo[d], s->mesh_xyz[3 * i + d]);
                hi[d] = fmax(hi[d], s->mesh_xyz[3 * i + d]);
            }
        KT_CHECK(s->kind == KT_SOLID_MESH && s->mesh_triangles == 12 && s->beta == 0.1 &&
                     lo[0] == 0.5 && hi[0] == 2.0 && lo[1] == 0.2 && hi[2] == 1.5,
                 "mesh: %d triangles, x %g..%g", s->mesh_triangles, lo[0], hi[0]);
    }
    kt_performance_free(&perf);
    snprintf(orc, sizeof orc, "solid block mesh \"%s\" scale 1.5 at 0.5 0.2 0", leak);
    expect_render_error(orc, 6, 1, "is not a closed surface: the edge from", KT_DEVICE_CPU);
    expect_error("solid mesh \"/nonexistent/hall.obj\"", 12, "cannot read mesh file");
    snprintf(orc, sizeof orc, "solid mesh \"%s\" scale -1", cube);
    expect_error(orc, (int)strlen(orc) - 1, "scale must be positive");
    remove(cube);
    remove(leak);
}

/* room = "FILE": a house (a 5 x 4 x 3 m box under a pyramid roof to 4.2 m:
 * libassimp reads floats, 4.2 within 1e-7)
 * moved 0.5 m along x and y: the room is its bounding box from the origin,
 * the air its inside. */
static void test_room_mesh(void)
{
    char house[64], orc[768];
    snprintf(house, sizeof house, "/tmp/kt_house_%d.obj", (int)getpid());
    FILE *f = fopen(house, "w");
    KT_CHECK(f != NULL, "cannot write %s", house);
    if (!f)
        return;
    fputs("v 0 0 0\nv 5 0 0\nv 5 4 0\nv 0 4 0\nv 0 0 3\nv 5 0 3\nv 5 4 3\nv 0 4 3\n"
          "v 2.5 2 4.2\nf 1 3 2\nf 1 4 3\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\n"
          "f 3 8 7\nf 4 1 5\nf 4 5 8\nf 5 6 9\nf 6 7 9\nf 7 8 9\nf 8 5 9\n", f);
    fclose(f);
    snprintf(orc, sizeof orc, "sr = 4000\nroom = \"%s\" at 0.5 0.5 0\nbeta = 0.05\n"
             "mic main 3 2.5 3.9\nmic roof 0.9 0.9 3.6\n", house);
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, orc, &err);
    if (rc < 0 && strstr(err.message, "no mesh reader")) {
        kt_performance_free(&perf);
        remove(house);
        return;
    }
    KT_CHECK(rc == 0 && perf.solid_count == 2 && perf.room.size_m[0] == 5.5 &&
                 perf.room.size_m[1] == 4.5 && fabs(perf.room.size_m[2] - 4.2) < 1e-6 &&
                 !perf.solids[0].solid.hole && perf.solids[1].solid.hole &&
                 perf.solids[1].solid.kind == KT_SOLID_MESH, "%s: %d solids, %g x %g x %g m",
             err.message, perf.solid_count, perf.room.size_m[0], perf.room.size_m[1],
             perf.room.size_m[2]);
    kt_render_options opt;
    kt_render_options_default(&opt);
    opt.nthreads = 1;
    opt.tail_s = 0;
    opt.device = KT_DEVICE_CPU;
    kt_render_result res;
    char path[64];
    snprintf(path, sizeof path, "/tmp/kt_house_%d.wav", (int)getpid());
    rc = rc < 0 ? rc : kt_render(&perf, path, &opt, &res, &err);
    /* (0.9, 0.9, 3.6) lies under the roof's slope: outside the house */
    KT_CHECK(rc < 0 && err.line == 5 && strstr(err.message, "space outside the model"),
             "rc %d at line %d: %s", rc, err.line, err.message);
    kt_render_result_free(&res);
    kt_performance_free(&perf);
    snprintf(orc, sizeof orc, HEAD "solid box 0 0 0 1 1 1\nroom = \"%s\"\n", house);
    rc = parse(&perf, orc, &err);
    KT_CHECK(rc < 0 && err.line == 6 && strstr(err.message, "before the solids"), "%s",
             err.message);
    kt_performance_free(&perf);
    snprintf(orc, sizeof orc, "room = \"%s\" at -1 0 0\n", house);
    rc = parse(&perf, orc, &err);
    KT_CHECK(rc < 0 && err.line == 1 && strstr(err.message, "reaches to -1 m along x"), "%s",
             err.message);
    kt_performance_free(&perf);
    remove(house);
    remove(path);
}

int main(void)
{
    test_parsed();
    test_errors();
    test_render_refusals();
    test_mesh();
    test_room_mesh();
    return kt_test_finish("test_score_shape");
}
