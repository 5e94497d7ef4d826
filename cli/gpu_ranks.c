/* gpu_ranks.c - `kettle ... --gpus N`: one process per GPU on this host,
 * with no MPI (kt_ranks.h, kt_gpu_job_*).  The first kettle makes the job's
 * NCCL id and starts N copies of itself with the same arguments, each told
 * its rank in the environment (KETTLE_GPU_RANK, _RANKS, _JOB); each copy
 * joins the job before it runs the command, so the room splits over the N
 * GPUs as it would over MPI ranks.  The first copy to fail ends the others
 * (they would wait on it); the exit status is rank 0's, or the first
 * failure's. */
#include "kt_cli.h"
#include "kt_ranks.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int kt_cli_gpus_asked(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--gpus"))
            return atoi(argv[i + 1]);
    return 0;
}

int kt_cli_gpu_rank_join(void)
{
    const char *rank = getenv("KETTLE_GPU_RANK"), *ranks = getenv("KETTLE_GPU_RANKS");
    if (!rank || !ranks)
        return KT_EXIT_OK;
    kt_error err = {0};
    if (kt_gpu_job_join(atoi(rank), atoi(ranks), getenv("KETTLE_GPU_JOB"), &err) < 0) {
        fprintf(stderr, "kettle: GPU rank %s of %s: %s\n", rank, ranks, err.message);
        return KT_EXIT_FAIL;
    }
    return KT_EXIT_OK;
}

/* The environment with the rank's three variables in front (prepared
 * before fork: between fork and exec only exec is called). */
static char **rank_environment(int rank, int ranks, const char *id)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 4, sizeof *env);
    char *vars = malloc(64 + KT_GPU_JOB_ID_CHARS + 16);
    if (!env || !vars) {
        free(env);
        free(vars);
        return NULL;
    }
    int a = snprintf(vars, 32, "KETTLE_GPU_RANK=%d", rank) + 1;
    int b = snprintf(vars + a, 32, "KETTLE_GPU_RANKS=%d", ranks) + 1;
    snprintf(vars + a + b, KT_GPU_JOB_ID_CHARS + 16, "KETTLE_GPU_JOB=%s", id);
    env[0] = vars;
    env[1] = vars + a;
    env[2] = vars + a + b;
    size_t k = 3;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "KETTLE_GPU_", 11))
            env[k++] = environ[i];
    return env;
}

static void free_environment(char **env)
{
    if (env)
        free(env[0]);
    free(env);
}

/* The ranks a SIGTERM to the first kettle goes on to: set before its
 * handler is installed, read by the handler only (kill is safe there). */
static const pid_t *volatile term_pid;
static volatile int term_ranks;

static void on_term(int sig)
{
    for (int r = 0; r < term_ranks; r++)
        if (term_pid[r] > 0)
            kill(term_pid[r], sig);
}

/* While the ranks run: Ctrl-C reaches them from the terminal (they stop at
 * their next check and write their parts of a checkpoint), so this process
 * waits on through it; a SIGTERM sent to it alone is passed on to them. */
static void pass_signals(const pid_t *pid, int ranks)
{
    term_pid = pid;
    term_ranks = ranks;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
}

/* Waits for every child; the first failure ends the rest. */
static int wait_ranks(pid_t *pid, int ranks)
{
    int status = KT_EXIT_OK, left = ranks, failed = 0;
    while (left > 0) {
        int st = 0;
        pid_t p = wait(&st);
        if (p < 0 && errno == EINTR)   /* a SIGTERM passed on */
            continue;
        if (p < 0)
            break;
        int r = 0;
        while (r < ranks && pid[r] != p)
            r++;
        if (r == ranks)
            continue;
        pid[r] = 0;
        left--;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : KT_EXIT_FAIL;
        /* 130, 143: stopped by a signal, as every rank is (a checkpoint's parts written) */
        int stopped = code == 128 + SIGINT || code == 128 + SIGTERM;
        if (code != KT_EXIT_OK && !stopped && !failed) {
            failed = 1;
            status = code;
            if (WIFSIGNALED(st))
                fprintf(stderr, "kettle: GPU rank %d ended by signal %d\n", r, WTERMSIG(st));
            for (int o = 0; o < ranks; o++)
                if (pid[o] > 0)
                    kill(pid[o], SIGTERM);
        } else if ((r == 0 || stopped) && !failed) {
            status = code;
        }
    }
    return status;
}

int kt_cli_start_gpu_ranks(int argc, char **argv, int ranks)
{
    (void)argc;
    kt_error err = {0};
    char id[KT_GPU_JOB_ID_CHARS];
    if (kt_gpu_job_new_id(id, &err) < 0) {
        fprintf(stderr, "kettle: --gpus %d: %s\n", ranks, err.message);
        return KT_EXIT_FAIL;
    }
    pid_t *pid = calloc((size_t)ranks, sizeof *pid);
    if (!pid)
        return KT_EXIT_FAIL;
    fflush(NULL);
    int started = 0;
    for (int r = 0; r < ranks; r++) {
        char **env = rank_environment(r, ranks, id);
        pid_t p = env ? fork() : -1;
        if (p == 0) {
            execve("/proc/self/exe", argv, env);
            _exit(KT_EXIT_FAIL);
        }
        free_environment(env);
        if (p < 0) {
            fprintf(stderr, "kettle: --gpus %d: cannot start rank %d\n", ranks, r);
            break;
        }
        pid[r] = p;
        started++;
    }
    int status;
    if (started < ranks) {
        for (int r = 0; r < started; r++)
            kill(pid[r], SIGTERM);
        wait_ranks(pid, started);
        status = KT_EXIT_FAIL;
    } else {
        pass_signals(pid, ranks);
        status = wait_ranks(pid, ranks);
        term_ranks = 0;                /* pid[] is freed below */
    }
    free(pid);
    return status;
}
