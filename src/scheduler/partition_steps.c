/* The steps of a partitioned plan (partition.c decided what splits): per
 * split slot one piece per device (its owned rows plus ghost rows, a
 * temporary of the plan); a scatter of the whole array into the pieces
 * before the first kernel that needs its old value; per partitioned
 * kernel one clone per device over the iteration rows whose anchor row
 * the device owns, reading and writing the pieces, and (a reduction over
 * axis 0) a partial per device and a kernel folding them in device order;
 * halo copies of the neighbours' owned rows into the ghost rows when a
 * kernel reads a slot at a row shift after a write; a gather of the owned
 * rows back into every written array that outlives the plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/step_kinds.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/grow.h"
#include "scheduler/kernel_builder.h"
#include "scheduler/partition_internal.h"

typedef nd_part_emitter emitter;

static nd_step *push(emitter *E) {
    if (!nd_grow((void **)&E->out, &E->cap_out, E->n_out + 1, sizeof *E->out)) return NULL;
    nd_step *s = &E->out[E->n_out++];
    memset(s, 0, sizeof *s);
    s->first_node = s->last_node = -1;
    return s;
}

static int32_t new_temp(emitter *E, size_t bytes, int32_t device) {
    nd_plan *p = E->P->plan;
    if (!nd_grow((void **)&p->slots, &E->cap_slots, (uint32_t)p->n_slots + 1, sizeof *p->slots)) return -1;
    nd_plan_slot *s = &p->slots[p->n_slots];
    memset(s, 0, sizeof *s);
    s->role = ND_SLOT_TEMP;
    s->bytes = bytes ? bytes : 1;
    s->memory = p->memory;
    s->first_step = s->last_step = -1;
    s->storage = -1;
    s->device = (uint8_t)(device + 1);
    s->split_temp = 1;
    s->last_writer = -1;
    return p->n_slots++;
}

static int copy_step(emitter *E, int32_t src, size_t src_off, int32_t dst, size_t dst_off, size_t bytes, int part,
                     int32_t device, const nd_step *orig) {
    if (bytes == 0) return 1;
    nd_step *s = push(E);
    if (!s) return 0;
    int32_t m = E->P->plan->memory;
    s->kind = ND_STEP_COPY;
    s->copy = (nd_copy_desc){src, dst, m, m, bytes, src_off, dst_off};
    s->part = (uint8_t)part;
    s->device = (uint8_t)(device + 1);
    s->first_node = orig->first_node;
    s->last_node = orig->last_node;
    return 1;
}

/* Device d's piece of the buffer (or twin) of slot s: a slot bound to
 * memory the buffer keeps after the flush (graph/buffer.h). */
static int32_t new_piece(emitter *E, int32_t s, size_t bytes, int32_t device) {
    int32_t t = new_temp(E, bytes, device);
    if (t < 0) return -1;
    nd_plan_slot *sl = &E->P->plan->slots[t];
    const nd_plan_slot *whole = &E->P->plan->slots[s];
    sl->role = ND_SLOT_PIECE;
    sl->walk_index = whole->walk_index;
    sl->piece_of_twin = whole->role == ND_SLOT_TWIN;
    sl->used = 1;
    return t;
}

/* The pieces of split slot s (their rows were found by partition.c). */
static int make_pieces(emitter *E, int32_t s) {
    nd_part_slot *sp = &E->P->sp[s];
    size_t rb = (size_t)sp->row * sp->item;
    for (int32_t d = 0; d < E->P->n_dev; d++) {
        sp->piece[d] = -1;
        if (sp->pn[d] <= 0) continue;
        size_t bytes = (size_t)sp->pn[d] * rb;
        sp->piece[d] = sp->persist ? new_piece(E, s, bytes, d) : new_temp(E, bytes, d);
        if (sp->piece[d] < 0) return 0;
        /* Messages about the piece name the array's value. */
        const nd_plan_slot *whole = &E->P->plan->slots[s];
        E->P->plan->slots[sp->piece[d]].last_writer = whole->role != ND_SLOT_TEMP ? whole->last_writer : -1;
    }
    return 1;
}

