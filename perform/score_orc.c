/* score_orc.c - the orchestra: header assignments (sr, room, walls, air),
 * microphones, sound sources, and `instr ... endin` blocks that each define
 * one persistent drum.  docs/score-language.md documents every statement. */
#include "score_internal.h"
#include "kt_physics.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A drum being defined: what was given, and where, until `endin`. */
typedef struct orc_drum {
    kt_score_drum d;
    int have_size, have_pos, have_tuning, have_depth;
    int have_thickness, have_density, have_surface_density;
    double density_kg_per_m3;
    double tuning_hz;
    kt_score_loc tuning_loc;
} orc_drum;

typedef struct orc_state {
    kt_lexer lx;
    kt_line *line;
    orc_drum drum;
    int in_instr;
    int have_room;
    int have_ksmps;
    double kr_hz;                  /* kr =, resolved to ksmps = sr / kr at the end */
    kt_score_loc kr_loc;
    char massign[17][KT_SCORE_NAME_MAX];   /* MIDI channel (0: any) -> drum, resolved at the end */
    kt_score_loc massign_loc[17];
    char dir[KT_SCORE_PATH_MAX];   /* folder of the orchestra, for sound files */
} orc_state;

static int is_word(const kt_token *t, const char *w) { return kt_tok_is(t, KT_TOK_WORD, w); }

static int read_on_off(kt_lexer *lx, const kt_line *l, int *i, const char *what, int *v)
{
    if (*i >= l->count)
        return kt_fail_eol(lx, l, "missing %s (on or off)", what);
    const kt_token *t = &l->tok[*i];
    if (is_word(t, "on") || (t->kind == KT_TOK_NUMBER && t->value == 1 && !t->unit[0]))
        *v = 1;
    else if (is_word(t, "off") || (t->kind == KT_TOK_NUMBER && t->value == 0 && !t->unit[0]))
        *v = 0;
    else
        return kt_fail_tok(lx, t, "%s must be on or off, got '%s'", what, t->text);
    (*i)++;
    return KT_OK;
}

/* scheme = standard | iwb | fcc | compact R | box q | leggy M (docs/room.md;
 * the names live in room_scheme.c). */
static int read_scheme(kt_lexer *lx, const kt_line *l, int *i, kt_room_params *r)
{
    if (*i >= l->count)
        return kt_fail_eol(lx, l, "missing air scheme (standard, iwb, fcc, compact R, box q, "
                                  "leggy M)");
    const kt_token *t = &l->tok[*i];
    (*i)++;
    kt_error e;
    kt_error_clear(&e);
    int kind = kt_room_scheme_reach_kind(t->text), reach = 0;
    if (kind < 0 || t->kind != KT_TOK_WORD)
        return kt_fail_tok(lx, t, "unknown air scheme '%s' (standard, iwb, fcc, compact R, "
                           "box q, leggy M)", t->text);
    if (kind == 1) {
        double x;
        int at = *i, rc = kt_read_plain(lx, l, i, "the stencil's reach", &x);
        if (rc < 0)
            return rc;
        if (x != floor(x) || x < 1 || x > 64)
            return kt_fail_tok(lx, &l->tok[at], "the stencil's reach must be a whole "
                               "number 1..64, got %s", l->tok[at].text);
        reach = (int)x;
    }
    if (kt_room_scheme_set(r, t->text, reach, &e) < 0)
        return kt_fail_tok(lx, t, "%s", e.message);
    return KT_OK;
}

static int read_int(kt_lexer *lx, const kt_line *l, int *i, const char *what, int lo, int *v)
{
    double x;
    int at = *i, rc = kt_read_plain(lx, l, i, what, &x);
    if (rc < 0)
        return rc;
    if (x != floor(x) || x < lo || x > 1e9)
        return kt_fail_tok(lx, &l->tok[at], "%s must be a whole number >= %d, got %s", what, lo,
                           l->tok[at].text);
    *v = (int)x;
    return KT_OK;
}

static int read_positive(kt_lexer *lx, const kt_line *l, int *i, const char *what, double *v,
                         int (*reader)(kt_lexer *, const kt_line *, int *, const char *, double *))
{
    int at = *i, rc = reader(lx, l, i, what, v);
    if (rc < 0)
        return rc;
    if (!(*v > 0))
        return kt_fail_tok(lx, &l->tok[at], "%s must be positive, got %s", what,
                           l->tok[at].text);
    return KT_OK;
}

static int read_name(kt_lexer *lx, const kt_line *l, int *i, const char *what, char *name)
{
    if (*i >= l->count)
        return kt_fail_eol(lx, l, "missing %s", what);
    const kt_token *t = &l->tok[*i];
    if (t->kind != KT_TOK_WORD && t->kind != KT_TOK_STRING)
        return kt_fail_tok(lx, t, "expected %s, got '%s'", what, t->text);
    if (strlen(t->text) >= KT_SCORE_NAME_MAX - 2 || !t->text[0])
        return kt_fail_tok(lx, t, "%s must be 1 to %d characters long", what,
                           KT_SCORE_NAME_MAX - 3);
    snprintf(name, KT_SCORE_NAME_MAX, "%.*s", KT_SCORE_NAME_MAX - 1, t->text);
    (*i)++;
    return KT_OK;
}

/* A surface's admittance after `beta` (0..0.5) or `absorption` (0..1, at
 * normal incidence: the pressure reflection R = sqrt(1 - a) = (1 - 2b)/(1 + 2b)),
 * whose word is `key`; the number at l->tok[*i]. */
static int read_surface(kt_lexer *lx, const kt_line *l, int *i, const kt_token *key,
                        double *beta)
{
    int at = *i, rc;
    double v;
    if (is_word(key, "beta")) {
        rc = kt_read_plain(lx, l, i, "the wall admittance beta", &v);
        if (rc == 0 && !(v >= 0 && v <= 0.5))
            return kt_fail_tok(lx, &l->tok[at],
                               "beta must lie in 0..0.5 (0 rigid, 0.5 anechoic), got %s",
                               l->tok[at].text);
        *beta = v;
        return rc;
    }
    rc = kt_read_plain(lx, l, i, "the wall absorption coefficient", &v);
    if (rc == 0 && !(v >= 0 && v <= 1))
        return kt_fail_tok(lx, &l->tok[at], "absorption must lie in 0..1, got %s",
                           l->tok[at].text);
    double R = sqrt(1 - v);
    *beta = (1 - R) / (2 * (1 + R));
    return rc;
}

/* ---- header assignments ---- */

