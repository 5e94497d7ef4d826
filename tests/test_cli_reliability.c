/* test_cli_reliability.c - issue #24 as a user meets it: the kettle program
 * is run on tiny pieces and must never lose a render nor crash.
 *  - `-o FILE` inside <CsOptions> writes FILE (it read freed stack memory);
 *  - --threads above the machine's cores is refused at once, exit 2 (100000
 *    overflowed the OpenMP runtime's stack);
 *  - a checkpoint path that holds a file not Kettle's is refused, the file
 *    untouched (a .csd could overwrite any file);
 *  - outputs that cannot be written (.xyz, .mp3, a missing folder, /dev/full,
 *    a device behind a .wav name, a FIFO, a folder) are refused before the
 *    first step, also by --estimate (they failed after the whole render);
 *  - a FIFO named as a sound file is refused, not waited on for ever;
 *  - temporaries a killed run left beside the output and the checkpoint are
 *    swept by the next render and by a resume, a live process's kept;
 *  - lengths beyond what a render can count, or over an hour, are located
 *    (file:line:col), a NUL byte in a score too; a blasting impulse is
 *    refused at its line rather than blamed on a drum; a drum too near a
 *    wall says by how much;
 *  - idle OpenMP threads sleep: the runtime sees OMP_WAIT_POLICY=passive
 *    (GOMP_SPINCOUNT 0) unless the user chose a policy. */
#include "kt_test.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUT_MAX 8192
#define TIMEOUT_S 60

static char dir[64];
static char so[OUT_MAX], se[OUT_MAX];

static const char *tiny_csd =
    "<CsoundSynthesizer>\n<CsOptions>\n--threads 1 %s\n</CsOptions>\n<CsInstruments>\n"
    "sr = 8000\nroom = 0.5 0.4 0.45\nmic m 0.25 0.2 0.2\nimpulse 0.1 0.1 0.1\n"
    "</CsInstruments>\n<CsScore>\nf 0 0.02\n</CsScore>\n</CsoundSynthesizer>\n";

static const char *drum_orc = "sr = 16000\nroom = 0.8 0.8 0.9\nbeta = 0.2\n"
                              "mic near 0.4 0.4 0.75\n"
                              "instr 1\n  size = 23\n  pitch = D3\n  pos = 0.4 0.4 0.6\nendin\n";

static void in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(text, 1, n, f);
        fclose(f);
    }
}

