/* test_render_drum_order.c - the audio of a timpani set does not depend on
 * the order in which the orchestra defines its drums: the five-drum set
 * (20, 23, 26, 29 and 32 inches; a stroke on every drum, a pedal glide)
 * written largest first, smallest first and shuffled gives the same
 * microphone samples on the CPU to 1e-12 of the peak, and eight drums
 * render as well.  (On the GPU, test_gpu_drum_set; issue 18.) */
#include "kt_render.h"
#include "kt_test.h"
#include "kt_test_drums.h"

#include <stdlib.h>

static double *render_set(const int *order, int n, int64_t *count)
{
    char orc[4096], sco[1024];
    kt_test_set_orc(orc, sizeof orc, 11025, order, n);
    kt_test_set_sco(sco, sizeof sco, n);
    kt_render_options o;
    kt_render_options_default(&o);
    o.device = KT_DEVICE_CPU;
    o.nthreads = 1;
    o.tail_s = 0.01;
    kt_render_result res;
    double *x = kt_test_render_all(orc, sco, &o, count, &res);
    kt_render_result_free(&res);
    return x;
}

int main(void)
{
    static const int orders[3][5] = {{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 4, 0, 3, 1}};
    int64_t n[3];
    double *x[3];
    for (int k = 0; k < 3; k++)
        x[k] = render_set(orders[k], 5, &n[k]);
    for (int k = 1; k < 3; k++) {
        double d = kt_test_relative_difference(x[k], n[k], x[0], n[0]);
        printf("order %d vs largest first: %.3g of the peak (%lld samples)\n", k, d,
               (long long)n[k]);
        KT_CHECK(d <= 1e-12, "order %d: the set sounds %.3g different", k, d);
    }
    double peak = x[0] ? kt_test_max_abs(x[0], (int)n[0]) : 0;
    KT_CHECK(peak > 1e-6, "the set was not heard (peak %g)", peak);
    static const int eight[8] = {7, 0, 6, 1, 5, 2, 4, 3};
    int64_t n8 = 0;
    double *x8 = render_set(eight, 8, &n8);
    KT_CHECK(x8 && n8 > 0 && kt_test_max_abs(x8, (int)n8) > 1e-6, "eight drums: not heard");
    for (int k = 0; k < 3; k++)
        free(x[k]);
    free(x8);
    return kt_test_finish("test_render_drum_order");
}
