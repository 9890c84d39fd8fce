/*
 * nd/linalg.h — Linear algebra.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_LINALG_H
#define ND_LINALG_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NumPy matmul: 1-d x 1-d is a dot product (0-d result); 2-d x 2-d a matrix
 * product; >2-d batched with broadcast batch dimensions. complex64 and
 * complex128 run as cgemm/zgemm (OpenBLAS; cuBLAS on CUDA), never
 * conjugating; a real operand with a complex one promotes first (NumPy 2:
 * float64 @ complex64 is complex128). Errors: ND_ERR_SHAPE for mismatched
 * inner dimensions or 0-d operands. */
ND_API nd_array *nd_matmul(nd_array *a, nd_array *b);
ND_API nd_array *nd_dot(nd_array *a, nd_array *b); /* = nd_matmul for 1-d/2-d */

/* ---- products of flattened or last axes (NumPy 2; result dtype as
 * nd_matmul: the promoted dtype, integers wrap, bool is OR of ANDs). */

/* np.outer: a and b flattened, out[i, j] = a[i] * b[j] (shape (a.size,
 * b.size)). */
ND_API nd_array *nd_outer(nd_array *a, nd_array *b);
/* np.inner: sum over the last axes, shape a.shape[:-1] + b.shape[:-1]; a
 * 0-d operand multiplies. Errors: ND_ERR_SHAPE when the last dimensions
 * differ or the result has more than 8 dimensions. */
ND_API nd_array *nd_inner(nd_array *a, nd_array *b);
/* np.vdot: a and b flattened, their dot product as a 0-d array; a complex
 * a is conjugated first (sum(conj(a) * b)). Errors: ND_ERR_SHAPE when the
 * sizes differ. */
ND_API nd_array *nd_vdot(nd_array *a, nd_array *b);

#ifdef __cplusplus
}
#endif
#endif /* ND_LINALG_H */
