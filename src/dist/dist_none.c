/* src/dist/dist.h without MPI: every process is rank 0 of 1. A process
 * that mpirun started among several is told (ND_LOG=1) that it computes
 * everything alone: the results are the same, nothing is split. */
#include "dist/dist.h"

#include <stdlib.h>

#include "common/error.h"

int nd_dist_built(void) { return 0; }

nd_status nd_dist_start(void) {
    static int told;
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    if (!n) n = getenv("PMI_SIZE");
    if (!told && n && atoi(n) > 1) {
        told = 1;
        nd_logf(1, "nd_init: launched as one of %s MPI ranks, but this nd was built without MPI (meson "
                "option mpi): every rank computes the whole program alone", n);
    }
    return ND_OK;
}

int32_t nd_dist_rank(void) { return 0; }
int32_t nd_dist_size(void) { return 1; }
int32_t nd_dist_local_rank(void) { return 0; }
int nd_dist_any_thread(void) { return 1; }

static nd_status none(const char *what) {
    return nd_error_set(ND_ERR_UNSUPPORTED, "nd_sync: %s between MPI ranks, but this nd was built without MPI",
                        what);
}

nd_status nd_dist_send(const void *buf, size_t bytes, int32_t to) {
    (void)buf, (void)bytes, (void)to;
    return none("a send");
}
nd_status nd_dist_recv(void *buf, size_t bytes, int32_t from) {
    (void)buf, (void)bytes, (void)from;
    return none("a receive");
}
nd_status nd_dist_bcast(void *buf, size_t bytes, int32_t root) {
    (void)buf, (void)bytes;
    return root == 0 ? ND_OK : none("a broadcast");
}
nd_status nd_dist_allgather_u64(const uint64_t *mine, int32_t n, uint64_t *all) {
    for (int32_t i = 0; i < n; i++) all[i] = mine[i];
    return ND_OK;
}
