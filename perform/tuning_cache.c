/* tuning_cache.c - the tuner's memory between renders: one small text file
 * per drum-in-its-surroundings, $XDG_CACHE_HOME/kettle/tuning-HASH.txt,
 * holding the full key (so a hash collision reads as a miss) and the
 * measured points of the drum's curve.  Files are written to a temporary and
 * renamed, so a reader sees an old file or a new one, never half of one; a
 * file that does not parse is ignored (and rewritten by the next save).
 *
 * The key is everything the drum's (1,1) depends on except its own tension:
 * the code (the GNU build-id of the binary that holds this file, so that a
 * rebuilt engine never reads points another one measured; the version and
 * build date where there is none), the room and the grid it produces, and
 * every drum's make, place and membrane grid, listed by place (not in the
 * orchestra's order, which does not change the sound).  The other drums'
 * tensions are left out: retuning a neighbour by a semitone moves a drum's
 * pitch by about a tenth of a cent (docs/score-language.md), far less than
 * a key change would cost to measure again. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "tuning_internal.h"
#include "kt_config.h"
#include "score_internal.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_HEADER "kettle tuning cache 1"
/* Bump when the measurement (tuning_run.c) changes what a point means. */
#define CACHE_METHOD "m1"

typedef struct key_text {
    char *s;
    size_t len, cap;
    int failed;
} key_text;

static void put(key_text *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(key_text *k, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !k->failed; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(k->s ? k->s + k->len : NULL, k->s ? k->cap - k->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            k->failed = 1;
        } else if (k->s && k->len + (size_t)n < k->cap) {
            k->len += (size_t)n;
            return;
        } else {
            size_t cap = (k->cap + (size_t)n + 1) * 2;
            char *s = realloc(k->s, cap);
            if (!s)
                k->failed = 1;
            else {
                k->s = s;
                k->cap = cap;
            }
        }
    }
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The GNU build-id note of the loaded object that holds `code`, as hex. */
typedef struct build_id {
    const char *code;
    char hex[2 * 64 + 1];
} build_id;

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    build_id *b = data;
    uintptr_t at = (uintptr_t)b->code;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        holds |= ph->p_type == PT_LOAD && at >= lo && at < lo + ph->p_memsz;
    }
    for (int i = 0; holds && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (ph->p_type == PT_NOTE && p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const void *)p;
            const char *name = p + sizeof *n, *desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                for (unsigned k = 0; k < n->n_descsz && k < 64; k++)
                    snprintf(b->hex + 2 * k, 3, "%02x", (unsigned char)desc[k]);
                return 1;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return holds;
}

int tuning_cache_key(const tuning_setup *s, int drum, char **text, uint64_t *hash)
{
    const kt_room_params *r = s->room;
    kt_room_grid g;
    kt_error e;
    if (kt_room_estimate(r, &g, &e) < 0)
        return KT_EINVAL;
    key_text k = {0};
    build_id id = {(const char *)(uintptr_t)tuning_cache_key, ""};
    dl_iterate_phdr(find_build_id, &id);
    put(&k, "%s kettle %s built %s id %s;", CACHE_METHOD, KT_VERSION, KT_BUILD_DATE,
        id.hex[0] ? id.hex : "none");
    put(&k, " room %.17g %.17g %.17g sr %.17g c %.17g rho %.17g prec %d backoff %.17g beta %.17g"
            " visc %.17g scheme %d %d %d walls %d;",
        r->size_m[0], r->size_m[1], r->size_m[2], r->sample_rate_hz, r->sound_speed_m_per_s,
        r->air_density_kg_per_m3, (int)r->precision, r->courant_backoff, r->wall_beta,
        r->viscosity_m, (int)r->scheme, (int)r->stencil_family, r->stencil_reach,
        (int)r->wall_model);
    int n = s->perf->drum_count, *order = malloc(sizeof *order * (size_t)(n + 1)), rank = 0;
    if (!order) {
        free(k.s);
        return KT_ENOMEM;
    }
    tuning_drum_order(s->perf, order);
    while (order[rank] != drum)
        rank++;
    put(&k, " grid %d %d %d Q %.17g k %.17g; drum %d of %d;", g.nx, g.ny, g.nz, g.spacing_m,
        g.time_step_s, rank, n);
    for (int i = 0; i < n; i++) {
        int d = order[i];
        const kt_timpani_params *p = &s->perf->drums[d].params;
        put(&k, " [D %.17g rho %.17g H %.17g E %.17g nu %.17g loss %.17g depth %.17g at %.17g %.17g"
                " %.17g coupled %d N %d solver %d %d %.17g]",
            p->diameter_m, p->surface_density_kg_per_m2, p->thickness_m, p->youngs_modulus_Pa,
            p->poisson_ratio, p->loss_s, p->bowl_depth_m, p->rim_centre_m[0], p->rim_centre_m[1],
            p->rim_centre_m[2], p->coupled, s->intervals[d], (int)p->solver,
            p->solver_iterations, p->solver_tolerance);
    }
    free(order);
    if (k.failed) {
        free(k.s);
        return KT_ENOMEM;
    }
    *text = k.s;
    *hash = fnv1a(k.s);
    return KT_OK;
}

