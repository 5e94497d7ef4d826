/* room_stencil_coef.cuh - what every stencil kernel of the room takes from
 * the host (room_stencil.cu, room_stencil_iwb.cu, room_stencil_ring.cu): the
 * grid's sizes, z slab and device strides, and the plan's coefficients
 * rounded to REAL as the CPU sweep rounds them: the CPU's bits. */
#ifndef ROOM_STENCIL_COEF_CUH
#define ROOM_STENCIL_COEF_CUH

#include "room_gpu.h"
#include <string.h>

/* K: any of the kernels' coefficient structs (fields nx, ny, nz, zslab,
 * origin, py, pz, centre and l2w[] with room for the stencil's pairs). */
template <typename K> static void stencil_coefficients(const kt_cuda_room *R, K *k)
{
    typedef decltype(k->centre) REAL;
    memset(k, 0, sizeof *k);
    for (int q = 0; q < R->plan.st->pairs; q++)
        k->l2w[q] = (REAL)R->plan.st_l2w[q];
    k->centre = (REAL)R->plan.st_centre;
    k->nx = R->plan.grid.nx;
    k->ny = R->plan.grid.ny;
    k->nz = R->plan.grid.nz;
    k->zslab = (R->plan.grid.nz + R->slabs - 1) / R->slabs;
    k->origin = kt_cuda_room_index(R, 0, 0, 0);
    k->py = (long long)R->pitch;
    k->pz = (long long)R->plane;
}

#endif
