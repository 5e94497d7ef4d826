/* room_stencil_coef.cuh - what every stencil kernel of the room takes from
 * the host (room_stencil.cu's generic kernel, room_stencil_iwb.cu,
 * room_stencil_ring.cu): the grid's sizes, z slab and device strides, and
 * the coefficients as the CPU's room_scheme_setup makes them (the same
 * operations in the same order, then rounded to REAL as the CPU sweep
 * rounds them), so the kernels give the CPU's bits. */
#ifndef ROOM_STENCIL_COEF_CUH
#define ROOM_STENCIL_COEF_CUH

#include "room_gpu.h"
extern "C" {
#include "room_internal.h"
}
#include <string.h>

/* K: any of the kernels' coefficient structs (fields nx, ny, nz, zslab,
 * origin, py, pz, centre and l2w[] with room for the stencil's pairs). */
template <typename K> static void stencil_coefficients(const kt_cuda_room *R, K *k)
{
    typedef decltype(k->centre) REAL;
    const room_stencil *st = R->st;
    memset(k, 0, sizeof *k);
    double sum = 0;
    for (int q = 0; q < st->pairs; q++) {
        sum += 2 * st->w[q];
        k->l2w[q] = (REAL)(R->l2 * st->w[q]);
    }
    k->centre = (REAL)(2 - R->l2 * sum);
    k->nx = R->grid.nx;
    k->ny = R->grid.ny;
    k->nz = R->grid.nz;
    k->zslab = (R->grid.nz + R->slabs - 1) / R->slabs;
    k->origin = kt_cuda_room_index(R, 0, 0, 0);
    k->py = (long long)R->pitch;
    k->pz = (long long)R->plane;
}

#endif
