/* render.c - turns a parsed performance into audio: builds the room, its
 * microphones, sources and drums, queues the strikes, steps the room while
 * gliding pedalled drums every ksmps steps, damping drums at the end of notes
 * that ask for it (p8) and taking pressure snapshots, then writes the
 * microphones.  The library half of `kettle render`; the run on the GPU and
 * the choice of device are in render_gpu.c. */
#include "render_internal.h"
#include "kt_config.h"
#include "kt_files.h"
#include "kt_instrument.h"
#include "kt_png.h"
#include "kt_physics.h"
#include "kt_ranks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kt_score_loc nowhere = {-1, 0, 0};

void kt_render_options_default(kt_render_options *o)
{
    memset(o, 0, sizeof *o);
    o->precision = -1;
    o->format = -1;
    o->device = KT_DEVICE_AUTO;
    o->tail_s = -1;
    kt_output_options_default(&o->output);
    o->output.raw_gain = 0;   /* the orchestra's 0dbfs (KT_FULL_SCALE_PA when it has none) */
    o->snapshot_axis = 2;
    o->scheme = -1;
    o->wall_model = -1;
    o->cpu_overlap = KT_OVERLAP_AIR;
    o->split_axis = KT_SPLIT_AUTO;
}

void kt_render_room_params(const kt_performance *perf, const kt_render_options *opt,
                           kt_room_params *room)
{
    *room = perf->room;
    if (opt->sample_rate_hz > 0)
        room->sample_rate_hz = opt->sample_rate_hz;
    if (opt->precision >= 0)
        room->precision = (kt_precision)opt->precision;
    if (opt->scheme >= 0) {
        room->scheme = (kt_air_scheme)opt->scheme;
        room->stencil_family = (kt_stencil_family)opt->stencil_family;
        room->stencil_reach = opt->stencil_reach;
    }
    if (opt->wall_model >= 0)
        room->wall_model = (kt_wall_model)opt->wall_model;
    room->nthreads = opt->nthreads;
}

void kt_render_result_free(kt_render_result *res)
{
    free(res->summary);
    res->summary = NULL;
}

kt_timpani_format kt_render_auto_format(void)
{
    /* The matrix-free drum keeps B, C, V unrolled and touches the least
     * memory per step (thesis 7.3: fastest of the CPU versions). */
    return KT_TIMPANI_MATRIX_FREE;
}

/* End of the last event, and the statement it comes from; sound files are
 * opened to learn their length. */
static int end_of_events(const kt_performance *perf, double sr, double *end_s,
                         kt_score_loc *end_loc, kt_score_error *err)
{
    double end = perf->end_s;
    kt_score_loc at = perf->end_loc;
    for (int i = 0; i < perf->strike_count; i++)
        if (perf->strikes[i].start_s + perf->strikes[i].contact_s > end) {
            end = perf->strikes[i].start_s + perf->strikes[i].contact_s;
            at = perf->strikes[i].loc;
        }
    for (int i = 0; i < perf->source_count; i++) {
        const kt_score_source *s = &perf->sources[i];
        double len = s->duration_s > 0 ? s->duration_s : 8 / sr;
        kt_error e;
        kt_error_clear(&e);
        if (s->kind == KT_SOURCE_FILE && kt_sound_file_seconds(s->path, &len, &e) < 0)
            return kt_score_fail_at(perf, s->loc, err, e.code, "%s", e.message);
        if (s->start_s + len > end) {
            end = s->start_s + len;
            at = s->loc;
        }
    }
    for (int m = 0; m < perf->mic_count; m++)
        for (int w = 0; w < perf->mics[m].waypoint_count; w++)
            if (perf->mics[m].waypoints[w].time_s > end) {
                end = perf->mics[m].waypoints[w].time_s;
                at = perf->mics[m].waypoints[w].loc;
            }
    *end_s = end;
    *end_loc = at;
    return KT_OK;
}

/* The orchestra's solids and holes, before anything is placed in the room. */
static int add_solids(render_state *rs, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    if (perf->solid_count == 0)
        return KT_OK;
    kt_room_solid *s = malloc(sizeof *s * (size_t)perf->solid_count);
    if (!s)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    for (int k = 0; k < perf->solid_count; k++)
        s[k] = perf->solids[k].solid;
    kt_error e;
    kt_error_clear(&e);
    int bad = -1, rc = kt_room_add_solids(rs->room, s, perf->solid_count, &bad, &e);
    free(s);
    if (rc < 0)
        return kt_score_fail_at(perf, bad >= 0 ? perf->solids[bad].loc : perf->solids[0].loc,
                                err, rc, "%s", e.message);
    return KT_OK;
}

static int add_mics(render_state *rs, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    for (int m = 0; m < perf->mic_count; m++) {
        const kt_score_mic *mic = &perf->mics[m];
        kt_error e;
        kt_error_clear(&e);
        int idx = kt_room_add_mic(rs->room, mic->name, mic->pos_m, &e);
        if (idx < 0)
            return kt_score_fail_at(perf, mic->loc, err, idx, "microphone %s: %s", mic->name,
                                    e.message);
        for (int w = 0; w < mic->waypoint_count; w++) {
            int rc = kt_room_mic_waypoint(rs->room, idx, mic->waypoints[w].time_s,
                                          mic->waypoints[w].pos_m, &e);
            if (rc < 0)
                return kt_score_fail_at(perf, mic->waypoints[w].loc, err, rc, "microphone %s: %s",
                                        mic->name, e.message);
        }
    }
    return KT_OK;
}

