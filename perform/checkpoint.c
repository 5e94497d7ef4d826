/* checkpoint.c - the checkpoint file of a render (kt_checkpoint.h): writing it
 * atomically, opening and verifying it, and putting its state back into a
 * freshly built room and drums.
 *
 * Layout (native byte order, checked by the mark):
 *   "KETTLECK" u32 version u32 0x01020304 u32 sizeof(double) u32 0
 *   META: folder, output, step, total steps, ranks, rank, options, source texts
 *   PEDL: each drum's pedal progress     ROOM: kt_room_save_state
 *   DRUM: kt_timpani_save_state, one per drum
 *   trailer: u64 bytes before it, u64 FNV-1a 64 of those bytes, "KTCKEND!"
 * A room split over ranks writes one such file per rank, each with its
 * slab, its part of the signals and its drums' state (kt_checkpoint.h). */
#include "kt_guard.h"
#include "kt_files.h"
#include "kt_tuning.h"
#include "kt_ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CK_MAGIC "KETTLECK"
#define CK_END "KTCKEND!"
#define CK_VERSION 6u   /* 3: the output rate and --fail-on-clip; 4: the tuning mode and
                            cache folder; 5: ranks, a rank's part per file; 6: the axis the
                            room is split along */
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
    int ranks, rank;                /* the split it belongs to; rank: this part's */
    kt_render_options opt;
    double *snapshots;
    int text_count;
    char *name[2], *text[2];
    long state_offset;
    uint64_t data_bytes;            /* header + data, before the trailer */
};

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
                      o->stencil_family, o->stencil_reach, o->wall_model, o->tuning,
                      o->split_axis};
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
        rc = put_u32(io, (uint32_t)kt_room_ranks(s->room), err);
    if (rc == 0)
        rc = put_u32(io, (uint32_t)kt_room_rank(s->room), err);
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
    char buf[KT_SCORE_PATH_MAX + 16];
    snprintf(buf, sizeof buf, "%s", path);
    int fd = open(dirname(buf), O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

void kt_checkpoint_part_path(const char *path, int rank, char *buf, size_t size)
{
    if (rank > 0)
        snprintf(buf, size, "%s.rank%d", path, rank);
    else
        snprintf(buf, size, "%s", path);
}

/* The temporary holding this rank's part, written and flushed. */
static int write_temp(const char *path, char *tmp, size_t tmp_size,
                      const kt_checkpoint_source *src, kt_error *err)
{
    int fd = kt_file_temp(path, tmp, tmp_size, err);
    if (fd < 0) {
        tmp[0] = '\0';
        return fd;
    }
    kt_state_io io = {fdopen(fd, "wb"), KT_STATE_HASH_BASIS, 0, 0};
    if (!io.f) {
        close(fd);
        return kt_fail(err, KT_EIO, "%s: %s", tmp, strerror(errno));
    }
    int rc = put_all(&io, src, err);
    if (rc == 0 && (fflush(io.f) != 0 || fsync(fileno(io.f)) != 0))
        rc = kt_fail(err, KT_EIO, "%s: cannot flush the checkpoint to disk: %s", path,
                     strerror(errno));
    if (fclose(io.f) != 0 && rc == 0)
        rc = kt_fail(err, KT_EIO, "%s: closing the checkpoint failed", path);
    return rc;
}

int kt_checkpoint_write(const char *given, const kt_checkpoint_source *src, kt_error *err)
{
    char path[KT_SCORE_PATH_MAX + 16], tmp[KT_SCORE_PATH_MAX + 64];
    kt_checkpoint_part_path(given, kt_room_rank(src->room), path, sizeof path);
    int rc = write_temp(path, tmp, sizeof tmp, src, err);
    /* over ranks: every part written before any replaces the last (a crash
     * between the renames leaves parts of two steps, which resuming refuses) */
    if (kt_room_ranks(src->room) > 1 && kt_mpi_min(rc == 0) < 1 && rc == 0)
        rc = kt_fail(err, KT_EIO, "another rank could not write its part of the checkpoint");
    if (rc < 0 && tmp[0])
        unlink(tmp);
    if (rc < 0)
        return rc;
    if (rename(tmp, path) != 0)
        rc = kt_fail(err, KT_EIO, "%s: cannot rename the checkpoint into place: %s", path,
                     strerror(errno));
    if (rc < 0)
        unlink(tmp);
    else
        sync_folder(path);
    return rc;
}

int kt_checkpoint_check_path(const char *path, kt_error *err)
{
    int rc = kt_file_check_writable(path, 0, "the checkpoint", err);
    FILE *f = rc == 0 ? fopen(path, "rb") : NULL;   /* a regular file, if any: no blocking */
    if (!f)
        return rc;
    char magic[8];
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (got == sizeof magic && memcmp(magic, CK_MAGIC, sizeof magic) == 0)
        return KT_OK;
    return kt_fail(err, KT_EINVAL, "the checkpoint %s: that file exists and is not a Kettle "
                   "checkpoint; Kettle overwrites only its own files (name another with "
                   "--checkpoint)", path);
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

/* Length and checksum against the trailer; *data_bytes: what precedes it. */
static int check_sum(FILE *f, const char *path, uint64_t *data_bytes, kt_error *err)
{
    if (fseek(f, 0, SEEK_END) != 0)
        return kt_fail(err, KT_EIO, "%s: cannot seek", path);
    long size = ftell(f);
    unsigned char tail[CK_TRAILER_BYTES];
    if (size < CK_HEADER_BYTES + CK_TRAILER_BYTES || fseek(f, size - CK_TRAILER_BYTES, SEEK_SET) ||
        fread(tail, 1, sizeof tail, f) != sizeof tail || memcmp(tail + 16, CK_END, 8) != 0)
        return kt_fail(err, KT_EIO, "%s: the checkpoint is truncated (no end mark)", path);
    uint64_t want_len, want_hash, h = KT_STATE_HASH_BASIS;
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
        kt_state_hash(&h, buf, n);
        left -= n;
    }
    if (h != want_hash)
        return kt_fail(err, KT_EIO, "%s: the checkpoint is damaged (checksum mismatch)", path);
    *data_bytes = want_len;
    return KT_OK;
}

/* The options' integers as written, each with the values a render can have. */
static const struct {
    const char *name;
    int lo, hi;
} int_fields[18] = {
    {"precision", -1, KT_SINGLE},
    {"drum format", -1, KT_TIMPANI_FORMAT_COUNT - 1},
    {"device", KT_DEVICE_AUTO, KT_DEVICE_GPU},
    {"thread count", 0, KT_THREADS_MAX},
    {"sample format", KT_PCM16, KT_FLOAT64},
    {"normalize flag", 0, 1},
    {"per-mic flag", 0, 1},
    {"interleaved flag", 0, 1},
    {"snapshot count", 0, CK_MAX_SNAPSHOTS},
    {"snapshot axis", 0, 2},
    {"override-limits flag", 0, 1},
    {"check interval", INT_MIN, INT_MAX},
    {"air scheme", -1, KT_SCHEME_STENCIL},
    {"stencil family", KT_STENCIL_COMPACT, KT_STENCIL_LEGGY},
    {"stencil reach", 0, 64},
    {"wall model", -1, KT_WALL_ENGQUIST_MAJDA},
    {"tuning mode", KT_TUNING_CALIBRATED, KT_TUNING_MODEL},
    {"split axis", KT_SPLIT_AUTO, KT_SPLIT_Z},
};

/* Names the field of a checkpoint that no render could have written: it is
 * damaged (past its checksum) or forged. */
static int bad_field(kt_error *err, const char *field, const char *value)
{
    return kt_fail(err, KT_EINVAL, "the checkpoint is damaged or forged: its %s (%s) is out of "
                   "range", field, value);
}

static int bad_int(kt_error *err, const char *field, long long v)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", v);
    return bad_field(err, field, text);
}

