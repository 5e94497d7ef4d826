/* png_plot.c - the two kinds of picture Kettle draws: a slice of the
 * pressure field (diverging colours around zero, symmetric range, legend
 * bar) and a sound file's waveform plus spectrogram (Hann-windowed STFT
 * through a small radix-2 FFT, decibels from the loudest bin). */
#include "kt_png.h"
#include "kt_physics.h"

#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t black[3] = {0, 0, 0}, grey[3] = {150, 150, 150}, white[3] = {255, 255, 255};

/* ---- field slices ---- */

static void legend(kt_canvas *c, int x, int y, int h, double vmax, const char *lo_label,
                   int diverging)
{
    for (int j = 0; j < h; j++) {
        uint8_t rgb[3];
        double v = 1 - (double)j / (h - 1);
        if (diverging)
            kt_colormap_diverging(2 * v - 1, rgb);
        else
            kt_colormap_sequential(v, rgb);
        kt_canvas_fill(c, x, y + j, 16, 1, rgb);
    }
    char s[32];
    snprintf(s, sizeof s, "%+.3g", vmax);
    kt_canvas_text(c, x + 22, y, 1, s, black);
    if (diverging) {
        kt_canvas_text(c, x + 22, y + h / 2 - 3, 1, "0", black);
        snprintf(s, sizeof s, "%+.3g", -vmax);
        kt_canvas_text(c, x + 22, y + h - 7, 1, s, black);
    } else {
        kt_canvas_text(c, x + 22, y + h - 7, 1, lo_label, black);
    }
}

int kt_png_write_field(const char *path, const double *v, int w, int h, const char *title,
                       kt_error *err)
{
    if (w < 1 || h < 1)
        return kt_fail(err, KT_EINVAL, "empty field");
    double vmax = 0;
    for (size_t i = 0; i < (size_t)w * h; i++)
        if (fabs(v[i]) > vmax)
            vmax = fabs(v[i]);
    int scale = 1;
    while ((w > h ? w : h) * (scale + 1) <= 600)
        scale++;
    int fw = w * scale, fh = h * scale, top = 24, left = 10;
    int width = left + fw + 100, tw = kt_canvas_text_width(1, title) + 20;
    if (width < tw)
        width = tw;
    kt_canvas c;
    int rc = kt_canvas_init(&c, width, top + fh + 14, err);
    if (rc < 0)
        return rc;
    kt_canvas_text(&c, left, 8, 1, title, black);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            uint8_t rgb[3];
            kt_colormap_diverging(vmax > 0 ? v[(size_t)j * w + i] / vmax : 0, rgb);
            kt_canvas_fill(&c, left + i * scale, top + j * scale, scale, scale, rgb);
        }
    legend(&c, left + fw + 14, top, fh, vmax, "", 1);
    rc = kt_canvas_write_png(&c, path, err);
    kt_canvas_release(&c);
    return rc;
}

/* ---- spectrograms ---- */

/* In-place iterative radix-2 FFT of n = 2^m complex values (re, im). */
static void fft(double *re, double *im, int n)
{
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        double a = -2 * KT_PI / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < len / 2; k++) {
                double wr = cos(a * k), wi = sin(a * k);
                double xr = re[i + k + len / 2] * wr - im[i + k + len / 2] * wi;
                double xi = re[i + k + len / 2] * wi + im[i + k + len / 2] * wr;
                re[i + k + len / 2] = re[i + k] - xr;
                im[i + k + len / 2] = im[i + k] - xi;
                re[i + k] += xr;
                im[i + k] += xi;
            }
    }
}

