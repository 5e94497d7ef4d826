/* room_sweep_impl.h - the fused bulk update (design note 2.2, 2.3; thesis
 * 5.1.2), written once and compiled for each precision by room_sweep.c,
 * which defines REAL (float or double) and SWEEP_NAME(x) before including it.
 *
 * Each row of x is one branch-free loop: its neighbour count K and its loss
 * pair are constants of the row (box-only K: 6 minus the walls the row lies
 * on), the two end nodes of the row take one wall more and their own pairs,
 * and a neighbour beyond a wall reads the halo, which holds theta (inward -
 * end) (walls, below): the leg the wall cuts is left out of K and the halo
 * adds what the cut cell's finite volume gives the inward leg.  Rows are
 * computed the same way whatever thread runs them, so any thread count gives
 * the same bits. */

/* The halo row y of plane z reads beyond the walls: theta (inward - end)
 * (room_plan.h, theta = 1/v - 1) beside both ends of the row, the ghost
 * row beside it when y is an end, and the ghost plane's row when z is, so
 * that the update at an end node adds lambda^2 theta (inward - end) to its
 * own: the inward leg weighs 1/v, the wall lies (v - 1/2) Q beyond the end
 * node (docs/room.md, "Walls").  Only row (y, z) reads these cells, so the
 * thread that sweeps it fills them just before, while the row is in cache,
 * and the step needs no parallel pass of its own for them; beside nodes xa
 * .. xb-1 only (a room with solids: the row's air).  Absorbing walls
 * overwrite the end nodes and keep a zero halo. */
static inline void SWEEP_NAME(fill_row)(const kt_room *r, REAL *f, int y, int z, int xa,
                                        int xb)
{
    const int nx = r->plan.grid.nx, ny = r->plan.grid.ny, nz = r->plan.grid.nz;
    const ptrdiff_t py = (ptrdiff_t)r->plan.px, pz = (ptrdiff_t)r->plan.plane;
    REAL *row = f + room_row_base(r, y, z);
    if (xa == 0 && xa < xb)
        row[-1] = (REAL)r->plan.walls.theta[0][0] * (row[1] - row[0]);
    if (xb == nx && xa < xb)
        row[nx] = (REAL)r->plan.walls.theta[0][1] * (row[nx - 2] - row[nx - 1]);
    if (y == 0 || y == ny - 1) {
        const REAL t = (REAL)r->plan.walls.theta[1][y == 0 ? 0 : 1];
        const ptrdiff_t out = y == 0 ? -py : py;
        for (int x = xa; x < xb; x++)
            row[x + out] = t * (row[x - out] - row[x]);
    }
    if (z == 0 || z == nz - 1) {
        const REAL t = (REAL)r->plan.walls.theta[2][z == 0 ? 0 : 1];
        const ptrdiff_t out = z == 0 ? -pz : pz;
        for (int x = xa; x < xb; x++)
            row[x + out] = t * (row[x - out] - row[x]);
    }
}

/* Two grids, no viscosity: Psi^{n+1} is written over Psi^{n-1} (pn) after
 * reading it, node by node. */
KT_VECTOR_CLONES static void SWEEP_NAME(row2)(REAL *restrict pn, const REAL *restrict c, ptrdiff_t py,
                             ptrdiff_t pz, int nx, int xa, int xb, int k_row, int surface_row,
                             const REAL coef[8], const REAL pair[6])
{
    const REAL l2 = coef[0], lm = pair[0], li = pair[1];
    const REAL a_row = coef[3 + 6 - k_row], a_end = coef[3 + 6 - k_row + 1];
    const REAL *restrict ym = c - py, *restrict yp = c + py;
    const REAL *restrict zm = c - pz, *restrict zp = c + pz;
    const int lo = xa > 1 ? xa : 1, hi = xb < nx - 1 ? xb : nx - 1;
    int x;
    if (surface_row) {
        for (x = lo; x < hi; x++)
            pn[x] = (a_row * c[x] + l2 * (c[x - 1] + c[x + 1] + ym[x] + yp[x] + zm[x] + zp[x]) -
                     lm * pn[x]) * li;
    } else {
        for (x = lo; x < hi; x++)
            pn[x] = a_row * c[x] + l2 * (c[x - 1] + c[x + 1] + ym[x] + yp[x] + zm[x] + zp[x]) -
                    pn[x];
    }
    for (int e = 0; e < 2; e++) {
        x = e ? nx - 1 : 0;
        if (x < xa || x >= xb)
            continue;
        pn[x] = (a_end * c[x] + l2 * (c[x - 1] + c[x + 1] + ym[x] + yp[x] + zm[x] + zp[x]) -
                 pair[2 + 2 * e] * pn[x]) * pair[3 + 2 * e];
    }
}

