/* cmd_bench_section.c - `kettle bench section`: what each drum of a timpani
 * section adds to a room's step (issue 21).  The room with 0, 1, ... N drums
 * of the five-drum set (20-32 inches; eight drums in a larger room) is timed
 * per step in its steady state (the difference of two runs of different
 * length, so that set-up and a GPU's first graph captures drop out), on the
 * CPU and with --gpu on the GPU; then the cost of each added drum and the
 * seconds per second of audio.  --score ORC SCO times a piece instead.
 * --timeline [FILE] then records each case's GPU step kernel by kernel
 * (bench/include/bench_timeline.h) and says what bounds it. */
#include "bench_gpu.h"
#include "bench_render.h"
#include "bench_report.h"
#include "bench_timeline.h"
#include "kt_cli.h"
#include "kt_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECTION_MAX 8

typedef struct section_drum {
    int inches;
    const char *pitch;
    double x_m, y_m;
} section_drum;

/* The five-drum set in the 2.6 x 1.8 x 1.3 m room of issue 21, and eight
 * drums in a 4.0 x 2.4 x 1.4 m room. */
static const section_drum five[5] = {
    {32, "D2", 0.52, 0.52}, {29, "G2", 1.38, 0.50}, {26, "C3", 2.21, 0.50},
    {23, "E3", 0.90, 1.30}, {20, "A3", 1.70, 1.30}};
static const section_drum eight[SECTION_MAX] = {
    {32, "D2", 0.65, 0.62}, {29, "G2", 1.55, 0.62}, {26, "C3", 2.40, 0.62},
    {23, "E3", 1.00, 1.60}, {20, "A3", 1.85, 1.62}, {25, "D3", 3.30, 0.62},
    {28, "A2", 2.80, 1.62}, {21, "G3", 3.55, 1.65}};

typedef struct section_opts {
    double sr;
    int precision;           /* KT_DOUBLE or KT_SINGLE */
    int drums;               /* the most drums timed */
    int steps;               /* steps timed per figure (the longer run's extra) */
    const char *orc, *sco;   /* --score */
    const char *solver;      /* --solver: every drum's (NULL: the device's default) */
    int compare;             /* --compare: the CPU's other kt_overlap modes too */
    int timeline;            /* --timeline: each GPU case's step kernel by kernel */
    const char *trace;       /* --timeline FILE: Chrome trace events written there */
    int gpu_only;            /* --gpu-only: no CPU rows (a hall's CPU run takes minutes) */
} section_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kettle bench section [--drums N] [--sr HZ] [--precision single|double]\n"
            "                            [--steps N] [--score ORC SCO] [--gpu] [--quick]\n"
            "                            [--repeats N] [--threads N] [--json FILE]\n"
            "                            [--solver direct|reduced|jacobi] [--compare]\n"
            "                            [--timeline [FILE]] [--gpu-only]\n\n"
            "Microseconds per step of a room with 0..N drums of a timpani section (N = 5:\n"
            "20, 23, 26, 29, 32 in, in a 2.6 x 1.8 x 1.3 m room; up to 8 in a 4 x 2.4 x\n"
            "1.4 m room), each struck once, at 44.1 kHz in double precision unless told;\n"
            "the cost of each added drum and seconds per second of audio; on the CPU and,\n"
            "with --gpu, the GPU.  Steady state: two runs of different lengths, their\n"
            "difference over --steps (CPU 200, GPU 20000; --quick: a quarter).  --score\n"
            "ORC SCO times that piece at --sr (its first --steps steps past the warm-up).\n"
            "Single precision keeps the drums, their coupling and their energy in double\n"
            "(the air alone is float).  On the CPU the drums of a step run side by side\n"
            "and beside the air; --compare also times them side by side after the air\n"
            "(cpu-drums) and every stage in turn (cpu-serial).  --gpu-only: the GPU rows\n"
            "alone (--gpu without the CPU's, which for a large room take minutes).\n"
            "--timeline (with --gpu; a build with CUPTI) then records each case's GPU steps\n"
            "kernel by kernel after a warm-up chunk (11,520 steps) and prints the median\n"
            "step's kernels (stream, start, end), where its time goes (the air's sweep, the\n"
            "drums, idle gaps), each drum's chain and what bounds the step; FILE: a Chrome\n"
            "trace (chrome://tracing, ui.perfetto.dev) of 8 steps around it per case.\n");
}

