/* The elementwise operation set, shared by graph MAP nodes and kernel-IR
 * instructions, and the reduction kinds. One table, so the frontend, the
 * scheduler and every backend agree on names, arity and meaning. */
#ifndef ND_COMMON_OPS_H
#define ND_COMMON_OPS_H

/* X(name, arity, label). Semantics (dtype = the instruction's result dtype;
 * operands have already been cast to the compute dtype, except where noted):
 *   CAST          convert operand a to dtype (NumPy unsafe cast; float->int
 *                 truncates toward zero; to bool: != 0)
 *   comparisons   operands in the compute dtype, result dtype is bool
 *   LOGICAL_*     operands bool, result bool
 *   DIV           true division for floats; for ints only reached via floats
 *   POW           ints: repeated squaring, negative exponent -> 0 unless base
 *                 is 1 or -1; floats: pow()
 *   MAX/MIN       NaN-propagating (NumPy maximum/minimum)
 *   WHERE         a is bool condition, b/c the two values (dtype)
 *   Float16/bfloat16 ops compute in float32 and round the result. */
#define ND_ELEMENTWISE_OPS(X)          \
    X(CAST, 1, "cast")                 \
    X(NEG, 1, "neg")                   \
    X(ABS, 1, "abs")                   \
    X(SQRT, 1, "sqrt")                 \
    X(EXP, 1, "exp")                   \
    X(LOG, 1, "log")                   \
    X(SIN, 1, "sin")                   \
    X(COS, 1, "cos")                   \
    X(TANH, 1, "tanh")                 \
    X(FLOOR, 1, "floor")               \
    X(CEIL, 1, "ceil")                 \
    X(SQUARE, 1, "square")             \
    X(LOGICAL_NOT, 1, "not")           \
    X(ADD, 2, "add")                   \
    X(SUB, 2, "sub")                   \
    X(MUL, 2, "mul")                   \
    X(DIV, 2, "div")                   \
    X(POW, 2, "pow")                   \
    X(MAX, 2, "maximum")               \
    X(MIN, 2, "minimum")               \
    X(EQ, 2, "eq")                     \
    X(NE, 2, "ne")                     \
    X(LT, 2, "lt")                     \
    X(LE, 2, "le")                     \
    X(GT, 2, "gt")                     \
    X(GE, 2, "ge")                     \
    X(LOGICAL_AND, 2, "and")           \
    X(LOGICAL_OR, 2, "or")             \
    X(WHERE, 3, "where")

typedef enum {
#define ND_X_ENUM(name, arity, label) ND_OP_##name,
    ND_ELEMENTWISE_OPS(ND_X_ENUM)
#undef ND_X_ENUM
} nd_op;
/* Outside nd_op, so that a switch over nd_op without a default names every
 * op and -Wswitch (part of -Wall) fails the build where one is missing. */
#define ND_X_COUNT(name, arity, label) +1
enum { ND_NUM_ELEMENTWISE_OPS = 0 ND_ELEMENTWISE_OPS(ND_X_COUNT) };
#undef ND_X_COUNT

int nd_op_arity(nd_op op);
const char *nd_op_label(nd_op op);
/* 1 for EQ..GE (result bool whatever the compute dtype). */
int nd_op_is_comparison(nd_op op);

typedef enum {
    ND_REDUCE_SUM,
    ND_REDUCE_PROD,
    ND_REDUCE_MIN,   /* NaN propagates */
    ND_REDUCE_MAX,   /* NaN propagates */
    ND_REDUCE_ARGMIN,/* int64 index of the first minimum (first NaN wins) */
    ND_REDUCE_ARGMAX,
    ND_REDUCE_ANY,   /* value is bool */
    ND_REDUCE_ALL,
    ND_NUM_REDUCE_KINDS
} nd_reduce_kind;

const char *nd_reduce_label(nd_reduce_kind k);

#endif
