/* Streaming of large host arrays through the device in chunks.
 *
 * A plan that must first copy a large host buffer to the device would hold
 * the whole buffer there (and fail when it does not fit) and would compute
 * only after the last byte arrived. When the only kernel reading such
 * buffers walks them row by row along its first iteration axis, that
 * kernel is instead run once per chunk of rows: each chunk is copied into a
 * staging temporary and computed, and the copy of chunk c+1 is issued
 * before the kernel of chunk c, so the storages of successive chunks
 * alternate (double buffering) and the copy stream runs ahead of the
 * compute stream. A reduction over the first axis writes one partial result
 * per chunk, and a last kernel combines them (same reduction kind over the
 * chunk axis); a kernel that keeps the first axis writes its rows of the
 * output directly.
 *
 * Applies when: the plan runs on a device, a host buffer copied in is at
 * least two chunks long, one kernel reads all such buffers and nothing
 * else reads them, every load of them steps a whole row (stride > 0 on axis
 * 0, the rest of the access inside one row), and its reduction, if any, is
 * one whose partial results combine (not an argmin/argmax, not a 16-bit
 * float accumulation). Otherwise the plan is left as it is. */
#include "scheduler/chunking.h"
#include "common/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/grow.h"
#include "backends/step_kinds.h"
#include "scheduler/kernel_builder.h"

typedef struct {
    int32_t slot;      /* plan slot of the host buffer */
    int64_t row;       /* elements per row (the loads' stride on axis 0) */
    size_t item;       /* element size */
} big_buffer;

#define MAX_BIG 8

typedef struct {
    nd_plan *plan;
    const nd_flush_walk *walk;
    int32_t kstep; /* the kernel that reads the big buffers */
    big_buffer big[MAX_BIG];
    int n_big;
    int64_t rows, rows_per_chunk, n_chunks;
    int64_t out_n; /* reduction over axis 0: outputs per chunk */
    nd_step *out;  /* the new step list */
    uint32_t n_out, cap_out;
} chunker;

static int is_big(const chunker *C, int32_t slot) {
    for (int b = 0; b < C->n_big; b++)
        if (C->big[b].slot == slot) return b;
    return -1;
}

/* Finds the large host->device copies and the one kernel reading them. */
static int find_candidates(chunker *C, size_t chunk_bytes) {
    nd_plan *p = C->plan;
    C->kstep = -1;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const nd_step *st = &p->steps[i];
        if (st->kind != ND_STEP_COPY || st->copy.src_slot != st->copy.dst_slot) continue;
        if (st->copy.dst_memory != p->memory || st->copy.src_memory == p->memory) continue;
        if (st->copy.bytes < 2 * chunk_bytes) continue;
        if (C->n_big == MAX_BIG) return 0;
        C->big[C->n_big++] = (big_buffer){st->copy.src_slot, 0, 0};
    }
    if (!C->n_big) return 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const nd_step *st = &p->steps[i];
        int reads = 0;
        /* Copies of a big buffer are the ones being replaced; any other
         * step that touches one must be a kernel that only reads it. */
        if (nd_step_is_copy(st)) continue;
        for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
            nd_step_access a = nd_step_access_at(st, j, p->memory);
            if (is_big(C, a.slot) < 0) continue;
            if (st->kind != ND_STEP_KERNEL || a.mode != ND_ACCESS_READ) return 0;
            reads = 1;
        }
        if (!reads) continue;
        if (C->kstep >= 0) return 0; /* two kernels read them */
        C->kstep = i;
    }
    return C->kstep >= 0;
}

/* Every load of a big buffer steps whole rows along axis 0. */
static int rows_ok(chunker *C) {
    const nd_step *st = &C->plan->steps[C->kstep];
    const nd_kernel *k = st->kernel;
    C->rows = k->shape[0];
    if (C->rows < 2) return 0;
    for (int32_t j = 0; j < k->n_loads; j++) {
        const nd_ir_access *a = &k->loads[j];
        int b = is_big(C, st->slots[a->slot]);
        if (b < 0) continue;
        if (nd_ir_load_gathered(k, j)) return 0; /* read anywhere: no chunk holds it */
        int64_t span = a->offset;
        for (int d = 1; d < k->ndim; d++) {
            if (a->strides[d] < 0) return 0;
            span += (k->shape[d] - 1) * a->strides[d];
        }
        int64_t row = a->strides[0];
        size_t item = nd_dtype_size((nd_dtype)a->dtype);
        if (row <= 0 || a->offset < 0 || span >= row) return 0;
        /* loads of one buffer in two dtypes (a component view and its
         * complex base) count rows in different units */
        if (C->big[b].row && (C->big[b].row != row || C->big[b].item != item)) return 0;
        C->big[b].row = row;
        C->big[b].item = item;
        const nd_buffer *buf = C->walk->buffers[C->plan->slots[C->big[b].slot].walk_index];
        if ((size_t)(C->rows * row) * C->big[b].item > buf->nbytes) return 0;
    }
    for (int b = 0; b < C->n_big; b++)
        if (!C->big[b].row) return 0; /* a big buffer not loaded (only indexed) */
    if (k->has_reduce && (k->reduce.axes & 1u)) {
        nd_reduce_kind kind = (nd_reduce_kind)k->reduce.kind;
        if (nd_reduce_is_arg(kind)) return 0;
        nd_dtype od = (nd_dtype)k->reduce.out_dtype;
        if (od == ND_FLOAT16 || od == ND_BFLOAT16) return 0;
        /* The output's slot becomes the partials: nothing else may use it. */
        for (int32_t j = 0; j < k->n_loads; j++)
            if (k->loads[j].slot == k->reduce.out.slot) return 0;
        for (int32_t j = 0; j < k->n_stores; j++)
            if (k->stores[j].at.slot == k->reduce.out.slot) return 0;
    }
    return 1;
}