/* Orchestra and score text for the first n drums. */
static void section_text(int n, const section_opts *so, char *orc, size_t no, char *sco,
                         size_t ns)
{
    const section_drum *set = so->drums > 5 ? eight : five;
    int len = snprintf(orc, no, "sr = %g\nroom = %s\nbeta = 0.3\nprecision = %s\n"
                                "pair p 1.3 1.5 1.15 0.4\n",
                       so->sr, so->drums > 5 ? "4.0 2.4 1.4" : "2.6 1.8 1.3",
                       so->precision == KT_SINGLE ? "single" : "double");
    int ls = 0;
    for (int k = 0; k < n; k++) {
        len += snprintf(orc + len, no - (size_t)len,
                        "instr %d\n  size = %d\n  pitch = %s\n  pos = %.2f %.2f 0.9\n%s%s%sendin\n",
                        set[k].inches, set[k].inches, set[k].pitch, set[k].x_m, set[k].y_m,
                        so->solver ? "  solver = " : "", so->solver ? so->solver : "",
                        so->solver ? "\n" : "");
        ls += snprintf(sco + ls, ns - (size_t)ls, "i %d 0 1 f 0.6 %d\n", set[k].inches, 20 * k);
    }
    snprintf(sco + ls, ns - (size_t)ls, "f 0 60\n");
}

/* Wall seconds of a run of `steps` steps (set-up excluded). */
static double run_seconds(const kt_performance *perf, double sr, int precision, kt_device device,
                          int overlap, int threads, int64_t steps, kt_score_error *err)
{
    kt_render_options o;
    bench_render_options(&o, sr, precision, device, overlap, threads, steps);
    kt_render_result res;
    char out[64];
    snprintf(out, sizeof out, "/tmp/kettle_bench_section_%ld.wav", (long)getpid());
    int rc = kt_render(perf, out, &o, &res, err);
    double s = rc < 0 ? -1 : res.run_s;
    kt_render_result_free(&res);
    return s;
}

/* Steady-state seconds per step: median over repeats of (long - short) / steps. */
static double seconds_per_step(const kt_performance *perf, double sr, int precision,
                               kt_device device, int overlap, int threads, int steps,
                               int repeats, kt_score_error *err)
{
    double v[32];
    int n = 0;
    int64_t warm = device == KT_DEVICE_GPU ? 2 * (int64_t)steps : steps / 2;
    for (int r = 0; r < repeats && r < 32; r++) {
        double a = run_seconds(perf, sr, precision, device, overlap, threads, warm, err);
        double b = a < 0 ? -1
                         : run_seconds(perf, sr, precision, device, overlap, threads, warm + steps,
                                       err);
        if (b < 0)
            return -1;
        v[n++] = (b - a) / steps;
    }
    return kt_median(v, n);
}

static int load_text(kt_performance *perf, const section_opts *so, int n, kt_score_error *err)
{
    char orc[4096], sco[1024];
    kt_performance_init(perf);
    if (so->orc)
        return kt_score_load(perf, so->orc, so->sco, err);
    section_text(n, so, orc, sizeof orc, sco, sizeof sco);
    return kt_score_parse(perf, "section.orc", orc, "section.sco", sco, err);
}

/* One device's rows: 0..drums drums (or the score); overlap: the CPU's
 * kt_render_options.cpu_overlap (a kt_overlap). */