static int room_from_mesh(orc_state *s, const kt_line *l, int *i);

static int header_assign(orc_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    kt_performance *perf = lx->perf;
    kt_room_params *r = &perf->room;
    const kt_token *key = &l->tok[0];
    int i = 2, rc = KT_OK;
    if (is_word(key, "sr")) {
        if (i < l->count && l->tok[i].kind == KT_TOK_NUMBER && strcmp(l->tok[i].unit, "Hz") == 0)
            ((kt_line *)l)->tok[i].unit[0] = '\0';
        rc = read_positive(lx, l, &i, "the sample rate sr", &r->sample_rate_hz, kt_read_plain);
        perf->sr_loc = kt_tok_loc(lx, key);
    } else if (is_word(key, "ksmps")) {
        rc = read_int(lx, l, &i, "ksmps", 1, &perf->ksmps);
        s->have_ksmps = 1;
    } else if (is_word(key, "kr")) {
        rc = read_positive(lx, l, &i, "the control rate kr", &s->kr_hz, kt_read_plain);
        s->kr_loc = kt_tok_loc(lx, key);
    } else if (key->kind == KT_TOK_NUMBER) {   /* 0dbfs: the pressure at full scale */
        rc = read_positive(lx, l, &i, "0dbfs (the pressure in pascals written as full scale)",
                           &perf->full_scale_Pa, kt_read_plain);
    } else if (is_word(key, "A4")) {
        if (perf->pitch_named)
            return kt_fail_tok(lx, key, "A4 must come before the first pitch name it tunes");
        int at = i;
        rc = read_positive(lx, l, &i, "A4 (the reference pitch in Hz)", &perf->a4_hz,
                           kt_read_plain);
        if (rc == 0 && !(perf->a4_hz >= 380 && perf->a4_hz <= 500))
            return kt_fail_tok(lx, &l->tok[at], "A4 = %s Hz is no concert pitch (380..500 Hz)",
                               l->tok[at].text);
    } else if (is_word(key, "nchnls_i")) {
        int n = 0, at = i;
        rc = read_int(lx, l, &i, "nchnls_i", 0, &n);
        if (rc == 0 && n != 0)
            return kt_fail_tok(lx, &l->tok[at], "Kettle takes no live audio input (nchnls_i = 0); "
                               "play a recording into the room with `soundfile`");
    } else if (is_word(key, "out_sr")) {
        if (i < l->count && l->tok[i].kind == KT_TOK_NUMBER && strcmp(l->tok[i].unit, "Hz") == 0)
            ((kt_line *)l)->tok[i].unit[0] = '\0';
        int at = i;
        rc = read_positive(lx, l, &i, "the output sample rate out_sr", &perf->out_sample_rate_hz,
                           kt_read_plain);
        if (rc == 0 && (perf->out_sample_rate_hz != floor(perf->out_sample_rate_hz) ||
                        perf->out_sample_rate_hz < 1000 || perf->out_sample_rate_hz > 768000))
            return kt_fail_tok(lx, &l->tok[at], "out_sr must be a whole number of Hz in "
                               "1000..768000, got %s", l->tok[at].text);
    } else if (is_word(key, "midipedal")) {
        if (i < l->count && l->tok[i].kind == KT_TOK_WORD) {
            int on;
            rc = read_on_off(lx, l, &i, "midipedal", &on);
            perf->midi_pedal_s = on ? KT_MIDI_DEFAULT_GLIDE_S : 0;
        } else {
            int at = i;
            rc = kt_read_seconds(lx, l, &i, "the MIDI pedal glide time", &perf->midi_pedal_s);
            if (rc == 0 && !(perf->midi_pedal_s >= 0 && perf->midi_pedal_s <= 10))
                return kt_fail_tok(lx, &l->tok[at], "midipedal takes on, off or a glide time of "
                                   "0..10 s, got %s", l->tok[at].text);
        }
    } else if (is_word(key, "nchnls")) {
        rc = read_int(lx, l, &i, "nchnls", 1, &perf->channels_declared);
        perf->channels_loc = kt_tok_loc(lx, key);
    } else if (is_word(key, "precision")) {
        if (i < l->count && is_word(&l->tok[i], "single"))
            r->precision = KT_SINGLE;
        else if (i < l->count && is_word(&l->tok[i], "double"))
            r->precision = KT_DOUBLE;
        else if (i < l->count)
            return kt_fail_tok(lx, &l->tok[i], "precision must be single or double, got '%s'",
                               l->tok[i].text);
        else
            return kt_fail_eol(lx, l, "missing precision (single or double)");
        i++;
    } else if (is_word(key, "room")) {
        static const char *what[3] = {"the room's length (x)", "the room's width (y)",
                                      "the room's height (z)"};
        if (i < l->count && l->tok[i].kind == KT_TOK_STRING)
            rc = room_from_mesh(s, l, &i);   /* room = "hall.obj" [scale S] [at X Y Z] */
        else
            for (int a = 0; a < 3 && rc == 0; a++) {
                rc = read_positive(lx, l, &i, what[a], &r->size_m[a], kt_read_length);
                if (a < 2)
                    kt_skip_comma(l, &i);
            }
        perf->room_loc = kt_tok_loc(lx, key);
        s->have_room = 1;
    } else if (is_word(key, "walls")) {
        /* walls = lossy (the beta wall) | absorbing (Engquist-Majda, docs/room.md) */
        const kt_token *t = i < l->count ? &l->tok[i] : NULL;
        if (!t)
            return kt_fail_eol(lx, l, "missing wall model (lossy or absorbing)");
        if (is_word(t, "lossy"))
            r->wall_model = KT_WALL_LOSSY;
        else if (is_word(t, "absorbing"))
            r->wall_model = KT_WALL_ENGQUIST_MAJDA;
        else
            return kt_fail_tok(lx, t, "unknown wall model '%s' (lossy or absorbing)", t->text);
        i++;
    } else if (is_word(key, "beta") || is_word(key, "absorption")) {
        rc = read_surface(lx, l, &i, key, &r->wall_beta);
    } else if (is_word(key, "viscosity")) {
        if (i < l->count && l->tok[i].kind == KT_TOK_WORD) {
            int on;
            rc = read_on_off(lx, l, &i, "viscosity", &on);
            r->viscosity_m = on ? KT_AIR_VISCOSITY_LENGTH_M : 0;
        } else {
            int at = i;
            rc = kt_read_length(lx, l, &i, "the viscous length", &r->viscosity_m);
            if (rc == 0 && r->viscosity_m < 0)
                return kt_fail_tok(lx, &l->tok[at], "the viscous length cannot be negative");
        }
    } else if (is_word(key, "scheme")) {
        perf->scheme_loc = kt_tok_loc(lx, key);
        rc = read_scheme(lx, l, &i, r);
    } else if (is_word(key, "temperature")) {
        int at = i;
        if (i < l->count && strcmp(l->tok[i].unit, "C") == 0)
            ((kt_line *)l)->tok[i].unit[0] = '\0';
        double T;
        rc = kt_read_plain(lx, l, &i, "the temperature in degrees Celsius", &T);
        if (rc == 0 && !(T > -60 && T < 60))
            return kt_fail_tok(lx, &l->tok[at], "temperature %s C is outside -60..60 C",
                               l->tok[at].text);
        r->sound_speed_m_per_s = KT_SOUND_SPEED_AT_0C_M_PER_S * sqrt(1 + T / KT_ZERO_CELSIUS_K);
    } else if (is_word(key, "c") || is_word(key, "soundspeed")) {
        rc = read_positive(lx, l, &i, "the speed of sound", &r->sound_speed_m_per_s,
                           kt_read_plain);
    } else if (is_word(key, "airdensity")) {
        rc = read_positive(lx, l, &i, "the air density", &r->air_density_kg_per_m3,
                           kt_read_plain);
    } else {
        return kt_fail_tok(lx, key,
                           "unknown orchestra setting '%s' (sr, ksmps, kr, nchnls, nchnls_i, "
                           "0dbfs, A4, out_sr, midipedal, precision, room, walls, beta, "
                           "absorption, viscosity, scheme, temperature, c, airdensity)",
                           key->text);
    }
    return rc < 0 ? rc : kt_expect_end(lx, l, i);
}

