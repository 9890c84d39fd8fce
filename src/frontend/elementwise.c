/* Elementwise ops: NEP 50 dtype resolution per op, then one MAP node. */
#include "frontend/frontend.h"
#include "frontend/record_inline.h"
#include "frontend/scope_replay.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Inline: every elementwise op's first step (a call cost a third of it). */
static inline __attribute__((always_inline)) int check_inputs(const char *fn, nd_array *a,
                                                              const char *an, nd_array *b,
                                                              const char *bn) {
    if (nd_fe_arg(fn, an, a)) return -1;
    if (bn && nd_fe_arg(fn, bn, b)) return -1;
    return nd_runtime_ensure() == ND_OK ? 0 : -1;
}

static nd_array *dtype_error(const char *fn, const char *what, nd_dtype t, const char *fix) {
    nd_error_set(ND_ERR_DTYPE, "%s: %s of %s is not supported (%s)", fn, what, nd_dtype_name(t),
                 fix);
    return NULL;
}


/* Complex operands: NumPy's complex loops go ahead (0); NumPy's TypeErrors
 * (floor, %, arctan2, bitwise ... of a complex) are ND_ERR_DTYPE. nd has
 * every complex loop of NumPy's among these ops. */
static int complex_gate(const char *fn, nd_op op, nd_dtype t) {
    if (!nd_dtype_is_complex(t)) return 0;
    switch (op) {
    case ND_OP_CAST: case ND_OP_WHERE: case ND_OP_NEG: case ND_OP_ABS: case ND_OP_SQRT:
    case ND_OP_EXP: case ND_OP_LOG: case ND_OP_RECIPROCAL: case ND_OP_SQUARE: case ND_OP_ISNAN:
    case ND_OP_ISINF: case ND_OP_ISFINITE: case ND_OP_LOGICAL_NOT: case ND_OP_ADD: case ND_OP_SUB:
    case ND_OP_MUL: case ND_OP_DIV: case ND_OP_MAX: case ND_OP_MIN: case ND_OP_EQ: case ND_OP_NE:
    case ND_OP_LT: case ND_OP_LE: case ND_OP_GT: case ND_OP_GE: case ND_OP_LOGICAL_AND:
    case ND_OP_LOGICAL_OR: case ND_OP_LOGICAL_XOR: case ND_OP_FMAX: case ND_OP_FMIN:
    case ND_OP_CONJ: case ND_OP_REAL: case ND_OP_IMAG: case ND_OP_CABS: case ND_OP_ANGLE:
    case ND_OP_MAKE_COMPLEX: case ND_OP_SIN: case ND_OP_COS: case ND_OP_TAN: case ND_OP_SINH:
    case ND_OP_COSH: case ND_OP_TANH: case ND_OP_ARCSIN: case ND_OP_ARCCOS: case ND_OP_ARCTAN:
    case ND_OP_ARCSINH: case ND_OP_ARCCOSH: case ND_OP_ARCTANH: case ND_OP_EXP2:
    case ND_OP_EXPM1: case ND_OP_LOG2: case ND_OP_LOG10: case ND_OP_LOG1P: case ND_OP_RINT:
    case ND_OP_SIGN: case ND_OP_POW:
        return 0;
    case ND_OP_FLOOR: case ND_OP_CEIL: case ND_OP_TRUNC: case ND_OP_SIGNBIT: case ND_OP_ISPOSINF:
    case ND_OP_ISNEGINF: case ND_OP_INVERT: case ND_OP_DEG2RAD: case ND_OP_RAD2DEG:
    case ND_OP_CBRT: case ND_OP_FLOOR_DIVIDE: case ND_OP_REMAINDER: case ND_OP_FMOD:
    case ND_OP_ARCTAN2: case ND_OP_HYPOT: case ND_OP_COPYSIGN: case ND_OP_HEAVISIDE:
    case ND_OP_NEXTAFTER: case ND_OP_NEXTAFTER_F16: case ND_OP_NEXTAFTER_BF16: case ND_OP_LDEXP:
    case ND_OP_LOGADDEXP: case ND_OP_LOGADDEXP2: case ND_OP_BITWISE_AND: case ND_OP_BITWISE_OR:
    case ND_OP_BITWISE_XOR: case ND_OP_LEFT_SHIFT: case ND_OP_RIGHT_SHIFT: case ND_OP_GCD:
    case ND_OP_LCM:
        dtype_error(fn, nd_op_label(op), t,
                    "NumPy defines it for real numbers only (TypeError); take nd_real, nd_imag "
                    "or nd_abs first");
        return -1;
    }
    return 0;
}

/* The rules below depend on the op and the operands' dtypes and weakness
 * alone, except for a Python int, whose value may not fit (those are not
 * remembered). A hit skips the dtype rules: a direct-mapped table, the
 * whole key kept in the entry's high half, the resolved op and dtypes in
 * the low one. */
static uint32_t binary_key_of(nd_op op, nd_dtype da, unsigned wa, nd_dtype db, unsigned wb) {
    _Static_assert(ND_NUM_ELEMENTWISE_OPS < (1 << 14) && ND_NUM_DTYPES < 64, "binary_key's fields");
    return 1u << 31 | (uint32_t)op << 16 | (uint32_t)da << 9 | (uint32_t)wa << 8 | (uint32_t)db << 1 |
           (uint32_t)(wb != 0);
}
static uint32_t binary_key(nd_op op, const nd_array *a, const nd_array *b) {
    return binary_key_of(op, a->dtype, a->weak, b->dtype, b->weak);
}

static uint64_t *binary_rule_slot(uint32_t key) {
    return &nd_rt.binary_rules[(key * 0x9E3779B1u) >> 26];
}

