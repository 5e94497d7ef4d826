/* room_shape.c - rooms of any shape inside the box: solids (boxes, upright
 * cylinders, and holes carved back out of them) voxelised onto the 7-point
 * grid as a boundary list like a drum's shell.  A leg between an air node and
 * a solid node is blocked from both ends; the air nodes beside a solid take
 * the loss of its surface in the finite-volume form of the box walls, so the
 * discrete energy balance stays exact; the solid nodes next to the air are
 * held at zero (the only ones the branch-free sweep could make non-zero), so
 * the solid is a still region the air never reads.  docs/room.md, "Rooms of
 * any shape". */
#include "room_internal.h"
#include "room_slab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *solid_label(const kt_room_solid *s, int k, char buf[80])
{
    if (s->name[0])
        return s->name;
    snprintf(buf, 80, "%s %d", s->hole ? "hole" : "solid", k + 1);
    return buf;
}

/* A point on the surface is inside: slack of 1e-9 Q against rounding. */
static int solid_contains(const kt_room_solid *s, const double p[3], double slack)
{
    if (p[2] < s->lo_m[2] - slack || p[2] > s->hi_m[2] + slack)
        return 0;
    if (s->kind != KT_SOLID_CYLINDER &&
        !(p[0] >= s->lo_m[0] - slack && p[0] <= s->hi_m[0] + slack &&
          p[1] >= s->lo_m[1] - slack && p[1] <= s->hi_m[1] + slack))
        return 0;
    if (s->kind == KT_SOLID_BOX)
        return 1;
    if (s->kind == KT_SOLID_MESH)
        return room_mesh_contains(s, p, slack);
    double dx = p[0] - s->centre_m[0], dy = p[1] - s->centre_m[1], r = s->radius_m + slack;
    return dx * dx + dy * dy <= r * r;
}

/* Index + 1 of the solid whose matter node (x, y, z) is, 0 for air. */
static int node_owner(const kt_room_solid *s, int count, double Q, int x, int y, int z)
{
    const double p[3] = {x * Q, y * Q, z * Q};
    for (int k = count - 1; k >= 0; k--)
        if (solid_contains(&s[k], p, 1e-9 * Q))
            return s[k].hole ? 0 : k + 1;
    return 0;
}

int kt_room_is_air(const kt_room *room, int x, int y, int z)
{
    const kt_room_grid *g = &room->plan.grid;
    if (x < 0 || y < 0 || z < 0 || x >= g->nx || y >= g->ny || z >= g->nz)
        return 0;
    const room_shape *sh = &room->plan.shape;
    return node_owner(sh->solid, sh->solid_count, g->spacing_m, x, y, z) == 0;
}

int64_t kt_room_shape_nodes(const kt_room *room) { return room->plan.shape.count; }

int64_t kt_room_air_nodes(const kt_room *room)
{
    const room_shape *sh = &room->plan.shape;
    const kt_room_grid *g = &room->plan.grid;
    return sh->solid_count ? sh->air_nodes : (int64_t)g->nx * g->ny * g->nz;
}

void kt_room_air_measure(const kt_room *room, double *volume_m3, double *solid_area_m2)
{
    const room_shape *sh = &room->plan.shape;
    const double Q = room->plan.grid.spacing_m, *L = room->plan.params.size_m;
    *volume_m3 = sh->solid_count ? sh->volume_cells * Q * Q * Q : L[0] * L[1] * L[2];
    *solid_area_m2 = sh->area_cells * Q * Q;
}

/* The node range [*a, *b] of coordinates lo..hi (metres) along an axis of n nodes. */
static int node_range(double lo, double hi, double Q, int n, int *a, int *b)
{
    double s = 1e-9;
    double fa = ceil(lo / Q - s), fb = floor(hi / Q + s);
    *a = fa < 0 ? 0 : fa > n ? n : (int)fa;
    *b = fb > n - 1 ? n - 1 : fb < -1 ? -1 : (int)fb;
    return *a <= *b;
}

