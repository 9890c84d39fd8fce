/* The partition pass: which plan slots are split in row blocks over the
 * devices and which kernels run once per device (docs/internals.md
 * "Several devices"). The new step list is written by partition_steps.c.
 *
 * A slot is a row slot when every step touching it is a kernel and every
 * access of it walks whole rows along the kernel's axis 0: one element
 * stride S > 0 on axis 0 (the same in every kernel, so the slot has
 * bytes / (S * item) rows) and the rest of the access inside one row. A
 * kernel partitions when it touches a split slot of at least the split
 * size, all split slots it touches have the same row count, and it writes
 * only split slots at one row shift (the anchor: iteration row i belongs
 * to the device owning row i + shift) or a reduction over axis 0 (then one
 * partial per device). A slot is split when it is a row slot and every
 * kernel touching it partitions; removing a slot can stop another kernel
 * from partitioning, so the two are found as a fixed point. Everything
 * else keeps the whole array: a transpose, a reshape across rows, a
 * concatenate on axis 0, a batched matmul, a scan, a sort, a library
 * call. A matmul whose A and C split runs per device on C's rows
 * (partition_matmul.c). */
#include "scheduler/partition.h"

#include <stdlib.h>
#include <string.h>

#include "backends/step_kinds.h"
#include "common/alloc.h"
#include "common/error.h"
#include "scheduler/kernel_builder.h"
#include "scheduler/partition_internal.h"

/* Access j of kernel k: loads, then stores, then the reduction's output. */
const nd_ir_access *nd_part_access(const nd_kernel *k, int32_t j, int *write) {
    *write = j >= k->n_loads;
    return nd_kernel_access(k, j);
}

/* Whether access a walks whole rows: its row stride (elements) and the
 * row of its first element. */
static int row_access(const nd_kernel *k, const nd_ir_access *a, int64_t *stride, int64_t *shift) {
    int64_t s = a->strides[0];
    if (s <= 0 || a->offset < 0) return 0;
    int64_t lo = a->offset % s, hi = lo;
    for (int d = 1; d < k->ndim; d++) {
        int64_t reach = a->strides[d] * (k->shape[d] - 1);
        if (reach < 0) lo += reach;
        else hi += reach;
    }
    if (lo < 0 || hi >= s) return 0;
    *stride = s;
    *shift = a->offset / s;
    return 1;
}

static size_t slot_bytes(const nd_partitioner *P, int32_t s) {
    const nd_plan_slot *sl = &P->plan->slots[s];
    return sl->role == ND_SLOT_TEMP ? sl->bytes : P->walk->buffers[sl->walk_index]->nbytes;
}

static int kernel_empty(const nd_kernel *k) {
    if (k->ndim < 1) return 1;
    for (int d = 0; d < k->ndim; d++)
        if (k->shape[d] <= 0) return 1;
    return 0;
}

/* The pieces a buffer or twin holds from an earlier flush, if they hold
 * the value this plan starts from. */
static const nd_buffer_pieces *held_pieces(const nd_partitioner *P, int32_t s) {
    const nd_plan_slot *sl = &P->plan->slots[s];
    if (sl->role == ND_SLOT_TEMP) return NULL;
    const nd_buffer *b = P->walk->buffers[sl->walk_index];
    if (sl->role == ND_SLOT_EXTERNAL) return nd_buffer_pieces_at(b);
    const nd_buffer_twin *t = nd_buffer_twin_at(b, b->version - b->n_writers);
    return t && t->pieces && t->pieces->valid ? t->pieces : NULL;
}

/* The row length, in elements of `item` bytes, of the pieces slot s holds
 * from an earlier flush (0: none, or not a whole number of elements). */
static int64_t held_row(const nd_partitioner *P, int32_t s, size_t item) {
    const nd_buffer_pieces *h = held_pieces(P, s);
    return h && item && h->row_bytes % item == 0 ? (int64_t)(h->row_bytes / item) : 0;
}

/* A kernel fusion collapsed to one axis (contiguous elementwise work)
 * walks its slots element by element; where another kernel (or a matmul)
 * of the plan walks one of them in rows of S elements, the collapsed kernel is given
 * back its rows (shape (n/S, S)), so that both split the slot alike. One
 * pass of restore_rows; by_rows_only: only from such neighbours. */