/* Records the MAP of the rules' outcome: `asked` the op called, `op` the
 * one it resolved to (bool + is logical or). */
static nd_array *binary_map(const char *fn, nd_op asked, nd_op op, nd_array *const *in,
                            nd_dtype cdtype, nd_dtype dtype) {
    const nd_array *a = in[0], *b = in[1];
    if (a->weak != ND_WEAK_INT && b->weak != ND_WEAK_INT) {
        const uint32_t key = binary_key(asked, a, b);
        *binary_rule_slot(key) = (uint64_t)key << 32 | fe_rule_bits(op, dtype, cdtype);
    }
    return nd_fe_map(fn, op, 2, in, NULL, cdtype, dtype);
}

/* The dtype rules themselves, when no remembered outcome applies. */
static nd_array *binary_rules(const char *fn, nd_op op, nd_array *a, nd_array *b) {
    const nd_op asked = op;
    int cmp = nd_op_is_comparison(op);
    nd_op_kind kind = nd_op_kind_of(op);
    /* Integer true division and float math compute in a float, logical ops
     * in bool, so, like a comparison, they take any Python int (NumPy:
     * int8 array / 300, arctan2(int8 array, 300), logical_and(int8 array,
     * 300) are fine). */
    nd_dtype t = nd_fe_result_type(fn, a, b, cmp || op == ND_OP_DIV || kind == ND_OPK_FLOAT ||
                                                 kind == ND_OPK_LOGICAL);
    /* Float math of an integer array and a Python int picks the array's
     * float loop, whatever the int's size (NumPy 2.4: arctan2(int8 array,
     * 300) is float16, 300 converted to float16). */
    const nd_array *strong = a->weak ? b : a, *weak = a->weak ? a : b;
    nd_dtype_kind sk = nd_dtype_kind_of(strong->dtype);
    if (kind == ND_OPK_FLOAT && !strong->weak && weak->weak == ND_WEAK_INT &&
        (sk == ND_KIND_INT || sk == ND_KIND_UINT))
        t = strong->dtype;
    if (t == ND_NUM_DTYPES) return NULL;
    if (complex_gate(fn, op, t)) return NULL;
    nd_dtype cdtype = t, dtype = t;
    nd_array *in[2] = {a, b};
    if (kind == ND_OPK_LOGICAL) {
        /* NumPy's logical_and/or/xor: each operand != 0, result bool; a
         * weak scalar by its own value (NumPy 2.4: logical_and(float32
         * array, 1e-50) is true) */
        nd_dtype consts[2] = {ND_BOOL, ND_BOOL};
        return nd_fe_map(fn, op, 2, in, consts, ND_BOOL, ND_BOOL);
    }
    const int gcd_lcm = op == ND_OP_GCD || op == ND_OP_LCM;
    if (kind == ND_OPK_INT && nd_dtype_kind_of(t) == ND_KIND_FLOAT)
        return dtype_error(fn, gcd_lcm ? "gcd/lcm" : "a bitwise op", t,
                           gcd_lcm ? "NumPy's gcd and lcm take integers; use nd_astype to an "
                                     "integer dtype first"
                                   : "NumPy's bitwise ops and shifts take integers and bool; use "
                                     "nd_astype to an integer dtype first");
    if (gcd_lcm && t == ND_BOOL)
        return dtype_error(fn, "gcd/lcm", t,
                           "NumPy has no boolean gcd or lcm; use nd_astype to an integer dtype "
                           "first");
    if (cmp) {
        dtype = ND_BOOL;
    } else if (t == ND_BOOL) {
        /* NumPy's bool loops: + and maximum are or, * and minimum are and. */
        switch (op) {
        case ND_OP_ADD: case ND_OP_MAX: case ND_OP_FMAX: case ND_OP_BITWISE_OR:
            op = ND_OP_LOGICAL_OR;
            break;
        case ND_OP_MUL: case ND_OP_MIN: case ND_OP_FMIN: case ND_OP_BITWISE_AND:
            op = ND_OP_LOGICAL_AND;
            break;
        case ND_OP_BITWISE_XOR: op = ND_OP_LOGICAL_XOR; break;
        /* NumPy's bool loops for //, % and fmod start at int8 */
        case ND_OP_FLOOR_DIVIDE: case ND_OP_REMAINDER: case ND_OP_FMOD:
        case ND_OP_LEFT_SHIFT: case ND_OP_RIGHT_SHIFT: /* and for shifts */
            cdtype = dtype = ND_INT8;
            break;
        case ND_OP_SUB:
            return dtype_error(fn, "subtraction", t,
                               "NumPy has no boolean subtract; use nd_ne for xor, or nd_astype "
                               "to an integer dtype first");
        case ND_OP_DIV: cdtype = dtype = ND_FLOAT64; break;
        case ND_OP_POW: cdtype = dtype = ND_INT8; break;
        default: break;
        }
    } else if (op == ND_OP_DIV && !nd_dtype_is_float(t) && !nd_dtype_is_complex(t)) {
        cdtype = dtype = ND_FLOAT64; /* NumPy true_divide of integers */
    }
    /* float-only math (arctan2, hypot, copysign): NumPy's float result */
    if (kind == ND_OPK_FLOAT) cdtype = dtype = nd_float_result(t);
    /* float16/bfloat16 step in their own format (common/ops.h) */
    if (op == ND_OP_NEXTAFTER && dtype == ND_FLOAT16) op = ND_OP_NEXTAFTER_F16;
    if (op == ND_OP_NEXTAFTER && dtype == ND_BFLOAT16) op = ND_OP_NEXTAFTER_BF16;
    if (op == ND_OP_POW && nd_dtype_kind_of(dtype) != ND_KIND_FLOAT &&
        nd_dtype_kind_of(dtype) != ND_KIND_COMPLEX && b->weak == ND_WEAK_INT &&
        b->weak_value.i < 0) {
        nd_error_set(ND_ERR_ARG, "%s: integers to negative integer powers are not allowed "
                     "(exponent %lld on %s; use nd_astype to a float dtype first)",
                     fn, (long long)b->weak_value.i, nd_dtype_name(dtype));
        return NULL;
    }
    return binary_map(fn, asked, op, in, cdtype, dtype);
}

