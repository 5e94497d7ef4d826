/* room_mics.c - microphones (design note 2.4, thesis 7.6): the pressure
 * p = rho (Psi^{n+1} - Psi^n) / k, interpolated trilinearly at the mic's
 * position at time (n+1) k, which may move along waypoints (linear in time,
 * held before the first and after the last). */
#include "room_internal.h"
#include "room_slab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kt_room_add_mic(kt_room *room, const char *name, const double pos_m[3], kt_error *err)
{
    if (!room)
        return kt_fail(err, KT_EINVAL, "kt_room_add_mic: room is NULL");
    char label[80];
    snprintf(label, sizeof label, "microphone '%s'", name ? name : "");
    int rc = room_check_position(room, pos_m, label, err);
    if (rc < 0)
        return rc;
    if (!name || !name[0] || strlen(name) >= sizeof room->plan.mic[0].name)
        return kt_fail(err, KT_EINVAL, "a microphone needs a name of 1 to %zu characters",
                       sizeof room->plan.mic[0].name - 1);
    for (const char *c = name; *c; c++)
        if (*c == '/' || *c == '\\')
            return kt_fail(err, KT_EINVAL, "microphone name '%s' may not contain a slash", name);
    for (int m = 0; m < room->plan.mic_count; m++)
        if (strcmp(room->plan.mic[m].name, name) == 0)
            return kt_fail(err, KT_EINVAL, "there is already a microphone named '%s'", name);
    if (room->plan.mic_count == room->plan.mic_capacity) {
        int cap = room->plan.mic_capacity ? 2 * room->plan.mic_capacity : 4;
        room_mic *grown = realloc(room->plan.mic, sizeof *grown * (size_t)cap);
        if (!grown)
            return kt_fail(err, KT_ENOMEM, "out of memory adding a microphone");
        room->plan.mic = grown;
        room->plan.mic_capacity = cap;
    }
    room_mic *m = &room->plan.mic[room->plan.mic_count];
    memset(m, 0, sizeof *m);
    strcpy(m->name, name);
    memcpy(m->pos_m, pos_m, sizeof m->pos_m);
    if (room->n > 0) {
        /* Joining late: silence before, so every channel has one sample per step. */
        m->signal = calloc((size_t)room->n, sizeof *m->signal);
        if (!m->signal)
            return kt_fail(err, KT_ENOMEM, "out of memory adding a microphone");
        m->count = m->capacity = room->n;
    }
    return room->plan.mic_count++;
}

int kt_room_mic_waypoint(kt_room *room, int mic, double time_s, const double pos_m[3],
                         kt_error *err)
{
    if (!room || mic < 0 || mic >= room->plan.mic_count)
        return kt_fail(err, KT_EINVAL, "no microphone %d", mic);
    room_mic *m = &room->plan.mic[mic];
    int rc = room_check_position(room, pos_m, m->name, err);
    if (rc < 0)
        return rc;
    if (!isfinite(time_s) || (m->way_count > 0 && !(time_s > m->way[m->way_count - 1].time_s)))
        return kt_fail(err, KT_EINVAL,
                       "microphone '%s': waypoint times must increase (got %g s after %g s)",
                       m->name, time_s, m->way_count ? m->way[m->way_count - 1].time_s : 0.0);
    /* it travels in a straight line from the waypoint before */
    if (m->way_count > 0 &&
        (rc = room_shape_check_path(room, m->way[m->way_count - 1].pos_m, pos_m, m->name, err)) < 0)
        return rc;
    if (m->way_count == m->way_capacity) {
        int cap = m->way_capacity ? 2 * m->way_capacity : 4;
        room_waypoint *grown = realloc(m->way, sizeof *grown * (size_t)cap);
        if (!grown)
            return kt_fail(err, KT_ENOMEM, "out of memory adding a waypoint");
        m->way = grown;
        m->way_capacity = cap;
    }
    m->way[m->way_count].time_s = time_s;
    memcpy(m->way[m->way_count].pos_m, pos_m, sizeof m->way[0].pos_m);
    m->way_count++;
    return KT_OK;
}

int kt_room_mic_count(const kt_room *room) { return room->plan.mic_count; }

const char *kt_room_mic_name(const kt_room *room, int mic)
{
    return mic >= 0 && mic < room->plan.mic_count ? room->plan.mic[mic].name : NULL;
}

const double *kt_room_mic_signal(const kt_room *room, int mic, int64_t *nsamples)
{
    if (mic < 0 || mic >= room->plan.mic_count) {
        if (nsamples)
            *nsamples = 0;
        return NULL;
    }
    if (nsamples)
        *nsamples = room->plan.mic[mic].count;
    return room->plan.mic[mic].signal;
}

