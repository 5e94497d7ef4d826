/* kt_room_state.h - a room's state in a checkpoint (room/room_state.c), and
 * the scan of its field the render's guard makes. */
#ifndef KT_ROOM_STATE_H
#define KT_ROOM_STATE_H

#include "kettle.h"
#include "kt_state.h"

/* Bytes kt_room_save_state writes: both field buffers and the microphone signals. */
size_t kt_room_state_bytes(const kt_room *room);
/* Step index, Psi^n and Psi^{n-1} (padded, in the room's precision) and every
 * microphone's samples so far; on a room split over ranks, this rank's slab
 * and part of the signals (after kt_room_flush; loaded into the same slab). */
int kt_room_save_state(const kt_room *room, kt_state_io *io, kt_error *err);
/* Into a room built from the same parameters with the same microphones;
 * anything else is refused with a message. */
int kt_room_load_state(kt_room *room, kt_state_io *io, kt_error *err);
/* Keep only the first `samples` samples of every microphone. */
void kt_room_truncate_mics(kt_room *room, int64_t samples);

/* Largest |Psi^n| over the room, and the first node holding a NaN or an
 * infinity (scan order z, y, x).  *bad is 0 (all finite), 1 (infinity) or
 * 2 (NaN); node[] is that node, or the largest one when all are finite. */
typedef struct kt_field_scan {
    double max_abs;
    int bad;
    int node[3];
} kt_field_scan;
/* Collective on a room split over ranks: the whole room's scan on every rank. */
void kt_room_scan_field(const kt_room *room, kt_field_scan *scan);

#endif
