/* The NCCL bootstrap: rank 0 makes the ncclUniqueId and MPI carries it to
 * every rank, which is all ncclCommInitRank needs. Built where NCCL and
 * MPI are (meson options nccl, mpi); the GPU ranks' collectives over NCCL
 * are the next step (docs/internals.md "Several processes"). */
#include <string.h>

#include <nccl.h>

#include "common/error.h"
#include "dist/dist.h"

_Static_assert(sizeof(ncclUniqueId) == NCCL_UNIQUE_ID_BYTES, "ncclUniqueId is its bytes");

int nd_dist_nccl_built(void) { return 1; }

nd_status nd_dist_nccl_unique_id(void *id, size_t bytes) {
    if (bytes < sizeof(ncclUniqueId))
        return nd_error_set(ND_ERR_ARG, "nd: an ncclUniqueId needs %zu bytes, not %zu", sizeof(ncclUniqueId),
                            bytes);
    ncclUniqueId u;
    memset(&u, 0, sizeof u);
    if (nd_dist_rank() == 0) {
        ncclResult_t r = ncclGetUniqueId(&u);
        if (r != ncclSuccess)
            return nd_error_set(ND_ERR_BACKEND, "nd: ncclGetUniqueId failed: %s", ncclGetErrorString(r));
    }
    nd_status st = nd_dist_bcast(&u, sizeof u, 0);
    if (st == ND_OK) memcpy(id, &u, sizeof u);
    return st;
}
