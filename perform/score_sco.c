/* score_sco.c - the score: Csound's i, t, s, b, f and e statements with their
 * habits, plus `pedal` for glides.  Carry follows Csound's score reader: a
 * '.' (and the implicit carry of trailing p-fields, and '+' in p2) copies
 * from the previous `i` of the same instrument in the section, '.' in p1
 * from the statement just before if it is an `i`; '^+x' is relative to the
 * last start; ramps '<' '>' (linear) and '(' ')' (exponential) run between
 * the instrument's neighbours in time; '!' stops the implicit carry.  Beats
 * become seconds here; the result lands in the kt_performance sorted by time. */
#include "score_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NP 9             /* p1..p8, index = p-field number */
#define P_DEFAULT_RADIUS 0.6
#define P_DEFAULT_ANGLE_DEG 0.0
#define P_DEFAULT_CONTACT_MS 1.0
#define P_DEFAULT_DAMP_T60_S 0.0   /* no damping: the drum rings on */

enum { F_NUM = 0, F_RAMP = 1, F_EXP = 2 };

/* An i statement in beats, before tempo and ramps. */
typedef struct sco_note {
    kt_score_loc loc;
    kt_score_loc ploc[NP];
    int drum;
    double p[NP];
    int kind[NP];
    int pcnt;           /* p-fields it has (written or carried), as Csound counts them */
    int p2_plus;        /* p2 was '+' (a carried '+' means '+' again) */
} sco_note;

typedef struct sco_pedal {
    kt_score_loc loc;
    int drum;
    double start_beats, dur_beats, tension, hz;
} sco_pedal;

typedef struct sco_state {
    kt_lexer lx;
    kt_line *line;
    sco_note *notes;    int note_count;    /* of the current section */
    sco_pedal *pedals;  int pedal_count;
    double tempo_beat[64], tempo_bpm[64];
    int tempo_count;
    kt_score_loc tempo_loc;
    double clock_beats;                    /* b statement */
    int prev_is_note;                      /* the statement just before was an `i` */
    double last_start_beats;               /* Csound's prvp2, for '^+x'; < 0: none yet */
    double min_end_beats;                  /* f 0 / s p1 / e p1 */
    kt_score_loc min_end_loc;              /* the statement that set it */
    double longest_s;                      /* the longest extent of a statement so far */
    double offset_s;                       /* start of this section in seconds */
    int ended;
} sco_state;

/* ---- tempo: Csound's t statement (linear tempo between breakpoints) ---- */

static double warp(const sco_state *s, double beat)
{
    if (s->tempo_count == 0)
        return beat;  /* 60 beats per minute */
    double t = 0;
    for (int i = 0; i < s->tempo_count; i++) {
        double b0 = s->tempo_beat[i], T0 = s->tempo_bpm[i];
        int last = i + 1 == s->tempo_count;
        double b1 = last ? INFINITY : s->tempo_beat[i + 1];
        double T1 = last ? T0 : s->tempo_bpm[i + 1];
        if (b1 <= b0)
            continue;  /* a jump in tempo at one beat */
        double b = beat < b1 ? beat : b1;
        double slope = (T1 - T0) / (b1 - b0);
        /* seconds = 60 * integral of db / tempo(b) */
        if (fabs(slope) < 1e-12)
            t += 60 * (b - b0) / T0;
        else
            t += 60 / slope * log((T0 + slope * (b - b0)) / T0);
        if (beat <= b1)
            return t;
    }
    return t;
}

