/* The executor: binds a plan's slots to memory, runs its steps in order on
 * the backend, and marks in each buffer where its value now lives (or which
 * error kept it from being produced). Temporaries are taken from a small
 * pool that survives between flushes, so a repeated loop body allocates
 * nothing in the steady state. */
#include "scheduler/executor.h"
#include "common/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/grow.h"
#include "common/names.h"
#include "common/profile.h"
#include "backends/step_kinds.h"
#include "scheduler/executor_ranks.h"
#include "scheduler/rank_lanes.h"

#define ND_TEMP_POOL_MAX 32

typedef struct {
    void *ptr;
    size_t bytes;
    int32_t memory;
} pooled_block;

/* What the executor keeps between flushes: cached temporaries, and the
 * per-slot binding arrays (a flush of thousands of nodes has thousands of
 * slots; allocating and clearing them anew each flush showed up). */
struct nd_temp_pool {
    pooled_block free_blocks[ND_TEMP_POOL_MAX];
    int32_t n_free;
    void **ptrs;
    uint32_t cap_ptrs;
    size_t *bytes;
    uint32_t cap_bytes;
    int32_t *temps;
    uint32_t cap_temps;
    nd_failure **poison;
    uint32_t cap_poison;
    int32_t *held;
    uint32_t cap_held;
    const char **step_names;
    uint32_t cap_step_names;
};

struct nd_returned_block {
    pooled_block block;
    struct nd_returned_block *next;
};

static void temp_give(nd_scheduler_ctx *ctx, int32_t memory, size_t bytes, void *ptr);

