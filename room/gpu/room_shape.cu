/* room_shape.cu - the solids' stage B of room/room_shape.c on the device:
 * the boundary list of a CPU room's plan re-indexed to the device layout,
 * and the correction after the sweep in room_shape_correct's order of
 * operations (its bits), the lossy nodes' Psi^{n-1} saved before the sweep
 * overwrites it; or, in a two-grid room without absorbing walls, the list
 * as the sweep folds it (room_sweep.cu shape_fold_nodes).  docs/room.md,
 * "Rooms of any shape". */
#include "room_gpu.h"
#include "kt_cuda_rn.cuh"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

/* room_shape.coef of the plan: per wall code the weights 1/v of a blocked
 * leg along x, y, z and lambda beta of the box walls. */
typedef struct shape_coef {
    double f[3];
    double lb;
} shape_coef;

struct cuda_shape {
    int count, lossy;
    long long *node;          /* device indices */
    unsigned char *blocked, *wall;
    double *loss, *saved;     /* lambda beta of the solid faces; Psi^{n-1} (two grids) */
    shape_coef *coef;         /* [27] */
    uint2 *word;              /* the sweep's fold (R->fold): the list's bit index */
    unsigned char *column;    /* and the columns that hold list nodes */
};

template <typename REAL>
__global__ void shape_save(double *__restrict__ saved, const REAL *__restrict__ prev,
                           const long long *__restrict__ node, const double *__restrict__ loss,
                           int count)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < count && loss[r] > 0)
        saved[r] = (double)prev[node[r]];
}

/* room_shape_correct: next' = (next (1 + lb) + B + ls P) / (1 + lb + ls),
 * next + B / (1 + lb) without solid loss; solid nodes to 0.  With two grids
 * next and prev are one field: not restrict. */
template <typename REAL>
__global__ void shape_correct(REAL *next, const REAL *__restrict__ now, const REAL *prev,
                              const double *__restrict__ saved,
                              const long long *__restrict__ node,
                              const unsigned char *__restrict__ blocked,
                              const unsigned char *__restrict__ wall,
                              const double *__restrict__ loss, const shape_coef *__restrict__ coef,
                              int count, double l2, double eta, int three, long long py,
                              long long pz)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= count)
        return;
    const long long i = node[r];
    const unsigned code = wall[r];
    if (code == ROOM_SHAPE_SOLID) {
        next[i] = (REAL)0;
        return;
    }
    const long long off[6] = {1, -1, py, -py, pz, -pz};
    const shape_coef c = coef[code];
    const unsigned b = blocked[r];
    const double ci = (double)now[i], pi = three ? (double)prev[i] : 0.0;
    double c_now = 0, c_prev = 0;
    for (int d = 0; d < 6; d++) {
        if (!(b & (1u << d)))
            continue;
        const double f = c.f[d / 2];
        c_now = rn_add(c_now, rn_mul(f, rn_sub(ci, (double)now[i + off[d]])));
        if (three)
            c_prev = rn_add(c_prev, rn_mul(f, rn_sub(pi, (double)prev[i + off[d]])));
    }
    double B = rn_mul(l2, c_now);
    if (three)
        B = rn_add(B, rn_sub(rn_mul(eta, c_now), rn_mul(eta, c_prev)));
    const double ls = loss[r], one_lb = rn_add(1.0, c.lb);
    if (ls == 0) {
        next[i] = rn_field_add(next[i], __ddiv_rn(B, one_lb));
        return;
    }
    const double P = three ? pi : saved[r];
    const double nx = (double)next[i];
    const double num = rn_add(rn_add(rn_mul(nx, one_lb), B), rn_mul(ls, P));
    next[i] = (REAL)__ddiv_rn(num, rn_add(one_lb, ls));
}

/* ---- host side ---- */

/* Per column the planes its air spans (room_shape.zspan): R->zrange,
 * empty columns [nz, 0). */
static int air_columns(kt_cuda_room *R, const room_shape *sh, kt_error *err)
{
    const size_t columns = (size_t)R->plan.grid.nx * R->plan.grid.ny;
    int2 *t = (int2 *)malloc(sizeof *t * columns);
    if (!t)
        return kt_fail(err, KT_ENOMEM, "out of memory for the air's extent");
    for (size_t c = 0; c < columns; c++) {
        const int32_t *z = sh->zspan + 2 * c;
        t[c] = z[0] < z[1] ? make_int2(z[0], z[1]) : make_int2(R->plan.grid.nz, 0);
    }
    int rc = room_gpu_upload(&R->zrange, (const int2 *)t, columns, err);
    free(t);
    return rc;
}

/* The list as the two-grid sweep folds it: a bit per device node and the
 * entry of each 32 nodes' first (the list is sorted by node, and the
 * device's rows keep the host's order), so that a thread finds its nodes'
 * entries by an index, not a search (room_sweep.cu shape_fold_nodes). */
