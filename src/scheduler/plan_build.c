/* The scheduler's passes on a plan-cache miss: dead-node removal, deciding
 * which values go to memory, fusion into kernels, merging of sibling
 * kernels, data movement and temporaries; then storages and streams
 * (stream_assign.c). */
#include "scheduler/plan_build.h"
#include "common/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/grow.h"
#include "common/memory.h"
#include "common/user_kernel.h"
#include "backends/step_kinds.h"
#include "scheduler/chunking.h"
#include "scheduler/kernel_rebase.h"
#include "scheduler/kernel_builder.h"
#include "scheduler/rank_lanes.h"
#include "scheduler/shared_values.h"
#include "scheduler/store_chains.h"
#include "scheduler/stream_assign.h"

/* Bounds compile time and keeps a long recorded loop from growing one
 * kernel without end: a value whose inlined body would exceed this many
 * operations goes to memory, and later iterations reuse the same kernels. */
#define ND_FUSION_COST_CAP 192
#define ND_MERGE_MAX_INSTS 512

static int is_elementwise(const nd_node *n) {
    return n->kind == ND_NODE_FULL || n->kind == ND_NODE_ARANGE || n->kind == ND_NODE_RANDOM ||
           n->kind == ND_NODE_MAP;
}

/* ------------------------------------------------------------------ steps */

typedef struct {
    nd_step *steps;
    int32_t n_steps, cap_steps;
    nd_plan_slot *slots;
    int32_t n_slots, cap_slots;
} plan_lists;

