/* room_stencil_impl.h - the generic stencil sweep and the mirror ghosts of
 * the wider schemes, written once and compiled for each precision by
 * room_stencil.c, which defines REAL and STN(x) before including it.
 *
 * Rigid walls: the `halo` ghost layers of Psi^n are filled with the mirror
 * image of the room about planes half a cell beyond the end nodes (node -j
 * takes node j - 1), one axis after the other so that edges and corners get
 * the image through both walls.  The even extension makes the operator
 * symmetric whatever the signs of its weights, with the modes of the box
 * exactly the free-space ones at kappa = pi m / ((N + 1) Q); for the 7-point
 * stencil it is the same as folding the legs back.  Then every node takes
 * the same branch-free update, row by row:
 *   Psi^{n+1} = centre Psi^n + sum_p lambda^2 w_p (Psi^n_{+d_p} + Psi^n_{-d_p}) - Psi^{n-1},
 * written over Psi^{n-1}; the pairs are added in a fixed order, pass by pass
 * over the row (offset outside, nodes inside: the seed paper's KernelB
 * arrangement, which vectorises), so any thread count gives the same bits. */

static void STN(fill_ghosts)(const kt_room *r, REAL *f)
{
    const int nx = r->grid.nx, ny = r->grid.ny, nz = r->grid.nz, h = r->halo;
    const size_t px = r->px, plane = r->plane, row_bytes = px * sizeof(REAL);
#pragma omp parallel for schedule(static) num_threads(r->nthreads)
    for (int z = 0; z < nz; z++) {
        for (int y = 0; y < ny; y++) {
            REAL *row = f + room_pidx(r, 0, y, z);
            for (int j = 1; j <= h; j++) {
                row[-j] = row[j - 1];
                row[nx - 1 + j] = row[nx - j];
            }
        }
        REAL *line0 = f + room_pidx(r, 0, 0, z) - h;
        for (int j = 1; j <= h; j++) {
            memcpy(line0 - (size_t)j * px, line0 + (size_t)(j - 1) * px, row_bytes);
            memcpy(line0 + (size_t)(ny - 1 + j) * px, line0 + (size_t)(ny - j) * px, row_bytes);
        }
    }
    REAL *plane0 = f + (size_t)h * plane;
    for (int j = 1; j <= h; j++) {
        memcpy(plane0 - (size_t)j * plane, plane0 + (size_t)(j - 1) * plane, plane * sizeof(REAL));
        memcpy(plane0 + (size_t)(nz - 1 + j) * plane, plane0 + (size_t)(nz - j) * plane,
               plane * sizeof(REAL));
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

static void STN(sweep)(kt_room *r)
{
    const int nx = r->grid.nx, ny = r->grid.ny, nz = r->grid.nz, pairs = r->st->pairs;
    REAL l2w[ROOM_STENCIL_MAX_PAIRS];
    for (int q = 0; q < pairs; q++)
        l2w[q] = (REAL)r->st_l2w[q];
    const REAL centre = (REAL)r->st_centre;
    REAL *now = r->now, *prev = r->prev;
    STN(fill_ghosts)(r, now);
    int chunk = nz / (8 * r->nthreads);
    if (chunk < 1)
        chunk = 1;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(r->nthreads)
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++) {
            size_t base = room_pidx(r, 0, y, z);
            STN(row)(prev + base, now + base, nx, pairs, r->st_off, l2w, centre);
        }
}