static int add_sources(render_state *rs, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    for (int i = 0; i < perf->source_count; i++) {
        const kt_score_source *s = &perf->sources[i];
        kt_error e;
        kt_error_clear(&e);
        int rc;
        if (s->kind == KT_SOURCE_IMPULSE)
            rc = kt_room_add_impulse(rs->room, s->pos_m, s->start_s,
                                     s->duration_s > 0 ? s->duration_s : 8 * rs->k, s->amplitude,
                                     &e);
        else
            rc = kt_room_add_file_source(rs->room, s->path, s->pos_m, s->start_s, s->gain, &e);
        if (rc < 0)
            return kt_score_fail_at(perf, s->loc, err, rc, "%s", e.message);
    }
    return KT_OK;
}

static int add_drums(render_state *rs, kt_render_result *res, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    const kt_render_options *opt = rs->opt;
    res->timpani_format = opt->format >= 0 ? opt->format : (int)kt_render_auto_format();
    for (int d = 0; d < perf->drum_count; d++) {
        const kt_score_drum *dr = &perf->drums[d];
        kt_timpani_params p = dr->params;
        p.format = (kt_timpani_format)res->timpani_format;
        /* On the GPU the exact direct solve is the fast one (instruments/gpu/timpani_split.cu);
         * on the CPU the reduced iteration.  Both converge to rounding. */
        if (rs->gpu && !dr->solver_given && p.format == KT_TIMPANI_MATRIX_FREE)
            p.solver = KT_SOLVE_DIRECT;
        p.nthreads = opt->nthreads;
        /* the tuner's tension, on the grid it planned for the drum's highest */
        p.tension_N_per_m = rs->tuning.drums[d].tension_N_per_m;
        p.membrane_intervals = rs->tuning.drums[d].membrane_intervals;
        kt_error e;
        kt_error_clear(&e);
        int rc = createTimpani(rs->room, &p, &rs->drums[d].t, &e);
        if (rc < 0)
            return kt_score_fail_at(perf, dr->loc, err, rc, "cannot create drum %s: %s", dr->name,
                                    e.message);
        rs->drums[d].tension = p.tension_N_per_m;
        rs->drums[d].pedal = -1;
    }
    for (int i = 0; i < perf->strike_count; i++) {
        const kt_score_strike *s = &perf->strikes[i];
        const kt_score_drum *dr = &perf->drums[s->drum];
        double r = s->radius_fraction * dr->params.diameter_m / 2;
        double a = s->angle_deg * KT_PI / 180;
        kt_error e;
        kt_error_clear(&e);
        int rc = kt_timpani_strike(rs->drums[s->drum].t, s->start_s, s->force_N, s->contact_s,
                                   r * cos(a), r * sin(a), &e);
        if (rc < 0)
            return kt_score_fail_at(perf, s->loc, err, rc, "strike on drum %s: %s", dr->name,
                                    e.message);
    }
    return KT_OK;
}

static int cmp_damp(const void *a, const void *b)
{
    const damp_event *x = a, *y = b;
    if (x->time_s != y->time_s)
        return x->time_s < y->time_s ? -1 : 1;
    return (x->strike > y->strike) - (x->strike < y->strike);
}

/* p8: a note with a damping time damps its drum from p2 + p3 (sigma0 =
 * 3 ln 10 / T60: the head alone falls 60 dB in T60) until the drum's next
 * strike, which lifts it.  A note struck again before its end is not damped. */
static int plan_damping(render_state *rs, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    int n = perf->strike_count, nd = perf->drum_count;
    int *next = malloc((size_t)(n ? n : 1) * sizeof *next);
    int *last = malloc((size_t)(nd ? nd : 1) * sizeof *last);
    rs->damps = malloc((size_t)(2 * n + 1) * sizeof *rs->damps);
    if (!next || !last || !rs->damps) {
        free(next);
        free(last);
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    }
    for (int d = 0; d < nd; d++)
        last[d] = -1;
    for (int i = n - 1; i >= 0; i--) {  /* strikes are sorted by start */
        next[i] = last[perf->strikes[i].drum];
        last[perf->strikes[i].drum] = i;
    }
    for (int i = 0; i < n; i++) {
        const kt_score_strike *s = &perf->strikes[i];
        double on_s = s->start_s + s->duration_s;
        int j = next[i];
        if (!(s->damp_t60_s > 0) || (j >= 0 && perf->strikes[j].start_s <= on_s))
            continue;
        rs->damps[rs->damp_count++] =
            (damp_event){on_s, s->drum, i, 3.0 * log(10.0) / s->damp_t60_s};
        if (j >= 0)
            rs->damps[rs->damp_count++] = (damp_event){perf->strikes[j].start_s, s->drum, j, 0.0};
    }
    free(next);
    free(last);
    if (rs->damp_count > 1)
        qsort(rs->damps, (size_t)rs->damp_count, sizeof *rs->damps, cmp_damp);
    return KT_OK;
}

/* Apply the damping changes due by step n (time n k; a strike starts on the
 * first step with n k >= its start, and so does the lifting of the damper). */
int render_update_damping(render_state *rs, int64_t n, kt_score_error *err)
{
    while (rs->damp_next < rs->damp_count &&
           (double)n * rs->k >= rs->damps[rs->damp_next].time_s) {
        const damp_event *ev = &rs->damps[rs->damp_next++];
        kt_error e;
        kt_error_clear(&e);
        int rc = kt_timpani_set_damping(rs->drums[ev->drum].t, ev->sigma0_per_s, &e);
        if (rc < 0)
            return kt_score_fail_at(rs->perf, rs->perf->strikes[ev->strike].loc, err, rc,
                                    "damping drum %s: %s", rs->perf->drums[ev->drum].name,
                                    e.message);
    }
    return KT_OK;
}

/* Where a glide of pedal i is at u (0..1), along the drum's tuning curve. */
static double glide_tension(const render_state *rs, int i, const drum_state *d, double u)
{
    const kt_score_pedal *p = &rs->perf->pedals[i];
    return kt_tuning_glide(&rs->tuning, rs->perf, p->drum, d->glide_from,
                           rs->tuning.pedal_tension_N_per_m[i], p->target_hz, u);
}