/* massign CHANNEL, DRUM (Csound's): notes of a MIDI file on that channel
 * (1..16; 0 every channel) play that drum; the drum may be defined later. */
static int stmt_massign(orc_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    int ch = 0, i = 1, rc = read_int(lx, l, &i, "the MIDI channel (1..16, 0 for all)", 0, &ch);
    if (rc == 0 && ch > 16)
        return kt_fail_tok(lx, &l->tok[1], "a MIDI channel is 1..16 (0 for all), got %d", ch);
    kt_skip_comma(l, &i);
    if (rc == 0 && i >= l->count)
        return kt_fail_eol(lx, l, "missing the drum (massign CHANNEL, DRUM)");
    const kt_token *t = rc == 0 ? &l->tok[i] : NULL;
    if (t && t->kind == KT_TOK_NUMBER && !t->unit[0] && t->value == floor(t->value) &&
        t->value >= 1 && t->value <= 1e6)
        snprintf(s->massign[ch], KT_SCORE_NAME_MAX, "%d", (int)t->value);
    else if (t && (t->kind == KT_TOK_WORD || t->kind == KT_TOK_STRING))
        snprintf(s->massign[ch], KT_SCORE_NAME_MAX, "%.*s", KT_SCORE_NAME_MAX - 1, t->text);
    else if (t)
        return kt_fail_tok(lx, t, "expected a drum (instr number or name), got '%s'", t->text);
    if (rc == 0)
        rc = kt_expect_end(lx, l, i + 1);
    if (rc == 0)
        s->massign_loc[ch] = kt_tok_loc(lx, t);
    return rc;
}

/* The file named in quotes at l->tok[at] (`what` for messages: "sound
 * file"), relative to the orchestra's folder, into out; it must be a
 * regular file (opened without blocking: a FIFO would hold open() until
 * someone writes to it). */
static int read_file_name(orc_state *s, const kt_line *l, int at, const char *what, char *out,
                          size_t size)
{
    if (at >= l->count || l->tok[at].kind != KT_TOK_STRING)
        return at >= l->count ? kt_fail_eol(&s->lx, l, "missing the %s's path (in quotes)", what)
                              : kt_fail_tok(&s->lx, &l->tok[at],
                                            "expected the %s's path in quotes, got '%s'", what,
                                            l->tok[at].text);
    const char *path = l->tok[at].text;
    size_t dl = path[0] == '/' ? 0 : strlen(s->dir);
    if (dl + strlen(path) + 2 > size)
        return kt_fail_tok(&s->lx, &l->tok[at], "the %s's path is too long", what);
    snprintf(out, size, "%.*s%s%s", (int)dl, s->dir, dl ? "/" : "", path);
    struct stat st;
    int fd = open(out, O_RDONLY | O_NONBLOCK);
    int regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (fd >= 0)
        close(fd);
    if (!regular)
        return kt_fail_tok(&s->lx, &l->tok[at], fd < 0 ? "cannot read %s %s"
                                                       : "%s %s is not a regular file (a FIFO, "
                                                         "device or folder)", what, out);
    return KT_OK;
}

/* mesh "FILE" [scale S] [at X Y Z]: the file's triangles, scaled and moved. */
static int read_mesh(orc_state *s, const kt_line *l, int *i, kt_room_solid *so)
{
    char path[KT_SCORE_PATH_MAX];
    int at = *i, rc = read_file_name(s, l, at, "mesh file", path, sizeof path);
    double scale = 1, shift[3] = {0, 0, 0};
    (*i)++;
    if (rc == 0 && *i < l->count && is_word(&l->tok[*i], "scale")) {
        (*i)++;
        rc = read_positive(&s->lx, l, i, "the mesh's scale", &scale, kt_read_plain);
    }
    if (rc == 0 && *i < l->count && is_word(&l->tok[*i], "at")) {
        (*i)++;
        rc = kt_read_position(&s->lx, l, i, "the mesh's origin", shift);
    }
    if (rc < 0)
        return rc;
    kt_error e;
    kt_error_clear(&e);
    double *xyz = NULL;
    if (kt_mesh_load(path, scale, shift, &xyz, &so->mesh_triangles, &e) < 0)
        return kt_fail_tok(&s->lx, &l->tok[at], "%s", e.message);
    so->kind = KT_SOLID_MESH;
    so->mesh_xyz = xyz;
    return KT_OK;
}

/* ---- the room's shape ---- */

/* room = "FILE" [scale S] [at X Y Z]: the air is the inside of a closed
 * mesh.  The room is the box from the origin to the model's far corner,
 * filled by a solid of the walls' beta, the model carved out of it. */
