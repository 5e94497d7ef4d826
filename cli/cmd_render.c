/* cmd_render.c - `kettle render`: orchestra + score (or one .csd) to audio.
 * Parses the options (a .csd's <CsOptions> first, then the command line),
 * shows progress, prints compiler-style errors with a caret, and ends with a
 * summary.  The work itself is kt_render() in perform/render.c. */
#include "kt_cli.h"
#include "kt_physics.h"
#include "kt_ranks.h"
#include "kt_render.h"
#include "kt_tuning.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_SNAPSHOTS 256
#define DEFAULT_ESTIMATE_STEPS 300

typedef struct render_cli {
    kt_render_options opt;
    const char *inputs[2];
    int ninputs;
    const char *output;
    const char *file_type;          /* "wav", "aiff", "flac" from -W, -A, --format */
    char file_type_flag[16];        /* the flag that asked for it */
    const char *midi;               /* -F / --midifile: the score is this MIDI file */
    int quiet, estimate;
    double from_s, until_s;         /* --from, --until (score time; 0: not given) */
    double snapshots[MAX_SNAPSHOTS];
    int have_plane;
    char checkpoint[1200];          /* --checkpoint, else OUTPUT.ckpt (written when stopped) */
    char problem[512];              /* an option error, for the caller to report */
} render_cli;

static void render_usage(FILE *f)
{
    fprintf(f,
        "usage: kettle render [options] PIECE.orc PIECE.sco\n"
        "       kettle render [options] PIECE.orc PIECE.mid\n"
        "       kettle render [options] PIECE.csd\n\n"
        "Renders an orchestra and score (docs/score-language.md), or an orchestra and a\n"
        "MIDI file, to audio; a .csd's <CsOptions> are read first, the command line\n"
        "overrides them.  Csound's flags work too (-o, -W, -A, -s, -3, -l, -f, -r, -j,\n"
        "-F, -d, --format=wav:24bit, ...; docs/render.md lists them).\n\n"
        "options:\n"
        "  -o, --output FILE     WAV, AIFF or FLAC by extension (default: PIECE.wav)\n"
        "  --sr HZ               simulation rate, overrides the orchestra's sr (-r)\n"
        "  --out-sr HZ           write the files at this rate (libsamplerate), overrides\n"
        "                        the orchestra's out_sr (default: the simulation rate)\n"
        "  --precision P         single or double (default: the orchestra's, else double)\n"
        "  --matrix F            drum matrices: csc, csr, dia-ell, matrix-free or auto\n"
        "                        (default auto = matrix-free; also --format F)\n"
        "  --device D            auto (the GPU when one is present), cpu or gpu\n"
        "  --gpus N              split the room over N GPUs of this host (one rank each,\n"
        "                        NCCL; no MPI needed; docs/room.md \"Slabs and ranks\")\n"
        "  --split-axis A        over ranks, cut the room along x, y or z, or auto (the\n"
        "                        smallest halo whose cuts miss the drums; default)\n"
        "  --threads N           worker threads, at most the machine's cores (default:\n"
        "                        all of them); the audio is the same for any count\n"
        "  --block off|auto|D    several steps of the air per pass through memory, the\n"
        "                        drums' planes a step at a time (auto: where the room\n"
        "                        allows, depth timed; default), or passes of depth D\n"
        "                        (2..8, on the GPU 2..4); the same audio either way\n"
        "  --tail SECONDS        ring-out after the last event (default %.1f)\n"
        "  --from SECONDS        render the passage from this time of the score on:\n"
        "                        strokes before it are left out, pedals and moving\n"
        "                        microphones are where they would be (no checkpoints)\n"
        "  --until SECONDS       stop at this time of the score (with --from: the\n"
        "                        passage between the two)\n"
        "  --bits B              16, 24, 32 (integer), 32f or 64f (float; unclipped)\n"
        "                        samples (default 24)\n"
        "  --gain G              sample = G x pascals (default: 1 / the orchestra's\n"
        "                        0dbfs, else 1/%.0f Pa)\n"
        "  --normalize [DBFS]    scale the loudest channel to this peak (default -1)\n"
        "  --fail-on-clip        exit 3 when a channel reached full scale (always warned)\n"
        "  --per-mic             one mono file per microphone (OUTPUT_NAME.wav)\n"
        "  --estimate            time %d steps (on a GPU: a second chunk of 11,520\n"
        "                        after a first one), print the predicted wall time and\n"
        "                        memory, and exit without rendering (like NESS -e)\n"
        "  --snapshot T1,T2,...  PNG pictures of the pressure field at these times (s),\n"
        "                        written to OUTPUT_snap_tT.png\n"
        "  --snapshot-plane A=P  the slice: x=, y= or z= a position in metres\n"
        "                        (default: z = half the room's height)\n"
        "  --checkpoint FILE     save the whole state here (atomically) every\n"
        "                        --checkpoint-every and when stopped by SIGINT/SIGTERM;\n"
        "                        `kettle resume FILE` continues (default: OUTPUT.ckpt,\n"
        "                        written only when stopped)\n"
        "  --checkpoint-every D  wall-clock time between checkpoints: 90, 30s, 10m, 1h\n"
        "  --scheme S            the air scheme, overriding `scheme =`: standard, iwb,\n"
        "                        fcc, compact:R, box:q or leggy:M (docs/room.md)\n"
        "  --walls W             lossy (the orchestra's beta) or absorbing\n"
        "                        (Engquist-Majda), overriding `walls =`\n"
        "  --tuning T            calibrated (default: each pitch measured on this room,\n"
        "                        within 3 cents) or formula (first order, no runs)\n"
        "  --tuning-cache DIR    where calibrations are kept (default\n"
        "                        $XDG_CACHE_HOME/kettle); off: keep none\n"
        "  --override-limits     allow over an hour of audio, more than 64 drums and\n"
        "                        sample rates above 384 kHz\n"
        "  --quiet               no progress and no summary\n"
        "  -h, --help            this text\n\n"
        "Exit status: 0 done, 1 the render failed, 2 bad input or options (the message\n"
        "says file:line:col), 3 written but clipped (with --fail-on-clip), 130/143\n"
        "stopped by SIGINT/SIGTERM.  The output's format, folder and disk, the\n"
        "checkpoint's path and the thread count are checked before the first step\n"
        "(also by --estimate).  A failed or stopped render never touches OUTPUT; the\n"
        "audio it has goes to OUTPUT_STEM.partial.wav (or, where that cannot be\n"
        "written, the same name in the checkpoint's folder, here or in $TMPDIR), and a\n"
        "checkpoint that cannot be written is a warning, not the end.\n",
        KT_RENDER_DEFAULT_TAIL_S, KT_FULL_SCALE_PA, DEFAULT_ESTIMATE_STEPS);
}