/* Power of column-frames of channel ch of pcm, added to out[col * nbins + bin]. */
static int add_spectrogram(const float *pcm, int64_t frames, int channels, int ch, int cols,
                           int nfft, double *out)
{
    double *re = malloc((size_t)nfft * sizeof *re), *im = malloc((size_t)nfft * sizeof *im);
    if (!re || !im) {
        free(re);
        free(im);
        return KT_ENOMEM;
    }
    int nbins = nfft / 2;
    for (int c = 0; c < cols; c++) {
        int64_t centre = (int64_t)((c + 0.5) * frames / cols);
        for (int i = 0; i < nfft; i++) {
            int64_t s = centre - nfft / 2 + i;
            double win = 0.5 - 0.5 * cos(2 * KT_PI * i / nfft);
            re[i] = (s >= 0 && s < frames) ? pcm[s * channels + ch] * win : 0;
            im[i] = 0;
        }
        fft(re, im, nfft);
        for (int b = 0; b < nbins; b++)
            out[(size_t)c * nbins + b] += re[b] * re[b] + im[b] * im[b];
    }
    free(re);
    free(im);
    return KT_OK;
}

static void axis_label(kt_canvas *c, int x, int y, const char *fmt, double v)
{
    char s[32];
    snprintf(s, sizeof s, fmt, v);
    kt_canvas_text(c, x, y, 1, s, black);
}

