/* The elementwise operation set, shared by graph MAP nodes and kernel-IR
 * instructions, and the reduction kinds. One table, so the frontend, the
 * scheduler and every backend agree on names, arity and meaning. */
#ifndef ND_COMMON_OPS_H
#define ND_COMMON_OPS_H

/* How an op treats dtypes: which operand dtypes it takes, the dtype it
 * computes in (nd_op_compute_dtype) and, for the frontend, its NumPy type
 * rule. */
typedef enum {
    ND_OPK_CAST,    /* operand any dtype, result the instruction's dtype      */
    ND_OPK_NUM,     /* arithmetic with an integer meaning: every dtype; bool
                       computes in int8 (NumPy's bool loops start there),
                       float16/bfloat16 in float32                           */
    ND_OPK_FLOAT,   /* float-only math: float16/bfloat16 compute in float32,
                       integers and bool in float64; the frontend gives
                       integer inputs a float result (NumPy: int8 -> float16,
                       int16 -> float32, wider -> float64)                   */
    ND_OPK_CMP,     /* operands in their common dtype (one operand: its own),
                       result bool: comparisons and predicates (isnan, ...)  */
    ND_OPK_INT,     /* integer-only (bitwise): I8 .. U64, computed in their
                       own dtype; the frontend maps bool to the logical op
                       and refuses floats                                     */
    ND_OPK_LOGICAL, /* operands and result bool                               */
    ND_OPK_WHERE,   /* a bool condition, b and c in the result dtype          */
    ND_OPK_C2R,     /* one complex operand, computed in its own dtype, the
                       result its part dtype (float32 for complex64): abs,
                       real, imag, angle of a complex                         */
    ND_OPK_R2C      /* two operands in the result's part dtype, the result
                       complex: (re, im) -> re + im*1j                        */
} nd_op_kind;

