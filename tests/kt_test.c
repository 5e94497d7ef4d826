/* kt_test.c - counters and summary for kt_test.h, and shared fixtures. */
#include "kt_physics.h"
#include "kt_test.h"

#include "kettle.h"
#include "kt_ranks.h"
#include "kt_render.h"

#include <dirent.h>
#include <fcntl.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int kt_test_failures = 0;
int kt_test_checks = 0;

int kt_test_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, kt_test_checks, kt_test_failures);
    return kt_test_failures ? 1 : 0;
}

double kt_test_max_abs(const double *x, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

double kt_test_max_diff(const double *x, const double *y, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(x[i] - y[i]));
    return m;
}

void kt_test_box(kt_room_params *p, int nx, int ny, int nz, int precision, double beta,
                 double viscosity_m)
{
    kt_room_params_default(p);
    p->precision = (kt_precision)precision;
    p->wall_beta = beta;
    p->viscosity_m = viscosity_m;
    p->courant_backoff = KT_SINGLE_COURANT_BACKOFF;
    const int nodes[3] = {nx, ny, nz};
    kt_room_params_fit(p, nodes);
    p->nthreads = 2;
}

/* A room of these sides (metres) at sr_hz, and its grid. */
static kt_room_params piece_room(double x_m, double y_m, double z_m, int sr_hz, kt_room_grid *g)
{
    kt_room_params p;
    kt_room_params_default(&p);
    p.size_m[0] = x_m, p.size_m[1] = y_m, p.size_m[2] = z_m;
    p.sample_rate_hz = sr_hz;
    kt_room_estimate(&p, g, NULL);
    return p;
}

void kt_test_piece_across_z(char *orc, size_t n, int ranks, int shaped, int viscous, int sr_hz)
{
    kt_room_grid g;
    kt_room_params p = piece_room(0.8, 0.8, 1.3, sr_hz, &g);
    int planes[2] = {0, 0};
    kt_room_slab_plan(&p, ranks, 1, planes, NULL, NULL);
    const int first = planes[0];
    /* between the slabs' planes; the drum's p_d = round(z/Q - 1/2) = first - 1 */
    const double bz = (first - 0.5) * g.spacing_m, dz = (first - 0.4) * g.spacing_m;
    char post[128] = "";
    if (shaped)
        snprintf(post, sizeof post, "solid post box 0.74 0 %.6f 0.8 0.07 %.6f absorption 0.3\n",
                 bz - 0.25, bz + 0.25);
    snprintf(orc, n,
             "sr = %d\nroom = 0.8 0.8 1.3\nbeta = 0.3\nksmps = 16\n%s"
             "mic straddle 0.31 0.42 %.6f\n"
             "mic walker 0.2 0.3 %.6f\nmove walker 0.15 0.6 0.5 %.6f\n"
             "impulse 0.2 0.6 0.2 0.01 1ms 0.5\n%s"
             "instr 1\n  size = 23\n  pitch = D3\n  pos = 0.4 0.4 %.6f\nendin\n",
             sr_hz, viscous ? "viscosity = on\n" : "", bz, bz - 0.2, bz + 0.2, post, dz);
}

void kt_test_piece_along(char *orc, size_t n, int axis, int viscous, int sr_hz)
{
    const double len_m[2] = {axis == 0 ? 2.0 : 0.8, axis == 1 ? 2.0 : 0.8};
    kt_room_grid g;
    piece_room(len_m[0], len_m[1], 0.8, sr_hz, &g);
    const int cells = axis == 0 ? g.nx : g.ny;
    const double cut = (cells / 2 - 0.4) * g.spacing_m;  /* in the cell across the cut */
    /* (along, across) the cut: x, y when cut along x; y, x along y */
    double straddle[2] = {cut, 0.42}, walker[2] = {cut - 0.2, 0.3}, to[2] = {cut + 0.2, 0.6};
    double impulse[2] = {1.6, 0.6}, drum[2] = {0.5, 0.4};
    snprintf(orc, n,
             "sr = %d\nroom = %g %g 0.8\nbeta = 0.3\nksmps = 16\n%s"
             "mic straddle %.6f %.6f 0.31\n"
             "mic walker %.6f %.6f 0.2\nmove walker 0.15 %.6f %.6f 0.5\n"
             "impulse %g %g 0.2 0.01 1ms 0.5\n"
             "instr 1\n  size = 23\n  pitch = D3\n  pos = %g %g 0.6\nendin\n",
             sr_hz, len_m[0], len_m[1], viscous ? "viscosity = on\n" : "", straddle[axis],
             straddle[1 - axis], walker[axis], walker[1 - axis], to[axis], to[1 - axis],
             impulse[axis], impulse[1 - axis], drum[axis], drum[1 - axis]);
}

double kt_test_schroeder_t60(const kt_room *room, double rate_hz)
{
    int64_t n;
    kt_room_mic_signal(room, 0, &n);
    double *e = malloc(sizeof *e * (size_t)n), acc = 0;
    for (int64_t i = n - 1; i >= 0; i--) {
        for (int m = 0; m < kt_room_mic_count(room); m++) {
            const double *p = kt_room_mic_signal(room, m, NULL);
            acc += p[i] * p[i];
        }
        e[i] = acc;
    }
    double t60 = kt_test_decay_t60(e, n, rate_hz);
    free(e);
    return t60;
}

