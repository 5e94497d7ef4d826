/* timpani_energy.c - the membrane's discrete energy at n+1/2 (design note 8):
 *   H = h^2 [ rhoM/(2k^2) |u^{n+1}-u^n|^2 - T/2 u^{n+1}.Dh u^n
 *             + D_M/2 (Dh u^{n+1}).(Dh u^n) + rhoM/(2k^2) (a^n.u^{n+1})^2 ]
 *       + rhoM h^2 c_M^2 alpha/(4k) (u^{n+1}-u^n).Dh (u^{n+1}-u^n)
 * with Dh = D/h^2.  With the air's energy (blocked legs removed) it is
 * conserved to rounding when beta = alpha = 0, no strike acts and the head
 * is not damped (with damping sigma0 it falls by exactly
 * sigma0 rhoM h^2 |u^{n+1}-u^{n-1}|^2 / (2k) per step).  a^n is formed here
 * from u^n with the undamped V (the solve's a carries 1/sqrt(1+sigma0 k)).
 * Used as the instrument's energy() callback and by kt_timpani_energy. */
#include "timpani_internal.h"

#include <math.h>
#include <stdlib.h>

double tp_energy(const void *self)
{
    const kt_timpani *t = self;
    if (t->state.steps == 0)
        return 0.0;
    const double *un1 = t->state.u, *un = t->state.u1;
    double *Lun1 = calloc((size_t)t->plan.nn, sizeof *Lun1), *Lun = calloc((size_t)t->plan.nn, sizeof *Lun);
    double *dv = calloc((size_t)t->plan.nn, sizeof *dv), *Ldv = calloc((size_t)t->plan.nn, sizeof *Ldv);
    double H = NAN;
    if (Lun1 && Lun && dv && Ldv) {
        tp_laplacian(t, un1, Lun1);
        tp_laplacian(t, un, Lun);
        for (int q = 0; q < t->plan.ninside; q++) {
            int j = t->plan.inside[q];
            dv[j] = un1[j] - un[j];
        }
        tp_laplacian(t, dv, Ldv);
        double kin = 0.0, ten = 0.0, stf = 0.0, au = 0.0, los = 0.0;
        for (int q = 0; q < t->plan.ninside; q++) {
            int j = t->plan.inside[q];
            kin += dv[j] * dv[j];
            ten += un1[j] * Lun[j];
            stf += Lun1[j] * Lun[j];
            au += Lun[j] * un1[j];
            los += dv[j] * Ldv[j];
        }
        double h2 = t->plan.h * t->plan.h, k2 = t->plan.k * t->plan.k, rho = t->plan.p.surface_density_kg_per_m2;
        au *= t->plan.vfac / h2;                     /* a^n . u^{n+1}, a^n = V u^n */
        H = h2 * (rho / (2.0 * k2) * kin - 0.5 * t->plan.p.tension_N_per_m * ten / h2 +
                  0.5 * t->plan.DM * stf / (h2 * h2) + rho / (2.0 * k2) * au * au) +
            rho * t->plan.cM2 * t->plan.p.loss_s / (4.0 * t->plan.k) * los;
    }
    free(Lun1);
    free(Lun);
    free(dv);
    free(Ldv);
    return H;
}
