/* score_perf.c - the kt_performance record: life cycle, source texts, value
 * readers with units, pitch names and the pitch <-> tension model, dynamic
 * marks, and the checks that need the final room (fit, overlap, grids). */
#include "score_internal.h"
#include "kt_physics.h"
#include "kt_spectrum.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Coarsest membrane grid the timpani accepts (timpani_internal.h agrees). */
#define KT_SCORE_MIN_MEMBRANE_INTERVALS 16
/* Air cells across a drum's head below which the coupling layer is too
 * crude to carry the membrane's modes (a 23-inch drum at 8 kHz). */
#define KT_SCORE_MIN_AIR_CELLS_ACROSS 8

void kt_performance_init(kt_performance *perf)
{
    memset(perf, 0, sizeof *perf);
    kt_room_params_default(&perf->room);
    perf->ksmps = 32;
    perf->a4_hz = 440.0;
    for (int c = 0; c < 17; c++)
        perf->midi_drum[c] = -1;
    perf->scheme_loc.source = -1;
    perf->room_loc.source = perf->sr_loc.source = perf->channels_loc.source = -1;
    perf->options_loc.source = perf->end_loc.source = -1;
}

void kt_performance_free(kt_performance *perf)
{
    for (int i = 0; i < perf->mic_count; i++)
        free(perf->mics[i].waypoints);
    for (int i = 0; i < perf->text_count; i++)
        free(perf->texts[i].text);
    free(perf->drums);
    free(perf->mics);
    free(perf->sources);
    for (int i = 0; i < perf->solid_count; i++)
        free((double *)perf->solids[i].solid.mesh_xyz);
    free(perf->solids);
    free(perf->strikes);
    free(perf->pedals);
    free(perf->history);
    free(perf->texts);
    memset(perf, 0, sizeof *perf);
}

void *kt_push(void **array, int *count, size_t elem)
{
    char *a = realloc(*array, (size_t)(*count + 1) * elem);
    if (!a)
        return NULL;
    *array = a;
    memset(a + (size_t)*count * elem, 0, elem);
    return a + (size_t)(*count)++ * elem;
}

int kt_perf_add_text(kt_performance *perf, const char *name, const char *text, size_t length)
{
    kt_score_text *t = kt_push((void **)&perf->texts, &perf->text_count, sizeof *t);
    if (!t)
        return KT_ENOMEM;
    snprintf(t->name, sizeof t->name, "%s", name);
    t->text = malloc(length + 1);
    if (!t->text) {
        perf->text_count--;
        return KT_ENOMEM;
    }
    memcpy(t->text, text, length);
    t->text[length] = '\0';
    t->length = length;
    return perf->text_count - 1;
}

int kt_perf_add_file(kt_performance *perf, const char *path, kt_score_loc at,
                     kt_score_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kt_score_fail_at(perf, at, err, KT_EIO, "cannot read %s: %s", path,
                                strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return kt_score_fail_at(perf, at, err, KT_ENOMEM, "out of memory reading %s",
                                        path);
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return kt_score_fail_at(perf, at, err, KT_EIO, "cannot read %s: read error", path);
    }
    const char *nul = buf ? memchr(buf, '\0', n) : NULL;
    if (nul) {
        /* point at the first one, with its line shown (NULs as spaces) */
        kt_score_loc loc = {-1, 1, 1};
        for (const char *p = buf; p < nul; p++) {
            loc.col = *p == '\n' ? 1 : loc.col + 1;
            loc.line += *p == '\n';
        }
        for (size_t i = 0; i < n; i++)
            buf[i] = buf[i] ? buf[i] : ' ';
        loc.source = kt_perf_add_text(perf, path, buf, n);
        free(buf);
        return kt_score_fail_at(perf, loc.source >= 0 ? loc : at, err, KT_EINVAL,
                                "a NUL byte: %s is not a text file", path);
    }
    int idx = kt_perf_add_text(perf, path, buf ? buf : "", n);
    free(buf);
    if (idx < 0)
        return kt_score_fail_at(perf, at, err, KT_ENOMEM, "out of memory reading %s", path);
    return idx;
}

