/* Flush entry points: walk, plan (or take the cached plan), run, clear. */
#include "scheduler/scheduler.h"
#include "common/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "scheduler/dot_export.h"
#include "scheduler/executor.h"
#include "scheduler/plan_build.h"
#include "scheduler/plan_check.h"
#include "scheduler/partition.h"
#include "scheduler/plan_cache.h"

struct nd_flush_walk_state {
    nd_flush_walk w;
};

static nd_flush_walk *walk_of(nd_scheduler_ctx *ctx) {
    if (!ctx->walk) ctx->walk = nd_calloc(1, sizeof *ctx->walk);
    return ctx->walk ? &ctx->walk->w : NULL;
}

void nd_scheduler_release(nd_scheduler_ctx *ctx) {
    if (ctx->walk) {
        nd_flush_walk_free(&ctx->walk->w);
        free(ctx->walk);
        ctx->walk = NULL;
    }
    if (ctx->backend) nd_temp_pool_free(ctx);
}

/* ND_CHECK_PLANS: the cached plan p against one built for g now (a fresh
 * plan that cannot be built, short of memory, checks nothing). */
static nd_status check_cached(nd_scheduler_ctx *ctx, nd_graph *g, nd_flush_walk *w, const nd_plan *p, int exact) {
    nd_plan *fresh = NULL;
    nd_error_saved saved;
    nd_error_save(&saved);
    nd_status rc = nd_plan_build(g, w, ctx->fusion, ctx->backend->memory, ctx->chunk_bytes, &ctx->split, &fresh);
    if (rc != ND_OK || fresh->degraded) {
        nd_plan_free(fresh);
        nd_error_restore(&saved);
        return ND_OK;
    }
    char why[400];
    const int same = nd_plan_check_same(p, fresh, exact, why, sizeof why);
    nd_plan_free(fresh);
    if (same) return ND_OK;
    return nd_error_set(ND_ERR_STATE, "nd_sync: ND_CHECK_PLANS: the plan cache served plan %016llx (found by its %s "
                        "key), which differs from a plan built for this flush: %s (internal error; please report)",
                        (unsigned long long)p->key, exact ? "exact" : "relative", why);
}

/* The plan for g: from the cache when its structure was seen before. */
static nd_status plan_for(nd_scheduler_ctx *ctx, nd_graph *g, nd_flush_walk *w, int use_cache,
                          nd_plan **out, int *owned, uint8_t *hit) {
    nd_graph_compact(g);
    nd_status rc = nd_flush_walk_run(w, g, ++ctx->walk_stamp);
    if (rc != ND_OK) return nd_error_set(rc, "nd_sync: out of host memory while scheduling");
    *owned = 0;
    nd_plan *p = ctx->cache ? nd_plan_cache_find(ctx->cache, w->key) : NULL;
    /* A miss makes the bases pass: a plan of the same flush with views
     * elsewhere may run it, and a new plan records the bases. */
    if (!p && (rc = nd_flush_walk_bases(w, g)) != ND_OK)
        return nd_error_set(rc, "nd_sync: out of host memory while scheduling");
    const int exact = p != NULL;
    if (!p && ctx->cache) p = nd_plan_cache_find_generic(ctx->cache, w->relative_key);
    *hit = p != NULL;
    if (p && ctx->check_plans && (rc = check_cached(ctx, g, w, p, exact)) != ND_OK) return rc;
    if (p) {
        if (use_cache && ctx->stats) ctx->stats->plan_cache_hits++;
        *out = p;
        return ND_OK;
    }
    rc = nd_plan_build(g, w, ctx->fusion, ctx->backend->memory, ctx->chunk_bytes, &ctx->split, &p);
    if (rc == ND_OK && (rc = nd_plan_set_bases(p, w)) != ND_OK) {
        nd_plan_free(p);
        rc = nd_error_set(rc, "nd_sync: out of host memory while scheduling");
    }
    if (rc != ND_OK) return rc;
    if (p->degraded) nd_logf(2, "nd_sync: plan %016llx was built short of host memory (a pass skipped its work): "
                             "it runs once, not cached", (unsigned long long)p->key);
    if (use_cache && ctx->cache && ctx->stats) ctx->stats->plan_cache_misses++;
    if (use_cache && ctx->cache && !p->degraded)
        nd_plan_cache_insert(ctx->cache, p);
    else
        *owned = 1;
    *out = p;
    return ND_OK;
}