static int bad_real(kt_error *err, const char *field, double v)
{
    char text[32];
    snprintf(text, sizeof text, "%g", v);
    return bad_field(err, field, text);
}

static int check_options(const kt_render_options *o, const int v[18], kt_error *err)
{
    for (int i = 0; i < 18; i++)
        if (v[i] < int_fields[i].lo || v[i] > int_fields[i].hi)
            return bad_int(err, int_fields[i].name, v[i]);
    if (v[4] != KT_PCM16 && v[4] != KT_PCM24 && v[4] != KT_FLOAT32 && v[4] != KT_FLOAT64)
        return bad_int(err, "sample format", v[4]);
    /* 0 or -1: the orchestra's or the default; the render checks the rest */
    if (!(o->sample_rate_hz == 0 || (o->sample_rate_hz >= 1 && isfinite(o->sample_rate_hz))))
        return bad_real(err, "sample rate", o->sample_rate_hz);
    if (!(o->tail_s == -1 || (o->tail_s >= 0 && isfinite(o->tail_s))))
        return bad_real(err, "tail", o->tail_s);
    if (!isfinite(o->output.peak_dbfs))
        return bad_real(err, "peak level", o->output.peak_dbfs);
    if (!isfinite(o->output.raw_gain))
        return bad_real(err, "gain", o->output.raw_gain);
    if (!(o->snapshot_position_m >= 0 && isfinite(o->snapshot_position_m)))
        return bad_real(err, "snapshot plane", o->snapshot_position_m);
    if (!(o->checkpoint_every_s >= 0 && isfinite(o->checkpoint_every_s)))
        return bad_real(err, "checkpoint interval", o->checkpoint_every_s);
    return KT_OK;
}

