/* The link between GPU ranks under mpirun (backend.h's rank_link_* and
 * rank_xfer; docs/internals.md "Several processes"): one NCCL
 * communicator per process, and every transfer a rank makes enqueued on
 * the backend's stream, or (ND_RANK_LINK_SIDE) on the link's own stream
 * beside it. A rank's plan runs step by step (executor.c): a transfer on
 * the backend's stream is ordered after the kernel that wrote its rows and
 * before the kernel that reads them; the halo transfers on the link's
 * stream are ordered against the kernels by events (the lanes of
 * scheduler/rank_lanes.h), so that they overlap the interior. The host
 * waits once, after the plan (rank_link_wait). Every rank enqueues its
 * transfers in the plan's step order, and the two streams never run NCCL
 * operations at once (the executor joins them around a transfer on the
 * backend's stream), so the earliest unfinished one has all its
 * participants in it, as with MPI (dist_mpi.c).
 *
 * libnccl is opened with dlopen, as the CUDA libraries are
 * (cuda_loader.h): built where the toolkit has nccl.h (meson option nccl),
 * libnd still loads where libnccl is not, and the link is then not
 * offered (rank_link_probe says why). This file is nd's one user of
 * libnccl: rank 0's ncclUniqueId is made here too (rank_link_id), and the
 * runtime only carries its bytes to the other ranks over MPI. */
#include <nccl.h> /* before cuda_loader.h's redirects: it includes cuda_runtime.h */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/rank_copy.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/fault.h"
#include "common/mem_count.h"

/* A transfer goes in parts of at most this many bytes (one NCCL group), so
 * that a rank taking part without memory (a failed step) sends zeros from,
 * and receives into, two blocks of this size made when the link opens:
 * that rank cannot then fail for want of device memory while its peers
 * wait in the transfer. Both ends split alike (the size is the plan's). */
#define PART ((size_t)8 << 20)

_Static_assert(PART >= ND_CUDA_RANK_COPY_SLOT, "the zeros cover a part on the copy engines");
_Static_assert(sizeof(ncclUniqueId) <= ND_RANK_LINK_ID_BYTES, "an ncclUniqueId fits backend.h's link id");

static struct {
    ncclResult_t (*GetVersion)(int *);
    ncclResult_t (*GetUniqueId)(ncclUniqueId *);
    ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*CommAbort)(ncclComm_t);
    ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t *);
    const char *(*GetErrorString)(ncclResult_t);
    const char *(*GetLastError)(ncclComm_t); /* NCCL 2.13 on; NULL before */
    ncclResult_t (*Send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*Recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*Broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
} N;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_message[600]; /* empty: loaded */

#define SYM(field, name)                                                          \
    do {                                                                          \
        void *p_ = dlsym(lib, name);                                              \
        if (!p_ && !optional) {                                                   \
            snprintf(load_message, sizeof load_message, "libnccl.so.2 lacks %s", name); \
            return;                                                               \
        }                                                                         \
        memcpy(&N.field, &p_, sizeof N.field);                                    \
    } while (0)

static void load(void) {
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen(ND_NCCL_LIB_DIR "/libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_message, sizeof load_message, "cannot open libnccl.so.2 (nor in %s): %.300s",
                 ND_NCCL_LIB_DIR, dlerror());
        return;
    }
    int optional = 0;
    SYM(GetVersion, "ncclGetVersion");
    SYM(GetUniqueId, "ncclGetUniqueId");
    SYM(CommInitRank, "ncclCommInitRank");
    SYM(CommDestroy, "ncclCommDestroy");
    SYM(CommAbort, "ncclCommAbort");
    SYM(CommGetAsyncError, "ncclCommGetAsyncError");
    SYM(GetErrorString, "ncclGetErrorString");
    SYM(Send, "ncclSend");
    SYM(Recv, "ncclRecv");
    SYM(Broadcast, "ncclBroadcast");
    SYM(AllGather, "ncclAllGather");
    SYM(GroupStart, "ncclGroupStart");
    SYM(GroupEnd, "ncclGroupEnd");
    optional = 1;
    SYM(GetLastError, "ncclGetLastError");
    int v = 0;
    /* ncclSend/ncclRecv came with 2.7 (codes: 2700 then, 20900 from 2.9). */
    if (N.GetVersion(&v) != ncclSuccess || v < 2700)
        snprintf(load_message, sizeof load_message, "libnccl.so.2 is version code %d; nd needs NCCL 2.7 or later",
                 v);
}