static int restore_pass(nd_partitioner *P, int64_t *cand, int by_rows_only) {
    nd_plan *p = P->plan;
    int restored = 0;
    memset(cand, 0, sizeof *cand * ((size_t)p->n_slots + 1));
    for (int32_t i = 0; i < p->n_steps; i++) {
        const nd_step *st = &p->steps[i];
        if (st->kind == ND_STEP_MATMUL) nd_part_matmul_strides(st, cand);
        if (st->kind != ND_STEP_KERNEL || st->kernel->ndim < 2 || kernel_empty(st->kernel)) continue;
        const nd_kernel *k = st->kernel;
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n; j++) {
            int w;
            const nd_ir_access *a = nd_part_access(k, j, &w);
            int64_t stride, shift;
            if (row_access(k, a, &stride, &shift)) cand[st->slots[a->slot]] = stride;
        }
    }
    for (int32_t i = 0; i < p->n_steps; i++) {
        nd_step *st = &p->steps[i];
        if (st->kind != ND_STEP_KERNEL || st->kernel->ndim != 1 || kernel_empty(st->kernel)) continue;
        nd_kernel *k = st->kernel;
        int64_t S = 0, held = 0, natural = 0;
        int ok = 1;
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n && ok; j++) {
            int w;
            const nd_ir_access *a = nd_part_access(k, j, &w);
            ok = a->strides[0] == 0 || a->strides[0] == 1;
            int64_t c = cand[st->slots[a->slot]];
            if (c && a->strides[0] == 1) ok = ok && (!S || S == c), S = c;
            /* The rows of the pieces it holds from an earlier flush, when
             * no step here walks it in rows: so that a sum over a
             * stencil's grid, planned on its own, runs on the grid's
             * pieces instead of gathering them. */
            int64_t h = !c && a->strides[0] == 1 ? held_row(P, st->slots[a->slot], nd_dtype_size((nd_dtype)a->dtype)) : 0;
            if (h > 1) held = held && held != h ? -1 : h;
            /* ... or, written whole by a flat kernel (a creation), the rows
             * of the array as its node has it. */
            int64_t nat = w && !c && a->strides[0] == 1 ? p->slots[st->slots[a->slot]].natural_row : 0;
            if (nat > 1) natural = natural && natural != nat ? -1 : nat;
        }
        if (!S && by_rows_only) continue;
        if (!S && held > 1) S = held;
        int by_nature = !S && held == 0 && natural > 1;
        if (by_nature) S = natural;
        for (int32_t j = 0; j < k->n_indices && ok; j++) ok = k->indices[j].strides[0] == 1;
        if (!ok || S <= 1 || k->shape[0] % S) continue;
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n && ok; j++) {
            int w;
            const nd_ir_access *a = nd_part_access(k, j, &w);
            ok = a->strides[0] == 0 || a->offset % S == 0;
        }
        if (!ok) continue;
        k->ndim = 2;
        k->shape[1] = S;
        k->shape[0] /= S;
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n; j++) {
            int w;
            nd_ir_access *a = (nd_ir_access *)nd_part_access(k, j, &w);
            a->strides[1] = a->strides[0];
            a->strides[0] *= S;
        }
        for (int32_t j = 0; j < k->n_indices; j++) {
            k->indices[j].strides[1] = k->indices[j].strides[0];
            k->indices[j].strides[0] *= S;
        }
        if (k->has_reduce && (k->reduce.axes & 1u)) k->reduce.axes |= 2u;
        k->hash = nd_kernel_hash(k);
        restored++;
        /* What it writes gets a ghost row on each side of every piece:
         * an array made to be swept by a stencil then starts from its
         * pieces instead of being gathered and split again. */
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n && by_nature; j++) {
            int w;
            const nd_ir_access *a = nd_part_access(k, j, &w);
            if (w) P->sp[st->slots[a->slot]].margin = 1;
        }
    }
    return restored;
}

