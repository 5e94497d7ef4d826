/* timpani_stored.cu - the drum's stage D on the GPU stage by stage for the
 * stored formats (CSR through cuSPARSE, DIA and ELL through spmv.cu, CSC as
 * CSR), mirroring timpani_step.c: library calls and small kernels, every
 * scalar on the device; agrees with the CPU to rounding.  docs/gpu.md, "The
 * stored formats stage by stage". */
#include "kt_cuda_kernel.h"
#include "kt_cuda_room.h"
#include "timpani_gpu.h"

#include "timpani_plan.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Device scalars, one array. */
enum { SC_AA, SC_AU1, SC_AINV, SC_NEG_AU1, SC_AR, SC_AQ, SC_D2, SC_U2, SC_LAST_D2,
       SC_LAST_U2, SC_COUNT };
/* Device flags of the solve: converged, iterations taken. */
enum { FL_DONE, FL_ITERS, FL_COUNT };

#define TP_WORKSPACE_BYTES ((size_t)4 << 20)

struct tp_stored {
    tp_plan *t;
    tp_stored_arrays d;
    kt_cuda_matrix *B, *C, *V, *E, *I23;
    cublasHandle_t blas;
    cudaStream_t stream;
    void *workspace;
    double *sc, *q, *du, *wa;   /* scalars; nn, nn, nw scratch (q = E I23 u) */
    int *flags;
    int phase;                  /* steps launched since creation, mod 6 */
    int nn, nw, iterations, coupled, adaptive;
    double mu_c, Bf, gamma6, k, strike_scale, tol;
};

/* ---- kernels ---- */

/* After the two dots of stage 3: 1/(1 + a^T a) and -a^T u^{n-1}; a
 * non-finite a^T a marks the drum as blown up (as processTimpani fails). */
__global__ void stored_rhs_scalars(double *sc, tp_dev_state *st)
{
    if (st->bad)
        return;
    const double aa = sc[SC_AA];
    if (!isfinite(aa)) {
        st->bad = 1;
        st->bad_step = st->steps;
        return;
    }
    sc[SC_AINV] = 1.0 / (1.0 + aa);
    sc[SC_NEG_AU1] = -sc[SC_AU1];
}

/* timpani_step.c add_strikes: one after another, in the CPU's order. */
__global__ void stored_strikes(double *r, const long long *step_n, double k, double scale,
                               int count, const double *start, const double *force,
                               const double *dur, const int *node, const tp_dev_state *st)
{
    if (st->bad)
        return;
    const double time_s = (double)(*step_n) * k;
    for (int s = 0; s < count; s++) {
        const double tau = time_s - start[s];
        if (tau >= 0.0 && tau < dur[s])
            r[node[s]] += scale * 0.5 * force[s] *
                          (1.0 - cos(2.0 * 3.14159265358979323846 * tau / dur[s]));
    }
}

__device__ __forceinline__ double st_layer(const float *f, long long i) { return (double)f[i]; }
__device__ __forceinline__ double st_layer(const double *f, long long i) { return f[i]; }
__device__ __forceinline__ void st_add(float *f, long long i, double v) { f[i] = __fadd_rn(f[i], (float)v); }
__device__ __forceinline__ void st_add(double *f, long long i, double v) { f[i] = __dadd_rn(f[i], v); }

/* add_coupling: Dhat = Psi_pd - Psi_pu of the new field, v = mu_c w^{n-1} +
 * Bf (Dhat - D^{n-1}) on the window (E v is added by the format's SpMV). */
template <typename REAL>
__global__ void stored_coupling(const REAL *__restrict__ next, const long long *__restrict__ pd,
                                const long long *__restrict__ pu, int nw,
                                const double *__restrict__ w1, const double *__restrict__ Dn1,
                                double *__restrict__ Dhat, double *__restrict__ v, double mu_c,
                                double Bf, const tp_dev_state *st)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nw || st->bad)
        return;
    double Dh = pd[i] >= 0 ? st_layer(next, pd[i]) : 0.0;
    Dh -= pu[i] >= 0 ? st_layer(next, pu[i]) : 0.0;
    Dhat[i] = Dh;
    v[i] = mu_c * w1[i] + Bf * (Dh - Dn1[i]);
}