void room_mic_position(const room_mic *m, double t, double pos[3])
{
    if (m->way_count == 0) {
        memcpy(pos, m->pos_m, sizeof m->pos_m);
        return;
    }
    const room_waypoint *w = m->way;
    int last = m->way_count - 1;
    if (t <= w[0].time_s || last == 0) {
        memcpy(pos, t <= w[0].time_s ? w[0].pos_m : w[last].pos_m, 3 * sizeof(double));
        return;
    }
    if (t >= w[last].time_s) {
        memcpy(pos, w[last].pos_m, 3 * sizeof(double));
        return;
    }
    int s = 0;
    while (w[s + 1].time_s < t)
        s++;
    double f = (t - w[s].time_s) / (w[s + 1].time_s - w[s].time_s);
    for (int d = 0; d < 3; d++)
        pos[d] = w[s].pos_m[d] + f * (w[s + 1].pos_m[d] - w[s].pos_m[d]);
}

void room_mic_cell(const room_plan *plan, const double pos[3], int i0[3], double f[3])
{
    int n[3] = {plan->grid.nx, plan->grid.ny, plan->grid.nz};
    for (int d = 0; d < 3; d++) {
        double u = pos[d] / plan->grid.spacing_m;
        u = u < 0 ? 0 : u > n[d] - 1 ? n[d] - 1 : u;
        int i = (int)floor(u);
        if (i > n[d] - 2)
            i = n[d] - 2;
        i0[d] = i;
        f[d] = u - i;
    }
}

/* Trilinear interpolation of hi - lo at a position (corners with weight 0
 * are not read, so a cell on its lower plane needs no plane above). */
double room_mic_difference(const kt_room *r, const void *hi, const void *lo,
                           const double pos[3])
{
    int i0[3];
    double f[3];
    room_mic_cell(&r->plan, pos, i0, f);
    double d[8];
    for (int c = 0; c < 8; c++) {
        int dx = c & 1, dy = (c >> 1) & 1, dz = c >> 2;
        d[c] = 0;
        if (room_mic_weight(f, c) == 0)
            continue;
        if (r->plan.fcc) {            /* off-lattice corners: the mean of their axis neighbours */
            int x = i0[0] + dx, y = i0[1] + dy, z = i0[2] + dz;
            d[c] = room_fcc_value(r, hi, x, y, z) - room_fcc_value(r, lo, x, y, z);
            continue;
        }
        size_t i = room_pidx(r, i0[0] + dx, i0[1] + dy, i0[2] + dz);
        d[c] = room_get(r, hi, i) - room_get(r, lo, i);
    }
    return room_mic_corner_sum(f, d);
}

double room_mic_corner_sum(const double f[3], const double d[8])
{
    double v = 0;
    for (int c = 0; c < 8; c++) {
        double w = room_mic_weight(f, c);
        if (w != 0)
            v += w * d[c];
    }
    return v;
}

double room_mic_scale(const kt_room *room)
{
    return room->plan.params.air_density_kg_per_m3 / room->plan.grid.time_step_s;
}

int room_mic_reserve(room_mic *m, int64_t more, kt_error *err)
{
    if (m->count + more <= m->capacity)
        return KT_OK;
    int64_t cap = m->capacity ? 2 * m->capacity : 4096;
    while (cap < m->count + more)
        cap *= 2;
    double *grown = realloc(m->signal, sizeof *grown * (size_t)cap);
    if (!grown)
        return kt_fail(err, KT_ENOMEM, "out of memory recording microphone '%s'", m->name);
    m->signal = grown;
    m->capacity = cap;
    return KT_OK;
}

int room_record_mics(kt_room *room, kt_error *err)
{
    double t = (double)(room->n + 1) * room->plan.grid.time_step_s;
    double scale = room_mic_scale(room);
    for (int k = 0; k < room->plan.mic_count; k++) {
        room_mic *m = &room->plan.mic[k];
        int rc = room_mic_reserve(m, 1, err);
        if (rc < 0)
            return rc;
        double pos[3];
        room_mic_position(m, t, pos);
        if (room->slab) {
            rc = room_slab_mic_sample(room, k, pos, &m->signal[m->count], err);
            if (rc < 0)
                return rc;
        } else {
            m->signal[m->count] = scale * room_mic_difference(room, room->next, room->now, pos);
        }
        m->count++;
    }
    return KT_OK;
}

void room_free_mics(kt_room *room)
{
    for (int k = 0; k < room->plan.mic_count; k++) {
        free(room->plan.mic[k].way);
        free(room->plan.mic[k].signal);
    }
    free(room->plan.mic);
    room->plan.mic = NULL;
    room->plan.mic_count = room->plan.mic_capacity = 0;
}
