#include "common/ops.h"

#include "common/dtype.h"

static const struct {
    int arity;
    const char *label;
    int ulps;
} op_table[] = {
#define ND_X_ROW(name, arity, label, kind, ulps) {arity, #label, ulps},
    ND_ELEMENTWISE_OPS(ND_X_ROW)
#undef ND_X_ROW
};
_Static_assert(sizeof op_table / sizeof op_table[0] == ND_NUM_ELEMENTWISE_OPS,
               "one row per op");

int nd_op_arity(nd_op op) { return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].arity : 0; }
const char *nd_op_label(nd_op op) {
    return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].label : "?";
}
int nd_op_ulps(nd_op op) { return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? op_table[op].ulps : 0; }

/* ops.h spells these dtypes as numbers (it does not include dtype.h) */
_Static_assert(ND_BOOL == 0 && ND_INT8 == 1 && ND_FLOAT16 == 9 && ND_BFLOAT16 == 10 &&
                   ND_FLOAT32 == 11 && ND_FLOAT64 == 12 && ND_COMPLEX64 == 13 &&
                   ND_COMPLEX128 == 14,
               "nd_op_compute_dtype's dtype numbers");

static const struct {
    const char *label;
    const char *combine;
    int identity;
} reduce_table[] = {
#define ND_X_ROW(name, label, init, identity, result, combine) {#label, #combine, identity},
    ND_REDUCE_KINDS(ND_X_ROW)
#undef ND_X_ROW
};
_Static_assert(sizeof reduce_table / sizeof reduce_table[0] == ND_NUM_REDUCE_KINDS,
               "one row per reduction kind");

const char *nd_reduce_label(nd_reduce_kind k) {
    return (unsigned)k < ND_NUM_REDUCE_KINDS ? reduce_table[k].label : "?";
}
const char *nd_reduce_combine_label(nd_reduce_kind k) {
    return (unsigned)k < ND_NUM_REDUCE_KINDS ? reduce_table[k].combine : "?";
}
int nd_reduce_has_identity(nd_reduce_kind k) {
    return (unsigned)k < ND_NUM_REDUCE_KINDS ? reduce_table[k].identity : 0;
}
