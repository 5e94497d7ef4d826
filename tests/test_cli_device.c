/* test_cli_device.c - `kettle render --device` as a user meets it: the kettle
 * program is run on a tiny piece (an impulse in a small room).  Where the
 * GPU cannot be had (a build without CUDA, or no GPU of compute capability
 * 9.0 or newer: CI) --device gpu, on the command line or in <CsOptions>,
 * must stop with exit status 2, a message that names --device gpu and why,
 * and no output file; --device auto must render on the CPU and say so in
 * the summary ("device:    CPU (no GPU found)" or "... no CUDA backend").
 * Where a GPU is present both render, and the summary names it.
 *
 * Also the air options as a user meets them: --scheme fcc gives the FCC
 * grid (Courant number 1: 12 x 9 x 10 nodes where the 7-point scheme has
 * 7 x 5 x 6), --scheme compact:0 is refused with exit status 2 and the
 * reason, and --walls absorbing renders to the end: in this tiny room the
 * sound leaves before the guard's first check, and the round-off that stays
 * (~1e-30 J) must not be taken for an instability. */
#include "kt_config.h"
#include "kt_test.h"
#if KETTLE_CUDA_ENABLED
#include "kt_cuda.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[64];

static const char *piece =
    "<CsoundSynthesizer>\n<CsOptions>\n--threads 1 %s\n</CsOptions>\n<CsInstruments>\n"
    "sr = 8000\nroom = 0.5 0.4 0.45\nmic m 0.25 0.2 0.2\nimpulse 0.1 0.1 0.1\n"
    "</CsInstruments>\n<CsScore>\nf 0 0.02\n</CsScore>\n</CsoundSynthesizer>\n";

static int gpu_usable(void)
{
#if KETTLE_CUDA_ENABLED
    kt_gpu_info info;
    return kt_cuda_devices(&info, 1) > 0 && info.compute_major >= 9;
#else
    return 0;
#endif
}

static void path_in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Runs `kettle render CSD --device DEVICE -o OUT` (device NULL: as the
 * piece says); stdout and stderr into out_text and err_text.  Returns the
 * exit status, or -1 when it did not run to an exit. */
static int kettle_render(const char *csd, const char *device, const char *out, char *out_text,
                         char *err_text, size_t n)
{
    const char *with[] = {KETTLE_EXE, "render", csd, "--device", device, "-o", out, "--quiet",
                          NULL};
    const char *plain[] = {KETTLE_EXE, "render", csd, "-o", out, NULL};
    return kt_test_run((char *const *)(device ? with : plain), NULL, 600, out_text, err_text, n);
}

static void write_piece(const char *path, const char *options)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, piece, options);
        fclose(f);
    }
}

/* --device gpu where there is none: exit 2, the reason, no file. */
static void refused(const char *csd, const char *device, const char *what)
{
    char out[128], so[4096], se[4096];
    path_in_dir(out, sizeof out, "refused.wav");
    int st = kettle_render(csd, device, out, so, se, sizeof so);
    KT_CHECK(st == 2, "%s: exit status %d, want 2 (stderr: %s)", what, st, se);
    KT_CHECK(strstr(se, "--device gpu") &&
                 (strstr(se, "no GPU found") || strstr(se, "no CUDA backend") ||
                  strstr(se, "compute capability")),
             "%s: the message says why: %s", what, se);
    KT_CHECK(!exists(out), "%s: no output file after a refusal", what);
}

/* A render that must succeed and name its device in the summary. */
static void renders(const char *csd, const char *want, const char *what)
{
    char out[128], so[4096], se[4096];
    path_in_dir(out, sizeof out, "ok.wav");
    int st = kettle_render(csd, NULL, out, so, se, sizeof so);
    KT_CHECK(st == 0 && exists(out), "%s: exit status %d (stderr: %s)", what, st, se);
    KT_CHECK(strstr(so, want) != NULL, "%s: summary lacks '%s':\n%s", what, want, so);
    remove(out);
}

/* --scheme and --walls in <CsOptions>, on the CPU. */
static void air_options(void)
{
    static const struct {
        const char *options, *want;
        int status;
    } cases[] = {
        {"--device cpu", "grid:      7 x 5 x 6 ", 0},
        {"--device cpu --scheme fcc", "grid:      12 x 9 x 10 ", 0},
        {"--device cpu --walls absorbing", "grid:      7 x 5 x 6 ", 0},
        {"--device cpu --scheme compact:0", "the reach must be a whole number 1..64", 2},
    };
    char csd[128], out[128], so[4096], se[4096];
    path_in_dir(csd, sizeof csd, "air.csd");
    path_in_dir(out, sizeof out, "air.wav");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_piece(csd, cases[c].options);
        int st = kettle_render(csd, NULL, out, so, se, sizeof so);
        KT_CHECK(st == cases[c].status, "%s: exit status %d, want %d (stderr: %s)",
                 cases[c].options, st, cases[c].status, se);
        KT_CHECK(strstr(cases[c].status ? se : so, cases[c].want) != NULL, "%s: no '%s' in:\n%s%s",
                 cases[c].options, cases[c].want, so, se);
        KT_CHECK(exists(out) == !cases[c].status, "%s: output file %s", cases[c].options,
                 exists(out) ? "written" : "missing");
        remove(out);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_cli_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char gpu_csd[128], auto_csd[128], cpu_csd[128], plain_csd[128];
    path_in_dir(gpu_csd, sizeof gpu_csd, "gpu.csd");
    path_in_dir(auto_csd, sizeof auto_csd, "auto.csd");
    path_in_dir(cpu_csd, sizeof cpu_csd, "cpu.csd");
    path_in_dir(plain_csd, sizeof plain_csd, "plain.csd");
    write_piece(gpu_csd, "--device gpu");
    write_piece(auto_csd, "--device auto");
    write_piece(cpu_csd, "--device cpu");
    write_piece(plain_csd, "--tail 0");
    int gpu = gpu_usable();
    if (!gpu) {
        refused(plain_csd, "gpu", "--device gpu on the command line");
        refused(gpu_csd, NULL, "--device gpu in <CsOptions>");
        char out[128], so[4096], se[4096];
        path_in_dir(out, sizeof out, "refused.wav");
        int st = kettle_render(gpu_csd, "cpu", out, so, se, sizeof so);
        KT_CHECK(st == 0 && exists(out), "the command line's --device cpu overrides: %d %s", st,
                 se);
        remove(out);
        renders(auto_csd, KETTLE_CUDA_ENABLED ? "device:    CPU (no GPU found)"
                                              : "device:    CPU (this build has no CUDA",
                "--device auto without a GPU");
    } else {
        renders(gpu_csd, "device:    GPU ", "--device gpu");
        renders(auto_csd, "device:    GPU ", "--device auto");
    }
    renders(cpu_csd, "device:    CPU\n", "--device cpu");
    air_options();
    renders(plain_csd, gpu ? "device:    GPU " : "device:    CPU (", "no --device");
    printf("test_cli_device: %s\n", gpu ? "a GPU is present: rendered on it"
                                        : "no usable GPU: refused and fell back as it should");
    kt_test_remove_dir(dir);
    return kt_test_finish("test_cli_device");
}