/* Every fact about an elementwise op, one row each:
 *   X(name, arity, label, kind, ulps)
 * name   ND_OP_<name>
 * label  the element functions' name: nds_<label>_<dtype> in
 *        common/element_fns.h (every backend computes with them), and the
 *        op's name in kernel names, dumps and messages
 * kind   nd_op_kind above
 * ulps   how far a backend's float32/float64 result may be from the
 *        correctly rounded one; 0: every backend gives the same bits
 *        (tests/test_ops.c checks both on every backend)
 *
 * Semantics (dtype = the instruction's result dtype; operands have already
 * been cast to the compute dtype, except where noted):
 *   CAST          convert operand a to dtype (NumPy unsafe cast; float->int
 *                 truncates toward zero through 64 bits, NaN and out of
 *                 range give the bits 2^63; to bool: != 0)
 *   DIV           floats: true division; integers: NumPy's floor division
 *                 (//), x // 0 = 0 and MIN // -1 = MIN, never a trap (the
 *                 frontend's nd_div of integers computes in float64)
 *   POW           ints: repeated squaring, wrapping; a negative exponent
 *                 gives 0 unless the base is 1 or -1; floats: pow()
 *   MAX/MIN       NaN-propagating (NumPy maximum/minimum)
 *   WHERE         a is bool condition, b/c the two values (dtype)
 * Float16/bfloat16 ops compute in float32 and round the result once. The
 * transcendentals' 2 ulps: the CPU's vectorised loops (SLEEF's 1-ulp
 * functions, cpu_sleef.c) stay within 1 ulp, CUDA documents at most 2 for each (expf, sinf, cosf, tanhf,
 * sin, cos); float pow and tan: CUDA documents 4 ulp for powf and tanf
 * (2 for pow and tan; the CPU calls libm's tanf/tan, below 1 ulp).
 * arcsin .. cbrt: 4 ulp, the largest documented error among them: CUDA's
 * acoshf (4; the others are 1 to 3) and glibc's x86-64 cbrt (libm-test-ulps:
 * up to 4 for double; the CPU calls libm's scalar functions for these).
 *   RINT          round half to even (NumPy rint; integers give a float as
 *                 every ND_OPK_FLOAT op)
 *   DEG2RAD       x * (pi / 180), RAD2DEG x * (180 / pi): one rounded multiply
 *                 by NumPy's constant of the compute dtype (float32: pi/180
 *                 rounded in float32, as npy_deg2radf), so exact
 *   HEAVISIDE     0 for x < 0, y for x == 0 (either zero), 1 for x > 0,
 *                 NaN for NaN x
 *   RECIPROCAL    floats: 1/x; integers: NumPy's 1/x in integer arithmetic
 *                 (truncating): 1 -> 1, -1 -> -1, everything else (0
 *                 included) -> 0
 *   TRUNC         toward zero; integers are the integer
 *   SIGN          -1, 0 or 1; NaN stays NaN, -0.0 gives +0.0 (NumPy)
 *   ISNAN .. ISNEGINF  predicates of one operand of any dtype (integers and
 *                 bool are finite; SIGNBIT reads the sign bit, of a NaN
 *                 too, and x < 0 of a signed integer)
 *   INVERT        bitwise not of an integer (~x)
 *   FMAX/FMIN     NaN-ignoring (NaN only when both are); of equal values
 *                 (+0 and -0) the first operand, as NumPy 2.4
 *   FLOOR_DIVIDE  integers: as DIV; floats: NumPy's divmod quotient
 *                 (floor((a - fmod(a, b)) / b) snapped to the nearest
 *                 integer; x // 0.0 is x / 0.0)
 *   REMAINDER     NumPy's mod, the sign of the divisor: integers x % 0 = 0
 *                 and MIN % -1 = 0; floats fmod(a, b), plus b where its
 *                 sign differs from b's, a zero gets b's sign; x % 0.0 NaN
 *   FMOD          C's fmod, the sign of the dividend; integers x % 0 = 0
 * arctan2 and hypot: 3 ulp, CUDA's documented atan2f and hypotf (2 for
 * float64; glibc's are below 1).
 *   LEFT_SHIFT    x << y wrapping in the dtype; a count that is negative or
 *                 >= the bit width gives 0 (NumPy 2)
 *   RIGHT_SHIFT   x >> y, arithmetic for signed x; a count that is negative
 *                 or >= the bit width gives -1 for negative x, else 0
 *   GCD, LCM      NumPy's: on |x| and |y| in the unsigned type of the width,
 *                 wrapping, cast back: gcd(0, 0) = 0, lcm(x, 0) = 0,
 *                 gcd(MIN, 0) = MIN (|MIN| does not fit), lcm wraps
 *   NEXTAFTER     C's nextafter of float32/float64 (x == y gives y)
 *   NEXTAFTER_F16, NEXTAFTER_BF16  the same step in float16 / bfloat16 for
 *                 operands of that format, computed in float32 (whose
 *                 nextafterf would step too little): NumPy's
 *                 npy_half_nextafter, x == y gives x. The frontend's
 *                 nd_nextafter picks the row by the result dtype.
 *   LDEXP         x * 2^y; y arrives in the float compute dtype holding an
 *                 integer (the frontend converts an integer exponent; a
 *                 float16/bfloat16 result computes in float32 so the
 *                 exponent stays exact), clamped to a range where the
 *                 result already saturates; a NaN y gives NaN
 *   CONJ          complex conjugate (complex dtypes only: the frontend's
 *                 conj of a real array is the array)
 *   REAL, IMAG    the parts of a complex (the frontend makes them views)
 *   CABS          |z| as hypot(re, im) (NumPy's npy_cabs), 3 ulp as HYPOT
 *   ANGLE         atan2(im, re), 3 ulp as ARCTAN2
 *   MAKE_COMPLEX  (a, b) -> a + b*1j exactly (no arithmetic: a complex sum
 *                 is the sums of the parts, reduction.c)
 * Complex dtypes (C64, C128: a struct of two floats/doubles in
 * element_fns.h) compute NumPy's complex loops: + - * as the textbook
 * formulas, / by Smith's method (npymath), comparisons lexicographic with
 * NumPy's NaN rule, exp/log/sqrt/sin/cos/tan/sinh/cosh/tanh and
 * arcsin .. arctanh as C99's cexp .. catanh (Annex G's branch cuts and
 * special values), log2/log10/exp2/expm1/log1p as NumPy's nc_* (expm1 and
 * log1p without its cancellations), sign NumPy 2's z/|z|, rint per part,
 * pow NumPy's npy_cpow. Their float operations may contract
 * into FMAs: on CUDA, and on the CPU where GCC vectorises a*b - c*d and
 * a*b + c*d into vfmaddsub even under -ffp-contract=off (the interpreter's
 * tile loops do; a JIT strip loop need not, so the two may differ in the
 * last bits of complex * and square, unlike every real op). The
 * cross-backend test checks complex results to a normwise tolerance
 * (tests/test_ops.c's complex_tol), the fused product accepted too,
 * rather than by the row's ulps.
 *   LOGADDEXP(2)  NumPy's npy_logaddexp(2): x == y gives x + ln 2 (x + 1),
 *                 else max + log1p(exp(-|x - y|)) (log2 of 1 + 2^-|x-y|),
 *                 NaN for NaN. 4 ulp of max(|result|, 1): the log1p term
 *                 carries up to 3 ulp from CUDA's expf/exp2f and log1pf
 *                 and cancels against a negative max near -ln 2.
 *
 * Adding an op: docs/adding-an-op.md. */