/* Pedals: move each drum's tension along its glide at time t. */
int render_update_pedals(render_state *rs, double t, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    for (int i = 0; i < perf->pedal_count; i++) {
        const kt_score_pedal *p = &perf->pedals[i];
        drum_state *d = &rs->drums[p->drum];
        if (t < p->start_s)
            continue;
        if (d->pedal != i) {
            /* The next pedal of this drum begins (pedals are sorted by start). */
            if (d->pedal > i)
                continue;
            d->pedal = i;
            d->glide_from = d->tension;
        }
        double u = p->duration_s > 0 ? (t - p->start_s) / p->duration_s : 1;
        double T = glide_tension(rs, i, d, u);
        if (T == d->tension)
            continue;
        kt_error e;
        kt_error_clear(&e);
        int rc = kt_timpani_set_tension(d->t, T, &e);
        if (rc < 0)
            return kt_score_fail_at(perf, p->loc, err, rc, "pedal on drum %s: %s",
                                    perf->drums[p->drum].name, e.message);
        d->tension = T;
    }
    return KT_OK;
}

/* ---- snapshots: a plane of Psi at two consecutive steps -> pressure ---- */

static int setup_plane(render_state *rs, kt_score_error *err)
{
    const kt_render_options *o = rs->opt;
    const kt_room_grid *g = kt_room_get_grid(rs->room);
    int n[3] = {g->nx, g->ny, g->nz};
    int a = o->snapshot_axis;
    if (a < 0 || a > 2)
        return kt_score_fail_at(rs->perf, nowhere, err, KT_EINVAL, "snapshot axis must be x, y or z");
    int idx = (int)lround(o->snapshot_position_m / g->spacing_m);
    if (idx < 0 || idx >= n[a])
        return kt_score_fail_at(rs->perf, nowhere, err, KT_EINVAL,
                                "snapshot plane %c = %g m lies outside the room (0 .. %g m)",
                                "xyz"[a], o->snapshot_position_m, (n[a] - 1) * g->spacing_m);
    rs->plane_index = idx;
    /* Picture axes: the two other room axes, the first across, the second up. */
    rs->plane_w = a == 0 ? g->ny : g->nx;
    rs->plane_h = a == 2 ? g->ny : g->nz;
    size_t cells = (size_t)rs->plane_w * rs->plane_h;
    rs->plane_before = malloc(cells * sizeof(double));
    rs->plane_now = malloc(cells * sizeof(double));
    rs->plane_air = malloc(cells);
    uint8_t *row = malloc((size_t)g->nx);
    int rc = rs->plane_before && rs->plane_now && rs->plane_air && row ? KT_OK : KT_ENOMEM;
    /* which of the plane is air, row by row (picture row 0 at the top) */
    for (int r = 0; r < (a == 0 ? g->nz * g->ny : a == 1 ? g->nz : g->ny) && rc == KT_OK; r++) {
        int y = a == 0 ? r % g->ny : a == 1 ? idx : r, z = a == 2 ? idx : a == 0 ? r / g->ny : r;
        if ((rc = kt_room_air_row(rs->room, y, z, row)) < 0)
            break;
        if (a == 0)
            rs->plane_air[(size_t)(g->nz - 1 - z) * g->ny + y] = row[idx];
        else
            memcpy(rs->plane_air + (size_t)(rs->plane_h - 1 - (a == 1 ? z : y)) * g->nx, row,
                   (size_t)g->nx);
    }
    free(row);
    if (rc < 0)
        return kt_score_fail_at(rs->perf, nowhere, err, KT_ENOMEM, "out of memory for snapshots");
    return KT_OK;
}

/* Psi^n on the plane into out[row * w + col], row 0 at the top of the
 * picture.  Over ranks each reads the layers it holds (the others read 0)
 * and the job adds the pictures: every cell from the one rank holding it. */
int render_read_plane(render_state *rs, double *out, kt_score_error *err)
{
    const kt_room_grid *g = kt_room_get_grid(rs->room);
    int a = rs->opt->snapshot_axis, w = rs->plane_w, h = rs->plane_h, idx = rs->plane_index;
    int have_layer = 1;
    if (a == 2) {
        /* layer z: window nx x ny, out index i*ny + j (i along x) */
        double *tmp = malloc((size_t)g->nx * g->ny * sizeof(double));
        have_layer = tmp != NULL;
        if (!tmp)   /* every rank joins the sum below, also this one */
            memset(out, 0, (size_t)w * h * sizeof *out);
        else
            kt_room_read_layer(rs->room, KT_NOW, idx, 0, 0, g->nx, g->ny, tmp);
        for (int j = 0; tmp && j < h; j++)
            for (int i = 0; i < w; i++)
                out[(size_t)(h - 1 - j) * w + i] = tmp[(size_t)i * g->ny + j];
        free(tmp);
    }
    for (int z = 0; a != 2 && z < h; z++) {
        double *row = out + (size_t)(h - 1 - z) * w;
        if (a == 0)
            kt_room_read_layer(rs->room, KT_NOW, z, idx, 0, 1, g->ny, row);
        else
            kt_room_read_layer(rs->room, KT_NOW, z, 0, idx, g->nx, 1, row);
    }
    kt_error e;
    kt_error_clear(&e);
    if (kt_room_ranks(rs->room) > 1 && kt_mpi_sum(out, (size_t)w * h, &e) < 0)
        return kt_score_fail_at(rs->perf, nowhere, err, KT_EIO, "gathering a snapshot: %s",
                                e.message);
    if (a == 2 && !have_layer)
        return kt_score_fail_at(rs->perf, nowhere, err, KT_ENOMEM, "out of memory for a snapshot");
    for (size_t c = 0; c < (size_t)w * h; c++)   /* solids: no pressure, drawn grey */
        if (!rs->plane_air[c])
            out[c] = NAN;
    return KT_OK;
}

