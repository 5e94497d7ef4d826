/* kt_render.h - rendering a performance (perform/render.c; docs/render.md):
 * the options, the room and output a render makes, and its result. */
#ifndef KT_RENDER_H
#define KT_RENDER_H

#include "kt_score.h"

#ifdef __cplusplus
extern "C" {
#endif

/* auto: the GPU when the build has CUDA, a device of compute capability 9.0
 * or newer is present and it takes the room (room/include/kt_cuda_room.h), else the CPU;
 * gpu: the GPU or an error (KT_ENOTSUP). */
typedef enum kt_device { KT_DEVICE_AUTO = 0, KT_DEVICE_CPU, KT_DEVICE_GPU } kt_device;

/* Progress: steps done of total; return non-zero to stop (kt_render then
 * returns KT_EINTR and writes nothing). */
typedef int (*kt_render_progress_fn)(void *user, int64_t done, int64_t total);

typedef struct kt_render_options {
    double sample_rate_hz;         /* > 0: overrides the orchestra's sr */
    int precision;                 /* -1: the orchestra's; else a kt_precision */
    int format;                    /* -1: auto; else a kt_timpani_format for every drum */
    kt_device device;
    int nthreads;                  /* <= 0: all cores */
    double tail_s;                 /* ring-out after the last event; < 0: default */
    double until_s;                /* > 0: stop after this much audio (kettle render --until) */
    kt_output_options output;
    int64_t estimate_steps;        /* > 0: only time this many steps, write nothing */
    int estimate_steady;           /* with estimate_steps, on the GPU: run two chunks of steps
                                      and time the second (kettle render --estimate) */
    int cpu_overlap;               /* on the CPU, how the drums of a step share the threads
                                      (a kt_overlap, the same samples): beside each other
                                      and the air where the room allows (default), beside
                                      each other, or every stage in turn */
    int block;                     /* temporal blocking of the air (the same samples): 0
                                      several steps per pass where the room allows, depth
                                      and tile timed (default); 1 off; 2..8 that depth
                                      (2..4 on the GPU; kettle render --block) */
    int split_axis;                /* over ranks, the axis the room is cut along (a
                                      kt_split_axis; default KT_SPLIT_AUTO: the smallest
                                      halo whose cuts keep clear of the drums) */
    const double *snapshot_times_s;/* pictures of the pressure field at these times */
    int snapshot_count;
    int snapshot_axis;             /* plane x = pos (0), y = pos (1) or z = pos (2) */
    double snapshot_position_m;
    const char *snapshot_stem;     /* files STEM_t0.0100s.png */
    kt_render_progress_fn progress;
    void *user;
    /* Nothing lost, nothing crashes (perform/include/kt_checkpoint.h, docs/render.md). */
    const char *checkpoint_path;   /* checkpoints go here; NULL: none */
    double checkpoint_every_s;     /* wall-clock seconds between them; <= 0: only when stopped */
    int (*stop)(void *user);       /* polled every step (with the CPU's blocked passes,
                                      every 48 at most); non-zero: finish the step, write a
                                      checkpoint and the partial audio, return KT_EINTR */
    void (*warn)(void *user, const char *message);  /* a problem the render goes on
                                      through (a checkpoint it cannot write), as it happens;
                                      NULL: not told */
    const struct kt_checkpoint *resume;  /* continue from this (kt_checkpoint_open), or NULL */
    int override_limits;           /* 1: allow > 1 hour, > 64 drums, sr > 384 kHz */
    int clipping_fails;            /* 1: a channel that clipped makes `kettle render` exit 3
                                      (the library only counts, kt_channel_summary) */
    int check_every_steps;         /* stability check period; 0: default (256), < 0: never */
    /* The air, overriding the orchestra's `scheme =` and `walls =`. */
    int scheme;                    /* -1: the orchestra's; else a kt_air_scheme */
    int stencil_family, stencil_reach;  /* with KT_SCHEME_STENCIL */
    int wall_model;                /* -1: the orchestra's; else a kt_wall_model */
    /* Tuning (perform/include/kt_tuning.h): pitches calibrated on the room that runs. */
    int tuning;                    /* a kt_tuning_mode: 0 calibrated (default), 1 formula */
    const char *tuning_cache;      /* NULL: $XDG_CACHE_HOME/kettle; "": no cache */
    void (*tuning_note)(void *user, const char *line);  /* what the tuner does (user) */
} kt_render_options;

/* The room a render makes: the orchestra's, with the options' sample rate,
 * precision, scheme and walls in force. */
void kt_render_room_params(const kt_performance *perf, const kt_render_options *opt,
                           kt_room_params *room);
/* How a render splits its room over ranks (kt_split_options of kt_ranks.h,
 * an in-tree header): the options' axis (z for a room with solids when it
 * is left to choose) and each drum's membrane square kept clear of cuts
 * along x and y.  so->keep is allocated: kt_render_split_free. */
struct kt_split_options;
int kt_render_split_options(const kt_performance *perf, const kt_render_options *opt,
                            struct kt_split_options *so, kt_error *err);
void kt_render_split_free(struct kt_split_options *so);
/* The output options a render uses: the options' own, with the orchestra's
 * 0dbfs and out_sr where they leave the gain or the rate open (0). */
void kt_render_output_options(const kt_performance *perf, const kt_render_options *opt,
                              kt_output_options *out);

#define KT_RENDER_DEFAULT_TAIL_S 1.5

typedef struct kt_render_result {
    kt_room_grid grid;
    double sample_rate_hz;         /* the simulation's */
    double output_rate_hz;         /* the files' (out_sr, --out-sr; else the simulation's) */
    double duration_s;             /* audio written (or that would be) */
    int64_t steps, total_steps;
    double setup_s, run_s;         /* wall-clock: building room and drums; stepping */
    double tuning_s;               /* of setup_s: tuning the drums (kt_tuning.h) */
    int tuning_runs, tuning_pitches;  /* runs it made; pitches it tuned */
    double seconds_per_step;       /* measured over timed_steps of the steps run */
    int64_t timed_steps;           /* all of them, but a GPU --estimate's second chunk */
    int64_t overlapped_steps;      /* on the CPU, those split over the threads (cpu_overlap) */
    int64_t blocked_steps;         /* on the CPU, those taken in blocked passes (block) */
    char blocking[192];            /* the air's temporal blocking, as chosen: "off", the
                                      depth, tile and the drums' planes, or "" before the
                                      choice was made */
    int split_axis;                /* over ranks, the axis the room was cut along (0-2) */
    double estimated_wall_s;       /* setup + total_steps * seconds_per_step */
    int channels;
    kt_channel_summary *summary;   /* one per microphone (kt_render_result_free) */
    int snapshots_written;
    int timpani_format;            /* the format the drums used */
    char device[256];              /* where it ran: "CPU", "GPU <name>", or "CPU (why not
                                      the GPU)" under --device auto */
    int checkpoints_written;
    char partial_path[KT_SCORE_PATH_MAX + 16];  /* audio so far of a stopped or failed
                                                   render, "" if none was written */
} kt_render_result;

void kt_render_options_default(kt_render_options *o);
/* Render the performance to out_path (WAV/FLAC by extension; written whole
 * to a temporary and renamed).  Errors that belong to a statement (a drum
 * that cannot be created, a strike off its head, an unreadable sound file)
 * point at that statement's line. */
int kt_render(const kt_performance *perf, const char *out_path, const kt_render_options *opt,
              kt_render_result *res, kt_score_error *err);
void kt_render_result_free(kt_render_result *res);

/* A render's microphones in memory: the pressure in pascals at the
 * simulation's rate, one channel after another (pascals[c * frames + i]),
 * channel c being the orchestra's microphone c. */
typedef struct kt_render_audio {
    int channels;
    int64_t frames;
    double sample_rate_hz;
    double *pascals;
} kt_render_audio;
/* kt_render into memory instead of a file (notebooks, the Python module):
 * the signals are the computed ones, before the output options (gain,
 * normalisation, out_sr) that shape a file, so res->summary (of what a file
 * holds) stays zero.  A render into memory takes no checkpoint and resumes
 * none (KT_EINVAL).  audio is cleared on failure. */
int kt_render_to_memory(const kt_performance *perf, const kt_render_options *opt,
                        kt_render_audio *audio, kt_render_result *res, kt_score_error *err);
void kt_render_audio_free(kt_render_audio *audio);
/* The format "auto" chooses. */
kt_timpani_format kt_render_auto_format(void);

#ifdef __cplusplus
}
#endif

#endif