static int scatter(emitter *E, int32_t s, const nd_step *orig) {
    nd_part_slot *sp = &E->P->sp[s];
    size_t rb = (size_t)sp->row * sp->item;
    for (int32_t d = 0; d < E->P->n_dev; d++)
        if (sp->piece[d] >= 0 &&
            !copy_step(E, s, (size_t)sp->p0[d] * rb, sp->piece[d], 0, (size_t)sp->pn[d] * rb, ND_PART_SCATTER, d, orig))
            return 0;
    E->P->plan->n_scattered++;
    return 1;
}

/* Every piece's ghost rows from the devices that own them. */
static int halo(emitter *E, int32_t s, const nd_step *orig) {
    nd_part_slot *sp = &E->P->sp[s];
    int32_t n = E->P->n_dev;
    size_t rb = (size_t)sp->row * sp->item;
    for (int32_t d = 0; d < n; d++) {
        if (sp->piece[d] < 0) continue;
        int64_t lo = nd_split_row(sp->rows, n, d), hi = nd_split_row(sp->rows, n, d + 1);
        int64_t end = sp->p0[d] + sp->pn[d];
        if (hi <= lo) lo = hi = end; /* owns none: every row is a ghost */
        int64_t ranges[2][2] = {{sp->p0[d], lo < end ? lo : end}, {hi > sp->p0[d] ? hi : sp->p0[d], end}};
        for (int r = 0; r < 2; r++)
            for (int32_t e = 0; e < n; e++) {
                if (e == d || sp->piece[e] < 0) continue;
                int64_t elo = nd_split_row(sp->rows, n, e), ehi = nd_split_row(sp->rows, n, e + 1);
                int64_t a = ranges[r][0] > elo ? ranges[r][0] : elo, b = ranges[r][1] < ehi ? ranges[r][1] : ehi;
                if (b <= a) continue;
                if (!copy_step(E, sp->piece[e], (size_t)(a - sp->p0[e]) * rb, sp->piece[d],
                               (size_t)(a - sp->p0[d]) * rb, (size_t)(b - a) * rb, ND_PART_HALO, d, orig))
                    return 0;
            }
    }
    return 1;
}

/* The owned rows of every piece (rows [p0, p0 + pn) of `piece`) back into
 * the whole memory of slot s. */
static int gather_from(emitter *E, int32_t s, int32_t n, int64_t rows, size_t rb, const int64_t *p0,
                       const int32_t *piece, const nd_step *orig) {
    for (int32_t d = 0; d < n; d++) {
        if (piece[d] < 0) continue;
        int64_t lo = nd_split_row(rows, n, d), hi = nd_split_row(rows, n, d + 1);
        if (!copy_step(E, piece[d], (size_t)(lo - p0[d]) * rb, s, (size_t)lo * rb, (size_t)(hi - lo) * rb,
                       ND_PART_GATHER, d, orig))
            return 0;
    }
    E->P->plan->n_gathered++;
    return 1;
}

static int gather(emitter *E, int32_t s, const nd_step *orig) {
    nd_part_slot *sp = &E->P->sp[s];
    return gather_from(E, s, E->P->n_dev, sp->rows, (size_t)sp->row * sp->item, sp->p0, sp->piece, orig);
}

/* The pieces slot s holds from an earlier flush, back into its whole
 * memory before the plan. */
static int gather_held(emitter *E, int32_t s, const nd_step *orig) {
    nd_part_slot *sp = &E->P->sp[s];
    const nd_buffer_pieces *h = sp->held;
    for (int32_t d = 0; d < h->n_dev; d++) {
        sp->old_piece[d] = -1;
        if (h->pn[d] <= 0) continue;
        sp->old_piece[d] = new_piece(E, s, (size_t)h->pn[d] * h->row_bytes, d);
        if (sp->old_piece[d] < 0) return 0;
    }
    return gather_from(E, s, h->n_dev, h->rows, h->row_bytes, h->p0, sp->old_piece, orig);
}

