/* render_gpu.c - where a render runs (--device auto|cpu|gpu) and its run on
 * the GPU: the whole room mirrored on the device (room/include/kt_cuda_room.h), stepped
 * from event to event (pedal or damping changes, snapshots, the guard's
 * checks, progress) while the CPU drums keep the score's state. */
#include "render_internal.h"
#include "kt_config.h"
#include "kt_ranks.h"
#if KETTLE_CUDA_ENABLED
#include "kt_cuda_room.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kt_score_loc nowhere = {-1, 0, 0};

#if KETTLE_CUDA_ENABLED
/* Steps between progress reports, stability checks and chances to stop on
 * the GPU: GPU_CHUNK_BLOCKS of the mirror's microphone blocks (2880 steps,
 * 65 ms at 44.1 kHz) rounded up to whole check periods, so that every stop
 * at a multiple of it is one of the guard's checks.  Each check brings the
 * fields to the host and scans them there while the GPU waits, ~8 ms for the
 * demo's room on the H100 machine: once a block, that was a tenth of the
 * render's wall time (10.6 s of audio: 11.3 s, with four blocks 10.3 s). */
#define GPU_CHUNK_BLOCKS 4
static int64_t gpu_chunk_steps(const kt_render_options *o)
{
    const int64_t base = GPU_CHUNK_BLOCKS * KT_CUDA_MIRROR_BLOCK;
    int every = o->check_every_steps == 0 ? KT_GUARD_CHECK_STEPS : o->check_every_steps;
    return every > 0 ? (base + (int64_t)every - 1) / every * every : base;
}

/* The first multiple m >= n of ksmps at which update_pedals may change a
 * tension: from a glide's start to the first multiple past its end, and one
 * more for rounding.  The CPU's calls at the other multiples change nothing,
 * so the GPU skips them.  INT64_MAX: no more. */
static int64_t next_pedal_step(const render_state *rs, int64_t n, int ksmps)
{
    const kt_performance *perf = rs->perf;
    int64_t first = (n + ksmps - 1) / ksmps * ksmps, best = INT64_MAX;
    for (int i = 0; i < perf->pedal_count; i++) {
        const kt_score_pedal *p = &perf->pedals[i];
        int64_t m = ((int64_t)floor(p->start_s / rs->k) / ksmps - 1) * ksmps;
        if (m < first)
            m = first;
        while (m * rs->k < p->start_s)   /* the CPU's test, t = n * k */
            m += ksmps;
        if ((m - 2 * ksmps) * rs->k <= p->start_s + p->duration_s && m < best)
            best = m;
    }
    return best;
}

/* The first step m >= n at which a drum's coefficients may change: a pedal
 * update or a damping change (update_damping's test, n k >= its time). */
static int64_t next_drum_event(const render_state *rs, int64_t n, int ksmps)
{
    int64_t best = rs->perf->pedal_count > 0 ? next_pedal_step(rs, n, ksmps) : INT64_MAX;
    if (rs->damp_next < rs->damp_count) {
        double t = rs->damps[rs->damp_next].time_s;
        int64_t m = (int64_t)ceil(t / rs->k) - 1;
        if (m < n)
            m = n;
        while ((double)m * rs->k < t)
            m++;
        if (m < best)
            best = m;
    }
    return best;
}

static int gpu_fail(const render_state *rs, int64_t n, int rc, const kt_error *e,
                    kt_score_error *err)
{
    return kt_score_fail_at(rs->perf, nowhere, err, rc, "at %.4f s (GPU): %s", n * rs->k,
                            e->message);
}

/* Psi^n on the snapshot plane: the fields come back from the device first. */
static int gpu_read_plane(render_state *rs, int64_t n, double *out, kt_score_error *err)
{
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_cuda_mirror_download(rs->mirror, &e);
    if (rc < 0)
        return gpu_fail(rs, n, rc, &e, err);
    return render_read_plane(rs, out, err);
}

/* Pedals and damping at step n on the CPU drums, as render_run_cpu() does them, then
 * the drums' coefficients to the device. */
