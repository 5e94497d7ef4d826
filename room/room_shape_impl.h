/* room_shape_impl.h - the solids' stage B of room/room_shape.c for one field
 * type: included twice by room_shape.c, with REAL float or double and
 * SHAPE_NAME(x) giving the names (as room_sweep_impl.h).  The GPU's
 * room/gpu/room_shape.cu does the same operations in the same order. */

/* Before the sweep of a two-grid room overwrites it: Psi^{n-1} at the
 * lossy nodes of list entries ra .. rb-1. */
static void SHAPE_NAME(save)(kt_room *room, int ra, int rb)
{
    const room_shape *sh = &room->plan.shape;
    const REAL *prev = room->prev;
    for (int r = ra; r < rb; r++)
        if (sh->loss[r] > 0)
            sh->saved[r] = prev[sh->node[r]];
}

/* Stage B at list entries ra .. rb-1 (room_shape_correct says what it
 * computes).  next and prev are one buffer with two grids: no restrict. */
static void SHAPE_NAME(correct)(kt_room *room, int ra, int rb)
{
    const room_plan *pl = &room->plan;
    const room_shape *sh = &pl->shape;
    ptrdiff_t off[6];
    room_leg_offsets(room, off);
    REAL *next = room->next;
    const REAL *now = room->now, *prev = room->prev;
    const double l2 = pl->l2, eta = pl->eta;
    const int three = pl->grids == 3;
    for (int r = ra; r < rb; r++) {
        const size_t i = sh->node[r];
        const unsigned code = sh->wall[r], b = sh->blocked[r];
        if (code == ROOM_SHAPE_SOLID) {
            next[i] = 0;
            continue;
        }
        const double *c = sh->coef[code];
        const double ci = now[i], pi = three ? (double)prev[i] : 0;
        double c_now = 0, c_prev = 0;
        for (unsigned m = b; m; m &= m - 1) {   /* the blocked legs, d ascending */
            const int d = __builtin_ctz(m);
            c_now += c[d / 2] * (ci - (double)now[i + off[d]]);
            if (three)
                c_prev += c[d / 2] * (pi - (double)prev[i + off[d]]);
        }
        double B = l2 * c_now;
        if (three)
            B += eta * c_now - eta * c_prev;
        const double lb = c[3], ls = sh->loss[r];
        if (ls == 0) {
            next[i] += (REAL)(B / (1 + lb));
            continue;
        }
        const double P = three ? pi : sh->saved[r];
        next[i] = (REAL)(((double)next[i] * (1 + lb) + B + ls * P) / (1 + lb + ls));
    }
}
