/* kt_test.c - counters and summary for kt_test.h, and shared fixtures. */
#include "kt_test.h"

#include "kettle.h"

int kt_test_failures = 0;
int kt_test_checks = 0;

int kt_test_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, kt_test_checks, kt_test_failures);
    return kt_test_failures ? 1 : 0;
}

void kt_test_box(kt_room_params *p, int nx, int ny, int nz, int precision, double beta,
                 double viscosity_m)
{
    kt_room_params_default(p);
    p->precision = (kt_precision)precision;
    p->wall_beta = beta;
    p->viscosity_m = viscosity_m;
    p->courant_backoff = 0.004;
    double c = p->sound_speed_m_per_s, k = 1.0 / p->sample_rate_hz;
    double h0 = sqrt(3 * c * c * k * k + 6 * c * viscosity_m * k) / (1 - 0.004);
    double Q = (nx - 0.5) * h0 / (nx - 1);   /* spacing for exactly nx nodes */
    p->size_m[0] = (nx - 0.5) * h0;
    p->size_m[1] = (ny - 0.5) * Q;
    p->size_m[2] = (nz - 0.5) * Q;
    p->nthreads = 2;
}