static int room_from_mesh(orc_state *s, const kt_line *l, int *i)
{
    kt_lexer *lx = &s->lx;
    kt_performance *perf = lx->perf;
    const kt_token *file = &l->tok[*i];
    if (perf->solid_count > 0)
        return kt_fail_tok(lx, &l->tok[0], "room = \"FILE\" must come before the solids (it "
                                           "fills the room and carves the model out of it)");
    kt_room_solid hall, fill;
    memset(&hall, 0, sizeof hall);
    memset(&fill, 0, sizeof fill);
    int rc = read_mesh(s, l, i, &hall);
    if (rc < 0)
        return rc;
    double lo[3] = {INFINITY, INFINITY, INFINITY};
    for (int v = 0; v < 3 * hall.mesh_triangles; v++)
        for (int d = 0; d < 3; d++) {
            lo[d] = fmin(lo[d], hall.mesh_xyz[3 * v + d]);
            fill.hi_m[d] = fmax(fill.hi_m[d], hall.mesh_xyz[3 * v + d]);
        }
    for (int d = 0; d < 3 && rc == 0; d++)
        if (lo[d] < 0 || !(fill.hi_m[d] > 0))
            rc = kt_fail_tok(lx, file, "the model %s %g m along %c: the room runs from 0 (move "
                             "it with at X Y Z)", lo[d] < 0 ? "reaches to" : "ends at",
                             lo[d] < 0 ? lo[d] : fill.hi_m[d], "xyz"[d]);
    if (rc < 0) {
        free((double *)hall.mesh_xyz);
        return rc;
    }
    memcpy(perf->room.size_m, fill.hi_m, sizeof perf->room.size_m);
    fill.kind = KT_SOLID_BOX;
    fill.beta = hall.beta = -1;
    hall.hole = 1;
    snprintf(fill.name, sizeof fill.name, "the space outside the model");
    snprintf(hall.name, sizeof hall.name, "the model");
    const kt_room_solid both[2] = {fill, hall};
    for (int k = 0; k < 2; k++) {
        kt_score_solid *p = kt_push((void **)&perf->solids, &perf->solid_count, sizeof *p);
        if (!p) {
            free((double *)hall.mesh_xyz);
            return kt_fail_tok(lx, file, "out of memory");
        }
        p->loc = kt_tok_loc(lx, file);
        p->solid = both[k];
    }
    return KT_OK;
}

/* solid [NAME] box X0 Y0 Z0 X1 Y1 Z1 [beta B | absorption A]
 * solid [NAME] cylinder X Y Z0 Z1 R [beta B | absorption A]
 * solid [NAME] mesh "FILE" [scale S] [at X Y Z] [beta B | absorption A]
 * hole [NAME] box ... | hole [NAME] cylinder ...: air carved out of the solids before it. */
static int stmt_solid(orc_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    kt_room_solid so;
    memset(&so, 0, sizeof so);
    so.hole = is_word(&l->tok[0], "hole");
    so.beta = -1;                          /* the walls' beta */
    const char *what = so.hole ? "hole" : "solid";
    int i = 1, rc = KT_OK;
    char name[KT_SCORE_NAME_MAX] = "";
    if (i < l->count && l->tok[i].kind == KT_TOK_WORD && !is_word(&l->tok[i], "box") &&
        !is_word(&l->tok[i], "cylinder") && !is_word(&l->tok[i], "mesh") &&
        (rc = read_name(lx, l, &i, "a name", name)) < 0)
        return rc;
    if (i >= l->count)
        return kt_fail_eol(lx, l, "missing the %s's shape (box, cylinder or mesh)", what);
    const kt_token *kind = &l->tok[i++];
    if (is_word(kind, "box")) {
        double a[3], b[3];
        rc = kt_read_position(lx, l, &i, "the box's first corner", a);
        kt_skip_comma(l, &i);
        if (rc == 0)
            rc = kt_read_position(lx, l, &i, "the box's opposite corner", b);
        for (int d = 0; d < 3 && rc == 0; d++) {
            if (a[d] == b[d])
                return kt_fail_tok(lx, kind, "the box is flat along %c (both corners at %g m)",
                                   "xyz"[d], a[d]);
            so.lo_m[d] = fmin(a[d], b[d]);
            so.hi_m[d] = fmax(a[d], b[d]);
        }
    } else if (is_word(kind, "cylinder")) {
        static const char *part[5] = {"the cylinder's axis x", "the cylinder's axis y",
                                      "the cylinder's bottom z", "the cylinder's top z",
                                      "the cylinder's radius"};
        double v[5];
        for (int k = 0; k < 5 && rc == 0; k++) {
            int at = i;
            rc = kt_read_length(lx, l, &i, part[k], &v[k]);
            if (rc == 0 && k == 4 && !(v[4] > 0))
                return kt_fail_tok(lx, &l->tok[at], "the cylinder's radius must be positive");
            if (rc == 0 && k == 3 && !(v[3] > v[2]))
                return kt_fail_tok(lx, &l->tok[at], "the cylinder's top (%g m) must be above "
                                   "its bottom (%g m)", v[3], v[2]);
            kt_skip_comma(l, &i);
        }
        so.kind = KT_SOLID_CYLINDER;
        so.centre_m[0] = v[0], so.centre_m[1] = v[1];
        so.lo_m[2] = v[2], so.hi_m[2] = v[3], so.radius_m = v[4];
    } else if (is_word(kind, "mesh")) {
        rc = read_mesh(s, l, &i, &so);
    } else
        return kt_fail_tok(lx, kind, "unknown %s shape '%s'%s%s%s (box, cylinder or mesh)", what,
                           kind->text, name[0] ? " after the name '" : "", name,
                           name[0] ? "'" : "");
    kt_skip_comma(l, &i);
    if (rc == 0 && i < l->count && (is_word(&l->tok[i], "beta") ||
                                    is_word(&l->tok[i], "absorption"))) {
        const kt_token *key = &l->tok[i++];
        rc = so.hole ? kt_fail_tok(lx, key, "a hole has no surface of its own: the solids it "
                                            "cuts give theirs")
                     : read_surface(lx, l, &i, key, &so.beta);
    }
    if (rc == 0)
        rc = kt_expect_end(lx, l, i);
    kt_score_solid *d = rc < 0 ? NULL
                               : kt_push((void **)&lx->perf->solids, &lx->perf->solid_count,
                                         sizeof *d);
    if (!d) {
        free((double *)so.mesh_xyz);
        return rc < 0 ? rc : kt_fail_tok(lx, &l->tok[0], "out of memory");
    }
    d->loc = kt_tok_loc(lx, &l->tok[0]);
    if (name[0])
        snprintf(so.name, sizeof so.name, "%s '%.*s'", what, (int)sizeof so.name - 12, name);
    else
        snprintf(so.name, sizeof so.name, "the %s of line %d", what, d->loc.line);
    d->solid = so;
    return KT_OK;
}