void nd_temp_pool_return(nd_scheduler_ctx *ctx, int32_t memory, void *ptr, size_t bytes) {
    struct nd_returned_block *r = nd_malloc(sizeof *r);
    if (!r) {
        ctx->backend->release(ctx->backend, memory, ptr, bytes);
        return;
    }
    r->block = (pooled_block){ptr, bytes, memory};
    r->next = __atomic_load_n(&ctx->returned, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&ctx->returned, &r->next, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
}

/* Moves the returned blocks into the pool (all of them at once: no ABA). */
static void take_returned(nd_scheduler_ctx *ctx) {
    if (!__atomic_load_n(&ctx->returned, __ATOMIC_RELAXED)) return;
    struct nd_returned_block *r = __atomic_exchange_n(&ctx->returned, NULL, __ATOMIC_ACQUIRE);
    while (r) {
        struct nd_returned_block *next = r->next;
        temp_give(ctx, r->block.memory, r->block.bytes, r->block.ptr);
        free(r);
        r = next;
    }
}

/* backend->alloc; out of memory, the pool's cached temporaries go back to
 * the backend and it is tried once more (DESIGN.md: out of memory first
 * releases cached memory and retries). */
static nd_status backend_alloc(nd_backend *be, int32_t memory, int32_t device, size_t bytes, void **out) {
    return device >= 0 && be->alloc_piece ? be->alloc_piece(be, memory, device, bytes, out)
                                          : be->alloc(be, memory, bytes, out);
}

/* device >= 0: a split array's piece of that device (backend.h's
 * alloc_piece where the backend has one), retried as any block. */
static nd_status alloc_or_release_and_retry(nd_scheduler_ctx *ctx, int32_t memory, int32_t device, size_t bytes,
                                            void **out) {
    nd_backend *be = ctx->backend;
    nd_status st = backend_alloc(be, memory, device, bytes, out);
    if (st != ND_ERR_OOM) return st;
    take_returned(ctx);
    struct nd_temp_pool *tp = ctx->temps;
    if (!tp || tp->n_free == 0) return st;
    size_t cached = 0;
    for (int32_t i = 0; i < tp->n_free; i++) {
        cached += tp->free_blocks[i].bytes;
        be->release(be, tp->free_blocks[i].memory, tp->free_blocks[i].ptr, tp->free_blocks[i].bytes);
    }
    tp->n_free = 0;
    nd_logf(2, "executor: out of memory allocating %zu bytes; released %zu bytes of cached temporaries and "
            "retrying", bytes, cached);
    return backend_alloc(be, memory, device, bytes, out);
}

/* A block of at least `bytes`, and its size in *got: a pooled block may be
 * larger, and goes back with its own size (given back with the size asked,
 * it would be kept as smaller than it is: unfit for the next ask of its
 * real size, and released with a size the backend's accounting of
 * device memory never added). */
static nd_status temp_take(nd_scheduler_ctx *ctx, int32_t memory, size_t bytes, void **out, size_t *got) {
    take_returned(ctx);
    struct nd_temp_pool *tp = ctx->temps;
    if (tp) {
        /* Smallest cached block that fits, so big blocks stay for big asks. */
        int32_t best = -1;
        for (int32_t i = 0; i < tp->n_free; i++) {
            pooled_block *b = &tp->free_blocks[i];
            /* Ties go to the lower address, so a repeated plan gets the
             * same blocks (and its captured graph needs no update). */
            if (b->memory == memory && b->bytes >= bytes &&
                (best < 0 || b->bytes < tp->free_blocks[best].bytes ||
                 (b->bytes == tp->free_blocks[best].bytes &&
                  (uintptr_t)b->ptr < (uintptr_t)tp->free_blocks[best].ptr)))
                best = i;
        }
        if (best >= 0 && tp->free_blocks[best].bytes <= 2 * bytes + 4096) {
            *out = tp->free_blocks[best].ptr;
            *got = tp->free_blocks[best].bytes;
            tp->free_blocks[best] = tp->free_blocks[--tp->n_free];
            return ND_OK;
        }
    }
    const double t0 = nd_log_enabled(3) ? nd_log_clock_us() : 0;
    nd_status st = alloc_or_release_and_retry(ctx, memory, -1, bytes, out);
    if (st != ND_OK) return st;
    *got = bytes;
    if (t0 > 0)
        nd_logf(3, "executor: no cached temporary of %zu bytes: allocated in %.1f us", bytes, nd_log_clock_us() - t0);
    if (ctx->stats) ctx->stats->temp_allocations++;
    return ND_OK;
}

static struct nd_temp_pool *pool_of(nd_scheduler_ctx *ctx) {
    if (!ctx->temps) ctx->temps = nd_calloc(1, sizeof *ctx->temps);
    return ctx->temps;
}

static void temp_give(nd_scheduler_ctx *ctx, int32_t memory, size_t bytes, void *ptr) {
    struct nd_temp_pool *tp = pool_of(ctx);
    if (tp && tp->n_free < ND_TEMP_POOL_MAX) {
        tp->free_blocks[tp->n_free++] = (pooled_block){ptr, bytes, memory};
        return;
    }
    ctx->backend->release(ctx->backend, memory, ptr, bytes);
}

size_t nd_temp_pool_bytes(nd_scheduler_ctx *ctx) {
    size_t n = 0;
    for (const struct nd_returned_block *r = __atomic_load_n(&ctx->returned, __ATOMIC_ACQUIRE); r; r = r->next)
        n += r->block.bytes;
    const struct nd_temp_pool *tp = ctx->temps;
    for (int32_t i = 0; tp && i < tp->n_free; i++) n += tp->free_blocks[i].bytes;
    return n;
}

void nd_temp_pool_trim(nd_scheduler_ctx *ctx) {
    take_returned(ctx);
    struct nd_temp_pool *tp = ctx->temps;
    for (int32_t i = 0; tp && i < tp->n_free; i++)
        ctx->backend->release(ctx->backend, tp->free_blocks[i].memory, tp->free_blocks[i].ptr,
                              tp->free_blocks[i].bytes);
    if (tp) tp->n_free = 0;
}

void nd_temp_pool_free(nd_scheduler_ctx *ctx) {
    take_returned(ctx);
    struct nd_temp_pool *tp = ctx->temps;
    if (!tp) return;
    for (int32_t i = 0; i < tp->n_free; i++)
        ctx->backend->release(ctx->backend, tp->free_blocks[i].memory, tp->free_blocks[i].ptr,
                              tp->free_blocks[i].bytes);
    free(tp->ptrs);
    free(tp->bytes);
    free(tp->temps);
    free(tp->poison);
    free(tp->held);
    free(tp->step_names);
    free(tp);
    ctx->temps = NULL;
}

/* The recording function of the value external slot `slot` gets last in
 * this flush (for messages), or NULL; with the value's name when it has
 * one: "nd_assign (heat.c:40) for 'jacobi sweep/grid'" (interned, as a
 * failed buffer keeps it). Asked only when something failed. */
static const char *label_of(const nd_plan *plan, const nd_flush_walk *walk, int32_t slot) {
    int32_t n = plan->slots[slot].last_writer;
    if (n < 0 || !walk->labels) return NULL;
    const char *name = walk->names ? walk->names[n] : NULL;
    if (!name) return walk->labels[n];
    char text[400];
    snprintf(text, sizeof text, "%s for '%s'", walk->labels[n] ? walk->labels[n] : "an operation", name);
    const char *interned = nd_name_intern(text);
    return interned ? interned : walk->labels[n];
}

/* Where external slot `slot` is, for a message about its value. */
typedef struct {
    const nd_plan *plan;
    const nd_flush_walk *walk;
    int32_t slot;
} value_ref;

/* Memory of buffer b in `memory`, allocated on first use. */
static nd_status buffer_memory(nd_scheduler_ctx *ctx, nd_buffer *b, int32_t memory, void **out, value_ref v) {
    if (!b->mem[memory]) {
        const double t0 = nd_log_enabled(3) ? nd_log_clock_us() : 0;
        nd_status st = alloc_or_release_and_retry(ctx, memory, -1, b->nbytes ? b->nbytes : 1, &b->mem[memory]);
        if (st != ND_OK) {
            /* Say whose value it was for: the read that reports it names
             * the array read, which may be another one computed from it. */
            char cause[700];
            snprintf(cause, sizeof cause, "%s", nd_last_error());
            const char *label = label_of(v.plan, v.walk, v.slot);
            return nd_error_set(st, "%s, for the value of %s", cause, label ? label : "an operation");
        }
        if (t0 > 0) nd_logf(3, "executor: array of %zu bytes allocated in %.1f us", b->nbytes, nd_log_clock_us() - t0);
    }
    *out = b->mem[memory];
    return ND_OK;
}

/* Memory of buffer b's twin in `memory`: a block taken from the pool of
 * temporaries on first use (planning made b->twin), which goes back there
 * when the buffer is freed (nd_temp_pool_return), so a new grid's first
 * chain takes it as the temporary it would have had. A twin in another
 * memory is given up: a plan that relied on its contents ran in the memory
 * it is in (store_chains.c). */
static nd_status twin_memory(nd_scheduler_ctx *ctx, nd_buffer *b, int32_t memory, void **out) {
    nd_buffer_twin *t = b->twin;
    if (!t) return nd_error_set(ND_ERR_STATE, "nd_sync: a plan names a twin the buffer lacks");
    if (t->mem && t->mem_memory != memory) {
        temp_give(ctx, t->mem_memory, t->mem_bytes, t->mem);
        t->mem = NULL;
    }
    if (!t->mem) {
        nd_status st = temp_take(ctx, memory, b->nbytes ? b->nbytes : 1, &t->mem, &t->mem_bytes);
        if (st != ND_OK) return st;
        t->mem_memory = memory;
    }
    *out = t->mem;
    return ND_OK;
}

static int32_t temp_memory(const nd_scheduler_ctx *ctx, const nd_plan *plan, int device);

/* Memory of device d's piece of buffer b (or of its twin), `bytes` long:
 * allocated through the backend's alloc_piece on first use, and again
 * when a split of another layout needs another size (the plan that made
 * the pieces of that size no longer holds their value: partition.c). */
static nd_status piece_memory(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk, int32_t slot,
                              void **out) {
    const nd_plan_slot *s = &plan->slots[slot];
    nd_buffer *b = walk->buffers[s->walk_index];
    nd_buffer_pieces **pp = s->piece_of_twin ? (b->twin ? &b->twin->pieces : NULL) : &b->pieces;
    if (!pp) return nd_error_set(ND_ERR_STATE, "nd_sync: a plan names a piece of a twin the buffer lacks");
    if (!*pp && !(*pp = nd_calloc(1, sizeof **pp)))
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory for a split array's pieces");
    nd_buffer_pieces *p = *pp;
    int32_t d = s->device - 1, memory = temp_memory(ctx, plan, s->device);
    nd_backend *be = ctx->backend;
    if (p->mem[d] && (p->mem_bytes[d] != s->bytes || p->mem_memory[d] != memory)) {
        if (be->release_piece) be->release_piece(be, p->mem_memory[d], d, p->mem[d], p->mem_bytes[d]);
        else be->release(be, p->mem_memory[d], p->mem[d], p->mem_bytes[d]);
        p->mem[d] = NULL;
    }
    if (!p->mem[d]) {
        nd_status st = alloc_or_release_and_retry(ctx, memory, d, s->bytes, &p->mem[d]);
        if (st != ND_OK) {
            p->mem[d] = NULL;
            return st;
        }
        p->mem_bytes[d] = s->bytes;
        p->mem_memory[d] = memory;
        if (ctx->stats) ctx->stats->piece_allocations++, ctx->stats->temp_allocations++;
    }
    *out = p->mem[d];
    return ND_OK;
}

typedef struct {
    void **ptrs;   /* per plan slot, in the plan's memory */
    size_t *bytes; /* per temporary slot bound: its block's size */
    /* The plan's temporary slots: a flush of thousands of nodes has
     * thousands of slots but a handful of temporaries, and releasing them
     * after each step must not scan every slot. */
    int32_t *temps;
    int32_t n_temps;
    /* Per plan slot, while running step by step: why its memory holds no
     * value (a failed or skipped step wrote it), or NULL. */
    nd_failure **poison;
    /* The fail record a kernel that gathers gets one past its slots
     * (kernel_ir.h's nd_ir_fail), when run step by step. */
    nd_ir_fail *fail;
    /* Under mpirun with the link, the lanes the steps run on (NULL: one). */
    const nd_rank_lanes *lanes;
    /* Under mpirun, the partial reductions whose broadcasts wait for the
     * end of their run of steps (send_partials): step i, or -1 - i where
     * the step did not run here and its broadcast only takes part. */
    int32_t *held;
    int32_t n_held;
} bound_slots;

/* The memory a temporary of logical device `device` (1 + d; 0: whole)
 * lives in: the plan's, or on a backend that drives several devices
 * (backend.h's device_memories) device d's memory, memory + d. */
static int32_t temp_memory(const nd_scheduler_ctx *ctx, const nd_plan *plan, int device) {
    return device > 0 && ctx->backend->device_memories > 1 ? plan->memory + device - 1 : plan->memory;
}

/* The address of external slot `slot`'s buffer, moved where this flush's
 * views of it start when the plan was built for views elsewhere
 * (nd_plan.offset_generic: the flush walk's bases against the plan's). */
static nd_status external_memory(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk, int32_t slot,
                                 void **out) {
    const int32_t wi = plan->slots[slot].walk_index;
    nd_status rc = buffer_memory(ctx, walk->buffers[wi], plan->memory, out, (value_ref){plan, walk, slot});
    /* (an exact hit's walk made no bases pass: its views start where the
     * plan's did; a buffer without views has ND_NO_VIEW_BASE in both) */
    if (rc == ND_OK && plan->offset_generic && walk->bases_valid)
        *out = (char *)*out + (walk->view_base[wi] - plan->view_base[wi]);
    return rc;
}

static nd_status slot_ptr(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk,
                          bound_slots *bs, int32_t slot) {
    const nd_plan_slot *s = &plan->slots[slot];
    if (bs->ptrs[slot]) return ND_OK;
    if (s->role == ND_SLOT_EXTERNAL) return external_memory(ctx, plan, walk, slot, &bs->ptrs[slot]);
    if (s->role == ND_SLOT_TWIN)
        return twin_memory(ctx, walk->buffers[s->walk_index], plan->memory, &bs->ptrs[slot]);
    if (s->role == ND_SLOT_PIECE) {
        nd_status rc = piece_memory(ctx, plan, walk, slot, &bs->ptrs[slot]);
        if (rc != ND_OK && s->last_writer >= 0) {
            char cause[700];
            snprintf(cause, sizeof cause, "%s", nd_last_error());
            const char *label = label_of(plan, walk, slot);
            return nd_error_set(rc, "%s, for the value of %s", cause, label ? label : "an operation");
        }
        return rc;
    }
    uint64_t before = ctx->stats ? ctx->stats->temp_allocations : 0;
    nd_status rc = temp_take(ctx, temp_memory(ctx, plan, s->device), s->bytes, &bs->ptrs[slot], &bs->bytes[slot]);
    if (ctx->stats && s->split_temp) ctx->stats->piece_allocations += ctx->stats->temp_allocations - before;
    if (rc != ND_OK && s->split_temp && s->last_writer >= 0) {
        /* A piece of a split array: name the array, as buffer_memory does. */
        char cause[700];
        snprintf(cause, sizeof cause, "%s", nd_last_error());
        const char *label = label_of(plan, walk, slot);
        return nd_error_set(rc, "%s, for the value of %s", cause, label ? label : "an operation");
    }
    return rc;
}

static void release_temps_after(nd_scheduler_ctx *ctx, const nd_plan *plan, bound_slots *bs,
                                int32_t step) {
    int joined = 0;
    for (int32_t t = 0; t < bs->n_temps; t++) {
        int32_t i = bs->temps[t];
        const nd_plan_slot *s = &plan->slots[i];
        if (!bs->ptrs[i]) continue;
        if (step >= 0 && s->last_step != step) continue;
        /* The pool orders its reuse after the steps' lane only. */
        if (bs->lanes && bs->lanes->link_slots[i] && !joined) {
            (void)ctx->backend->rank_lane_join(ctx->backend);
            joined = 1;
        }
        temp_give(ctx, temp_memory(ctx, plan, s->device), bs->bytes[i], bs->ptrs[i]);
        bs->ptrs[i] = NULL;
    }
}

/* Where a copy step reads and writes: the source buffer's memory (plus an
 * offset for a staged chunk), and either the same buffer in the other
 * memory or a bound temporary. Between the pieces of a split array and its
 * whole buffer (scheduler/partition.c), either end may be a temporary or
 * a twin, in the plan's memory. */
static nd_status copy_ends(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk,
                           bound_slots *bs, const nd_step *st, void **dst, const void **src) {
    void **ptrs = bs->ptrs;
    const nd_copy_desc *c = &st->copy;
    if (st->part != ND_PART_NONE) {
        nd_status rc = slot_ptr(ctx, plan, walk, bs, c->src_slot);
        if (rc == ND_OK) rc = slot_ptr(ctx, plan, walk, bs, c->dst_slot);
        if (rc != ND_OK) return rc;
        *src = (const char *)ptrs[c->src_slot] + c->src_offset;
        *dst = (char *)ptrs[c->dst_slot] + c->dst_offset;
        return ND_OK;
    }
    nd_buffer *b = walk->buffers[plan->slots[c->src_slot].walk_index];
    *src = (const char *)b->mem[c->src_memory] + c->src_offset;
    if (plan->slots[c->dst_slot].role == ND_SLOT_TEMP) {
        if (!ptrs[c->dst_slot]) {
            nd_status rc = temp_take(ctx, plan->memory, plan->slots[c->dst_slot].bytes, &ptrs[c->dst_slot],
                                     &bs->bytes[c->dst_slot]);
            if (rc != ND_OK) return rc;
        }
        *dst = (char *)ptrs[c->dst_slot] + c->dst_offset;
        return ND_OK;
    }
    void *base = NULL;
    nd_status rc = buffer_memory(ctx, b, c->dst_memory, &base, (value_ref){plan, walk, c->src_slot});
    *dst = base ? (char *)base + c->dst_offset : NULL;
    return rc;
}

/* A step run or handed to the backend, in the nd_stats counter of its
 * kind's category. */
static void count_step(nd_stats *stats, const nd_step *st) {
    if (!stats) return;
    switch (nd_step_category(st)) {
    case ND_PROFILE_KERNEL: stats->kernels_run++; break;
    case ND_PROFILE_LIBRARY: stats->library_calls++; break;
    case ND_PROFILE_COPY: stats->copies++; break;
    }
    if (st->kind == ND_STEP_COPY) stats->bytes_copied += st->copy.bytes;
    switch (st->part) {
    case ND_PART_KERNEL:
        if (st->kind == ND_STEP_MATMUL) {
            stats->device_matmuls++;
            break;
        }
        stats->device_kernels++;
        break;
    case ND_PART_COMBINE: stats->device_kernels++; break;
    case ND_PART_HALO: stats->halo_copies++; break;
    case ND_PART_RING: stats->ring_copies++; break;
    case ND_PART_REPLICA: stats->matmul_replicas++; break;
    case ND_PART_SCATTER:
    case ND_PART_GATHER: stats->piece_copies++; break;
    default: break;
    }
}

static nd_status run_step_here(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk,
                               bound_slots *bs, int32_t i) {
    nd_backend *be = ctx->backend;
    const nd_step *st = &plan->steps[i];
    nd_status rc = ND_OK;
    switch (st->kind) {
    case ND_STEP_KERNEL: {
        const nd_kernel *k = st->kernel;
        void *ptrs[k->n_slots + 1]; /* and the fail record (kernel_ir.h) */
        nd_scalar_bits params[k->n_params > 0 ? k->n_params : 1];
        for (int32_t j = 0; j < k->n_slots && rc == ND_OK; j++) {
            rc = slot_ptr(ctx, plan, walk, bs, st->slots[j]);
            ptrs[j] = bs->ptrs[st->slots[j]];
            if (st->slot_byte_offset && ptrs[j]) ptrs[j] = (char *)ptrs[j] + st->slot_byte_offset[j];
        }
        ptrs[k->n_slots] = bs->fail;
        for (int32_t j = 0; j < k->n_params; j++) params[j] = walk->params[st->params[j]];
        if (rc == ND_OK) rc = be->run_kernel(be, k, ptrs, params);
        break;
    }
    case ND_STEP_MATMUL: {
        const nd_matmul_desc *d = &st->matmul;
        rc = slot_ptr(ctx, plan, walk, bs, d->a_slot);
        if (rc == ND_OK) rc = slot_ptr(ctx, plan, walk, bs, d->b_slot);
        if (rc == ND_OK) rc = slot_ptr(ctx, plan, walk, bs, d->c_slot);
        if (rc == ND_OK) rc = be->run_matmul(be, d, bs->ptrs);
        break;
    }
    case ND_STEP_USER:
        for (int32_t j = 0; j < st->user.n_in + st->user.n_out && rc == ND_OK; j++)
            rc = slot_ptr(ctx, plan, walk, bs, st->user.args[j].slot);
        if (rc == ND_OK) rc = be->run_user(be, &st->user, bs->ptrs);
        break;
    case ND_STEP_COPY: {
        const nd_copy_desc *c = &st->copy;
        void *dst = NULL;
        const void *src = NULL;
        rc = copy_ends(ctx, plan, walk, bs, st, &dst, &src);
        if (rc == ND_OK) rc = be->copy(be, dst, c->dst_memory, src, c->src_memory, c->bytes);
        break;
    }
    }
    count_step(ctx->stats, st);
    return rc;
}

nd_rank_io nd_scheduler_rank_io(nd_scheduler_ctx *ctx) {
    return (nd_rank_io){ctx->backend, ctx->rank,    ctx->rank_staging, ctx->rank_link, &ctx->rank_linked,
                        ctx->stats,   ctx->rank_side};
}

/* The broadcasts of the partial reductions held so far, in step order.
 * A run of such steps (one per piece of a reduction) first runs each
 * rank's own kernel and then broadcasts every partial: broadcasting each
 * right after its step made every rank wait for the ranks before it to
 * finish their kernels, so the pieces' kernels ran one rank after another
 * (a heat sweep with a residual norm on two H200s: 1650 us a sweep
 * against 1360 in one process). Every rank holds the same steps (the
 * plan's) and sends them before the same step: the first of its issue
 * order that makes no partial, where the lanes place no transfer of the
 * link's inside such a run (its steps are joined, rank_lanes.h). A step
 * that failed or did not run here still takes part (its peers wait in
 * the broadcast). The lanes join around the broadcasts, as around a
 * joined step. The first failure is returned. */
static nd_status send_partials(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk,
                               bound_slots *bs) {
    if (bs->n_held == 0) return ND_OK;
    nd_backend *be = ctx->backend;
    const nd_rank_io io = nd_scheduler_rank_io(ctx);
    nd_status first = bs->lanes ? be->rank_lane_join(be) : ND_OK;
    for (int32_t h = 0; h < bs->n_held; h++) {
        const int ran = bs->held[h] >= 0;
        const nd_step *st = &plan->steps[ran ? bs->held[h] : -1 - bs->held[h]];
        size_t off = 0, bytes = 0;
        int32_t partial = nd_rank_partial(plan, st, &off, &bytes);
        nd_status rc = ran ? slot_ptr(ctx, plan, walk, bs, partial) : ND_OK;
        if (ran && rc == ND_OK)
            rc = nd_rank_bcast(&io, (char *)bs->ptrs[partial] + off,
                               temp_memory(ctx, plan, plan->slots[partial].device), bytes, nd_rank_of_step(st));
        else
            (void)nd_rank_transfer_idle(&io, plan, st); /* takes part without memory */
        if (first == ND_OK) first = rc;
    }
    bs->n_held = 0;
    nd_status joined = bs->lanes ? be->rank_lane_join(be) : ND_OK;
    return first != ND_OK ? first : joined;
}

/* Under mpirun, a step of a partitioned plan (executor_ranks.h): this
 * rank runs its own device's steps and the whole ones, sends and receives
 * halo rows, and receives every other rank's gathered rows and partial
 * reductions, so whole arrays hold the same value on every rank. Only the
 * memory this rank touches is bound (another rank's piece never is). A
 * failed local step still takes part in the transfer its peers wait in. */
static nd_status run_rank_step(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk,
                               bound_slots *bs, int32_t i) {
    const nd_step *st = &plan->steps[i];
    nd_rank_role role = nd_rank_role_of(plan, st, ctx->rank);
    int mine = nd_rank_of_step(st) == ctx->rank;
    const nd_rank_io io = nd_scheduler_rank_io(ctx);
    nd_status rc = ND_OK;
    if (role == ND_RANK_SKIP) return ND_OK;
    if (role == ND_RANK_RUN) {
        if (st->part != ND_PART_KERNEL || mine) rc = run_step_here(ctx, plan, walk, bs, i);
        if (nd_rank_makes_partial(plan, st)) bs->held[bs->n_held++] = i; /* its broadcast: send_partials */
        return rc;
    }
    const nd_copy_desc *c = &st->copy;
    if (role == ND_RANK_SEND || (role == ND_RANK_GATHER && mine)) rc = slot_ptr(ctx, plan, walk, bs, c->src_slot);
    nd_status rc2 = role == ND_RANK_SEND ? ND_OK : slot_ptr(ctx, plan, walk, bs, c->dst_slot);
    if (rc == ND_OK) rc = rc2;
    const void *src = bs->ptrs[c->src_slot] ? (const char *)bs->ptrs[c->src_slot] + c->src_offset : NULL;
    void *dst = bs->ptrs[c->dst_slot] ? (char *)bs->ptrs[c->dst_slot] + c->dst_offset : NULL;
    if (role == ND_RANK_GATHER && mine && rc == ND_OK)
        rc = ctx->backend->copy(ctx->backend, dst, c->dst_memory, src, c->src_memory, c->bytes);
    /* The peers wait whatever happened here. */
    if ((role == ND_RANK_SEND && !src) || (role != ND_RANK_SEND && !dst))
        rc2 = nd_rank_transfer_idle(&io, plan, st);
    else
        rc2 = nd_rank_move(&io, plan, st, role, dst, src);
    count_step(ctx->stats, st);
    return rc != ND_OK ? rc : rc2;
}

/* Before step i under mpirun with lanes (rank_lanes.h): the join or the
 * wait it needs. A transfer on the link's lane into or out of memory not
 * bound yet (taken from the pool, or a piece allocated afresh, in the
 * steps' lane's order) first joins the lanes. */
static nd_status lane_before(nd_scheduler_ctx *ctx, const nd_plan *plan, const bound_slots *bs, int32_t i) {
    nd_backend *be = ctx->backend;
    const nd_rank_lane *ln = &bs->lanes->steps[i];
    if (ln->join) return be->rank_lane_join(be);
    nd_status rc = ln->after >= 0 ? be->rank_lane_wait(be, ln->lane, ln->after) : ND_OK;
    const nd_copy_desc *c = &plan->steps[i].copy;
    if (rc == ND_OK && ln->lane == ND_RANK_LANE_LINK && (!bs->ptrs[c->src_slot] || !bs->ptrs[c->dst_slot])) {
        nd_rank_role role = nd_rank_role_of(plan, &plan->steps[i], ctx->rank);
        if (!bs->ptrs[role == ND_RANK_SEND ? c->src_slot : c->dst_slot]) rc = be->rank_lane_join(be);
    }
    return rc;
}

/* After it: its mark, where a step of the other lane waits for it; the
 * join after a joined step (a failure there is the next wait's). */
static void lane_after(nd_scheduler_ctx *ctx, const bound_slots *bs, int32_t i) {
    nd_backend *be = ctx->backend;
    const nd_rank_lane *ln = &bs->lanes->steps[i];
    if (ln->marks) (void)be->rank_lane_mark(be, ln->lane, i);
    if (ln->join) (void)be->rank_lane_join(be);
}

static nd_status run_step(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk,
                          bound_slots *bs, int32_t i) {
    if (ctx->ranks > 1 && plan->steps[i].part != ND_PART_NONE) return run_rank_step(ctx, plan, walk, bs, i);
    return run_step_here(ctx, plan, walk, bs, i);
}

/* Binds every slot and copy of the plan at once (temporaries to the plan's
 * storages) and hands it to the backend's run_plan, which orders the steps
 * itself (streams, events, a graph). The storages go back to the pool right
 * after: the backend's work is ordered before whatever takes them next. */
static nd_status run_whole_plan(nd_scheduler_ctx *ctx, const nd_plan *plan, const nd_flush_walk *walk,
                                bound_slots *bs, int *launched) {
    nd_backend *be = ctx->backend;
    void **ptrs = bs->ptrs;
    int32_t n_st = plan->n_storages, n_steps = plan->n_steps;
    void *small[3 * 32];
    size_t small_sizes[32];
    void **storage = small, **copy_dst = small + 32, **copy_src = small + 64;
    size_t *storage_got = small_sizes;
    if (n_st > 32 || n_steps > 32) {
        storage = nd_calloc((size_t)n_st + 1, sizeof(void *));
        storage_got = nd_calloc((size_t)n_st + 1, sizeof(size_t));
        copy_dst = nd_calloc((size_t)n_steps + 1, sizeof(void *));
        copy_src = nd_calloc((size_t)n_steps + 1, sizeof(void *));
    } else {
        memset(small, 0, sizeof small);
    }
    nd_status rc = storage && storage_got && copy_dst && copy_src
                       ? ND_OK
                       : nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory");
    int32_t taken = 0;
    for (; taken < n_st && rc == ND_OK; taken++)
        rc = temp_take(ctx, temp_memory(ctx, plan, plan->storage_device[taken]), plan->storage_bytes[taken],
                       &storage[taken], &storage_got[taken]);
    if (rc != ND_OK) taken--;
    for (int32_t s = 0; s < plan->n_slots && rc == ND_OK; s++) {
        const nd_plan_slot *sl = &plan->slots[s];
        if (!sl->used)
            ptrs[s] = NULL; /* a value that was inlined or dropped: no memory */
        else if (sl->role == ND_SLOT_EXTERNAL)
            rc = external_memory(ctx, plan, walk, s, &ptrs[s]);
        else if (sl->role == ND_SLOT_TWIN)
            rc = twin_memory(ctx, walk->buffers[sl->walk_index], plan->memory, &ptrs[s]);
        else if (sl->role == ND_SLOT_PIECE)
            rc = piece_memory(ctx, plan, walk, s, &ptrs[s]);
        else
            ptrs[s] = sl->storage >= 0 ? storage[sl->storage] : NULL;
    }
    for (int32_t i = 0; i < n_steps && rc == ND_OK; i++) {
        const nd_step *st = &plan->steps[i];
        if (st->kind != ND_STEP_COPY) continue;
        const void *src = NULL;
        rc = copy_ends(ctx, plan, walk, bs, st, &copy_dst[i], &src);
        copy_src[i] = (void *)src;
    }
    /* The names of what the steps compute, when the program names things
     * (NVTX ranges, profile rows and trace events of backends that run
     * whole plans). */
    const char **names = NULL;
    if (rc == ND_OK && walk->names) {
        struct nd_temp_pool *tp = pool_of(ctx);
        if (tp && nd_grow((void **)&tp->step_names, &tp->cap_step_names, (uint32_t)n_steps + 1,
                          sizeof *tp->step_names)) {
            names = tp->step_names;
            for (int32_t i = 0; i < n_steps; i++) names[i] = nd_flush_walk_step_name(walk, &plan->steps[i]);
        }
    }
    if (rc == ND_OK) {
        nd_bound_plan bound = {ptrs, copy_dst, (const void *const *)copy_src, walk->params, names};
        *launched = 1;
        rc = be->run_plan(be, (nd_plan *)plan, &bound);
        for (int32_t i = 0; i < n_steps; i++) count_step(ctx->stats, &plan->steps[i]);
    }
    for (int32_t k = 0; k < taken; k++)
        temp_give(ctx, temp_memory(ctx, plan, plan->storage_device[k]), storage_got[k], storage[k]);
    for (int32_t s = 0; s < plan->n_slots; s++)
        if (plan->slots[s].role == ND_SLOT_TEMP) ptrs[s] = NULL;
    if (storage != small) {
        free(storage);
        free(storage_got);
        free(copy_dst);
        free(copy_src);
    }
    return rc;
}

/* ------------------------------------------------------------ failures
 *
 * A step that fails (out of memory binding a slot, a backend call that
 * fails) does not spoil the flush's other values (DESIGN.md "Errors": every
 * array not involved keeps its value). The steps run in their order; a step
 * that fails, and every later step that touches a slot a failed or skipped
 * step wrote (or would have written), is skipped, and the buffers those
 * skipped steps write are marked failed with the cause (nd_buffer_fail);
 * every other step runs, so an array updated in place (x += 1) beside an
 * unrelated failure gets its new value. A buffer a failed copy would have
 * copied into another memory is not failed: its value is where it was. */

static nd_failure *step_poisoned(const nd_plan *plan, const nd_step *st, nd_failure *const *poison) {
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        int32_t slot = nd_step_access_at(st, j, plan->memory).slot;
        if (poison[slot]) return poison[slot];
    }
    return NULL;
}

