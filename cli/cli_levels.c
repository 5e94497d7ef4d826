/* cli_levels.c - what `kettle render` and `kettle resume` say about the
 * levels of what they wrote: each channel's peak, RMS and gain, and a
 * warning (on stderr) for every channel that reached full scale, with the
 * count and the ways to bring it down.  Clipping fails the run (exit 3)
 * only when --fail-on-clip asked for it. */
#include "kt_cli.h"
#include "kt_physics.h"
#include "kt_render.h"

#include <math.h>
#include <stdio.h>

static double dbfs(double x) { return x > 0 ? 20 * log10(x) : -INFINITY; }

void kt_cli_print_levels(const kt_performance *perf, const kt_render_result *r)
{
    for (int ch = 0; ch < r->channels && r->summary; ch++) {
        const kt_channel_summary *s = &r->summary[ch];
        /* the full-scale pressure, as an SPL, says what the numbers mean */
        double fs_Pa = s->gain > 0 ? 1 / s->gain : 0;
        printf("channel %-8s peak %6.1f dBFS, RMS %6.1f dBFS, gain %.4g/Pa (0 dBFS = %.4g Pa, "
               "%.0f dB SPL)\n", perf->mics[ch].name, dbfs(s->peak), dbfs(s->rms), s->gain,
               fs_Pa, dbfs(fs_Pa / KT_SPL_REFERENCE_PA));
    }
}

int kt_cli_clip_warnings(const kt_performance *perf, const kt_render_result *r,
                         const kt_render_options *opt)
{
    int clipped = 0, is_float = opt->output.sample_format == KT_FLOAT32 ||
                                opt->output.sample_format == KT_FLOAT64;
    for (int ch = 0; ch < r->channels && r->summary; ch++) {
        const kt_channel_summary *s = &r->summary[ch];
        if (s->clipped == 0)
            continue;
        clipped = 1;
        fprintf(stderr, "kettle: warning: channel %s: %lld sample%s at or over full scale "
                "(peak %+.1f dBFS)%s\n", perf->mics[ch].name, (long long)s->clipped,
                s->clipped == 1 ? "" : "s", dbfs(s->peak),
                is_float ? ", kept unclipped in the float file" : ", clipped");
    }
    if (clipped)
        fprintf(stderr, "kettle: lower the level with `0dbfs = PASCALS` in the orchestra, "
                "--gain G (sample = G x pascals) or --normalize%s\n",
                opt->clipping_fails ? "; exit status 3 (--fail-on-clip)" : "");
    return clipped && opt->clipping_fails ? KT_EXIT_CLIPPED : KT_EXIT_OK;
}
