#include "common/ops.h"

#include "common/dtype.h"

static const struct {
    int arity;
    const char *label;
    nd_op_kind kind;
    int ulps;
} op_table[] = {
#define ND_X_ROW(name, arity, label, kind, ulps) {arity, #label, kind, ulps},
    ND_ELEMENTWISE_OPS(ND_X_ROW)
#undef ND_X_ROW
};
_Static_assert(sizeof op_table / sizeof op_table[0] == ND_NUM_ELEMENTWISE_OPS,
               "one row per op");

int nd_op_arity(nd_op op) { return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].arity : 0; }
const char *nd_op_label(nd_op op) {
    return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].label : "?";
}
nd_op_kind nd_op_kind_of(nd_op op) {
    return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].kind : ND_OPK_CAST;
}
int nd_op_ulps(nd_op op) { return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].ulps : 0; }
int nd_op_is_comparison(nd_op op) { return nd_op_kind_of(op) == ND_OPK_CMP; }

int nd_op_compute_dtype(nd_op op, int t) {
    const int half = t == ND_FLOAT16 || t == ND_BFLOAT16;
    switch (nd_op_kind_of(op)) {
    case ND_OPK_CAST:
    case ND_OPK_WHERE:
        return t;
    case ND_OPK_LOGICAL:
        return ND_BOOL;
    case ND_OPK_CMP:
        return half ? ND_FLOAT32 : t;
    case ND_OPK_FLOAT:
        return half ? ND_FLOAT32 : (t == ND_FLOAT32 || t == ND_FLOAT64) ? t : ND_FLOAT64;
    case ND_OPK_NUM:
        return half ? ND_FLOAT32 : t == ND_BOOL ? ND_INT8 : t;
    }
    return t;
}

const char *nd_reduce_label(nd_reduce_kind k) {
    static const char *names[ND_NUM_REDUCE_KINDS] = {"sum",    "prod",   "min", "max",
                                                     "argmin", "argmax", "any", "all"};
    return (unsigned)k < ND_NUM_REDUCE_KINDS ? names[k] : "?";
}