/* Slot `slot` (and every slot bound to the same memory: one buffer or one
 * twin may have several) holds no value: `f` says why. */
static void set_poison(nd_failure **poison, int32_t slot, nd_failure *f) {
    nd_failure_ref(f);
    nd_failure_unref(poison[slot]);
    poison[slot] = f;
}

/* Whether slots a and b are bound to the same memory. A split array's
 * pieces are memories of their own, one per device: a bad index in one
 * device's rows of a merged kernel poisons that piece only, so the other
 * devices' kernels still write their rows of the values beside it (they
 * would otherwise be skipped, failing an unrelated bystander). */
static int same_value(const nd_plan_slot *a, const nd_plan_slot *b) { /* one buffer (or its twin), any device */
    if (a->role != b->role || a->walk_index != b->walk_index) return 0;
    return a->role != ND_SLOT_PIECE || a->piece_of_twin == b->piece_of_twin;
}
static int same_memory(const nd_plan_slot *a, const nd_plan_slot *b) {
    return same_value(a, b) && (a->role != ND_SLOT_PIECE || a->device == b->device);
}

static void poison_slot(const nd_plan *plan, nd_failure **poison, int32_t slot, nd_failure *f) {
    const nd_plan_slot *s = &plan->slots[slot];
    if (s->role == ND_SLOT_TEMP) {
        set_poison(poison, slot, f);
        return;
    }
    for (int32_t i = 0; i < plan->n_slots; i++)
        if (same_memory(&plan->slots[i], s)) set_poison(poison, i, f);
}

