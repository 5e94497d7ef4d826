/* room_state.c - the room's state for checkpoints (kt_room_state.h): the step
 * index, Psi^n and Psi^{n-1} exactly as stored (padded, in the room's
 * precision) and the microphone signals so far; plus the two small helpers
 * the render's guard needs: a scan of the field for its largest value and
 * for NaN or infinity, and cutting the microphones back to a good step.
 * Sources, waypoints and boundary lists are rebuilt from the score.  A rank
 * of a split room saves and loads its slab (its planes with their halos,
 * its part of the signals): each rank's part of a checkpoint. */
#include "room_slab.h"
#include "kt_room_state.h"
#include "kt_ranks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t field_bytes(const kt_room *room)
{
    size_t esize = kt_precision_bytes(room->plan.params.precision);
    return room->plan.padded_points * esize;
}

size_t kt_room_state_bytes(const kt_room *room)
{
    size_t b = 64 + 2 * field_bytes(room);
    for (int m = 0; m < room->plan.mic_count; m++)
        b += 80 + (size_t)room->plan.mic[m].count * sizeof(double);
    return b;
}

/* Grid, precision, microphone count and the slab (ranks, its first layer
 * and the one past its last along the axis it is cut along, that axis):
 * what must match on loading. */
enum { SHAPE_FIELDS = 10 };
static void shape(const kt_room *room, int32_t s[SHAPE_FIELDS])
{
    int lo[3] = {room->plan.x0, room->plan.y0, room->plan.z0};
    int hi[3] = {room->plan.x_end, room->plan.y_end, room->plan.z_end};
    int a = room->slab ? room->slab->axis : 2;
    s[0] = room->plan.grid.nx;
    s[1] = room->plan.grid.ny;
    s[2] = room->plan.grid.nz;
    s[3] = (int32_t)room->plan.params.precision;
    s[4] = room->plan.grids;
    s[5] = room->plan.mic_count;
    s[6] = kt_room_ranks(room);
    s[7] = lo[a];
    s[8] = hi[a];
    s[9] = a;
}

int kt_room_save_state(const kt_room *room, kt_state_io *io, kt_error *err)
{
    int32_t s[SHAPE_FIELDS];
    shape(room, s);
    if (room->slab && room->slab->defer_count > 0)
        return kt_fail(err, KT_EINVAL, "rank %d has microphone samples waiting for the plane "
                       "above (kt_room_flush before saving)", room->slab->rank);
    int rc = kt_state_put_tag(io, "ROOM", err);
    if (rc == 0)
        rc = kt_state_put(io, s, sizeof s, err);
    if (rc == 0)
        rc = kt_state_put(io, &room->n, sizeof room->n, err);
    if (rc == 0)
        rc = kt_state_put(io, room->now, field_bytes(room), err);
    if (rc == 0)
        rc = kt_state_put(io, room->prev, field_bytes(room), err);
    for (int m = 0; rc == 0 && m < room->plan.mic_count; m++) {
        const room_mic *mic = &room->plan.mic[m];
        rc = kt_state_put(io, mic->name, sizeof mic->name, err);
        if (rc == 0)
            rc = kt_state_put(io, &mic->count, sizeof mic->count, err);
        if (rc == 0)
            rc = kt_state_put(io, mic->signal, (size_t)mic->count * sizeof *mic->signal, err);
    }
    return rc;
}

static int load_mic(kt_room *room, room_mic *mic, kt_state_io *io, kt_error *err)
{
    char name[sizeof mic->name];
    int64_t count;
    int rc = kt_state_get(io, name, sizeof name, err);
    if (rc == 0)
        rc = kt_state_get(io, &count, sizeof count, err);
    if (rc < 0)
        return rc;
    if (memcmp(name, mic->name, sizeof name) != 0 || count != room->n)
        return kt_fail(err, KT_EINVAL, "the checkpoint's microphone '%.63s' (%lld samples) does "
                       "not match '%s' of the score", name, (long long)count, mic->name);
    /* before anything is sized by it: a forged count can be any number */
    if (!kt_state_fits(io, count, sizeof *mic->signal))
        return kt_fail(err, KT_EINVAL, "the checkpoint is damaged or forged: its microphone "
                       "'%s' sample count (%lld) is more than the file holds", mic->name,
                       (long long)count);
    size_t cap = count > 4096 ? (size_t)count : 4096;
    double *sig = realloc(mic->signal, cap * sizeof *sig);
    if (!sig)
        return kt_fail(err, KT_ENOMEM, "out of memory restoring microphone '%s'", mic->name);
    mic->signal = sig;
    mic->capacity = (int64_t)cap;
    mic->count = count;
    return kt_state_get(io, sig, (size_t)count * sizeof *sig, err);
}

