/* checkpoint.c - the checkpoint file of a render (kt_checkpoint.h): writing it
 * atomically, opening and verifying it, and putting its state back into a
 * freshly built room and drums.
 *
 * Layout (native byte order, checked by the mark):
 *   "KETTLECK" u32 version u32 0x01020304 u32 sizeof(double) u32 0
 *   META: folder, output, step, total steps, options, source texts
 *   PEDL: each drum's pedal progress     ROOM: kt_room_save_state
 *   DRUM: kt_timpani_save_state, one per drum
 *   trailer: u64 bytes before it, u64 FNV-1a 64 of those bytes, "KTCKEND!" */
#include "kt_checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CK_MAGIC "KETTLECK"
#define CK_END "KTCKEND!"
#define CK_VERSION 4u   /* 3: the output rate and --fail-on-clip; 4: the tuning mode and
                            cache folder */
#define CK_ORDER 0x01020304u
#define CK_HEADER_BYTES 24
#define CK_TRAILER_BYTES 24
#define CK_MAX_TEXT_BYTES (64u << 20)
#define CK_MAX_SNAPSHOTS 4096

struct kt_checkpoint {
    FILE *f;
    char path[KT_SCORE_PATH_MAX];
    char folder[KT_SCORE_PATH_MAX];
    char output[KT_SCORE_PATH_MAX];
    char checkpoint_path[KT_SCORE_PATH_MAX];
    char snapshot_stem[KT_SCORE_PATH_MAX];
    char tuning_cache[KT_SCORE_PATH_MAX];
    int64_t step, total_steps;
    kt_render_options opt;
    double *snapshots;
    int text_count;
    char *name[2], *text[2];
    long state_offset;
};

/* ---- the stream ---- */

static void fnv(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t x = *h;
    for (size_t i = 0; i < n; i++) {
        x ^= p[i];
        x *= 1099511628211ull;
    }
    *h = x;
}

static const uint64_t fnv_basis = 14695981039346656037ull;

int kt_state_put(kt_state_io *io, const void *data, size_t bytes, kt_error *err)
{
    if (bytes && fwrite(data, 1, bytes, io->f) != bytes)
        return kt_fail(err, KT_EIO, "cannot write the checkpoint: %s", strerror(errno));
    fnv(&io->hash, data, bytes);
    io->bytes += bytes;
    return KT_OK;
}

