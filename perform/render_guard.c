/* render_guard.c - what keeps a render from losing work or running away
 * (kt_checkpoint.h): the limits checked before anything is allocated, the
 * stability check every few hundred steps (largest value, NaN or infinity,
 * and energy growth while nothing feeds the room; with absorbing walls the
 * energy that has left through them is counted in, and walls that give back
 * more than they took are a growth of their own), checkpoints on a
 * wall-clock timer and on a stop request, and the partial audio a stopped
 * or failed render leaves beside its output.  Over ranks every decision is
 * the job's: each drum's figures are its runner's, the air's are summed
 * (kt_room_air_energy), and a stop or a checkpoint waits for a check step
 * and for the ranks to agree, so that all take it at once. */
#include "kt_guard.h"
#include "kt_files.h"
#include "kt_ranks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Energy may rise by this fraction of its lowest value since the last input
 * (plus a floor, a fraction of the largest, for rounding once it has decayed)
 * before we call it growth: the lossless scheme keeps it to 1e-11 in double. */
#define GUARD_ENERGY_RISE 1e-3
#define GUARD_ENERGY_FLOOR_DOUBLE 1e-9
/* In single precision a drum's struck sound leaves a static offset in the
 * bowl's Psi (about 1 m^2/s after an ff stroke on the 23-inch drum) whose
 * rounding keeps the computed energy wandering by some 1e-7 of the stroke's
 * once the sound has decayed: at 1e-6 the 60 s runs of every standard drum
 * in a 1 m^3 room were stopped at 1.3-6.5 s with energies of 3e-9 to 1e-8 J
 * and no growth in their signals (issue 18). */
#define GUARD_ENERGY_FLOOR_SINGLE 1e-5
/* Growth below this many joules is never reported: a 1 m^3 room at the
 * threshold of hearing holds ~3e-15 J, and a real instability grows
 * geometrically past it within a few checks.  Without it, an absorbing room
 * whose sound has left before the first check (so the largest energy the
 * guard saw is already round-off, ~1e-30 J) was called unstable when that
 * round-off wandered up by a few per cent. */
#define GUARD_ENERGY_INAUDIBLE_J 1e-20
/* In single precision a field of largest magnitude m carries round-off of
 * about the energy E_round = rho Q^3 / (2 c^2 k^2) nodes (eps m)^2, and a
 * lossy room keeps stirring it: after an impulse the energy settles on a
 * plateau of 12 to 600 times E_round (0.6 to 1.2 m rooms, beta 0.05 to 0.3,
 * measured for issue #20), wandering by several per cent.  Growth is only
 * called growth above this many E_round; a room at the single-precision
 * limit that really grows passes it within a few checks. */
#define GUARD_ROUND_FACTOR_SINGLE 1e4
#define GUARD_FLOAT_EPSILON 1.1920929e-7
/* A value of the field beyond this is a blow-up in all but name. */
#define GUARD_HUGE 1e30
/* A check brings the fields home and scans them: on a GPU render of the
 * concert hall at 44.1 kHz (204M points) 0.29 s every 3072 steps, 9 % of
 * the render (H100, 2026-11-26).  Checks that cost more than this share of
 * the stepping between them, and more than the floor, come less often. */
#define GUARD_COST_SHARE 0.02
#define GUARD_COST_FLOOR_S 0.1

/* ---- limits ---- */

void kt_render_memory_estimate(const kt_performance *perf, const kt_room_params *rp,
                               int64_t total_steps, kt_render_memory *m)
{
    memset(m, 0, sizeof *m);
    kt_room_grid g;
    if (kt_room_estimate(rp, &g, NULL) == 0)
        m->room_bytes = (double)g.bytes;
    /* signals grow by doubling (up to 2x) and are copied once for output */
    m->mic_bytes = 3.0 * perf->mic_count * (double)total_steps * sizeof(double);
    double k = 1.0 / rp->sample_rate_hz;
    for (int d = 0; d < perf->drum_count; d++) {
        double N = kt_performance_membrane_intervals(perf, d, k, 1.0);
        int given = perf->drums[d].params.membrane_intervals;
        if (given > 0 && given < N)
            N = given;
        /* state, scratch and the stored operators: about 40 doubles a node */
        m->drum_bytes += 40.0 * sizeof(double) * (N + 1) * (N + 1);
    }
    m->total_bytes = m->room_bytes + m->mic_bytes + m->drum_bytes;
}

