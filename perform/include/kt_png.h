/* kt_png.h - pictures through libpng: a pressure-field slice with a
 * diverging colour scale and legend (the renderer's snapshots), and a
 * sound file's waveforms, spectrogram and spectrum (`kettle plot`).  A small RGB canvas
 * with a 5x7 bitmap font draws the labels; files are written to a temporary
 * and renamed when complete, like the audio. */
#ifndef KT_PNG_H
#define KT_PNG_H

#include "kt_base.h"
#include "kt_spectrum.h"

#include <stdint.h>

typedef struct kt_canvas {
    int width, height;
    uint8_t *rgb;                 /* width * height * 3, row 0 at the top */
} kt_canvas;

int kt_canvas_init(kt_canvas *c, int width, int height, kt_error *err);
void kt_canvas_release(kt_canvas *c);
void kt_canvas_fill(kt_canvas *c, int x, int y, int w, int h, const uint8_t rgb[3]);
/* Text in the 5x7 font at `scale` pixels per font pixel; returns its width. */
int kt_canvas_text(kt_canvas *c, int x, int y, int scale, const char *text, const uint8_t rgb[3]);
int kt_canvas_text_width(int scale, const char *text);
int kt_canvas_write_png(const kt_canvas *c, const char *path, kt_error *err);

/* Colour maps: v in [-1, 1] diverging blue - white - red; v in [0, 1]
 * sequential dark - bright (spectrograms). */
void kt_colormap_diverging(double v, uint8_t rgb[3]);
void kt_colormap_sequential(double v, uint8_t rgb[3]);

/* A field of w x h values, v[row * w + col], row 0 at the top, drawn with a
 * symmetric range (+-max|v|), a legend bar and a title; NaN (no air: a
 * solid) is drawn grey. */
int kt_png_write_field(const char *path, const double *v, int w, int h, const char *title,
                       kt_error *err);

/* `kettle plot`: a sound file's waveforms (labelled with the microphones'
 * names that Kettle writes into its files), its spectrogram, and the
 * spectrum of its ringing part on a logarithmic frequency axis with the
 * peaks labelled in hertz and as the nearest note +- cents. */
typedef struct kt_plot_options {
    double fmax_hz;      /* top of the spectrogram and the spectrum (<= 0: half the rate) */
    double fmin_hz;      /* bottom of the spectrum's axis (<= 0: 20 Hz) */
    double from_s;       /* the spectrum's stretch: from (< 0: 50 ms after the loudest sample) */
    double to_s;         /* ... to (<= 0: the end of the file) */
    int peaks;           /* how many peaks to label (at most KT_PLOT_MAX_PEAKS) */
} kt_plot_options;

#define KT_PLOT_MAX_PEAKS 16
#define KT_PLOT_MAX_NAMES 8   /* channels drawn (and named) */

typedef struct kt_plot_report {
    int channels;
    char names[KT_PLOT_MAX_NAMES][64];   /* the microphones' names, or "ch N" */
    double from_s, to_s;                 /* the stretch the spectrum covers */
    kt_peak peaks[KT_PLOT_MAX_PEAKS];    /* labelled, strongest first */
    int peak_count;
} kt_plot_report;

void kt_plot_options_default(kt_plot_options *o);
/* o NULL: the defaults (fmax 2000 Hz, fmin 20 Hz, 8 peaks); r may be NULL. */
int kt_png_plot_file(const char *audio_path, const char *png_path, const kt_plot_options *o,
                     kt_plot_report *r, kt_error *err);

#endif