static void write_csd(const char *path, const char *options)
{
    char text[1024];
    int n = snprintf(text, sizeof text, tiny_csd, options);
    write_text(path, text, (size_t)n);
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* kettle ARGS... (NULL-terminated), the environment as it is. */
static int kettle(const char *first, ...)
{
    char *argv[16] = {KETTLE_EXE, (char *)first};
    va_list ap;
    va_start(ap, first);
    for (int i = 2; i < 15 && (argv[i] = va_arg(ap, char *)); i++)
        ;
    va_end(ap);
    argv[15] = NULL;
    return kt_test_run(argv, NULL, TIMEOUT_S, so, se, OUT_MAX);
}

/* -o inside <CsOptions>: the file named there is written. */
static void output_in_options(void)
{
    char csd[128], out[128], opts[256];
    in_dir(csd, sizeof csd, "opt.csd");
    in_dir(out, sizeof out, "named_in_options.wav");
    snprintf(opts, sizeof opts, "-o %s --tail 0.01", out);
    write_csd(csd, opts);
    int st = kettle("render", csd, "--quiet", NULL);
    KT_CHECK(st == 0 && exists(out), "-o in <CsOptions>: exit %d, %s %s: %s", st, out,
             exists(out) ? "written" : "missing", se);
    remove(out);
}

/* --threads above the cores: exit 2 at once, naming the bound. */
static void threads_bounded(void)
{
    char csd[128], out[128], many[32];
    in_dir(csd, sizeof csd, "t.csd");
    in_dir(out, sizeof out, "t.wav");
    write_csd(csd, "");
    snprintf(many, sizeof many, "%ld", sysconf(_SC_NPROCESSORS_ONLN) + 1);
    const char *counts[] = {"100000", "20000", many};
    for (int i = 0; i < 3; i++) {
        int st = kettle("render", csd, "-o", out, "--threads", counts[i], NULL);
        KT_CHECK(st == 2 && strstr(se, "processor"), "--threads %s: exit %d: %s", counts[i], st,
                 se);
        st = kettle("render", csd, "-o", out, "--estimate", "--threads", counts[i], NULL);
        KT_CHECK(st == 2 && !strstr(so, "predicted"), "--estimate --threads %s: exit %d: %s",
                 counts[i], st, se);
    }
    write_csd(csd, "--threads 100000");
    int st = kettle("render", csd, "-o", out, NULL);
    KT_CHECK(st == 2 && strstr(se, "t.csd:3:") && strstr(se, "processor"),
             "--threads 100000 in <CsOptions>: exit %d, located: %s", st, se);
    KT_CHECK(!exists(out), "no output after a refused thread count");
}

/* --checkpoint naming someone else's file: refused, the file intact; a
 * Kettle checkpoint there is replaced as before. */
static void foreign_checkpoint(void)
{
    char csd[128], out[128], notes[128], opts[256], text[64];
    in_dir(csd, sizeof csd, "ck.csd");
    in_dir(out, sizeof out, "ck.wav");
    in_dir(notes, sizeof notes, "notes.txt");
    write_text(notes, "my notes\n", 9);
    snprintf(opts, sizeof opts, "--checkpoint %s --checkpoint-every 0.001s --tail 0.2", notes);
    write_csd(csd, opts);
    int st = kettle("render", csd, "-o", out, NULL);
    FILE *f = fopen(notes, "rb");
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[got] = '\0';
    if (f)
        fclose(f);
    KT_CHECK(st == 2 && strstr(se, "not a Kettle checkpoint") && strcmp(text, "my notes\n") == 0,
             "a foreign file as checkpoint: exit %d, file now '%s': %s", st, text, se);
    KT_CHECK(!strstr(se, "steps), ETA"), "refused before the first step: %s", se);
    /* a checkpoint of Kettle's own there is fine to replace */
    char ck[128];
    in_dir(ck, sizeof ck, "own.ckpt");
    snprintf(opts, sizeof opts, "--checkpoint %s --checkpoint-every 0.0001s --tail 0.2", ck);
    write_csd(csd, opts);
    st = kettle("render", csd, "-o", out, "--quiet", NULL);
    int first = st == 0 && exists(ck);
    st = kettle("render", csd, "-o", out, "--quiet", NULL);
    KT_CHECK(first && st == 0, "Kettle's own checkpoint is replaced: exit %d: %s", st, se);
    remove(ck);
    remove(out);
}

/* Outputs that cannot be written: exit non-zero before the first step (no
 * progress line), and --estimate says so too. */
static void outputs_checked_first(void)
{
    char csd[128], fifo[128], dev[128], folder[128], missing[128];
    in_dir(csd, sizeof csd, "o.csd");
    write_csd(csd, "--tail 0.5");
    in_dir(fifo, sizeof fifo, "fifo.wav");
    in_dir(dev, sizeof dev, "full.wav");
    in_dir(folder, sizeof folder, "folder.wav");
    in_dir(missing, sizeof missing, "no/such/folder/x.wav");
    mkfifo(fifo, 0644);
    KT_CHECK(symlink("/dev/full", dev) == 0, "cannot make %s", dev);
    mkdir(folder, 0755);
    const char *outs[] = {"out.xyz", "x.mp3", missing, "/dev/full", dev, fifo, folder};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        int st = kettle("render", csd, "-o", outs[i], NULL);
        KT_CHECK(st == 2 && !strstr(se, "steps), ETA") && strstr(se, "error"),
                 "-o %s: exit %d, before the first step: %s", outs[i], st, se);
        st = kettle("render", csd, "-o", outs[i], "--estimate", NULL);
        KT_CHECK(st == 2 && !strstr(so, "predicted"), "--estimate -o %s: exit %d: %s%s", outs[i],
                 st, so, se);
    }
    struct stat s;
    KT_CHECK(stat(fifo, &s) == 0 && S_ISFIFO(s.st_mode) && stat(folder, &s) == 0 &&
                 S_ISDIR(s.st_mode),
             "the FIFO and the folder are left as they were");
    remove(fifo);
    remove(dev);
    rmdir(folder);
}