/* What the plan leaves in the pieces of every buffer and twin it splits
 * or gathers (nd_plan.pieces, applied when the plan is submitted). */
static int record_pieces(nd_partitioner *P, int32_t n_slots0) {
    nd_plan *plan = P->plan;
    int32_t n = 0;
    for (int32_t s = 0; s < n_slots0; s++) n += P->sp[s].persist || P->sp[s].held;
    plan->n_pieces = 0;
    if (n == 0) return 1;
    plan->pieces = nd_calloc((size_t)n, sizeof *plan->pieces);
    if (!plan->pieces) return 0;
    for (int32_t s = 0; s < n_slots0; s++) {
        const nd_part_slot *sp = &P->sp[s];
        if (!sp->persist && !sp->held) continue;
        nd_plan_pieces *o = &plan->pieces[plan->n_pieces++];
        o->walk_index = plan->slots[s].walk_index;
        o->twin = plan->slots[s].role == ND_SLOT_TWIN;
        if (sp->persist) {
            /* The pieces hold the value; the whole memory does too if the
             * plan only read it (scattered, or adopted while valid). */
            o->keep = 1;
            o->whole_stale = sp->written || (sp->adopt && sp->held->whole_stale);
            o->ghosts_fresh = !sp->stale;
            o->n_dev = P->n_dev;
            o->row_bytes = (size_t)sp->row * sp->item;
            o->rows = sp->rows;
            memcpy(o->p0, sp->p0, sizeof o->p0);
            memcpy(o->pn, sp->pn, sizeof o->pn);
        } else {
            /* Held pieces a step writes past: of no use after it. A plan
             * that only read them leaves them, gathered or not. */
            const nd_buffer_pieces *h = sp->held;
            o->keep = !sp->plan_writes && !sp->written;
            o->whole_stale = h->whole_stale && !sp->gather_first;
            o->ghosts_fresh = h->ghosts_fresh;
            o->n_dev = h->n_dev;
            o->row_bytes = h->row_bytes;
            o->rows = h->rows;
            memcpy(o->p0, h->p0, sizeof o->p0);
            memcpy(o->pn, h->pn, sizeof o->pn);
        }
    }
    return 1;
}

/* The kernel of device d over iteration rows [i0, i1): split slots read
 * and write d's pieces (global row r at piece row r - p0), whole arrays
 * are read at their own rows, affine indices (random draws) keep their
 * logical values, and a reduction over axis 0 writes partial `chunk`. */