int render_write_snapshot(render_state *rs, double t)
{
    if (kt_room_rank(rs->room) > 0)
        return 0;             /* rank 0 writes the gathered picture */
    const kt_room_params *rp = kt_room_get_params(rs->room);
    size_t cells = (size_t)rs->plane_w * rs->plane_h;
    for (size_t c = 0; c < cells; c++)
        rs->plane_now[c] = rp->air_density_kg_per_m3 * (rs->plane_now[c] - rs->plane_before[c]) / rs->k;
    char path[KT_SCORE_PATH_MAX + 64], title[128];
    snprintf(path, sizeof path, "%s_t%.4fs.png", rs->opt->snapshot_stem, t);
    static const char *across[3] = {"y", "x", "x"}, *up[3] = {"z", "z", "y"};
    int a = rs->opt->snapshot_axis;
    snprintf(title, sizeof title, "p [Pa]  t = %.4f s  %c = %.3f m  (%s across, %s up)", t,
             "xyz"[a], rs->plane_index * kt_room_get_grid(rs->room)->spacing_m, across[a], up[a]);
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_png_write_field(path, rs->plane_now, rs->plane_w, rs->plane_h, title, &e);
    /* a picture that cannot be written (a full disk) costs the audio nothing */
    if (rc < 0 && rs->opt->warn) {
        char msg[KT_ERROR_MESSAGE_MAX + 64];
        snprintf(msg, sizeof msg, "%s; the render goes on without this snapshot", e.message);
        rs->opt->warn(rs->opt->user, msg);
    }
    return rc == 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Snapshot steps s >= 1, ascending, each once (p^s needs Psi^(s-1) and
 * Psi^s); none when only part of the piece is run. */
int render_snapshot_steps(const render_state *rs, int64_t total, int64_t limit, int64_t **out,
                          int *count, kt_score_error *err)
{
    const kt_render_options *o = rs->opt;
    int64_t *snap = NULL;
    int nsnap = 0;
    if (o->snapshot_count > 0 && limit == total) {
        double *times = malloc((size_t)o->snapshot_count * sizeof *times);
        snap = malloc((size_t)o->snapshot_count * sizeof *snap);
        if (!times || !snap) {
            free(times);
            free(snap);
            return kt_score_fail_at(rs->perf, nowhere, err, KT_ENOMEM, "out of memory");
        }
        memcpy(times, o->snapshot_times_s, (size_t)o->snapshot_count * sizeof *times);
        qsort(times, (size_t)o->snapshot_count, sizeof *times, cmp_double);
        for (int i = 0; i < o->snapshot_count; i++) {
            int64_t s = (int64_t)llround(times[i] / rs->k);
            if (s < 1)
                s = 1;
            if (s <= total && (nsnap == 0 || snap[nsnap - 1] != s))
                snap[nsnap++] = s;
        }
        free(times);
    }
    *out = snap;
    *count = nsnap;
    return KT_OK;
}

/* ---- the run ---- */

/* The first step m > n at which render_update_damping applies the next
 * damping change (its test: m k >= the change's time), or INT64_MAX. */
static int64_t next_damping_step(const render_state *rs, int64_t n)
{
    if (rs->damp_next >= rs->damp_count)
        return INT64_MAX;
    const double t = rs->damps[rs->damp_next].time_s;
    int64_t m = (int64_t)ceil(t / rs->k);
    while (m > n + 1 && (double)(m - 1) * rs->k >= t)
        m--;
    while ((double)m * rs->k < t)
        m++;
    return m > n ? m : n + 1;
}

/* At most this many steps to a call of kt_room_advance, so that the stop
 * request and the progress come as often as they did a step at a time (to
 * within a fraction of a second); a multiple of every depth the room times
 * (2, 4, 6, 8), so that its passes stay whole. */
#define RENDER_STRETCH_STEPS 48

/* The steps render_run_cpu takes from step n in one call of kt_room_advance,
 * whose blocked passes (docs/room.md, "Temporal blocking") keep the drums'
 * per-step coupling: up to the next step at which something happens
 * between two steps - a pedal's tension (every ksmps steps while the score
 * has pedals), a damping change, a snapshot's planes, the guard's check -
 * so every sample is the one of a step at a time.  1 where the render
 * steps one at a time (blocking off, a room over ranks, a snapshot next). */
static int64_t render_stretch(const render_state *rs, int64_t n, int64_t limit,
                              const int64_t *snap, int nsnap, int next)
{
    const int ksmps = rs->perf->ksmps > 0 ? rs->perf->ksmps : 1;
    if (rs->opt->block == 1 || kt_room_ranks(rs->room) > 1)
        return 1;
    int64_t end = n + RENDER_STRETCH_STEPS < limit ? n + RENDER_STRETCH_STEPS : limit;
    if (rs->perf->pedal_count > 0 && (n / ksmps + 1) * ksmps < end)
        end = (n / ksmps + 1) * ksmps;
    int64_t damp = next_damping_step(rs, n);
    end = damp < end ? damp : end;
    if (next < nsnap) {   /* a snapshot's step alone, the plane before it read first */
        int64_t before = snap[next] - 1;
        if (before <= n)
            return 1;
        end = before < end ? before : end;
    }
    if (rs->guard) {
        int64_t check = kt_guard_next_check(rs->guard, n);
        end = check < end ? check : end;
    }
    return end > n ? end - n : 1;
}

/* The blocking asked for (block), on the room with its drums: one
 * that cannot be blocked refuses a depth with the reason. */
static int set_blocking(render_state *rs, kt_score_error *err)
{
    kt_error e;
    kt_error_clear(&e);
    int rc = rs->opt->block ? kt_room_set_blocking(rs->room, rs->opt->block, 0, &e)
                                : KT_OK;
    return rc < 0 ? kt_score_fail_at(rs->perf, rs->perf->room_loc, err, rc, "--block %d: %s",
                                     rs->opt->block, e.message)
                  : KT_OK;
}

int render_run_cpu(render_state *rs, int64_t total, int64_t limit, kt_render_result *res,
               kt_score_error *err)
{
    const kt_render_options *o = rs->opt;
    const kt_performance *perf = rs->perf;
    int ksmps = perf->ksmps > 0 ? perf->ksmps : 1;
    int64_t *snap = NULL;
    int nsnap = 0, next = 0;
    int rc = render_snapshot_steps(rs, total, limit, &snap, &nsnap, err);
    if (rc == 0)
        rc = set_blocking(rs, err);
    double t0 = kt_seconds();
    int64_t start = kt_room_step_index(rs->room);   /* > 0 when resuming */
    while (next < nsnap && snap[next] <= start)
        next++;
    for (int64_t n = start, m = 1; n < limit && rc == 0; n += m) {
        if (n % ksmps == 0 && perf->pedal_count > 0)
            rc = render_update_pedals(rs, n * rs->k, err);
        if (rc == 0)
            rc = render_update_damping(rs, n, err);
        if (rc < 0)
            break;
        if (next < nsnap && snap[next] == n + 1 &&
            (rc = render_read_plane(rs, rs->plane_before, err)) < 0)
            break;
        kt_error e;
        kt_error_clear(&e);
        m = render_stretch(rs, n, limit, snap, nsnap, next);
        int st = kt_room_advance(rs->room, m, &e);
        if (st < 0)   /* the step that failed */
            n = kt_room_step_index(rs->room);
        if (st == KT_EUNSTABLE && rs->guard) {
            rc = kt_guard_unstable(rs->guard, n, e.message, err);
            break;
        }
        if (st < 0) {
            rc = kt_score_fail_at(perf, nowhere, err, st, "at %.4f s: %s", n * rs->k, e.message);
            break;
        }
        res->steps = n + m;
        if (rs->guard && (rc = kt_guard_after_step(rs->guard, n + m, err)) < 0)
            break;
        if (next < nsnap && snap[next] == n + m) {
            if ((rc = render_read_plane(rs, rs->plane_now, err)) < 0)
                break;
            res->snapshots_written += render_write_snapshot(rs, (n + m) * rs->k);
            next++;
        }
        if (o->progress && ((n + m) / 64 != n / 64 || n + m == limit) &&
            o->progress(o->user, n + m, limit))
            rc = kt_score_fail_at(perf, nowhere, err, KT_EINTR, "interrupted");
    }
    res->run_s = kt_seconds() - t0;
    res->timed_steps = res->steps;
    kt_room_timing tm;
    kt_room_get_timing(rs->room, &tm);
    res->overlapped_steps = tm.overlapped_steps;
    res->blocked_steps = tm.blocked_steps;
    const char *blocking = kt_room_blocking(rs->room);
    snprintf(res->blocking, sizeof res->blocking, "%s", blocking ? blocking : "");
    res->seconds_per_step = res->steps > 0 ? res->run_s / res->steps : 0;
    free(snap);
    return rc;
}

/* ---- checkpoints and the guard (perform/include/kt_checkpoint.h) ---- */

static void export_pedals(void *user, kt_checkpoint_drum *out, int *damp_next)
{
    const render_state *rs = user;
    for (int d = 0; d < rs->perf->drum_count; d++)
        out[d] = (kt_checkpoint_drum){rs->drums[d].tension, rs->drums[d].glide_from,
                                      rs->drums[d].pedal};
    *damp_next = rs->damp_next;
}

/* Resume: the state of the checkpoint over the freshly built room and drums. */
static int restore(render_state *rs, int64_t total, kt_score_error *err)
{
    int n = rs->perf->drum_count;
    kt_checkpoint_drum *pedals = calloc((size_t)(n ? n : 1), sizeof *pedals);
    if (!pedals)
        return kt_score_fail_at(rs->perf, nowhere, err, KT_ENOMEM, "out of memory");
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_checkpoint_restore(rs->opt->resume, rs->room, rs->timps, pedals, n,
                                   &rs->damp_next, &e);
    /* indices into this render's lists: the checkpoint is untrusted */
    if (rc == 0 && rs->damp_next > rs->damp_count)
        rc = kt_fail(&e, KT_EINVAL, "the checkpoint is damaged or forged: its damping index "
                     "(%d) is out of range (%d damping changes)", rs->damp_next, rs->damp_count);
    for (int d = 0; rc == 0 && d < n; d++) {
        int p = pedals[d].pedal;
        if (p >= rs->perf->pedal_count || (p >= 0 && rs->perf->pedals[p].drum != d))
            rc = kt_fail(&e, KT_EINVAL, "the checkpoint is damaged or forged: drum %s's pedal "
                         "index (%d) is out of range", rs->perf->drums[d].name, p);
    }
    if (rc == 0 && kt_checkpoint_total_steps(rs->opt->resume) != total)
        rc = kt_fail(&e, KT_EINVAL, "the checkpoint is damaged or forged: its total step count "
                     "(%lld) is not its score's (%lld)",
                     (long long)kt_checkpoint_total_steps(rs->opt->resume), (long long)total);
    for (int d = 0; rc == 0 && d < n; d++) {
        rs->drums[d].tension = pedals[d].tension_N_per_m;
        rs->drums[d].glide_from = pedals[d].glide_from_N_per_m;
        rs->drums[d].pedal = pedals[d].pedal;
    }
    free(pedals);
    if (rc < 0)   /* a checkpoint that does not fit its score is bad input */
        return kt_score_fail_at(rs->perf, nowhere, err, rc == KT_ENOMEM ? rc : KT_EINVAL,
                                "cannot resume: %s", e.message);
    return KT_OK;
}

static int start_guard(render_state *rs, const char *out_path, int64_t total, kt_score_error *err)
{
    int n = rs->perf->drum_count;
    rs->timps = calloc((size_t)(n ? n : 1), sizeof *rs->timps);
    if (!rs->timps)
        return kt_score_fail_at(rs->perf, nowhere, err, KT_ENOMEM, "out of memory");
    for (int d = 0; d < n; d++)
        rs->timps[d] = rs->drums[d].t;
    int rc = rs->opt->resume ? restore(rs, total, err) : KT_OK;
    if (rc == 0 && kt_guard_create(&rs->guard, rs->perf, rs->opt, out_path, total, rs->room,
                                   rs->timps, export_pedals, rs) < 0)
        rc = kt_score_fail_at(rs->perf, nowhere, err, KT_ENOMEM, "out of memory");
    return rc;
}

/* The drums' tensions: calibrated on this very room (kt_tuning.h), or the
 * formula's when asked (and for --estimate, which times steps only). */
static int tune(render_state *rs, const kt_room_params *rp, kt_render_result *res,
                kt_score_error *err)
{
    const kt_render_options *opt = rs->opt;
    kt_tuning_options to;
    kt_tuning_options_default(&to);
    to.mode = opt->tuning == KT_TUNING_MODEL || opt->estimate_steps > 0 ? KT_TUNING_MODEL
                                                                        : KT_TUNING_CALIBRATED;
    to.cache_dir = opt->tuning_cache;
    to.nthreads = opt->nthreads;
    to.note = opt->tuning_note;
    to.stop = opt->stop;
    to.user = opt->user;
    double t0 = kt_seconds();
    int rc = kt_tuning_plan(rs->perf, rp, &to, &rs->tuning, err);
    res->tuning_s = kt_seconds() - t0;
    res->tuning_runs = rs->tuning.runs;
    for (int i = 0; i < rs->tuning.target_count; i++)
        res->tuning_pitches += to.mode == KT_TUNING_CALIBRATED && rs->tuning.targets[i].asked_hz > 0;
    return rc;
}

int kt_render_split_options(const kt_performance *perf, const kt_render_options *opt,
                            kt_split_options *so, kt_error *err)
{
    kt_split_options_default(so);
    so->axis = (kt_split_axis)opt->split_axis;
    if (so->axis == KT_SPLIT_AUTO && perf->solid_count > 0)
        so->axis = KT_SPLIT_Z;
    kt_room_keep *keep = calloc((size_t)(perf->drum_count ? perf->drum_count : 1), sizeof *keep);
    if (!keep)
        return kt_fail(err, KT_ENOMEM, "out of memory");
    for (int d = 0; d < perf->drum_count; d++) {
        const kt_timpani_params *p = &perf->drums[d].params;
        double r = p->diameter_m / 2;
        snprintf(keep[d].name, sizeof keep[d].name, "drum %.50s", perf->drums[d].name);
        for (int a = 0; a < 3; a++) {
            keep[d].lo_m[a] = p->rim_centre_m[a] - r;
            keep[d].hi_m[a] = p->rim_centre_m[a] + r;
        }
    }
    so->keep = keep;
    so->keep_count = perf->drum_count;
    return KT_OK;
}

void kt_render_split_free(kt_split_options *so)
{
    free((kt_room_keep *)so->keep);
    so->keep = NULL;
    so->keep_count = 0;
}

static int create_room(render_state *rs, const kt_room_params *rp, kt_error *e)
{
    kt_split_options so;
    int rc = kt_render_split_options(rs->perf, rs->opt, &so, e);
    if (rc == KT_OK)
        rc = kt_room_create_split(rp, &so, &rs->room, e);
    kt_render_split_free(&so);
    return rc;
}

static int build(render_state *rs, kt_room_params *rp, kt_render_result *res, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    kt_error e;
    kt_error_clear(&e);
    /* under mpirun: this rank's slab of the room (kt_ranks.h) */
    int rc = create_room(rs, rp, &e);
    if (rc < 0)
        return kt_score_fail_at(perf, perf->room_loc, err, rc, "cannot create the room: %s",
                                e.message);
    res->grid = *kt_room_get_grid(rs->room);
    res->split_axis = kt_room_split_axis(rs->room);
    kt_room_set_overlap(rs->room, (kt_overlap)rs->opt->cpu_overlap);
    rs->drums = calloc((size_t)(perf->drum_count ? perf->drum_count : 1), sizeof *rs->drums);
    if (!rs->drums)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    rc = add_solids(rs, err);
    if (rc == 0)
        rc = add_mics(rs, err);
    if (rc == 0)
        rc = add_sources(rs, err);
    if (rc == 0)
        rc = add_drums(rs, res, err);
    if (rc == 0)
        rc = plan_damping(rs, err);
    if (rc == 0 && rs->opt->snapshot_count > 0)
        rc = setup_plane(rs, err);
    return rc;
}

/* The options with the orchestra's output settings in force: a gain of 0
 * means 1 / 0dbfs, an output rate of 0 the orchestra's out_sr (or sr). */
void kt_render_output_options(const kt_performance *perf, const kt_render_options *opt,
                              kt_output_options *out)
{
    *out = opt->output;
    if (!out->normalize && !(out->raw_gain > 0))
        out->raw_gain = 1.0 / (perf->full_scale_Pa > 0 ? perf->full_scale_Pa : KT_FULL_SCALE_PA);
    if (!(out->sample_rate_hz > 0))
        out->sample_rate_hz = perf->out_sample_rate_hz;
}

/* The audio's length in steps: the last event plus the tail, within what a
 * render can count and (unless overridden) an hour; errors point at the
 * statement that ends last, or at no place when the tail makes the length. */
static int render_length(const kt_performance *perf, const kt_render_options *opt, double sr,
                         kt_render_result *res, kt_score_error *err)
{
    double tail = opt->tail_s >= 0 ? opt->tail_s : KT_RENDER_DEFAULT_TAIL_S, end_s = 0;
    kt_score_loc end_loc;
    int rc = end_of_events(perf, sr, &end_s, &end_loc, err);
    if (rc < 0)
        return rc;
    kt_score_loc at = tail > end_s ? nowhere : end_loc;
    double duration_s = end_s + tail;
    if (opt->until_s > 0 && opt->until_s < duration_s)
        duration_s = opt->until_s;                   /* --until */
    double steps = ceil(duration_s * sr - 1e-9);
    if (!(steps <= KT_MAX_STEPS))
        return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                "the audio would last %g s (%.3g steps at %g Hz), more than a "
                                "render can count (2^53 steps)", duration_s, steps, sr);
    if (steps < 1)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                                "nothing to render: the score is empty and the tail is 0 s");
    if (!opt->override_limits && duration_s > KT_LIMIT_DURATION_S)
        return kt_score_fail_at(perf, at, err, KT_EINVAL,
                                "the audio would last %.1f s, over an hour (%s %.1f s); override "
                                "the limit (--override-limits) if you mean it", duration_s,
                                tail > end_s ? "the tail is" : "this ends at",
                                tail > end_s ? tail : end_s);
    res->total_steps = (int64_t)steps;
    res->duration_s = res->total_steps / sr;
    return KT_OK;
}

