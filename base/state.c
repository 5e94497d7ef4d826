/* state.c - the checksummed byte stream of kt_state.h. */
#include "kt_state.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

void kt_state_hash(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t x = *h;
    for (size_t i = 0; i < n; i++) {
        x ^= p[i];
        x *= 1099511628211ull;
    }
    *h = x;
}

int kt_state_put(kt_state_io *io, const void *data, size_t bytes, kt_error *err)
{
    if (bytes && fwrite(data, 1, bytes, io->f) != bytes)
        return kt_fail(err, KT_EIO, "cannot write the checkpoint: %s", strerror(errno));
    kt_state_hash(&io->hash, data, bytes);
    io->bytes += bytes;
    return KT_OK;
}

int kt_state_get(kt_state_io *io, void *data, size_t bytes, kt_error *err)
{
    if (!kt_state_fits(io, (int64_t)bytes, 1) ||
        (bytes && fread(data, 1, bytes, io->f) != bytes))
        return kt_fail(err, KT_EIO, "the checkpoint is truncated (ends inside its data)");
    kt_state_hash(&io->hash, data, bytes);
    io->bytes += bytes;
    return KT_OK;
}

int kt_state_fits(const kt_state_io *io, int64_t count, size_t size)
{
    if (count < 0 || size == 0 || (uint64_t)count > SIZE_MAX / size)
        return 0;
    return !io->limit ||
           (io->bytes <= io->limit && (uint64_t)count <= (io->limit - io->bytes) / size);
}

int kt_state_put_tag(kt_state_io *io, const char tag[4], kt_error *err)
{
    return kt_state_put(io, tag, 4, err);
}

int kt_state_expect_tag(kt_state_io *io, const char tag[4], kt_error *err)
{
    char got[4];
    int rc = kt_state_get(io, got, 4, err);
    if (rc == 0 && memcmp(got, tag, 4) != 0)
        rc = kt_fail(err, KT_EIO, "the checkpoint is damaged: expected section %.4s", tag);
    return rc;
}