/* A mesh's rows x0..x1 of plane z, y0..y1, as paint_rows does. */
static void paint_mesh(const kt_room_solid *s, int k, int z, double Q, int x0, int x1, int y0,
                       int y1, int ya, int nx, int *owner, int64_t *claimed)
{
    uint8_t *inside = malloc((size_t)nx);
    double *xs = malloc(sizeof *xs * (size_t)s->mesh_triangles);
    for (int y = y0; inside && xs && y <= y1; y++) {
        room_mesh_row(s, y * Q, z * Q, Q, x0, x1, 1e-9 * Q, inside, xs);
        for (int x = x0; x <= x1; x++)
            if (inside[x]) {
                owner[(size_t)(y - ya) * nx + x] = s->hole ? 0 : k + 1;
                claimed[k]++;
            }
    }
    free(inside);
    free(xs);
}

/* Rows ya..yb of plane z's matter, owner[(y - ya) * nx + x] (index + 1 of
 * the solid, 0 air), painting the solids in order; claimed[k] counts the
 * nodes solid k took.  A mesh costs a line through each row, not each node. */
static void paint_rows(const kt_room *room, int z, int ya, int yb, int *owner, int64_t *claimed)
{
    const room_shape *sh = &room->plan.shape;
    const kt_room_grid *g = &room->plan.grid;
    const double Q = g->spacing_m, slack = 1e-9 * Q;
    memset(owner, 0, sizeof *owner * (size_t)g->nx * (size_t)(yb - ya + 1));
    for (int k = 0; k < sh->solid_count; k++) {
        const kt_room_solid *s = &sh->solid[k];
        const int cyl = s->kind == KT_SOLID_CYLINDER;
        const double r = cyl ? s->radius_m : 0;
        const double lo[2] = {cyl ? s->centre_m[0] - r : s->lo_m[0],
                              cyl ? s->centre_m[1] - r : s->lo_m[1]};
        const double hi[2] = {cyl ? s->centre_m[0] + r : s->hi_m[0],
                              cyl ? s->centre_m[1] + r : s->hi_m[1]};
        int x0, x1, y0, y1;
        if (z * Q < s->lo_m[2] - slack || z * Q > s->hi_m[2] + slack ||
            !node_range(lo[0], hi[0], Q, g->nx, &x0, &x1) ||
            !node_range(lo[1], hi[1], Q, g->ny, &y0, &y1))
            continue;
        y0 = y0 > ya ? y0 : ya;
        y1 = y1 < yb ? y1 : yb;
        if (s->kind == KT_SOLID_MESH) {
            paint_mesh(s, k, z, Q, x0, x1, y0, y1, ya, g->nx, owner, claimed);
            continue;
        }
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++) {
                const double p[3] = {x * Q, y * Q, z * Q};
                if (!solid_contains(s, p, slack))
                    continue;
                owner[(size_t)(y - ya) * g->nx + x] = s->hole ? 0 : k + 1;
                claimed[k]++;
            }
    }
}

static void paint_plane(const kt_room *room, int z, int *owner, int64_t *claimed)
{
    paint_rows(room, z, 0, room->plan.grid.ny - 1, owner, claimed);
}

int kt_room_air_row(const kt_room *room, int y, int z, uint8_t *air)
{
    const kt_room_grid *g = &room->plan.grid;
    const room_shape *sh = &room->plan.shape;
    if (y < 0 || z < 0 || y >= g->ny || z >= g->nz)
        return KT_EINVAL;
    int *owner = malloc(sizeof *owner * (size_t)g->nx);
    int64_t *claimed = calloc((size_t)(sh->solid_count ? sh->solid_count : 1), sizeof *claimed);
    if (!owner || !claimed) {
        free(owner);
        free(claimed);
        return KT_ENOMEM;
    }
    paint_rows(room, z, y, y, owner, claimed);
    for (int x = 0; x < g->nx; x++)
        air[x] = owner[x] == 0;
    free(owner);
    free(claimed);
    return KT_OK;
}

/* Growing arrays of the list and its legs. */
static int grow(void **p, size_t esize, int need, int *cap)
{
    if (need <= *cap)
        return 1;
    int c = *cap ? 2 * *cap : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, esize * (size_t)c);
    if (!q)
        return 0;
    *p = q;
    *cap = c;
    return 1;
}

static int push_node(room_shape *sh, int *cap, size_t node, uint8_t blocked, uint8_t wall,
                     double loss)
{
    int c = *cap;
    int ok = grow((void **)&sh->node, sizeof *sh->node, sh->count + 1, &c);
    c = *cap;
    ok = ok && grow((void **)&sh->blocked, 1, sh->count + 1, &c);
    c = *cap;
    ok = ok && grow((void **)&sh->wall, 1, sh->count + 1, &c);
    c = *cap;
    ok = ok && grow((void **)&sh->loss, sizeof *sh->loss, sh->count + 1, &c);
    if (!ok)
        return 0;
    *cap = c;
    sh->node[sh->count] = node;
    sh->blocked[sh->count] = blocked;
    sh->wall[sh->count] = wall;
    sh->loss[sh->count++] = loss;
    return 1;
}

