/* Which transport carries the bytes between GPU ranks under mpirun
 * (docs/internals.md "Several processes"): NCCL, device to device, or MPI
 * through pinned host buffers (staging); on CPU ranks, ND_RANK_LINK=1's
 * test link, which runs the NCCL path's code over MPI. Every rank makes the same choice
 * from the same facts: each rank's identity, allgathered at nd_init. Pure
 * logic, no MPI or NCCL call, so a test feeds it identities without a GPU. */
#ifndef ND_DIST_RANK_TRANSPORT_H
#define ND_DIST_RANK_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

/* ND_RANK_TRANSPORT's values, in common/env.h's order. */
typedef enum {
    ND_RANK_TRANSPORT_AUTO,   /* NCCL where every rank has a GPU of its own */
    ND_RANK_TRANSPORT_NCCL,   /* NCCL, or an error saying why it cannot be */
    ND_RANK_TRANSPORT_STAGING, /* MPI through host buffers */
    /* Not a setting: this rank's nd_init failed before the choice (its
     * backend did not start); it takes part only so that the others fail
     * too rather than wait for it in their first transfer. */
    ND_RANK_TRANSPORT_FAILED
} nd_rank_transport;

/* What one rank tells the others: ND_RANK_ID_WORDS u64s, in this order,
 * so that nd_dist_allgather_u64 carries them. */
typedef struct {
    uint64_t gpu;     /* a hash of its GPU's UUID; 0: not a CUDA rank */
    uint64_t link;    /* 1: the backend's link opens here (rank_link_probe: on a
                         CUDA rank NCCL is built and libnccl opened; on a CPU
                         rank, ND_RANK_LINK=1's test link) */
    uint64_t host_id; /* a hash of NCCL_HOSTID (0: unset): NCCL then takes the
                         rank for another host, so two ranks on one GPU pass */
    uint64_t mode;    /* its ND_RANK_TRANSPORT (nd_rank_transport) */
} nd_rank_identity;
#define ND_RANK_ID_WORDS 4

/* The ranks' choice: 1 the backend's link (NCCL, or on CPU ranks that all
 * have it the test link, under auto), 0 staging, with the reason in why
 * (one sentence for ND_LOG=2); -1 where it cannot be made: ND_RANK_TRANSPORT
 * differs between ranks, or is nccl and some rank is not a CUDA rank, has
 * no NCCL, or shares its GPU with another rank without distinct
 * NCCL_HOSTIDs (NCCL refuses two ranks on one GPU), or some CPU ranks have
 * the test link and others not (ND_RANK_LINK differs); why then says which
 * ranks and why (also where a rank failed to start: ND_RANK_TRANSPORT_FAILED).
 * `me` is this rank (why names it when it is one of those
 * at fault). */
int nd_rank_transport_choose(int32_t n, const nd_rank_identity *ranks, int32_t me, char *why, size_t cap);

#endif
