/* room_abc.cu - the Engquist-Majda absorbing walls on the GPU, mirroring
 * engine/room_abc.c and room_abc_impl.h (docs/room.md, "Absorbing walls"):
 * after the 7-point sweep, Mur's second-order update overwrites the
 * interior nodes of the six faces and the first-order diagonal update the
 * twelve edges and eight corners.
 *
 * The face state (b^{n-1} and i^{n-1}, thesis Fig. 5.3) has the CPU's
 * remapped layout, one device allocation: face F, layer l, slow s, fast f at
 * base_F + (l n_slow + s) n_fast + f.  Faces 2 to 5 run their fast index
 * along the grid's x, so a warp reads and writes the state and the field's
 * face rows in whole lines; faces 0 and 1 (x = 0, nx-1) stride through the
 * field but read their state contiguously.  One launch does all six faces
 * (blockIdx.y picks the face), one all twenty lines: every update writes a
 * boundary node no other update reads, so their order is free.
 *
 * The state always equals the face layers of Psi^{n-1} at the start of a
 * step, so after an upload it is rebuilt from the uploaded Psi^{n-1} (as
 * room_abc_sync after a checkpoint).  Sums in the CPU's order with the _rn
 * intrinsics: the CPU's bits. */
#include "kt_cuda.h"
#include "kt_cuda_internal.h"
#include "kt_cuda_rn.cuh"

#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

typedef struct gpu_face {
    long long origin, fast, slow, inward; /* device index of (fast 0, slow 0); steps */
    long long base;                       /* first state element of the face */
    int n_fast, n_slow;
} gpu_face;

typedef struct gpu_line {
    long long origin, along, diag;
    int count;
    double r;
} gpu_line;

typedef struct abc_geom {
    gpu_face face[6];
    gpu_line line[20];
    double r, s, t;
    int most;                             /* largest face interior, largest line */
} abc_geom;

/* Face F's interior node k: its field index p and state index e (layer 0). */
__device__ __forceinline__ bool face_node(const gpu_face &fc, long long k, long long *p,
                                          long long *e)
{
    const int inner = fc.n_fast - 2;
    if (k >= (long long)inner * (fc.n_slow - 2))
        return false;
    const int f = 1 + (int)(k % inner), sl = 1 + (int)(k / inner);
    *p = fc.origin + sl * fc.slow + f * fc.fast;
    *e = fc.base + (long long)sl * fc.n_fast + f;
    return true;
}

/* D_T u = u(-f) + u(+f) + u(-s) + u(+s) - 4 u, in room_abc_impl.h's order. */
template <typename REAL>
__device__ __forceinline__ REAL face_laplacian(const REAL *__restrict__ now, long long p,
                                               long long fast, long long slow, REAL u)
{
    REAL v = rn_add(rn_add(rn_add(now[p - fast], now[p + fast]), now[p - slow]), now[p + slow]);
    return rn_sub(v, rn_mul((REAL)4, u));
}

template <typename REAL>
__global__ void abc_faces(REAL *__restrict__ next, const REAL *__restrict__ now,
                          REAL *__restrict__ state, abc_geom g)
{
    const gpu_face &fc = g.face[blockIdx.y];
    long long p, e;
    if (!face_node(fc, (long long)blockIdx.x * blockDim.x + threadIdx.x, &p, &e))
        return;
    const long long q = p + fc.inward, layer = (long long)fc.n_fast * fc.n_slow;
    const REAL r = (REAL)g.r, s = (REAL)g.s, t = (REAL)g.t;
    const REAL b = now[p], i = now[q];
    const REAL lap_b = face_laplacian(now, p, fc.fast, fc.slow, b);
    const REAL lap_i = face_laplacian(now, q, fc.fast, fc.slow, i);
    REAL v = rn_sub(rn_mul(r, rn_add(next[q], state[e])), state[e + layer]);
    v = rn_add(v, rn_mul(s, rn_add(b, i)));
    next[p] = rn_add(v, rn_mul(t, rn_add(lap_b, lap_i)));
    state[e] = b;
    state[e + layer] = i;
}

template <typename REAL>
__global__ void abc_lines(REAL *__restrict__ next, const REAL *__restrict__ now, abc_geom g)
{
    const gpu_line &ln = g.line[blockIdx.y];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= ln.count)
        return;
    const long long p = ln.origin + (long long)j * ln.along, d = p + ln.diag;
    next[p] = rn_add(now[d], rn_mul((REAL)ln.r, rn_sub(next[d], now[p])));
}

/* state <- the face and inward layers of prev. */
template <typename REAL>
__global__ void abc_sync(REAL *__restrict__ state, const REAL *__restrict__ prev, abc_geom g)
{
    const gpu_face &fc = g.face[blockIdx.y];
    long long p, e;
    if (!face_node(fc, (long long)blockIdx.x * blockDim.x + threadIdx.x, &p, &e))
        return;
    state[e] = prev[p];
    state[e + (long long)fc.n_fast * fc.n_slow] = prev[p + fc.inward];
}

/* ---- host side: room_abc.c's faces, edges and corners on the device layout ---- */

static double mur1(double courant)
{
    return (courant - 1) / (courant + 1);
}

