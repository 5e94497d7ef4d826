/* room_audio.c - writing the microphones' signals through libsndfile: WAV,
 * AIFF or FLAC chosen by the file's extension, 16/24/32-bit PCM or 32/64-bit
 * float, one file per microphone and/or one interleaved file (the samples
 * themselves, resampled and levelled, come from room_audio_levels.c).  Each file is written to a temporary beside its
 * destination and renamed over it only when complete, so a crash never
 * leaves a half-written file under the real name. */
#include "room_internal.h"
#include "kt_physics.h"
#include "kt_files.h"

#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void kt_output_options_default(kt_output_options *o)
{
    memset(o, 0, sizeof *o);
    o->sample_format = KT_PCM24;
    o->normalize = 0;
    o->peak_dbfs = -1.0;
    o->raw_gain = 1.0 / KT_FULL_SCALE_PA;
    o->per_mic = 0;
    o->interleaved = 1;
}

/* libsndfile format for a path and sample format, or a negative status. */
static int file_format(const char *path, kt_sample_format sf, int *format, kt_error *err)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash))
        return kt_fail(err, KT_EINVAL, "%s: no file extension; use .wav, .aif or .flac", path);
    int major;
    if (strcasecmp(dot, ".wav") == 0)
        major = SF_FORMAT_WAV;
    else if (strcasecmp(dot, ".aif") == 0 || strcasecmp(dot, ".aiff") == 0)
        major = SF_FORMAT_AIFF;
    else if (strcasecmp(dot, ".flac") == 0)
        major = SF_FORMAT_FLAC;
    else
        return kt_fail(err, KT_EINVAL, "%s: cannot write '%s' files; use .wav, .aif or .flac",
                       path, dot);
    int sub;
    switch (sf) {
    case KT_PCM16: sub = SF_FORMAT_PCM_16; break;
    case KT_PCM24: sub = SF_FORMAT_PCM_24; break;
    case KT_PCM32:
        if (major == SF_FORMAT_FLAC)
            return kt_fail(err, KT_EINVAL, "%s: FLAC holds 16- or 24-bit PCM, not 32-bit", path);
        sub = SF_FORMAT_PCM_32;
        break;
    case KT_FLOAT32:
        if (major == SF_FORMAT_FLAC)
            return kt_fail(err, KT_EINVAL, "%s: FLAC holds 16- or 24-bit PCM, not 32-bit float",
                           path);
        sub = SF_FORMAT_FLOAT;
        break;
    case KT_FLOAT64:
        if (major == SF_FORMAT_FLAC)
            return kt_fail(err, KT_EINVAL, "%s: FLAC holds 16- or 24-bit PCM, not 64-bit float",
                           path);
        sub = SF_FORMAT_DOUBLE;
        break;
    default:
        return kt_fail(err, KT_EINVAL, "unknown sample format %d (16, 24 or 32-bit PCM, 32- or 64-bit float)",
                       (int)sf);
    }
    *format = major | sub;
    return KT_OK;
}

/* "kettle microphones:" and a name a line: the channels' names, which
 * `kettle plot` reads back (SF_STR_COMMENT: a WAV's ICMT, a FLAC comment). */
static char *channel_names(const kt_room *room, int first, int count)
{
    static const char head[] = KT_AUDIO_NAMES_HEADER;
    size_t len = sizeof head;
    for (int m = first; m < first + count; m++)
        len += strlen(room->plan.mic[m].name) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    strcpy(s, head);
    for (int m = first; m < first + count; m++)
        strcat(strcat(s, "\n"), room->plan.mic[m].name);
    return s;
}

