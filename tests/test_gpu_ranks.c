/* test_gpu_ranks.c - a room split over two GPUs (kettle render --gpus 2:
 * two ranks, NCCL halos, no MPI) against the same room on one GPU, bit for
 * bit, in single and double precision: lossy walls, a drum whose membrane
 * layers straddle the slab boundary (rank 1 steps it with rank 0's top
 * plane lent across), a fixed microphone whose cell straddles the boundary
 * (its samples wait a step for the halo) and one moving across it.  The
 * output is raw 64-bit float, so equal data chunks mean equal samples.  Needs
 * two GPUs and a build with NCCL; skipped (77) otherwise. */
#include "kt_test.h"
#include "kt_cuda.h"
#include "kt_ranks.h"
#include "kettle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SR_HZ 16000
#define ROOM_M "0.8 0.8 1.3"

static char dir[64];

/* z (metres) of the drum whose layers p_d, p_u are the last plane of rank
 * 0's slab and the first of rank 1's, and of the boundary itself. */
static void boundary(double *drum_z, double *plane_z)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = 0.8, p.size_m[1] = 0.8, p.size_m[2] = 1.3;
    p.sample_rate_hz = SR_HZ;
    kt_room_grid g;
    kt_room_estimate(&p, &g, NULL);
    int first = g.nz / 2;                      /* rank 1's first plane (room_slab_split) */
    *drum_z = (first - 0.5 + 0.1) * g.spacing_m; /* p_d = round(z/Q - 1/2) = first - 1 */
    *plane_z = (first - 0.5) * g.spacing_m;    /* between the two slabs' planes */
}

static int write_piece(const char *orc_path, const char *sco_path)
{
    double dz, bz;
    boundary(&dz, &bz);
    FILE *f = fopen(orc_path, "w");
    if (!f)
        return -1;
    fprintf(f, "sr = %d\nroom = %s\nbeta = 0.3\nksmps = 16\n"
               "mic straddle 0.31 0.42 %.6f\n"
               "mic walker 0.2 0.3 %.6f\nmove walker 0.15 0.6 0.5 %.6f\n"
               "impulse 0.2 0.6 0.2 0.01 1ms 0.5\n"
               "instr 1\n  size = 23\n  pitch = D3\n  pos = 0.4 0.4 %.6f\nendin\n",
            SR_HZ, ROOM_M, bz, bz - 0.2, bz + 0.2, dz);
    fclose(f);
    f = fopen(sco_path, "w");
    if (!f)
        return -1;
    fprintf(f, "i 1 0 0.05 f 0.6 10\ni 1 0.06 0.05 mf 0.4 -30\n");
    fclose(f);
    return 0;
}

static int render(const char *orc, const char *sco, const char *out, const char *precision,
                  const char *gpus)
{
    char *argv[24];
    int n = 0;
    argv[n++] = KETTLE_EXE;
    argv[n++] = "render";
    argv[n++] = (char *)orc;
    argv[n++] = (char *)sco;
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = "--device";
    argv[n++] = "gpu";
    argv[n++] = "--precision";
    argv[n++] = (char *)precision;
    argv[n++] = "--bits";
    argv[n++] = "64f";
    argv[n++] = "--gain";
    argv[n++] = "1";
    argv[n++] = "--tail";
    argv[n++] = "0.05";
    argv[n++] = "--tuning";
    argv[n++] = "formula";
    if (gpus) {
        argv[n++] = "--gpus";
        argv[n++] = (char *)gpus;
    }
    argv[n] = NULL;
    static char err[8192];
    int rc = kt_test_run(argv, NULL, 600, NULL, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "kettle render (%s, --gpus %s) exited %d:\n%s\n", precision,
                gpus ? gpus : "1", rc, err);
    return rc;
}

static unsigned char *slurp(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)*size + 1);
    if (b && fread(b, 1, (size_t)*size, f) != (size_t)*size) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* The file's "data" chunk id, or NULL. */
static const unsigned char *data_chunk(const unsigned char *b, long n)
{
    for (long i = 12; b && i + 4 <= n; i++)
        if (!memcmp(b + i, "data", 4))
            return b + i;
    return NULL;
}

static void compare(const char *orc, const char *sco, const char *precision)
{
    char one[128], two[128];
    snprintf(one, sizeof one, "%s/one_%s.wav", dir, precision);
    snprintf(two, sizeof two, "%s/two_%s.wav", dir, precision);
    KT_CHECK(render(orc, sco, one, precision, NULL) == 0, "%s: one GPU rendered", precision);
    KT_CHECK(render(orc, sco, two, precision, "2") == 0, "%s: two GPUs rendered", precision);
    long na = 0, nb = 0;
    unsigned char *a = slurp(one, &na), *b = slurp(two, &nb);
    KT_CHECK(a && b && na == nb && na > 44, "%s: both files, same length (%ld, %ld bytes)",
             precision, na, nb);
    /* the samples: from the data chunk on (the PEAK chunk before it holds
     * the time the file was written) */
    const unsigned char *da = data_chunk(a, na), *db = data_chunk(b, nb);
    KT_CHECK(da && db && da - a == db - b, "%s: both files have their data chunk at one place",
             precision);
    if (da && db && na == nb && da - a == db - b) {
        long differ = 0;
        for (long i = da - a; i < na; i++)
            differ += a[i] != b[i];
        KT_CHECK(differ == 0, "%s: two GPUs equal one bit for bit (%ld bytes differ)",
                 precision, differ);
        double peak = 0;
        for (long i = (da - a) + 8; i + 8 <= na; i += 8) {
            double v;
            memcpy(&v, a + i, sizeof v);
            peak = v > peak ? v : -v > peak ? -v : peak;
        }
        KT_CHECK(peak > 1e-6, "%s: the microphones heard the drum (peak %g)", precision, peak);
    }
    free(a);
    free(b);
}

int main(void)
{
    kt_gpu_info info[2];
    if (!kt_gpu_job_compiled() || kt_cuda_devices(info, 2) < 2 || info[0].compute_major < 9) {
        printf("test_gpu_ranks: needs two GPUs of compute capability 9.0 and NCCL: skipped\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/kt_gpu_ranks_%d", (int)getpid());
    if (mkdir(dir, 0700) != 0)
        return 1;
    char orc[128], sco[128];
    snprintf(orc, sizeof orc, "%s/piece.orc", dir);
    snprintf(sco, sizeof sco, "%s/piece.sco", dir);
    KT_CHECK(write_piece(orc, sco) == 0, "the piece was written");
    compare(orc, sco, "double");
    compare(orc, sco, "single");
    kt_test_remove_dir(dir);
    return kt_test_finish("test_gpu_ranks");
}
