/* run_plan for CUDA: a whole plan on several streams, and from its second
 * run on as a CUDA Graph.
 *
 * Streams: plan stream 0 is the backend's main stream; a plan that uses
 * others forks them from it with an event at the start and joins them back
 * at the end, so everything outside plans stays ordered on the main stream.
 * Inside, each step waits for the events of the steps the scheduler named
 * (stream_assign.c) and records its own when a later step waits for it.
 *
 * Graphs: the first run of a plan launches directly (its kernels are
 * compiled then). Later runs capture the same launches into a graph, keyed
 * by the run's signature: every slot and copy address and every parameter
 * value. A run with a signature seen before is one cudaGraphLaunch. A new
 * signature is captured and, once the plan holds ND_CUDA_GRAPHS_PER_PLAN
 * graphs, written into its least recently used one with cudaGraphExecUpdate
 * (re-instantiated only if the update is refused). A loop alternating
 * between two buffers therefore replays two graphs with no capture at all.
 * At most ND_CUDA_GRAPHS_MAX graphs are held over all plans; beyond that the
 * least recently used is destroyed. Plans that copy from or to host memory
 * are not captured (see capturable) and run directly.
 *
 * ND_PROFILE and ND_TRACE time every step with events (and wait for each
 * plan), so they run plans directly, never as graphs. */
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/step_kinds.h"
#include "common/alloc.h"

#define ND_CUDA_GRAPHS_PER_PLAN 4
#define ND_CUDA_GRAPHS_MAX 256
/* A plan of generated kernels and copies alone launches directly below
 * ND_CUDA_GRAPH_MIN_KERNEL_STEPS steps: cudaGraphLaunch costs the host
 * ~9 us, more than a few direct launches. On the H200 (2026-11-29,
 * ND_CUDA_GRAPHS=1 against 0, two pairs, bench_nd_suite --runs 15):
 * pi 0.474 / 0.461 ms with graphs against 0.447 / 0.450 direct, dot 0.340
 * / 0.342 against 0.334 / 0.330. A library call or a user kernel may
 * launch many kernels (or a launch function nd should not call again), so
 * a plan holding one is replayed from ND_CUDA_GRAPH_MIN_STEPS on
 * (fft_window, a map and cuFFT, ran the same either way). */
#define ND_CUDA_GRAPH_MIN_STEPS 2
#define ND_CUDA_GRAPH_MIN_KERNEL_STEPS 4

typedef struct {
    cudaGraphExec_t exec; /* NULL = empty entry */
    uint8_t *sig;
    size_t sig_len;
    uint64_t last_used;
} graph_entry;

struct nd_cuda_plan_state {
    nd_cuda *cu;
    nd_cuda_plan_state *prev, *next; /* cu->plans */
    int32_t n_steps;
    const nd_cuda_kentry **kentries; /* per step (kernel steps) */
    const void **user_fns;           /* per step (user kernel steps) */
    size_t *scratch_offset;          /* per step: its reduction partials or routine workspace */
    size_t *workspace_bytes;         /* per step: a library routine's workspace */
    void *scratch;
    size_t scratch_bytes;
    cudaEvent_t *events; /* per step that signals */
    /* Several logical devices: each step runs on plan stream `stream` of
     * its logical device (ldev; 0 for one device), a CUDA stream of its
     * own per (ldev, stream). The scheduler assigned streams per logical
     * device (stream_assign.c), so its waits order every pair of queues;
     * logical devices mapped onto one set of streams (ND_CUDA_SHARE_STREAMS)
     * only add the order of issue. */
    uint8_t *ldev;        /* per step */
    int32_t *order_wait;  /* per step: the step before it on its scheduler queue when that one ran on another
                             CUDA stream (a matmul: run_stream), or -1 */
    int spans_gpus;       /* some step runs on another GPU than logical device 0's */
    cudaEvent_t fork, join[ND_CUDA_MAX_LDEV][ND_PLAN_STREAMS];
    uint32_t streams[ND_CUDA_MAX_LDEV]; /* bit s: plan stream s of logical device d is used */
    int32_t n_params; /* parameters read: max index + 1 */
    uint64_t runs;
    int no_capture;   /* capture failed once: run directly from then on */
    graph_entry graphs[ND_CUDA_GRAPHS_PER_PLAN];
    uint8_t *sig;
    size_t sig_cap;
    cudaEvent_t *t0, *t1; /* ND_PROFILE: per step */
    /* Kernels that gather, and the gather and scatter routines: one fail
     * record each (kernel_ir.h's nd_ir_fail; fail_index: per step, its
     * record or -1: nd_plan_fail_records), in device
     * memory at addresses fixed for the plan's life (so graphs replay);
     * copied to fails_host and cleared after every run, read by
     * plan_fails (one read back per run of the plan). */
    int32_t n_fails;
    int32_t *fail_index;
    void *fails;
    nd_ir_fail *fails_host;
};

/* ------------------------------------------------------------ state */