/* Three grids with viscosity:
 * Psi^{n+1} = [2 Psi^n + (lambda^2 + eta) L^n - eta L^{n-1} - (1 - lambda beta) Psi^{n-1}]
 *             / (1 + lambda beta). */
KT_VECTOR_CLONES static void SWEEP_NAME(row3)(REAL *restrict out, const REAL *restrict c,
                             const REAL *restrict p, ptrdiff_t py, ptrdiff_t pz, int nx,
                             int xa, int xb, int k_row, int surface_row, const REAL coef[8],
                             const REAL pair[6])
{
    const REAL lm = pair[0], li = pair[1], l2e = coef[3], eta = coef[4];
    const REAL k_in = (REAL)k_row, k_end = (REAL)(k_row - 1);
    const int lo = xa > 1 ? xa : 1, hi = xb < nx - 1 ? xb : nx - 1;
    int x;
#define SWEEP_LAP(f, x, kk)                                                            \
    ((f)[(x) - 1] + (f)[(x) + 1] + (f)[(x) - py] + (f)[(x) + py] + (f)[(x) - pz] +  \
     (f)[(x) + pz] - (kk) * (f)[x])
    if (surface_row) {
        for (x = lo; x < hi; x++)
            out[x] = (2 * c[x] + l2e * SWEEP_LAP(c, x, k_in) - eta * SWEEP_LAP(p, x, k_in) -
                      lm * p[x]) * li;
    } else {
        for (x = lo; x < hi; x++)
            out[x] = 2 * c[x] + l2e * SWEEP_LAP(c, x, k_in) - eta * SWEEP_LAP(p, x, k_in) - p[x];
    }
    for (int e = 0; e < 2; e++) {
        x = e ? nx - 1 : 0;
        if (x < xa || x >= xb)
            continue;
        out[x] = (2 * c[x] + l2e * SWEEP_LAP(c, x, k_end) - eta * SWEEP_LAP(p, x, k_end) -
                  pair[2 + 2 * e] * p[x]) * pair[3 + 2 * e];
    }
#undef SWEEP_LAP
}

/* Asks for the lines of the n nodes from `base` of a row that come from
 * memory (Psi^n one plane up; Psi^{n-1} there too with viscosity, else in
 * place; the output) one row before they are needed.  Always inlined: GCC takes a
 * prefetch-only function for pure and drops the call. */
static inline __attribute__((always_inline)) void SWEEP_NAME(prefetch_row)(const kt_room *r,
                                                                          REAL *const fld[3],
                                                                          size_t base, int n)
{
    const size_t bytes = (size_t)n * sizeof(REAL);
    const char *up = (const char *)(fld[0] + base + r->plan.plane);
    if (r->plan.grids == 2) {
        const char *pn = (const char *)(fld[1] + base);
        for (size_t o = 0; o < bytes; o += 64) {
            __builtin_prefetch(up + o, 0, 3);
            __builtin_prefetch(pn + o, 1, 3);
        }
        return;
    }
    const char *pu = (const char *)(fld[1] + base + r->plan.plane);
    const char *out = (const char *)(fld[2] + base);
    for (size_t o = 0; o < bytes; o += 64) {
        __builtin_prefetch(up + o, 0, 3);
        __builtin_prefetch(pu + o, 0, 3);
        __builtin_prefetch(out + o, 1, 3);
    }
}

