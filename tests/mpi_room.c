/* mpi_room.c - a room split over MPI ranks (kt_ranks.h) gives the same bits
 * as the whole room on one process.  Run under mpirun with 2 or 3 ranks
 * (tests/CMakeLists.txt adds it only when MPI is found); rank 0 then builds
 * the same room whole and compares every microphone sample exactly.
 *
 * Cases: rigid, lossy and viscous walls in double precision and lossy walls
 * in single, with sources and microphones on both sides of a slab boundary,
 * one microphone whose cell straddles it (its samples wait for the plane
 * above), one moving across it; a timpani whose membrane layers straddle a
 * boundary (the drum runs on the upper rank and borrows the plane below),
 * and one whose bowl crosses it below the membrane.  The energies (air and
 * total, drums counted on the rank that steps them) and the field's scan,
 * summed over the ranks, equal the whole room's bit for bit.  Shaped rooms
 * (rigid, lossy, viscous in double, lossy in single) the same: a lossy box
 * solid straddling the top rank's first plane and a cylinder with the
 * walls' loss straddling rank 1's, so that nodes on both sides of a cut are
 * corrected beside a solid and the blocked legs cross it; each rank lists
 * only its planes' nodes and the whole room's air.  Also: a room too large
 * for the memory limit is refused on every rank.
 *
 * The same split along x and along y (issue #22): each rank a slab of
 * columns or rows, its halo layers packed; lossy walls in double and single,
 * viscous walls, sources on both sides, a microphone whose cell straddles a
 * cut and one moving across; a drum in a room long in x (double) or y
 * (single), kept clear of the cuts (the third rank's cut moved off it);
 * solids refused on such a split. */
#include "kettle.h"
#include "kt_instrument.h"
#include "kt_ranks.h"
#include "kt_room_state.h"
#include "kt_test.h"
#include "timpani.h"

#include <stdlib.h>
#include <string.h>

typedef struct room_case {
    const char *name;
    int precision;
    double beta, viscosity_m;
    int drum;                        /* 0 none; 1 layers straddle; 2 bowl crosses;
                                        3 clear of the cuts (along x or y) */
    int shaped;                      /* 1: solids across the cuts (add_solids) */
    int axis;                        /* the split's: 0, 1, 2 = x, y, z */
} room_case;

/* Case 3's drum: a 23-inch timpani 0.40 m along the split axis (x or y)
 * of a room 2 m long that way, 0.35 m along the other. */
static const double drum_at_m = 0.40, drum_diameter_m = 23 * 0.0254;

static void drum_centre(const room_case *c, double out[3])
{
    out[0] = c->axis == 0 ? drum_at_m : 0.35;
    out[1] = c->axis == 1 ? drum_at_m : 0.35;
    out[2] = 0.5;
}

/* The split a case asks for: its axis, its drum kept clear. */
static void split_options(const room_case *c, kt_split_options *so, kt_room_keep *keep)
{
    kt_split_options_default(so);
    so->axis = (kt_split_axis)c->axis;
    if (c->drum == 3) {
        memset(keep, 0, sizeof *keep);
        snprintf(keep->name, sizeof keep->name, "the drum");
        double at[3], r = drum_diameter_m / 2;
        drum_centre(c, at);
        for (int a = 0; a < 3; a++)
            keep->lo_m[a] = at[a] - r, keep->hi_m[a] = at[a] + r;
        so->keep = keep;
        so->keep_count = 1;
    }
}

/* The first layer of rank `r`'s slab along the case's axis (the boundary
 * with rank r-1). */
static int boundary(const room_case *c, const kt_room_params *p, int r)
{
    int lo[3] = {0, 0, 0}, hi[3];
    kt_error err = {0};
    kt_split_options so;
    kt_room_keep keep;
    split_options(c, &so, &keep);
    kt_room_split_part(p, kt_mpi_size(), &so, r, lo, hi, NULL, &err);
    return lo[c->axis];
}

/* A position `rel` spacings past layer zb along the case's axis, u and v
 * metres along the next two axes. */
static void place(const room_case *c, double Q, int zb, double u, double v, double rel,
                  double out[3])
{
    out[c->axis] = (zb + rel) * Q;
    out[(c->axis + 1) % 3] = u;
    out[(c->axis + 2) % 3] = v;
}

static void params(const room_case *c, kt_room_params *p)
{
    if (c->drum) {
        kt_room_params_default(p);
        p->size_m[0] = c->drum == 3 && c->axis == 0 ? 2.0 : 0.7;
        p->size_m[1] = c->drum == 3 && c->axis == 1 ? 2.0 : 0.7;
        p->size_m[2] = 1.0;
        p->sample_rate_hz = 22050;
        p->wall_beta = c->beta;
        p->precision = c->precision;
    } else {
        kt_test_box(p, 22, 18, 27, c->precision, c->beta, c->viscosity_m);
    }
    p->nthreads = 1;
}

