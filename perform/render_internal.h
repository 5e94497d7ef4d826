/* render_internal.h - the renderer's state, shared by render.c (building the
 * room and the CPU run), render_gpu.c (the run on the GPU and the choice of
 * device) and nothing else. */
#ifndef RENDER_INTERNAL_H
#define RENDER_INTERNAL_H

#include "kt_guard.h"
#include "kt_score.h"
#include "kt_tuning.h"

#include <stdint.h>

/* A drum in the room and its pedal state. */
typedef struct drum_state {
    kt_timpani *t;
    double tension;                 /* what it has now */
    double glide_from;              /* tension when the current pedal began */
    int pedal;                      /* index of the active or next pedal, -1 none */
} drum_state;

/* A change of a drum's damping (p8): the damper goes on at the end of a
 * note and comes off when that drum is next struck. */
typedef struct damp_event {
    double time_s;
    int drum, strike;               /* strike: the note it comes from, for messages */
    double sigma0_per_s;            /* 0: lifted */
} damp_event;

typedef struct render_state {
    const kt_performance *perf;
    const kt_render_options *opt;
    kt_room *room;
    drum_state *drums;
    damp_event *damps;              /* sorted by time */
    int damp_count, damp_next;
    double k;
    double *plane_before, *plane_now;
    uint8_t *plane_air;                /* 1 where the plane is air (solids drawn grey) */
    int plane_w, plane_h, plane_index;
    struct kt_cuda_mirror *mirror;  /* the room on the GPU, or NULL: on the CPU */
    int gpu;                        /* the GPU was chosen (render_choose_device) */
    kt_render_guard *guard;         /* checks, checkpoints, stop (render_guard.c) */
    kt_timpani **timps;             /* the drums, for the guard */
    kt_tuning tuning;               /* tensions and tuning curves */
} render_state;

/* render.c: what the CPU and GPU runs share. */
int render_update_pedals(render_state *rs, double t, kt_score_error *err);
int render_update_damping(render_state *rs, int64_t n, kt_score_error *err);
int render_snapshot_steps(const render_state *rs, int64_t total, int64_t limit, int64_t **out,
                          int *count, kt_score_error *err);
int render_read_plane(render_state *rs, double *out, kt_score_error *err);
/* The picture of the plane at time t: 1 if written, 0 if not (warned through
 * opt->warn: a snapshot that cannot be written does not end the render). */
int render_write_snapshot(render_state *rs, double t);
int render_run_cpu(render_state *rs, int64_t total, int64_t limit, kt_render_result *res,
                   kt_score_error *err);

/* render_gpu.c: the device a render runs on, and its run. */
int render_choose_device(const kt_performance *perf, const kt_render_options *opt, int *gpu,
                         kt_render_result *res, kt_score_error *err);
int render_start_device(render_state *rs, int gpu, kt_render_result *res, kt_score_error *err);
int render_run_on_device(render_state *rs, int64_t total, int64_t limit, kt_render_result *res,
                         kt_score_error *err);
void render_stop_device(render_state *rs);

#endif