static nd_step *new_step(plan_lists *L, nd_step_kind kind, int32_t node) {
    if (!nd_grow((void **)&L->steps, (uint32_t *)&L->cap_steps, L->n_steps + 1, sizeof *L->steps)) return NULL;
    nd_step *s = &L->steps[L->n_steps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->first_node = s->last_node = node;
    return s;
}

static int32_t new_temp(plan_lists *L, size_t bytes, int32_t memory) {
    if (!nd_grow((void **)&L->slots, (uint32_t *)&L->cap_slots, L->n_slots + 1, sizeof *L->slots)) return -1;
    nd_plan_slot *s = &L->slots[L->n_slots];
    memset(s, 0, sizeof *s);
    s->role = ND_SLOT_TEMP;
    s->walk_index = -1;
    s->bytes = bytes ? bytes : 1;
    s->first_step = s->last_step = -1;
    s->memory = memory;
    return L->n_slots++;
}

/* --------------------------------------------------------- materialisation */

/* Size of the body that computing node i inline would take: the number of
 * distinct nodes (a body call: its template's entries) reachable through inlined inputs (a value used several
 * times is computed once: the kernel builder hash-conses), stopping as soon
 * as it exceeds `cap`. A bounded DFS, so a plan costs O(nodes * cap). */
static int32_t dag_cost(const nd_graph *g, const uint8_t *inl, uint32_t i, int32_t cap,
                        uint32_t *seen, uint32_t stamp, uint32_t *stack) {
    int32_t count = 0;
    uint32_t top = 0;
    stack[top++] = i;
    seen[i] = stamp;
    while (top > 0) {
        const nd_node *c = g->nodes[stack[--top]];
        /* a body call counts the ops it stands for, so that its calls are
         * cut where the ops recorded one by one would be */
        count += nd_node_is_body(c) ? c->u.body.body->weight : 1;
        if (count > cap) return count;
        for (int k = 0; k < c->n_inputs; k++) {
            const nd_ref *r = &c->inputs[k];
            if (!r->buf) continue;
            int64_t w = nd_buffer_writer_of(r->buf, r->version);
            if (w < 0 || !inl[w] || seen[w] == stamp) continue;
            seen[w] = stamp;
            stack[top++] = (uint32_t)w;
        }
    }
    return count;
}

/* An upper bound of dag_cost(i) from its inlined inputs' bounds (found
 * within the cap earlier: inputs come first; 0 none), or cap + 1 when an
 * inlined input has none. Going to memory only ever gets more common, so
 * a bound found once stays one. */
static int32_t inlined_body_bound(const nd_graph *g, const uint8_t *inl, const int32_t *body_bound, uint32_t i) {
    const nd_node *c = g->nodes[i];
    int64_t sum = nd_node_is_body(c) ? c->u.body.body->weight : 1, last = -1;
    for (int k = 0; k < c->n_inputs && sum <= ND_FUSION_COST_CAP; k++) {
        const nd_ref *r = &c->inputs[k];
        if (!r->buf) continue;
        int64_t w = nd_buffer_writer_of(r->buf, r->version);
        if (w < 0 || !inl[w] || w == last) continue; /* x * x reads one body */
        if (body_bound[w] == 0) return ND_FUSION_COST_CAP + 1;
        sum += body_bound[w];
        last = w;
    }
    return sum > ND_FUSION_COST_CAP ? ND_FUSION_COST_CAP + 1 : (int32_t)sum;
}

/* Node i's inlined body is over the cap: the largest inlined input's value
 * goes to memory (its body is within the cap: i is visited after it), not
 * i's. Cutting i kept every kernel that i's siblings needed computing that
 * input's whole body again: `x = x*0.99 + 0.01*sin(x)` reads x twice, so
 * both the mul and the sin of the iteration at the cap went to memory, two
 * kernels computing the same 192 nodes and a third joining them, every
 * 193 nodes of a recorded loop. Cut at x, it is one kernel per 192 nodes
 * and every kernel's body stays within the cap; the fixpoint asks again if
 * i is still over it. An input of one node gains nothing: then i goes. */
static void cut_over_cap(const nd_graph *g, uint8_t *inl, uint32_t i, uint32_t *seen,
                         uint32_t *stamp, uint32_t *stack) {
    const nd_node *c = g->nodes[i];
    int64_t best = -1;
    int32_t best_cost = 1;
    for (int k = 0; k < c->n_inputs; k++) {
        const nd_ref *r = &c->inputs[k];
        if (!r->buf) continue;
        int64_t w = nd_buffer_writer_of(r->buf, r->version);
        if (w < 0 || !inl[w]) continue;
        int32_t cost = dag_cost(g, inl, (uint32_t)w, ND_FUSION_COST_CAP, seen, ++*stamp, stack);
        if (cost > best_cost) best = w, best_cost = cost;
    }
    inl[best >= 0 ? (uint32_t)best : i] = 0;
}

/* Which values are computed inside their consumers (inline_ok) and which go
 * to memory. A fixpoint: going to memory only ever gets more common, so it
 * ends after at most n rounds (in practice one or two). */
static void decide_inlining(const nd_graph *g, const uint8_t *live, int fusion, int32_t memory, uint8_t *inl,
                            uint8_t *degraded) {
    uint32_t n = g->n_nodes;
    uint32_t *valid_until = nd_malloc(sizeof(uint32_t) * (n + 1));
    int64_t *exec_max = nd_malloc(sizeof(int64_t) * (n + 1));
    uint32_t *seen = nd_calloc(n + 1, sizeof(uint32_t));
    uint32_t *stack = nd_malloc(sizeof(uint32_t) * (n + 1));
    /* Per node whose inlined body was found within the cap, an upper bound
     * of its size (0: not found yet). It stays within, since inlining only
     * ever stops (a body only loses nodes), so later rounds skip its
     * search; the rounds after the first used to repeat every search (4000
     * nodes of a recorded loop planned in 11.5 ms, 3/4 of it in dag_cost).
     * A node's body is itself and the union of its inlined inputs' bodies,
     * so 1 + the sum of their bounds bounds it: where that is within the
     * cap (a chain or tree of ops, no value read twice) no search is needed
     * at all; a value read by several ops (x in x*0.99 + sin(x)) counts
     * once per reader in the sum, and there the search settles it. */
    int32_t *body_bound = nd_calloc(n + 1, sizeof(int32_t));
    uint32_t stamp = 0;
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *p = g->nodes[i];
        /* A value a handle can see, or one a later store modifies in place,
         * must exist in its own buffer. */
        inl[i] = fusion && live[i] && is_elementwise(p) && !nd_node_value_wanted(p) &&
                 p->out_version == p->out->version;
    }
    /* A gather reads its source at places only the index knows: the
     * source is in memory (writers come before readers: one pass). */
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *p = g->nodes[i];
        if (!live[i] || p->kind != ND_NODE_MAP || p->op != ND_GATHER_MAP_OP) continue;
        const nd_ref *src = &p->inputs[p->u.gather.n_axes];
        if (!src->buf) continue;
        int64_t w = nd_buffer_writer_of(src->buf, src->version);
        if (w >= 0) inl[w] = 0;
    }
    if (!valid_until || !exec_max || !seen || !stack || !body_bound) {
        memset(inl, 0, n); /* no fusion: right, and slow */
        *degraded = 1;
        goto done;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        /* Forward: how long every version an inlined value reads stays
         * current, and whether its inlined body stays within the cap. */
        for (uint32_t i = 0; i < n; i++) {
            if (!live[i]) continue;
            const nd_node *c = g->nodes[i];
            uint32_t until = UINT32_MAX;
            for (int k = 0; k < c->n_inputs; k++) {
                const nd_ref *r = &c->inputs[k];
                if (!r->buf) continue;
                int64_t w = nd_buffer_writer_of(r->buf, r->version);
                uint32_t u = w >= 0 && inl[w] ? valid_until[w]
                                              : nd_buffer_next_write_after(r->buf, r->version);
                if (u < until) until = u;
            }
            valid_until[i] = until;
            if (!inl[i] || body_bound[i] > 0) continue;
            int32_t bound = inlined_body_bound(g, inl, body_bound, i);
            if (bound > ND_FUSION_COST_CAP)
                bound = dag_cost(g, inl, i, ND_FUSION_COST_CAP, seen, ++stamp, stack);
            if (bound > ND_FUSION_COST_CAP) {
                cut_over_cap(g, inl, i, seen, &stamp, stack);
                changed = 1;
            } else {
                body_bound[i] = bound > 0 ? bound : 1; /* > 0: found */
            }
        }
        /* Backward: the latest position at which an inlined value is
         * computed (the consumer kernels it is inlined into). */
        for (uint32_t i = n; i-- > 0;) {
            exec_max[i] = inl[i] ? -1 : (int64_t)i;
        }
        for (uint32_t i = n; i-- > 0;) {
            if (!live[i]) continue;
            const nd_node *c = g->nodes[i];
            for (int k = 0; k < c->n_inputs; k++) {
                const nd_ref *r = &c->inputs[k];
                if (!r->buf) continue;
                int64_t w = nd_buffer_writer_of(r->buf, r->version);
                if (w >= 0 && inl[w] && exec_max[i] > exec_max[w]) exec_max[w] = exec_max[i];
            }
        }
        for (uint32_t i = 0; i < n; i++) {
            if (inl[i] && exec_max[i] >= 0 && (int64_t)valid_until[i] < exec_max[i]) {
                inl[i] = 0;
                changed = 1;
            }
        }
        /* Once the rest is settled: a value several kernels would compute
         * (a library call's operand, or at a cost) is written once. */
        if (!changed && fusion)
            changed = nd_materialise_shared_operands(g, live, inl, memory != ND_MEMORY_HOST, degraded);
    }
done:
    free(valid_until);
    free(exec_max);
    free(seen);
    free(stack);
    free(body_bound);
}

/* -------------------------------------------------------------- roots */

typedef struct {
    nd_build_ctx bctx;
    plan_lists L;
    int32_t memory;
    nd_kernel_builder *open; /* last kernel, still open for merging */
    int32_t open_step;
    int fusion;
    int32_t retry_node; /* a node whose inlining failed: plan again */
    nd_store_chains chains;
    int32_t *twin_slot; /* per walk buffer: the slot of its twin, or -1 */
    /* Per plan slot: written by a step that may fail on its own (a kernel
     * that gathers, a routine that reads its status back) or from one that
     * reads such a slot. A kernel that reads such a slot merges with no
     * other: a step whose input failed is failed whole (executor.c), which
     * must take nothing unrelated with it. A kernel that gathers merges
     * freely: a bad index fails only the values computed from it
     * (kernel_ir.h's nd_ir_fail). */
    uint8_t *may_fail;
    uint32_t cap_may_fail;
    int open_may_fail;
    int split_rows; /* the partition pass splits this plan over devices */
} planner;

