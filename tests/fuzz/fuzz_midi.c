/* fuzz_midi.c - libFuzzer harness for MIDI files as scores
 * (docs/reliability.md): the bytes are a MIDI file played by a two-drum
 * orchestra with `midipedal` on, through kt_score_parse_midi: the structure
 * walk, libsmf's reading, the conversion to a score and its parsing.  A
 * parse that succeeds is checked against its room. */
#include "kt_score.h"

#include <stdint.h>

static const char *orchestra =
    "sr = 44100\nroom = 3 2.5 2\nmic main 1.5 1.2 1.6\nmidipedal = on\nmassign 2, low\n"
    "instr 1\n size = 29\n pitch = G2\n pos = 1.0 1.0 0.9\nendin\n"
    "instr low\n size = 32\n pitch = D2\n pos = 2.0 1.2 0.9\nendin\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    int rc = kt_score_parse_midi(&perf, "fuzz.orc", orchestra, "fuzz.mid", data, size, &err);
    char msg[4096];
    kt_score_error_format(&err, msg, sizeof msg);
    if (rc == 0)
        kt_performance_check(&perf, &perf.room, &err);
    kt_performance_free(&perf);
    return 0;
}