static int check_memory(const kt_performance *perf, const kt_room_params *rp,
                        int64_t total_steps, kt_score_error *err)
{
    kt_render_memory m;
    kt_render_memory_estimate(perf, rp, total_steps, &m);
    double avail = rp->memory_limit_bytes ? (double)rp->memory_limit_bytes
                                          : (double)kt_memory_available_bytes();
    if (avail <= 0 || m.total_bytes <= avail)
        return KT_OK;
    char need[32], room[32], mics[32], drums[32], have[32];
    kt_file_size_text(m.total_bytes, need, sizeof need);
    kt_file_size_text(m.room_bytes, room, sizeof room);
    kt_file_size_text(m.mic_bytes, mics, sizeof mics);
    kt_file_size_text(m.drum_bytes, drums, sizeof drums);
    kt_file_size_text(avail, have, sizeof have);
    return kt_score_fail_at(perf, perf->room_loc, err, KT_ENOMEM,
                            "this render needs about %s (room fields %s, microphone signals %s, "
                            "drums %s) but %s is %s; lower the sample rate, shorten the piece "
                            "or use a smaller room", need, room, mics, drums,
                            rp->memory_limit_bytes ? "the memory limit" : "the memory available",
                            have);
}

int kt_render_check_limits(const kt_performance *perf, const kt_room_params *rp,
                           const kt_render_options *opt, int64_t total_steps,
                           kt_score_error *err)
{
    const kt_score_loc nowhere = {-1, 0, 0};
    if (!opt->override_limits && rp->sample_rate_hz > KT_LIMIT_SAMPLE_RATE_HZ)
        return kt_score_fail_at(perf, opt->sample_rate_hz > 0 ? nowhere : perf->sr_loc, err,
                                KT_EINVAL, "a sample rate of %g Hz is above %g kHz; override "
                                "the limit (--override-limits) if you mean it",
                                rp->sample_rate_hz, KT_LIMIT_SAMPLE_RATE_HZ / 1000);
    if (!opt->override_limits && perf->drum_count > KT_LIMIT_DRUMS)
        return kt_score_fail_at(perf, perf->drums[KT_LIMIT_DRUMS].loc, err, KT_EINVAL,
                                "%d drums are more than %d; override the limit "
                                "(--override-limits) if you mean it", perf->drum_count,
                                KT_LIMIT_DRUMS);
    return check_memory(perf, rp, total_steps, err);
}

/* ---- the guard ---- */

/* An interval [from, to) in seconds during which energy enters the room. */
typedef struct feed {
    double from_s, to_s;
} feed;

struct kt_render_guard {
    const kt_performance *perf;
    const kt_render_options *opt;
    const char *out_path;
    int64_t total;
    kt_room *room;
    kt_timpani *const *drums;
    kt_guard_export_fn export_pedals;
    void *user;
    kt_guard_sync_fn sync;
    void *sync_user;
    int64_t every;                 /* steps between checks, 0: never */
    int64_t stride;                /* every stays a multiple of this (the caller's stops) */
    double checked_s;              /* wall clock at the end of the last check */
    double k;
    feed *feeds;
    int feed_count;
    int64_t good_steps;            /* steps at the last check that passed */
    double *part_min;              /* per part (air, drums): lowest energy since the last feed */
    double e_min, e_max;
    double field_max;              /* largest |Psi| at the last check */
    double out_max;                /* most energy out through absorbing walls since the last feed */
    int have_energy;
    double last_checkpoint_s;
    int stopped, unstable, written;
    int stop_asked;                /* over ranks: a stop request waiting for a check step */
    int step_failed;               /* the step said unstable (over ranks maybe one rank) */
    int checkpoint_failing;        /* the last checkpoint could not be written (warned) */
    int output_failed;             /* the output could not be written: keep the audio */
};

static double source_seconds(const kt_score_source *s, double k)
{
    double len = s->duration_s > 0 ? s->duration_s : 8 * k;
    if (s->kind == KT_SOURCE_FILE && kt_sound_file_seconds(s->path, &len, NULL) < 0)
        len = INFINITY;
    return len;
}

