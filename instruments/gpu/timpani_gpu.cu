/* timpani_gpu.cu - the kettledrum as a device object the room's mirror
 * drives (its kt_instrument_gpu): uploads the drum's plan and state once and
 * dispatches each step to the stored-format path (timpani_stored.cu), the
 * split direct solve (timpani_split.cu) or the fused kernel (timpani_fused.cu). */
#include "kt_cuda_kernel.h"
#include "kt_cuda_room.h"
#include "timpani_gpu.h"

#include "timpani_plan.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tp_gpu {
    tp_plan *t;                 /* the CPU drum's plan and state */
    tp_state *st;
    size_t shared_bytes;        /* dynamic shared memory of the step kernel */
    tp_stored *stored;          /* a stored format: stage by stage (timpani_stored.cu) */
    tp_split *split;            /* matrix-free direct solve: timpani_split.cu */
    tp_dev d;
    void *alloc[64];            /* every device allocation, for free */
    int nalloc;
};

static void tp_gpu_free(tp_gpu *T);

template <typename X>
static int dev_copy(tp_gpu *T, X **dev, const X *host, size_t n, kt_error *err)
{
    if (T->nalloc == (int)(sizeof T->alloc / sizeof T->alloc[0]))
        return kt_fail(err, KT_ENOMEM, "timpani on the GPU: too many arrays");
    int rc = kt_cuda_alloc((n ? n : 1) * sizeof(X), (void **)dev, err);
    if (rc < 0)
        return rc;
    T->alloc[T->nalloc++] = *dev;
    return host && n ? kt_cuda_upload(*dev, host, n * sizeof(X), err) : KT_OK;
}

/* Device indices of one air layer over the window (-1 outside the room). */
static long long *layer_indices(const tp_plan *t, const kt_cuda_room *R, int z)
{
    long long *idx = (long long *)malloc(sizeof *idx * (size_t)t->nw);
    if (!idx)
        return NULL;
    const kt_room_grid *g = kt_cuda_room_grid(R);
    for (int i = 0; i < t->nwx; i++)
        for (int j = 0; j < t->nwy; j++) {
            int x = t->wx0 + i, y = t->wy0 + j;
            int in = z >= 0 && z < g->nz && x >= 0 && x < g->nx && y >= 0 && y < g->ny;
            idx[i * t->nwy + j] = in ? kt_cuda_room_node(R, x, y, z) : -1;
        }
    return idx;
}

/* G = mu_c I23 E as its diagonal and four upper bands on the window
 * (offsets 0, 1, nwy-1, nwy, nwy+1; the lower ones by symmetry), padded by
 * nwy+1 on both sides, and the chi runs of each window row: what
 * timpani_membrane.c build_g_bands makes for the reduced solve, made here
 * from the CSR G for any coupled solver. */
static int g_bands(const tp_plan *t, double **band_out, int **lo_out, int **hi_out,
                   kt_error *err)
{
    const int w = t->nwy, nw = t->nw, pad = w + 1;
    const size_t stride = (size_t)nw + 2 * (size_t)pad;
    double *band = (double *)calloc(5 * stride, sizeof(double));
    int *lo = (int *)calloc((size_t)t->nwx, sizeof(int)), *hi = (int *)calloc((size_t)t->nwx, sizeof(int));
    if (!band || !lo || !hi) {
        free(band);
        free(lo);
        free(hi);
        return kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory for G");
    }
    for (int i = 0; i < nw; i++)
        for (int q = t->G.ptr[i]; q < t->G.ptr[i + 1]; q++) {
            int c = t->G.col[q], off = c - i, di = c / w - i / w, dj = c % w - i % w;
            if (di < -1 || di > 1 || dj < -1 || dj > 1) {
                free(band);
                free(lo);
                free(hi);
                return kt_fail(err, KT_ENOTSUP,
                               "timpani '%s': G does not fit 9 bands on the window (h > Q)",
                               t->p.name);
            }
            int b = off == 0 ? 0 : off == 1 && di == 0 ? 1 : off == w - 1 ? 2 : off == w ? 3
                  : off == w + 1 ? 4 : -1;
            if (b >= 0)
                band[(size_t)b * stride + pad + i] = t->G.val[q];
        }
    for (int i = 0; i < t->nwx; i++) {
        int l = w, h = 0;
        for (int j = 0; j < w; j++)
            if (t->chi[i * w + j]) {
                if (j < l)
                    l = j;
                h = j + 1;
            }
        lo[i] = l < h ? l : 0;
        hi[i] = l < h ? h : 0;
    }
    *band_out = band;
    *lo_out = lo;
    *hi_out = hi;
    return KT_OK;
}

