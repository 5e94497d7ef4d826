/* score_lex.c - the line lexer shared by orchestra and score: blanks comments
 * (; // and block comments) without moving any column, handles #define /
 * #undef and $NAME expansion (Csound style), and cuts each line into tokens
 * that remember their line and column for error messages. */
#include "score_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KT_MACRO_DEPTH_MAX 16

/* ---- locations ---- */

kt_score_loc kt_tok_loc(const kt_lexer *lx, const kt_token *t)
{
    kt_score_loc loc = {lx->source, t->line, t->col};
    return loc;
}

/* ---- comments ---- */

/* Blank comments in clean[begin, end) in place, keeping newlines, so every
 * column stays where it was written.  Strings protect their content. */
static int blank_comments(kt_lexer *lx, char *s, size_t begin, size_t end)
{
    int line = lx->line, block_line = 0, block_col = 0;
    size_t line_start = begin;
    for (size_t i = begin; i < end; i++) {
        if (s[i] == '\n') {
            line++;
            line_start = i + 1;
            continue;
        }
        if (s[i] == '"') {
            for (i++; i < end && s[i] != '"' && s[i] != '\n'; i++)
                ;
            if (i < end && s[i] == '\n')
                i--;  /* unterminated: the tokenizer reports it */
            continue;
        }
        if (s[i] == ';' || (s[i] == '/' && i + 1 < end && s[i + 1] == '/')) {
            for (; i < end && s[i] != '\n'; i++)
                s[i] = ' ';
            i--;
            continue;
        }
        if (s[i] == '/' && i + 1 < end && s[i + 1] == '*') {
            block_line = line;
            block_col = (int)(i - line_start) + 1;
            s[i] = s[i + 1] = ' ';
            for (i += 2; i < end && !(s[i] == '*' && i + 1 < end && s[i + 1] == '/'); i++) {
                if (s[i] == '\n') {
                    line++;
                    line_start = i + 1;
                } else {
                    s[i] = ' ';
                }
            }
            if (i >= end) {
                kt_score_loc loc = {lx->source, block_line, block_col};
                return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                        "unterminated comment: '/*' has no matching '*/'");
            }
            s[i] = s[i + 1] = ' ';
            i++;
        }
    }
    return KT_OK;
}

int kt_lexer_open(kt_lexer *lx, kt_performance *perf, int source, size_t begin, size_t end,
                  kt_score_error *err)
{
    memset(lx, 0, sizeof *lx);
    lx->perf = perf;
    lx->source = source;
    lx->err = err;
    const kt_score_text *t = &perf->texts[source];
    lx->clean = malloc(t->length + 1);
    if (!lx->clean)
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_ENOMEM, "out of memory");
    memcpy(lx->clean, t->text, t->length);
    lx->clean[t->length] = '\0';
    lx->line = 1;
    for (size_t i = 0; i < begin && i < t->length; i++)
        if (t->text[i] == '\n')
            lx->line++;
    lx->pos = begin;
    lx->end = end < t->length ? end : t->length;
    return blank_comments(lx, lx->clean, lx->pos, lx->end);
}

void kt_lexer_close(kt_lexer *lx)
{
    for (int i = 0; i < lx->macro_count; i++)
        free(lx->macros[i].body);
    free(lx->macros);
    free(lx->clean);
    memset(lx, 0, sizeof *lx);
}

/* ---- tokens ---- */

static int is_word_start(int c) { return isalpha(c) || c == '_'; }
static int is_word_char(int c) { return isalnum(c) || c == '_' || c == '#'; }
static int is_unit_char(int c) { return isalpha(c) || c == '/' || c == '%'; }

static const kt_macro *find_macro(const kt_lexer *lx, const char *name)
{
    for (int i = 0; i < lx->macro_count; i++)
        if (strcmp(lx->macros[i].name, name) == 0)
            return &lx->macros[i];
    return NULL;
}

static kt_token *new_token(kt_lexer *lx, kt_line *out, int line, int col)
{
    if (out->count >= KT_LINE_TOKENS_MAX) {
        kt_score_loc loc = {lx->source, line, col};
        kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                         "line too long: more than %d fields", KT_LINE_TOKENS_MAX);
        return NULL;
    }
    kt_token *t = &out->tok[out->count++];
    memset(t, 0, sizeof *t);
    t->line = line;
    t->col = col;
    return t;
}

/* Cut s (one line, or a macro body) into tokens.  Columns come from s unless
 * use_col > 0 (macro expansion: every token sits at the $NAME). */