/* Whether another device's piece of the same buffer as piece slot `slot`
 * holds no value in this plan (poison: NULL when nothing failed). */
static int sibling_piece_poisoned(const nd_plan *plan, nd_failure *const *poison, int32_t slot) {
    const nd_plan_slot *s = &plan->slots[slot];
    for (int32_t i = 0; poison && i < plan->n_slots; i++) {
        const nd_plan_slot *o = &plan->slots[i];
        if (poison[i] && o->role == ND_SLOT_PIECE && same_value(o, s)) return 1;
    }
    return 0;
}

/* An external buffer a failed or skipped step writes: failed, with f. */
static void fail_written(const nd_plan *plan, const nd_flush_walk *walk, int32_t slot, nd_failure *f) {
    const nd_plan_slot *s = &plan->slots[slot];
    if (s->role == ND_SLOT_EXTERNAL || (s->role == ND_SLOT_PIECE && !s->piece_of_twin))
        nd_buffer_fail(walk->buffers[s->walk_index], f, label_of(plan, walk, slot));
}

/* A step that did not run wrote nothing into the pieces of slot `slot`
 * (when it is a piece slot), but the planner already recorded what the
 * plan leaves in them (scheduler.c's mark_pieces, at submit): a scatter
 * that did not run leaves pieces the next flush would read as the array's
 * value (a later nd_std of an input gave zeros). A skipped halo copy
 * leaves the owned rows as they were, only the ghost rows stale; any other
 * write leaves the pieces holding nothing, so the next flush scatters
 * again from the whole array (a buffer a skipped kernel computes is
 * failed anyway). */
