/* cmd_resume.c - `kettle resume CHECKPOINT`: continue a render stopped by a
 * signal, a crash or a kill after its last checkpoint.  The checkpoint holds
 * the source texts, the options and the state (perform/include/kt_checkpoint.h); the
 * render goes on in the folder it started in and writes the same output
 * file, byte for byte what an uninterrupted render would have written. */
#include "kt_cli.h"
#include "kt_checkpoint.h"
#include "kt_ranks.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void resume_usage(FILE *f)
{
    fprintf(f,
        "usage: kettle resume [options] CHECKPOINT\n\n"
        "Continues the render that wrote CHECKPOINT (kettle render --checkpoint, or the\n"
        "OUTPUT.ckpt a render leaves when stopped by Ctrl-C or SIGTERM).  The render\n"
        "runs in the folder it was started in, with its own options, and writes its\n"
        "own output file; it keeps writing checkpoints to the same file.\n\n"
        "options:\n"
        "  --threads N           worker threads, at most the machine's cores (the\n"
        "                        audio does not depend on it)\n"
        "  --checkpoint-every D  wall-clock time between checkpoints: 90, 30s, 10m, 1h\n"
        "  --gpus N              a render that ran with --gpus N resumes with the same N\n"
        "                        (under mpirun: the same -np); each rank reads its part,\n"
        "                        CHECKPOINT.rankK\n"
        "  --quiet               no summary\n"
        "  -h, --help            this text\n\n"
        "Exit status: 0 done, 1 the render failed, 2 the checkpoint is unreadable,\n"
        "damaged or forged (the message names the field), 3 written but clipped (when\n"
        "the render asked --fail-on-clip), 130/143 stopped again by SIGINT/SIGTERM (a\n"
        "new checkpoint was written).\n");
}

typedef struct resume_cli {
    const char *path;
    int threads, quiet;
    double every_s;
} resume_cli;

static int parse_args(resume_cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quiet"))
            c->quiet = 1;
        else if (!strcmp(a, "--threads") && v && (c->threads = atoi(v)) > 0) {
            kt_error e;
            kt_error_clear(&e);
            if (kt_threads_check(c->threads, &e) < 0) {
                fprintf(stderr, "kettle resume: --threads %s: %s\n", v, e.message);
                return -1;
            }
            i++;
        }
        else if (!strcmp(a, "--checkpoint-every") && v && kt_cli_duration(v, &c->every_s) == 0)
            i++;
        else if (!strcmp(a, "--gpus") && v && atoi(v) > 0)   /* kettle.c started the ranks */
            i++;
        else if (a[0] != '-' && !c->path)
            c->path = a;
        else {
            fprintf(stderr, "kettle resume: bad argument '%s' (kettle resume --help)\n", a);
            return -1;
        }
    }
    if (!c->path)
        fprintf(stderr, "kettle resume: which checkpoint? (kettle resume --help)\n");
    return c->path ? 0 : -1;
}

/* The checkpoint's path made absolute, since the render moves to its folder. */
static void absolute(const char *path, char *buf, size_t size)
{
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(buf, size, "%s", path);
    else
        snprintf(buf, size, "%s/%s", cwd, path);
}

static void print_done(const kt_performance *perf, const kt_render_result *r, const char *output,
                       int64_t from)
{
    printf("wrote %s\n", output);
    printf("resumed:   at step %lld of %lld (%.3f s of %.3f s)\n", (long long)from,
           (long long)r->total_steps, from / r->sample_rate_hz, r->duration_s);
    printf("wall time: %.2f s (setup %.2f s)\n", r->setup_s + r->run_s, r->setup_s);
    kt_cli_print_levels(perf, r);
}

static int run_resume(const resume_cli *c, kt_checkpoint *ck, const char *ck_path)
{
    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err = {0};
    if (kt_checkpoint_performance(ck, &perf, &err) < 0) {
        char buf[4096];
        kt_score_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "kettle resume: the checkpoint's score no longer parses:\n%s", buf);
        kt_performance_free(&perf);
        return KT_EXIT_USAGE;
    }
    kt_render_options opt;
    kt_checkpoint_options(ck, &opt);
    if (c->threads > 0)
        opt.nthreads = c->threads;
    if (kt_threads_check(opt.nthreads, NULL) < 0) {
        /* written on a bigger machine: the audio does not depend on the count */
        if (!c->quiet)
            fprintf(stderr, "kettle resume: the render ran on %d threads; here it uses all %d "
                    "cores\n", opt.nthreads, kt_threads_resolve(0));
        opt.nthreads = 0;
    }
    if (c->every_s > 0)
        opt.checkpoint_every_s = c->every_s;
    if (!opt.checkpoint_path)
        opt.checkpoint_path = ck_path;
    opt.stop = kt_cli_stop_requested;
    opt.warn = kt_mpi_rank() == 0 ? kt_cli_warn : NULL;
    kt_cli_catch_signals();
    kt_flush_denormals(opt.nthreads);
    kt_render_result res;
    int rc = kt_render(&perf, kt_checkpoint_output(ck), &opt, &res, &err), status = KT_EXIT_OK;
    if (rc < 0) {
        char buf[4096];
        kt_score_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "kettle resume: %s", buf);
        status = kt_cli_after_failure(&err, &res, opt.checkpoint_path, kt_cli_exit_status(&err));
    } else {
        if (!c->quiet && kt_mpi_rank() == 0)
            print_done(&perf, &res, kt_checkpoint_output(ck), kt_checkpoint_step(ck));
        status = kt_cli_clip_warnings(&perf, &res, &opt);
    }
    kt_render_result_free(&res);
    kt_performance_free(&perf);
    return status;
}

int kt_cmd_resume(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            resume_usage(stdout);
            return KT_EXIT_OK;
        }
    resume_cli c = {0};
    if (parse_args(&c, argc, argv) < 0)
        return KT_EXIT_USAGE;
    char ck_path[PATH_MAX + 8];
    absolute(c.path, ck_path, sizeof ck_path);
    kt_checkpoint *ck;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_checkpoint_open(ck_path, &ck, &e);
    /* over ranks every one opens its part, or none goes on */
    if (kt_mpi_size() > 1 && kt_mpi_min(rc == 0) < 1 && rc == 0) {
        kt_checkpoint_close(ck);
        rc = kt_fail(&e, KT_EINVAL, "another rank could not open its part of %s", ck_path);
    }
    if (rc < 0) {
        fprintf(stderr, "kettle resume: %s\n", e.message);
        return KT_EXIT_USAGE;
    }
    if (chdir(kt_checkpoint_folder(ck)) != 0)
        fprintf(stderr, "kettle resume: cannot enter %s (where the render began); relative "
                "paths are taken from here\n", kt_checkpoint_folder(ck));
    int status = run_resume(&c, ck, ck_path);
    kt_checkpoint_close(ck);
    return status;
}
