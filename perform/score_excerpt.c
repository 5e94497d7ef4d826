/* score_excerpt.c - a passage of a performance (kettle render --from): what
 * happens from a given time on, with that time moved to 0, so that a composer
 * can hear bars 40-48 without computing bars 1-39, and the sanitizer pass in
 * CI reaches a piece's late events cheaply. */
#include "kt_score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tension of drum d at time t along its pedals (render_update_pedals' glide:
 * geometric in tension from wherever the previous glide had reached). */
static double tension_at(const kt_performance *perf, int d, double t)
{
    double T = perf->drums[d].params.tension_N_per_m;
    for (int i = 0; i < perf->pedal_count; i++) {
        const kt_score_pedal *p = &perf->pedals[i];
        if (p->drum != d || p->start_s > t)
            continue;
        double end = t;
        for (int j = i + 1; j < perf->pedal_count; j++)   /* a later pedal takes over */
            if (perf->pedals[j].drum == d && perf->pedals[j].start_s <= t) {
                end = perf->pedals[j].start_s;
                break;
            }
        double u = p->duration_s > 0 ? (end - p->start_s) / p->duration_s : 1;
        T = u >= 1 ? p->target_tension_N_per_m
                   : T * pow(p->target_tension_N_per_m / T, u);
    }
    return T;
}

/* The microphone's position at t: linear between waypoints, held outside. */
static void position_at(const kt_score_mic *m, double t, double pos[3])
{
    memcpy(pos, m->pos_m, 3 * sizeof *pos);
    const kt_score_waypoint *w = m->waypoints;
    int n = m->waypoint_count;
    if (n == 0)
        return;
    if (t <= w[0].time_s || n == 1) {
        memcpy(pos, w[t <= w[0].time_s ? 0 : n - 1].pos_m, 3 * sizeof *pos);
        return;
    }
    for (int i = 1; i < n; i++)
        if (t <= w[i].time_s) {
            double u = (t - w[i - 1].time_s) / (w[i].time_s - w[i - 1].time_s);
            for (int a = 0; a < 3; a++)
                pos[a] = w[i - 1].pos_m[a] + u * (w[i].pos_m[a] - w[i - 1].pos_m[a]);
            return;
        }
    memcpy(pos, w[n - 1].pos_m, 3 * sizeof *pos);
}

/* A pedal that a later one of the same drum has taken over by t. */
static int superseded(const kt_performance *perf, int i, double t)
{
    for (int j = i + 1; j < perf->pedal_count; j++)
        if (perf->pedals[j].drum == perf->pedals[i].drum && perf->pedals[j].start_s <= t)
            return 1;
    return 0;
}

/* The pedals that began before from_s, at their times less from_s (< 0),
 * after those an earlier excerpt kept: the tuner calibrates the pitches the
 * whole piece asks for and replays them to start each drum where the whole
 * render has it at from_s. */
static int keep_history(kt_performance *perf, double from_s)
{
    int n = perf->history_count + perf->drum_count;
    for (int i = 0; i < perf->pedal_count; i++)
        n += perf->pedals[i].start_s < from_s;
    kt_score_pedal *h = realloc(perf->history, sizeof *h * (size_t)(n ? n : 1));
    if (!h)
        return KT_ENOMEM;
    perf->history = h;
    for (int i = 0; i < perf->history_count; i++)
        h[i].start_s -= from_s;
    /* a drum moved before from_s begins its history with its own tuning (the
     * piece's time 0), which cut_pedals is about to replace */
    for (int d = 0; d < perf->drum_count; d++) {
        int moved = 0;
        for (int i = 0; i < perf->pedal_count; i++)
            moved |= perf->pedals[i].drum == d && perf->pedals[i].start_s < from_s;
        for (int i = 0; i < perf->history_count; i++)
            moved &= perf->history[i].drum != d;   /* an earlier excerpt did it */
        if (moved)
            h[perf->history_count++] = (kt_score_pedal){perf->drums[d].loc, d, -from_s, 0,
                                                        perf->drums[d].params.tension_N_per_m,
                                                        perf->drums[d].pitch_hz};
    }
    for (int i = 0; i < perf->pedal_count; i++)
        if (perf->pedals[i].start_s < from_s) {
            h[perf->history_count] = perf->pedals[i];
            h[perf->history_count++].start_s -= from_s;
        }
    return KT_OK;
}

/* Each drum starts at its tension at from_s and keeps the membrane grid of
 * the whole piece (its tensions' range and strongest stroke); the glide under
 * way at from_s goes on, pedals over by then are dropped. */