/* Asks for the lines that come from memory (Psi^n one plane up, Psi^{n-1})
 * of the nodes t .. t+n-1 of row (y, z)'s air counted on into the next
 * row's air, a room with solids' rows read as one stream (room_sweep.c
 * SWEEP_AHEAD_BYTES says why). */
static inline __attribute__((always_inline)) void SWEEP_NAME(ask_air)(const kt_room *r,
                                                                     REAL *const fld[3], int y,
                                                                     int z, int t, int n)
{
    const int ny = r->plan.grid.ny;
    const int32_t *a = r->plan.shape.xspan + 2 * ((size_t)z * ny + y);
    const int step = 64 / (int)sizeof(REAL);
    for (int o = 0; o < n; o += step) {
        int x = t + o, row = y;
        if (x >= a[1]) {   /* on into the next row's air */
            if (y + 1 >= ny || a[3] <= a[2] || a[2] + (x - a[1]) >= a[3])
                return;
            x = a[2] + (x - a[1]);
            row = y + 1;
        }
        const size_t i = room_pidx(r, x, row, z);
        __builtin_prefetch(fld[0] + i + r->plan.plane, 0, 3);
        __builtin_prefetch(fld[1] + i, 1, 3);
    }
}

/* Row (y, z) of the output: its nodes span[2s] .. span[2s+1]-1, s < spans.
 * fld: Psi^n, Psi^{n-1} and the output (the room's now, prev and next; a
 * temporally blocked pass passes its levels' fields, room_block.c).  ahead
 * (a two-grid room with solids, its rows cut to their air): in chunks, each
 * asking first for the lines SWEEP_AHEAD_BYTES on (ask_air). */
static void SWEEP_NAME(row)(const kt_room *r, REAL *const fld[3], int z, int y, const int *span,
                            int spans, const REAL coef[8], int ahead)
{
    const int nx = r->plan.grid.nx, yw = room_wall_code(y, r->plan.grid.ny);
    const int zw = room_wall_code(z, r->plan.grid.nz);
    const ptrdiff_t py = (ptrdiff_t)r->plan.px, pz = (ptrdiff_t)r->plan.plane;
    REAL *now = fld[0], *prev = fld[1], *next = fld[2];
    const ptrdiff_t base = room_row_base(r, y, z);
    int k_row = 6 - (yw > 0) - (zw > 0), surface = yw + zw > 0;
    /* the loss pairs of the row's inside nodes and of its two ends */
    REAL pair[6];
    for (int e = 0; e < 3; e++) {
        double lm, li;
        room_wall_pair(&r->plan.walls, r->plan.lambda, e, yw, zw, &lm, &li);
        pair[2 * e] = (REAL)lm;
        pair[2 * e + 1] = (REAL)li;
    }
    for (int s = 0; s < spans; s++) {
        const int xa = span[2 * s], xb = span[2 * s + 1];
        if (ahead) {
            const int chunk = SWEEP_CHUNK_BYTES / (int)sizeof(REAL);
            const int lead = SWEEP_AHEAD_BYTES / (int)sizeof(REAL);
            for (int x = xa; x < xb; x += chunk) {
                SWEEP_NAME(ask_air)(r, fld, y, z, x + lead, chunk);
                SWEEP_NAME(row2)(prev + base, now + base, py, pz, nx, x,
                                 x + chunk < xb ? x + chunk : xb, k_row, surface, coef, pair);
            }
        } else if (r->plan.grids == 2)
            SWEEP_NAME(row2)(prev + base, now + base, py, pz, nx, xa, xb, k_row, surface, coef,
                             pair);
        else
            SWEEP_NAME(row3)(next + base, now + base, prev + base, py, pz, nx, xa, xb, k_row,
                             surface, coef, pair);
    }
}

/* Row (y, z) of a room with solids, its air xa .. xb-1.  With lossy
 * solids in segments: each saves Psi^{n-1} at the row's list entries
 * within SWEEP_SAVE_AHEAD nodes of its start and sweeps on to the next
 * entry, so that a save reads the lines the sweep reads next.  (Saved all
 * before the row's sweep, the entries at its far end waited on memory.) */