/* Strikes in contact, sources playing, pedals gliding. */
static int collect_feeds(kt_render_guard *g)
{
    const kt_performance *p = g->perf;
    int n = p->strike_count + p->source_count + p->pedal_count;
    g->feeds = calloc((size_t)(n ? n : 1), sizeof *g->feeds);
    if (!g->feeds)
        return KT_ENOMEM;
    double control_s = (p->ksmps > 0 ? p->ksmps : 1) * g->k;
    for (int i = 0; i < p->strike_count; i++)
        g->feeds[g->feed_count++] = (feed){p->strikes[i].start_s,
                                           p->strikes[i].start_s + p->strikes[i].contact_s};
    for (int i = 0; i < p->source_count; i++)
        g->feeds[g->feed_count++] = (feed){p->sources[i].start_s,
                                           p->sources[i].start_s +
                                               source_seconds(&p->sources[i], g->k)};
    for (int i = 0; i < p->pedal_count; i++)
        g->feeds[g->feed_count++] = (feed){p->pedals[i].start_s, p->pedals[i].start_s +
                                           p->pedals[i].duration_s + control_s};
    return KT_OK;
}

int kt_guard_create(kt_render_guard **out, const kt_performance *perf,
                    const kt_render_options *opt, const char *out_path, int64_t total_steps,
                    kt_room *room, kt_timpani *const *drums, kt_guard_export_fn export_pedals,
                    void *user)
{
    kt_render_guard *g = calloc(1, sizeof *g);
    *out = NULL;
    if (!g)
        return KT_ENOMEM;
    g->perf = perf;
    g->opt = opt;
    g->out_path = out_path;
    g->total = total_steps;
    g->room = room;
    g->drums = drums;
    g->export_pedals = export_pedals;
    g->user = user;
    g->every = opt->check_every_steps == 0 ? KT_GUARD_CHECK_STEPS
               : opt->check_every_steps < 0 ? 0 : opt->check_every_steps;
    g->stride = g->every;
    g->checked_s = kt_seconds();
    g->k = kt_room_get_grid(room)->time_step_s;
    g->good_steps = kt_room_step_index(room);
    g->last_checkpoint_s = kt_seconds();
    g->part_min = calloc((size_t)perf->drum_count + 1, sizeof *g->part_min);
    if (!g->part_min || collect_feeds(g) < 0) {
        kt_guard_destroy(g);
        return KT_ENOMEM;
    }
    *out = g;
    return KT_OK;
}

void kt_guard_set_sync(kt_render_guard *g, kt_guard_sync_fn sync, void *user,
                       int64_t stride_steps)
{
    if (g->every > 0 && stride_steps > 0)
        g->stride = (stride_steps + g->every - 1) / g->every * g->every;
    g->sync = sync;
    g->sync_user = user;
}

void kt_guard_destroy(kt_render_guard *g)
{
    if (!g)
        return;
    free(g->feeds);
    free(g->part_min);
    free(g);
}

/* Did energy enter between these times (a step of margin either side)? */
static int fed(const kt_render_guard *g, double from_s, double to_s)
{
    for (int i = 0; i < g->feed_count; i++)
        if (g->feeds[i].from_s <= to_s + 2 * g->k && g->feeds[i].to_s >= from_s - 2 * g->k)
            return 1;
    return 0;
}

static int nearest_drum(const kt_render_guard *g, const int node[3])
{
    double Q = kt_room_get_grid(g->room)->spacing_m, best = INFINITY;
    int which = -1;
    for (int d = 0; d < g->perf->drum_count; d++) {
        const kt_timpani_params *p = &g->perf->drums[d].params;
        double dx = node[0] * Q - p->rim_centre_m[0], dy = node[1] * Q - p->rim_centre_m[1];
        double r = sqrt(dx * dx + dy * dy);
        int below = node[2] * Q <= p->rim_centre_m[2] + Q &&
                    node[2] * Q >= p->rim_centre_m[2] - p->bowl_depth_m - Q;
        if (below && r <= p->diameter_m / 2 + 2 * Q && r < best) {
            best = r;
            which = d;
        }
    }
    return which;
}

