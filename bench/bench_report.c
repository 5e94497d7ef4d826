/* bench_report.c - records, JSON output and shared options for benchmarks. */
#include "bench_report.h"
#include "kt_base.h"
#include "kt_exit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void bench_report_init(bench_report *r, const char *bench)
{
    memset(r, 0, sizeof *r);
    r->bench = bench;
}

static void copy_field(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

int bench_report_add(bench_report *r, const char *case_name, const char *impl,
                     const char *device, const char *precision, int threads,
                     const char *metric, double value, const char *unit)
{
    if (r->count == r->capacity) {
        int cap = r->capacity ? 2 * r->capacity : 64;
        bench_record *p = realloc(r->records, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        r->records = p;
        r->capacity = cap;
    }
    bench_record *e = &r->records[r->count++];
    copy_field(e->bench, sizeof e->bench, r->bench);
    copy_field(e->case_name, sizeof e->case_name, case_name);
    copy_field(e->impl, sizeof e->impl, impl);
    copy_field(e->device, sizeof e->device, device);
    copy_field(e->precision, sizeof e->precision, precision);
    e->threads = threads;
    copy_field(e->metric, sizeof e->metric, metric);
    e->value = value;
    copy_field(e->unit, sizeof e->unit, unit);
    return 0;
}

int bench_report_write_json(const bench_report *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "[\n");
    for (int i = 0; i < r->count; i++) {
        const bench_record *e = &r->records[i];
        fprintf(f,
                "  {\"bench\": \"%s\", \"case\": \"%s\", \"impl\": \"%s\", \"device\": \"%s\", "
                "\"precision\": \"%s\", \"threads\": %d, \"metric\": \"%s\", \"value\": %.6g, "
                "\"unit\": \"%s\"}%s\n",
                e->bench, e->case_name, e->impl, e->device, e->precision, e->threads, e->metric,
                e->value, e->unit, i + 1 < r->count ? "," : "");
    }
    fprintf(f, "]\n");
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

void bench_report_free(bench_report *r)
{
    free(r->records);
    memset(r, 0, sizeof *r);
}

static int parse_positive_int(const char *opt, const char *s, int *out)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || v <= 0 || v > 1 << 20) {
        fprintf(stderr, "kettle: %s needs a positive integer, got '%s'\n", opt, s ? s : "");
        return -1;
    }
    *out = (int)v;
    return 0;
}

int bench_parse_common(int argc, char **argv, int *i, bench_options *o)
{
    const char *a = argv[*i];
    const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (strcmp(a, "--quick") == 0 || strcmp(a, "--gpu") == 0) {
        *(a[2] == 'q' ? &o->quick : &o->gpu) = 1;
        return 1;
    }
    if (strcmp(a, "--json") == 0) {
        if (!next) {
            fprintf(stderr, "kettle: --json needs a file name\n");
            return -1;
        }
        o->json_path = next;
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--threads") == 0 || strcmp(a, "--repeats") == 0) {
        int *dst = a[2] == 't' ? &o->threads : &o->repeats;
        if (parse_positive_int(a, next, dst) != 0)
            return -1;
        kt_error e;
        kt_error_clear(&e);
        if (dst == &o->threads && kt_threads_check(o->threads, &e) < 0) {
            fprintf(stderr, "kettle: --threads %s: %s\n", next, e.message);
            return -1;
        }
        (*i)++;
        return 1;
    }
    return 0;
}

int bench_other_option(const char *bench, const char *arg, void (*usage)(FILE *f))
{
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        usage(stdout);
        return KT_EXIT_OK;
    }
    fprintf(stderr, "kettle bench %s: unknown option '%s'\n", bench, arg);
    usage(stderr);
    return KT_EXIT_USAGE;
}

double bench_load_average(void)
{
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

double bench_max_rel_diff(const double *a, const double *b, int n)
{
    double diff = 0.0, scale = 0.0;
    for (int i = 0; i < n; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    return scale > 0 ? diff / scale : diff;
}