static void SWEEP_NAME(air_row)(kt_room *r, REAL *const fld[3], int z, int y, int xa, int xb,
                                const REAL coef[8])
{
    const room_shape *sh = &r->plan.shape;
    /* a whole row streams on into the next as the box's do */
    const int ahead = r->plan.grids == 2 && (xa > 0 || xb < r->plan.grid.nx);
    if (!sh->saved) {
        const int span[2] = {xa, xb};
        SWEEP_NAME(row)(r, fld, z, y, span, xa < xb, coef, ahead);
        return;
    }
    const int32_t *f = sh->row_first + (size_t)z * r->plan.grid.ny + y;
    const size_t base = room_pidx(r, 0, y, z);
    int q = f[0], x = xa;
    while (x < xb) {
        const int qa = q;
        while (q < f[1] && (ptrdiff_t)(sh->node[q] - base) < x + SWEEP_SAVE_AHEAD)
            q++;
        room_shape_save_entries(r, qa, q);
        const ptrdiff_t next = q < f[1] ? (ptrdiff_t)(sh->node[q] - base) : xb;
        const int span[2] = {x, next < xb ? (int)next : xb};
        SWEEP_NAME(row)(r, fld, z, y, span, 1, coef, ahead);
        x = span[1];
    }
}

/* Rows ya .. yb-1 of plane z, columns xr[0] .. xr[1]-1 (a rank of a room
 * split along x sweeps its own, its inside while the halo travels); prefetch:
 * each row asks for the next (see sweep); far: only the nodes outside the
 * instruments' near regions (room_overlap.c); with solids, only each row's
 * air (the solids' inside stays 0, docs/room.md "Rooms of any shape"). */
static void SWEEP_NAME(rows)(kt_room *r, REAL *const fld[3], int z, int ya, int yb,
                             const int xr[2], const REAL coef[8], int prefetch, int far)
{
    const int32_t *air = r->plan.shape.xspan;   /* solids: only the rows' air */
    const int shaped = !far && room_shape_in_sweep(r);
    int span[2 * ROOM_OVERLAP_MAX + 2] = {xr[0], xr[1]}, spans = 1;
    for (int y = ya; y < yb; y++) {
        if (prefetch && y + 1 < yb) {   /* with solids, only the next row's air */
            const int32_t *a = air ? air + 2 * ((size_t)z * r->plan.grid.ny + y + 1) : NULL;
            const int xa = a ? a[0] : xr[0], xb = a ? a[1] : xr[1];
            if (xa < xb)
                SWEEP_NAME(prefetch_row)(r, fld, room_pidx(r, xa, y + 1, z), xb - xa);
        }
        if (far)
            spans = room_far_spans(r, y, z, span);
        else if (air) {
            const int32_t *a = air + 2 * ((size_t)z * r->plan.grid.ny + y);
            span[0] = a[0];
            span[1] = a[1];
            spans = a[0] < a[1];
        }
        if (!r->abc) {   /* with solids, only where the row's air reads */
            const int xa = shaped ? span[0] : xr[0], xb = shaped ? span[1] : xr[1];
            SWEEP_NAME(fill_row)(r, fld[0], y, z, xa, xb);
            if (r->plan.grids == 3)
                SWEEP_NAME(fill_row)(r, fld[1], y, z, xa, xb);
        }
        if (shaped) {
            SWEEP_NAME(air_row)(r, fld, z, y, span[0], span[1], coef);
            room_shape_row_after(r, y, z);
        } else
            SWEEP_NAME(row)(r, fld, z, y, span, spans, coef, 0);
    }
}

/* The room's own fields, for the one-step sweeps. */
#define SWEEP_FIELDS(r) {(REAL *)(r)->now, (REAL *)(r)->prev, (REAL *)(r)->next}

/* The sweep's constants: lambda^2 and the centre weights (two grids), or
 * lambda^2 + eta and eta (three). */
