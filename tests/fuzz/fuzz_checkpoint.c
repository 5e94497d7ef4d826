/* fuzz_checkpoint.c - libFuzzer harness for the checkpoint loader
 * (docs/reliability.md): what `kettle resume` does with a file, up to its
 * first step.  A checksum stops accidents, not forgeries, so the input is a
 * checkpoint without its trailer and the harness appends a correct one
 * (length, FNV-1a 64, end mark): mutations reach the fields behind the
 * checksum as a forger's would.  An input that already ends with the end
 * mark is taken as it is (the trailer's own checks).  Then: open and verify,
 * parse the stored score, build its room and drums and put the state back,
 * as a resume does (kt_render with one step to time, which writes nothing;
 * the output named is a scratch file, never the checkpoint's). */
#define _GNU_SOURCE
#include "kt_checkpoint.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define END_MARK "KTCKEND!"

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The input as a file, with a trailer unless it has one: its path in an
 * in-memory file (/proc/self/fd/N), or -1. */
static int as_file(const uint8_t *data, size_t size, char *path, size_t n)
{
    int fd = memfd_create("checkpoint", 0);
    if (fd < 0)
        return -1;
    int ok = write(fd, data, size) == (ssize_t)size;
    if (size < 8 || memcmp(data + size - 8, END_MARK, 8) != 0) {
        uint64_t trailer[2] = {size, fnv1a(data, size)};
        ok &= write(fd, trailer, sizeof trailer) == (ssize_t)sizeof trailer &&
              write(fd, END_MARK, 8) == 8;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

static void resume(const kt_checkpoint *ck)
{
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    if (kt_checkpoint_performance(ck, &perf, &err) == 0) {
        kt_render_options opt;
        kt_checkpoint_options(ck, &opt);
        opt.checkpoint_path = NULL;   /* nothing written anywhere */
        opt.estimate_steps = 1;
        perf.room.memory_limit_bytes = 256u << 20;
        /* the output's folder is probed (a file written, synced, removed): in memory */
        char out[64];
        const char *tmp = getenv("TMPDIR");
        snprintf(out, sizeof out, "%.40s/fuzz_checkpoint.wav",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp && tmp[0] ? tmp : "/tmp");
        kt_render_result res;
        kt_render(&perf, out, &opt, &res, &err);
        kt_render_result_free(&res);
    }
    char msg[4096];
    kt_score_error_format(&err, msg, sizeof msg);
    kt_performance_free(&perf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = as_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    kt_checkpoint *ck = NULL;
    kt_error e;
    kt_error_clear(&e);
    if (kt_checkpoint_open(path, &ck, &e) == 0) {
        kt_checkpoint_output(ck);
        kt_checkpoint_folder(ck);
        resume(ck);
        kt_checkpoint_close(ck);
    }
    close(fd);
    return 0;
}
