/*
 * nd/random.h — Random arrays (counter-based, the same values on every backend).
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_RANDOM_H
#define ND_RANDOM_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counter-based Philox4x32-10: a value depends only on the seed, the order of
 * random calls since nd_random_seed and its element index, never on the
 * backend, thread count or tiling. */
ND_API void nd_random_seed(uint64_t seed);
ND_API nd_array *nd_random_uniform(nd_dtype dtype, int ndim, const int64_t *shape, double lo, double hi);
ND_API nd_array *nd_random_normal(nd_dtype dtype, int ndim, const int64_t *shape, double mean, double sd);

#ifdef __cplusplus
}
#endif
#endif /* ND_RANDOM_H */
