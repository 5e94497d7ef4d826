/* kt_timpani_state.h - a drum's state in a checkpoint
 * (instruments/timpani_state.c), and the scan of its head the guard makes. */
#ifndef KT_TIMPANI_STATE_H
#define KT_TIMPANI_STATE_H

#include "kt_room_state.h"
#include "timpani.h"

size_t kt_timpani_state_bytes(const kt_timpani *t);
/* Steps, tension, damping, u^n, u^{n-1}, a^n, I23 u^n, I23 u^{n-1}, the two
 * window buffers D^n, D^{n-1}, and the strike count (as a check). */
int kt_timpani_save_state(const kt_timpani *t, kt_state_io *io, kt_error *err);
/* Into a drum created from the same parameters in the same room. */
int kt_timpani_load_state(kt_timpani *t, kt_state_io *io, kt_error *err);
/* Largest |u^n| over the head; *bad as for kt_room_scan_field. */
double kt_timpani_scan(const kt_timpani *t, int *bad);
const char *kt_timpani_name(const kt_timpani *t);

#endif
