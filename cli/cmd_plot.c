/* cmd_plot.c - `kettle plot`: a picture of a sound file, waveform of each
 * channel above a spectrogram, powers summed over the channels (engine/png_plot.c). */
#include "kt_cli.h"
#include "kt_png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void plot_usage(FILE *f)
{
    fprintf(f, "usage: kettle plot AUDIO -o PICTURE.png [--fmax HZ]\n\n"
               "Draws the waveform of every channel (each scaled to its own peak, printed\n"
               "beside it) and a spectrogram, powers summed over channels: Hann-windowed frames of\n"
               "about 90 ms, 90 dB of range below the loudest bin.\n\n"
               "options:\n"
               "  -o, --output FILE   the PNG to write (default: AUDIO with .png)\n"
               "  --fmax HZ           top of the spectrogram (default 2000 Hz, where a\n"
               "                      timpani's partials live; at most half the sample rate)\n"
               "  -h, --help          this text\n");
}

int kt_cmd_plot(int argc, char **argv)
{
    const char *input = NULL, *output = NULL;
    double fmax_hz = 2000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            plot_usage(stdout);
            return KT_EXIT_OK;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            output = argv[++i];
        } else if (!strcmp(a, "--fmax") && i + 1 < argc) {
            char *end;
            fmax_hz = strtod(argv[++i], &end);
            if (*end || !(fmax_hz > 0)) {
                fprintf(stderr, "kettle plot: --fmax needs a positive frequency, got '%s'\n",
                        argv[i]);
                return KT_EXIT_USAGE;
            }
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
    int rc = kt_png_plot_file(input, output, fmax_hz, &err);
    if (rc < 0) {
        fprintf(stderr, "kettle plot: %s\n", err.message);
        return rc == KT_EIO || rc == KT_EINVAL ? KT_EXIT_USAGE : KT_EXIT_FAIL;
    }
    printf("wrote %s\n", output);
    return KT_EXIT_OK;
}