/* A remembered outcome, else the rules: the binary ops of compositions
 * (nd_clip, nd_round, ...). The public ops take binary_op below. */
nd_array *nd_fe_binary(const char *fn, nd_op op, nd_array *a, nd_array *b) {
    if (a->weak != ND_WEAK_INT && b->weak != ND_WEAK_INT) {
        const uint32_t key = binary_key(op, a, b);
        const uint64_t e = *binary_rule_slot(key);
        if ((uint32_t)(e >> 32) == key) {
            nd_array *in[2] = {a, b};
            return nd_fe_map(fn, fe_rule_op((uint32_t)e), 2, in, NULL, fe_rule_cdtype((uint32_t)e),
                             fe_rule_dtype((uint32_t)e));
        }
    }
    return binary_rules(fn, op, a, b);
}

nd_array *nd_fe_unary(const char *fn, nd_op op, nd_array *a) {
    nd_dtype t = a->dtype; /* a weak scalar alone acts as its strong self */
    nd_dtype_kind k = nd_dtype_kind_of(t);
    nd_dtype cdtype = t, dtype = t;
    if (complex_gate(fn, op, t)) return NULL;
    if (k == ND_KIND_COMPLEX && (op == ND_OP_ABS || nd_op_kind_of(op) == ND_OPK_C2R)) {
        /* |z|, angle, parts: computed in the complex dtype, a real result */
        if (op == ND_OP_ABS) op = ND_OP_CABS;
        return nd_fe_map(fn, op, 1, &a, NULL, t, nd_dtype_part(t));
    }
    switch (op) {
    case ND_OP_NEG:
        if (k == ND_KIND_BOOL)
            return dtype_error(fn, "negation", t,
                               "NumPy has no boolean negative; use nd_logical_not");
        break;
    case ND_OP_ABS:
        if (k == ND_KIND_BOOL || k == ND_KIND_UINT) op = ND_OP_CAST; /* identity */
        break;
    case ND_OP_FLOOR: case ND_OP_CEIL: case ND_OP_TRUNC:
        /* integers (bool too: NumPy 2.4's trunc(bool) is bool) are already
         * whole */
        if (k != ND_KIND_FLOAT) op = ND_OP_CAST;
        break;
    case ND_OP_SIGN:
        if (k == ND_KIND_BOOL)
            return dtype_error(fn, "sign", t,
                               "NumPy has no boolean sign; use nd_astype to an integer dtype "
                               "first");
        break;
    case ND_OP_RECIPROCAL:
        if (k == ND_KIND_BOOL) cdtype = dtype = ND_INT8; /* NumPy's loops start at int8 */
        break;
    case ND_OP_ISNAN: case ND_OP_ISINF: case ND_OP_ISFINITE: case ND_OP_SIGNBIT:
    case ND_OP_ISPOSINF: case ND_OP_ISNEGINF:
        dtype = ND_BOOL; /* computed in a's dtype, every dtype allowed */
        break;
    case ND_OP_INVERT:
        if (k == ND_KIND_BOOL) op = ND_OP_LOGICAL_NOT; /* NumPy: ~ of bool is not */
        else if (k == ND_KIND_FLOAT)
            return dtype_error(fn, "bitwise not", t,
                               "NumPy's invert takes integers and bool; use nd_astype to an "
                               "integer dtype first");
        break;
    case ND_OP_SQUARE:
        if (k == ND_KIND_BOOL) cdtype = dtype = ND_INT8; /* NumPy's square loops start at int8 */
        break;
    case ND_OP_LOGICAL_NOT:
        cdtype = dtype = ND_BOOL;
        break;
    default: break;
    }
    /* float-only math (common/ops.h's kind): NumPy's float result dtype */
    if (nd_op_kind_of(op) == ND_OPK_FLOAT) cdtype = dtype = nd_float_result(t);
    if (op == ND_OP_CAST) cdtype = t;
    return nd_fe_map(fn, op, 1, &a, NULL, cdtype, dtype);
}

/* Whether two operands have one shape (no broadcast between them). */
static inline int same_shape(const nd_array *a, const nd_array *b) {
    if (a->ndim != b->ndim) return 0;
    for (int j = 0; j < a->ndim; j++)
        if (a->shape[j] != b->shape[j]) return 0;
    return 1;
}

/* Every public binary op, in one function: the API lock's guard (taken
 * for fn), the checks, the remembered rule (as a call of its own, its
 * prologue and the arguments passed on were a tenth of recording the op)
 * and, on a hit, the node recorded inline (record_inline.h's fe_map;
 * nd_fe_map as a call cost its prologue and seven arguments). A public op
 * is a jump here. fe_map inline in each of the thirteen ops instead made
 * LTO's inliner, past its growth limits, call out of line the steps it
 * inlines into one copy (the buffer, the refs, the handle): more
 * instructions than the call it saved. Two strong operands of one shape
 * (x + y) take record_inline.h's fe_map2_same, a strong operand and a
 * Python float into a float op (x * 0.99) its fe_map2_scalar: no operand
 * array, weak test or broadcast per input (fe_map's loop over them was a
 * tenth of recording the op). */