/* The likely cause, for the message. */
static void likely_cause(const kt_render_guard *g, int drum, char *buf, size_t n)
{
    const kt_room_params *rp = kt_room_get_params(g->room);
    const kt_room_grid *gr = kt_room_get_grid(g->room);
    double limit = 1 / sqrt(3.0);
    if (drum < 0 && rp->precision == KT_SINGLE)
        snprintf(buf, n, "single precision at the stability limit (Courant number %.6f, "
                 "back-off %.2g %%): render in double precision", gr->courant,
                 100 * rp->courant_backoff);
    else if (drum < 0 && gr->courant > limit * (1 + 1e-12))
        snprintf(buf, n, "the Courant number %.6f is above the limit 1/sqrt(3) = %.6f",
                 gr->courant, limit);
    else if (drum >= 0)
        snprintf(buf, n, "a parameter of drum '%s' (line %d): its strike forces, tension, "
                 "membrane grid or solver", g->perf->drums[drum].name, g->perf->drums[drum].loc.line);
    else
        snprintf(buf, n, "a parameter: a source's amplitude or gain, or a setting of the room");
}

/* `cause` NULL: the likely one for the drum (or the air) named. */
static int report_cause(kt_render_guard *g, int64_t done, const char *what, int drum,
                        const char *cause_text, kt_score_error *err)
{
    char cause[400];
    if (cause_text)
        snprintf(cause, sizeof cause, "%s", cause_text);
    else
        likely_cause(g, drum, cause, sizeof cause);
    g->unstable = 1;
    kt_score_loc loc = drum >= 0 ? g->perf->drums[drum].loc : (kt_score_loc){-1, 0, 0};
    return kt_score_fail_at(g->perf, loc, err, KT_EUNSTABLE,
                            "the render became unstable by t = %.4f s (step %lld): %s; likely "
                            "cause: %s", done * g->k, (long long)done, what, cause);
}

static int report(kt_render_guard *g, int64_t done, const char *what, int drum, kt_score_error *err)
{
    return report_cause(g, done, what, drum, NULL, err);
}

static const char *kind_name(int bad)
{
    return bad == 2 ? "NaN" : "infinity";
}

/* Each drum's figures as its runner has them, on every rank (a rank that
 * does not step a drum passes 0, so the job's sum is the runner's figure). */
static void drum_figures(const kt_render_guard *g, double *v, int per_drum,
                         double (*figure)(const kt_timpani *, double *))
{
    int n = g->perf->drum_count;
    for (int d = 0; d < n; d++) {
        int here = kt_room_runs_instrument(g->room, g->drums[d]);
        for (int k = 0; k < per_drum; k++)
            v[d * per_drum + k] = 0;
        if (here || kt_room_ranks(g->room) == 1)
            v[d * per_drum] = figure(g->drums[d], per_drum > 1 ? &v[d * per_drum + 1] : NULL);
    }
    if (kt_room_ranks(g->room) > 1 && n > 0 && kt_mpi_sum(v, (size_t)n * per_drum, NULL) < 0)
        for (int k = 0; k < n * per_drum; k++)
            v[k] = NAN;          /* the job failed: no figure to trust */
}

static double drum_scan(const kt_timpani *t, double *bad)
{
    int b = 0;
    double peak = kt_timpani_scan(t, &b);
    *bad = b;
    return peak;
}

static double drum_energy(const kt_timpani *t, double *unused)
{
    (void)unused;
    return kt_timpani_energy(t);
}

/* NaN, infinity or absurd size in the field or on a head. */
static int check_values(kt_render_guard *g, int64_t done, kt_score_error *err)
{
    char what[300];
    int n = g->perf->drum_count;
    double v[2 * n + 1];
    drum_figures(g, v, 2, drum_scan);
    for (int d = 0; d < n; d++) {
        int bad = v[2 * d + 1] == 1 ? 1 : v[2 * d + 1] == 2 ? 2 : 0;
        double peak = v[2 * d];
        if (bad || !(peak <= GUARD_HUGE)) {
            snprintf(what, sizeof what, "%s on the head of drum '%s'",
                     bad ? kind_name(bad) : "a displacement beyond 1e30 m",
                     kt_timpani_name(g->drums[d]));
            return report(g, done, what, d, err);
        }
    }
    kt_field_scan s;
    kt_room_scan_field(g->room, &s);
    g->field_max = s.max_abs;
    if (!s.bad && s.max_abs <= GUARD_HUGE)
        return KT_OK;
    double Q = kt_room_get_grid(g->room)->spacing_m;
    int d = nearest_drum(g, s.node);
    snprintf(what, sizeof what, "%s in the air at (%.2f, %.2f, %.2f) m%s%s%s",
             s.bad ? kind_name(s.bad) : "a value beyond 1e30", s.node[0] * Q, s.node[1] * Q,
             s.node[2] * Q, d >= 0 ? " (at drum '" : "", d >= 0 ? g->perf->drums[d].name : "",
             d >= 0 ? "')" : "");
    return report(g, done, what, d, err);
}

