/* test_score_shape.c - the orchestra's `solid` and `hole` statements: what
 * they parse to, errors at file:line:col for bad ones, and the render's
 * refusals (a microphone in a solid, a solid with no node, a GPU render)
 * pointing at the statement. */
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
    expect_render_error("", 5, 1, "run on the CPU only", KT_DEVICE_GPU);
}

int main(void)
{
    test_parsed();
    test_errors();
    test_render_refusals();
    return kt_test_finish("test_score_shape");
}