#define ND_ELEMENTWISE_OPS(X)                          \
    X(CAST, 1, cast, ND_OPK_CAST, 0)                   \
    X(NEG, 1, neg, ND_OPK_NUM, 0)                      \
    X(ABS, 1, abs, ND_OPK_NUM, 0)                      \
    X(SQRT, 1, sqrt, ND_OPK_FLOAT, 0)                  \
    X(EXP, 1, exp, ND_OPK_FLOAT, 2)                    \
    X(LOG, 1, log, ND_OPK_FLOAT, 2)                    \
    X(SIN, 1, sin, ND_OPK_FLOAT, 2)                    \
    X(COS, 1, cos, ND_OPK_FLOAT, 2)                    \
    X(TANH, 1, tanh, ND_OPK_FLOAT, 2)                  \
    X(TAN, 1, tan, ND_OPK_FLOAT, 4)                    \
    X(ARCSIN, 1, arcsin, ND_OPK_FLOAT, 4)              \
    X(ARCCOS, 1, arccos, ND_OPK_FLOAT, 4)              \
    X(ARCTAN, 1, arctan, ND_OPK_FLOAT, 4)              \
    X(SINH, 1, sinh, ND_OPK_FLOAT, 4)                  \
    X(COSH, 1, cosh, ND_OPK_FLOAT, 4)                  \
    X(ARCSINH, 1, arcsinh, ND_OPK_FLOAT, 4)            \
    X(ARCCOSH, 1, arccosh, ND_OPK_FLOAT, 4)            \
    X(ARCTANH, 1, arctanh, ND_OPK_FLOAT, 4)            \
    X(EXP2, 1, exp2, ND_OPK_FLOAT, 4)                  \
    X(EXPM1, 1, expm1, ND_OPK_FLOAT, 4)                \
    X(LOG2, 1, log2, ND_OPK_FLOAT, 4)                  \
    X(LOG10, 1, log10, ND_OPK_FLOAT, 4)                \
    X(LOG1P, 1, log1p, ND_OPK_FLOAT, 4)                \
    X(CBRT, 1, cbrt, ND_OPK_FLOAT, 4)                  \
    X(RINT, 1, rint, ND_OPK_FLOAT, 0)                  \
    X(DEG2RAD, 1, deg2rad, ND_OPK_FLOAT, 0)            \
    X(RAD2DEG, 1, rad2deg, ND_OPK_FLOAT, 0)            \
    X(RECIPROCAL, 1, reciprocal, ND_OPK_NUM, 0)        \
    X(TRUNC, 1, trunc, ND_OPK_NUM, 0)                  \
    X(SIGN, 1, sign, ND_OPK_NUM, 0)                    \
    X(FLOOR, 1, floor, ND_OPK_NUM, 0)                  \
    X(CEIL, 1, ceil, ND_OPK_NUM, 0)                    \
    X(SQUARE, 1, square, ND_OPK_NUM, 0)                \
    X(ISNAN, 1, isnan, ND_OPK_CMP, 0)                  \
    X(ISINF, 1, isinf, ND_OPK_CMP, 0)                  \
    X(ISFINITE, 1, isfinite, ND_OPK_CMP, 0)            \
    X(SIGNBIT, 1, signbit, ND_OPK_CMP, 0)              \
    X(ISPOSINF, 1, isposinf, ND_OPK_CMP, 0)            \
    X(ISNEGINF, 1, isneginf, ND_OPK_CMP, 0)            \
    X(INVERT, 1, invert, ND_OPK_INT, 0)                \
    X(LOGICAL_NOT, 1, not, ND_OPK_LOGICAL, 0)          \
    X(ADD, 2, add, ND_OPK_NUM, 0)                      \
    X(SUB, 2, sub, ND_OPK_NUM, 0)                      \
    X(MUL, 2, mul, ND_OPK_NUM, 0)                      \
    X(DIV, 2, div, ND_OPK_NUM, 0)                      \
    X(POW, 2, pow, ND_OPK_NUM, 4)                      \
    X(MAX, 2, maximum, ND_OPK_NUM, 0)                  \
    X(MIN, 2, minimum, ND_OPK_NUM, 0)                  \
    X(EQ, 2, eq, ND_OPK_CMP, 0)                        \
    X(NE, 2, ne, ND_OPK_CMP, 0)                        \
    X(LT, 2, lt, ND_OPK_CMP, 0)                        \
    X(LE, 2, le, ND_OPK_CMP, 0)                        \
    X(GT, 2, gt, ND_OPK_CMP, 0)                        \
    X(GE, 2, ge, ND_OPK_CMP, 0)                        \
    X(LOGICAL_AND, 2, and, ND_OPK_LOGICAL, 0)          \
    X(LOGICAL_OR, 2, or, ND_OPK_LOGICAL, 0)            \
    X(LOGICAL_XOR, 2, xor, ND_OPK_LOGICAL, 0)          \
    X(ARCTAN2, 2, arctan2, ND_OPK_FLOAT, 3)            \
    X(HYPOT, 2, hypot, ND_OPK_FLOAT, 3)                \
    X(COPYSIGN, 2, copysign, ND_OPK_FLOAT, 0)          \
    X(HEAVISIDE, 2, heaviside, ND_OPK_FLOAT, 0)        \
    X(FMAX, 2, fmax, ND_OPK_NUM, 0)                    \
    X(FMIN, 2, fmin, ND_OPK_NUM, 0)                    \
    X(FLOOR_DIVIDE, 2, floor_divide, ND_OPK_NUM, 0)    \
    X(REMAINDER, 2, remainder, ND_OPK_NUM, 0)          \
    X(FMOD, 2, fmod, ND_OPK_NUM, 0)                    \
    X(BITWISE_AND, 2, bitwise_and, ND_OPK_INT, 0)      \
    X(BITWISE_OR, 2, bitwise_or, ND_OPK_INT, 0)        \
    X(BITWISE_XOR, 2, bitwise_xor, ND_OPK_INT, 0)      \
    X(LEFT_SHIFT, 2, left_shift, ND_OPK_INT, 0)        \
    X(RIGHT_SHIFT, 2, right_shift, ND_OPK_INT, 0)      \
    X(GCD, 2, gcd, ND_OPK_INT, 0)                      \
    X(LCM, 2, lcm, ND_OPK_INT, 0)                      \
    X(NEXTAFTER, 2, nextafter, ND_OPK_FLOAT, 0)        \
    X(NEXTAFTER_F16, 2, nextafter_f16, ND_OPK_FLOAT, 0) \
    X(NEXTAFTER_BF16, 2, nextafter_bf16, ND_OPK_FLOAT, 0) \
    X(LDEXP, 2, ldexp, ND_OPK_FLOAT, 0)                \
    X(LOGADDEXP, 2, logaddexp, ND_OPK_FLOAT, 4)        \
    X(LOGADDEXP2, 2, logaddexp2, ND_OPK_FLOAT, 4)      \
    X(CONJ, 1, conj, ND_OPK_NUM, 0)                    \
    X(REAL, 1, real, ND_OPK_C2R, 0)                    \
    X(IMAG, 1, imag, ND_OPK_C2R, 0)                    \
    X(CABS, 1, cabs, ND_OPK_C2R, 3)                    \
    X(ANGLE, 1, angle, ND_OPK_C2R, 3)                  \
    X(MAKE_COMPLEX, 2, make_complex, ND_OPK_R2C, 0)    \
    X(WHERE, 3, where, ND_OPK_WHERE, 0)

