/* test_room_schemes_score.c - the orchestra's `scheme =` statement (issue #8):
 * each scheme is read into the room parameters, an unknown one is an error
 * at its token, and drums in a room with another scheme than the 7-point
 * one are refused with a message pointing at the `scheme =` line. */
#include "kt_score.h"
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

int main(void)
{
    reads_schemes();
    refuses_bad_scheme();
    refuses_drums();
    return kt_test_finish("test_room_schemes_score");
}
