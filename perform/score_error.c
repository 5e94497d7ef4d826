/* score_error.c - errors that point into the source: a kt_score_error at a
 * statement's file, line and column with the line's text, for the parser and
 * for everything that fails later on a statement (the renderer, the tuner). */
#include "score_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void copy_line_text(const kt_performance *perf, kt_score_loc loc, kt_score_error *e)
{
    e->source_line[0] = '\0';
    if (loc.source < 0 || loc.source >= perf->text_count || loc.line < 1)
        return;
    const kt_score_text *t = &perf->texts[loc.source];
    const char *p = t->text, *end = t->text + t->length;
    for (int line = 1; line < loc.line && p < end; p++)
        if (*p == '\n')
            line++;
    size_t n = 0;
    while (p + n < end && p[n] != '\n' && p[n] != '\r' && n + 1 < sizeof e->source_line)
        n++;
    memcpy(e->source_line, p, n);
    e->source_line[n] = '\0';
}

static int fail_at_v(const kt_performance *perf, kt_score_loc loc, kt_score_error *err, int code,
                     const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->warning = 0;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    err->file[0] = '\0';
    err->line = loc.line;
    err->col = loc.col;
    if (loc.source >= 0 && loc.source < perf->text_count)
        snprintf(err->file, sizeof err->file, "%s", perf->texts[loc.source].name);
    copy_line_text(perf, loc, err);
    return code;
}

int kt_score_fail_at(const kt_performance *perf, kt_score_loc loc, kt_score_error *err, int code,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_at_v(perf, loc, err, code, fmt, ap);
    va_end(ap);
    return code;
}

int kt_fail_tok(kt_lexer *lx, const kt_token *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_at_v(lx->perf, kt_tok_loc(lx, t), lx->err, KT_EINVAL, fmt, ap);
    va_end(ap);
    return KT_EINVAL;
}

/* The column just after the last token of a line. */
int kt_fail_eol(kt_lexer *lx, const kt_line *l, const char *fmt, ...)
{
    kt_score_loc loc = {lx->source, l->line, 1};
    if (l->count > 0) {
        const kt_token *t = &l->tok[l->count - 1];
        loc.line = t->line;
        loc.col = t->col + (int)strlen(t->text) + (t->kind == KT_TOK_STRING ? 2 : 0);
        if (t->kind == KT_TOK_NUMBER)
            loc.col += (int)strlen(t->unit);
    }
    va_list ap;
    va_start(ap, fmt);
    fail_at_v(lx->perf, loc, lx->err, KT_EINVAL, fmt, ap);
    va_end(ap);
    return KT_EINVAL;
}

int kt_score_error_format(const kt_score_error *e, char *buf, size_t size)
{
    const char *kind = e->warning ? "warning" : "error";
    if (!e->file[0] || e->line < 1)
        return snprintf(buf, size, "%s: %s\n", kind, e->message);
    char caret[KT_SCORE_LINE_MAX + 2];
    int n = 0;
    /* Copy tabs so the caret lines up under a tab-indented line. */
    for (int i = 0; i < e->col - 1 && n < KT_SCORE_LINE_MAX; i++)
        caret[n++] = (e->source_line[i] == '\t' && i < (int)strlen(e->source_line)) ? '\t' : ' ';
    caret[n++] = '^';
    caret[n] = '\0';
    return snprintf(buf, size, "%s:%d:%d: %s: %s\n%s\n%s\n", e->file, e->line, e->col, kind,
                    e->message, e->source_line, caret);
}