int kt_perf_find_drum(const kt_performance *perf, const char *name)
{
    for (int i = 0; i < perf->drum_count; i++)
        if (strcmp(perf->drums[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- values with units ---- */

static int need_number(kt_lexer *lx, const kt_line *l, int i, const char *what)
{
    if (i >= l->count)
        return kt_fail_eol(lx, l, "missing %s", what);
    if (l->tok[i].kind != KT_TOK_NUMBER)
        return kt_fail_tok(lx, &l->tok[i], "expected a number for %s, got '%s'", what,
                           l->tok[i].text);
    return KT_OK;
}

int kt_read_plain(kt_lexer *lx, const kt_line *l, int *i, const char *what, double *v)
{
    int rc = need_number(lx, l, *i, what);
    if (rc < 0)
        return rc;
    const kt_token *t = &l->tok[*i];
    if (t->unit[0])
        return kt_fail_tok(lx, t, "%s takes a plain number, not '%s%s'", what, t->text, t->unit);
    *v = t->value;
    (*i)++;
    return KT_OK;
}

int kt_read_length(kt_lexer *lx, const kt_line *l, int *i, const char *what, double *metres)
{
    int rc = need_number(lx, l, *i, what);
    if (rc < 0)
        return rc;
    const kt_token *t = &l->tok[*i];
    double scale;
    if (!t->unit[0] || strcmp(t->unit, "m") == 0)
        scale = 1.0;
    else if (strcmp(t->unit, "cm") == 0)
        scale = 0.01;
    else if (strcmp(t->unit, "mm") == 0)
        scale = 0.001;
    else if (strcmp(t->unit, "in") == 0)
        scale = KT_METRES_PER_INCH;
    else
        return kt_fail_tok(lx, t, "unknown length unit '%s' for %s (use m, cm, mm or in)",
                           t->unit, what);
    *metres = t->value * scale;
    (*i)++;
    return KT_OK;
}

int kt_read_seconds(kt_lexer *lx, const kt_line *l, int *i, const char *what, double *s)
{
    int rc = need_number(lx, l, *i, what);
    if (rc < 0)
        return rc;
    const kt_token *t = &l->tok[*i];
    double scale;
    if (!t->unit[0] || strcmp(t->unit, "s") == 0)
        scale = 1.0;
    else if (strcmp(t->unit, "ms") == 0)
        scale = 1e-3;
    else
        return kt_fail_tok(lx, t, "unknown time unit '%s' for %s (use s or ms)", t->unit, what);
    *s = t->value * scale;
    (*i)++;
    return KT_OK;
}

int kt_read_position(kt_lexer *lx, const kt_line *l, int *i, const char *what, double pos[3])
{
    static const char *axis[3] = {"x", "y", "z"};
    for (int a = 0; a < 3; a++) {
        char w[96];
        snprintf(w, sizeof w, "the %s coordinate of %s", axis[a], what);
        int rc = kt_read_length(lx, l, i, w, &pos[a]);
        if (rc < 0)
            return rc;
        if (a < 2)
            kt_skip_comma(l, i);
    }
    return KT_OK;
}

int kt_read_tuning(kt_lexer *lx, const kt_line *l, int *i, int tension_only, double *tension,
                   double *hz, char *name, size_t nsize)
{
    if (*i >= l->count)
        return kt_fail_eol(lx, l, tension_only ? "missing the tension (2200 or 2200N/m)"
                                               : "missing tuning (a pitch such as G2, a frequency "
                                                 "such as 98Hz, or a tension such as 2200N/m)");
    const kt_token *t = &l->tok[*i];
    *tension = *hz = 0;
    name[0] = '\0';
    int is_tension = t->kind == KT_TOK_NUMBER &&
                     (!strcmp(t->unit, "N/m") || (tension_only && !t->unit[0]));
    if (tension_only && !is_tension)
        return kt_fail_tok(lx, t, "tension takes a number in N/m (2200 or 2200N/m), got "
                                  "'%s%s'", t->text, t->kind == KT_TOK_NUMBER ? t->unit : "");
    if (t->kind == KT_TOK_WORD) {
        if (kt_pitch_parse(t->text, hz) < 0)
            return kt_fail_tok(lx, t, "'%s' is not a pitch name (write e.g. G2, F#2, Bb2, C3)",
                               t->text);
        *hz *= lx->perf->a4_hz / 440.0;   /* names are tuned to the orchestra's A4 */
        lx->perf->pitch_named = 1;
        snprintf(name, nsize, "%s", t->text);
    } else if (t->kind == KT_TOK_NUMBER && strcmp(t->unit, "Hz") == 0) {
        if (!(t->value > 0))
            return kt_fail_tok(lx, t, "a frequency must be positive, got %g Hz", t->value);
        *hz = t->value;
        snprintf(name, nsize, "%gHz", t->value);
    } else if (is_tension) {
        if (!(t->value > 0))
            return kt_fail_tok(lx, t, "a tension must be positive, got %g N/m", t->value);
        *tension = t->value;
    } else if (t->kind == KT_TOK_NUMBER && !t->unit[0]) {
        /* A bare number could be hertz or newtons per metre; say which. */
        char hz_name[16] = "";
        double near = 440.0 * pow(2.0, round(12 * log2(t->value / 440.0)) / 12);
        if (t->value > 15 && t->value < 5000)
            kt_pitch_name(near, hz_name, sizeof hz_name);
        return kt_fail_tok(lx, t, "a pitch needs a unit or a name: write %gHz%s%s, or set the "
                                  "head's tension with `tension = %g` (N/m)",
                           t->value, hz_name[0] ? " or a note name such as " : "", hz_name,
                           t->value);
    } else {
        return kt_fail_tok(lx, t, "expected a pitch (G2), a frequency (98Hz) or a tension "
                                  "(2200N/m), got '%s%s'",
                           t->text, t->kind == KT_TOK_NUMBER ? t->unit : "");
    }
    (*i)++;
    return KT_OK;
}

int kt_tuning_resolve(const kt_performance *perf, kt_score_loc at, const kt_timpani_params *p,
                      const char *drum, double hz, double *tension, kt_score_error *err)
{
    double R = p->diameter_m / 2, rho = p->surface_density_kg_per_m2;
    double T = hz > 0 ? kt_timpani_tension_for_pitch(R, rho, hz) : *tension;
    /* A real kettledrum spans about a fifth to an octave (a factor of 4 in
     * tension); beyond a factor of 5 either way from the reference tension
     * the head is either slack or near bursting. */
    double ref = KT_REFERENCE_TENSION_N_PER_M;
    if (T > 5 * ref || T < ref / 5)
        return kt_score_fail_at(
            perf, at, err, KT_EINVAL,
            "%s is out of reach for drum %s (%.3g inch): %.0f N/m is outside %.0f..%.0f N/m "
            "(at %.0f N/m it sounds %.1f Hz)",
            hz > 0 ? "this pitch" : "this tension", drum, kt_score_drum_inches(p), T,
            ref / 5, 5 * ref, ref, kt_timpani_pitch_hz(R, rho, ref));
    *tension = T;
    return KT_OK;
}

/* ---- pitch ---- */

int kt_pitch_parse(const char *name, double *hz)
{
    static const int semitone[7] = {9, 11, 0, 2, 4, 5, 7}; /* A B C D E F G from C */
    int c = toupper((unsigned char)name[0]);
    if (c < 'A' || c > 'G')
        return KT_EINVAL;
    int s = semitone[c - 'A'];
    const char *p = name + 1;
    while (*p == '#' || *p == 'b') {
        s += *p == '#' ? 1 : -1;
        p++;
    }
    if (!isdigit((unsigned char)*p))
        return KT_EINVAL;
    char *end;
    long octave = strtol(p, &end, 10);
    if (*end || octave > 9)
        return KT_EINVAL;
    int midi = (int)(octave + 1) * 12 + s; /* C4 = 60, A4 = 69 */
    *hz = 440.0 * pow(2.0, (midi - 69) / 12.0);
    return KT_OK;
}

int kt_pitch_name(double hz, char *name, size_t size)
{
    return hz > 8 && hz < 20000 && kt_note_nearest(hz, name, size, NULL) >= 0 ? KT_OK : KT_EINVAL;
}

/* The (1,1) mode of a membrane of radius R and surface density rho under
 * tension T, in vacuo, is j11/(2 pi R) sqrt(T/rho).  The air loads it with a
 * mass that grows like rho_air * R per unit area (radiation mass of a piston
 * of that radius), so to first order
 *     f = j11/(2 pi R) sqrt(T/rho) / sqrt(1 + m rho_air R / rho),
 * with the one constant m calibrated so that the reference drum lands on the
 * measured 96.56 Hz (design note section 10). */
static double air_loading(double radius_m, double surface_density)
{
    double f_vac_ref = KT_BESSEL_J11 / (2 * KT_PI * KT_REFERENCE_RADIUS_M) *
                       sqrt(KT_REFERENCE_TENSION_N_PER_M / KT_MYLAR_SURFACE_DENSITY_KG_PER_M2);
    double r = f_vac_ref / KT_REFERENCE_FUNDAMENTAL_HZ;
    double m = (r * r - 1) * KT_MYLAR_SURFACE_DENSITY_KG_PER_M2 /
               (KT_AIR_DENSITY_KG_PER_M3 * KT_REFERENCE_RADIUS_M);
    return 1 + m * KT_AIR_DENSITY_KG_PER_M3 * radius_m / surface_density;
}

double kt_timpani_pitch_hz(double radius_m, double surface_density_kg_per_m2,
                           double tension_N_per_m)
{
    double f_vac = KT_BESSEL_J11 / (2 * KT_PI * radius_m) *
                   sqrt(tension_N_per_m / surface_density_kg_per_m2);
    return f_vac / sqrt(air_loading(radius_m, surface_density_kg_per_m2));
}

double kt_timpani_tension_for_pitch(double radius_m, double surface_density_kg_per_m2,
                                    double pitch_hz)
{
    double f_vac = pitch_hz * sqrt(air_loading(radius_m, surface_density_kg_per_m2));
    double c = f_vac * 2 * KT_PI * radius_m / KT_BESSEL_J11;
    return c * c * surface_density_kg_per_m2;
}

int kt_dynamic_force(const char *mark, double *force_N)
{
    /* Peak raised-cosine forces; design note 5.4: 5-20 N soft, 50 N forte,
     * 200 N and above for a strong pitch glide. */
    static const struct { const char *mark; double force_N; } table[] = {
        {"ppp", 2}, {"pp", 5}, {"p", 10}, {"mp", 20}, {"mf", 35}, {"f", 50}, {"ff", 100},
        {"fff", 200},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(mark, table[i].mark) == 0) {
            *force_N = table[i].force_N;
            return KT_OK;
        }
    return KT_EINVAL;
}

/* ---- checks against the final room ---- */

double kt_score_drum_max_tension(const kt_performance *perf, int d)
{
    double T = fmax(perf->drums[d].params.tension_N_per_m, perf->drums[d].tension_max_N_per_m);
    for (int i = 0; i < perf->pedal_count; i++)
        if (perf->pedals[i].drum == d)
            T = fmax(T, perf->pedals[i].target_tension_N_per_m);
    return T;
}

double kt_score_drum_inches(const kt_timpani_params *p)
{
    static const int standard[4] = {23, 26, 29, 32};
    for (int k = 0; k < 4; k++)
        if (fabs(p->diameter_m - 2 * KT_REFERENCE_RADIUS_M * standard[k] / 29.0) < 1e-9)
            return standard[k];
    return p->diameter_m / KT_METRES_PER_INCH;
}

/* The lowest tension drum d takes (an excerpt's kept one included). */
static double drum_min_tension(const kt_performance *perf, int d)
{
    const kt_score_drum *dr = &perf->drums[d];
    double T = dr->params.tension_N_per_m;
    if (dr->tension_min_N_per_m > 0)
        T = fmin(T, dr->tension_min_N_per_m);
    for (int i = 0; i < perf->pedal_count; i++)
        if (perf->pedals[i].drum == d)
            T = fmin(T, perf->pedals[i].target_tension_N_per_m);
    return T;
}

double kt_score_drum_max_force(const kt_performance *perf, int d)
{
    double force = perf->drums[d].stroke_force_max_N;
    for (int i = 0; i < perf->strike_count; i++)
        if (perf->strikes[i].drum == d)
            force = fmax(force, perf->strikes[i].force_N);
    return force;
}

int kt_performance_membrane_intervals(const kt_performance *perf, int d, double k,
                                      double tension_scale)
{
    return kt_timpani_stroke_intervals(&perf->drums[d].params,
                                       kt_score_drum_max_tension(perf, d) * tension_scale,
                                       drum_min_tension(perf, d) * tension_scale,
                                       kt_score_drum_max_force(perf, d), k);
}

static int check_drum_fits(const kt_performance *perf, const kt_score_drum *d,
                           const kt_room_grid *g, kt_score_error *err)
{
    const double *c = d->params.rim_centre_m, R = d->params.diameter_m / 2, Q = g->spacing_m;
    double top[3] = {(g->nx - 1) * Q, (g->ny - 1) * Q, (g->nz - 1) * Q};
    double margin = 2 * Q;
    double lo[3] = {c[0] - R, c[1] - R, c[2] - d->params.bowl_depth_m};
    double hi[3] = {c[0] + R, c[1] + R, c[2] + Q};
    static const char *axis = "xyz";
    for (int a = 0; a < 3; a++) {
        char bowl[64] = "";
        if (a == 2)
            snprintf(bowl, sizeof bowl, "; the bowl reaches %.3f m below the rim",
                     d->params.bowl_depth_m);
        /* enough digits that the two ranges differ where the check does */
        if (lo[a] < margin || hi[a] > top[a] - margin)
            return kt_score_fail_at(
                perf, d->loc, err, KT_EINVAL,
                "drum %s does not fit in the room: it spans %s = %.4f .. %.4f m, but must stay "
                "within %.4f .. %.4f m, two grid cells from the walls (%.2g mm too close%s)",
                d->name, (char[]){axis[a], 0}, lo[a], hi[a], margin, top[a] - margin,
                1e3 * fmax(margin - lo[a], hi[a] - (top[a] - margin)), bowl);
    }
    return KT_OK;
}

static int check_drums_apart(const kt_performance *perf, int j, double Q, kt_score_error *err)
{
    const kt_score_drum *b = &perf->drums[j];
    for (int i = 0; i < j; i++) {
        const kt_score_drum *a = &perf->drums[i];
        /* Each drum touches the node box around its footprint and bowl; boxes
         * of two instruments may not meet (kt_instrument.h).  One cell of
         * slack on each side covers the snapping of the centres. */
        double ra = a->params.diameter_m / 2 + Q, rb = b->params.diameter_m / 2 + Q;
        const double *ca = a->params.rim_centre_m, *cb = b->params.rim_centre_m;
        int apart_x = fabs(ca[0] - cb[0]) > ra + rb;
        int apart_y = fabs(ca[1] - cb[1]) > ra + rb;
        int apart_z = ca[2] + 2 * Q < cb[2] - b->params.bowl_depth_m - Q ||
                      cb[2] + 2 * Q < ca[2] - a->params.bowl_depth_m - Q;
        if (!apart_x && !apart_y && !apart_z)
            return kt_score_fail_at(
                perf, b->loc, err, KT_EINVAL,
                "drum %s overlaps drum %s (defined at line %d): their centres are %.3f m "
                "apart in x and %.3f m in y, but need more than %.3f m in x or in y",
                b->name, a->name, a->loc.line, fabs(ca[0] - cb[0]), fabs(ca[1] - cb[1]),
                ra + rb);
    }
    return KT_OK;
}

static int check_point(const kt_performance *perf, kt_score_loc loc, const char *what,
                       const double p[3], const kt_room_grid *g, kt_score_error *err)
{
    double top[3] = {(g->nx - 1) * g->spacing_m, (g->ny - 1) * g->spacing_m,
                     (g->nz - 1) * g->spacing_m};
    for (int a = 0; a < 3; a++)
        if (!(p[a] >= 0 && p[a] <= top[a]))
            return kt_score_fail_at(perf, loc, err, KT_EINVAL,
                                    "%s at (%g, %g, %g) m is outside the room's grid "
                                    "(0..%.3f, 0..%.3f, 0..%.3f m)",
                                    what, p[0], p[1], p[2], top[0], top[1], top[2]);
    return KT_OK;
}

int kt_performance_check(const kt_performance *perf, const kt_room_params *room,
                         kt_score_error *err)
{
    kt_room_grid g;
    kt_error e;
    kt_error_clear(&e);
    if (kt_room_estimate(room, &g, &e) < 0)
        return kt_score_fail_at(perf, perf->room_loc, err, e.code ? e.code : KT_EINVAL,
                                "impossible room: %s", e.message);
    if (room->scheme != KT_SCHEME_SLF7 && perf->drum_count > 0)
        return kt_score_fail_at(perf, perf->scheme_loc, err, KT_EINVAL,
                                "drums are derived for the standard 7-point air scheme only; "
                                "this orchestra has %d drum%s (first: %s) in a room with "
                                "another scheme: remove `scheme =` (or --scheme) or the drums",
                                perf->drum_count, perf->drum_count > 1 ? "s" : "",
                                perf->drums[0].name);
    double k = 1.0 / room->sample_rate_hz;
    /* Point at the sr line only if the rate in force is the one written there. */
    int sr_written = perf->sr_loc.source >= 0 && room->sample_rate_hz == perf->room.sample_rate_hz;
    for (int d = 0; d < perf->drum_count; d++) {
        const kt_score_drum *dr = &perf->drums[d];
        int N = kt_performance_membrane_intervals(perf, d, k, 1.0);
        if (N < KT_SCORE_MIN_MEMBRANE_INTERVALS) {
            double need = room->sample_rate_hz * KT_SCORE_MIN_MEMBRANE_INTERVALS / (N > 0 ? N : 1);
            kt_score_loc at = sr_written ? perf->sr_loc : dr->loc;
            return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                    "sample rate %g Hz is too low for drum %s: its membrane "
                                    "grid would have %d intervals across, at least %d are "
                                    "needed (about %.0f Hz or more)",
                                    room->sample_rate_hz, dr->name, N,
                                    KT_SCORE_MIN_MEMBRANE_INTERVALS, ceil(need / 1000) * 1000);
        }
        double cells = floor(dr->params.diameter_m / g.spacing_m);
        int across = cells < 1e9 ? (int)cells : 1000000000;
        if (across < KT_SCORE_MIN_AIR_CELLS_ACROSS) {
            kt_score_loc at = sr_written ? perf->sr_loc : dr->loc;
            return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                    "sample rate %g Hz is too low for drum %s: the air grid "
                                    "(%.1f cm) puts only %d cells across its head, at least %d "
                                    "are needed",
                                    room->sample_rate_hz, dr->name, 100 * g.spacing_m, across,
                                    KT_SCORE_MIN_AIR_CELLS_ACROSS);
        }
        int rc = check_drum_fits(perf, dr, &g, err);
        if (rc < 0)
            return rc;
        rc = check_drums_apart(perf, d, g.spacing_m, err);
        if (rc < 0)
            return rc;
    }
    for (int m = 0; m < perf->mic_count; m++) {
        char what[128];
        snprintf(what, sizeof what, "microphone %s", perf->mics[m].name);
        int rc = check_point(perf, perf->mics[m].loc, what, perf->mics[m].pos_m, &g, err);
        for (int w = 0; rc == 0 && w < perf->mics[m].waypoint_count; w++)
            rc = check_point(perf, perf->mics[m].waypoints[w].loc, what,
                             perf->mics[m].waypoints[w].pos_m, &g, err);
        if (rc < 0)
            return rc;
    }
    for (int s = 0; s < perf->source_count; s++) {
        const kt_score_source *src = &perf->sources[s];
        int impulse = src->kind == KT_SOURCE_IMPULSE;
        double peak = fabs(impulse ? src->amplitude : src->gain);
        double pa = room->air_density_kg_per_m3 * peak * room->sample_rate_hz;
        if (!(pa <= KT_SOURCE_MAX_PRESSURE_PA))
            return kt_score_fail_at(perf, src->loc, err, KT_EINVAL,
                                    "this %s (%s %g at %g Hz) would put about %.2g Pa into the "
                                    "air at its node; over %g Pa is no sound but a blast, and "
                                    "the render would only blow up",
                                    impulse ? "impulse" : "sound file",
                                    impulse ? "amplitude" : "gain", peak, room->sample_rate_hz, pa,
                                    KT_SOURCE_MAX_PRESSURE_PA);
        int rc = check_point(perf, src->loc, "the source", src->pos_m, &g, err);
        if (rc < 0)
            return rc;
    }
    return KT_OK;
}