/* Passes until nothing changes: a kernel given back its rows gives its
 * other slots rows too, so a chain of collapsed kernels (a product, then
 * the sum of it: the dot products of conjugate gradients) follows the
 * stencil that walks its first slot. Rows from the slots' own neighbours
 * first; then, once, the rows of held pieces or of a created array's node
 * for the kernels still collapsed. */
static void restore_rows(nd_partitioner *P) {
    nd_plan *p = P->plan;
    int64_t *cand = nd_calloc((size_t)p->n_slots + 1, sizeof *cand);
    if (!cand) {
        p->degraded = 1; /* the collapsed kernels stay whole */
        return;
    }
    for (int32_t pass = 0; pass < p->n_steps && restore_pass(P, cand, 1) > 0; pass++) {
    }
    restore_pass(P, cand, 0);
    free(cand);
}

/* Slot s is no row slot because of step i: said at ND_LOG=2 for a slot
 * of the split size (the pass never considers it, so unsplit_step's line
 * would not come). */
static void not_rows(nd_partitioner *P, int32_t s, int32_t i, const char *why) {
    nd_part_slot *sp = &P->sp[s];
    if (sp->state < 0) return;
    sp->state = -1;
    size_t bytes = slot_bytes(P, s);
    if (bytes < P->cfg->min_bytes || bytes == 0 || !nd_log_enabled(2)) return;
    char text[160];
    nd_step_label(&P->plan->steps[i], text, sizeof text);
    nd_logf(2, "partition: slot %d (%zu bytes) stays whole: step %d (%s) %s", s, bytes, i, text, why);
}

/* Row slots: sp[s].state 1, with their row layout; -1 not. */
static void find_row_slots(nd_partitioner *P) {
    nd_plan *p = P->plan;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const nd_step *st = &p->steps[i];
        if (st->kind == ND_STEP_MATMUL && nd_part_matmul_rows(P, st)) continue;
        if (st->kind != ND_STEP_KERNEL || kernel_empty(st->kernel)) {
            const char *why = st->kind == ND_STEP_KERNEL ? "is an empty kernel"
                              : nd_step_is_copy(st)     ? "is a copy between memories or a library's copy"
                                                        : "is no kernel (a library call, a matmul that does not "
                                                          "walk it in rows)";
            for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
                int32_t s = nd_step_access_at(st, j, p->memory).slot;
                if (s >= 0) not_rows(P, s, i, why);
            }
            continue;
        }
        const nd_kernel *k = st->kernel;
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n; j++) {
            int w;
            const nd_ir_access *a = nd_part_access(k, j, &w);
            nd_part_slot *sp = &P->sp[st->slots[a->slot]];
            if (sp->state < 0) continue;
            if (!w && nd_ir_load_gathered(k, j)) {
                not_rows(P, st->slots[a->slot], i, "gathers from it (reads it anywhere)");
                continue;
            }
            int64_t stride, shift;
            size_t item = nd_dtype_size((nd_dtype)a->dtype);
            if (!row_access(k, a, &stride, &shift)) {
                not_rows(P, st->slots[a->slot], i, "does not walk it in whole rows along its first axis");
                continue;
            }
            if (sp->state == 1 && (sp->row != stride || sp->item != item)) {
                not_rows(P, st->slots[a->slot], i, "walks it in rows of another length than another step");
                continue;
            }
            sp->state = 1;
            sp->row = stride;
            sp->item = item;
        }
    }
    for (int32_t s = 0; s < p->n_slots; s++) {
        nd_part_slot *sp = &P->sp[s];
        sp->bytes = slot_bytes(P, s);
        if (sp->state != 1) continue;
        size_t row_bytes = (size_t)sp->row * sp->item;
        if (row_bytes == 0 || sp->bytes % row_bytes) {
            sp->state = -1;
            continue;
        }
        sp->rows = (int64_t)(sp->bytes / row_bytes);
        sp->split = 1;
    }
}

static int combinable(const nd_kernel *k) {
    nd_reduce_kind kind = (nd_reduce_kind)k->reduce.kind;
    nd_dtype od = (nd_dtype)k->reduce.out_dtype;
    /* argmin/argmax fold (value, index) partials exactly; a 16-bit float
     * sum's partials would round where one device's does not. */
    if (!nd_reduce_is_arg(kind) && (od == ND_FLOAT16 || od == ND_BFLOAT16)) return 0;
    for (int32_t j = 0; j < k->n_loads; j++)
        if (k->loads[j].slot == k->reduce.out.slot) return 0;
    for (int32_t j = 0; j < k->n_stores; j++)
        if (k->stores[j].at.slot == k->reduce.out.slot) return 0;
    return 1;
}