static int bad(render_cli *c, const char *fmt, const char *a, const char *b)
{
    snprintf(c->problem, sizeof c->problem, fmt, a, b);
    return -1;
}

static int number(render_cli *c, const char *opt, const char *s, double lo, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(x) || x < lo)
        return bad(c, "%s needs a number here, got '%s'", opt, s);
    *v = x;
    return 0;
}

static int snapshot_times(render_cli *c, const char *s)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (c->opt.snapshot_count == MAX_SNAPSHOTS)
            return bad(c, "%s: at most 256 snapshot times%s", "--snapshot", "");
        double t;
        if (number(c, "--snapshot", tok, 0, &t) < 0)
            return -1;
        c->snapshots[c->opt.snapshot_count++] = t;
    }
    c->opt.snapshot_times_s = c->snapshots;
    return 0;
}

static int snapshot_plane(render_cli *c, const char *s)
{
    const char *axes = "xyz", *p = strchr(axes, s[0]);
    if (!s[0] || !p || s[1] != '=')
        return bad(c, "--snapshot-plane takes x=POS, y=POS or z=POS, got '%s'%s", s, "");
    c->opt.snapshot_axis = (int)(p - axes);
    c->have_plane = 1;
    return number(c, "--snapshot-plane", s + 2, 0, &c->opt.snapshot_position_m);
}

static int choice(render_cli *c, const char *opt, const char *v, const char *const *names, int n,
                  int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return bad(c, "%s: unknown value '%s'", opt, v);
}

/* --scheme NAME or NAME:REACH (compact:3, leggy:4): as `scheme =`. */
static int scheme_option(render_cli *c, const char *v)
{
    char name[32];
    const char *colon = strchr(v, ':');
    size_t len = colon ? (size_t)(colon - v) : strlen(v);
    if (len >= sizeof name)
        return bad(c, "--scheme: unknown air scheme '%s'%s", v, "");
    memcpy(name, v, len);
    name[len] = '\0';
    char *end = NULL;
    long reach = colon ? strtol(colon + 1, &end, 10) : 0;
    int kind = kt_room_scheme_reach_kind(name);
    if (kind == 1 && (!colon || end == colon + 1 || *end))
        return bad(c, "--scheme %s needs its reach, as in %s:3", name, name);
    if (kind == 0 && colon)
        return bad(c, "--scheme %s takes no reach, got '%s'", name, v);
    if (kind == 1 && (reach < 1 || reach > 64))
        return bad(c, "--scheme %s: the reach must be a whole number 1..64, got '%s'", name,
                   colon + 1);
    kt_room_params p;
    kt_room_params_default(&p);
    kt_error e;
    kt_error_clear(&e);
    if (kt_room_scheme_set(&p, name, (int)reach, &e) < 0)
        return bad(c, "--scheme: %.400s%s", e.message, "");
    c->opt.scheme = (int)p.scheme;
    c->opt.stencil_family = (int)p.stencil_family;
    c->opt.stencil_reach = p.stencil_reach;
    return 0;
}

/* Csound's sound-format words (--format=wav:24bit, -3, -A ...): a file type
 * or a sample type, each chosen once; NULL if the word is neither. */
static const char *sound_word(render_cli *c, const char *w, const char *flag)
{
    static const struct { const char *word, *type; int format; } known[] = {
        {"wav", "wav", 0}, {"aiff", "aiff", 0}, {"aif", "aiff", 0}, {"flac", "flac", 0},
        {"short", NULL, KT_PCM16}, {"24bit", NULL, KT_PCM24}, {"long", NULL, KT_PCM32},
        {"float", NULL, KT_FLOAT32}, {"double", NULL, KT_FLOAT64},
    };
    static const struct { const char *word, *why; } refused[] = {
        {"schar", "8-bit samples are too coarse for a physical model's range (48 dB); use "
                  "short, 24bit, long, float or double"},
        {"uchar", "8-bit samples are too coarse for a physical model's range (48 dB); use "
                  "short, 24bit, long, float or double"},
        {"alaw", "A-law is a telephone codec (about 13 bits); use short, 24bit or float"},
        {"ulaw", "mu-law is a telephone codec (about 14 bits); use short, 24bit or float"},
        {"vorbis", "Kettle writes lossless files only (wav, aiff, flac)"},
        {"ogg", "Kettle writes lossless files only (wav, aiff, flac)"},
        {"mpeg", "Kettle writes lossless files only (wav, aiff, flac)"},
    };
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if (!strcmp(w, known[k].word)) {
            if (known[k].type) {
                c->file_type = known[k].type;
                snprintf(c->file_type_flag, sizeof c->file_type_flag, "%s", flag);
            } else {
                c->opt.output.sample_format = (kt_sample_format)known[k].format;
            }
            return w;
        }
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
        if (!strcmp(w, refused[k].word)) {
            bad(c, "%s: %s", w, refused[k].why);
            return NULL;
        }
    bad(c, "%s: Kettle writes the file types wav, aiff and flac with the samples short, "
           "24bit, long, float or double, not '%s'", flag, w);
    return NULL;
}

