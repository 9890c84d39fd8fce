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
 * product; >2-d batched with broadcast batch dimensions. Errors: ND_ERR_SHAPE
 * for mismatched inner dimensions or 0-d operands. */
ND_API nd_array *nd_matmul(nd_array *a, nd_array *b);
ND_API nd_array *nd_dot(nd_array *a, nd_array *b); /* = nd_matmul for 1-d/2-d */

#ifdef __cplusplus
}
#endif
#endif /* ND_LINALG_H */