static void drop_graph(nd_cuda *cu, graph_entry *g) {
    if (!g->exec) return;
    cudaGraphExecDestroy(g->exec); /* an in-flight launch completes first */
    free(g->sig);
    memset(g, 0, sizeof *g);
    cu->n_execs--;
}

static void state_free_locked(nd_cuda_plan_state *ps) {
    nd_cuda *cu = ps->cu;
    for (int i = 0; i < ND_CUDA_GRAPHS_PER_PLAN; i++) drop_graph(cu, &ps->graphs[i]);
    for (int32_t i = 0; i < ps->n_steps; i++) {
        if (ps->events && ps->events[i]) cudaEventDestroy(ps->events[i]);
        if (ps->t0 && ps->t0[i]) cudaEventDestroy(ps->t0[i]);
        if (ps->t1 && ps->t1[i]) cudaEventDestroy(ps->t1[i]);
    }
    if (ps->fork) cudaEventDestroy(ps->fork);
    for (int d = 0; d < ND_CUDA_MAX_LDEV; d++)
        for (int s = 0; s < ND_PLAN_STREAMS; s++)
            if (ps->join[d][s]) cudaEventDestroy(ps->join[d][s]);
    nd_cuda_device_free(cu, ps->scratch, ps->scratch_bytes); /* stream-ordered */
    if (ps->fails) nd_cuda_device_free(cu, ps->fails, sizeof(nd_ir_fail) * (size_t)ps->n_fails);
    if (ps->fails_host) {
        cudaStreamSynchronize(cu->stream); /* the last run's copy into it */
        cudaFreeHost(ps->fails_host);
    }
    free(ps->fail_index);
    if (ps->prev) ps->prev->next = ps->next;
    else cu->plans = ps->next;
    if (ps->next) ps->next->prev = ps->prev;
    free(ps->kentries);
    free(ps->user_fns);
    free(ps->workspace_bytes);
    free(ps->scratch_offset);
    free(ps->events);
    free(ps->ldev);
    free(ps->order_wait);
    free(ps->t0);
    free(ps->t1);
    free(ps->sig);
    free(ps);
}

static void state_free(void *p) {
    nd_cuda_plan_state *ps = p;
    nd_cuda *cu = ps->cu;
    if (cu->lock_ok) pthread_mutex_lock(&cu->lock);
    state_free_locked(ps);
    if (cu->lock_ok) pthread_mutex_unlock(&cu->lock);
}

void nd_cuda_plan_states_release_all(nd_cuda *cu) {
    /* Plans that outlive the backend keep a dangling free function: detach
     * them by leaving their state freed here and the pointer unreachable. */
    while (cu->plans) state_free_locked(cu->plans);
}

static nd_status make_event(cudaEvent_t *e, unsigned flags) {
    ND_CUDA_TRY(cudaEventCreateWithFlags(e, flags), "cudaEventCreateWithFlags");
    return ND_OK;
}

/* An event recorded on a stream of GPU `ordinal` must be made there. */
static nd_status make_event_on(nd_cuda *cu, int ordinal, cudaEvent_t *e, unsigned flags) {
    nd_cuda_use_device(cu, ordinal);
    nd_status s = make_event(e, flags);
    nd_cuda_use_device(cu, cu->device);
    return s;
}

/* The logical device step st runs on: its `device` (partition.c), 0 for
 * whole-array steps. */
static int step_ldev(const nd_cuda *cu, const nd_step *st) {
    int d = st->device ? st->device - 1 : 0;
    return d < cu->n_ldev ? d : 0;
}

/* The plan stream a step runs on, of its logical device: the scheduler's,
 * but a matmul runs on its device's plan stream 0 (the stream that
 * device's cuBLAS handle is bound to: matmul.c's ensure_blas). */
static int run_stream(const nd_step *st) { return st->kind == ND_STEP_MATMUL ? 0 : st->stream; }