/* A rank's part of the checkpoint (kt_checkpoint.h): a file Kettle may
 * overwrite, its killed temporaries swept away. */
static int check_part(const kt_performance *perf, const kt_render_options *opt,
                      kt_score_error *err)
{
    if (!opt->checkpoint_path)
        return KT_OK;
    char part[KT_SCORE_PATH_MAX + 16];
    kt_checkpoint_part_path(opt->checkpoint_path, kt_mpi_rank(), part, sizeof part);
    kt_error e;
    kt_error_clear(&e);
    if (kt_checkpoint_check_path(part, &e) < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL, "%s", e.message);
    if (opt->estimate_steps <= 0)
        kt_file_sweep_temps(part);
    return KT_OK;
}

/* What the render will write, checked before its first step (and by
 * --estimate): the output's format, folder and disk, the checkpoint's path
 * (Kettle overwrites only its own checkpoints) and the snapshots' folder.
 * Then a real render sweeps away the temporaries that killed runs left
 * beside them (kt_files.h).  Over ranks rank 0 writes the audio and the
 * snapshots, every rank its part of the checkpoint. */
static int check_files(const kt_performance *perf, const char *out_path,
                       const kt_render_options *opt, int64_t frames, kt_score_error *err)
{
    if (kt_mpi_rank() > 0)
        return check_part(perf, opt, err);
    if (!out_path)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL, "no output file named");
    const char **names = malloc((size_t)(perf->mic_count ? perf->mic_count : 1) * sizeof *names);
    if (!names)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOMEM, "out of memory");
    for (int m = 0; m < perf->mic_count; m++)
        names[m] = perf->mics[m].name;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_output_check(out_path, &opt->output, names, perf->mic_count, frames, &e);
    free(names);
    if (rc == 0 && opt->checkpoint_path)
        rc = kt_checkpoint_check_path(opt->checkpoint_path, &e);
    char path[KT_SCORE_PATH_MAX + 64];
    if (rc == 0 && opt->snapshot_count > 0 && opt->snapshot_stem) {
        snprintf(path, sizeof path, "%s_t0.png", opt->snapshot_stem);
        rc = kt_file_check_writable(path, 0, "the snapshot", &e);
    }
    if (rc < 0)
        return kt_score_fail_at(perf, nowhere, err, rc, "%s", e.message);
    if (opt->estimate_steps > 0)
        return KT_OK;
    /* "dir/take.wav" -> "dir/take": the output, its per-microphone and
     * partial files, its default checkpoint */
    snprintf(path, sizeof path, "%s", out_path);
    char *dot = strrchr(path, '.');
    if (dot && !strchr(dot, '/'))
        *dot = '\0';
    kt_file_sweep_temps(path);
    if (opt->checkpoint_path)
        kt_file_sweep_temps(opt->checkpoint_path);
    if (opt->snapshot_count > 0 && opt->snapshot_stem)
        kt_file_sweep_temps(opt->snapshot_stem);
    return KT_OK;
}