/* After the plan, each chain that ends in a twin leaves there what lies
 * outside its region, as of its last store's version (store_chains.c);
 * set now, while the graph names that version and region, and read when
 * the next flush is planned. */
static nd_status mark_twins(const nd_plan *plan, const nd_graph *g, const nd_flush_walk *w) {
    for (int32_t i = 0; i < plan->n_twins; i++) {
        nd_buffer *b = w->buffers[plan->twin_walk_index[i]];
        const nd_node *last = g->nodes[plan->twin_last_store[i]];
        if (!b->twin && !(b->twin = nd_calloc(1, sizeof *b->twin)))
            return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while scheduling");
        nd_buffer_twin *t = b->twin;
        t->valid = 1;
        t->version = last->out_version;
        t->ndim = last->ndim;
        t->offset = last->u.store.offset;
        for (int k = 0; k < last->ndim; k++) {
            t->shape[k] = last->shape[k];
            t->strides[k] = last->u.store.strides[k];
        }
    }
    return ND_OK;
}

/* What the plan leaves in the pieces of the buffers and twins it splits
 * (nd_plan.pieces): set now, like the twins, and read when the next flush
 * is planned (it is planned after this one ran). A buffer whose value is
 * only in its pieces after the plan has no valid whole copy (b->valid 0,
 * nd_buffer_in_pieces): its memory is kept, stale, and a reader of the
 * whole array gathers into it. */
static nd_status mark_pieces(const nd_plan *plan, const nd_graph *g, const nd_flush_walk *w) {
    /* Every record first, so that running out of memory changes nothing:
     * the plan does not run then, and pieces marked valid for scatters
     * that never ran would be read as the value by the next flush. */
    for (int32_t i = 0; i < plan->n_pieces; i++) {
        const nd_plan_pieces *o = &plan->pieces[i];
        nd_buffer *b = w->buffers[o->walk_index];
        nd_buffer_pieces **pp = o->twin ? (b->twin ? &b->twin->pieces : NULL) : &b->pieces;
        if (pp && !*pp && o->keep && !(*pp = nd_calloc(1, sizeof **pp)))
            return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while scheduling");
    }
    for (int32_t i = 0; i < plan->n_pieces; i++) {
        const nd_plan_pieces *o = &plan->pieces[i];
        nd_buffer *b = w->buffers[o->walk_index];
        nd_buffer_pieces **pp = o->twin ? (b->twin ? &b->twin->pieces : NULL) : &b->pieces;
        if (!pp || !*pp) continue;
        nd_buffer_pieces *p = *pp;
        p->valid = o->keep;
        if (!o->keep) continue;
        p->whole_stale = o->whole_stale;
        p->ghosts_fresh = o->ghosts_fresh;
        p->n_dev = o->n_dev;
        p->row_bytes = o->row_bytes;
        p->rows = o->rows;
        memcpy(p->p0, o->p0, sizeof p->p0);
        memcpy(p->pn, o->pn, sizeof p->pn);
        if (o->twin) continue;
        /* The version the flush leaves: its last write's, or the one it
         * started from. */
        int32_t last = plan->slots[o->walk_index].last_writer;
        p->version = plan->slots[o->walk_index].written && last >= 0 ? g->nodes[last]->out_version
                                                                      : b->version - b->n_writers;
        if (o->whole_stale) b->valid = 0;
    }
    return ND_OK;
}

/* ------------------------------------------------------------ failures
 *
 * What a failure reaches (docs/internals.md "Failures"): a flush that
 * cannot be planned fails every value it would have written; a value
 * computed from a failed one fails too (with the first one's cause), in
 * this flush or any later one, until a write of the whole buffer makes it
 * right again. */

/* Planning failed: every buffer a pending node writes carries the error
 * (its value was never computed); nothing else is touched. */
static void fail_pending(nd_graph *g, nd_status rc) {
    nd_failure *f = nd_failure_new(rc, nd_last_error());
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const nd_node *n = g->nodes[i];
        if (n->out) nd_buffer_fail(n->out, f, n->label);
    }
    nd_failure_unref(f);
    /* Twins of those buffers describe versions that were never made. */
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->out && g->nodes[i]->out->twin) g->nodes[i]->out->twin->valid = 0;
}