static void forget_piece(const nd_plan *plan, const nd_flush_walk *walk, const nd_step *st, int32_t slot,
                         nd_failure *f) {
    const nd_plan_slot *s = &plan->slots[slot];
    if (s->role != ND_SLOT_PIECE) return;
    nd_buffer *b = walk->buffers[s->walk_index];
    nd_buffer_pieces *p = s->piece_of_twin ? (b->twin ? b->twin->pieces : NULL) : b->pieces;
    if (!p) return;
    if (st->part == ND_PART_HALO) {
        p->ghosts_fresh = 0;
        return;
    }
    /* When the plan leaves the value in the pieces only (whole_stale: a
     * region store after the scatter), a piece that holds nothing loses
     * the value: the buffer fails, also where the other devices' steps
     * run (mark_produced keeps the failure while a sibling piece is
     * poisoned). */
    if (p->valid && p->whole_stale && !s->piece_of_twin) nd_buffer_fail(b, f, label_of(plan, walk, slot));
    p->valid = 0;
}

/* Whether the step computes the values it writes: every kind but a copy,
 * and the copy that gathers a split array's pieces back into its buffer
 * (a copy elsewhere moves a value its buffer already holds). */
static int makes_values(const nd_step *st) { return !nd_step_is_copy(st) || st->part == ND_PART_GATHER; }