/* Algorithm 18's guess u^(0) = 2u^n - u^{n-1} (zero off the head, as u is),
 * and a fresh solve: not converged, no increment yet. */
__global__ void stored_jacobi_start(double *__restrict__ unew, const double *__restrict__ u,
                                    const double *__restrict__ u1, int nn, double *sc,
                                    int *flags)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < nn)
        unew[j] = 2.0 * u[j] - u1[j];
    if (j == 0) {
        flags[FL_DONE] = 0;
        flags[FL_ITERS] = 0;
        sc[SC_LAST_D2] = 0.0;
        sc[SC_LAST_U2] = 1.0;
    }
}

/* Sherman-Morrison (timpani_step.c sm_update) on p = r - mu q (q = E I23 u;
 * mu = 0 and q = r uncoupled): u = p - a (a^T p) ainv with a^T p = a^T r -
 * mu a^T q; with du, also du = u_new - u_old.  Skipped once the solve has
 * converged. */
__global__ void stored_sm_update(double *__restrict__ u, const double *__restrict__ r,
                                 const double *__restrict__ q, double mu,
                                 const double *__restrict__ a, double *__restrict__ du, int nn,
                                 const double *__restrict__ sc, const int *__restrict__ flags)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nn || flags[FL_DONE])
        return;
    const double c = (sc[SC_AR] - mu * sc[SC_AQ]) * sc[SC_AINV];
    const double v = r[j] - mu * q[j] - a[j] * c;
    if (du)
        du[j] = v - u[j];
    u[j] = v;
}

/* After iteration `it` with its increment measured: record it, and stop the
 * solve when |du|^2 <= tol^2 |u|^2 (tol > 0). */
__global__ void stored_jacobi_check(double *sc, int *flags, int it, double tol)
{
    if (flags[FL_DONE])
        return;
    const double d2 = sc[SC_D2], u2 = sc[SC_U2];
    flags[FL_ITERS] = it;
    sc[SC_LAST_D2] = d2;
    sc[SC_LAST_U2] = u2;
    if (tol > 0.0 && d2 <= tol * tol * u2)
        flags[FL_DONE] = 1;
}

/* correct_layers: y = w^{n+1} - w^{n-1}; Psi_pd -= g6 y, Psi_pu += g6 y;
 * D^{n+1} = Dhat - 2 g6 y. */
template <typename REAL>
__global__ void stored_layers(REAL *__restrict__ next, const long long *__restrict__ pd,
                              const long long *__restrict__ pu, int nw,
                              const double *__restrict__ wnew, const double *__restrict__ w1,
                              const double *__restrict__ Dhat, double *__restrict__ Dout,
                              double g6, const tp_dev_state *st)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nw || st->bad)
        return;
    const double y = wnew[i] - w1[i];
    Dout[i] = Dhat[i] - 2.0 * g6 * y;
    if (pd[i] >= 0)
        st_add(next, pd[i], -g6 * y);
    if (pu[i] >= 0)
        st_add(next, pu[i], g6 * y);
}

/* The step's counters: iterations and increment (record_increment), the
 * rotation of the histories, the step count. */
__global__ void stored_finish(tp_dev_state *st, const double *sc, const int *flags, int coupled)
{
    if (st->bad)
        return;
    const double d2 = sc[SC_LAST_D2], u2 = sc[SC_LAST_U2];
    st->last_iterations = coupled ? flags[FL_ITERS] : 1;
    st->last_increment = coupled && u2 > 0.0 ? sqrt(d2 / u2) : 0.0;
    st->rot_u = (st->rot_u + 1) % 3;
    st->rot_w = (st->rot_w + 1) % 3;
    st->rot_d ^= 1;
    st->steps++;
}

/* ---- host side ---- */

static int blas_ok(cublasStatus_t s, kt_error *err, const char *doing)
{
    return s == CUBLAS_STATUS_SUCCESS ? KT_OK
                                      : kt_fail(err, KT_EIO, "cuBLAS error %d %s", (int)s, doing);
}

