/* score_midi.c - a Standard MIDI File as the score.  libsmf reads the file
 * and its tempo map; every note-on becomes an `i` statement of a score text
 * (times in seconds, one beat a second), which the ordinary score parser
 * then reads, so a MIDI file means exactly what its converted score means,
 * errors point at a line that names the MIDI event, and a checkpoint keeps
 * the converted text like any score.
 *
 * Mapping (docs/score-language.md, "MIDI files"): a note plays the drum that
 * `massign` gives its channel, else the drum tuned nearest the note; its
 * velocity sets the force (through the dynamic marks' forces); with
 * `midipedal`, a note whose pitch is not its drum's glides the drum's pedal
 * to it, ending as the note is struck. */
#include "score_internal.h"
#include "kt_physics.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <smf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const kt_score_loc nowhere = {-1, 0, 0};

/* Larger than any MIDI file a composer writes (and than libsmf's int sizes). */
#define MIDI_MAX_BYTES ((size_t)1 << 28)

/* libsmf reports problems through GLib's log, in its own domain; while it
 * reads, they are collected here instead of printed. */
#define SMF_LOG_DOMAIN "libsmf"
typedef struct midi_log {
    char first[256];
    int problems;
} midi_log;

static void collect_log(const gchar *domain, GLogLevelFlags level, const gchar *message,
                        gpointer user)
{
    (void)domain;
    midi_log *log = user;
    /* Chunks other than MTrk are allowed by the SMF standard, to be skipped. */
    if (!(level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)) ||
        strstr(message, "ignoring this chunk"))
        return;
    if (log->problems++ == 0)
        snprintf(log->first, sizeof log->first, "%s", message);
}

/* libsmf 1.3 stops the program (an assert in parse_next_event) on a track
 * that ends without its End of Track event, as a cut file does; so the
 * chunk and event structure is walked first, to refuse such a file with a
 * message.  Big-endian fields and variable-length numbers (VLQ) as in the
 * SMF 1.0 specification. */
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int vlq(const unsigned char *d, size_t len, size_t *pos, uint32_t *v)
{
    *v = 0;
    for (int k = 0; k < 4 && *pos < len; k++) {
        unsigned char b = d[(*pos)++];
        *v = *v << 7 | (b & 0x7F);
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

/* One MTrk body: events up to End of Track; "" or why not. */
static const char *track_problem(const unsigned char *d, size_t len)
{
    size_t pos = 0;
    unsigned running = 0;
    uint32_t delta, n;
    while (pos < len) {
        if (vlq(d, len, &pos, &delta) < 0 || pos >= len)
            return "a track is cut inside an event";
        unsigned status = d[pos] & 0x80 ? d[pos++] : running;
        if (status == 0xFF || status == 0xF0 || status == 0xF7) {
            unsigned type = status == 0xFF && pos < len ? d[pos++] : 0;
            /* libsmf reads a meta event's length as one byte, not a VLQ */
            if (status == 0xFF && pos < len && d[pos] & 0x80)
                return "a meta event of 128 bytes or more (libsmf reads only shorter ones)";
            if (vlq(d, len, &pos, &n) < 0 || n > len - pos)
                return "a meta or system-exclusive event runs past its track";
            pos += n;
            running = 0;
            if (status == 0xFF && type == 0x2F)
                return "";
        } else if (status >= 0x80 && status < 0xF0) {
            size_t bytes = (status & 0xE0) == 0xC0 ? 1 : 2;   /* program, pressure: 1 */
            for (size_t k = 0; k < bytes; k++)
                if (pos >= len || d[pos++] & 0x80)
                    return "a channel message is cut or malformed";
            running = status;
        } else {
            return status ? "a track holds a real-time or system-common message"
                          : "running status without an earlier status byte";
        }
    }
    return "a track ends without its End of Track event (is the file cut?)";
}

static const char *structure_problem(const unsigned char *d, size_t size)
{
    if (size < 14 || memcmp(d, "MThd", 4) || be32(d + 4) != 6)
        return "it does not start with a MThd header";
    unsigned tracks = (unsigned)d[10] << 8 | d[11], found = 0;
    if (tracks == 0 || d[8] != 0 || d[9] > 2)
        return "the MThd header declares no track or an unknown format";
    /* what libsmf cannot read (it would refuse them, and lose memory doing so) */
    if (d[9] == 2)
        return "format 2 (independent sequences) is not supported: export format 0 or 1";
    if (d[12] & 0x80)
        return "SMPTE time division is not supported: export with ticks per quarter note";
    if (d[12] == 0 && d[13] == 0)
        return "the MThd header gives 0 ticks per quarter note";
    for (size_t pos = 14; found < tracks;) {
        if (size - pos < 8)
            return "the file ends before all the tracks its header declares";
        uint32_t len = be32(d + pos + 4);
        for (int k = 0; k < 4; k++)
            if (!isalnum(d[pos + k]))
                return "a chunk's name is not four letters or digits (is the file damaged?)";
        if (len > size - pos - 8)
            return "a chunk runs past the end of the file (is the file cut?)";
        if (!memcmp(d + pos, "MTrk", 4)) {
            const char *why = track_problem(d + pos + 8, len);
            if (why[0])
                return why;
            found++;
        }
        pos += 8 + (size_t)len;
    }
    return "";
}

/* libsmf 1.3 also asserts on some event encodings the walk above accepts
 * (an F7 escape, for one), and an assert ends the program; where it refuses
 * a file it loses the memory it took.  So libsmf reads the file once in a
 * child process first, which sends back libsmf's complaint, if any: only a
 * file it reads cleanly is read here.  Returns 1 when it did (or when no
 * child could be made), 0 with why filled when not. */
static int survives_libsmf(const void *bytes, size_t size, char *why, size_t why_size)
{
    int fd[2];
    if (pipe(fd) < 0)
        return 1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 1;
    }
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);   /* no crash reports of a sanitizer or fuzzer here */
        signal(SIGSEGV, SIG_DFL);
        dup2(fd[1], 2);             /* an assert's message goes to the parent */
        midi_log log = {{0}, 0};
        g_log_set_handler(SMF_LOG_DOMAIN, G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL |
                          G_LOG_FLAG_RECURSION, collect_log, &log);
        smf_t *smf = smf_load_from_memory(bytes, (int)size);
        while (smf && !log.problems && smf_get_next_event(smf))
            ;
        int ok = smf && !log.problems;
        if (!ok && write(fd[1], log.first, strlen(log.first)) < 0)
            _exit(2);
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    char said[256];
    ssize_t got = read(fd[0], said, sizeof said - 1);
    said[got > 0 ? got : 0] = '\0';
    said[strcspn(said, "\n")] = '\0';
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    const char *colon = strstr(said, ": ");   /* "program: file:line: function: ..." */
    const char *text = colon ? colon + 2 : said;
    if (WIFEXITED(status))
        snprintf(why, why_size, "%.200s", text[0] ? text : "libsmf refuses it");
    else
        snprintf(why, why_size, "libsmf stops on one of its events (%.200s)", text);
    return 0;
}