/* The drum's scalar coefficients as the CPU object has them now (tension
 * and damping change them: kt_timpani_set_tension, kt_timpani_set_damping). */
static void set_scalars(tp_dev *d, const tp_plan *t)
{
    d->iterations = t->p.solver_iterations;
    d->coupled = t->p.coupled;
    d->tol = t->p.solver_tolerance;
    d->adaptive = d->tol > 0.0;
    d->lossy = t->cC1 != 0.0;
    d->cV1 = t->cV1;
    d->cB0 = t->cB0;
    d->cB1 = t->cB1;
    d->cB2 = t->cB2;
    d->cC0 = t->cC0;
    d->cC1 = t->cC1;
    d->mu_c = t->mu_c;
    d->Bf = t->Bf;
    d->gamma6 = t->gamma6;
    d->hq2 = t->hq2;
    d->k = t->k;
    d->strike_scale = t->strike_scale;
}

/* G's five bands from the CPU drum's CSR G into the device arrays (made
 * here on the first call, overwritten after); the chi runs on the first. */
static int upload_g(tp_gpu *T, kt_error *err)
{
    const tp_plan *t = T->t;
    tp_dev *d = &T->d;
    const int nw = t->nw, pad = t->nwy + 1;
    const size_t len = (size_t)nw + 2 * (size_t)pad;
    const int first = d->g[0] == NULL;
    double *band = NULL;
    int *lo = NULL, *hi = NULL;
    int rc = g_bands(t, &band, &lo, &hi, err);
    for (int b = 0; b < 5 && rc == KT_OK; b++) {
        double *dp = first ? NULL : (double *)d->g[b] - pad;
        if (first && (rc = dev_copy(T, &dp, (const double *)band + b * len, len, err)) == KT_OK)
            d->g[b] = dp + pad;
        else if (!first)
            rc = kt_cuda_upload(dp, band + b * len, len * sizeof(double), err);
    }
    int *ip;
    if (first && rc == KT_OK && (rc = dev_copy(T, &ip, (const int *)lo, (size_t)t->nwx, err)) == KT_OK)
        d->chi_lo = ip;
    if (first && rc == KT_OK && (rc = dev_copy(T, &ip, (const int *)hi, (size_t)t->nwx, err)) == KT_OK)
        d->chi_hi = ip;
    free(band);
    free(lo);
    free(hi);
    return rc;
}

/* E's second half per inside node, made once: where it reads the
 * row-interpolated sep (rows e_il + 1 and e_il + 2 at its column) and the
 * weight, so the kernel loads them by the node's position in the list
 * instead of chasing node -> row -> table. */
static int upload_e_gather(tp_gpu *T, kt_error *err)
{
    const tp_plan *t = T->t;
    const int n = t->n, count = t->ninside;
    int *off = (int *)malloc(sizeof *off * (size_t)(count ? count : 1));
    double *fa = (double *)malloc(sizeof *fa * (size_t)(count ? count : 1));
    int rc = off && fa ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (int q = 0; rc == KT_OK && q < count; q++) {
        const int j = t->inside[q], l = j / n, m = j - l * n;
        off[q] = (t->e_il[l] + 1) * n + m;
        fa[q] = t->e_fa[l];
    }
    int *doff = NULL;
    double *dfa = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &doff, (const int *)off, (size_t)count, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &dfa, (const double *)fa, (size_t)count, err);
    free(off);
    free(fa);
    T->d.in_eoff = doff;
    T->d.in_efa = dfa;
    return rc;
}