int kt_room_load_state(kt_room *room, kt_state_io *io, kt_error *err)
{
    int32_t want[SHAPE_FIELDS], got[SHAPE_FIELDS];
    shape(room, want);
    int rc = kt_state_expect_tag(io, "ROOM", err);
    if (rc == 0)
        rc = kt_state_get(io, got, sizeof got, err);
    if (rc < 0)
        return rc;
    if (memcmp(want, got, 6 * sizeof *want) == 0 && memcmp(want, got, sizeof want) != 0)
        return kt_fail(err, KT_EINVAL, "the checkpoint's part holds %c %d..%d of a room "
                       "split over %d rank%s; this is %c %d..%d of %d (resume with the "
                       "ranks and split axis that wrote it: --split-axis %c)",
                       "xyz?"[got[9] >= 0 && got[9] < 3 ? got[9] : 3], got[7], got[8] - 1, got[6],
                       got[6] == 1 ? "" : "s", "xyz"[want[9]], want[7], want[8] - 1, want[6],
                       "xyz?"[got[9] >= 0 && got[9] < 3 ? got[9] : 3]);
    if (memcmp(want, got, sizeof want) != 0)
        return kt_fail(err, KT_EINVAL,
                       "the checkpoint's room (%d x %d x %d, %s, %d mics) does not match the "
                       "score's (%d x %d x %d, %s, %d mics)", got[0], got[1], got[2],
                       got[3] ? "single" : "double", got[5], want[0], want[1], want[2],
                       want[3] ? "single" : "double", want[5]);
    int64_t n;
    if ((rc = kt_state_get(io, &n, sizeof n, err)) < 0)
        return rc;
    if (n < 0 || n > KT_MAX_STEPS)
        return kt_fail(err, KT_EINVAL, "the checkpoint is damaged or forged: its room's step "
                       "(%lld) is out of range", (long long)n);
    room->n = n;
    rc = kt_state_get(io, room->now, field_bytes(room), err);
    if (rc == 0)
        rc = kt_state_get(io, room->prev, field_bytes(room), err);
    if (rc == 0)
        room_abc_sync(room);     /* the absorbing walls' energy sums */
    for (int m = 0; rc == 0 && m < room->plan.mic_count; m++)
        rc = load_mic(room, &room->plan.mic[m], io, err);
    return rc;
}

void kt_room_truncate_mics(kt_room *room, int64_t samples)
{
    for (int m = 0; m < room->plan.mic_count; m++)
        if (room->plan.mic[m].count > samples)
            room->plan.mic[m].count = samples < 0 ? 0 : samples;
}

#define SCAN_FIELD(REAL, NAME)                                                       \
    static void NAME(const kt_room *r, kt_field_scan *s)                             \
    {                                                                                \
        const REAL *f = r->now;                                                      \
        for (int z = r->plan.z0; z < r->plan.z_end && !s->bad; z++)                  \
            for (int y = r->plan.y0; y < r->plan.y_end && !s->bad; y++) {            \
                /* an FCC row holds every other x (room_fcc.c); whole rooms only */  \
                int p = r->plan.fcc ? (y + z) & 1 : r->plan.x0;                      \
                int step = r->plan.fcc ? 2 : 1;                                      \
                size_t i = room_node_index(r, p, y, z);                              \
                for (int x = p; x < r->plan.x_end; x += step, i++) {                 \
                    double v = fabs((double)f[i]);                                   \
                    if (!(v <= s->max_abs)) {                                        \
                        int bad = isnan(v) ? 2 : isinf(v) ? 1 : 0;                   \
                        s->node[0] = x, s->node[1] = y, s->node[2] = z;              \
                        if (bad) {                                                   \
                            s->bad = bad;                                            \
                            break;                                                   \
                        }                                                            \
                        s->max_abs = v;                                              \
                    }                                                                \
                }                                                                    \
            }                                                                        \
    }
SCAN_FIELD(double, scan_double)
SCAN_FIELD(float, scan_single)

/* A slab's scan made the room's: the largest value, and the first bad node
 * (or the largest's) in scan order, which is the ranks' order. */
static void scan_ranks(kt_field_scan *s, const kt_room_grid *g)
{
    double max_abs = kt_mpi_max(s->max_abs), bad = kt_mpi_max(s->bad);
    int mine = bad > 0 ? s->bad > 0 : s->max_abs == max_abs;
    double at = ((double)s->node[2] * g->ny + s->node[1]) * g->nx + s->node[0];
    double first = kt_mpi_min(mine ? at : INFINITY);
    s->max_abs = max_abs;
    s->bad = (int)bad;
    s->node[0] = (int)fmod(first, g->nx);
    s->node[1] = (int)fmod(floor(first / g->nx), g->ny);
    s->node[2] = (int)floor(first / g->nx / g->ny);
}

void kt_room_scan_field(const kt_room *room, kt_field_scan *scan)
{
    memset(scan, 0, sizeof *scan);
    if (room->plan.params.precision == KT_SINGLE)
        scan_single(room, scan);
    else
        scan_double(room, scan);
    if (room->slab)
        scan_ranks(scan, &room->plan.grid);
}
