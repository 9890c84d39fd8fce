/* Memory planning and stream assignment: the last passes of planning.
 *
 * Storages: temporaries whose lifetimes (first..last step) do not overlap
 * share one allocation, so a 50-iteration stencil that needs a temporary per
 * iteration holds one grid's worth of scratch, not fifty.
 *
 * Streams: each step's dependencies come from what it reads and writes
 * (external buffers by slot, temporaries by storage, so reuse of a storage
 * orders its next writer after its last readers). Steps of a split plan
 * (partition.c) say which bytes of a slot they touch: a device kernel its
 * rows, a halo, scatter or gather copy its byte range; two such accesses of
 * disjoint ranges do not order each other, so a halo copy into a piece's
 * ghost rows runs beside the kernel computing the piece's interior
 * (partition_edges.c). Every other access covers its whole slot. Copies
 * go to one stream per direction; a kernel continues the compute stream
 * whose last step it depends on, else starts on the least recently used
 * one, so independent branches run side by side. Streams are per logical
 * device (plan stream s of device d is its own queue; whole-array steps
 * run on device 0's), so the devices of a split plan never queue behind
 * each other. Only dependencies that cross queues become waits (events),
 * and a wait already implied by an earlier one is dropped. */
#include "scheduler/stream_assign.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/grow.h"
#include "backends/step_kinds.h"
#include "scheduler/access_overlap.h"

/* ------------------------------------------------------------- storages */

/* Used = needs memory in the plan's memory space (a staged chunk's source
 * stays where it is). */
static void mark_used(nd_plan *plan) {
    for (int32_t i = 0; i < plan->n_steps; i++) {
        const nd_step *st = &plan->steps[i];
        for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
            nd_step_access a = nd_step_access_at(st, j, plan->memory);
            if (a.memory == plan->memory) plan->slots[a.slot].used = 1;
        }
    }
}

/* Temporaries' lifetimes in the final step list. */
static void temp_lifetimes(nd_plan *p) {
    for (int32_t i = 0; i < p->n_slots; i++)
        if (p->slots[i].role == ND_SLOT_TEMP) p->slots[i].first_step = p->slots[i].last_step = -1;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const nd_step *st = &p->steps[s];
        for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
            nd_plan_slot *sl = &p->slots[nd_step_access_at(st, j, p->memory).slot];
            if (sl->role != ND_SLOT_TEMP) continue;
            if (sl->first_step < 0) sl->first_step = s;
            sl->last_step = s;
        }
    }
}

nd_status nd_plan_assign_storage(nd_plan *plan) {
    mark_used(plan);
    temp_lifetimes(plan);
    int32_t n = plan->n_slots;
    int32_t *order = nd_malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *busy_until = nd_malloc(sizeof(int32_t) * (size_t)(n + 1)); /* per storage */
    size_t *bytes = nd_malloc(sizeof(size_t) * (size_t)(n + 1));
    uint8_t *device = nd_malloc((size_t)(n + 1)); /* per storage: 1 + the device of its pieces, or 0 */
    if (!order || !busy_until || !bytes || !device) {
        free(order);
        free(busy_until);
        free(bytes);
        free(device);
        return ND_ERR_OOM;
    }
    int32_t n_temps = 0;
    for (int32_t i = 0; i < n; i++) {
        plan->slots[i].storage = -1;
        if (plan->slots[i].role == ND_SLOT_TEMP && plan->slots[i].first_step >= 0) order[n_temps++] = i;
    }
    /* By first use (insertion sort: plans hold few temporaries). */
    for (int32_t a = 1; a < n_temps; a++) {
        int32_t v = order[a], b = a;
        while (b > 0 && plan->slots[order[b - 1]].first_step > plan->slots[v].first_step) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = v;
    }
    int32_t n_storages = 0;
    for (int32_t t = 0; t < n_temps; t++) {
        nd_plan_slot *s = &plan->slots[order[t]];
        /* A free storage that fits best: the smallest that is big enough,
         * else the biggest (which then grows). */
        int32_t best = -1;
        for (int32_t k = 0; k < n_storages; k++) {
            /* A storage holds one device's pieces (on GPUs it is that
             * device's memory), or whole temporaries only. */
            if (busy_until[k] >= s->first_step || device[k] != s->device) continue;
            if (best < 0) {
                best = k;
                continue;
            }
            int fits = bytes[k] >= s->bytes, best_fits = bytes[best] >= s->bytes;
            if ((fits && (!best_fits || bytes[k] < bytes[best])) || (!fits && !best_fits && bytes[k] > bytes[best]))
                best = k;
        }
        if (best < 0) {
            best = n_storages++;
            bytes[best] = 0;
            device[best] = s->device;
        }
        if (bytes[best] < s->bytes) bytes[best] = s->bytes;
        busy_until[best] = s->last_step;
        s->storage = best;
    }
    free(order);
    free(busy_until);
    plan->n_storages = n_storages;
    plan->storage_bytes = bytes;
    plan->storage_device = device;
    return ND_OK;
}