static int clone_kernel(emitter *E, const nd_step *orig, int32_t d, int64_t i0, int64_t i1, int32_t partial,
                        int64_t chunk, int64_t out_n, int strip) {
    nd_partitioner *P = E->P;
    const nd_kernel *k0 = orig->kernel;
    nd_kernel *k = nd_kernel_clone(k0);
    int32_t *slots = nd_malloc(sizeof(int32_t) * (size_t)(k0->n_slots + 1));
    int32_t *params = nd_malloc(sizeof(int32_t) * (size_t)(k0->n_params + 1));
    uint8_t *acc = nd_malloc((size_t)k0->n_slots + 1);
    nd_step *s = k && slots && params && acc ? push(E) : NULL;
    if (!s) {
        free(k);
        free(slots);
        free(params);
        free(acc);
        return 0;
    }
    memcpy(slots, orig->slots, sizeof(int32_t) * (size_t)k0->n_slots);
    memcpy(params, orig->params, sizeof(int32_t) * (size_t)k0->n_params);
    memcpy(acc, orig->slot_access, (size_t)k0->n_slots);
    int reduce0 = k->has_reduce && (k->reduce.axes & 1u);
    k->shape[0] = i1 - i0;
    for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n; j++) {
        nd_ir_access *a = nd_kernel_access(k, j);
        if (reduce0 && j == n - 1) continue;
        const nd_part_slot *sp = &P->sp[orig->slots[a->slot]];
        a->offset += (i0 - (sp->split ? sp->p0[d] : 0)) * a->strides[0];
    }
    for (int32_t j = 0; j < k->n_indices; j++) k->indices[j].offset += i0 * k->indices[j].strides[0];
    for (int32_t ks = 0; ks < k->n_slots; ks++) {
        const nd_part_slot *sp = &P->sp[orig->slots[ks]];
        if (sp->split) slots[ks] = sp->piece[d];
    }
    if (reduce0) {
        /* Partial `chunk`: outputs contiguous over the kept axes. */
        int64_t stride = 1;
        for (int a = k->ndim - 1; a >= 0; a--) {
            if (k->reduce.axes & (1u << a)) {
                k->reduce.out.strides[a] = 0;
            } else {
                k->reduce.out.strides[a] = stride;
                stride *= k->shape[a];
            }
        }
        k->reduce.out.offset = chunk * out_n;
        slots[k->reduce.out.slot] = partial;
    }
    k->hash = nd_kernel_hash(k);
    s->kind = ND_STEP_KERNEL;
    s->kernel = k;
    s->slots = slots;
    s->params = params;
    s->slot_access = acc;
    s->part = ND_PART_KERNEL;
    s->device = (uint8_t)(d + 1);
    s->strip = (uint8_t)strip;
    s->first_node = orig->first_node;
    s->last_node = orig->last_node;
    return 1;
}

/* A COMBINE step of kernel k (taken: freed on failure) over the plan
 * slots `in` (read, n_in of them) into orig's reduction output. */
static int push_combine(emitter *E, const nd_step *orig, nd_kernel *k, const int32_t *in, int n_in) {
    int32_t *slots = nd_malloc(sizeof(int32_t) * (size_t)(n_in + 1)), *params = nd_malloc(sizeof(int32_t));
    uint8_t *acc = nd_malloc((size_t)n_in + 1);
    nd_step *s = k && slots && params && acc ? push(E) : NULL;
    if (!s) {
        free(k);
        free(slots);
        free(params);
        free(acc);
        return 0;
    }
    for (int i = 0; i < n_in; i++) {
        slots[i] = in[i];
        acc[i] = ND_ACCESS_READ;
    }
    slots[n_in] = orig->slots[orig->kernel->reduce.out.slot];
    acc[n_in] = ND_ACCESS_WRITE;
    s->kind = ND_STEP_KERNEL;
    s->kernel = k;
    s->slots = slots;
    s->params = params;
    s->slot_access = acc;
    s->part = ND_PART_COMBINE;
    s->first_node = orig->first_node;
    s->last_node = orig->last_node;
    return 1;
}

/* The fold of `chunks` partials over the chunk axis into the real output,
 * in device order. */
static int combine_kernel(emitter *E, const nd_step *orig, int32_t partial, int64_t chunks, int64_t out_n) {
    nd_kernel *k = nd_kernel_combine_partials(orig->kernel, chunks, out_n, "combine_devices");
    return push_combine(E, orig, k, &partial, 1);
}

/* argmin/argmax over axis 0: per device two clones over its rows, the
 * argmin (argmax) into `partial` (its index within the device's rows) and
 * the min (max) into a partial of values, then one kernel folding the
 * (value, global index) pairs in device order with NumPy's rule (first
 * NaN, then strictly better). min and max propagate NaN as argmin and
 * argmax pick it, so each value partial is the value at its index. The
 * input is read twice; a reduction writing both would read it once. */
