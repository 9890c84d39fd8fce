/* What every pass and backend agrees on about a kernel's instructions:
 * which operands are values, and what makes its loop regions sound
 * (kernel_ir.h's ND_IR_LOOP). The CPU interpreter and the CUDA generator
 * both refuse a kernel this check refuses. */
#include "backends/kernel_ir.h"

int nd_ir_value_operands(const nd_kernel *k, const nd_ir_inst *in, int32_t ops[ND_IR_GATHER_MAX_AXES]) {
    int n = 0;
    switch (in->op) {
    case ND_IR_LOAD:
    case ND_IR_PARAM:
    case ND_IR_INDEX: return 0;
    case ND_IR_RAND_UNIFORM:
    case ND_IR_RAND_NORMAL:
    case ND_IR_RAND_INTEGER: ops[n++] = in->a; return n;
    case ND_IR_GATHER: return in->a >= 0 && in->a < k->n_gathers ? nd_ir_gather_indices(k, in, ops) : 0;
    case ND_IR_UFUNC:
        ops[n++] = in->a;
        ops[n++] = in->b;
        ops[n++] = in->c;
        ops[n++] = in->d;
        return n;
    case ND_IR_LOOP:
    case ND_IR_LOOP_END:
        ops[n++] = in->a;
        ops[n++] = in->b;
        return n;
    default: {
        int ar = in->op < ND_NUM_ELEMENTWISE_OPS ? nd_op_arity((nd_op)in->op) : 0;
        const int32_t abc[3] = {in->a, in->b, in->c};
        for (int q = 0; q < ar && q < 3; q++) ops[n++] = abc[q];
        return n;
    }
    }
}

/* Whether value v is visible at j (n_insts: a store or the reduction):
 * not inside a region that closed before j. A LOOP_END's own value leaves
 * its region. */
static int visible(const nd_kernel *k, const int32_t *loop_end, int32_t v, int32_t j) {
    return loop_end[v] < 0 || v == loop_end[v] || j <= loop_end[v] || k->insts[v].op == ND_IR_LOOP_END;
}

const char *nd_kernel_check_loops(const nd_kernel *k, int32_t *loop_end, int32_t *at) {
    int32_t open = -1, loops = 0;
    *at = -1;
    for (int32_t j = 0; j < k->n_insts; j++) {
        const nd_ir_inst *in = &k->insts[j];
        loop_end[j] = -1;
        *at = j;
        if (in->op == ND_IR_LOOP) {
            if (open >= 0) return "a loop opens inside another";
            if (in->a < 0 || in->a >= j || k->insts[in->a].op != ND_IR_PARAM || k->insts[in->a].dtype != ND_INT64)
                return "a loop's count is not an earlier int64 parameter";
            if (in->b < 0 || in->b >= j || k->insts[in->b].dtype != in->dtype)
                return "a loop's first value is not an earlier value of its dtype";
            open = j;
            loops++;
        } else if (in->op == ND_IR_LOOP_END) {
            if (open < 0 || in->a != open) return "a loop end closes no open loop";
            if (in->dtype != k->insts[open].dtype || in->b < 0 || in->b >= j || k->insts[in->b].dtype != in->dtype)
                return "a loop end's carried value is not an earlier value of the loop's dtype";
            for (int32_t r = open; r <= j; r++) loop_end[r] = j;
            open = -1;
        }
    }
    if (open >= 0) {
        *at = open;
        return "a loop is not closed";
    }
    *at = -1;
    if (loops == 0) return NULL;
    for (int32_t j = 0; j < k->n_insts; j++) {
        int32_t ops[ND_IR_GATHER_MAX_AXES];
        const int n = nd_ir_value_operands(k, &k->insts[j], ops);
        for (int q = 0; q < n; q++)
            if (ops[q] >= 0 && ops[q] < j && !visible(k, loop_end, ops[q], j)) {
                *at = j;
                return "a value inside a closed loop is read after it";
            }
    }
    for (int32_t s = 0; s < k->n_stores; s++)
        if (k->stores[s].value >= 0 && k->stores[s].value < k->n_insts &&
            !visible(k, loop_end, k->stores[s].value, k->n_insts)) {
            *at = k->stores[s].value;
            return "a store writes a value inside a loop";
        }
    if (k->has_reduce && k->reduce.value >= 0 && k->reduce.value < k->n_insts &&
        !visible(k, loop_end, k->reduce.value, k->n_insts)) {
        *at = k->reduce.value;
        return "the reduction reads a value inside a loop";
    }
    return NULL;
}
