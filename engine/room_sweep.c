/* room_sweep.c - stage A of the step (design note 7.2): the fused bulk
 * update of the whole room, compiled once per precision from
 * room_sweep_impl.h so the two precisions share one source. */
#include "room_internal.h"

#define REAL double
#define SWEEP_NAME(x) x##_double
#include "room_sweep_impl.h"
#undef REAL
#undef SWEEP_NAME

#define REAL float
#define SWEEP_NAME(x) x##_float
#include "room_sweep_impl.h"
#undef REAL
#undef SWEEP_NAME

void room_sweep_planes(kt_room *room, int za, int zb)
{
    if (room->params.precision == KT_SINGLE)
        sweep_float(room, za, zb);
    else
        sweep_double(room, za, zb);
}

void room_sweep(kt_room *room)
{
    if (room->st) {
        room_stencil_sweep(room);
        return;
    }
    room_sweep_planes(room, 0, room->grid.nz);
}