static int push_leg(room_shape *sh, int *cap, size_t node, int axis, double w)
{
    int c = *cap;
    int ok = grow((void **)&sh->leg, sizeof *sh->leg, sh->leg_count + 1, &c);
    c = *cap;
    ok = ok && grow((void **)&sh->leg_axis, 1, sh->leg_count + 1, &c);
    c = *cap;
    ok = ok && grow((void **)&sh->leg_w, sizeof *sh->leg_w, sh->leg_count + 1, &c);
    if (!ok)
        return 0;
    *cap = c;
    sh->leg[sh->leg_count] = node;
    sh->leg_axis[sh->leg_count] = (uint8_t)axis;
    sh->leg_w[sh->leg_count++] = w;
    return 1;
}

static double solid_beta(const kt_room *room, int owner)
{
    double b = room->plan.shape.solid[owner - 1].beta;
    return b < 0 ? room->plan.params.wall_beta : b;
}

/* The staircase's area correction: a surface of normal n is stepped into
 * faces across each axis a whose areas are |n_a| of its own, (|n_x| + |n_y|
 * + |n_z|) of it in all (4/pi on average round a cylinder), and its loss,
 * the flux through it, grows alike (a wave longer than the steps sees the
 * staircase as one surface of admittance beta sum |n_a|); each face's loss
 * is scaled by 1 / sum |n_a| so that the solid absorbs as its true surface.
 * A box's faces are already its surface, and so are a cylinder's ends
 * (faces across z).  The surface between air node
 * p and solid node q is that of the last solid or hole holding one of them
 * only (the later ones hold neither, or both would be of one matter). */
static double face_weight(const room_shape *sh, int a, const double p[3], const double q[3],
                          double slack)
{
    const kt_room_solid *s = NULL;
    for (int k = sh->solid_count - 1; k >= 0 && !s; k--)
        if (solid_contains(&sh->solid[k], p, slack) != solid_contains(&sh->solid[k], q, slack))
            s = &sh->solid[k];
    if (!s || s->kind != KT_SOLID_CYLINDER || a == 2)
        return 1.0;                  /* meshes: not corrected yet */
    double nx = 0.5 * (p[0] + q[0]) - s->centre_m[0], ny = 0.5 * (p[1] + q[1]) - s->centre_m[1];
    double r = hypot(nx, ny);
    return r > 0 ? r / (fabs(nx) + fabs(ny)) : 1.0;
}

/* Node (x, y, z) of plane `cur` (below: `lo`, above: `hi`, NULL beyond the
 * room): its blocked legs, and for an air node the loss of its solid faces,
 * lambda beta A_i / V_i with each face's area over the volume 1/v along its
 * axis; *volume and *area get its share of the air and its solid faces'
 * area (corrected), in cells. */
static int node_entry(const kt_room *room, const int *lo, const int *cur, const int *hi,
                      int x, int y, int z, uint8_t *blocked, double *loss, double *volume,
                      double *area)
{
    const kt_room_grid *g = &room->plan.grid;
    const int n[3] = {g->nx, g->ny, g->nz}, c[3] = {x, y, z};
    const size_t i = (size_t)y * g->nx + x;
    const int me = cur[i] != 0;
    int nb[6];
    nb[0] = x + 1 < g->nx ? cur[i + 1] : -1;
    nb[1] = x > 0 ? cur[i - 1] : -1;
    nb[2] = y + 1 < g->ny ? cur[i + g->nx] : -1;
    nb[3] = y > 0 ? cur[i - g->nx] : -1;
    nb[4] = hi ? hi[i] : -1;
    nb[5] = lo ? lo[i] : -1;
    *blocked = 0;
    *loss = 0;
    *volume = me ? 0 : room_wall_share(room, 0, x, n[0]) * room_wall_share(room, 1, y, n[1]) *
                           room_wall_share(room, 2, z, n[2]);
    for (int d = 0; d < 6; d++) {
        if (nb[d] < 0 || (nb[d] != 0) == me)
            continue;
        *blocked |= (uint8_t)(1u << d);
        if (me)
            continue;
        const double Q = g->spacing_m, p[3] = {x * Q, y * Q, z * Q};
        double q[3] = {p[0], p[1], p[2]};
        q[d / 2] += d % 2 ? -Q : Q;
        double w = face_weight(&room->plan.shape, d / 2, p, q, 1e-9 * Q) /
                   room_wall_share(room, d / 2, c[d / 2], n[d / 2]);
        *loss += solid_beta(room, nb[d]) * w;
        *area += w * *volume;
    }
    *loss *= room->plan.lambda;
    return me;
}

