/* fuzz_soundfile.c - libFuzzer harness for sound-file sources
 * (kt_room_add_file_source, docs/reliability.md): the input is written to a
 * file and given to a small room at 8 kHz as a `soundfile` source, which is
 * then played for a few steps.  libsndfile itself is not instrumented; what
 * is under test is how Kettle handles whatever it returns. */
#include "kettle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/kettle-fuzz-%ld.snd", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = p.size_m[1] = p.size_m[2] = 0.3;
    p.sample_rate_hz = 8000;
    p.nthreads = 1;
    p.wall_beta = 0.3;
    kt_room *room;
    if (kt_room_create(&p, &room, NULL) < 0)
        return 0;
    double pos[3] = {0.15, 0.15, 0.15};
    kt_error e;
    kt_error_clear(&e);
    kt_room_add_mic(room, "m", pos, NULL);
    if (kt_room_add_file_source(room, path, pos, 0.0, 0.5, &e) == 0)
        kt_room_run(room, 16, NULL, NULL, &e);
    kt_room_destroy(room);
    unlink(path);
    return 0;
}