static int cut_pedals(kt_performance *perf, double from_s)
{
    double *start = malloc(sizeof *start * (size_t)(perf->drum_count + 1));
    if (!start || keep_history(perf, from_s) < 0) {
        free(start);
        return KT_ENOMEM;
    }
    for (int d = 0; d < perf->drum_count; d++) {
        kt_score_drum *dr = &perf->drums[d];
        double Tmin = dr->tension_min_N_per_m > 0 ? dr->tension_min_N_per_m
                                                  : dr->params.tension_N_per_m;
        for (int i = 0; i < perf->pedal_count; i++)
            if (perf->pedals[i].drum == d)
                Tmin = fmin(Tmin, perf->pedals[i].target_tension_N_per_m);
        dr->tension_min_N_per_m = fmin(Tmin, dr->params.tension_N_per_m);
        dr->tension_max_N_per_m = kt_score_drum_max_tension(perf, d);
        dr->stroke_force_max_N = kt_score_drum_max_force(perf, d);
        start[d] = tension_at(perf, d, from_s);
    }
    int kept = 0;
    for (int i = 0; i < perf->pedal_count; i++) {
        kt_score_pedal p = perf->pedals[i];
        if (p.start_s < from_s && (p.start_s + p.duration_s <= from_s || superseded(perf, i, from_s)))
            continue;
        if (p.start_s < from_s) {
            p.duration_s -= from_s - p.start_s;
            p.start_s = from_s;
        }
        p.start_s -= from_s;
        perf->pedals[kept++] = p;
    }
    perf->pedal_count = kept;
    for (int d = 0; d < perf->drum_count; d++)
        perf->drums[d].params.tension_N_per_m = start[d];
    free(start);
    return KT_OK;
}

/* Strikes and sources that begin before from_s are left out (a stroke or a
 * sound already under way cannot be picked up halfway); the rest move. */
static void cut_events(kt_performance *perf, double from_s, kt_excerpt_cut *cut)
{
    int kept = 0;
    for (int i = 0; i < perf->strike_count; i++) {
        kt_score_strike s = perf->strikes[i];
        if (s.start_s < from_s) {
            cut->strikes++;
            continue;
        }
        s.start_s -= from_s;
        perf->strikes[kept++] = s;
    }
    perf->strike_count = kept;
    kept = 0;
    for (int i = 0; i < perf->source_count; i++) {
        kt_score_source s = perf->sources[i];
        if (s.start_s < from_s) {
            cut->sources++;
            continue;
        }
        s.start_s -= from_s;
        perf->sources[kept++] = s;
    }
    perf->source_count = kept;
}

/* Moving microphones start where they are at from_s. */
static void cut_mics(kt_performance *perf, double from_s)
{
    for (int m = 0; m < perf->mic_count; m++) {
        kt_score_mic *mic = &perf->mics[m];
        position_at(mic, from_s, mic->pos_m);
        int kept = 0;
        for (int w = 0; w < mic->waypoint_count; w++) {
            kt_score_waypoint wp = mic->waypoints[w];
            if (wp.time_s <= from_s)
                continue;
            wp.time_s -= from_s;
            mic->waypoints[kept++] = wp;
        }
        if (kept > 0 && kept < mic->waypoint_count) {
            /* the first kept waypoint glides from where the mic is now */
            memmove(mic->waypoints + 1, mic->waypoints, sizeof *mic->waypoints * (size_t)kept);
            mic->waypoints[0].time_s = 0;
            memcpy(mic->waypoints[0].pos_m, mic->pos_m, sizeof mic->pos_m);
            kept++;
        }
        mic->waypoint_count = kept;
    }
}

int kt_performance_excerpt(kt_performance *perf, double from_s, kt_excerpt_cut *cut,
                           kt_score_error *err)
{
    kt_excerpt_cut none;
    if (!cut)
        cut = &none;
    memset(cut, 0, sizeof *cut);
    const kt_score_loc nowhere = {-1, 0, 0};
    if (!(from_s >= 0) || !isfinite(from_s))
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                                "--from must be a time of 0 s or more, got %g s", from_s);
    if (from_s >= perf->end_s && from_s > 0)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                                "--from %g s is past the end of the score (%g s)", from_s,
                                perf->end_s);
    if (from_s == 0)
        return KT_OK;
    if (cut_pedals(perf, from_s) < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    cut_events(perf, from_s, cut);
    cut_mics(perf, from_s);
    perf->end_s -= from_s;
    return KT_OK;
}