static nd_array *binary_op(const char *fn, nd_op op, nd_array *a, nd_array *b)
    __attribute__((noinline));
static nd_array *binary_op(const char *fn, nd_op op, nd_array *a, nd_array *b) {
    ND_API_GUARD_AS(fn);
    if (check_inputs(fn, a, "a", b, "b")) return NULL;
    uint64_t e;
    if (!(a->weak | b->weak)) {
        /* Two strong operands, tested first: their key has no weak bits
         * to read (and the same-shape case below no weak input to test) */
        const uint32_t key = binary_key_of(op, a->dtype, 0, b->dtype, 0);
        e = *binary_rule_slot(key);
        if ((uint32_t)(e >> 32) != key) goto rules;
        if (same_shape(a, b)) return nd_runtime_track_inline(fe_map2_same(fn, (uint32_t)e, a, b));
    } else if (a->weak != ND_WEAK_INT && b->weak != ND_WEAK_INT) {
        const uint32_t key = binary_key(op, a, b);
        e = *binary_rule_slot(key);
        if ((uint32_t)(e >> 32) != key) goto rules;
        /* One strong operand and a 0-d Python float into a float compute
         * dtype (x * 0.99): fe_map's case of a weak input taken as is. */
        const nd_array *w = a->weak ? a : b, *x = a->weak ? b : a;
        if (!x->weak && w->ndim == 0 && nd_dtype_kind_of(fe_rule_cdtype((uint32_t)e)) == ND_KIND_FLOAT)
            return nd_runtime_track_inline(fe_map2_scalar(fn, (uint32_t)e, x, a->weak ? 1 : 0, w));
    } else {
        goto rules;
    }
    {
        nd_array *in[2] = {a, b};
        return nd_runtime_track_inline(fe_map(fn, fe_rule_op((uint32_t)e), 2, in, NULL,
                                              fe_rule_cdtype((uint32_t)e), fe_rule_dtype((uint32_t)e)));
    }
rules:
    return nd_runtime_track(binary_rules(fn, op, a, b));
}