/* --format: a drum-matrix name (Kettle's older meaning, also --matrix) or
 * Csound's TYPE[:SAMPLES] sound format. */
static int format_option(render_cli *c, const char *v)
{
    kt_timpani_format f;
    if (!strcmp(v, "auto")) {
        c->opt.format = -1;
        return 0;
    }
    if (kt_timpani_format_parse(v, &f, NULL) == 0) {
        c->opt.format = (int)f;
        return 0;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *w = strtok(buf, ":"); w; w = strtok(NULL, ":"))
        if (!sound_word(c, w, "--format"))
            return -1;
    return 0;
}

/* Csound's names for a sound card: dac, adc, dac3, dac:hw:1,0 ... */
static int is_device(const char *v)
{
    if (strncmp(v, "dac", 3) && strncmp(v, "adc", 3))
        return !strcmp(v, "devaudio");
    v += 3;
    while (*v >= '0' && *v <= '9')
        v++;
    return !*v || *v == ':';
}

/* -o NAME: a file.  Csound's devices and pipes are refused. */
static int output_option(render_cli *c, const char *v)
{
    if (is_device(v) || !strcmp(v, "stdout") || !strcmp(v, "-"))
        return bad(c, "-o %s: Kettle writes sound files, not to a sound card or a pipe (a "
                      "render runs far slower than real time); give -o FILE.wav%s", v, "");
    c->output = v;
    return 0;
}

/* Csound flags that do not apply to a file render, accepted and ignored. */
static const char *const ignored_flags[] = {
    "-d", "--nodisplays", "-g", "--asciidisplay", "-m", "--messagelevel", "-b", "--iobufsamps",
    "-B", "--hardwarebufsamps", "-H", "--heartbeat", "-R", "--rewrite", "--sample-accurate",
};

/* Csound flags Kettle cannot honour, and why. */
static const struct { const char *flag, *why; } refused_flags[] = {
    {"-n", "Kettle's only output is the sound file; --estimate times a render without writing"},
    {"--nosound", "Kettle's only output is the sound file; --estimate times a render without "
                  "writing"},
    {"-i", "Kettle takes no live input; play a recording into the room with `soundfile` in the "
           "orchestra"},
    {"--input", "Kettle takes no live input; play a recording into the room with `soundfile`"},
    {"-M", "Kettle reads MIDI files, not MIDI devices: give the .mid as the score"},
    {"--midi-device", "Kettle reads MIDI files, not MIDI devices: give the .mid as the score"},
    {"-J", "Kettle writes wav, aiff and flac files"}, {"--ircam", "Kettle writes wav, aiff "
                                                                  "and flac files"},
    {"-8", "8-bit samples are too coarse for a physical model's range; use -s, -3, -l or -f"},
    {"-c", "8-bit samples are too coarse for a physical model's range; use -s, -3, -l or -f"},
    {"-a", "A-law is a telephone codec; use -s, -3 or -f"},
    {"-u", "mu-law is a telephone codec; use -s, -3 or -f"},
    {"-h", "(Csound's headerless output) Kettle writes files with headers; -h is --help"},
    {"-k", "the control period is `ksmps` in the orchestra (steps between pedal updates); "
           "Kettle computes every sample"},
    {"--control-rate", "the control period is `ksmps` in the orchestra"},
    {"--ksmps", "set `ksmps` in the orchestra (steps between pedal updates)"},
    {"-t", "the tempo is the score's `t` statement"}, {"--tempo", "the tempo is the score's "
                                                                  "`t` statement"},
    {"-Z", "Kettle does not dither; write -3 (24-bit) or float for a clean floor"},
    {"--dither", "Kettle does not dither; write -3 (24-bit) or float for a clean floor"},
    {"-K", "libsndfile always writes a PEAK chunk in float files"},
    {"-O", "Kettle prints to stdout and stderr: redirect them"},
    {"--logfile", "Kettle prints to stdout and stderr: redirect them"},
    {"-N", "Kettle does not beep: the shell can ring when it returns"},
    {"-L", "Kettle reads no line events: write them in the score"},
    {"-T", "a MIDI file given as the score always ends with its last note plus --tail"},
    {"--smacro", "define score macros with #define in the score"},
    {"--omacro", "define macros with #define"},
};

static int csound_flag(render_cli *c, const char *name, const char *v)
{
    for (size_t k = 0; k < sizeof ignored_flags / sizeof *ignored_flags; k++)
        if (!strcmp(name, ignored_flags[k]))
            return 0;
    for (size_t k = 0; k < sizeof refused_flags / sizeof *refused_flags; k++)
        if (!strcmp(name, refused_flags[k].flag))
            return bad(c, "Csound's %s is not supported: %s", name, refused_flags[k].why);
    (void)v;
    return bad(c, "unknown option '%s'%s", name, "");
}

/* Options that take a value, with Csound's spellings beside Kettle's. */
static const char *const takes_value[] = {
    "-o", "--output", "--sr", "-r", "--sample-rate", "--out-sr", "--precision", "--format",
    "--matrix", "--device", "--threads", "-j", "--num-threads", "--tail", "--from", "--until",
    "--bits", "--gain",
    "--snapshot", "--snapshot-plane", "--checkpoint", "--checkpoint-every", "--scheme",
    "--walls", "-F", "--midifile", "-m", "--messagelevel", "-b", "--iobufsamps", "-B",
    "--hardwarebufsamps", "-H", "--heartbeat", "-k", "--control-rate", "--ksmps", "-t",
    "--tempo", "-i", "--input", "-M", "--midi-device", "-O", "--logfile", "--tuning",
    "--tuning-cache", "--gpus", "--split-axis", "--block",
};

