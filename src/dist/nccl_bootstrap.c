/* The NCCL bootstrap: rank 0 makes the ncclUniqueId and MPI carries it to
 * every rank, which is all ncclCommInitRank needs. Built where NCCL and
 * MPI are (meson options nccl, mpi). libnccl is opened with dlopen on
 * first use, as the CUDA backend opens the CUDA libraries, so libnd loads
 * on machines without it. The communicator and the transfers over it are
 * the CUDA backend's (backends/cuda/rank_link.c; docs/internals.md
 * "Several processes"). */
#include <dlfcn.h>
#include <string.h>

#include <nccl.h>

#include "common/error.h"
#include "dist/dist.h"

_Static_assert(sizeof(ncclUniqueId) == NCCL_UNIQUE_ID_BYTES, "ncclUniqueId is its bytes");

int nd_dist_nccl_built(void) { return 1; }

typedef ncclResult_t (*get_id_fn)(ncclUniqueId *);
typedef const char *(*error_string_fn)(ncclResult_t);

nd_status nd_dist_nccl_unique_id(void *id, size_t bytes) {
    if (bytes < sizeof(ncclUniqueId))
        return nd_error_set(ND_ERR_ARG, "nd: an ncclUniqueId needs %zu bytes, not %zu", sizeof(ncclUniqueId),
                            bytes);
    ncclUniqueId u;
    memset(&u, 0, sizeof u);
    nd_status st = ND_OK;
    if (nd_dist_rank() == 0) {
        void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!lib) lib = dlopen(ND_NCCL_LIB_DIR "/libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
        get_id_fn get_id = lib ? (get_id_fn)dlsym(lib, "ncclGetUniqueId") : NULL;
        error_string_fn why = lib ? (error_string_fn)dlsym(lib, "ncclGetErrorString") : NULL;
        ncclResult_t r = get_id ? get_id(&u) : ncclSystemError;
        if (!get_id)
            st = nd_error_set(ND_ERR_UNSUPPORTED, "nd: cannot open libnccl.so.2 (nor in %s): %s", ND_NCCL_LIB_DIR,
                              dlerror());
        else if (r != ncclSuccess)
            st = nd_error_set(ND_ERR_BACKEND, "nd: ncclGetUniqueId failed: %s", why ? why(r) : "(no reason)");
    }
    /* Every rank takes part, rank 0's failure included (an all-zero id). */
    nd_status st2 = nd_dist_bcast(&u, sizeof u, 0);
    if (st == ND_OK) st = st2;
    if (st == ND_OK) memcpy(id, &u, sizeof u);
    return st;
}