typedef struct {
    planner *P;
    int reads; /* a read slot may fail */
    int mark;  /* pass 2: mark the written slots */
} fail_walk;

static void fail_use(void *arg, int32_t plan_slot, int write, int region) {
    (void)region;
    fail_walk *w = arg;
    planner *P = w->P;
    if (plan_slot < 0) return;
    if (!write) {
        w->reads |= (uint32_t)plan_slot < P->cap_may_fail && P->may_fail[plan_slot];
        return;
    }
    if (!w->mark) return;
    uint32_t cap = P->cap_may_fail;
    if (!nd_grow((void **)&P->may_fail, &cap, (uint32_t)plan_slot + 1, 1)) return; /* only merging is lost */
    memset(P->may_fail + P->cap_may_fail, 0, cap - P->cap_may_fail);
    P->cap_may_fail = cap;
    P->may_fail[plan_slot] = 1;
}

/* Whether kernel kb reads a slot that may fail; marks what it writes when
 * it does or when it gathers. */
static int kernel_may_fail(planner *P, nd_kernel_builder *kb) {
    fail_walk w = {P, 0, 0};
    nd_kb_slot_uses(kb, fail_use, &w);
    int reads = w.reads;
    if (!reads && !nd_kb_gathers(kb)) return 0;
    w.mark = 1;
    nd_kb_slot_uses(kb, fail_use, &w);
    return reads;
}

typedef struct {
    nd_step *step;
} access_record;

static void record_access(void *arg, int32_t plan_slot, int write, int region) {
    nd_step *s = ((access_record *)arg)->step;
    for (int32_t i = 0; i < s->kernel->n_slots; i++) {
        if (s->slots[i] != plan_slot) continue;
        s->slot_access[i] |= (uint8_t)(!write ? ND_ACCESS_READ
                                              : ND_ACCESS_WRITE | (region ? ND_ACCESS_REGION : 0));
    }
}

static nd_status close_open(planner *P) {
    if (!P->open) return ND_OK;
    nd_step *s = &P->L.steps[P->open_step];
    if (nd_kb_oom(P->open)) {
        /* A merge into it ran out of memory: it lacks a value or a store. */
        nd_kb_free(P->open);
        P->open = NULL;
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while planning");
    }
    s->kernel = nd_kb_finish(P->open, &s->slots, &s->params);
    if (s->kernel) s->slot_access = nd_calloc((size_t)s->kernel->n_slots + 1, 1);
    if (s->slot_access) {
        access_record rec = {s};
        nd_kb_slot_uses(P->open, record_access, &rec);
    }
    nd_kb_free(P->open);
    P->open = NULL;
    if (!s->kernel || !s->slot_access)
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while planning");
    return ND_OK;
}

/* Hands a built kernel to the step list, merged into the open kernel when
 * they can share one pass over memory. */
static nd_status add_kernel(planner *P, nd_kernel_builder *kb, int32_t node) {
    if (nd_kb_oom(kb)) {
        /* Planned without the value or store it lacks, the flush would
         * report success for a write it never made. */
        nd_kb_free(kb);
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while planning");
    }
    if (nd_kb_failed_node(kb) >= 0) {
        P->retry_node = nd_kb_failed_node(kb);
        nd_kb_free(kb);
        return ND_OK;
    }
    int fails = kernel_may_fail(P, kb);
    if (P->open && P->fusion && !fails && !P->open_may_fail && nd_kb_try_merge(P->open, kb, ND_MERGE_MAX_INSTS)) {
        P->L.steps[P->open_step].last_node = node;
        for (uint32_t i = 0; i < P->bctx.g->n_nodes; i++)
            if (P->bctx.node_step[i] == P->bctx.current_step) P->bctx.node_step[i] = P->open_step;
        nd_kb_free(kb);
        return ND_OK;
    }
    nd_status st = close_open(P);
    if (st != ND_OK) {
        nd_kb_free(kb);
        return st;
    }
    nd_step *s = new_step(&P->L, ND_STEP_KERNEL, node);
    if (!s) {
        nd_kb_free(kb);
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while planning");
    }
    s->stream = 0;
    int32_t idx = P->L.n_steps - 1;
    for (uint32_t i = 0; i < P->bctx.g->n_nodes; i++)
        if (P->bctx.node_step[i] == P->bctx.current_step) P->bctx.node_step[i] = idx;
    P->open = kb;
    P->open_step = idx;
    P->open_may_fail = fails;
    return ND_OK;
}

/* Kernels are built before their step index is known; nodes they inline are
 * tagged with this placeholder until add_kernel settles it. */
#define PENDING_STEP (INT32_MAX - 1)

static nd_kernel_builder *begin(planner *P, int ndim, const int64_t *shape) {
    P->bctx.current_step = PENDING_STEP;
    return nd_kb_new(&P->bctx, ndim, shape);
}

static nd_status plan_elementwise_root(planner *P, const nd_node *n) {
    nd_kernel_builder *kb = begin(P, n->ndim, n->shape);
    if (!kb) return ND_ERR_OOM;
    nd_xform t;
    nd_xform_identity(&t, n->ndim);
    P->bctx.node_step[n->index] = PENDING_STEP;
    int32_t v = nd_kb_node_value(kb, n, &t);
    int64_t strides[ND_MAX_DIMS];
    nd_contiguous_strides(n->ndim, n->shape, strides);
    if (v >= 0) nd_kb_store(kb, n->out->slot, (nd_dtype)n->dtype, 0, strides, v, 0);
    return add_kernel(P, kb, (int32_t)n->index);
}

