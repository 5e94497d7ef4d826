/* room_fcc_impl.h - the FCC scheme's mirror ghosts and sweep, written once
 * and compiled for each precision by room_fcc.c, which defines REAL and
 * FCC(x) before including it.  Layout, neighbour offsets and ghost rule:
 * room_fcc.c and docs/room.md ("FCC 13-point").
 *
 * Each row is one branch-free loop over its nodes: the 12 neighbours sit at
 * row-constant offsets (the parity of the row picks s = -1 or +1).  Lossy
 * walls: a row on a y or z wall takes its loss pair as a row constant; the
 * row's x-wall end nodes are computed again afterwards with their own pair
 * from the Psi^{n-1} values saved before the loop.  Rows are computed the
 * same way whatever thread runs them, so any thread count gives the same bits. */

/* Ghost slots of every row of plane z, then its two ghost rows. */
static void FCC(ghost_plane)(const kt_room *r, REAL *f, int z)
{
    const int nx = r->plan.grid.nx, ny = r->plan.grid.ny;
    const size_t sx = r->plan.px;
    for (int y = 0; y < ny; y++) {
        int p = (y + z) & 1, cnt = (nx - p + 1) / 2;
        REAL *row = f + room_fcc_index(r, p, y, z);
        row[-1] = row[1 - p];
        row[cnt] = row[nx - 1 - cnt - p];
    }
    REAL *first = f + room_fcc_index(r, 0, 0, z) - 1;   /* slot -1 of row y = 0 */
    memcpy(first - sx, first + sx, sx * sizeof(REAL));
    memcpy(first + (size_t)ny * sx, first + (size_t)(ny - 2) * sx, sx * sizeof(REAL));
}

static void FCC(fill_ghosts)(const kt_room *r, REAL *f)
{
    const int nz = r->plan.grid.nz;
#pragma omp parallel for schedule(static) num_threads(r->nthreads)
    for (int z = 0; z < nz; z++)
        FCC(ghost_plane)(r, f, z);
    REAL *plane0 = f + r->plan.plane;                       /* plane z = 0 */
    memcpy(plane0 - r->plan.plane, plane0 + r->plan.plane, r->plan.plane * sizeof(REAL));
    memcpy(plane0 + (size_t)nz * r->plan.plane, plane0 + (size_t)(nz - 2) * r->plan.plane,
           r->plan.plane * sizeof(REAL));
}

/* The 12 neighbours of slot m, added in a fixed order. */
static inline REAL FCC(sum12)(const REAL *c, ptrdiff_t m, ptrdiff_t R, ptrdiff_t P, ptrdiff_t s)
{
    return ((c[m + R] + c[m + R + s]) + (c[m - R] + c[m - R + s])) +
           ((c[m + P] + c[m + P + s]) + (c[m - P] + c[m - P + s])) +
           ((c[m + R + P] + c[m + R - P]) + (c[m - R + P] + c[m - R - P]));
}

/* The rows' loops read the 12 neighbours through row pointers (the same
 * sums in the same order as sum12), which GCC vectorises. */
#define FCC_ROW_POINTERS                                                                   \
    const REAL *restrict a0 = c + R, *restrict a1 = c + R + s, *restrict a2 = c - R,       \
                         *restrict a3 = c - R + s, *restrict b0 = c + P,                   \
                         *restrict b1 = c + P + s, *restrict b2 = c - P,                   \
                         *restrict b3 = c - P + s, *restrict d0 = c + R + P,               \
                         *restrict d1 = c + R - P, *restrict d2 = c - R + P,               \
                         *restrict d3 = c - R - P
#define FCC_ROW_SUM(m)                                                                     \
    (((a0[m] + a1[m]) + (a2[m] + a3[m])) + ((b0[m] + b1[m]) + (b2[m] + b3[m])) +           \
     ((d0[m] + d1[m]) + (d2[m] + d3[m])))

