/* The one runtime struct: all mutable library state outside the per-thread
 * error and scopes lives here. Every public function reaches it under the
 * API lock (common/api_guard.h). */
#ifndef ND_FRONTEND_RUNTIME_H
#define ND_FRONTEND_RUNTIME_H

#include <assert.h>

#include "common/api_guard.h"
#include "common/freelist.h"
#include "graph/graph.h"
#include "scheduler/scheduler.h"

typedef struct {
    int initialised;
    nd_config cfg; /* resolved: defaults, environment and nd_init merged */
    char dump_dot_dir[512];
    char cache_dir[512];
    char devices[256];
    int atexit_registered; /* survives nd_shutdown: atexit runs once */
    nd_backend *backend;
    /* One-index-array gathers are fusable maps (frontend/gather.c): the
     * backend's kernels gather and ND_FUSED_GATHER is not 0. */
    int fused_gather;
    nd_graph graph;
    nd_graph graph_spare; /* empty: storage a read's flush splits the graph into */
    nd_scheduler_ctx sched;
    /* Runs planned flushes while the caller records (NULL: the caller runs
     * them, ND_EXECUTOR_THREAD=0 or the thread could not start). */
    struct nd_flush_worker *worker;
    /* Recycled buffer descriptors and array handles (common/freelist.h). */
    nd_freelist buffer_pool, array_pool;
    /* Freed bodies' structs, waiting before free() (common/body.h): a
     * freed body passed again finds its struct marked, not reused memory. */
    nd_freelist body_ring;
    uint64_t rng_seed;
    uint64_t rng_stream; /* random calls since nd_random_seed */
    nd_stats stats;
    int64_t early_flush_at; /* pending nodes that trigger an early flush; 0 = none */
    int early_flush_due;    /* run it before the next node is recorded */
    /* The first error of a flush the library started on its own (early,
     * or at max_pending) inside some other call: that call's caller does
     * not check it, so the next nd_sync or nd_flush returns it. */
    nd_status deferred_status;
    char deferred_message[1024];
    /* Binary ops' resolved (op, compute dtype, result dtype) by (op,
     * operand dtypes and weakness): a loop body records the same few
     * combinations over and over (elementwise.c, nd_fe_binary). */
    uint64_t binary_rules[64];
    /* Buffers of recent weak scalars by value (creation.c, weak_scalar):
     * a loop body makes the same scalars every iteration (x * 0.99), and
     * their buffers are never written, so one buffer serves every handle
     * of that value. Each slot holds a reference. */
    nd_buffer *weak_buffers[16];
    /* nd_body_trace is running the body's function (frontend/body.c): no
     * flush may run (early ones wait), and a read or sync refuses, its
     * function kept in trace_refused for the trace's error. */
    int tracing;
    const char *trace_refused;
    /* ND_SCOPE_REPLAY=1: scopes seen before are replayed as one body call
     * (scope_replay.h); the buffer its placeholders view (dead, off the
     * live list; a reference). */
    int scope_replay;
    nd_buffer *replay_sentinel;
    /* ND_BODY_LOOPS=1: a body call freed into the next call of the same
     * body joins it (graph.h, nd_graph_merge_loop). */
    int body_loops;
} nd_runtime;

extern nd_runtime nd_rt;

/* Memory of the backend in use (pinned host memory on CUDA): the rest of
 * the frontend reaches the backend only through the runtime and the
 * scheduler. */
nd_status nd_runtime_alloc(int memory, size_t bytes, void **out);
/* The memory the backend computes in (ND_MEMORY_HOST for the CPU backend),
 * or -1 when no backend runs (after nd_shutdown). */
int nd_runtime_memory(void);
/* Whether the backend's LA_CHOLESKY writes L^T (backends/backend.h). */
int nd_runtime_cholesky_transposed(void);
/* What the backend keeps cached (zero if it keeps nothing), and giving it
 * back to the system (nd_stats, nd_trim). */