static int arg_partials(emitter *E, const nd_step *orig, const int64_t *i0s, const int64_t *i1s,
                        int32_t partial, int64_t chunks, int64_t out_n) {
    nd_partitioner *P = E->P;
    const nd_kernel *k0 = orig->kernel;
    const nd_dtype vdt = (nd_dtype)k0->insts[k0->reduce.value].dtype;
    int32_t values = new_temp(E, (size_t)(chunks * out_n) * nd_dtype_size(vdt), -1);
    if (values < 0) return 0;
    /* The reduced index advances by the other reduced axes' extents per
     * row of axis 0 (reduced axes keep their order: NumPy's flat index). */
    int64_t per_row = 1;
    for (int a = 1; a < k0->ndim; a++)
        if (k0->reduce.axes & (1u << a)) per_row *= k0->shape[a];
    int64_t base[ND_MAX_SPLIT], c = 0;
    for (int32_t d = 0; d < P->n_dev; d++) {
        if (i1s[d] <= i0s[d]) continue;
        base[c] = i0s[d] * per_row;
        if (!clone_kernel(E, orig, d, i0s[d], i1s[d], partial, c, out_n, ND_STRIP_WHOLE)) return 0;
        if (!clone_kernel(E, orig, d, i0s[d], i1s[d], values, c, out_n, ND_STRIP_WHOLE)) return 0;
        /* The value clone stores nothing: the index clone wrote them. */
        nd_kernel *kv = E->out[E->n_out - 1].kernel;
        kv->n_stores = 0;
        kv->reduce.kind = k0->reduce.kind == ND_REDUCE_ARGMIN ? ND_REDUCE_MIN : ND_REDUCE_MAX;
        kv->reduce.out_dtype = (uint8_t)vdt;
        kv->reduce.out.dtype = (uint8_t)vdt;
        kv->hash = nd_kernel_hash(kv);
        c++;
    }
    nd_kernel *k = nd_kernel_combine_arg_partials(k0, chunks, out_n, base, "combine_devices");
    return push_combine(E, orig, k, (const int32_t[]){values, partial}, 2);
}

/* The access bits of plan slot s in kernel step st (several kernel slots
 * may name it). */
static uint8_t access_of(const nd_step *st, int32_t s) {
    uint8_t bits = 0;
    for (int32_t ks = 0; ks < st->kernel->n_slots; ks++)
        if (st->slots[ks] == s) bits |= st->slot_access[ks];
    return bits;
}

/* Whether some device's clone of kernel step i loads rows of split slot
 * s that its piece holds as ghost rows. */
static int reads_ghosts(const nd_partitioner *P, int32_t i, int32_t s) {
    const nd_part_slot *sp = &P->sp[s];
    for (int32_t d = 0; d < P->n_dev; d++) {
        int64_t lo, hi;
        nd_part_need(P, i, s, d, &lo, &hi);
        if (hi <= lo) continue;
        if (lo < nd_split_row(sp->rows, P->n_dev, d) || hi > nd_split_row(sp->rows, P->n_dev, d + 1)) return 1;
    }
    return 0;
}

/* The clones of kernel step i (no reduction over axis 0), edge strips
 * first (partition_edges.c): every device's strips, or its whole clone
 * where it does not split, then the interiors of those that split. */
static int edges_first(emitter *E, int32_t i, const int64_t *i0s, const int64_t *i1s) {
    nd_partitioner *P = E->P;
    const nd_step *orig = &P->plan->steps[i];
    int64_t c0s[ND_MAX_SPLIT], c1s[ND_MAX_SPLIT];
    uint8_t split[ND_MAX_SPLIT];
    for (int32_t d = 0; d < P->n_dev; d++) {
        if (i1s[d] <= i0s[d]) continue;
        split[d] = (uint8_t)nd_part_edge_split(P, i, d, &c0s[d], &c1s[d]);
        if (!split[d]) {
            if (!clone_kernel(E, orig, d, i0s[d], i1s[d], -1, 0, 0, ND_STRIP_WHOLE)) return 0;
            continue;
        }
        if (c0s[d] > i0s[d] && !clone_kernel(E, orig, d, i0s[d], c0s[d], -1, 0, 0, ND_STRIP_EDGE)) return 0;
        if (i1s[d] > c1s[d] && !clone_kernel(E, orig, d, c1s[d], i1s[d], -1, 0, 0, ND_STRIP_EDGE)) return 0;
    }
    for (int32_t d = 0; d < P->n_dev; d++)
        if (i1s[d] > i0s[d] && split[d] && !clone_kernel(E, orig, d, c0s[d], c1s[d], -1, 0, 0, ND_STRIP_INTERIOR))
            return 0;
    return 1;
}