static nd_status plan_reduce(planner *P, const nd_node *n) {
    const nd_ref *in = &n->inputs[0];
    nd_kernel_builder *kb = begin(P, in->ndim, in->shape);
    if (!kb) return ND_ERR_OOM;
    P->bctx.node_step[n->index] = PENDING_STEP;
    nd_xform t;
    nd_xform_identity(&t, in->ndim);
    int32_t v = nd_kb_ref_value(kb, n, 0, &t, (nd_dtype)n->cdtype);
    /* Output strides over the input's axes: 0 on reduced axes. */
    int64_t ostr[ND_MAX_DIMS], kept[ND_MAX_DIMS], out_strides[ND_MAX_DIMS] = {0};
    nd_contiguous_strides(n->ndim, n->shape, ostr);
    int o = 0;
    for (int k = 0; k < in->ndim; k++) kept[k] = (n->u.reduce.axes >> k) & 1u ? -1 : o++;
    for (int k = 0; k < in->ndim; k++) out_strides[k] = kept[k] >= 0 ? ostr[kept[k]] : 0;
    uint32_t axes = n->u.reduce.axes & ((1u << in->ndim) - 1u);
    if (v >= 0) {
        int64_t size = nd_shape_size(in->ndim, in->shape);
        if (axes == 0 && size > 0) {
            /* Nothing to reduce: the value itself (or index 0). */
            int32_t val = nd_reduce_is_arg((nd_reduce_kind)n->op)
                              ? nd_kb_zero_index(kb)
                              : v;
            nd_kb_store(kb, n->out->slot, (nd_dtype)n->dtype, 0, out_strides, val, 0);
        } else {
            nd_kb_reduce(kb, (nd_reduce_kind)n->op, axes, v, n->out->slot, (nd_dtype)n->dtype,
                         out_strides);
        }
    }
    return add_kernel(P, kb, (int32_t)n->index);
}

/* Store n's kernel: its right-hand side written into its region of the slot
 * that holds the version it makes; *value < 0 if that failed. */
static nd_kernel_builder *store_kernel(planner *P, const nd_node *n, int32_t *value) {
    nd_kernel_builder *kb = begin(P, n->ndim, n->shape);
    *value = -2;
    if (!kb) return NULL;
    P->bctx.node_step[n->index] = PENDING_STEP;
    const nd_store_chains *C = &P->chains;
    if (C->source && C->source[n->index] >= 0) {
        P->bctx.prev_buf = n->out;
        P->bctx.prev_version = n->out_version - 1;
        P->bctx.prev_slot = C->source[n->index];
    }
    nd_xform t;
    nd_xform_identity(&t, n->ndim);
    int32_t v = nd_kb_ref_value(kb, n, 0, &t, (nd_dtype)n->dtype);
    P->bctx.prev_buf = NULL;
    int32_t slot = C->home && C->home[n->index] >= 0 ? C->home[n->index] : n->out->slot;
    if (v >= 0) nd_kb_store(kb, slot, (nd_dtype)n->dtype, n->u.store.offset, n->u.store.strides, v, 1);
    *value = v;
    return kb;
}

/* Before the first store of a chain: its temporary gets the buffer's
 * contents wherever the chain needs them, the whole buffer or only the part
 * outside the chain's region, one kernel per part (store_chains.c). */
static nd_status plan_chain_fill(planner *P, const nd_node *n, int32_t temp) {
    const nd_buffer *u = n->out;
    nd_chain_fill_part parts[ND_CHAIN_FILL_MAX_PARTS];
    int n_parts = nd_store_chain_fill_parts(&P->chains, n, parts);
    int64_t count = (int64_t)(u->nbytes / nd_dtype_size(u->dtype));
    for (int i = 0; i < n_parts; i++) {
        const nd_chain_fill_part *p = &parts[i];
        nd_kernel_builder *kb = begin(P, p->ndim, p->shape);
        if (!kb) return ND_ERR_OOM;
        int32_t v = nd_kb_load(kb, u->slot, u->dtype, p->offset, p->strides);
        /* a part writes some of the temporary; the rest keeps what it has */
        int region = nd_shape_size(p->ndim, p->shape) != count;
        nd_kb_store(kb, temp, u->dtype, p->offset, p->strides, v, region);
        nd_status st = add_kernel(P, kb, (int32_t)n->index);
        if (st != ND_OK || P->retry_node >= 0) return st;
    }
    return ND_OK;
}

static nd_status plan_store(planner *P, const nd_node *n) {
    if (P->chains.fill && P->chains.fill[n->index] >= 0) {
        nd_status st = plan_chain_fill(P, n, P->chains.fill[n->index]);
        if (st != ND_OK || P->retry_node >= 0) return st;
    }
    int32_t v;
    nd_kernel_builder *kb = store_kernel(P, n, &v);
    if (!kb) return ND_ERR_OOM;
    if (v < 0 || !nd_kb_store_hazard(kb)) return add_kernel(P, kb, (int32_t)n->index);

    /* The right-hand side reads the region it writes through another map:
     * compute it whole into a temporary first, then copy it in. */
    size_t bytes = (size_t)nd_shape_size(n->ndim, n->shape) * nd_dtype_size((nd_dtype)n->dtype);
    int32_t temp = new_temp(&P->L, bytes, P->memory);
    if (temp < 0) {
        nd_kb_free(kb);
        return ND_ERR_OOM;
    }
    nd_ir_access former;
    nd_kb_retarget_store(kb, temp, &former);
    nd_status st = add_kernel(P, kb, (int32_t)n->index);
    if (st != ND_OK || P->retry_node >= 0) return st;
    nd_kernel_builder *cp = begin(P, n->ndim, n->shape);
    if (!cp) return ND_ERR_OOM;
    int64_t strides[ND_MAX_DIMS];
    nd_contiguous_strides(n->ndim, n->shape, strides);
    int32_t tv = nd_kb_load(cp, temp, (nd_dtype)n->dtype, 0, strides);
    nd_kb_store(cp, former.slot, (nd_dtype)n->dtype, former.offset, former.strides, tv, 1);
    return add_kernel(P, cp, (int32_t)n->index);
}

static int32_t chain_temp(void *arg, size_t bytes) {
    planner *P = arg;
    return new_temp(&P->L, bytes, P->memory);
}

/* Buffer u's twin: a slot bound to memory the buffer owns (executor.c),
 * shared by all of u's chains in the flush. */