/* First run: kernels compiled and resolved, scratch and events made. */
static nd_status state_new(nd_cuda *cu, nd_plan *plan, nd_cuda_plan_state **out) {
    nd_cuda_plan_state *ps = nd_calloc(1, sizeof *ps);
    int32_t n = plan->n_steps;
    if (!ps) return nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a plan's state");
    ps->cu = cu;
    ps->n_steps = n;
    ps->kentries = nd_calloc((size_t)n + 1, sizeof *ps->kentries);
    ps->user_fns = nd_calloc((size_t)n + 1, sizeof *ps->user_fns);
    ps->workspace_bytes = nd_calloc((size_t)n + 1, sizeof *ps->workspace_bytes);
    ps->scratch_offset = nd_calloc((size_t)n + 1, sizeof *ps->scratch_offset);
    ps->events = nd_calloc((size_t)n + 1, sizeof *ps->events);
    ps->ldev = nd_calloc((size_t)n + 1, sizeof *ps->ldev);
    ps->order_wait = nd_calloc((size_t)n + 1, sizeof *ps->order_wait);
    ps->next = cu->plans;
    if (cu->plans) cu->plans->prev = ps;
    cu->plans = ps;
    nd_status s = ps->kentries && ps->user_fns && ps->workspace_bytes && ps->scratch_offset && ps->events &&
                          ps->ldev && ps->order_wait
                      ? ND_OK
                      : nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a plan's state");
    /* Logical devices (only on a backend with several), and the waits
     * that keep a scheduler queue's order where its steps run on different
     * CUDA streams (a matmul moved to run_stream's stream; the scheduler
     * orders the steps of one queue by issue alone). */
    int32_t last_on[ND_CUDA_MAX_LDEV][ND_PLAN_STREAMS];
    for (int d = 0; d < ND_CUDA_MAX_LDEV; d++)
        for (int t = 0; t < ND_PLAN_STREAMS; t++) last_on[d][t] = -1;
    for (int32_t i = 0; i < n && s == ND_OK; i++) {
        const nd_step *st = &plan->steps[i];
        const int queue = step_ldev(cu, st);
        int d = queue;
        /* ND_CUDA_SHARE_STREAMS: on the first device's GPU, its streams
         * (the plan streams then order the steps as on one device). */
        if (cu->share_streams && cu->ldev[d].ordinal == cu->device) d = 0;
        ps->ldev[i] = (uint8_t)d;
        if (cu->ldev[d].ordinal != cu->device) ps->spans_gpus = 1;
        ps->order_wait[i] = -1;
        const int32_t prev = last_on[queue][st->stream];
        if (prev >= 0 && (ps->ldev[prev] != d || run_stream(&plan->steps[prev]) != run_stream(st)))
            ps->order_wait[i] = prev;
        last_on[queue][st->stream] = i;
    }
    for (int32_t i = 0; i < n && s == ND_OK; i++)
        if (ps->order_wait[i] >= 0 && !ps->events[ps->order_wait[i]]) {
            const int32_t w = ps->order_wait[i];
            s = make_event_on(cu, cu->ldev[ps->ldev[w]].ordinal, &ps->events[w], cudaEventDisableTiming);
        }
    /* A plan's new kernels compile side by side first; the loop below
     * then finds them in the cache. */
    if (s == ND_OK) {
        const nd_kernel **ks = nd_malloc(((size_t)n + 1) * sizeof *ks);
        int nk = 0;
        for (int32_t i = 0; ks && i < n; i++)
            if (plan->steps[i].kind == ND_STEP_KERNEL) ks[nk++] = plan->steps[i].kernel;
        if (ks) nd_cuda_kcache_prefetch(cu->cache, ks, nk);
        free(ks);
    }
    for (int32_t i = 0; i < n && s == ND_OK; i++) {
        const nd_step *st = &plan->steps[i];
        int d = ps->ldev[i], ord = cu->ldev[d].ordinal;
        ps->streams[d] |= 1u << run_stream(st);
        cudaStream_t unused;
        s = nd_cuda_ldev_stream(cu, d, run_stream(st), &unused);
        if (s == ND_OK && st->signals && !ps->events[i])
            s = make_event_on(cu, ord, &ps->events[i], cudaEventDisableTiming);
        /* User kernels are compiled here too, before any capture. */
        if (s == ND_OK && st->kind == ND_STEP_USER && st->user.lib == ND_LIB_NONE)
            s = nd_cuda_user_resolve(cu, st->user.kernel, &ps->user_fns[i]);
        /* nd's routines: the plugin loaded, the workspace in the scratch. */
        if (s == ND_OK && st->kind == ND_STEP_USER && st->user.lib != ND_LIB_NONE) {
            s = nd_cuda_lib_prepare(cu, &st->user, &ps->workspace_bytes[i]);
            ps->scratch_offset[i] = ps->scratch_bytes;
            /* At least one block: a routine is never handed a NULL
             * workspace, which would mean "size it" (prims/prims.h). */
            ps->scratch_bytes += (ps->workspace_bytes[i] + 256) & ~(size_t)255;
        }
        if (s != ND_OK || st->kind != ND_STEP_KERNEL) continue;
        s = nd_cuda_kcache_get(cu->cache, st->kernel, &ps->kentries[i]);
        if (s != ND_OK) break;
        size_t b = nd_cuda_kernel_scratch_bytes(cu, ps->kentries[i]);
        ps->scratch_offset[i] = ps->scratch_bytes;
        ps->scratch_bytes += (b + 255) & ~(size_t)255;
        for (int32_t j = 0; j < st->kernel->n_params; j++)
            if (st->params[j] + 1 > ps->n_params) ps->n_params = st->params[j] + 1;
    }
    int forks = (ps->streams[0] & ~1u) != 0;
    for (int d = 1; d < cu->n_ldev; d++) forks |= ps->streams[d] != 0;
    if (s == ND_OK && forks) {
        s = make_event(&ps->fork, cudaEventDisableTiming);
        for (int d = 0; d < cu->n_ldev && s == ND_OK; d++)
            for (int t = d == 0 ? 1 : 0; t < ND_PLAN_STREAMS && s == ND_OK; t++)
                if (ps->streams[d] & (1u << t))
                    s = make_event_on(cu, cu->ldev[d].ordinal, &ps->join[d][t], cudaEventDisableTiming);
    }
    if (s == ND_OK && ps->scratch_bytes)
        s = nd_cuda_device_alloc(cu, ps->scratch_bytes, &ps->scratch, "reduction partials of a plan");
    if (s == ND_OK && !(ps->fail_index = nd_calloc((size_t)n + 1, sizeof *ps->fail_index)))
        s = nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a plan's state");
    if (s == ND_OK) ps->n_fails = nd_plan_fail_records(plan, ps->fail_index);
    if (s == ND_OK && ps->n_fails) {
        size_t fb = sizeof(nd_ir_fail) * (size_t)ps->n_fails;
        s = nd_cuda_device_alloc(cu, fb, &ps->fails, "fail records of a plan's gathers");
        if (s == ND_OK && cudaMallocHost((void **)&ps->fails_host, fb) != cudaSuccess) {
            ps->fails_host = NULL;
            (void)cudaGetLastError();
            s = nd_error_set(ND_ERR_OOM, "cuda: out of pinned host memory for the fail records of a plan");
        }
        if (s == ND_OK && cudaMemsetAsync(ps->fails, 0, fb, cu->stream) != cudaSuccess)
            s = nd_cuda_fail(cudaGetLastError(), "cudaMemsetAsync (fail records)");
    }
    if (s == ND_OK && (cu->profile || cu->trace)) {
        ps->t0 = nd_calloc((size_t)n + 1, sizeof *ps->t0);
        ps->t1 = nd_calloc((size_t)n + 1, sizeof *ps->t1);
        if (!ps->t0 || !ps->t1) s = nd_error_set(ND_ERR_OOM, "cuda: out of host memory for profiling events");
        for (int32_t i = 0; i < n && s == ND_OK; i++) {
            int ord = cu->ldev[ps->ldev[i]].ordinal;
            s = make_event_on(cu, ord, &ps->t0[i], cudaEventDefault);
            if (s == ND_OK) s = make_event_on(cu, ord, &ps->t1[i], cudaEventDefault);
        }
    }
    if (s != ND_OK) {
        state_free_locked(ps);
        return s;
    }
    *out = ps;
    return ND_OK;
}

