/* bench_render.c - the render options a benchmark times a case with
 * (bench_render.h). */
#include "bench_render.h"

void bench_render_options(kt_render_options *o, double sr, int precision, kt_device device,
                          int overlap, int threads, int64_t steps)
{
    kt_render_options_default(o);
    o->sample_rate_hz = sr;
    o->precision = precision;
    o->device = device;
    if (device != KT_DEVICE_GPU)
        o->cpu_overlap = overlap;
    o->nthreads = threads;
    o->estimate_steps = steps;
}
