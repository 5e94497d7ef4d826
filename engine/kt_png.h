/* kt_png.h - pictures through libpng: a pressure-field slice with a
 * diverging colour scale and legend (the renderer's snapshots), and a
 * waveform + spectrogram of a sound file (`kettle plot`).  A small RGB canvas
 * with a 5x7 bitmap font draws the labels; files are written to a temporary
 * and renamed when complete, like the audio. */
#ifndef KT_PNG_H
#define KT_PNG_H

#include "kt_base.h"

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
 * symmetric range (+-max|v|), a legend bar and a title. */
int kt_png_write_field(const char *path, const double *v, int w, int h, const char *title,
                       kt_error *err);

/* Waveform of every channel and spectrogram (powers summed over channels), up to fmax_hz
 * (<= 0: half the sample rate), of a sound file readable by libsndfile. */
int kt_png_plot_file(const char *audio_path, const char *png_path, double fmax_hz,
                     kt_error *err);

#endif