/* Whether a store covers its whole buffer (then the version before it
 * does not matter). A store's region never repeats an element. */
static int store_covers_buffer(const nd_node *n) {
    size_t item = nd_dtype_size((nd_dtype)n->dtype);
    return (size_t)nd_shape_size(n->ndim, n->shape) * item >= n->out->nbytes;
}

/* The failure the version `version` of b carries: its pending writer's
 * (tainted[]), or b's own if it is materialised. */
static nd_failure *version_failure(const nd_buffer *b, uint32_t version, nd_failure *const *tainted) {
    int64_t w = nd_buffer_writer_of(b, version);
    return w >= 0 ? tainted[w] : b->failure;
}

/* While some buffer carries a failure: the pending nodes that read a failed
 * version (directly or through other pending nodes), or store a region into
 * one, compute from values that do not exist. Their plan runs as usual
 * (the memory holds something), and their buffers are failed after it ran
 * (nd_scheduler_finish). Returns ND_ERR_OOM when there is no memory to say
 * which; the caller then fails the whole flush. */
static nd_status find_tainted(nd_scheduler_ctx *ctx, const nd_graph *g, nd_flush_job *job) {
    if (nd_buffers_failed() == 0) return ND_OK;
    nd_failure **tainted = nd_calloc(g->n_nodes, sizeof *tainted);
    if (!tainted) return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while scheduling");
    uint32_t count = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const nd_node *n = g->nodes[i];
        nd_failure *f = NULL;
        for (int k = 0; k < n->n_inputs && !f; k++)
            if (n->inputs[k].buf) f = version_failure(n->inputs[k].buf, n->inputs[k].version, tainted);
        /* A user kernel's later outputs come from the same run as its
         * first (whose node holds the inputs). */
        if (!f && n->kind == ND_NODE_USER && n->u.user.index > 0) f = tainted[i - n->u.user.index];
        if (!f && n->kind == ND_NODE_STORE && !store_covers_buffer(n))
            f = version_failure(n->out, n->out_version - 1, tainted);
        tainted[i] = f;
        /* Counted once per buffer: at its last pending write. */
        if (f && n->out_version == n->out->version) count++;
    }
    nd_status rc = ND_OK;
    if (count) {
        job->tainted = nd_calloc(count, sizeof *job->tainted);
        if (!job->tainted) {
            rc = nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while scheduling");
        } else {
            for (uint32_t i = 0; i < g->n_nodes; i++) {
                const nd_node *n = g->nodes[i];
                if (!tainted[i] || n->out_version != n->out->version) continue;
                nd_flush_taint *t = &job->tainted[job->n_tainted++];
                t->buf = n->out;
                nd_buffer_ref(t->buf);
                t->failure = tainted[i];
                nd_failure_ref(t->failure);
                t->label = n->label;
            }
        }
    }
    free(tainted);
    (void)ctx;
    return rc;
}

static void drop_tainted(nd_flush_job *job, int apply) {
    for (uint32_t i = 0; i < job->n_tainted; i++) {
        nd_flush_taint *t = &job->tainted[i];
        if (apply) nd_buffer_fail(t->buf, t->failure, t->label);
        nd_failure_unref(t->failure);
        nd_buffer_unref(t->buf);
    }
    free(job->tainted);
    job->tainted = NULL;
    job->n_tainted = 0;
}

