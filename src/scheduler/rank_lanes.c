/* Which lane each step of a partitioned plan runs on under mpirun, and
 * what it waits for (rank_lanes.h). */
#include "scheduler/rank_lanes.h"

#include <stdlib.h>

#include "backends/step_kinds.h"
#include "common/alloc.h"
#include "common/error.h" /* nd_logf */
#include "scheduler/stream_assign.h" /* nd_step_access_range */

/* Bytes [lo, hi) of a plan slot a step reads or writes on this rank. Under
 * mpirun temporaries are bound one by one (executor.c walk_steps), so each
 * slot is memory of its own while it lives. */
typedef struct {
    int32_t slot;
    uint8_t write;
    int64_t lo, hi;
} lane_access;

typedef struct {
    lane_access *a;
    int32_t n, cap;
} access_list;

static int add(access_list *L, int32_t slot, int write, int64_t lo, int64_t hi) {
    if (L->n == L->cap) {
        int32_t cap = L->cap ? 2 * L->cap : 64;
        lane_access *a = realloc(L->a, sizeof *a * (size_t)cap);
        if (!a) return 0;
        L->a = a;
        L->cap = cap;
    }
    L->a[L->n++] = (lane_access){slot, (uint8_t)write, lo, hi};
    return 1;
}

/* What step st touches on this rank: a send only its source rows, a
 * receive only its destination rows (the other end is another rank's
 * piece), anything else every access it has. */
static int step_accesses(const nd_plan *plan, const nd_step *st, nd_rank_role role, access_list *L) {
    const nd_copy_desc *c = &st->copy;
    if (role == ND_RANK_SEND)
        return add(L, c->src_slot, 0, (int64_t)c->src_offset, (int64_t)(c->src_offset + c->bytes));
    if (role == ND_RANK_RECV)
        return add(L, c->dst_slot, 1, (int64_t)c->dst_offset, (int64_t)(c->dst_offset + c->bytes));
    /* A kernel's IR addresses its slots from slot_byte_offset on (the
     * rebase that lets a device's strips share one compile, run after the
     * streams were assigned): its bytes are the IR's, shifted by that. */
    nd_step ir = *st;
    ir.slot_byte_offset = st->kind == ND_STEP_KERNEL ? NULL : st->slot_byte_offset;
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        nd_step_access a = nd_step_access_at(st, j, plan->memory);
        if (a.slot < 0) continue;
        int64_t lo, hi;
        nd_step_access_range(&ir, j, &lo, &hi);
        if (hi != INT64_MAX && st->kind == ND_STEP_KERNEL && st->slot_byte_offset) {
            lo += st->slot_byte_offset[j];
            hi += st->slot_byte_offset[j];
        }
        if (!add(L, a.slot, (a.mode & ND_ACCESS_WRITE) != 0, lo, hi)) return 0;
    }
    return 1;
}

static int conflict(const lane_access *x, int32_t nx, const lane_access *y, int32_t ny) {
    for (int32_t i = 0; i < nx; i++)
        for (int32_t j = 0; j < ny; j++)
            if (x[i].slot == y[j].slot && (x[i].write || y[j].write) && x[i].lo < y[j].hi && y[j].lo < x[i].hi)
                return 1;
    return 0;
}

/* Whether step st goes on the link's lane: a halo (or ring) send or
 * receive that the link carries. Any other transfer joins the lanes. */
static int link_lane(const nd_step *st, nd_rank_role role, const nd_rank_io *io) {
    const nd_copy_desc *c = &st->copy;
    if (role == ND_RANK_SEND) return nd_rank_over_link(io, c->src_memory, c->dst_memory, c->bytes);
    if (role == ND_RANK_RECV) return nd_rank_over_link(io, c->dst_memory, c->src_memory, c->bytes);
    return 0;
}

/* A step that makes a partial reduction is joined too, though its
 * broadcast is held to the end of its run of such steps (executor.c
 * send_partials): so that no transfer of the link's lane is issued inside
 * the run, and every rank sends the held broadcasts before the same step. */
static int makes_transfers(const nd_plan *plan, const nd_step *st, nd_rank_role role) {
    return role == ND_RANK_SEND || role == ND_RANK_RECV || role == ND_RANK_GATHER ||
           (role == ND_RANK_RUN && nd_rank_makes_partial(plan, st));
}

void nd_rank_lanes_free(nd_rank_lanes *lanes) {
    if (!lanes) return;
    free(lanes->steps);
    free(lanes->link_slots);
    free(lanes->order);
    free(lanes);
}

/* Whether steps i and j touch a common temporary (whatever the bytes). */
static int share_temp(const nd_plan *plan, const access_list *L, const int32_t *first, int32_t i, int32_t j) {
    for (int32_t a = first[i]; a < first[i + 1]; a++) {
        if (plan->slots[L->a[a].slot].role != ND_SLOT_TEMP) continue;
        for (int32_t b = first[j]; b < first[j + 1]; b++)
            if (L->a[b].slot == L->a[a].slot) return 1;
    }
    return 0;
}

/* The order the steps are issued in: the plan's, but each transfer on the
 * link's lane moved up to just after the last step it must follow (the
 * step it waits for, the transfer before it, the last joined step, a step
 * sharing a temporary with it: that memory goes back to the pool after
 * its last step in the plan's order). A device's halo then goes out while
 * its interior is being enqueued, not after it: a GPU that has queued the
 * interior's blocks first starts the link's kernel only as they retire. */