static int fold_setup(kt_cuda_room *R, const room_shape *sh, const long long *idx,
                      kt_error *err)
{
    cuda_shape *S = R->shape;
    const size_t words = (R->points + 31) / 32;
    uint32_t *word = (uint32_t *)malloc(words * 2 * sizeof *word);
    if (!word)
        return kt_fail(err, KT_ENOMEM, "out of memory for the solids on the GPU");
    int rc = room_shape_bit_index(idx, sh->count, R->points, word, err);
    if (rc == KT_OK)
        rc = room_gpu_upload(&S->word, (const uint2 *)word, words, err);
    free(word);
    const int nx = R->plan.grid.nx, ny = R->plan.grid.ny;
    unsigned char *col = rc == KT_OK ? (unsigned char *)calloc((size_t)nx * ny, 1) : NULL;
    if (rc == KT_OK && !col)
        rc = kt_fail(err, KT_ENOMEM, "out of memory for the solids on the GPU");
    for (int r = 0; rc == KT_OK && r < sh->count; r++)
        kt_cuda_room_mark_column(R, col, sh->node[r]);
    if (rc == KT_OK)
        rc = room_gpu_upload(&S->column, (const unsigned char *)col, (size_t)nx * ny, err);
    free(col);
    if (rc < 0)
        return rc;
    R->fold.word = S->word;
    R->fold.column = S->column;
    R->fold.blocked = S->blocked;
    R->fold.wall = S->wall;
    R->fold.loss = S->loss;
    R->fold.coef = (const double *)S->coef;
    return KT_OK;
}

int kt_cuda_shape_setup(kt_cuda_room *R, const room_plan *cpu, kt_error *err)
{
    const room_shape *sh = &cpu->shape;
    if (sh->solid_count == 0)
        return KT_OK;
    if (R->plan.st || R->plan.fcc)
        return kt_fail(err, KT_ENOTSUP, "rooms with solids run the 7-point air scheme only");
    cuda_shape *S = (cuda_shape *)calloc(1, sizeof *S);
    if (!S)
        return kt_fail(err, KT_ENOMEM, "out of memory for the solids on the GPU");
    R->shape = S;
    S->count = sh->count;
    S->lossy = sh->lossy;
    long long *idx = (long long *)malloc(sizeof *idx * (size_t)(sh->count ? sh->count : 1));
    if (!idx)
        return kt_fail(err, KT_ENOMEM, "out of memory for the solids on the GPU");
    for (int r = 0; r < sh->count; r++)
        idx[r] = kt_cuda_room_device_index(R, sh->node[r]);
    const size_t n = (size_t)sh->count;
    int rc = room_gpu_upload(&S->node, (const long long *)idx, n, err);
    if (rc == KT_OK)
        rc = room_gpu_upload(&S->blocked, (const unsigned char *)sh->blocked, n, err);
    if (rc == KT_OK)
        rc = room_gpu_upload(&S->wall, (const unsigned char *)sh->wall, n, err);
    if (rc == KT_OK)
        rc = room_gpu_upload(&S->loss, (const double *)sh->loss, n, err);
    if (rc == KT_OK)
        rc = room_gpu_upload(&S->coef, (const shape_coef *)sh->coef, 27, err);
    /* the sweep packs an entry in 28 bits (room_sweep.cu fold_at) */
    const int fold = R->plan.grids == 2 && !R->abc_sums && sh->count < (1 << 28);
    if (rc == KT_OK && S->lossy && R->plan.grids == 2 && !fold)
        rc = kt_cuda_alloc(sizeof(double) * (n ? n : 1), (void **)&S->saved, err);
    if (rc == KT_OK && fold)
        rc = fold_setup(R, sh, idx, err);
    free(idx);
    return rc == KT_OK ? air_columns(R, sh, err) : rc;
}

void kt_cuda_shape_free(kt_cuda_room *R)
{
    cuda_shape *S = R->shape;
    if (!S)
        return;
    kt_cuda_free(S->node);
    kt_cuda_free(S->blocked);
    kt_cuda_free(S->wall);
    kt_cuda_free(S->loss);
    kt_cuda_free(S->saved);
    kt_cuda_free(S->coef);
    kt_cuda_free(S->word);
    kt_cuda_free(S->column);
    kt_cuda_free(R->zrange);
    R->zrange = NULL;
    memset(&R->fold, 0, sizeof R->fold);
    free(S);
    R->shape = NULL;
}

void kt_cuda_shape_save_on(kt_cuda_room *R, cudaStream_t stream)
{
    const cuda_shape *S = R->shape;
    if (!S || !S->saved || S->count == 0)
        return;
    const unsigned blocks = kt_cuda_blocks(S->count, KT_CUDA_BLOCK);
    if (R->plan.params.precision == KT_SINGLE)
        shape_save<float><<<blocks, KT_CUDA_BLOCK, 0, stream>>>(S->saved, (const float *)R->prev,
                                                                 S->node, S->loss, S->count);
    else
        shape_save<double><<<blocks, KT_CUDA_BLOCK, 0, stream>>>(
            S->saved, (const double *)R->prev, S->node, S->loss, S->count);
}

template <typename REAL> static void launch_correct(kt_cuda_room *R, cudaStream_t stream)
{
    const cuda_shape *S = R->shape;
    shape_correct<REAL><<<kt_cuda_blocks(S->count, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, stream>>>(
        (REAL *)R->next, (const REAL *)R->now, (const REAL *)R->prev, S->saved, S->node,
        S->blocked, S->wall, S->loss, S->coef, S->count, R->plan.l2, R->plan.eta,
        R->plan.grids == 3, (long long)R->pitch, (long long)R->plane);
}

void kt_cuda_shape_correct_on(kt_cuda_room *R, cudaStream_t stream)
{
    if (!R->shape || R->shape->count == 0 || R->fold.word)   /* folded: the sweep did it */
        return;
    if (R->plan.params.precision == KT_SINGLE)
        launch_correct<float>(R, stream);
    else
        launch_correct<double>(R, stream);
}
