/* bench_render.h - the render options a benchmark times a case with
 * (`kettle bench section`, its --timeline): what the command line asks
 * (sample rate, precision, device, the CPU's overlap and threads) carried
 * into kt_render_options, so that the case renders as its row says. */
#ifndef BENCH_RENDER_H
#define BENCH_RENDER_H

#include "kt_render.h"

/* Defaults, then: sample_rate_hz sr; precision (a kt_precision, or -1: the
 * orchestra's); device; on the CPU, cpu_overlap `overlap` (a kt_overlap);
 * nthreads; estimate_steps `steps` (> 0: time that many steps, write
 * nothing; 0: a whole render). */
void bench_render_options(kt_render_options *o, double sr, int precision, kt_device device,
                          int overlap, int threads, int64_t steps);

#endif