static int time_device(const section_opts *so, const bench_options *bo, kt_device device,
                       int overlap, bench_report *rep)
{
    static const char *const cpu[3] = {"cpu-serial", "cpu-drums", "cpu"};
    const char *dev = device != KT_DEVICE_GPU ? cpu[overlap] : "gpu";
    const char *prec = so->precision == KT_SINGLE ? "single" : "double";
    int steps = so->steps ? so->steps : device == KT_DEVICE_GPU ? 20000 : 200;
    if (bo->quick)
        steps = steps / 4 > 10 ? steps / 4 : 10;
    int threads = device == KT_DEVICE_GPU ? 0 : bo->threads;
    double previous = -1;
    int last = so->orc ? 0 : so->drums;
    for (int n = 0; n <= last; n++) {
        kt_performance perf;
        kt_score_error err = {0};
        double s = load_text(&perf, so, n, &err) < 0
                       ? -1
                       : seconds_per_step(&perf, so->sr, so->precision, device, overlap,
                                          threads, steps, bo->repeats, &err);
        kt_performance_free(&perf);
        if (s < 0) {
            fprintf(stderr, "kettle bench section: %s\n", err.message);
            return KT_EXIT_FAIL;
        }
        char label[32];
        snprintf(label, sizeof label, so->orc ? "score" : "%d drums", n);
        double us = 1e6 * s, per_audio = s * so->sr;
        if (previous >= 0)
            printf("%-10s %-10s %12.2f %14.3f %14.2f\n", dev, label, us, per_audio,
                   us - previous);
        else
            printf("%-10s %-10s %12.2f %14.3f %14s\n", dev, label, us, per_audio, "");
        char case_name[48];
        snprintf(case_name, sizeof case_name, so->orc ? "score" : "drums-%d", n);
        bench_report_add(rep, case_name, "section", dev, prec, threads, "us_per_step", us, "us");
        bench_report_add(rep, case_name, "section", dev, prec, threads, "s_per_audio_s",
                         per_audio, "s");
        if (previous >= 0)
            bench_report_add(rep, case_name, "section", dev, prec, threads, "us_added_drum",
                             us - previous, "us");
        previous = us;
        fflush(stdout);
    }
    return KT_EXIT_OK;
}

/* The timeline's figures as records (device gpu): the median step length,
 * where the median step's time goes, the longest drum chain (a median). */
static void timeline_records(const bench_timeline *tl, const char *case_name, const char *prec,
                             bench_report *rep)
{
    static const char *const metric[BENCH_TL_SHARES] = {
        "timeline_sweep_us", "timeline_drums_us", "timeline_air_us", "timeline_copies_us",
        "timeline_idle_us"};
    const bench_tl_step *t = &tl->typical, *m = &tl->step[tl->median];
    double longest = 0;
    for (int d = 0; d < t->drums; d++)
        longest = t->chain_us[d] > longest ? t->chain_us[d] : longest;
    bench_report_add(rep, case_name, "section", "gpu", prec, 0, "timeline_step_us",
                     t->length_us, "us");
    for (int c = 0; c < BENCH_TL_SHARES; c++)
        bench_report_add(rep, case_name, "section", "gpu", prec, 0, metric[c], m->share_us[c],
                         "us");
    bench_report_add(rep, case_name, "section", "gpu", prec, 0, "timeline_longest_chain_us",
                     longest, "us");
}

/* --timeline: case n's GPU step recorded kernel by kernel and printed; its
 * figures recorded and, with FILE, its steps written as trace events. */
static int timeline_case(const section_opts *so, int n, bench_report *rep, FILE *trace,
                         int *first)
{
    const char *prec = so->precision == KT_SINGLE ? "single" : "double";
    kt_performance perf;
    kt_score_error err = {0};
    kt_render_options o;
    bench_render_options(&o, so->sr, so->precision, KT_DEVICE_GPU, 0, 0, 0);
    bench_timeline tl;
    int64_t from = 0;
    int rc = load_text(&perf, so, n, &err);
    if (rc == 0)
        rc = bench_tl_render(&perf, &o, bench_tl_kettle_rules(), &tl, &from, &err);
    kt_performance_free(&perf);
    if (rc < 0) {
        fprintf(stderr, "kettle bench section --timeline: %s\n", err.message);
        return KT_EXIT_FAIL;
    }
    char label[48], case_name[48];
    if (so->orc)
        snprintf(label, sizeof label, "score, %s", prec);
    else
        snprintf(label, sizeof label, "%d drums, %s", n, prec);
    snprintf(case_name, sizeof case_name, so->orc ? "score" : "drums-%d", n);
    printf("\ntimeline (GPU, %s): %d steps recorded from step %lld\n", label, tl.steps,
           (long long)from);
    bench_tl_print(stdout, &tl);
    timeline_records(&tl, case_name, prec, rep);
    if (trace)
        bench_tl_chrome(trace, &tl, n, label, 8, first);
    bench_tl_free(&tl);
    fflush(stdout);
    return KT_EXIT_OK;
}