static int partition_step(emitter *E, int32_t i) {
    nd_partitioner *P = E->P;
    const nd_step *orig = &P->plan->steps[i];
    const nd_kernel *k = orig->kernel;
    /* Before the kernel: its split slots in pieces with fresh ghosts. */
    for (int32_t ks = 0; ks < k->n_slots; ks++) {
        int32_t s = orig->slots[ks];
        nd_part_slot *sp = &P->sp[s];
        if (!sp->split) continue;
        if (!sp->in_pieces) {
            uint8_t bits = access_of(orig, s);
            sp->in_pieces = 1;
            if (P->plan->slots[s].role != ND_SLOT_TEMP && bits != ND_ACCESS_WRITE && !sp->undefined) {
                if (!scatter(E, s, orig)) return 0;
            } else {
                sp->stale = 1; /* written whole: ghosts come after */
            }
        } else if (sp->stale && sp->ghosts && reads_ghosts(P, i, s)) {
            if (!halo(E, s, orig)) return 0;
            sp->stale = 0;
        }
    }
    int reduce0 = k->has_reduce && (k->reduce.axes & 1u);
    int64_t out_n = 1, chunks = 0;
    int32_t partial = -1;
    for (int d = 0; d < k->ndim; d++)
        if (!(k->reduce.axes & (1u << d))) out_n *= k->shape[d];
    int64_t i0s[ND_MAX_SPLIT], i1s[ND_MAX_SPLIT];
    for (int32_t d = 0; d < P->n_dev; d++) {
        nd_part_iter(P, i, d, &i0s[d], &i1s[d]);
        if (i1s[d] > i0s[d]) chunks++;
    }
    if (reduce0) {
        partial = new_temp(E, (size_t)(chunks * out_n) * nd_dtype_size((nd_dtype)k->reduce.out_dtype), -1);
        if (partial < 0) return 0;
    }
    if (reduce0 && nd_reduce_is_arg((nd_reduce_kind)k->reduce.kind)) {
        if (!arg_partials(E, orig, i0s, i1s, partial, chunks, out_n)) return 0;
    } else if (reduce0) {
        int64_t c = 0;
        for (int32_t d = 0; d < P->n_dev; d++) {
            if (i1s[d] <= i0s[d]) continue;
            if (!clone_kernel(E, orig, d, i0s[d], i1s[d], partial, c++, out_n, ND_STRIP_WHOLE)) return 0;
        }
        if (!combine_kernel(E, orig, partial, chunks, out_n)) return 0;
    } else if (!edges_first(E, i, i0s, i1s)) {
        return 0;
    }
    for (int32_t ks = 0; ks < k->n_slots; ks++) {
        nd_part_slot *sp = &P->sp[orig->slots[ks]];
        if (sp->split && (orig->slot_access[ks] & ND_ACCESS_WRITE)) {
            sp->written = 1;
            sp->stale = 1;
        }
    }
    return 1;
}

static void free_made(emitter *E) {
    for (uint32_t i = 0; i < E->n_out; i++)
        if (E->out[i].part == ND_PART_KERNEL || E->out[i].part == ND_PART_COMBINE) nd_step_free(&E->out[i]);
    free(E->out);
}

