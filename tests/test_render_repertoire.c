/* test_render_repertoire.c - every shipped piece sets up and plays its first
 * events: for each piece in scores/ (every .csd; every .sco on the folder's
 * first orchestra by name, and the first .sco on each other orchestra: the
 * concert set's pieces in concert.orc, and the passage in hall.orc's shaped
 * hall) a short excerpt (kettle render --from/--until) around each
 * drum's first stroke and around the first pedal renders on the CPU, and the
 * stroke is heard.  In CI this runs under AddressSanitizer and UBSan, which
 * is what found the membrane read past its grid in the concert hall (issue
 * 18): the whole pieces are far too long for a sanitized build. */
#include "kt_render.h"
#include "kt_test.h"

#include <dirent.h>
#include <math.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EVENTS 16
#define LEAD_S 0.004     /* the excerpt starts this long before the event */
#define HEAR_S 0.012     /* and ends this long after it (the close microphones hear it) */

static char scores[1024], scratch[64];

static int load(kt_performance *perf, const char *a, const char *b)
{
    kt_score_error err = {0};
    int rc = kt_test_load_piece(perf, a, b, &err);
    KT_CHECK(rc == 0, "%s %s: %s:%d:%d: %s", a, b ? b : "", err.file, err.line, err.col,
             err.message);
    return rc;
}

static int by_time(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each drum's first stroke and the first pedal, sorted, close ones merged. */
static int event_times(const kt_performance *p, double *t)
{
    int n = 0;
    for (int d = 0; d < p->drum_count && n < MAX_EVENTS - 1; d++)
        for (int i = 0; i < p->strike_count; i++)
            if (p->strikes[i].drum == d) {
                t[n++] = p->strikes[i].start_s;
                break;
            }
    if (p->pedal_count > 0)
        t[n++] = p->pedals[0].start_s;
    qsort(t, (size_t)n, sizeof *t, by_time);
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (kept == 0 || t[i] > t[kept - 1] + HEAR_S)
            t[kept++] = t[i];
    return kept;
}

static double peak_of(const char *path)
{
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    double peak = 0, buf[1024];
    sf_count_t frames = f ? 1024 / info.channels : 0;   /* whole frames only */
    for (sf_count_t got; f && (got = sf_readf_double(f, buf, frames)) > 0;)
        for (sf_count_t i = 0; i < got * info.channels; i++)
            peak = fmax(peak, fabs(buf[i]));
    if (f)
        sf_close(f);
    return peak;
}

/* The excerpt [t - LEAD_S, t + HEAR_S) of the piece. */
static void play_around(const char *a, const char *b, double t, int stroke)
{
    kt_performance p;
    if (load(&p, a, b) != 0) {
        kt_performance_free(&p);
        return;
    }
    double from = fmax(0, t - LEAD_S);
    kt_score_error err = {0};
    int rc = kt_performance_excerpt(&p, from, NULL, &err);
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_CPU;
    o.nthreads = 1;
    /* the formula's tensions: calibrating the hall takes minutes (more under
     * ASan); test_tuning and test_render_excerpt cover the calibrated path */
    o.tuning = 1;
    o.until_s = t + HEAR_S - from;
    o.output.normalize = 0;
    o.output.raw_gain = 1e-3;   /* pascals to full scale, unclipped */
    o.output.sample_format = KT_FLOAT32;
    char out[128];
    snprintf(out, sizeof out, "%s/excerpt.wav", scratch);
    kt_render_result res;
    memset(&res, 0, sizeof res);
    if (rc == 0)
        rc = kt_render(&p, out, &o, &res, &err);
    KT_CHECK(rc == 0, "%s %s at %.3f s: %s:%d:%d: %s", a, b ? b : "", t, err.file, err.line,
             err.col, err.message);
    double peak = rc == 0 ? peak_of(out) : 0;
    printf("%-10s %-12s %7.3f s: %s, %lld steps, peak %.3g Pa\n", a, b ? b : "", t,
           stroke ? "stroke" : "pedal", (long long)res.steps, peak / o.output.raw_gain);
    KT_CHECK(rc != 0 || !stroke || peak > 0, "%s %s: the stroke at %.3f s was not heard", a,
             b ? b : "", t);
    kt_render_result_free(&res);
    kt_performance_free(&p);
    remove(out);
}

static void play_piece(const char *a, const char *b)
{
    kt_performance p;
    if (load(&p, a, b) != 0) {
        kt_performance_free(&p);
        return;
    }
    double t[MAX_EVENTS];
    int n = event_times(&p, t);
    int is_stroke[MAX_EVENTS];
    for (int i = 0; i < n; i++) {
        is_stroke[i] = 0;
        for (int s = 0; s < p.strike_count; s++)
            is_stroke[i] |= fabs(p.strikes[s].start_s - t[i]) <= HEAR_S;
    }
    KT_CHECK(n > 0, "%s %s: no events", a, b ? b : "");
    kt_performance_free(&p);
    for (int i = 0; i < n; i++)
        play_around(a, b, t[i], is_stroke[i]);
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

int main(void)
{
    kt_test_scores_dir(scores, sizeof scores);
    snprintf(scratch, sizeof scratch, "/tmp/kettle_repertoire_XXXXXX");
    if (!mkdtemp(scratch))
        return 1;
    static char orc[8][256], names[64][256];
    int count = 0, orcs = 0;
    DIR *dir = opendir(scores);
    KT_CHECK(dir != NULL, "cannot list %s", scores);
    for (struct dirent *e; dir && (e = readdir(dir)) && count < 64 && orcs < 8;) {
        if (has_suffix(e->d_name, ".orc"))
            snprintf(orc[orcs++], sizeof orc[0], "%s", e->d_name);
        else if (has_suffix(e->d_name, ".csd") || has_suffix(e->d_name, ".sco"))
            snprintf(names[count++], sizeof names[0], "%s", e->d_name);
    }
    if (dir)
        closedir(dir);
    qsort(orc, (size_t)orcs, sizeof orc[0], by_name);
    qsort(names, (size_t)count, sizeof names[0], by_name);
    int first_sco = -1;
    for (int i = 0; i < count; i++) {
        if (has_suffix(names[i], ".csd"))
            play_piece(names[i], NULL);
        else if (orcs > 0) {
            play_piece(orc[0], names[i]);
            first_sco = first_sco < 0 ? i : first_sco;
        }
    }
    for (int k = 1; k < orcs && first_sco >= 0; k++)
        play_piece(orc[k], names[first_sco]);
    KT_CHECK(count >= 4, "only %d pieces found in %s", count, scores);
    kt_test_remove_dir(scratch);
    return kt_test_finish("test_render_repertoire");
}