static int tokenize(kt_lexer *lx, const char *s, int line, int use_col, int depth, kt_line *out)
{
    size_t i = 0, n = strlen(s);
    while (i < n) {
        int c = (unsigned char)s[i];
        if (isspace(c)) {
            i++;
            continue;
        }
        int col = use_col > 0 ? use_col : (int)i + 1;
        kt_score_loc loc = {lx->source, line, col};
        if (c == '$') {
            size_t j = i + 1;
            while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
                j++;
            char name[KT_SCORE_NAME_MAX];
            size_t len = j - i - 1;
            if (len == 0 || len >= sizeof name)
                return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                        "expected a macro name after '$'");
            memcpy(name, s + i + 1, len);
            name[len] = '\0';
            const kt_macro *m = find_macro(lx, name);
            if (!m)
                return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                        "undefined macro $%s (define it with #define %s #...#)",
                                        name, name);
            if (depth >= KT_MACRO_DEPTH_MAX)
                return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                        "macro $%s expands too deeply (recursive definition?)",
                                        name);
            if (j < n && s[j] == '.')
                j++;  /* Csound's optional terminator: $NAME. */
            int rc = tokenize(lx, m->body, line, col, depth + 1, out);
            if (rc < 0)
                return rc;
            i = j;
            continue;
        }
        kt_token *t = new_token(lx, out, line, col);
        if (!t)
            return KT_EINVAL;
        int sign_num = (c == '+' || c == '-') && i + 1 < n &&
                       (isdigit((unsigned char)s[i + 1]) ||
                        (s[i + 1] == '.' && i + 2 < n && isdigit((unsigned char)s[i + 2])));
        if (isdigit(c) || (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1])) || sign_num) {
            char *endp;
            t->kind = KT_TOK_NUMBER;
            t->value = strtod(s + i, &endp);
            size_t j = (size_t)(endp - s), u = 0;
            while (j < n && is_unit_char((unsigned char)s[j]) && u + 1 < sizeof t->unit)
                t->unit[u++] = s[j++];
            if (j < n && (is_unit_char((unsigned char)s[j]) || isdigit((unsigned char)s[j]) ||
                          s[j] == '_' || s[j] == '#' || s[j] == '.'))
                return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                        "malformed number '%.*s'", (int)(j - i + 1), s + i);
            snprintf(t->text, sizeof t->text, "%.*s", (int)((size_t)(endp - s) - i), s + i);
            i = j;
        } else if (is_word_start(c)) {
            size_t j = i;
            while (j < n && is_word_char((unsigned char)s[j]))
                j++;
            t->kind = KT_TOK_WORD;
            snprintf(t->text, sizeof t->text, "%.*s", (int)(j - i), s + i);
            i = j;
        } else if (c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != '"')
                j++;
            if (j >= n)
                return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                        "unterminated string: missing closing '\"'");
            t->kind = KT_TOK_STRING;
            snprintf(t->text, sizeof t->text, "%.*s", (int)(j - i - 1), s + i + 1);
            i = j + 1;
        } else {
            t->kind = KT_TOK_SYMBOL;
            t->text[0] = (char)c;
            t->text[1] = '\0';
            i++;
        }
    }
    return KT_OK;
}

/* ---- directives ---- */

/* #define NAME #body#  (a '#' inside the body is written \#). */
static int directive_define(kt_lexer *lx, const char *s, int line)
{
    const char *p = s;
    kt_score_loc loc = {lx->source, line, 1};
    while (isspace((unsigned char)*p))
        p++;
    p += strlen("#define");
    while (*p == ' ' || *p == '\t')
        p++;
    loc.col = (int)(p - s) + 1;
    const char *name = p;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    size_t len = (size_t)(p - name);
    if (len == 0 || len >= KT_SCORE_NAME_MAX || !is_word_start((unsigned char)*name))
        return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                "expected a macro name after #define");
    if (*p == '(')
        return kt_score_fail_at(lx->perf, (kt_score_loc){lx->source, line, (int)(p - s) + 1},
                                lx->err, KT_EINVAL, "macros with arguments are not supported");
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '#')
        return kt_score_fail_at(lx->perf, (kt_score_loc){lx->source, line, (int)(p - s) + 1},
                                lx->err, KT_EINVAL,
                                "expected '#' to open the macro body (#define NAME #text#)");
    const char *body = ++p;
    char *text = malloc(strlen(body) + 1);
    if (!text)
        return kt_score_fail_at(lx->perf, loc, lx->err, KT_ENOMEM, "out of memory");
    size_t k = 0;
    for (; *p && *p != '#'; p++) {
        if (*p == '\\' && p[1] == '#')
            p++;
        text[k++] = *p;
    }
    text[k] = '\0';
    if (*p != '#') {
        free(text);
        return kt_score_fail_at(lx->perf, (kt_score_loc){lx->source, line, (int)(body - s)},
                                lx->err, KT_EINVAL,
                                "unterminated macro body: missing closing '#' on this line");
    }
    for (p++; *p; p++)
        if (!isspace((unsigned char)*p)) {
            free(text);
            return kt_score_fail_at(lx->perf, (kt_score_loc){lx->source, line, (int)(p - s) + 1},
                                    lx->err, KT_EINVAL, "unexpected text after the macro body");
        }
    char nm[KT_SCORE_NAME_MAX];
    memcpy(nm, name, len);
    nm[len] = '\0';
    kt_macro *m = (kt_macro *)find_macro(lx, nm);
    if (!m) {
        m = kt_push((void **)&lx->macros, &lx->macro_count, sizeof *m);
        if (!m) {
            free(text);
            return kt_score_fail_at(lx->perf, loc, lx->err, KT_ENOMEM, "out of memory");
        }
        snprintf(m->name, sizeof m->name, "%s", nm);
    }
    free(m->body);
    m->body = text;  /* a redefinition replaces the body, as in Csound */
    return KT_OK;
}

