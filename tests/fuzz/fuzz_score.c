/* fuzz_score.c - libFuzzer harness for the orchestra/score language
 * (docs/reliability.md).  An input starting with "<" is a .csd; otherwise
 * it is an orchestra and a score separated by a line "%%" (all orchestra
 * when there is none).  A parse that succeeds is also checked against its
 * room (kt_performance_check) and its memory estimate, which touch every
 * parsed item without allocating a room. */
#include "kt_guard.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(const kt_performance *perf)
{
    kt_score_error err = {0};
    if (kt_performance_check(perf, &perf->room, &err) < 0)
        return;
    kt_render_memory m;
    kt_render_memory_estimate(perf, &perf->room, 1000, &m);
    char buf[256];
    kt_score_error_format(&err, buf, sizeof buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    int rc;
    if (text[0] == '<') {
        rc = kt_score_parse_csd(&perf, "fuzz.csd", text, &err);
    } else {
        char *split = strstr(text, "\n%%\n");
        const char *sco = "";
        if (split) {
            *split = '\0';
            sco = split + 4;
        }
        rc = kt_score_parse(&perf, "fuzz.orc", text, "fuzz.sco", sco, &err);
    }
    char msg[4096];
    kt_score_error_format(&err, msg, sizeof msg);
    if (rc == 0)
        check(&perf);
    kt_performance_free(&perf);
    free(text);
    return 0;
}