static int get_options(kt_state_io *io, kt_checkpoint *ck, kt_error *err)
{
    kt_render_options *o = &ck->opt;
    kt_render_options_default(o);
    int rc = kt_state_get(io, &o->sample_rate_hz, 8, err), v[18] = {0};
    for (int i = 0; rc == 0 && i < 18; i++)
        rc = get_int(io, &v[i], err);
    double *reals[] = {&o->tail_s, &o->output.peak_dbfs, &o->output.raw_gain,
                       &o->snapshot_position_m, &o->checkpoint_every_s};
    for (size_t i = 0; rc == 0 && i < sizeof reals / sizeof *reals; i++)
        rc = kt_state_get(io, reals[i], 8, err);
    if (rc == 0)
        rc = kt_state_get(io, &o->output.sample_rate_hz, 8, err);
    if (rc == 0)
        rc = get_int(io, &o->clipping_fails, err);
    if (rc == 0 && !(o->output.sample_rate_hz == 0 ||
                     (o->output.sample_rate_hz >= 1 && isfinite(o->output.sample_rate_hz))))
        return bad_real(err, "output sample rate", o->output.sample_rate_hz);
    if (rc == 0 && o->clipping_fails != 0 && o->clipping_fails != 1)
        return bad_int(err, "fail-on-clip flag", o->clipping_fails);
    if (rc == 0)
        rc = check_options(o, v, err);
    if (rc < 0)
        return rc;
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
    o->split_axis = v[17];
    if (o->snapshot_count > 0) {
        ck->snapshots = malloc((size_t)o->snapshot_count * sizeof *ck->snapshots);
        rc = ck->snapshots ? kt_state_get(io, ck->snapshots, 8 * (size_t)o->snapshot_count, err)
                           : kt_fail(err, KT_ENOMEM, "out of memory");
    }
    for (int i = 0; rc == 0 && i < o->snapshot_count; i++)
        if (!(ck->snapshots[i] >= 0 && isfinite(ck->snapshots[i])))
            rc = bad_real(err, "snapshot time", ck->snapshots[i]);
    o->snapshot_times_s = ck->snapshots;
    int null_stem = 1, null_ck = 1, null_cache = 1;
    if (rc == 0)
        rc = get_str(io, ck->snapshot_stem, sizeof ck->snapshot_stem, &null_stem, err);
    if (rc == 0)
        rc = get_str(io, ck->checkpoint_path, sizeof ck->checkpoint_path, &null_ck, err);
    if (rc == 0)
        rc = get_str(io, ck->tuning_cache, sizeof ck->tuning_cache, &null_cache, err);
    o->snapshot_stem = null_stem ? NULL : ck->snapshot_stem;
    o->checkpoint_path = null_ck || !ck->checkpoint_path[0] ? NULL : ck->checkpoint_path;
    o->tuning_cache = null_cache ? NULL : ck->tuning_cache;
    return rc;
}

