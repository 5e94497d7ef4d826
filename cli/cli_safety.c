/* cli_safety.c - what `kettle render` and `kettle resume` share for issues
 * #9 and #24: SIGINT and SIGTERM turned into a polite stop request (the
 * render finishes its step, writes a checkpoint and the audio so far, and the
 * program exits 128 + the signal), warnings the render goes on through,
 * and durations such as "10m" for --checkpoint-every. */
#include "kt_cli.h"
#include "kt_render.h"
#include "kt_ranks.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The one piece of global state the style allows: set by the handler only. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

void kt_cli_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;   /* a second Ctrl-C ends the program at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int kt_cli_stop_requested(void *user)
{
    (void)user;
    return stop_signal != 0;
}

int kt_cli_signal_exit_status(void)
{
    return stop_signal ? 128 + stop_signal : 0;
}

int kt_cli_duration(const char *s, double *seconds)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || errno || !isfinite(x) || x <= 0)
        return -1;
    double unit = 1;
    if (!strcmp(end, "m") || !strcmp(end, "min"))
        unit = 60;
    else if (!strcmp(end, "h"))
        unit = 3600;
    else if (*end && strcmp(end, "s") != 0)
        return -1;
    *seconds = x * unit;
    return 0;
}

void kt_cli_warn(void *user, const char *message)
{
    (void)user;
    /* on a terminal the progress bar holds the line */
    fprintf(stderr, "%skettle: warning: %s\n", isatty(2) ? "\n" : "", message);
}

void kt_cli_default_checkpoint(const char *output, char *buf, size_t size)
{
    const char *slash = strrchr(output, '/'), *dot = strrchr(output, '.');
    size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - output) : strlen(output);
    snprintf(buf, size, "%.*s.ckpt", (int)n, output);
}

int kt_cli_exit_status(const kt_score_error *e)
{
    if (e->code == KT_EINVAL || e->code == KT_ENOTSUP || (e->code == KT_EIO && e->file[0]))
        return KT_EXIT_USAGE;
    return KT_EXIT_FAIL;
}

int kt_cli_after_failure(const kt_score_error *err, const kt_render_result *res,
                         const char *checkpoint, int status)
{
    if (res->partial_path[0])
        fprintf(stderr, "kettle: the audio rendered so far is in %s\n", res->partial_path);
    if (err->code != KT_EINTR)
        return status;
    /* over ranks: rank 0 says how to start them again */
    if (res->checkpoints_written > 0 && checkpoint && kt_mpi_size() == 1)
        fprintf(stderr, "kettle: continue with: kettle resume %s\n", checkpoint);
    else if (res->checkpoints_written > 0 && checkpoint && kt_mpi_rank() == 0)
        fprintf(stderr, "kettle: continue with: %s%d %s%s\n",
                kt_mpi_launched() ? "mpirun -np " : "kettle resume --gpus ", kt_mpi_size(),
                kt_mpi_launched() ? "kettle resume " : "", checkpoint);
    int sig = kt_cli_signal_exit_status();
    return sig ? sig : status;
}
