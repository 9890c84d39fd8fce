/*
 * nd/writes.h — Writes into existing arrays.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_WRITES_H
#define ND_WRITES_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[...] = src: src broadcasts to dst's shape and is cast to dst's dtype
 * (unsafe casting, as NumPy's setitem). dst may be a view; the write is
 * visible through every array sharing its memory. NumPy order: the whole
 * right-hand side is computed before anything is written. A weak scalar src
 * is a Python number, checked as NumPy 2 does: into an integer dtype it
 * must fit (a float once truncated toward zero; NaN and infinities never
 * do), so uint8 <- nd_scalar_int(-1) or int8 <- nd_scalar(300.0) is
 * ND_ERR_DTYPE rather than 255 or 44; bool and float dtypes take any value.
 * Errors: ND_ERR_SHAPE (no broadcast), ND_ERR_DTYPE (a weak scalar out of
 * range), ND_ERR_ARG (dst is a broadcast view, a weak scalar or a view of
 * one). On error nothing is written. */
ND_API nd_status nd_assign(nd_array *dst, nd_array *src);
/* dst[...] = value, as NumPy's a.fill(value): into an integer dtype the
 * value must be finite and fit once truncated toward zero (else
 * ND_ERR_DTYPE, nothing written). Other errors as nd_assign. */
ND_API nd_status nd_fill(nd_array *dst, double value);

#ifdef __cplusplus
}
#endif
#endif /* ND_WRITES_H */