static int stmt_tempo(sco_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    if (s->tempo_count)
        return kt_fail_tok(lx, &l->tok[0], "a second t statement in this section (the first is "
                                           "at line %d); one per section", s->tempo_loc.line);
    int i = 1, n = 0;
    while (i < l->count) {
        double b, T;
        int at = i, rc = kt_read_plain(lx, l, &i, "a tempo breakpoint's beat", &b);
        if (rc < 0)
            return rc;
        if (n == 0 && b != 0)
            return kt_fail_tok(lx, &l->tok[at], "a t statement starts at beat 0 (t 0 BPM ...)");
        if (n > 0 && b < s->tempo_beat[n - 1])
            return kt_fail_tok(lx, &l->tok[at], "tempo breakpoints must not go back in time: "
                                                "beat %g after beat %g", b, s->tempo_beat[n - 1]);
        at = i;
        rc = kt_read_plain(lx, l, &i, "the tempo in beats per minute", &T);
        if (rc < 0)
            return rc;
        if (!(T > 0))
            return kt_fail_tok(lx, &l->tok[at], "a tempo must be positive, got %s",
                               l->tok[at].text);
        if (n == 64)
            return kt_fail_tok(lx, &l->tok[at], "too many tempo breakpoints (at most 64)");
        s->tempo_beat[n] = b;
        s->tempo_bpm[n++] = T;
    }
    if (n == 0)
        return kt_fail_eol(lx, l, "missing the tempo (t 0 BPM)");
    s->tempo_count = n;
    s->tempo_loc = kt_tok_loc(lx, &l->tok[0]);
    return KT_OK;
}

/* ---- i statements ---- */

static const char *pfield_what(int k)
{
    static const char *what[NP] = {"", "p1 (drum)", "p2 (start in beats)",
                                   "p3 (duration in beats)",
                                   "p4 (force in newtons or a dynamic mark pp..ff)",
                                   "p5 (strike distance from the centre, fraction of the radius)",
                                   "p6 (strike angle in degrees)", "p7 (contact time in ms)",
                                   "p8 (damping after p3: 60 dB decay time in seconds, 0 none)"};
    return what[k];
}

static const sco_note *last_note_of(const sco_state *s, int drum)
{
    for (int i = s->note_count - 1; i >= 0; i--)
        if (s->notes[i].drum == drum)
            return &s->notes[i];
    return NULL;
}

static int resolve_drum(sco_state *s, const kt_token *t, const sco_note *prev, int *drum)
{
    kt_lexer *lx = &s->lx;
    char name[KT_TOKEN_TEXT_MAX];
    if (kt_tok_is_symbol(t, '.')) {
        if (!prev)
            return kt_fail_tok(lx, t, "'.' in p1 carries the instrument of the statement just "
                                      "before, which must be an i statement");
        *drum = prev->drum;
        return KT_OK;
    }
    if (t->kind == KT_TOK_NUMBER && !t->unit[0] && t->value == floor(t->value) &&
        fabs(t->value) < 1e9)
        snprintf(name, sizeof name, "%d", (int)t->value);
    else if (t->kind == KT_TOK_NUMBER && !t->unit[0] && t->value == floor(t->value))
        snprintf(name, sizeof name, "%s", t->text);   /* no int holds it: no such instr */
    else if (t->kind == KT_TOK_WORD || t->kind == KT_TOK_STRING)
        snprintf(name, sizeof name, "%s", t->text);
    else
        return kt_fail_tok(lx, t, "expected a drum (instr number or name) in p1, got '%s%s'",
                           t->text, t->kind == KT_TOK_NUMBER ? t->unit : "");
    *drum = kt_perf_find_drum(lx->perf, name);
    if (*drum < 0)
        return kt_fail_tok(lx, t, "undefined drum: the orchestra has no instr %s", name);
    return KT_OK;
}

static int carry_error(sco_state *s, const kt_token *t, int k, const sco_note *n)
{
    const char *drum = s->lx.perf->drums[n->drum].name;
    const sco_note *same = last_note_of(s, n->drum);
    if (!same)
        return kt_fail_tok(&s->lx, t, "'%s' in p%d but drum %s has no earlier note in this "
                                      "section to carry from (Csound carries only from the same "
                                      "instrument)", t->text, k, drum);
    return kt_fail_tok(&s->lx, t, "'.' in p%d but drum %s's previous note (line %d) has no p%d",
                       k, drum, same->loc.line, k);
}