static int get_texts(kt_state_io *io, kt_checkpoint *ck, kt_error *err)
{
    uint32_t count;
    int rc = get_u32(io, &count, err);
    if (rc == 0 && count != 1 && count != 2)
        return bad_int(err, "count of source texts", count);
    ck->text_count = (int)count;
    for (int i = 0; rc == 0 && i < ck->text_count; i++) {
        uint32_t n;
        ck->name[i] = malloc(KT_SCORE_PATH_MAX);
        rc = ck->name[i] ? get_str(io, ck->name[i], KT_SCORE_PATH_MAX, NULL, err)
                         : kt_fail(err, KT_ENOMEM, "out of memory");
        if (rc == 0)
            rc = get_u32(io, &n, err);
        if (rc == 0 && (n > CK_MAX_TEXT_BYTES || !kt_state_fits(io, n, 1)))
            return bad_int(err, "source text's length", n);
        if (rc == 0 && !(ck->text[i] = calloc(n + 1, 1)))
            return kt_fail(err, KT_ENOMEM, "out of memory");
        if (rc == 0)
            rc = kt_state_get(io, ck->text[i], n, err);
    }
    return rc;
}

static int get_meta(kt_checkpoint *ck, kt_error *err)
{
    kt_state_io io = {ck->f, KT_STATE_HASH_BASIS, 0, ck->data_bytes - CK_HEADER_BYTES};
    int rc = fseek(ck->f, CK_HEADER_BYTES, SEEK_SET) ? kt_fail(err, KT_EIO, "cannot seek") : 0;
    if (rc == 0)
        rc = kt_state_expect_tag(&io, "META", err);
    if (rc == 0)
        rc = get_str(&io, ck->folder, sizeof ck->folder, NULL, err);
    if (rc == 0)
        rc = get_str(&io, ck->output, sizeof ck->output, NULL, err);
    if (rc == 0 && !ck->output[0])
        rc = bad_field(err, "output file", "none");
    if (rc == 0)
        rc = kt_state_get(&io, &ck->step, 8, err);
    if (rc == 0)
        rc = kt_state_get(&io, &ck->total_steps, 8, err);
    if (rc == 0 && (ck->total_steps < 1 || ck->total_steps > KT_MAX_STEPS))
        rc = bad_int(err, "total step count", ck->total_steps);
    if (rc == 0 && (ck->step < 0 || ck->step > ck->total_steps))
        rc = bad_int(err, "step", ck->step);
    if (rc == 0)
        rc = get_int(&io, &ck->ranks, err);
    if (rc == 0 && (ck->ranks < 1 || ck->ranks > KT_CHECKPOINT_MAX_RANKS))
        rc = bad_int(err, "rank count", ck->ranks);
    if (rc == 0)
        rc = get_int(&io, &ck->rank, err);
    if (rc == 0 && (ck->rank < 0 || ck->rank >= ck->ranks))
        rc = bad_int(err, "rank", ck->rank);
    if (rc == 0)
        rc = get_options(&io, ck, err);
    if (rc == 0)
        rc = get_texts(&io, ck, err);
    ck->state_offset = ftell(ck->f);
    return rc;
}

/* The part is the one of rank `rank` of a render over `ranks`. */
static int check_ranks(const kt_checkpoint *ck, const char *path, int rank, int ranks,
                       kt_error *err)
{
    if (ck->ranks == ranks && ck->rank == rank)
        return KT_OK;
    if (ck->ranks != ranks && ck->ranks == 1)
        return kt_fail(err, KT_EINVAL, "%s was written by a render in one process; resume it "
                       "the same way (kettle resume, without --gpus or mpirun), not over %d "
                       "ranks", path, ranks);
    if (ck->ranks != ranks) {
        int gpus = ck->opt.device == KT_DEVICE_GPU;
        return kt_fail(err, KT_EINVAL, "%s was written by a render whose room was split over "
                       "%d ranks; resume it over %d (%s%d%s), not %d: each rank holds its part "
                       "of the room", path, ck->ranks, ck->ranks,
                       gpus ? "kettle resume --gpus " : "mpirun -np ", ck->ranks,
                       gpus ? "" : " kettle resume", ranks);
    }
    return kt_fail(err, KT_EINVAL, "%s is rank %d's part of the checkpoint, not rank %d's",
                   path, ck->rank, rank);
}

int kt_checkpoint_open(const char *path, kt_checkpoint **out, kt_error *err)
{
    return kt_checkpoint_open_part(path, kt_mpi_rank(), kt_mpi_size(), out, err);
}

