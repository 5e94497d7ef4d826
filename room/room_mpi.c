/* room_mpi.c - MPI for a room split over ranks (kt_ranks.h): the kt_mpi_*
 * wrappers over MPI_COMM_WORLD, the memory check of every machine's ranks
 * before any allocation, and the transport room_slab.c steps with (halo
 * planes by nonblocking send/receive, windows and signals by blocking ones).
 * Built without MPI (KETTLE_HAVE_MPI unset) the wrappers report one rank and
 * kt_room_create_ranked is kt_room_create.  In a GPU job that `kettle render
 * --gpus N` started (kt_gpu_job_*, room/gpu/room_nccl.cu) the wrappers speak
 * for its ranks instead, and the room splits over them. */
#include "room_slab.h"
#include "kt_ranks.h"
#include "kt_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kt_mpi_launched(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                 "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

/* The job's reductions when its ranks are GPU ranks without MPI. */
static int in_gpu_job(void) { return kt_gpu_job_size() > 0; }
static double job_reduce(double v, int op)
{
    double out = v;
    room_gpu_job_reduce(v, op, &out, NULL);
    return out;
}

#if !KETTLE_NCCL_ENABLED
int kt_gpu_job_compiled(void) { return 0; }
int kt_gpu_job_new_id(char id[KT_GPU_JOB_ID_CHARS], kt_error *err)
{
    id[0] = '\0';
    return kt_fail(err, KT_ENOTSUP, "this kettle has no NCCL (a CUDA build finds it in the "
                                    "CUDA toolkit): rooms run on one GPU");
}
int kt_gpu_job_join(int rank, int ranks, const char *id, kt_error *err)
{
    (void)rank, (void)ranks, (void)id;
    return kt_gpu_job_new_id((char[KT_GPU_JOB_ID_CHARS]){0}, err);
}
int kt_gpu_job_ensure(kt_error *err) { return kt_gpu_job_join(0, 0, NULL, err); }
int kt_gpu_job_rank(void) { return 0; }
int kt_gpu_job_size(void) { return 0; }
int kt_gpu_job_device(void) { return -1; }
void kt_gpu_job_leave(void) {}
int room_gpu_job_create_slab(const kt_room_params *p, const kt_split_options *so, kt_room **out,
                             kt_error *err)
{
    (void)p, (void)so, (void)out;
    return kt_gpu_job_ensure(err);
}
int room_gpu_job_reduce(double v, int op, double *out, kt_error *err)
{
    (void)op, (void)err;
    *out = v;
    return KT_OK;
}
int room_gpu_job_reduce_array(double *v, size_t n, int op, kt_error *err)
{
    (void)v, (void)n, (void)op, (void)err;
    return KT_OK;
}
void room_gpu_job_abort(void) {}
void *room_gpu_job_comm(void) { return NULL; }
#endif

#ifdef KETTLE_HAVE_MPI
#include <mpi.h>