/* The microphones' signals, gathered on rank 0, into audio. */
static int keep_in_memory(const kt_room *room, double rate_hz, kt_render_audio *audio)
{
    audio->channels = kt_room_mic_count(room);
    audio->sample_rate_hz = rate_hz;
    audio->frames = 0;
    if (audio->channels > 0)
        kt_room_mic_signal(room, 0, &audio->frames);
    size_t n = (size_t)audio->channels * (size_t)audio->frames;
    audio->pascals = malloc((n ? n : 1) * sizeof *audio->pascals);
    if (!audio->pascals)
        return KT_ENOMEM;
    for (int c = 0; c < audio->channels; c++) {
        int64_t frames = 0;
        const double *x = kt_room_mic_signal(room, c, &frames);
        memcpy(audio->pascals + (size_t)c * (size_t)audio->frames, x,
               (size_t)frames * sizeof *x);
    }
    return KT_OK;
}

/* The end of a render: the file written, or the signals kept in audio. */
static int deliver(render_state *rs, const char *out_path, kt_render_audio *audio,
                   kt_render_result *res, kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    res->summary = calloc((size_t)(res->channels ? res->channels : 1), sizeof *res->summary);
    kt_error e;
    kt_error_clear(&e);
    /* a room over ranks: the signals meet on rank 0, which alone writes */
    int rc = res->summary ? kt_room_collect(rs->room, &e) : KT_ENOMEM;
    if (rc == 0 && kt_room_rank(rs->room) == 0 && audio)
        rc = keep_in_memory(rs->room, res->sample_rate_hz, audio);
    else if (rc == 0 && kt_room_rank(rs->room) == 0 &&
             (rc = kt_room_write_audio(rs->room, out_path, &rs->opt->output, res->summary,
                                       &e)) < 0)
        kt_guard_output_failed(rs->guard);
    if (rc < 0 && e.message[0])
        return kt_score_fail_at(perf, nowhere, err, rc, "cannot write the audio: %s", e.message);
    if (rc < 0)
        return kt_score_fail_at(perf, nowhere, err, rc, "cannot write %s: %s",
                                out_path ? out_path : "the audio", kt_status_name(rc));
    return KT_OK;
}