typedef enum {
#define ND_X_ENUM(name, arity, label, kind, ulps) ND_OP_##name,
    ND_ELEMENTWISE_OPS(ND_X_ENUM)
#undef ND_X_ENUM
} nd_op;
/* Outside nd_op, so that a switch over nd_op without a default names every
 * op and -Wswitch (part of -Wall) fails the build where one is missing. */
#define ND_X_COUNT(name, arity, label, kind, ulps) +1
enum { ND_NUM_ELEMENTWISE_OPS = 0 ND_ELEMENTWISE_OPS(ND_X_COUNT) };
#undef ND_X_COUNT

int nd_op_arity(nd_op op);
const char *nd_op_label(nd_op op);
int nd_op_ulps(nd_op op);

/* Inline: the CPU backend asks per instruction per launch (a kernel of a
 * 1000-step loop body has thousands). */
static inline nd_op_kind nd_op_kind_of(nd_op op) {
    static const unsigned char kinds[] = {
#define ND_X_KIND(name, arity, label, kind, ulps) kind,
        ND_ELEMENTWISE_OPS(ND_X_KIND)
#undef ND_X_KIND
    };
    return (unsigned)op < ND_NUM_ELEMENTWISE_OPS ? (nd_op_kind)kinds[op] : ND_OPK_CAST;
}