/* The longest list of a CSR-like gather (ptr[first + i] .. ptr[first + i + 1]). */
static int longest(const int *ptr, int first, int count)
{
    int k = 0;
    for (int i = 0; i < count; i++)
        if (ptr[first + i + 1] - ptr[first + i] > k)
            k = ptr[first + i + 1] - ptr[first + i];
    return k;
}

/* I23's row gather flattened: window row i (padded row i + 1 of the CPU's
 * lists) gets row_k entries (membrane row, its inside run, weight); the
 * padding has an empty run, so the kernel skips it. */
static int upload_i23_rows(tp_gpu *T, kt_error *err)
{
    const tp_plan *t = T->t;
    const int K = longest(t->row_ptr, 1, t->nwx);
    const size_t count = (size_t)((unsigned)t->nwx * (unsigned)(K ? K : 1));
    int4 *g = (int4 *)calloc(count, sizeof *g);
    double *w = (double *)calloc(count, sizeof *w);
    int rc = g && w ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (int i = 0; rc == KT_OK && i < t->nwx; i++)
        for (int q = t->row_ptr[i + 1], k = 0; q < t->row_ptr[i + 2]; q++, k++) {
            const int l = t->row_l[q];
            g[i * K + k] = make_int4(l, t->run_lo[l], t->run_hi[l], 0);
            w[i * K + k] = t->row_w[q];
        }
    int4 *dg = NULL;
    double *dw = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &dg, (const int4 *)g, count, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &dw, (const double *)w, count, err);
    free(g);
    free(w);
    T->d.row_k = K;
    T->d.row_gather = dg;
    T->d.row_gw = dw;
    return rc;
}

/* I23's column gather flattened: window column j gets col_k entries
 * (membrane column, weight); the padding reads column mlo with weight 0,
 * which adds nothing. */
static int upload_i23_cols(tp_gpu *T, kt_error *err)
{
    const tp_plan *t = T->t;
    const int K = longest(t->col_ptr, 0, t->nwy);
    const size_t count = (size_t)((unsigned)t->nwy * (unsigned)(K ? K : 1));
    int *m = (int *)malloc(sizeof *m * count);
    double *w = (double *)calloc(count, sizeof *w);
    int rc = m && w ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (size_t q = 0; rc == KT_OK && q < count; q++)
        m[q] = t->mlo;
    for (int j = 0; rc == KT_OK && j < t->nwy; j++)
        for (int q = t->col_ptr[j], k = 0; q < t->col_ptr[j + 1]; q++, k++) {
            m[j * K + k] = t->col_m[q];
            w[j * K + k] = t->col_w[q];
        }
    int *dm = NULL;
    double *dw = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &dm, (const int *)m, count, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &dw, (const double *)w, count, err);
    free(m);
    free(w);
    T->d.col_k = K;
    T->d.col_gm = dm;
    T->d.col_gw = dw;
    return rc;
}