/* kt_render and kt_render_to_memory: out_path names the file, or audio
 * (out_path NULL) takes the signals. */
static int render(const kt_performance *perf, const char *out_path, kt_render_audio *audio,
                  const kt_render_options *given, kt_render_result *res, kt_score_error *err)
{
    memset(res, 0, sizeof *res);
    kt_render_options resolved = *given;
    const kt_render_options *opt = &resolved;
    kt_render_output_options(perf, given, &resolved.output);
    kt_error e;
    kt_error_clear(&e);
    if (kt_threads_check(opt->nthreads, &e) < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL, "%s", e.message);
    if (kt_mpi_size() > 1 && opt->device == KT_DEVICE_GPU && !kt_gpu_job_compiled())
        return kt_score_fail_at(perf, nowhere, err, KT_ENOTSUP,
                                "a render over %d ranks on GPUs needs a build with CUDA and "
                                "NCCL; use --device cpu", kt_mpi_size());
    int gpu = 0, rc = render_choose_device(perf, opt, &gpu, res, err);
    if (rc < 0)
        return rc;
    kt_room_params rp;
    kt_render_room_params(perf, opt, &rp);
    res->sample_rate_hz = rp.sample_rate_hz;
    res->output_rate_hz = opt->output.sample_rate_hz > 0 ? opt->output.sample_rate_hz
                                                         : rp.sample_rate_hz;
    rc = kt_performance_check(perf, &rp, err);
    if (rc < 0)
        return rc;
    if (kt_output_rate_check(&opt->output, rp.sample_rate_hz, &e) < 0)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL, "%s", e.message);
    rc = render_length(perf, opt, rp.sample_rate_hz, res, err);
    if (rc == 0)
        rc = kt_render_check_limits(perf, &rp, opt, res->total_steps, err);
    if (rc == 0 && !audio)
        rc = check_files(perf, out_path, opt, res->total_steps, err);
    if (rc < 0)
        return rc;

    render_state rs;
    memset(&rs, 0, sizeof rs);
    rs.perf = perf;
    rs.opt = opt;
    rs.k = 1.0 / rp.sample_rate_hz;
    rs.gpu = gpu;
    double t0 = kt_seconds();
    rc = tune(&rs, &rp, res, err);
    if (rc == 0)
        rc = build(&rs, &rp, res, err);
    if (rc == 0)
        rc = start_guard(&rs, out_path, res->total_steps, err);
    if (rc == 0)
        rc = render_start_device(&rs, gpu, res, err);
    res->setup_s = kt_seconds() - t0;
    int64_t limit = res->total_steps;
    if (rc == 0 && opt->estimate_steps > 0 && opt->estimate_steps < limit)
        limit = opt->estimate_steps;
    if (rc == 0)
        rc = render_run_on_device(&rs, res->total_steps, limit, res, err);
    res->estimated_wall_s = res->setup_s + res->seconds_per_step * res->total_steps;
    res->channels = rs.room ? kt_room_mic_count(rs.room) : 0;
    if (rc == 0 && opt->estimate_steps <= 0)
        rc = deliver(&rs, out_path, audio, res, err);
    rc = kt_guard_finish(rs.guard, rc, res);
    kt_guard_destroy(rs.guard);
    free(rs.timps);
    render_stop_device(&rs);
    if (rs.room)
        kt_room_destroy(rs.room);  /* also destroys the drums it owns */
    free(rs.drums);
    kt_tuning_free(&rs.tuning);
    free(rs.damps);
    free(rs.plane_before);
    free(rs.plane_now);
    free(rs.plane_air);
    return rc;
}

int kt_render(const kt_performance *perf, const char *out_path, const kt_render_options *opt,
              kt_render_result *res, kt_score_error *err)
{
    return render(perf, out_path, NULL, opt, res, err);
}

int kt_render_to_memory(const kt_performance *perf, const kt_render_options *opt,
                        kt_render_audio *audio, kt_render_result *res, kt_score_error *err)
{
    memset(audio, 0, sizeof *audio);
    memset(res, 0, sizeof *res);
    if (opt->checkpoint_path || opt->resume)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                                "a render into memory takes no checkpoint and resumes none: "
                                "render to a file for that");
    if (opt->estimate_steps > 0)
        return kt_score_fail_at(perf, nowhere, err, KT_EINVAL,
                                "an estimate renders no audio: use kt_render for it");
    int rc = render(perf, NULL, audio, opt, res, err);
    if (rc < 0)
        kt_render_audio_free(audio);
    return rc;
}

void kt_render_audio_free(kt_render_audio *audio)
{
    free(audio->pascals);
    memset(audio, 0, sizeof *audio);
}