/* 1 for EQ..GE and the predicates ISNAN..ISNEGINF (result bool whatever
 * the compute dtype; operands in their common dtype). */
static inline int nd_op_is_comparison(nd_op op) { return nd_op_kind_of(op) == ND_OPK_CMP; }
/* 1 where the op computes in its operands' dtype rather than its result's:
 * comparisons (result bool) and the complex-to-real ops (result the part
 * dtype, nd_op_result_of). */
static inline int nd_op_computes_in_operands(nd_op op) {
    return nd_op_kind_of(op) == ND_OPK_CMP || nd_op_kind_of(op) == ND_OPK_C2R;
}
/* The dtype op's operands are cast to when it computes in cd (an nd_dtype
 * value): the part dtype for MAKE_COMPLEX (ND_COMPLEX64 = 13 ->
 * ND_FLOAT32 = 11), cd itself for every other op but WHERE's condition
 * and CAST (their callers handle those). */
static inline int nd_op_operand_dtype(nd_op op, int cd) {
    if (nd_op_kind_of(op) == ND_OPK_R2C) return cd == 13 ? 11 : 12;
    return cd;
}
/* For those ops: the result dtype of computing in dtype cd (an nd_dtype
 * value; ND_BOOL = 0, ND_FLOAT32 = 11, ND_FLOAT64 = 12, ND_COMPLEX64 = 13,
 * checked in ops.c). */
static inline int nd_op_result_of(nd_op op, int cd) {
    if (nd_op_kind_of(op) == ND_OPK_C2R) return cd == 13 ? 11 : 12;
    return 0;
}

/* The dtype op computes in when its operands (comparisons) or its result
 * (every other op) are of dtype t (an nd_dtype value; ND_BOOL = 0,
 * ND_INT8 = 1, ND_FLOAT16 = 9, ND_BFLOAT16 = 10, ND_FLOAT32 = 11,
 * ND_FLOAT64 = 12, checked in ops.c): every backend casts the operands to
 * it, calls nds_<label>_<compute dtype> and casts the result. */
static inline int nd_op_compute_dtype(nd_op op, int t) {
    enum { B = 0, I8 = 1, F16 = 9, BF16 = 10, F32 = 11, F64 = 12, C64 = 13, C128 = 14 };
    const int half = t == F16 || t == BF16;
    switch (nd_op_kind_of(op)) {
    case ND_OPK_CAST:
    case ND_OPK_WHERE:
    case ND_OPK_INT:
    case ND_OPK_C2R:
    case ND_OPK_R2C:
        return t;
    case ND_OPK_LOGICAL:
        return B;
    case ND_OPK_CMP:
        return half ? F32 : t;
    case ND_OPK_FLOAT:
        return half ? F32 : (t == F32 || t == F64 || t == C64 || t == C128) ? t : F64;
    case ND_OPK_NUM:
        return half ? F32 : t == B ? I8 : t;
    }
    return t;
}

/* common/element_fns.h's text, embedded at build time, for the code
 * generators that paste it into their kernels. */
extern const char nd_element_fns_source[];

/* Where a reduction's accumulator starts (the value of an empty extent
 * where the kind has an identity): */
typedef enum {
    ND_RINIT_ZERO,    /* 0                                                    */
    ND_RINIT_ONE,     /* 1                                                    */
    ND_RINIT_HIGHEST, /* +inf, or the accumulator dtype's largest integer     */
    ND_RINIT_LOWEST,  /* -inf, or the smallest integer                        */
    ND_RINIT_TRUE,
    ND_RINIT_FALSE,
    ND_RINIT_NO_INDEX /* {any value, index -1}: "nothing seen yet"; the first
                         point seen replaces it                               */
} nd_reduce_init;

/* The NumPy result dtype of a reduction of dtype t: */
typedef enum {
    ND_RRES_WIDEN, /* bool and signed ints -> int64, unsigned -> uint64,
                      floats keep their dtype (np.sum, np.prod)             */
    ND_RRES_SAME,  /* the input dtype (np.min, np.max)                      */
    ND_RRES_INDEX, /* int64: an index (np.argmin, np.argmax)                */
    ND_RRES_BOOL   /* bool (np.any, np.all); the value reduced is bool      */
} nd_reduce_result;

