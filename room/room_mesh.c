/* room_mesh.c - solids given as closed triangle meshes (a hall from a 3D
 * model, a sculpted stage): the watertight check, which refuses a mesh with
 * an edge that does not border exactly two triangles and says where, and the
 * inside test the voxelisation uses, a ray along +x from each row of nodes
 * whose crossings with the triangles alternate in and out.  The mesh comes
 * as plain coordinates: reading files is the score layer's (libassimp). */
#include "room_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct mesh_edge {
    double a[3], b[3];           /* lexicographically a < b */
} mesh_edge;

static int compare_points(const double *p, const double *q)
{
    for (int d = 0; d < 3; d++)
        if (p[d] != q[d])
            return p[d] < q[d] ? -1 : 1;
    return 0;
}

static int compare_edges(const void *x, const void *y)
{
    const mesh_edge *e = x, *f = y;
    int c = compare_points(e->a, f->a);
    return c ? c : compare_points(e->b, f->b);
}

int room_mesh_check(const kt_room_solid *s, const char *name, kt_error *err)
{
    int n = s->mesh_triangles;
    if (n < 4 || !s->mesh_xyz)
        return kt_fail(err, KT_EINVAL, "%s: a closed mesh needs at least 4 triangles, it has %d",
                       name, n);
    for (int i = 0; i < 9 * n; i++)
        if (!isfinite(s->mesh_xyz[i]))
            return kt_fail(err, KT_EINVAL, "%s: triangle %d has a coordinate that is not finite",
                           name, i / 9 + 1);
    mesh_edge *e = malloc(sizeof *e * 3 * (size_t)n);
    if (!e)
        return kt_fail(err, KT_ENOMEM, "out of memory checking %s", name);
    for (int t = 0; t < n; t++)
        for (int k = 0; k < 3; k++) {
            const double *p = s->mesh_xyz + 9 * t + 3 * k;
            const double *q = s->mesh_xyz + 9 * t + 3 * ((k + 1) % 3);
            int swap = compare_points(p, q) > 0;
            memcpy(e[3 * t + k].a, swap ? q : p, sizeof e->a);
            memcpy(e[3 * t + k].b, swap ? p : q, sizeof e->b);
        }
    qsort(e, 3 * (size_t)n, sizeof *e, compare_edges);
    int rc = KT_OK;
    for (int i = 0, j; i < 3 * n && rc == KT_OK; i = j) {
        for (j = i + 1; j < 3 * n && compare_edges(&e[i], &e[j]) == 0; j++)
            ;
        if (j - i != 2)
            rc = kt_fail(err, KT_EINVAL,
                         "%s is not a closed surface: the edge from (%.4g, %.4g, %.4g) to "
                         "(%.4g, %.4g, %.4g) m borders %d triangle%s, not 2 (the air would "
                         "leak there)", name, e[i].a[0], e[i].a[1], e[i].a[2], e[i].b[0],
                         e[i].b[1], e[i].b[2], j - i, j - i == 1 ? "" : "s");
    }
    free(e);
    return rc;
}

void room_mesh_bounds(kt_room_solid *s)
{
    for (int d = 0; d < 3; d++) {
        s->lo_m[d] = INFINITY;
        s->hi_m[d] = -INFINITY;
    }
    for (int i = 0; i < 3 * s->mesh_triangles; i++)
        for (int d = 0; d < 3; d++) {
            s->lo_m[d] = fmin(s->lo_m[d], s->mesh_xyz[3 * i + d]);
            s->hi_m[d] = fmax(s->hi_m[d], s->mesh_xyz[3 * i + d]);
        }
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The x of every crossing of the line (., y, z) with the triangles, sorted;
 * xs holds mesh_triangles values.  Returns how many. */
static int crossings(const kt_room_solid *s, double y, double z, double *xs)
{
    int n = 0;
    for (int t = 0; t < s->mesh_triangles; t++) {
        const double *v = s->mesh_xyz + 9 * t;
        double ya = v[1], za = v[2], yb = v[4], zb = v[5], yc = v[7], zc = v[8];
        if ((y < ya && y < yb && y < yc) || (y > ya && y > yb && y > yc) ||
            (z < za && z < zb && z < zc) || (z > za && z > zb && z > zc))
            continue;
        /* barycentric weights of (y, z) in the triangle's projection */
        double d = (yb - ya) * (zc - za) - (yc - ya) * (zb - za);
        if (d == 0)
            continue;                /* edge-on to the line */
        double u = ((y - ya) * (zc - za) - (yc - ya) * (z - za)) / d;
        double w = ((yb - ya) * (z - za) - (y - ya) * (zb - za)) / d;
        if (u < 0 || w < 0 || u + w > 1)
            continue;
        xs[n++] = v[0] + u * (v[3] - v[0]) + w * (v[6] - v[0]);
    }
    qsort(xs, (size_t)n, sizeof *xs, compare_doubles);
    return n;
}

/* The line is moved off (y, z) by a hair, unequal along y and z, so that
 * it meets no edge or vertex of a mesh whose corners sit on the grid; a
 * node on a surface is inside (as for boxes) when any of the four lines
 * around it finds it inside. */
static void jitter(const kt_room_solid *s, double j[2])
{
    double size = 0;
    for (int d = 0; d < 3; d++)
        size = fmax(size, s->hi_m[d] - s->lo_m[d]);
    j[0] = 1.0e-7 * size;
    j[1] = 0.7e-7 * size;
}

/* Marks inside[x] for the nodes x = x0..x1 (at x Q) of row (y, z) inside
 * the mesh; xs: scratch of mesh_triangles values. */
void room_mesh_row(const kt_room_solid *s, double y, double z, double Q, int x0, int x1,
                   double slack, uint8_t *inside, double *xs)
{
    double j[2];
    jitter(s, j);
    memset(inside + x0, 0, (size_t)(x1 - x0 + 1));
    for (int r = 0; r < 4; r++) {
        int n = crossings(s, y + (r & 1 ? j[0] : -j[0]), z + (r & 2 ? j[1] : -j[1]), xs);
        for (int k = 0; k + 1 < n; k += 2) {
            double a = ceil((xs[k] - slack) / Q), b = floor((xs[k + 1] + slack) / Q);
            for (double x = fmax(a, x0); x <= fmin(b, x1); x++)
                inside[(int)x] = 1;
        }
    }
}

int room_mesh_contains(const kt_room_solid *s, const double p[3], double slack)
{
    double *xs = malloc(sizeof *xs * (size_t)s->mesh_triangles), j[2];
    if (!xs)
        return 0;
    jitter(s, j);
    int in = 0;
    for (int r = 0; r < 4 && !in; r++) {
        int n = crossings(s, p[1] + (r & 1 ? j[0] : -j[0]), p[2] + (r & 2 ? j[1] : -j[1]), xs);
        for (int k = 0; k + 1 < n && !in; k += 2)
            in = p[0] >= xs[k] - slack && p[0] <= xs[k + 1] + slack;
    }
    free(xs);
    return in;
}
