/* timeline_cupti.cu - the device's activity as records for the timeline
 * (bench_timeline.h): CUPTI's Activity API reports every kernel (those a CUDA
 * graph launches too, with their graph node ids), copy and fill with its
 * device start and end; this file turns them into bench_tl_record, kernel
 * names demangled and shortened.  Compiled into the bench layer only, and
 * only where CMake found CUPTI (KETTLE_CUPTI_ENABLED); elsewhere
 * bench_timeline_render.c says the build has none. */
#include "bench_timeline.h"

#if KETTLE_CUPTI_ENABLED
#include <cuda_runtime.h>
#include <cupti.h>
#include <cxxabi.h>

#include <mutex>
#include <stdlib.h>
#include <string.h>

/* The record layouts of this CUPTI (CUDA 13 and 12). */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 tl_kernel;
typedef CUpti_ActivityMemcpy6 tl_memcpy;
#else
typedef CUpti_ActivityKernel9 tl_kernel;
typedef CUpti_ActivityMemcpy5 tl_memcpy;
#endif
typedef CUpti_ActivityMemset4 tl_memset;

#define TL_BUFFER_BYTES (8u << 20)

/* CUPTI hands full buffers to a callback that takes no pointer of ours, so
 * the recording in progress is the one process-wide object here (behind a
 * mutex: CUPTI may call from its own thread); one recording at a time. */
typedef struct tl_recording {
    std::mutex mu;
    bench_tl_trace t;
    size_t cap;
    const char **seen;      /* CUPTI's name pointers, each for t.names[k] */
    uint64_t keep_from_ns;
    int failed;             /* out of memory: the recording is incomplete */
    int registered;         /* the buffer callbacks given to CUPTI (once a process) */
} tl_recording;
static tl_recording rec_now;

static const char *interned(const char *cupti_name)
{
    tl_recording *R = &rec_now;
    for (int k = 0; k < R->t.nnames; k++)
        if (R->seen[k] == cupti_name)
            return R->t.names[k];
    char **names = (char **)realloc(R->t.names, (size_t)(R->t.nnames + 1) * sizeof *names);
    const char **seen = (const char **)realloc(R->seen, (size_t)(R->t.nnames + 1) * sizeof *seen);
    if (names)
        R->t.names = names;
    if (seen)
        R->seen = seen;
    int status = -1;
    char *full = cupti_name ? abi::__cxa_demangle(cupti_name, NULL, NULL, &status) : NULL;
    const char *from = status == 0 ? full : cupti_name ? cupti_name : "?";
    char *name = (char *)malloc(strlen(from) + 1);
    if (name)
        bench_tl_short_name(from, name, strlen(from) + 1);
    free(full);
    if (!names || !seen || !name) {
        free(name);
        R->failed = 1;
        return "?";
    }
    R->seen[R->t.nnames] = cupti_name;
    R->t.names[R->t.nnames++] = name;
    return name;
}

static const char *copy_name(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    default: return "memcpy";
    }
}

/* One CUPTI record into ours (kernels, copies and fills; anything else is
 * not recorded). */
static int convert(const CUpti_Activity *a, bench_tl_record *r)
{
    memset(r, 0, sizeof *r);
    if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || a->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const tl_kernel *k = (const tl_kernel *)a;
        *r = (bench_tl_record){interned(k->name), BENCH_TL_KERNEL, k->streamId, k->start, k->end,
                               k->correlationId, k->graphNodeId};
    } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const tl_memcpy *m = (const tl_memcpy *)a;
        *r = (bench_tl_record){copy_name(m->copyKind), BENCH_TL_MEMCPY, m->streamId, m->start,
                               m->end, m->correlationId, m->graphNodeId};
    } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const tl_memset *m = (const tl_memset *)a;
        *r = (bench_tl_record){"memset", BENCH_TL_MEMSET, m->streamId, m->start, m->end,
                               m->correlationId, m->graphNodeId};
    } else
        return 0;
    return 1;
}

static void keep(const bench_tl_record *r)
{
    tl_recording *R = &rec_now;
    if (r->start_ns < R->keep_from_ns || R->failed)
        return;
    if (R->t.n == R->cap) {
        size_t cap = R->cap ? 2 * R->cap : 65536;
        bench_tl_record *p = (bench_tl_record *)realloc(R->t.rec, cap * sizeof *p);
        if (!p) {
            R->failed = 1;
            return;
        }
        R->t.rec = p;
        R->cap = cap;
    }
    R->t.rec[R->t.n++] = *r;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = (uint8_t *)aligned_alloc(8, TL_BUFFER_BYTES);
    *size = *buffer ? TL_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)size;
    tl_recording *R = &rec_now;
    {
        std::lock_guard<std::mutex> lock(R->mu);
        CUpti_Activity *a = NULL;
        bench_tl_record r;
        while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS)
            if (convert(a, &r))
                keep(&r);
        size_t dropped = 0;
        if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
            R->t.dropped += dropped;
    }
    free(buffer);
}

static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                           CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

static int cupti_fail(kt_error *err, CUptiResult r, const char *doing)
{
    const char *what = NULL;
    cuptiGetResultString(r, &what);
    return kt_fail(err, KT_EIO, "%s: CUPTI: %s", doing, what ? what : "unknown error");
}

int bench_tl_available(kt_error *err)
{
    (void)err;
    return KT_OK;
}

int bench_tl_record_begin(kt_error *err)
{
    tl_recording *R = &rec_now;
    {
        std::lock_guard<std::mutex> lock(R->mu);
        bench_tl_trace_free(&R->t);
        free(R->seen);
        R->seen = NULL;
        R->cap = 0;
        R->failed = 0;
        R->keep_from_ns = UINT64_MAX;
    }
    CUptiResult r = CUPTI_SUCCESS;
    if (!R->registered && (r = cuptiActivityRegisterCallbacks(buffer_requested,
                                                               buffer_completed)) == CUPTI_SUCCESS)
        R->registered = 1;
    for (size_t k = 0; r == CUPTI_SUCCESS && k < sizeof kinds / sizeof kinds[0]; k++)
        r = cuptiActivityEnable(kinds[k]);
    return r == CUPTI_SUCCESS ? KT_OK : cupti_fail(err, r, "starting the timeline");
}

void bench_tl_record_keep_from_now(void)
{
    uint64_t now = 0;
    cuptiGetTimestamp(&now);
    std::lock_guard<std::mutex> lock(rec_now.mu);
    rec_now.keep_from_ns = now;
}

int bench_tl_record_end(bench_tl_trace *trace, kt_error *err)
{
    tl_recording *R = &rec_now;
    memset(trace, 0, sizeof *trace);
    cudaError_t ce = cudaDeviceSynchronize();
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        cuptiActivityDisable(kinds[k]);
    std::lock_guard<std::mutex> lock(R->mu);
    *trace = R->t;
    memset(&R->t, 0, sizeof R->t);
    free(R->seen);
    R->seen = NULL;
    R->cap = 0;
    if (ce != cudaSuccess)
        return kt_fail(err, KT_EIO, "ending the timeline: %s", cudaGetErrorString(ce));
    if (r != CUPTI_SUCCESS)
        return cupti_fail(err, r, "ending the timeline");
    if (R->failed)
        return kt_fail(err, KT_ENOMEM, "out of memory for the timeline's records");
    return KT_OK;
}

#endif
