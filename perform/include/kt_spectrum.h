/* kt_spectrum.h - reading frequencies off sampled signals to a fraction of a
 * cent: the power spectrum of a Hann-windowed stretch, zero-padded and
 * transformed by FFTW, whose peaks are then refined on the windowed
 * discrete-time Fourier transform itself (a golden-section search of its
 * power between the neighbouring padded bins).  For an isolated partial the
 * refined peak is the partial's frequency, decaying or not (the power of a
 * windowed decaying exponential is even about its frequency); only other
 * partials' leakage moves it, and the Hann window's side lobes keep that
 * small once they are a few bins away.  Also the equal-tempered note nearest
 * a frequency.  Used by the tuner (perform/tuning_run.c) and `kettle plot`. */
#ifndef KT_SPECTRUM_H
#define KT_SPECTRUM_H

#include "kt_base.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kt_spectrum {
    double rate_hz;
    int64_t n;                  /* samples in the window */
    int64_t nfft;               /* transform length, >= pad * n */
    int channels;
    double *windowed;           /* n x channels, Hann-weighted, channel-major */
    double *power;              /* nfft/2 + 1 bins, |X|^2 summed over channels */
} kt_spectrum;

typedef struct kt_peak {
    double hz;
    double power;               /* of the refined peak, summed over channels */
    double db;                  /* relative to the strongest bin of the spectrum */
} kt_peak;

/* The spectrum of x[i * stride + c] for i in [0, n), c in [0, channels):
 * Hann window over the n samples, zero-padded to at least pad times n (pad
 * >= 1; 8 puts the padded bins an eighth of the window's resolution apart). */
int kt_spectrum_compute(kt_spectrum *s, const double *x, int64_t n, int channels,
                        ptrdiff_t stride, double rate_hz, int pad, kt_error *err);
void kt_spectrum_free(kt_spectrum *s);

/* Power of the windowed DTFT at hz, summed over channels. */
double kt_spectrum_power_at(const kt_spectrum *s, double hz);

/* The strongest peak with a frequency in [lo_hz, hi_hz], refined.  Returns
 * 0, or KT_EINVAL when the band holds no bin or the signal is silent. */
int kt_spectrum_peak(const kt_spectrum *s, double lo_hz, double hi_hz, kt_peak *out);

/* Local maxima of the padded spectrum in [lo_hz, hi_hz] within range_db of
 * the strongest bin, at least min_cents apart (the stronger kept), strongest
 * first, refined; at most max.  Returns how many. */
int kt_spectrum_peaks(const kt_spectrum *s, double lo_hz, double hi_hz, double range_db,
                      double min_cents, kt_peak *out, int max);

/* Cents from b to a: 1200 log2(a / b). */
double kt_cents(double a_hz, double b_hz);

/* The equal-tempered note nearest hz (A4 = 440 Hz, C4 middle C) as "G2",
 * "F#2", "Bb2" ..., and the cents hz lies above it (-50 .. +50; cents may be
 * NULL).  Returns the MIDI note number, or -1 for a frequency that is not
 * positive and finite. */
int kt_note_nearest(double hz, char *name, size_t size, double *cents);

#ifdef __cplusplus
}
#endif

#endif