static int32_t chain_twin(void *arg, const nd_buffer *u) {
    planner *P = arg;
    uint32_t nb = P->bctx.walk->n_buffers;
    if (!P->twin_slot) {
        P->twin_slot = nd_malloc(sizeof(int32_t) * ((size_t)nb + 1));
        if (!P->twin_slot) return -1;
        memset(P->twin_slot, 0xff, sizeof(int32_t) * ((size_t)nb + 1));
    }
    if (P->twin_slot[u->slot] >= 0) return P->twin_slot[u->slot];
    int32_t slot = new_temp(&P->L, u->nbytes, P->memory);
    if (slot < 0) return -1;
    P->L.slots[slot].role = ND_SLOT_TWIN;
    P->L.slots[slot].walk_index = u->slot;
    P->L.slots[slot].storage = -1;
    return P->twin_slot[u->slot] = slot;
}

/* The chains that end in a twin, for the plan (nd_plan's twin_*): in node
 * order, so that of two chains over one buffer the later one's mark is
 * applied last. */
static nd_status collect_twins(const planner *P, nd_plan *plan) {
    const nd_store_chains *C = &P->chains;
    uint32_t n = P->bctx.g->n_nodes;
    int32_t count = 0;
    for (uint32_t i = 0; C->fill && i < n; i++)
        count += C->fill[i] >= 0 && P->L.slots[C->fill[i]].role == ND_SLOT_TWIN;
    if (count == 0) return ND_OK;
    plan->twin_walk_index = nd_malloc(sizeof(int32_t) * 2 * (size_t)count);
    if (!plan->twin_walk_index) return ND_ERR_OOM;
    plan->twin_last_store = plan->twin_walk_index + count;
    for (uint32_t i = 0; i < n; i++) {
        if (C->fill[i] < 0 || P->L.slots[C->fill[i]].role != ND_SLOT_TWIN) continue;
        plan->twin_walk_index[plan->n_twins] = P->L.slots[C->fill[i]].walk_index;
        plan->twin_last_store[plan->n_twins++] = C->last[i];
    }
    return ND_OK;
}

/* Lays out the chains of hazardous stores (store_chains.h). Which stores
 * are hazardous is known only from their kernels' loads, so each candidate
 * store's kernel is built once here without the chains and dropped. */
static nd_status find_store_chains(planner *P, const uint8_t *live) {
    const nd_graph *g = P->bctx.g;
    if (!P->fusion) return ND_OK; /* ND_FUSION=0 keeps the plainest plan */
    uint8_t *hazard = nd_calloc((size_t)g->n_nodes + 1, 1);
    if (!hazard) return ND_ERR_OOM;
    int any = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (!nd_store_chain_candidate(g, live, i)) continue;
        int32_t v;
        nd_kernel_builder *kb = store_kernel(P, g->nodes[i], &v);
        if (!kb) {
            free(hazard);
            return ND_ERR_OOM;
        }
        hazard[i] = v >= 0 && nd_kb_store_hazard(kb);
        any |= hazard[i];
        int oom = nd_kb_oom(kb);
        nd_kb_free(kb);
        if (oom) {
            free(hazard);
            return ND_ERR_OOM;
        }
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) P->bctx.node_step[i] = -1;
    const nd_chain_slots slots = {chain_temp, chain_twin, P, P->memory, P->split_rows};
    nd_status st = any ? nd_store_chains_plan(g, hazard, &slots, &P->chains) : ND_OK;
    free(hazard);
    P->bctx.version_slot = P->chains.home;
    return st;
}

/* A library call's or user kernel's operand as it needs it: in memory, in
 * `dtype`. Anything else is first written to a contiguous temporary by a
 * kernel that also computes an inlined producer. */
static nd_status operand_in_memory(planner *P, const nd_node *n, int k, nd_dtype dtype, int32_t *slot,
                                   int64_t *offset, int64_t *strides) {
    const nd_ref *r = &n->inputs[k];
    int64_t w = r->buf ? nd_buffer_writer_of(r->buf, r->version) : -1;
    int direct = r->buf && r->dtype == dtype && !(w >= 0 && P->bctx.inline_ok[w]);
    if (direct) {
        *slot = nd_build_read_slot(&P->bctx, r);
        *offset = r->offset;
        for (int j = 0; j < r->ndim; j++) strides[j] = r->strides[j];
        return ND_OK;
    }
    size_t bytes = (size_t)nd_shape_size(r->ndim, r->shape) * nd_dtype_size(dtype);
    int32_t temp = new_temp(&P->L, bytes, P->memory);
    if (temp < 0) return ND_ERR_OOM;
    nd_kernel_builder *kb = begin(P, r->ndim, r->shape);
    if (!kb) return ND_ERR_OOM;
    nd_xform t;
    nd_xform_identity(&t, r->ndim);
    int32_t v = nd_kb_ref_value(kb, n, k, &t, dtype);
    nd_contiguous_strides(r->ndim, r->shape, strides);
    if (v >= 0) nd_kb_store(kb, temp, dtype, 0, strides, v, 0);
    *slot = temp;
    *offset = 0;
    return add_kernel(P, kb, (int32_t)n->index);
}