/* ------------------------------------------------------------ launches */

/* Plan stream s of logical device d (made by state_new). */
static cudaStream_t stream_of(nd_cuda *cu, int d, int s) {
    if (d == 0) return s == 0 ? cu->stream : cu->aux[s];
    return cu->ldev[d].streams[s];
}

/* The logical device of a copy's end: a piece's (its slot's device), else
 * 0 (whole arrays live on logical device 0). */
static int slot_ldev(const nd_cuda *cu, const nd_plan *plan, int32_t slot) {
    int d = plan->slots[slot].device ? plan->slots[slot].device - 1 : 0;
    return d < cu->n_ldev ? d : 0;
}

/* A copy between pieces of a split array and its whole buffer
 * (scheduler/partition_steps.c): a device copy on one GPU, a peer copy
 * between two (through host memory where they have no peer access). */
static nd_status issue_piece_copy(nd_cuda *cu, const nd_plan *plan, const nd_step *st, void *dst, const void *src,
                                  cudaStream_t stream) {
    if (st->copy.bytes == 0) return ND_OK;
    int od = cu->ldev[slot_ldev(cu, plan, st->copy.dst_slot)].ordinal;
    int os = cu->ldev[slot_ldev(cu, plan, st->copy.src_slot)].ordinal;
    ND_NVTX_PUSH(st->part == ND_PART_HALO ? "nd halo copy" : "nd piece copy");
    /* Between GPUs too a plain cudaMemcpyAsync, the direction read from
     * the addresses (unified addressing): the driver copies over the peer
     * link, or through host memory where there is none, and a capture
     * takes it as a copy node. */
    cudaError_t e = cudaMemcpyAsync(dst, src, st->copy.bytes, od == os ? cudaMemcpyDeviceToDevice : cudaMemcpyDefault,
                                    stream);
    ND_NVTX_POP();
    if (e != cudaSuccess) {
        char what[112];
        snprintf(what, sizeof what, "cudaMemcpyAsync of %zu bytes (GPU %d -> GPU %d)", st->copy.bytes, os, od);
        return nd_cuda_fail(e, what);
    }
    return ND_OK;
}