static nd_step *push(chunker *C) {
    if (!nd_grow((void **)&C->out, &C->cap_out, C->n_out + 1, sizeof *C->out)) return NULL;
    nd_step *s = &C->out[C->n_out++];
    memset(s, 0, sizeof *s);
    s->first_node = s->last_node = -1;
    return s;
}

static int32_t new_temp(nd_plan *p, size_t bytes, uint32_t *cap) {
    if (!nd_grow((void **)&p->slots, cap, (uint32_t)p->n_slots + 1, sizeof *p->slots)) return -1;
    nd_plan_slot *s = &p->slots[p->n_slots];
    memset(s, 0, sizeof *s);
    s->role = ND_SLOT_TEMP;
    s->bytes = bytes ? bytes : 1;
    s->memory = p->memory;
    s->first_step = s->last_step = -1;
    s->storage = -1;
    return p->n_slots++;
}

/* Fills a kernel step made from the chunked kernel's step `orig`; takes
 * ownership of the arrays (shift may be NULL). */
static void set_kernel_step(nd_step *out, const nd_step *orig, nd_kernel *k, int32_t *slots, int32_t *params,
                            uint8_t *acc, int64_t *shift) {
    k->hash = nd_kernel_hash(k);
    out->kind = ND_STEP_KERNEL;
    out->kernel = k;
    out->slots = slots;
    out->params = params;
    out->slot_access = acc;
    out->slot_byte_offset = shift;
    out->first_node = orig->first_node;
    out->last_node = orig->last_node;
}

/* Whether every access of kernel slot `s` (loads, stores, the reduction's
 * output) has the same element stride on axis 0 and element size: then a
 * chunk's shift is one address offset for the slot (else it goes into the
 * IR's offsets). */
static int slot_row_stride(const nd_kernel *k, int32_t s, int64_t *stride, size_t *item) {
    int seen = 0;
    *stride = 0;
    *item = 0;
    for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n; j++) {
        const nd_ir_access *a = nd_kernel_access(k, j);
        if (a->slot != s) continue;
        size_t sz = nd_dtype_size((nd_dtype)a->dtype);
        if (seen && (a->strides[0] != *stride || sz != *item)) return 0;
        *stride = a->strides[0];
        *item = sz;
        seen = 1;
    }
    return seen;
}

/* The kernel of rows [r0, r0 + rows): big buffers read from their staging
 * temporaries, everything else shifted by r0 rows. Shifts go into the
 * slots' addresses where a slot's accesses agree on their row stride, so
 * every full chunk runs the same kernel (compiled once); the reduction's
 * partial for chunk c is the partial temporary's address plus c outputs. */
