/* room_abc.cu - the absorbing walls on the GPU, mirroring room/room_abc.c
 * and room_abc_impl.h (docs/room.md, "Absorbing walls"): after the 7-point
 * sweep, Mur's first-order update overwrites the interior nodes of the six
 * faces and the first-order diagonal update the twelve edges and eight
 * corners.  One launch does all six faces (blockIdx.y picks the face), one
 * all twenty lines: every update writes a boundary node no other update
 * reads, so their order is free, and the arithmetic is the CPU's (the _rn
 * intrinsics): the CPU's bits.
 *
 * The face kernel also adds up the energy the faces exchange with the air
 * inside them (room_abc.c): per warp, then one atomicAdd per warp into
 * R->abc_sums[0..1]; the line kernel's first thread moves the step's sums into
 * the running inflow and known part (abc_sums[2..3]) and clears them.  The
 * atomics make the last bits of those sums depend on the order the warps
 * finish in (the fields do not): they feed the render's guard only. */
#include "room_gpu.h"
#include "kt_cuda_rn.cuh"

#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

typedef struct gpu_face {
    long long origin, fast, slow, inward; /* device index of (fast 0, slow 0); steps */
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
    double r;                             /* (lambda - 1)/(lambda + 1) */
    double scale;                         /* rho Q / 2: the exchange's joules */
    int most;                             /* largest face interior, largest line */
} abc_geom;

/* Face F's interior node k: its field index p. */
__device__ __forceinline__ bool face_node(const gpu_face &fc, long long k, long long *p)
{
    const int inner = fc.n_fast - 2;
    if (k >= (long long)inner * (fc.n_slow - 2))
        return false;
    const int f = 1 + (int)(k % inner), sl = 1 + (int)(k / inner);
    *p = fc.origin + sl * fc.slow + f * fc.fast;
    return true;
}

/* Warp sum of v; lane 0 gets it. */
__device__ __forceinline__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

template <typename REAL>
__global__ void abc_faces(REAL *__restrict__ next, const REAL *__restrict__ now,
                          double *__restrict__ sums, abc_geom g)
{
    const gpu_face &fc = g.face[blockIdx.y];
    long long p;
    double now_part = 0.0, next_part = 0.0;
    if (face_node(fc, (long long)blockIdx.x * blockDim.x + threadIdx.x, &p)) {
        const long long q = p + fc.inward;
        const REAL b = now[p], i = now[q], i1 = next[q];
        const REAL b1 = rn_add(i, rn_mul((REAL)g.r, rn_sub(i1, b)));
        next[p] = b1;
        const double di = __dsub_rn((double)i1, (double)i);
        now_part = __dmul_rn(__dsub_rn((double)b, (double)i), di);
        next_part = __dmul_rn(__dsub_rn((double)b1, (double)i1), di);
    }
    now_part = warp_sum(now_part);
    next_part = warp_sum(next_part);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sums[0], now_part);
        atomicAdd(&sums[1], next_part);
    }
}

template <typename REAL>
__global__ void abc_lines(REAL *__restrict__ next, const REAL *__restrict__ now,
                          double *__restrict__ sums, abc_geom g)
{
    const gpu_line &ln = g.line[blockIdx.y];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.y == 0 && j == 0) { /* the faces are done: room_abc.c's add_exchange */
        sums[2] = __dadd_rn(sums[2], __dadd_rn(sums[3], __dmul_rn(g.scale, sums[0])));
        sums[3] = __dmul_rn(g.scale, sums[1]);
        sums[0] = sums[1] = 0.0;
    }
    if (j >= ln.count)
        return;
    const long long p = ln.origin + (long long)j * ln.along, d = p + ln.diag;
    next[p] = rn_add(now[d], rn_mul((REAL)ln.r, rn_sub(next[d], now[p])));
}

/* ---- host side: room_abc.c's faces, edges and corners on the device layout ---- */

static void set_faces(const kt_cuda_room *R, abc_geom *g)
{
    const int nx = R->grid.nx, ny = R->grid.ny, nz = R->grid.nz;
    const long long X = 1, Y = (long long)R->pitch, Z = (long long)R->plane;
    const gpu_face f[6] = {
        {kt_cuda_room_index(R, 0, 0, 0), Y, Z, X, ny, nz},
        {kt_cuda_room_index(R, nx - 1, 0, 0), Y, Z, -X, ny, nz},
        {kt_cuda_room_index(R, 0, 0, 0), X, Z, Y, nx, nz},
        {kt_cuda_room_index(R, 0, ny - 1, 0), X, Z, -Y, nx, nz},
        {kt_cuda_room_index(R, 0, 0, 0), X, Y, Z, nx, ny},
        {kt_cuda_room_index(R, 0, 0, nz - 1), X, Y, -Z, nx, ny},
    };
    for (int k = 0; k < 6; k++) {
        g->face[k] = f[k];
        const int inner = (f[k].n_fast - 2) * (f[k].n_slow - 2);
        g->most = inner > g->most ? inner : g->most;
    }
}

static void set_lines(const kt_cuda_room *R, abc_geom *g)
{
    const int n[3] = {R->grid.nx, R->grid.ny, R->grid.nz};
    const long long step[3] = {1, (long long)R->pitch, (long long)R->plane};
    const double re = room_mur1(R->lambda / sqrt(2.0)), rc = room_mur1(R->lambda / sqrt(3.0));
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
    g.r = room_mur1(R->lambda);
    g.scale = 0.5 * R->params.air_density_kg_per_m3 * R->grid.spacing_m;
    return g;
}

int kt_cuda_abc_setup(kt_cuda_room *R, kt_error *err)
{
    if (R->params.wall_model != KT_WALL_ENGQUIST_MAJDA)
        return KT_OK;
    return kt_cuda_alloc(4 * sizeof(double), (void **)&R->abc_sums, err);
}

template <typename REAL> static void launch_abc(kt_cuda_room *R, cudaStream_t stream)
{
    const abc_geom g = geometry(R);
    const dim3 faces(kt_cuda_blocks(g.most, KT_CUDA_BLOCK), 6), lines(kt_cuda_blocks(g.most, 64), 20);
    abc_faces<REAL><<<faces, KT_CUDA_BLOCK, 0, stream>>>((REAL *)R->next, (const REAL *)R->now,
                                                         R->abc_sums, g);
    abc_lines<REAL><<<lines, 64, 0, stream>>>((REAL *)R->next, (const REAL *)R->now,
                                              R->abc_sums, g);
}

void kt_cuda_abc_apply_on(kt_cuda_room *R, cudaStream_t stream)
{
    if (!R->abc_sums)
        return;
    if (R->params.precision == KT_SINGLE)
        launch_abc<float>(R, stream);
    else
        launch_abc<double>(R, stream);
}

extern "C" int kt_cuda_room_wall_exchange(const kt_cuda_room *R, double *inflow_J,
                                          double *known_J, kt_error *err)
{
    double sums[4] = {0, 0, 0, 0};
    int rc = R->abc_sums ? kt_cuda_download(sums, R->abc_sums, sizeof sums, err) : KT_OK;
    *inflow_J = sums[2];
    *known_J = sums[3];
    return rc;
}

extern "C" int kt_cuda_room_set_wall_exchange(kt_cuda_room *R, double inflow_J, double known_J,
                                              kt_error *err)
{
    const double sums[4] = {0, 0, inflow_J, known_J};
    return R->abc_sums ? kt_cuda_upload(R->abc_sums, sums, sizeof sums, err) : KT_OK;
}
