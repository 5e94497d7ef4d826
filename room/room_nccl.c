/* room_nccl.c - ranks on GPUs over NCCL (kt_ranks.h, kt_gpu_job_*): the
 * process's place in the job (rank, device, communicator, a stream for the
 * host's transfers), the host collectives kt_mpi_max/min/barrier use in a
 * GPU job, and the room_transport a CPU slab room gathers and checks with
 * when its ranks are GPU ranks started without MPI (host buffers staged
 * through device memory; the CPU room does not step there, the mirror
 * does: room/gpu/room_ranks.cu sends the device halos over the same
 * communicator).  Plain C: NCCL's and the CUDA runtime's APIs are C.  The job is process-wide state, as MPI_COMM_WORLD is:
 * set once when the process joins, read-only afterwards. */
#include "room_slab.h"
#include "kt_ranks.h"
#include "kt_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if KETTLE_NCCL_ENABLED
#include <cuda_runtime_api.h>
#include <nccl.h>

static struct gpu_job {
    int rank, ranks, device;  /* ranks 0: not in a job */
    ncclComm_t comm;
    cudaStream_t stream;
    void *stage;              /* device staging for host transfers */
    size_t stage_bytes;
} job;

static int nccl_fail(kt_error *err, ncclResult_t r, const char *doing)
{
    return kt_fail(err, KT_EIO, "%s: NCCL error %d (%s)", doing, (int)r, ncclGetErrorString(r));
}

static int cuda_fail(kt_error *err, cudaError_t e, const char *doing)
{
    if (e == cudaSuccess)
        return KT_OK;
    cudaGetLastError();
    return kt_fail(err, KT_EIO, "%s: CUDA error %d (%s)", doing, (int)e, cudaGetErrorString(e));
}

int kt_gpu_job_compiled(void) { return 1; }
int kt_gpu_job_rank(void) { return job.ranks ? job.rank : 0; }
int kt_gpu_job_size(void) { return job.ranks; }
int kt_gpu_job_device(void) { return job.ranks ? job.device : -1; }
void *room_gpu_job_comm(void) { return job.ranks ? (void *)job.comm : NULL; }

int kt_gpu_job_new_id(char id[KT_GPU_JOB_ID_CHARS], kt_error *err)
{
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess)
        return nccl_fail(err, r, "making an NCCL id");
    _Static_assert(sizeof u.internal * 2 + 1 <= KT_GPU_JOB_ID_CHARS, "id text too short");
    for (size_t i = 0; i < sizeof u.internal; i++)
        snprintf(id + 2 * i, 3, "%02x", (unsigned char)u.internal[i]);
    return KT_OK;
}

static int parse_id(const char *text, ncclUniqueId *u)
{
    if (!text || strlen(text) != 2 * sizeof u->internal)
        return -1;
    for (size_t i = 0; i < sizeof u->internal; i++) {
        unsigned v;
        if (sscanf(text + 2 * i, "%2x", &v) != 1)
            return -1;
        u->internal[i] = (char)v;
    }
    return 0;
}

int kt_gpu_job_join(int rank, int ranks, const char *id, kt_error *err)
{
    if (job.ranks)
        return kt_fail(err, KT_EINVAL, "this process is already rank %d of a GPU job", job.rank);
    ncclUniqueId u;
    if (ranks < 1 || rank < 0 || rank >= ranks)
        return kt_fail(err, KT_EINVAL, "GPU rank %d of %d does not exist", rank, ranks);
    if (parse_id(id, &u) < 0)
        return kt_fail(err, KT_EINVAL, "the GPU job's NCCL id is not %zu hex digits",
                       2 * sizeof u.internal);
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices < 1) {
        cudaGetLastError();
        return kt_fail(err, KT_ENOTSUP, "GPU rank %d: no GPU found", rank);
    }
    /* NVLink multicast (NVLS) off: it reserves memory and gains nothing on
     * point-to-point halos; a setting the user made stays */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    int device = rank % devices;
    int rc = cuda_fail(err, cudaSetDevice(device), "choosing this rank's GPU");
    if (rc == KT_OK)
        rc = cuda_fail(err, cudaStreamCreateWithFlags(&job.stream, cudaStreamNonBlocking),
                       "creating the job's stream");
    if (rc < 0)
        return rc;
    ncclResult_t r = ncclCommInitRank(&job.comm, ranks, u, rank);
    if (r != ncclSuccess) {
        cudaStreamDestroy(job.stream);
        return nccl_fail(err, r, "joining the GPU job");
    }
    job.rank = rank;
    job.ranks = ranks;
    job.device = device;
    return KT_OK;
}

