/* room_stencil_impl.h - the generic stencil sweep and the ghosts of the
 * wider schemes, written once and compiled for each precision by
 * room_stencil.c, which defines REAL and STN(x) before including it.
 *
 * Walls (docs/room.md, "Walls"): the `halo` ghost layers of Psi^n are filled
 * one axis after the other (so that edges and corners get the image through
 * both walls) with ghost t beyond end node e
 *   g_t = Psi(e -+ (t-1)) + theta (Psi(e -+ t) - Psi(e -+ (t-1))),
 * theta = 1/v - 1 (room_plan.h).  For a stencil of reach 1 that makes the
 * operator, in every axis, the finite volume of a cell cut by the wall at its
 * place, and the whole stencil, a polynomial in the three, symmetric for the
 * cells' volumes; wider stencils take theta = 1 (the mirror through the end
 * node: node -t is node t) or 0 (the mirror half a cell beyond: node -t is
 * node t - 1), both even extensions, which keep the modes of the box exactly
 * the free-space ones.  Then every node takes the same branch-free update,
 * row by row:
 *   Psi^{n+1} = centre Psi^n + sum_p lambda^2 w_p (Psi^n_{+d_p} + Psi^n_{-d_p}) - Psi^{n-1},
 * written over Psi^{n-1}; the pairs are added in a fixed order, pass by pass
 * over the row (offset outside, nodes inside: the seed paper's KernelB
 * arrangement, which vectorises), so any thread count gives the same bits.
 *
 * Lossy walls (room_scheme.c has the layer weights): a row within reach of a
 * y or z wall takes its loss pair lm = 1 - lambda beta_i, li = 1/(1 + lambda
 * beta_i) as a row constant,
 *   Psi^{n+1} = (centre Psi^n + sum_p ... - lm Psi^{n-1}) li,
 * and the row's nodes within reach of an x wall are computed again with their
 * own pair from the Psi^{n-1} values saved before the row's passes. */

/* Ghost t of an end whose nodes are a = Psi(e -+ (t-1)) and b = Psi(e -+ t). */
static inline REAL STN(ghost)(REAL a, REAL b, REAL theta)
{
    return theta == 1 ? b : theta == 0 ? a : a + theta * (b - a);
}

static void STN(fill_ghosts)(const kt_room *r, REAL *f)
{
    const int nx = r->plan.grid.nx, ny = r->plan.grid.ny, nz = r->plan.grid.nz, h = r->plan.halo;
    const size_t px = r->plan.px, plane = r->plan.plane;
    const REAL tx0 = (REAL)r->plan.walls.theta[0][0], tx1 = (REAL)r->plan.walls.theta[0][1];
    const REAL ty0 = (REAL)r->plan.walls.theta[1][0], ty1 = (REAL)r->plan.walls.theta[1][1];
    const REAL tz0 = (REAL)r->plan.walls.theta[2][0], tz1 = (REAL)r->plan.walls.theta[2][1];
#pragma omp parallel for schedule(static) num_threads(r->nthreads)
    for (int z = 0; z < nz; z++) {
        for (int y = 0; y < ny; y++) {
            REAL *row = f + room_pidx(r, 0, y, z);
            for (int t = 1; t <= h; t++) {
                row[-t] = STN(ghost)(row[t - 1], row[t], tx0);
                row[nx - 1 + t] = STN(ghost)(row[nx - t], row[nx - 1 - t], tx1);
            }
        }
        REAL *line0 = f + room_pidx(r, 0, 0, z) - h;      /* row y = 0 from its first ghost */
        for (int t = 1; t <= h; t++) {
            REAL *lo = line0 - (size_t)t * px, *hi = line0 + (size_t)(ny - 1 + t) * px;
            const REAL *a0 = line0 + (size_t)(t - 1) * px, *b0 = line0 + (size_t)t * px;
            const REAL *a1 = line0 + (size_t)(ny - t) * px, *b1 = line0 + (size_t)(ny - 1 - t) * px;
            for (size_t x = 0; x < px; x++) {
                lo[x] = STN(ghost)(a0[x], b0[x], ty0);
                hi[x] = STN(ghost)(a1[x], b1[x], ty1);
            }
        }
    }
    REAL *plane0 = f + (size_t)h * plane;
    for (int t = 1; t <= h; t++) {
        REAL *lo = plane0 - (size_t)t * plane, *hi = plane0 + (size_t)(nz - 1 + t) * plane;
        const REAL *a0 = plane0 + (size_t)(t - 1) * plane, *b0 = plane0 + (size_t)t * plane;
        const REAL *a1 = plane0 + (size_t)(nz - t) * plane, *b1 = plane0 + (size_t)(nz - 1 - t) * plane;
        for (size_t i = 0; i < plane; i++) {
            lo[i] = STN(ghost)(a0[i], b0[i], tz0);
            hi[i] = STN(ghost)(a1[i], b1[i], tz1);
        }
    }
}

