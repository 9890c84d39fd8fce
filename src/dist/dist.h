/* Several processes (mpirun -n P): the few things nd asks of MPI, behind
 * an interface that names no MPI type, so that the scheduler and the
 * runtime compile without mpi.h (docs/internals.md "Several processes").
 * dist_mpi.c implements it over MPI where the build found MPI (meson
 * option mpi); dist_none.c, a build without MPI, is one process of one
 * rank. Every call but nd_dist_start and the queries is made on one
 * thread at a time (the executor's), in the same order on every rank:
 * the plan's step order. */
#ifndef ND_DIST_DIST_H
#define ND_DIST_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "nd/types.h"

/* Whether this build can run over MPI ranks. */
int nd_dist_built(void);

/* Joins the MPI job the process was launched in (mpirun sets
 * OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE), calling MPI_Init_thread if
 * the program did not initialise MPI itself; without a launch, one rank.
 * Idempotent: nd_init calls it every time, the first call decides. A
 * launch of several ranks in a build without MPI is one rank per process,
 * each computing everything alone (logged at ND_LOG=1). MPI is finalised
 * at process exit when nd initialised it (MPI cannot be initialised again
 * after MPI_Finalize, while nd_init may run again after nd_shutdown). */
nd_status nd_dist_start(void);

/* This process's rank and the rank count (0 and 1 before nd_dist_start
 * or without MPI). */
int32_t nd_dist_rank(void);
int32_t nd_dist_size(void);
/* This process's rank among the ranks of its machine (the ranks that share
 * memory with it: MPI_Comm_split_type MPI_COMM_TYPE_SHARED), 0 without
 * MPI: a GPU rank drives the GPU of this ordinal, modulo the GPUs it sees. */
int32_t nd_dist_local_rank(void);
/* Whether MPI grants calls from any thread (MPI_THREAD_SERIALIZED or
 * better): else the flush worker thread is not started. */
int nd_dist_any_thread(void);

/* Point to point: `bytes` to rank `to`, from rank `from` (blocking; any
 * size: messages of 2 GiB and more go in parts). */
nd_status nd_dist_send(const void *buf, size_t bytes, int32_t to);
nd_status nd_dist_recv(void *buf, size_t bytes, int32_t from);
/* buf's `bytes` on rank `root` into buf on every rank. */
nd_status nd_dist_bcast(void *buf, size_t bytes, int32_t root);
/* Every rank's `n` values into all[rank * n + i], on every rank. */
nd_status nd_dist_allgather_u64(const uint64_t *mine, int32_t n, uint64_t *all);

#endif