nd_status nd_part_rewrite(nd_partitioner *P) {
    nd_plan *plan = P->plan;
    emitter E = {.P = P, .cap_slots = (uint32_t)plan->n_slots};
    int32_t n_slots0 = plan->n_slots;
    int32_t *remap = nd_malloc(sizeof(int32_t) * (size_t)(plan->n_steps + 1));
    int ok = remap != NULL;
    plan->n_scattered = plan->n_gathered = 0;
    for (int32_t s = 0; s < n_slots0 && ok; s++) {
        nd_part_slot *sp = &P->sp[s];
        if (sp->gather_first) ok = gather_held(&E, s, &plan->steps[0]);
        if (ok && sp->split) ok = make_pieces(&E, s);
        /* Pieces held from the flush before hold the value; their ghost
         * rows an older one, unless that plan left them fresh. */
        if (sp->adopt) sp->in_pieces = 1, sp->stale = !sp->held->ghosts_fresh;
    }
    for (int32_t i = 0; i < plan->n_steps && ok; i++) {
        remap[i] = (int32_t)E.n_out;
        if (P->kpart[i]) {
            ok = plan->steps[i].kind == ND_STEP_MATMUL ? nd_part_matmul_step(&E, i) : partition_step(&E, i);
            /* Its nodes name its first kernel (after any copies). */
            for (uint32_t j = (uint32_t)remap[i]; ok && j < E.n_out; j++)
                if (E.out[j].part == ND_PART_KERNEL) {
                    remap[i] = (int32_t)j;
                    break;
                }
            continue;
        }
        nd_step *s = push(&E);
        ok = s != NULL;
        if (ok) *s = plan->steps[i];
    }
    /* The written arrays that outlive the plan go back whole. */
    const nd_step *last = &plan->steps[plan->n_steps - 1];
    for (int32_t s = 0; s < n_slots0 && ok; s++)
        if (P->sp[s].split && P->sp[s].written && plan->slots[s].role != ND_SLOT_TEMP && !P->sp[s].persist)
            ok = gather(&E, s, last);
    if (ok) ok = record_pieces(P, n_slots0);
    if (!ok) {
        free_made(&E);
        free(remap);
        plan->n_slots = n_slots0;
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory while partitioning");
    }
    int32_t kernels = 0, copies = 0;
    for (uint32_t i = 0; i < E.n_out; i++) {
        kernels += E.out[i].part == ND_PART_KERNEL;
        copies += E.out[i].part >= ND_PART_SCATTER;
    }
    nd_logf(3, "plan %016llx: partitioned over %d devices: %d device kernels, %d scatter/halo/gather copies, %d "
            "arrays kept whole", (unsigned long long)plan->key, P->n_dev, kernels, copies, plan->n_whole);
    plan->n_split_kernels = 0;
    for (int32_t i = 0; i < plan->n_steps; i++)
        if (P->kpart[i]) {
            plan->n_split_kernels += plan->steps[i].kind == ND_STEP_KERNEL; /* a matmul: device_matmuls */
            nd_step_free(&plan->steps[i]);
        }
    for (int32_t i = 0; i < plan->n_nodes; i++)
        if (plan->node_step[i] >= 0) plan->node_step[i] = remap[plan->node_step[i]];
    free(remap);
    free(plan->steps);
    plan->steps = E.out;
    plan->n_steps = (int32_t)E.n_out;
    return ND_OK;
}

/* For partition_matmul.c. */
nd_step *nd_part_push(emitter *E) { return push(E); }
int32_t nd_part_new_temp(emitter *E, size_t bytes, int32_t device) { return new_temp(E, bytes, device); }
int nd_part_copy(emitter *E, int32_t src, size_t src_off, int32_t dst, size_t dst_off, size_t bytes, int part,
                 int32_t device, const nd_step *orig) {
    return copy_step(E, src, src_off, dst, dst_off, bytes, part, device, orig);
}
int nd_part_halo(emitter *E, int32_t s, const nd_step *orig) { return halo(E, s, orig); }
