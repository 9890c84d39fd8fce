/* Transfers between GPU ranks of one machine on the copy engines
 * (rank_copy.h).
 *
 * Each rank allocates one block of device memory and maps every other
 * rank's with CUDA IPC. A block holds, per peer p, a flag word (how many
 * parts p has put into this rank's mailbox for p), an acknowledgement word
 * (how many parts p has taken from its mailbox for this rank) and the
 * mailbox itself: SLOTS slots of ND_CUDA_RANK_COPY_SLOT bytes. A transfer
 * goes in parts of at most a slot, the k-th part between two ranks in slot
 * k % SLOTS:
 *
 *   sender's stream:   wait until its ack word for the peer >= k + 1 - SLOTS
 *                      copy the part into the peer's mailbox (a peer copy)
 *                      write k + 1 into the peer's flag word for it
 *   receiver's stream: wait until its flag word for the sender >= k + 1
 *                      copy the part out of its mailbox
 *                      write k + 1 into the sender's ack word for it
 *
 * The waits and writes are stream memory operations (cuStreamWaitValue32,
 * cuStreamWriteValue32): the stream's own front end performs them, so no
 * SM is taken and nothing waits on the host. A write is preceded by a
 * system-wide fence (the default flag), so the part it announces is
 * visible before the count; the comparison is cyclic, so counts wrap.
 * Every rank issues its transfers in the plan's order, so the k-th part
 * one rank sends to another is the k-th that one receives from it; the
 * executor runs transfers of the two lanes (backend.h) one lane at a time
 * (it joins them around a transfer on the steps' lane), so the parts
 * between two ranks also run in order.
 *
 * The driver's memory operations are reached through the runtime
 * (cudaGetDriverEntryPointByVersion): libnd links no CUDA library. */
#include "backends/cuda/rank_copy.h"

#include <cuda.h> /* CUresult and the memory operations' flags; no function of it is called by name */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/env.h"
#include "common/hash.h"
#include "common/mem_count.h"

#define SLOTS 2
#define WORD_BYTES 256 /* the flag and ack words of all peers, then the mailboxes at this alignment */

typedef CUresult (*wait_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
typedef CUresult (*write_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

struct nd_cuda_rank_copy {
    int32_t rank, ranks;
    char *mine;      /* this rank's block */
    char **theirs;   /* every peer's block, mapped (NULL at this rank) */
    uint64_t *sent;  /* parts sent to each peer */
    uint64_t *taken; /* parts received from each peer */
    size_t bytes;    /* of a block */
    cudaStream_t stream; /* the backend's, for reading the acks at close */
    wait_value_fn wait_value;
    write_value_fn write_value;
};

/* What every rank tells the others when the path opens. */
typedef struct {
    cudaIpcMemHandle_t handle;
    uint64_t machine; /* the hash of its host name */
    uint64_t ready;   /* its block and the memory operations are there */
} card;

static size_t words_bytes(int32_t ranks) {
    size_t b = (size_t)ranks * 2 * sizeof(uint32_t);
    return (b + WORD_BYTES - 1) / WORD_BYTES * WORD_BYTES;
}

/* Word `peer` of a block's flags (which = 0) or acks (1). */
static CUdeviceptr word(const nd_cuda_rank_copy *rc, const char *block, int which, int32_t peer) {
    return (CUdeviceptr)(uintptr_t)(block + ((size_t)which * (size_t)rc->ranks + (size_t)peer) * sizeof(uint32_t));
}

/* The slot of a block's mailbox for `sender`. */
static char *slot_of(const nd_cuda_rank_copy *rc, char *block, int32_t sender, uint32_t slot) {
    return block + words_bytes(rc->ranks) + ((size_t)sender * SLOTS + slot) * ND_CUDA_RANK_COPY_SLOT;
}

static uint64_t machine_id(void) {
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) != 0) return 0;
    uint64_t h = nd_hash_bytes(ND_HASH_SEED, name, strlen(name));
    return h ? h : 1;
}

static int load_memory_ops(nd_cuda_rank_copy *rc) {
#if CUDART_VERSION >= 12050
    void *w = NULL, *v = NULL;
    enum cudaDriverEntryPointQueryResult q1 = cudaDriverEntryPointSymbolNotFound, q2 = q1;
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &w, 12000, cudaEnableDefault, &q1) != cudaSuccess ||
        cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &v, 12000, cudaEnableDefault, &q2) != cudaSuccess ||
        q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess || !w || !v) {
        (void)cudaGetLastError();
        return 0;
    }
    memcpy(&rc->wait_value, &w, sizeof w);
    memcpy(&rc->write_value, &v, sizeof v);
    return 1;
