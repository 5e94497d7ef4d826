/* kt_state.h - a checksummed byte stream: how the room and the drums save and
 * load their state in a checkpoint (perform/checkpoint.c writes the file). */
#ifndef KT_STATE_H
#define KT_STATE_H

#include "kt_base.h"

#include <stdint.h>
#include <stdio.h>

typedef struct kt_state_io {
    FILE *f;
    uint64_t hash;                 /* FNV-1a 64 of every byte put or got so far */
    uint64_t bytes;
    uint64_t limit;                /* reading: at most this many bytes (0: no limit) */
} kt_state_io;

int kt_state_put(kt_state_io *io, const void *data, size_t bytes, kt_error *err);
/* Fails with KT_EIO "the checkpoint is truncated" at the end of the file or
 * of the limit. */
int kt_state_get(kt_state_io *io, void *data, size_t bytes, kt_error *err);
/* Can `count` items of `size` bytes still be read: count >= 0, no overflow,
 * within the limit?  A checkpoint's counts are checked with it before any
 * memory is sized by them (a checksum stops accidents, not forgeries). */
int kt_state_fits(const kt_state_io *io, int64_t count, size_t size);
/* A 4-character section tag, written and checked on reading. */
int kt_state_put_tag(kt_state_io *io, const char tag[4], kt_error *err);
int kt_state_expect_tag(kt_state_io *io, const char tag[4], kt_error *err);

/* FNV-1a 64 of data folded into *hash (start from KT_STATE_HASH_BASIS). */
#define KT_STATE_HASH_BASIS 14695981039346656037ull
void kt_state_hash(uint64_t *hash, const void *data, size_t bytes);

#endif