/* The drum's matrix on the device; CSC goes up as CSR. */
static int upload_matrix(const kt_matrix *A, kt_cuda_matrix **out, kt_error *err)
{
    if (A->format != KT_CSC)
        return kt_cuda_matrix_upload(A, out, err);
    kt_matrix *csr = NULL;
    int rc = kt_matrix_convert(A, KT_CSR, 0, &csr, err);
    if (rc == KT_OK)
        rc = kt_cuda_matrix_upload(csr, out, err);
    kt_matrix_free(csr);
    return rc;
}

static void read_scalars(tp_stored *S)
{
    const tp_plan *t = S->t;
    S->iterations = t->p.solver_iterations < 1 ? 1 : t->p.solver_iterations;
    S->coupled = t->p.coupled;
    S->tol = t->p.solver == KT_SOLVE_JACOBI ? t->p.solver_tolerance : 0.0;
    S->adaptive = S->tol > 0.0;
    S->mu_c = t->mu_c;
    S->Bf = t->Bf;
    S->gamma6 = t->gamma6;
    S->k = t->k;
    S->strike_scale = t->strike_scale;
}

static int bind_stream(tp_stored *S, cudaStream_t stream, kt_error *err)
{
    if (S->blas && S->stream == stream)
        return KT_OK;
    /* setting the stream resets the workspace: give it ours again, so that
     * cuBLAS allocates nothing inside a graph capture */
    int rc = blas_ok(cublasSetStream(S->blas, stream), err, "choosing the stream");
    if (rc == KT_OK)
        rc = blas_ok(cublasSetWorkspace(S->blas, S->workspace, TP_WORKSPACE_BYTES), err,
                     "setting the workspace");
    if (rc == KT_OK)
        S->stream = stream;
    return rc;
}

/* B, C, V (tension and damping change them) up from the CPU drum, and each
 * product run once into scratch, so that cuSPARSE sizes its buffer and
 * analyses the matrix now, not inside a graph capture. */
static int upload_bcv(tp_stored *S, kt_error *err)
{
    tp_plan *t = S->t;
    kt_cuda_matrix_free(S->B);
    kt_cuda_matrix_free(S->C);
    kt_cuda_matrix_free(S->V);
    S->B = S->C = S->V = NULL;
    int rc = upload_matrix(t->B, &S->B, err);
    if (rc == KT_OK)
        rc = upload_matrix(t->C, &S->C, err);
    if (rc == KT_OK)
        rc = upload_matrix(t->V, &S->V, err);
    const double *zero = S->d.U[1];
    if (rc == KT_OK)
        rc = kt_cuda_spmv_on(S->B, zero, S->q, 0, 0, err);
    if (rc == KT_OK)
        rc = kt_cuda_spmv_on(S->C, zero, S->q, 1, 0, err);
    if (rc == KT_OK)
        rc = kt_cuda_spmv_on(S->V, zero, S->q, 0, 0, err);
    return rc == KT_OK ? kt_cuda_sync(err) : rc;
}

static int upload_interp(tp_stored *S, kt_error *err)
{
    tp_plan *t = S->t;
    int rc = upload_matrix(t->E, &S->E, err);
    if (rc == KT_OK)
        rc = upload_matrix(t->I23m, &S->I23, err);
    if (rc == KT_OK)
        rc = kt_cuda_spmv_on(S->E, S->wa, S->q, 0, 0, err);
    if (rc == KT_OK)
        rc = kt_cuda_spmv_on(S->I23, S->d.U[1], S->wa, 0, 0, err);
    return rc == KT_OK ? kt_cuda_sync(err) : rc;
}