static nd_status loaded(void) {
    pthread_once(&load_once, load);
    if (!load_message[0]) return ND_OK;
    return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: NCCL for GPU ranks: %s", load_message);
}

typedef struct nd_cuda_link {
    nd_cuda *cu;
    ncclComm_t comm;
    int32_t rank, ranks;
    void *zeros, *sink; /* PART bytes each: what a rank without memory sends, and receives into */
    int broken;         /* NCCL reported an error: the communicator is aborted, not destroyed */
    /* Ranks of one machine: sends, receives and broadcasts on the copy
     * engines (rank_copy.h); NULL: NCCL carries them. */
    nd_cuda_rank_copy *copy;
    /* The link's lane (backend.h's rank_lane_*): its stream, the marks
     * (events, by mark number, made when first recorded) and two events
     * for joins. */
    cudaStream_t side;
    cudaEvent_t *marks;
    int32_t n_marks;
    cudaEvent_t join[2];
} nd_cuda_link;

static nd_cuda *impl(nd_backend *be) { return (nd_cuda *)be->impl; }

static nd_status nccl_failed(nd_cuda_link *L, ncclResult_t r, const char *what) {
    const char *detail = N.GetLastError && L && L->comm ? N.GetLastError(L->comm) : NULL;
    return nd_error_set(ND_ERR_BACKEND, "nd_sync: %s failed on MPI rank %d of %d: %s%s%s", what, L ? (int)L->rank : -1,
                        L ? (int)L->ranks : 0, N.GetErrorString(r), detail && *detail ? ": " : "",
                        detail ? detail : "");
}

static nd_status link_probe(nd_backend *be) {
    (void)be;
    return loaded();
}

/* Rank 0's: the id ncclCommInitRank takes on every rank. */
static nd_status link_id(nd_backend *be, void *id, size_t bytes) {
    (void)be;
    nd_status s = loaded();
    if (s != ND_OK) return s;
    if (bytes < sizeof(ncclUniqueId))
        return nd_error_set(ND_ERR_ARG, "nd_init: an ncclUniqueId needs %zu bytes, not %zu", sizeof(ncclUniqueId),
                            bytes);
    ncclUniqueId u;
    memset(&u, 0, sizeof u);
    ncclResult_t r = N.GetUniqueId(&u);
    if (r != ncclSuccess)
        return nd_error_set(ND_ERR_BACKEND, "nd_init: ncclGetUniqueId failed on MPI rank 0: %s", N.GetErrorString(r));
    memcpy(id, &u, sizeof u);
    return ND_OK;
}

static void link_close(nd_backend *be) {
    nd_cuda *cu = impl(be);
    nd_cuda_link *L = cu->link;
    if (!L) return;
    cu->link = NULL;
    if (cu->device != 0) cudaSetDevice(cu->device);
    if (L->comm) {
        if (!L->broken) {
            cudaStreamSynchronize(cu->stream);
            if (L->side) cudaStreamSynchronize(L->side);
        }
        (void)(L->broken ? N.CommAbort(L->comm) : N.CommDestroy(L->comm));
    }
    nd_cuda_rank_copy_close(L->copy); /* after the streams: a peer may still write into it otherwise */
    for (int32_t i = 0; i < L->n_marks; i++)
        if (L->marks[i]) cudaEventDestroy(L->marks[i]);
    free(L->marks);
    for (int i = 0; i < 2; i++)
        if (L->join[i]) cudaEventDestroy(L->join[i]);
    if (L->side) cudaStreamDestroy(L->side);
    if (L->zeros) {
        cudaFree(L->zeros);
        nd_mem_count_release(1, 2 * PART);
    }
    (void)cudaGetLastError();
    free(L);
}

/* rank_copy.h's allgather over the communicator, through device memory
 * on the backend's stream; all NULL: takes part, keeps nothing. */
static nd_status gather(void *ctx, const void *mine, void *all, size_t bytes) {
    nd_cuda_link *L = ctx;
    nd_cuda *cu = L->cu;
    size_t total = bytes * (size_t)L->ranks;
    char *d = NULL;
    cudaError_t e = cudaMalloc((void **)&d, total + bytes);
    if (e != cudaSuccess) return nd_cuda_fail(e, "nd_init: device memory for an allgather between MPI ranks");
    e = cudaMemcpyAsync(d + total, mine, bytes, cudaMemcpyHostToDevice, cu->stream);
    ncclResult_t r = N.AllGather(d + total, d, bytes, ncclUint8, L->comm, cu->stream);
    if (e == cudaSuccess && all) e = cudaMemcpyAsync(all, d, total, cudaMemcpyDeviceToHost, cu->stream);
    cudaError_t e2 = cudaStreamSynchronize(cu->stream);
    cudaFree(d);
    if (r != ncclSuccess) return nccl_failed(L, r, "an allgather between MPI ranks (NCCL)");
    if (e == cudaSuccess) e = e2;
    return e == cudaSuccess ? ND_OK : nd_cuda_fail(e, "nd_init: an allgather between MPI ranks");
}