/* Per wall code 9 xw + 3 yw + zw: the weight 1/v of a blocked leg along
 * each axis (1 off the walls) and lambda beta of the box walls. */
static void shape_coefs(room_plan *pl)
{
    for (int code = 0; code < 27; code++) {
        const int w[3] = {code / 9, code / 3 % 3, code % 3};
        double *c = pl->shape.coef[code];
        for (int a = 0; a < 3; a++)
            c[a] = w[a] ? 1.0 / pl->walls.v[a][w[a] - 1] : 1.0;
        c[3] = pl->lambda * ((pl->walls.loss[0][w[0]] + pl->walls.loss[1][w[1]]) +
                             pl->walls.loss[2][w[2]]);
    }
}

/* An air node at x of its row and at plane z of its column widens their ranges. */
static void air_extent(int32_t *row, int32_t *column, int x, int z)
{
    row[0] = x < row[0] ? x : row[0];
    row[1] = x + 1 > row[1] ? x + 1 : row[1];
    column[0] = z < column[0] ? z : column[0];
    column[1] = z + 1 > column[1] ? z + 1 : column[1];
}

/* The boundary list, plane by plane with the planes above and below.  A
 * rank of a slab room (room_slab.h) lists the nodes of its own planes only,
 * but paints every plane: the air's extent and measures, and whether each
 * solid holds a node, are the whole room's on every rank, and a node beside
 * the cut sees the matter of the neighbour's plane as one process does. */
static int build_list(kt_room *room, int64_t *claimed, int64_t *air, kt_error *err)
{
    room_shape *sh = &room->plan.shape;
    const kt_room_grid *g = &room->plan.grid;
    size_t plane = (size_t)g->nx * g->ny;
    int *buf = malloc(sizeof *buf * plane * 3);
    if (!buf)
        return kt_fail(err, KT_ENOMEM, "out of memory voxelising the solids");
    int *lo = buf, *cur = buf + plane, *hi = buf + 2 * plane, node_cap = 0, leg_cap = 0;
    const size_t rows = (size_t)g->ny * g->nz;
    int32_t *xs = sh->xspan = malloc(sizeof *xs * 2 * rows);
    int32_t *zs = sh->zspan = malloc(sizeof *zs * 2 * plane);
    sh->row_first = malloc(sizeof *sh->row_first * (rows + 1));
    if (!xs || !zs || !sh->row_first) {
        free(buf);
        return kt_fail(err, KT_ENOMEM, "out of memory for the air's extent");
    }
    for (size_t r = 0; r < rows; r++)
        xs[2 * r] = g->nx, xs[2 * r + 1] = 0;
    for (size_t c = 0; c < plane; c++)
        zs[2 * c] = g->nz, zs[2 * c + 1] = 0;
    paint_plane(room, 0, cur, claimed);
    *air = 0;
    for (int z = 0; z < g->nz; z++) {
        if (z + 1 < g->nz)
            paint_plane(room, z + 1, hi, claimed);
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++) {
                if (x == 0)
                    sh->row_first[(size_t)z * g->ny + y] = sh->count;
                uint8_t blocked;
                double loss, volume;
                int solid = node_entry(room, z > 0 ? lo : NULL, cur, z + 1 < g->nz ? hi : NULL,
                                       x, y, z, &blocked, &loss, &volume, &sh->area_cells);
                *air += !solid;
                sh->volume_cells += volume;
                if (!solid)
                    air_extent(xs + 2 * ((size_t)z * g->ny + y), zs + 2 * ((size_t)y * g->nx + x),
                               x, z);
                if (!blocked || z < room->plan.z0 || z >= room->plan.z_end)
                    continue;    /* a slab lists its own planes (the rest only counts) */
                int w = 9 * room_wall_code(x, g->nx) + 3 * room_wall_code(y, g->ny) +
                        room_wall_code(z, g->nz);
                size_t p = room_pidx(room, x, y, z);
                if (!push_node(sh, &node_cap, p, blocked, solid ? ROOM_SHAPE_SOLID : (uint8_t)w,
                               loss)) {
                    free(buf);
                    return kt_fail(err, KT_ENOMEM, "out of memory for the solids' boundary list");
                }
                const int c[3] = {x, y, z}, n[3] = {g->nx, g->ny, g->nz};
                for (int a = 0; a < 3; a++) {
                    if (!(blocked & (1u << (2 * a))))
                        continue;
                    double wa = 1;
                    for (int b = 0; b < 3; b++)
                        if (b != a)
                            wa *= room_wall_share(room, b, c[b], n[b]);
                    if (!push_leg(sh, &leg_cap, p, a, wa)) {
                        free(buf);
                        return kt_fail(err, KT_ENOMEM,
                                       "out of memory for the solids' boundary list");
                    }
                }
            }
        int *t = lo;
        lo = cur;
        cur = hi;
        hi = t;
    }
    free(buf);
    for (size_t r = 0; r < rows; r++)
        if (xs[2 * r] >= xs[2 * r + 1])
            xs[2 * r] = xs[2 * r + 1] = 0;
    for (size_t c = 0; c < plane; c++)
        if (zs[2 * c] >= zs[2 * c + 1])
            zs[2 * c] = zs[2 * c + 1] = 0;
    sh->air_nodes = *air;
    sh->row_first[rows] = sh->count;
    return KT_OK;
}