void tuning_cache_dir(const char *asked, char *dir, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (asked)
        snprintf(dir, size, "%s", asked);
    else if (xdg && xdg[0] == '/')
        snprintf(dir, size, "%s/kettle", xdg);
    else if (home && home[0] == '/')
        snprintf(dir, size, "%s/.cache/kettle", home);
    else
        dir[0] = '\0';
}

static void file_name(const char *dir, uint64_t hash, char *path, size_t size)
{
    snprintf(path, size, "%s/tuning-%016llx.txt", dir, (unsigned long long)hash);
}

/* The key's line, read whole (it grows with the number of drums). */
static char *read_line(FILE *f)
{
    size_t cap = 256, len = 0;
    char *s = malloc(cap);
    int c;
    while (s && (c = fgetc(f)) != EOF && c != '\n') {
        if (len + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                return NULL;
            }
            s = t;
        }
        s[len++] = (char)c;
    }
    if (s)
        s[len] = '\0';
    return s;
}

int tuning_cache_load(const char *dir, const char *key, uint64_t hash, kt_tuning_point **pts,
                      int *count)
{
    *pts = NULL;
    *count = 0;
    if (!dir[0])
        return KT_OK;
    char path[1200];
    file_name(dir, hash, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return KT_OK;
    char *head = read_line(f), *line = head ? read_line(f) : NULL;
    int ok = head && line && strcmp(head, CACHE_HEADER) == 0 && strncmp(line, "key ", 4) == 0 &&
             strcmp(line + 4, key) == 0;
    double T, hz;
    char tail;
    int n;
    kt_tuning_point *p = NULL;
    while (ok && (n = fscanf(f, "point %lf %lf%c", &T, &hz, &tail)) != EOF) {
        kt_tuning_point *q = n == 3 && tail == '\n' && T > 0 && hz > 0
                                 ? kt_push((void **)&p, count, sizeof *p) : NULL;
        if (!q)
            ok = 0;
        else
            *q = (kt_tuning_point){T, hz};
    }
    fclose(f);
    free(head);
    free(line);
    if (!ok) {
        free(p);
        *count = 0;
        return KT_OK;
    }
    *pts = p;
    return KT_OK;
}

/* mkdir -p for the cache folder. */
static int make_dirs(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", dir);
    for (char *c = path + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -1;
            *c = '/';
        }
    return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int tuning_cache_save(const char *dir, const char *key, uint64_t hash,
                      const kt_tuning_point *pts, int count, kt_error *err)
{
    if (!dir[0])
        return KT_OK;
    char path[1200], tmp[1300];
    file_name(dir, hash, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path);
    int fd = make_dirs(dir) == 0 ? mkstemp(tmp) : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return kt_fail(err, KT_EIO, "cannot write the tuning cache in %s: %s", dir,
                       strerror(errno));
    }
    fchmod(fd, 0644);
    fprintf(f, "%s\nkey %s\n", CACHE_HEADER, key);
    for (int i = 0; i < count; i++)
        fprintf(f, "point %.17g %.17g\n", pts[i].tension_N_per_m, pts[i].hz);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return kt_fail(err, KT_EIO, "cannot write the tuning cache %s", path);
    }
    return KT_OK;
}