void nd_runtime_backend_cached(nd_backend_cached *out);
void nd_runtime_backend_trim(void);

/* Has the backend compile user loop l (nd_ufunc_define); fn names the
 * public call in errors. */
nd_status nd_runtime_prepare_ufunc(const char *fn, const nd_ufunc_loop *l);
/* Starts the runtime with defaults if it is not running; ND_OK if running.
 * Inline: every public call that records asks. */
nd_status nd_runtime_start(void);
static inline nd_status nd_runtime_ensure(void) {
    assert(nd_api_held() && "nd_runtime_ensure outside a public function's API guard");
    if (__builtin_expect(nd_rt.initialised, 1)) return ND_OK;
    return nd_runtime_start();
}
/* Waits for the flush in flight on the executor thread (before reading
 * buffer state: host reads, stats, dumps); returns its error, if any. */
nd_status nd_runtime_drain(void);
/* Waits for it, leaving its error for the next nd_sync. */
void nd_runtime_wait(void);
/* nd_sync's work (run everything pending, wait for the device) without
 * returning a deferred error: for reads, which report their own array's
 * failure and leave the deferred one to the program's next nd_sync. */
nd_status nd_runtime_sync(void);
/* A read's sync: runs what reading b's latest version needs (other
 * pending work stays pending) and waits for the device; errors as
 * nd_runtime_sync. */
nd_status nd_runtime_sync_read(nd_buffer *b);
/* nd_stream_sync_point's first half: runs everything pending on this
 * thread and waits until a flush handed to the executor is enqueued (not
 * run); returns what nd_flush would (a deferred error included). */
nd_status nd_runtime_submit(void);
/* The same, its errors kept for the next nd_sync/nd_flush (a flush nd
 * starts on its own inside another call). */
void nd_runtime_submit_quietly(void);
/* nd_config.cuda_stream at nd_init (runtime_devices.c): hands `stream` to
 * the new backend be; ND_ERR_UNSUPPORTED when be has no streams. */
nd_status nd_runtime_attach_stream(nd_backend *be, void *stream);
/* Called after recording a node: flushes when max_pending is reached,
 * and marks an early flush due. The test is inline (every op pays it);
 * nd_runtime_after_record_check does the rest. */
void nd_runtime_after_record_check(void);
static inline void nd_runtime_after_record(void) {
    nd_rt.stats.nodes_recorded++;
    if ((int64_t)nd_rt.graph.n_nodes >= nd_rt.cfg.max_pending || nd_rt.early_flush_at)
        nd_runtime_after_record_check();
}
/* Early flushes stop for the rest of the run once a value this large is
 * recorded (runtime.c says why). */
#define ND_EARLY_FLUSH_MAX_BYTES ((size_t)64 << 20)
/* The early flushes' count doubles up to this many nodes and stays there
 * (runtime.c's nd_runtime_early_flush says why). */
#define ND_EARLY_FLUSH_MAX_NODES 1024
/* nd_runtime_after_record when the caller has the new node's buffer at
 * hand (every elementwise op): the check is called only when it has
 * something to do, not on every op while early flushes are armed.
 * Always inline: in the binary ops' larger function LTO left it a call. */
static inline __attribute__((always_inline)) void nd_runtime_after_record_of(const nd_buffer *out) {
    nd_rt.stats.nodes_recorded++;
    const int64_t n = (int64_t)nd_rt.graph.n_nodes;
    if (__builtin_expect(n >= nd_rt.cfg.max_pending ||
                             (nd_rt.early_flush_at && (n + (int64_t)nd_rt.graph.joined >= nd_rt.early_flush_at ||
                                                       out->nbytes > ND_EARLY_FLUSH_MAX_BYTES)),
                         0))
        nd_runtime_after_record_check();
}
/* A body call joined the loop call before it without a node (scope
 * replay's deferred call): counts the round for the early flushes and
 * runs one that falls due (the statement is complete). */