static int issue_order(const nd_plan *plan, nd_rank_lanes *R, const access_list *L, const int32_t *first) {
    const int32_t n = plan->n_steps;
    int32_t *order = nd_malloc(sizeof(int32_t) * (size_t)(n + 1)), *pos = nd_malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!order || !pos) {
        free(order);
        free(pos);
        return 0;
    }
    int32_t len = 0, floor = 0; /* no link step goes before order[floor - 1] */
    for (int32_t i = 0; i < n; i++) {
        const nd_rank_lane *ln = &R->steps[i];
        if (ln->lane != ND_RANK_LANE_LINK || !ln->run) {
            pos[i] = len;
            order[len++] = i;
            if (ln->join) floor = len;
            continue;
        }
        int32_t at = floor;
        if (ln->after >= 0 && pos[ln->after] + 1 > at) at = pos[ln->after] + 1;
        for (int32_t k = len - 1; k >= at; k--) {
            int32_t j = order[k];
            if (R->steps[j].lane == ND_RANK_LANE_LINK || share_temp(plan, L, first, i, j)) {
                at = k + 1;
                break;
            }
        }
        for (int32_t k = len; k > at; k--) {
            order[k] = order[k - 1];
            pos[order[k]] = k;
        }
        order[at] = i;
        pos[i] = at;
        len++;
    }
    free(pos);
    R->order = order;
    return 1;
}

static nd_rank_lanes *make_lanes(const nd_plan *plan, const nd_rank_io *io) {
    const int32_t n = plan->n_steps;
    nd_rank_lanes *R = nd_calloc(1, sizeof *R);
    int32_t *first = nd_malloc(sizeof(int32_t) * (size_t)(n + 1)); /* step i's accesses: [first[i], first[i + 1]) */
    access_list L = {0};
    int ok = R && first;
    if (ok) {
        R->rank = io->rank;
        R->steps = nd_calloc((size_t)n + 1, sizeof *R->steps);
        R->link_slots = nd_calloc((size_t)plan->n_slots + 1, 1);
        ok = R->steps && R->link_slots;
    }
    int any_link = 0;
    /* synced[lane]: the latest step of the other lane that lane has waited
     * for (a wait for a step orders after every earlier step of its lane). */
    int32_t synced[2] = {-1, -1};
    for (int32_t i = 0; i < n && ok; i++) {
        const nd_step *st = &plan->steps[i];
        nd_rank_lane *ln = &R->steps[i];
        first[i] = L.n;
        ln->after = -1;
        ln->lane = ND_RANK_LANE_STEPS;
        nd_rank_role role = st->part == ND_PART_NONE ? ND_RANK_RUN : nd_rank_role_of(plan, st, io->rank);
        if (role == ND_RANK_SKIP) continue;
        ln->run = 1;
        ok = step_accesses(plan, st, role, &L);
        if (!ok) break;
        if (link_lane(st, role, io)) {
            ln->lane = ND_RANK_LANE_LINK;
            any_link = 1;
            for (int32_t k = first[i]; k < L.n; k++) R->link_slots[L.a[k].slot] = 1;
        } else if (makes_transfers(plan, st, role)) {
            /* Joined before and after: each lane has waited for every
             * earlier step of the other, and the step itself for both. */
            ln->join = 1;
            synced[ND_RANK_LANE_STEPS] = synced[ND_RANK_LANE_LINK] = i;
            continue;
        }
        const int lane = ln->lane;
        /* The latest step of the other lane it conflicts with that this
         * lane has not waited for yet (the scan stops at a joined step:
         * both lanes waited for it). */
        for (int32_t j = i - 1; j > synced[lane]; j--) {
            const nd_rank_lane *o = &R->steps[j];
            if (!o->run || o->lane == lane) continue;
            if (!conflict(&L.a[first[i]], L.n - first[i], &L.a[first[j]], first[j + 1] - first[j])) continue;
            ln->after = j;
            R->steps[j].marks = 1;
            synced[lane] = j;
            break;
        }
    }
    if (ok) first[n] = L.n;
    if (ok && any_link) ok = issue_order(plan, R, &L, first);
    free(first);
    free(L.a);
    if (!ok || !any_link) {
        nd_rank_lanes_free(R);
        return NULL;
    }
    return R;
}

const nd_rank_lanes *nd_rank_lanes_of(nd_plan *plan, const nd_rank_io *io) {
    nd_backend *be = io->be;
    if (!io->link || !be->rank_lane_mark || !be->rank_lane_wait || !be->rank_lane_join) return NULL;
    if (plan->rank_lanes && plan->rank_lanes->rank == io->rank) return plan->rank_lanes;
    if (plan->rank_lanes_tried) return NULL;
    plan->rank_lanes_tried = 1;
    plan->rank_lanes = make_lanes(plan, io);
    const nd_rank_lanes *R = plan->rank_lanes;
    if (R && nd_log_enabled(3)) {
        int32_t link = 0, waits = 0, joins = 0;
        for (int32_t i = 0; i < plan->n_steps; i++) {
            link += R->steps[i].run && R->steps[i].lane == ND_RANK_LANE_LINK;
            waits += R->steps[i].after >= 0;
            joins += R->steps[i].join;
        }
        nd_logf(3, "plan %016llx: rank %d runs %d transfers on the link's lane beside its steps, with %d waits "
                "between the lanes and %d joins", (unsigned long long)plan->key, (int)io->rank, (int)link, (int)waits,
                (int)joins);
        for (int32_t i = 0; i < plan->n_steps; i++) {
            char text[200];
            if (!R->steps[i].run) continue;
            nd_step_label(&plan->steps[i], text, sizeof text);
            nd_logf(3, "  step %d (%s): %s lane%s%s, after %d", i, text,
                    R->steps[i].lane == ND_RANK_LANE_LINK ? "link's" : "steps'", R->steps[i].join ? ", joined" : "",
                    R->steps[i].marks ? ", marked" : "", (int)R->steps[i].after);
        }
    }
    return R;
}