static void SWEEP_NAME(coefs)(const kt_room *r, REAL coef[8])
{
    if (r->plan.grids == 2) {
        /* coef[3 + m] = 2 - (6 - m) lambda^2 for m walls missing (K = 6 - m). */
        coef[0] = (REAL)r->plan.l2;
        for (int m = 0; m <= 3; m++)
            coef[3 + m] = (REAL)(2.0 - (6 - m) * r->plan.l2);
    } else {
        coef[3] = (REAL)(r->plan.l2 + r->plan.eta);
        coef[4] = (REAL)r->plan.eta;
    }
}

/* Planes z0 .. z1-1 of the region lo .. hi-1 (x and y; a whole room's or
 * rank's own unless a slab sweeps part of it), all nodes or (far) those
 * outside the near regions, in the room's plan.  With bands, a chunk is
 * swept in bands of rows, each band down all the chunk's planes, so that
 * the planes in use (z-1, z, z+1 of Psi^n and the output; with viscosity
 * two stencils) stay in the L2 cache.  Rows are independent: the bits do
 * not change. */
static void SWEEP_NAME(chunk)(kt_room *r, const int lo[3], const int hi[3], int z0, int z1,
                              const REAL coef[8], int far)
{
    const int xr[2] = {lo[0], hi[0]}, ya = lo[1], yb = hi[1];
    const int prefetch = !r->abc && (r->sweep_plan & ROOM_PLAN_PREFETCH);
    REAL *const fld[3] = SWEEP_FIELDS(r);
    if (r->abc || !(r->sweep_plan & ROOM_PLAN_BANDS)) {
        for (int z = z0; z < z1; z++) {
            SWEEP_NAME(rows)(r, fld, z, ya, yb, xr, coef, prefetch, far);
            if (r->abc)          /* absorbing walls x = 0, nx-1 while the plane is in cache */
                room_abc_plane(r, z);
        }
        return;
    }
    const size_t slices = r->plan.grids == 3 ? 7 : 4;
    int band = (int)((512 * 1024) / (slices * sizeof(REAL) * (size_t)(xr[1] - xr[0])));
    band = band < 4 ? 4 : band;
    for (int y0 = ya; y0 < yb; y0 += band)
        for (int z = z0; z < z1; z++)
            SWEEP_NAME(rows)(r, fld, z, y0, y0 + band < yb ? y0 + band : yb, xr, coef,
                             prefetch, far);
}

/* The region lo .. hi-1 (global indices; a rank of a split room sweeps its
 * own, in parts), in the room's plan (ROOM_PLAN_*; absorbing walls take
 * whole planes). */
static void SWEEP_NAME(sweep)(kt_room *r, const int lo[3], const int hi[3])
{
    const int za = lo[2], zb = hi[2];
    REAL coef[8];
    SWEEP_NAME(coefs)(r, coef);
    /* Chunks of consecutive planes handed out dynamically: each thread still
     * reuses its planes z-1, z, z+1 from cache within a chunk, and a thread
     * that the OS deschedules (other work on the machine) does not hold up the
     * step by a whole slab.  Which thread does a plane does not change its bits. */
    int chunk = (zb - za) / (8 * r->nthreads);
    if (chunk < 1)
        chunk = 1;
    if (!r->abc && (r->sweep_plan & ROOM_PLAN_BANDS)) {
        int chunks = (zb - za + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1) num_threads(r->nthreads)
        for (int c = 0; c < chunks; c++) {
            int z0 = za + c * chunk, z1 = z0 + chunk < zb ? z0 + chunk : zb;
            SWEEP_NAME(chunk)(r, lo, hi, z0, z1, coef, 0);
        }
        return;
    }
#pragma omp parallel for schedule(dynamic, chunk) num_threads(r->nthreads)
    for (int z = za; z < zb; z++)
        SWEEP_NAME(chunk)(r, lo, hi, z, z + 1, coef, 0);
}

/* The parts of the split step (room_overlap.c), on the calling thread:
 * planes z0 .. z1-1 outside the near regions; instrument k's box between
 * planes z0 and z1-1. */
