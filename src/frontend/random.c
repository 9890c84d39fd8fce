/* Random sources: counter-based, so a value depends only on (seed, stream,
 * element index); `stream` numbers the random calls since nd_random_seed. */
#include <math.h>

#include "frontend/frontend.h"

void nd_random_seed(uint64_t seed) {
    if (nd_runtime_ensure() != ND_OK) return;
    nd_rt.rng_seed = seed;
    nd_rt.rng_stream = 0;
}

static nd_array *record_random(const char *fn, nd_random_kind kind, nd_dtype dtype, int ndim,
                               const int64_t *shape, double a, double b) {
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_fe_check_dtype(fn, dtype)) return NULL;
    if (!nd_dtype_is_float(dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: dtype %s is not a float dtype (use ND_FLOAT32, "
                     "ND_FLOAT64, ND_FLOAT16 or ND_BFLOAT16, then nd_astype)",
                     fn, nd_dtype_name(dtype));
        return NULL;
    }
    if (!isfinite(a) || !isfinite(b)) {
        nd_error_set(ND_ERR_ARG, "%s: parameters %g and %g must be finite", fn, a, b);
        return NULL;
    }
    if (kind == ND_RANDOM_NORMAL && b < 0) {
        nd_error_set(ND_ERR_ARG, "%s: sd = %g is negative (use sd >= 0)", fn, b);
        return NULL;
    }
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL;
    /* A draw that fails for want of memory still takes its stream: the
     * draws after it are those of a run without the failure. */
    const uint64_t stream = nd_rt.rng_stream++;
    nd_fe_rec r;
    if (nd_fe_begin(&r, fn, ND_NODE_RANDOM, kind, 0, dtype, dtype, ndim, shape, nbytes))
        return NULL;
    r.node->params[0].u = nd_rt.rng_seed;
    r.node->params[1].u = stream;
    r.node->params[2].f = a;
    r.node->params[3].f = b;
    r.node->n_params = 4;
    return nd_runtime_track(nd_fe_end(&r, ndim, shape));
}

nd_array *nd_random_uniform(nd_dtype dtype, int ndim, const int64_t *shape, double lo, double hi) {
    nd_random_kind kind = lo == 0.0 && hi == 1.0 ? ND_RANDOM_UNIFORM01 : ND_RANDOM_UNIFORM;
    return record_random("nd_random_uniform", kind, dtype, ndim, shape, lo, hi);
}

nd_array *nd_random_normal(nd_dtype dtype, int ndim, const int64_t *shape, double mean,
                           double sd) {
    return record_random("nd_random_normal", ND_RANDOM_NORMAL, dtype, ndim, shape, mean, sd);
}