static nd_status issue_step(nd_backend *be, nd_cuda_plan_state *ps, const nd_plan *plan, const nd_bound_plan *bound,
                            int32_t i, cudaStream_t stream) {
    nd_cuda *cu = ps->cu;
    const nd_step *st = &plan->steps[i];
    switch (st->kind) {
    case ND_STEP_KERNEL: {
        const nd_kernel *k = st->kernel;
        void *ptrs[k->n_slots > 0 ? k->n_slots : 1];
        nd_scalar_bits params[k->n_params > 0 ? k->n_params : 1];
        for (int32_t j = 0; j < k->n_slots; j++) {
            ptrs[j] = bound->slots[st->slots[j]];
            if (st->slot_byte_offset && ptrs[j]) ptrs[j] = (char *)ptrs[j] + st->slot_byte_offset[j];
        }
        for (int32_t j = 0; j < k->n_params; j++) params[j] = bound->params[st->params[j]];
        void *partials = ps->scratch ? (char *)ps->scratch + ps->scratch_offset[i] : NULL;
        void *fail = ps->fail_index[i] >= 0 ? (char *)ps->fails + sizeof(nd_ir_fail) * (size_t)ps->fail_index[i] : NULL;
        return nd_cuda_issue_kernel(cu, ps->kentries[i], k, ptrs, params, stream, partials, fail);
    }
    case ND_STEP_MATMUL: {
        /* on its device's plan stream 0 (run_stream), its cuBLAS handle's */
        char name[112];
        nd_step_label(st, name, sizeof name);
        ND_NVTX_PUSH(name);
        nd_status s = nd_cuda_run_matmul(be, &st->matmul, bound->slots, ps->ldev[i], stream);
        ND_NVTX_POP();
        return s;
    }
    case ND_STEP_USER:
        if (st->user.lib != ND_LIB_NONE) {
            /* A gather or scatter files a bad index in its step's record. */
            void *fail = ps->fail_index[i] >= 0 ? (char *)ps->fails + sizeof(nd_ir_fail) * (size_t)ps->fail_index[i]
                                                : NULL;
            return nd_cuda_issue_lib(cu, &st->user, bound->slots, (char *)ps->scratch + ps->scratch_offset[i],
                                     ps->workspace_bytes[i], fail, stream);
        }
        return nd_cuda_issue_user(ps->user_fns[i], &st->user, bound->slots, stream);
    case ND_STEP_COPY:
        if (st->part != ND_PART_NONE && st->copy.src_memory == plan->memory && st->copy.dst_memory == plan->memory)
            return issue_piece_copy(cu, plan, st, bound->copy_dst[i], bound->copy_src[i], stream);
        return nd_cuda_issue_copy(cu, bound->copy_dst[i], st->copy.dst_memory, bound->copy_src[i],
                                  st->copy.src_memory, st->copy.bytes, stream);
    }
    return ND_OK;
}

static const char *step_name(const nd_cuda_plan_state *ps, const nd_step *st, int32_t i, char *buf, size_t cap);

/* Every step of the plan, forked from and joined back to the main stream. */
static nd_status issue_plan(nd_backend *be, nd_cuda_plan_state *ps, const nd_plan *plan, const nd_bound_plan *bound,
                            int timed) {
    nd_cuda *cu = ps->cu;
    if (ps->fork) {
        ND_CUDA_TRY(cudaEventRecord(ps->fork, cu->stream), "cudaEventRecord (plan fork)");
        for (int d = 0; d < cu->n_ldev; d++)
            for (int t = d == 0 ? 1 : 0; t < ND_PLAN_STREAMS; t++)
                if (ps->streams[d] & (1u << t)) {
                    nd_cuda_use_device(cu, cu->ldev[d].ordinal);
                    ND_CUDA_TRY(cudaStreamWaitEvent(stream_of(cu, d, t), ps->fork, 0), "cudaStreamWaitEvent");
                }
    }
    nd_status failed = ND_OK;
    for (int32_t i = 0; i < plan->n_steps; i++) {
        const nd_step *st = &plan->steps[i];
        cudaStream_t stream = stream_of(cu, ps->ldev[i], run_stream(st));
        /* Launches and records go to a stream of the step's GPU from that
         * GPU (a no-op on one GPU). */
        nd_cuda_use_device(cu, cu->ldev[ps->ldev[i]].ordinal);
        for (int32_t w = 0; w < st->n_waits; w++)
            ND_CUDA_TRY(cudaStreamWaitEvent(stream, ps->events[st->waits[w]], 0), "cudaStreamWaitEvent");
        if (ps->order_wait[i] >= 0)
            ND_CUDA_TRY(cudaStreamWaitEvent(stream, ps->events[ps->order_wait[i]], 0),
                        "cudaStreamWaitEvent (scheduler queue order)");
        if (timed) ND_CUDA_TRY(cudaEventRecord(ps->t0[i], stream), "cudaEventRecord (profile)");
        /* A step whose value the program named is an NVTX range of that
         * name, so Nsight Systems shows the program's names over its
         * launches (ranges are not captured into CUDA graphs: a replay
         * shows the flush's range only). */
        const char *value = bound->step_names ? bound->step_names[i] : NULL;
        if (value) {
            char range[160], label[112];
            snprintf(range, sizeof range, "%s: %s", value, step_name(ps, st, i, label, sizeof label));
            ND_NVTX_PUSH(range);
        }
        failed = issue_step(be, ps, plan, bound, i, stream);
        if (value) ND_NVTX_POP();
        /* A step that cannot be issued (a failed compile, no memory for
         * its partials) ends the plan; the steps issued on other streams
         * are still joined back below, so that the plan's temporaries,
         * given back to the pool now, are not reused by the next plan
         * while those steps still run. */
        if (failed != ND_OK) break;
        if (timed) ND_CUDA_TRY(cudaEventRecord(ps->t1[i], stream), "cudaEventRecord (profile)");
        if (ps->events[i]) ND_CUDA_TRY(cudaEventRecord(ps->events[i], stream), "cudaEventRecord");
    }
    for (int d = 0; d < cu->n_ldev && ps->fork; d++)
        for (int t = d == 0 ? 1 : 0; t < ND_PLAN_STREAMS; t++) {
            if (!(ps->streams[d] & (1u << t))) continue;
            nd_cuda_use_device(cu, cu->ldev[d].ordinal);
            ND_CUDA_TRY(cudaEventRecord(ps->join[d][t], stream_of(cu, d, t)), "cudaEventRecord (plan join)");
            nd_cuda_use_device(cu, cu->device);
            ND_CUDA_TRY(cudaStreamWaitEvent(cu->stream, ps->join[d][t], 0), "cudaStreamWaitEvent (plan join)");
        }
    nd_cuda_use_device(cu, cu->device);
    return failed;
}