static int gpu_drums(render_state *rs, int64_t n, int ksmps, kt_score_error *err)
{
    int rc = KT_OK;
    if (n % ksmps == 0 && rs->perf->pedal_count > 0)
        rc = render_update_pedals(rs, n * rs->k, err);
    if (rc == 0)
        rc = render_update_damping(rs, n, err);
    if (rc < 0)
        return rc;
    kt_error e;
    kt_error_clear(&e);
    rc = kt_cuda_mirror_update_drums(rs->mirror, &e);
    return rc < 0 ? gpu_fail(rs, n, rc, &e, err) : KT_OK;
}

/* Where the GPU loop is: snapshot steps (the next is snap[next]) and the
 * next step at which the drums may change. */
typedef struct gpu_run {
    int64_t *snap;
    int nsnap, next, ksmps;
    int64_t drums, chunk;
} gpu_run;

/* Work at step n before stepping on: pedals and damping, the first field
 * of a snapshot at n + 1. */
static int gpu_before(render_state *rs, gpu_run *g, int64_t n, kt_score_error *err)
{
    int rc = KT_OK;
    if (n == g->drums) {
        rc = gpu_drums(rs, n, g->ksmps, err);
        g->drums = next_drum_event(rs, n + 1, g->ksmps);
    }
    if (rc == 0 && g->next < g->nsnap && g->snap[g->next] == n + 1)
        rc = gpu_read_plane(rs, n, rs->plane_before, err);
    return rc;
}

/* The step after n to run to: the next pedal or damping change, either side
 * of a snapshot, a progress report or the end. */
static int64_t gpu_stop(const gpu_run *g, int64_t n, int64_t limit)
{
    int64_t stop = (n / g->chunk + 1) * g->chunk;
    if (g->next < g->nsnap) {
        int64_t s = g->snap[g->next], at = s - 1 > n ? s - 1 : s; /* its two fields */
        if (at < stop)
            stop = at;
    }
    if (g->drums < stop)
        stop = g->drums;
    return stop < limit ? stop : limit;
}

/* Work at step n after stepping, as render_run_cpu() does it: the guard (checks,
 * checkpoints, the stop request), a snapshot's second field and its
 * picture, the progress report. */
static int gpu_after(render_state *rs, gpu_run *g, int64_t n, int64_t limit,
                     kt_render_result *res, kt_score_error *err)
{
    const kt_render_options *o = rs->opt;
    int rc = rs->guard ? kt_guard_after_step(rs->guard, n, err) : KT_OK;
    if (rc == 0 && g->next < g->nsnap && g->snap[g->next] == n) {
        rc = gpu_read_plane(rs, n, rs->plane_now, err);
        if (rc == 0)
            res->snapshots_written += render_write_snapshot(rs, n * rs->k);
        g->next++;
    }
    if (rc == 0 && o->progress && (n % g->chunk == 0 || n == limit) &&
        o->progress(o->user, n, limit))
        rc = kt_score_fail_at(rs->perf, nowhere, err, KT_EINTR, "interrupted");
    return rc;
}

/* render_run_cpu() on the GPU: kt_cuda_mirror_run from event to event (the CPU drums
 * keep the pedal and damping state and pass their coefficients on; the
 * microphone signals arrive in the CPU room), and the fields back into the
 * CPU room at the end. */