static nd_status link_open(nd_backend *be, const void *id, size_t id_bytes, int32_t ranks, int32_t rank) {
    nd_cuda *cu = impl(be);
    nd_status s = loaded();
    if (s != ND_OK) return s;
    if (id_bytes < sizeof(ncclUniqueId))
        return nd_error_set(ND_ERR_ARG, "nd_init: an ncclUniqueId needs %zu bytes, not %zu", sizeof(ncclUniqueId),
                            id_bytes);
    link_close(be);
    nd_cuda_link *L = nd_calloc(1, sizeof *L);
    if (!L) return nd_error_set(ND_ERR_OOM, "nd_init: out of host memory for the NCCL link");
    L->rank = rank;
    L->ranks = ranks;
    L->cu = cu;
    cu->link = L;
    cudaSetDevice(cu->device); /* NCCL's communicator takes the current device */
    /* The two blocks, one of zeros: made before the communicator, whose
     * own buffers are the larger. */
    cudaError_t e = cudaMalloc(&L->zeros, 2 * PART);
    if (e == cudaSuccess) {
        L->sink = (char *)L->zeros + PART;
        nd_mem_count_alloc(1, 2 * PART);
        e = cudaMemsetAsync(L->zeros, 0, PART, cu->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(cu->stream);
    } else {
        L->zeros = NULL;
    }
    if (e != cudaSuccess) s = nd_cuda_fail(e, "nd_init: cudaMalloc of the NCCL link's 16 MiB of scratch");
    if (s == ND_OK) {
        /* The highest priority: without it the link's kernels waited for
         * the interior's blocks and heat ran 1.4x slower (H200). */
        int least = 0, greatest = 0;
        (void)cudaDeviceGetStreamPriorityRange(&least, &greatest);
        e = cudaStreamCreateWithPriority(&L->side, cudaStreamNonBlocking, greatest);
        for (int i = 0; i < 2 && e == cudaSuccess; i++) e = cudaEventCreateWithFlags(&L->join[i], cudaEventDisableTiming);
        if (e != cudaSuccess) s = nd_cuda_fail(e, "nd_init: the NCCL link's stream and events");
    }
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    /* Every rank calls it (the runtime makes sure): a rank that failed
     * above joins all the same, so that the others do not wait for it. */
    ncclResult_t r = N.CommInitRank(&L->comm, (int)ranks, u, (int)rank);
    if (r != ncclSuccess) {
        L->comm = NULL;
        if (s == ND_OK)
            s = nd_error_set(ND_ERR_BACKEND, "nd_init: ncclCommInitRank failed on MPI rank %d of %d (GPU %d): %s%s",
                             (int)rank, (int)ranks, cu->device, N.GetErrorString(r),
                             r == ncclInvalidUsage ? " (two ranks on one GPU? give each a GPU of its own, or a "
                                                     "distinct NCCL_HOSTID)" : "");
    }
    /* Every rank whose communicator opened (a failed one closes its link
     * and the runtime makes every rank fall back). */
    if (s == ND_OK) {
        char why[300] = "";
        s = nd_cuda_rank_copy_open(cu, rank, ranks, gather, L, &L->copy, why, sizeof why);
        nd_logf(2, "nd_init: MPI rank %d: sends and receives between ranks %s (%s)", (int)rank,
                L->copy ? "on the copy engines through CUDA IPC" : "over NCCL", why);
    }
    if (s != ND_OK) link_close(be);
    return s;
}

/* One transfer's NCCL calls on `stream`, in parts of PART bytes grouped
 * together; mem NULL: from the zeros, into the sink. */
static ncclResult_t issue(cudaStream_t stream, const nd_cuda_link *L, int op, void *mem, size_t bytes, int32_t peer) {
    const int grouped = bytes > PART;
    ncclResult_t r = grouped ? N.GroupStart() : ncclSuccess;
    for (size_t at = 0; at < bytes && r == ncclSuccess; at += PART) {
        size_t n = bytes - at < PART ? bytes - at : PART;
        char *p = mem ? (char *)mem + at : NULL;
        switch (op) {
        case ND_RANK_LINK_SEND: r = N.Send(p ? p : L->zeros, n, ncclUint8, (int)peer, L->comm, stream); break;
        case ND_RANK_LINK_RECV: r = N.Recv(p ? p : L->sink, n, ncclUint8, (int)peer, L->comm, stream); break;
        default: /* in place at the root; elsewhere its send buffer is not read */
            r = N.Broadcast(p ? p : L->zeros, p ? p : L->sink, n, ncclUint8, (int)peer, L->comm, stream);
            break;
        }
    }
    if (grouped) {
        ncclResult_t r2 = N.GroupEnd();
        if (r == ncclSuccess) r = r2;
    }
    return r;
}

/* A transfer on the copy engines: a broadcast is the root's sends to
 * every other rank, in rank order, each of which receives once. */
static nd_status copy_issue(nd_cuda_link *L, int op, void *mem, size_t bytes, int32_t peer, cudaStream_t stream) {
    if (op != ND_RANK_LINK_BCAST) return nd_cuda_rank_copy_xfer(L->copy, op, mem, bytes, peer, L->zeros, stream);
    if (peer != L->rank) return nd_cuda_rank_copy_xfer(L->copy, ND_RANK_LINK_RECV, mem, bytes, peer, L->zeros, stream);
    nd_status first = ND_OK;
    for (int32_t r = 0; r < L->ranks; r++) {
        if (r == L->rank) continue;
        nd_status s = nd_cuda_rank_copy_xfer(L->copy, ND_RANK_LINK_SEND, mem, bytes, r, L->zeros, stream);
        if (first == ND_OK) first = s;
    }
    return first;
}

static nd_status link_xfer(nd_backend *be, int op, void *mem, int memory, size_t bytes, int32_t peer) {
    nd_cuda *cu = impl(be);
    nd_cuda_link *L = cu->link;
    (void)memory; /* the backend's one GPU: ranks split over ranks, not over logical devices */
    if (!L || !L->comm)
        return nd_error_set(ND_ERR_STATE, "nd_sync: a transfer between MPI ranks over NCCL, but the NCCL link %s",
                            L ? "failed earlier" : "is not open");
    /* The link's lane follows the backend's stream through the lanes'
     * events, so the program's stream joins that one only. */
    const int side = (op & ND_RANK_LINK_SIDE) != 0;
    op &= ~ND_RANK_LINK_SIDE;
    cudaStream_t stream = side ? L->side : cu->stream;
    nd_cuda_lock(cu);
    nd_status s = ND_OK;
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) s = nd_fault_backend_error("cuda", "rank_xfer");
    if (s == ND_OK && !side) s = nd_cuda_app_join(cu);
    if (L->copy) { /* one pass whatever failed: a failed rank sends zeros, drops what arrives */
        nd_status c = copy_issue(L, op, s == ND_OK ? mem : NULL, bytes, peer, stream);
        nd_cuda_unlock(cu);
        return s != ND_OK ? s : c;
    }
    if (s == ND_OK && mem) {
        ncclResult_t r = issue(stream, L, op, mem, bytes, peer);
        if (r != ncclSuccess) s = nccl_failed(L, r, "a transfer between MPI ranks (NCCL)");
    }
    /* The peers wait in this transfer whatever failed here. */
    if (s != ND_OK || !mem) {
        ncclResult_t r = issue(stream, L, op, NULL, bytes, peer);
        if (r != ncclSuccess && s == ND_OK) s = nccl_failed(L, r, "a transfer between MPI ranks (NCCL)");
    }
    nd_cuda_unlock(cu);
    return s;
}