static int chunk_kernel(chunker *C, int64_t r0, int64_t rows, int64_t chunk, const int32_t *stage,
                        int32_t partial, nd_step *out) {
    const nd_step *orig = &C->plan->steps[C->kstep];
    const nd_kernel *k0 = orig->kernel;
    nd_kernel *k = nd_kernel_clone(k0);
    int32_t *slots = nd_malloc(sizeof(int32_t) * (size_t)(k0->n_slots + 1));
    int32_t *params = nd_malloc(sizeof(int32_t) * (size_t)(k0->n_params + 1));
    uint8_t *acc = nd_malloc((size_t)k0->n_slots + 1);
    int64_t *shift = nd_calloc((size_t)k0->n_slots + 1, sizeof(int64_t));
    /* Kernel slots whose shift goes into their address. */
    uint8_t *by_address = nd_calloc((size_t)k0->n_slots + 1, 1);
    if (!k || !slots || !params || !acc || !shift || !by_address) {
        free(k);
        free(slots);
        free(params);
        free(acc);
        free(shift);
        free(by_address);
        return 0;
    }
    memcpy(slots, orig->slots, sizeof(int32_t) * (size_t)k0->n_slots);
    memcpy(params, orig->params, sizeof(int32_t) * (size_t)k0->n_params);
    memcpy(acc, orig->slot_access, (size_t)k0->n_slots);
    int reduce0 = k->has_reduce && (k->reduce.axes & 1u);
    int32_t out_slot = reduce0 ? k->reduce.out.slot : -1;
    k->shape[0] = rows;
    for (int32_t s = 0; s < k->n_slots; s++) {
        int b = is_big(C, orig->slots[s]);
        if (b >= 0) {
            slots[s] = stage[b];
            continue;
        }
        if (s == out_slot) continue;
        size_t item;
        int64_t stride;
        if (slot_row_stride(k0, s, &stride, &item)) {
            shift[s] = r0 * stride * (int64_t)item;
            by_address[s] = 1;
        }
    }
    for (int32_t j = 0; j < k->n_loads; j++) {
        int32_t s = k->loads[j].slot;
        if (is_big(C, orig->slots[s]) < 0 && !by_address[s]) k->loads[j].offset += r0 * k->loads[j].strides[0];
    }
    for (int32_t j = 0; j < k->n_indices; j++) k->indices[j].offset += r0 * k->indices[j].strides[0];
    for (int32_t j = 0; j < k->n_stores; j++)
        if (!by_address[k->stores[j].at.slot]) k->stores[j].at.offset += r0 * k->stores[j].at.strides[0];
    if (k->has_reduce && !reduce0 && !by_address[k->reduce.out.slot])
        k->reduce.out.offset += r0 * k->reduce.out.strides[0];
    free(by_address);
    if (reduce0) {
        /* Partial c: outputs contiguous over the kept axes, after the
         * previous chunks' (the slot is the one the output used). */
        int64_t stride = 1;
        for (int d = k->ndim - 1; d >= 0; d--) {
            if (k->reduce.axes & (1u << d)) {
                k->reduce.out.strides[d] = 0;
            } else {
                k->reduce.out.strides[d] = stride;
                stride *= k->shape[d];
            }
        }
        k->reduce.out.offset = 0;
        shift[out_slot] = chunk * C->out_n * (int64_t)nd_dtype_size((nd_dtype)k->reduce.out_dtype);
        slots[out_slot] = partial;
    }
    set_kernel_step(out, orig, k, slots, params, acc, shift);
    return 1;
}

/* The reduction of the partials over the chunk axis into the real output. */
static int combine_kernel(chunker *C, int32_t partial, nd_step *out) {
    const nd_step *orig = &C->plan->steps[C->kstep];
    const nd_kernel *k0 = orig->kernel;
    nd_kernel *k = nd_kernel_combine_partials(k0, C->n_chunks, C->out_n, "combine_chunks");
    int32_t *slots = nd_malloc(sizeof(int32_t) * 2), *params = nd_malloc(sizeof(int32_t));
    uint8_t *acc = nd_malloc(2);
    if (!k || !slots || !params || !acc) {
        free(k);
        free(slots);
        free(params);
        free(acc);
        return 0;
    }
    slots[0] = partial;
    slots[1] = orig->slots[k0->reduce.out.slot];
    acc[0] = ND_ACCESS_READ;
    acc[1] = ND_ACCESS_WRITE;
    set_kernel_step(out, orig, k, slots, params, acc, NULL);
    return 1;
}