/* Rigid row. */
KT_VECTOR_CLONES static void FCC(row_rigid)(REAL *restrict pn, const REAL *restrict c, int cnt,
                                            ptrdiff_t R, ptrdiff_t P, ptrdiff_t s, REAL l2w,
                                            REAL centre)
{
    FCC_ROW_POINTERS;
    for (int m = 0; m < cnt; m++)
        pn[m] = centre * c[m] + l2w * FCC_ROW_SUM(m) - pn[m];
}

/* Row with a constant loss pair lm = 1 - lambda beta_i, li = 1 / (1 + lambda beta_i). */
KT_VECTOR_CLONES static void FCC(row_lossy)(REAL *restrict pn, const REAL *restrict c, int cnt,
                                            ptrdiff_t R, ptrdiff_t P, ptrdiff_t s, REAL l2w,
                                            REAL centre, REAL lm, REAL li)
{
    FCC_ROW_POINTERS;
    for (int m = 0; m < cnt; m++)
        pn[m] = (centre * c[m] + l2w * FCC_ROW_SUM(m) - lm * pn[m]) * li;
}
#undef FCC_ROW_POINTERS
#undef FCC_ROW_SUM

/* Row (y, z): the bulk of it, then its x-wall end nodes with their own loss. */
static void FCC(sweep_row)(kt_room *r, REAL *prev, const REAL *now, int y, int z, REAL l2w,
                           REAL centre)
{
    const int nx = r->plan.grid.nx, p = (y + z) & 1, cnt = (nx - p + 1) / 2;
    const ptrdiff_t R = (ptrdiff_t)r->plan.px, P = (ptrdiff_t)r->plan.plane, s = 2 * p - 1;
    const size_t base = room_fcc_index(r, p, y, z);
    REAL *pn = prev + base;
    const REAL *c = now + base;
    const double beta = r->plan.params.wall_beta, lam = r->plan.lambda;
    if (!(beta > 0)) {
        FCC(row_rigid)(pn, c, cnt, R, P, s, l2w, centre);
        return;
    }
    /* The end nodes on the x walls: slot 0 when x = 0 is in the row, slot
     * cnt - 1 when x = nx - 1 is. */
    const int ends[2] = {p == 0 ? 0 : -1, ((nx - 1 - p) & 1) == 0 ? cnt - 1 : -1};
    const REAL old[2] = {ends[0] >= 0 ? pn[ends[0]] : 0, ends[1] >= 0 ? pn[ends[1]] : 0};
    double lb_row = lam * beta * (room_wall_weight(r, 1, y, r->plan.grid.ny) +
                                  room_wall_weight(r, 2, z, r->plan.grid.nz));
    if (lb_row > 0)
        FCC(row_lossy)(pn, c, cnt, R, P, s, l2w, centre, (REAL)(1 - lb_row),
                       (REAL)(1 / (1 + lb_row)));
    else
        FCC(row_rigid)(pn, c, cnt, R, P, s, l2w, centre);
    for (int e = 0; e < 2; e++) {
        if (ends[e] < 0)
            continue;
        int m = ends[e], x = 2 * m + p;
        double lb = lb_row + lam * beta * room_wall_weight(r, 0, x, nx);
        REAL lm = (REAL)(1 - lb), li = (REAL)(1 / (1 + lb));
        pn[m] = (centre * c[m] + l2w * FCC(sum12)(c, m, R, P, s) - lm * old[e]) * li;
    }
}

/* The end nodes the mirror ghosts do not get right (walls that do not run
 * through them, wall_v != 1/2: the last cell cut part-way; room_fcc.c lists
 * them): each adds sum_legs c_q (Psi_j - Psi_i), the legs in room_fcc_legs'
 * order, c_q what its weight lacks times lambda^2 and its loss factor. */