/* Energy per part: index 0 the air (with what has left it through absorbing
 * walls), 1 + d drum d. */
static void part_energies(const kt_render_guard *g, double *e)
{
    e[0] = kt_room_accounted_energy(g->room);
    drum_figures(g, e + 1, 1, drum_energy);
}

/* Absorbing walls that return more energy than they took since the last
 * feed: growth that the accounted energy cannot show (the walls' outflow
 * falls by as much as the inside gains). */
static int check_walls(kt_render_guard *g, int64_t done, double tolerance_J,
                       kt_score_error *err)
{
    double out = kt_room_wall_outflow(g->room);
    if (!(out < g->out_max - tolerance_J)) /* NaN: a room split over ranks keeps no sum */
        return KT_OK;
    char what[300];
    snprintf(what, sizeof what, "the absorbing walls gave back %.6g J more than they took "
             "while nothing fed the room", g->out_max - out);
    return report_cause(g, done, what, -1, "the absorbing walls' update (they must not give "
                        "energy back)", err);
}

static int check_energy(kt_render_guard *g, int64_t done, kt_score_error *err)
{
    int parts = g->perf->drum_count + 1, worst = 0;
    double E = 0, rise = 0, e[parts];
    part_energies(g, e);
    for (int p = 0; p < parts; p++)
        E += e[p];
    double t = done * g->k;
    /* fed since the last check: every `every` steps on the CPU, a few
     * periods apart on the GPU (render.c gpu_chunk_steps) */
    double since = fmin(t - g->every * g->k, g->good_steps * g->k);
    if (!g->have_energy || fed(g, since, t)) {
        for (int p = 0; p < parts; p++)
            g->part_min[p] = e[p];
        g->e_min = E;
        g->e_max = fmax(g->e_max, E);
        g->out_max = kt_room_wall_outflow(g->room);
        g->have_energy = 1;
        return KT_OK;
    }
    g->e_max = fmax(g->e_max, E);
    const kt_room_params *rp = kt_room_get_params(g->room);
    double floor_J = GUARD_ENERGY_FLOOR_DOUBLE * g->e_max;
    if (rp->precision == KT_SINGLE) {
        const kt_room_grid *gr = kt_room_get_grid(g->room);
        double c = rp->sound_speed_m_per_s, Q = gr->spacing_m, k = gr->time_step_s;
        double round = rp->air_density_kg_per_m3 * Q * Q * Q / (2 * c * c * k * k) * gr->nodes *
                       pow(GUARD_FLOAT_EPSILON * g->field_max, 2);
        floor_J = fmax(GUARD_ENERGY_FLOOR_SINGLE * g->e_max, GUARD_ROUND_FACTOR_SINGLE * round);
    }
    double tolerance = g->e_min * GUARD_ENERGY_RISE + floor_J + GUARD_ENERGY_INAUDIBLE_J;
    int rc = check_walls(g, done, tolerance, err);
    if (rc < 0)
        return rc;
    g->out_max = fmax(g->out_max, kt_room_wall_outflow(g->room));
    if (E > g->e_min + tolerance) {
        for (int p = 0; p < parts; p++)
            if (e[p] - g->part_min[p] > rise) {
                rise = e[p] - g->part_min[p];
                worst = p;
            }
        char what[300];
        snprintf(what, sizeof what, "the energy grew from %.6g J to %.6g J while nothing fed "
                 "the room, most of it in %s%s%s", g->e_min, E, worst ? "drum '" : "the air",
                 worst ? g->perf->drums[worst - 1].name : "", worst ? "'" : "");
        return report(g, done, what, worst - 1, err);
    }
    g->e_min = fmin(g->e_min, E);
    for (int p = 0; p < parts; p++)
        g->part_min[p] = fmin(g->part_min[p], e[p]);
    return KT_OK;
}