/* --------------------------------------------------------------- streams */

/* An access still able to order a later one: step `step` read or wrote
 * bytes [lo, hi) of the resource. */
typedef struct {
    int32_t step;
    uint8_t write;
    int64_t lo, hi;
} access_entry;

/* Per resource, the accesses no later write has covered yet. */
typedef struct {
    access_entry *e;
    uint32_t n, cap;
} resource;

typedef struct {
    int32_t *deps;
    uint32_t n, cap;
} dep_list;

static int add_dep(dep_list *d, int32_t step) {
    if (step < 0) return 1;
    for (uint32_t i = 0; i < d->n; i++)
        if (d->deps[i] == step) return 1;
    if (!nd_grow((void **)&d->deps, &d->cap, d->n + 1, sizeof *d->deps)) return 0;
    d->deps[d->n++] = step;
    return 1;
}

/* Records that `step` reads or writes bytes [lo, hi) of resource r; adds
 * what it must follow: the overlapping writes, and for a write the
 * overlapping reads too. A write drops the entries it covers (whatever
 * later overlaps them inside its range orders after it, and so after
 * them); with whole ranges this is "the last writer and the readers since". */
static int access(resource *r, int32_t step, int write, int64_t lo, int64_t hi, dep_list *d) {
    uint32_t keep = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        access_entry *e = &r->e[i];
        int meets = e->lo < hi && lo < e->hi && e->step != step;
        if (meets && (e->write || write) && !add_dep(d, e->step)) return 0;
        if (write && lo <= e->lo && e->hi <= hi) continue;
        r->e[keep++] = *e;
    }
    r->n = keep;
    if (!nd_grow((void **)&r->e, &r->cap, r->n + 1, sizeof *r->e)) return 0;
    r->e[r->n++] = (access_entry){step, (uint8_t)write, lo, hi};
    return 1;
}

static int32_t resource_of(const nd_plan *plan, int32_t slot) {
    const nd_plan_slot *s = &plan->slots[slot];
    return s->role == ND_SLOT_TEMP && s->storage >= 0 ? plan->n_slots + s->storage : slot;
}

/* (stream_assign.h) A device kernel's range comes from its IR (every
 * access of the kernel slot over its space; a gathered load anywhere), a
 * piece copy's from its offsets; temporaries sharing a storage all start
 * at its start, so ranges of one storage compare. */
