/* room_instruments.c - registering embedded instruments (kt_instrument.h):
 * the checks that keep the single-pass step of design note 7.2 exact (boxes
 * inside the room and at least one node from every wall, so list nodes are
 * never box-surface nodes; boxes disjoint; every blocked leg listed from both
 * ends), and the room's own copy of each boundary list. */
#include "room_internal.h"
#include "room_slab.h"

#include <stdlib.h>
#include <string.h>

static const char *label(const kt_instrument *ins)
{
    return ins->name[0] ? ins->name : (ins->kind ? ins->kind : "instrument");
}

static int check_box(const kt_room *room, const kt_instrument *ins, kt_error *err)
{
    static const char axis[3] = {'x', 'y', 'z'};
    int n[3] = {room->plan.grid.nx, room->plan.grid.ny, room->plan.grid.nz};
    /* Absorbing walls own the end nodes and the layer inside them. */
    int gap = room->abc ? 2 : 1;
    for (int d = 0; d < 3; d++) {
        if (ins->box_lo[d] > ins->box_hi[d])
            return kt_fail(err, KT_EINVAL, "%s: box is empty along %c (%d > %d)", label(ins),
                           axis[d], ins->box_lo[d], ins->box_hi[d]);
        if (ins->box_lo[d] < gap || ins->box_hi[d] > n[d] - 1 - gap)
            return kt_fail(err, KT_EINVAL,
                           "%s: box %c = %d..%d must lie inside the room at least %s node%s "
                           "from every wall (nodes %d..%d)%s",
                           label(ins), axis[d], ins->box_lo[d], ins->box_hi[d],
                           gap == 1 ? "one" : "two", gap == 1 ? "" : "s", gap, n[d] - 1 - gap,
                           room->abc ? ": the absorbing walls update the two outer layers" : "");
    }
    const int *pz = ins->process_z;
    if ((pz[0] || pz[1]) && (pz[0] > pz[1] || pz[0] < ins->box_lo[2] || pz[1] > ins->box_hi[2]))
        return kt_fail(err, KT_EINVAL,
                       "%s: the planes z = %d..%d its step works on are not within its box "
                       "(z = %d..%d)", label(ins), pz[0], pz[1], ins->box_lo[2], ins->box_hi[2]);
    for (int k = 0; k < room->plan.ins_count; k++) {
        const kt_instrument *o = room->plan.ins[k].ins;
        if (o == ins)
            return kt_fail(err, KT_EINVAL, "%s is already in the room", label(ins));
        int overlap = 1;
        for (int d = 0; d < 3; d++)
            overlap &= ins->box_lo[d] <= o->box_hi[d] && o->box_lo[d] <= ins->box_hi[d];
        if (overlap)
            return kt_fail(err, KT_EINVAL,
                           "%s: box (%d..%d, %d..%d, %d..%d) intersects the box of %s "
                           "(%d..%d, %d..%d, %d..%d)",
                           label(ins), ins->box_lo[0], ins->box_hi[0], ins->box_lo[1],
                           ins->box_hi[1], ins->box_lo[2], ins->box_hi[2], label(o),
                           o->box_lo[0], o->box_hi[0], o->box_lo[1], o->box_hi[1],
                           o->box_lo[2], o->box_hi[2]);
    }
    return KT_OK;
}

typedef struct list_entry {
    int64_t node;
    uint8_t open;
} list_entry;

static int compare_entries(const void *a, const void *b)
{
    int64_t x = ((const list_entry *)a)->node, y = ((const list_entry *)b)->node;
    return (x > y) - (x < y);
}

static const list_entry *find_entry(const list_entry *e, int n, int64_t node)
{
    list_entry key = {node, 0};
    return bsearch(&key, e, (size_t)n, sizeof *e, compare_entries);
}

/* Every list node inside the box, no duplicates, and each blocked leg also
 * blocked from the other end: only then does stage B remove whole edges from
 * the graph Laplacian, which is what keeps the energy conserved. */
static int check_list(const kt_room *room, const kt_instrument *ins, list_entry *e,
                      kt_error *err)
{
    static const char *dir[6] = {"+x", "-x", "+y", "-y", "+z", "-z"};
    int nx = room->plan.grid.nx, ny = room->plan.grid.ny;
    int64_t total = (int64_t)nx * ny * room->plan.grid.nz;
    int n = ins->boundary_count;
    for (int r = 0; r < n; r++) {
        int64_t i = ins->boundary_node[r];
        if (i < 0 || i >= total)
            return kt_fail(err, KT_EINVAL, "%s: boundary row %d has index %lld outside the room",
                           label(ins), r, (long long)i);
        int x = (int)(i % nx), y = (int)(i / nx % ny), z = (int)(i / nx / ny);
        int p[3] = {x, y, z};
        for (int d = 0; d < 3; d++)
            if (p[d] < ins->box_lo[d] || p[d] > ins->box_hi[d])
                return kt_fail(err, KT_EINVAL,
                               "%s: boundary node (%d, %d, %d) lies outside its box", label(ins),
                               x, y, z);
        if (ins->boundary_open[r] > KT_LEG_ALL)
            return kt_fail(err, KT_EINVAL, "%s: boundary row %d has open mask %d > 63",
                           label(ins), r, ins->boundary_open[r]);
        e[r].node = i;
        e[r].open = ins->boundary_open[r];
    }
    qsort(e, (size_t)n, sizeof *e, compare_entries);
    for (int r = 1; r < n; r++)
        if (e[r].node == e[r - 1].node)
            return kt_fail(err, KT_EINVAL, "%s: node %lld appears twice in the boundary list",
                           label(ins), (long long)e[r].node);
    int64_t step[6] = {1, -1, nx, -(int64_t)nx, (int64_t)nx * ny, -(int64_t)nx * ny};
    for (int r = 0; r < n; r++)
        for (int d = 0; d < 6; d++) {
            if (e[r].open & (1 << d))
                continue;
            const list_entry *o = find_entry(e, n, e[r].node + step[d]);
            int back = d ^ 1; /* +x <-> -x, ... */
            if (!o || (o->open & (1 << back))) {
                int64_t i = e[r].node;
                return kt_fail(err, KT_EINVAL,
                               "%s: node (%d, %d, %d) has its %s leg blocked, but its "
                               "neighbour there does not list the %s leg as blocked",
                               label(ins), (int)(i % nx), (int)(i / nx % ny),
                               (int)(i / nx / ny), dir[d], dir[back]);
            }
        }
    return KT_OK;
}

