/* room_block_choice.c - the candidates of temporal blocking and the timed
 * choice among them (room_block_choice.h), for the CPU's and the GPU's
 * blocked passes alike. */
#include "room_block_choice.h"
#include "room_plan.h"
#include "kt_instrument.h"

#include <math.h>

int room_block_band(const room_plan *plan, int band[2])
{
    const int nz = plan->grid.nz;
    band[0] = nz;
    band[1] = -1;
    for (int k = 0; k < plan->ins_count; k++) {
        const kt_instrument *ins = plan->ins[k].ins;
        band[0] = ins->box_lo[2] - 1 < band[0] ? ins->box_lo[2] - 1 : band[0];
        band[1] = ins->box_hi[2] + 1 > band[1] ? ins->box_hi[2] + 1 : band[1];
    }
    band[0] = band[0] < 0 ? 0 : band[0];
    band[1] = band[1] > nz - 1 ? nz - 1 : band[1];
    return plan->ins_count > 0;
}

const char *room_block_band_obstacle(const room_plan *plan)
{
    int band[2];
    if (room_block_band(plan, band) && 2 * (band[1] - band[0] + 1) >= plan->grid.nz)
        return "the instruments' planes, stepped one at a time, are half the room's height "
               "or more: the room keeps the one-step sweep";
    return NULL;
}

void room_block_choice_add(room_block_choice *b, int depth, int tile)
{
    for (int c = 0; c < b->count; c++)
        if (b->depth[c] == depth && b->tile[c] == tile)
            return;
    if (b->count < ROOM_BLOCK_CANDIDATES) {
        b->depth[b->count] = depth;
        b->tile[b->count] = tile;
        b->best_s[b->count++] = INFINITY;
    }
}

int room_block_choice_timed(room_block_choice *b, int c, double per_step_s, int rounds)
{
    if (per_step_s < b->best_s[c])
        b->best_s[c] = per_step_s;
    if (++b->timed < b->count * rounds)
        return 0;
    int best = 0;
    for (int i = 1; i < b->count; i++)
        if (b->best_s[i] < b->best_s[best])
            best = i;
    b->use_depth = b->depth[best];
    b->use_tile = b->tile[best];
    b->tuned = 1;
    return 1;
}

int room_block_choice_ask(room_block_choice *b, int depth, int tile, const char *why,
                          const char *what, kt_error *err)
{
    if (depth >= 2 && why)
        return kt_fail(err, KT_EINVAL, "%s cannot apply: %s", what, why);
    b->ask_depth = depth;
    b->ask_tile = depth == 1 ? 0 : tile;
    return KT_OK;
}

const char *room_block_choice_name(const room_block_choice *b, const char *why)
{
    if (why || b->ask_depth == 1)
        return "off";
    return b->tuned ? b->name : NULL;
}