/* One note of the file. */
typedef struct midi_note {
    double on_s, off_s;
    int channel, key, velocity, track;
} midi_note;

typedef struct note_list {
    midi_note *notes;
    int count;
} note_list;

/* Velocity -> peak force: log-linear between the dynamic marks' forces
 * placed at the velocities notation programs give them (ppp 16 ... fff 127). */
static double velocity_force(int velocity)
{
    static const char *const marks[8] = {"ppp", "pp", "p", "mp", "mf", "f", "ff", "fff"};
    static const int vel[8] = {16, 33, 49, 64, 80, 96, 112, 127};
    double f[8];
    for (int k = 0; k < 8; k++)
        kt_dynamic_force(marks[k], &f[k]);
    int k = 0;
    while (k < 6 && velocity > vel[k + 1])
        k++;
    double u = (double)(velocity - vel[k]) / (vel[k + 1] - vel[k]);
    return exp(log(f[k]) + u * (log(f[k + 1]) - log(f[k])));
}

/* Pair note-ons with their note-offs (first on, first off per channel and key). */
static int collect_notes(smf_t *smf, note_list *list)
{
    int cap = 0;
    double end_s = smf_get_length_seconds(smf);
    smf_rewind(smf);
    for (smf_event_t *e; (e = smf_get_next_event(smf)) != NULL;) {
        if (smf_event_is_metadata(e) || e->midi_buffer_length < 3)
            continue;
        int status = e->midi_buffer[0] & 0xF0, ch = e->midi_buffer[0] & 0x0F;
        int key = e->midi_buffer[1], vel = e->midi_buffer[2];
        if (status == 0x90 && vel > 0) {
            if (list->count == cap) {
                cap = cap ? 2 * cap : 256;
                midi_note *n = realloc(list->notes, (size_t)cap * sizeof *n);
                if (!n)
                    return KT_ENOMEM;
                list->notes = n;
            }
            list->notes[list->count++] =
                (midi_note){e->time_seconds, -1, ch + 1, key, vel, e->track_number};
        } else if (status == 0x80 || status == 0x90) {
            for (int i = 0; i < list->count; i++) {
                midi_note *n = &list->notes[i];
                if (n->off_s < 0 && n->channel == ch + 1 && n->key == key) {
                    n->off_s = e->time_seconds;
                    break;
                }
            }
        }
    }
    for (int i = 0; i < list->count; i++)
        if (list->notes[i].off_s < 0)
            list->notes[i].off_s = fmax(end_s, list->notes[i].on_s);
    return KT_OK;
}