/* ---- microphones and sources ---- */

static kt_score_mic *find_mic(kt_performance *perf, const char *name)
{
    for (int i = 0; i < perf->mic_count; i++)
        if (strcmp(perf->mics[i].name, name) == 0)
            return &perf->mics[i];
    return NULL;
}

static int add_mic(kt_lexer *lx, const kt_token *at, const char *name, const double pos[3])
{
    kt_performance *perf = lx->perf;
    kt_score_mic *old = find_mic(perf, name);
    if (old)
        return kt_fail_tok(lx, at, "microphone %s is already defined (line %d)", name,
                           old->loc.line);
    kt_score_mic *m = kt_push((void **)&perf->mics, &perf->mic_count, sizeof *m);
    if (!m)
        return kt_fail_tok(lx, at, "out of memory");
    m->loc = kt_tok_loc(lx, at);
    snprintf(m->name, sizeof m->name, "%s", name);
    memcpy(m->pos_m, pos, sizeof m->pos_m);
    return KT_OK;
}

static int stmt_mic(orc_state *s, const kt_line *l)
{
    char name[KT_SCORE_NAME_MAX];
    double pos[3];
    int i = 1, rc = read_name(&s->lx, l, &i, "a microphone name", name);
    if (rc == 0)
        rc = kt_read_position(&s->lx, l, &i, "the microphone", pos);
    if (rc == 0)
        rc = kt_expect_end(&s->lx, l, i);
    return rc < 0 ? rc : add_mic(&s->lx, &l->tok[1], name, pos);
}

/* pair NAME x y z spacing [azimuth]: NAME_L and NAME_R, spacing apart along
 * the direction azimuth degrees from +x (0: left at -x, right at +x). */
static int stmt_pair(orc_state *s, const kt_line *l)
{
    char name[KT_SCORE_NAME_MAX], side[KT_SCORE_NAME_MAX + 2];
    double pos[3], spacing, az_deg = 0;
    int i = 1, rc = read_name(&s->lx, l, &i, "a name for the pair", name);
    if (rc == 0)
        rc = kt_read_position(&s->lx, l, &i, "the pair's centre", pos);
    kt_skip_comma(l, &i);
    if (rc == 0)
        rc = read_positive(&s->lx, l, &i, "the pair's spacing", &spacing, kt_read_length);
    kt_skip_comma(l, &i);
    if (rc == 0 && i < l->count)
        rc = kt_read_plain(&s->lx, l, &i, "the pair's azimuth in degrees", &az_deg);
    if (rc == 0)
        rc = kt_expect_end(&s->lx, l, i);
    if (rc < 0)
        return rc;
    double dx = 0.5 * spacing * cos(az_deg * KT_PI / 180), dy = 0.5 * spacing * sin(az_deg * KT_PI / 180);
    double left[3] = {pos[0] - dx, pos[1] - dy, pos[2]}, right[3] = {pos[0] + dx, pos[1] + dy, pos[2]};
    snprintf(side, sizeof side, "%s_L", name);
    rc = add_mic(&s->lx, &l->tok[1], side, left);
    snprintf(side, sizeof side, "%s_R", name);
    return rc < 0 ? rc : add_mic(&s->lx, &l->tok[1], side, right);
}

/* move NAME TIME x y z: a waypoint of a moving microphone. */
static int stmt_move(orc_state *s, const kt_line *l)
{
    char name[KT_SCORE_NAME_MAX];
    kt_score_waypoint w;
    int i = 1, rc = read_name(&s->lx, l, &i, "a microphone name", name);
    if (rc < 0)
        return rc;
    kt_score_mic *m = find_mic(s->lx.perf, name);
    if (!m)
        return kt_fail_tok(&s->lx, &l->tok[1], "no microphone called %s (define it with mic)",
                           name);
    int at = i;
    kt_skip_comma(l, &i);
    rc = kt_read_seconds(&s->lx, l, &i, "the waypoint's time", &w.time_s);
    if (rc == 0 && w.time_s < 0)
        return kt_fail_tok(&s->lx, &l->tok[at], "a waypoint's time cannot be negative");
    if (rc == 0 && m->waypoint_count > 0 && w.time_s <= m->waypoints[m->waypoint_count - 1].time_s)
        return kt_fail_tok(&s->lx, &l->tok[at],
                           "waypoints must come in increasing time: %g s is not after %g s",
                           w.time_s, m->waypoints[m->waypoint_count - 1].time_s);
    kt_skip_comma(l, &i);
    if (rc == 0)
        rc = kt_read_position(&s->lx, l, &i, "the waypoint", w.pos_m);
    if (rc == 0)
        rc = kt_expect_end(&s->lx, l, i);
    if (rc < 0)
        return rc;
    w.loc = kt_tok_loc(&s->lx, &l->tok[0]);
    kt_score_waypoint *nw = kt_push((void **)&m->waypoints, &m->waypoint_count, sizeof *nw);
    if (!nw)
        return kt_fail_tok(&s->lx, &l->tok[0], "out of memory");
    *nw = w;
    return KT_OK;
}

static int read_start(kt_lexer *lx, const kt_line *l, int *i, double *start)
{
    int at = *i, rc = kt_read_seconds(lx, l, i, "the start time", start);
    if (rc == 0 && *start < 0)
        return kt_fail_tok(lx, &l->tok[at], "the start time cannot be negative, got %s",
                           l->tok[at].text);
    return rc;
}

/* End of a source statement at token i: nothing may follow; then store it. */
static int push_source(orc_state *s, const kt_line *l, int i, kt_score_source *src)
{
    int rc = kt_expect_end(&s->lx, l, i);
    if (rc < 0)
        return rc;
    src->loc = kt_tok_loc(&s->lx, &l->tok[0]);
    kt_score_source *d = kt_push((void **)&s->lx.perf->sources, &s->lx.perf->source_count, sizeof *d);
    if (!d)
        return kt_fail_tok(&s->lx, &l->tok[0], "out of memory");
    *d = *src;
    return KT_OK;
}