/* Whether each device's iteration rows of kernel step i (its anchor's:
 * nd_part_iter) write, at row shift `shift`, only rows that device owns
 * in split slot sp. A kernel writing arrays of other row counts or shifts
 * than its anchor then still splits: a stencil's output written into a
 * grid's interior (rows + 2, shift 1) beside a value of the interior's
 * own size (shift 0), as conjugate gradients' operator keeps both. */
static int writes_owned_rows(const nd_partitioner *P, int32_t i, const nd_part_slot *sp, int64_t shift) {
    for (int32_t d = 0; d < P->n_dev; d++) {
        int64_t i0, i1;
        nd_part_iter(P, i, d, &i0, &i1);
        if (i1 <= i0) continue;
        if (i0 + shift < nd_split_row(sp->rows, P->n_dev, d) || i1 + shift > nd_split_row(sp->rows, P->n_dev, d + 1))
            return 0;
    }
    return 1;
}

/* Whether kernel step i runs per device with the slots split now; its
 * anchor shift, and why not (static text). */
static int kernel_partitions(nd_partitioner *P, int32_t i, int64_t *anchor, const char **why) {
    const nd_step *st = &P->plan->steps[i];
    const nd_kernel *k = st->kernel;
    int64_t rows = -1, shift;
    int big = 0, have_anchor = 0;
    int reduce0 = k->has_reduce && (k->reduce.axes & 1u);
    /* The anchor: a write into a split slot, else (a reduction over axis
     * 0) the first split load. */
    for (int pass = 0; pass < 2 && !have_anchor; pass++)
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n && !have_anchor; j++) {
            int w;
            const nd_ir_access *a = nd_part_access(k, j, &w);
            const nd_part_slot *sp = &P->sp[st->slots[a->slot]];
            if (w != !pass || !sp->split) continue;
            int64_t stride;
            if (row_access(k, a, &stride, &shift)) {
                *anchor = shift;
                rows = sp->rows;
                have_anchor = 1;
            }
        }
    if (!have_anchor) {
        *why = "it touches no split array";
        return 0;
    }
    P->arows[i] = rows;
    for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n; j++) {
        int w;
        const nd_ir_access *a = nd_part_access(k, j, &w);
        const nd_part_slot *sp = &P->sp[st->slots[a->slot]];
        int is_reduce0 = reduce0 && j == n - 1;
        if (is_reduce0) {
            if (!combinable(k)) {
                *why = "its reduction over axis 0 does not combine from partials yet (a 16-bit float one)";
                return 0;
            }
            continue;
        }
        if (!sp->split) {
            if (w) {
                *why = "it writes an array that is not split";
                return 0;
            }
            continue; /* a whole array every device reads */
        }
        big |= sp->bytes >= P->cfg->min_bytes;
        if (!w) continue; /* a load of any row count: its pieces hold the rows read */
        int64_t stride;
        row_access(k, a, &stride, &shift);
        if ((shift != *anchor || sp->rows != rows) && !writes_owned_rows(P, i, sp, shift)) {
            *why = "it writes rows another device owns";
            return 0;
        }
    }
    if (!big) {
        *why = "its arrays are below the split size";
        return 0;
    }
    return 1;
}

void nd_part_iter(const nd_partitioner *P, int32_t i, int32_t d, int64_t *i0, int64_t *i1) {
    int64_t a = nd_split_row(P->arows[i], P->n_dev, d) - P->anchor[i];
    int64_t b = nd_split_row(P->arows[i], P->n_dev, d + 1) - P->anchor[i];
    const nd_step *st = &P->plan->steps[i];
    int64_t n = st->kind == ND_STEP_MATMUL ? st->matmul.m : st->kernel->shape[0];
    *i0 = a < 0 ? 0 : a;
    *i1 = b > n ? n : b;
}