/* p2 = same's p2 + its p3 (Csound takes the previous note of the instrument). */
static void plus_start(sco_state *s, const sco_note *same, sco_note *n)
{
    n->p[2] = same->p[2] + fabs(same->p[3]) - s->clock_beats;
    n->p2_plus = 1;
}

static int read_pfield(sco_state *s, const kt_token *t, int k, sco_note *n)
{
    kt_lexer *lx = &s->lx;
    const sco_note *same = last_note_of(s, n->drum);
    n->ploc[k] = kt_tok_loc(lx, t);
    if (kt_tok_is_symbol(t, '.')) {
        if (!same || same->pcnt < k)
            return carry_error(s, t, k, n);
        if (k == 2 && same->p2_plus)
            plus_start(s, same, n);   /* a carried '+' is a '+' */
        else
            n->p[k] = k == 2 ? same->p[2] - s->clock_beats : same->p[k];
        n->kind[k] = same->kind[k];
        return KT_OK;
    }
    if (kt_tok_is_symbol(t, '+')) {
        if (k != 2)
            return kt_fail_tok(lx, t, "'+' is only allowed in p2 (start = previous start + "
                                      "previous duration)");
        if (!same)
            return carry_error(s, t, k, n);
        plus_start(s, same, n);
        return KT_OK;
    }
    if (kt_tok_is_symbol(t, '^')) {   /* '^+x' / '^-x', joined by join_caret() */
        if (k != 2)
            return kt_fail_tok(lx, t, "'^' is only allowed in p2 (start relative to the last "
                                      "start)");
        if (s->last_start_beats < 0)
            return kt_fail_tok(lx, t, "'^%+g' but there is no earlier start in this section",
                               t->value);
        n->p[2] = s->last_start_beats + t->value - s->clock_beats;
        return KT_OK;
    }
    if (kt_tok_is_symbol(t, '<') || kt_tok_is_symbol(t, '>') || kt_tok_is_symbol(t, '(') ||
        kt_tok_is_symbol(t, ')')) {
        if (k < 4)
            return kt_fail_tok(lx, t, "a ramp '%s' is only allowed in p4..p8", t->text);
        n->kind[k] = t->text[0] == '<' || t->text[0] == '>' ? F_RAMP : F_EXP;
        return KT_OK;
    }
    if (k == 4 && t->kind == KT_TOK_WORD) {
        if (kt_dynamic_force(t->text, &n->p[4]) < 0)
            return kt_fail_tok(lx, t, "'%s' is neither a force in newtons nor a dynamic mark "
                                      "(ppp pp p mp mf f ff fff)", t->text);
        return KT_OK;
    }
    if (t->kind != KT_TOK_NUMBER)
        return kt_fail_tok(lx, t, "expected a number for %s, got '%s'", pfield_what(k), t->text);
    int seconds = k == 8 && strcmp(t->unit, "s") == 0, ms8 = k == 8 && strcmp(t->unit, "ms") == 0;
    if (t->unit[0] && !(k == 7 && strcmp(t->unit, "ms") == 0) &&
        !(k == 4 && strcmp(t->unit, "N") == 0) && !seconds && !ms8)
        return kt_fail_tok(lx, t, "%s takes a plain number, not '%s%s'", pfield_what(k), t->text,
                           t->unit);
    n->p[k] = ms8 ? t->value * 1e-3 : t->value;
    return KT_OK;
}

