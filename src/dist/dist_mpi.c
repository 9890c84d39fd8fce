/* src/dist/dist.h over MPI. nd talks on its own communicator (a duplicate
 * of MPI_COMM_WORLD), so its messages never meet the program's, and with
 * MPI_ERRORS_RETURN, so a failed transfer is an nd error rather than an
 * abort. Every transfer is blocking and every rank makes them in the
 * plan's step order: the earliest unfinished one always has both sides
 * (or, a collective, every rank) waiting in it, so the sequence cannot
 * deadlock. */
#include "dist/dist.h"

#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

#include "common/error.h"

static struct {
    int started;
    int we_initialised;
    int32_t rank, size, local_rank;
    int thread_level;
    MPI_Comm comm;
} D = {0, 0, 0, 1, 0, MPI_THREAD_MULTIPLE, MPI_COMM_NULL};

int nd_dist_built(void) { return 1; }

static nd_status mpi_failed(int rc, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
    text[len] = '\0';
    return nd_error_set(ND_ERR_BACKEND, "nd_sync: %s failed on MPI rank %d of %d: %s", what, (int)D.rank,
                        (int)D.size, len ? text : "(MPI gave no reason)");
}

/* mpirun's launchers (OpenMPI, PMIx, Hydra/Slurm's PMI) say so in the
 * environment; a plain run of an MPI build initialises nothing. */
static int launched(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE") || getenv("PMI_RANK");
}

static void finalize_at_exit(void) {
    if (D.comm != MPI_COMM_NULL) MPI_Comm_free(&D.comm);
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}

nd_status nd_dist_start(void) {
    if (D.started) return ND_OK;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && !launched()) {
        D.started = 1;
        return ND_OK;
    }
    int rc;
    if (!inited) {
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &D.thread_level);
        if (rc != MPI_SUCCESS) return mpi_failed(rc, "MPI_Init_thread");
        D.we_initialised = 1;
        atexit(finalize_at_exit); /* after nd's own exit handler, which flushes */
    } else {
        MPI_Query_thread(&D.thread_level);
    }
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &D.comm);
    if (rc != MPI_SUCCESS) return mpi_failed(rc, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(D.comm, MPI_ERRORS_RETURN);
    int r = 0, n = 1;
    MPI_Comm_rank(D.comm, &r);
    MPI_Comm_size(D.comm, &n);
    D.rank = r;
    D.size = n;
    /* The ranks of this machine (they share its GPUs): a GPU rank picks
     * one by its place among them. Without the split, the launcher's word. */
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(D.comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
        node != MPI_COMM_NULL) {
        int lr = 0;
        MPI_Comm_rank(node, &lr);
        D.local_rank = lr;
        MPI_Comm_free(&node);
    } else {
        const char *l = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
        D.local_rank = l ? atoi(l) : 0;
    }
    D.started = 1;
    nd_logf(2, "nd_init: MPI rank %d of %d, local rank %d (thread level %d%s)", r, n, (int)D.local_rank,
            D.thread_level, D.we_initialised ? ", initialised by nd" : "");
    return ND_OK;
}

int32_t nd_dist_rank(void) { return D.rank; }
int32_t nd_dist_size(void) { return D.size; }
int32_t nd_dist_local_rank(void) { return D.local_rank; }
int nd_dist_any_thread(void) { return D.thread_level >= MPI_THREAD_SERIALIZED; }

/* MPI counts are ints: at most 1 GiB per message. */
#define PART ((size_t)1 << 30)

nd_status nd_dist_send(const void *buf, size_t bytes, int32_t to) {
    for (size_t at = 0; at < bytes; at += PART) {
        int n = (int)(bytes - at < PART ? bytes - at : PART);
        int rc = MPI_Send((const char *)buf + at, n, MPI_BYTE, to, 0, D.comm);
        if (rc != MPI_SUCCESS) return mpi_failed(rc, "a send of halo rows (MPI_Send)");
    }
    return ND_OK;
}

nd_status nd_dist_recv(void *buf, size_t bytes, int32_t from) {
    for (size_t at = 0; at < bytes; at += PART) {
        int n = (int)(bytes - at < PART ? bytes - at : PART);
        int rc = MPI_Recv((char *)buf + at, n, MPI_BYTE, from, 0, D.comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return mpi_failed(rc, "a receive of halo rows (MPI_Recv)");
    }
    return ND_OK;
}

nd_status nd_dist_bcast(void *buf, size_t bytes, int32_t root) {
    for (size_t at = 0; at < bytes; at += PART) {
        int n = (int)(bytes - at < PART ? bytes - at : PART);
        int rc = MPI_Bcast((char *)buf + at, n, MPI_BYTE, root, D.comm);
        if (rc != MPI_SUCCESS) return mpi_failed(rc, "a broadcast of a rank's rows (MPI_Bcast)");
    }
    return ND_OK;
}

nd_status nd_dist_allgather_u64(const uint64_t *mine, int32_t n, uint64_t *all) {
    if (D.size == 1) {
        for (int32_t i = 0; i < n; i++) all[i] = mine[i];
        return ND_OK;
    }
    /* nd_shutdown's exchange (executor_ranks.h) may come at exit after a
     * program finalised MPI itself: no MPI call is legal then. */
    int done = 0;
    MPI_Finalized(&done);
    if (done) return nd_error_set(ND_ERR_STATE, "MPI_Allgather: MPI is finalised (call nd_shutdown before MPI_Finalize)");
    int rc = MPI_Allgather(mine, n, MPI_UINT64_T, all, n, MPI_UINT64_T, D.comm);
    return rc == MPI_SUCCESS ? ND_OK : mpi_failed(rc, "MPI_Allgather");
}
