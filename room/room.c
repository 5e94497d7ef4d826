/* room.c - a room's life cycle: default parameters, creation from its plan
 * (room_plan.c) and fields, destruction, and the accessors. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE (Linux) */
#include "room_internal.h"
#include "room_slab.h"
#include "kt_physics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void kt_room_params_default(kt_room_params *p)
{
    memset(p, 0, sizeof *p);
    p->size_m[0] = p->size_m[1] = p->size_m[2] = 1.0;
    p->sample_rate_hz = KT_SAMPLE_RATE_HZ;
    p->sound_speed_m_per_s = KT_SOUND_SPEED_M_PER_S;
    p->air_density_kg_per_m3 = KT_AIR_DENSITY_KG_PER_M3;
    p->precision = KT_DOUBLE;
    p->courant_backoff = -1.0;
    p->wall_beta = 0.0;
    p->viscosity_m = 0.0;
    p->nthreads = 0;
    p->memory_limit_bytes = 0;
}

/* A field of at least this many bytes asks for 2 MiB pages. */
#define ROOM_HUGE_PAGE_BYTES ((size_t)2 << 20)
#define ROOM_HUGE_FIELD_MIN ((size_t)16 << 20)

/* One field's buffer.  A field far bigger than the caches goes on 2 MiB
 * pages where the kernel offers them (transparent huge pages in madvise
 * mode): the sweep walks up to seven planes at once, and with 4 KiB pages
 * every plane change costs page walks (250 m^3 single viscous: ~5 % faster).
 * The advice may be refused; the buffer works either way. */
static void *allocate_field(size_t bytes)
{
    size_t align = bytes >= ROOM_HUGE_FIELD_MIN ? ROOM_HUGE_PAGE_BYTES : 64;
    size_t rounded = (bytes + align - 1) / align * align;
    void *f = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
    if (f && align == ROOM_HUGE_PAGE_BYTES)
        (void)madvise(f, rounded, MADV_HUGEPAGE);
#endif
    return f;
}

/* Zeroed buffers, touched first by the threads that will sweep them so that
 * pages land near those threads (first touch) with the same z-slab split. */
static int allocate_fields(kt_room *r, kt_error *err)
{
    size_t esize = kt_precision_bytes(r->plan.params.precision);
    size_t bytes = r->plan.padded_points * esize;
    for (int b = 0; b < r->plan.grids; b++) {
        r->field[b] = allocate_field(bytes);
        if (!r->field[b])
            return kt_fail(err, KT_ENOMEM, "could not allocate %zu bytes for the room's fields",
                           bytes * r->plan.grids);
        char *f = r->field[b];
        long planes = (long)r->plan.pz;
        size_t plane_bytes = r->plan.plane * esize;
#pragma omp parallel for schedule(static) num_threads(r->nthreads)
        for (long z = 0; z < planes; z++)
            memset(f + (size_t)z * plane_bytes, 0, plane_bytes);
    }
    r->now = r->field[0];
    r->prev = r->field[1];
    r->next = r->plan.grids == 3 ? r->field[2] : r->field[1];
    return KT_OK;
}

int kt_room_create(const kt_room_params *p, kt_room **out, kt_error *err)
{
    return room_create_planes(p, 0, -1, out, err);
}

int room_create_planes(const kt_room_params *p, int z0, int z_end, kt_room **out,
                       kt_error *err)
{
    const int lo[3] = {0, 0, z0}, hi[3] = {-1, -1, z_end};
    return room_create_box(p, lo, hi, out, err);
}

int room_create_box(const kt_room_params *p, const int lo[3], const int hi[3], kt_room **out,
                    kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_room_create: out is NULL");
    *out = NULL;
    kt_room *r = calloc(1, sizeof *r);
    if (!r)
        return kt_fail(err, KT_ENOMEM, "out of memory creating a room");
    int rc = room_plan_build_box(p, lo, hi, &r->plan, err);
    if (rc < 0) {
        free(r);
        return rc;
    }
    r->nthreads = kt_threads_resolve(p->nthreads);
    r->overlap = KT_OVERLAP_AIR;
    if ((rc = allocate_fields(r, err)) < 0 || (rc = room_abc_setup(r, err)) < 0) {
        kt_room_destroy(r);
        return rc;
    }
    room_sweep_plan_init(r);
    room_block_init(r);
    *out = r;
    return KT_OK;
}

static void free_instrument_copy(room_instrument *ri)
{
    free(ri->node);
    free(ri->blocked);
    free(ri->leg);
    free(ri->leg_axis);
}

void kt_room_destroy(kt_room *room)
{
    if (!room)
        return;
    /* The room owns registered instruments; take each out before destroying
     * it so that a destroy() that calls kt_room_remove_instrument is harmless. */
    while (room->plan.ins_count > 0) {
        room_instrument ri = room->plan.ins[room->plan.ins_count - 1];
        room->plan.ins_count--;
        free_instrument_copy(&ri);
        if (ri.ins->destroy)
            ri.ins->destroy(ri.ins->self);
    }
    free(room->plan.ins);
    room_free_sources(room);
    room_free_mics(room);
    for (int b = 0; b < 3; b++)
        free(room->field[b]);
    room_plan_free(&room->plan);
    room_shape_free(&room->plan);
    room_abc_free(room);
    room_slab_free(room->slab);
    free(room);
}

const kt_room_grid *kt_room_get_grid(const kt_room *room) { return &room->plan.grid; }
const kt_room_params *kt_room_get_params(const kt_room *room) { return &room->plan.params; }
int64_t kt_room_step_index(const kt_room *room) { return room->n; }
room_plan *room_plan_of(kt_room *room) { return &room->plan; }
void room_set_step_index(kt_room *room, int64_t n) { room->n = n; }