static int check_solid(const kt_room_solid *s, int k, kt_error *err)
{
    char b[80];
    const char *name = solid_label(s, k, b);
    for (int d = 0; d < 3; d++)
        if (!isfinite(s->lo_m[d]) || !isfinite(s->hi_m[d]))
            return kt_fail(err, KT_EINVAL, "%s: its corners must be finite numbers", name);
    if (s->kind != KT_SOLID_BOX && s->kind != KT_SOLID_CYLINDER && s->kind != KT_SOLID_MESH)
        return kt_fail(err, KT_EINVAL, "%s: unknown kind %d (box, cylinder or mesh)", name,
                       (int)s->kind);
    if (s->kind == KT_SOLID_MESH) {
        int rc = room_mesh_check(s, name, err);
        if (rc < 0)
            return rc;
    }
    int box = s->kind == KT_SOLID_BOX;
    for (int d = box ? 0 : 2; d < 3 && s->kind != KT_SOLID_MESH; d++)
        if (!(s->lo_m[d] < s->hi_m[d]))
            return kt_fail(err, KT_EINVAL, "%s: it runs from %g m to %g m along %c: the first "
                           "must be below the second", name, s->lo_m[d], s->hi_m[d], "xyz"[d]);
    if (s->kind == KT_SOLID_CYLINDER &&
        !(s->radius_m > 0 && isfinite(s->radius_m) && isfinite(s->centre_m[0]) &&
          isfinite(s->centre_m[1])))
        return kt_fail(err, KT_EINVAL, "%s: a cylinder needs a finite centre and a positive "
                       "radius (got %g m)", name, s->radius_m);
    if (!(s->beta <= 0.5) || isnan(s->beta))
        return kt_fail(err, KT_EINVAL, "%s: beta must lie in 0..0.5 (0 rigid, 0.5 anechoic), "
                       "got %g", name, s->beta);
    return KT_OK;
}

static int check_room(const kt_room *room, const kt_room_solid *solids, int count,
                      kt_error *err)
{
    if (!room || count < 0 || (count > 0 && !solids))
        return kt_fail(err, KT_EINVAL, "kt_room_add_solids: no room, or no solids for count %d",
                       count);
    if (room->plan.shape.solid_count > 0)
        return kt_fail(err, KT_EINVAL, "the room already has its solids: give them all at once");
    if (room->n > 0 || room->plan.ins_count || room->plan.src_count || room->plan.mic_count)
        return kt_fail(err, KT_EINVAL, "solids go into a room before its first step and before "
                                       "its microphones, sources and instruments");
    if (room->plan.st || room->plan.fcc)
        return kt_fail(err, KT_ENOTSUP, "rooms with solids run the 7-point air scheme only "
                                        "(scheme = standard)");
    if (count > 0 && room->slab && room->slab->axis != 2)
        return kt_fail(err, KT_ENOTSUP, "a room with solids is split along z only (this one "
                                        "is split along %c: --split-axis z)",
                       "xyz"[room->slab->axis]);
    return KT_OK;
}

