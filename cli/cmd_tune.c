/* cmd_tune.c - `kettle tune`: what each drum of an orchestra sounds in its
 * room, the way a timpanist checks a drum before the concert.  The drums are
 * tuned as a render would tune them (perform/include/kt_tuning.h; cached runs are
 * reused), then each drum, at each pitch it is asked for, is struck once
 * more and its partials read: the (1,1) in hertz and as the nearest note
 * +- cents, the (1,1) pair where walls split it, and the (2,1), (3,1),
 * (4,1) with their ratios to the (1,1).  A table, or JSON. */
#include "kt_cli.h"
#include "kt_render.h"
#include "kt_spectrum.h"
#include "kt_tuning.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A (1,1) pair further apart than this is worth a word. */
#define SPLIT_CENTS 1.0

typedef struct tune_cli {
    const char *inputs[2];
    int ninputs;
    const char *json;               /* file, or "-" for stdout */
    int quiet;
    kt_render_options opt;          /* sample rate, precision, threads, cache */
} tune_cli;

static void tune_usage(FILE *f)
{
    fprintf(f,
        "usage: kettle tune PIECE.orc [PIECE.sco] [options]\n"
        "       kettle tune PIECE.csd [options]\n\n"
        "Tunes every drum of the orchestra in its room as `kettle render` would (each\n"
        "pitch measured on the room's own grid, within 3 cents; results are cached), then\n"
        "strikes each drum at each pitch it is asked for (its tuning and its pedals'\n"
        "targets) and prints what it sounds: the (1,1) in Hz and as the nearest note +-\n"
        "cents, and the (2,1), (3,1), (4,1) partials with their ratios to the (1,1).\n\n"
        "options:\n"
        "  --sr HZ               sample rate, overriding the orchestra's (as in render)\n"
        "  --precision P         single or double\n"
        "  --walls W             lossy or absorbing (as in render: tune the room it renders)\n"
        "  --threads N           worker threads (default: all cores)\n"
        "  --json FILE           write the results as JSON to FILE (- for stdout,\n"
        "                        instead of the table)\n"
        "  --tuning T            calibrated (default), or formula: what the first-order\n"
        "                        formula's tensions sound, without calibrating\n"
        "  --tuning-cache DIR    where calibrations are kept (default\n"
        "                        $XDG_CACHE_HOME/kettle); off: keep none\n"
        "  --quiet               no progress lines\n"
        "  -h, --help            this text\n");
}

/* v is a or b: 0 or 1; else -1. */
static int one_of(const char *v, const char *a, const char *b)
{
    return !v ? -1 : !strcmp(v, a) ? 0 : !strcmp(v, b) ? 1 : -1;
}

static int parse(tune_cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--sr") && v) {
            c->opt.sample_rate_hz = strtod(v, &end);
            if (*end || !(c->opt.sample_rate_hz > 0)) {
                fprintf(stderr, "kettle tune: --sr needs a positive rate, got '%s'\n", v);
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--precision") && one_of(v, "double", "single") >= 0) {
            c->opt.precision = one_of(v, "double", "single") ? KT_SINGLE : KT_DOUBLE;
            i++;
        } else if (!strcmp(a, "--walls") && one_of(v, "lossy", "absorbing") >= 0) {
            c->opt.wall_model = one_of(v, "lossy", "absorbing") ? KT_WALL_ENGQUIST_MAJDA
                                                                : KT_WALL_LOSSY;
            i++;
        } else if (!strcmp(a, "--threads") && v) {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 4096) {
                fprintf(stderr, "kettle tune: --threads needs a whole number >= 1, got '%s'\n", v);
                return -1;
            }
            c->opt.nthreads = (int)n;
            i++;
        } else if (!strcmp(a, "--json") && v) {
            c->json = v;
            i++;
        } else if (!strcmp(a, "--tuning") && one_of(v, "calibrated", "formula") >= 0) {
            c->opt.tuning = one_of(v, "calibrated", "formula") ? KT_TUNING_MODEL
                                                               : KT_TUNING_CALIBRATED;
            i++;
        } else if (!strcmp(a, "--tuning-cache") && v) {
            c->opt.tuning_cache = strcmp(v, "off") ? v : "";
            i++;
        } else if (!strcmp(a, "--quiet")) {
            c->quiet = 1;
        } else if (a[0] == '-' || c->ninputs == 2) {
            fprintf(stderr, "kettle tune: unexpected '%s'\n"
                            "(kettle tune --help lists the options)\n", a);
            return -1;
        } else {
            c->inputs[c->ninputs++] = a;
        }
    }
    if (c->ninputs == 0) {
        tune_usage(stderr);
        return -1;
    }
    return 0;
}

