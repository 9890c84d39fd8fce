/* From pending graph to executed plan. The frontend calls nd_scheduler_run at
 * every flush; everything between the graph and the backend lives here:
 * dead-node removal, fusion into kernel IR, placement and data movement,
 * memory planning, stream assignment, the plan cache and the executor. */
#ifndef ND_SCHEDULER_SCHEDULER_H
#define ND_SCHEDULER_SCHEDULER_H

#include <stdio.h>

#include "backends/backend.h"
#include "graph/graph.h"
#include "scheduler/partition.h"

typedef struct nd_plan_cache nd_plan_cache;

typedef struct {
    nd_backend *backend;
    int fusion;         /* 0: one kernel per node (ND_FUSION=0) */
    int check_plans;    /* ND_CHECK_PLANS=1: a cached plan is compared with a fresh one (plan_check.h) */
    size_t chunk_bytes; /* host arrays of 2+ chunks stream through the device (0: never) */
    nd_split_config split; /* ND_DEVICES=cpu:N: arrays split in row blocks (n_devices 1: never) */
    /* Under mpirun (src/dist): this process's rank and the rank count
     * (1: one process), which split.n_devices equals; check_spmd
     * (ND_CHECK_SPMD=1): ranks compare each plan before running it. */
    int32_t rank, ranks;
    int check_spmd;
    /* Under mpirun: ND_RANK_STAGING=1, the bytes between ranks go through
     * host buffers even from host memory (the GPU ranks' path, tested on
     * the CPU: scheduler/executor_ranks.h). */
    int rank_staging;
    /* Under mpirun: the ranks carry bytes between GPUs over the backend's
     * link (NCCL: ND_RANK_TRANSPORT, chosen at nd_init); rank_linked: a
     * transfer of the running plan went over it (executor_ranks.h);
     * rank_side: the running step's transfers go on the link's own lane
     * (rank_lanes.h). */
    int rank_link, rank_linked, rank_side;
    uint64_t plans_checked;
    /* ND_CHECK_SPMD: 1 + the rank that finished (nd_shutdown) while this
     * one checked a plan (0: none); from then on no plan is checked or run
     * (nd_rank_check_plan fails at once) and nd_shutdown exchanges nothing. */
    int32_t rank_finished;
    const char *dump_dot_dir; /* NULL or a folder: one .dot per flush */
    int dump_dot_plan;  /* also the plan of each flush, flush-N-plan.dot */
    nd_plan_cache *cache;
    nd_stats *stats;    /* counters to update */
    /* ND_PROFILE for backends without run_plan: the executor times each
     * step (those backends run steps synchronously). NULL = off. */
    struct nd_profile *profile;
    /* ND_TRACE for the same backends: the executor writes each step's
     * start and duration (flush_report.c's nd_trace_step). NULL = off. */
    FILE *trace;
    uint64_t trace_flushes;
    uint64_t flush_index;
    /* Owned by the scheduler (zero-initialise; freed by nd_scheduler_release). */
    struct nd_flush_walk_state *walk;
    struct nd_temp_pool *temps;
    /* Blocks handed back from the recording thread (nd_temp_pool_return),
     * moved into `temps` by the executor: a lock-free stack. */
    struct nd_returned_block *returned;
    uint64_t walk_stamp;
    /* ND_LOG=2's line per flush and the progress callback
     * (flush_report.c). flushes_submitted is counted by submit, the run
     * counts by execute, on another thread: atomics. */
    uint64_t flushes_submitted, flushes_run, nodes_run;
    nd_progress_fn progress_fn; /* set with no flush in flight */
    void *progress_ctx;
    double progress_every_us, progress_last_us, progress_start_us;
} nd_scheduler_ctx;

/* Frees what the scheduler keeps between flushes (walk arrays, cached
 * temporaries). Call before destroying the backend. */
void nd_scheduler_release(nd_scheduler_ctx *ctx);

/* Gives a block of `memory` to the pool of temporaries, from any thread
 * (the twin of a buffer freed on the recording thread, while the executor
 * may be taking temporaries). The device work using it must be ordered
 * before the next user's, as for temporaries: the flush that used it has
 * been launched. */
void nd_temp_pool_return(nd_scheduler_ctx *ctx, int32_t memory, void *ptr, size_t bytes);
/* The bytes of the free temporaries kept for the next flush, and giving
 * them back to the backend (nd_trim). With no flush in flight. */
size_t nd_temp_pool_bytes(nd_scheduler_ctx *ctx);
void nd_temp_pool_trim(nd_scheduler_ctx *ctx);

nd_plan_cache *nd_plan_cache_new(void);
void nd_plan_cache_free(nd_plan_cache *c);

/* A buffer whose value a flush computes from a failed one: failed once
 * the flush ran (holds references to both). */
