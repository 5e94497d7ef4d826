/* test_room_shape_index.c - the solids' list as a bit index
 * (room_shape_bit_index, room/room_shape.c), which the GPU's two-grid
 * sweep reads to find its nodes' entries without a search: over the host's
 * padded layout and over one re-pitched as the device's rows, every node's
 * bit says whether it is on the list, and a listed node's entry, its word's
 * first plus the bits below it, is its own; a list out of order is refused.
 * A round room in a filled box with a stage, as the bench's round hall. */
#include "kt_test.h"
#include "room_internal.h"

#include <stdlib.h>
#include <string.h>

/* The index over a layout (node[r]: entry r's node in it) against the list. */
static void check_layout(const long long *node, int count, size_t points, const char *name)
{
    const size_t words = (points + 31) / 32;
    uint32_t *word = malloc(words * 2 * sizeof *word);
    int *entry = malloc(points * sizeof *entry);   /* -1: not on the list */
    kt_error err;
    for (size_t j = 0; j < points; j++)
        entry[j] = -1;
    for (int r = 0; r < count; r++)
        entry[node[r]] = r;
    KT_CHECK(room_shape_bit_index(node, count, points, word, &err) == KT_OK, "%s: %s", name,
             err.message);
    long long wrong_bit = 0, wrong_entry = 0, listed = 0;
    for (size_t j = 0; j < points; j++) {
        const uint32_t *w = word + 2 * (j / 32), below = (1u << (j % 32)) - 1u;
        const int bit = (w[0] >> (j % 32)) & 1;
        listed += bit;
        wrong_bit += bit != (entry[j] >= 0);
        if (bit && (int)(w[1] + (uint32_t)__builtin_popcount(w[0] & below)) != entry[j])
            wrong_entry++;
    }
    KT_CHECK(listed == count && wrong_bit == 0 && wrong_entry == 0,
             "%s: %lld of %d listed, %lld bits and %lld entries wrong", name, listed, count,
             wrong_bit, wrong_entry);
    free(word);
    free(entry);
}

int main(void)
{
    kt_room_params p;
    kt_test_node_box(&p, 40, 36, 12, 44100);
    const double *L = p.size_m;
    const kt_room_solid s[3] = {
        kt_test_box_solid(-1, -1, -1, L[0] + 1, L[1] + 1, L[2] + 1, 0.1, 0),
        kt_test_cylinder_solid(0.5 * L[0], 0.5 * L[1], -1, L[2] + 1, 0.47 * L[0], 0.1, 1),
        kt_test_box_solid(-1, 0.35 * L[1], -1, 0.25 * L[0], 0.65 * L[1], 0.3 * L[2], 0.2, 0)};
    kt_room *room = NULL;
    kt_error err;
    int bad = -1;
    KT_CHECK(kt_room_create(&p, &room, &err) == KT_OK, "%s", err.message);
    KT_CHECK(room && kt_room_add_solids(room, s, 3, &bad, &err) == KT_OK, "%s", err.message);
    if (!room || kt_test_failures)
        return kt_test_finish("test_room_shape_index");
    const room_plan *pl = &room->plan;
    const room_shape *sh = &pl->shape;
    KT_CHECK(sh->count > 1000, "%d list nodes", sh->count);
    long long *node = malloc(sizeof *node * (size_t)sh->count);

    /* the host's layout */
    for (int r = 0; r < sh->count; r++)
        node[r] = (long long)sh->node[r];
    check_layout(node, sh->count, pl->padded_points, "host layout");

    /* the device's (room_sweep.cu): rows of 16 doubles' lines, x = 0 on a
     * line after a lead of whole lines */
    const size_t line = 16, h = (size_t)pl->halo;
    const size_t lead = (h + line - 1) / line * line, pitch = (pl->px + line - 1) / line * line;
    const size_t points = room_device_points(pl->px, pl->py, pl->pz, h, sizeof(double));
    for (int r = 0; r < sh->count; r++)
        node[r] = (long long)(lead + sh->node[r] / pl->px * pitch + sh->node[r] % pl->px - h);
    check_layout(node, sh->count, points, "device layout");

    /* refused: two entries out of order, a node beyond the layout */
    const size_t words = (points + 31) / 32;
    uint32_t *word = malloc(words * 2 * sizeof *word);
    long long t = node[7];
    node[7] = node[8];
    node[8] = t;
    KT_CHECK(room_shape_bit_index(node, sh->count, points, word, &err) == KT_EINVAL &&
                 strstr(err.message, "entry 8"),
             "out of order: %s", err.message);
    KT_CHECK(room_shape_bit_index(node, 7, (size_t)node[6], word, &err) == KT_EINVAL,
             "a node beyond the layout accepted");
    free(word);
    free(node);
    kt_room_destroy(room);
    return kt_test_finish("test_room_shape_index");
}