static int wants_value(const char *name)
{
    for (size_t k = 0; k < sizeof takes_value / sizeof *takes_value; k++)
        if (!strcmp(name, takes_value[k]))
            return 1;
    return 0;
}

/* One option `name` with its value v (NULL for flags). */
static int apply(render_cli *c, const char *a, const char *v)
{
    double x;
    int n;
    if (!strcmp(a, "-o") || !strcmp(a, "--output"))
        return output_option(c, v);
    if (!strcmp(a, "--sr") || !strcmp(a, "-r") || !strcmp(a, "--sample-rate"))
        return number(c, a, v, 1, &c->opt.sample_rate_hz);
    if (!strcmp(a, "--out-sr"))
        return number(c, a, v, 1, &c->opt.output.sample_rate_hz);
    if (!strcmp(a, "--precision")) {
        static const char *names[] = {"double", "single"};
        return choice(c, a, v, names, 2, &c->opt.precision);
    }
    if (!strcmp(a, "--format"))
        return format_option(c, v);
    if (!strcmp(a, "--matrix")) {
        kt_timpani_format f;
        if (strcmp(v, "auto") && kt_timpani_format_parse(v, &f, NULL) < 0)
            return bad(c, "--matrix: unknown value '%s' (csc, csr, dia-ell, matrix-free, auto)%s",
                       v, "");
        c->opt.format = strcmp(v, "auto") ? (int)f : -1;
        return 0;
    }
    if (!strcmp(a, "--gpus")) {  /* kettle.c started the ranks; each renders on its GPU */
        if (number(c, a, v, 1, &x) < 0 || x != floor(x) || x > 4096)
            return bad(c, "--gpus needs a whole number of GPUs, got '%s'%s", v, "");
        c->opt.device = KT_DEVICE_GPU;
        return 0;
    }
    if (!strcmp(a, "--split-axis")) {
        kt_split_axis axis;
        if (kt_split_axis_parse(v, &axis) < 0)
            return bad(c, "--split-axis takes x, y, z or auto, got '%s'%s", v, "");
        c->opt.split_axis = (int)axis;
        return 0;
    }
    if (!strcmp(a, "--device")) {
        static const char *names[] = {"auto", "cpu", "gpu"};
        if (choice(c, a, v, names, 3, &n) < 0)
            return -1;
        c->opt.device = (kt_device)n;
        return 0;
    }
    if (!strcmp(a, "--threads") || !strcmp(a, "-j") || !strcmp(a, "--num-threads")) {
        if (number(c, a, v, 1, &x) < 0 || x != floor(x))
            return bad(c, "%s needs a whole number >= 1, got '%s'", a, v);
        kt_error e;
        kt_error_clear(&e);
        c->opt.nthreads = x < 1e9 ? (int)x : 1000000000;
        if (kt_threads_check(c->opt.nthreads, &e) < 0)
            return bad(c, "--threads %s: %.400s", v, e.message);
        return 0;
    }
    if (!strcmp(a, "--block")) {
        char *end = NULL;
        long d = strtol(v, &end, 10);
        if (!strcmp(v, "off") || !strcmp(v, "auto"))
            c->opt.block = !strcmp(v, "off");
        else if (end == v || *end || d < 2 || d > 8)
            return bad(c, "--block takes off, auto or a depth 2..8, not '%s'%s", v, "");
        else
            c->opt.block = (int)d;
        return 0;
    }
    if (!strcmp(a, "--tail"))
        return number(c, a, v, 0, &c->opt.tail_s);
    if (!strcmp(a, "--from"))
        return number(c, a, v, 0, &c->from_s);
    if (!strcmp(a, "--until")) {
        if (number(c, a, v, 0, &c->until_s) < 0 || c->until_s <= 0)
            return bad(c, "--until needs a time after 0 s, got '%s'%s", v, "");
        return 0;
    }
    if (!strcmp(a, "--bits")) {
        static const char *names[] = {"16", "24", "32", "32f", "64f"};
        static const kt_sample_format fmt[] = {KT_PCM16, KT_PCM24, KT_PCM32, KT_FLOAT32,
                                               KT_FLOAT64};
        if (choice(c, a, v, names, 5, &n) < 0)
            return -1;
        c->opt.output.sample_format = fmt[n];
        return 0;
    }
    if (!strcmp(a, "-s") || !strcmp(a, "--short"))
        c->opt.output.sample_format = KT_PCM16;
    else if (!strcmp(a, "-3") || !strcmp(a, "--24bit"))
        c->opt.output.sample_format = KT_PCM24;
    else if (!strcmp(a, "-l") || !strcmp(a, "--long"))
        c->opt.output.sample_format = KT_PCM32;
    else if (!strcmp(a, "-f") || !strcmp(a, "--float"))
        c->opt.output.sample_format = KT_FLOAT32;
    else if (!strcmp(a, "-W") || !strcmp(a, "--wave"))
        return sound_word(c, "wav", a) ? 0 : -1;
    else if (!strcmp(a, "-A") || !strcmp(a, "--aiff"))
        return sound_word(c, "aiff", a) ? 0 : -1;
    else if (!strcmp(a, "--normalize")) {
        c->opt.output.peak_dbfs = -1;
        if (v && number(c, a, v, -400, &c->opt.output.peak_dbfs) < 0)
            return -1;
        if (c->opt.output.peak_dbfs > 0)
            return bad(c, "--normalize: a peak above 0 dBFS would clip, got '%s'%s", v, "");
        c->opt.output.normalize = 1;
    } else if (!strcmp(a, "--gain")) {
        if (number(c, a, v, 0, &c->opt.output.raw_gain) < 0 || !(c->opt.output.raw_gain > 0))
            return bad(c, "--gain needs a positive number (sample = G x pascals), got '%s'%s", v,
                       "");
        c->opt.output.normalize = 0;
    } else if (!strcmp(a, "--fail-on-clip"))
        c->opt.clipping_fails = 1;
    else if (!strcmp(a, "--snapshot"))
        return snapshot_times(c, v);
    else if (!strcmp(a, "--snapshot-plane"))
        return snapshot_plane(c, v);
    else if (!strcmp(a, "--checkpoint"))
        snprintf(c->checkpoint, sizeof c->checkpoint, "%s", v);
    else if (!strcmp(a, "--checkpoint-every")) {
        if (kt_cli_duration(v, &c->opt.checkpoint_every_s) < 0)
            return bad(c, "--checkpoint-every takes a time such as 90, 30s, 10m or 1h, got '%s'%s",
                       v, "");
    } else if (!strcmp(a, "--scheme"))
        return scheme_option(c, v);
    else if (!strcmp(a, "--walls")) {
        static const char *names[] = {"lossy", "absorbing"};
        return choice(c, a, v, names, 2, &c->opt.wall_model);
    } else if (!strcmp(a, "-F") || !strcmp(a, "--midifile"))
        c->midi = v;
    else if (!strcmp(a, "--tuning")) {
        static const char *names[] = {"calibrated", "formula"};
        return choice(c, a, v, names, 2, &c->opt.tuning);
    } else if (!strcmp(a, "--tuning-cache")) {
        c->opt.tuning_cache = strcmp(v, "off") ? v : "";
    } else if (!strcmp(a, "--override-limits"))
        c->opt.override_limits = 1;
    else if (!strcmp(a, "--per-mic")) {
        c->opt.output.per_mic = 1;
        c->opt.output.interleaved = 0;
    } else if (!strcmp(a, "--estimate"))
        c->estimate = 1;
    else if (!strcmp(a, "--quiet"))
        c->quiet = 1;
    else
        return csound_flag(c, a, v);
    return 0;
}