/* impulse x y z [start [duration [amplitude]]] */
static int stmt_impulse(orc_state *s, const kt_line *l)
{
    kt_score_source src = {0};
    src.kind = KT_SOURCE_IMPULSE;
    src.amplitude = 1.0;
    int i = 1, rc = kt_read_position(&s->lx, l, &i, "the impulse", src.pos_m);
    kt_skip_comma(l, &i);
    if (rc == 0 && i < l->count)
        rc = read_start(&s->lx, l, &i, &src.start_s);
    kt_skip_comma(l, &i);
    if (rc == 0 && i < l->count) {
        int at = i;
        rc = kt_read_seconds(&s->lx, l, &i, "the pulse duration", &src.duration_s);
        if (rc == 0 && src.duration_s < 0)
            return kt_fail_tok(&s->lx, &l->tok[at], "the pulse duration cannot be negative");
    }
    kt_skip_comma(l, &i);
    if (rc == 0 && i < l->count)
        rc = read_positive(&s->lx, l, &i, "the pulse amplitude", &src.amplitude, kt_read_plain);
    return rc < 0 ? rc : push_source(s, l, i, &src);
}

/* soundfile "path" x y z [start [gain]] */
static int stmt_soundfile(orc_state *s, const kt_line *l)
{
    kt_score_source src = {0};
    src.kind = KT_SOURCE_FILE;
    src.gain = 1.0;
    int i = 2, rc = read_file_name(s, l, 1, "sound file", src.path, sizeof src.path);
    if (rc < 0)
        return rc;
    rc = kt_read_position(&s->lx, l, &i, "the sound source", src.pos_m);
    kt_skip_comma(l, &i);
    if (rc == 0 && i < l->count)
        rc = read_start(&s->lx, l, &i, &src.start_s);
    kt_skip_comma(l, &i);
    if (rc == 0 && i < l->count)
        rc = read_positive(&s->lx, l, &i, "the gain", &src.gain, kt_read_plain);
    return rc < 0 ? rc : push_source(s, l, i, &src);
}

/* ---- drums ---- */

static int instr_begin(orc_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    if (l->count < 2)
        return kt_fail_eol(lx, l, "missing the instrument's number or name after instr");
    const kt_token *t = &l->tok[1];
    orc_drum *o = &s->drum;
    memset(o, 0, sizeof *o);
    if (t->kind == KT_TOK_NUMBER) {
        if (t->unit[0] || t->value != floor(t->value) || t->value < 1 || t->value > 1e6)
            return kt_fail_tok(lx, t, "an instrument number must be a whole number >= 1, got %s%s",
                               t->text, t->unit);
        o->d.number = (int)t->value;
        snprintf(o->d.name, sizeof o->d.name, "%d", o->d.number);
    } else if (t->kind == KT_TOK_WORD) {
        o->d.number = -1;
        if (strlen(t->text) >= sizeof o->d.name)
            return kt_fail_tok(lx, t, "instrument name too long");
        snprintf(o->d.name, sizeof o->d.name, "%.*s", (int)sizeof o->d.name - 1, t->text);
    } else {
        return kt_fail_tok(lx, t, "expected the instrument's number or name, got '%s'", t->text);
    }
    int old = kt_perf_find_drum(lx->perf, o->d.name);
    if (old >= 0)
        return kt_fail_tok(lx, t, "instr %s is already defined (line %d)", o->d.name,
                           lx->perf->drums[old].loc.line);
    int rc = kt_expect_end(lx, l, 2);
    if (rc < 0)
        return rc;
    o->d.loc = kt_tok_loc(lx, &l->tok[0]);
    /* -1: not given, keep the size's default. */
    o->d.params.nonlinear = o->d.params.coupled = o->d.params.membrane_intervals = -1;
    o->d.params.solver = (kt_timpani_solver)-1;
    o->d.params.loss_s = o->d.params.poisson_ratio = -1;
    s->in_instr = 1;
    return KT_OK;
}

/* size = 29 | 29in | 0.74m | 74cm : bare numbers are inches. */
static int read_size(kt_lexer *lx, const kt_line *l, int *i, double *diameter_m)
{
    if (*i < l->count && l->tok[*i].kind == KT_TOK_NUMBER && !l->tok[*i].unit[0])
        strcpy(((kt_line *)l)->tok[*i].unit, "in");
    return read_positive(lx, l, i, "the drum's size (diameter)", diameter_m, kt_read_length);
}

