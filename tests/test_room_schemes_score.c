/* test_room_schemes_score.c - the orchestra's `scheme =` statement (issue #8):
 * each scheme is read into the room parameters, an unknown one is an error
 * at its token, and drums in a room with another scheme than the 7-point
 * one are refused with a message pointing at the `scheme =` line.  The
 * render options' scheme and walls (kettle render --scheme, --walls)
 * override the orchestra's, drums refused all the same. */
#include "kt_render.h"
#include "kt_test.h"

#include <string.h>

#define ORC_HEAD "sr = 44100\nroom = 3 2.5 2\nmic main 1.5 1.2 1.6\n"
#define DRUM1 "instr 1\n  size = 29\n  pitch = G2\n  pos = 1.0 1.0 0.9\nendin\n"

static int parse(kt_performance *perf, const char *orc, const char *sco, kt_score_error *err)
{
    memset(err, 0, sizeof *err);
    kt_performance_init(perf);
    return kt_score_parse(perf, "t.orc", orc, "t.sco", sco, err);
}

static void reads_schemes(void)
{
    static const struct {
        const char *text;
        kt_air_scheme scheme;
        kt_stencil_family family;
        int reach;
    } cases[] = {
        {"scheme = standard\n", KT_SCHEME_SLF7, 0, 0},
        {"scheme = iwb\n", KT_SCHEME_IWB27, 0, 0},
        {"scheme = fcc\n", KT_SCHEME_FCC13, 0, 0},
        {"scheme = compact 5\n", KT_SCHEME_STENCIL, KT_STENCIL_COMPACT, 5},
        {"scheme = box 2\n", KT_SCHEME_STENCIL, KT_STENCIL_BOX, 2},
        {"scheme = leggy 4\n", KT_SCHEME_STENCIL, KT_STENCIL_LEGGY, 4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char orc[512];
        snprintf(orc, sizeof orc, "%s%s", ORC_HEAD, cases[c].text);
        kt_performance perf;
        kt_score_error err;
        int rc = parse(&perf, orc, "", &err);
        KT_CHECK(rc == 0, "%s: %s", cases[c].text, err.message);
        KT_CHECK(perf.room.scheme == cases[c].scheme, "%s: scheme %d", cases[c].text,
                 (int)perf.room.scheme);
        if (cases[c].scheme == KT_SCHEME_STENCIL)
            KT_CHECK(perf.room.stencil_family == cases[c].family &&
                         perf.room.stencil_reach == cases[c].reach,
                     "%s: family %d reach %d", cases[c].text, (int)perf.room.stencil_family,
                     perf.room.stencil_reach);
        /* without drums the room is fine */
        KT_CHECK(kt_performance_check(&perf, &perf.room, &err) == 0, "%s: %s", cases[c].text,
                 err.message);
        kt_performance_free(&perf);
    }
}

static void refuses_bad_scheme(void)
{
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, ORC_HEAD "scheme = hexagonal\n", "", &err);
    KT_CHECK(rc == KT_EINVAL && err.line == 4 && err.col == 10, "rc %d at %d:%d: %s", rc,
             err.line, err.col, err.message);
    KT_CHECK(strstr(err.message, "unknown air scheme") != NULL, "%s", err.message);
    kt_performance_free(&perf);
}

static void refuses_drums(void)
{
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, ORC_HEAD "scheme = iwb\n" DRUM1, "i 1 0 1 mf\n", &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    rc = kt_performance_check(&perf, &perf.room, &err);
    KT_CHECK(rc == KT_EINVAL, "drums in an IWB room should be refused, rc %d", rc);
    KT_CHECK(err.line == 4 && strstr(err.message, "7-point") != NULL, "line %d: %s", err.line,
             err.message);
    printf("drums in an IWB room: %s\n", err.message);
    kt_performance_free(&perf);
    rc = parse(&perf, ORC_HEAD "scheme = fcc\n" DRUM1, "i 1 0 1 mf\n", &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    rc = kt_performance_check(&perf, &perf.room, &err);
    KT_CHECK(rc == KT_EINVAL && err.line == 4 && strstr(err.message, "7-point") != NULL,
             "drums in an FCC room should be refused at line 4, rc %d line %d: %s", rc, err.line,
             err.message);
    kt_performance_free(&perf);
}

static void options_override(void)
{
    kt_performance perf;
    kt_score_error err;
    int rc = parse(&perf, ORC_HEAD "scheme = iwb\n", "", &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    kt_render_options opt;
    kt_render_options_default(&opt);
    kt_room_params room;
    kt_render_room_params(&perf, &opt, &room);
    KT_CHECK(room.scheme == KT_SCHEME_IWB27 && room.wall_model == KT_WALL_LOSSY,
             "defaults must keep the orchestra's air: scheme %d walls %d", (int)room.scheme,
             (int)room.wall_model);
    kt_room_params set;
    kt_room_params_default(&set);
    KT_CHECK(kt_room_scheme_set(&set, "leggy", 3, NULL) == 0, "leggy 3 refused");
    opt.scheme = (int)set.scheme;
    opt.stencil_family = (int)set.stencil_family;
    opt.stencil_reach = set.stencil_reach;
    opt.wall_model = KT_WALL_ENGQUIST_MAJDA;
    kt_render_room_params(&perf, &opt, &room);
    KT_CHECK(room.scheme == KT_SCHEME_STENCIL && room.stencil_family == KT_STENCIL_LEGGY &&
                 room.stencil_reach == 3 && room.wall_model == KT_WALL_ENGQUIST_MAJDA,
             "options not in force: scheme %d family %d reach %d walls %d", (int)room.scheme,
             (int)room.stencil_family, room.stencil_reach, (int)room.wall_model);
    KT_CHECK(kt_room_scheme_set(&set, "compact", 0, NULL) == KT_EINVAL, "reach 0 accepted");
    KT_CHECK(kt_room_scheme_set(&set, "hexagonal", 1, NULL) == KT_EINVAL, "bad name accepted");
    kt_performance_free(&perf);
    /* drums with the standard scheme written, another one given as an option */
    rc = parse(&perf, ORC_HEAD DRUM1, "i 1 0 1 mf\n", &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    kt_render_options_default(&opt);
    opt.scheme = KT_SCHEME_FCC13;
    kt_render_room_params(&perf, &opt, &room);
    rc = kt_performance_check(&perf, &room, &err);
    KT_CHECK(rc == KT_EINVAL && strstr(err.message, "--scheme") != NULL,
             "drums with --scheme fcc should be refused, rc %d: %s", rc, err.message);
    kt_performance_free(&perf);
}

int main(void)
{
    reads_schemes();
    refuses_bad_scheme();
    refuses_drums();
    options_override();
    return kt_test_finish("test_room_schemes_score");
}
