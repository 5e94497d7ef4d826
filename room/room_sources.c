/* room_sources.c - soft sources (thesis 3.2): sample sequences added to
 * Psi^{n+1} at the nearest node, after the list corrections and before the
 * instruments (design note 7.2 C).  A raised-cosine impulse or a mono sound
 * file read through libsndfile. */
#include "room_internal.h"
#include "kt_physics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int add_source(kt_room *room, const double pos_m[3], double start_s, double *samples,
                      int64_t count, kt_error *err)
{
    int node[3], rc;
    if ((rc = room_nearest_node(room, pos_m, node, err)) < 0) {
        free(samples);
        return rc;
    }
    if (room->plan.fcc)
        room_fcc_snap(room, pos_m, node);   /* the nearest node of the FCC lattice */
    if (!room_holds(room, node[0], node[1], node[2])) {
        free(samples);           /* another rank's part of a split room: its source */
        return KT_OK;
    }
    if (room->plan.src_count == room->plan.src_capacity) {
        int cap = room->plan.src_capacity ? 2 * room->plan.src_capacity : 4;
        room_source *grown = realloc(room->plan.src, sizeof *grown * (size_t)cap);
        if (!grown) {
            free(samples);
            return kt_fail(err, KT_ENOMEM, "out of memory adding a source");
        }
        room->plan.src = grown;
        room->plan.src_capacity = cap;
    }
    room_source *s = &room->plan.src[room->plan.src_count++];
    s->node = room_node_index(room, node[0], node[1], node[2]);
    /* Level m holds time m k; the first sample goes to the first level at or
     * after start.  Level 0 is the initial state, never stepped to, so a
     * source starting at 0 begins one step later rather than losing a sample. */
    s->first_level = (int64_t)ceil(start_s / room->plan.grid.time_step_s - 1e-9);
    if (s->first_level < 1)
        s->first_level = 1;
    s->samples = samples;
    s->count = count;
    return KT_OK;
}

int kt_room_add_impulse(kt_room *room, const double pos_m[3], double start_s,
                        double duration_s, double amplitude, kt_error *err)
{
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_room_add_impulse: room is NULL");
    if (!(start_s >= 0) || !isfinite(start_s))
        return kt_fail(err, KT_EINVAL, "impulse start must be >= 0 s, got %g", start_s);
    if (!(duration_s > 0) || !isfinite(duration_s))
        return kt_fail(err, KT_EINVAL, "impulse duration must be positive, got %g s", duration_s);
    if (!isfinite(amplitude))
        return kt_fail(err, KT_EINVAL, "impulse amplitude must be finite");
    double k = room->plan.grid.time_step_s;
    double first = ceil(start_s / k - 1e-9) * k;
    int64_t count = (int64_t)floor((start_s + duration_s - first) / k) + 1;
    if (count < 1)
        count = 1;
    double *s = malloc(sizeof *s * (size_t)count);
    if (!s)
        return kt_fail(err, KT_ENOMEM, "out of memory for an impulse");
    for (int64_t m = 0; m < count; m++) {
        double t = first + (double)m * k - start_s;
        s[m] = t > duration_s ? 0.0 : 0.5 * amplitude * (1.0 - cos(2 * KT_PI * t / duration_s));
    }
    return add_source(room, pos_m, start_s, s, count, err);
}

/* A sound file opened for reading if it is a regular file: opened without
 * blocking (a FIFO with no writer would block open() for ever), then looked at. */
static int open_sound(const char *path, SF_INFO *info, SNDFILE **out, kt_error *err)
{
    struct stat st;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return kt_fail(err, KT_EIO, "%s: cannot read sound file: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kt_fail(err, KT_EINVAL, "%s: not a regular file (a FIFO, device or folder); a "
                       "sound file source must be a file", path);
    }
    memset(info, 0, sizeof *info);
    *out = sf_open_fd(fd, SFM_READ, info, SF_TRUE);   /* closes fd, also on failure */
    if (!*out)
        return kt_fail(err, KT_EIO, "%s: cannot read sound file: %s", path, sf_strerror(NULL));
    return KT_OK;
}

int kt_sound_file_seconds(const char *path, double *seconds, kt_error *err)
{
    SF_INFO info;
    SNDFILE *f;
    int rc = open_sound(path, &info, &f, err);
    if (rc < 0)
        return rc;
    *seconds = info.samplerate > 0 ? (double)info.frames / info.samplerate : 0;
    sf_close(f);
    return KT_OK;
}

/* A sound-file source longer than this is refused before its samples are
 * allocated (a damaged header can claim any length). */
#define SOURCE_MAX_S (4 * 3600.0)

int kt_room_add_file_source(kt_room *room, const char *path, const double pos_m[3],
                            double start_s, double gain, kt_error *err)
{
    if (!room || !path)
        return kt_fail(err, KT_EINVAL, "kt_room_add_file_source: room or path is NULL");
    if (!(start_s >= 0) || !isfinite(start_s) || !isfinite(gain))
        return kt_fail(err, KT_EINVAL, "%s: start must be >= 0 s and gain finite", path);
    int rc = room_check_position(room, pos_m, path, err);
    if (rc < 0)
        return rc;
    SF_INFO info;
    SNDFILE *f;
    if ((rc = open_sound(path, &info, &f, err)) < 0)
        return rc;
    if (info.channels != 1) {
        sf_close(f);
        return kt_fail(err, KT_EINVAL, "%s: has %d channels; a source must be mono", path,
                       info.channels);
    }
    if (fabs(info.samplerate - room->plan.params.sample_rate_hz) > 1e-6) {
        sf_close(f);
        return kt_fail(err, KT_EINVAL,
                       "%s: sample rate is %d Hz but the room runs at %g Hz; resample it first",
                       path, info.samplerate, room->plan.params.sample_rate_hz);
    }
    int64_t count = info.frames > 0 ? (int64_t)info.frames : 0;
    if (count > (int64_t)(SOURCE_MAX_S * room->plan.params.sample_rate_hz)) {
        sf_close(f);
        return kt_fail(err, KT_EINVAL, "%s: says it holds %lld frames, over %g hours: refused",
                       path, (long long)count, SOURCE_MAX_S / 3600);
    }
    double *s = malloc(sizeof *s * (size_t)(count ? count : 1));
    if (!s) {
        sf_close(f);
        return kt_fail(err, KT_ENOMEM, "%s: out of memory reading it", path);
    }
    sf_count_t got = sf_readf_double(f, s, count);
    sf_close(f);
    if (got != count) {
        free(s);
        return kt_fail(err, KT_EIO, "%s: read %lld of %lld frames", path, (long long)got,
                       (long long)count);
    }
    for (int64_t m = 0; m < count; m++)
        s[m] *= gain;
    return add_source(room, pos_m, start_s, s, count, err);
}

void room_apply_sources(kt_room *room)
{
    int64_t level = room->n + 1;
    for (int k = 0; k < room->plan.src_count; k++) {
        const room_source *s = &room->plan.src[k];
        int64_t m = level - s->first_level;
        if (m >= 0 && m < s->count)
            room_add(room, room->next, s->node, s->samples[m]);
    }
}

void room_free_sources(kt_room *room)
{
    for (int k = 0; k < room->plan.src_count; k++)
        free(room->plan.src[k].samples);
    free(room->plan.src);
    room->plan.src = NULL;
    room->plan.src_count = room->plan.src_capacity = 0;
}