#define BINARY(name, op)                                                                   \
    nd_array *name(nd_array *a, nd_array *b) {                                             \
        ND_API_REPLAYABLE_IN(binary_op, return nd_replay_op(#name, op, a, b));             \
        return binary_op(#name, op, a, b);                                                 \
    }
BINARY(nd_add, ND_OP_ADD)
BINARY(nd_sub, ND_OP_SUB)
BINARY(nd_mul, ND_OP_MUL)
BINARY(nd_div, ND_OP_DIV)
BINARY(nd_pow, ND_OP_POW)
BINARY(nd_maximum, ND_OP_MAX)
BINARY(nd_minimum, ND_OP_MIN)
BINARY(nd_eq, ND_OP_EQ)
BINARY(nd_ne, ND_OP_NE)
BINARY(nd_lt, ND_OP_LT)
BINARY(nd_le, ND_OP_LE)
BINARY(nd_gt, ND_OP_GT)
BINARY(nd_ge, ND_OP_GE)
BINARY(nd_arctan2, ND_OP_ARCTAN2)
BINARY(nd_hypot, ND_OP_HYPOT)
BINARY(nd_copysign, ND_OP_COPYSIGN)
BINARY(nd_heaviside, ND_OP_HEAVISIDE)
BINARY(nd_fmax, ND_OP_FMAX)
BINARY(nd_fmin, ND_OP_FMIN)
BINARY(nd_logical_and, ND_OP_LOGICAL_AND)
BINARY(nd_logical_or, ND_OP_LOGICAL_OR)
BINARY(nd_logical_xor, ND_OP_LOGICAL_XOR)
BINARY(nd_bitwise_and, ND_OP_BITWISE_AND)
BINARY(nd_bitwise_or, ND_OP_BITWISE_OR)
BINARY(nd_bitwise_xor, ND_OP_BITWISE_XOR)
BINARY(nd_floor_divide, ND_OP_FLOOR_DIVIDE)
BINARY(nd_remainder, ND_OP_REMAINDER)
BINARY(nd_mod, ND_OP_REMAINDER)
BINARY(nd_fmod, ND_OP_FMOD)
BINARY(nd_nextafter, ND_OP_NEXTAFTER)
BINARY(nd_logaddexp, ND_OP_LOGADDEXP)
BINARY(nd_logaddexp2, ND_OP_LOGADDEXP2)
BINARY(nd_left_shift, ND_OP_LEFT_SHIFT)
BINARY(nd_right_shift, ND_OP_RIGHT_SHIFT)
BINARY(nd_gcd, ND_OP_GCD)
BINARY(nd_lcm, ND_OP_LCM)
#undef BINARY

static nd_array *unary_op(const char *fn, nd_op op, nd_array *a) __attribute__((noinline));
static nd_array *unary_op(const char *fn, nd_op op, nd_array *a) {
    ND_API_GUARD_AS(fn);
    if (check_inputs(fn, a, "a", NULL, NULL)) return NULL;
    return nd_runtime_track(nd_fe_unary(fn, op, a));
}

#define UNARY(name, op)                                                                    \
    nd_array *name(nd_array *a) {                                                          \
        ND_API_REPLAYABLE_IN(unary_op, return nd_replay_op(#name, op, a, NULL));           \
        return unary_op(#name, op, a);                                                     \
    }
UNARY(nd_neg, ND_OP_NEG)
UNARY(nd_abs, ND_OP_ABS)
UNARY(nd_sqrt, ND_OP_SQRT)
UNARY(nd_exp, ND_OP_EXP)
UNARY(nd_log, ND_OP_LOG)
UNARY(nd_sin, ND_OP_SIN)
UNARY(nd_cos, ND_OP_COS)
UNARY(nd_tanh, ND_OP_TANH)
UNARY(nd_tan, ND_OP_TAN)
UNARY(nd_floor, ND_OP_FLOOR)
UNARY(nd_ceil, ND_OP_CEIL)
UNARY(nd_square, ND_OP_SQUARE)
UNARY(nd_logical_not, ND_OP_LOGICAL_NOT)
UNARY(nd_arcsin, ND_OP_ARCSIN)
UNARY(nd_arccos, ND_OP_ARCCOS)
UNARY(nd_arctan, ND_OP_ARCTAN)
UNARY(nd_sinh, ND_OP_SINH)
UNARY(nd_cosh, ND_OP_COSH)
UNARY(nd_arcsinh, ND_OP_ARCSINH)
UNARY(nd_arccosh, ND_OP_ARCCOSH)
UNARY(nd_arctanh, ND_OP_ARCTANH)
UNARY(nd_exp2, ND_OP_EXP2)
UNARY(nd_expm1, ND_OP_EXPM1)
UNARY(nd_log2, ND_OP_LOG2)
UNARY(nd_log10, ND_OP_LOG10)
UNARY(nd_log1p, ND_OP_LOG1P)
UNARY(nd_cbrt, ND_OP_CBRT)
UNARY(nd_rint, ND_OP_RINT)
UNARY(nd_deg2rad, ND_OP_DEG2RAD)
UNARY(nd_rad2deg, ND_OP_RAD2DEG)
UNARY(nd_reciprocal, ND_OP_RECIPROCAL)
UNARY(nd_trunc, ND_OP_TRUNC)
UNARY(nd_sign, ND_OP_SIGN)
UNARY(nd_isnan, ND_OP_ISNAN)
UNARY(nd_isinf, ND_OP_ISINF)
UNARY(nd_isfinite, ND_OP_ISFINITE)
UNARY(nd_signbit, ND_OP_SIGNBIT)
UNARY(nd_isposinf, ND_OP_ISPOSINF)
UNARY(nd_isneginf, ND_OP_ISNEGINF)
UNARY(nd_invert, ND_OP_INVERT)
UNARY(nd_bitwise_not, ND_OP_INVERT)
#undef UNARY

nd_array *nd_fe_elementwise_call(const char *fn, nd_op op, nd_array *a, nd_array *b) {
    return b ? binary_op(fn, op, a, b) : unary_op(fn, op, a);
}

/* real and imag of a complex array are views of its parts, as NumPy's
 * (writes through them change the array); of a weak scalar they are values
 * (a weak scalar has no memory a view could write). conj, real, imag and
 * angle of a real array: NumPy's identities (conj gives the array's
 * values, real the array itself as a view, imag read-only zeros, angle 0
 * or pi by the sign). */
static nd_array *complex_part(const char *fn, nd_op op, nd_array *a) {
    if (nd_dtype_is_complex(a->dtype)) {
        if (op == ND_OP_CONJ) return nd_fe_map(fn, op, 1, &a, NULL, a->dtype, a->dtype);
        if ((op == ND_OP_REAL || op == ND_OP_IMAG) && !a->weak) return nd_fe_part_view(a, op == ND_OP_IMAG);
        return nd_fe_unary(fn, op, a);
    }
    switch (op) {
    case ND_OP_CONJ:
        if (a->dtype == ND_BOOL)
            return dtype_error(fn, "conjugate", a->dtype,
                               "NumPy has no boolean conjugate; use nd_astype first");
        return nd_fe_astype(fn, a, a->dtype);
    case ND_OP_REAL:
        if (a->weak) return nd_fe_astype(fn, a, a->dtype);
        return nd_fe_view(a, a->ndim, a->shape, a->strides, a->offset);
    case ND_OP_IMAG: {
        nd_array *z = nd_fe_full(fn, a->dtype, a->ndim, a->shape, nd_fe_double_bits(0.0, a->dtype));
        if (z && !a->weak) z->readonly = ND_READONLY_IMAG_OF_REAL;
        return z;
    }
    default: {
        /* angle(x) = arctan2(0, x): 0 for x >= +0, pi for x <= -0, NaN for NaN */
        nd_array *zero = nd_fe_scalar(0.0);
        if (!zero) return NULL;
        nd_array *r = nd_fe_binary(fn, ND_OP_ARCTAN2, zero, a);
        nd_fe_release(zero);
        return r;
    }
    }
}

#define PART(name, op)                                                                     \
    nd_array *name(nd_array *a) {                                                          \
        ND_API_GUARD();                                                                    \
        if (check_inputs(#name, a, "a", NULL, NULL)) return NULL;                          \
        return nd_runtime_track(complex_part(#name, op, a));                               \
    }
PART(nd_conj, ND_OP_CONJ)
PART(nd_conjugate, ND_OP_CONJ)
PART(nd_real, ND_OP_REAL)
PART(nd_imag, ND_OP_IMAG)
PART(nd_angle, ND_OP_ANGLE)
#undef PART

/* The identity of every dtype but bool (NumPy has no boolean positive): a
 * cast to its own dtype, which fuses away, so it needs no row of its own in
 * the op table. */
nd_array *nd_positive(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_positive";
    if (check_inputs(fn, a, "a", NULL, NULL)) return NULL;
    if (a->dtype == ND_BOOL)
        return dtype_error(fn, "positive", a->dtype,
                           "NumPy has no boolean positive; use nd_astype to an integer dtype "
                           "first");
    return nd_runtime_track(nd_fe_astype(fn, a, a->dtype));
}

nd_array *nd_where(nd_array *cond, nd_array *a, nd_array *b) {
    ND_API_REPLAYABLE_AS("nd_where", return nd_replay_where(cond, a, b));
    return nd_fe_where_call(cond, a, b);
}

nd_array *nd_fe_where_call(nd_array *cond, nd_array *a, nd_array *b) {
    static const char fn[] = "nd_where";
    if (check_inputs(fn, cond, "cond", a, "a") || check_inputs(fn, b, "b", NULL, NULL))
        return NULL;
    nd_dtype t = nd_fe_result_type(fn, a, b, 0);
    if (t == ND_NUM_DTYPES) return NULL;
    /* WHERE reads its condition as bool: convert a non-bool one first (the
     * cast fuses into the same kernel). */
    nd_array *c = cond;
    if (cond->dtype != ND_BOOL && !cond->weak) {
        c = nd_fe_astype(fn, cond, ND_BOOL);
        if (!c) return NULL;
    }
    nd_array *in[3] = {c, a, b};
    nd_dtype consts[3] = {ND_BOOL, t, t};
    nd_array *r = nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, t, t);
    if (c != cond) nd_fe_release(c);
    return nd_runtime_track(r);
}

/* Whether w is a Python-int scalar below (side -1) or above (side 1) every
 * value of a's integer dtype. */
static int weak_int_beyond(const nd_array *w, const nd_array *a, int side) {
    nd_dtype_kind k = nd_dtype_kind_of(a->dtype);
    if (w->weak != ND_WEAK_INT || a->weak || (k != ND_KIND_INT && k != ND_KIND_UINT)) return 0;
    const int64_t v = w->weak_value.i;
    const int bits = 8 * (int)nd_dtype_size(a->dtype);
    if (k == ND_KIND_UINT) return side < 0 ? v < 0 : bits < 64 && v > (int64_t)((1ull << bits) - 1);
    if (bits == 64) return 0;
    return side < 0 ? v < -(1ll << (bits - 1)) : v > (1ll << (bits - 1)) - 1;
}

nd_array *nd_clip(nd_array *a, nd_array *lo, nd_array *hi) {
    ND_API_GUARD();
    static const char fn[] = "nd_clip";
    if (check_inputs(fn, a, "a", lo, "lo") || check_inputs(fn, hi, "hi", NULL, NULL))
        return NULL;
    /* Check the whole broadcast and promotion up front so that a failure
     * records nothing. */
    nd_array *all[3] = {a, lo, hi};
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    if (nd_fe_broadcast(fn, 3, all, &ndim, shape)) return NULL;
    /* NumPy 2 clips an integer array by a Python int beyond its dtype's range
     * correctly (clip(uint8, -1, 300) is the array itself): such a bound
     * cannot bind, so it is left out rather than refused. A bound beyond on
     * the other side (lo above the maximum) is still ND_ERR_DTYPE, as NumPy. */
    const int skip_lo = weak_int_beyond(lo, a, -1), skip_hi = weak_int_beyond(hi, a, 1);
    nd_array *m = skip_lo ? nd_fe_astype(fn, a, a->dtype) : nd_fe_binary(fn, ND_OP_MAX, a, lo);
    if (!m) return NULL;
    nd_array *r = m;
    if (!skip_hi) {
        r = nd_fe_binary(fn, ND_OP_MIN, m, hi);
        nd_fe_release(m);
    }
    return nd_runtime_track(r);
}

/* ------------------------------------------------- ops with their own rules */

nd_array *nd_ldexp(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_ldexp";
    if (check_inputs(fn, a, "a", b, "b")) return NULL;
    /* NumPy's loops take an int32 or int64 exponent: bool and integers that
     * cast to int64 safely (not uint64), a Python int that fits int32. */
    nd_dtype_kind bk = nd_dtype_kind_of(b->dtype);
    if (b->weak == ND_WEAK_FLOAT || (!b->weak && (bk == ND_KIND_FLOAT || b->dtype == ND_UINT64)))
        return dtype_error(fn, "an exponent", b->weak ? ND_FLOAT64 : b->dtype,
                           "NumPy's ldexp takes a bool or integer exponent that fits int64; use "
                           "nd_astype to int64 first");
    if (b->weak == ND_WEAK_INT && (b->weak_value.i < INT32_MIN || b->weak_value.i > INT32_MAX)) {
        nd_error_set(ND_ERR_DTYPE, "%s: the Python-int exponent %lld is out of range for int32 "
                     "(NumPy 2 raises OverflowError here; pass an int64 array, or a value in "
                     "range)", fn, (long long)b->weak_value.i);
        return NULL;
    }
    /* The result is a's float dtype; NumPy 2.4 gives a Python float a
     * float64 result and a Python int a float16 one (its first loop). */
    nd_dtype dtype = a->weak == ND_WEAK_FLOAT ? ND_FLOAT64
                     : a->weak == ND_WEAK_INT ? ND_FLOAT16
                                              : nd_float_result(a->dtype);
    /* float16/bfloat16 compute in float32, where every useful exponent is
     * exact (NumPy's half loop calls ldexpf too) */
    nd_dtype cdtype = dtype == ND_FLOAT16 || dtype == ND_BFLOAT16 ? ND_FLOAT32 : dtype;
    nd_array *in[2] = {a, b};
    return nd_runtime_track(nd_fe_map(fn, ND_OP_LDEXP, 2, in, NULL, cdtype, dtype));
}

nd_array *nd_float_power(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_float_power";
    if (check_inputs(fn, a, "a", b, "b")) return NULL;
    /* NumPy's loops are float64 ** float64 (every real dtype casts to it
     * safely) and complex128 ** complex128: POW in one of them */
    nd_array *in[2] = {a, b};
    nd_dtype t = nd_dtype_is_complex(a->dtype) || nd_dtype_is_complex(b->dtype) ? ND_COMPLEX128 : ND_FLOAT64;
    return nd_runtime_track(nd_fe_map(fn, ND_OP_POW, 2, in, NULL, t, t));
}

/* Temporaries of a composed op, released together when it is recorded. */
typedef struct {
    nd_array *t[16];
    int n;
} fe_temps;

/* Keeps a (NULL on failure, which the caller checks) for release. */
static nd_array *keep(fe_temps *T, nd_array *a) {
    if (a) T->t[T->n++] = a;
    return a;
}

static void release_temps(fe_temps *T) {
    for (int i = 0; i < T->n; i++) nd_fe_release(T->t[i]);
}

/* NumPy's power_of_ten (multiarray/calculation.c), to the bit: the table
 * up to 1e8, then 1e9 times 10 once per further digit. */
static double power_of_ten(long long n) {
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    if (n < 9) return p10[n];
    double r = 1e9;
    while (n-- > 9 && !isinf(r)) r *= 10.0;
    return r;
}

static nd_array *round_fe(const char *fn, nd_array *a, int decimals) {
    const nd_dtype_kind k = nd_dtype_kind_of(a->dtype);
    if (k == ND_KIND_COMPLEX) {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: rounding %s is not supported yet (NumPy rounds each "
                     "part; round nd_real and nd_imag)", fn, nd_dtype_name(a->dtype));
        return NULL;
    }
    if (k == ND_KIND_BOOL && decimals != 0) {
        nd_error_set(ND_ERR_DTYPE, "%s: decimals %d of bool is not supported (NumPy cannot "
                     "store the scaled values in bool; use nd_astype to a float dtype first)",
                     fn, decimals);
        return NULL;
    }
    if (k != ND_KIND_FLOAT && k != ND_KIND_BOOL && decimals >= 0)
        return nd_fe_astype(fn, a, a->dtype); /* integers are already whole */
    if (decimals == 0) return nd_fe_unary(fn, ND_OP_RINT, a);
    /* NumPy's PyArray_Round: rint(a * 10^d) / 10^d, or rint(a / 10^-d) *
     * 10^-d for negative d, each a ufunc with 10^d as a Python float (so in
     * a's float dtype); integers go through float64 and cast back. */
    fe_temps T = {{0}, 0};
    nd_array *r = NULL, *x = a, *f, *scaled, *whole;
    const long long d = decimals;
    if (!(f = keep(&T, nd_fe_scalar(power_of_ten(d < 0 ? -d : d))))) goto done;
    if (k != ND_KIND_FLOAT && !(x = keep(&T, nd_fe_astype(fn, a, ND_FLOAT64)))) goto done;
    if (!(scaled = keep(&T, nd_fe_binary(fn, d > 0 ? ND_OP_MUL : ND_OP_DIV, x, f)))) goto done;
    if (!(whole = keep(&T, nd_fe_unary(fn, ND_OP_RINT, scaled)))) goto done;
    r = nd_fe_binary(fn, d > 0 ? ND_OP_DIV : ND_OP_MUL, whole, f);
    if (r && k != ND_KIND_FLOAT && keep(&T, r)) r = nd_fe_astype(fn, r, a->dtype);
done:
    release_temps(&T);
    return r;
}

nd_array *nd_round(nd_array *a, int decimals) {
    ND_API_GUARD();
    static const char fn[] = "nd_round";
    if (check_inputs(fn, a, "a", NULL, NULL)) return NULL;
    nd_array *s = nd_fe_strong(fn, a); /* a Python scalar rounds as float64/int64 */
    if (!s) return NULL;
    nd_array *r = round_fe(fn, s, decimals);
    nd_fe_release(s);
    return nd_runtime_track(r);
}

static nd_array *where_fe(const char *fn, nd_array *cond, nd_array *v, nd_array *x) {
    nd_array *in[3] = {cond, v, x};
    nd_dtype consts[3] = {ND_BOOL, x->dtype, x->dtype};
    return nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, x->dtype, x->dtype);
}

static nd_array *nan_to_num_fe(const char *fn, nd_array *x, double nan, double posinf,
                               double neginf) {
    const nd_dtype t = x->dtype;
    if (nd_dtype_is_complex(t)) {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: %s is not supported yet (NumPy replaces each part; "
                     "use nd_real and nd_imag)", fn, nd_dtype_name(t));
        return NULL;
    }
    if (!nd_dtype_is_float(t)) return nd_fe_astype(fn, x, t); /* integers: a copy */
    const double big = t == ND_FLOAT16 ? 65504.0 : t == ND_BFLOAT16 ? 0x1.fep127
                       : t == ND_FLOAT32 ? (double)FLT_MAX : DBL_MAX;
    if (isnan(posinf)) posinf = big;
    if (isnan(neginf)) neginf = -big;
    fe_temps T = {{0}, 0};
    nd_array *r = NULL, *c, *v, *inner = x;
    /* where(isnan, nan, where(isposinf, posinf, where(isneginf, neginf, x))):
     * the masks are disjoint, so the order is NumPy's copyto sequence */
    const nd_op preds[3] = {ND_OP_ISNEGINF, ND_OP_ISPOSINF, ND_OP_ISNAN};
    const double vals[3] = {neginf, posinf, nan};
    for (int i = 0; i < 3; i++) {
        if (!(c = keep(&T, nd_fe_unary(fn, preds[i], x)))) goto done;
        if (!(v = keep(&T, nd_fe_scalar(vals[i])))) goto done;
        nd_array *w = where_fe(fn, c, v, inner);
        if (!w) goto done;
        if (i == 2) r = w;
        else inner = keep(&T, w);
    }
done:
    release_temps(&T);
    return r;
}

nd_array *nd_nan_to_num_ex(nd_array *a, double nan, double posinf, double neginf) {
    ND_API_GUARD();
    static const char fn[] = "nd_nan_to_num";
    if (check_inputs(fn, a, "a", NULL, NULL)) return NULL;
    nd_array *s = nd_fe_strong(fn, a);
    if (!s) return NULL;
    nd_array *r = nan_to_num_fe(fn, s, nan, posinf, neginf);
    nd_fe_release(s);
    return nd_runtime_track(r);
}

nd_array *nd_nan_to_num(nd_array *a) {
    ND_API_GUARD();
    return nd_nan_to_num_ex(a, 0.0, NAN, NAN);
}

/* ------------------------------------------------------------ closeness */

/* NumPy 2's isclose: y = b as a float (result_type(b, 1.0)), then
 * (|x - y| <= atol + rtol * |y|) & isfinite(y) | (x == y), or'ed with
 * isnan(x) & isnan(y) under equal_nan. One elementwise chain. */
static nd_array *isclose_fe(const char *fn, nd_array *a, nd_array *b, double rtol, double atol,
                            bool equal_nan) {
    fe_temps T = {{0}, 0};
    nd_array *r = NULL, *y = b, *rt, *at, *d, *ad, *ay, *s, *tol, *le, *fin, *close, *eq;
    if (b->weak == ND_WEAK_INT) {
        if (!(y = keep(&T, nd_fe_scalar((double)b->weak_value.i)))) goto done;
    } else if (!b->weak && !nd_dtype_is_float(b->dtype) && !nd_dtype_is_complex(b->dtype)) {
        if (!(y = keep(&T, nd_fe_astype(fn, b, ND_FLOAT64)))) goto done;
    }
    if (!(rt = keep(&T, nd_fe_scalar(rtol))) || !(at = keep(&T, nd_fe_scalar(atol)))) goto done;
    if (!(d = keep(&T, nd_fe_binary(fn, ND_OP_SUB, a, y)))) goto done;
    if (!(ad = keep(&T, nd_fe_unary(fn, ND_OP_ABS, d)))) goto done;
    if (!(ay = keep(&T, nd_fe_unary(fn, ND_OP_ABS, y)))) goto done;
    if (!(s = keep(&T, nd_fe_binary(fn, ND_OP_MUL, rt, ay)))) goto done;
    if (!(tol = keep(&T, nd_fe_binary(fn, ND_OP_ADD, at, s)))) goto done;
    if (!(le = keep(&T, nd_fe_binary(fn, ND_OP_LE, ad, tol)))) goto done;
    if (!(fin = keep(&T, nd_fe_unary(fn, ND_OP_ISFINITE, y)))) goto done;
    if (!(close = keep(&T, nd_fe_binary(fn, ND_OP_LOGICAL_AND, le, fin)))) goto done;
    if (!(eq = keep(&T, nd_fe_binary(fn, ND_OP_EQ, a, y)))) goto done;
    r = nd_fe_binary(fn, ND_OP_LOGICAL_OR, close, eq);
    if (r && equal_nan) {
        nd_array *base = keep(&T, r), *na, *nb, *both;
        r = NULL;
        if (!(na = keep(&T, nd_fe_unary(fn, ND_OP_ISNAN, a)))) goto done;
        if (!(nb = keep(&T, nd_fe_unary(fn, ND_OP_ISNAN, y)))) goto done;
        if (!(both = keep(&T, nd_fe_binary(fn, ND_OP_LOGICAL_AND, na, nb)))) goto done;
        r = nd_fe_binary(fn, ND_OP_LOGICAL_OR, base, both);
    }
done:
    release_temps(&T);
    return r;
}

nd_array *nd_isclose(nd_array *a, nd_array *b, double rtol, double atol, bool equal_nan) {
    ND_API_GUARD();
    static const char fn[] = "nd_isclose";
    if (check_inputs(fn, a, "a", b, "b")) return NULL;
    return nd_runtime_track(isclose_fe(fn, a, b, rtol, atol, equal_nan));
}

/* all of a mask over every axis: a 0-d bool, the reduction fused with the
 * chain that computes the mask */
static nd_array *all_of(const char *fn, nd_array *mask) {
    if (!mask) return NULL;
    nd_array *r = nd_fe_reduce(fn, ND_REDUCE_ALL, mask, ND_ALL_AXES, 0);
    nd_fe_release(mask);
    return r;
}

nd_array *nd_allclose(nd_array *a, nd_array *b, double rtol, double atol, bool equal_nan) {
    ND_API_GUARD();
    static const char fn[] = "nd_allclose";
    if (check_inputs(fn, a, "a", b, "b")) return NULL;
    return nd_runtime_track(all_of(fn, isclose_fe(fn, a, b, rtol, atol, equal_nan)));
}

nd_array *nd_array_equal(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_array_equal";
    if (check_inputs(fn, a, "a", b, "b")) return NULL;
    int same = a->ndim == b->ndim;
    for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == b->shape[i];
    if (!same) { /* NumPy: arrays of different shapes are not equal, not an error */
        nd_scalar_bits no;
        memset(&no, 0, sizeof no);
        return nd_runtime_track(nd_fe_full(fn, ND_BOOL, 0, NULL, no));
    }
    return nd_runtime_track(all_of(fn, nd_fe_binary(fn, ND_OP_EQ, a, b)));
}