static void STN(row)(REAL *restrict pn, const REAL *restrict c, int nx, int pairs,
                     const ptrdiff_t *off, const REAL *l2w, REAL centre)
{
    for (int x = 0; x < nx; x++)
        pn[x] = centre * c[x] - pn[x];
    for (int q = 0; q < pairs; q++) {
        const REAL w = l2w[q];
        const REAL *restrict a = c + off[q], *restrict b = c - off[q];
        for (int x = 0; x < nx; x++)
            pn[x] += w * (a[x] + b[x]);
    }
}

static void STN(row_lossy)(REAL *restrict pn, const REAL *restrict c, int nx, int pairs,
                           const ptrdiff_t *off, const REAL *l2w, REAL centre, REAL lm, REAL li)
{
    for (int x = 0; x < nx; x++)
        pn[x] = centre * c[x] - lm * pn[x];
    for (int q = 0; q < pairs; q++) {
        const REAL w = l2w[q];
        const REAL *restrict a = c + off[q], *restrict b = c - off[q];
        for (int x = 0; x < nx; x++)
            pn[x] += w * (a[x] + b[x]);
    }
    for (int x = 0; x < nx; x++)
        pn[x] *= li;
}

/* One node of a lossy row, in the row's order of operations. */
static REAL STN(node_lossy)(const REAL *c, int x, int pairs, const ptrdiff_t *off,
                            const REAL *l2w, REAL centre, double lb, REAL old)
{
    REAL v = centre * c[x] - (REAL)(1 - lb) * old;
    for (int q = 0; q < pairs; q++)
        v += l2w[q] * (c[x + off[q]] + c[x - off[q]]);
    return v * (REAL)(1 / (1 + lb));
}

/* Row (y, z) of a room with lossy walls. */
static void STN(row_walls)(kt_room *r, REAL *pn, const REAL *c, int y, int z, const REAL *l2w,
                           REAL centre)
{
    const int nx = r->plan.grid.nx, pairs = r->plan.st->pairs, layers = r->plan.wall_layers;
    const double lam_beta = r->plan.lambda * r->plan.params.wall_beta;
    int ends[2 * ROOM_STENCIL_MAX_REACH], count = 0;
    REAL old[2 * ROOM_STENCIL_MAX_REACH];
    for (int x = 0; x < nx; x++) {
        if (x == layers && nx - layers > x)
            x = nx - layers;          /* skip the middle of the row */
        ends[count] = x;
        old[count++] = pn[x];
    }
    double lb_row = lam_beta * (room_wall_weight(r, 1, y, r->plan.grid.ny) +
                                room_wall_weight(r, 2, z, r->plan.grid.nz));
    if (lb_row > 0)
        STN(row_lossy)(pn, c, nx, pairs, r->plan.st_off, l2w, centre, (REAL)(1 - lb_row),
                       (REAL)(1 / (1 + lb_row)));
    else
        STN(row)(pn, c, nx, pairs, r->plan.st_off, l2w, centre);
    for (int e = 0; e < count; e++) {
        double lb = lb_row + lam_beta * room_wall_weight(r, 0, ends[e], nx);
        pn[ends[e]] = STN(node_lossy)(c, ends[e], pairs, r->plan.st_off, l2w, centre, lb, old[e]);
    }
}

static void STN(sweep)(kt_room *r)
{
    const int nx = r->plan.grid.nx, ny = r->plan.grid.ny, nz = r->plan.grid.nz, pairs = r->plan.st->pairs;
    REAL l2w[ROOM_STENCIL_MAX_PAIRS];
    for (int q = 0; q < pairs; q++)
        l2w[q] = (REAL)r->plan.st_l2w[q];
    const REAL centre = (REAL)r->plan.st_centre;
    REAL *now = r->now, *prev = r->prev;
    STN(fill_ghosts)(r, now);
    int chunk = nz / (8 * r->nthreads);
    if (chunk < 1)
        chunk = 1;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(r->nthreads)
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++) {
            size_t base = room_pidx(r, 0, y, z);
            if (r->plan.params.wall_beta > 0)
                STN(row_walls)(r, prev + base, now + base, y, z, l2w, centre);
            else
                STN(row)(prev + base, now + base, nx, pairs, r->plan.st_off, l2w, centre);
        }
}