static nd_status plan_matmul(planner *P, const nd_node *n) {
    nd_matmul_desc d;
    memset(&d, 0, sizeof d);
    int64_t as[ND_MAX_DIMS] = {0}, bs[ND_MAX_DIMS] = {0}, cs[ND_MAX_DIMS];
    nd_status st = operand_in_memory(P, n, 0, (nd_dtype)n->cdtype, &d.a_slot, &d.a_offset, as);
    if (st == ND_OK && P->retry_node < 0)
        st = operand_in_memory(P, n, 1, (nd_dtype)n->cdtype, &d.b_slot, &d.b_offset, bs);
    if (st != ND_OK || P->retry_node >= 0) return st;
    st = close_open(P);
    if (st != ND_OK) return st;
    int nd = n->ndim;
    nd_contiguous_strides(nd, n->shape, cs);
    d.dtype = (nd_dtype)n->cdtype;
    d.m = n->shape[nd - 2];
    d.n = n->shape[nd - 1];
    d.k = n->inputs[0].shape[nd - 1];
    d.batch_ndim = nd - 2;
    for (int j = 0; j < nd - 2; j++) {
        d.batch_shape[j] = n->shape[j];
        d.a_batch[j] = as[j];
        d.b_batch[j] = bs[j];
        d.c_batch[j] = cs[j];
    }
    d.a_rs = as[nd - 2];
    d.a_cs = as[nd - 1];
    d.b_rs = bs[nd - 2];
    d.b_cs = bs[nd - 1];
    d.c_rs = cs[nd - 2];
    d.c_cs = cs[nd - 1];
    d.c_slot = n->out->slot;
    d.c_offset = 0;
    nd_step *s = new_step(&P->L, ND_STEP_MATMUL, (int32_t)n->index);
    if (!s) return ND_ERR_OOM;
    s->matmul = d;
    P->bctx.node_step[n->index] = P->L.n_steps - 1;
    return ND_OK;
}

/* A user kernel call: its nodes (n, the first, and the next count - 1) are
 * one step that reads each input where it lives (a view as it is; an
 * inlined or constant one is computed into a contiguous temporary first)
 * and writes each output's view of its buffer. */
static nd_status plan_user(planner *P, const nd_node *n) {
    const nd_graph *g = P->bctx.g;
    int32_t n_in = n->u.user.n_in, n_out = n->u.user.count;
    nd_user_arg_desc *args = nd_calloc((size_t)(n_in + n_out), sizeof *args);
    if (!args) return ND_ERR_OOM;
    nd_status st = ND_OK;
    for (int32_t k = 0; k < n_in && st == ND_OK && P->retry_node < 0; k++) {
        const nd_ref *r = &n->inputs[k];
        nd_user_arg_desc *a = &args[k];
        st = operand_in_memory(P, n, k, (nd_dtype)r->dtype, &a->slot, &a->offset, a->strides);
        a->access = ND_ACCESS_READ;
        a->dtype = r->dtype;
        a->ndim = r->ndim;
        for (int d = 0; d < r->ndim; d++) a->shape[d] = r->shape[d];
    }
    if (st == ND_OK && P->retry_node < 0) st = close_open(P);
    if (st != ND_OK || P->retry_node >= 0) {
        free(args);
        return st;
    }
    for (int32_t j = 0; j < n_out; j++) {
        const nd_node *o = g->nodes[n->index + (uint32_t)j];
        nd_user_arg_desc *a = &args[n_in + j];
        a->slot = o->out->slot;
        a->access = (uint8_t)(ND_ACCESS_WRITE | (o->u.user.in_place ? ND_ACCESS_REGION : 0));
        a->dtype = o->dtype;
        a->ndim = o->ndim;
        a->offset = o->u.user.offset;
        for (int d = 0; d < o->ndim; d++) {
            a->shape[d] = o->shape[d];
            a->strides[d] = o->u.user.strides[d];
        }
    }
    nd_step *s = new_step(&P->L, ND_STEP_USER, (int32_t)n->index);
    if (!s) {
        free(args);
        return ND_ERR_OOM;
    }
    s->last_node = (int32_t)n->index + n_out - 1;
    s->user = (nd_user_desc){n->u.user.kernel, n_in, n_out, args, ND_LIB_NONE, {{{0}}}};
    if (n->u.user.kernel) {
        nd_user_kernel_ref(n->u.user.kernel);
    } else {
        s->user.lib = n->op;
        memcpy(s->user.lib_args.v, n->params, sizeof s->user.lib_args.v);
    }
    for (int32_t j = 0; j < n_out; j++) P->bctx.node_step[n->index + (uint32_t)j] = P->L.n_steps - 1;
    /* A routine that reads its status back, or files a bad index in its
     * fail record, may fail on its own. */
    fail_walk w = {P, s->user.lib != ND_LIB_NONE && (nd_lib_reads_back(s->user.lib) || nd_lib_files_fails(s->user.lib)),
                   1};
    for (int32_t j = 0; j < n_in; j++) fail_use(&w, args[j].slot, 0, 0);
    if (w.reads)
        for (int32_t j = 0; j < n_out; j++) fail_use(&w, args[n_in + j].slot, 1, 0);
    return ND_OK;
}

/* -------------------------------------------------- data movement, lifetimes */

typedef struct {
    const nd_flush_walk *walk;
    nd_plan_slot *slots;
    int32_t memory;
    uint8_t *valid; /* per external slot: current value in the plan's memory */
    nd_step *out;
    int32_t n_out, cap_out;
} movement;

/* Before a step that needs slot's value in the plan's memory: a copy step
 * from a memory that holds it, unless it is already there. */
static int use_slot(movement *M, int32_t slot, uint8_t access) {
    nd_plan_slot *s = &M->slots[slot];
    if (s->role != ND_SLOT_EXTERNAL) return 1;
    if ((access & (ND_ACCESS_READ | ND_ACCESS_REGION)) && !M->valid[slot]) {
        const nd_buffer *b = M->walk->buffers[slot];
        int src = -1;
        for (int m = 0; m < ND_MAX_MEMORIES && src < 0; m++)
            if (b->valid & (1u << m)) src = m;
        if (src >= 0) {
            if (!nd_grow((void **)&M->out, (uint32_t *)&M->cap_out, M->n_out + 1, sizeof *M->out)) return 0;
            nd_step *c = &M->out[M->n_out++];
            memset(c, 0, sizeof *c);
            c->kind = ND_STEP_COPY;
            c->copy.src_slot = c->copy.dst_slot = slot;
            c->copy.src_memory = src;
            c->copy.dst_memory = M->memory;
            c->copy.bytes = b->nbytes;
            c->first_node = c->last_node = -1;
            s->copied_to |= 1u << M->memory;
        }
        M->valid[slot] = 1;
    }
    if (access & ND_ACCESS_WRITE) {
        s->written = 1;
        M->valid[slot] = 1;
    }
    return 1;
}