#else
    (void)rc;
    return 0;
#endif
}

/* Until every peer has acknowledged every part this rank sent it (its
 * last write into this rank's block), at most about a second: the block
 * must not go while a peer's stream may still write into it. */
static void await_acks(const nd_cuda_rank_copy *rc) {
    size_t n = (size_t)rc->ranks * 2;
    uint32_t *w = nd_malloc(n * sizeof *w);
    for (int tries = 0; w && tries < 1000; tries++) {
        if (cudaMemcpyAsync(w, rc->mine, n * sizeof *w, cudaMemcpyDeviceToHost, rc->stream) != cudaSuccess ||
            cudaStreamSynchronize(rc->stream) != cudaSuccess)
            break;
        int done = 1;
        for (int32_t p = 0; p < rc->ranks; p++) done &= w[rc->ranks + p] == (uint32_t)rc->sent[p];
        if (done) break;
        usleep(1000);
    }
    free(w);
}

void nd_cuda_rank_copy_close(nd_cuda_rank_copy *rc) {
    if (!rc) return;
    if (rc->mine && rc->theirs && rc->sent) await_acks(rc);
    for (int32_t p = 0; rc->theirs && p < rc->ranks; p++)
        if (rc->theirs[p]) cudaIpcCloseMemHandle(rc->theirs[p]);
    if (rc->mine) {
        cudaFree(rc->mine);
        nd_mem_count_release(1, rc->bytes);
    }
    (void)cudaGetLastError();
    free(rc->theirs);
    free(rc->sent);
    free(rc->taken);
    free(rc);
}

nd_status nd_cuda_rank_copy_open(nd_cuda *cu, int32_t rank, int32_t ranks, nd_cuda_allgather_fn gather, void *ctx,
                                 nd_cuda_rank_copy **out, char *why, size_t cap) {
    *out = NULL;
    int64_t v = 1;
    int set = 0;
    (void)nd_env_int64(ND_ENV_RANK_COPY_ENGINES, &v, &set); /* validated by nd_env_check */
    nd_cuda_rank_copy *rc = nd_calloc(1, sizeof *rc);
    card me;
    memset(&me, 0, sizeof me);
    me.machine = machine_id();
    if (rc) {
        rc->rank = rank;
        rc->ranks = ranks;
        rc->stream = cu->stream;
        rc->bytes = words_bytes(ranks) + (size_t)ranks * SLOTS * ND_CUDA_RANK_COPY_SLOT;
        rc->theirs = nd_calloc((size_t)ranks, sizeof *rc->theirs);
        rc->sent = nd_calloc((size_t)ranks, sizeof *rc->sent);
        rc->taken = nd_calloc((size_t)ranks, sizeof *rc->taken);
    }
    if (rc && rc->theirs && rc->sent && rc->taken && (!set || v) && me.machine && load_memory_ops(rc)) {
        cudaError_t e = cudaMalloc((void **)&rc->mine, rc->bytes);
        if (e == cudaSuccess) {
            nd_mem_count_alloc(1, rc->bytes);
            e = cudaMemsetAsync(rc->mine, 0, words_bytes(ranks), cu->stream);
            if (e == cudaSuccess) e = cudaStreamSynchronize(cu->stream);
            if (e == cudaSuccess) e = cudaIpcGetMemHandle(&me.handle, rc->mine);
            me.ready = e == cudaSuccess;
        } else {
            rc->mine = NULL;
        }
        (void)cudaGetLastError();
    }
    card *all = nd_calloc((size_t)ranks, sizeof *all);
    uint64_t *opened = nd_calloc((size_t)ranks, sizeof *opened);
    /* Every rank takes part in both gathers, whatever failed here. */
    nd_status s = gather(ctx, &me, all, sizeof me);
    int ok = s == ND_OK && all && opened;
    for (int32_t p = 0; ok && p < ranks; p++) {
        if (!all[p].ready) snprintf(why, cap, "rank %d has no copy-engine path (ND_RANK_COPY_ENGINES=0, or CUDA "
                                    "IPC or stream memory operations unavailable)", (int)p);
        else if (all[p].machine != me.machine) snprintf(why, cap, "ranks %d and %d run on different machines", (int)rank, (int)p);
        ok = all[p].ready && all[p].machine == me.machine;
    }
    uint64_t mine_opened = (uint64_t)ok;
    for (int32_t p = 0; ok && p < ranks; p++) {
        if (p == rank) continue;
        void *m = NULL;
        cudaError_t e = cudaIpcOpenMemHandle(&m, all[p].handle, cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess) {
            snprintf(why, cap, "rank %d cannot map rank %d's memory (cudaIpcOpenMemHandle: %s)", (int)rank, (int)p,
                     cudaGetErrorString(e));
            (void)cudaGetLastError();
            mine_opened = 0;
            break;
        }
        rc->theirs[p] = m;
    }
    if (s == ND_OK) s = gather(ctx, &mine_opened, opened, sizeof mine_opened);
    int every = s == ND_OK && ok && opened;
    for (int32_t p = 0; every && p < ranks; p++) {
        if (!opened[p]) snprintf(why, cap, "rank %d could not map a peer's memory", (int)p);
        every = opened[p] != 0;
    }
    free(all);
    free(opened);
    if (!every) {
        nd_cuda_rank_copy_close(rc);
        return s;
    }
    snprintf(why, cap, "every rank on one machine");
    *out = rc;
    return ND_OK;
}

