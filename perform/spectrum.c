/* spectrum.c - frequencies of partials read to a fraction of a cent: a
 * Hann-windowed stretch zero-padded and transformed with FFTW (r2c), then
 * each peak refined by a golden-section search of the windowed DTFT's power
 * between its padded neighbours (kt_spectrum.h says why that is exact for an
 * isolated partial).  Plans use FFTW_ESTIMATE: no timing, so the same input
 * always gives the same bits. */
#include "kt_spectrum.h"
#include "kt_physics.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Golden-section steps: the bracket (two padded bins) shrinks by 0.618 each,
 * to 1e-10 of a bin after 50. */
#define REFINE_STEPS 50

void kt_spectrum_free(kt_spectrum *s)
{
    free(s->windowed);
    free(s->power);
    memset(s, 0, sizeof *s);
}

static int64_t padded_length(int64_t n, int pad)
{
    int64_t m = 1;
    while (m < n * pad)
        m <<= 1;
    return m;
}

/* |FFT|^2 of each channel's windowed samples, zero-padded, added into power. */
static int transform(kt_spectrum *s, kt_error *err)
{
    int64_t nfft = s->nfft, nb = nfft / 2 + 1;
    double *in = fftw_malloc(sizeof *in * (size_t)nfft);
    fftw_complex *out = fftw_malloc(sizeof *out * (size_t)nb);
    fftw_plan plan = in && out ? fftw_plan_dft_r2c_1d((int)nfft, in, out, FFTW_ESTIMATE) : NULL;
    if (!plan) {
        fftw_free(in);
        fftw_free(out);
        return kt_fail(err, KT_ENOMEM, "no memory for a %lld-point transform", (long long)nfft);
    }
    for (int c = 0; c < s->channels; c++) {
        memcpy(in, s->windowed + (size_t)c * s->n, sizeof *in * (size_t)s->n);
        memset(in + s->n, 0, sizeof *in * (size_t)(nfft - s->n));
        fftw_execute(plan);
        for (int64_t b = 0; b < nb; b++)
            s->power[b] += out[b][0] * out[b][0] + out[b][1] * out[b][1];
    }
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
    return KT_OK;
}

