/* bench_timeline_render.c - a render's steady-state steps recorded as a
 * timeline (bench_timeline.h): the render runs on the GPU as --estimate
 * does (nothing written), its first chunk of steps (the graphs' captures,
 * the first guard check) unrecorded, its second recorded, then it is
 * stopped.  The render tells where its chunks end through its progress
 * callback, which the GPU loop calls once a chunk (perform/render_gpu.c). */
#include "bench_timeline.h"
#include "kt_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !KETTLE_CUPTI_ENABLED
static int no_cupti(kt_error *err)
{
    return kt_fail(err, KT_ENOTSUP, "this kettle was built without CUPTI (%s), so it records "
                   "no timeline", KETTLE_CUDA_ENABLED ? "CMake found no CUDA::cupti in the CUDA "
                   "toolkit" : "no CUDA");
}

int bench_tl_available(kt_error *err)
{
    return no_cupti(err);
}

int bench_tl_record_begin(kt_error *err)
{
    return no_cupti(err);
}

void bench_tl_record_keep_from_now(void)
{
}

int bench_tl_record_end(bench_tl_trace *trace, kt_error *err)
{
    memset(trace, 0, sizeof *trace);
    return no_cupti(err);
}
#endif

void bench_tl_trace_free(bench_tl_trace *trace)
{
    for (int k = 0; k < trace->nnames; k++)
        free(trace->names[k]);
    free(trace->names);
    free(trace->rec);
    memset(trace, 0, sizeof *trace);
}

/* Where the render is: chunk reports seen, the step recording began at. */
typedef struct tl_progress {
    int reports;
    int64_t first_step;
} tl_progress;

/* The first report (the first chunk done): keep what starts from now; the
 * second: stop the render. */
static int on_progress(void *user, int64_t done, int64_t total)
{
    tl_progress *p = user;
    if (done >= total)
        return 0;
    if (++p->reports == 1) {
        bench_tl_record_keep_from_now();
        p->first_step = done;
    }
    return p->reports >= 2;
}

int bench_tl_render(const kt_performance *perf, const kt_render_options *opt,
                    const bench_tl_rules *rules, bench_timeline *tl, int64_t *first_step,
                    kt_score_error *err)
{
    memset(tl, 0, sizeof *tl);
    kt_error e;
    kt_error_clear(&e);
    int rc = bench_tl_record_begin(&e);
    if (rc < 0)
        return kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, rc, "%s", e.message);
    kt_render_options o = *opt;
    tl_progress p = {0, 0};
    o.device = KT_DEVICE_GPU;
    /* a timeline of steps: one at a time unless a depth is asked for (a
     * blocked pass is D steps in one kernel, which no step boundary splits;
     * the timed default blocks where it wins) */
    if (o.block == 0)
        o.block = 1;
    o.progress = on_progress;
    o.user = &p;
    if (o.estimate_steps <= 0)
        o.estimate_steps = INT64_MAX / 4;  /* the progress callback stops it */
    kt_render_result res;
    char out[64];
    snprintf(out, sizeof out, "/tmp/kettle_bench_timeline_%ld.wav", (long)getpid());
    rc = kt_render(perf, out, &o, &res, err);
    kt_render_result_free(&res);
    bench_tl_trace trace;
    int end = bench_tl_record_end(&trace, &e);
    if (rc == KT_EINTR && p.reports >= 2)
        rc = KT_OK;   /* stopped where asked */
    else if (rc == KT_OK)
        rc = kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_EINVAL,
                              "the render ended after %d chunks of steps: too short for a "
                              "timeline of its second", p.reports);
    if (rc == KT_OK && end < 0)
        rc = kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, end, "%s", e.message);
    if (rc == KT_OK && (rc = bench_tl_analyse(trace.rec, trace.n, rules, tl, &e)) < 0)
        kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, rc, "%s", e.message);
    if (rc == KT_OK) {   /* the records' names go with them */
        tl->names = trace.names;
        tl->nnames = trace.nnames;
        trace.names = NULL;
        trace.nnames = 0;
    }
    if (rc == KT_OK && trace.dropped > 0)
        rc = kt_score_fail_at(perf, (kt_score_loc){-1, 0, 0}, err, KT_EIO, "CUPTI dropped %zu "
                              "records of the timeline", trace.dropped);
    *first_step = p.first_step;
    bench_tl_trace_free(&trace);
    if (rc < 0)
        bench_tl_free(tl);
    return rc;
}