/* ------------------------------------------------------------ graphs */

/* The run's variable part: addresses and parameter values. Equal
 * signatures produce identical launches. */
static int build_signature(nd_cuda_plan_state *ps, const nd_plan *plan, const nd_bound_plan *bound, size_t *len) {
    size_t need = sizeof(void *) * (size_t)plan->n_slots + sizeof(nd_scalar_bits) * (size_t)ps->n_params;
    for (int32_t i = 0; i < plan->n_steps; i++)
        if (plan->steps[i].kind == ND_STEP_COPY) need += 2 * sizeof(void *);
    if (need > ps->sig_cap) {
        uint8_t *p = nd_realloc(ps->sig, need);
        if (!p) return 0;
        ps->sig = p;
        ps->sig_cap = need;
    }
    uint8_t *o = ps->sig;
    memcpy(o, bound->slots, sizeof(void *) * (size_t)plan->n_slots);
    o += sizeof(void *) * (size_t)plan->n_slots;
    if (ps->n_params) {
        memcpy(o, bound->params, sizeof(nd_scalar_bits) * (size_t)ps->n_params);
        o += sizeof(nd_scalar_bits) * (size_t)ps->n_params;
    }
    for (int32_t i = 0; i < plan->n_steps; i++) {
        if (plan->steps[i].kind != ND_STEP_COPY) continue;
        memcpy(o, &bound->copy_dst[i], sizeof(void *));
        memcpy(o + sizeof(void *), &bound->copy_src[i], sizeof(void *));
        o += 2 * sizeof(void *);
    }
    *len = need;
    return 1;
}

/* Plans that copy to or from host memory run directly, and so do plans
 * with a library routine that reads its status back to the host
 * (common/lib_calls.h: nd_lib_reads_back; not the gather and scatter
 * routines, which file a bad index in their step's fail record and are
 * captured like kernels that gather). Pageable memory
 * cannot be captured at all, and a graph's copy node keeps a pinned
 * allocation's identity: once the host buffer is freed and another pinned
 * one gets its address, replaying the old graph fails. Such plans move
 * megabytes, where one launch per step costs nothing that matters. */
/* Whether a graph replay pays for this plan's launches (the defines above). */
static int worth_a_graph(const nd_plan *plan) {
    if (plan->n_steps >= ND_CUDA_GRAPH_MIN_KERNEL_STEPS) return 1;
    if (plan->n_steps < ND_CUDA_GRAPH_MIN_STEPS) return 0;
    for (int32_t i = 0; i < plan->n_steps; i++)
        if (plan->steps[i].kind == ND_STEP_USER || plan->steps[i].kind == ND_STEP_MATMUL) return 1;
    return 0;
}

static int capturable(const nd_plan *plan) {
    for (int32_t i = 0; i < plan->n_steps; i++) {
        const nd_step *st = &plan->steps[i];
        /* A routine that reads its status back waits for its stream. */
        if (st->kind == ND_STEP_USER && nd_lib_reads_back(st->user.lib)) return 0;
        for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++)
            if (nd_step_access_at(st, j, plan->memory).memory == ND_MEMORY_HOST) return 0;
    }
    return 1;
}

/* Destroys the least recently used graph of any plan but `keep`. */
static void evict_one(nd_cuda *cu, const graph_entry *keep) {
    graph_entry *victim = NULL;
    for (nd_cuda_plan_state *ps = cu->plans; ps; ps = ps->next)
        for (int i = 0; i < ND_CUDA_GRAPHS_PER_PLAN; i++) {
            graph_entry *g = &ps->graphs[i];
            if (g->exec && g != keep && (!victim || g->last_used < victim->last_used)) victim = g;
        }
    if (victim) drop_graph(cu, victim);
}