nd_status nd_scheduler_submit(nd_scheduler_ctx *ctx, nd_graph *g, nd_flush_job *job) {
    memset(job, 0, sizeof *job);
    nd_graph_compact(g);
    if (g->n_nodes == 0) return ND_OK;
    nd_flush_walk *w = walk_of(ctx);
    if (!w) {
        nd_status rc = nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while scheduling");
        fail_pending(g, rc);
        nd_graph_clear(g);
        return rc;
    }
    nd_plan *plan = NULL;
    int owned = 0;
    const double t0 = ctx->progress_fn || nd_log_enabled(2) ? nd_log_clock_us() : 0;
    nd_status rc = find_tainted(ctx, g, job);
    if (rc == ND_OK) rc = plan_for(ctx, g, w, 1, &plan, &owned, &job->cache_hit);
    if (rc == ND_OK) rc = mark_twins(plan, g, w);
    if (rc == ND_OK) rc = mark_pieces(plan, g, w);
    if (rc != ND_OK) {
        if (owned) nd_plan_free(plan);
        drop_tainted(job, 0);
        fail_pending(g, rc);
        nd_graph_clear(g);
        return rc;
    }
    ctx->flush_index++;
    if (ctx->stats) {
        ctx->stats->flushes++;
        ctx->stats->arrays_whole += (uint64_t)plan->n_whole;
        ctx->stats->kernels_split += (uint64_t)plan->n_split_kernels;
        ctx->stats->arrays_scattered += (uint64_t)plan->n_scattered;
        ctx->stats->arrays_gathered += (uint64_t)plan->n_gathered;
        for (int32_t i = 0; i < plan->n_steps; i++)
            if (plan->steps[i].kind == ND_STEP_USER && nd_lib_reads_back(plan->steps[i].user.lib)) {
                ctx->stats->plans_read_back++;
                break;
            }
        for (int32_t i = 0; i < plan->n_nodes; i++) {
            ctx->stats->nodes_dropped += plan->node_step[i] < 0;
            ctx->stats->values_materialised += plan->node_materialised[i];
        }
    }
    if (ctx->dump_dot_dir && ctx->dump_dot_dir[0]) {
        char path[1024];
        snprintf(path, sizeof path, "%s/flush-%06llu.dot", ctx->dump_dot_dir,
                 (unsigned long long)ctx->flush_index);
        if (nd_graph_write_dot(g, plan, path) != ND_OK)
            nd_logf(1, "ND_DUMP_DOT: could not write %s", path);
        snprintf(path, sizeof path, "%s/flush-%06llu-plan.dot", ctx->dump_dot_dir,
                 (unsigned long long)ctx->flush_index);
        if (ctx->dump_dot_plan && nd_plan_write_dot(g, plan, path) != ND_OK)
            nd_logf(1, "ND_DUMP_DOT: could not write %s", path);
    }
    job->n_nodes = g->n_nodes;
    job->planned_us = t0 > 0 ? nd_log_clock_us() - t0 : 0;
    __atomic_add_fetch(&ctx->flushes_submitted, 1, __ATOMIC_RELAXED);
    /* The graph goes now (the next batch records into it); the walk's
     * buffers stay alive until the plan has run. */
    for (uint32_t i = 0; i < w->n_buffers; i++) nd_buffer_ref(w->buffers[i]);
    nd_graph_clear(g);
    job->plan = plan;
    job->owned = owned;
    job->flush_index = ctx->flush_index;
    return ND_OK;
}

nd_status nd_scheduler_execute(nd_scheduler_ctx *ctx, nd_flush_job *job) {
    if (!job->plan) return ND_OK;
    nd_flush_walk *w = &ctx->walk->w;
    nd_backend *be = ctx->backend;
    if (be->range_push) {
        /* Named after the first thing in it the program named. */
        const char *named = NULL;
        for (int32_t i = 0; i < job->plan->n_steps && w->names && !named; i++)
            named = nd_flush_walk_step_name(w, &job->plan->steps[i]);
        char name[160];
        snprintf(name, sizeof name, "nd flush %llu%s%s%s: %d steps", (unsigned long long)job->flush_index,
                 named ? " (" : "", named ? named : "", named ? ")" : "", job->plan->n_steps);
        be->range_push(be, name);
    }
    const double t0 = ctx->progress_fn || nd_log_enabled(2) ? nd_log_clock_us() : 0;
    nd_status rc = nd_execute_plan(ctx, job->plan, w);
    if (be->range_pop) be->range_pop(be);
    nd_flush_report(ctx, job, w, t0 > 0 ? nd_log_clock_us() - t0 : 0, rc);
    return rc;
}

void nd_scheduler_finish(nd_scheduler_ctx *ctx, nd_flush_job *job) {
    if (!job->plan) return;
    nd_flush_walk *w = &ctx->walk->w;
    drop_tainted(job, 1); /* after the plan ran: its writes cleared them */
    if (job->owned) nd_plan_free(job->plan);
    for (uint32_t i = 0; i < w->n_buffers; i++) nd_buffer_unref(w->buffers[i]);
    job->plan = NULL;
}

