/* room_scheme_iwb.c - the 27-point interpolated wideband scheme (thesis
 * 4.3.1; Kowalczyk and van Walstijn):
 *   delta_tt Psi = c^2 [dxx + dyy + dzz + a (dxx dyy + dyy dzz + dzz dxx) + b dxx dyy dzz] Psi
 * with a = 1/4, b = 1/16 and Courant number 1.  Expanding the products of
 * second differences gives one weight per neighbour class:
 *   face 1 - 4a + 4b = 1/4,  edge a - 2b = 1/8,  corner b = 1/16,
 * and the symbol 4 sum s_d - 16 a sum s_d s_e + 64 b s_x s_y s_z
 * (s_d = sin^2(kappa_d / 2)) peaks at 4, hence lambda <= 1.  The sweep is the
 * generic stencil kernel of room_stencil.c. */
#include "room_internal.h"

/* The wideband member of the interpolated family (thesis Table 4.1). */
static const double iwb_a = 0.25, iwb_b = 0.0625;

static void add_pair(room_stencil *st, int x, int y, int z, double w)
{
    st->d[st->pairs][0] = x;
    st->d[st->pairs][1] = y;
    st->d[st->pairs][2] = z;
    st->w[st->pairs] = w;
    st->pairs++;
}

void room_iwb_stencil(room_stencil *st)
{
    const double face = 1 - 4 * iwb_a + 4 * iwb_b, edge = iwb_a - 2 * iwb_b, corner = iwb_b;
    st->pairs = 0;
    st->reach = 1;
    add_pair(st, 1, 0, 0, face);
    add_pair(st, 0, 1, 0, face);
    add_pair(st, 0, 0, 1, face);
    for (int s = 1; s >= -1; s -= 2) {
        add_pair(st, 1, s, 0, edge);
        add_pair(st, 1, 0, s, edge);
        add_pair(st, 0, 1, s, edge);
    }
    for (int sy = 1; sy >= -1; sy -= 2)
        for (int sz = 1; sz >= -1; sz -= 2)
            add_pair(st, 1, sy, sz, corner);
}