void nd_step_access_range(const nd_step *st, int32_t j, int64_t *lo, int64_t *hi) {
    *lo = 0;
    *hi = INT64_MAX;
    if (st->kind == ND_STEP_COPY && st->part >= ND_PART_SCATTER && st->part <= ND_PART_GATHER) {
        *lo = (int64_t)(j == 0 ? st->copy.src_offset : st->copy.dst_offset);
        *hi = *lo + (int64_t)st->copy.bytes;
        return;
    }
    if (st->kind != ND_STEP_KERNEL || st->part != ND_PART_KERNEL || st->slot_byte_offset) return;
    const nd_kernel *k = st->kernel;
    for (int32_t d = 0; d < k->ndim; d++)
        if (k->shape[d] <= 0) return;
    int64_t a = INT64_MAX, b = INT64_MIN;
    for (int32_t i = 0, n = nd_kernel_n_accesses(k); i < n; i++) {
        const nd_ir_access *x = nd_kernel_access(k, i);
        if (x->slot != j) continue;
        if (i < k->n_loads && nd_ir_load_gathered(k, i)) return;
        int64_t l, h;
        nd_access_byte_span(k->ndim, k->shape, x, &l, &h);
        if (l < a) a = l;
        if (h + 1 > b) b = h + 1;
    }
    if (a < 0 || b <= a) return;
    *lo = a;
    *hi = b;
}

/* A write that keeps part of the old value (a region, or read and
 * written) orders after the last writer and is a reader too, so it is
 * recorded as a read first. A copy between a buffer's memories reads and
 * writes the same slot: it orders against everything using the buffer
 * (conservative). */
static int step_accesses(const nd_plan *plan, int32_t i, resource *res, dep_list *d) {
    const nd_step *st = &plan->steps[i];
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        nd_step_access a = nd_step_access_at(st, j, plan->memory);
        resource *r = &res[resource_of(plan, a.slot)];
        int write = (a.mode & ND_ACCESS_WRITE) != 0;
        int64_t lo, hi;
        nd_step_access_range(st, j, &lo, &hi);
        if ((a.mode & (ND_ACCESS_READ | ND_ACCESS_REGION)) && write && !access(r, i, 0, lo, hi, d)) return 0;
        if (!access(r, i, write, lo, hi, d)) return 0;
    }
    return 1;
}

/* The logical device whose queues step st runs on: its own, or device
 * 0's for a whole-array step (what the CUDA plan runner does). */
static int32_t step_dev(const nd_step *st) { return st->device ? st->device - 1 : 0; }

/* Queue q = device * ND_PLAN_STREAMS + plan stream. */
static int32_t queue_of(const nd_plan *plan, int32_t i) {
    return step_dev(&plan->steps[i]) * ND_PLAN_STREAMS + plan->steps[i].stream;
}

/* Copies between memories go to their direction's stream (a copy touches
 * the plan's memory at one end and another memory at the other); library
 * calls share stream 0 (one cuBLAS handle and workspace). A kernel or a
 * copy within the plan's memory continues a compute stream of its device
 * whose last step it depends on (the latest such), else the device's
 * least recently used one. */
static int32_t pick_stream(const nd_plan *plan, int32_t i, const dep_list *d, const int32_t *tail) {
    const nd_step *st = &plan->steps[i];
    switch (nd_step_category(st)) {
    case ND_PROFILE_COPY: {
        int to_other = 0, from_other = 0;
        for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
            nd_step_access a = nd_step_access_at(st, j, plan->memory);
            if (a.memory == plan->memory) continue;
            if (a.mode & ND_ACCESS_WRITE)
                to_other = 1;
            else
                from_other = 1;
        }
        if (to_other) return ND_STREAM_D2H;
        if (from_other) return ND_STREAM_H2D;
        break;
    }
    case ND_PROFILE_LIBRARY: return 0;
    case ND_PROFILE_KERNEL: break;
    }
    const int32_t *t = tail + step_dev(st) * ND_PLAN_STREAMS;
    int32_t best = -1;
    for (uint32_t k = 0; k < d->n; k++) {
        const nd_step *dep = &plan->steps[d->deps[k]];
        int32_t s = dep->stream;
        if (step_dev(dep) == step_dev(st) && s < ND_PLAN_COMPUTE_STREAMS && t[s] == d->deps[k] &&
            (best < 0 || d->deps[k] > t[best]))
            best = s;
    }
    if (best >= 0) return best;
    for (int32_t s = 0; s < ND_PLAN_COMPUTE_STREAMS; s++)
        if (best < 0 || t[s] < t[best]) best = s;
    return best;
}

