/* kt_instrument.h - how an instrument lives inside a room (thesis 7.5.1).
 *
 * The room does one fused sweep per step over the whole grid with box-only
 * neighbour counts.  An embedded instrument then changes the air in two ways:
 *  (a) a boundary list: air nodes some of whose legs are blocked by a rigid
 *      body (a drum's shell and the lid under its membrane).  After the sweep
 *      the room corrects them:  Psi_i^{n+1} += lambda^2 * sum_{blocked j}
 *      (Psi_i^n - Psi_j^n)  (design note 7.2 B), plus the viscous part;
 *  (b) process(): called after the sweep, the list corrections and the
 *      sources (in a split step, kt_room_set_overlap, after those of its
 *      process_z planes, beside the other instruments and the rest of the
 *      sweep); it reads the predicted layers around its membrane, advances
 *      itself, and corrects those layers (stage 6) through the calls below.
 * The room owns registered instruments and calls destroy() when it is
 * destroyed; kt_room_remove_instrument hands one back. */
#ifndef KT_INSTRUMENT_H
#define KT_INSTRUMENT_H

#include "kettle.h"

/* Bits of a boundary node's open-leg mask: 1 = the leg to that neighbour is open. */
enum kt_leg {
    KT_LEG_XP = 1 << 0, KT_LEG_XM = 1 << 1, /* east, west  (+x, -x) */
    KT_LEG_YP = 1 << 2, KT_LEG_YM = 1 << 3, /* north, south (+y, -y) */
    KT_LEG_ZP = 1 << 4, KT_LEG_ZM = 1 << 5, /* up, down    (+z, -z) */
    KT_LEG_ALL = 63
};

/* An instrument that also runs on the GPU gives a table of these (the drum's
 * is in instruments/gpu/timpani_gpu.cu); the room's device mirror
 * (room/gpu/room_step.cu, kt_cuda_room.h) drives them.  Streams and events
 * are CUDA's (cudaStream_t, cudaEvent_t[2]) passed as pointers, so that C
 * reads this header.  create: the instrument's device object, in the
 * device room R, its library handles bound to `stream`.  update: re-read
 * what tension or damping change (stream idle).  launch: its stage of one
 * step on `stream`, reading and correcting the layers of `next` (the room's
 * Psi^{n+1}, single or double), *step_n the room's step index on the
 * device; marks (may be NULL): two events to record inside its stage;
 * returns 1 when it recorded them, 0 when not, negative on failure.  wait:
 * `stream` waits for this step's stage where it ran on its own stream (after
 * every instrument's launch).  join: `stream` waits for all its work on its
 * own stream.  download: its device state back into the CPU object
 * (KT_EUNSTABLE when it blew up, *bad_after the steps it took since the last
 * download before the step that failed).  destroy: frees the object. */
struct kt_cuda_room;
typedef struct kt_instrument_gpu {
    int (*create)(void *self, const struct kt_cuda_room *R, void *stream, void **out,
                  kt_error *err);
    int (*update)(void *dev, kt_error *err);
    int (*launch)(void *dev, void *next, int single, const long long *step_n, void *stream,
                  void *marks, kt_error *err);
    void (*wait)(void *dev, void *stream);
    void (*join)(void *dev, void *stream);
    int (*download)(void *dev, void *stream, int64_t *bad_after, kt_error *err);
    void (*destroy)(void *dev);
} kt_instrument_gpu;

typedef struct kt_instrument {
    const char *kind;                 /* "timpani", for messages */
    char name[64];                    /* the user's name for it, for messages */
    void *self;
    int box_lo[3], box_hi[3];         /* inclusive node box it touches; boxes of two
                                         instruments in one room may not intersect */
    const int64_t *boundary_node;     /* linear indices of boundary-list nodes */
    const uint8_t *boundary_open;     /* their open-leg masks (enum kt_leg) */
    int boundary_count;
    int (*process)(void *self, kt_room *room, kt_error *err);
    double (*energy)(const void *self); /* its energy at n-1/2 after a step, or NULL */
    void (*destroy)(void *self);
    const kt_instrument_gpu *gpu;     /* its GPU form, or NULL: CPU only (a device
                                         mirror refuses it when it has a process()) */
    int process_z[2];                 /* the planes lo..hi (inside its box) of Psi^{n+1}
                                         that process() reads or corrects; {0, 0}: any
                                         of its box.  A split step (kt_room_set_overlap)
                                         sweeps them before process() and the rest of
                                         the box beside it */
} kt_instrument;

int kt_room_remove_instrument(kt_room *room, kt_instrument *ins);

/* Which time level a layer call addresses. */
typedef enum kt_time_level { KT_NOW = 0, KT_NEXT = 1 } kt_time_level;

/* Copy the wx*wy window (x0..x0+wx-1, y0..y0+wy-1) of layer z of Psi^n
 * (KT_NOW) or of Psi^{n+1} (KT_NEXT, valid inside process()) into out[i*wy + j]
 * (i along x), as doubles whatever the room's precision. */
void kt_room_read_layer(const kt_room *room, kt_time_level level, int z, int x0, int y0,
                        int wx, int wy, double *out);
/* Psi^{n+1} += scale * v on the same kind of window (valid inside process()). */
void kt_room_add_to_layer(kt_room *room, int z, int x0, int y0, int wx, int wy,
                          const double *v, double scale);

#endif