static nd_status insert_movement(planner *P, const nd_flush_walk *walk) {
    movement M = {.walk = walk, .slots = P->L.slots, .memory = P->memory};
    M.valid = nd_calloc((size_t)walk->n_buffers + 1, 1);
    int32_t n_old = P->L.n_steps, *moved = nd_malloc(sizeof(int32_t) * ((size_t)n_old + 1));
    if (!M.valid || !moved) {
        free(M.valid);
        free(moved);
        return ND_ERR_OOM;
    }
    for (uint32_t b = 0; b < walk->n_buffers; b++) {
        const nd_buffer *buf = walk->buffers[b];
        /* Never written anywhere (nd_empty): any memory will do. Pieces
         * on the devices that hold the value (a split array read on the
         * host since) are read where they are, or gathered into the whole
         * array by the partition pass: not copied whole from the host. */
        M.valid[b] = (buf->valid & (1u << P->memory)) || buf->valid == 0 ||
                     (P->split_rows && nd_buffer_pieces_at(buf));
    }
    int ok = 1;
    for (int32_t s = 0; s < P->L.n_steps && ok; s++) {
        nd_step *st = &P->L.steps[s];
        /* (No copies yet: this pass inserts them.) */
        for (int32_t i = 0, n = nd_step_is_copy(st) ? 0 : nd_step_n_accesses(st); i < n && ok; i++) {
            nd_step_access a = nd_step_access_at(st, i, P->memory);
            ok = use_slot(&M, a.slot, a.mode);
        }
        if (ok && !nd_grow((void **)&M.out, (uint32_t *)&M.cap_out, M.n_out + 1, sizeof *M.out)) ok = 0;
        if (ok) M.out[M.n_out++] = *st;
        moved[s] = M.n_out - 1;
    }
    free(M.valid);
    if (!ok) {
        free(M.out);
        free(moved);
        return ND_ERR_OOM;
    }
    /* Nodes name their step in the new numbering (dumps, profiles). */
    for (uint32_t i = 0; i < P->bctx.g->n_nodes; i++) {
        int32_t *ns = &P->bctx.node_step[i];
        if (*ns >= 0 && *ns < n_old) *ns = moved[*ns];
    }
    free(moved);
    free(P->L.steps);
    P->L.steps = M.out;
    P->L.n_steps = M.n_out;
    P->L.cap_steps = M.cap_out;
    /* Temporaries' lifetimes come from the final step list
     * (nd_plan_assign_storage). */
    return ND_OK;
}

/* ------------------------------------------------------------------ entry */

void nd_plan_free(nd_plan *p) {
    if (!p) return;
    for (int32_t s = 0; s < p->n_steps; s++) nd_step_free(&p->steps[s]);
    if (p->backend_cache && p->backend_cache_free) p->backend_cache_free(p->backend_cache);
    free(p->steps);
    free(p->slots);
    free(p->storage_bytes);
    free(p->storage_device);
    free(p->twin_walk_index); /* twin_last_store is the same block */
    free(p->pieces);
    free(p->node_step);
    free(p->node_materialised);
    free(p->view_base);
    nd_rank_lanes_free(p->rank_lanes);
    free(p);
}

/* nd_plan.offset_generic: every step a kernel of one device over the
 * flush's buffers and temporaries (no copy, library call, matmul, twin or
 * piece), so every address it uses is a view's, and a view that starts
 * elsewhere moves it by the same bytes. */
static int offset_generic(const nd_plan *p) {
    if (p->n_twins || p->n_pieces) return 0;
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].kind != ND_STEP_KERNEL || p->steps[i].part != ND_PART_NONE) return 0;
    for (int32_t i = 0; i < p->n_slots; i++)
        if (p->slots[i].role != ND_SLOT_EXTERNAL && p->slots[i].role != ND_SLOT_TEMP) return 0;
    return 1;
}

nd_status nd_plan_set_bases(nd_plan *p, const nd_flush_walk *w) {
    p->relative_key = w->relative_key;
    p->offset_generic = (uint8_t)offset_generic(p);
    free(p->view_base);
    p->view_base = NULL;
    if (!p->offset_generic) return ND_OK; /* found by its key only: its bases are never read */
    p->view_base = nd_malloc(sizeof(int64_t) * (size_t)(w->n_buffers + 1));
    if (!p->view_base) return ND_ERR_OOM;
    if (w->n_buffers) memcpy(p->view_base, w->view_base, sizeof(int64_t) * (size_t)w->n_buffers);
    return ND_OK;
}

static void free_lists(plan_lists *L) {
    for (int32_t s = 0; s < L->n_steps; s++) nd_step_free(&L->steps[s]);
    free(L->steps);
    free(L->slots);
    memset(L, 0, sizeof *L);
}

/* ND_LOG=3: one line per step and the slots it reads and writes, so kernel
 * counts and where each value lives can be read off a run. */
static void log_step(const nd_plan *plan, int32_t s) {
    const nd_step *st = &plan->steps[s];
    char text[320];
    nd_step_describe(st, text, sizeof text);
    nd_logf(3, "  step %d (stream %d): %s", s, st->stream, text);
}

/* Elements per row of buffer b as node `writer` writes it: the node's
 * shape after its first axis, when it has two axes or more and writes
 * every byte of b (a region store's shape is not the buffer's); else 0. */
static int64_t natural_row(const nd_graph *g, const nd_buffer *b, int32_t writer) {
    if (writer < 0) return 0;
    const nd_node *nd = g->nodes[writer];
    if (nd->kind == ND_NODE_STORE || nd->ndim < 2 || nd->out != b) return 0;
    int64_t row = 1, count = nd->shape[0];
    for (int d = 1; d < nd->ndim; d++) row *= nd->shape[d], count *= nd->shape[d];
    return (size_t)count * nd_dtype_size((nd_dtype)nd->dtype) == b->nbytes ? row : 0;
}