static int upload_all(tp_gpu *T, const kt_cuda_room *R, int stored, kt_error *err)
{
    tp_plan *t = T->t;
    const tp_state *st = T->st;
    tp_dev *d = &T->d;
    const int n = t->n, nn = t->nn, nw = t->nw;
    d->n = n;
    d->nn = nn;
    d->ninside = t->ninside;
    d->nwx = t->nwx;
    d->nwy = t->nwy;
    d->nw = nw;
    d->mlo = t->mlo;
    d->mhi = t->mhi;
    set_scalars(d, t);
    tp_fused_rows(d);
    d->nstrikes = st->nstrikes;
    int rc = upload_e_gather(T, err);
    if (rc < 0)
        return rc;
#define UP(field, host, count)                                                                 \
    if ((rc = dev_copy(T, &field, host, (size_t)(count), err)) < 0)                            \
        return rc;
    int *ip;
    double *dp;
    unsigned char *cp;
    UP(ip, t->inside, t->ninside) d->inside = ip;
    unsigned char *mp;
    UP(mp, t->mask, nn) d->mask = mp;
    UP(ip, t->e_jm, n) d->e_jm = ip;
    UP(dp, t->e_fb, n) d->e_fb = dp;
    UP(cp, t->chi, nw) d->chi = cp;
    if ((rc = upload_i23_rows(T, err)) < 0 || (rc = upload_i23_cols(T, err)) < 0)
        return rc;
    if (t->p.coupled) {
        if (!stored && (rc = upload_g(T, err)) < 0)
            return rc;
        long long *lp = layer_indices(t, R, t->pd), *lu = layer_indices(t, R, t->pu);
        long long *dl = NULL, *du = NULL;
        rc = lp && lu ? KT_OK : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
        if (rc == KT_OK)
            rc = dev_copy(T, &dl, (const long long *)lp, (size_t)nw, err);
        if (rc == KT_OK)
            rc = dev_copy(T, &du, (const long long *)lu, (size_t)nw, err);
        free(lp);
        free(lu);
        if (rc < 0)
            return rc;
        d->pd_idx = dl;
        d->pu_idx = du;
    }
    /* strikes as columns */
    int ns = st->nstrikes;
    double *s_start = (double *)calloc((size_t)ns + 1, sizeof(double));
    double *s_force = (double *)calloc((size_t)ns + 1, sizeof(double));
    double *s_dur = (double *)calloc((size_t)ns + 1, sizeof(double));
    int *s_node = (int *)calloc((size_t)ns + 1, sizeof(int));
    rc = s_start && s_force && s_dur && s_node
             ? KT_OK
             : kt_fail(err, KT_ENOMEM, "timpani on the GPU: out of memory");
    for (int k = 0; rc == KT_OK && k < ns; k++) {
        s_start[k] = st->strikes[k].start_s;
        s_force[k] = st->strikes[k].force_N;
        s_dur[k] = st->strikes[k].duration_s;
        s_node[k] = st->strikes[k].node;
    }
    double *a1 = NULL, *a2 = NULL, *a3 = NULL;
    int *a4 = NULL;
    if (rc == KT_OK)
        rc = dev_copy(T, &a1, (const double *)s_start, (size_t)ns, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &a2, (const double *)s_force, (size_t)ns, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &a3, (const double *)s_dur, (size_t)ns, err);
    if (rc == KT_OK)
        rc = dev_copy(T, &a4, (const int *)s_node, (size_t)ns, err);
    free(s_start);
    free(s_force);
    free(s_dur);
    free(s_node);
    if (rc < 0)
        return rc;
    d->st_start = a1;
    d->st_force = a2;
    d->st_dur = a3;
    d->st_node = a4;
    /* state: u = U0, u^{n+1} = U1, u^{n-1} = U2; w likewise; Dn = D0 */
    UP(d->U[0], st->u, nn) UP(d->U[1], (const double *)NULL, nn) UP(d->U[2], st->u1, nn)
    UP(d->a, st->a, nn) UP(d->r, (const double *)NULL, nn) UP(d->tmp, (const double *)NULL, nn)
    UP(d->pad, (const double *)NULL, (t->nwx + 2) * (t->nwy + 2))
    UP(d->sep, (const double *)NULL, (t->nwx + 2) * n)
    UP(d->sep2, (const double *)NULL, (t->nwx + 2) * n)
    if (t->p.coupled) {
        UP(d->W[0], st->w, nw) UP(d->W[1], (const double *)NULL, nw) UP(d->W[2], st->w1, nw)
        UP(d->D[0], st->Dn, nw) UP(d->D[1], st->Dn1, nw)
        UP(d->Dhat, (const double *)NULL, nw) UP(d->v, (const double *)NULL, nw)
    }
    tp_dev_state s0;
    memset(&s0, 0, sizeof s0);
    s0.last_iterations = st->last_iterations;
    s0.last_increment = st->last_increment;
    s0.steps = st->steps;
    tp_dev_state *sp;
    UP(sp, (const tp_dev_state *)&s0, 1) d->state = sp;
#undef UP
    return KT_OK;
}

