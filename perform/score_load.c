/* score_load.c - entry points of the score language: an orchestra and a score
 * from two files or from memory, and the single-file .csd form with its
 * <CsInstruments>, <CsScore> and optional <CsOptions> sections.  Line numbers
 * in messages are always those of the file the user wrote. */
#include "score_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const kt_score_loc nowhere = {-1, 0, 0};

static int parse_both(kt_performance *perf, int orc, int sco, kt_score_error *err)
{
    int rc = kt_orc_parse(perf, orc, 0, perf->texts[orc].length, err);
    if (rc == 0)
        rc = kt_sco_parse(perf, sco, 0, perf->texts[sco].length, err);
    return rc;
}

int kt_score_parse(kt_performance *perf, const char *orc_name, const char *orc_text,
                   const char *sco_name, const char *sco_text, kt_score_error *err)
{
    int orc = kt_perf_add_text(perf, orc_name, orc_text, strlen(orc_text));
    int sco = kt_perf_add_text(perf, sco_name, sco_text, strlen(sco_text));
    if (orc < 0 || sco < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    return parse_both(perf, orc, sco, err);
}

int kt_score_load(kt_performance *perf, const char *orc_path, const char *sco_path,
                  kt_score_error *err)
{
    int orc = kt_perf_add_file(perf, orc_path, nowhere, err);
    if (orc < 0)
        return orc;
    int sco = kt_perf_add_file(perf, sco_path, nowhere, err);
    if (sco < 0)
        return sco;
    return parse_both(perf, orc, sco, err);
}

/* Locate "<tag>" (case-sensitive, as Csound) at or after from; returns the
 * offset of '<' or -1. */
static long find_tag(const char *text, size_t length, size_t from, const char *tag)
{
    size_t n = strlen(tag);
    for (size_t i = from; i + n <= length; i++)
        if (text[i] == '<' && memcmp(text + i, tag, n) == 0)
            return (long)i;
    return -1;
}

static kt_score_loc loc_of(const kt_performance *perf, int source, size_t offset)
{
    kt_score_loc loc = {source, 1, 1};
    const char *t = perf->texts[source].text;
    for (size_t i = 0; i < offset; i++) {
        if (t[i] == '\n') {
            loc.line++;
            loc.col = 1;
        } else {
            loc.col++;
        }
    }
    return loc;
}

/* The body of <tag>...</tag>: [*begin, *end). */
static int section(kt_performance *perf, int src, const char *name, size_t *begin, size_t *end,
                   int required, kt_score_error *err)
{
    const kt_score_text *t = &perf->texts[src];
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", name);
    snprintf(close, sizeof close, "</%s>", name);
    long a = find_tag(t->text, t->length, 0, open);
    if (a < 0) {
        if (!required)
            return 0;
        return kt_score_fail_at(perf, loc_of(perf, src, 0), err, KT_EINVAL,
                                "this .csd has no %s section", open);
    }
    long b = find_tag(t->text, t->length, (size_t)a, close);
    if (b < 0)
        return kt_score_fail_at(perf, loc_of(perf, src, (size_t)a), err, KT_EINVAL,
                                "%s is never closed (missing %s)", open, close);
    *begin = (size_t)a + strlen(open);
    *end = (size_t)b;
    return 1;
}

static int read_options(kt_performance *perf, int src, kt_score_error *err)
{
    size_t b, e;
    int rc = section(perf, src, "CsOptions", &b, &e, 0, err);
    if (rc <= 0)
        return rc;
    const char *t = perf->texts[src].text;
    size_t n = 0;
    perf->options_loc = loc_of(perf, src, b);
    /* Character for character, so that an offset in options is one in the
     * file; comments (';' to the end of the line) become spaces. */
    int comment = 0;
    for (size_t i = b; i < e && n + 1 < sizeof perf->options; i++) {
        comment = t[i] == '\n' ? 0 : comment || t[i] == ';';
        perf->options[n++] = t[i] == '\n' ? '\n' : comment || isspace((unsigned char)t[i]) ? ' ' : t[i];
    }
    if (n + 1 >= sizeof perf->options)
        return kt_score_fail_at(perf, perf->options_loc, err, KT_EINVAL,
                                "<CsOptions> is too long (at most %zu characters)",
                                sizeof perf->options - 1);
    perf->options[n] = '\0';
    return KT_OK;
}

static int parse_csd(kt_performance *perf, int src, kt_score_error *err)
{
    const kt_score_text *t = &perf->texts[src];
    if (find_tag(t->text, t->length, 0, "<CsoundSynthesizer>") < 0)
        return kt_score_fail_at(perf, loc_of(perf, src, 0), err, KT_EINVAL,
                                "not a .csd file: no <CsoundSynthesizer> element");
    size_t ob, oe, sb, se;
    int rc = section(perf, src, "CsInstruments", &ob, &oe, 1, err);
    if (rc > 0)
        rc = section(perf, src, "CsScore", &sb, &se, 1, err);
    if (rc > 0)
        rc = read_options(perf, src, err);
    if (rc == 0)
        rc = kt_orc_parse(perf, src, ob, oe, err);
    if (rc == 0)
        rc = kt_sco_parse(perf, src, sb, se, err);
    return rc;
}

int kt_score_parse_csd(kt_performance *perf, const char *name, const char *text,
                       kt_score_error *err)
{
    int src = kt_perf_add_text(perf, name, text, strlen(text));
    if (src < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    return parse_csd(perf, src, err);
}

int kt_score_load_csd(kt_performance *perf, const char *csd_path, kt_score_error *err)
{
    int src = kt_perf_add_file(perf, csd_path, nowhere, err);
    if (src < 0)
        return src;
    return parse_csd(perf, src, err);
}