/* A number alone, as --normalize's optional value. */
static int is_number(const char *s)
{
    char *end;
    strtod(s, &end);
    return end != s && !*end;
}

/* "--name=value" or "--name value" or "--name". */
static int long_option(render_cli *c, int argc, char **argv, int *i)
{
    char name[64];
    const char *a = argv[*i], *eq = strchr(a, '='), *v = eq ? eq + 1 : NULL;
    snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
    if (!strncmp(name, "--smacro", 8) || !strncmp(name, "--omacro", 8))
        name[8] = '\0';   /* --smacro:NAME=VALUE */
    if (!v && wants_value(name)) {
        if (*i + 1 >= argc)
            return bad(c, "%s needs a value%s", name, "");
        v = argv[++*i];
    }
    if (!v && !strcmp(name, "--normalize") && *i + 1 < argc && is_number(argv[*i + 1]))
        v = argv[++*i];
    return apply(c, name, v);
}

/* "-W", "-Wdo out.wav", "-odac", "-r48000", "-m0": Csound's clusters of
 * one-letter flags; the first that takes a value takes the rest of the word
 * or the next one. */
static int short_options(render_cli *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (a[1] == '+')
        return 0;   /* -+rtaudio=... : real-time module settings, nothing to render */
    for (const char *p = a + 1; *p; p++) {
        char flag[3] = {'-', *p, '\0'};
        const char *v = NULL;
        if (wants_value(flag)) {
            if (p[1])
                v = p + 1;
            else if (*i + 1 < argc)
                v = argv[++*i];
            else
                return bad(c, "%s needs a value%s", flag, "");
            return apply(c, flag, v);
        }
        if (apply(c, flag, NULL) < 0)
            return -1;
    }
    return 0;
}

/* One option at argv[*i]; consumes its value.  from_csd: positional inputs
 * are not allowed. */
static int option(render_cli *c, int argc, char **argv, int *i, int from_csd)
{
    const char *a = argv[*i];
    if (a[0] == '-' && a[1] == '-' && a[2])
        return long_option(c, argc, argv, i);
    if (a[0] == '-' && a[1])
        return short_options(c, argc, argv, i);
    if (from_csd)
        return bad(c, "unexpected '%s' (input files belong on the command line)%s", a, "");
    if (c->ninputs == 2)
        return bad(c, "too many input files ('%s')%s", a, "");
    c->inputs[c->ninputs++] = a;
    return 0;
}

/* <CsOptions>: whitespace-separated words, no quoting.  On an error, *bad_at
 * is the offending word's offset in text. */
static int csd_options(render_cli *c, char *text, size_t *bad_at)
{
    char *argv[128];
    int argc = 0;
    const char *base = text;
    for (char *tok = strtok(text, " \n"); tok && argc < 128; tok = strtok(NULL, " \n"))
        argv[argc++] = tok;
    for (int i = 0; i < argc; i++)
        if (option(c, argc, argv, &i, 1) < 0) {
            *bad_at = (size_t)(argv[i < argc ? i : argc - 1] - base);
            return -1;
        }
    return 0;
}

/* The place in the .csd of an offset into its <CsOptions>. */
static kt_score_loc options_place(const kt_performance *perf, size_t offset)
{
    kt_score_loc loc = perf->options_loc;
    for (size_t i = 0; i < offset && perf->options[i]; i++) {
        if (perf->options[i] == '\n') {
            loc.line++;
            loc.col = 1;
        } else {
            loc.col++;
        }
    }
    return loc;
}

/* ---- progress ---- */