/* Every slot the step writes holds no value: later steps reading it are
 * skipped. A copy's destination memory does not hold the value, but the
 * buffer itself keeps it; any other kind's external buffers are failed. */
static void step_failed(const nd_plan *plan, const nd_flush_walk *walk, nd_failure **poison, const nd_step *st,
                        nd_failure *f) {
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        nd_step_access a = nd_step_access_at(st, j, plan->memory);
        if (!(a.mode & ND_ACCESS_WRITE)) continue;
        poison_slot(plan, poison, a.slot, f);
        forget_piece(plan, walk, st, a.slot, f);
        if (makes_values(st)) fail_written(plan, walk, a.slot, f);
    }
}

/* computed: the step made the value (not a gather of pieces, which only
 * moves the value the pieces hold: when an earlier flush failed to compute
 * them they hold nothing, and the buffer stays failed; a kernel of this
 * plan that wrote the pieces cleared the failure already). */
static void mark_produced(const nd_plan *plan, const nd_flush_walk *walk, nd_failure *const *poison, int32_t slot,
                          int computed) {
    const nd_plan_slot *s = &plan->slots[slot];
    if (s->role == ND_SLOT_PIECE && !s->piece_of_twin) {
        /* A piece of its value (where it is: planning said, nd_plan.pieces);
         * the buffer stays failed while another device's piece failed. */
        nd_buffer *b = walk->buffers[s->walk_index];
        if ((b->failure || b->error != ND_OK) && !sibling_piece_poisoned(plan, poison, slot))
            nd_buffer_clear_failure(b);
        return;
    }
    if (s->role != ND_SLOT_EXTERNAL) return;
    nd_buffer *b = walk->buffers[s->walk_index];
    b->valid = 1u << plan->memory;
    /* Written: a failure of an earlier version is over. A region store
     * into a failed buffer (which leaves the rest failed) is failed again
     * after the flush (the scheduler's taint list, nd_scheduler_finish). */
    if (computed && (b->failure || b->error != ND_OK)) nd_buffer_clear_failure(b);
}

/* A step that ran: buffers it wrote hold their value in the plan's memory
 * only; a copy adds where it went. */
static void step_produced(const nd_plan *plan, const nd_flush_walk *walk, nd_failure *const *poison,
                          const nd_step *st) {
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        nd_step_access a = nd_step_access_at(st, j, plan->memory);
        if (!(a.mode & ND_ACCESS_WRITE)) continue;
        if (makes_values(st))
            mark_produced(plan, walk, poison, a.slot, st->part != ND_PART_GATHER);
        else if (plan->slots[a.slot].role == ND_SLOT_EXTERNAL) /* not a staged chunk */
            walk->buffers[plan->slots[a.slot].walk_index]->valid |= 1u << a.memory;
    }
}

/* A kernel step that ran and whose fail record is set: the slots it
 * writes with values computed from the bad index hold none (failed with
 * f); its other writes hold their values (a kernel that gathers is merged
 * with unrelated work: kernel_ir.h's nd_ir_fail). */
static void step_gather_failed(const nd_plan *plan, const nd_flush_walk *walk, nd_failure **poison,
                               const nd_step *st, const nd_ir_fail *rec, nd_failure *f) {
    const nd_kernel *k = st->kernel;
    uint8_t spoiled[k->n_slots + 1];
    memset(spoiled, 0, sizeof spoiled);
    nd_kernel_gather_writes(k, rec->gather, spoiled);
    for (int32_t j = 0; j < k->n_slots; j++) {
        if (!(st->slot_access[j] & ND_ACCESS_WRITE)) continue;
        if (spoiled[j]) {
            poison_slot(plan, poison, st->slots[j], f);
            fail_written(plan, walk, st->slots[j], f);
        } else {
            mark_produced(plan, walk, poison, st->slots[j], 1);
        }
    }
}

/* The failure a filed record means (its message set as this thread's
 * error): a new reference. */
static nd_failure *gather_failure(const nd_step *st, const nd_ir_fail *rec) {
    nd_status rc = (nd_status)(st->kind == ND_STEP_KERNEL ? nd_ir_fail_error(st->kernel, rec)
                                                           : nd_lib_fail_error(&st->user, rec));
    return nd_failure_new(rc, nd_last_error());
}