static int load(const tune_cli *c, kt_performance *perf, kt_score_error *err)
{
    const char *in = c->inputs[0];
    size_t n = strlen(in);
    if (c->ninputs == 1 && n > 4 && !strcmp(in + n - 4, ".csd"))
        return kt_score_load_csd(perf, in, err);
    /* an orchestra alone: its drums' own tunings, no pedals */
    return kt_score_load(perf, in, c->ninputs == 2 ? c->inputs[1] : "/dev/null", err);
}

static void note_line(void *user, const char *line)
{
    if (!*(const int *)user)
        fprintf(stderr, "%s\n", line);
}

static void report(const kt_score_error *e)
{
    char buf[4096];
    kt_score_error_format(e, buf, sizeof buf);
    fputs(buf, stderr);
}

/* ---- output ---- */

static const char *mode_names[3] = {"(2,1)", "(3,1)", "(4,1)"};

/* The pitch asked for by name: as written, else the nearest note when it
 * is one (a pedal's target, a frequency), else "". */
static void asked_name(const kt_performance *perf, const kt_tuning_target *tg, char *s, size_t n)
{
    double cents = 1;
    const char *name = tg->pedal < 0 ? perf->drums[tg->drum].pitch_name : "";
    snprintf(s, n, "%s", name);
    if (tg->asked_hz > 0 && (!name[0] || strstr(name, "Hz"))) {
        kt_note_nearest(tg->asked_hz * 440.0 / perf->a4_hz, s, n, &cents);
        if (fabs(cents) >= 0.01)
            s[0] = '\0';
    }
}

static void asked_text(const kt_performance *perf, const kt_tuning_target *tg, char *s, size_t n)
{
    char name[32];
    asked_name(perf, tg, name, sizeof name);
    if (tg->asked_hz > 0)
        snprintf(s, n, "%-4s %8.2f Hz", name, tg->asked_hz);
    else
        snprintf(s, n, "%-16s", "(a tension)");
}

static void print_row(const kt_performance *perf, const kt_tuning_target *tg,
                      const kt_tuning_sound *s)
{
    const kt_score_drum *d = &perf->drums[tg->drum];
    char asked[48], note[16], who[96];
    double cents = 0;
    asked_text(perf, tg, asked, sizeof asked);
    kt_note_nearest(s->hz * 440.0 / perf->a4_hz, note, sizeof note, &cents);
    if (tg->pedal < 0)
        snprintf(who, sizeof who, "%s", d->name);
    else
        snprintf(who, sizeof who, "%s@%.2fs", d->name, perf->pedals[tg->pedal].start_s);
    printf("%-10s %5.1f in  %s  %7.1f N/m  %8.2f Hz %-4s %+5.1f c", who,
           d->params.diameter_m / 0.0254, asked, tg->tension_N_per_m, s->hz, note,
           round(cents * 10) / 10 + 0.0);
    for (int k = 0; k < 3; k++)
        if (s->partial_hz[k] > 0)
            printf("  %8.2f Hz x%.3f", s->partial_hz[k], s->partial_hz[k] / s->hz);
        else
            printf("  %17s", "-");
    double split = kt_cents(s->pair_hz[0], s->pair_hz[1]);
    if (fabs(split) > SPLIT_CENTS)
        printf("  pair %.2f/%.2f Hz (%.0f c apart)", s->pair_hz[0], s->pair_hz[1], fabs(split));
    printf("\n");
}

static void print_table_head(const kt_performance *perf, const kt_room_params *rp)
{
    printf("room %.2f x %.2f x %.2f m at %.0f Hz; the (1,1) is the drum's pitch%s\n",
           rp->size_m[0], rp->size_m[1], rp->size_m[2], rp->sample_rate_hz,
           perf->pedal_count ? "; drum@T: the pitch a pedal takes at T s" : "");
    printf("%-10s %8s  %-16s  %11s  %-24s  %-17s  %-17s  %s\n", "drum", "size", "asked",
           "tension", "(1,1) sounds", "(2,1), ratio", "(3,1), ratio", "(4,1), ratio");
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 32)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_row(FILE *f, const kt_performance *perf, const kt_tuning_target *tg,
                     const kt_tuning_sound *s, int first)
{
    const kt_score_drum *d = &perf->drums[tg->drum];
    char note[16];
    double cents = 0;
    kt_note_nearest(s->hz * 440.0 / perf->a4_hz, note, sizeof note, &cents);
    fprintf(f, "%s    {\"drum\": ", first ? "" : ",\n");
    json_string(f, d->name);
    fprintf(f, ", \"size_in\": %.3f, ", d->params.diameter_m / 0.0254);
    if (tg->pedal >= 0)
        fprintf(f, "\"pedal_at_s\": %.6g, ", perf->pedals[tg->pedal].start_s);
    char asked[32];
    asked_name(perf, tg, asked, sizeof asked);
    fprintf(f, "\"asked\": ");
    json_string(f, asked);
    fprintf(f, ", \"asked_hz\": %.6f, \"tension_N_per_m\": %.4f, "
               "\"formula_tension_N_per_m\": %.4f,\n     \"sounding_hz\": %.6f, \"note\": \"%s\", "
               "\"cents\": %.3f, \"pair_hz\": [%.6f, %.6f],\n     \"partials\": [",
            tg->asked_hz, tg->tension_N_per_m, tg->model_tension_N_per_m, s->hz, note, cents,
            s->pair_hz[0], s->pair_hz[1]);
    for (int k = 0; k < 3; k++) {
        fprintf(f, "%s{\"mode\": \"%s\", \"hz\": %.6f, \"ratio\": %.6f}", k ? ", " : "",
                mode_names[k], s->partial_hz[k], s->hz > 0 ? s->partial_hz[k] / s->hz : 0);
    }
    fprintf(f, "],\n     \"runs\": %d}", tg->runs);
}