void nd_part_need(const nd_partitioner *P, int32_t i, int32_t s, int32_t d, int64_t *lo, int64_t *hi) {
    const nd_step *st = &P->plan->steps[i];
    if (st->kind == ND_STEP_MATMUL) {
        nd_part_matmul_need(P, i, s, d, lo, hi);
        return;
    }
    const nd_kernel *k = st->kernel;
    int64_t i0, i1;
    nd_part_iter(P, i, d, &i0, &i1);
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    if (i1 <= i0) return;
    for (int32_t j = 0; j < k->n_loads; j++) {
        const nd_ir_access *a = &k->loads[j];
        if (st->slots[a->slot] != s) continue;
        int64_t shift = a->offset / a->strides[0];
        if (i0 + shift < *lo) *lo = i0 + shift;
        if (i1 + shift > *hi) *hi = i1 + shift;
    }
}

/* Unsplits every slot step i touches; 1 if one was split. */
static int unsplit_step(nd_partitioner *P, int32_t i, const char *why) {
    const nd_step *st = &P->plan->steps[i];
    int changed = 0;
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        int32_t s = nd_step_access_at(st, j, P->plan->memory).slot;
        if (s < 0 || !P->sp[s].split) continue;
        P->sp[s].split = 0;
        changed = 1;
        if (P->sp[s].bytes >= P->cfg->min_bytes) {
            char text[160];
            nd_step_label(st, text, sizeof text);
            nd_logf(2, "partition: slot %d (%zu bytes) stays whole: step %d (%s) does not partition: %s", s,
                    P->sp[s].bytes, i, text, why);
        }
    }
    return changed;
}

static void find_split(nd_partitioner *P) {
    nd_plan *p = P->plan;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < p->n_steps; i++) {
            const nd_step *st = &p->steps[i];
            int touches = 0;
            for (int32_t j = 0, n = nd_step_n_accesses(st); j < n && !touches; j++) {
                int32_t s = nd_step_access_at(st, j, p->memory).slot;
                touches = s >= 0 && P->sp[s].split;
            }
            P->kpart[i] = 0;
            if (!touches) continue;
            const char *why = "it is not a kernel (it moves axis 0 or is a library call)";
            /* A chunk's kernel (chunking.c: a device backend streaming a
             * host array) addresses its slots at byte offsets the clones
             * would not carry. */
            if (st->kind == ND_STEP_KERNEL && st->slot_byte_offset) why = "it is a chunk of a streamed host array";
            else if (st->kind == ND_STEP_KERNEL && kernel_partitions(P, i, &P->anchor[i], &why)) {
                P->kpart[i] = 1;
                continue;
            } else if (st->kind == ND_STEP_MATMUL && nd_part_matmul_partitions(P, i, &P->anchor[i], &why)) {
                P->kpart[i] = 1;
                continue;
            }
            changed |= unsplit_step(P, i, why);
        }
    }
}

/* Device d's piece of split slot s widened to hold rows [lo, hi) too (a
 * piece that owns none: exactly those); rows beyond its own are ghosts. */
static void widen_piece(nd_part_slot *sp, int32_t d, int64_t lo, int64_t hi) {
    int64_t a = sp->p0[d], b = sp->p0[d] + sp->pn[d];
    if (sp->pn[d] == 0) a = lo, b = hi; /* owns none: ghost rows only */
    if (lo < a) a = lo;
    if (hi > b) b = hi;
    if (a != sp->p0[d] || b - a != sp->pn[d]) sp->ghosts = 1;
    sp->p0[d] = a;
    sp->pn[d] = b - a;
}

/* Each split slot's pieces: per device its owned rows, widened to the
 * rows every partitioned kernel's clone on that device loads (the ghost
 * rows: a 5-point stencil's row above and below; for a slot of another
 * row count than the kernel's anchor, whatever its blocks miss), and for
 * a slot a flat creation writes (`margin`) ND_PART_CREATION_GHOST_ROWS
 * more rows on each side. */