nd_status nd_scheduler_run(nd_scheduler_ctx *ctx, nd_graph *g) {
    nd_flush_job job;
    nd_status rc = nd_scheduler_submit(ctx, g, &job);
    if (rc != ND_OK) return rc;
    rc = nd_scheduler_execute(ctx, &job);
    nd_scheduler_finish(ctx, &job);
    return rc;
}

nd_status nd_scheduler_dump_dot(nd_scheduler_ctx *ctx, nd_graph *g, const char *path) {
    nd_flush_walk *w = walk_of(ctx);
    if (!w) return nd_error_set(ND_ERR_OOM, "nd_graph_dump_dot: out of host memory");
    nd_plan *plan = NULL;
    int owned = 0;
    uint8_t hit = 0;
    nd_status rc = plan_for(ctx, g, w, 0, &plan, &owned, &hit);
    if (rc != ND_OK) return rc;
    rc = nd_graph_write_dot(g, plan, path);
    if (owned) nd_plan_free(plan);
    return rc;
}

nd_status nd_scheduler_dump_plan_dot(nd_scheduler_ctx *ctx, nd_graph *g, const char *path) {
    nd_flush_walk *w = walk_of(ctx);
    if (!w) return nd_error_set(ND_ERR_OOM, "nd_plan_dump_dot: out of host memory");
    nd_plan *plan = NULL;
    int owned = 0;
    uint8_t hit = 0;
    nd_status rc = plan_for(ctx, g, w, 0, &plan, &owned, &hit);
    if (rc != ND_OK) return rc;
    rc = nd_plan_write_dot(g, plan, path);
    if (owned) nd_plan_free(plan);
    return rc;
}

/* Device d's owned rows of b's pieces into b's memory in memory m,
 * counted as a piece copy. */
static nd_status copy_owned_rows(nd_scheduler_ctx *ctx, nd_buffer *b, int32_t d, int m) {
    const nd_buffer_pieces *p = b->pieces;
    int64_t lo = nd_split_row(p->rows, p->n_dev, d), hi = nd_split_row(p->rows, p->n_dev, d + 1);
    if (hi <= lo) return ND_OK;
    if (!p->mem[d]) return nd_error_set(ND_ERR_STATE, "nd_sync: a split array lost its piece %d (internal error)", d);
    size_t bytes = (size_t)(hi - lo) * p->row_bytes;
    nd_status rc = ctx->backend->copy(ctx->backend, (char *)b->mem[m] + (size_t)lo * p->row_bytes, m,
                                      (const char *)p->mem[d] + (size_t)(lo - p->p0[d]) * p->row_bytes,
                                      p->mem_memory[d], bytes);
    if (rc == ND_OK && ctx->stats) {
        ctx->stats->copies++;
        ctx->stats->piece_copies++;
        ctx->stats->bytes_copied += bytes;
    }
    return rc;
}

/* b's memory m holds the value its pieces hold (they keep it too). */
static void mark_gathered(nd_scheduler_ctx *ctx, nd_buffer *b, int32_t m) {
    if (ctx->stats) ctx->stats->arrays_gathered++;
    b->pieces->whole_stale = 0;
    b->valid = 1u << m;
}

/* Under mpirun, rank r holds piece r only (the others' are in their
 * processes): each rank copies its owned rows into its whole array, then
 * every rank receives each rank's rows, broadcast by their owner in rank
 * order, as a plan's GATHER steps do, and the ranks agree on the outcome.
 * So a read of a split array is collective: every rank makes it, as every
 * rank records the same program. */
