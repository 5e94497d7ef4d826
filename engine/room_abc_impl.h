/* room_abc_impl.h - the Engquist-Majda boundary updates (docs/room.md,
 * "Absorbing walls"), written once and compiled for each precision by
 * room_abc.c, which defines REAL (float or double) and ABC_NAME(x) and the
 * types abc_face, abc_line and abc_coef before including it.
 *
 * Each update reads Psi^n (now), interior nodes of Psi^{n+1} (next) and the
 * face state, and writes boundary nodes of Psi^{n+1} that no other update
 * reads, so the order of nodes, faces and threads does not change any bit. */

/* Rows sl_lo .. sl_hi-1 (slow index) of the interior of one face: Mur's
 * second-order update of every node, then its two state entries take b^n
 * and i^n for the next step. */
static void ABC_NAME(face_rows)(REAL *restrict next, const REAL *restrict now,
                                REAL *restrict state, const abc_face *fc, const abc_coef *k,
                                int sl_lo, int sl_hi)
{
    const REAL r = (REAL)k->r, s = (REAL)k->s, t = (REAL)k->t;
    const ptrdiff_t fast = fc->fast, slow = fc->slow, in = fc->inward;
    const int nf = fc->n_fast, ns = fc->n_slow;
    REAL *restrict b_old = state, *restrict i_old = state + (size_t)nf * (size_t)ns;
    for (int sl = sl_lo < 1 ? 1 : sl_lo; sl < sl_hi && sl < ns - 1; sl++) {
        for (int f = 1; f < nf - 1; f++) {
            size_t p = fc->origin + (size_t)sl * (size_t)slow + (size_t)f * (size_t)fast;
            size_t q = (size_t)((ptrdiff_t)p + in), e = (size_t)sl * (size_t)nf + (size_t)f;
            REAL b = now[p], i = now[q];
            REAL lap_b = now[p - fast] + now[p + fast] + now[p - slow] + now[p + slow] - 4 * b;
            REAL lap_i = now[q - fast] + now[q + fast] + now[q - slow] + now[q + slow] - 4 * i;
            next[p] = r * (next[q] + b_old[e]) - i_old[e] + s * (b + i) + t * (lap_b + lap_i);
            b_old[e] = b;
            i_old[e] = i;
        }
    }
}

/* The whole interior of one face, its rows shared among threads. */
static void ABC_NAME(face)(REAL *restrict next, const REAL *restrict now, REAL *restrict state,
                           const abc_face *fc, const abc_coef *k, int nthreads)
{
    int ns = fc->n_slow;
    int nt = (size_t)fc->n_fast * (size_t)ns >= 65536 ? nthreads : 1;   /* small: no team */
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int sl = 1; sl < ns - 1; sl++)
        ABC_NAME(face_rows)(next, now, state, fc, k, sl, sl + 1);
}

/* The faces x = 0 and x = nx-1 within plane z, called by the bulk sweep
 * right after it has swept that plane (room_sweep_impl.h): those faces cut
 * across the rows, a cache line per node, and the lines are at hand then. */
static void ABC_NAME(plane)(kt_room *room, int z)
{
    room_abc *a = room->abc;
    for (int F = 0; F < 2; F++)
        ABC_NAME(face_rows)(room->next, room->now, (REAL *)a->state + a->base[F], &a->face[F],
                            &a->coef, z, z + 1);
}

/* Mur's first-order update along a diagonal, for the nodes of an edge (less
 * its corners) or a single corner: b^{n+1} = d^n + r_d (d^{n+1} - b^n). */
static void ABC_NAME(line)(REAL *restrict next, const REAL *restrict now, const abc_line *ln)
{
    const REAL rd = (REAL)ln->r;
    for (int j = 0; j < ln->count; j++) {
        size_t p = ln->origin + (size_t)j * (size_t)ln->along;
        size_t d = (size_t)((ptrdiff_t)p + ln->diag);
        next[p] = now[d] + rd * (next[d] - now[p]);
    }
}

/* The rest of the ABC stage after the sweep: the faces y = 0, ny-1, z = 0,
 * nz-1 (the faces x = 0, nx-1 were done plane by plane within the sweep),
 * twelve edges and eight corners. */
static void ABC_NAME(apply)(kt_room *room)
{
    room_abc *a = room->abc;
    REAL *next = room->next, *state = a->state;
    const REAL *now = room->now;
    for (int f = 2; f < 6; f++)
        ABC_NAME(face)(next, now, state + a->base[f], &a->face[f], &a->coef, room->nthreads);
    for (int l = 0; l < a->lines; l++)
        ABC_NAME(line)(next, now, &a->line[l]);
}

/* state <- the face and inward layers of prev (Psi^{n-1}). */
static void ABC_NAME(sync)(kt_room *room)
{
    room_abc *a = room->abc;
    const REAL *prev = room->prev;
    for (int F = 0; F < 6; F++) {
        const abc_face *fc = &a->face[F];
        REAL *b_old = (REAL *)a->state + a->base[F];
        REAL *i_old = b_old + (size_t)fc->n_fast * (size_t)fc->n_slow;
        for (int sl = 1; sl < fc->n_slow - 1; sl++)
            for (int f = 1; f < fc->n_fast - 1; f++) {
                size_t p = fc->origin + (size_t)sl * (size_t)fc->slow + (size_t)f * (size_t)fc->fast;
                size_t e = (size_t)sl * (size_t)fc->n_fast + (size_t)f;
                b_old[e] = prev[p];
                i_old[e] = prev[(size_t)((ptrdiff_t)p + fc->inward)];
            }
    }
}