static int instr_setting(orc_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    orc_drum *o = &s->drum;
    kt_timpani_params *p = &o->d.params;
    const kt_token *key = &l->tok[0];
    if (key->kind != KT_TOK_WORD)
        return kt_fail_tok(lx, key, "expected a drum setting (size, pitch, pos, ...), got '%s'",
                           key->text);
    if (l->count < 2 || !kt_tok_is_symbol(&l->tok[1], '='))
        return l->count < 2 ? kt_fail_eol(lx, l, "expected '=' after %s", key->text)
                            : kt_fail_tok(lx, &l->tok[1], "expected '=' after %s, got '%s'",
                                          key->text, l->tok[1].text);
    int i = 2, rc = KT_OK, at = 2;
    if (is_word(key, "size")) {
        rc = read_size(lx, l, &i, &p->diameter_m);
        o->have_size = 1;
    } else if (is_word(key, "pitch") || is_word(key, "tension")) {
        if (o->have_tuning)
            return kt_fail_tok(lx, key, "the drum's tuning is already set (line %d)",
                               o->tuning_loc.line);
        rc = kt_read_tuning(lx, l, &i, is_word(key, "tension"), &p->tension_N_per_m,
                            &o->tuning_hz, o->d.pitch_name, sizeof o->d.pitch_name);
        o->tuning_loc = kt_tok_loc(lx, &l->tok[at < l->count ? at : 0]);
        o->have_tuning = 1;
    } else if (is_word(key, "pos") || is_word(key, "position")) {
        rc = kt_read_position(lx, l, &i, "the drum (centre of its head)", p->rim_centre_m);
        o->have_pos = 1;
    } else if (is_word(key, "depth")) {
        rc = read_positive(lx, l, &i, "the bowl depth", &p->bowl_depth_m, kt_read_length);
        o->have_depth = 1;
    } else if (is_word(key, "head")) {
        if (i < l->count && !is_word(&l->tok[i], "mylar"))
            return kt_fail_tok(lx, &l->tok[i],
                               "unknown head material '%s' (Kettle knows mylar; set thickness, "
                               "density, youngs and poisson for another)", l->tok[i].text);
        if (i >= l->count)
            return kt_fail_eol(lx, l, "missing the head material (mylar)");
        i++;
        o->have_thickness = o->have_density = o->have_surface_density = 0;
        p->thickness_m = KT_MYLAR_THICKNESS_M;
        p->youngs_modulus_Pa = KT_MYLAR_YOUNGS_MODULUS_PA;
        p->poisson_ratio = KT_MYLAR_POISSON_RATIO;
    } else if (is_word(key, "thickness")) {
        rc = read_positive(lx, l, &i, "the head thickness", &p->thickness_m, kt_read_length);
        o->have_thickness = 1;
    } else if (is_word(key, "density")) {
        rc = read_positive(lx, l, &i, "the head density (kg/m^3)", &o->density_kg_per_m3,
                           kt_read_plain);
        o->have_density = 1;
    } else if (is_word(key, "surface_density")) {
        rc = read_positive(lx, l, &i, "the head's surface density (kg/m^2)",
                           &p->surface_density_kg_per_m2, kt_read_plain);
        o->have_surface_density = 1;
    } else if (is_word(key, "youngs")) {
        if (i < l->count && strcmp(l->tok[i].unit, "GPa") == 0) {
            ((kt_line *)l)->tok[i].unit[0] = '\0';
            ((kt_line *)l)->tok[i].value *= 1e9;
        }
        rc = read_positive(lx, l, &i, "Young's modulus (Pa)", &p->youngs_modulus_Pa, kt_read_plain);
    } else if (is_word(key, "poisson")) {
        rc = kt_read_plain(lx, l, &i, "Poisson's ratio", &p->poisson_ratio);
        if (rc == 0 && !(p->poisson_ratio >= 0 && p->poisson_ratio < 0.5))
            return kt_fail_tok(lx, &l->tok[at], "Poisson's ratio must lie in 0..0.5, got %s",
                               l->tok[at].text);
    } else if (is_word(key, "loss")) {
        rc = kt_read_seconds(lx, l, &i, "the membrane loss alpha", &p->loss_s);
        if (rc == 0 && p->loss_s < 0)
            return kt_fail_tok(lx, &l->tok[at], "the membrane loss cannot be negative");
    } else if (is_word(key, "nonlinear")) {
        rc = read_on_off(lx, l, &i, "nonlinear", &p->nonlinear);
    } else if (is_word(key, "coupled")) {
        rc = read_on_off(lx, l, &i, "coupled", &p->coupled);
    } else if (is_word(key, "intervals")) {
        rc = read_int(lx, l, &i, "the membrane grid's intervals", 16, &p->membrane_intervals);
    } else if (is_word(key, "solver")) {
        static const char *names[] = {"jacobi", "reduced", "direct"};
        int k = 0;
        while (k < 3 && !(i < l->count && is_word(&l->tok[i], names[k])))
            k++;
        if (k == 3)
            return i < l->count ? kt_fail_tok(lx, &l->tok[i],
                                              "solver must be jacobi, reduced or direct, got '%s'",
                                              l->tok[i].text)
                                : kt_fail_eol(lx, l, "missing the solver (jacobi, reduced, direct)");
        p->solver = (kt_timpani_solver)k;
        i++;
    } else if (is_word(key, "iterations")) {
        rc = read_int(lx, l, &i, "the solver iterations", 1, &p->solver_iterations);
    } else if (is_word(key, "tolerance")) {
        rc = kt_read_plain(lx, l, &i, "the solver tolerance", &p->solver_tolerance);
        if (rc == 0 && p->solver_tolerance < 0)
            return kt_fail_tok(lx, &l->tok[at], "the solver tolerance cannot be negative");
    } else {
        return kt_fail_tok(lx, key,
                           "unknown drum setting '%s' (size, pitch, tension, pos, depth, head, "
                           "thickness, density, surface_density, youngs, poisson, loss, "
                           "nonlinear, coupled, intervals, solver, iterations, tolerance)",
                           key->text);
    }
    return rc < 0 ? rc : kt_expect_end(lx, l, i);
}

/* Standard concert sizes come with the timpani's own bowl depth; any other
 * size takes the reference bowl scaled with the radius. */
static int drum_defaults(kt_timpani_params *base, double diameter_m, kt_error *e)
{
    static const int standard[4] = {23, 26, 29, 32};
    double inches = diameter_m / KT_METRES_PER_INCH;
    for (int k = 0; k < 4; k++)
        if (fabs(inches - standard[k]) < 0.05)
            return kt_timpani_params_standard(base, standard[k], e);
    int rc = kt_timpani_params_standard(base, 29, e);
    if (rc < 0)
        return rc;
    base->bowl_depth_m *= (diameter_m / 2) / (base->diameter_m / 2);
    base->diameter_m = diameter_m;
    return KT_OK;
}

static int instr_end(orc_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    orc_drum *o = &s->drum;
    kt_performance *perf = lx->perf;
    int rc = kt_expect_end(lx, l, 1);
    if (rc < 0)
        return rc;
    const char *missing = !o->have_size ? "size (e.g. size = 29)"
                        : !o->have_pos  ? "position (e.g. pos = 1.0 1.0 0.9)"
                        : !o->have_tuning ? "tuning (e.g. pitch = G2 or tension = 2200)" : NULL;
    if (missing)
        return kt_score_fail_at(perf, o->d.loc, lx->err, KT_EINVAL,
                                "instr %s does not say its %s", o->d.name, missing);
    /* Start from the size's defaults, then lay the settings given over them. */
    kt_timpani_params given = o->d.params, p;
    kt_error e;
    kt_error_clear(&e);
    if (drum_defaults(&p, given.diameter_m, &e) < 0)
        return kt_score_fail_at(perf, o->d.loc, lx->err, KT_EINVAL, "instr %s: %s", o->d.name,
                                e.message);
    snprintf(p.name, sizeof p.name, "%s", o->d.name);
    memcpy(p.rim_centre_m, given.rim_centre_m, sizeof p.rim_centre_m);
    if (o->have_depth)
        p.bowl_depth_m = given.bowl_depth_m;
    if (given.thickness_m > 0)
        p.thickness_m = given.thickness_m;
    if (given.youngs_modulus_Pa > 0)
        p.youngs_modulus_Pa = given.youngs_modulus_Pa;
    if (given.poisson_ratio >= 0)
        p.poisson_ratio = given.poisson_ratio;
    double mylar_density = KT_MYLAR_SURFACE_DENSITY_KG_PER_M2 / KT_MYLAR_THICKNESS_M;
    if (o->have_surface_density)
        p.surface_density_kg_per_m2 = given.surface_density_kg_per_m2;
    else if (o->have_density || o->have_thickness)
        p.surface_density_kg_per_m2 =
            (o->have_density ? o->density_kg_per_m3 : mylar_density) * p.thickness_m;
    if (given.loss_s >= 0)
        p.loss_s = given.loss_s;
    if (given.nonlinear >= 0)
        p.nonlinear = given.nonlinear;
    if (given.coupled >= 0)
        p.coupled = given.coupled;
    if (given.membrane_intervals >= 0)
        p.membrane_intervals = given.membrane_intervals;
    if ((int)given.solver >= 0)
        p.solver = given.solver;
    if (given.solver_iterations > 0)
        p.solver_iterations = given.solver_iterations;
    if (given.solver_tolerance > 0)
        p.solver_tolerance = given.solver_tolerance;
    p.tension_N_per_m = given.tension_N_per_m;
    rc = kt_tuning_resolve(perf, o->tuning_loc, &p, o->d.name, o->tuning_hz, &p.tension_N_per_m,
                           lx->err);
    if (rc < 0)
        return rc;
    o->d.params = p;
    o->d.solver_given = (int)given.solver >= 0;
    o->d.pitch_hz = o->tuning_hz;
    kt_score_drum *d = kt_push((void **)&perf->drums, &perf->drum_count, sizeof *d);
    if (!d)
        return kt_fail_tok(lx, &l->tok[0], "out of memory");
    *d = o->d;
    s->in_instr = 0;
    return KT_OK;
}

