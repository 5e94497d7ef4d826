/* room_stencil_families.c - the generic stencils of seed 000 (Hamilton,
 * Webb, Gray, Bilbao, DAFx 2015, section 2): compact-in-space S_R^(c) (all
 * q with |q|^2 <= R), box-compact S_(q,q,q)^(b) (the cube |q_i| <= q) and
 * leggy S_M^(l) (+-m e_d, m <= M) with their (2,2M) weights
 *   c_m = 2 (-1)^(m+1) (M!)^2 / (m^2 (M-m)! (M+m)!).
 * The paper leaves the compact weights open; here every shell |q|^2 = s of
 * the stencil takes an equal share of the Laplacian: with S shells and n_s
 * offsets in shell s, w_s = 6 / (S n_s s), so that (1/2) sum_q w_q q q^T = I
 * (each shell is invariant under the cube's symmetries, so its sum of q q^T
 * is n_s s / 3 I).  All these weights are positive; consistent, second order. */
#include "room_internal.h"

#include <stdlib.h>
#include <string.h>

/* 1 for the first offset of each +-q pair: the first non-zero component positive. */
static int leading_positive(int x, int y, int z)
{
    return x > 0 || (x == 0 && (y > 0 || (y == 0 && z > 0)));
}

/* Offsets of a compact stencil (family, reach) in shells; weights per shell. */
static int compact_stencil(int box, int reach, room_stencil *st, kt_error *err)
{
    int r = box ? reach : 0, smax = box ? 3 * reach * reach : reach;
    if (!box)
        while ((r + 1) * (r + 1) <= reach)
            r++;
    int *count = calloc((size_t)smax + 1, sizeof *count);
    if (!count)
        return kt_fail(err, KT_ENOMEM, "out of memory building a stencil");
    st->pairs = 0;
    st->reach = r;
    for (int x = -r; x <= r; x++)
        for (int y = -r; y <= r; y++)
            for (int z = -r; z <= r; z++) {
                int s = x * x + y * y + z * z;
                if (s == 0 || s > smax || !leading_positive(x, y, z))
                    continue;
                if (st->pairs == ROOM_STENCIL_MAX_PAIRS) {
                    free(count);
                    return kt_fail(err, KT_EINVAL, "stencil has more than %d points",
                                   2 * ROOM_STENCIL_MAX_PAIRS + 1);
                }
                st->d[st->pairs][0] = x;
                st->d[st->pairs][1] = y;
                st->d[st->pairs][2] = z;
                st->pairs++;
                count[s] += 2;
            }
    int shells = 0;
    for (int s = 1; s <= smax; s++)
        shells += count[s] > 0;
    for (int q = 0; q < st->pairs; q++) {
        const int *d = st->d[q];
        int s = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        st->w[q] = 6.0 / ((double)shells * count[s] * s);
    }
    free(count);
    return KT_OK;
}

static void leggy_stencil(int M, room_stencil *st)
{
    st->pairs = 0;
    st->reach = M;
    for (int m = 1; m <= M; m++) {
        /* c_m = 2 (-1)^(m+1) prod_{j=1..m} (M - j + 1) / (M + j) / m^2 */
        double c = 2.0 / ((double)m * m);
        for (int j = 1; j <= m; j++)
            c *= (double)(M - j + 1) / (M + j);
        if (m % 2 == 0)
            c = -c;
        for (int d = 0; d < 3; d++) {
            memset(st->d[st->pairs], 0, sizeof st->d[0]);
            st->d[st->pairs][d] = m;
            st->w[st->pairs] = c;
            st->pairs++;
        }
    }
}

int room_family_stencil(const kt_room_params *p, room_stencil *st, kt_error *err)
{
    static const int max_reach[3] = {22, 3, 16};
    int f = (int)p->stencil_family, reach = p->stencil_reach;
    if (f < 0 || f > 2)
        return kt_fail(err, KT_EINVAL, "unknown stencil family %d", f);
    if (reach < 1 || reach > max_reach[f])
        return kt_fail(err, KT_EINVAL, "%s stencil reach must be 1 to %d, got %d",
                       f == KT_STENCIL_COMPACT ? "compact" : f == KT_STENCIL_BOX ? "box" : "leggy",
                       max_reach[f], reach);
    if (f == KT_STENCIL_LEGGY) {
        leggy_stencil(reach, st);
        return KT_OK;
    }
    return compact_stencil(f == KT_STENCIL_BOX, reach, st, err);
}