int kt_test_stop_at(void *user)
{
    kt_test_stopper *s = user;
    return ++s->calls >= s->at;
}

void kt_test_node_box(kt_room_params *p, int nx, int ny, int nz, double rate_hz)
{
    kt_room_params_default(p);
    p->sample_rate_hz = rate_hz;
    double h0 = sqrt(3.0) * p->sound_speed_m_per_s / p->sample_rate_hz;
    double Q = (nx - 0.5) * h0 / (nx - 1);
    p->size_m[0] = (nx - 0.5) * h0;
    p->size_m[1] = (ny - 0.5) * Q;
    p->size_m[2] = (nz - 0.5) * Q;
    p->nthreads = 1; /* threading has its own tests; small grids gain nothing */
}

kt_room_solid kt_test_box_solid(double x0, double y0, double z0, double x1, double y1,
                                double z1, double beta, int hole)
{
    kt_room_solid s;
    memset(&s, 0, sizeof s);
    s.kind = KT_SOLID_BOX;
    s.hole = hole;
    s.lo_m[0] = x0, s.lo_m[1] = y0, s.lo_m[2] = z0;
    s.hi_m[0] = x1, s.hi_m[1] = y1, s.hi_m[2] = z1;
    s.beta = beta;
    return s;
}

kt_room_solid kt_test_cylinder_solid(double x, double y, double z0, double z1, double r,
                                     double beta, int hole)
{
    kt_room_solid s;
    memset(&s, 0, sizeof s);
    s.kind = KT_SOLID_CYLINDER;
    s.hole = hole;
    s.centre_m[0] = x, s.centre_m[1] = y, s.radius_m = r;
    s.lo_m[2] = z0, s.hi_m[2] = z1;
    s.beta = beta;
    return s;
}

static float *read_first_channel(const char *path, int *frames)
{
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    KT_CHECK(f != NULL, "cannot read back %s", path);
    if (!f)
        return NULL;
    float *all = calloc((size_t)info.frames * info.channels, sizeof *all);
    float *x = calloc((size_t)info.frames, sizeof *x);
    *frames = all && x ? (int)sf_readf_float(f, all, info.frames) : 0;
    for (int i = 0; x && all && i < *frames; i++)
        x[i] = all[(size_t)i * info.channels];
    free(all);
    sf_close(f);
    return x;
}

float *kt_test_render_mono(const char *orc, const char *sco, int *frames)
{
    return kt_test_render_excerpt(orc, sco, 0, 0, frames);
}

/* A fresh name for a scratch WAV in /tmp (out, 64 bytes); -1 if none. */
static int scratch_wav(char out[64])
{
    char path[] = "/tmp/kettle_test_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    remove(path);
    snprintf(out, 64, "%s.wav", path);
    return 0;
}

float *kt_test_render_excerpt(const char *orc, const char *sco, double from_s, double until_s,
                              int *frames)
{
    char out[64];
    if (scratch_wav(out) < 0)
        return NULL;
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "t.orc", orc, "t.sco", sco, &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    if (rc == 0 && from_s > 0) {
        rc = kt_performance_excerpt(&perf, from_s, NULL, &err);
        KT_CHECK(rc == 0, "excerpt: %s", err.message);
    }
    float *x = NULL;
    *frames = 0;
    if (rc == 0) {
        kt_render_options o;
        kt_render_options_default(&o);
        o.device = KT_DEVICE_CPU;
        o.tail_s = 0;
        o.until_s = until_s > 0 ? until_s - from_s : 0;
        o.nthreads = 1;   /* ctest runs tests side by side on few cores */
        o.output.normalize = 0;
        o.output.raw_gain = 1.0;   /* samples in pascals */
        o.output.sample_format = KT_FLOAT32;
        kt_render_result res;
        rc = kt_render(&perf, out, &o, &res, &err);
        kt_render_result_free(&res);
        KT_CHECK(rc == 0, "render: %s", err.message);
        if (rc == 0)
            x = read_first_channel(out, frames);
    }
    kt_performance_free(&perf);
    remove(out);
    return x;
}

void kt_test_raw_output(kt_render_options *o)
{
    o->output.normalize = 0;
    o->output.raw_gain = 1e-3;
    o->output.sample_format = KT_FLOAT64;
}

double *kt_test_read_wav(const char *path, int64_t *count)
{
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    double *x = f ? malloc(sizeof *x * (size_t)(info.frames * info.channels + 1)) : NULL;
    *count = 0;
    if (x && sf_readf_double(f, x, info.frames) == info.frames) {
        *count = info.frames * info.channels;
    } else {
        free(x);
        x = NULL;
    }
    if (f)
        sf_close(f);
    return x;
}