/* The stage-by-stage path borrows the arrays upload_all made. */
static int stored_make(tp_gpu *T, cudaStream_t stream, kt_error *err)
{
    const tp_dev *d = &T->d;
    tp_stored_arrays a;
    memset(&a, 0, sizeof a);
    for (int k = 0; k < 3; k++) {
        a.U[k] = d->U[k];
        a.W[k] = d->W[k];
    }
    a.D[0] = d->D[0];
    a.D[1] = d->D[1];
    a.a = d->a;
    a.r = d->r;
    a.tmp = d->tmp;
    a.Dhat = d->Dhat;
    a.v = d->v;
    a.pd_idx = d->pd_idx;
    a.pu_idx = d->pu_idx;
    a.st_start = d->st_start;
    a.st_force = d->st_force;
    a.st_dur = d->st_dur;
    a.st_node = d->st_node;
    a.nstrikes = d->nstrikes;
    a.state = d->state;
    return tp_stored_create(T->t, &a, stream, &T->stored, err);
}

static int tp_gpu_create(void *timpani, const kt_cuda_room *R, cudaStream_t stream,
                         tp_gpu **out, kt_error *err)
{
    *out = NULL;
    tp_plan *t = tp_plan_of((kt_timpani *)timpani);
    const int stored = t->p.format != KT_TIMPANI_MATRIX_FREE, split = tp_split_wanted(t);
    int rc = stored ? KT_OK : split ? tp_split_accepts(t, err) : tp_fused_accepts(t, err);
    if (rc < 0)
        return rc;
    tp_gpu *T = (tp_gpu *)calloc(1, sizeof *T);
    if (!T)
        return kt_fail(err, KT_ENOMEM, "out of memory for a GPU timpani");
    T->t = t;
    T->st = tp_state_of((kt_timpani *)timpani);
    rc = stored || split ? KT_OK : tp_fused_size(t, &T->shared_bytes, err);
    if (rc == KT_OK)
        rc = upload_all(T, R, stored, err);
    if (rc == KT_OK && stored)
        rc = stored_make(T, stream, err);
    if (rc == KT_OK && split)
        rc = tp_split_create(t, &T->d, R, &T->split, err);
    if (rc < 0) {
        tp_gpu_free(T);
        return rc;
    }
    *out = T;
    return KT_OK;
}

static int tp_gpu_update(tp_gpu *T, kt_error *err)
{
    set_scalars(&T->d, T->t);
    if (T->stored)
        return tp_stored_update(T->stored, err);
    int rc = T->t->p.coupled ? upload_g(T, err) : KT_OK;
    return rc == KT_OK && T->split ? tp_split_update(T->split, &T->d, err) : rc;
}

static int tp_gpu_launch(tp_gpu *T, void *next, int single, const long long *step_n,
                         cudaStream_t stream, cudaEvent_t marks[2], kt_error *err)
{
    if (T->stored) {
        int rc = tp_stored_launch(T->stored, next, single, step_n, stream, marks, err);
        return rc < 0 ? rc : marks != NULL;
    }
    if (T->split)
        return tp_split_launch(T->split, &T->d, next, single, step_n, stream, marks != NULL, err);
    return tp_fused_launch(&T->d, T->shared_bytes, next, single, step_n, stream, err);
}

static void tp_gpu_wait(tp_gpu *T, cudaStream_t stream)
{
    tp_split_wait(T->split, stream);
}

static void tp_gpu_join(tp_gpu *T, cudaStream_t stream)
{
    tp_split_join(T->split, &T->d, stream);
}

