/* Each kernel's constant offsets moved into its slots' addresses
 * (kernel_rebase.h). */
#include "scheduler/kernel_rebase.h"

#include <stdlib.h>

#include "common/alloc.h"
#include "common/dtype.h"

/* The element offset slot s's accesses start from: the least of theirs,
 * when all of them count elements of one size (a complex buffer read
 * through a component view counts in other units: then 0, nothing moved).
 * Returns 0 for a slot no access uses. */
static int64_t slot_base(const nd_kernel *k, int32_t s, size_t *item) {
    int32_t n = nd_kernel_n_accesses(k);
    int64_t base = 0;
    int seen = 0;
    *item = 0;
    for (int32_t j = 0; j < n; j++) {
        const nd_ir_access *a = nd_kernel_access(k, j);
        if (a->slot != s) continue;
        size_t sz = nd_dtype_size((nd_dtype)a->dtype);
        if (seen && sz != *item) return 0;
        if (!seen || a->offset < base) base = a->offset;
        *item = sz;
        seen = 1;
    }
    return seen ? base : 0;
}

static int rebase_step(nd_step *st) {
    nd_kernel *k = st->kernel;
    int moved = 0;
    for (int32_t s = 0; s < k->n_slots; s++) {
        size_t item;
        int64_t base = slot_base(k, s, &item);
        if (base == 0) continue;
        if (!st->slot_byte_offset) {
            st->slot_byte_offset = nd_calloc((size_t)k->n_slots + 1, sizeof(int64_t));
            if (!st->slot_byte_offset) return 0;
        }
        st->slot_byte_offset[s] += base * (int64_t)item;
        for (int32_t j = 0, n = nd_kernel_n_accesses(k); j < n; j++) {
            nd_ir_access *a = nd_kernel_access(k, j);
            if (a->slot == s) a->offset -= base;
        }
        moved = 1;
    }
    if (moved && k->hash) k->hash = nd_kernel_hash(k); /* (0: built without one, stays so) */
    return 1;
}

nd_status nd_plan_rebase_kernels(nd_plan *plan) {
    for (int32_t i = 0; i < plan->n_steps; i++) {
        nd_step *st = &plan->steps[i];
        if (st->kind == ND_STEP_KERNEL && st->kernel && !rebase_step(st)) return ND_ERR_OOM;
    }
    return ND_OK;
}