/* Values that must hold once a field is known (ramps are checked after). */
static int check_pfield(sco_state *s, const sco_note *n, int k)
{
    if (n->kind[k] != F_NUM)
        return KT_OK;
    double v = n->p[k];
    kt_score_loc at = n->ploc[k];
    const kt_performance *perf = s->lx.perf;
    kt_score_error *err = s->lx.err;
    if (k == 2 && v < 0)
        return kt_score_fail_at(perf, at, err, KT_EINVAL, "p2: a start time cannot be negative, got %g", v);
    if (k == 3 && v < 0)
        return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                "p3: a duration cannot be negative, got %g (held notes are not "
                                "supported)", v);
    if (k == 4 && !(v > 0))
        return kt_score_fail_at(perf, at, err, KT_EINVAL, "p4: the force must be positive, got %g N", v);
    if (k == 5 && !(v >= 0 && v < 1))
        return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                "strike off the head: p5 = %g, the distance from the centre as "
                                "a fraction of the radius, must lie in 0 .. <1", v);
    if (k == 7 && !(v > 0 && v <= 50))
        return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                "p7: the mallet contact time must lie in 0 .. 50 ms, got %g ms", v);
    if (k == 8 && !(isfinite(v) && v >= 0))
        return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                "p8: the damping time (60 dB decay once damped, seconds; 0 lets "
                                "the drum ring) cannot be negative, got %g s", v);
    return KT_OK;
}

/* '^' followed by a signed number is one p-field: fold the number into the
 * '^' token (its value). */
static void join_caret(kt_line *l, int first)
{
    for (int i = first; i + 1 < l->count; i++)
        if (kt_tok_is_symbol(&l->tok[i], '^') && l->tok[i + 1].kind == KT_TOK_NUMBER &&
            !l->tok[i + 1].unit[0] && strchr("+-", l->tok[i + 1].text[0])) {
            l->tok[i].value = l->tok[i + 1].value;
            memmove(&l->tok[i + 1], &l->tok[i + 2], (size_t)(l->count - i - 2) * sizeof *l->tok);
            l->count--;
        }
}

static const double p_default[NP] = {0, 0, 0, 0, 0, P_DEFAULT_RADIUS, P_DEFAULT_ANGLE_DEG,
                                     P_DEFAULT_CONTACT_MS, P_DEFAULT_DAMP_T60_S};

static int stmt_note(sco_state *s, kt_line *l, int first)
{
    kt_lexer *lx = &s->lx;
    const sco_note *prev_stmt = s->prev_is_note ? &s->notes[s->note_count - 1] : NULL;
    sco_note n;
    memset(&n, 0, sizeof n);
    n.loc = kt_tok_loc(lx, &l->tok[0]);
    join_caret(l, first);
    int given = l->count - first;   /* p-fields written: p1..p<given> */
    for (int k = 4; k <= given && k < NP; k++)
        if (kt_tok_is_symbol(&l->tok[first + k - 1], '!')) {
            if (k < given)
                return kt_fail_tok(lx, &l->tok[first + k], "nothing may follow '!' (it ends "
                                                           "the statement's p-fields)");
            given = k - 1;
            n.pcnt = -1;   /* marks "no implicit carry" until counted below */
        }
    if (given > NP - 1)
        return kt_fail_tok(lx, &l->tok[first + NP - 1],
                           "too many p-fields: an i statement takes p1..p8");
    if (given < 1)
        return kt_fail_eol(lx, l, "missing %s", pfield_what(1));
    int nocarry = n.pcnt < 0;
    n.ploc[1] = kt_tok_loc(lx, &l->tok[first]);
    int rc = resolve_drum(s, &l->tok[first], prev_stmt, &n.drum);
    if (rc < 0)
        return rc;
    const sco_note *same = last_note_of(s, n.drum);
    int carried = same && !nocarry ? same->pcnt : 0;   /* Csound's implicit carry */
    n.pcnt = given > carried ? given : carried;
    for (int k = 2; k < NP; k++) {
        if (k <= given) {
            rc = read_pfield(s, &l->tok[first + k - 1], k, &n);
            if (rc < 0)
                return rc;
        } else if (k <= carried) {
            n.p[k] = k == 2 ? same->p[2] - s->clock_beats : same->p[k];
            n.kind[k] = same->kind[k];
            n.ploc[k] = same->ploc[k];
            if (k == 2 && same->p2_plus)
                plus_start(s, same, &n);
        } else if (k <= 3) {
            return kt_fail_eol(lx, l, "missing %s", pfield_what(k));
        } else if (k == 4) {
            return kt_fail_eol(lx, l, nocarry ? "missing %s ('!' stops its carry from drum %s's "
                                                "note before)"
                                              : "missing %s, and drum %s has no earlier note in "
                                                "this section to carry it from",
                               pfield_what(4), lx->perf->drums[n.drum].name);
        } else {
            n.p[k] = p_default[k];
            n.ploc[k] = n.loc;
        }
        if (k == 2) {
            n.p[2] += s->clock_beats;
            s->last_start_beats = n.p[2];
        }
        rc = check_pfield(s, &n, k);
        if (rc < 0)
            return rc;
    }
    sco_note *d = kt_push((void **)&s->notes, &s->note_count, sizeof *d);
    if (!d)
        return kt_fail_tok(lx, &l->tok[0], "out of memory");
    *d = n;
    s->prev_is_note = 1;
    return KT_OK;
}