typedef struct progress {
    double start, last;
    int tty, quiet;
    double voxels;
} progress;

static void clock_text(char *buf, size_t n, double s)
{
    if (!(s >= 0) || s > 359999)
        snprintf(buf, n, "--:--");
    else if (s >= 3600)
        snprintf(buf, n, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
    else
        snprintf(buf, n, "%d:%02d", (int)s / 60, (int)s % 60);
}

static int show_progress(void *user, int64_t done, int64_t total)
{
    progress *p = user;
    double now = kt_seconds();
    if (p->quiet || (now - p->last < (p->tty ? 0.1 : 5.0) && done < total))
        return 0;
    p->last = now;
    double el = now - p->start, frac = (double)done / total;
    char eta[32];
    clock_text(eta, sizeof eta, frac > 0 ? el * (1 - frac) / frac : -1);
    double mvox = el > 0 ? p->voxels * done / el / 1e6 : 0;
    if (p->tty) {
        char bar[31];
        int fill = (int)(frac * 30);
        for (int i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(stderr, "\r[%s] %5.1f%%  ETA %s  %.1f Mvox/s ", bar, 100 * frac, eta, mvox);
        if (done == total)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "render: %5.1f%% (%lld of %lld steps), ETA %s, %.1f Mvox/s\n", 100 * frac,
                (long long)done, (long long)total, eta, mvox);
    }
    fflush(stderr);
    return 0;
}

/* What the tuner does, a line at a time (not under --quiet). */
static void tuning_note(void *user, const char *line)
{
    const progress *p = user;
    if (!p->quiet)
        fprintf(stderr, "%s\n", line);
}

/* ---- reports ---- */

static void print_summary(const kt_performance *perf, const kt_render_result *r,
                          const char *output, int per_mic)
{
    const char *dot = strrchr(output, '.');
    if (!per_mic || !dot)
        printf("wrote %s\n", output);
    for (int ch = 0; per_mic && dot && ch < r->channels; ch++)
        printf("wrote %.*s_%s%s\n", (int)(dot - output), output, perf->mics[ch].name, dot);
    printf("audio:     %.3f s (%lld samples at %.0f Hz, %d channel%s)\n", r->duration_s,
           (long long)llround(r->duration_s * r->output_rate_hz), r->output_rate_hz, r->channels,
           r->channels == 1 ? "" : "s");
    if (r->output_rate_hz != r->sample_rate_hz)
        printf("rate:      simulated at %.0f Hz, resampled to %.0f Hz (libsamplerate, best "
               "sinc)\n", r->sample_rate_hz, r->output_rate_hz);
    printf("grid:      %d x %d x %d air points, %d drum%s (%s)\n", r->grid.nx, r->grid.ny,
           r->grid.nz, perf->drum_count, perf->drum_count == 1 ? "" : "s",
           kt_timpani_format_name((kt_timpani_format)r->timpani_format));
    printf("device:    %s\n", r->device);
    if (r->blocking[0])
        printf("blocking:  %s\n", r->blocking);
    double wall = r->setup_s + r->run_s;
    printf("wall time: %.2f s (setup %.2f s), real-time factor %.2f (wall / audio)\n", wall,
           r->setup_s, wall / r->duration_s);
    if (r->tuning_pitches)
        printf("tuning:    %d pitch%s, %d run%s, %.2f s (%.1f %% of the wall time)\n",
               r->tuning_pitches, r->tuning_pitches == 1 ? "" : "es", r->tuning_runs,
               r->tuning_runs == 1 ? "" : "s", r->tuning_s, 100 * r->tuning_s / wall);
    kt_cli_print_levels(perf, r);
    if (r->snapshots_written)
        printf("snapshots: %d picture%s\n", r->snapshots_written, r->snapshots_written == 1 ? "" : "s");
}

static void print_estimate(const kt_render_result *r)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double points = r->grid.nodes;
    printf("estimate:  grid %d x %d x %d (%.0f air points), %lld steps for %.3f s of audio\n",
           r->grid.nx, r->grid.ny, r->grid.nz, points, (long long)r->total_steps, r->duration_s);
    printf("device:    %s\n", r->device);
    if (r->blocking[0])
        printf("blocking:  %s\n", r->blocking);
    printf("measured:  %.3f ms/step over %lld steps (%.1f Mvox/s), setup %.2f s\n",
           1e3 * r->seconds_per_step, (long long)r->timed_steps,
           r->seconds_per_step > 0 ? points / r->seconds_per_step / 1e6 : 0, r->setup_s);
    printf("predicted: %.1f s wall time, real-time factor %.1f (and the tuning, unless it is "
           "cached: a few runs of about 0.1 s of audio per pitch)\n", r->estimated_wall_s,
           r->estimated_wall_s / r->duration_s);
    printf("memory:    room fields %.1f MiB, process peak %.1f MiB\n", r->grid.bytes / 1048576.0,
           ru.ru_maxrss / 1024.0);
}

/* Over ranks: the axis the room is cut along, each rank's slab and memory
 * (the largest decides the machine), as the render split it. */
