/* test_timpani_energy.c - the coupled drum + air system conserves its discrete
 * energy (design note 8): lossless membrane, rigid walls (beta = 0), no air
 * viscosity, nonlinear on.  While the strike acts, the energy changes by
 * exactly the strike's work, 1/2 F^n (u_s^{n+1} - u_s^{n-1}), every step;
 * afterwards the total (room air with the shell and lid legs removed, plus
 * the membrane's energy with its Berger term) stays constant to rounding:
 * relative drift < 1e-10 over 5,000 steps.
 *
 * A 23-inch drum in a 0.7 m box at 44.1 kHz keeps the run short; the solve
 * (reduced Jacobi, the default) is iterated to a tight tolerance, because
 * the balance holds to the solve's residual. */
#include "kt_instrument.h"
#include "kt_physics.h"
#include "kt_test.h"
#include "timpani.h"

#include <math.h>
#include <stdlib.h>

#define STRIKE_N 100.0
#define STRIKE_S 1e-3

static double strike_force(double t_s)
{
    if (t_s < 0.0 || t_s >= STRIKE_S)
        return 0.0;
    return 0.5 * STRIKE_N * (1.0 - cos(2.0 * KT_PI * t_s / STRIKE_S));
}

static void run(kt_timpani_solver solver, int after_steps)
{
    kt_error err = {0};
    kt_room_params rp;
    kt_room_params_default(&rp);
    rp.size_m[0] = rp.size_m[1] = rp.size_m[2] = 0.7;
    rp.wall_beta = 0.0;
    rp.viscosity_m = 0.0;
    kt_room *room = NULL;
    KT_CHECK(kt_room_create(&rp, &room, &err) == KT_OK, "room: %s", err.message);
    if (!room)
        return;
    kt_timpani_params p;
    kt_timpani_params_standard(&p, 23, &err);
    p.loss_s = 0.0;
    p.rim_centre_m[0] = p.rim_centre_m[1] = 0.35;
    p.rim_centre_m[2] = 0.5;
    p.solver = solver;
    p.solver_iterations = 40;
    p.solver_tolerance = 1e-15;
    kt_timpani *t = NULL;
    KT_CHECK(createTimpani(room, &p, &t, &err) == KT_OK, "createTimpani: %s", err.message);
    if (!t) {
        kt_room_destroy(room);
        return;
    }
    const double sx = 0.09, sy = 0.05;
    KT_CHECK(kt_timpani_strike(t, 0.0, STRIKE_N, STRIKE_S, sx, sy, &err) == KT_OK, "%s",
             err.message);
    kt_timpani_info info;
    kt_timpani_get_info(t, &info);
    double R = 0.5 * p.diameter_m, h = info.membrane_spacing_m, k = 1.0 / rp.sample_rate_hz;
    int js = (int)lround((sx + R) / h) * info.membrane_n + (int)lround((sy + R) / h);

    int strike_steps = (int)ceil(STRIKE_S / k) + 2;
    double us_prev = 0.0, us_now = 0.0, H_prev = 0.0, worst_balance = 0.0, Hmax = 0.0;
    for (int n = 0; n < strike_steps; n++) {
        double F = strike_force(n * k);
        if (kt_room_step(room, &err) != KT_OK) {
            KT_CHECK(0, "step %d: %s", n, err.message);
            break;
        }
        double us_next = kt_timpani_displacement(t)[js];
        double H = kt_room_total_energy(room);
        double work = 0.5 * F * (us_next - us_prev);
        double miss = fabs((H - H_prev) - work);
        if (miss > worst_balance)
            worst_balance = miss;
        if (H > Hmax)
            Hmax = H;
        H_prev = H;
        us_prev = us_now;
        us_now = us_next;
    }
    KT_CHECK(Hmax > 0.0, "the strike put no energy in");
    KT_CHECK(worst_balance <= 1e-11 * Hmax, "energy balance during the strike off by %g J of %g J",
             worst_balance, Hmax);

    double H0 = kt_room_total_energy(room), lo = H0, hi = H0, mem_lo = 1e300, mem_hi = 0.0;
    for (int n = 0; n < after_steps; n++) {
        if (kt_room_step(room, &err) != KT_OK) {
            KT_CHECK(0, "step %d: %s", n, err.message);
            break;
        }
        if (n % 5 != 4)
            continue;  /* a drift accumulates: sampling every 5th step still sees it */
        double H = kt_room_total_energy(room), Hm = kt_timpani_energy(t);
        lo = fmin(lo, H);
        hi = fmax(hi, H);
        mem_lo = fmin(mem_lo, Hm);
        mem_hi = fmax(mem_hi, Hm);
    }
    double drift = (hi - lo) / H0;
    printf("solver %d: H = %.15g J, drift %.3g over %d steps, balance %.3g; membrane share "
           "%.3g..%.3g J\n",
           (int)solver, H0, drift, after_steps, worst_balance / Hmax, mem_lo, mem_hi);
    KT_CHECK(drift < 1e-10, "total energy drifted by %.3g (relative)", drift);
    /* the membrane and the air really exchange energy: it is not conserved per part */
    KT_CHECK(mem_hi - mem_lo > 1e-3 * H0, "membrane energy never changed (%g..%g)", mem_lo,
             mem_hi);
    kt_room_destroy(room);
}

int main(void)
{
    int sanitized = getenv("KETTLE_TEST_SANITIZED") != NULL;
    run(KT_SOLVE_REDUCED, sanitized ? 1000 : 5000);
    run(KT_SOLVE_DIRECT, sanitized ? 200 : 500);
    return kt_test_finish("test_timpani_energy");
}