/* Every step failed (nothing ran, or a whole plan failed on the device):
 * every buffer the plan writes is failed. */
static void fail_all(const nd_plan *plan, const nd_flush_walk *walk, nd_failure *f) {
    for (int32_t i = 0; i < plan->n_steps; i++) {
        const nd_step *st = &plan->steps[i];
        for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
            nd_step_access a = nd_step_access_at(st, j, plan->memory);
            if (!(a.mode & ND_ACCESS_WRITE)) continue;
            forget_piece(plan, walk, st, a.slot, f);
            if (makes_values(st)) fail_written(plan, walk, a.slot, f);
        }
    }
}

/* The twins of a plan that failed hold nothing of use (the next plan is
 * built after this one ran: no race). */
static void forget_twins(const nd_plan *plan, const nd_flush_walk *walk) {
    for (int32_t i = 0; i < plan->n_twins; i++) {
        nd_buffer_twin *t = walk->buffers[plan->twin_walk_index[i]]->twin;
        if (t) t->valid = 0;
    }
}

/* bs: every slot unbound, and the list of the plan's temporaries. */
static nd_status bind_begin(nd_scheduler_ctx *ctx, const nd_plan *plan, bound_slots *bs) {
    struct nd_temp_pool *tp = pool_of(ctx);
    uint32_t n = (uint32_t)plan->n_slots + 1;
    if (!tp || !nd_grow((void **)&tp->ptrs, &tp->cap_ptrs, n, sizeof *tp->ptrs) ||
        !nd_grow((void **)&tp->bytes, &tp->cap_bytes, n, sizeof *tp->bytes) ||
        !nd_grow((void **)&tp->temps, &tp->cap_temps, n, sizeof *tp->temps) ||
        !nd_grow((void **)&tp->poison, &tp->cap_poison, n, sizeof *tp->poison) ||
        !nd_grow((void **)&tp->held, &tp->cap_held, (uint32_t)plan->n_steps + 1, sizeof *tp->held))
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory binding a plan of %d steps", plan->n_steps);
    memset(tp->ptrs, 0, sizeof *tp->ptrs * n);
    memset(tp->poison, 0, sizeof *tp->poison * n);
    bs->poison = tp->poison;
    bs->ptrs = tp->ptrs;
    bs->bytes = tp->bytes;
    bs->temps = tp->temps;
    bs->n_temps = 0;
    bs->held = tp->held;
    bs->n_held = 0;
    bs->fail = NULL;
    for (int32_t i = 0; i < plan->n_slots; i++)
        if (plan->slots[i].role == ND_SLOT_TEMP) bs->temps[bs->n_temps++] = i;
    return ND_OK;
}

/* One step's bookkeeping, in plan order: `cause` says why it did not run
 * (it failed, or a failure of an earlier step reaches it: step_poisoned),
 * NULL when it ran; `rec` is the fail record it filed, or NULL where it
 * files none. Its writes are failed, partly failed (a set record: the
 * values computed from the bad index) or produced. *first is the flush's
 * first failure (a reference; set here when still NULL). */
static void settle_step(const nd_plan *plan, const nd_flush_walk *walk, nd_failure **poison, const nd_step *st,
                        nd_failure *cause, const nd_ir_fail *rec, nd_failure **first) {
    if (cause) {
        if (!*first) {
            *first = cause;
            nd_failure_ref(cause);
        }
        step_failed(plan, walk, poison, st, cause);
    } else if (rec && rec->set) {
        nd_failure *made = gather_failure(st, rec);
        if (!*first) {
            *first = made;
            nd_failure_ref(made);
        }
        /* A kernel's record fails the values computed from the bad index; a
         * gather or scatter routine's fails all it writes (a scatter with a
         * bad index wrote nothing). */
        if (st->kind == ND_STEP_KERNEL)
            step_gather_failed(plan, walk, poison, st, rec, made);
        else
            step_failed(plan, walk, poison, st, made);
        nd_failure_unref(made); /* the slots and failed buffers hold it now */
    } else {
        step_produced(plan, walk, poison, st);
    }
}

/* The one walk of a plan's steps in order (the failures above), for both
 * ways a plan runs:
 *  - filed NULL: the steps run here, one by one, each filing into a fail
 *    record of its own; a step a failure reaches is skipped (under mpirun
 *    it still takes part in its transfers);
 *  - filed set: the whole plan ran already (run_whole_plan) and nothing
 *    runs again: step i's fail record is filed[filed_at[i]] (filed_at[i] <
 *    0: it files none), read back after the plan (settle_fails).
 * Either way the values computed from a bad index, and everything computed
 * from those, are failed, every other value stands, and the flush's error
 * is its first failure (ND_OK when none). */