static int add_drum(kt_room *room, const room_case *c, int zb, kt_error *err)
{
    double Q = kt_room_get_grid(room)->spacing_m;
    kt_timpani_params p;
    int rc = kt_timpani_params_standard(&p, 23, err);
    if (rc < 0)
        return rc;
    p.rim_centre_m[0] = p.rim_centre_m[1] = 0.35;
    /* membrane layers p_d = zb-1, p_u = zb; or the membrane three planes up;
     * or away from the cuts along x */
    p.rim_centre_m[2] = (c->drum == 1 ? zb - 0.5 : zb + 3.5) * Q;
    if (c->drum == 3)
        drum_centre(c, p.rim_centre_m);
    p.solver_iterations = 10;
    kt_timpani *t;
    if ((rc = createTimpani(room, &p, &t, err)) < 0)
        return rc;
    return kt_timpani_strike(t, 0.0, 100.0, 1e-3, 0.09, 0.05, err);
}

/* A box of beta 0.3 (0 in a rigid room) across plane zb (the top rank's first) beside the
 * sources and microphones of furnish, and a cylinder with the walls' beta
 * across plane z1 (rank 1's first), clear of them too. */
static int add_solids(kt_room *room, const room_case *c, int zb, int z1, kt_error *err)
{
    double Q = kt_room_get_grid(room)->spacing_m;
    kt_room_solid s[2];
    s[0] = kt_test_box_solid(15.5 * Q, 2.5 * Q, (zb - 3.5) * Q, 19.5 * Q, 12.5 * Q,
                             (zb + 2.5) * Q, c->beta > 0 ? 0.3 : 0.0, 0);
    s[1] = kt_test_cylinder_solid(4.5 * Q, 13.5 * Q, (z1 - 2.5) * Q, (z1 + 2.5) * Q, 2.2 * Q,
                                  -1, 0);
    return kt_room_add_solids(room, s, 2, NULL, err);
}

/* Sources, microphones and the drum, the same on every rank and on the whole room. */
static int furnish(kt_room *room, const room_case *c, int zb, kt_error *err)
{
    const kt_room_grid *g = kt_room_get_grid(room);
    const int n[3] = {g->nx, g->ny, g->nz};
    double Q = g->spacing_m, mid = 0.5 * (n[(c->axis + 1) % 3] - 1) * Q;
    double below[3], above[3], straddle[3], on_plane[3], far[3];
    place(c, Q, zb, 0.3 * mid, 0.7 * mid, -2, below);
    place(c, Q, zb, 1.4 * mid, 0.9 * mid, 1.2, above);
    place(c, Q, zb, 0.9 * mid, 1.1 * mid, -0.37, straddle);
    place(c, Q, zb, 1.2 * mid, 0.6 * mid, 0, on_plane);
    place(c, Q, zb, 0.5 * mid, 0.5 * mid, 3.6, far);
    int rc = 0;
    if (c->drum)
        rc = add_drum(room, c, zb, err);
    else {
        rc = kt_room_add_impulse(room, below, 0.0, 6e-4, 0.5, err);
        if (rc >= 0)
            rc = kt_room_add_impulse(room, above, 1e-3, 6e-4, -0.3, err);
    }
    if (rc >= 0 && (rc = kt_room_add_mic(room, "below", below, err)) >= 0 &&
        (rc = kt_room_add_mic(room, "straddle", straddle, err)) >= 0 &&
        (rc = kt_room_add_mic(room, "on_plane", on_plane, err)) >= 0 &&
        (rc = kt_room_add_mic(room, "moving", below, err)) >= 0) {
        double t_end = 200 * g->time_step_s;
        rc = kt_room_mic_waypoint(room, rc, 0.0, below, err);
        if (rc >= 0)
            rc = kt_room_mic_waypoint(room, 3, t_end, far, err);
    }
    return rc < 0 ? rc : KT_OK;
}

static int run(kt_room *room, const room_case *c, int zb, int z1, int steps, kt_error *err)
{
    int rc = c->shaped ? add_solids(room, c, zb, z1, err) : KT_OK;
    if (rc >= 0)
        rc = furnish(room, c, zb, err);
    if (rc >= 0)
        rc = kt_room_run(room, steps, NULL, NULL, err);
    if (rc >= 0)
        rc = kt_room_collect(room, err);
    return rc;
}