static int run_gpu(render_state *rs, int64_t total, int64_t limit, kt_render_result *res,
                   kt_score_error *err)
{
    const kt_performance *perf = rs->perf;
    int64_t n = kt_room_step_index(rs->room);   /* > 0 when resuming */
    gpu_run g = {NULL, 0, 0, perf->ksmps > 0 ? perf->ksmps : 1, 0, gpu_chunk_steps(rs->opt)};
    int rc = render_snapshot_steps(rs, total, limit, &g.snap, &g.nsnap, err);
    while (g.next < g.nsnap && g.snap[g.next] <= n)
        g.next++;
    g.drums = next_drum_event(rs, n, g.ksmps);
    /* --estimate times the steady state: a first chunk pays the graphs'
     * captures and is left out, the second (a guard check included) is timed
     * (300 steps with the captures predicted twice the hall's real time). */
    const int estimating = rs->opt->estimate_steps > 0 && rs->opt->estimate_steady;
    if (estimating)
        limit = n + 2 * g.chunk < total ? n + 2 * g.chunk : total;
    double t0 = kt_seconds(), t_timed = t0;
    int64_t n_timed = n;
    kt_error e;
    kt_error_clear(&e);
    while (rc == 0 && n < limit) {
        rc = gpu_before(rs, &g, n, err);
        int64_t stop = gpu_stop(&g, n, limit);
        int st = rc == 0 ? kt_cuda_mirror_run(rs->mirror, stop - n, &e) : KT_OK;
        if (st == KT_EUNSTABLE && rs->guard)   /* the room's index: the failed step */
            rc = kt_guard_unstable(rs->guard, kt_room_step_index(rs->room), e.message, err);
        else if (st < 0)
            rc = gpu_fail(rs, n, st, &e, err);
        if (rc < 0)
            break;
        n = res->steps = stop;
        rc = gpu_after(rs, &g, n, limit, res, err);
        if (estimating && n_timed < g.chunk && n >= g.chunk && n < limit) {
            int sy = rc == 0 ? kt_cuda_sync(&e) : KT_OK;   /* the first chunk's work done */
            if (sy < 0)
                rc = gpu_fail(rs, n, sy, &e, err);
            t_timed = kt_seconds();
            n_timed = n;
        }
    }
    int st = rc == 0 ? kt_cuda_mirror_download(rs->mirror, &e) : KT_OK;
    if (st < 0)
        rc = gpu_fail(rs, n, st, &e, err);
    double t1 = kt_seconds();
    const char *blocking = kt_cuda_mirror_blocking(rs->mirror);
    snprintf(res->blocking, sizeof res->blocking, "%s", blocking ? blocking : "");
    res->run_s = t1 - t0;
    res->timed_steps = res->steps - n_timed;
    res->seconds_per_step = res->timed_steps > 0 ? (t1 - t_timed) / res->timed_steps : 0;
    free(g.snap);
    return rc;
}

/* The room, its microphones, sources, drums and strikes (and, on a resume,
 * the state restored into them) onto the GPU.
 * Under --device auto a room the GPU cannot take (too big, an instrument
 * with no GPU form, a solver it lacks) renders on the CPU, and
 * res->device says why. */
static int gpu_sync(void *user, kt_error *err)
{
    const render_state *rs = user;
    return kt_cuda_mirror_download(rs->mirror, err);
}

/* Every GPU rank has room for its slab, or every rank refuses (before any
 * allocation, so none waits on a rank that failed). */
static int ranks_fit(const render_state *rs, kt_error *e)
{
    kt_room_params rp;
    kt_render_room_params(rs->perf, rs->opt, &rp);
    kt_room_split sp;
    kt_split_options so;
    size_t free_bytes = 0;
    int rc = kt_render_split_options(rs->perf, rs->opt, &so, e);
    so.axis = (kt_split_axis)kt_room_split_axis(rs->room);   /* as the room was split */
    if (rc == KT_OK)
        rc = kt_room_split_plan(&rp, kt_room_ranks(rs->room), &so, &sp, e);
    kt_render_split_free(&so);
    if (rc == KT_OK)
        rc = kt_cuda_memory(&free_bytes, NULL, e);
    int bad = rc < 0 || sp.device_bytes_max > free_bytes;
    if (kt_mpi_max(bad) == 0)
        return KT_OK;
    if (rc < 0)
        return rc;
    if (bad)
        return kt_fail(e, KT_ENOMEM, "the room's slab needs %.2f GiB on each of %d GPUs, "
                       "%.2f GiB free on this one", sp.device_bytes_max / 1073741824.0,
                       sp.ranks, free_bytes / 1073741824.0);
    return kt_fail(e, KT_ENOMEM, "another GPU has no room for its slab of the room (%.2f GiB)",
                   sp.device_bytes_max / 1073741824.0);
}

