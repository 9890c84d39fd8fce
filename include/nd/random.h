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

/* NumPy's Generator.integers(lo, hi, size, dtype) (endpoint=False): integers
 * drawn uniformly from [lo, hi), unbiased (Lemire's multiply-shift with
 * rejection; a rejected draw redraws from counters of its own element, so
 * the values are the same on every backend and thread count). Any integer
 * dtype and ND_BOOL (lo = 0, hi = 2 for fair coins); the result has `dtype`.
 * Results of up to 32 bits use one 32-bit word per draw, 64-bit results
 * two; small ranges r = hi - lo (r <= 2^16 whose pair rejects fewer than 1
 * word in 256: every r <= 4144, powers of two up to 2^16, 65535, ...; any
 * dtype) draw two elements from each word, elements 2p and 2p+1 being the
 * base-r digits of one unbiased draw in [0, r^2) from word p (half the
 * Philox work). The rule depends on r alone; the values of those ranges
 * differ from what earlier versions drew for the same seed. lo and hi are
 * int64, so uint64 draws reach at most 2^63 - 2 and
 * int64 draws at most INT64_MAX - 1 (hi is exclusive). The values differ
 * from NumPy's own bit stream. Errors: ND_ERR_DTYPE for a float dtype,
 * ND_ERR_ARG for lo >= hi or a range beyond the dtype's values (int8:
 * -128 <= lo < hi <= 128), ND_ERR_ARG for a bad shape. */
ND_API nd_array *nd_random_integers(nd_dtype dtype, int ndim, const int64_t *shape, int64_t lo,
                                    int64_t hi);

/* NumPy Generator's distributions, one random call each (they fuse like any
 * elementwise op). Each is a transform of nd's own draws, so the values
 * follow the same distribution as NumPy's but never its bit stream (NumPy
 * uses ziggurat and other methods). U below is an open uniform in (0, 1)
 * (the draw with its last bit set to 1/2 ulp), E = -log(U) a standard
 * exponential, Z nd_random_normal's standard normal. Float dtypes only
 * (float32, float64; float16 and bfloat16 are computed in float32 and
 * rounded); the result has `dtype`. Parameters must be finite; the
 * checks are NumPy's (ND_ERR_ARG naming the function, parameter and
 * bound); ND_ERR_DTYPE for a non-float dtype. Values past the uniform
 * draw agree across backends within the transcendental ops' few ulp.
 *   standard_normal        Z
 *   exponential(scale)     scale * E                        scale >= 0
 *   lognormal(mean, sigma) exp(mean + sigma * Z)            sigma >= 0
 *   laplace(loc, scale)    loc + scale * sign(w) * -log(1 - |w|),
 *                          w = 2U - 1                       scale >= 0
 *   logistic(loc, scale)   loc + scale * log(U / (1 - U))   scale >= 0
 *   gumbel(loc, scale)     loc - scale * log(E)             scale >= 0
 *   weibull(a)             E^(1/a) (0 for a = 0)            a >= 0
 *   rayleigh(scale)        scale * sqrt(2E)                 scale >= 0
 *   pareto(a)              expm1(E / a) (Lomax, NumPy's)    a > 0
 *   power(a)               U^(1/a)                          a > 0
 *   triangular(l, m, r)    U <= (m-l)/(r-l) ? l + sqrt(U (m-l)(r-l))
 *                          : r - sqrt((1-U)(r-m)(r-l))      l <= m <= r, l < r
 * beta and gamma are not provided: their samplers (rejection with a
 * data-dependent number of normal and uniform draws) would not give the
 * same values on every backend without a per-element loop of
 * transcendental draws. */
ND_API nd_array *nd_random_standard_normal(nd_dtype dtype, int ndim, const int64_t *shape);
ND_API nd_array *nd_random_exponential(nd_dtype dtype, int ndim, const int64_t *shape, double scale);
ND_API nd_array *nd_random_lognormal(nd_dtype dtype, int ndim, const int64_t *shape, double mean,
                                     double sigma);
ND_API nd_array *nd_random_laplace(nd_dtype dtype, int ndim, const int64_t *shape, double loc,
                                   double scale);
ND_API nd_array *nd_random_logistic(nd_dtype dtype, int ndim, const int64_t *shape, double loc,
                                    double scale);
ND_API nd_array *nd_random_gumbel(nd_dtype dtype, int ndim, const int64_t *shape, double loc,
                                  double scale);
ND_API nd_array *nd_random_weibull(nd_dtype dtype, int ndim, const int64_t *shape, double a);
ND_API nd_array *nd_random_rayleigh(nd_dtype dtype, int ndim, const int64_t *shape, double scale);
ND_API nd_array *nd_random_pareto(nd_dtype dtype, int ndim, const int64_t *shape, double a);
ND_API nd_array *nd_random_power(nd_dtype dtype, int ndim, const int64_t *shape, double a);
ND_API nd_array *nd_random_triangular(nd_dtype dtype, int ndim, const int64_t *shape, double left,
                                      double mode, double right);

/* Random orderings and choices (they sort: see sorting.h). Counter-based
 * like every draw above: each takes the next random call's stream, and the
 * result is a stable argsort of random 64-bit keys (or a search of random
 * uniforms), so a seed gives the same result on every backend and thread
 * count. The values differ from NumPy's own bit stream.
 *   nd_random_permutation(n): int64, a random ordering of 0..n-1
 *     (Generator.permutation(n)).
 *   nd_random_permutation_of(a): a copy of a (at least 1-d) with its
 *     slices along axis 0 in a random order (Generator.permutation(a)).
 *   nd_random_shuffle(a, axis): Generator.permuted(a, axis): a copy of a in
 *     which each 1-d slice along `axis` is shuffled independently of the
 *     others (ND_ALL_AXES: the flattened array shuffled, then a's shape).
 *     Not in place: the result is a new array.
 *   nd_random_choice(a, ndim, shape, replace, p): Generator.choice of a
 *     1-d a: elements of a in an array of `shape` (ndim 0: one element),
 *     with replacement (replace != 0) or without, uniformly (p NULL) or
 *     with probabilities p (1-d, a's length, >= 0, summing to 1 within
 *     1e-8 as NumPy's check). With replacement and p: the sorted-uniform
 *     search of NumPy (cdf = cumsum(p) / its last, right insertion points
 *     of uniforms); without replacement and p: the elements with the
 *     smallest E_i / p_i, E_i exponential draws (Efraimidis-Spirakis), which
 *     picks with NumPy's distribution (each next one drawn with probability
 *     proportional to p among those left).
 *   nd_random_choice_n(n, ...): the same over 0..n-1 (NumPy's integer a):
 *     int64 indices.
 * SYNCHRONISES when p is given: reads p to check it (NumPy raises for
 * negative p, a sum away from 1, fewer non-zero p than draws without
 * replacement). Errors: ND_ERR_ARG (negative n, NULL a, bad p, more draws
 * than elements without replacement, an empty a with draws), ND_ERR_SHAPE
 * (a 0-d array where 1-d is needed; p of another length). */
ND_API nd_array *nd_random_permutation(int64_t n);
ND_API nd_array *nd_random_permutation_of(nd_array *a);
ND_API nd_array *nd_random_shuffle(nd_array *a, int axis);
ND_API nd_array *nd_random_choice(nd_array *a, int ndim, const int64_t *shape, int replace, nd_array *p);
ND_API nd_array *nd_random_choice_n(int64_t n, int ndim, const int64_t *shape, int replace, nd_array *p);

#ifdef __cplusplus
}
#endif
#endif /* ND_RANDOM_H */
