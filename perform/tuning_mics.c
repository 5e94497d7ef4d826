/* tuning_mics.c - microphones where a drum's pitch is silent: the (1,1) is
 * odd about the drum's axis, so on the axis (and a few degrees around it)
 * a microphone hears no fundamental from that drum (kt_tuning.h). */
#include "tuning_internal.h"
#include "kt_physics.h"

#include <math.h>
#include <stdio.h>

static int axis_warning(const kt_performance *perf, const kt_score_mic *m, kt_score_loc at,
                        const double pos[3], int d, double Q, kt_score_error *out)
{
    const kt_score_drum *dr = &perf->drums[d];
    const double *c = dr->params.rim_centre_m;
    double rho = hypot(pos[0] - c[0], pos[1] - c[1]), dz = pos[2] - c[2];
    double deg = atan2(rho, fabs(dz)) * 180 / KT_PI;
    if (deg >= KT_TUNING_AXIS_WARN_DEG && rho >= Q / 2)
        return 0;
    double db = 20 * log10(sin(deg * KT_PI / 180) / sin(KT_PI / 4));
    double move = fmax(fabs(dz) * tan(20 * KT_PI / 180) - rho, 0.05);
    char level[64];
    if (rho < Q / 2)
        snprintf(level, sizeof level, "silent");
    else
        snprintf(level, sizeof level, "%.0f dB weaker than 45 degrees off the axis", -db);
    kt_score_fail_at(perf, at, out, KT_OK,
                     "microphone %s sits on the axis of drum %s (%.1f degrees off it, %.2f m %s "
                     "the head): the drum's (1,1) mode, the pitch it sounds, is %s there; move "
                     "it about %.2f m sideways", m->name, dr->name, deg, fabs(dz),
                     dz >= 0 ? "above" : "below", level, move);
    out->warning = 1;
    return 1;
}

int kt_tuning_mic_warnings(const kt_performance *perf, const kt_room_params *room,
                           kt_score_error *out, int max)
{
    kt_room_grid g;
    double Q = kt_room_estimate(room, &g, NULL) == 0 ? g.spacing_m : 0;
    int count = 0;
    for (int i = 0; i < perf->mic_count; i++) {
        const kt_score_mic *m = &perf->mics[i];
        for (int d = 0; d < perf->drum_count; d++)
            for (int w = -1; w < m->waypoint_count; w++) {
                const double *pos = w < 0 ? m->pos_m : m->waypoints[w].pos_m;
                kt_score_loc at = w < 0 ? m->loc : m->waypoints[w].loc;
                kt_score_error e = {0};
                if (axis_warning(perf, m, at, pos, d, Q, &e) && count++ < max)
                    out[count - 1] = e;
            }
    }
    return count;
}
