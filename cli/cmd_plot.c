/* cmd_plot.c - `kettle plot`: a picture of a sound file: each channel's
 * waveform under its microphone's name, a spectrogram (powers summed over
 * the channels) and the spectrum of the ringing part with its peaks labelled
 * (perform/png_plot.c); the peaks are also printed, one a line. */
#include "kt_cli.h"
#include "kt_png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void plot_usage(FILE *f)
{
    fprintf(f, "usage: kettle plot AUDIO [-o PICTURE.png] [--fmax HZ] [--fmin HZ]\n"
               "                   [--from S] [--to S] [--peaks N]\n\n"
               "Draws the waveform of every channel (named after its microphone, each scaled\n"
               "to its own peak), a spectrogram (Hann-windowed frames of about 90 ms, 90 dB\n"
               "below the loudest bin, powers summed over channels) and the spectrum of the\n"
               "ringing part on a logarithmic frequency axis, its peaks labelled in Hz and as\n"
               "the nearest note +- cents (zero-padded FFT, each peak refined on the windowed\n"
               "transform: a partial's frequency to well under a cent).  The peaks are also\n"
               "printed: frequency, note, cents, level.\n\n"
               "options:\n"
               "  -o, --output FILE   the PNG to write (default: AUDIO with .png)\n"
               "  --fmax HZ           top of the spectrogram and spectrum (default 2000 Hz,\n"
               "                      where a timpani's partials live; at most half the rate)\n"
               "  --fmin HZ           bottom of the spectrum's axis (default 20 Hz)\n"
               "  --from S, --to S    the spectrum's stretch (default: from 50 ms after the\n"
               "                      loudest sample, past the attack, to the end)\n"
               "  --peaks N           peaks to label, 0..%d (default 8)\n"
               "  -h, --help          this text\n", KT_PLOT_MAX_PEAKS);
}

static int number(const char *opt, const char *s, double lo, double hi, double *v)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "kettle plot: %s needs a number from %g to %g, got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *v = x;
    return 0;
}

static void print_report(const kt_plot_report *r)
{
    printf("channels: ");
    for (int ch = 0; ch < r->channels && ch < KT_PLOT_MAX_NAMES; ch++)
        printf("%s%s", ch ? ", " : "", r->names[ch]);
    printf("%s\n", r->channels > KT_PLOT_MAX_NAMES ? ", ..." : "");
    printf("spectrum: %.3f .. %.3f s\n", r->from_s, r->to_s);
    for (int i = 0; i < r->peak_count; i++) {
        char note[16];
        double cents = 0;
        kt_note_nearest(r->peaks[i].hz, note, sizeof note, &cents);
        printf("peak %10.3f Hz  %-4s %+6.2f cents  %6.1f dB\n", r->peaks[i].hz, note, cents,
               r->peaks[i].db);
    }
}

int kt_cmd_plot(int argc, char **argv)
{
    const char *input = NULL, *output = NULL;
    kt_plot_options o;
    kt_plot_options_default(&o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double v;
        int has = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            plot_usage(stdout);
            return KT_EXIT_OK;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has) {
            output = argv[++i];
        } else if (!strcmp(a, "--fmax") && has) {
            if (number(a, argv[++i], 1e-3, 1e7, &o.fmax_hz) < 0)
                return KT_EXIT_USAGE;
        } else if (!strcmp(a, "--fmin") && has) {
            if (number(a, argv[++i], 1e-3, 1e7, &o.fmin_hz) < 0)
                return KT_EXIT_USAGE;
        } else if (!strcmp(a, "--from") && has) {
            if (number(a, argv[++i], 0, 1e7, &o.from_s) < 0)
                return KT_EXIT_USAGE;
        } else if (!strcmp(a, "--to") && has) {
            if (number(a, argv[++i], 1e-6, 1e7, &o.to_s) < 0)
                return KT_EXIT_USAGE;
        } else if (!strcmp(a, "--peaks") && has) {
            if (number(a, argv[++i], 0, KT_PLOT_MAX_PEAKS, &v) < 0 || v != floor(v)) {
                fprintf(stderr, "kettle plot: --peaks takes a whole number\n");
                return KT_EXIT_USAGE;
            }
            o.peaks = (int)v;
        } else if (a[0] == '-' || input) {
            fprintf(stderr, "kettle plot: unexpected '%s'\n", a);
            plot_usage(stderr);
            return KT_EXIT_USAGE;
        } else {
            input = a;
        }
    }
    if (!input) {
        plot_usage(stderr);
        return KT_EXIT_USAGE;
    }
    if (o.fmin_hz >= o.fmax_hz) {
        fprintf(stderr, "kettle plot: --fmin (%g Hz) must lie below --fmax (%g Hz)\n", o.fmin_hz,
                o.fmax_hz);
        return KT_EXIT_USAGE;
    }
    char fallback[4096];
    if (!output) {
        snprintf(fallback, sizeof fallback, "%s", input);
        char *dot = strrchr(fallback, '.');
        if (dot && !strchr(dot, '/'))
            *dot = '\0';
        strncat(fallback, ".png", sizeof fallback - strlen(fallback) - 1);
        output = fallback;
    }
    kt_error err;
    kt_error_clear(&err);
    kt_plot_report r;
    int rc = kt_png_plot_file(input, output, &o, &r, &err);
    if (rc < 0) {
        fprintf(stderr, "kettle plot: %s\n", err.message);
        return rc == KT_EIO || rc == KT_EINVAL ? KT_EXIT_USAGE : KT_EXIT_FAIL;
    }
    print_report(&r);
    printf("wrote %s\n", output);
    return KT_EXIT_OK;
}