static int write_checkpoint(kt_render_guard *g, kt_error *e)
{
    int n = g->perf->drum_count;
    kt_checkpoint_drum *pedals = calloc((size_t)(n ? n : 1), sizeof *pedals);
    if (!pedals)
        return kt_fail(e, KT_ENOMEM, "out of memory");
    int damp_next = 0;
    g->export_pedals(g->user, pedals, &damp_next);
    kt_checkpoint_source src = {g->perf, g->opt, g->out_path, g->total, g->room, g->drums,
                                pedals, n, damp_next};
    /* over ranks: no sample left waiting for a neighbour's plane */
    int rc = kt_room_flush(g->room, e);
    if (rc == 0 || kt_room_ranks(g->room) > 1) {  /* every rank writes, or refuses, at once */
        int wrote = kt_checkpoint_write(g->opt->checkpoint_path, &src, rc < 0 ? NULL : e);
        rc = rc < 0 ? rc : wrote;
    }
    free(pedals);
    g->last_checkpoint_s = kt_seconds();
    g->written += rc == 0;
    /* A checkpoint that cannot be written (a full disk) costs the render
     * nothing it has computed: it goes on, and says so once per spell. */
    if (rc < 0 && !g->checkpoint_failing && g->opt->warn) {
        char msg[KT_ERROR_MESSAGE_MAX + 128];
        snprintf(msg, sizeof msg, "%s (checkpoint %s); the render goes on without it, and "
                 "writes its audio at the end as usual", e->message, g->opt->checkpoint_path);
        g->opt->warn(g->opt->user, msg);
    }
    g->checkpoint_failing = rc < 0;
    return rc;
}

static int sync_host(kt_render_guard *g, kt_score_error *err)
{
    kt_error e;
    kt_error_clear(&e);
    int rc = g->sync ? g->sync(g->sync_user, &e) : KT_OK;
    if (rc < 0)
        return kt_score_fail_at(g->perf, (kt_score_loc){-1, 0, 0}, err, rc, "%s", e.message);
    return KT_OK;
}

/* A check that took more than GUARD_COST_SHARE of the stepping since the
 * one before spaces the next ones out, in whole strides, so that it does not
 * (over ranks the longest period any rank wants: they check together). */
static void stretch_checks(kt_render_guard *g, double t0)
{
    const double now = kt_seconds(), cost = now - t0, ran = t0 - g->checked_s;
    g->checked_s = now;
    if (g->opt->check_every_steps != 0 || g->every <= 0)   /* a period asked for stays */
        return;
    double want = g->every;
    if (cost > GUARD_COST_FLOOR_S && cost > GUARD_COST_SHARE * ran)
        want = ran > 0 ? ceil(g->every * cost / (GUARD_COST_SHARE * ran)) : 2.0 * g->every;
    if (kt_room_ranks(g->room) > 1)
        want = kt_mpi_max(want);
    if (want > g->every)
        g->every = ((int64_t)want + g->stride - 1) / g->stride * g->stride;
}

int64_t kt_guard_next_check(const kt_render_guard *g, int64_t done)
{
    if (g->every <= 0)
        return INT64_MAX;
    int64_t next = (done / g->every + 1) * g->every;
    return done < g->total && next > g->total ? g->total : next;
}

