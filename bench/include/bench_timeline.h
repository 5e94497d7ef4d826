/* bench_timeline.h - a per-kernel GPU timeline of the render's steady-state
 * step (`kettle bench section --gpu --timeline`, issue 21): what ran on the
 * device, on which stream, when, and so what bounds the step.
 *
 * Three parts: the records (one kernel, copy or fill on the device, as
 * CUPTI's Activity API reports it: bench/gpu/timeline_cupti.cu), their
 * analysis (bench_timeline.c: a pure function from records to steps, the
 * drums' chains, idle gaps and the median step; tested on the CPU with
 * made-up records), and a render that records them (bench_timeline_render.c).
 *
 * Steps.  A step begins where the air's sweep kernel begins: the one kernel
 * every step of every room launches once, first, on the room's stream, and
 * the only one whose name says "sweep".  Records are put in launch order (the
 * launch's correlation id, then the node id inside a CUDA graph, whose
 * replays all share the graph launch's correlation id), and a step holds the
 * records launched from its sweep to the next.  Launch order, not start
 * time, because a drum's last kernel may start after the next sweep has (it
 * runs beside it); the time a step takes is from its sweep's start to the
 * next sweep's start. */
#ifndef BENCH_TIMELINE_H
#define BENCH_TIMELINE_H

#include "kt_base.h"
#include "kt_render.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bench_tl_kind { BENCH_TL_KERNEL = 0, BENCH_TL_MEMCPY, BENCH_TL_MEMSET } bench_tl_kind;

typedef struct bench_tl_record {
    const char *name;        /* a kernel's short name (bench_tl_short_name), "memcpy DtoH" ... */
    int kind;                /* a bench_tl_kind */
    uint32_t stream;         /* CUPTI's stream id */
    uint64_t start_ns, end_ns;
    uint64_t launch;         /* the launch's correlation id (a graph launch's for its nodes) */
    uint64_t node;           /* the CUDA graph node id, 0 outside graphs */
} bench_tl_record;

/* Which kernels are whose: the air sweep's name holds `sweep`; a kernel whose
 * name begins with one of `air` (NULL-terminated) is one of the air's other
 * stages (lists, sources, microphones); any other kernel is a drum's. */
typedef struct bench_tl_rules {
    const char *sweep;
    const char *const *air;
} bench_tl_rules;

/* The rules for Kettle's own kernels (room/gpu/, instruments/gpu/). */
const bench_tl_rules *bench_tl_kettle_rules(void);

/* What runs in a step's time, each instant counted once, in this order of
 * precedence: the sweep (alone or beside anything), drums' kernels, the air's
 * other kernels, copies and fills, nothing (idle). */
enum { BENCH_TL_SWEEP, BENCH_TL_DRUMS, BENCH_TL_AIR, BENCH_TL_COPIES, BENCH_TL_IDLE,
       BENCH_TL_SHARES };

#define BENCH_TL_MAX_DRUMS 16

typedef struct bench_tl_step {
    size_t first, count;            /* its records in bench_timeline.rec */
    double start_us, length_us;     /* from its sweep's start to the next sweep's */
    double share_us[BENCH_TL_SHARES];
    double sweep_us;                /* the sweep kernel(s) from first start to last end */
    int gaps;                       /* stretches of idle time */
    double gap_max_us, gap_max_at_us;  /* the longest, and where it begins (from the step's start) */
    int drums;                      /* drum chains: a chain starts at each recurrence of
                                       the step's first drum kernel name */
    double chain_us[BENCH_TL_MAX_DRUMS];  /* first start to last end of each chain */
} bench_tl_step;

typedef struct bench_timeline {
    bench_tl_record *rec;           /* the records, in launch order (owned) */
    size_t n;
    int *drum;                      /* per record: its drum chain in its step (1, 2 ...), 0 none */
    bench_tl_step *step;            /* whole steps (from one sweep to the next) */
    int steps;
    int median;                     /* the step whose length is nearest the median length */
    bench_tl_step typical;          /* the median over the steps of each figure */
    int slowest;                    /* the longest step */
    char **names;                   /* what the records' names point to, where the timeline */
    int nnames;                     /* owns them (bench_tl_render); else NULL */
} bench_timeline;

/* "split_window<float>" from "void split_window<float>(tp_dev, sp_args, float*,
 * long long const*)": no return type, no parameters. */
void bench_tl_short_name(const char *demangled, char *out, size_t size);

/* Sorts rec (n records, copied) into launch order, cuts it into steps and
 * measures each and the median step.  KT_EINVAL when fewer than two sweeps
 * were recorded (no whole step). */
int bench_tl_analyse(const bench_tl_record *rec, size_t n, const bench_tl_rules *rules,
                     bench_timeline *tl, kt_error *err);
void bench_tl_free(bench_timeline *tl);

/* Whose a record is: BENCH_TL_SWEEP, _DRUMS, _AIR or _COPIES. */
int bench_tl_class(const bench_tl_record *r, const bench_tl_rules *rules);

/* The median step's kernels (name, stream, start, end, duration, drum) and
 * the summary: the step's length and where it goes, the drums' chains, the
 * gaps, the slowest step, and which stage bounds the step. */
void bench_tl_print(FILE *f, const bench_timeline *tl);
/* The stage that bounds the step, in words ("the air's sweep", ...). */
const char *bench_tl_bound(const bench_tl_step *s);

/* Chrome trace events (chrome://tracing, Perfetto) of up to `steps` steps
 * around the median one, as process `pid` named `label`, streams as
 * threads, times in microseconds from the first step written.  *first: 1
 * before the file's first event (no comma), then 0. */
void bench_tl_chrome(FILE *f, const bench_timeline *tl, int pid, const char *label, int steps,
                     int *first);

/* Recording (bench/gpu/timeline_cupti.cu, CUPTI's Activity API: concurrent
 * kernels, copies, fills).  Begin before the work, keep_from_now once it is
 * in its steady state (records that start earlier are dropped), end after it
 * (the device synchronised, the buffers flushed): the records and the names
 * they point to belong to *trace.  One recording at a time in a process.
 * Without CUPTI in the build every call fails with KT_ENOTSUP saying so. */
typedef struct bench_tl_trace {
    bench_tl_record *rec;
    size_t n;
    char **names;
    int nnames;
    size_t dropped;                 /* records CUPTI dropped (its buffers full) */
} bench_tl_trace;
int bench_tl_available(kt_error *err);  /* KT_OK, or KT_ENOTSUP and why not */
int bench_tl_record_begin(kt_error *err);
void bench_tl_record_keep_from_now(void);
int bench_tl_record_end(bench_tl_trace *trace, kt_error *err);
void bench_tl_trace_free(bench_tl_trace *trace);

/* Renders perf on the GPU with options opt (an --estimate run: nothing is
 * written) and records its second chunk of steps (render_gpu.c: 11,520 steps
 * at the default check period; the first pays the graphs' captures), then
 * stops it and analyses the records by `rules` into tl.  *first_step: the
 * step the recording began at.  Returns 0, or a negative status with the
 * message in err (KT_ENOTSUP: a build without CUPTI). */
int bench_tl_render(const kt_performance *perf, const kt_render_options *opt,
                    const bench_tl_rules *rules, bench_timeline *tl, int64_t *first_step,
                    kt_score_error *err);

#ifdef __cplusplus
}
#endif

#endif