/* Notes in time order (start beat, then as written): ramps follow time. */
static int cmp_note_time(const void *a, const void *b)
{
    const sco_note *x = *(const sco_note *const *)a, *y = *(const sco_note *const *)b;
    if (x->p[2] != y->p[2])
        return x->p[2] < y->p[2] ? -1 : 1;
    return (x > y) - (x < y);
}

/* Resolve ramps: '<' '>' linear, '(' ')' exponential in start beat between
 * the drum's neighbouring notes (in time) that carry a value in that p-field. */
static int resolve_ramps(sco_state *s)
{
    if (s->note_count == 0)
        return KT_OK;
    sco_note **o = malloc((size_t)s->note_count * sizeof *o);
    if (!o)
        return kt_score_fail_at(s->lx.perf, s->notes[0].loc, s->lx.err, KT_ENOMEM, "out of memory");
    for (int i = 0; i < s->note_count; i++)
        o[i] = &s->notes[i];
    qsort(o, (size_t)s->note_count, sizeof *o, cmp_note_time);
    int rc = KT_OK;
    for (int i = 0; i < s->note_count && rc == 0; i++)
        for (int k = 4; k < NP && rc == 0; k++) {
            sco_note *n = o[i];
            if (n->kind[k] == F_NUM)
                continue;
            int a = -1, b = -1;
            for (int j = i - 1; j >= 0 && a < 0; j--)
                if (o[j]->drum == n->drum && o[j]->kind[k] == F_NUM)
                    a = j;
            for (int j = i + 1; j < s->note_count && b < 0; j++)
                if (o[j]->drum == n->drum && o[j]->kind[k] == F_NUM)
                    b = j;
            if (a < 0 || b < 0) {
                rc = kt_score_fail_at(s->lx.perf, n->ploc[k], s->lx.err, KT_EINVAL,
                                      "a ramp in p%d needs a value in an earlier and a later "
                                      "note of drum %s", k, s->lx.perf->drums[n->drum].name);
                break;
            }
            const sco_note *na = o[a], *nb = o[b];
            double span = nb->p[2] - na->p[2];
            double f = span > 0 ? (n->p[2] - na->p[2]) / span : (double)(i - a) / (b - a);
            if (n->kind[k] == F_EXP && !(na->p[k] * nb->p[k] > 0)) {
                rc = kt_score_fail_at(s->lx.perf, n->ploc[k], s->lx.err, KT_EINVAL,
                                      "an exponential ramp in p%d runs between values of one "
                                      "sign, not %g and %g", k, na->p[k], nb->p[k]);
                break;
            }
            n->p[k] = n->kind[k] == F_EXP ? na->p[k] * pow(nb->p[k] / na->p[k], f)
                                          : na->p[k] + f * (nb->p[k] - na->p[k]);
        }
    free(o);
    if (rc < 0)
        return rc;
    for (int i = 0; i < s->note_count; i++)
        for (int k = 4; k < NP; k++)
            if (s->notes[i].kind[k] != F_NUM) {
                s->notes[i].kind[k] = F_NUM;
                rc = check_pfield(s, &s->notes[i], k);
                if (rc < 0)
                    return rc;
            }
    return KT_OK;
}

