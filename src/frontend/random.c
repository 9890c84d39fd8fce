/* Random sources: counter-based, so a value depends only on (seed, stream,
 * element index); `stream` numbers the random calls since nd_random_seed. */
#include <inttypes.h>
#include <math.h>

#include "frontend/frontend.h"
#include "frontend/random.h"

#include "common/philox.h"

void nd_random_seed(uint64_t seed) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return;
    nd_rt.rng_seed = seed;
    nd_rt.rng_stream = 0;
}

/* A RANDOM node of `kind` with parameters (seed, stream, p2, p3); the
 * caller has checked dtype and parameters. */
static nd_array *record_node(const char *fn, nd_random_kind kind, nd_dtype dtype, int ndim,
                             const int64_t *shape, nd_scalar_bits p2, nd_scalar_bits p3) {
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
    r.node->params[2] = p2;
    r.node->params[3] = p3;
    r.node->n_params = 4;
    return nd_fe_end(&r, ndim, shape);
}

int nd_fe_random_float_dtype(const char *fn, nd_dtype dtype) {
    if (nd_fe_check_dtype(fn, dtype)) return -1;
    if (!nd_dtype_is_float(dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: dtype %s is not a float dtype (use ND_FLOAT32, "
                     "ND_FLOAT64, ND_FLOAT16 or ND_BFLOAT16, then nd_astype)",
                     fn, nd_dtype_name(dtype));
        return -1;
    }
    return 0;
}

nd_array *nd_fe_random(const char *fn, nd_random_kind kind, nd_dtype dtype, int ndim,
                       const int64_t *shape, double a, double b) {
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_fe_random_float_dtype(fn, dtype)) return NULL;
    if (!isfinite(a) || !isfinite(b)) {
        nd_error_set(ND_ERR_ARG, "%s: parameters %g and %g must be finite", fn, a, b);
        return NULL;
    }
    if (kind == ND_RANDOM_NORMAL && b < 0) {
        nd_error_set(ND_ERR_ARG, "%s: sd = %g is negative (use sd >= 0)", fn, b);
        return NULL;
    }
    nd_scalar_bits pa, pb;
    pa.f = a;
    pb.f = b;
    return record_node(fn, kind, dtype, ndim, shape, pa, pb);
}

nd_array *nd_random_uniform(nd_dtype dtype, int ndim, const int64_t *shape, double lo, double hi) {
    ND_API_GUARD();
    nd_random_kind kind = lo == 0.0 && hi == 1.0 ? ND_RANDOM_UNIFORM01 : ND_RANDOM_UNIFORM;
    return nd_runtime_track(nd_fe_random("nd_random_uniform", kind, dtype, ndim, shape, lo, hi));
}

nd_array *nd_random_normal(nd_dtype dtype, int ndim, const int64_t *shape, double mean,
                           double sd) {
    ND_API_GUARD();
    return nd_runtime_track(
        nd_fe_random("nd_random_normal", ND_RANDOM_NORMAL, dtype, ndim, shape, mean, sd));
}

/* The values of an integer (or bool) dtype: [*min, *max]; uint64's top
 * is beyond int64 and so beyond any hi. */
static void int_limits(nd_dtype t, int64_t *min, int64_t *max) {
    size_t bits = 8 * nd_dtype_size(t);
    if (t == ND_BOOL) {
        *min = 0;
        *max = 1;
    } else if (nd_dtype_kind_of(t) == ND_KIND_UINT) {
        *min = 0;
        *max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << bits) - 1);
    } else {
        *max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
        *min = -*max - 1;
    }
}

nd_array *nd_random_integers(nd_dtype dtype, int ndim, const int64_t *shape, int64_t lo,
                             int64_t hi) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_integers";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_fe_check_dtype(fn, dtype)) return NULL;
    if (nd_dtype_is_float(dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: dtype %s is not an integer dtype (use ND_INT8 .. ND_UINT64 "
                     "or ND_BOOL; nd_random_uniform draws floats)", fn, nd_dtype_name(dtype));
        return NULL;
    }
    if (lo >= hi) {
        nd_error_set(ND_ERR_ARG, "%s: lo = %" PRId64 " >= hi = %" PRId64 " (the range [lo, hi) "
                     "is empty: use lo < hi)", fn, lo, hi);
        return NULL;
    }
    int64_t min, max;
    int_limits(dtype, &min, &max);
    /* hi - 1 <= max, written so that it cannot overflow */
    if (lo < min || hi - 1 > max) {
        nd_error_set(ND_ERR_ARG, "%s: [lo, hi) = [%" PRId64 ", %" PRId64 ") is beyond %s's values "
                     "(use %" PRId64 " <= lo < hi <= %" PRId64 "%s)", fn, lo, hi,
                     nd_dtype_name(dtype), min, max == INT64_MAX ? max : max + 1,
                     dtype == ND_UINT64 ? ": hi is an int64" : "");
        return NULL;
    }
    nd_scalar_bits range, base;
    range.u = (uint64_t)hi - (uint64_t)lo;
    base.u = (uint64_t)lo;
    /* Small ranges draw two elements a word (common/philox.h): a kind of
     * its own (kernels follow kinds, not values), with the pair's rejection
     * threshold beside the range so that no kernel divides. */
    nd_random_kind kind = ND_RANDOM_INTEGERS;
    if (nd_philox_pairs(range.u)) {
        kind = ND_RANDOM_INTEGERS_PAIRS;
        range.u |= (uint64_t)nd_philox_pair_threshold(range.u) << 32;
    }
    return nd_runtime_track(record_node(fn, kind, dtype, ndim, shape, range, base));
}
