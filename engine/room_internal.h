/* room_internal.h - the room's private state, shared by the engine/room*.c
 * files and by nothing else.
 *
 * Fields are stored padded with one zero node on every side (a halo of
 * zeros, thesis 5.1.2): the fused sweep then needs no neighbour tests, and
 * the halo costs O(surface), not O(volume).  A padded index is
 *   ((z+1)*py + (y+1))*px + (x+1),  px = nx+2, py = ny+2.
 * Public linear indices (z*ny + y)*nx + x are converted at the API edge. */
#ifndef ROOM_INTERNAL_H
#define ROOM_INTERNAL_H

#include "kettle.h"
#include "kt_instrument.h"

#include <stddef.h>
#include <stdint.h>

/* One registered instrument with the room's own copy of its boundary list. */
typedef struct room_instrument {
    kt_instrument *ins;
    size_t *node;                /* padded indices of its list nodes */
    uint8_t *blocked;            /* blocked-leg masks (complement of the open mask) */
    int count;
    size_t *leg;                 /* each blocked leg once: padded index of its lower end */
    uint8_t *leg_axis;           /* 0, 1, 2 = the leg points +x, +y, +z from that end */
    int leg_count;
} room_instrument;

/* A soft source: samples added to Psi^{n+1} at one node from step first_level on. */
typedef struct room_source {
    size_t node;                 /* padded index */
    int64_t first_level;         /* time level n+1 that gets samples[0] */
    double *samples;
    int64_t count;
} room_source;

typedef struct room_waypoint {
    double time_s;
    double pos_m[3];
} room_waypoint;

typedef struct room_mic {
    char name[64];
    double pos_m[3];
    room_waypoint *way;
    int way_count, way_capacity;
    double *signal;
    int64_t count, capacity;
} room_mic;

struct kt_room {
    kt_room_params params;
    kt_room_grid grid;
    int nthreads;
    size_t px, py, pz, plane;    /* padded dimensions; plane = px*py */
    size_t padded_points;
    int grids;                   /* 2, or 3 with viscosity */
    void *field[3];              /* allocated buffers */
    void *now, *prev, *next;     /* Psi^n, Psi^{n-1}, where Psi^{n+1} goes (== prev in 2-grid) */
    /* Scheme coefficients (design note 2.2, 2.3). */
    double lambda, l2, eta;
    double loss_minus, loss_inv; /* 1 - lambda*beta and 1/(1 + lambda*beta) */
    int64_t n;
    int in_step;                 /* 1 while instruments' process() run */
    room_instrument *ins;
    int ins_count, ins_capacity;
    room_source *src;
    int src_count, src_capacity;
    room_mic *mic;
    int mic_count, mic_capacity;
    kt_room_timing timing;
};

/* Offsets of the six neighbours in the padded layout, in enum kt_leg order
 * (+x, -x, +y, -y, +z, -z). */
void room_leg_offsets(const kt_room *room, ptrdiff_t off[6]);

/* Padded index of node (x, y, z). */
static inline size_t room_pidx(const kt_room *room, int x, int y, int z)
{
    return ((size_t)(z + 1) * room->py + (size_t)(y + 1)) * room->px + (size_t)(x + 1);
}

/* Field access whatever the precision. */
static inline double room_get(const kt_room *room, const void *f, size_t i)
{
    return room->params.precision == KT_SINGLE ? (double)((const float *)f)[i]
                                               : ((const double *)f)[i];
}
static inline void room_add(const kt_room *room, void *f, size_t i, double v)
{
    if (room->params.precision == KT_SINGLE)
        ((float *)f)[i] += (float)v;
    else
        ((double *)f)[i] += v;
}

/* The fused bulk update (stage A) for one precision (room_sweep.c). */
void room_sweep(kt_room *room);
/* Stage B: every registered instrument's boundary-list correction (room_step.c). */
void room_boundary_corrections(kt_room *room);
/* Stage C (room_sources.c). */
void room_apply_sources(kt_room *room);
/* Stage E (room_mics.c). */
int room_record_mics(kt_room *room, kt_error *err);
void room_free_sources(kt_room *room);
/* Where microphone m is at time t (seconds): fixed, or along its waypoints. */
void room_mic_position(const room_mic *m, double t, double pos[3]);
void room_free_mics(kt_room *room);
/* Nearest node to a position, or -1 with a message when outside the room. */
int room_nearest_node(const kt_room *room, const double pos_m[3], int node[3], kt_error *err);
/* Checks that a position lies inside the room (a message names `what`). */
int room_check_position(const kt_room *room, const double pos_m[3], const char *what,
                        kt_error *err);

#endif