void kt_gpu_job_leave(void)
{
    if (!job.ranks)
        return;
    cudaStreamSynchronize(job.stream);
    ncclCommFinalize(job.comm);
    ncclCommDestroy(job.comm);
    cudaFree(job.stage);
    cudaStreamDestroy(job.stream);
    memset(&job, 0, sizeof job);
}

void room_gpu_job_abort(void)
{
    if (!job.ranks)
        return;
    ncclCommAbort(job.comm);
    memset(&job, 0, sizeof job);
}

int kt_gpu_job_ensure(kt_error *err)
{
    if (job.ranks)
        return KT_OK;
    int ranks = kt_mpi_size();
    if (ranks < 2)
        return kt_fail(err, KT_EINVAL, "no GPU job: start it with kettle render --gpus N or "
                                       "under mpirun");
    char id[KT_GPU_JOB_ID_CHARS] = {0};
    int rank = kt_mpi_rank();
    int rc = rank == 0 ? kt_gpu_job_new_id(id, err) : KT_OK;
    if (room_mpi_share(id, sizeof id, rc < 0) < 0)
        return rc < 0 ? rc : kt_fail(err, KT_EIO, "rank 0 could not make the GPU job's id");
    return kt_gpu_job_join(rank, ranks, id, err);
}

static int stage(size_t bytes, kt_error *err)
{
    if (bytes <= job.stage_bytes)
        return KT_OK;
    cudaFree(job.stage);
    job.stage = NULL;
    job.stage_bytes = 0;
    int rc = cuda_fail(err, cudaMalloc(&job.stage, bytes), "staging a transfer between GPUs");
    if (rc == KT_OK)
        job.stage_bytes = bytes;
    return rc;
}

static int finish(ncclResult_t r, kt_error *err, const char *doing)
{
    if (r != ncclSuccess)
        return nccl_fail(err, r, doing);
    return cuda_fail(err, cudaStreamSynchronize(job.stream), doing);
}

int room_gpu_job_reduce(double v, int op, double *out, kt_error *err)
{
    *out = v;
    return room_gpu_job_reduce_array(out, 1, op, err);
}

int room_gpu_job_reduce_array(double *v, size_t n, int op, kt_error *err)
{
    if (!job.ranks || n == 0)
        return KT_OK;
    const size_t bytes = n * sizeof *v;
    int rc = stage(bytes, err);
    if (rc == KT_OK)
        rc = cuda_fail(err, cudaMemcpyAsync(job.stage, v, bytes, cudaMemcpyHostToDevice,
                                            job.stream), "a reduction over the GPU ranks");
    if (rc < 0)
        return rc;
    ncclRedOp_t o = op == ROOM_REDUCE_MAX ? ncclMax : op == ROOM_REDUCE_MIN ? ncclMin : ncclSum;
    ncclResult_t r = ncclAllReduce(job.stage, job.stage, n, ncclFloat64, o, job.comm, job.stream);
    if (r == ncclSuccess)
        cudaMemcpyAsync(v, job.stage, bytes, cudaMemcpyDeviceToHost, job.stream);
    return finish(r, err, "a reduction over the GPU ranks");
}

/* ---- the transport of a CPU slab room whose ranks are GPU ranks ---- */

static int job_send(void *ctx, int peer, int tag, const void *buf, size_t bytes, kt_error *err)
{
    (void)ctx, (void)tag;  /* messages between two ranks arrive in the order sent */
    int rc = stage(bytes ? bytes : 1, err);
    if (rc == KT_OK && bytes)
        rc = cuda_fail(err, cudaMemcpyAsync(job.stage, buf, bytes, cudaMemcpyHostToDevice,
                                            job.stream), "sending to a GPU rank");
    if (rc < 0)
        return rc;
    return finish(ncclSend(job.stage, bytes, ncclUint8, peer, job.comm, job.stream), err,
                  "sending to a GPU rank");
}