static void find_pieces(nd_partitioner *P) {
    nd_plan *p = P->plan;
    for (int32_t s = 0; s < p->n_slots; s++) {
        nd_part_slot *sp = &P->sp[s];
        if (!sp->split) continue;
        for (int32_t d = 0; d < P->n_dev; d++) {
            sp->p0[d] = nd_split_row(sp->rows, P->n_dev, d);
            sp->pn[d] = nd_split_row(sp->rows, P->n_dev, d + 1) - sp->p0[d];
        }
    }
    for (int32_t i = 0; i < p->n_steps; i++) {
        if (!P->kpart[i]) continue;
        const nd_step *st = &p->steps[i];
        for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
            int32_t s = nd_step_access_at(st, j, p->memory).slot;
            if (s >= 0 && P->sp[s].split) nd_part_widen(P, i, s);
        }
    }
    for (int32_t s = 0; s < p->n_slots; s++) {
        nd_part_slot *sp = &P->sp[s];
        if (!sp->split || !sp->margin || p->slots[s].role == ND_SLOT_TEMP) continue;
        for (int32_t d = 0; d < P->n_dev; d++) {
            if (sp->pn[d] <= 0) continue;
            int64_t lo = sp->p0[d] - ND_PART_CREATION_GHOST_ROWS, hi = sp->p0[d] + sp->pn[d] + ND_PART_CREATION_GHOST_ROWS;
            widen_piece(sp, d, lo > 0 ? lo : 0, hi < sp->rows ? hi : sp->rows);
        }
    }
}

void nd_part_widen(nd_partitioner *P, int32_t i, int32_t s) {
    nd_part_slot *sp = &P->sp[s];
    for (int32_t d = 0; d < P->n_dev; d++) {
        int64_t lo, hi;
        nd_part_need(P, i, s, d, &lo, &hi);
        if (hi > lo) widen_piece(sp, d, lo, hi);
    }
}

/* Whether split slot s can run on the pieces it holds, and those pieces in
 * this plan's rows (*p0, *pn). The pieces may come from a plan that saw
 * the array in rows of another length: a creation or a sum runs as one
 * flat row of elements, a stencil in the array's rows. They fit when the
 * devices are the same, each owns the same bytes in both views (so every
 * owned row here holds its current value there), each piece's bytes fall
 * on rows of this plan, and each holds at least the rows this plan's piece
 * would. Otherwise the pieces are gathered into the whole array and
 * scattered anew, which copies the array twice. */
static int held_fits(const nd_partitioner *P, int32_t s, const nd_buffer_pieces *h, int64_t *p0, int64_t *pn) {
    const nd_part_slot *sp = &P->sp[s];
    const int32_t n = P->n_dev;
    const size_t rb = (size_t)sp->row * sp->item, hb = h->row_bytes;
    if (h->n_dev != n || rb == 0 || hb == 0 || (size_t)h->rows * hb != (size_t)sp->rows * rb) return 0;
    for (int32_t d = 0; d < n; d++) {
        if ((size_t)nd_split_row(h->rows, n, d) * hb != (size_t)nd_split_row(sp->rows, n, d) * rb) return 0;
        p0[d] = pn[d] = 0;
        if (h->pn[d] > 0) {
            size_t b0 = (size_t)h->p0[d] * hb, bn = (size_t)h->pn[d] * hb;
            if (b0 % rb || bn % rb) return 0;
            p0[d] = (int64_t)(b0 / rb);
            pn[d] = (int64_t)(bn / rb);
        }
        if (sp->pn[d] <= 0) continue;
        if (pn[d] <= 0 || sp->p0[d] < p0[d] || sp->p0[d] + sp->pn[d] > p0[d] + pn[d]) return 0;
    }
    return 1;
}

/* Which split slots keep their pieces after the plan (every buffer and
 * twin split, but one whose memory the program lent: it reads its memory
 * itself), which start from pieces held from an earlier flush, and which
 * held pieces are gathered first: the array is read whole, or split
 * another way (its pieces here are then temporaries, gathered at the end
 * as before). */