int kt_checkpoint_open_part(const char *given, int rank, int ranks, kt_checkpoint **out,
                            kt_error *err)
{
    *out = NULL;
    kt_checkpoint *ck = calloc(1, sizeof *ck);
    if (!ck)
        return kt_fail(err, KT_ENOMEM, "out of memory");
    char path[sizeof ck->path];
    kt_checkpoint_part_path(given, rank, path, sizeof path);
    snprintf(ck->path, sizeof ck->path, "%s", path);
    ck->f = fopen(path, "rb");
    int missing = !ck->f && errno == ENOENT;
    int rc = ck->f ? KT_OK : kt_fail(err, KT_EIO, "cannot read %s: %s", path, strerror(errno));
    if (rc < 0 && rank > 0 && missing)
        rc = kt_fail(err, KT_EINVAL, "%s has no part for rank %d of %d (%s is missing): was "
                     "it written by a render over fewer ranks?", given, rank, ranks, path);
    if (rc == 0)
        rc = check_header(ck->f, path, err);
    if (rc == 0)
        rc = check_sum(ck->f, path, &ck->data_bytes, err);
    if (rc == 0)
        rc = get_meta(ck, err);
    if (rc == 0)
        rc = check_ranks(ck, given, rank, ranks, err);
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
    opt->warn = NULL;
    opt->user = NULL;
    opt->resume = ck;
}

const char *kt_checkpoint_output(const kt_checkpoint *ck) { return ck->output; }
const char *kt_checkpoint_folder(const kt_checkpoint *ck) { return ck->folder; }
int64_t kt_checkpoint_step(const kt_checkpoint *ck) { return ck->step; }
int64_t kt_checkpoint_total_steps(const kt_checkpoint *ck) { return ck->total_steps; }
int kt_checkpoint_ranks(const kt_checkpoint *ck) { return ck->ranks; }

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
        if (rc == 0 && !(pedals[d].tension_N_per_m > 0 && isfinite(pedals[d].tension_N_per_m)))
            rc = bad_real(err, "drum tension", pedals[d].tension_N_per_m);
        if (rc == 0 &&
            !(pedals[d].glide_from_N_per_m >= 0 && isfinite(pedals[d].glide_from_N_per_m)))
            rc = bad_real(err, "tension a glide starts from", pedals[d].glide_from_N_per_m);
        if (rc == 0 && pedals[d].pedal < -1)
            rc = bad_int(err, "pedal index", pedals[d].pedal);
    }
    if (rc == 0)
        rc = get_int(io, damp_next, err);
    if (rc == 0 && *damp_next < 0)
        rc = bad_int(err, "damping index", *damp_next);
    return rc;
}

int kt_checkpoint_restore(const kt_checkpoint *ck, kt_room *room, kt_timpani *const *drums,
                          kt_checkpoint_drum *pedals, int drum_count, int *damp_next,
                          kt_error *err)
{
    kt_state_io io = {ck->f, KT_STATE_HASH_BASIS, 0, ck->data_bytes - (uint64_t)ck->state_offset};
    int rc = fseek(ck->f, ck->state_offset, SEEK_SET) != 0
                 ? kt_fail(err, KT_EIO, "%s: cannot seek", ck->path)
                 : get_pedals(&io, pedals, drum_count, damp_next, err);
    if (rc == 0)
        rc = kt_room_load_state(room, &io, err);
    for (int d = 0; rc == 0 && d < drum_count; d++)
        rc = kt_timpani_load_state(drums[d], &io, err);
    if (rc == 0 && kt_room_step_index(room) != ck->step)
        rc = kt_fail(err, KT_EINVAL, "the checkpoint is damaged or forged: its room's step "
                     "(%lld) is not its step (%lld)", (long long)kt_room_step_index(room),
                     (long long)ck->step);
    if (ck->ranks < 2)
        return rc;
    /* every rank goes on, or none: its parts at one step, all restored */
    double first = kt_mpi_min((double)ck->step), last = kt_mpi_max((double)ck->step);
    int all = kt_mpi_min(rc == 0) > 0;
    if (rc == 0 && first != last)
        rc = kt_fail(err, KT_EINVAL, "the parts of the checkpoint %s are of different steps "
                     "(%.0f to %.0f): the render stopped while writing them; none can be "
                     "resumed", ck->path, first, last);
    else if (rc == 0 && !all)
        rc = kt_fail(err, KT_EINVAL, "another rank could not restore its part of the "
                     "checkpoint (its message says why)");
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
