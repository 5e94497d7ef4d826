/* room_slab.h - a room split into slabs of z-planes, one slab per rank
 * (issue #7; docs/room.md, "Slabs and ranks").  Private to room/.
 *
 * Rank r owns planes z_begin[r] .. z_begin[r+1]-1; its fields hold them plus
 * one halo plane on each side, which carries the neighbour's plane instead of
 * the walls' ghosts (the box's own walls keep theirs).  The step (room_slab.c):
 * post the exchange of Psi^n's first and last owned planes, sweep the interior
 * planes while they travel, wait, record the microphone samples that waited
 * for the plane above, sweep the two boundary planes; stages B and C act on
 * owned nodes; each instrument runs on the rank owning the top plane of its
 * box, with the box's window of the plane below borrowed from the rank under
 * it when the box crosses down; microphones are recorded by the rank owning
 * the lower plane of their cell.  Every point sees the same operations in
 * the same order as in a whole room, so the bits match any rank count.
 *
 * The transport (MPI in room_mpi.c) is reached only through room_transport,
 * so this file builds and links without MPI. */
#ifndef ROOM_SLAB_H
#define ROOM_SLAB_H

#include "room_internal.h"
#include "room_ranks.h"
#include "kt_ranks.h"

typedef struct room_transport {
    /* Post the exchange of `field`'s first and last owned planes with the
     * neighbour ranks (into their halo planes); test lets it progress;
     * finish waits for it. */
    int (*halo_start)(void *ctx, kt_room *room, void *field, kt_error *err);
    void (*halo_test)(void *ctx);
    int (*halo_finish)(void *ctx, kt_error *err);
    /* Blocking point-to-point transfer of bytes with a peer rank. */
    int (*send)(void *ctx, int peer, int tag, const void *buf, size_t bytes, kt_error *err);
    int (*recv)(void *ctx, int peer, int tag, void *buf, size_t bytes, kt_error *err);
    /* Collective: 1 when flag is non-zero on any rank. */
    int (*any)(void *ctx, int flag);
    void (*destroy)(void *ctx);
} room_transport;

/* The energy's rows passed along a room split along x (room_energy.c): a
 * tag no instrument's window or microphone's signal uses. */
#define ROOM_ENERGY_TAG 0x7ffe

/* A microphone sample whose cell's upper plane is the next rank's. */
typedef struct slab_deferred {
    int mic;
    int64_t sample;
    double pos[3];
} slab_deferred;

struct room_slab {
    int rank, ranks;
    int axis;                        /* 0, 1, 2: split along x, y, z */
    int *cut;                        /* ranks + 1 entries: rank r's first index along axis */
    const room_transport *tp;
    void *ctx;
    slab_deferred *defer;
    int defer_count, defer_capacity;
    unsigned char *stage;            /* an instrument's window in transit */
    size_t stage_bytes;
    int bad_plane;                   /* a layer an instrument touched out of reach, or -1 */
    int bad_column[2];               /* another rank's (x, y) it touched, or -1 */
};

/* The first index of each of `ranks` balanced slabs of n (ranks + 1 entries). */
void room_slab_split(int n, int ranks, int *cut);
/* The axis a room is split along over `ranks` and each rank's first index
 * along it (cut: ranks + 1 entries), as kt_split_options ask (kt_ranks.h). */
int room_slab_choose(const kt_room_params *p, int ranks, const kt_split_options *so, int *axis,
                     int *cut, kt_error *err);

/* The rank that steps an instrument (the owner of its box's top plane) and
 * whether it borrows the rank below's top plane: room_ranks.h. */
int room_slab_runner(const struct room_slab *slab, const kt_instrument *ins, int *borrow);
/* Makes `room` (built by room_create_box for cut[rank] .. cut[rank+1]-1
 * along axis) rank `rank`'s slab; takes ctx (destroyed with the room, also
 * on failure). */
int room_slab_attach(kt_room *room, int rank, int ranks, int axis, const int *cut,
                     const room_transport *tp, void *ctx, kt_error *err);
void room_slab_free(struct room_slab *slab);
/* The rank owning index i along the split axis. */
int room_slab_owner(const struct room_slab *slab, int i);
/* The nodes this rank owns: lo .. hi-1. */
void room_slab_box(const kt_room *room, int lo[3], int hi[3]);
/* Refuses an instrument whose box crosses a cut along x or y. */
int room_slab_check_instrument(const kt_room *room, const kt_instrument *ins, kt_error *err);
/* A rank's layer c along the split axis x or y (its own rows and planes) of
 * `field` packed into buf (out = 1) or unpacked from it; its bytes (buf
 * NULL: only those). */
size_t room_slab_layer_copy(const kt_room *room, void *field, int c, void *buf, int out);
/* Marks node column (x, y), another rank's, touched by an instrument. */
void room_slab_column_touched(const kt_room *room, int x, int y);

/* The step's stages on a slab (room_step.c calls them). */
int room_slab_sweep(kt_room *room, kt_error *err);
int room_slab_instruments(kt_room *room, kt_error *err);
int room_slab_mic_sample(kt_room *room, int mic, const double pos[3], double *out,
                         kt_error *err);
int room_slab_unstable(const kt_room *room);
/* Whether layer z is within reach of kt_room_read_layer/add_to_layer here:
 * owned, or (inside a step) a halo plane; marks an instrument's reach beyond. */
int room_slab_layer_ok(const kt_room *room, int z);
/* Records the waiting microphone samples: Psi^{n+1} - Psi^n is now - prev. */
void room_slab_record_deferred(kt_room *room);
/* Collective: both fields' halo planes brought from the neighbours (the
 * energy's legs across a boundary read them); the planes a step's own
 * exchange would bring, so stepping on is unchanged. */
int room_slab_refresh_halos(kt_room *room, kt_error *err);

#endif