static void print_ranks(const kt_performance *perf, const kt_render_options *opt,
                        const kt_room_params *rp, int ranks, int axis)
{
    kt_split_options so;
    if (ranks < 2 || kt_render_split_options(perf, opt, &so, NULL) < 0)
        return;
    so.axis = (kt_split_axis)axis;
    size_t most = 0, total = 0;
    kt_room_split sp;
    int ok = kt_room_split_plan(rp, ranks, &so, &sp, NULL) == 0;
    for (int r = 0; ok && r < ranks; r++) {
        int lo[3], hi[3];
        size_t bytes = 0;
        if (kt_room_split_part(rp, ranks, &so, r, lo, hi, &bytes, NULL) < 0)
            break;
        printf("rank %-4d  %c %d..%d, room fields %.1f MiB\n", r, "xyz"[axis], lo[axis],
               hi[axis] - 1, bytes / 1048576.0);
        most = bytes > most ? bytes : most;
        total += bytes;
    }
    kt_render_split_free(&so);
    if (!ok)
        return;
    printf("ranks:     %d, largest slab %.1f MiB, all ranks %.1f MiB\n", ranks,
           most / 1048576.0, total / 1048576.0);
    printf("per GPU:   %.1f MiB of room fields (the largest slab, rows padded for the GPU); "
           "halo %.2f MiB a layer\n", sp.device_bytes_max / 1048576.0,
           sp.halo_bytes / 1048576.0);
    printf("split:     along %c (%s)", "xyz"[axis],
           opt->split_axis == KT_SPLIT_AUTO ? "chosen" : "as asked");
    if (sp.best_axis != axis)   /* a layer across x is one node of every row: strided */
        printf("; across %c a layer would be %.2f MiB%s", "xyz"[sp.best_axis],
               sp.best_halo_bytes / 1048576.0, sp.best_axis == 0 ? ", strided" : "");
    printf("\n");
}

/* Microphones where a drum's pitch is silent: warned about, not refused. */
static void print_warnings(const kt_performance *perf, const kt_room_params *rp)
{
    kt_score_error w[8];
    int n = kt_tuning_mic_warnings(perf, rp, w, 8);
    for (int i = 0; i < n && i < 8; i++) {
        char buf[4096];
        kt_score_error_format(&w[i], buf, sizeof buf);
        fputs(buf, stderr);
    }
    if (n > 8)
        fprintf(stderr, "(and %d more such warnings)\n", n - 8);
}

static void report(const kt_score_error *e)
{
    char buf[4096];
    kt_score_error_format(e, buf, sizeof buf);
    if (!e->file[0])
        fputs("kettle render: ", stderr);
    fputs(buf, stderr);
}

/* The extension a file type asks for (-W, -A, --format=flac). */
static const char *type_extension(const char *type)
{
    return !type ? ".wav" : !strcmp(type, "aiff") ? ".aif" : !strcmp(type, "flac") ? ".flac"
                                                                                     : ".wav";
}

static char *default_output(const char *input, const char *type)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    const char *dot = strrchr(base, '.');
    size_t n = dot ? (size_t)(dot - base) : strlen(base);
    char *out = malloc(n + 8);
    if (out)
        snprintf(out, n + 8, "%.*s%s", (int)n, base, type_extension(type));
    return out;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* -W/-A/--format=TYPE and -o NAME must agree (Kettle picks the type by the
 * extension, so a mismatch would write something else than asked). */
static int check_file_type(render_cli *c)
{
    if (!c->file_type || !c->output)
        return 0;
    const char *want = type_extension(c->file_type);
    int ok = has_suffix(c->output, want) || (!strcmp(want, ".aif") && has_suffix(c->output, ".aiff"));
    if (!ok)
        snprintf(c->problem, sizeof c->problem, "%s asks for a %s file but the output '%s' does "
                 "not end in %s", c->file_type_flag, c->file_type, c->output, want);
    return ok ? 0 : -1;
}

static int is_midi(const char *path)
{
    return has_suffix(path, ".mid") || has_suffix(path, ".midi") || has_suffix(path, ".smf");
}

static int load(render_cli *c, kt_performance *perf, kt_score_error *err)
{
    const char *why = NULL;
    if (c->ninputs == 1 && has_suffix(c->inputs[0], ".csd") && !c->midi)
        return kt_score_load_csd(perf, c->inputs[0], err);
    else if (c->ninputs == 1 && has_suffix(c->inputs[0], ".csd"))
        why = "a .csd brings its own score: give its orchestra as an .orc with the MIDI file";
    else if (c->ninputs == 1 && c->midi)
        return kt_score_load_midi(perf, c->inputs[0], c->midi, err);
    else if (c->ninputs == 2 && c->midi)
        why = "a score and -F MIDI.mid: give one of them";
    else if (c->ninputs == 2 && is_midi(c->inputs[1]))
        return kt_score_load_midi(perf, c->inputs[0], c->inputs[1], err);
    else if (c->ninputs == 2)
        return kt_score_load(perf, c->inputs[0], c->inputs[1], err);
    else
        why = c->ninputs == 1 ? "a single input must be a .csd (or give PIECE.orc PIECE.sco)"
                              : "no input: give PIECE.orc PIECE.sco, PIECE.orc PIECE.mid or "
                                "PIECE.csd";
    snprintf(err->message, sizeof err->message, "%s", why);
    err->file[0] = '\0';
    err->code = KT_EINVAL;
    return KT_EINVAL;
}

/* --from/--until: the passage of the score between them.  Says what the
 * excerpt leaves out; an excerpt writes no checkpoint (kettle resume reads
 * the whole score again). */
static int excerpt(render_cli *c, kt_performance *perf, kt_score_error *err)
{
    if (c->until_s > 0 && c->until_s <= c->from_s)
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_EINVAL,
                                "--until %g s must come after --from %g s", c->until_s,
                                c->from_s);
    if (c->until_s > 0)
        c->opt.until_s = c->until_s - c->from_s;
    if (c->from_s <= 0)
        return KT_OK;
    if (c->checkpoint[0])
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_EINVAL,
                                "an excerpt (--from) writes no checkpoint: leave out "
                                "--checkpoint");
    kt_excerpt_cut cut;
    int rc = kt_performance_excerpt(perf, c->from_s, &cut, err);
    if (rc == 0 && !c->quiet && cut.strikes + cut.sources > 0)
        fprintf(stderr, "excerpt from %g s: %d stroke%s and %d source%s before it left out\n",
                c->from_s, cut.strikes, cut.strikes == 1 ? "" : "s", cut.sources,
                cut.sources == 1 ? "" : "s");
    return rc;
}