/* Every case's timeline, the trace file opened and closed around them. */
static int timelines(const section_opts *so, bench_report *rep)
{
    FILE *trace = so->trace ? fopen(so->trace, "w") : NULL;
    if (so->trace && !trace) {
        perror(so->trace);
        return KT_EXIT_FAIL;
    }
    if (trace)
        fprintf(trace, "{\"traceEvents\": [\n");
    int status = KT_EXIT_OK, first = 1;
    for (int n = 0; n <= (so->orc ? 0 : so->drums) && status == KT_EXIT_OK; n++)
        status = timeline_case(so, n, rep, trace, &first);
    if (trace) {
        fprintf(trace, "\n], \"displayTimeUnit\": \"ns\"}\n");
        if (fclose(trace) != 0) {
            perror(so->trace);
            status = KT_EXIT_FAIL;
        } else if (status == KT_EXIT_OK)
            printf("\ntimeline trace: %s (chrome://tracing or ui.perfetto.dev)\n", so->trace);
    }
    return status;
}

static int parse(int argc, char **argv, section_opts *so, bench_options *bo)
{
    for (int i = 1; i < argc; i++) {
        int rc = bench_parse_common(argc, argv, &i, bo);
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (rc < 0)
            return KT_EXIT_USAGE;
        if (rc > 0)
            continue;
        if (!strcmp(a, "--drums") && v && (so->drums = atoi(v)) >= 0 && so->drums <= SECTION_MAX)
            i++;
        else if (!strcmp(a, "--sr") && v && (so->sr = atof(v)) >= 8000)
            i++;
        else if (!strcmp(a, "--steps") && v && (so->steps = atoi(v)) > 0)
            i++;
        else if (!strcmp(a, "--precision") && v && (!strcmp(v, "single") || !strcmp(v, "double"))) {
            so->precision = !strcmp(v, "single") ? KT_SINGLE : KT_DOUBLE;
            i++;
        } else if (!strcmp(a, "--gpu-only")) {
            so->gpu_only = 1;
            bo->gpu = 1;
        } else if (!strcmp(a, "--compare")) {
            so->compare = 1;
        } else if (!strcmp(a, "--timeline")) {
            so->timeline = 1;
            if (v && v[0] != '-')
                so->trace = argv[++i];
        } else if (!strcmp(a, "--solver") && v &&
                   (!strcmp(v, "direct") || !strcmp(v, "reduced") || !strcmp(v, "jacobi"))) {
            so->solver = v;
            i++;
        } else if (!strcmp(a, "--score") && i + 2 < argc) {
            so->orc = argv[++i];
            so->sco = argv[++i];
        } else
            return bench_other_option("section", a, usage);
    }
    return -1;
}

int kt_cmd_bench_section(int argc, char **argv)
{
    section_opts so = {44100, KT_DOUBLE, 5, 0, NULL, NULL, NULL, 0, 0, NULL, 0};
    bench_options bo = {NULL, 0, 0, 3, 0};
    int rc = parse(argc, argv, &so, &bo);
    if (rc >= 0)
        return rc;
    if (bo.gpu && bench_gpu_check("section") != 0)
        return KT_EXIT_USAGE;
    kt_error e;
    kt_error_clear(&e);
    if (so.timeline && (!bo.gpu || bench_tl_available(&e) < 0)) {
        fprintf(stderr, "kettle bench section --timeline: %s\n",
                bo.gpu ? e.message : "it records the GPU's step: add --gpu");
        return KT_EXIT_USAGE;
    }
    printf("kettle bench section: us per step in the steady state, median of %d; %s precision "
           "at %g Hz%s\nmachine: load average %.2f\n",
           bo.repeats, so.precision == KT_SINGLE ? "single (air float, drums double)" : "double",
           so.sr, so.orc ? "" : (so.drums > 5 ? ", 4.0 x 2.4 x 1.4 m room" : ", 2.6 x 1.8 x 1.3 m room"),
           bench_load_average());
    printf("%-10s %-10s %12s %14s %14s\n", "device", "case", "us/step", "s per s audio",
           "us added");
    bench_report rep;
    bench_report_init(&rep, "section");
    int status = KT_EXIT_OK;
    for (int m = KT_OVERLAP_AIR; m >= KT_OVERLAP_NONE && status == KT_EXIT_OK && !so.gpu_only &&
                                 (m == KT_OVERLAP_AIR || so.compare); m--)
        status = time_device(&so, &bo, KT_DEVICE_CPU, m, &rep);
    if (status == KT_EXIT_OK && bo.gpu)
        status = time_device(&so, &bo, KT_DEVICE_GPU, KT_OVERLAP_AIR, &rep);
    if (status == KT_EXIT_OK && so.timeline)
        status = timelines(&so, &rep);
    if (status == KT_EXIT_OK && bo.json_path && bench_report_write_json(&rep, bo.json_path) != 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    return status;
}