double *kt_test_render_all(const char *orc, const char *sco, const kt_render_options *opt,
                           int64_t *count, kt_render_result *res)
{
    char out[64];
    *count = 0;
    memset(res, 0, sizeof *res);
    if (scratch_wav(out) < 0)
        return NULL;
    kt_performance perf;
    kt_score_error err = {0};
    kt_performance_init(&perf);
    int rc = kt_score_parse(&perf, "t.orc", orc, "t.sco", sco, &err);
    KT_CHECK(rc == 0, "parse: %s", err.message);
    kt_render_options o = *opt;
    kt_test_raw_output(&o);
    if (rc == 0)
        rc = kt_render(&perf, out, &o, res, &err);
    KT_CHECK(rc == 0, "render on %s: %s", res->device, err.message);
    kt_performance_free(&perf);
    double *x = rc == 0 ? kt_test_read_wav(out, count) : NULL;
    remove(out);
    return x;
}

double kt_test_relative_difference(const double *a, int64_t na, const double *b, int64_t nb)
{
    if (!a || !b || na != nb || na == 0)
        return 1.0;
    double diff = 0, peak = 0;
    for (int64_t i = 0; i < na; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        peak = fmax(peak, fabs(b[i]));
    }
    return peak > 0 ? diff / peak : 1.0;
}

/* Reads what a descriptor holds from its start into buf (NUL-terminated). */
static void read_back(int fd, char *buf, size_t n)
{
    ssize_t got = buf && n ? pread(fd, buf, n - 1, 0) : 0;
    if (buf && n)
        buf[got > 0 ? got : 0] = '\0';
    close(fd);
}

int kt_test_run(char *const argv[], const char *const env[], int timeout_s, char *out, char *err,
                size_t n)
{
    char so[] = "/tmp/kettle_run_out_XXXXXX", se[] = "/tmp/kettle_run_err_XXXXXX";
    int fo = mkstemp(so), fe = mkstemp(se);
    if (fo >= 0)
        unlink(so);
    if (fe >= 0)
        unlink(se);
    pid_t pid = fo >= 0 && fe >= 0 ? fork() : -1;
    if (pid == 0) {
        for (int i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            char name[128];
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - env[i]) : 127, env[i]);
            if (eq)
                setenv(name, eq + 1, 1);
            else
                unsetenv(name);
        }
        if (dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(127);
        alarm((unsigned)timeout_s);   /* survives exec: a hung program is killed */
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    int ran = pid > 0 && waitpid(pid, &status, 0) == pid;
    read_back(fo, out, n);
    read_back(fe, err, n);
    if (!ran)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void kt_test_scores_dir(char *buf, size_t n)
{
    snprintf(buf, n, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    strncat(buf, "/../scores", n - strlen(buf) - 1);
}

int kt_test_load_piece(kt_performance *perf, const char *a, const char *b, kt_score_error *err)
{
    char dir[1024], pa[1200], pb[1200];
    kt_test_scores_dir(dir, sizeof dir);
    snprintf(pa, sizeof pa, "%s/%s", dir, a);
    kt_performance_init(perf);
    if (!b)
        return kt_score_load_csd(perf, pa, err);
    snprintf(pb, sizeof pb, "%s/%s", dir, b);
    return kt_score_load(perf, pa, pb, err);
}

unsigned char *kt_test_slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f)
        return NULL;
    unsigned char *b = NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (*n = ftell(f)) >= 0 && (b = malloc((size_t)*n + 1))) {
        rewind(f);
        if (fread(b, 1, (size_t)*n, f) != (size_t)*n) {
            free(b);
            b = NULL;
        }
    }
    fclose(f);
    return b;
}

/* Offset of the "data" chunk's id, or -1. */
static long data_at(const unsigned char *b, long n)
{
    for (long i = 12; b && i + 4 <= n; i++)
        if (!memcmp(b + i, "data", 4))
            return i;
    return -1;
}

long kt_test_wav_differ(const char *path_a, const char *path_b, double *peak)
{
    long na = 0, nb = 0, differ = -1;
    unsigned char *a = kt_test_slurp(path_a, &na), *b = kt_test_slurp(path_b, &nb);
    long da = data_at(a, na), db = data_at(b, nb);
    *peak = 0;
    if (a && b && na == nb && da > 0 && da == db) {
        differ = 0;
        for (long i = da; i < na; i++)
            differ += a[i] != b[i];
        for (long i = da + 8; i + 8 <= na; i += 8) {
            double v;
            memcpy(&v, a + i, sizeof v);
            *peak = fmax(*peak, fabs(v));
        }
    }
    free(a);
    free(b);
    return differ;
}

void kt_test_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    char path[512];
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

double kt_test_decay_t60(const double *e, int64_t n, double rate_hz)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        double db = 10 * log10(e[i] / e[0]);
        if (db <= -5 && db >= -25) {
            double t = (double)i / rate_hz;
            sx += t;
            sy += db;
            sxx += t * t;
            sxy += t * db;
            count++;
        }
    }
    double slope_db_per_s = (count * sxy - sx * sy) / (count * sxx - sx * sx);
    return -60.0 / slope_db_per_s;
}