nd_status nd_plan_build(const nd_graph *g, const nd_flush_walk *walk, int fusion, int32_t memory,
                        size_t chunk_bytes, const nd_split_config *split, nd_plan **out) {
    *out = NULL;
    uint32_t n = g->n_nodes;
    uint8_t *live = nd_malloc(n + 1), *inl = nd_malloc(n + 1), *forced = nd_calloc(n + 1, 1);
    int32_t *node_step = nd_malloc(sizeof(int32_t) * (n + 1));
    nd_plan *plan = nd_calloc(1, sizeof *plan);
    nd_status st = ND_OK;
    if (!live || !inl || !forced || !node_step || !plan) {
        st = nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while planning");
        goto fail;
    }
    nd_graph_liveness(g, live);
    for (;;) {
        decide_inlining(g, live, fusion, memory, inl, &plan->degraded);
        for (uint32_t i = 0; i < n; i++)
            if (forced[i]) inl[i] = 0;
        for (uint32_t i = 0; i < n; i++) node_step[i] = -1;
        planner P;
        memset(&P, 0, sizeof P);
        P.bctx.g = g;
        P.bctx.walk = walk;
        P.bctx.inline_ok = inl;
        P.bctx.node_step = node_step;
        P.memory = memory;
        P.fusion = fusion;
        P.retry_node = -1;
        P.split_rows = split && split->n_devices > 1;
        /* External slots first, numbered as the walk numbered the buffers. */
        for (uint32_t b = 0; b < walk->n_buffers && st == ND_OK; b++) {
            if (!nd_grow((void **)&P.L.slots, (uint32_t *)&P.L.cap_slots, P.L.n_slots + 1, sizeof *P.L.slots)) {
                st = ND_ERR_OOM;
                break;
            }
            nd_plan_slot *s = &P.L.slots[P.L.n_slots++];
            memset(s, 0, sizeof *s);
            s->role = ND_SLOT_EXTERNAL;
            s->walk_index = (int32_t)b;
            const nd_buffer *wb = walk->buffers[b];
            s->last_writer = wb->n_writers ? (int32_t)wb->writers[wb->n_writers - 1] : -1;
            s->natural_row = natural_row(g, wb, s->last_writer);
            s->memory = memory;
            s->first_step = s->last_step = -1;
        }
        if (st == ND_OK) st = find_store_chains(&P, live);
        for (uint32_t i = 0; i < n && st == ND_OK && P.retry_node < 0; i++) {
            if (!live[i] || inl[i]) continue;
            const nd_node *nd = g->nodes[i];
            switch (nd->kind) {
            case ND_NODE_REDUCE: st = plan_reduce(&P, nd); break;
            case ND_NODE_STORE: st = plan_store(&P, nd); break;
            case ND_NODE_MATMUL: st = plan_matmul(&P, nd); break;
            case ND_NODE_USER: st = nd->u.user.index == 0 ? plan_user(&P, nd) : ND_OK; break;
            default: st = plan_elementwise_root(&P, nd); break;
            }
        }
        if (st == ND_OK && P.retry_node < 0) st = close_open(&P);
        else if (P.open) {
            nd_kb_free(P.open);
            P.open = NULL;
        }
        if (st == ND_OK && P.retry_node < 0) st = collect_twins(&P, plan);
        nd_store_chains_free(&P.chains);
        free(P.twin_slot);
        free(P.may_fail);
        if (st == ND_OK && P.retry_node >= 0) {
            /* A view could not be composed with its producer: give that
             * producer its own buffer and plan again. */
            forced[P.retry_node] = 1;
            free_lists(&P.L);
            continue;
        }
        if (st == ND_OK) st = insert_movement(&P, walk);
        if (st != ND_OK) {
            free_lists(&P.L);
            free(plan->twin_walk_index);
            if (st == ND_ERR_OOM) nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while planning");
            goto fail;
        }
        plan->key = walk->key;
        plan->steps = P.L.steps;
        plan->n_steps = P.L.n_steps;
        plan->slots = P.L.slots;
        plan->n_slots = P.L.n_slots;
        plan->memory = memory;
        plan->n_nodes = (int32_t)n;
        plan->node_step = node_step;
        plan->node_materialised = inl; /* reused below as the flag array */
        for (uint32_t i = 0; i < n; i++) inl[i] = live[i] && !inl[i] ? 1 : 0;
        node_step = NULL;
        inl = NULL;
        break;
    }
    free(live);
    free(forced);
    st = nd_plan_chunk(plan, walk, chunk_bytes);
    if (st == ND_OK) st = nd_plan_partition(plan, walk, split);
    if (st == ND_OK) st = nd_plan_assign_storage(plan);
    if (st == ND_OK) st = nd_plan_assign_streams(plan);
    if (st == ND_OK) st = nd_plan_rebase_kernels(plan);
    if (st != ND_OK) {
        nd_plan_free(plan);
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while planning");
    }
    if (nd_log_enabled(3)) {
        int32_t temps = 0;
        size_t bytes = 0;
        for (int32_t i = 0; i < plan->n_slots; i++) temps += plan->slots[i].role == ND_SLOT_TEMP;
        for (int32_t i = 0; i < plan->n_storages; i++) bytes += plan->storage_bytes[i];
        nd_logf(3, "plan %016llx: %d steps on %d streams, %d temporaries in %d storages (%zu bytes)",
                (unsigned long long)plan->key, plan->n_steps, plan->n_streams_used, temps, plan->n_storages, bytes);
        for (int32_t i = 0; i < plan->n_slots && i < 64; i++)
            nd_logf(3, "  slot %d: %s%s, %zu bytes, storage %d", i,
                    plan->slots[i].role == ND_SLOT_TEMP   ? "temporary"
                    : plan->slots[i].role == ND_SLOT_TWIN ? "twin"
                    : plan->slots[i].role == ND_SLOT_PIECE ? "piece"
                                                          : "buffer",
                    plan->slots[i].used ? "" : " (unused)",
                    plan->slots[i].role != ND_SLOT_EXTERNAL ? plan->slots[i].bytes
                                                        : walk->buffers[plan->slots[i].walk_index]->nbytes,
                    plan->slots[i].storage);
        for (int32_t s = 0; s < plan->n_steps; s++) log_step(plan, s);
    }
    *out = plan;
    return ND_OK;
fail:
    free(live);
    free(inl);
    free(forced);
    free(node_step);
    free(plan);
    return st;
}
