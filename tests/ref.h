/* A small float64/int64 reference for the test suites: dtype storage
 * (float16/bfloat16 rounding written independently of the library), NumPy 2
 * promotion and unsafe casts, broadcasting, elementwise ops, reductions and
 * matmul. Arrays here are plain contiguous row-major host buffers in the
 * dtype's own storage, so the library and the reference start from the very
 * same bits. */
#ifndef ND_TESTS_REF_H
#define ND_TESTS_REF_H

#include <stdint.h>
#include <stddef.h>
#include "nd.h"

typedef struct {
    nd_dtype dt;
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t size;
    unsigned char *data; /* size * itemsize bytes, row-major */
} ref_arr;

/* ---- dtype facts (independent of the library's tables) */
size_t ref_itemsize(nd_dtype t);
const char *ref_dtype_name(nd_dtype t);
int ref_is_float(nd_dtype t);
int ref_is_signed(nd_dtype t);   /* int8..int64 */
int ref_is_unsigned(nd_dtype t); /* uint8..uint64 */
int ref_is_int(nd_dtype t);      /* signed or unsigned, not bool */
nd_dtype ref_promote(nd_dtype a, nd_dtype b);
nd_dtype ref_float_result(nd_dtype t); /* dtype of sqrt/exp/... for t */
double ref_round_to(nd_dtype t, double v); /* round a double to a float dtype */

/* ---- elements */
double ref_getd(const ref_arr *a, int64_t i);   /* value as double */
uint64_t ref_getu(const ref_arr *a, int64_t i); /* ints: two's complement bits, sign-extended */
void ref_setd(ref_arr *a, int64_t i, double v); /* NumPy unsafe cast from float64 */
void ref_setu(ref_arr *a, int64_t i, uint64_t v); /* ints/bool: wrap (bool: v != 0) */
/* Reads element i of a and stores it into element j of b with NumPy
 * unsafe-cast semantics (int->int wraps, float->int truncates, ->bool is != 0). */
void ref_cast_elem(ref_arr *b, int64_t j, const ref_arr *a, int64_t i);
/* Element i decoded from raw dtype storage (for library output buffers). */
double ref_decode(const void *buf, nd_dtype t, int64_t i);
uint64_t ref_decode_u(const void *buf, nd_dtype t, int64_t i);

/* ---- arrays */
ref_arr *ref_new(nd_dtype t, int ndim, const int64_t *shape); /* zero-filled */
void ref_free(ref_arr *a);
ref_arr *ref_astype(const ref_arr *a, nd_dtype t);
ref_arr *ref_from_doubles(nd_dtype t, int ndim, const int64_t *shape, const double *v);
/* Gathers a strided view (strides/offset in elements of a) into a new array. */
ref_arr *ref_strided(const ref_arr *a, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t offset);
ref_arr *ref_transpose(const ref_arr *a, const int *perm); /* perm NULL reverses */
ref_arr *ref_reshape(const ref_arr *a, int ndim, const int64_t *shape); /* copy, same order */

/* ---- broadcasting: 0 if the shapes do not broadcast */
int ref_broadcast_shapes(int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                         int64_t *out);
/* Flat index into a of the element that broadcasts to flat index i of shape out. */
/* Row-major flat index f <-> multi-index idx over shape (empty axes: 0). */
void ref_unravel(int64_t f, int nd, const int64_t *shape, int64_t *idx);
int64_t ref_ravel(const int64_t *idx, int nd, const int64_t *shape);
int64_t ref_bcast_index(const ref_arr *a, int nout, const int64_t *out, int64_t i);
ref_arr *ref_broadcast_to(const ref_arr *a, int ndim, const int64_t *shape);

/* ---- elementwise */
typedef enum {
    R_NEG, R_ABS, R_SQRT, R_EXP, R_LOG, R_SIN, R_COS, R_TANH, R_TAN, R_FLOOR, R_CEIL, R_SQUARE,
    R_ARCSIN, R_ARCCOS, R_ARCTAN, R_SINH, R_COSH, R_ARCSINH, R_ARCCOSH, R_ARCTANH, R_EXP2,
    R_EXPM1, R_LOG2, R_LOG10, R_LOG1P, R_CBRT, R_RINT, R_RECIPROCAL, R_TRUNC, R_SIGN,
    R_POSITIVE, R_DEG2RAD, R_RAD2DEG, R_ISNAN, R_ISINF, R_ISFINITE, R_SIGNBIT, R_ISPOSINF, R_ISNEGINF, R_INVERT,
    R_NOT, /* last of the unary ops */
    R_ADD, R_SUB, R_MUL, R_DIV, R_POW, R_MAX, R_MIN, R_EQ, R_NE, R_LT, R_LE, R_GT, R_GE,
    R_ARCTAN2, R_HYPOT, R_COPYSIGN, R_FMAX, R_FMIN, R_FLOOR_DIVIDE, R_REMAINDER, R_FMOD,
    R_LOGICAL_AND, R_LOGICAL_OR, R_LOGICAL_XOR, R_BITWISE_AND, R_BITWISE_OR, R_BITWISE_XOR,
    R_HEAVISIDE,
    R_NUM_OPS
} ref_op;
int ref_op_is_unary(ref_op op);
/* result bool, operands in their own dtype: EQ..GE, ISNAN..ISNEGINF,
 * LOGICAL_AND..LOGICAL_XOR */
int ref_op_is_cmp(ref_op op);
const char *ref_op_name(ref_op op);
/* Unary op: the input is cast to ct first, the result is stored as rt. */
ref_arr *ref_unary(ref_op op, const ref_arr *a, nd_dtype ct, nd_dtype rt);
/* Binary op with broadcasting: inputs cast to ct, result stored as rt. */
ref_arr *ref_binary(ref_op op, const ref_arr *a, const ref_arr *b, nd_dtype ct, nd_dtype rt);
ref_arr *ref_where(const ref_arr *c, const ref_arr *a, const ref_arr *b, nd_dtype rt);

/* ---- reductions */
typedef enum {
    RR_SUM, RR_PROD, RR_MEAN, RR_MIN, RR_MAX, RR_ARGMIN, RR_ARGMAX, RR_STD, RR_VAR, RR_ANY,
    RR_ALL, RR_NUM
} ref_red;
const char *ref_red_name(ref_red r);
nd_dtype ref_red_dtype(ref_red r, nd_dtype in);
/* axis: one axis (negative allowed) or ND_ALL_AXES. Sums accumulate in
 * double (floats) or wrapping uint64 (ints). If `scale` is not NULL it gets,
 * per output element, the sum of |terms| (a bound for rounding error). */
ref_arr *ref_reduce(ref_red r, const ref_arr *a, int axis, double **scale);

/* ---- matmul (NumPy rules, batch broadcasting); *scale as above */
ref_arr *ref_matmul(const ref_arr *a, const ref_arr *b, nd_dtype rt, double **scale);

/* NumPy's npy_divmod in double: floor division's quotient, and the
 * remainder with the divisor's sign in *modulus. */
double ref_np_divmod(double a, double b, double *modulus);

#endif
