/* Memory planning and stream assignment: the last passes of planning.
 *
 * Storages: temporaries whose lifetimes (first..last step) do not overlap
 * share one allocation, so a 50-iteration stencil that needs a temporary per
 * iteration holds one grid's worth of scratch, not fifty.
 *
 * Streams: each step's dependencies come from what it reads and writes
 * (external buffers by slot, temporaries by storage, so reuse of a storage
 * orders its next writer after its last readers). Copies go to one stream
 * per direction; a kernel continues the compute stream whose last step it
 * depends on, else starts on the least recently used one, so independent
 * branches run side by side. Only dependencies that cross streams become
 * waits (events), and a wait already implied by an earlier one is dropped. */
#include "scheduler/stream_assign.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/grow.h"
#include "backends/step_kinds.h"

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

typedef struct {
    int32_t last_writer;
    int32_t *readers; /* since the last write */
    uint32_t n_readers, cap_readers;
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

/* Records that `step` reads or writes resource r; adds what it must follow. */
static int access(resource *r, int32_t step, int write, dep_list *d) {
    if (!add_dep(d, r->last_writer)) return 0;
    if (write) {
        for (uint32_t i = 0; i < r->n_readers; i++)
            if (r->readers[i] != step && !add_dep(d, r->readers[i])) return 0;
        r->n_readers = 0;
        r->last_writer = step;
        return 1;
    }
    if (!nd_grow((void **)&r->readers, &r->cap_readers, r->n_readers + 1, sizeof *r->readers)) return 0;
    r->readers[r->n_readers++] = step;
    return 1;
}

static int32_t resource_of(const nd_plan *plan, int32_t slot) {
    const nd_plan_slot *s = &plan->slots[slot];
    return s->role == ND_SLOT_TEMP && s->storage >= 0 ? plan->n_slots + s->storage : slot;
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
        if ((a.mode & (ND_ACCESS_READ | ND_ACCESS_REGION)) && write && !access(r, i, 0, d)) return 0;
        if (!access(r, i, write, d)) return 0;
    }
    return 1;
}

/* Copies between memories go to their direction's stream (a copy touches
 * the plan's memory at one end and another memory at the other); library
 * calls share stream 0 (one cuBLAS handle and workspace). */
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
    int32_t best = -1;
    for (uint32_t k = 0; k < d->n; k++) {
        int32_t s = plan->steps[d->deps[k]].stream;
        if (s < ND_PLAN_COMPUTE_STREAMS && tail[s] == d->deps[k] && (best < 0 || d->deps[k] > tail[best]))
            best = s;
    }
    if (best >= 0) return best;
    for (int32_t s = 0; s < ND_PLAN_COMPUTE_STREAMS; s++)
        if (best < 0 || tail[s] < tail[best]) best = s;
    return best;
}

nd_status nd_plan_assign_streams(nd_plan *plan) {
    int32_t n_res = plan->n_slots + plan->n_storages;
    resource *res = nd_calloc((size_t)n_res + 1, sizeof *res);
    /* synced[s][t]: the latest step of stream t that stream s has waited
     * for (directly or through its own earlier steps); after_step keeps
     * each step's row, since waiting for a step implies only what its
     * stream had synced with by then. */
    int32_t synced[ND_PLAN_STREAMS][ND_PLAN_STREAMS];
    int32_t(*after_step)[ND_PLAN_STREAMS] = nd_malloc(sizeof *after_step * (size_t)(plan->n_steps + 1));
    int32_t tail[ND_PLAN_STREAMS];
    dep_list d = {0};
    int ok = res != NULL && after_step != NULL;
    for (int32_t r = 0; r < n_res && ok; r++) res[r].last_writer = -1;
    for (int s = 0; s < ND_PLAN_STREAMS; s++) {
        tail[s] = -1;
        for (int t = 0; t < ND_PLAN_STREAMS; t++) synced[s][t] = -1;
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
        /* Latest dependency per other stream, unless already waited for. */
        int32_t need[ND_PLAN_STREAMS];
        for (int t = 0; t < ND_PLAN_STREAMS; t++) need[t] = -1;
        for (uint32_t k = 0; k < d.n; k++) {
            int32_t t = plan->steps[d.deps[k]].stream;
            if (t != s && d.deps[k] > synced[s][t] && d.deps[k] > need[t]) need[t] = d.deps[k];
        }
        st->n_waits = 0;
        for (int t = 0; t < ND_PLAN_STREAMS; t++)
            if (need[t] >= 0) st->n_waits++;
        if (st->n_waits) {
            st->waits = nd_malloc(sizeof(int32_t) * (size_t)st->n_waits);
            ok = st->waits != NULL;
            if (!ok) break;
            int32_t w = 0;
            for (int t = 0; t < ND_PLAN_STREAMS; t++) {
                if (need[t] < 0) continue;
                st->waits[w++] = need[t];
                plan->steps[need[t]].signals = 1;
                /* What the awaited step had synced with comes along. */
                for (int u = 0; u < ND_PLAN_STREAMS; u++)
                    if (after_step[need[t]][u] > synced[s][u]) synced[s][u] = after_step[need[t]][u];
                synced[s][t] = need[t];
            }
        }
        tail[s] = i;
        synced[s][s] = i;
        memcpy(after_step[i], synced[s], sizeof after_step[i]);
    }
    free(after_step);
    for (int32_t r = 0; r < n_res && res; r++) free(res[r].readers);
    free(res);
    free(d.deps);
    return ok ? ND_OK : ND_ERR_OOM;
}