/* Absorbing walls own the two outer layers (room_abc.c): no solid may touch them. */
static int check_abc(const kt_room *room, int *culprit, kt_error *err)
{
    const kt_room_grid *g = &room->plan.grid;
    const room_shape *sh = &room->plan.shape;
    for (int r = 0; r < sh->count && room->abc; r++) {
        int xyz[3];
        room_plan_node_xyz(&room->plan, sh->node[r], xyz);
        const int x = xyz[0], y = xyz[1], z = xyz[2];
        if (x >= 2 && y >= 2 && z >= 2 && x < g->nx - 2 && y < g->ny - 2 && z < g->nz - 2)
            continue;
        int o = 0;
        for (int d = -1; d <= 1 && !o; d++)
            for (int e = -1; e <= 1 && !o; e++)
                for (int f = -1; f <= 1 && !o; f++)
                    if (x + d >= 0 && y + e >= 0 && z + f >= 0 && x + d < g->nx &&
                        y + e < g->ny && z + f < g->nz)
                        o = node_owner(sh->solid, sh->solid_count, g->spacing_m, x + d, y + e,
                                       z + f);
        if (culprit)
            *culprit = o - 1;
        char b[80];
        return kt_fail(err, KT_ENOTSUP,
                       "%s reaches within two nodes of the absorbing walls (near node %d, %d, "
                       "%d), which update the two outer layers themselves; keep solids %g m "
                       "from them or use walls = lossy",
                       o ? solid_label(&sh->solid[o - 1], o - 1, b) : "a solid", x, y, z,
                       2 * g->spacing_m);
    }
    return KT_OK;
}

void room_shape_free(room_plan *plan)
{
    room_shape *sh = &plan->shape;
    for (int k = 0; k < sh->solid_count; k++)
        free((double *)sh->solid[k].mesh_xyz);   /* the room's own copies */
    free(sh->solid);
    free(sh->node);
    free(sh->blocked);
    free(sh->wall);
    free(sh->loss);
    free(sh->saved);
    free(sh->leg);
    free(sh->leg_axis);
    free(sh->leg_w);
    free(sh->xspan);
    free(sh->zspan);
    free(sh->row_first);
    memset(sh, 0, sizeof *sh);
}

int kt_room_add_solids(kt_room *room, const kt_room_solid *solids, int count, int *culprit,
                       kt_error *err)
{
    if (culprit)
        *culprit = -1;
    int rc = check_room(room, solids, count, err);
    for (int k = 0; k < count && rc == KT_OK; k++)
        if ((rc = check_solid(&solids[k], k, err)) < 0 && culprit)
            *culprit = k;
    if (rc < 0 || count == 0)
        return rc;
    room_shape *sh = &room->plan.shape;
    sh->solid = malloc(sizeof *sh->solid * (size_t)count);
    int64_t *claimed = calloc((size_t)count, sizeof *claimed), air = 0;
    if (!sh->solid || !claimed) {
        free(claimed);
        room_shape_free(&room->plan);
        return kt_fail(err, KT_ENOMEM, "out of memory for the solids");
    }
    memcpy(sh->solid, solids, sizeof *sh->solid * (size_t)count);
    sh->solid_count = count;
    for (int k = 0; k < count; k++)
        sh->solid[k].mesh_xyz = NULL;    /* the caller's until copied */
    for (int k = 0; k < count; k++) {
        kt_room_solid *s = &sh->solid[k];
        if (s->kind != KT_SOLID_MESH)
            continue;
        double *xyz = malloc(sizeof *xyz * 9 * (size_t)s->mesh_triangles);
        if (xyz)
            memcpy(xyz, solids[k].mesh_xyz, sizeof *xyz * 9 * (size_t)s->mesh_triangles);
        s->mesh_xyz = xyz;
        if (!xyz) {
            free(claimed);
            room_shape_free(&room->plan);
            return kt_fail(err, KT_ENOMEM, "out of memory for the solids");
        }
        room_mesh_bounds(s);
    }
    shape_coefs(&room->plan);
    rc = build_list(room, claimed, &air, err);
    char b[80];
    for (int k = 0; k < count && rc == KT_OK; k++)
        if (claimed[k] == 0) {
            if (culprit)
                *culprit = k;
            rc = kt_fail(err, KT_EINVAL, "%s contains no node of the grid: it lies outside the "
                         "room or is thinner than the grid spacing (%.4g m) along some axis",
                         solid_label(&solids[k], k, b), room->plan.grid.spacing_m);
        }
    free(claimed);
    if (rc == KT_OK && air == 0)
        rc = kt_fail(err, KT_EINVAL, "the solids fill the whole room: no air is left");
    if (rc == KT_OK)
        rc = check_abc(room, culprit, err);
    for (int r = 0; r < sh->count && rc == KT_OK; r++)
        sh->lossy |= sh->loss[r] > 0;
    if (rc == KT_OK && sh->lossy && room->plan.grids == 2 &&
        !(sh->saved = calloc((size_t)(sh->count ? sh->count : 1), sizeof *sh->saved)))
        rc = kt_fail(err, KT_ENOMEM, "out of memory for the solids' boundary list");
    if (rc < 0)
        room_shape_free(&room->plan);
    return rc;
}