static void find_held(nd_partitioner *P) {
    nd_plan *p = P->plan;
    for (int32_t i = 0; i < p->n_steps; i++)
        for (int32_t j = 0, n = nd_step_n_accesses(&p->steps[i]); j < n; j++) {
            nd_step_access a = nd_step_access_at(&p->steps[i], j, p->memory);
            if (a.slot < 0) continue;
            P->sp[a.slot].touched = 1;
            if (a.mode & ND_ACCESS_WRITE) P->sp[a.slot].plan_writes = 1;
        }
    for (int32_t s = 0; s < p->n_slots; s++) {
        nd_part_slot *sp = &P->sp[s];
        const nd_plan_slot *sl = &p->slots[s];
        if (sl->role == ND_SLOT_TEMP || !sp->touched) continue;
        const nd_buffer_pieces *h = held_pieces(P, s);
        const nd_buffer *b = P->walk->buffers[sl->walk_index];
        sp->held = h;
        sp->undefined = sl->role == ND_SLOT_TWIN && !nd_buffer_twin_at(b, b->version - b->n_writers);
        int64_t hp0[ND_MAX_SPLIT], hpn[ND_MAX_SPLIT];
        if (sp->split && h && held_fits(P, s, h, hp0, hpn)) {
            sp->persist = sp->adopt = 1;
            for (int32_t d = 0; d < P->n_dev; d++) {
                int64_t lo = nd_split_row(sp->rows, P->n_dev, d), hi = nd_split_row(sp->rows, P->n_dev, d + 1);
                sp->p0[d] = hp0[d];
                sp->pn[d] = hpn[d];
                if (sp->pn[d] > 0 && (sp->p0[d] != lo || sp->pn[d] != hi - lo)) sp->ghosts = 1;
            }
            continue;
        }
        /* Pieces whose whole array is stale, or valid only in another
         * memory (gathered to the host by a read): a step that reads the
         * whole array here reads it gathered from them. */
        if (h && (h->whole_stale || (sl->role == ND_SLOT_EXTERNAL && !(b->valid & (1u << p->memory))))) {
            sp->gather_first = 1;
            P->n_gather_first++;
        }
        if (sp->split && !sp->gather_first && !b->borrow) sp->persist = 1;
    }
}

static void count_whole(nd_partitioner *P) {
    nd_plan *p = P->plan;
    uint8_t *touched = nd_calloc((size_t)p->n_slots + 1, 1);
    if (!touched) return;
    for (int32_t i = 0; i < p->n_steps; i++)
        for (int32_t j = 0, n = nd_step_n_accesses(&p->steps[i]); j < n; j++) {
            int32_t s = nd_step_access_at(&p->steps[i], j, p->memory).slot;
            if (s >= 0) touched[s] = 1;
        }
    p->n_whole = 0;
    for (int32_t s = 0; s < p->n_slots; s++)
        if (touched[s] && !P->sp[s].split && P->sp[s].bytes >= P->cfg->min_bytes && P->sp[s].bytes > 0) p->n_whole++;
    free(touched);
}

nd_status nd_plan_partition(nd_plan *plan, const nd_flush_walk *walk, const nd_split_config *cfg) {
    if (!cfg || cfg->n_devices <= 1) return ND_OK;
    nd_partitioner P;
    memset(&P, 0, sizeof P);
    P.plan = plan;
    P.walk = walk;
    P.cfg = cfg;
    P.n_dev = cfg->n_devices;
    P.sp = nd_calloc((size_t)plan->n_slots + 1, sizeof *P.sp);
    P.kpart = nd_calloc((size_t)plan->n_steps + 1, 1);
    P.anchor = nd_calloc((size_t)plan->n_steps + 1, sizeof *P.anchor);
    P.arows = nd_calloc((size_t)plan->n_steps + 1, sizeof *P.arows);
    nd_status st = P.sp && P.kpart && P.anchor && P.arows ? ND_OK : ND_ERR_OOM;
    if (st == ND_OK) {
        restore_rows(&P);
        find_row_slots(&P);
        find_split(&P);
        nd_part_matmul_replicas(&P);
        find_pieces(&P);
        find_held(&P);
        count_whole(&P);
        int any = P.n_gather_first > 0;
        for (int32_t i = 0; i < plan->n_steps; i++) any |= P.kpart[i];
        if (any) st = nd_part_rewrite(&P);
    }
    free(P.sp);
    free(P.kpart);
    free(P.anchor);
    free(P.arows);
    return st;
}