/* A FIFO as a sound file: refused at its line, promptly (it blocked open()). */
static void fifo_sound_file(void)
{
    char orc[128], sco[128], fifo[128], out[128], text[512];
    in_dir(orc, sizeof orc, "fifo.orc");
    in_dir(sco, sizeof sco, "fifo.sco");
    in_dir(fifo, sizeof fifo, "source.wav");
    in_dir(out, sizeof out, "fifo_out.wav");
    mkfifo(fifo, 0644);
    int n = snprintf(text, sizeof text, "sr = 8000\nroom = 0.5 0.4 0.45\nmic m 0.25 0.2 0.2\n"
                     "soundfile \"%s\" 0.1 0.1 0.1\n", fifo);
    write_text(orc, text, (size_t)n);
    write_text(sco, "f 0 0.02\n", 9);
    const char *modes[] = {"--quiet", "--estimate"};
    for (int i = 0; i < 2; i++) {
        int st = kettle("render", orc, sco, "-o", out, modes[i], NULL);
        KT_CHECK(st == 2 && strstr(se, "fifo.orc:4:") && strstr(se, "regular file"),
                 "a FIFO as sound file (%s): exit %d (142: still waiting after %d s): %s",
                 modes[i], st, TIMEOUT_S, se);
    }
    remove(fifo);
}

/* The pid of a process that has ended. */
static long dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return (long)pid;
}

static void plant(const char *path, long pid, const char *tail)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%s", path, pid, tail);
    write_text(tmp, "half-written", 12);
}

static int planted(const char *path, long pid, const char *tail)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%s", path, pid, tail);
    return exists(tmp);
}

/* Temporaries of a killed run beside the output, its per-microphone files
 * and the checkpoint go when the next render or resume of it starts. */
static void stale_temporaries(void)
{
    char csd[128], out[128], mic[128], ck[128], opts[256];
    in_dir(csd, sizeof csd, "s.csd");
    in_dir(out, sizeof out, "take.wav");
    in_dir(mic, sizeof mic, "take_m.wav");
    in_dir(ck, sizeof ck, "take.ckpt");
    snprintf(opts, sizeof opts, "--checkpoint-every 0.0001s --tail 0.3 --per-mic");
    write_csd(csd, opts);
    long dead = dead_pid(), live = (long)getpid();
    plant(out, dead, "a1B2c3");
    plant(mic, dead, "d4E5f6");
    plant(ck, dead, "g7H8i9");
    plant(out, live, "LiVe00");
    int st = kettle("render", csd, "-o", out, "--quiet", NULL);
    KT_CHECK(st == 0, "render: exit %d: %s", st, se);
    KT_CHECK(!planted(out, dead, "a1B2c3") && !planted(mic, dead, "d4E5f6") &&
                 !planted(ck, dead, "g7H8i9"),
             "a render sweeps a killed run's temporaries");
    KT_CHECK(planted(out, live, "LiVe00"), "a live process's temporary is kept");
    /* the render left its last periodic checkpoint: resume from it */
    KT_CHECK(exists(ck), "a checkpoint to resume from: %s", ck);
    plant(out, dead, "j1K2l3");
    plant(ck, dead, "m4N5o6");
    st = kettle("resume", ck, "--quiet", NULL);
    KT_CHECK(st == 0, "resume: exit %d: %s", st, se);
    KT_CHECK(!planted(out, dead, "j1K2l3") && !planted(ck, dead, "m4N5o6"),
             "a resume sweeps a killed run's temporaries");
    char live_tmp[256];
    snprintf(live_tmp, sizeof live_tmp, "%s.tmp-%ld-LiVe00", out, live);
    remove(live_tmp);
    remove(out);
    remove(mic);
    remove(ck);
}

