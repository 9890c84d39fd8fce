/* Point-to-point transfers between GPU ranks of one machine on the copy
 * engines (rank_copy.c), beside the NCCL link of rank_link.c: NCCL's
 * send and receive are kernels, which wait for SMs that a running
 * interior holds, while a copy engine needs none, so a halo exchange on
 * the link's own stream overlaps the kernels (docs/internals.md "Several
 * processes"). Internal to the CUDA backend. */
#ifndef ND_BACKENDS_CUDA_RANK_COPY_H
#define ND_BACKENDS_CUDA_RANK_COPY_H

#include "backends/cuda/cuda_internal.h"

typedef struct nd_cuda_rank_copy nd_cuda_rank_copy;

/* Every rank's `bytes` at `mine` into all[rank * bytes], on every rank
 * (the link's allgather: NCCL's, through device memory). */
typedef nd_status (*nd_cuda_allgather_fn)(void *ctx, const void *mine, void *all, size_t bytes);

/* Every rank at once, after the communicator opened: *out is the path
 * where every rank could open it (one machine, CUDA IPC and stream memory
 * operations work, ND_RANK_COPY_ENGINES not 0 on any rank), else NULL and
 * NCCL carries everything (`why` says why, for ND_LOG=2). ND_OK unless
 * the allgather failed (then the link fails). */
nd_status nd_cuda_rank_copy_open(nd_cuda *cu, int32_t rank, int32_t ranks, nd_cuda_allgather_fn gather, void *ctx,
                                 nd_cuda_rank_copy **out, char *why, size_t cap);
/* A send to or receive from `peer` (ND_RANK_LINK_SEND or _RECV) of
 * `bytes` at `mem` on `stream`, in the plan's order on every rank; mem
 * NULL sends the zeros at `zeros` (at least ND_CUDA_RANK_COPY_SLOT bytes)
 * or drops what arrives, so that the peer does not wait for ever. */
nd_status nd_cuda_rank_copy_xfer(nd_cuda_rank_copy *rc, int op, void *mem, size_t bytes, int32_t peer,
                                 const void *zeros, cudaStream_t stream);
/* After the streams that carried its transfers have drained. */
void nd_cuda_rank_copy_close(nd_cuda_rank_copy *rc);

/* The largest part of a transfer that travels at once (a mailbox). */
#define ND_CUDA_RANK_COPY_SLOT ((size_t)4 << 20)

#endif