int kt_spectrum_compute(kt_spectrum *s, const double *x, int64_t n, int channels,
                        ptrdiff_t stride, double rate_hz, int pad, kt_error *err)
{
    memset(s, 0, sizeof *s);
    if (!x || n < 4 || channels < 1 || stride < channels || !(rate_hz > 0) || pad < 1)
        return kt_fail(err, KT_EINVAL, "a spectrum needs at least 4 samples, a channel and a "
                                       "positive rate (got %lld samples, %d channels, %g Hz)",
                       (long long)n, channels, rate_hz);
    if (n > ((int64_t)1 << 28) / pad)
        return kt_fail(err, KT_EINVAL, "a spectrum of %lld samples is too long (at most %lld)",
                       (long long)n, (long long)(((int64_t)1 << 28) / pad));
    s->rate_hz = rate_hz;
    s->n = n;
    s->channels = channels;
    s->nfft = padded_length(n, pad);
    s->windowed = malloc(sizeof *s->windowed * (size_t)n * (size_t)channels);
    s->power = calloc((size_t)(s->nfft / 2 + 1), sizeof *s->power);
    if (!s->windowed || !s->power) {
        kt_spectrum_free(s);
        return kt_fail(err, KT_ENOMEM, "no memory for a spectrum of %lld samples", (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        double w = 0.5 - 0.5 * cos(2 * KT_PI * (double)i / (double)(n - 1));
        for (int c = 0; c < channels; c++)
            s->windowed[(size_t)c * n + i] = w * x[i * stride + c];
    }
    int rc = transform(s, err);
    if (rc < 0)
        kt_spectrum_free(s);
    return rc;
}

double kt_spectrum_power_at(const kt_spectrum *s, double hz)
{
    double w = 2 * KT_PI * hz / s->rate_hz, total = 0;
    for (int c = 0; c < s->channels; c++) {
        const double *x = s->windowed + (size_t)c * s->n;
        double re = 0, im = 0;
        /* the phasor is recomputed every 256 samples, so rounding cannot drift */
        for (int64_t i0 = 0; i0 < s->n; i0 += 256) {
            double cr = cos(w * (double)i0), ci = -sin(w * (double)i0);
            double dr = cos(w), di = -sin(w);
            int64_t i1 = i0 + 256 < s->n ? i0 + 256 : s->n;
            for (int64_t i = i0; i < i1; i++) {
                re += x[i] * cr;
                im += x[i] * ci;
                double t = cr * dr - ci * di;
                ci = cr * di + ci * dr;
                cr = t;
            }
        }
        total += re * re + im * im;
    }
    return total;
}

/* The maximum of the DTFT power between padded bins b - 1 and b + 1. */
static void refine(const kt_spectrum *s, int64_t b, double top, kt_peak *out)
{
    double bin_hz = s->rate_hz / (double)s->nfft, g = (sqrt(5.0) - 1) / 2;
    double a = (b - 1) * bin_hz, z = (b + 1) * bin_hz;
    double c = z - g * (z - a), d = a + g * (z - a);
    double fc = kt_spectrum_power_at(s, c), fd = kt_spectrum_power_at(s, d);
    for (int i = 0; i < REFINE_STEPS; i++) {
        if (fc > fd) {
            z = d;
            d = c;
            fd = fc;
            c = z - g * (z - a);
            fc = kt_spectrum_power_at(s, c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (z - a);
            fd = kt_spectrum_power_at(s, d);
        }
    }
    out->hz = (a + z) / 2;
    out->power = fc > fd ? fc : fd;
    out->db = 10 * log10(out->power / top);
}

/* Bins of [lo_hz, hi_hz] that the search may look at (not the ends of the
 * spectrum, so that every candidate has two neighbours). */
static int band(const kt_spectrum *s, double lo_hz, double hi_hz, int64_t *b0, int64_t *b1)
{
    double bin_hz = s->rate_hz / (double)s->nfft;
    int64_t last = s->nfft / 2 - 1;
    *b0 = (int64_t)ceil(lo_hz / bin_hz);
    *b1 = (int64_t)floor(hi_hz / bin_hz);
    if (*b0 < 1)
        *b0 = 1;
    if (*b1 > last)
        *b1 = last;
    return *b0 <= *b1;
}

static double strongest(const kt_spectrum *s)
{
    double top = 0;
    for (int64_t b = 0; b <= s->nfft / 2; b++)
        top = fmax(top, s->power[b]);
    return top;
}

int kt_spectrum_peak(const kt_spectrum *s, double lo_hz, double hi_hz, kt_peak *out)
{
    int64_t b0, b1, best = -1;
    if (!band(s, lo_hz, hi_hz, &b0, &b1))
        return KT_EINVAL;
    for (int64_t b = b0; b <= b1; b++)
        if (best < 0 || s->power[b] > s->power[best])
            best = b;
    double top = strongest(s);
    if (!(top > 0) || !(s->power[best] > 0))
        return KT_EINVAL;
    refine(s, best, top, out);
    return KT_OK;
}

static int by_power(const void *a, const void *b)
{
    double x = ((const kt_peak *)a)->power, y = ((const kt_peak *)b)->power;
    return (x < y) - (x > y);
}

int kt_spectrum_peaks(const kt_spectrum *s, double lo_hz, double hi_hz, double range_db,
                      double min_cents, kt_peak *out, int max)
{
    int64_t b0, b1;
    double top = strongest(s);
    if (max < 1 || !(top > 0) || !band(s, lo_hz, hi_hz, &b0, &b1))
        return 0;
    /* every local maximum above the floor, as candidates on the padded grid */
    double floor_power = top * pow(10.0, -range_db / 10), bin_hz = s->rate_hz / (double)s->nfft;
    int cap = 4096, count = 0;
    kt_peak *cand = malloc(sizeof *cand * (size_t)cap);
    if (!cand)
        return 0;
    for (int64_t b = b0; b <= b1; b++) {
        double p = s->power[b];
        if (p >= floor_power && p > s->power[b - 1] && p >= s->power[b + 1]) {
            if (count == cap) {
                qsort(cand, (size_t)count, sizeof *cand, by_power);
                count = cap / 2;  /* keep the stronger half */
            }
            cand[count++] = (kt_peak){b * bin_hz, p, 0};
        }
    }
    qsort(cand, (size_t)count, sizeof *cand, by_power);
    int kept = 0;
    for (int i = 0; i < count && kept < max; i++) {
        int near = 0;
        for (int j = 0; j < kept && !near; j++)
            near = fabs(kt_cents(cand[i].hz, out[j].hz)) < min_cents;
        if (!near)
            refine(s, (int64_t)lround(cand[i].hz / bin_hz), top, &out[kept++]);
    }
    free(cand);
    qsort(out, (size_t)kept, sizeof *out, by_power);
    return kept;
}

double kt_cents(double a_hz, double b_hz)
{
    return 1200 * log2(a_hz / b_hz);
}

int kt_note_nearest(double hz, char *name, size_t size, double *cents)
{
    static const char *const names[12] = {"C", "C#", "D", "Eb", "E", "F",
                                          "F#", "G", "G#", "A", "Bb", "B"};
    if (!(hz > 0) || !isfinite(hz))
        return -1;
    double midi = 69 + 12 * log2(hz / 440.0);
    long m = lround(midi);
    if (m < 0 || m > 1000)
        return -1;
    if (cents)
        *cents = 100 * (midi - (double)m);
    if (name && size)
        snprintf(name, size, "%s%ld", names[m % 12], m / 12 - 1);
    return (int)m;
}
