/* png_plot.c - the two kinds of picture Kettle draws: a slice of the
 * pressure field (diverging colours around zero, symmetric range, legend
 * bar) and a sound file's picture: each channel's waveform under its
 * microphone's name, a spectrogram (Hann-windowed frames through FFTW,
 * decibels from the loudest bin) and the spectrum of the ringing part on a
 * logarithmic frequency axis with its peaks labelled in hertz and as the
 * nearest note +- cents (perform/include/kt_spectrum.h reads them to a fraction of a
 * cent). */
#include "kettle.h"
#include "kt_png.h"
#include "kt_physics.h"

#include <fftw3.h>
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
        if (fabs(v[i]) > vmax)   /* false for NaN */
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
            double x = v[(size_t)j * w + i];
            if (isnan(x))
                memcpy(rgb, grey, sizeof rgb);
            else
                kt_colormap_diverging(vmax > 0 ? x / vmax : 0, rgb);
            kt_canvas_fill(&c, left + i * scale, top + j * scale, scale, scale, rgb);
        }
    legend(&c, left + fw + 14, top, fh, vmax, "", 1);
    rc = kt_canvas_write_png(&c, path, err);
    kt_canvas_release(&c);
    return rc;
}

/* ---- spectrograms ---- */

/* Power of column-frames of channel ch of pcm, added to out[col * nbins + bin]. */
static int add_spectrogram(const double *pcm, int64_t frames, int channels, int ch, int cols,
                           int nfft, double *out)
{
    double *in = fftw_malloc(sizeof *in * (size_t)nfft);
    fftw_complex *spec = fftw_malloc(sizeof *spec * (size_t)(nfft / 2 + 1));
    fftw_plan plan = in && spec ? fftw_plan_dft_r2c_1d(nfft, in, spec, FFTW_ESTIMATE) : NULL;
    if (!plan) {
        fftw_free(in);
        fftw_free(spec);
        return KT_ENOMEM;
    }
    int nbins = nfft / 2;
    for (int c = 0; c < cols; c++) {
        int64_t centre = (int64_t)((c + 0.5) * frames / cols);
        for (int i = 0; i < nfft; i++) {
            int64_t s = centre - nfft / 2 + i;
            double win = 0.5 - 0.5 * cos(2 * KT_PI * i / nfft);
            in[i] = (s >= 0 && s < frames) ? pcm[s * channels + ch] * win : 0;
        }
        fftw_execute(plan);
        for (int b = 0; b < nbins; b++)
            out[(size_t)c * nbins + b] += spec[b][0] * spec[b][0] + spec[b][1] * spec[b][1];
    }
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(spec);
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

typedef struct plot_layout {
    int left, width, wave_h, spec_top, spec_h, line_top, line_h;
} plot_layout;

static void draw_waves(kt_canvas *c, const plot_layout *L, const double *pcm, int64_t frames,
                       int channels, int shown, const kt_plot_report *r)
{
    for (int ch = 0; ch < shown; ch++) {
        int y0 = 24 + ch * (L->wave_h + 8), mid = y0 + L->wave_h / 2;
        kt_canvas_fill(c, L->left, y0, L->width, L->wave_h, (uint8_t[3]){245, 245, 245});
        kt_canvas_fill(c, L->left, mid, L->width, 1, grey);
        double peak = 1e-30;
        for (int64_t s = 0; s < frames; s++)
            peak = fmax(peak, fabs(pcm[s * channels + ch]));
        for (int i = 0; i < L->width; i++) {
            int64_t a = i * frames / L->width, b = (i + 1) * frames / L->width;
            double lo = 0, hi = 0;
            for (int64_t s = a; s < b || s == a; s++) {
                if (s >= frames)
                    break;
                double v = pcm[s * channels + ch] / peak;
                lo = fmin(lo, v);
                hi = fmax(hi, v);
            }
            int ya = mid - (int)lround(hi * (L->wave_h / 2 - 1));
            int yb = mid - (int)lround(lo * (L->wave_h / 2 - 1));
            kt_canvas_fill(c, L->left + i, ya, 1, yb - ya + 1, (uint8_t[3]){30, 70, 160});
        }
        char s[96];
        snprintf(s, sizeof s, "%.9s", r->names[ch]);
        kt_canvas_text(c, 4, y0 + 2, 1, s, black);
        snprintf(s, sizeof s, "peak %.3g", peak);
        kt_canvas_text(c, L->left + 4, y0 + 2, 1, s, black);
    }
}

static int draw_spectrogram(kt_canvas *c, const plot_layout *L, const double *pcm, int64_t frames,
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

/* ---- the spectrum of the ringing part ---- */

typedef struct log_axis {
    double lo_hz, hi_hz;
    int left, width;
} log_axis;

static int axis_x(const log_axis *a, double hz)
{
    return a->left + (int)lround(log(hz / a->lo_hz) / log(a->hi_hz / a->lo_hz) * (a->width - 1));
}

/* The stretch after the attack: from 50 ms after the loudest sample. */
static void ringing_part(const double *pcm, int64_t frames, int channels, double sr,
                         const kt_plot_options *o, int64_t *a, int64_t *b)
{
    int64_t loudest = 0;
    double top = -1;
    for (int64_t i = 0; i < frames * channels; i++)
        if (fabs(pcm[i]) > top) {
            top = fabs(pcm[i]);
            loudest = i / channels;
        }
    *a = o->from_s >= 0 ? (int64_t)llround(o->from_s * sr) : loudest + (int64_t)llround(0.05 * sr);
    *b = o->to_s > 0 ? (int64_t)llround(o->to_s * sr) : frames;
    if (*b > frames)
        *b = frames;
    if (*a > *b - 64)
        *a = *b - 64 > 0 ? *b - 64 : 0;
}

/* A label per peak, moved down a row while it would cover an earlier one. */
static void label_peaks(kt_canvas *c, const log_axis *ax, int top, const kt_peak *pk, int n,
                        double range_db, int h)
{
    int boxes[KT_PLOT_MAX_PEAKS][3];
    for (int i = 0; i < n; i++) {
        char note[16], s[64];
        double cents = 0;
        kt_note_nearest(pk[i].hz, note, sizeof note, &cents);
        snprintf(s, sizeof s, "%.2f Hz %s %+.1fc", pk[i].hz, note, round(cents * 10) / 10 + 0.0);
        int x = axis_x(ax, pk[i].hz), w = kt_canvas_text_width(1, s);
        int y = top + (int)lround(-pk[i].db / range_db * (h - 1)) - 12;
        if (y < top + 2)
            y = top + 2;
        int lx = x + w + 4 > ax->left + ax->width ? x - w - 4 : x + 3;
        for (int j = 0; j < i; j++)
            if (lx < boxes[j][0] + boxes[j][2] && boxes[j][0] < lx + w && abs(y - boxes[j][1]) < 10)
                y = boxes[j][1] + 10, j = -1;  /* look again from the first */
        boxes[i][0] = lx;
        boxes[i][1] = y;
        boxes[i][2] = w;
        kt_canvas_fill(c, x, y + 8, 1, top + h - y - 8, (uint8_t[3]){200, 60, 60});
        kt_canvas_text(c, lx, y, 1, s, (uint8_t[3]){160, 20, 20});
    }
}

static void draw_line(kt_canvas *c, const log_axis *ax, const kt_spectrum *sp, int top, int h,
                      double top_db, double range_db)
{
    kt_canvas_fill(c, ax->left, top, ax->width, h, (uint8_t[3]){248, 248, 248});
    int prev = -1;
    double bin_hz = sp->rate_hz / (double)sp->nfft;
    for (int i = 0; i < ax->width; i++) {
        /* the strongest bin under the column */
        double f0 = ax->lo_hz * pow(ax->hi_hz / ax->lo_hz, (double)i / ax->width);
        double f1 = ax->lo_hz * pow(ax->hi_hz / ax->lo_hz, (double)(i + 1) / ax->width);
        int64_t b0 = (int64_t)floor(f0 / bin_hz), b1 = (int64_t)ceil(f1 / bin_hz);
        double p = 0;
        for (int64_t b = b0; b <= b1 && b <= sp->nfft / 2; b++)
            p = fmax(p, sp->power[b]);
        double db = 10 * log10(p + 1e-300) - top_db;
        int y = top + (int)lround(fmin(fmax(-db / range_db, 0), 1) * (h - 1));
        int ya = prev < 0 ? y : (prev < y ? prev : y), yb = prev < 0 ? y : (prev > y ? prev : y);
        kt_canvas_fill(c, ax->left + i, ya, 1, yb - ya + 1, (uint8_t[3]){30, 70, 160});
        prev = y;
    }
}

static void draw_log_ticks(kt_canvas *c, const log_axis *ax, int base)
{
    static const double steps[3] = {1, 2, 5};
    for (double dec = pow(10, floor(log10(ax->lo_hz))); dec <= ax->hi_hz; dec *= 10)
        for (int k = 0; k < 3; k++) {
            double f = steps[k] * dec;
            if (f < ax->lo_hz || f > ax->hi_hz)
                continue;
            int x = axis_x(ax, f);
            kt_canvas_fill(c, x, base, 1, 5, black);
            axis_label(c, x - 10, base + 8, f >= 1000 ? "%.0fk" : "%.0f", f >= 1000 ? f / 1000 : f);
        }
    kt_canvas_text(c, ax->left + ax->width - 60, base + 20, 1, "freq [Hz]", black);
}

static int draw_spectrum(kt_canvas *c, const plot_layout *L, const double *pcm, int64_t frames,
                         int channels, double sr, const kt_plot_options *o, kt_plot_report *r,
                         kt_error *err)
{
    int64_t a, b;
    ringing_part(pcm, frames, channels, sr, o, &a, &b);
    r->from_s = a / sr;
    r->to_s = b / sr;
    if (b - a < 64) {
        kt_canvas_text(c, L->left, L->line_top, 1, "(too short for a spectrum)", black);
        return KT_OK;
    }
    kt_spectrum sp;
    int rc = kt_spectrum_compute(&sp, pcm + a * channels, b - a, channels, channels, sr, 8, err);
    if (rc < 0)
        return rc;
    log_axis ax = {o->fmin_hz > 0 ? o->fmin_hz : 20, o->fmax_hz > 0 ? fmin(o->fmax_hz, sr / 2)
                                                                    : sr / 2, L->left, L->width};
    double range_db = 80, top_db = -1e300;
    for (int64_t k = 0; k <= sp.nfft / 2; k++)
        top_db = fmax(top_db, 10 * log10(sp.power[k] + 1e-300));
    draw_line(c, &ax, &sp, L->line_top, L->line_h, top_db, range_db);
    int want = o->peaks > 0 ? (o->peaks < KT_PLOT_MAX_PEAKS ? o->peaks : KT_PLOT_MAX_PEAKS) : 0;
    r->peak_count = kt_spectrum_peaks(&sp, ax.lo_hz, ax.hi_hz, 40, 50, r->peaks, want);
    label_peaks(c, &ax, L->line_top, r->peaks, r->peak_count, range_db, L->line_h);
    draw_log_ticks(c, &ax, L->line_top + L->line_h);
    char s[160];
    snprintf(s, sizeof s, "spectrum of %.3f .. %.3f s (Hann, zero-padded 8x), 80 dB; peaks within "
                          "40 dB: Hz, nearest note +- cents", r->from_s, r->to_s);
    kt_canvas_text(c, L->left, L->line_top - 12, 1, s, black);
    kt_spectrum_free(&sp);
    return KT_OK;
}

/* ---- the sound file ---- */

void kt_plot_options_default(kt_plot_options *o)
{
    memset(o, 0, sizeof *o);
    o->fmax_hz = 2000;
    o->fmin_hz = 20;
    o->from_s = -1;
    o->peaks = 8;
}

/* The channels' names from the file's comment (room_audio.c), else "ch N". */
static void channel_names(SNDFILE *f, int channels, kt_plot_report *r)
{
    const char *comment = sf_get_string(f, SF_STR_COMMENT);
    size_t head = strlen(KT_AUDIO_NAMES_HEADER);
    const char *p = comment && strncmp(comment, KT_AUDIO_NAMES_HEADER, head) == 0
                        ? comment + head : NULL;
    r->channels = channels;
    for (int ch = 0; ch < channels && ch < KT_PLOT_MAX_NAMES; ch++) {
        const char *end = p && *p == '\n' ? strchr(p + 1, '\n') : NULL;
        if (p && *p == '\n') {
            size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);
            snprintf(r->names[ch], sizeof r->names[ch], "%.*s", (int)n, p + 1);
            p = end ? end : p + 1 + n;
        } else {
            p = NULL;
            snprintf(r->names[ch], sizeof r->names[ch], "ch %d", ch + 1);
        }
    }
}

static int draw_file(kt_canvas *c, const plot_layout *L, const double *pcm, int64_t got,
                     int channels, double sr, int shown, const char *title,
                     const kt_plot_options *o, kt_plot_report *r, kt_error *err)
{
    double top_hz = o->fmax_hz > 0 ? fmin(o->fmax_hz, sr / 2) : sr / 2;
    kt_canvas_text(c, 8, 6, 1, title, black);
    draw_waves(c, L, pcm, got, channels, shown, r);
    if (shown < channels)
        kt_canvas_text(c, 8, L->spec_top - 30, 1, "(first 8 channels shown)", black);
    int rc = draw_spectrogram(c, L, pcm, got, channels, sr, top_hz);
    if (rc < 0)
        return kt_fail(err, rc, "out of memory for the spectrogram");
    draw_axes(c, L, got / sr, top_hz);
    return draw_spectrum(c, L, pcm, got, channels, sr, o, r, err);
}

int kt_png_plot_file(const char *audio_path, const char *png_path, const kt_plot_options *o,
                     kt_plot_report *r, kt_error *err)
{
    kt_plot_options defaults;
    kt_plot_report scratch;
    if (!o)
        kt_plot_options_default(&defaults), o = &defaults;
    r = r ? r : &scratch;
    memset(r, 0, sizeof *r);
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *f = sf_open(audio_path, SFM_READ, &info);
    if (!f)
        return kt_fail(err, KT_EIO, "cannot read %s: %s", audio_path, sf_strerror(NULL));
    if (info.frames < 1 || info.channels < 1) {
        sf_close(f);
        return kt_fail(err, KT_EINVAL, "%s holds no audio", audio_path);
    }
    double *pcm = malloc((size_t)info.frames * info.channels * sizeof *pcm);
    if (!pcm) {
        sf_close(f);
        return kt_fail(err, KT_ENOMEM, "out of memory reading %s", audio_path);
    }
    channel_names(f, info.channels, r);
    sf_count_t got = sf_readf_double(f, pcm, info.frames);
    sf_close(f);
    double sr = info.samplerate;
    int shown = info.channels < KT_PLOT_MAX_NAMES ? info.channels : KT_PLOT_MAX_NAMES;
    plot_layout L = {76, 900, 90, 0, 320, 0, 240};
    L.spec_top = 24 + shown * (L.wave_h + 8) + 20;
    L.line_top = L.spec_top + L.spec_h + 60;
    kt_canvas c;
    int rc = kt_canvas_init(&c, L.left + L.width + 90, L.line_top + L.line_h + 40, err);
    if (rc == 0) {
        char title[300];
        snprintf(title, sizeof title, "%.200s  (%d ch, %.0f Hz, %.3f s)", audio_path,
                 info.channels, sr, got / sr);
        rc = draw_file(&c, &L, pcm, got, info.channels, sr, shown, title, o, r, err);
        if (rc == 0)
            rc = kt_canvas_write_png(&c, png_path, err);
        kt_canvas_release(&c);
    }
    free(pcm);
    return rc;
}