/* Round step for about n ticks over span. */
static double tick_step(double span, int n)
{
    double raw = span / n, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

typedef struct plot_layout { int left, width, wave_h, spec_top, spec_h; } plot_layout;

static void draw_waves(kt_canvas *c, const plot_layout *L, const float *pcm, int64_t frames,
                       int channels, int shown)
{
    for (int ch = 0; ch < shown; ch++) {
        int y0 = 24 + ch * (L->wave_h + 8), mid = y0 + L->wave_h / 2;
        kt_canvas_fill(c, L->left, y0, L->width, L->wave_h, (uint8_t[3]){245, 245, 245});
        kt_canvas_fill(c, L->left, mid, L->width, 1, grey);
        float peak = 1e-30f;
        for (int64_t s = 0; s < frames; s++)
            peak = fmaxf(peak, fabsf(pcm[s * channels + ch]));
        for (int i = 0; i < L->width; i++) {
            int64_t a = i * frames / L->width, b = (i + 1) * frames / L->width;
            float lo = 0, hi = 0;
            for (int64_t s = a; s < b || s == a; s++) {
                if (s >= frames)
                    break;
                float v = pcm[s * channels + ch] / peak;
                lo = fminf(lo, v);
                hi = fmaxf(hi, v);
            }
            int ya = mid - (int)lrintf(hi * (L->wave_h / 2 - 1));
            int yb = mid - (int)lrintf(lo * (L->wave_h / 2 - 1));
            kt_canvas_fill(c, L->left + i, ya, 1, yb - ya + 1, (uint8_t[3]){30, 70, 160});
        }
        char s[48];
        snprintf(s, sizeof s, "ch %d  peak %.3g", ch + 1, peak);
        kt_canvas_text(c, 8, y0 + 2, 1, s, black);
    }
}

static int draw_spectrogram(kt_canvas *c, const plot_layout *L, const float *pcm, int64_t frames,
                            int channels, double sr, double fmax_hz)
{
    int nfft = 1;
    while (nfft < sr * 0.09)  /* about 90 ms: resolves a drum's partials */
        nfft <<= 1;
    int nbins = nfft / 2;
    double *db = calloc((size_t)L->width * nbins, sizeof *db);
    if (!db)
        return KT_ENOMEM;
    /* Powers add over channels: a mono mix would cancel modes that reach
     * two microphones in opposite phase, like a drum's (1,1) between a pair. */
    int rc = KT_OK;
    for (int ch = 0; ch < channels && rc == 0; ch++)
        rc = add_spectrogram(pcm, frames, channels, ch, L->width, nfft, db);
    for (size_t i = 0; i < (size_t)L->width * nbins; i++)
        db[i] = 10 * log10(db[i] + 1e-300);
    if (rc == 0) {
        double top = -1e300, range_db = 90;
        int maxbin = (int)fmin(nbins - 1, ceil(fmax_hz / (sr / nfft)));
        for (size_t i = 0; i < (size_t)L->width * nbins; i++)
            top = fmax(top, db[i]);
        for (int col = 0; col < L->width; col++)
            for (int row = 0; row < L->spec_h; row++) {
                double f = (L->spec_h - 1 - row + 0.5) / L->spec_h * fmax_hz;
                int bin = (int)lround(f / (sr / nfft));
                if (bin > maxbin)
                    bin = maxbin;
                uint8_t rgb[3];
                kt_colormap_sequential((db[(size_t)col * nbins + bin] - top + range_db) / range_db,
                                       rgb);
                kt_canvas_fill(c, L->left + col, L->spec_top + row, 1, 1, rgb);
            }
        legend(c, L->left + L->width + 10, L->spec_top, L->spec_h, 0, "-90 dB", 0);
        kt_canvas_fill(c, L->left + L->width + 32, L->spec_top, 40, 8, white);
        kt_canvas_text(c, L->left + L->width + 32, L->spec_top, 1, "0 dB", black);
    }
    free(db);
    return rc;
}

static void draw_axes(kt_canvas *c, const plot_layout *L, double seconds, double fmax_hz)
{
    double ts = tick_step(seconds, 8);
    int ybase = L->spec_top + L->spec_h;
    for (double t = 0; t <= seconds + 1e-9; t += ts) {
        int x = L->left + (int)lround(t / seconds * (L->width - 1));
        kt_canvas_fill(c, x, ybase, 1, 5, black);
        axis_label(c, x - 10, ybase + 8, ts < 0.1 ? "%.2f" : "%.1f", t);
    }
    kt_canvas_text(c, L->left + L->width - 60, ybase + 20, 1, "time [s]", black);
    double fs = tick_step(fmax_hz, 6);
    for (double f = 0; f <= fmax_hz + 1e-9; f += fs) {
        int y = ybase - 1 - (int)lround(f / fmax_hz * (L->spec_h - 1));
        kt_canvas_fill(c, L->left - 5, y, 5, 1, black);
        axis_label(c, 4, y - 3, "%5.0f", f);
    }
    kt_canvas_text(c, 4, L->spec_top - 12, 1, "freq [Hz]", black);
}

int kt_png_plot_file(const char *audio_path, const char *png_path, double fmax_hz,
                     kt_error *err)
{
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *f = sf_open(audio_path, SFM_READ, &info);
    if (!f)
        return kt_fail(err, KT_EIO, "cannot read %s: %s", audio_path, sf_strerror(NULL));
    if (info.frames < 1 || info.channels < 1) {
        sf_close(f);
        return kt_fail(err, KT_EINVAL, "%s holds no audio", audio_path);
    }
    float *pcm = malloc((size_t)info.frames * info.channels * sizeof *pcm);
    if (!pcm) {
        sf_close(f);
        return kt_fail(err, KT_ENOMEM, "out of memory reading %s", audio_path);
    }
    sf_count_t got = sf_readf_float(f, pcm, info.frames);
    sf_close(f);
    double sr = info.samplerate;
    double top_hz = fmax_hz > 0 ? fmin(fmax_hz, sr / 2) : sr / 2;
    int shown = info.channels < 8 ? info.channels : 8;
    plot_layout L = {60, 900, 90, 0, 320};
    L.spec_top = 24 + shown * (L.wave_h + 8) + 20;
    kt_canvas c;
    int rc = kt_canvas_init(&c, L.left + L.width + 90, L.spec_top + L.spec_h + 36, err);
    if (rc == 0) {
        char title[300];
        snprintf(title, sizeof title, "%.200s  (%d ch, %.0f Hz, %.3f s)", audio_path,
                 info.channels, sr, got / sr);
        kt_canvas_text(&c, 8, 6, 1, title, black);
        draw_waves(&c, &L, pcm, got, info.channels, shown);
        if (shown < info.channels)
            kt_canvas_text(&c, 8, L.spec_top - 30, 1, "(first 8 channels shown)", black);
        rc = draw_spectrogram(&c, &L, pcm, got, info.channels, sr, top_hz);
        if (rc < 0)
            rc = kt_fail(err, rc, "out of memory for the spectrogram");
        if (rc == 0) {
            draw_axes(&c, &L, got / sr, top_hz);
            rc = kt_canvas_write_png(&c, png_path, err);
        }
        kt_canvas_release(&c);
    }
    free(pcm);
    return rc;
}