/* Writes frames x channels interleaved samples to path via a temporary. */
static int write_file(const char *path, int format, int channels, int samplerate,
                      const double *data, int64_t frames, const char *names, kt_error *err)
{
    size_t len = strlen(path) + 48;
    char *tmp = malloc(len);
    if (!tmp)
        return kt_fail(err, KT_ENOMEM, "out of memory writing %s", path);
    int fd = kt_file_temp(path, tmp, len, err);
    if (fd < 0) {
        free(tmp);
        return fd;
    }
    /* mkstemp makes the file private (0600); a sound file is for sharing. */
    fchmod(fd, 0644);
    SF_INFO info = {0};
    info.samplerate = samplerate;
    info.channels = channels;
    info.format = format;
    SNDFILE *f = sf_open_fd(fd, SFM_WRITE, &info, SF_TRUE);
    int rc = KT_OK;
    if (!f) {
        close(fd);
        rc = kt_fail(err, KT_EIO, "%s: libsndfile refused the format: %s", path,
                     sf_strerror(NULL));
    } else {
        sf_command(f, SFC_SET_CLIPPING, NULL, SF_TRUE);
        if (names)
            sf_set_string(f, SF_STR_COMMENT, names);
        sf_count_t put = sf_writef_double(f, data, frames);
        if (put != frames)
            rc = kt_fail(err, KT_EIO, "%s: wrote %lld of %lld frames: %s", path,
                         (long long)put, (long long)frames, sf_strerror(f));
        /* on disk, header included, before the rename makes it the real file */
        sf_command(f, SFC_UPDATE_HEADER_NOW, NULL, 0);
        sf_write_sync(f);
        if (sf_close(f) != 0 && rc == KT_OK)
            rc = kt_fail(err, KT_EIO, "%s: closing failed", path);
    }
    if (rc == KT_OK && rename(tmp, path) != 0)
        rc = kt_fail(err, KT_EIO, "%s: cannot rename the finished temporary file onto it", path);
    if (rc != KT_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* "dir/take.wav" + "left" -> "dir/take_left.wav". */
static char *per_mic_path(const char *path, const char *name)
{
    const char *dot = strrchr(path, '.');
    size_t stem = (size_t)(dot - path), len = strlen(path) + strlen(name) + 2;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%.*s_%s%s", (int)stem, path, name, dot);
    return out;
}

static int check_options(const kt_room *room, const char *path, const kt_output_options *o,
                         kt_error *err)
{
    if (!room || !path || !path[0])
        return kt_fail(err, KT_EINVAL, "kt_room_write_audio: no room or no path");
    if (room->plan.mic_count == 0)
        return kt_fail(err, KT_EINVAL, "%s: the room has no microphones to write", path);
    if (!o->per_mic && !o->interleaved)
        return kt_fail(err, KT_EINVAL, "%s: ask for per-mic files, an interleaved file, or both",
                       path);
    if (o->normalize ? !isfinite(o->peak_dbfs) : !(isfinite(o->raw_gain) && o->raw_gain > 0))
        return kt_fail(err, KT_EINVAL, "%s: the peak level must be finite, the gain finite and "
                       "positive", path);
    if (room->plan.mic[0].count == 0)
        return kt_fail(err, KT_EINVAL, "%s: nothing recorded yet (no steps taken)", path);
    return KT_OK;
}

int kt_output_check(const char *path, const kt_output_options *o, const char *const *mic_names,
                    int mics, int64_t frames, kt_error *err)
{
    int format = 0, rc = file_format(path, o->sample_format, &format, err);
    /* FLAC's size is known only once it is coded; WAV's is exact */
    double bytes_per_channel = (format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV
                                   ? (double)frames * ((int)o->sample_format / 8) : 0;
    if (rc == 0 && o->interleaved)
        rc = kt_file_check_writable(path, mics * bytes_per_channel, "the output", err);
    for (int m = 0; rc == 0 && o->per_mic && m < mics; m++) {
        char *p = per_mic_path(path, mic_names[m]);
        rc = p ? kt_file_check_writable(p, bytes_per_channel, "the output", err)
               : kt_fail(err, KT_ENOMEM, "out of memory naming a file");
        free(p);
    }
    return rc;
}

int kt_room_write_audio(const kt_room *room, const char *path, const kt_output_options *o,
                        kt_channel_summary *summary, kt_error *err)
{
    kt_output_options defaults;
    if (!o) {
        kt_output_options_default(&defaults);
        o = &defaults;
    }
    int format = 0, rc = check_options(room, path, o, err);
    if (rc < 0 || (rc = file_format(path, o->sample_format, &format, err)) < 0)
        return rc;
    int nch = room->plan.mic_count, rate = 0;
    int64_t frames = 0;
    double *data = NULL;
    kt_channel_summary *sum = malloc(sizeof *sum * (size_t)nch);
    if (!sum)
        return kt_fail(err, KT_ENOMEM, "out of memory preparing %s", path);
    rc = room_audio_rate(room, o, &rate, err);
    if (rc == KT_OK)
        rc = room_audio_samples(room, o, rate, &data, &frames, sum, err);
    if (rc < 0) {
        free(sum);
        return rc;
    }
    if (o->interleaved) {
        char *names = channel_names(room, 0, nch);
        rc = write_file(path, format, nch, rate, data, frames, names, err);
        free(names);
    }
    if (o->per_mic) {
        double *one = malloc(sizeof *one * (size_t)frames);
        if (!one)
            rc = kt_fail(err, KT_ENOMEM, "out of memory preparing %s", path);
        for (int m = 0; m < nch && rc >= 0; m++) {
            for (int64_t i = 0; i < frames; i++)
                one[i] = data[i * nch + m];
            char *p = per_mic_path(path, room->plan.mic[m].name), *names = channel_names(room, m, 1);
            rc = p ? write_file(p, format, 1, rate, one, frames, names, err)
                   : kt_fail(err, KT_ENOMEM, "out of memory naming a file");
            free(p);
            free(names);
        }
        free(one);
    }
    if (rc >= 0 && summary)
        memcpy(summary, sum, sizeof *sum * (size_t)nch);
    free(data);
    free(sum);
    return rc;
}
