/* Elementwise ops: NEP 50 dtype resolution per op, then one MAP node. */
#include "frontend/frontend.h"

static int check_inputs(const char *fn, nd_array *a, const char *an, nd_array *b, const char *bn) {
    if (nd_fe_arg(fn, an, a)) return -1;
    if (bn && nd_fe_arg(fn, bn, b)) return -1;
    return nd_runtime_ensure() == ND_OK ? 0 : -1;
}

static nd_array *dtype_error(const char *fn, const char *what, nd_dtype t, const char *fix) {
    nd_error_set(ND_ERR_DTYPE, "%s: %s of %s is not supported (%s)", fn, what, nd_dtype_name(t),
                 fix);
    return NULL;
}

nd_array *nd_fe_binary(const char *fn, nd_op op, nd_array *a, nd_array *b) {
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
    nd_dtype cdtype = t, dtype = t;
    nd_array *in[2] = {a, b};
    if (kind == ND_OPK_LOGICAL) {
        /* NumPy's logical_and/or/xor: each operand != 0, result bool; a
         * weak scalar by its own value (NumPy 2.4: logical_and(float32
         * array, 1e-50) is true) */
        nd_dtype consts[2] = {ND_BOOL, ND_BOOL};
        return nd_fe_map(fn, op, 2, in, consts, ND_BOOL, ND_BOOL);
    }
    if (kind == ND_OPK_INT && nd_dtype_kind_of(t) == ND_KIND_FLOAT)
        return dtype_error(fn, "a bitwise op", t,
                           "NumPy's bitwise ops take integers and bool; use nd_astype to an "
                           "integer dtype first");
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
    } else if (op == ND_OP_DIV && !nd_dtype_is_float(t)) {
        cdtype = dtype = ND_FLOAT64; /* NumPy true_divide of integers */
    }
    /* float-only math (arctan2, hypot, copysign): NumPy's float result */
    if (kind == ND_OPK_FLOAT) cdtype = dtype = nd_float_result(t);
    if (op == ND_OP_POW && nd_dtype_kind_of(dtype) != ND_KIND_FLOAT && b->weak == ND_WEAK_INT &&
        b->weak_value.i < 0) {
        nd_error_set(ND_ERR_ARG, "%s: integers to negative integer powers are not allowed "
                     "(exponent %lld on %s; use nd_astype to a float dtype first)",
                     fn, (long long)b->weak_value.i, nd_dtype_name(dtype));
        return NULL;
    }
    return nd_fe_map(fn, op, 2, in, NULL, cdtype, dtype);
}

nd_array *nd_fe_unary(const char *fn, nd_op op, nd_array *a) {
    nd_dtype t = a->dtype; /* a weak scalar alone acts as its strong self */
    nd_dtype_kind k = nd_dtype_kind_of(t);
    nd_dtype cdtype = t, dtype = t;
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

#define BINARY(name, op)                                                                   \
    nd_array *name(nd_array *a, nd_array *b) {                                             \
        ND_API_GUARD();                                                                    \
        if (check_inputs(#name, a, "a", b, "b")) return NULL;                              \
        return nd_runtime_track(nd_fe_binary(#name, op, a, b));                            \
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
#undef BINARY

#define UNARY(name, op)                                                                    \
    nd_array *name(nd_array *a) {                                                          \
        ND_API_GUARD();                                                                    \
        if (check_inputs(#name, a, "a", NULL, NULL)) return NULL;                          \
        return nd_runtime_track(nd_fe_unary(#name, op, a));                                \
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
    ND_API_GUARD();
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