static nd_status capture(nd_backend *be, nd_cuda_plan_state *ps, const nd_plan *plan, const nd_bound_plan *bound,
                         cudaGraph_t *out) {
    nd_cuda *cu = ps->cu;
    *out = NULL;
    ND_CUDA_TRY(cudaStreamBeginCapture(cu->stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    nd_status s = issue_plan(be, ps, plan, bound, 0);
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(cu->stream, &g);
    if (s == ND_OK && e != cudaSuccess) s = nd_cuda_fail(e, "cudaStreamEndCapture");
    if (s != ND_OK) {
        if (g) cudaGraphDestroy(g);
        (void)cudaGetLastError();
        return s;
    }
    *out = g;
    return ND_OK;
}

/* The graph for this signature: found, updated in place, or new. */
static nd_status graph_for(nd_backend *be, nd_cuda_plan_state *ps, const nd_plan *plan, const nd_bound_plan *bound,
                           size_t sig_len, graph_entry **out) {
    nd_cuda *cu = ps->cu;
    graph_entry *lru = NULL, *empty = NULL;
    for (int i = 0; i < ND_CUDA_GRAPHS_PER_PLAN; i++) {
        graph_entry *g = &ps->graphs[i];
        if (!g->exec) {
            if (!empty) empty = g;
            continue;
        }
        if (g->sig_len == sig_len && memcmp(g->sig, ps->sig, sig_len) == 0) {
            *out = g;
            return ND_OK;
        }
        if (!lru || g->last_used < lru->last_used) lru = g;
    }
    nd_logf(3, "cuda: plan %016llx: new signature (addresses or parameters), capturing its graph%s",
            (unsigned long long)plan->key, empty ? "" : " into the least recently used one");
    uint8_t *sig = nd_malloc(sig_len);
    if (!sig) return nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a graph signature");
    memcpy(sig, ps->sig, sig_len);
    cudaGraph_t graph;
    nd_status s = capture(be, ps, plan, bound, &graph);
    if (s != ND_OK) {
        free(sig);
        return s;
    }
    graph_entry *slot = empty ? empty : lru;
    int updated = 0;
    if (!empty) {
        cudaGraphExecUpdateResultInfo info;
        updated = cudaGraphExecUpdate(slot->exec, graph, &info) == cudaSuccess;
        if (!updated) {
            (void)cudaGetLastError();
            drop_graph(cu, slot);
        }
    }
    if (!updated) {
        cudaGraphExec_t exec;
        cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
        if (e != cudaSuccess) {
            cudaGraphDestroy(graph);
            free(sig);
            return nd_cuda_fail(e, "cudaGraphInstantiate");
        }
        slot->exec = exec;
        cu->n_execs++;
        if (cu->n_execs > ND_CUDA_GRAPHS_MAX) evict_one(cu, slot);
    } else {
        free(slot->sig);
    }
    cudaGraphDestroy(graph);
    slot->sig = sig;
    slot->sig_len = sig_len;
    *out = slot;
    return ND_OK;
}

/* ------------------------------------------------------------ profile */

/* Kernels by the name they were compiled under, other steps by their
 * label (step_kinds.c). */
static const char *step_name(const nd_cuda_plan_state *ps, const nd_step *st, int32_t i, char *buf, size_t cap) {
    if (st->kind == ND_STEP_KERNEL && st->strip) {
        snprintf(buf, cap, "%s%s", ps->kentries[i]->info.name, nd_step_strip_suffix(st));
        return buf;
    }
    if (st->kind == ND_STEP_KERNEL) return ps->kentries[i]->info.name;
    nd_step_label(st, buf, cap);
    return buf;
}

/* ND_PROFILE / ND_TRACE: waits for the plan, then reads its step events.
 * The trace shows logical device d as process 1 + d (on one GPU; steps on
 * another GPU than the trace's time zero are left out of the trace). */
static void record_times(nd_cuda_plan_state *ps, const nd_plan *plan, const char *const *step_names) {
    nd_cuda *cu = ps->cu;
    if (cudaStreamSynchronize(cu->stream) != cudaSuccess) return;
    cu->trace_flush++;
    for (int32_t i = 0; i < plan->n_steps; i++) {
        const nd_step *st = &plan->steps[i];
        float ms = 0, start = 0;
        if (cudaEventElapsedTime(&ms, ps->t0[i], ps->t1[i]) != cudaSuccess ||
            (cu->trace && cudaEventElapsedTime(&start, cu->trace_base, ps->t0[i]) != cudaSuccess)) {
            (void)cudaGetLastError();
            continue;
        }
        char buf[112];
        const char *name = step_name(ps, st, i, buf, sizeof buf);
        const char *value = step_names ? step_names[i] : NULL;
        if (cu->profile) nd_profile_add_step(cu->profile, st, name, value, ms * 1e-3);
        if (cu->trace)
            fprintf(cu->trace,
                    "{\"name\":\"%s%s%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                    "\"dur\":%.3f,\"args\":{\"flush\":%llu,\"step\":%d}},\n",
                    value ? value : "", value ? ": " : "", name, nd_profile_kind_name(nd_step_category(st)),
                    1 + ps->ldev[i], st->stream, start * 1e3, ms * 1e3, (unsigned long long)cu->trace_flush, i);
    }
}

/* ------------------------------------------------------------ entry */

/* After the plan's work on the main stream (every stream joins it at the
 * end, in a graph too): its fail records to the host, and cleared for the
 * next run. Outside any graph, so a graph's addresses stay the plan's. */
static nd_status fails_back(nd_cuda *cu, nd_cuda_plan_state *ps) {
    if (!ps->n_fails) return ND_OK;
    size_t fb = sizeof(nd_ir_fail) * (size_t)ps->n_fails;
    ND_CUDA_TRY(cudaMemcpyAsync(ps->fails_host, ps->fails, fb, cudaMemcpyDeviceToHost, cu->stream),
                "cudaMemcpyAsync (fail records)");
    ND_CUDA_TRY(cudaMemsetAsync(ps->fails, 0, fb, cu->stream), "cudaMemsetAsync (fail records)");
    return ND_OK;
}

static nd_status run_plan_locked(nd_backend *be, nd_plan *plan, const nd_bound_plan *bound);

nd_status nd_cuda_run_plan_locked(nd_backend *be, nd_plan *plan, const nd_bound_plan *bound) {
    nd_status s = run_plan_locked(be, plan, bound);
    nd_cuda_plan_state *ps = plan->backend_cache;
    if (ps) {
        nd_status f = fails_back((nd_cuda *)be->impl, ps);
        if (s == ND_OK) s = f;
    }
    return s;
}

nd_status nd_cuda_plan_fails_locked(nd_backend *be, nd_plan *plan, nd_ir_fail *out) {
    nd_cuda *cu = (nd_cuda *)be->impl;
    nd_cuda_plan_state *ps = plan->backend_cache;
    if (!ps || !ps->n_fails) return ND_OK;
    ND_CUDA_TRY(cudaStreamSynchronize(cu->stream), "cudaStreamSynchronize (a plan's fail records)");
    memcpy(out, ps->fails_host, sizeof(nd_ir_fail) * (size_t)ps->n_fails);
    return ND_OK;
}

static nd_status run_plan_locked(nd_backend *be, nd_plan *plan, const nd_bound_plan *bound) {
    nd_cuda *cu = (nd_cuda *)be->impl;
    nd_cuda_plan_state *ps = plan->backend_cache;
    nd_status s;
    if (!ps) {
        s = state_new(cu, plan, &ps);
        if (s != ND_OK) return s;
        plan->backend_cache = ps;
        plan->backend_cache_free = state_free;
    }
    cu->tick++;
    int timed = cu->profile || cu->trace;
    /* A plan whose device kernels run on several GPUs is captured like any
     * other: its fork streams on the other GPUs join the capture through
     * the same events, and peer copies become copy nodes. Where the driver
     * refuses it, it runs directly from then on (below). */
    int use_graph = cu->graphs && !timed && !ps->no_capture && ps->runs > 0 &&
                    worth_a_graph(plan) && capturable(plan);
    if (use_graph && ps->spans_gpus && ps->runs == 1)
        nd_logf(3, "cuda: plan %016llx spans GPUs: capturing it across them", (unsigned long long)plan->key);
    ps->runs++;
    size_t sig_len = 0;
    if (use_graph && build_signature(ps, plan, bound, &sig_len)) {
        graph_entry *g = NULL;
        const double t0 = nd_log_enabled(3) ? nd_log_clock_us() : 0;
        s = graph_for(be, ps, plan, bound, sig_len, &g);
        if (s == ND_OK) {
            g->last_used = cu->tick;
            const double t1 = t0 > 0 ? nd_log_clock_us() : 0;
            ND_NVTX_PUSH("nd graph replay");
            cudaError_t e = cudaGraphLaunch(g->exec, cu->stream);
            ND_NVTX_POP();
            if (t0 > 0)
                nd_logf(3, "cuda: plan %016llx (%d steps): graph found in %.1f us, launched in %.1f us",
                        (unsigned long long)plan->key, plan->n_steps, t1 - t0, nd_log_clock_us() - t1);
            if (e == cudaSuccess) return ND_OK;
            /* Refused at launch (nothing ran): drop the graph, go direct. */
            s = nd_cuda_fail(e, "cudaGraphLaunch");
            (void)cudaGetLastError();
            drop_graph(cu, g);
        }
        /* Capture refused (an operation CUDA cannot capture): this plan
         * runs directly from now on. */
        nd_logf(2, "cuda: plan %016llx is not captured as a graph: %s", (unsigned long long)plan->key,
                nd_last_error());
        ps->no_capture = 1;
        nd_clear_error();
    }
    s = issue_plan(be, ps, plan, bound, timed);
    if (s == ND_OK && timed) record_times(ps, plan, bound->step_names);
    return s;
}