/* Rank 0: every sample of every microphone equal, bit for bit, and not all zero. */
static void compare(const kt_room *split, const kt_room *whole, const char *name)
{
    for (int m = 0; m < kt_room_mic_count(whole); m++) {
        int64_t ns = 0, nw = 0;
        const double *s = kt_room_mic_signal(split, m, &ns);
        const double *w = kt_room_mic_signal(whole, m, &nw);
        KT_CHECK(ns == nw, "%s mic %d: %lld vs %lld samples", name, m, (long long)ns,
                 (long long)nw);
        if (ns != nw)
            continue;
        int64_t first_diff = -1;
        double peak = 0;
        for (int64_t i = 0; i < nw; i++) {
            if (first_diff < 0 && memcmp(&s[i], &w[i], sizeof *s) != 0)
                first_diff = i;
            peak = fmax(peak, fabs(w[i]));
        }
        KT_CHECK(first_diff < 0, "%s mic %s: sample %lld differs: %.17g vs %.17g", name,
                 kt_room_mic_name(whole, m), (long long)first_diff,
                 first_diff >= 0 ? s[first_diff] : 0.0, first_diff >= 0 ? w[first_diff] : 0.0);
        KT_CHECK(peak > 0, "%s mic %s recorded silence", name, kt_room_mic_name(whole, m));
    }
}

/* Rank 0: the split room's energies and field scan (every rank's part
 * summed) equal the whole room's bit for bit, the planes' sums added in the
 * same order on any rank count. */
static void compare_energy(const kt_room *split, kt_room *whole, double air, double total,
                           const kt_field_scan *scan, const char *name)
{
    double air1 = kt_room_air_energy(whole), total1 = kt_room_total_energy(whole);
    KT_CHECK(air > 0 && memcmp(&air, &air1, sizeof air) == 0,
             "%s: the air's energy over %d ranks is %.17g J, whole %.17g J", name,
             kt_room_ranks(split), air, air1);
    KT_CHECK(memcmp(&total, &total1, sizeof total) == 0,
             "%s: the total energy over %d ranks is %.17g J, whole %.17g J", name,
             kt_room_ranks(split), total, total1);
    kt_field_scan s1;
    kt_room_scan_field(whole, &s1);
    KT_CHECK(scan->max_abs == s1.max_abs && scan->bad == s1.bad &&
                 !memcmp(scan->node, s1.node, sizeof s1.node),
             "%s: the field's scan over ranks (%g at %d %d %d) is not the whole room's "
             "(%g at %d %d %d)", name, scan->max_abs, scan->node[0], scan->node[1],
             scan->node[2], s1.max_abs, s1.node[0], s1.node[1], s1.node[2]);
}

static void check_case(const room_case *c, int steps)
{
    kt_room_params p;
    params(c, &p);
    int ranks = kt_mpi_size(), rank = kt_mpi_rank();
    int zb = boundary(c, &p, ranks - 1);    /* the top rank's first layer */
    int z1 = boundary(c, &p, 1);            /* rank 1's (the same with 2 ranks) */
    kt_error err = {0};
    kt_room *split = NULL;
    kt_split_options so;
    kt_room_keep keep;
    split_options(c, &so, &keep);
    int rc = kt_room_create_split(&p, &so, &split, &err);
    KT_CHECK(rc == KT_OK, "%s: %s", c->name, err.message);
    if (rc < 0)
        return;
    KT_CHECK(kt_room_ranks(split) == ranks && kt_room_rank(split) == rank &&
                 kt_room_split_axis(split) == c->axis,
             "%s: rank %d of %d, split along %d", c->name, kt_room_rank(split),
             kt_room_ranks(split), kt_room_split_axis(split));
    rc = run(split, c, zb, z1, steps, &err);
    KT_CHECK(rc == KT_OK, "%s (rank %d): %s", c->name, rank, err.message);
    if (rc < 0)
        kt_mpi_abort(1);
    /* collective: the ranks' parts summed, the guard's figures */
    double air = kt_room_air_energy(split), total = kt_room_total_energy(split);
    kt_field_scan scan;
    kt_room_scan_field(split, &scan);
    double listed = (double)kt_room_shape_nodes(split);    /* each rank its planes' */
    kt_mpi_sum(&listed, 1, NULL);
    if (rank == 0) {
        kt_room *whole = NULL;
        rc = kt_room_create(&p, &whole, &err);
        if (rc >= 0)
            rc = run(whole, c, zb, z1, steps, &err);
        KT_CHECK(rc == KT_OK, "%s whole: %s", c->name, err.message);
        if (rc >= 0) {
            KT_CHECK(listed == (double)kt_room_shape_nodes(whole) &&
                         kt_room_air_nodes(split) == kt_room_air_nodes(whole) &&
                         (!c->shaped || listed > 0),
                     "%s: %.0f nodes listed over the ranks, whole %lld; air %lld vs %lld",
                     c->name, listed, (long long)kt_room_shape_nodes(whole),
                     (long long)kt_room_air_nodes(split), (long long)kt_room_air_nodes(whole));
            compare(split, whole, c->name);
            compare_energy(split, whole, air, total, &scan, c->name);
        }
        kt_room_destroy(whole);
    }
    kt_room_destroy(split);
    kt_mpi_barrier();
}