static nd_status memory_op_failed(CUresult r, const char *what) {
    return nd_error_set(ND_ERR_BACKEND, "nd_sync: %s between MPI ranks on the copy engines failed (CUresult %d)",
                        what, (int)r);
}

/* One part each way (the file's comment). */
static nd_status send_part(nd_cuda_rank_copy *rc, const void *src, size_t n, int32_t peer, cudaStream_t s) {
    uint64_t k = rc->sent[peer]++;
    uint32_t slot = (uint32_t)(k % SLOTS);
    CUresult r = CUDA_SUCCESS;
    if (k >= SLOTS) /* the slot held part k - SLOTS: until the peer took it */
        r = rc->wait_value((CUstream)s, word(rc, rc->mine, 1, peer), (cuuint32_t)(k + 1 - SLOTS),
                           CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS) return memory_op_failed(r, "waiting for a mailbox");
    cudaError_t e = cudaMemcpyAsync(slot_of(rc, rc->theirs[peer], rc->rank, slot), src, n, cudaMemcpyDeviceToDevice, s);
    /* The count goes out even after a failed copy: the peer must not wait for ever. */
    r = rc->write_value((CUstream)s, word(rc, rc->theirs[peer], 0, rc->rank), (cuuint32_t)(k + 1),
                        CU_STREAM_WRITE_VALUE_DEFAULT);
    if (e != cudaSuccess) return nd_cuda_fail(e, "nd_sync: a copy between MPI ranks on the copy engines");
    return r == CUDA_SUCCESS ? ND_OK : memory_op_failed(r, "announcing a part");
}

static nd_status recv_part(nd_cuda_rank_copy *rc, void *dst, size_t n, int32_t peer, cudaStream_t s) {
    uint64_t k = rc->taken[peer]++;
    uint32_t slot = (uint32_t)(k % SLOTS);
    CUresult r = rc->wait_value((CUstream)s, word(rc, rc->mine, 0, peer), (cuuint32_t)(k + 1), CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS) return memory_op_failed(r, "waiting for a part");
    cudaError_t e = dst ? cudaMemcpyAsync(dst, slot_of(rc, rc->mine, peer, slot), n, cudaMemcpyDeviceToDevice, s)
                        : cudaSuccess;
    r = rc->write_value((CUstream)s, word(rc, rc->theirs[peer], 1, rc->rank), (cuuint32_t)(k + 1),
                        CU_STREAM_WRITE_VALUE_DEFAULT);
    if (e != cudaSuccess) return nd_cuda_fail(e, "nd_sync: a copy between MPI ranks on the copy engines");
    return r == CUDA_SUCCESS ? ND_OK : memory_op_failed(r, "returning a mailbox");
}

nd_status nd_cuda_rank_copy_xfer(nd_cuda_rank_copy *rc, int op, void *mem, size_t bytes, int32_t peer,
                                 const void *zeros, cudaStream_t stream) {
    if (peer < 0 || peer >= rc->ranks || peer == rc->rank)
        return nd_error_set(ND_ERR_STATE, "nd_sync: a transfer between MPI ranks names rank %d (an nd bug)", (int)peer);
    nd_status first = ND_OK;
    for (size_t at = 0; at < bytes; at += ND_CUDA_RANK_COPY_SLOT) {
        size_t n = bytes - at < ND_CUDA_RANK_COPY_SLOT ? bytes - at : ND_CUDA_RANK_COPY_SLOT;
        char *p = mem ? (char *)mem + at : NULL;
        nd_status s = op == ND_RANK_LINK_SEND ? send_part(rc, p ? p : zeros, n, peer, stream)
                                              : recv_part(rc, p, n, peer, stream);
        if (first == ND_OK) first = s;
    }
    return first;
}