static int job_recv(void *ctx, int peer, int tag, void *buf, size_t bytes, kt_error *err)
{
    (void)ctx, (void)tag;
    int rc = stage(bytes ? bytes : 1, err);
    if (rc < 0)
        return rc;
    ncclResult_t r = ncclRecv(job.stage, bytes, ncclUint8, peer, job.comm, job.stream);
    if (r == ncclSuccess && bytes)
        cudaMemcpyAsync(buf, job.stage, bytes, cudaMemcpyDeviceToHost, job.stream);
    return finish(r, err, "receiving from a GPU rank");
}

/* One NCCL group on the stage d of four `bytes` parts: the first goes to the
 * rank below and the third comes from it, the second to the rank above and
 * the fourth from it. */
static ncclResult_t swap_ends(char *d, size_t bytes, int below, int above)
{
    ncclGroupStart();
    if (below) {
        ncclSend(d, bytes, ncclUint8, job.rank - 1, job.comm, job.stream);
        ncclRecv(d + 2 * bytes, bytes, ncclUint8, job.rank - 1, job.comm, job.stream);
    }
    if (above) {
        ncclSend(d + bytes, bytes, ncclUint8, job.rank + 1, job.comm, job.stream);
        ncclRecv(d + 3 * bytes, bytes, ncclUint8, job.rank + 1, job.comm, job.stream);
    }
    return ncclGroupEnd();
}

/* A slab cut along x or y: its end layers packed on the host, through
 * the device stage, the neighbours' unpacked into its halo layers. */
static int job_halo_layers(kt_room *r, void *field, kt_error *err)
{
    const int a = r->slab->axis, lo = a ? r->plan.y0 : r->plan.x0;
    const int hi = a ? r->plan.y_end : r->plan.x_end;
    const int below = job.rank > 0, above = job.rank + 1 < job.ranks;
    const size_t bytes = room_slab_layer_copy(r, field, lo, NULL, 0);
    unsigned char *h = malloc(4 * bytes);
    int rc = h ? stage(4 * bytes, err)
               : kt_fail(err, KT_ENOMEM, "out of memory exchanging halo layers");
    if (rc < 0) {
        free(h);
        return rc;
    }
    char *d = job.stage;
    room_slab_layer_copy(r, field, lo, h, 1);
    room_slab_layer_copy(r, field, hi - 1, h + bytes, 1);
    cudaMemcpyAsync(d, h, 2 * bytes, cudaMemcpyHostToDevice, job.stream);
    ncclResult_t res = swap_ends(d, bytes, below, above);
    if (res == ncclSuccess)
        cudaMemcpyAsync(h + 2 * bytes, d + 2 * bytes, 2 * bytes, cudaMemcpyDeviceToHost,
                        job.stream);
    rc = finish(res, err, "exchanging halo layers between GPU ranks");
    if (rc == KT_OK && below)
        room_slab_layer_copy(r, field, lo - 1, h + 2 * bytes, 0);
    if (rc == KT_OK && above)
        room_slab_layer_copy(r, field, hi, h + 3 * bytes, 0);
    free(h);
    return rc;
}

/* The whole exchange at once (the CPU room of a GPU job steps only to
 * gather its last samples): the two owned end planes out, the halos in. */
