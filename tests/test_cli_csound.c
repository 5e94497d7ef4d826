/* test_cli_csound.c - a Csound user's habits at `kettle render`: <CsOptions>
 * with Csound's flags (-W/-A, -s/-3/-l/-f, --format=TYPE:SAMPLES, -d, -m0,
 * -b/-B, -+rtaudio, -r, --sample-rate=, -j) render as Csound means them;
 * flags Kettle cannot honour (-odac, -n, -k, 8-bit and A-law formats) stop
 * with exit status 2 and the reason; `0dbfs` in the orchestra sets the
 * level, clipping is a warning with the count (exit 3 only with
 * --fail-on-clip), --normalize scales to -1 dBFS, --out-sr resamples.  The
 * kettle program runs on a tiny piece: an impulse in a small room. */
#include "kt_test.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *piece =
    "<CsoundSynthesizer>\n<CsOptions>\n--threads 1 %s\n</CsOptions>\n<CsInstruments>\n"
    "sr = 8000\n%s\nroom = 0.5 0.4 0.45\nmic m 0.25 0.2 0.2\nimpulse 0.1 0.1 0.1\n"
    "</CsInstruments>\n<CsScore>\nf 0 0.02\n</CsScore>\n</CsoundSynthesizer>\n";

/* kettle render CSD -o OUT [EXTRA]; stdout/stderr into so/se; exit status. */
static int run(const char *csd, const char *out, const char *extra, char *so, char *se, size_t n)
{
    const char *argv[] = {KETTLE_EXE, "render", csd, "-o", out, extra, NULL};
    return kt_test_run((char *const *)argv, NULL, 300, so, se, n);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_csound_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    static const struct {
        const char *options, *header, *out, *extra;
        int status, format, rate;     /* format, rate: of the file written */
        const char *want;             /* in stdout (status 0) or stderr */
    } cases[] = {
        {"-d -m0 -b256 -B2048 -+rtaudio=alsa -W -3", "", "a.wav", NULL, 0,
         SF_FORMAT_WAV | SF_FORMAT_PCM_24, 8000, "peak"},
        {"-A -f", "", "b.aif", NULL, 0, SF_FORMAT_AIFF | SF_FORMAT_FLOAT, 8000, "RMS"},
        {"--format=aiff:short", "", "c.aiff", NULL, 0, SF_FORMAT_AIFF | SF_FORMAT_PCM_16, 8000,
         "gain"},
        {"-l --format=double", "", "d.wav", NULL, 0, SF_FORMAT_WAV | SF_FORMAT_DOUBLE, 8000, ""},
        {"-r 16000 -s --out-sr 44100", "", "e.wav", NULL, 0, SF_FORMAT_WAV | SF_FORMAT_PCM_16,
         44100, "simulated at 16000 Hz, resampled to 44100 Hz"},
        {"--sample-rate=16000 -j 1", "out_sr = 48000", "f.wav", NULL, 0,
         SF_FORMAT_WAV | SF_FORMAT_PCM_24, 48000, "resampled to 48000 Hz"},
        {"", "0dbfs = 0.001", "g.wav", NULL, 0, SF_FORMAT_WAV | SF_FORMAT_PCM_24, 8000,
         "at or over full scale"},
        {"", "0dbfs = 0.001", "h.wav", "--fail-on-clip", 3, 0, 0, "exit status 3"},
        {"--normalize", "0dbfs = 0.001", "i.wav", NULL, 0, SF_FORMAT_WAV | SF_FORMAT_PCM_24, 8000,
         "peak   -1.0 dBFS"},
        {"-W", "", "j.aif", NULL, 2, 0, 0, "-W asks for a wav file"},
        {"-odac", "", "k.wav", NULL, 2, 0, 0, "not to a sound card"},
        {"-n", "", "l.wav", NULL, 2, 0, 0, "-n is not supported"},
        {"--format=wav:alaw", "", "m.wav", NULL, 2, 0, 0, "telephone codec"},
        {"-k 100", "", "n.wav", NULL, 2, 0, 0, "ksmps"},
        {"-8", "", "o.wav", NULL, 2, 0, 0, "8-bit"},
        {"", "nchnls_i = 2", "p.wav", NULL, 2, 0, 0, "no live audio input"},
        {"--out-sr 500", "", "q.wav", NULL, 2, 0, 0, "1000..768000"},
    };
    char csd[128], out[128], so[8192], se[8192];
    snprintf(csd, sizeof csd, "%s/piece.csd", dir);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        FILE *f = fopen(csd, "w");
        if (f) {
            fprintf(f, piece, cases[c].options, cases[c].header);
            fclose(f);
        }
        snprintf(out, sizeof out, "%s/%s", dir, cases[c].out);
        int st = run(csd, out, cases[c].extra, so, se, sizeof so);
        KT_CHECK(st == cases[c].status, "'%s' / '%s': exit status %d, want %d\n%s%s",
                 cases[c].options, cases[c].header, st, cases[c].status, so, se);
        KT_CHECK(strstr(st == 0 ? (cases[c].status ? se : so) : se, cases[c].want) ||
                     strstr(se, cases[c].want),
                 "'%s' / '%s': no '%s' in\n%s%s", cases[c].options, cases[c].header,
                 cases[c].want, so, se);
        SF_INFO info = {0};
        SNDFILE *snd = sf_open(out, SFM_READ, &info);
        if (cases[c].format)
            KT_CHECK(snd && info.format == cases[c].format && info.samplerate == cases[c].rate,
                     "'%s': format %x at %d Hz, want %x at %d Hz", cases[c].options, info.format,
                     info.samplerate, cases[c].format, cases[c].rate);
        else if (cases[c].status == 2)
            KT_CHECK(!snd, "'%s': refused, yet a file was written", cases[c].options);
        if (snd)
            sf_close(snd);
        remove(out);
    }
    kt_test_remove_dir(dir);
    return kt_test_finish("test_cli_csound");
}