static nd_status walk_steps(nd_scheduler_ctx *ctx, nd_plan *plan, const nd_flush_walk *walk, bound_slots *bs,
                            const nd_ir_fail *filed, const int32_t *filed_at) {
    const int running = filed == NULL;
    nd_failure *first = NULL;
    const int timed = running && (ctx->profile || ctx->trace);
    if (running && ctx->trace) ctx->trace_flushes++;
    if (running && ctx->ranks > 1) {
        const nd_rank_io io = nd_scheduler_rank_io(ctx);
        bs->lanes = nd_rank_lanes_of(plan, &io);
    }
    for (int32_t k = 0; k < plan->n_steps; k++) {
        const int32_t i = bs->lanes ? bs->lanes->order[k] : k;
        const nd_step *st = &plan->steps[i];
        nd_failure *cause = first ? step_poisoned(plan, st, bs->poison) : NULL;
        nd_failure *made = NULL;
        nd_ir_fail rec = {0, 0, 0, 0, 0};
        const nd_ir_fail *got = NULL;
        const nd_rank_lane *lane = bs->lanes && bs->lanes->steps[i].run ? &bs->lanes->steps[i] : NULL;
        if (running && bs->n_held > 0 && !nd_rank_makes_partial(plan, st)) {
            nd_status rc = send_partials(ctx, plan, walk, bs);
            if (rc != ND_OK && !cause) cause = made = nd_failure_new(rc, nd_last_error());
        }
        if (lane) {
            nd_status rc = lane_before(ctx, plan, bs, i);
            if (rc != ND_OK && !cause) cause = made = nd_failure_new(rc, nd_last_error());
            ctx->rank_side = lane->lane == ND_RANK_LANE_LINK;
        }
        const int skipped = cause != NULL; /* a failure reached it: it does not run */
        if (!cause && running) {
            double t0 = timed ? nd_log_clock_us() : 0;
            bs->fail = &rec;
            nd_status rc = run_step(ctx, plan, walk, bs, i);
            bs->fail = NULL;
            got = &rec;
            /* Under mpirun another rank's step is neither profiled nor traced here. */
            int here = ctx->ranks <= 1 || st->part == ND_PART_NONE ||
                       nd_rank_role_of(plan, st, ctx->rank) != ND_RANK_SKIP;
            if (timed && rc == ND_OK && here) {
                double us = nd_log_clock_us() - t0;
                const char *value = nd_flush_walk_step_name(walk, st);
                if (ctx->profile) nd_profile_add_step(ctx->profile, st, NULL, value, us * 1e-6);
                if (ctx->trace) nd_trace_step(ctx, st, i, value, t0, us);
            }
            if (rc != ND_OK) cause = made = nd_failure_new(rc, nd_last_error());
        } else if (!cause && filed_at[i] >= 0) {
            got = &filed[filed_at[i]];
        }
        /* A step a failure reached still takes part in its transfers:
         * the other ranks wait in them. (One that ran and failed took part
         * already: run_rank_step makes its transfers whatever failed.) */
        if (running && skipped && ctx->ranks > 1 && st->part != ND_PART_NONE) {
            const nd_rank_io io = nd_scheduler_rank_io(ctx);
            if (nd_rank_makes_partial(plan, st))
                bs->held[bs->n_held++] = -1 - i;
            else
                (void)nd_rank_transfer_idle(&io, plan, st);
        }
        if (lane) {
            lane_after(ctx, bs, i);
            ctx->rank_side = 0;
        }
        settle_step(plan, walk, bs->poison, st, cause, got, &first);
        nd_failure_unref(made); /* settle_step took what it keeps */
        if (running) release_temps_after(ctx, plan, bs, i);
    }
    if (running && bs->n_held > 0) {
        nd_status rc = send_partials(ctx, plan, walk, bs);
        if (rc != ND_OK && !first) {
            first = nd_failure_new(rc, nd_last_error());
            if (first) fail_all(plan, walk, first);
        }
    }
    if (running) release_temps_after(ctx, plan, bs, -1);
    /* Under mpirun (steps always run here) a failure on one rank fails the
     * flush on every rank: the others computed with the rows it could not
     * send. */
    if (running && ctx->ranks > 1) {
        /* Transfers over the link run on the stream after the host moved
         * on: the ranks agree on their outcome, not on their enqueueing. */
        const nd_rank_io io = nd_scheduler_rank_io(ctx);
        nd_status waited = nd_rank_link_wait(&io);
        if (waited != ND_OK && !first) {
            first = nd_failure_new(waited, nd_last_error());
            if (first) fail_all(plan, walk, first);
        }
        bs->lanes = NULL;
        int32_t failed_rank = -1;
        nd_status other = nd_rank_agree(first ? first->status : ND_OK, &failed_rank);
        if (!first && other != ND_OK) {
            char why[200];
            snprintf(why, sizeof why, "nd_sync: MPI rank %d failed a step of this flush (%s; its own error "
                     "says why), so the arrays the flush wrote fail on every rank", (int)failed_rank,
                     nd_status_name(other));
            first = nd_failure_new(other, why);
            if (first) fail_all(plan, walk, first);
        }
    }
    if (!first) return ND_OK;
    for (int32_t i = 0; i < plan->n_slots; i++) {
        nd_failure_unref(bs->poison[i]);
        bs->poison[i] = NULL;
    }
    forget_twins(plan, walk);
    /* The flush's error is its first failure (later ones overwrote it). */
    nd_status rc = nd_error_set(first->status, "%s", first->cause);
    nd_failure_unref(first);
    return rc;
}

/* A plan with a library routine that reads its status back (a linear
 * algebra routine that may find a singular matrix: common/lib_calls.h)
 * runs step by step on every backend, so that such a failure fails only
 * that step's outputs and what depends on them, as DESIGN.md's "Errors"
 * wants; the routine synchronises anyway. Kernels that gather, and the
 * gather and scatter routines (nd_lib_files_fails), do not: a whole plan
 * files their bad indices in fail records, read once after it
 * (settle_fails). */
static int reads_back(const nd_plan *plan) {
    for (int32_t i = 0; i < plan->n_steps; i++)
        if (plan->steps[i].kind == ND_STEP_USER && nd_lib_reads_back(plan->steps[i].user.lib)) return 1;
    return 0;
}

/* After a whole plan ran: its fail records (backend.h's plan_fails, one
 * per step that files one: nd_plan_fail_records). When one is set, the
 * steps are walked again in order (walk_steps, with the records) as they
 * would have run one by one. */
static nd_status settle_fails(nd_scheduler_ctx *ctx, nd_plan *plan, const nd_flush_walk *walk, bound_slots *bs) {
    nd_backend *be = ctx->backend;
    int32_t n = be->plan_fails ? nd_plan_fail_records(plan, NULL) : 0;
    if (n == 0) return ND_OK;
    nd_ir_fail *recs = nd_calloc((size_t)n, sizeof *recs);
    int32_t *index = nd_calloc((size_t)plan->n_steps + 1, sizeof *index);
    nd_status rc = recs && index ? ND_OK : nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory reading back a plan");
    if (rc == ND_OK) rc = be->plan_fails(be, plan, recs);
    int any = 0;
    for (int32_t r = 0; rc == ND_OK && r < n; r++) any |= recs[r].set;
    if (rc == ND_OK && any) {
        nd_plan_fail_records(plan, index);
        rc = walk_steps(ctx, plan, walk, bs, recs, index);
    } else if (rc != ND_OK) {
        nd_failure *f = nd_failure_new(rc, nd_last_error());
        forget_twins(plan, walk);
        fail_all(plan, walk, f);
        nd_failure_unref(f);
    }
    free(recs);
    free(index);
    return rc;
}

nd_status nd_execute_plan(nd_scheduler_ctx *ctx, nd_plan *plan, const nd_flush_walk *walk) {
    nd_backend *be = ctx->backend;
    bound_slots bs = {NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}; /* GCC cannot tell bind_begin sets it */
    nd_status rc = ctx->ranks > 1 && ctx->check_spmd
                       ? nd_rank_check_plan(plan, walk->key, ctx->plans_checked++, &ctx->rank_finished)
                       : ND_OK;
    if (rc == ND_OK) rc = bind_begin(ctx, plan, &bs);
    if (rc != ND_OK) {
        nd_failure *f = nd_failure_new(rc, nd_last_error());
        forget_twins(plan, walk);
        fail_all(plan, walk, f);
        nd_failure_unref(f);
        return rc;
    }
    /* Under mpirun the steps run one by one: transfers between them. */
    if (!be->run_plan || reads_back(plan) || ctx->ranks > 1) return walk_steps(ctx, plan, walk, &bs, NULL, NULL);
    const double t0 = nd_log_enabled(3) ? nd_log_clock_us() : 0;
    int launched = 0;
    rc = run_whole_plan(ctx, plan, walk, &bs, &launched);
    if (t0 > 0) nd_logf(3, "executor: plan of %d steps bound and run in %.1f us", plan->n_steps, nd_log_clock_us() - t0);
    if (rc == ND_OK) {
        for (int32_t i = 0; i < plan->n_steps; i++) step_produced(plan, walk, NULL, &plan->steps[i]);
        return settle_fails(ctx, plan, walk, &bs);
    }
    if (!launched) {
        /* Binding failed (out of memory) before anything ran: run the steps
         * one by one, which also needs less memory at once (temporaries
         * are taken per step and given back after their last use), so the
         * steps the failure does not reach still produce their values. */
        nd_logf(2, "executor: binding a plan of %d steps failed (%s); running it step by step", plan->n_steps,
                nd_last_error());
        return walk_steps(ctx, plan, walk, &bs, NULL, NULL);
    }
    nd_failure *f = nd_failure_new(rc, nd_last_error());
    forget_twins(plan, walk);
    fail_all(plan, walk, f);
    nd_failure_unref(f);
    return rc;
}