/* ---- pedal DRUM START DURATION TUNING ---- */

static int stmt_pedal(sco_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    kt_performance *perf = lx->perf;
    sco_pedal pd;
    memset(&pd, 0, sizeof pd);
    pd.loc = kt_tok_loc(lx, &l->tok[0]);
    if (l->count < 2)
        return kt_fail_eol(lx, l, "missing the drum (pedal DRUM START DURATION PITCH)");
    int rc = resolve_drum(s, &l->tok[1], s->note_count ? &s->notes[s->note_count - 1] : NULL,
                          &pd.drum);
    int i = 2, at = 2;
    if (rc == 0)
        rc = kt_read_plain(lx, l, &i, "the pedal's start in beats", &pd.start_beats);
    if (rc == 0 && pd.start_beats < 0)
        return kt_fail_tok(lx, &l->tok[at], "the pedal's start cannot be negative");
    at = i;
    if (rc == 0)
        rc = kt_read_plain(lx, l, &i, "the pedal's duration in beats", &pd.dur_beats);
    if (rc == 0 && pd.dur_beats < 0)
        return kt_fail_tok(lx, &l->tok[at], "the pedal's duration cannot be negative");
    at = i;
    char name[16];
    if (rc == 0)
        rc = kt_read_tuning(lx, l, &i, 0, &pd.tension, &pd.hz, name, sizeof name);
    if (rc == 0)
        rc = kt_expect_end(lx, l, i);
    if (rc == 0)
        rc = kt_tuning_resolve(perf, kt_tok_loc(lx, &l->tok[at]), &perf->drums[pd.drum].params,
                               perf->drums[pd.drum].name, pd.hz, &pd.tension, lx->err);
    if (rc < 0)
        return rc;
    pd.start_beats += s->clock_beats;
    sco_pedal *d = kt_push((void **)&s->pedals, &s->pedal_count, sizeof *d);
    if (!d)
        return kt_fail_tok(lx, &l->tok[0], "out of memory");
    *d = pd;
    return KT_OK;
}

/* ---- sections ---- */

static int cmp_strike(const void *a, const void *b)
{
    const kt_score_strike *x = a, *y = b;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return (x->loc.line > y->loc.line) - (x->loc.line < y->loc.line);
}

static int cmp_pedal(const void *a, const void *b)
{
    const kt_score_pedal *x = a, *y = b;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return (x->loc.line > y->loc.line) - (x->loc.line < y->loc.line);
}

static int check_pedal_overlap(const kt_performance *perf, kt_score_error *err)
{
    for (int i = 0; i < perf->pedal_count; i++)
        for (int j = 0; j < i; j++) {
            const kt_score_pedal *a = &perf->pedals[j], *b = &perf->pedals[i];
            if (a->drum == b->drum && b->start_s < a->start_s + a->duration_s)
                return kt_score_fail_at(perf, b->loc, err, KT_EINVAL,
                                        "this pedal on drum %s starts before the one at line %d "
                                        "has finished", perf->drums[b->drum].name, a->loc.line);
        }
    return KT_OK;
}

