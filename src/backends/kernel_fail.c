/* What a gathering kernel's fail record (kernel_ir.h's nd_ir_fail) means:
 * the message, and which of the kernel's writes a bad index spoils. Shared
 * by the executor, which fails those values after a step or a whole plan,
 * and by backends that report the error themselves. */
#include <stdlib.h>

#include "backends/kernel_ir.h"
#include "backends/plan.h"
#include "common/lib_calls.h"

int nd_ir_fail_error(const nd_kernel *k, const nd_ir_fail *f) {
    if (f->gather < 0 || f->gather >= k->n_gathers || f->axis < 0 || f->axis >= k->gathers[f->gather].n_axes)
        return nd_lib_index_error(ND_INDEX_FN_TAKE, 0, 0, f->index, 0);
    const nd_ir_gather *g = &k->gathers[f->gather];
    return nd_lib_index_error(g->fn, g->axes, f->axis, f->index, g->size[f->axis]);
}

/* The indexed view is the gather's input 0 (source, indices -> out) and
 * the scatter's output (indices, values -> target): its last K axes are
 * the indexed ones (common/lib_calls.h). */
int nd_lib_fail_error(const nd_user_desc *u, const nd_ir_fail *f) {
    int64_t K = u->lib_args.v[0].i;
    const nd_user_arg_desc *ind = u->lib == ND_LIB_SCATTER ? &u->args[u->n_in] : &u->args[0];
    int64_t d = ind->ndim - K + f->axis;
    int64_t size = f->axis >= 0 && f->axis < K && d >= 0 && d < ind->ndim ? ind->shape[d] : 0;
    return nd_lib_index_error(u->lib_args.v[1].i, u->lib_args.v[2].i, f->axis, f->index, size);
}

int nd_kernel_gather_writes(const nd_kernel *k, int32_t g, uint8_t *written) {
    uint8_t *dep = calloc((size_t)k->n_insts + 1, 1);
    int marked = 0;
    if (!dep) {
        for (int32_t s = 0; s < k->n_stores; s++) written[k->stores[s].at.slot] = 1;
        if (k->has_reduce) written[k->reduce.out.slot] = 1;
        return -1;
    }
    for (int32_t j = 0; j < k->n_insts; j++) {
        const nd_ir_inst *in = &k->insts[j];
        if (in->op == ND_IR_GATHER && in->a == g) {
            dep[j] = 1;
            continue;
        }
        int32_t ops[ND_IR_GATHER_MAX_AXES];
        int n = nd_ir_value_operands(k, in, ops);
        for (int q = 0; q < n; q++)
            if (ops[q] >= 0 && ops[q] < j && dep[ops[q]]) dep[j] = 1;
    }
    for (int32_t s = 0; s < k->n_stores; s++) {
        int32_t v = k->stores[s].value;
        if (v >= 0 && v < k->n_insts && dep[v] && !written[k->stores[s].at.slot]) {
            written[k->stores[s].at.slot] = 1;
            marked++;
        }
    }
    if (k->has_reduce && k->reduce.value >= 0 && k->reduce.value < k->n_insts && dep[k->reduce.value] &&
        !written[k->reduce.out.slot]) {
        written[k->reduce.out.slot] = 1;
        marked++;
    }
    free(dep);
    return marked;
}
