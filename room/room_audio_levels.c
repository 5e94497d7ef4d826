/* room_audio_levels.c - from the microphones' pascals to the samples of a
 * sound file: resampling to the rate asked for (libsamplerate's best sinc
 * converter), the gain (a fixed pascals-to-full-scale factor, or normalised
 * to a peak), clipping where an integer file must, and each channel's peak,
 * RMS and gain for the summary.  room_audio.c writes what comes out. */
#include "room_internal.h"

#include <math.h>
#include <samplerate.h>
#include <stdlib.h>
#include <string.h>

/* The lowest and highest output rates a file may have; libsamplerate takes
 * ratios up to 256 either way. */
#define AUDIO_MIN_RATE_HZ 1000.0
#define AUDIO_MAX_RATE_HZ 768000.0

static int is_float(kt_sample_format f) { return f == KT_FLOAT32 || f == KT_FLOAT64; }

/* One channel from rate_in to rate_out.  libsamplerate works in single
 * precision (about 140 dB of range per sample, far below any file's noise). */
static int resample(const double *in, int64_t n, double ratio, double *out, int64_t n_out,
                    kt_error *err)
{
    float *fin = malloc(sizeof *fin * (size_t)(n ? n : 1));
    int64_t cap = n_out + 64;
    float *fout = calloc((size_t)cap, sizeof *fout);
    if (!fin || !fout) {
        free(fin);
        free(fout);
        return kt_fail(err, KT_ENOMEM, "out of memory resampling the microphones");
    }
    for (int64_t i = 0; i < n; i++)
        fin[i] = (float)in[i];
    SRC_DATA d;
    memset(&d, 0, sizeof d);
    d.data_in = fin;
    d.data_out = fout;
    d.input_frames = (long)n;
    d.output_frames = (long)cap;
    d.src_ratio = ratio;
    d.end_of_input = 1;
    int rc = src_simple(&d, SRC_SINC_BEST_QUALITY, 1);
    if (rc == 0)
        for (int64_t i = 0; i < n_out; i++)
            out[i] = i < d.output_frames_gen ? fout[i] : 0.0;
    free(fin);
    free(fout);
    return rc ? kt_fail(err, KT_EINVAL, "libsamplerate: %s", src_strerror(rc)) : KT_OK;
}

int kt_output_rate_check(const kt_output_options *o, double room_rate_hz, kt_error *err)
{
    double want = o->sample_rate_hz > 0 ? o->sample_rate_hz : room_rate_hz;
    if (!(want >= AUDIO_MIN_RATE_HZ && want <= AUDIO_MAX_RATE_HZ) || want != floor(want))
        return kt_fail(err, KT_EINVAL, "an output sample rate must be a whole number of Hz in "
                       "%.0f..%.0f, got %g", AUDIO_MIN_RATE_HZ, AUDIO_MAX_RATE_HZ, want);
    if (!src_is_valid_ratio(want / room_rate_hz))
        return kt_fail(err, KT_EINVAL, "cannot resample %g Hz to %g Hz (libsamplerate takes "
                       "ratios up to 256 either way)", room_rate_hz, want);
    return KT_OK;
}

int room_audio_rate(const kt_room *room, const kt_output_options *o, int *rate, kt_error *err)
{
    double in = room->plan.params.sample_rate_hz;
    int rc = kt_output_rate_check(o, in, err);
    *rate = (int)(o->sample_rate_hz > 0 ? o->sample_rate_hz : in);
    return rc;
}

/* Each channel's pressure at the output rate, channel after channel. */
static int channels_at_rate(const kt_room *room, int rate, double **out, int64_t *frames,
                            kt_error *err)
{
    int nch = room->plan.mic_count;
    int64_t n = room->plan.mic[0].count;
    double ratio = rate / room->plan.params.sample_rate_hz;
    int64_t n_out = ratio == 1.0 ? n : (int64_t)llround((double)n * ratio);
    double *all = malloc(sizeof *all * (size_t)(n_out ? n_out : 1) * (size_t)nch);
    if (!all)
        return kt_fail(err, KT_ENOMEM, "out of memory preparing the audio");
    int rc = KT_OK;
    for (int m = 0; m < nch && rc == KT_OK; m++) {
        if (ratio == 1.0)
            memcpy(all + (size_t)m * n_out, room->plan.mic[m].signal, sizeof *all * (size_t)n);
        else
            rc = resample(room->plan.mic[m].signal, n, ratio, all + (size_t)m * n_out, n_out, err);
    }
    if (rc < 0) {
        free(all);
        return rc;
    }
    *out = all;
    *frames = n_out;
    return KT_OK;
}

/* Pascals to full scale: normalised on the loudest channel, or the fixed factor. */
static double output_gain(const double *chan, int64_t total, const kt_output_options *o)
{
    if (!o->normalize)
        return o->raw_gain;
    double peak = 0;
    for (int64_t i = 0; i < total; i++)
        peak = fmax(peak, fabs(chan[i]));
    return peak > 0 ? pow(10.0, o->peak_dbfs / 20.0) / peak : 1.0;
}

/* Scales one channel into dst (stride apart), clipping for integer files. */
static void level_channel(const double *src, int64_t n, double gain, int clip, double *dst,
                          int stride, kt_channel_summary *s)
{
    double sum2 = 0;
    s->peak = 0;
    s->clipped = 0;
    s->gain = gain;
    for (int64_t i = 0; i < n; i++) {
        double v = gain * src[i];
        s->peak = fmax(s->peak, fabs(v));
        if (fabs(v) >= 1.0) {
            s->clipped++;
            if (clip)
                v = v > 0 ? 1.0 : -1.0;
        }
        sum2 += v * v;
        dst[i * stride] = v;
    }
    s->rms = n > 0 ? sqrt(sum2 / (double)n) : 0;
}

int room_audio_samples(const kt_room *room, const kt_output_options *o, int rate,
                       double **interleaved, int64_t *frames, kt_channel_summary *sum,
                       kt_error *err)
{
    double *chan = NULL;
    int64_t n = 0;
    int nch = room->plan.mic_count;
    int rc = channels_at_rate(room, rate, &chan, &n, err);
    if (rc < 0)
        return rc;
    double *data = malloc(sizeof *data * (size_t)(n ? n : 1) * (size_t)nch);
    if (!data) {
        free(chan);
        return kt_fail(err, KT_ENOMEM, "out of memory preparing the audio");
    }
    double gain = output_gain(chan, n * nch, o);
    for (int m = 0; m < nch; m++)
        level_channel(chan + (size_t)m * n, n, gain, !is_float(o->sample_format), data + m, nch,
                      &sum[m]);
    free(chan);
    *interleaved = data;
    *frames = n;
    return KT_OK;
}