/* Every fact about a reduction kind, one row each:
 *   X(name, label, init, identity, result, combine)
 * name     ND_REDUCE_<name>
 * label    kernel names, dumps, messages ("sum")
 * init     nd_reduce_init: the accumulator's start
 * identity 1: an empty extent gives init (NumPy's ufunc identity);
 *          0: an empty extent is an error at record time (min, max, argmin,
 *          argmax: "zero-size array to reduction operation ... which has no
 *          identity")
 * result   nd_reduce_result above
 * combine  how two accumulators combine: the element function
 *          nds_<combine>_<dtype> of common/element_fns.h (max and min
 *          propagate NaN as np.maximum/np.minimum), or `argmin`/`argmax`,
 *          {value, index} pairs: a NaN wins, then the better value, then
 *          the lower row-major index over the reduced axes (np.argmin)
 * Every per-kind switch or table in the frontend, the scheduler and the
 * backends names every kind without a default, and tables carry a
 * _Static_assert on ND_NUM_REDUCE_KINDS, so a new row fails to build until
 * each of them knows it. NaN-ignoring reductions (nanmin, nanargmax, ...)
 * are built from these in the frontend (src/frontend/reduction_nan.c). */
#define ND_REDUCE_KINDS(X)                                                   \
    X(SUM, sum, ND_RINIT_ZERO, 1, ND_RRES_WIDEN, add)                        \
    X(PROD, prod, ND_RINIT_ONE, 1, ND_RRES_WIDEN, mul)                       \
    X(MIN, min, ND_RINIT_HIGHEST, 0, ND_RRES_SAME, minimum)                  \
    X(MAX, max, ND_RINIT_LOWEST, 0, ND_RRES_SAME, maximum)                   \
    X(ARGMIN, argmin, ND_RINIT_NO_INDEX, 0, ND_RRES_INDEX, argmin)           \
    X(ARGMAX, argmax, ND_RINIT_NO_INDEX, 0, ND_RRES_INDEX, argmax)           \
    X(ANY, any, ND_RINIT_FALSE, 1, ND_RRES_BOOL, or)                         \
    X(ALL, all, ND_RINIT_TRUE, 1, ND_RRES_BOOL, and)

typedef enum {
#define ND_X_ENUM(name, label, init, identity, result, combine) ND_REDUCE_##name,
    ND_REDUCE_KINDS(ND_X_ENUM)
#undef ND_X_ENUM
} nd_reduce_kind;
#define ND_X_COUNT(name, label, init, identity, result, combine) +1
enum { ND_NUM_REDUCE_KINDS = 0 ND_REDUCE_KINDS(ND_X_COUNT) };
#undef ND_X_COUNT

/* Inline: the CPU backend asks once per work item. */
typedef struct {
    unsigned char init, result;
} nd_reduce_facts;
static inline nd_reduce_facts nd_reduce_facts_of(nd_reduce_kind k) {
    static const nd_reduce_facts facts[] = {
#define ND_X_FACTS(name, label, init, identity, result, combine) {init, result},
        ND_REDUCE_KINDS(ND_X_FACTS)
#undef ND_X_FACTS
    };
    _Static_assert(sizeof facts / sizeof facts[0] == ND_NUM_REDUCE_KINDS,
                   "one row per reduction kind");
    return facts[(unsigned)k < ND_NUM_REDUCE_KINDS ? k : 0];
}
static inline nd_reduce_init nd_reduce_init_of(nd_reduce_kind k) {
    return (nd_reduce_init)nd_reduce_facts_of(k).init;
}
static inline nd_reduce_result nd_reduce_result_of(nd_reduce_kind k) {
    return (nd_reduce_result)nd_reduce_facts_of(k).result;
}
/* 1 where an empty extent gives the init value, 0 where it is an error. */
int nd_reduce_has_identity(nd_reduce_kind k);
/* 1 for the kinds that keep {value, index} pairs and write the index. */
static inline int nd_reduce_is_arg(nd_reduce_kind k) {
    return nd_reduce_result_of(k) == ND_RRES_INDEX;
}
/* The combine column: an element function's label, or "argmin"/"argmax". */
const char *nd_reduce_combine_label(nd_reduce_kind k);
const char *nd_reduce_label(nd_reduce_kind k);

#endif