int kt_state_get(kt_state_io *io, void *data, size_t bytes, kt_error *err)
{
    if (bytes && fread(data, 1, bytes, io->f) != bytes)
        return kt_fail(err, KT_EIO, "the checkpoint is truncated (ends inside its data)");
    fnv(&io->hash, data, bytes);
    io->bytes += bytes;
    return KT_OK;
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

static int put_u32(kt_state_io *io, uint32_t v, kt_error *err) { return kt_state_put(io, &v, 4, err); }
static int put_i64(kt_state_io *io, int64_t v, kt_error *err) { return kt_state_put(io, &v, 8, err); }
static int put_f64(kt_state_io *io, double v, kt_error *err) { return kt_state_put(io, &v, 8, err); }

static int put_str(kt_state_io *io, const char *s, kt_error *err)
{
    size_t n = s ? strlen(s) : 0;
    int rc = put_u32(io, s ? (uint32_t)n : 0xffffffffu, err);
    return rc < 0 ? rc : kt_state_put(io, s, n, err);
}

static int get_u32(kt_state_io *io, uint32_t *v, kt_error *err) { return kt_state_get(io, v, 4, err); }

static int get_int(kt_state_io *io, int *v, kt_error *err)
{
    uint32_t u;
    int rc = get_u32(io, &u, err);
    *v = (int)(int32_t)u;
    return rc;
}

/* A string into buf; *is_null when NULL was written. */
static int get_str(kt_state_io *io, char *buf, size_t size, int *is_null, kt_error *err)
{
    uint32_t n;
    int rc = get_u32(io, &n, err);
    if (rc < 0)
        return rc;
    if (is_null)
        *is_null = n == 0xffffffffu;
    if (n == 0xffffffffu)
        n = 0;
    if (n >= size)
        return kt_fail(err, KT_EIO, "the checkpoint is damaged: a %u-byte name", n);
    buf[n] = '\0';
    return kt_state_get(io, buf, n, err);
}

/* ---- writing ---- */

static int put_options(kt_state_io *io, const kt_render_options *o, kt_error *err)
{
    int rc = put_f64(io, o->sample_rate_hz, err);
    int32_t ints[] = {o->precision, o->format, (int)o->device, o->nthreads,
                      (int)o->output.sample_format, o->output.normalize, o->output.per_mic,
                      o->output.interleaved, o->snapshot_count, o->snapshot_axis,
                      o->override_limits, o->check_every_steps, o->scheme,
                      o->stencil_family, o->stencil_reach, o->wall_model, o->tuning};
    for (size_t i = 0; rc == 0 && i < sizeof ints / sizeof *ints; i++)
        rc = put_u32(io, (uint32_t)ints[i], err);
    double reals[] = {o->tail_s, o->output.peak_dbfs, o->output.raw_gain,
                      o->snapshot_position_m, o->checkpoint_every_s};
    for (size_t i = 0; rc == 0 && i < sizeof reals / sizeof *reals; i++)
        rc = put_f64(io, reals[i], err);
    if (rc == 0)
        rc = put_f64(io, o->output.sample_rate_hz, err);
    if (rc == 0)
        rc = put_u32(io, (uint32_t)o->clipping_fails, err);
    for (int i = 0; rc == 0 && i < o->snapshot_count; i++)
        rc = put_f64(io, o->snapshot_times_s[i], err);
    if (rc == 0)
        rc = put_str(io, o->snapshot_stem, err);
    if (rc == 0)
        rc = put_str(io, o->checkpoint_path, err);
    if (rc == 0)
        rc = put_str(io, o->tuning_cache, err);
    return rc;
}

static int put_meta(kt_state_io *io, const kt_checkpoint_source *s, int64_t step, kt_error *err)
{
    char folder[KT_SCORE_PATH_MAX];
    if (!getcwd(folder, sizeof folder))
        return kt_fail(err, KT_EIO, "cannot name the working folder for the checkpoint");
    const kt_performance *perf = s->perf;
    if (perf->text_count != 1 && perf->text_count != 2)
        return kt_fail(err, KT_EINVAL, "a checkpoint needs one .csd or an orchestra and a score");
    int rc = kt_state_put_tag(io, "META", err);
    if (rc == 0)
        rc = put_str(io, folder, err);
    if (rc == 0)
        rc = put_str(io, s->out_path, err);
    if (rc == 0)
        rc = put_i64(io, step, err);
    if (rc == 0)
        rc = put_i64(io, s->total_steps, err);
    if (rc == 0)
        rc = put_options(io, s->opt, err);
    if (rc == 0)
        rc = put_u32(io, (uint32_t)perf->text_count, err);
    for (int i = 0; rc == 0 && i < perf->text_count; i++) {
        rc = put_str(io, perf->texts[i].name, err);
        if (rc == 0)
            rc = put_u32(io, (uint32_t)perf->texts[i].length, err);
        if (rc == 0)
            rc = kt_state_put(io, perf->texts[i].text, perf->texts[i].length, err);
    }
    return rc;
}

static int put_pedals(kt_state_io *io, const kt_checkpoint_source *s, kt_error *err)
{
    int rc = kt_state_put_tag(io, "PEDL", err);
    if (rc == 0)
        rc = put_u32(io, (uint32_t)s->drum_count, err);
    for (int d = 0; rc == 0 && d < s->drum_count; d++) {
        rc = put_f64(io, s->pedals[d].tension_N_per_m, err);
        if (rc == 0)
            rc = put_f64(io, s->pedals[d].glide_from_N_per_m, err);
        if (rc == 0)
            rc = put_u32(io, (uint32_t)s->pedals[d].pedal, err);
    }
    return rc < 0 ? rc : put_u32(io, (uint32_t)s->damp_next, err);
}

static int put_all(kt_state_io *io, const kt_checkpoint_source *s, kt_error *err)
{
    uint32_t head[4] = {CK_VERSION, CK_ORDER, (uint32_t)sizeof(double), 0};
    int rc = kt_state_put(io, CK_MAGIC, 8, err);
    if (rc == 0)
        rc = kt_state_put(io, head, sizeof head, err);
    if (rc == 0)
        rc = put_meta(io, s, kt_room_step_index(s->room), err);
    if (rc == 0)
        rc = put_pedals(io, s, err);
    if (rc == 0)
        rc = kt_room_save_state(s->room, io, err);
    for (int d = 0; rc == 0 && d < s->drum_count; d++)
        rc = kt_timpani_save_state(s->drums[d], io, err);
    if (rc == 0) {
        uint64_t trailer[2] = {io->bytes, io->hash};
        if (fwrite(trailer, 8, 2, io->f) != 2 || fwrite(CK_END, 1, 8, io->f) != 8)
            rc = kt_fail(err, KT_EIO, "cannot write the checkpoint: %s", strerror(errno));
    }
    return rc;
}

/* fsync the folder holding path, so that the rename itself is durable. */
static void sync_folder(const char *path)
{
    char buf[KT_SCORE_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    int fd = open(dirname(buf), O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int kt_checkpoint_write(const char *path, const kt_checkpoint_source *src, kt_error *err)
{
    size_t n = strlen(path);
    if (n + 16 > KT_SCORE_PATH_MAX)
        return kt_fail(err, KT_EINVAL, "checkpoint path too long");
    char tmp[KT_SCORE_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return kt_fail(err, KT_EIO, "%s: cannot create a temporary file beside it: %s", path,
                       strerror(errno));
    kt_state_io io = {fdopen(fd, "wb"), fnv_basis, 0};
    if (!io.f) {
        close(fd);
        unlink(tmp);
        return kt_fail(err, KT_EIO, "%s: %s", tmp, strerror(errno));
    }
    int rc = put_all(&io, src, err);
    if (rc == 0 && (fflush(io.f) != 0 || fsync(fileno(io.f)) != 0))
        rc = kt_fail(err, KT_EIO, "%s: cannot flush the checkpoint to disk: %s", path,
                     strerror(errno));
    if (fclose(io.f) != 0 && rc == 0)
        rc = kt_fail(err, KT_EIO, "%s: closing the checkpoint failed", path);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = kt_fail(err, KT_EIO, "%s: cannot rename the checkpoint into place: %s", path,
                     strerror(errno));
    if (rc < 0)
        unlink(tmp);
    else
        sync_folder(path);
    return rc;
}

/* ---- opening ---- */

static int check_header(FILE *f, const char *path, kt_error *err)
{
    char magic[8];
    uint32_t head[4];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, CK_MAGIC, 8) != 0)
        return kt_fail(err, KT_EINVAL, "%s is not a Kettle checkpoint", path);
    if (fread(head, 4, 4, f) != 4)
        return kt_fail(err, KT_EIO, "%s: the checkpoint is truncated (incomplete header)", path);
    if (head[1] != CK_ORDER)
        return kt_fail(err, KT_EINVAL,
                       "%s was written on a machine of the other byte order; resume it there",
                       path);
    if (head[0] != CK_VERSION)
        return kt_fail(err, KT_EINVAL, "%s is a version %u checkpoint; this Kettle reads version %u",
                       path, head[0], CK_VERSION);
    if (head[2] != sizeof(double))
        return kt_fail(err, KT_EINVAL, "%s: written with %u-byte doubles", path, head[2]);
    return KT_OK;
}

/* Length and checksum against the trailer. */
static int check_sum(FILE *f, const char *path, kt_error *err)
{
    if (fseek(f, 0, SEEK_END) != 0)
        return kt_fail(err, KT_EIO, "%s: cannot seek", path);
    long size = ftell(f);
    unsigned char tail[CK_TRAILER_BYTES];
    if (size < CK_HEADER_BYTES + CK_TRAILER_BYTES || fseek(f, size - CK_TRAILER_BYTES, SEEK_SET) ||
        fread(tail, 1, sizeof tail, f) != sizeof tail || memcmp(tail + 16, CK_END, 8) != 0)
        return kt_fail(err, KT_EIO, "%s: the checkpoint is truncated (no end mark)", path);
    uint64_t want_len, want_hash, h = fnv_basis;
    memcpy(&want_len, tail, 8);
    memcpy(&want_hash, tail + 8, 8);
    if (want_len != (uint64_t)(size - CK_TRAILER_BYTES))
        return kt_fail(err, KT_EIO, "%s: the checkpoint is truncated or padded (%ld bytes, "
                       "expected %llu)", path, size, (unsigned long long)want_len + CK_TRAILER_BYTES);
    rewind(f);
    unsigned char buf[1 << 16];
    for (uint64_t left = want_len; left > 0;) {
        size_t n = left < sizeof buf ? (size_t)left : sizeof buf;
        if (fread(buf, 1, n, f) != n)
            return kt_fail(err, KT_EIO, "%s: read error", path);
        fnv(&h, buf, n);
        left -= n;
    }
    if (h != want_hash)
        return kt_fail(err, KT_EIO, "%s: the checkpoint is damaged (checksum mismatch)", path);
    return KT_OK;
}

static int get_options(kt_state_io *io, kt_checkpoint *ck, kt_error *err)
{
    kt_render_options *o = &ck->opt;
    kt_render_options_default(o);
    int rc = kt_state_get(io, &o->sample_rate_hz, 8, err), v[17] = {0};
    for (int i = 0; rc == 0 && i < 17; i++)
        rc = get_int(io, &v[i], err);
    o->precision = v[0];
    o->format = v[1];
    o->device = (kt_device)v[2];
    o->nthreads = v[3];
    o->output.sample_format = (kt_sample_format)v[4];
    o->output.normalize = v[5];
    o->output.per_mic = v[6];
    o->output.interleaved = v[7];
    o->snapshot_count = v[8];
    o->snapshot_axis = v[9];
    o->override_limits = v[10];
    o->check_every_steps = v[11];
    o->scheme = v[12];
    o->stencil_family = v[13];
    o->stencil_reach = v[14];
    o->wall_model = v[15];
    o->tuning = v[16];
    double *reals[] = {&o->tail_s, &o->output.peak_dbfs, &o->output.raw_gain,
                       &o->snapshot_position_m, &o->checkpoint_every_s};
    for (size_t i = 0; rc == 0 && i < sizeof reals / sizeof *reals; i++)
        rc = kt_state_get(io, reals[i], 8, err);
    if (rc == 0)
        rc = kt_state_get(io, &o->output.sample_rate_hz, 8, err);
    if (rc == 0)
        rc = get_int(io, &o->clipping_fails, err);
    if (rc == 0 && (o->snapshot_count < 0 || o->snapshot_count > CK_MAX_SNAPSHOTS))
        return kt_fail(err, KT_EIO, "the checkpoint is damaged (snapshot count)");
    if (rc == 0 && o->snapshot_count > 0) {
        ck->snapshots = malloc((size_t)o->snapshot_count * sizeof *ck->snapshots);
        rc = ck->snapshots ? kt_state_get(io, ck->snapshots, 8 * (size_t)o->snapshot_count, err)
                           : kt_fail(err, KT_ENOMEM, "out of memory");
    }
    o->snapshot_times_s = ck->snapshots;
    int null_stem = 1, null_ck = 1, null_cache = 1;
    if (rc == 0)
        rc = get_str(io, ck->snapshot_stem, sizeof ck->snapshot_stem, &null_stem, err);
    if (rc == 0)
        rc = get_str(io, ck->checkpoint_path, sizeof ck->checkpoint_path, &null_ck, err);
    if (rc == 0)
        rc = get_str(io, ck->tuning_cache, sizeof ck->tuning_cache, &null_cache, err);
    o->snapshot_stem = null_stem ? NULL : ck->snapshot_stem;
    o->checkpoint_path = null_ck ? NULL : ck->checkpoint_path;
    o->tuning_cache = null_cache ? NULL : ck->tuning_cache;
    return rc;
}

static int get_texts(kt_state_io *io, kt_checkpoint *ck, kt_error *err)
{
    uint32_t count;
    int rc = get_u32(io, &count, err);
    if (rc == 0 && count != 1 && count != 2)
        return kt_fail(err, KT_EIO, "the checkpoint is damaged (%u source texts)", count);
    ck->text_count = (int)count;
    for (int i = 0; rc == 0 && i < ck->text_count; i++) {
        uint32_t n;
        ck->name[i] = malloc(KT_SCORE_PATH_MAX);
        rc = ck->name[i] ? get_str(io, ck->name[i], KT_SCORE_PATH_MAX, NULL, err)
                         : kt_fail(err, KT_ENOMEM, "out of memory");
        if (rc == 0)
            rc = get_u32(io, &n, err);
        if (rc == 0 && n > CK_MAX_TEXT_BYTES)
            return kt_fail(err, KT_EIO, "the checkpoint is damaged (a %u-byte text)", n);
        if (rc == 0 && !(ck->text[i] = calloc(n + 1, 1)))
            return kt_fail(err, KT_ENOMEM, "out of memory");
        if (rc == 0)
            rc = kt_state_get(io, ck->text[i], n, err);
    }
    return rc;
}

static int get_meta(kt_checkpoint *ck, kt_error *err)
{
    kt_state_io io = {ck->f, fnv_basis, 0};
    int rc = fseek(ck->f, CK_HEADER_BYTES, SEEK_SET) ? kt_fail(err, KT_EIO, "cannot seek") : 0;
    if (rc == 0)
        rc = kt_state_expect_tag(&io, "META", err);
    if (rc == 0)
        rc = get_str(&io, ck->folder, sizeof ck->folder, NULL, err);
    if (rc == 0)
        rc = get_str(&io, ck->output, sizeof ck->output, NULL, err);
    if (rc == 0)
        rc = kt_state_get(&io, &ck->step, 8, err);
    if (rc == 0)
        rc = kt_state_get(&io, &ck->total_steps, 8, err);
    if (rc == 0 && (ck->step < 0 || ck->total_steps < ck->step))
        rc = kt_fail(err, KT_EIO, "the checkpoint is damaged (step %lld of %lld)",
                     (long long)ck->step, (long long)ck->total_steps);
    if (rc == 0)
        rc = get_options(&io, ck, err);
    if (rc == 0)
        rc = get_texts(&io, ck, err);
    ck->state_offset = ftell(ck->f);
    return rc;
}

int kt_checkpoint_open(const char *path, kt_checkpoint **out, kt_error *err)
{
    *out = NULL;
    kt_checkpoint *ck = calloc(1, sizeof *ck);
    if (!ck)
        return kt_fail(err, KT_ENOMEM, "out of memory");
    snprintf(ck->path, sizeof ck->path, "%s", path);
    ck->f = fopen(path, "rb");
    int rc = ck->f ? KT_OK : kt_fail(err, KT_EIO, "cannot read %s: %s", path, strerror(errno));
    if (rc == 0)
        rc = check_header(ck->f, path, err);
    if (rc == 0)
        rc = check_sum(ck->f, path, err);
    if (rc == 0)
        rc = get_meta(ck, err);
    if (rc < 0) {
        kt_checkpoint_close(ck);
        return rc;
    }
    *out = ck;
    return KT_OK;
}

void kt_checkpoint_close(kt_checkpoint *ck)
{
    if (!ck)
        return;
    if (ck->f)
        fclose(ck->f);
    for (int i = 0; i < 2; i++) {
        free(ck->name[i]);
        free(ck->text[i]);
    }
    free(ck->snapshots);
    free(ck);
}

int kt_checkpoint_performance(const kt_checkpoint *ck, kt_performance *perf, kt_score_error *err)
{
    if (ck->text_count == 1)
        return kt_score_parse_csd(perf, ck->name[0], ck->text[0], err);
    return kt_score_parse(perf, ck->name[0], ck->text[0], ck->name[1], ck->text[1], err);
}

void kt_checkpoint_options(const kt_checkpoint *ck, kt_render_options *opt)
{
    *opt = ck->opt;
    opt->progress = NULL;
    opt->stop = NULL;
    opt->user = NULL;
    opt->resume = ck;
}

const char *kt_checkpoint_output(const kt_checkpoint *ck) { return ck->output; }
const char *kt_checkpoint_folder(const kt_checkpoint *ck) { return ck->folder; }
int64_t kt_checkpoint_step(const kt_checkpoint *ck) { return ck->step; }
int64_t kt_checkpoint_total_steps(const kt_checkpoint *ck) { return ck->total_steps; }

/* ---- restoring ---- */

static int get_pedals(kt_state_io *io, kt_checkpoint_drum *pedals, int drum_count,
                      int *damp_next, kt_error *err)
{
    uint32_t n;
    int rc = kt_state_expect_tag(io, "PEDL", err);
    if (rc == 0)
        rc = get_u32(io, &n, err);
    if (rc == 0 && n != (uint32_t)drum_count)
        return kt_fail(err, KT_EINVAL, "the checkpoint has %u drums, the score %d", n, drum_count);
    for (int d = 0; rc == 0 && d < drum_count; d++) {
        rc = kt_state_get(io, &pedals[d].tension_N_per_m, 8, err);
        if (rc == 0)
            rc = kt_state_get(io, &pedals[d].glide_from_N_per_m, 8, err);
        if (rc == 0)
            rc = get_int(io, &pedals[d].pedal, err);
    }
    return rc < 0 ? rc : get_int(io, damp_next, err);
}

int kt_checkpoint_restore(const kt_checkpoint *ck, kt_room *room, kt_timpani *const *drums,
                          kt_checkpoint_drum *pedals, int drum_count, int *damp_next,
                          kt_error *err)
{
    if (fseek(ck->f, ck->state_offset, SEEK_SET) != 0)
        return kt_fail(err, KT_EIO, "%s: cannot seek", ck->path);
    kt_state_io io = {ck->f, fnv_basis, 0};
    int rc = get_pedals(&io, pedals, drum_count, damp_next, err);
    if (rc == 0)
        rc = kt_room_load_state(room, &io, err);
    for (int d = 0; rc == 0 && d < drum_count; d++)
        rc = kt_timpani_load_state(drums[d], &io, err);
    if (rc == 0 && kt_room_step_index(room) != ck->step)
        rc = kt_fail(err, KT_EIO, "the checkpoint is damaged (step index)");
    return rc;
}

void kt_render_partial_path(const char *out_path, char *buf, size_t size)
{
    const char *slash = strrchr(out_path, '/'), *dot = strrchr(out_path, '.');
    if (!dot || (slash && dot < slash))
        snprintf(buf, size, "%s.partial", out_path);
    else
        snprintf(buf, size, "%.*s.partial%s", (int)(dot - out_path), out_path, dot);
}
