#include "common/ops.h"

static const struct {
    int arity;
    const char *label;
} op_table[] = {
#define ND_X_ROW(name, arity, label) {arity, label},
    ND_ELEMENTWISE_OPS(ND_X_ROW)
#undef ND_X_ROW
};

int nd_op_arity(nd_op op) { return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].arity : 0; }
const char *nd_op_label(nd_op op) {
    return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].label : "?";
}
int nd_op_is_comparison(nd_op op) { return op >= ND_OP_EQ && op <= ND_OP_GE; }

const char *nd_reduce_label(nd_reduce_kind k) {
    static const char *names[ND_NUM_REDUCE_KINDS] = {"sum",    "prod",   "min", "max",
                                                     "argmin", "argmax", "any", "all"};
    return (unsigned)k < ND_NUM_REDUCE_KINDS ? names[k] : "?";
}