int kt_guard_after_step(kt_render_guard *g, int64_t done, kt_score_error *err)
{
    const kt_render_options *o = g->opt;
    int check = g->every > 0 && (done % g->every == 0 || done == g->total);
    int stop = o->stop && o->stop(o->user);
    int due = o->checkpoint_path && o->checkpoint_every_s > 0 && o->estimate_steps <= 0 &&
              kt_seconds() - g->last_checkpoint_s >= o->checkpoint_every_s;
    if (kt_room_ranks(g->room) > 1) {
        /* the clocks and signals of the ranks differ: they agree at checks */
        g->stop_asked |= stop;
        int both = check ? (int)kt_mpi_max(g->stop_asked * 2 + due) : 0;
        stop = both >= 2;
        due = both & 1;
    }
    if (!check && !stop && !due)
        return KT_OK;
    const double t0 = kt_seconds();
    int rc = sync_host(g, err);
    if (rc == 0 && check) {
        rc = check_values(g, done, err);
        if (rc == 0)
            rc = check_energy(g, done, err);
        if (rc == 0)
            g->good_steps = done;
        if (rc == 0)
            stretch_checks(g, t0);
    }
    kt_error e;
    kt_error_clear(&e);
    int saved = rc == 0 && (stop || due) && o->checkpoint_path ? write_checkpoint(g, &e) : 1;
    if (rc == 0 && stop) {
        g->stopped = 1;
        g->good_steps = done;
        rc = kt_score_fail_at(g->perf, (kt_score_loc){-1, 0, 0}, err, KT_EINTR,
                              "stopped at t = %.4f s (step %lld of %lld)%s%s%s", done * g->k,
                              (long long)done, (long long)g->total,
                              saved == 0 ? "; checkpoint written to " : saved < 0 ? "; " : "",
                              saved == 0 ? o->checkpoint_path : "", saved < 0 ? e.message : "");
    }
    return rc;
}

int kt_guard_unstable(kt_render_guard *g, int64_t done, const char *what, kt_score_error *err)
{
    int drum = -1;
    g->step_failed = 1;
    for (int d = 0; d < g->perf->drum_count; d++)
        if (strstr(what, kt_timpani_name(g->drums[d])))
            drum = d;
    return report(g, done, what, drum, err);
}

void kt_guard_output_failed(kt_render_guard *g)
{
    if (g)
        g->output_failed = 1;
}

/* The partial file beside the output; where that cannot be written, the same
 * name beside the checkpoint, in the working folder or in the temporary
 * folder: the first that takes it.  res->partial_path names it ("" if none). */
static void keep_audio(kt_render_guard *g, kt_render_result *res)
{
    char beside[sizeof res->partial_path], path[sizeof res->partial_path];
    char folders[3][sizeof res->partial_path / 2] = {"", "", ""};
    kt_render_partial_path(g->out_path, beside, sizeof beside);
    const char *slash = strrchr(beside, '/'), *name = slash ? slash + 1 : beside;
    const char *tmpdir = getenv("TMPDIR");
    if (g->opt->checkpoint_path)
        kt_file_folder(g->opt->checkpoint_path, folders[0], sizeof folders[0]);
    if (!getcwd(folders[1], sizeof folders[1]))
        folders[1][0] = '\0';
    snprintf(folders[2], sizeof folders[2], "%s", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    res->partial_path[0] = '\0';
    for (int i = -1; i < 3 && !res->partial_path[0]; i++) {
        if (i >= 0 && !folders[i][0])
            continue;
        if (snprintf(path, sizeof path, "%s%s%s", i < 0 ? "" : folders[i], i < 0 ? "" : "/",
                     i < 0 ? beside : name) >= (int)sizeof path)
            continue;
        if (kt_room_write_audio(g->room, path, &g->opt->output, NULL, NULL) == 0)
            memcpy(res->partial_path, path, sizeof path);
    }
}

int kt_guard_finish(kt_render_guard *g, int rc, kt_render_result *res)
{
    if (g)
        res->checkpoints_written = g->written;
    /* a render into memory (no out_path) keeps nothing of a failed run */
    if (!g || !g->out_path || !(g->stopped || g->unstable || g->output_failed))
        return rc;
    if (g->stopped || g->unstable) {
        if (g->good_steps <= 0)
            return rc;
        /* after a blow-up keep only what the last passed check vouched for */
        kt_room_truncate_mics(g->room, g->good_steps);
    }
    /* over ranks the signals meet on rank 0 first, when every rank is here:
     * after a stop or a check (agreed), not after one rank's failed step */
    if (kt_room_ranks(g->room) > 1 && (g->stopped || g->unstable) &&
        (g->step_failed || kt_room_collect(g->room, NULL) < 0))
        return rc;
    if (kt_room_rank(g->room) == 0)
        keep_audio(g, res);
    return rc;
}