static int check_solver(const tp_plan *t, kt_error *err)
{
    if (t->p.coupled && t->p.solver == KT_SOLVE_DIRECT)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': the direct solve runs on the GPU in the matrix-free "
                       "format only; use it, or Jacobi or the reduced solve",
                       t->p.name);
    if (t->p.coupled && t->p.solver == KT_SOLVE_REDUCED && t->p.solver_tolerance > 0.0)
        return kt_fail(err, KT_ENOTSUP,
                       "timpani '%s': on the GPU the %s format runs Algorithm 18 (Jacobi, the "
                       "same iterates), whose stopping test differs from the reduced solver's "
                       "tolerance: use a fixed count, the Jacobi solver, or matrix-free",
                       t->p.name, kt_timpani_format_name(t->p.format));
    return KT_OK;
}

static int stored_setup(tp_stored *S, kt_error *err)
{
    tp_plan *t = S->t;
    int rc = kt_cuda_alloc(SC_COUNT * sizeof(double), (void **)&S->sc, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc(FL_COUNT * sizeof(int), (void **)&S->flags, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc((size_t)t->nn * sizeof(double), (void **)&S->q, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc((size_t)t->nn * sizeof(double), (void **)&S->du, err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc((size_t)(t->nw > 0 ? t->nw : 1) * sizeof(double), (void **)&S->wa,
                           err);
    if (rc == KT_OK)
        rc = kt_cuda_alloc(TP_WORKSPACE_BYTES, &S->workspace, err);
    if (rc < 0)
        return rc;
    if ((rc = blas_ok(cublasCreate(&S->blas), err, "creating a handle")) < 0) {
        S->blas = NULL;
        return rc;
    }
    rc = blas_ok(cublasSetPointerMode(S->blas, CUBLAS_POINTER_MODE_DEVICE), err,
                 "choosing device pointers");
    if (rc == KT_OK)
        rc = upload_bcv(S, err);
    if (rc == KT_OK && t->p.coupled)
        rc = upload_interp(S, err);
    return rc;
}

int tp_stored_create(tp_plan *t, const tp_stored_arrays *arr, cudaStream_t stream,
                     tp_stored **out, kt_error *err)
{
    *out = NULL;
    int rc = check_solver(t, err);
    if (rc < 0)
        return rc;
    if (!t->B || !t->C || !t->V || (t->p.coupled && (!t->E || !t->I23m)))
        return kt_fail(err, KT_EINVAL, "timpani '%s': no stored operators", t->p.name);
    tp_stored *S = (tp_stored *)calloc(1, sizeof *S);
    if (!S)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU timpani");
    S->t = t;
    S->d = *arr;
    S->nn = t->nn;
    S->nw = t->nw;
    read_scalars(S);
    rc = stored_setup(S, err);
    if (rc == KT_OK)
        rc = bind_stream(S, stream, err);
    if (rc < 0) {
        tp_stored_free(S);
        return rc;
    }
    *out = S;
    return KT_OK;
}

int tp_stored_update(tp_stored *S, kt_error *err)
{
    int rc = check_solver(S->t, err);
    if (rc < 0)
        return rc;
    read_scalars(S);
    return upload_bcv(S, err);
}

void tp_stored_free(tp_stored *S)
{
    if (!S)
        return;
    if (S->blas)
        cublasDestroy(S->blas);
    kt_cuda_matrix_free(S->B);
    kt_cuda_matrix_free(S->C);
    kt_cuda_matrix_free(S->V);
    kt_cuda_matrix_free(S->E);
    kt_cuda_matrix_free(S->I23);
    kt_cuda_free(S->sc);
    kt_cuda_free(S->flags);
    kt_cuda_free(S->q);
    kt_cuda_free(S->du);
    kt_cuda_free(S->wa);
    kt_cuda_free(S->workspace);
    free(S);
}

/* The step's vectors for the current phase of the rotation. */
typedef struct stored_view {
    const double *u, *u1, *w, *w1, *Dn1;
    double *unew, *wnew, *Dout;
} stored_view;

static stored_view view_of(const tp_stored *S)
{
    const int ru = S->phase % 3, rd = S->phase % 2;
    stored_view v;
    v.u = S->d.U[ru];
    v.unew = S->d.U[(ru + 1) % 3];
    v.u1 = S->d.U[(ru + 2) % 3];
    v.w = S->d.W[ru];
    v.wnew = S->d.W[(ru + 1) % 3];
    v.w1 = S->d.W[(ru + 2) % 3];
    v.Dn1 = S->d.D[rd ^ 1];
    v.Dout = S->d.D[rd ^ 1];
    return v;
}

/* Stage 3 (Algorithm 17, timpani_membrane.c stored_rhs,
 * then add_strikes and add_coupling). */
template <typename REAL>
static int stage_rhs(tp_stored *S, const stored_view *v, REAL *next, const long long *step_n,
                     kt_error *err)
{
    const tp_stored_arrays *d = &S->d;
    cudaStream_t s = S->stream;
    const int nn = S->nn;
    int rc = kt_cuda_spmv_on(S->V, v->u, d->a, 0, s, err);
    if (rc == KT_OK)
        rc = blas_ok(cublasDdot(S->blas, nn, d->a, 1, d->a, 1, S->sc + SC_AA), err, "in a^T a");
    if (rc == KT_OK)
        rc = blas_ok(cublasDdot(S->blas, nn, d->a, 1, v->u1, 1, S->sc + SC_AU1), err,
                     "in a^T u");
    if (rc < 0)
        return rc;
    stored_rhs_scalars<<<1, 1, 0, s>>>(S->sc, d->state);
    if ((rc = kt_cuda_launch_check(err, "launching the drum's scalars")) < 0 ||
        (rc = kt_cuda_spmv_on(S->B, v->u, d->r, 0, s, err)) < 0 ||
        (rc = kt_cuda_spmv_on(S->C, v->u1, d->r, 1, s, err)) < 0 ||
        (rc = blas_ok(cublasDaxpy(S->blas, nn, S->sc + SC_NEG_AU1, d->a, 1, d->r, 1), err,
                      "in r -= a (a^T u)")) < 0)
        return rc;
    if (d->nstrikes > 0) {
        stored_strikes<<<1, 1, 0, s>>>(d->r, step_n, S->k, S->strike_scale, d->nstrikes,
                                       d->st_start, d->st_force, d->st_dur, d->st_node,
                                       d->state);
        if ((rc = kt_cuda_launch_check(err, "launching the strikes")) < 0)
            return rc;
    }
    if (!S->coupled)
        return KT_OK;
    stored_coupling<REAL><<<kt_cuda_blocks(S->nw, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, s>>>(
        next, d->pd_idx, d->pu_idx, S->nw, v->w1, v->Dn1, d->Dhat, d->v, S->mu_c, S->Bf,
        d->state);
    if ((rc = kt_cuda_launch_check(err, "launching the coupling")) < 0)
        return rc;
    return kt_cuda_spmv_on(S->E, d->v, d->r, 1, s, err);
}

/* q = E (I23 u) and the dot a^T q: p = r - mu_c q = r - P u is formed in
 * the update. */
static int jacobi_q(tp_stored *S, const double *u, kt_error *err)
{
    int rc = kt_cuda_spmv_on(S->I23, u, S->wa, 0, S->stream, err);
    if (rc == KT_OK)
        rc = kt_cuda_spmv_on(S->E, S->wa, S->q, 0, S->stream, err);
    if (rc == KT_OK)
        rc = blas_ok(cublasDdot(S->blas, S->nn, S->d.a, 1, S->q, 1, S->sc + SC_AQ), err,
                     "in a^T q");
    return rc;
}

/* Stage 4: Algorithm 18 (solve_jacobi), or Sherman-Morrison alone uncoupled. */
static int stage_solve(tp_stored *S, const stored_view *v, kt_error *err)
{
    const tp_stored_arrays *d = &S->d;
    cudaStream_t s = S->stream;
    const int nn = S->nn;
    const unsigned blocks = kt_cuda_blocks(nn, KT_CUDA_BLOCK);
    int rc = blas_ok(cublasDdot(S->blas, nn, d->a, 1, d->r, 1, S->sc + SC_AR), err, "in a^T r");
    if (rc < 0)
        return rc;
    if (!S->coupled) {
        stored_sm_update<<<blocks, KT_CUDA_BLOCK, 0, s>>>(v->unew, d->r, d->r, 0.0, d->a, NULL,
                                                          nn, S->sc, S->flags);
        return kt_cuda_launch_check(err, "launching Sherman-Morrison");
    }
    stored_jacobi_start<<<blocks, KT_CUDA_BLOCK, 0, s>>>(v->unew, v->u, v->u1, nn, S->sc,
                                                         S->flags);
    if ((rc = kt_cuda_launch_check(err, "launching the Jacobi guess")) < 0)
        return rc;
    for (int it = 1; it <= S->iterations; it++) {
        const int need = S->adaptive || it == S->iterations;
        if ((rc = jacobi_q(S, v->unew, err)) < 0)
            return rc;
        stored_sm_update<<<blocks, KT_CUDA_BLOCK, 0, s>>>(v->unew, d->r, S->q, S->mu_c, d->a,
                                                          need ? S->du : NULL, nn, S->sc,
                                                          S->flags);
        if ((rc = kt_cuda_launch_check(err, "launching Sherman-Morrison")) < 0 || !need)
            continue;
        if ((rc = blas_ok(cublasDdot(S->blas, nn, S->du, 1, S->du, 1, S->sc + SC_D2), err,
                          "in |du|^2")) < 0 ||
            (rc = blas_ok(cublasDdot(S->blas, nn, v->unew, 1, v->unew, 1, S->sc + SC_U2), err,
                          "in |u|^2")) < 0)
            return rc;
        stored_jacobi_check<<<1, 1, 0, s>>>(S->sc, S->flags, it, S->tol);
        if ((rc = kt_cuda_launch_check(err, "launching the convergence test")) < 0)
            return rc;
    }
    return rc;
}

/* Stage 6 (correct_layers), then the counters. */
template <typename REAL>
static int stage_layers(tp_stored *S, const stored_view *v, REAL *next, kt_error *err)
{
    const tp_stored_arrays *d = &S->d;
    cudaStream_t s = S->stream;
    int rc;
    if (S->coupled) {
        if ((rc = kt_cuda_spmv_on(S->I23, v->unew, v->wnew, 0, s, err)) < 0)
            return rc;
        stored_layers<REAL><<<kt_cuda_blocks(S->nw, KT_CUDA_BLOCK), KT_CUDA_BLOCK, 0, s>>>(
            next, d->pd_idx, d->pu_idx, S->nw, v->wnew, v->w1, d->Dhat, v->Dout, S->gamma6,
            d->state);
        if ((rc = kt_cuda_launch_check(err, "launching the layer correction")) < 0)
            return rc;
    }
    stored_finish<<<1, 1, 0, s>>>(d->state, S->sc, S->flags, S->coupled);
    return kt_cuda_launch_check(err, "launching the drum's counters");
}

static int mark(const tp_stored *S, cudaEvent_t *marks, int k, kt_error *err)
{
    if (!marks)
        return KT_OK;
    cudaError_t e = cudaEventRecord(marks[k], S->stream);
    return e == cudaSuccess ? KT_OK : kt_cuda_fail(err, e, "recording a stage's event");
}

template <typename REAL>
static int stored_step(tp_stored *S, REAL *next, const long long *step_n, cudaEvent_t marks[2],
                       kt_error *err)
{
    const stored_view v = view_of(S);
    int rc = stage_rhs(S, &v, next, step_n, err);
    if (rc == KT_OK)
        rc = mark(S, marks, 0, err);
    if (rc == KT_OK)
        rc = stage_solve(S, &v, err);
    if (rc == KT_OK)
        rc = mark(S, marks, 1, err);
    if (rc == KT_OK)
        rc = stage_layers(S, &v, next, err);
    S->phase = (S->phase + 1) % 6;
    return rc;
}

int tp_stored_launch(tp_stored *S, void *next, int single, const long long *step_n,
                     cudaStream_t stream, cudaEvent_t marks[2], kt_error *err)
{
    int rc = bind_stream(S, stream, err);
    if (rc < 0)
        return rc;
    return single ? stored_step(S, (float *)next, step_n, marks, err)
                  : stored_step(S, (double *)next, step_n, marks, err);
}
