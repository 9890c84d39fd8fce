/* The frontend's random draws, for random.c and random_dists.c. */
#ifndef ND_FRONTEND_RANDOM_H
#define ND_FRONTEND_RANDOM_H

#include "frontend/frontend.h"

/* A uniform or normal draw (untracked, errors named by fn): kind
 * ND_RANDOM_UNIFORM01, ND_RANDOM_UNIFORM (a + (b - a) * u) or
 * ND_RANDOM_NORMAL (a + b * z), float dtypes only, finite a and b. */
nd_array *nd_fe_random(const char *fn, nd_random_kind kind, nd_dtype dtype, int ndim,
                       const int64_t *shape, double a, double b);

/* 0 when dtype is a float dtype, else -1 with the error set naming fn. */
int nd_fe_random_float_dtype(const char *fn, nd_dtype dtype);

#endif
