/* kettle.c - entry point of the `kettle` program: dispatches to subcommands.
 * Started by mpirun it joins the MPI job first (kt_ranks.h); a failure on
 * any rank then ends every rank, so none waits on it. */
#include "kt_cli.h"
#include "kt_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

/* Tables end with an empty entry. */
static const command bench_commands[] = {
    {"spmv", kt_cmd_bench_spmv, "sparse matrix-vector products: 5 formats, 1k..1M rows (Tables 6.4/6.5)"},
    {"room", kt_cmd_bench_room, "room step Mvox/s on 75^3..640x400x400 against copy bandwidth"},
    {"timpani", kt_cmd_bench_timpani, "per-stage cost of the reference drum, four implementations"},
    {"stencils", kt_cmd_bench_stencils, "CTPN against stencil size K, three families; 2 % band cost"},
    {"load", kt_cmd_bench_load, "ms per step, all cores against one, idle and every core busy"},
    {"section", kt_cmd_bench_section, "us per step of a room with 0..8 drums: what each drum adds"},
    {NULL, NULL, NULL},
};

static const command top_commands[] = {
    {"render", kt_cmd_render, "orchestra + score (or .csd) to WAV/FLAC"},
    {"resume", kt_cmd_resume, "continue a render from its checkpoint (render --checkpoint)"},
    {"tune", kt_cmd_tune, "what each drum sounds: (1,1) in Hz and cents, next partials"},
    {"plot", kt_cmd_plot, "waveforms, spectrogram and spectrum of a sound file as PNG"},
    {"version", kt_cmd_version, "version, build and detected GPUs (also --version)"},
    {NULL, NULL, NULL},
};

static void list_commands(FILE *f, const char *prefix, const command *c)
{
    for (; c->name; c++)
        fprintf(f, "  %s%-10s %s\n", prefix, c->name, c->summary);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kettle <command> [options]   (kettle <command> --help for more)\n\n"
               "Physical-modelling timpani in a 3D FDTD room.\n\ncommands:\n");
    list_commands(f, "", top_commands);
    fprintf(f, "  bench      measure speed; every bench takes --json FILE:\n");
    list_commands(f, "bench ", bench_commands);
}

static int dispatch(const command *c, int argc, char **argv)
{
    for (; c->name; c++)
        if (strcmp(argv[0], c->name) == 0)
            return c->run(argc, argv);
    fprintf(stderr, "kettle: unknown command '%s'\n\n", argv[0]);
    usage(stderr);
    return KT_EXIT_USAGE;
}

static int run(int argc, char **argv);

/* Idle OpenMP threads should sleep, not spin: libgomp's default spins about
 * 300,000 times at every barrier, and on a machine doing other work (a DAW,
 * a browser, another render) that spin takes the core a descheduled sibling
 * needs (the demo: 24 ms a step against 0.84 ms with passive waiting; see
 * docs/benchmarks.md).  The runtime reads OMP_WAIT_POLICY once, while it is
 * loaded, before main() (and libc resets the environment after any earlier
 * hook), so when the user has not chosen a policy the program starts itself
 * again with `passive` set: the same pid, arguments and environment.  Not
 * under valgrind, which an exec would leave; where exec fails, nothing is
 * lost but the policy. */
static void wait_passively(char **argv)
{
    const char *preload = getenv("LD_PRELOAD");
    if (getenv("OMP_WAIT_POLICY") || (preload && strstr(preload, "vgpreload")))
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
        execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    wait_passively(argv);
    if (kt_mpi_launched()) {
        kt_error err = {0};
        if (kt_mpi_init(&argc, &argv, &err) < 0) {
            fprintf(stderr, "kettle: started by mpirun, but %s\n", err.message);
            return KT_EXIT_FAIL;
        }
    }
    /* --gpus N: the first kettle starts one rank per GPU and waits for them */
    if (!getenv("KETTLE_GPU_RANK") && !kt_mpi_launched() && kt_cli_gpus_asked(argc, argv) > 1)
        return kt_cli_start_gpu_ranks(argc, argv, kt_cli_gpus_asked(argc, argv));
    if (kt_cli_gpu_rank_join() != KT_EXIT_OK)
        return KT_EXIT_FAIL;
    int status = run(argc, argv);
    /* a stop request is every rank's (kt_guard.h): they end together */
    if (status != KT_EXIT_OK && kt_mpi_size() > 1 && !kt_cli_signal_exit_status()) {
        fflush(NULL);
        kt_mpi_abort(status);
    }
    kt_gpu_job_leave();
    kt_mpi_finalize();
    return status;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return KT_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0)
        return kt_cmd_version(argc - 1, argv + 1);
    if (strcmp(argv[1], "bench") == 0) {
        if (argc < 3 || strcmp(argv[2], "--help") == 0) {
            usage(argc < 3 ? stderr : stdout);
            return argc < 3 ? KT_EXIT_USAGE : KT_EXIT_OK;
        }
        return dispatch(bench_commands, argc - 2, argv + 2);
    }
    return dispatch(top_commands, argc - 1, argv + 1);
}