/* Errors with a place: file:line:col and the message's words. */
static void located(const char *orc_text, const char *sco_text, size_t sco_len, const char *where,
                    const char *words, const char *what)
{
    char orc[128], sco[128], out[128];
    in_dir(orc, sizeof orc, "m.orc");
    in_dir(sco, sizeof sco, "m.sco");
    in_dir(out, sizeof out, "m.wav");
    write_text(orc, orc_text, strlen(orc_text));
    write_text(sco, sco_text, sco_len);
    int st = kettle("render", orc, sco, "-o", out, "--quiet", NULL);
    KT_CHECK(st == 2 && strstr(se, where) && strstr(se, words),
             "%s: exit %d, want 2 and '%s' ... '%s': %s", what, st, where, words, se);
    KT_CHECK(!exists(out), "%s: no output", what);
}

static void messages(void)
{
    char orc[512];
    snprintf(orc, sizeof orc, "%s", drum_orc);
    located(orc, "f 0 1e15\n", 9, "m.sco:1:1:", "more than a render can count",
            "f 0 1e15 at 16 kHz");
    located(orc, "i 1 0 1e20 ff\n", 14, "m.sco:1:1:", "more than a render can count",
            "i 1 0 1e20 ff");
    located(orc, "i 1 0 0.1 ff\nf 0 5000\n", 22, "m.sco:2:1:", "over an hour", "f 0 5000");
    located(orc, "i 1 0 0.1 ff\ni 1 0.2 0.1\0 mf\n", 29, "m.sco:2:12:", "NUL",
            "a NUL byte in the score");
    snprintf(orc, sizeof orc, "%simpulse 0.4 0.4 0.7 0 1ms 1e300\n", drum_orc);
    located(orc, "i 1 0 0.05 ff\n", 14, "m.orc:10:1:", "impulse", "an impulse of 1e300");
    KT_CHECK(!strstr(se, "a parameter of drum"), "the drum is not blamed: %s", se);
    /* viscosity widens the grid: this drum misses the wall margin by 0.2 mm */
    snprintf(orc, sizeof orc, "sr = 16000\nroom = 0.8 0.8 0.9\nbeta = 0.2\nviscosity = on\n"
             "mic near 0.4 0.4 0.75\ninstr 1\n  size = 23\n  pitch = D3\n"
             "  pos = 0.36895 0.4 0.6\nendin\n");
    located(orc, "i 1 0 0.05 ff\n", 14, "m.orc:6:1:", "mm too close", "a drum near the wall");
}

/* Idle threads sleep: GOMP_SPINCOUNT is 0 where the runtime is libgomp
 * (OMP_WAIT_POLICY unset by the test: ctest sets it); a policy the user
 * chose is kept. */
static void passive_waiting(void)
{
    char *argv[] = {KETTLE_EXE, "version", NULL};
    const char *unset[] = {"OMP_WAIT_POLICY", "OMP_DISPLAY_ENV=verbose", NULL};
    int st = kt_test_run(argv, unset, TIMEOUT_S, so, se, OUT_MAX);
    const char *spin = NULL;
    for (const char *p = strstr(se, "GOMP_SPINCOUNT"); p; p = strstr(p + 1, "GOMP_SPINCOUNT"))
        spin = p;   /* the last display: the runtime of the program that runs */
    KT_CHECK(st == 0 && (spin ? strncmp(spin, "GOMP_SPINCOUNT = '0'", 20) == 0
                              : strstr(se, "PASSIVE") != NULL),
             "OpenMP waits passively by default: %.200s", spin ? spin : se);
    const char *active[] = {"OMP_WAIT_POLICY=active", "OMP_DISPLAY_ENV=true", NULL};
    st = kt_test_run(argv, active, TIMEOUT_S, so, se, OUT_MAX);
    KT_CHECK(st == 0 && strstr(se, "OMP_WAIT_POLICY = 'ACTIVE'"),
             "the user's OMP_WAIT_POLICY=active is kept: %.300s", se);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_rel_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    output_in_options();
    threads_bounded();
    foreign_checkpoint();
    outputs_checked_first();
    fifo_sound_file();
    stale_temporaries();
    messages();
    passive_waiting();
    kt_test_remove_dir(dir);
    return kt_test_finish("test_cli_reliability");
}