void nd_runtime_after_join(void);
/* Whether nd_runtime_after_join has nothing to do after one more round:
 * no early flush is or would fall due (the scope replay's fast path joins
 * without it, as a flush runs under the whole API guard). */
static inline int nd_runtime_join_is_quiet(void) {
    return !nd_rt.early_flush_due && (int64_t)nd_rt.graph.n_nodes < nd_rt.cfg.max_pending &&
           (!nd_rt.early_flush_at || (int64_t)nd_rt.graph.n_nodes + nd_rt.graph.joined + 1 < nd_rt.early_flush_at);
}
/* Called before a node is added to the graph: runs an early flush that is
 * due (the statements before are complete and their temporaries freed). */
void nd_runtime_early_flush(void);
static inline void nd_runtime_before_record(void) {
    if (nd_rt.early_flush_due) nd_runtime_early_flush();
}
/* A flush asked for while a body is traced (frontend/body.c): refuses it,
 * with the error naming the body's call that asked. */
nd_status nd_fe_trace_refuse_flush(void);
/* Drops the weak scalars' buffers the runtime keeps (nd_shutdown). */
void nd_runtime_forget_weak_buffers(void);
/* A thread's scopes: its handles on one array (items) with marks[d]
 * where depth d starts (d = 1..depth); scope.c. */
typedef struct nd_scope_stack {
    nd_array **items;
    int64_t n_items, cap_items;
    int64_t *marks;
    int32_t depth, cap_depth;
    /* Handles registered while `items` could not grow (no host memory),
     * linked through themselves (scope_prev/next, scope_depth): their
     * scope's end frees them as it frees the others (scope.c). */
    nd_array *overflow;
    /* The thread's scope replay (scope_replay.h), NULL until it learns one. */
    struct nd_scope_replay *replay;
} nd_scope_stack;
/* scope_slot of a handle on its stack's overflow list. */
#define ND_SCOPE_OVERFLOW INT32_MAX
/* The calling thread's stack (NULL until its first nd_scope_begin). Read
 * on every op: initial-exec, as the API guard's state. */
extern _Thread_local nd_scope_stack *nd_fe_my_scopes
    __attribute__((visibility("hidden"), tls_model("initial-exec")));
/* nd_runtime_track when the stack's array is full: grows it. */
nd_array *nd_runtime_track_grow(nd_array *a);
/* Registers a new handle in this thread's innermost scope (if any).
 * Inline: every public call that makes a handle ends here. */
static inline __attribute__((always_inline)) nd_array *nd_runtime_track_inline(nd_array *a) {
    nd_scope_stack *s = nd_fe_my_scopes;
    if (!a || !s || s->depth == 0) return a;
    if (__builtin_expect(s->n_items == s->cap_items, 0)) return nd_runtime_track_grow(a);
    a->scope_slot = (int32_t)s->n_items;
    a->scope_owner = s;
    s->items[s->n_items++] = a;
    return a;
}
/* LTO leaves this one a call in the larger functions; the binary ops'
 * recording takes the always-inline body above. */
static inline nd_array *nd_runtime_track(nd_array *a) { return nd_runtime_track_inline(a); }
/* Clears a dying handle's entry in its scope stack (scope_slot >= 0). */
void nd_runtime_untrack(nd_array *a);
/* nd_shutdown: closes the calling thread's scopes and frees its stack;
 * other threads' scoped handles stay, to be released with their memory
 * (scope.c says why). */
void nd_scope_shutdown(void);
/* nd_shutdown, with ND_LOG >= 1: how many handles are still alive and
 * which calls made them (frontend/live_handles.c). */
void nd_report_live_handles(void);
/* Fills nd_stats' memory figures (frontend/memory_stats.c). */
void nd_runtime_memory_stats(nd_stats *s);

#endif