/* Solids on a room split along x are refused, on every rank, with the reason. */
static void check_solids_refused(void)
{
    kt_room_params p;
    kt_test_box(&p, 22, 18, 27, KT_DOUBLE, 0.1, 0.0);
    kt_split_options so;
    kt_split_options_default(&so);
    so.axis = KT_SPLIT_X;
    kt_room *room = NULL;
    kt_error err = {0};
    int rc = kt_room_create_split(&p, &so, &room, &err);
    KT_CHECK(rc == KT_OK, "split along x: %s", err.message);
    double Q = rc == KT_OK ? kt_room_get_grid(room)->spacing_m : 1;
    kt_room_solid s = kt_test_box_solid(3.5 * Q, 2.5 * Q, 2.5 * Q, 9.5 * Q, 8.5 * Q, 9.5 * Q,
                                        0.1, 0);
    rc = room ? kt_room_add_solids(room, &s, 1, NULL, &err) : KT_OK;
    KT_CHECK(rc < 0 && strstr(err.message, "along z only"),
             "solids on a room split along x: %d (%s)", rc, err.message);
    kt_room_destroy(room);
}

static void check_memory_refusal(void)
{
    kt_room_params p;
    kt_test_box(&p, 40, 40, 40, KT_DOUBLE, 0.0, 0.0);
    p.memory_limit_bytes = 100000;
    kt_room *room = NULL;
    kt_error err = {0};
    int rc = kt_room_create_ranked(&p, &room, &err);
    KT_CHECK(rc == KT_ENOMEM && !room, "a room over the memory limit was accepted (%d)", rc);
    KT_CHECK(strstr(err.message, "bytes") != NULL, "message: %s", err.message);
}

int main(int argc, char **argv)
{
    kt_error err = {0};
    if (kt_mpi_init(&argc, &argv, &err) < 0) {
        fprintf(stderr, "mpi_room: %s\n", err.message);
        return 1;
    }
    if (kt_mpi_size() < 2) {
        fprintf(stderr, "mpi_room: run it under mpirun -np 2 (or more)\n");
        kt_mpi_finalize();
        return 77;
    }
    static const room_case cases[] = {
        {"rigid double", KT_DOUBLE, 0.0, 0.0, 0, 0, 2},
        {"lossy double", KT_DOUBLE, 0.2, 0.0, 0, 0, 2},
        {"viscous double", KT_DOUBLE, 0.1, 2e-5, 0, 0, 2},
        {"lossy single", KT_SINGLE, 0.2, 0.0, 0, 0, 2},
        {"drum, layers straddle", KT_DOUBLE, 0.05, 0.0, 1, 0, 2},
        {"drum, bowl crosses", KT_DOUBLE, 0.05, 0.0, 2, 0, 2},
        {"shaped rigid double", KT_DOUBLE, 0.0, 0.0, 0, 1, 2},
        {"shaped lossy double", KT_DOUBLE, 0.2, 0.0, 0, 1, 2},
        {"shaped viscous double", KT_DOUBLE, 0.1, 2e-5, 0, 1, 2},
        {"shaped lossy single", KT_SINGLE, 0.2, 0.0, 0, 1, 2},
        {"along x, lossy double", KT_DOUBLE, 0.2, 0.0, 0, 0, 0},
        {"along x, lossy single", KT_SINGLE, 0.2, 0.0, 0, 0, 0},
        {"along x, viscous double", KT_DOUBLE, 0.1, 2e-5, 0, 0, 0},
        {"along y, lossy double", KT_DOUBLE, 0.2, 0.0, 0, 0, 1},
        {"along y, lossy single", KT_SINGLE, 0.2, 0.0, 0, 0, 1},
        {"along y, viscous double", KT_DOUBLE, 0.1, 2e-5, 0, 0, 1},
        {"along x, a drum clear of the cuts", KT_DOUBLE, 0.05, 0.0, 3, 0, 0},
        {"along y, a drum clear of the cuts", KT_SINGLE, 0.05, 0.0, 3, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i], cases[i].drum ? 300 : 400);
    check_memory_refusal();
    check_solids_refused();
    int rank = kt_mpi_rank();
    int status = kt_test_finish(rank == 0 ? "mpi_room (rank 0)" : "mpi_room");
    kt_mpi_finalize();
    return status;
}