static int directive_undef(kt_lexer *lx, const char *s, int line)
{
    const char *p = strstr(s, "#undef") + strlen("#undef");
    while (*p == ' ' || *p == '\t')
        p++;
    const char *name = p;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    char nm[KT_SCORE_NAME_MAX];
    size_t len = (size_t)(p - name);
    kt_score_loc loc = {lx->source, line, (int)(name - s) + 1};
    if (len == 0 || len >= sizeof nm)
        return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL,
                                "expected a macro name after #undef");
    memcpy(nm, name, len);
    nm[len] = '\0';
    for (int i = 0; i < lx->macro_count; i++)
        if (strcmp(lx->macros[i].name, nm) == 0) {
            free(lx->macros[i].body);
            lx->macros[i] = lx->macros[--lx->macro_count];
            return KT_OK;
        }
    return kt_score_fail_at(lx->perf, loc, lx->err, KT_EINVAL, "#undef of undefined macro %s",
                            nm);
}

static int directive(kt_lexer *lx, const char *s, int line)
{
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "#define", 7) == 0 && !is_word_char((unsigned char)p[7]))
        return directive_define(lx, s, line);
    if (strncmp(p, "#undef", 6) == 0 && !is_word_char((unsigned char)p[6]))
        return directive_undef(lx, s, line);
    return kt_score_fail_at(lx->perf, (kt_score_loc){lx->source, line, (int)(p - s) + 1},
                            lx->err, KT_EINVAL,
                            "unknown directive (Kettle knows #define and #undef)");
}

int kt_lexer_next(kt_lexer *lx, kt_line *out)
{
    while (lx->pos < lx->end) {
        size_t b = lx->pos, e = b;
        while (e < lx->end && lx->clean[e] != '\n')
            e++;
        int line = lx->line++;
        lx->pos = e + 1;
        char *s = malloc(e - b + 1);
        if (!s)
            return kt_score_fail_at(lx->perf, (kt_score_loc){-1, 0, 0}, lx->err, KT_ENOMEM,
                                    "out of memory");
        memcpy(s, lx->clean + b, e - b);
        s[e - b] = '\0';
        if (e > b && s[e - b - 1] == '\r')
            s[e - b - 1] = ' ';
        const char *p = s;
        while (isspace((unsigned char)*p))
            p++;
        int rc = KT_OK;
        out->count = 0;
        out->line = line;
        if (*p == '#')
            rc = directive(lx, s, line);
        else if (*p)
            rc = tokenize(lx, s, line, 0, 0, out);
        free(s);
        if (rc < 0)
            return rc;
        if (out->count > 0)
            return 1;
    }
    return 0;
}

/* ---- token helpers ---- */

int kt_tok_is(const kt_token *t, kt_token_kind kind, const char *text)
{
    return t->kind == kind && strcmp(t->text, text) == 0;
}

int kt_tok_is_symbol(const kt_token *t, char c)
{
    return t->kind == KT_TOK_SYMBOL && t->text[0] == c;
}

void kt_skip_comma(const kt_line *l, int *i)
{
    if (*i < l->count && kt_tok_is_symbol(&l->tok[*i], ','))
        (*i)++;
}

int kt_expect_end(kt_lexer *lx, const kt_line *l, int i)
{
    if (i < l->count)
        return kt_fail_tok(lx, &l->tok[i], "unexpected '%s' at the end of the statement",
                           l->tok[i].text);
    return KT_OK;
}