static int render(render_cli *c, kt_performance *perf)
{
    kt_score_error err = {0};
    if (excerpt(c, perf, &err) < 0) {
        report(&err);
        return KT_EXIT_USAGE;
    }
    char *fallback = c->output ? NULL : default_output(c->inputs[0], c->file_type);
    const char *output = c->output ? c->output : fallback;
    char stem[1200];
    snprintf(stem, sizeof stem, "%s", output ? output : "out");
    char *dot = strrchr(stem, '.');
    if (dot && !strchr(dot, '/'))
        *dot = '\0';
    strcat(stem, "_snap");
    c->opt.snapshot_stem = stem;
    if (c->opt.snapshot_count > 0 && !c->have_plane)
        c->opt.snapshot_position_m = 0.5 * perf->room.size_m[2];
    if (c->estimate)
        c->opt.estimate_steps = DEFAULT_ESTIMATE_STEPS;
    c->opt.estimate_steady = c->estimate;
    int ranks = kt_mpi_size();
    if (ranks > 1) {
        /* over ranks: rank 0 speaks and writes the audio, each rank its part
         * of a checkpoint; under mpirun the CPU unless --device gpu, in a GPU
         * job (--gpus) the GPUs */
        c->quiet |= kt_mpi_rank() > 0;
        if (c->opt.device == KT_DEVICE_AUTO)
            c->opt.device = kt_gpu_job_size() > 0 ? KT_DEVICE_GPU : KT_DEVICE_CPU;
    }
    double now = kt_seconds();
    progress pr = {now, now, isatty(2), c->quiet || c->estimate, 0};
    kt_room_grid g;
    kt_room_params rp;
    kt_render_room_params(perf, &c->opt, &rp);
    if (kt_room_estimate(&rp, &g, NULL) == 0)
        pr.voxels = g.nodes;
    c->opt.progress = show_progress;
    c->opt.tuning_note = tuning_note;
    c->opt.user = &pr;
    if (kt_mpi_rank() == 0)
        c->opt.warn = kt_cli_warn;
    if (!c->quiet)
        print_warnings(perf, &rp);
    if (c->from_s <= 0) {
        /* --estimate checks the checkpoint's path too, and writes none; an
         * excerpt (--from) writes none */
        if (!c->checkpoint[0])
            kt_cli_default_checkpoint(output ? output : "out.wav", c->checkpoint,
                                      sizeof c->checkpoint);
        c->opt.checkpoint_path = c->checkpoint;
    }
    if (!c->estimate) {
        c->opt.stop = kt_cli_stop_requested;
        kt_cli_catch_signals();
    }
    kt_render_result res;
    int rc = kt_render(perf, output, &c->opt, &res, &err);
    int status = KT_EXIT_OK;
    if (rc < 0) {
        if (pr.tty && !pr.quiet)
            fputc('\n', stderr);
        report(&err);
        status = kt_cli_after_failure(&err, &res, c->opt.checkpoint_path, kt_cli_exit_status(&err));
    } else if (c->estimate && !c->quiet) {
        print_estimate(&res);
        print_ranks(perf, &c->opt, &rp, ranks, res.split_axis);
    } else {
        if (!c->quiet)
            print_summary(perf, &res, output, c->opt.output.per_mic);
        status = kt_cli_clip_warnings(perf, &res, &c->opt);
    }
    kt_render_result_free(&res);
    free(fallback);
    return status;
}

int kt_cmd_render(int argc, char **argv)
{
    render_cli c;
    memset(&c, 0, sizeof c);
    kt_render_options_default(&c.opt);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            render_usage(stdout);
            return KT_EXIT_OK;
        }
    }
    /* First the inputs (to find a .csd's options), then the options proper. */
    for (int i = 1; i < argc; i++)
        if (option(&c, argc, argv, &i, 0) < 0) {
            fprintf(stderr, "kettle render: %s\n(kettle render --help lists the options)\n",
                    c.problem);
            return KT_EXIT_USAGE;
        }
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    if (load(&c, &perf, &err) < 0) {
        report(&err);
        kt_performance_free(&perf);
        return KT_EXIT_USAGE;
    }
    /* The options' words: their values (-o FILE) are used until the end. */
    char text[sizeof perf.options];
    if (perf.options[0]) {
        /* <CsOptions> come first; the command line is applied again over them. */
        render_cli again;
        memset(&again, 0, sizeof again);
        kt_render_options_default(&again.opt);
        memcpy(text, perf.options, sizeof text);
        size_t bad_at = 0;
        if (csd_options(&again, text, &bad_at) < 0) {
            kt_score_fail_at(&perf, options_place(&perf, bad_at), &err, KT_EINVAL,
                             "in <CsOptions>: %s", again.problem);
            report(&err);
            kt_performance_free(&perf);
            return KT_EXIT_USAGE;
        }
        for (int i = 1; i < argc; i++)
            if (option(&again, argc, argv, &i, 0) < 0)
                break;
        c = again;
        c.opt.snapshot_times_s = c.snapshots;
        if (c.midi)
            snprintf(c.problem, sizeof c.problem, "-F in <CsOptions>: a .csd brings its own "
                     "score; give its orchestra as an .orc with the MIDI file");
    }
    if (c.problem[0] || check_file_type(&c) < 0) {
        fprintf(stderr, "kettle render: %s\n", c.problem);
        kt_performance_free(&perf);
        return KT_EXIT_USAGE;
    }
    kt_flush_denormals(c.opt.nthreads);   /* ~10 % faster in the decay; see kt_base.h */
    int status = render(&c, &perf);
    kt_performance_free(&perf);
    return status;
}
