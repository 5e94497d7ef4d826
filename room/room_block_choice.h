/* room_block_choice.h - the timed choice of temporal blocking, the same on
 * the CPU (room_block.c) and the GPU (gpu/room_block.cu): what was asked,
 * the candidates (a depth, 1 = one step at a time, and a tile) each timed
 * over a few of the first passes, and the fastest per step, once chosen.
 * Private to room/. */
#ifndef ROOM_BLOCK_CHOICE_H
#define ROOM_BLOCK_CHOICE_H

#include "kt_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ROOM_BLOCK_CANDIDATES 16
typedef struct room_block_choice {
    int ask_depth, ask_tile;     /* asked for: depth 0 timed, 1 off; tile 0 timed */
    int count, timed, tuned;     /* candidates; passes timed so far; chosen */
    int depth[ROOM_BLOCK_CANDIDATES], tile[ROOM_BLOCK_CANDIDATES];
    double best_s[ROOM_BLOCK_CANDIDATES];   /* fastest seconds per step of each */
    int use_depth, use_tile;     /* the choice */
    char name[192];              /* the choice in words (kt_room_blocking and its GPU twin) */
} room_block_choice;

/* The hand-over's band (docs/room.md, "Drums: the hand-over"): the planes
 * every instrument's step touches, its box (stage B's lists, process()'s
 * layers of Psi^n and Psi^{n+1} all lie in it), and one more each side,
 * within the room, into band[0..1]; 0 when the room holds no instrument. */
struct room_plan;
int room_block_band(const struct room_plan *plan, int band[2]);
/* Why a room's instruments keep it from blocking (their band is half its
 * height or more), or NULL. */
const char *room_block_band_obstacle(const struct room_plan *plan);

/* A candidate more, untimed (one already there, or past the table's room, is left out). */
void room_block_choice_add(room_block_choice *b, int depth, int tile);
/* Candidate c ran at per_step_s seconds a step; after `rounds` runs of every
 * candidate the fastest becomes the choice (use_depth, use_tile, tuned):
 * returns 1 when it just did. */
int room_block_choice_timed(room_block_choice *b, int c, double per_step_s, int rounds);
/* The depth and tile asked for (their ranges checked by the caller): a
 * depth of 2 or more is refused with `why` (the room's obstacle, or NULL),
 * `what` naming the blocking in the message; 1 drops the tile. */
int room_block_choice_ask(room_block_choice *b, int depth, int tile, const char *why,
                          const char *what, kt_error *err);
/* The choice in words: "off" where the room cannot be blocked (`why`) or
 * one step at a time was asked for, NULL until the timing has chosen. */
const char *room_block_choice_name(const room_block_choice *b, const char *why);

#ifdef __cplusplus
}
#endif
#endif