/* ---- the list's bit index (the GPU's sweep) ---- */

int room_shape_bit_index(const long long *node, int count, size_t points, uint32_t *word,
                         kt_error *err)
{
    memset(word, 0, (points + 31) / 32 * 2 * sizeof *word);
    for (int r = 0; r < count; r++) {
        if (node[r] < 0 || (size_t)node[r] >= points || (r > 0 && node[r] <= node[r - 1]))
            return kt_fail(err, KT_EINVAL, "the solids' list is not in ascending order of "
                                           "nodes inside the layout (entry %d, node %lld)",
                           r, node[r]);
        uint32_t *w = word + 2 * ((size_t)node[r] / 32);
        if (!w[0])
            w[1] = (uint32_t)r;
        w[0] |= 1u << (node[r] % 32);
    }
    return KT_OK;
}

/* ---- positions near solids ---- */

/* A position's trilinear cell (the microphones') must be all air: a
 * microphone, a source or a waypoint inside a solid or beside its surface
 * would read or feed the still solid. */
int room_shape_check_position(const kt_room *room, const double pos_m[3], const char *what,
                              kt_error *err)
{
    const room_shape *sh = &room->plan.shape;
    if (sh->solid_count == 0)
        return KT_OK;
    const kt_room_grid *g = &room->plan.grid;
    const double Q = g->spacing_m;
    int i0[3], n[3] = {g->nx, g->ny, g->nz};
    for (int d = 0; d < 3; d++) {
        i0[d] = (int)floor(pos_m[d] / Q);
        i0[d] = i0[d] < 0 ? 0 : i0[d] > n[d] - 2 ? n[d] - 2 : i0[d];
    }
    for (int c = 0; c < 8; c++) {
        int x = i0[0] + (c & 1), y = i0[1] + ((c >> 1) & 1), z = i0[2] + (c >> 2);
        int o = node_owner(sh->solid, sh->solid_count, Q, x, y, z);
        if (o) {
            char b[80];
            return kt_fail(err, KT_EINVAL,
                           "%s: (%g, %g, %g) m lies inside %s or within a grid cell (%.3g m) "
                           "of its surface (node %d, %d, %d is solid)", what, pos_m[0],
                           pos_m[1], pos_m[2], solid_label(&sh->solid[o - 1], o - 1, b), Q,
                           x, y, z);
        }
    }
    return KT_OK;
}

/* A moving microphone's path between two waypoints, checked every half cell. */
int room_shape_check_path(const kt_room *room, const double a[3], const double b[3],
                          const char *what, kt_error *err)
{
    if (room->plan.shape.solid_count == 0)
        return KT_OK;
    double len = sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) +
                      (b[2] - a[2]) * (b[2] - a[2]));
    int steps = (int)ceil(2 * len / room->plan.grid.spacing_m);
    for (int s = 1; s < steps; s++) {
        double t = (double)s / steps, p[3];
        for (int d = 0; d < 3; d++)
            p[d] = a[d] + t * (b[d] - a[d]);
        int rc = room_shape_check_position(room, p, what, err);
        if (rc < 0)
            return rc;
    }
    return KT_OK;
}