static void set_faces(const kt_cuda_room *R, abc_geom *g)
{
    const int nx = R->grid.nx, ny = R->grid.ny, nz = R->grid.nz;
    const long long X = 1, Y = (long long)R->pitch, Z = (long long)R->plane;
    const gpu_face f[6] = {
        {kt_cuda_room_index(R, 0, 0, 0), Y, Z, X, 0, ny, nz},
        {kt_cuda_room_index(R, nx - 1, 0, 0), Y, Z, -X, 0, ny, nz},
        {kt_cuda_room_index(R, 0, 0, 0), X, Z, Y, 0, nx, nz},
        {kt_cuda_room_index(R, 0, ny - 1, 0), X, Z, -Y, 0, nx, nz},
        {kt_cuda_room_index(R, 0, 0, 0), X, Y, Z, 0, nx, ny},
        {kt_cuda_room_index(R, 0, 0, nz - 1), X, Y, -Z, 0, nx, ny},
    };
    long long base = 0;
    for (int k = 0; k < 6; k++) {
        g->face[k] = f[k];
        g->face[k].base = base;
        base += 2LL * f[k].n_fast * f[k].n_slow;
        const int inner = (f[k].n_fast - 2) * (f[k].n_slow - 2);
        g->most = inner > g->most ? inner : g->most;
    }
}

static void set_lines(const kt_cuda_room *R, abc_geom *g)
{
    const int n[3] = {R->grid.nx, R->grid.ny, R->grid.nz};
    const long long step[3] = {1, (long long)R->pitch, (long long)R->plane};
    const double re = mur1(R->lambda / sqrt(2.0)), rc = mur1(R->lambda / sqrt(3.0));
    int k = 0;
    for (int axis = 0; axis < 3; axis++) { /* the twelve edges, less their corners */
        int u = (axis + 1) % 3, v = (axis + 2) % 3;
        for (int eu = 0; eu < 2; eu++)
            for (int ev = 0; ev < 2; ev++) {
                int node[3];
                node[axis] = 1;
                node[u] = eu ? n[u] - 1 : 0;
                node[v] = ev ? n[v] - 1 : 0;
                gpu_line *l = &g->line[k++];
                l->origin = kt_cuda_room_index(R, node[0], node[1], node[2]);
                l->along = step[axis];
                l->diag = (eu ? -step[u] : step[u]) + (ev ? -step[v] : step[v]);
                l->count = n[axis] - 2;
                l->r = re;
                g->most = l->count > g->most ? l->count : g->most;
            }
    }
    for (int c = 0; c < 8; c++) { /* the eight corners */
        int node[3];
        long long diag = 0;
        for (int d = 0; d < 3; d++) {
            int hi = (c >> d) & 1;
            node[d] = hi ? n[d] - 1 : 0;
            diag += hi ? -step[d] : step[d];
        }
        gpu_line *l = &g->line[k++];
        l->origin = kt_cuda_room_index(R, node[0], node[1], node[2]);
        l->along = 0;
        l->diag = diag;
        l->count = 1;
        l->r = rc;
    }
}

static abc_geom geometry(const kt_cuda_room *R)
{
    abc_geom g;
    memset(&g, 0, sizeof g);
    set_faces(R, &g);
    set_lines(R, &g);
    const double lambda = R->lambda;
    g.r = (lambda - 1) / (lambda + 1);
    g.s = 2 / (lambda + 1);
    g.t = lambda * lambda / (2 * (lambda + 1));
    return g;
}

int kt_cuda_abc_setup(kt_cuda_room *R, kt_error *err)
{
    if (R->params.wall_model != KT_WALL_ENGQUIST_MAJDA)
        return KT_OK;
    const size_t points = 4 * ((size_t)R->grid.ny * R->grid.nz + (size_t)R->grid.nx * R->grid.nz +
                               (size_t)R->grid.nx * R->grid.ny);
    return kt_cuda_alloc(points * R->esize, &R->abc_state, err);
}

template <typename REAL> static void launch_abc(kt_cuda_room *R, cudaStream_t stream)
{
    const abc_geom g = geometry(R);
    const dim3 faces(kt_cuda_blocks(g.most, KT_CUDA_BLOCK), 6), lines(kt_cuda_blocks(g.most, 64), 20);
    abc_faces<REAL><<<faces, KT_CUDA_BLOCK, 0, stream>>>((REAL *)R->next, (const REAL *)R->now,
                                                         (REAL *)R->abc_state, g);
    abc_lines<REAL><<<lines, 64, 0, stream>>>((REAL *)R->next, (const REAL *)R->now, g);
}

void kt_cuda_abc_apply_on(kt_cuda_room *R, cudaStream_t stream)
{
    if (!R->abc_state)
        return;
    if (R->params.precision == KT_SINGLE)
        launch_abc<float>(R, stream);
    else
        launch_abc<double>(R, stream);
}

int kt_cuda_abc_sync(kt_cuda_room *R, kt_error *err)
{
    if (!R->abc_state)
        return KT_OK;
    const abc_geom g = geometry(R);
    const dim3 grid(kt_cuda_blocks(g.most, KT_CUDA_BLOCK), 6);
    if (R->params.precision == KT_SINGLE)
        abc_sync<float><<<grid, KT_CUDA_BLOCK>>>((float *)R->abc_state, (const float *)R->prev, g);
    else
        abc_sync<double><<<grid, KT_CUDA_BLOCK>>>((double *)R->abc_state, (const double *)R->prev,
                                                  g);
    int rc = kt_cuda_launch_check(err, "rebuilding the absorbing walls' face state");
    return rc < 0 ? rc : kt_cuda_sync(err); /* before any other stream steps the room */
}