static double drum_pitch_hz(const kt_score_drum *d)
{
    if (d->pitch_hz > 0)
        return d->pitch_hz;
    return kt_timpani_pitch_hz(d->params.diameter_m / 2, d->params.surface_density_kg_per_m2,
                               d->params.tension_N_per_m);
}

/* The drum for a note: its channel's massign, every channel's, or the drum
 * whose current pitch is nearest (in cents; the first defined on a tie). */
static int pick_drum(const kt_performance *perf, const double *pitch_hz, int channel, double hz)
{
    if (perf->midi_drum[channel] >= 0)
        return perf->midi_drum[channel];
    if (perf->midi_drum[0] >= 0)
        return perf->midi_drum[0];
    int best = 0;
    for (int d = 1; d < perf->drum_count; d++)
        if (fabs(log2(hz / pitch_hz[d])) < fabs(log2(hz / pitch_hz[best])))
            best = d;
    return best;
}

/* "G2" for key 43; keys below C0 (no drum's) as their frequency. */
static const char *key_name(int key, double hz, char *buf, size_t size)
{
    static const char *const names[12] = {"C", "C#", "D", "Eb", "E", "F",
                                          "F#", "G", "G#", "A", "Bb", "B"};
    if (key < 12)
        snprintf(buf, size, "%.6gHz", hz);
    else
        snprintf(buf, size, "%s%d", names[key % 12], key / 12 - 1);
    return buf;
}

/* A growing text. */
typedef struct text_buf {
    char *s;
    size_t len, cap;
    int failed;
} text_buf;

static void put(text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (int pass = 0; pass < 2 && !b->failed; pass++) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
        } else if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        } else {
            size_t cap = 2 * (b->cap + (size_t)n) + 4096;
            char *s = realloc(b->s, cap);
            b->failed = !s;
            b->s = s ? s : b->s;
            b->cap = s ? cap : b->cap;
        }
    }
}

/* The drum's name as p1: a number bare, a name in quotes. */
static void put_drum(text_buf *b, const kt_score_drum *d)
{
    put(b, d->number > 0 ? "%s" : "\"%s\"", d->name);
}

static void write_score(const kt_performance *perf, const char *name, const note_list *list,
                        double length_s, text_buf *b)
{
    int nd = perf->drum_count;
    double *pitch = malloc(sizeof *pitch * (size_t)nd), *last_on = malloc(sizeof *pitch * (size_t)nd);
    if (!pitch || !last_on) {
        b->failed = 1;
        free(pitch);
        free(last_on);
        return;
    }
    for (int d = 0; d < nd; d++) {
        pitch[d] = drum_pitch_hz(&perf->drums[d]);
        last_on[d] = 0;
    }
    put(b, "; %s as a score: times in seconds (one beat a second), %d notes\n", name,
        list->count);
    for (int i = 0; i < list->count; i++) {
        const midi_note *n = &list->notes[i];
        double hz = perf->a4_hz * pow(2.0, (n->key - 69) / 12.0);
        int d = pick_drum(perf, pitch, n->channel, hz);
        char note[16], tuned[16];
        key_name(n->key, hz, note, sizeof note);
        if (perf->midi_pedal_s > 0 && fabs(1200 * log2(hz / pitch[d])) > 1) {
            double start = fmax(last_on[d], n->on_s - perf->midi_pedal_s);
            put(b, "pedal ");
            put_drum(b, &perf->drums[d]);
            put(b, " %.9g %.9g %s  ; for track %d, channel %d, key %d\n", start,
                n->on_s - start, note, n->track, n->channel, n->key);
            pitch[d] = hz;
        }
        double cents = 1200 * log2(hz / pitch[d]);
        kt_pitch_name(pitch[d] * 440.0 / perf->a4_hz, tuned, sizeof tuned);
        put(b, "i ");
        put_drum(b, &perf->drums[d]);
        put(b, " %.9g %.9g %.6g  ; track %d, channel %d, %s (key %d) velocity %d", n->on_s,
            n->off_s - n->on_s, velocity_force(n->velocity), n->track, n->channel, note, n->key,
            n->velocity);
        if (fabs(cents) > 1)
            put(b, " on a drum tuned %s (%+.0f cents)", tuned, cents);
        put(b, "\n");
        last_on[d] = n->on_s;
    }
    put(b, "f 0 %.9g\n", length_s);
    free(pitch);
    free(last_on);
}