void room_fields(kt_room *room, void **now, void **prev)
{
    *now = room->now;
    *prev = room->prev;
}

void kt_room_get_timing(const kt_room *room, kt_room_timing *t)
{
    *t = room->timing;
}

void room_leg_offsets(const kt_room *room, ptrdiff_t off[6])
{
    off[0] = 1;
    off[1] = -1;
    off[2] = (ptrdiff_t)room->plan.px;
    off[3] = -(ptrdiff_t)room->plan.px;
    off[4] = (ptrdiff_t)room->plan.plane;
    off[5] = -(ptrdiff_t)room->plan.plane;
}

int room_check_position(const kt_room *room, const double pos_m[3], const char *what,
                        kt_error *err)
{
    static const char axis[3] = {'x', 'y', 'z'};
    if (!pos_m)
        return kt_fail(err, KT_EINVAL, "%s: position is NULL", what);
    for (int d = 0; d < 3; d++)
        if (!(pos_m[d] >= 0 && pos_m[d] <= room->plan.params.size_m[d]))
            return kt_fail(err, KT_EINVAL, "%s: %c = %g m lies outside the room (0 to %g m)",
                           what, axis[d], pos_m[d], room->plan.params.size_m[d]);
    return room_shape_check_position(room, pos_m, what, err);
}

int room_nearest_node(const kt_room *room, const double pos_m[3], int node[3], kt_error *err)
{
    int rc = room_check_position(room, pos_m, "source", err);
    if (rc < 0)
        return rc;
    int n[3] = {room->plan.grid.nx, room->plan.grid.ny, room->plan.grid.nz};
    for (int d = 0; d < 3; d++) {
        long i = lround(pos_m[d] / room->plan.grid.spacing_m);
        node[d] = (int)(i < 0 ? 0 : i >= n[d] ? n[d] - 1 : i);
    }
    return KT_OK;
}

/* ---- the layer window calls instruments use (kt_instrument.h) ---- */

static const void *layer_buffer(const kt_room *room, kt_time_level level)
{
    return level == KT_NEXT && room->in_step ? room->next : room->now;
}

/* The window lies inside this process's planes of a cubic double-precision
 * room: the drum's case every step, read and written without per-node tests. */
static int layer_window_plain(const kt_room *room, int z, int x0, int y0, int wx, int wy)
{
    int zin = room->slab ? room_slab_layer_ok(room, z) : z >= 0 && z < room->plan.grid.nz;
    const room_plan *pl = &room->plan;
    return zin && !pl->fcc && pl->params.precision == KT_DOUBLE && x0 >= pl->x0 &&
           y0 >= pl->y0 && x0 + wx <= pl->x_end && y0 + wy <= pl->y_end;
}

/* Whether column x, row y is held here (inside the room: every node on one
 * process; on a rank split along x or y, its own; one of another rank's,
 * touched inside a step, is marked: room_slab_layer_ok). */
static int layer_node_held(const kt_room *room, int x, int y)
{
    const room_plan *pl = &room->plan;
    if (x < 0 || x >= pl->grid.nx || y < 0 || y >= pl->grid.ny)
        return 0;
    int held = x >= pl->x0 && x < pl->x_end && y >= pl->y0 && y < pl->y_end;
    if (!held && room->in_step && room->slab)
        room_slab_column_touched(room, x, y);
    return held;
}

void kt_room_read_layer(const kt_room *room, kt_time_level level, int z, int x0, int y0,
                        int wx, int wy, double *out)
{
    const void *f = layer_buffer(room, level);
    if (layer_window_plain(room, z, x0, y0, wx, wy)) {
        const double *corner = (const double *)f + room_pidx(room, x0, y0, z);
        for (int i = 0; i < wx; i++)
            for (int j = 0; j < wy; j++)
                out[(size_t)i * wy + j] = corner[i + (size_t)j * room->plan.px];
        return;
    }
    int zin = room->slab ? room_slab_layer_ok(room, z) : z >= 0 && z < room->plan.grid.nz;
    for (int i = 0; i < wx; i++) {
        int x = x0 + i;
        for (int j = 0; j < wy; j++) {
            int y = y0 + j;
            int in = zin && layer_node_held(room, x, y);
            /* Outside the room the window reads 0. */
            if (in && room->plan.fcc)
                out[(size_t)i * wy + j] = room_fcc_value(room, f, x, y, z);
            else
                out[(size_t)i * wy + j] = in ? room_get(room, f, room_pidx(room, x, y, z)) : 0.0;
        }
    }
}

void kt_room_add_to_layer(kt_room *room, int z, int x0, int y0, int wx, int wy,
                          const double *v, double scale)
{
    if (room->slab ? !room_slab_layer_ok(room, z) : z < 0 || z >= room->plan.grid.nz)
        return;
    void *f = room->in_step ? room->next : room->now;
    if (layer_window_plain(room, z, x0, y0, wx, wy)) {
        double *corner = (double *)f + room_pidx(room, x0, y0, z);
        for (int i = 0; i < wx; i++)
            for (int j = 0; j < wy; j++)
                corner[i + (size_t)j * room->plan.px] += scale * v[(size_t)i * wy + j];
        return;
    }
    for (int i = 0; i < wx; i++) {
        int x = x0 + i;
        for (int j = 0; j < wy; j++) {
            int y = y0 + j;
            /* an FCC room takes its lattice nodes only */
            if (layer_node_held(room, x, y) && !(room->plan.fcc && ((x + y + z) & 1)))
                room_add(room, f, room_node_index(room, x, y, z), scale * v[(size_t)i * wy + j]);
        }
    }
}