/* ---- the command ---- */

static int tune(tune_cli *c, kt_performance *perf)
{
    kt_score_error err = {0};
    kt_room_params rp;
    kt_render_room_params(perf, &c->opt, &rp);
    if (kt_performance_check(perf, &rp, &err) < 0) {
        report(&err);
        return KT_EXIT_USAGE;
    }
    kt_score_error w[8];
    int nw = kt_tuning_mic_warnings(perf, &rp, w, 8);
    for (int i = 0; i < nw && i < 8 && !c->quiet; i++)
        report(&w[i]);
    kt_tuning_options to;
    kt_tuning_options_default(&to);
    to.mode = (kt_tuning_mode)c->opt.tuning;
    to.cache_dir = c->opt.tuning_cache;
    to.nthreads = c->opt.nthreads;
    to.note = note_line;
    to.user = &c->quiet;
    kt_tuning tu;
    if (kt_tuning_plan(perf, &rp, &to, &tu, &err) < 0) {
        report(&err);
        return err.code == KT_EINVAL ? KT_EXIT_USAGE : KT_EXIT_FAIL;
    }
    FILE *jf = NULL;
    if (c->json)
        jf = strcmp(c->json, "-") ? fopen(c->json, "w") : stdout;
    if (c->json && !jf) {
        fprintf(stderr, "kettle tune: cannot write %s\n", c->json);
        kt_tuning_free(&tu);
        return KT_EXIT_USAGE;
    }
    if (jf)
        fprintf(jf, "{\n  \"sample_rate_hz\": %.6g,\n  \"drums\": [\n", rp.sample_rate_hz);
    else
        print_table_head(perf, &rp);
    int status = KT_EXIT_OK;
    for (int i = 0; i < tu.target_count && status == KT_EXIT_OK; i++) {
        const kt_tuning_target *tg = &tu.targets[i];
        kt_tuning_sound s;
        kt_error e;
        kt_error_clear(&e);
        if (kt_tuning_measure(perf, &rp, &tu, tg->drum, tg->tension_N_per_m, c->opt.nthreads, &s,
                              &e) < 0) {
            fprintf(stderr, "kettle tune: drum %s: %s\n", perf->drums[tg->drum].name, e.message);
            status = KT_EXIT_FAIL;
        } else if (jf) {
            json_row(jf, perf, tg, &s, i == 0);
        } else {
            print_row(perf, tg, &s);
        }
    }
    if (jf) {
        fprintf(jf, "\n  ],\n  \"tuning_runs\": %d,\n  \"tuning_seconds\": %.3f\n}\n", tu.runs,
                tu.seconds);
        if (jf != stdout && fclose(jf) != 0) {
            fprintf(stderr, "kettle tune: cannot write %s\n", c->json);
            status = KT_EXIT_FAIL;
        }
    } else {
        printf("tuning: %d run%s, %.2f s%s%s\n", tu.runs, tu.runs == 1 ? "" : "s", tu.seconds,
               tu.cache_dir[0] ? "; cache " : "", tu.cache_dir);
    }
    kt_tuning_free(&tu);
    return status;
}

int kt_cmd_tune(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            tune_usage(stdout);
            return KT_EXIT_OK;
        }
    tune_cli c;
    memset(&c, 0, sizeof c);
    kt_render_options_default(&c.opt);
    if (parse(&c, argc, argv) < 0)
        return KT_EXIT_USAGE;
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    int status;
    if (load(&c, &perf, &err) < 0) {
        report(&err);
        status = KT_EXIT_USAGE;
    } else {
        status = tune(&c, &perf);
    }
    kt_performance_free(&perf);
    return status;
}