static int start_gpu(render_state *rs, kt_render_result *res, kt_score_error *err)
{
    kt_error e;
    kt_error_clear(&e);
    /* a room over ranks: the GPUs' NCCL job (joined already under --gpus),
     * and a refusal on every rank when one GPU lacks room for its slab */
    int rc = kt_room_ranks(rs->room) > 1 ? kt_gpu_job_ensure(&e) : KT_OK;
    if (rc == KT_OK && kt_room_ranks(rs->room) > 1)
        rc = ranks_fit(rs, &e);
    if (rc == KT_OK)
        rc = kt_cuda_mirror_create(rs->room, &rs->mirror, &e);
    if (rc == KT_OK && rs->opt->block) { /* --block: off, or a depth (a refusal says why) */
        kt_error b;
        rc = kt_cuda_mirror_set_blocking(rs->mirror, rs->opt->block, 0, &b);
        if (rc < 0 && rs->opt->device == KT_DEVICE_GPU)
            return kt_score_fail_at(rs->perf, rs->perf->room_loc, err, rc, "--block %d: %s",
                                    rs->opt->block, b.message);
        if (rc < 0) { /* --device auto: the CPU may take the depth (up to 8) */
            kt_cuda_mirror_free(rs->mirror);
            rs->mirror = NULL;
            kt_fail(&e, rc, "--block %d: %s", rs->opt->block, b.message);
        }
    }
    if (rc == KT_OK && rs->guard)
        /* fields home before checks, which fall on the chunks' ends */
        kt_guard_set_sync(rs->guard, gpu_sync, rs, gpu_chunk_steps(rs->opt));
    if (rc == KT_OK)
        return KT_OK;
    if (rs->opt->device == KT_DEVICE_GPU)
        return kt_score_fail_at(rs->perf, nowhere, err, rc, "cannot render on the %s: %s",
                                res->device, e.message);
    char gpu[sizeof res->device];
    memcpy(gpu, res->device, sizeof gpu);
    snprintf(res->device, sizeof res->device, "CPU (the %.100s cannot take this piece: %.120s)",
             gpu, e.message);
    return KT_OK;
}
#endif

/* Where the render runs, said in res->device: --device cpu; gpu, or
 * KT_ENOTSUP when the build or the machine has none; auto, the GPU when one
 * is present.  *gpu = 1 for the GPU. */
int render_choose_device(const kt_performance *perf, const kt_render_options *opt, int *gpu,
                         kt_render_result *res, kt_score_error *err)
{
    *gpu = 0;
    if (opt->device == KT_DEVICE_CPU) {
        snprintf(res->device, sizeof res->device, "CPU");
        return KT_OK;
    }
    char why[200] = "this build has no CUDA backend";
    const char *hint = " (configure with -DKETTLE_CUDA=ON where the CUDA toolkit is)";
#if KETTLE_CUDA_ENABLED
    kt_gpu_info info;
    int count = kt_cuda_devices(&info, 1);
    if (count > 0 && info.compute_major >= 9) {
        *gpu = 1;
        snprintf(res->device, sizeof res->device, "GPU %s", info.name);
        return KT_OK;
    }
    if (count > 0)
        snprintf(why, sizeof why, "GPU %.120s has compute capability %d.%d; the drum kernel "
                 "needs 9.0 or newer", info.name, info.compute_major, info.compute_minor);
    else
        snprintf(why, sizeof why, "no GPU found");
    hint = "";
#endif
    if (opt->device == KT_DEVICE_GPU)
        return kt_score_fail_at(perf, nowhere, err, KT_ENOTSUP,
                                "--device gpu: %s%s; use --device cpu or auto", why, hint);
    snprintf(res->device, sizeof res->device, "CPU (%s)", why);
    return KT_OK;
}

/* The mirror for a GPU render (after build(): everything is in the room). */
int render_start_device(render_state *rs, int gpu, kt_render_result *res, kt_score_error *err)
{
#if KETTLE_CUDA_ENABLED
    if (gpu)
        return start_gpu(rs, res, err);
#endif
    (void)rs, (void)gpu, (void)res, (void)err;
    return KT_OK;
}

int render_run_on_device(render_state *rs, int64_t total, int64_t limit, kt_render_result *res,
                         kt_score_error *err)
{
#if KETTLE_CUDA_ENABLED
    if (rs->mirror)
        return run_gpu(rs, total, limit, res, err);
#endif
    return render_run_cpu(rs, total, limit, res, err);
}

void render_stop_device(render_state *rs)
{
#if KETTLE_CUDA_ENABLED
    kt_cuda_mirror_free(rs->mirror);
    rs->mirror = NULL;
#endif
    (void)rs;
}