/* An instrument's box and the layer of nodes around it must be air: then no
 * node of its list is on the solids' list, and their corrections stay apart. */
int room_shape_check_box(const kt_room *room, const int lo[3], const int hi[3],
                         const char *what, kt_error *err)
{
    const room_shape *sh = &room->plan.shape;
    const kt_room_grid *g = &room->plan.grid;
    for (int z = lo[2] - 1; z <= hi[2] + 1 && sh->solid_count; z++)
        for (int y = lo[1] - 1; y <= hi[1] + 1; y++)
            for (int x = lo[0] - 1; x <= hi[0] + 1; x++) {
                int o = node_owner(sh->solid, sh->solid_count, g->spacing_m, x, y, z);
                if (!o)
                    continue;
                char b[80];
                return kt_fail(err, KT_EINVAL,
                               "%s: its box (nodes %d..%d, %d..%d, %d..%d) reaches into %s or "
                               "lies within a node of it (node %d, %d, %d, at (%.3f, %.3f, "
                               "%.3f) m, is solid)", what, lo[0], hi[0], lo[1], hi[1], lo[2],
                               hi[2], solid_label(&sh->solid[o - 1], o - 1, b), x, y, z,
                               x * g->spacing_m, y * g->spacing_m, z * g->spacing_m);
            }
    return KT_OK;
}

/* ---- the step ---- */

#define REAL double
#define SHAPE_NAME(x) shape_##x##_double
#include "room_shape_impl.h"
#undef REAL
#undef SHAPE_NAME
#define REAL float
#define SHAPE_NAME(x) shape_##x##_float
#include "room_shape_impl.h"
#undef REAL
#undef SHAPE_NAME

/* The whole list in chunks over the threads (stage 0 save, 1 correct):
 * each entry is its own, so the bits do not depend on the split. */
static void whole_list(kt_room *room, int stage)
{
    const int count = room->plan.shape.count, single = room->plan.params.precision == KT_SINGLE;
    const int nt = count >= 4096 ? room->nthreads : 1, chunk = 1024;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int a = 0; a < count; a += chunk) {
        const int b = a + chunk < count ? a + chunk : count;
        if (stage == 0)
            single ? shape_save_float(room, a, b) : shape_save_double(room, a, b);
        else
            single ? shape_correct_float(room, a, b) : shape_correct_double(room, a, b);
    }
}

void room_shape_save(kt_room *room)
{
    if (room->plan.shape.saved && !room_shape_in_sweep(room))
        whole_list(room, 0);
}

/* Stage B at the solids' list.  The sweep gave node i
 *   next = (A - (1 - lb) P) / (1 + lb),   lb = lambda beta_i of its box walls,
 * A = 2 Psi^n + lambda^2 L (and the viscous terms) with every leg open.  The
 * blocked legs take B = lambda^2 C^n (+ eta (C^n - C^{n-1})) with C = sum
 * over them of (Psi_i - Psi_j) / v_axis, and the solid faces' loss ls:
 *   next' = (A + B - (1 - lb - ls) P) / (1 + lb + ls)
 *         = (next (1 + lb) + B + ls P) / (1 + lb + ls),
 * which is next + B / (1 + lb) when ls = 0.  Solid nodes are set to 0. */
void room_shape_correct(kt_room *room)
{
    if (room->plan.shape.count && !room_shape_in_sweep(room))
        whole_list(room, 1);
}

/* Around a row's sweep (room_sweep_impl.h air_row): Psi^{n-1} at the lossy
 * nodes of entries ra .. rb-1 saved just before the sweep reaches them;
 * the row's stage B after, while the row and its neighbours are in cache
 * (a separate pass over the list took a third of a shaped room's step). */
void room_shape_save_entries(kt_room *room, int ra, int rb)
{
    if (ra >= rb)
        return;
    if (room->plan.params.precision == KT_SINGLE)
        shape_save_float(room, ra, rb);
    else
        shape_save_double(room, ra, rb);
}

void room_shape_row_after(kt_room *room, int y, int z)
{
    const room_shape *sh = &room->plan.shape;
    const int32_t *f = sh->row_first + (size_t)z * room->plan.grid.ny + y;
    if (f[0] == f[1])
        return;
    if (room->plan.params.precision == KT_SINGLE)
        shape_correct_float(room, f[0], f[1]);
    else
        shape_correct_double(room, f[0], f[1]);
}
