/* cmd_bench_load.c - `kettle bench load`: what a busy machine does to a
 * render (issue #24).  The demo's room and drum (75 x 75 x 82 air points, a
 * 29-inch drum, 44.1 kHz) is timed per step at the default thread count
 * (all cores) and at one thread, on the machine as it is and then with one
 * competing process spinning on every core, as a DAW or a browser would.
 * The figure to watch is the default's time over one thread's at the same
 * load: threads that spin while they wait (libgomp's default, before
 * kettle chose passive waiting) made it 24 ms against 0.8 ms. */
#include "bench_report.h"
#include "kt_cli.h"
#include "kt_render.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SPINNERS 256

static const char *orc = "sr = 44100\nroom = 1.0 1.0 1.1\nbeta = 0.35\npair oh 0.5 0.5 0.95 0.3\n"
                         "instr 1\n  size = 29\n  pitch = G2\n  pos = 0.5 0.5 0.6\nendin\n";
static const char *sco = "i 1 0 0.3 f 0.62 17 1.0\ni 1 0.3 0.3 mp 0.55 -20 1.5\n";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kettle bench load [--steps N] [--repeats N] [--threads N] [--quick]\n"
            "                         [--json FILE]\n\n"
            "Milliseconds per step of the demo's room and drum (75 x 75 x 82 air points,\n"
            "29-inch drum, 44.1 kHz) at the default thread count (all cores, or --threads N)\n"
            "and at one thread, first on the machine as it is, then with one busy process\n"
            "per core competing; the median of --repeats runs (3) of --steps steps (400;\n"
            "--quick: 100).  On a busy machine the default should stay within 1.5 times\n"
            "one thread's time; OMP_WAIT_POLICY=active (spinning) shows what it was.\n");
}

/* A process that spins until it is killed, or its parent ends. */
static pid_t spinner(void)
{
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
        for (volatile unsigned long x = 0;; x++)
            ;
    }
    return pid;
}

static void stop_spinners(pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0) {
            kill(pids[i], SIGKILL);
            waitpid(pids[i], NULL, 0);
        }
}

/* Median milliseconds per step over `repeats` renders of `steps` steps. */
static double ms_per_step(const kt_performance *perf, int threads, int steps, int repeats,
                          kt_render_result *res)
{
    double ms[64];
    char out[64];
    snprintf(out, sizeof out, "/tmp/kettle_bench_load_%ld.wav", (long)getpid());
    int n = 0;
    for (int r = 0; r < repeats && r < 64; r++) {
        kt_render_options o;
        kt_render_options_default(&o);
        o.device = KT_DEVICE_CPU;
        o.nthreads = threads;
        o.estimate_steps = steps;   /* nothing is written */
        kt_score_error err = {0};
        if (kt_render(perf, out, &o, res, &err) < 0) {
            fprintf(stderr, "kettle bench load: %s\n", err.message);
            return -1;
        }
        ms[n++] = 1e3 * res->seconds_per_step;
        kt_render_result_free(res);
    }
    return kt_median(ms, n);
}

int kt_cmd_bench_load(int argc, char **argv)
{
    bench_options o = {NULL, 0, 0, 3, 0};
    int steps = 0;
    for (int i = 1; i < argc; i++) {
        int rc = bench_parse_common(argc, argv, &i, &o);
        if (rc < 0)
            return KT_EXIT_USAGE;
        if (rc == 0 && !strcmp(argv[i], "--steps") && i + 1 < argc &&
            (steps = atoi(argv[i + 1])) > 0)
            i++;
        else if (rc == 0)
            return bench_other_option("load", argv[i], usage);
    }
    steps = steps ? steps : o.quick ? 100 : 400;
    int cores = kt_threads_resolve(0), all = kt_threads_resolve(o.threads);
    if (o.gpu) {
        fprintf(stderr, "kettle bench load: the CPU only (no --gpu)\n");
        return KT_EXIT_USAGE;
    }
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    if (kt_score_parse(&perf, "demo.orc", orc, "demo.sco", sco, &err) < 0) {
        fprintf(stderr, "kettle bench load: %s\n", err.message);
        kt_performance_free(&perf);
        return KT_EXIT_FAIL;
    }
    const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    printf("kettle bench load: ms per step of the demo's room and drum, median of %d runs of %d "
           "steps\nmachine: %d cores, load average %.2f; OpenMP idle threads: %s%s%s\n",
           o.repeats, steps, cores, bench_load_average(), policy ? policy : "runtime default",
           spin ? ", GOMP_SPINCOUNT=" : "", spin ? spin : "");
    printf("%-26s %7s %9s %12s\n", "load", "threads", "ms/step", "vs 1 thread");
    bench_report rep;
    bench_report_init(&rep, "load");
    pid_t pids[MAX_SPINNERS];
    int status = KT_EXIT_OK, busy_count = cores < MAX_SPINNERS ? cores : MAX_SPINNERS;
    for (int busy = 0; busy < 2 && status == KT_EXIT_OK; busy++) {
        int n = 0;
        for (; busy && n < busy_count; n++)
            pids[n] = spinner();
        kt_render_result res;
        double t[2] = {ms_per_step(&perf, all, steps, o.repeats, &res),
                       ms_per_step(&perf, 1, steps, o.repeats, &res)};
        stop_spinners(pids, n);
        char label[64];
        snprintf(label, sizeof label, busy ? "+ %d busy processes" : "as it is", n);
        for (int k = 0; k < 2 && t[0] > 0 && t[1] > 0; k++) {
            printf("%-26s %7d %9.3f %12.2f\n", label, k ? 1 : all, t[k], t[k] / t[1]);
            bench_report_add(&rep, busy ? "busy" : "as-is", "demo", "cpu", "double", k ? 1 : all,
                             "ms_per_step", t[k], "ms");
        }
        if (t[0] <= 0 || t[1] <= 0)
            status = KT_EXIT_FAIL;
        fflush(stdout);
    }
    if (status == KT_EXIT_OK && o.json_path && bench_report_write_json(&rep, o.json_path) != 0)
        status = KT_EXIT_FAIL;
    bench_report_free(&rep);
    kt_performance_free(&perf);
    return status;
}
