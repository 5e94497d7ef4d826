/* score_internal.h - what the score-language files share: the line lexer
 * (score_lex.c: comments, macros, tokens), value helpers and the growing
 * arrays of a kt_performance (score_perf.c), and the two statement parsers
 * (score_orc.c, score_sco.c). */
#ifndef SCORE_INTERNAL_H
#define SCORE_INTERNAL_H

#include "kt_score.h"

#define KT_TOKEN_TEXT_MAX 256
#define KT_LINE_TOKENS_MAX 256

typedef enum kt_token_kind {
    KT_TOK_NUMBER = 1,   /* value, optional unit suffix ("29in", "2200N/m") */
    KT_TOK_WORD,         /* identifier, pitch name (F#2), dynamic mark */
    KT_TOK_STRING,       /* "quoted" (quotes removed) */
    KT_TOK_SYMBOL        /* one punctuation character: = , . + < : ... */
} kt_token_kind;

typedef struct kt_token {
    kt_token_kind kind;
    char text[KT_TOKEN_TEXT_MAX];  /* as written (string: without quotes) */
    double value;                  /* numbers */
    char unit[16];                 /* numbers: suffix, "" if none */
    int line, col;                 /* where it was written (a macro's use site) */
} kt_token;

typedef struct kt_macro {
    char name[KT_SCORE_NAME_MAX];
    char *body;
} kt_macro;

/* Reads one source text (or the part [begin, end) of it) line by line. */
typedef struct kt_lexer {
    kt_performance *perf;
    int source;              /* index into perf->texts */
    char *clean;             /* the text with comments blanked (columns kept) */
    size_t pos, end;         /* next line starts at clean[pos] */
    int line;                /* 1-based line number of the next line */
    kt_macro *macros;
    int macro_count;
    kt_score_error *err;
} kt_lexer;

/* A line of tokens. */
typedef struct kt_line {
    kt_token tok[KT_LINE_TOKENS_MAX];
    int count;
    int line;                /* line number */
} kt_line;

int kt_lexer_open(kt_lexer *lx, kt_performance *perf, int source, size_t begin, size_t end,
                  kt_score_error *err);
void kt_lexer_close(kt_lexer *lx);
/* Next non-empty logical line: 1 when one was read, 0 at the end, < 0 on error. */
int kt_lexer_next(kt_lexer *lx, kt_line *out);

/* Add a source text to the performance (copied); returns its index or < 0. */
int kt_perf_add_text(kt_performance *perf, const char *name, const char *text, size_t length);
/* Read a whole file into a new text; errors are reported at `at` (may be a
 * no-place loc) as "cannot read FILE: reason". */
int kt_perf_add_file(kt_performance *perf, const char *path, kt_score_loc at,
                     kt_score_error *err);

/* Errors at a token. */
int kt_fail_tok(kt_lexer *lx, const kt_token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Error at the end of a line (for "missing ..."). */
int kt_fail_eol(kt_lexer *lx, const kt_line *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
kt_score_loc kt_tok_loc(const kt_lexer *lx, const kt_token *t);

int kt_tok_is(const kt_token *t, kt_token_kind kind, const char *text);
int kt_tok_is_symbol(const kt_token *t, char c);

/* Value readers: read from l->tok[*i], advance *i, fail with a message at
 * the token.  what names the quantity in messages ("room length"). */
int kt_read_length(kt_lexer *lx, const kt_line *l, int *i, const char *what, double *metres);
int kt_read_plain(kt_lexer *lx, const kt_line *l, int *i, const char *what, double *v);
int kt_read_seconds(kt_lexer *lx, const kt_line *l, int *i, const char *what, double *s);
int kt_read_position(kt_lexer *lx, const kt_line *l, int *i, const char *what, double pos[3]);
/* A tuning: pitch name or Hz (sets *hz) or a tension in N/m (sets *tension;
 * a bare number only when tension_only, as `tension =` reads it: a bare
 * number for a pitch is refused with both spellings); the other is set to 0.
 * kt_tuning_resolve turns it into a tension for drum p and refuses tensions
 * no kettledrum can take. */
int kt_read_tuning(kt_lexer *lx, const kt_line *l, int *i, int tension_only, double *tension,
                   double *hz, char *name, size_t nsize);
int kt_tuning_resolve(const kt_performance *perf, kt_score_loc at, const kt_timpani_params *p,
                      const char *drum, double hz, double *tension, kt_score_error *err);
int kt_expect_end(kt_lexer *lx, const kt_line *l, int i);
/* Skip one optional comma. */
void kt_skip_comma(const kt_line *l, int *i);

/* Append one zeroed element to a malloc'ed array of *count elements;
 * returns the new element or NULL when out of memory. */
void *kt_push(void **array, int *count, size_t elem);

/* A mesh file's triangles (perform/score_mesh.c, libassimp), 9 coordinates
 * each, at_m + scale * the file's, in a new array; KT_ENOTSUP in a build
 * without libassimp. */
int kt_mesh_load(const char *path, double scale, const double at_m[3], double **xyz,
                 int *triangles, kt_error *err);

int kt_orc_parse(kt_performance *perf, int source, size_t begin, size_t end,
                 kt_score_error *err);
int kt_sco_parse(kt_performance *perf, int source, size_t begin, size_t end,
                 kt_score_error *err);
/* Index of the drum called `name` (instr number or name), -1 if none. */
int kt_perf_find_drum(const kt_performance *perf, const char *name);

#endif