/* ---- the orchestra ---- */

static int orc_line(orc_state *s, const kt_line *l)
{
    kt_lexer *lx = &s->lx;
    const kt_token *t = &l->tok[0];
    if (s->in_instr) {
        if (is_word(t, "endin"))
            return instr_end(s, l);
        if (is_word(t, "instr"))
            return kt_fail_tok(lx, t, "instr inside instr %s (missing endin?)", s->drum.d.name);
        return instr_setting(s, l);
    }
    if (is_word(t, "instr"))
        return instr_begin(s, l);
    if (is_word(t, "endin"))
        return kt_fail_tok(lx, t, "endin without instr");
    if (is_word(t, "mic"))
        return stmt_mic(s, l);
    if (is_word(t, "pair"))
        return stmt_pair(s, l);
    if (is_word(t, "move"))
        return stmt_move(s, l);
    if (is_word(t, "impulse"))
        return stmt_impulse(s, l);
    if (is_word(t, "soundfile"))
        return stmt_soundfile(s, l);
    if (is_word(t, "massign"))
        return stmt_massign(s, l);
    if (is_word(t, "solid") || is_word(t, "hole"))
        return stmt_solid(s, l);
    int zero_dbfs = t->kind == KT_TOK_NUMBER && t->value == 0 && !strcmp(t->unit, "dbfs");
    if ((t->kind == KT_TOK_WORD || zero_dbfs) && l->count >= 2 && kt_tok_is_symbol(&l->tok[1], '='))
        return header_assign(s, l);
    if (t->kind == KT_TOK_WORD && l->count == 1)
        return kt_fail_eol(lx, l, "expected '=' after %s", t->text);
    return kt_fail_tok(lx, t,
                       "unknown orchestra statement '%s%s' (expected a setting such as sr = "
                       "44100, instr, mic, pair, move, impulse, soundfile, massign, solid or "
                       "hole)", t->text, t->kind == KT_TOK_NUMBER ? t->unit : "");
}

static int orc_finish(orc_state *s)
{
    kt_performance *perf = s->lx.perf;
    kt_score_loc first = {s->lx.source, 1, 1};
    if (s->in_instr)
        return kt_score_fail_at(perf, s->drum.d.loc, s->lx.err, KT_EINVAL,
                                "instr %s has no endin", s->drum.d.name);
    if (!s->have_room)
        return kt_score_fail_at(perf, first, s->lx.err, KT_EINVAL,
                                "the orchestra does not say how big the room is "
                                "(add e.g. room = 3 2.5 2)");
    if (perf->mic_count == 0)
        return kt_score_fail_at(perf, perf->room_loc, s->lx.err, KT_EINVAL,
                                "the orchestra has no microphone (add e.g. mic main 1.5 1.2 1.6)");
    if (s->kr_hz > 0) {
        double k = perf->room.sample_rate_hz / s->kr_hz;
        if (fabs(k - round(k)) > 1e-9 * k || k < 1)
            return kt_score_fail_at(perf, s->kr_loc, s->lx.err, KT_EINVAL,
                                    "sr / kr = %g / %g is not a whole number of samples",
                                    perf->room.sample_rate_hz, s->kr_hz);
        if (s->have_ksmps && perf->ksmps != (int)round(k))
            return kt_score_fail_at(perf, s->kr_loc, s->lx.err, KT_EINVAL,
                                    "kr = %g gives ksmps = %g, but ksmps = %d", s->kr_hz, k,
                                    perf->ksmps);
        perf->ksmps = (int)round(k);
    }
    for (int ch = 0; ch < 17; ch++) {
        if (!s->massign[ch][0])
            continue;
        perf->midi_drum[ch] = kt_perf_find_drum(perf, s->massign[ch]);
        if (perf->midi_drum[ch] < 0)
            return kt_score_fail_at(perf, s->massign_loc[ch], s->lx.err, KT_EINVAL,
                                    "massign: the orchestra has no instr %s", s->massign[ch]);
    }
    if (perf->channels_declared && perf->channels_declared != perf->mic_count)
        return kt_score_fail_at(perf, perf->channels_loc, s->lx.err, KT_EINVAL,
                                "nchnls = %d but the orchestra defines %d microphone%s",
                                perf->channels_declared, perf->mic_count,
                                perf->mic_count == 1 ? "" : "s");
    return KT_OK;
}

int kt_orc_parse(kt_performance *perf, int source, size_t begin, size_t end, kt_score_error *err)
{
    orc_state *s = calloc(1, sizeof *s);
    kt_line *l = malloc(sizeof *l);
    if (!s || !l) {
        free(s);
        free(l);
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_ENOMEM, "out of memory");
    }
    const char *name = perf->texts[source].name, *slash = strrchr(name, '/');
    if (slash)
        snprintf(s->dir, sizeof s->dir, "%.*s", (int)(slash - name), name);
    int rc = kt_lexer_open(&s->lx, perf, source, begin, end, err);
    while (rc == 0) {
        int got = kt_lexer_next(&s->lx, l);
        if (got <= 0) {
            rc = got < 0 ? got : orc_finish(s);
            break;
        }
        rc = orc_line(s, l);
    }
    kt_lexer_close(&s->lx);
    free(l);
    free(s);
    return rc;
}