static nd_status gather_ranks(nd_scheduler_ctx *ctx, nd_buffer *b) {
    nd_buffer_pieces *p = b->pieces;
    nd_backend *be = ctx->backend;
    const nd_rank_io io = nd_scheduler_rank_io(ctx);
    const int32_t me = ctx->rank;
    /* Into the rank's own memory (its GPU's on CUDA), where the transfers
     * are ordered on the backend's stream after the rank's own copy: a host
     * buffer would be sent through MPI before that copy reached it. */
    int32_t m = p->mem[me] ? p->mem_memory[me] : be->memory;
    nd_status mine = b->mem[m] ? ND_OK : be->alloc(be, m, b->nbytes ? b->nbytes : 1, &b->mem[m]);
    if (mine != ND_OK) b->mem[m] = NULL;
    for (int32_t d = 0; d < p->n_dev; d++) {
        int64_t lo = nd_split_row(p->rows, p->n_dev, d), hi = nd_split_row(p->rows, p->n_dev, d + 1);
        if (hi <= lo) continue;
        size_t bytes = (size_t)(hi - lo) * p->row_bytes;
        char *dst = b->mem[m] ? (char *)b->mem[m] + (size_t)lo * p->row_bytes : NULL;
        if (d == me && mine == ND_OK) mine = copy_owned_rows(ctx, b, d, m);
        /* The peers wait in the broadcast whatever failed here. */
        nd_status sent = dst ? nd_rank_bcast(&io, dst, m, bytes, d) : nd_rank_bcast_idle(&io, m, bytes, d);
        if (mine == ND_OK) mine = sent;
    }
    nd_status waited = nd_rank_link_wait(&io);
    if (mine == ND_OK) mine = waited;
    if (mine == ND_OK) mine = be->synchronize(be);
    int32_t failed_rank = -1;
    nd_status other = nd_rank_agree(mine, &failed_rank);
    if (mine != ND_OK) return mine;
    if (other != ND_OK)
        return nd_error_set(other, "nd_sync: MPI rank %d failed to gather a split array (%s; its own error says why)",
                            (int)failed_rank, nd_status_name(other));
    mark_gathered(ctx, b, m);
    return ND_OK;
}

/* b's value is only in its pieces: their owned rows into its memory in
 * memory m, the one the reader asked for, which then holds it too. Read
 * from the host, the pieces go straight to host memory: no device ever
 * holds the whole array for it (on several GPUs it may not fit on one).
 * Under mpirun each rank gathers into its own memory (gather_ranks). */
static nd_status gather_pieces(nd_scheduler_ctx *ctx, nd_buffer *b, int m) {
    if (ctx->ranks > 1) return gather_ranks(ctx, b);
    nd_buffer_pieces *p = b->pieces;
    nd_backend *be = ctx->backend;
    if (!b->mem[m]) {
        nd_status rc = be->alloc(be, m, b->nbytes ? b->nbytes : 1, &b->mem[m]);
        if (rc != ND_OK) return rc;
    }
    for (int32_t d = 0; d < p->n_dev; d++) {
        nd_status rc = copy_owned_rows(ctx, b, d, m);
        if (rc != ND_OK) return rc;
    }
    nd_status rc = be->synchronize(be);
    if (rc != ND_OK) return rc;
    mark_gathered(ctx, b, m);
    return ND_OK;
}

/* The part of bytes [lo, hi) of b's value that device d's piece owns
 * into dst + (its start - lo), staged (done when stage returns). */
static nd_status stage_owned(nd_backend *be, const nd_buffer_pieces *p, int32_t d, size_t a, size_t z, size_t lo,
                             void *dst) {
    if (!p->mem[d]) return nd_error_set(ND_ERR_STATE, "nd_sync: a split array lost its piece %d (internal error)", d);
    return be->stage(be, (char *)dst + (a - lo), (char *)p->mem[d] + (a - (size_t)p->p0[d] * p->row_bytes),
                     p->mem_memory[d], z - a, 1);
}

/* nd_scheduler_read_span of a value only in its pieces: each device's
 * owned bytes of [lo, hi). Under mpirun rank r holds piece r only: each
 * owner of a part stages it to dst and broadcasts it from there, in rank
 * order, and the ranks agree on the outcome (collective, as gather_ranks:
 * every rank makes the same read; dst NULL, a rank without the memory,
 * takes part in the broadcasts and fails). */