typedef struct {
    nd_buffer *buf;
    struct nd_failure *failure;
    const char *label;
} nd_flush_taint;

/* A flush planned and detached from the graph, waiting to run. */
typedef struct {
    nd_plan *plan; /* NULL: nothing to run */
    int owned;     /* not in the plan cache: freed after running */
    uint64_t flush_index;
    nd_flush_taint *tainted; /* applied and freed by nd_scheduler_finish */
    uint32_t n_tainted;
    uint32_t n_nodes;  /* nodes recorded into it */
    uint8_t cache_hit; /* its plan came from the plan cache */
    double planned_us; /* walking and planning it took (ND_LOG=2) */
} nd_flush_job;

/* The two halves of a flush, so that running can happen on another thread
 * while the next batch is recorded: submit walks and plans the graph (it
 * reads where buffers' values live, so the previous job must have run),
 * keeps the walked buffers alive and clears the graph; execute runs the
 * job's plan and releases them. Between the two, only execute may touch
 * the scheduler context. */
nd_status nd_scheduler_submit(nd_scheduler_ctx *ctx, nd_graph *g, nd_flush_job *job);
nd_status nd_scheduler_execute(nd_scheduler_ctx *ctx, nd_flush_job *job);
/* After execute: frees an uncached plan and drops the walked buffers'
 * references. On the submitting thread (the buffers were allocated there,
 * and the next batch is recording there: freeing on the executor thread
 * made recording 1.7x slower on a 2-core machine). */
void nd_scheduler_finish(nd_scheduler_ctx *ctx, nd_flush_job *job);

/* Plans (or finds the cached plan for) the pending graph, runs it, updates
 * the buffers (materialised versions, valid memories, errors), and clears
 * the graph. Returns the first error; buffers whose value could not be
 * produced carry it in their `error`. */
nd_status nd_scheduler_run(nd_scheduler_ctx *ctx, nd_graph *g);

/* The flush of a read of `target`'s latest version (nd_to_host, nd_item):
 * runs what the read needs and leaves the rest pending
 * (graph/read_split.h), on the calling thread like nd_scheduler_run. The
 * nodes that stay become g; `spare` is an empty graph whose storage the
 * split uses, and it receives g's (cleared) storage. */
nd_status nd_scheduler_run_read(nd_scheduler_ctx *ctx, nd_graph *g, nd_graph *spare, const nd_buffer *target);

/* Writes the pending graph, as it would be planned, as Graphviz. Runs
 * nothing and leaves the graph pending. */
nd_status nd_scheduler_dump_dot(nd_scheduler_ctx *ctx, nd_graph *g, const char *path);
/* The same for the plan: its steps, streams and data edges. */
nd_status nd_scheduler_dump_plan_dot(nd_scheduler_ctx *ctx, nd_graph *g, const char *path);

/* After a job ran (flush_report.c): counts it, writes ND_LOG=2's line for
 * it, and calls the progress callback when it is due. */
/* ND_TRACE's Chrome trace file for the executor (NULL and errno when it
 * cannot be opened); closing writes its end (NULL: nothing). */
FILE *nd_trace_open(const char *path);
void nd_trace_close(FILE *f);
/* One step that ran from start_us for dur_us (host clock, nd_log_clock_us):
 * named "value: label" when its value is named. */
void nd_trace_step(nd_scheduler_ctx *ctx, const nd_step *st, int32_t index, const char *value, double start_us,
                   double dur_us);

/* walk: the job's nd_flush_walk (flush_walk.h). */
void nd_flush_report(nd_scheduler_ctx *ctx, const nd_flush_job *job, const void *walk, double run_us,
                     nd_status rc);

/* Makes the buffer's materialised value valid in `memory` (copying from a
 * memory that holds it). For reads by the host. */
nd_status nd_scheduler_make_valid(nd_scheduler_ctx *ctx, nd_buffer *b, int memory);
/* Bytes [lo, hi) of b's materialised value into the host buffer dst, from
 * where the value is (a memory that holds it whole, or its pieces' owned
 * rows), b left as it is: a host read of a small part of a large array
 * copies that part, neither the whole array nor a host copy of it kept
 * (frontend/host_io.c). Under mpirun, of a split array, collective: each
 * rank broadcasts its part of the span (every rank makes the same read).
 * dst NULL (no memory for it): ND_ERR_OOM, after taking part in a
 * collective read. ND_ERR_UNSUPPORTED (no error set) where it cannot (the
 * value is nowhere, or the backend has no stage hook): the caller then
 * makes the whole array valid. */
nd_status nd_scheduler_read_span(nd_scheduler_ctx *ctx, const nd_buffer *b, size_t lo, size_t hi, void *dst);

#endif