nd_status nd_plan_chunk(nd_plan *plan, const nd_flush_walk *walk, size_t chunk_bytes) {
    if (chunk_bytes == 0 || plan->memory == 0) return ND_OK;
    chunker C = {.plan = plan, .walk = walk};
    if (!find_candidates(&C, chunk_bytes) || !rows_ok(&C)) return ND_OK;
    /* Rows per chunk from the widest buffer's row size. */
    size_t widest = 0;
    for (int b = 0; b < C.n_big; b++)
        if ((size_t)C.big[b].row * C.big[b].item > widest) widest = (size_t)C.big[b].row * C.big[b].item;
    C.rows_per_chunk = (int64_t)(chunk_bytes / widest);
    if (C.rows_per_chunk < 1) C.rows_per_chunk = 1;
    C.n_chunks = (C.rows + C.rows_per_chunk - 1) / C.rows_per_chunk;
    if (C.n_chunks < 2) return ND_OK;
    const nd_kernel *k0 = plan->steps[C.kstep].kernel;
    int reduce0 = k0->has_reduce && (k0->reduce.axes & 1u);
    C.out_n = 1;
    for (int d = 0; d < k0->ndim; d++)
        if (!(k0->reduce.axes & (1u << d))) C.out_n *= k0->shape[d];

    uint32_t cap_slots = (uint32_t)plan->n_slots;
    int32_t partial = -1;
    if (reduce0) {
        partial = new_temp(plan, (size_t)(C.n_chunks * C.out_n) * nd_dtype_size((nd_dtype)k0->reduce.out_dtype),
                           &cap_slots);
        if (partial < 0) return ND_ERR_OOM;
    }
    int32_t (*stage)[MAX_BIG] = nd_malloc(sizeof *stage * (size_t)C.n_chunks);
    if (!stage) return ND_ERR_OOM;
    int ok = 1;
    for (int64_t c = 0; c < C.n_chunks && ok; c++) {
        int64_t rows = c == C.n_chunks - 1 ? C.rows - c * C.rows_per_chunk : C.rows_per_chunk;
        for (int b = 0; b < C.n_big && ok; b++) {
            stage[c][b] = new_temp(plan, (size_t)(rows * C.big[b].row) * C.big[b].item, &cap_slots);
            ok = stage[c][b] >= 0;
        }
    }
    /* New step list: the chunk pipeline where the kernel was, copies of
     * chunk c+1 issued before the kernel of chunk c. */
    int32_t *remap = nd_malloc(sizeof(int32_t) * (size_t)(plan->n_steps + 1));
    ok = ok && remap;
    for (int32_t i = 0; i < plan->n_steps && ok; i++) {
        const nd_step *st = &plan->steps[i];
        remap[i] = (int32_t)C.n_out;
        if (st->kind == ND_STEP_COPY && st->copy.src_slot == st->copy.dst_slot && is_big(&C, st->copy.src_slot) >= 0)
            continue;
        if (i != C.kstep) {
            nd_step *s = push(&C);
            ok = s != NULL;
            if (ok) *s = *st;
            continue;
        }
        for (int64_t c = 0; c <= C.n_chunks && ok; c++) {
            if (c < C.n_chunks) {
                int64_t r0 = c * C.rows_per_chunk;
                for (int b = 0; b < C.n_big && ok; b++) {
                    nd_step *s = push(&C);
                    ok = s != NULL;
                    if (!ok) break;
                    const nd_buffer *buf = walk->buffers[plan->slots[C.big[b].slot].walk_index];
                    int src = -1;
                    for (int m = 0; m < ND_MAX_MEMORIES && src < 0; m++)
                        if (m != plan->memory && (buf->valid & (1u << m))) src = m;
                    s->kind = ND_STEP_COPY;
                    s->copy.src_slot = C.big[b].slot;
                    s->copy.dst_slot = stage[c][b];
                    s->copy.src_memory = src;
                    s->copy.dst_memory = plan->memory;
                    s->copy.bytes = plan->slots[stage[c][b]].bytes;
                    s->copy.src_offset = (size_t)(r0 * C.big[b].row) * C.big[b].item;
                }
            }
            if (c > 0 && ok) {
                int64_t r0 = (c - 1) * C.rows_per_chunk;
                int64_t rows = c == C.n_chunks ? C.rows - r0 : C.rows_per_chunk;
                nd_step *s = push(&C);
                ok = s && chunk_kernel(&C, r0, rows, c - 1, stage[c - 1], partial, s);
                if (s && !ok) C.n_out--;
                if (ok && c == 1) remap[i] = (int32_t)C.n_out - 1; /* its nodes: the first chunk */
            }
        }
        if (ok && reduce0) {
            nd_step *s = push(&C);
            ok = s && combine_kernel(&C, partial, s);
            if (s && !ok) C.n_out--;
        }
    }
    free(stage);
    if (!ok) {
        for (uint32_t i = 0; i < C.n_out; i++)
            if (C.out[i].kind == ND_STEP_KERNEL && C.out[i].kernel != plan->steps[C.kstep].kernel) {
                int shared = 0;
                for (int32_t j = 0; j < plan->n_steps; j++) shared |= C.out[i].kernel == plan->steps[j].kernel;
                if (!shared) nd_step_free(&C.out[i]);
            }
        free(C.out);
        free(remap);
        return ND_ERR_OOM;
    }
    nd_logf(3, "plan %016llx: %lld rows of %d host buffer(s) stream through the device in %lld chunks",
            (unsigned long long)plan->key, (long long)C.rows, C.n_big, (long long)C.n_chunks);
    /* The original kernel and dropped copies go; nodes follow their steps. */
    nd_step_free(&plan->steps[C.kstep]);
    for (int32_t i = 0; i < plan->n_nodes; i++)
        if (plan->node_step[i] >= 0) plan->node_step[i] = remap[plan->node_step[i]];
    free(remap);
    free(plan->steps);
    plan->steps = C.out;
    plan->n_steps = (int32_t)C.n_out;
    for (int b = 0; b < C.n_big; b++) plan->slots[C.big[b].slot].copied_to &= ~(1u << plan->memory);
    return ND_OK;
}