static void FCC(cut_walls)(const kt_room *r, REAL *next, const REAL *now)
{
    const int count = r->plan.fcc_cut.count;
    int nt = count >= 4096 ? r->nthreads : 1;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int k = 0; k < count; k++) {
        const int *at = r->plan.fcc_cut.node[k];
        const size_t i = room_fcc_index(r, at[0], at[1], at[2]);
        double corr = 0;
        for (int q = 0; q < 12; q++) {
            const double c = r->plan.fcc_cut.coef[k][q];
            if (c != 0)
                corr += c * ((double)now[room_fcc_index(r, at[0] + room_fcc_legs[q][0],
                                                        at[1] + room_fcc_legs[q][1],
                                                        at[2] + room_fcc_legs[q][2])] -
                             (double)now[i]);
        }
        next[i] = next[i] + (REAL)corr;
    }
}

static void FCC(sweep)(kt_room *r)
{
    const int ny = r->plan.grid.ny, nz = r->plan.grid.nz;
    const REAL l2w = (REAL)r->plan.st_l2w[0], centre = (REAL)r->plan.st_centre;
    REAL *now = r->now, *prev = r->prev;
    FCC(fill_ghosts)(r, now);
    int chunk = nz / (8 * r->nthreads);
    if (chunk < 1)
        chunk = 1;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(r->nthreads)
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            FCC(sweep_row)(r, prev, now, y, z, l2w, centre);
    FCC(cut_walls)(r, prev, now);
}

/* Kinetic sum V_i (Psi^{n+1} - Psi^n)^2 and potential sum W dPsi^{n+1} dPsi^n
 * over the legs of plane z, each leg once from its end with the lower x (or,
 * at equal x, lower y): the six forward legs (1, +-1, 0), (1, 0, +-1) at slot
 * offsets +-R + p, +-P + p and (0, 1, +-1) at R +- P.  V_i is the product of
 * the node's shares of a cell along the three axes, W a quarter of the
 * share along the axis the leg keeps (room_fcc.c). */
static void FCC(plane_energy)(const kt_room *r, int z, double *kin, double *pot)
{
    const int nx = r->plan.grid.nx, ny = r->plan.grid.ny, nz = r->plan.grid.nz;
    const REAL *a = r->now, *b = r->prev;
    const ptrdiff_t R = (ptrdiff_t)r->plan.px, P = (ptrdiff_t)r->plan.plane;
    static const int fwd[6][3] = {{1, 1, 0}, {1, -1, 0}, {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1}};
    double k_sum = 0, p_sum = 0;
    for (int y = 0; y < ny; y++) {
        const int p = (y + z) & 1, wall_yz = y == 0 || y == ny - 1 || z == 0 || z == nz - 1;
        const ptrdiff_t off[6] = {R + p, -R + p, P + p, -P + p, R + P, R - P};
        const int ok_y[2] = {y + 1 < ny, y > 0}, ok_z[2] = {z + 1 < nz, z > 0};
        size_t i = room_fcc_index(r, p, y, z);
        for (int x = p; x < nx; x += 2, i++) {
            const int at[3] = {x, y, z}, wall = wall_yz || x == 0 || x == nx - 1;
            const double ai = a[i], bi = b[i], g = ai - bi;
            k_sum += (wall ? room_fcc_volume(&r->plan.grid, &r->plan.walls, at, 0) : 1) * g * g;
            /* which forward legs stay in the box, and their weights V_i w_ij */
            const int in[6] = {x + 1 < nx && ok_y[0], x + 1 < nx && ok_y[1],
                               x + 1 < nx && ok_z[0], x + 1 < nx && ok_z[1],
                               ok_y[0] && ok_z[0], ok_y[0] && ok_z[1]};
            for (int q = 0; q < 6; q++) {
                if (!in[q])
                    continue;
                double w = 0.25;
                if (wall) {
                    const int j[3] = {x + fwd[q][0], y + fwd[q][1], z + fwd[q][2]};
                    w = room_fcc_volume(&r->plan.grid, &r->plan.walls, at, 0) *
                        room_fcc_weight(&r->plan.grid, &r->plan.walls, at, j, 0);
                }
                double da = a[i + off[q]] - ai, db = b[i + off[q]] - bi;
                p_sum += w * da * db;
            }
        }
    }
    *kin = k_sum;
    *pot = p_sum;
}
