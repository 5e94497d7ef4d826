/* bench_report.h - the figures a `kettle bench` command measures, kept as
 * records so the same numbers go to the printed table and to --json FILE.
 * One record per measured figure:
 *   {"bench": "spmv", "case": "13band-1M", "impl": "dia", "device": "cpu",
 *    "precision": "double", "threads": 2, "metric": "gbps", "value": 12.3,
 *    "unit": "GB/s"} */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdio.h>

typedef struct bench_record {
    char bench[24], case_name[48], impl[32], device[8], precision[8];
    int threads;
    char metric[32];
    double value;
    char unit[16];
} bench_record;

typedef struct bench_report {
    bench_record *records;
    int count, capacity;
    const char *bench;      /* the bench's name, copied into each record */
} bench_report;

void bench_report_init(bench_report *r, const char *bench);
/* Returns 0, or -1 when out of memory. */
int bench_report_add(bench_report *r, const char *case_name, const char *impl,
                     const char *device, const char *precision, int threads,
                     const char *metric, double value, const char *unit);
/* Writes the JSON array; returns 0 or -1 with a message on stderr. */
int bench_report_write_json(const bench_report *r, const char *path);
void bench_report_free(bench_report *r);

/* Options every bench shares: --json FILE, --quick, --threads N, --repeats N,
 * --gpu (add the GPU rows; the bench calls bench_gpu_check before any).
 * bench_parse_common looks at argv[*i]: returns 1 if it was one of these (and
 * advances *i past a value), 0 if not (the caller handles it), -1 on a bad
 * value (message printed). */
typedef struct bench_options {
    const char *json_path;
    int quick;
    int threads;            /* 0 = all cores */
    int repeats;            /* runs per figure; the median is reported */
    int gpu;
} bench_options;
int bench_parse_common(int argc, char **argv, int *i, bench_options *o);
/* An option neither the bench nor bench_parse_common took: --help or -h
 * prints the usage to stdout and returns KT_EXIT_OK; anything else is named
 * on stderr beside the usage, KT_EXIT_USAGE. */
int bench_other_option(const char *bench, const char *arg, void (*usage)(FILE *f));

/* The 1-minute load average (Linux /proc/loadavg), or -1 where there is none:
 * on a machine shared with other jobs threaded figures include the
 * contention (a barrier waits for a descheduled thread), so tables say what
 * the load was. */
double bench_load_average(void);

/* max |a - b| / max |b| (max |a - b| when b is zero): how far a result is
 * from its reference. */
double bench_max_rel_diff(const double *a, const double *b, int n);

#endif