/* The room's copy: padded indices, blocked masks, and each blocked leg once
 * (from its lower end, so from the node whose +axis leg is blocked).  A rank
 * of a split room keeps the rows of its own nodes: stage B at a node reads
 * only Psi^n and Psi^{n-1}, which the halo planes hold. */
static int copy_list(const kt_room *room, const list_entry *e, int n, room_instrument *ri,
                     kt_error *err)
{
    int nx = room->plan.grid.nx, ny = room->plan.grid.ny, legs = 0;
    for (int r = 0; r < n; r++)
        for (int a = 0; a < 3; a++)
            legs += !(e[r].open & (1 << (2 * a)));
    ri->node = malloc(sizeof *ri->node * (size_t)(n ? n : 1));
    ri->blocked = malloc((size_t)(n ? n : 1));
    ri->leg = malloc(sizeof *ri->leg * (size_t)(legs ? legs : 1));
    ri->leg_axis = malloc((size_t)(legs ? legs : 1));
    if (!ri->node || !ri->blocked || !ri->leg || !ri->leg_axis)
        return kt_fail(err, KT_ENOMEM, "out of memory copying a boundary list");
    legs = 0;
    int kept = 0;
    for (int r = 0; r < n; r++) {
        int64_t i = e[r].node;
        int x = (int)(i % nx), y = (int)(i / nx % ny), z = (int)(i / nx / ny);
        if (!room_holds(room, x, y, z))
            continue;
        size_t p = room_pidx(room, x, y, z);
        ri->node[kept] = p;
        ri->blocked[kept++] = (uint8_t)(~e[r].open & KT_LEG_ALL);
        for (int a = 0; a < 3; a++)
            if (!(e[r].open & (1 << (2 * a)))) {
                ri->leg[legs] = p;
                ri->leg_axis[legs++] = (uint8_t)a;
            }
    }
    ri->count = kept;
    ri->leg_count = legs;
    return KT_OK;
}

int kt_room_add_instrument(kt_room *room, kt_instrument *ins, kt_error *err)
{
    if (!room || !ins)
        return kt_fail(err, KT_EINVAL, "kt_room_add_instrument: room or instrument is NULL");
    if (room->in_step)
        return kt_fail(err, KT_EINVAL, "%s: instruments cannot be added during a step",
                       label(ins));
    if (ins->boundary_count < 0 ||
        (ins->boundary_count > 0 && (!ins->boundary_node || !ins->boundary_open)))
        return kt_fail(err, KT_EINVAL, "%s: boundary list is inconsistent (count %d)",
                       label(ins), ins->boundary_count);
    if (room->plan.st)
        return kt_fail(err, KT_EINVAL, "%s: instruments are derived for the 7-point air "
                                       "scheme only; this room uses another scheme",
                       label(ins));
    int rc = check_box(room, ins, err);
    if (rc == KT_OK)
        rc = room_slab_check_instrument(room, ins, err);
    if (rc == KT_OK)
        rc = room_shape_check_box(room, ins->box_lo, ins->box_hi, label(ins), err);
    if (rc < 0)
        return rc;
    int n = ins->boundary_count;
    list_entry *e = malloc(sizeof *e * (size_t)(n ? n : 1));
    if (!e)
        return kt_fail(err, KT_ENOMEM, "out of memory checking a boundary list");
    room_instrument ri;
    memset(&ri, 0, sizeof ri);
    ri.ins = ins;
    if ((rc = check_list(room, ins, e, err)) >= 0)
        rc = copy_list(room, e, n, &ri, err);
    free(e);
    if (rc >= 0 && room->plan.ins_count == room->plan.ins_capacity) {
        int cap = room->plan.ins_capacity ? 2 * room->plan.ins_capacity : 4;
        room_instrument *grown = realloc(room->plan.ins, sizeof *grown * (size_t)cap);
        if (!grown)
            rc = kt_fail(err, KT_ENOMEM, "out of memory adding an instrument");
        else {
            room->plan.ins = grown;
            room->plan.ins_capacity = cap;
        }
    }
    if (rc < 0) {
        free(ri.node);
        free(ri.blocked);
        free(ri.leg);
        free(ri.leg_axis);
        return rc;
    }
    room->plan.ins[room->plan.ins_count++] = ri;
    return KT_OK;
}

int kt_room_remove_instrument(kt_room *room, kt_instrument *ins)
{
    if (!room || !ins)
        return KT_EINVAL;
    for (int k = 0; k < room->plan.ins_count; k++)
        if (room->plan.ins[k].ins == ins) {
            room_instrument *ri = &room->plan.ins[k];
            free(ri->node);
            free(ri->blocked);
            free(ri->leg);
            free(ri->leg_axis);
            memmove(ri, ri + 1, sizeof *ri * (size_t)(room->plan.ins_count - k - 1));
            room->plan.ins_count--;
            return KT_OK;
        }
    return KT_EINVAL;
}