static int job_halo_start(void *ctx, kt_room *r, void *field, kt_error *err)
{
    (void)ctx;
    if (r->slab->axis != 2)
        return job_halo_layers(r, field, err);
    const size_t esize = kt_precision_bytes(r->plan.params.precision);
    const size_t bytes = r->plan.plane * esize;
    char *f = field, *d;
    int rc = stage(4 * bytes, err);
    if (rc < 0)
        return rc;
    d = job.stage;
    const int below = job.rank > 0, above = job.rank + 1 < job.ranks;
    cudaMemcpyAsync(d, f + room_pidx(r, -1, -1, r->plan.z0) * esize, bytes, cudaMemcpyHostToDevice,
                    job.stream);
    cudaMemcpyAsync(d + bytes, f + room_pidx(r, -1, -1, r->plan.z_end - 1) * esize, bytes,
                    cudaMemcpyHostToDevice, job.stream);
    ncclResult_t res = swap_ends(d, bytes, below, above);
    if (res == ncclSuccess && below)
        cudaMemcpyAsync(f + room_pidx(r, -1, -1, r->plan.z0 - 1) * esize, d + 2 * bytes, bytes,
                        cudaMemcpyDeviceToHost, job.stream);
    if (res == ncclSuccess && above)
        cudaMemcpyAsync(f + room_pidx(r, -1, -1, r->plan.z_end) * esize, d + 3 * bytes, bytes,
                        cudaMemcpyDeviceToHost, job.stream);
    return finish(res, err, "exchanging halo planes between GPU ranks");
}

static void job_halo_test(void *ctx) { (void)ctx; }
static int job_halo_finish(void *ctx, kt_error *err) { (void)ctx, (void)err; return KT_OK; }

static int job_any(void *ctx, int flag)
{
    (void)ctx;
    double out = flag;
    return room_gpu_job_reduce(flag ? 1.0 : 0.0, ROOM_REDUCE_MAX, &out, NULL) < 0 || out > 0;
}

static void job_destroy(void *ctx) { (void)ctx; }

static const room_transport job_transport = {job_halo_start, job_halo_test, job_halo_finish,
                                             job_send,       job_recv,      job_any,
                                             job_destroy};

int room_gpu_job_create_slab(const kt_room_params *p, const kt_split_options *so, kt_room **out,
                             kt_error *err)
{
    int lo[3], hi[3], axis = 2;
    size_t bytes = 0;
    double bad = 0;
    int rc = kt_room_split_part(p, job.ranks, so, job.rank, lo, hi, &bytes, err);
    /* every rank learns of a refusal, so none waits on a missing partner */
    if (room_gpu_job_reduce(rc < 0, ROOM_REDUCE_MAX, &bad, rc < 0 ? NULL : err) < 0 || bad > 0)
        return rc < 0 ? rc : kt_fail(err, KT_EINVAL, "another GPU rank cannot plan its slab");
    double together = 0;   /* one host: the ranks' slabs share its memory */
    rc = room_gpu_job_reduce((double)bytes, ROOM_REDUCE_SUM, &together, err);
    if (rc < 0)
        return rc;
    size_t avail = kt_memory_available_bytes();
    if (p->memory_limit_bytes ? bytes > p->memory_limit_bytes : avail && together > (double)avail)
        return kt_fail(err, KT_ENOMEM, "the %d GPU ranks' rooms need %.2f GiB of host memory "
                       "together (this rank %.2f GiB) but %.2f GiB are available%s", job.ranks,
                       together / 1073741824.0, bytes / 1073741824.0,
                       (p->memory_limit_bytes ? p->memory_limit_bytes : avail) / 1073741824.0,
                       p->memory_limit_bytes ? " (the memory limit)" : "");
    int *cut = malloc(sizeof *cut * (size_t)(job.ranks + 1));
    kt_room *room = NULL;
    rc = cut ? room_slab_choose(p, job.ranks, so, &axis, cut, err)
             : kt_fail(err, KT_ENOMEM, "out of memory splitting the room");
    if (rc == KT_OK)
        rc = room_create_box(p, lo, hi, &room, err);
    if (rc == KT_OK)
        rc = room_slab_attach(room, job.rank, job.ranks, axis, cut, &job_transport, NULL, err);
    free(cut);
    if (room_gpu_job_reduce(rc < 0, ROOM_REDUCE_MAX, &bad, NULL) < 0 || bad > 0) {
        kt_room_destroy(room);
        return rc < 0 ? rc : kt_fail(err, KT_EINVAL, "another GPU rank could not create its "
                                                     "part of the room");
    }
    *out = room;
    return KT_OK;
}

#endif