static void SWEEP_NAME(far)(kt_room *r, int z0, int z1)
{
    REAL coef[8];
    const int lo[3] = {0, 0, z0}, hi[3] = {r->plan.grid.nx, r->plan.grid.ny, z1};
    SWEEP_NAME(coefs)(r, coef);
    SWEEP_NAME(chunk)(r, lo, hi, z0, z1, coef, 1);
}

static void SWEEP_NAME(box)(kt_room *r, int k, int z0, int z1)
{
    const kt_instrument *ins = r->plan.ins[k].ins;
    const int span[2] = {ins->box_lo[0], ins->box_hi[0] + 1};
    REAL coef[8];
    REAL *const fld[3] = SWEEP_FIELDS(r);
    SWEEP_NAME(coefs)(r, coef);
    for (int z = z0; z < z1; z++)
        for (int y = ins->box_lo[1]; y <= ins->box_hi[1]; y++)
            SWEEP_NAME(row)(r, fld, z, y, span, 1, coef, 0);
}

/* A temporally blocked pass (room_block.c; docs/room.md, "Temporal
 * blocking"): bp->depth steps in one pass through memory.  Level l (1 ..
 * depth) is step n+l: it reads Psi^{n+l-1} and overwrites Psi^{n+l-2} in
 * place, so the two fields alternate.  Along z a wavefront: at position k,
 * level l updates plane k - (l - 1), levels in order, so each level trails
 * the one below by one plane, which is all its three planes need.  Along y
 * tiles of bp->tile rows, each level's rows one row lower than the level
 * below's (skewed), so that a tile needs only its own rows and the tile
 * below, done up to the same position; a thread takes every nthreads-th
 * tile and waits, position by position, for the tile below.  Each row is
 * the one-step sweep's row function on the level's fields: the same
 * operations on the same values, so the same bits.  Level l sweeps planes
 * bp->z[0] + l shrink[0] .. bp->z[1] - l shrink[1] - 1: the whole room, or
 * a trapezoid beside the instruments' band, narrowing away from it by a
 * plane a level, so that every plane it needs of the level below is in. */
static void SWEEP_NAME(block)(kt_room *r, room_block_pass *bp)
{
    const int ny = r->plan.grid.ny, depth = bp->depth, w = bp->tile;
    const int xr[2] = {0, r->plan.grid.nx};   /* a whole room: ranks do not block */
    const int tiles = (ny + w - 1) / w, positions = bp->z[1] - bp->z[0] + depth - 1;
    const int prefetch = (r->sweep_plan & ROOM_PLAN_PREFETCH) != 0;
    const int nt = r->nthreads < tiles ? r->nthreads : tiles;
    REAL *const f[2] = {(REAL *)bp->field[0], (REAL *)bp->field[1]};
    REAL coef[8];
    SWEEP_NAME(coefs)(r, coef);
    for (int t = 0; t < tiles; t++)
        bp->done[t] = -1;
#pragma omp parallel num_threads(nt)
    {
        const int id = omp_get_thread_num(), team = omp_get_num_threads();
        for (int t = id; t < tiles; t += team)
            for (int k = 0; k < positions; k++) {
                if (t > 0)
                    room_block_wait(&bp->done[t - 1], k);
                for (int l = 1; l <= depth; l++) {
                    const int z = bp->z[0] + k - (l - 1);
                    if (z < bp->z[0] + l * bp->shrink[0] || z >= bp->z[1] - l * bp->shrink[1])
                        continue;
                    int ya = t * w - (l - 1), yb = (t + 1) * w - (l - 1);
                    ya = t == 0 || ya < 0 ? 0 : ya;
                    yb = t == tiles - 1 || yb > ny ? ny : yb < 0 ? 0 : yb;
                    if (ya >= yb)
                        continue;
                    REAL *const fld[3] = {f[(l - 1) & 1], f[l & 1], f[l & 1]};
                    SWEEP_NAME(rows)(r, fld, z, ya, yb, xr, coef, prefetch, 0);
                    if (bp->hooks)
                        room_block_level_done(r, bp, l, z, ya, yb);
                }
                room_block_post(&bp->done[t], k);
            }
    }
}
#undef SWEEP_FIELDS