static int end_section(sco_state *s)
{
    kt_performance *perf = s->lx.perf;
    int rc = resolve_ramps(s);
    if (rc < 0)
        return rc;
    double end_s = warp(s, s->min_end_beats);
    kt_score_loc end_loc = s->min_end_loc;
    for (int i = 0; i < s->note_count; i++) {
        const sco_note *n = &s->notes[i];
        kt_score_strike *st = kt_push((void **)&perf->strikes, &perf->strike_count, sizeof *st);
        if (!st)
            return kt_score_fail_at(perf, n->loc, s->lx.err, KT_ENOMEM, "out of memory");
        double t0 = warp(s, n->p[2]), t1 = warp(s, n->p[2] + n->p[3]);
        st->loc = n->loc;
        st->drum = n->drum;
        st->start_s = s->offset_s + t0;
        st->duration_s = t1 - t0;
        st->force_N = n->p[4];
        st->radius_fraction = n->p[5];
        st->angle_deg = n->p[6];
        st->contact_s = n->p[7] * 1e-3;
        st->damp_t60_s = n->p[8];
        if (t1 > end_s) {
            end_s = t1;
            end_loc = n->loc;
        }
    }
    for (int i = 0; i < s->pedal_count; i++) {
        const sco_pedal *p = &s->pedals[i];
        kt_score_pedal *d = kt_push((void **)&perf->pedals, &perf->pedal_count, sizeof *d);
        if (!d)
            return kt_score_fail_at(perf, p->loc, s->lx.err, KT_ENOMEM, "out of memory");
        double t0 = warp(s, p->start_beats), t1 = warp(s, p->start_beats + p->dur_beats);
        d->loc = p->loc;
        d->drum = p->drum;
        d->start_s = s->offset_s + t0;
        d->duration_s = t1 - t0;
        d->target_tension_N_per_m = p->tension;
        d->target_hz = p->hz;
        if (t1 > end_s) {
            end_s = t1;
            end_loc = p->loc;
        }
    }
    if (end_s > s->longest_s || perf->end_loc.source < 0) {
        s->longest_s = end_s;
        perf->end_loc = end_loc;
    }
    s->offset_s += end_s;
    perf->end_s = s->offset_s;
    s->note_count = s->pedal_count = s->tempo_count = 0;
    s->clock_beats = s->min_end_beats = 0;
    s->prev_is_note = 0;
    s->last_start_beats = -1;
    s->min_end_loc = (kt_score_loc){-1, 0, 0};
    return KT_OK;
}

/* Optional p1 of s, e and f 0: the section lasts at least that many beats. */
static int read_extent(sco_state *s, const kt_line *l, int i, const char *what)
{
    if (i >= l->count)
        return KT_OK;
    double b;
    int at = i, rc = kt_read_plain(&s->lx, l, &i, what, &b);
    if (rc < 0)
        return rc;
    if (b < 0)
        return kt_fail_tok(&s->lx, &l->tok[at], "%s cannot be negative", what);
    if (b + s->clock_beats >= s->min_end_beats) {
        s->min_end_beats = b + s->clock_beats;
        s->min_end_loc = kt_tok_loc(&s->lx, &l->tok[0]);
    }
    return kt_expect_end(&s->lx, l, i);
}

static int stmt_f(sco_state *s, const kt_line *l)
{
    if (l->count >= 2 && l->tok[1].kind == KT_TOK_NUMBER && l->tok[1].value == 0 &&
        !l->tok[1].unit[0]) {
        if (l->count < 3)
            return kt_fail_eol(&s->lx, l, "missing the length in beats (f 0 BEATS)");
        int rc = read_extent(s, l, 2, "the length given by f 0");
        s->last_start_beats = s->clock_beats + l->tok[2].value;   /* its p2, as in Csound */
        return rc;
    }
    return kt_fail_tok(&s->lx, &l->tok[0], "function tables are not used by Kettle; only "
                                           "'f 0 BEATS' (play at least that long) is accepted");
}

static int stmt_b(sco_state *s, const kt_line *l)
{
    int i = 1;
    double b;
    int rc = kt_read_plain(&s->lx, l, &i, "the clock base in beats", &b);
    if (rc < 0)
        return rc;
    s->clock_beats = b;
    return kt_expect_end(&s->lx, l, i);
}