static cudaStream_t lane_stream(nd_cuda *cu, int lane) {
    return lane == ND_RANK_LANE_LINK ? cu->link->side : cu->stream;
}

static nd_status lane_mark(nd_backend *be, int lane, int32_t mark) {
    nd_cuda *cu = impl(be);
    nd_cuda_link *L = cu->link;
    if (!L || !L->side) return ND_OK;
    nd_cuda_lock(cu);
    cudaError_t e = cudaSuccess;
    if (mark >= L->n_marks) {
        int32_t n = mark + 1 > 2 * L->n_marks ? mark + 1 : 2 * L->n_marks;
        cudaEvent_t *m = realloc(L->marks, sizeof *m * (size_t)n);
        if (!m) {
            nd_cuda_unlock(cu);
            return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory for the NCCL link's events");
        }
        memset(m + L->n_marks, 0, sizeof *m * (size_t)(n - L->n_marks));
        L->marks = m;
        L->n_marks = n;
    }
    if (!L->marks[mark]) e = cudaEventCreateWithFlags(&L->marks[mark], cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventRecord(L->marks[mark], lane_stream(cu, lane));
    nd_cuda_unlock(cu);
    return e == cudaSuccess ? ND_OK : nd_cuda_fail(e, "nd_sync: marking a lane of the NCCL link");
}

static nd_status lane_wait(nd_backend *be, int lane, int32_t mark) {
    nd_cuda *cu = impl(be);
    nd_cuda_link *L = cu->link;
    if (!L || !L->side || mark >= L->n_marks || !L->marks[mark]) return ND_OK;
    nd_cuda_lock(cu);
    cudaError_t e = cudaStreamWaitEvent(lane_stream(cu, lane), L->marks[mark], 0);
    nd_cuda_unlock(cu);
    return e == cudaSuccess ? ND_OK : nd_cuda_fail(e, "nd_sync: a wait between the lanes of the NCCL link");
}

static nd_status lane_join(nd_backend *be) {
    nd_cuda *cu = impl(be);
    nd_cuda_link *L = cu->link;
    if (!L || !L->side) return ND_OK;
    nd_cuda_lock(cu);
    cudaError_t e = cudaEventRecord(L->join[0], cu->stream);
    if (e == cudaSuccess) e = cudaEventRecord(L->join[1], L->side);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(L->side, L->join[0], 0);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(cu->stream, L->join[1], 0);
    nd_cuda_unlock(cu);
    return e == cudaSuccess ? ND_OK : nd_cuda_fail(e, "nd_sync: joining the lanes of the NCCL link");
}

/* Until the stream has run every transfer enqueued so far, asking NCCL
 * meanwhile whether the communicator failed (a peer gone, a network
 * error): such a failure would otherwise leave its transfer waiting for
 * ever. The stream is polled rather than synchronised for the same reason,
 * from 5 us apart up to 200 us (two ranks on two cores must not spin). */
static nd_status link_wait(nd_backend *be) {
    nd_cuda *cu = impl(be);
    nd_cuda_link *L = cu->link;
    if (!L || !L->comm) return ND_OK;
    /* The link's lane too: the backend's stream waits for it. */
    nd_status joined = lane_join(be);
    if (joined != ND_OK) return joined;
    /* No NCCL operation since the link opened: nothing NCCL could report,
     * and the polling below would wake up to 200 us late (0.8% of a heat
     * run of 20 sweeps on two H200s). A peer that dies takes the job with
     * it (mpirun ends the others). */
    if (L->copy) {
        cudaError_t e = cudaStreamSynchronize(cu->stream);
        return e == cudaSuccess ? ND_OK : nd_cuda_fail(e, "a step or a transfer between MPI ranks on the stream");
    }
    long ns = 5000;
    for (;;) {
        nd_cuda_lock(cu);
        cudaError_t e = cudaStreamQuery(cu->stream);
        ncclResult_t a = ncclSuccess;
        if (N.CommGetAsyncError(L->comm, &a) != ncclSuccess) a = ncclInternalError;
        nd_cuda_unlock(cu);
        if (e != cudaSuccess && e != cudaErrorNotReady)
            return nd_cuda_fail(e, "a step or a transfer between MPI ranks (NCCL) on the stream");
        if (a != ncclSuccess && a != ncclInProgress) {
            nd_status s = nccl_failed(L, a, "the NCCL link between MPI ranks");
            L->broken = 1;
            N.CommAbort(L->comm); /* ends its kernels, so the stream drains */
            L->comm = NULL;
            return s;
        }
        if (e == cudaSuccess) return ND_OK;
        struct timespec t = {0, ns};
        nanosleep(&t, NULL);
        if (ns < 200000) ns *= 2;
    }
}

void nd_cuda_link_install(nd_backend *be) {
    be->rank_link_probe = link_probe;
    be->rank_link_id = link_id;
    be->rank_link_open = link_open;
    be->rank_link_close = link_close;
    be->rank_xfer = link_xfer;
    be->rank_link_wait = link_wait;
    be->rank_lane_mark = lane_mark;
    be->rank_lane_wait = lane_wait;
    be->rank_lane_join = lane_join;
}

void nd_cuda_link_destroy(nd_backend *be) { link_close(be); }