static nd_status read_span_pieces(nd_scheduler_ctx *ctx, const nd_buffer *b, size_t lo, size_t hi, void *dst) {
    const nd_buffer_pieces *p = b->pieces;
    const int ranks = ctx->ranks > 1;
    const nd_rank_io io = ranks ? nd_scheduler_rank_io(ctx) : (nd_rank_io){0};
    nd_status mine = dst ? ND_OK : nd_error_set(ND_ERR_OOM, "out of host memory for the %zu bytes read", hi - lo);
    size_t copied = 0;
    uint64_t copies = 0;
    for (int32_t d = 0; d < p->n_dev && (ranks || mine == ND_OK); d++) {
        size_t own_lo = (size_t)nd_split_row(p->rows, p->n_dev, d) * p->row_bytes;
        size_t own_hi = (size_t)nd_split_row(p->rows, p->n_dev, d + 1) * p->row_bytes;
        size_t a = own_lo > lo ? own_lo : lo, z = own_hi < hi ? own_hi : hi;
        if (a >= z) continue;
        if ((!ranks || d == ctx->rank) && mine == ND_OK) {
            mine = stage_owned(ctx->backend, p, d, a, z, lo, dst);
            copied += z - a, copies++;
        }
        if (!ranks) continue;
        /* The peers wait in the broadcast whatever failed here. */
        nd_status sent = dst ? nd_rank_bcast(&io, (char *)dst + (a - lo), ND_MEMORY_HOST, z - a, d)
                             : nd_rank_bcast_idle(&io, ND_MEMORY_HOST, z - a, d);
        if (mine == ND_OK) mine = sent;
    }
    if (ranks) {
        nd_status waited = nd_rank_link_wait(&io);
        if (mine == ND_OK) mine = waited;
        int32_t failed_rank = -1;
        nd_status other = nd_rank_agree(mine, &failed_rank);
        if (mine == ND_OK && other != ND_OK)
            return nd_error_set(other, "nd_sync: MPI rank %d failed to read part of a split array (%s; its own "
                                "error says why)", (int)failed_rank, nd_status_name(other));
    }
    if (mine == ND_OK && ctx->stats) {
        ctx->stats->copies += copies;
        ctx->stats->bytes_copied += copied;
    }
    return mine;
}

nd_status nd_scheduler_read_span(nd_scheduler_ctx *ctx, const nd_buffer *b, size_t lo, size_t hi, void *dst) {
    nd_backend *be = ctx->backend;
    if (!be->stage || hi <= lo || hi > b->nbytes) return ND_ERR_UNSUPPORTED;
    if (b->valid == 0) return nd_buffer_in_pieces(b) ? read_span_pieces(ctx, b, lo, hi, dst) : ND_ERR_UNSUPPORTED;
    for (int m = 0; m < ND_MAX_MEMORIES; m++)
        if ((b->valid & (1u << m)) && b->mem[m]) {
            if (!dst) return nd_error_set(ND_ERR_OOM, "out of host memory for the %zu bytes read", hi - lo);
            nd_status rc = be->stage(be, dst, (char *)b->mem[m] + lo, m, hi - lo, 1);
            if (rc == ND_OK && ctx->stats) {
                ctx->stats->copies++;
                ctx->stats->bytes_copied += hi - lo;
            }
            return rc;
        }
    return ND_ERR_UNSUPPORTED;
}

nd_status nd_scheduler_make_valid(nd_scheduler_ctx *ctx, nd_buffer *b, int memory) {
    uint32_t bit = 1u << memory;
    if (b->valid & bit) return ND_OK;
    nd_backend *be = ctx->backend;
    if (nd_buffer_in_pieces(b)) {
        nd_status rc = gather_pieces(ctx, b, memory);
        if (rc != ND_OK || (b->valid & bit)) return rc;
    }
    if (!b->mem[memory]) {
        nd_status rc = be->alloc(be, memory, b->nbytes ? b->nbytes : 1, &b->mem[memory]);
        if (rc != ND_OK) return rc;
    }
    if (b->valid == 0) {
        /* Never written (nd_empty): any contents are its value. */
        b->valid = bit;
        return ND_OK;
    }
    int src = -1;
    for (int m = 0; m < ND_MAX_MEMORIES && src < 0; m++)
        if (b->valid & (1u << m)) src = m;
    nd_status rc = be->copy(be, b->mem[memory], memory, b->mem[src], src, b->nbytes);
    if (rc == ND_OK) rc = be->synchronize(be);
    if (rc != ND_OK) return rc;
    if (ctx->stats) {
        ctx->stats->copies++;
        ctx->stats->bytes_copied += b->nbytes;
    }
    b->valid |= bit;
    return ND_OK;
}