nd_status nd_plan_assign_streams(nd_plan *plan) {
    int32_t n_res = plan->n_slots + plan->n_storages;
    int32_t n_dev = 1;
    for (int32_t i = 0; i < plan->n_steps; i++)
        if (step_dev(&plan->steps[i]) + 1 > n_dev) n_dev = step_dev(&plan->steps[i]) + 1;
    const int32_t nq = n_dev * ND_PLAN_STREAMS;
    resource *res = nd_calloc((size_t)n_res + 1, sizeof *res);
    /* synced[q * nq + u]: the latest step of queue u that queue q has
     * waited for (directly or through its own earlier steps); after_step
     * keeps each step's row, since waiting for a step implies only what
     * its queue had synced with by then. */
    int32_t *synced = nd_malloc(sizeof(int32_t) * (size_t)nq * (size_t)nq);
    int32_t *after_step = nd_malloc(sizeof(int32_t) * (size_t)nq * (size_t)(plan->n_steps + 1));
    int32_t *tail = nd_malloc(sizeof(int32_t) * (size_t)nq), *need = nd_malloc(sizeof(int32_t) * (size_t)nq);
    dep_list d = {0};
    int ok = res && synced && after_step && tail && need;
    for (int32_t q = 0; q < nq && ok; q++) {
        tail[q] = -1;
        for (int32_t u = 0; u < nq; u++) synced[q * nq + u] = -1;
    }
    plan->n_streams_used = 1;
    for (int32_t i = 0; i < plan->n_steps && ok; i++) {
        nd_step *st = &plan->steps[i];
        d.n = 0;
        ok = step_accesses(plan, i, res, &d);
        if (!ok) break;
        int32_t s = pick_stream(plan, i, &d, tail);
        st->stream = s;
        if (s + 1 > plan->n_streams_used) plan->n_streams_used = s + 1;
        int32_t q = queue_of(plan, i);
        int32_t *row = &synced[q * nq];
        /* Latest dependency per other queue, unless already waited for. */
        for (int32_t u = 0; u < nq; u++) need[u] = -1;
        for (uint32_t k = 0; k < d.n; k++) {
            int32_t u = queue_of(plan, d.deps[k]);
            if (u != q && d.deps[k] > row[u] && d.deps[k] > need[u]) need[u] = d.deps[k];
        }
        st->n_waits = 0;
        for (int32_t u = 0; u < nq; u++)
            if (need[u] >= 0) st->n_waits++;
        if (st->n_waits) {
            st->waits = nd_malloc(sizeof(int32_t) * (size_t)st->n_waits);
            ok = st->waits != NULL;
            if (!ok) break;
            int32_t w = 0;
            for (int32_t u = 0; u < nq; u++) {
                if (need[u] < 0) continue;
                st->waits[w++] = need[u];
                plan->steps[need[u]].signals = 1;
                /* What the awaited step had synced with comes along. */
                const int32_t *after = &after_step[(size_t)need[u] * (size_t)nq];
                for (int32_t v = 0; v < nq; v++)
                    if (after[v] > row[v]) row[v] = after[v];
                row[u] = need[u];
            }
        }
        tail[q] = i;
        row[q] = i;
        memcpy(&after_step[(size_t)i * (size_t)nq], row, sizeof(int32_t) * (size_t)nq);
    }
    free(after_step);
    free(synced);
    free(tail);
    free(need);
    for (int32_t r = 0; r < n_res && res; r++) free(res[r].e);
    free(res);
    free(d.deps);
    return ok ? ND_OK : ND_ERR_OOM;
}