static int tp_gpu_download(tp_gpu *T, cudaStream_t stream, int64_t *bad_after,
                           kt_error *err)
{
    tp_plan *t = T->t;
    tp_state *st = T->st;
    const int64_t before = st->steps; /* the drum's steps at the last download */
    tp_dev_state s;
    cudaError_t e = cudaMemcpyAsync(&s, T->d.state, sizeof s, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
        return kt_cuda_fail(err, e, "reading the GPU timpani's state");
    const size_t nn = (size_t)t->nn * sizeof(double), nw = (size_t)t->nw * sizeof(double);
    int rc = kt_cuda_download(st->u, T->d.U[s.rot_u], nn, err);
    if (rc == KT_OK)
        rc = kt_cuda_download(st->u1, T->d.U[(s.rot_u + 2) % 3], nn, err);
    const double *a = T->split ? tp_split_last_a(T->split) : T->d.a;
    if (rc == KT_OK && a)
        rc = kt_cuda_download(st->a, a, nn, err);
    if (rc == KT_OK && t->p.coupled) {
        rc = kt_cuda_download(st->w, T->d.W[s.rot_w], nw, err);
        if (rc == KT_OK)
            rc = kt_cuda_download(st->w1, T->d.W[(s.rot_w + 2) % 3], nw, err);
        if (rc == KT_OK)
            rc = kt_cuda_download(st->Dn, T->d.D[s.rot_d], nw, err);
        if (rc == KT_OK)
            rc = kt_cuda_download(st->Dn1, T->d.D[s.rot_d ^ 1], nw, err);
    }
    if (rc < 0)
        return rc;
    st->steps = s.steps;
    st->last_iterations = s.last_iterations;
    st->last_increment = s.last_increment;
    if (s.bad && bad_after)
        *bad_after = s.bad_step - before;
    if (s.bad)
        return kt_fail(err, KT_EUNSTABLE, "timpani '%s': membrane blew up at step %lld (GPU)",
                       t->p.name, (long long)s.bad_step);
    return KT_OK;
}

static void tp_gpu_free(tp_gpu *T)
{
    if (!T)
        return;
    tp_stored_free(T->stored);
    tp_split_free(T->split);
    for (int k = 0; k < T->nalloc; k++)
        kt_cuda_free(T->alloc[k]);
    free(T);
}

/* ---- the table the room's device mirror drives (kt_instrument_gpu) ---- */

static int ops_create(void *self, const struct kt_cuda_room *R, void *stream, void **out,
                      kt_error *err)
{
    tp_gpu *T = NULL;
    int rc = tp_gpu_create(self, R, (cudaStream_t)stream, &T, err);
    *out = T;
    return rc;
}

static int ops_update(void *dev, kt_error *err) { return tp_gpu_update((tp_gpu *)dev, err); }

static int ops_launch(void *dev, void *next, int single, const long long *step_n, void *stream,
                      void *marks, kt_error *err)
{
    return tp_gpu_launch((tp_gpu *)dev, next, single, step_n, (cudaStream_t)stream,
                         (cudaEvent_t *)marks, err);
}

static void ops_wait(void *dev, void *stream)
{
    tp_gpu_wait((tp_gpu *)dev, (cudaStream_t)stream);
}

static void ops_join(void *dev, void *stream)
{
    tp_gpu_join((tp_gpu *)dev, (cudaStream_t)stream);
}

static int ops_download(void *dev, void *stream, int64_t *bad_after, kt_error *err)
{
    return tp_gpu_download((tp_gpu *)dev, (cudaStream_t)stream, bad_after, err);
}

static void ops_destroy(void *dev) { tp_gpu_free((tp_gpu *)dev); }

static const kt_instrument_gpu tp_gpu_table = {ops_create, ops_update,   ops_launch, ops_wait,
                                               ops_join,   ops_download, ops_destroy};

extern "C" const kt_instrument_gpu *tp_gpu_ops(void) { return &tp_gpu_table; }