static int mpi_running(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

int kt_mpi_compiled(void) { return 1; }

int kt_mpi_init(int *argc, char ***argv, kt_error *err)
{
    if (mpi_running())
        return KT_OK;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return kt_fail(err, KT_EIO, "MPI_Init failed");
    return KT_OK;
}

void kt_mpi_finalize(void)
{
    if (mpi_running())
        MPI_Finalize();
}

int kt_mpi_rank(void)
{
    int r = 0;
    if (in_gpu_job())
        return kt_gpu_job_rank();
    if (mpi_running())
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int kt_mpi_size(void)
{
    int n = 1;
    if (in_gpu_job())
        return kt_gpu_job_size();
    if (mpi_running())
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

void kt_mpi_abort(int code)
{
    room_gpu_job_abort();
    if (mpi_running())
        MPI_Abort(MPI_COMM_WORLD, code);
}

void kt_mpi_barrier(void)
{
    if (in_gpu_job() && !mpi_running())
        job_reduce(0, ROOM_REDUCE_MAX);
    if (mpi_running())
        MPI_Barrier(MPI_COMM_WORLD);
}

static double reduce(double v, MPI_Op op)
{
    double out = v;
    if (in_gpu_job() && !mpi_running())
        return job_reduce(v, op == MPI_MAX ? ROOM_REDUCE_MAX : ROOM_REDUCE_MIN);
    if (mpi_running())
        MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
    return out;
}

double kt_mpi_max(double v) { return reduce(v, MPI_MAX); }
double kt_mpi_min(double v) { return reduce(v, MPI_MIN); }

int kt_mpi_sum(double *v, size_t n, kt_error *err)
{
    if (in_gpu_job() && !mpi_running())
        return room_gpu_job_reduce_array(v, n, ROOM_REDUCE_SUM, err);
    if (!mpi_running() || n == 0)
        return KT_OK;
    if (n > (size_t)0x7fffffff)
        return kt_fail(err, KT_EINVAL, "a sum of %zu numbers over the ranks is too large", n);
    if (MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return kt_fail(err, KT_EIO, "a sum over the MPI ranks failed");
    return KT_OK;
}

/* ---- the transport ---- */

typedef struct mpi_ctx {
    MPI_Comm halo, p2p;              /* duplicates of MPI_COMM_WORLD */
    int rank, ranks;
    MPI_Request req[4];
    int nreq;
    /* Split along x or y: the layers as MPI subarrays of a field (its own
     * rows and planes, strided), in halo_start's order: the first and last
     * owned layers, the halo layers below and above.  MPI packs them. */
    MPI_Datatype layer[4];
    int layers;
} mpi_ctx;

/* The four layers of a rank split along x or y, made on first use. */
static int make_layers(mpi_ctx *x, const kt_room *r, kt_error *err)
{
    const room_plan *pl = &r->plan;
    const int a = r->slab->axis, h = pl->halo;
    /* C order: planes, rows, columns */
    int size[3] = {(int)pl->pz, (int)pl->py, (int)pl->px};
    int sub[3] = {pl->z_end - pl->z0, pl->y_end - pl->y0, pl->x_end - pl->x0};
    int start[3] = {h, h, h}, d = 2 - a, len = sub[d];
    sub[d] = 1;
    const int at[4] = {h, h + len - 1, h - 1, h + len};
    MPI_Datatype elem = pl->params.precision == KT_SINGLE ? MPI_FLOAT : MPI_DOUBLE;
    int ok = MPI_SUCCESS;
    for (int k = 0; k < 4; k++) {
        start[d] = at[k];
        ok |= MPI_Type_create_subarray(3, size, sub, start, MPI_ORDER_C, elem, &x->layer[k]);
        ok |= MPI_Type_commit(&x->layer[k]);
    }
    x->layers = 4;
    return ok == MPI_SUCCESS ? KT_OK : kt_fail(err, KT_EIO, "describing the halo layers failed");
}

static int mpi_halo_start(void *c, kt_room *r, void *field, kt_error *err)
{
    mpi_ctx *x = c;
    size_t esize = kt_precision_bytes(r->plan.params.precision);
    char *f = field;
    /* the first and last owned layers, the halo layers below and above */
    void *buf[4] = {f, f, f, f};
    MPI_Datatype type[4] = {MPI_BYTE, MPI_BYTE, MPI_BYTE, MPI_BYTE};
    int count = 1;
    if (r->slab->axis == 2) {
        count = (int)(r->plan.plane * esize);
        buf[0] = f + room_pidx(r, -1, -1, r->plan.z0) * esize;
        buf[1] = f + room_pidx(r, -1, -1, r->plan.z_end - 1) * esize;
        buf[2] = f + room_pidx(r, -1, -1, r->plan.z0 - 1) * esize;
        buf[3] = f + room_pidx(r, -1, -1, r->plan.z_end) * esize;
    } else {
        if (!x->layers && make_layers(x, r, err) < 0)
            return KT_EIO;
        memcpy(type, x->layer, sizeof type);
    }
    x->nreq = 0;
    int ok = MPI_SUCCESS;
    if (x->rank > 0) {
        ok |= MPI_Irecv(buf[2], count, type[2], x->rank - 1, 1, x->halo, &x->req[x->nreq++]);
        ok |= MPI_Isend(buf[0], count, type[0], x->rank - 1, 0, x->halo, &x->req[x->nreq++]);
    }
    if (x->rank + 1 < x->ranks) {
        ok |= MPI_Irecv(buf[3], count, type[3], x->rank + 1, 0, x->halo, &x->req[x->nreq++]);
        ok |= MPI_Isend(buf[1], count, type[1], x->rank + 1, 1, x->halo, &x->req[x->nreq++]);
    }
    return ok == MPI_SUCCESS ? KT_OK : kt_fail(err, KT_EIO, "posting the halo exchange failed");
}

static void mpi_halo_test(void *c)
{
    mpi_ctx *x = c;
    int done = 0;
    if (x->nreq)
        MPI_Testall(x->nreq, x->req, &done, MPI_STATUSES_IGNORE);
}

static int mpi_halo_finish(void *c, kt_error *err)
{
    mpi_ctx *x = c;
    int ok = x->nreq ? MPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    x->nreq = 0;
    return ok == MPI_SUCCESS ? KT_OK : kt_fail(err, KT_EIO, "the halo exchange failed");
}

static int mpi_send(void *c, int peer, int tag, const void *buf, size_t bytes, kt_error *err)
{
    mpi_ctx *x = c;
    if (bytes > (size_t)0x7fffffff)
        return kt_fail(err, KT_EINVAL, "a message of %zu bytes is too large", bytes);
    if (MPI_Send(buf, (int)bytes, MPI_BYTE, peer, tag, x->p2p) != MPI_SUCCESS)
        return kt_fail(err, KT_EIO, "sending to rank %d failed", peer);
    return KT_OK;
}

static int mpi_recv(void *c, int peer, int tag, void *buf, size_t bytes, kt_error *err)
{
    mpi_ctx *x = c;
    if (bytes > (size_t)0x7fffffff)
        return kt_fail(err, KT_EINVAL, "a message of %zu bytes is too large", bytes);
    if (MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, tag, x->p2p, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return kt_fail(err, KT_EIO, "receiving from rank %d failed", peer);
    return KT_OK;
}

static int mpi_any(void *c, int flag)
{
    mpi_ctx *x = c;
    int out = flag;
    MPI_Allreduce(&flag, &out, 1, MPI_INT, MPI_LOR, x->p2p);
    return out;
}

static void mpi_destroy(void *c)
{
    mpi_ctx *x = c;
    if (mpi_running()) {
        MPI_Comm_free(&x->halo);
        MPI_Comm_free(&x->p2p);
        for (int k = 0; k < x->layers; k++)
            MPI_Type_free(&x->layer[k]);
    }
    free(x);
}

static const room_transport mpi_transport = {mpi_halo_start, mpi_halo_test, mpi_halo_finish,
                                             mpi_send,       mpi_recv,      mpi_any,
                                             mpi_destroy};

/* ---- the memory check and creation ---- */

/* Bytes the ranks on this machine need together, and what it has available
 * (or, with a memory limit, this rank's need against the limit). */
static int check_memory(const kt_room_params *p, size_t mine, kt_error *err)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    unsigned long long need = mine, together = 0;
    int here = 1;
    MPI_Allreduce(&need, &together, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, node);
    MPI_Comm_size(node, &here);
    MPI_Comm_free(&node);
    size_t avail = kt_memory_available_bytes();
    int bad;
    char msg[sizeof err->message];
    if (p->memory_limit_bytes) {
        bad = mine > p->memory_limit_bytes;
        snprintf(msg, sizeof msg, "rank %d's slab needs %zu bytes (%.2f GiB) but the memory "
                 "limit is %zu bytes (%.2f GiB)", kt_mpi_rank(), mine, mine / 1073741824.0,
                 p->memory_limit_bytes, p->memory_limit_bytes / 1073741824.0);
    } else {
        bad = avail && together > avail;
        snprintf(msg, sizeof msg, "the %d ranks on this machine need %llu bytes (%.2f GiB) "
                 "together but available memory is %zu bytes (%.2f GiB)", here, together,
                 together / 1073741824.0, avail, avail / 1073741824.0);
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (bad)
        return kt_fail(err, KT_ENOMEM, "%s", msg);
    if (any)
        return kt_fail(err, KT_ENOMEM, "the room is too large for the memory of another "
                                       "rank's machine (its rank says how much)");
    return KT_OK;
}

/* Every rank learns whether any failed, so none waits on a missing partner. */
static int agree(int rc, kt_error *err)
{
    int bad = rc < 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any && !bad)
        return kt_fail(err, KT_EINVAL, "another rank could not create its part of the room");
    return rc;
}

static int create_slab(const kt_room_params *p, const kt_split_options *so, int rank,
                       int ranks, kt_room **out, kt_error *err)
{
    int lo[3], hi[3], axis = 2;
    size_t bytes = 0;
    int rc = agree(kt_room_split_part(p, ranks, so, rank, lo, hi, &bytes, err), err);
    if (rc < 0 || (rc = check_memory(p, bytes, err)) < 0)
        return rc;
    int *cut = malloc(sizeof *cut * (size_t)(ranks + 1));
    mpi_ctx *x = calloc(1, sizeof *x);
    kt_room *room = NULL;
    if (!cut || !x)
        rc = kt_fail(err, KT_ENOMEM, "out of memory splitting the room");
    else if ((rc = room_slab_choose(p, ranks, so, &axis, cut, err)) >= 0)
        rc = room_create_box(p, lo, hi, &room, err);
    if (rc >= 0) {
        x->rank = rank;
        x->ranks = ranks;
        MPI_Comm_dup(MPI_COMM_WORLD, &x->halo);
        MPI_Comm_dup(MPI_COMM_WORLD, &x->p2p);
        rc = room_slab_attach(room, rank, ranks, axis, cut, &mpi_transport, x, err);
        x = NULL;                    /* the room owns it now */
    }
    free(x);
    free(cut);
    rc = agree(rc, err);
    if (rc < 0) {
        kt_room_destroy(room);
        return rc;
    }
    *out = room;
    return KT_OK;
}

int room_mpi_share(void *buf, size_t bytes, int bad)
{
    if (!mpi_running())
        return -1;
    int ok = MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS && !bad;
    ok = ok && MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS;
    return ok ? 0 : -1;
}

int kt_room_create_split(const kt_room_params *p, const kt_split_options *so, kt_room **out,
                         kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_room_create_split: out is NULL");
    *out = NULL;
    int ranks = kt_mpi_size();
    if (ranks == 1)
        return kt_room_create(p, out, err);
    if (!mpi_running())          /* GPU ranks that kettle started, without MPI */
        return room_gpu_job_create_slab(p, so, out, err);
    return create_slab(p, so, kt_mpi_rank(), ranks, out, err);
}

#else /* built without MPI */

int kt_mpi_compiled(void) { return 0; }

int kt_mpi_init(int *argc, char ***argv, kt_error *err)
{
    (void)argc;
    (void)argv;
    return kt_fail(err, KT_EINVAL, "this kettle was built without MPI (configure with "
                                   "-DKETTLE_MPI=ON and libopenmpi-dev installed)");
}

void kt_mpi_finalize(void) {}
int kt_mpi_rank(void) { return in_gpu_job() ? kt_gpu_job_rank() : 0; }
int kt_mpi_size(void) { return in_gpu_job() ? kt_gpu_job_size() : 1; }
void kt_mpi_abort(int code)
{
    (void)code;
    room_gpu_job_abort();
}
void kt_mpi_barrier(void)
{
    if (in_gpu_job())
        job_reduce(0, ROOM_REDUCE_MAX);
}
double kt_mpi_max(double v) { return in_gpu_job() ? job_reduce(v, ROOM_REDUCE_MAX) : v; }
double kt_mpi_min(double v) { return in_gpu_job() ? job_reduce(v, ROOM_REDUCE_MIN) : v; }
int kt_mpi_sum(double *v, size_t n, kt_error *err)
{
    return in_gpu_job() ? room_gpu_job_reduce_array(v, n, ROOM_REDUCE_SUM, err) : KT_OK;
}

int room_mpi_share(void *buf, size_t bytes, int bad)
{
    (void)buf, (void)bytes, (void)bad;
    return -1;
}

int kt_room_create_split(const kt_room_params *p, const kt_split_options *so, kt_room **out,
                         kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_room_create_split: out is NULL");
    *out = NULL;
    if (in_gpu_job() && kt_gpu_job_size() > 1)
        return room_gpu_job_create_slab(p, so, out, err);
    return kt_room_create(p, out, err);
}

#endif

int kt_room_create_ranked(const kt_room_params *p, kt_room **out, kt_error *err)
{
    kt_split_options so;
    kt_split_options_default(&so);
    so.axis = KT_SPLIT_Z;
    return kt_room_create_split(p, &so, out, err);
}