/* "i1" written without a space: split into the letter and p1. */
static int split_glued_i(kt_line *l)
{
    kt_token *t = &l->tok[0];
    if (t->kind != KT_TOK_WORD || t->text[0] != 'i' || !t->text[1])
        return 0;
    char *end;
    double v = strtod(t->text + 1, &end);
    if (*end || l->count >= KT_LINE_TOKENS_MAX)
        return 0;
    memmove(&l->tok[2], &l->tok[1], (size_t)(l->count - 1) * sizeof l->tok[0]);
    l->count++;
    kt_token *p1 = &l->tok[1];
    *p1 = *t;
    p1->kind = KT_TOK_NUMBER;
    p1->value = v;
    memmove(p1->text, p1->text + 1, strlen(p1->text));
    p1->col++;
    t->text[1] = '\0';
    return 1;
}

static int sco_line(sco_state *s, kt_line *l)
{
    kt_lexer *lx = &s->lx;
    split_glued_i(l);
    const kt_token *t = &l->tok[0];
    int was_note = s->prev_is_note;
    s->prev_is_note = 0;   /* only an i statement (or a b, which Csound folds away) keeps it */
    if (kt_tok_is(t, KT_TOK_WORD, "b"))
        s->prev_is_note = was_note;
    if (kt_tok_is(t, KT_TOK_WORD, "i")) {
        s->prev_is_note = was_note;
        return stmt_note(s, l, 1);
    }
    if (t->kind == KT_TOK_WORD) {
        if (strcmp(t->text, "t") == 0)
            return stmt_tempo(s, l);
        if (strcmp(t->text, "pedal") == 0)
            return stmt_pedal(s, l);
        if (strcmp(t->text, "b") == 0)
            return stmt_b(s, l);
        if (strcmp(t->text, "f") == 0)
            return stmt_f(s, l);
        if (strcmp(t->text, "s") == 0 || strcmp(t->text, "e") == 0) {
            int rc = read_extent(s, l, 1, t->text[0] == 's' ? "the section's length"
                                                            : "the score's length");
            if (rc == 0)
                rc = end_section(s);
            if (t->text[0] == 'e')
                s->ended = 1;
            return rc;
        }
        if (strlen(t->text) == 1 && strchr("amnqrvxy", t->text[0]))
            return kt_fail_tok(lx, t, "the Csound statement '%s' is not supported by Kettle "
                                      "(i, t, s, b, f, e and pedal are)", t->text);
    }
    if (t->kind == KT_TOK_SYMBOL && (t->text[0] == '{' || t->text[0] == '}'))
        return kt_fail_tok(lx, t, "score loops '{ }' are not supported; use a macro");
    return kt_fail_tok(lx, t, "unknown score statement '%s' (i, t, s, b, f, e or pedal)", t->text);
}

int kt_sco_parse(kt_performance *perf, int source, size_t begin, size_t end, kt_score_error *err)
{
    sco_state *s = calloc(1, sizeof *s);
    kt_line *l = malloc(sizeof *l);
    if (!s || !l) {
        free(s);
        free(l);
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_ENOMEM, "out of memory");
    }
    s->last_start_beats = -1;
    s->min_end_loc = (kt_score_loc){-1, 0, 0};
    int rc = kt_lexer_open(&s->lx, perf, source, begin, end, err);
    while (rc == 0 && !s->ended) {
        int got = kt_lexer_next(&s->lx, l);
        if (got < 0)
            rc = got;
        else if (got == 0)
            break;
        else
            rc = sco_line(s, l);
    }
    if (rc == 0 && !s->ended)
        rc = end_section(s);
    if (rc == 0) {
        if (perf->strike_count > 1)
            qsort(perf->strikes, (size_t)perf->strike_count, sizeof *perf->strikes, cmp_strike);
        if (perf->pedal_count > 1)
            qsort(perf->pedals, (size_t)perf->pedal_count, sizeof *perf->pedals, cmp_pedal);
        rc = check_pedal_overlap(perf, err);
    }
    kt_lexer_close(&s->lx);
    free(s->notes);
    free(s->pedals);
    free(l);
    free(s);
    return rc;
}
