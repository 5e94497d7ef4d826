/* room_abc_impl.h - the absorbing walls' updates (docs/room.md, "Absorbing
 * walls"), written once and compiled for each precision by room_abc.c, which
 * defines REAL (float or double) and ABC_NAME(x) and the types abc_face and
 * abc_line before including it.
 *
 * Each update reads Psi^n (now) and interior nodes of Psi^{n+1} (next), and
 * writes boundary nodes of Psi^{n+1} that no other update reads, so the order
 * of nodes, faces and threads does not change any bit. */

/* Rows sl_lo .. sl_hi-1 (slow index) of the interior of one face: Mur's
 * first-order update b^{n+1} = i^n + r (i^{n+1} - b^n) of every node (b the
 * face node, i its inward neighbour), and per row the two sums of the energy
 * the face exchanges with the interior (room_abc.c): (b^n - i^n)(i^{n+1} - i^n)
 * into flux[2 sl] and (b^{n+1} - i^{n+1})(i^{n+1} - i^n) into flux[2 sl + 1]. */
static void ABC_NAME(face_rows)(REAL *restrict next, const REAL *restrict now,
                                const abc_face *fc, double r_mur, int sl_lo, int sl_hi,
                                double *restrict flux)
{
    const REAL r = (REAL)r_mur;
    const ptrdiff_t fast = fc->fast, slow = fc->slow, in = fc->inward;
    const int nf = fc->n_fast, ns = fc->n_slow;
    for (int sl = sl_lo < 1 ? 1 : sl_lo; sl < sl_hi && sl < ns - 1; sl++) {
        double now_part = 0, next_part = 0;
        for (int f = 1; f < nf - 1; f++) {
            size_t p = fc->origin + (size_t)sl * (size_t)slow + (size_t)f * (size_t)fast;
            size_t q = (size_t)((ptrdiff_t)p + in);
            const REAL b = now[p], i = now[q], i1 = next[q];
            const REAL b1 = i + r * (i1 - b);
            next[p] = b1;
            const double di = (double)i1 - (double)i;
            now_part += ((double)b - (double)i) * di;
            next_part += ((double)b1 - (double)i1) * di;
        }
        flux[2 * sl] = now_part;
        flux[2 * sl + 1] = next_part;
    }
}

/* The whole interior of one face, its rows shared among threads. */
static void ABC_NAME(face)(REAL *restrict next, const REAL *restrict now, const abc_face *fc,
                           double r, double *flux, int nthreads)
{
    int ns = fc->n_slow;
    int nt = (size_t)fc->n_fast * (size_t)ns >= 65536 ? nthreads : 1;   /* small: no team */
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int sl = 1; sl < ns - 1; sl++)
        ABC_NAME(face_rows)(next, now, fc, r, sl, sl + 1, flux);
}

/* The faces x = 0 and x = nx-1 within plane z, called by the bulk sweep
 * right after it has swept that plane (room_sweep_impl.h): those faces cut
 * across the rows, a cache line per node, and the lines are at hand then. */
static void ABC_NAME(plane)(kt_room *room, int z)
{
    room_abc *a = room->abc;
    for (int F = 0; F < 2; F++)
        ABC_NAME(face_rows)(room->next, room->now, &a->face[F], a->r, z, z + 1,
                            a->flux + a->flux_base[F]);
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

/* The rest of the wall stage after the sweep: the faces y = 0, ny-1, z = 0,
 * nz-1 (the faces x = 0, nx-1 were done plane by plane within the sweep),
 * twelve edges and eight corners. */
static void ABC_NAME(apply)(kt_room *room)
{
    room_abc *a = room->abc;
    REAL *next = room->next;
    const REAL *now = room->now;
    for (int f = 2; f < 6; f++)
        ABC_NAME(face)(next, now, &a->face[f], a->r, a->flux + a->flux_base[f], room->nthreads);
    for (int l = 0; l < a->lines; l++)
        ABC_NAME(line)(next, now, &a->line[l]);
}

/* sum over the faces of (b^n - i^n)(i^n - i^{n-1}) from now (Psi^n) and prev
 * (Psi^{n-1}): the part of the next step's exchange that is already known. */
static double ABC_NAME(known_part)(const kt_room *room)
{
    const room_abc *a = room->abc;
    const REAL *now = room->now, *prev = room->prev;
    double sum = 0;
    for (int F = 0; F < 6; F++) {
        const abc_face *fc = &a->face[F];
        for (int sl = 1; sl < fc->n_slow - 1; sl++)
            for (int f = 1; f < fc->n_fast - 1; f++) {
                size_t p = fc->origin + (size_t)sl * (size_t)fc->slow + (size_t)f * (size_t)fc->fast;
                size_t q = (size_t)((ptrdiff_t)p + fc->inward);
                sum += ((double)now[p] - (double)now[q]) * ((double)now[q] - (double)prev[q]);
            }
    }
    return sum;
}