static int cmp_note(const void *a, const void *b)
{
    const midi_note *x = a, *y = b;
    if (x->on_s != y->on_s)
        return x->on_s < y->on_s ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* The score text of a MIDI file for the orchestra already in perf. */
static int midi_to_score(kt_performance *perf, const char *name, const void *bytes, size_t size,
                         text_buf *out, kt_score_error *err)
{
    if (perf->drum_count == 0)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                                "%s: the orchestra has no drum to play the MIDI notes", name);
    if (size > MIDI_MAX_BYTES)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL, "%s: too large for a MIDI file "
                                "(%zu bytes)", name, size);
    const char *why = structure_problem(bytes, size);
    char smf_why[300];
    if (!why[0] && !survives_libsmf(bytes, size, smf_why, sizeof smf_why))
        why = smf_why;
    midi_log log = {{0}, 0};
    guint handler = g_log_set_handler(SMF_LOG_DOMAIN, G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL |
                                      G_LOG_FLAG_RECURSION, collect_log, &log);
    smf_t *smf = why[0] ? NULL : smf_load_from_memory(bytes, (int)size);
    note_list list = {NULL, 0};
    int rc = smf && !log.problems ? collect_notes(smf, &list) : KT_OK;
    g_log_remove_handler(SMF_LOG_DOMAIN, handler);
    if (!smf || log.problems)
        rc = kt_score_fail_at(perf, nowhere, err, KT_EINVAL, "%s is not a valid MIDI file: %s",
                              name, why[0] ? why : log.problems ? log.first : "libsmf refused it");
    else if (rc == KT_OK && list.count == 0)
        rc = kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                              "%s: no notes (no note-on events in any of its %d tracks)", name,
                              smf->number_of_tracks);
    if (rc == KT_OK) {
        qsort(list.notes, (size_t)list.count, sizeof *list.notes, cmp_note);
        write_score(perf, name, &list, smf_get_length_seconds(smf), out);
        if (out->failed)
            rc = kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    } else if (rc == KT_ENOMEM) {
        rc = kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory reading %s", name);
    }
    if (smf)
        smf_delete(smf);
    free(list.notes);
    return rc;
}

/* The orchestra (text orc of perf) with a MIDI file as its score. */
static int parse_with_midi(kt_performance *perf, int orc, const char *mid_name,
                           const void *mid_bytes, size_t mid_size, kt_score_error *err)
{
    int rc = kt_orc_parse(perf, orc, 0, perf->texts[orc].length, err);
    text_buf score = {NULL, 0, 0, 0};
    if (rc == 0)
        rc = midi_to_score(perf, mid_name, mid_bytes, mid_size, &score, err);
    int sco = rc == 0 ? kt_perf_add_text(perf, mid_name, score.s, score.len) : rc;
    free(score.s);
    if (rc == 0 && sco < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    return rc == 0 ? kt_sco_parse(perf, sco, 0, perf->texts[sco].length, err) : rc;
}

int kt_score_parse_midi(kt_performance *perf, const char *orc_name, const char *orc_text,
                        const char *mid_name, const void *mid_bytes, size_t mid_size,
                        kt_score_error *err)
{
    int orc = kt_perf_add_text(perf, orc_name, orc_text, strlen(orc_text));
    if (orc < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    return parse_with_midi(perf, orc, mid_name, mid_bytes, mid_size, err);
}

int kt_score_load_midi(kt_performance *perf, const char *orc_path, const char *mid_path,
                       kt_score_error *err)
{
    int orc = kt_perf_add_file(perf, orc_path, nowhere, err);
    if (orc < 0)
        return orc;
    FILE *f = fopen(mid_path, "rb");
    if (!f)
        return kt_score_fail_at(perf, nowhere, err, KT_EIO, "cannot read %s: %s", mid_path,
                                strerror(errno));
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap) {
            unsigned char *b = cap < MIDI_MAX_BYTES ? realloc(buf, cap = cap ? 2 * cap : 65536)
                                                    : NULL;
            if (!b) {
                free(buf);
                fclose(f);
                return kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                                        "%s: too large for a MIDI file", mid_path);
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? kt_score_fail_at(perf, nowhere, err, KT_EIO, "cannot read %s: read error",
                                    mid_path)
                 : parse_with_midi(perf, orc, mid_path, buf, n, err);
    free(buf);
    return rc;
}
