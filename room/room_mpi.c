/* room_mpi.c - MPI for a room split over ranks (kt_ranks.h): the kt_mpi_*
 * wrappers over MPI_COMM_WORLD, the memory check of every machine's ranks
 * before any allocation, and the transport room_slab.c steps with (halo
 * planes by nonblocking send/receive, windows and signals by blocking ones).
 * Built without MPI (KETTLE_HAVE_MPI unset) the wrappers report one rank and
 * kt_room_create_ranked is kt_room_create. */
#include "room_slab.h"
#include "kt_ranks.h"

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
    if (mpi_running())
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int kt_mpi_size(void)
{
    int n = 1;
    if (mpi_running())
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

void kt_mpi_abort(int code)
{
    if (mpi_running())
        MPI_Abort(MPI_COMM_WORLD, code);
}

void kt_mpi_barrier(void)
{
    if (mpi_running())
        MPI_Barrier(MPI_COMM_WORLD);
}

static double reduce(double v, MPI_Op op)
{
    double out = v;
    if (mpi_running())
        MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
    return out;
}

double kt_mpi_max(double v) { return reduce(v, MPI_MAX); }
double kt_mpi_min(double v) { return reduce(v, MPI_MIN); }

/* ---- the transport ---- */

typedef struct mpi_ctx {
    MPI_Comm halo, p2p;              /* duplicates of MPI_COMM_WORLD */
    int rank, ranks;
    MPI_Request req[4];
    int nreq;
} mpi_ctx;

static int mpi_halo_start(void *c, kt_room *r, void *field, kt_error *err)
{
    mpi_ctx *x = c;
    size_t esize = r->plan.params.precision == KT_SINGLE ? sizeof(float) : sizeof(double);
    int count = (int)(r->plan.plane * esize);
    char *f = field;
    char *first = f + room_pidx(r, -1, -1, r->plan.z0) * esize;
    char *last = f + room_pidx(r, -1, -1, r->plan.z_end - 1) * esize;
    char *below = f + room_pidx(r, -1, -1, r->plan.z0 - 1) * esize;
    char *above = f + room_pidx(r, -1, -1, r->plan.z_end) * esize;
    x->nreq = 0;
    int ok = MPI_SUCCESS;
    if (x->rank > 0) {
        ok |= MPI_Irecv(below, count, MPI_BYTE, x->rank - 1, 1, x->halo, &x->req[x->nreq++]);
        ok |= MPI_Isend(first, count, MPI_BYTE, x->rank - 1, 0, x->halo, &x->req[x->nreq++]);
    }
    if (x->rank + 1 < x->ranks) {
        ok |= MPI_Irecv(above, count, MPI_BYTE, x->rank + 1, 0, x->halo, &x->req[x->nreq++]);
        ok |= MPI_Isend(last, count, MPI_BYTE, x->rank + 1, 1, x->halo, &x->req[x->nreq++]);
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

static int create_slab(const kt_room_params *p, int rank, int ranks, kt_room **out,
                       kt_error *err)
{
    int planes[2];
    size_t bytes = 0;
    int rc = agree(kt_room_slab_plan(p, ranks, rank, planes, &bytes, err), err);
    if (rc < 0 || (rc = check_memory(p, bytes, err)) < 0)
        return rc;
    kt_room_grid g;
    kt_room_estimate(p, &g, NULL);
    int *zb = malloc(sizeof *zb * (size_t)(ranks + 1));
    mpi_ctx *x = calloc(1, sizeof *x);
    kt_room *room = NULL;
    if (!zb || !x)
        rc = kt_fail(err, KT_ENOMEM, "out of memory splitting the room");
    else
        rc = room_create_planes(p, planes[0], planes[1], &room, err);
    if (rc >= 0) {
        room_slab_split(g.nz, ranks, zb);
        x->rank = rank;
        x->ranks = ranks;
        MPI_Comm_dup(MPI_COMM_WORLD, &x->halo);
        MPI_Comm_dup(MPI_COMM_WORLD, &x->p2p);
        rc = room_slab_attach(room, rank, ranks, zb, &mpi_transport, x, err);
        x = NULL;                    /* the room owns it now */
    }
    free(x);
    free(zb);
    rc = agree(rc, err);
    if (rc < 0) {
        kt_room_destroy(room);
        return rc;
    }
    *out = room;
    return KT_OK;
}

int kt_room_create_ranked(const kt_room_params *p, kt_room **out, kt_error *err)
{
    if (!out)
        return kt_fail(err, KT_EINVAL, "kt_room_create_ranked: out is NULL");
    *out = NULL;
    int ranks = kt_mpi_size();
    if (ranks == 1)
        return kt_room_create(p, out, err);
    return create_slab(p, kt_mpi_rank(), ranks, out, err);
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
int kt_mpi_rank(void) { return 0; }
int kt_mpi_size(void) { return 1; }
void kt_mpi_abort(int code) { (void)code; }
void kt_mpi_barrier(void) {}
double kt_mpi_max(double v) { return v; }
double kt_mpi_min(double v) { return v; }

int kt_room_create_ranked(const kt_room_params *p, kt_room **out, kt_error *err)
{
    return kt_room_create(p, out, err);
}

#endif
