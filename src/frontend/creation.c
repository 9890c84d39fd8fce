/* Creation: sources (FULL, ARANGE), weak scalars, casts and copies. */
#include <math.h>
#include <string.h>

#include "frontend/frontend.h"
#include "frontend/scope_replay.h"

nd_array *nd_fe_empty(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape) {
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL;
    nd_buffer *b = nd_buffer_new(dtype, nbytes);
    if (!b) return NULL;
    nd_array *a = nd_array_new_contiguous(b, dtype, ndim, shape);
    nd_buffer_unref(b);
    return a;
}

nd_array *nd_fe_full(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape,
                     nd_scalar_bits value) {
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL;
    nd_fe_rec r;
    if (nd_fe_begin(&r, fn, ND_NODE_FULL, 0, 0, dtype, dtype, ndim, shape, nbytes)) return NULL;
    r.node->params[0] = value;
    r.node->n_params = 1;
    return nd_fe_end(&r, ndim, shape);
}

nd_array *nd_empty(nd_dtype dtype, int ndim, const int64_t *shape) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_empty("nd_empty", dtype, ndim, shape));
}

nd_array *nd_fe_fill_call(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape, double value) {
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_fe_check_dtype(fn, dtype)) return NULL;
    /* A C double stands for a Python int as often as a float: refuse what
     * NumPy refuses for np.full(..., 300, uint8) rather than wrap (0 and 1,
     * nd_zeros' and nd_ones', fit every dtype). */
    if (nd_fe_value_fits(fn, "value", value, dtype) != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_full(fn, dtype, ndim, shape, nd_fe_double_bits(value, dtype)));
}

nd_array *nd_zeros(nd_dtype dtype, int ndim, const int64_t *shape) {
    ND_API_REPLAYABLE_AS("nd_zeros", return nd_replay_fill("nd_zeros", dtype, ndim, shape, 0.0));
    return nd_fe_fill_call("nd_zeros", dtype, ndim, shape, 0.0);
}

nd_array *nd_ones(nd_dtype dtype, int ndim, const int64_t *shape) {
    ND_API_REPLAYABLE_AS("nd_ones", return nd_replay_fill("nd_ones", dtype, ndim, shape, 1.0));
    return nd_fe_fill_call("nd_ones", dtype, ndim, shape, 1.0);
}

nd_array *nd_full(nd_dtype dtype, int ndim, const int64_t *shape, double value) {
    ND_API_REPLAYABLE_AS("nd_full", return nd_replay_fill("nd_full", dtype, ndim, shape, value));
    return nd_fe_fill_call("nd_full", dtype, ndim, shape, value);
}

nd_array *nd_full_complex(nd_dtype dtype, int ndim, const int64_t *shape, double re, double im) {
    ND_API_GUARD();
    static const char fn[] = "nd_full_complex";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_fe_check_dtype(fn, dtype)) return NULL;
    if (!nd_dtype_is_complex(dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: dtype %s is not complex (give ND_COMPLEX64 or "
                     "ND_COMPLEX128, or use nd_full for a real dtype)", fn, nd_dtype_name(dtype));
        return NULL;
    }
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL;
    /* One element from the host, broadcast and copied: a kernel parameter
     * is one 8-byte word, a complex value two parts. */
    void *data;
    nd_array *one = nd_fe_host_array(fn, dtype, 0, NULL, &data);
    if (!one) return NULL;
    nd_store_complex(data, dtype, re, im);
    int64_t zeros[ND_MAX_DIMS] = {0};
    nd_array *b = nd_fe_view(one, ndim, shape, zeros, 0);
    nd_fe_release(one);
    if (!b) return NULL;
    nd_array *r = nd_fe_astype(fn, b, dtype);
    nd_fe_release(b);
    return nd_runtime_track(r);
}

nd_array *nd_fe_arange(const char *fn, nd_dtype dtype, double start, double step, int64_t count) {
    int64_t shape[1] = {count};
    size_t nbytes;
    if (nd_fe_check_shape(fn, 1, shape, dtype, &nbytes)) return NULL;
    nd_fe_rec r;
    if (nd_fe_begin(&r, fn, ND_NODE_ARANGE, 0, 0, dtype, dtype, 1, shape, nbytes)) return NULL;
    r.node->params[0].f = start;
    r.node->params[1].f = step;
    r.node->n_params = 2;
    return nd_fe_end(&r, 1, shape);
}

nd_array *nd_arange(nd_dtype dtype, double start, double stop, double step) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_fe_check_dtype("nd_arange", dtype)) return NULL;
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step)) {
        nd_error_set(ND_ERR_ARG, "nd_arange: start %g, stop %g and step %g must be finite", start,
                     stop, step);
        return NULL;
    }
    if (step == 0) {
        nd_error_set(ND_ERR_ARG, "nd_arange: step is 0 (use a non-zero step, e.g. 1)");
        return NULL;
    }
    double n = ceil((stop - start) / step);
    if (!(n > 0)) n = 0;
    if (n >= 9.2e18) {
        nd_error_set(ND_ERR_ARG, "nd_arange: start %g, stop %g, step %g give too many elements "
                     "(use a larger step)", start, stop, step);
        return NULL;
    }
    return nd_runtime_track(nd_fe_arange("nd_arange", dtype, start, step, (int64_t)n));
}

/* The buffer of a weak scalar of this dtype and value: the one kept for
 * that value when it is still as made, else a new one, kept in its place.
 * Nothing writes a weak scalar's buffer (ND_READONLY_WEAK: nd_assign,
 * nd_data, user kernels and every view of it refuse), so handles of one
 * value may share it; a named buffer is not shared (its name would name
 * the other scalars). A loop body that makes the same scalars each
 * iteration then makes a handle per scalar and no buffer (a buffer made
 * and freed was a fifth of what an nd_scalar and its release cost).
 * Returns a reference the caller gives to its handle. */
static nd_buffer *weak_buffer(nd_dtype dtype, nd_scalar_bits value) {
    const uint64_t h = (value.u ^ (uint64_t)dtype) * 0x9E3779B97F4A7C15ull;
    nd_buffer **slot = &nd_rt.weak_buffers[h >> 60];
    _Static_assert(sizeof nd_rt.weak_buffers / sizeof *nd_rt.weak_buffers == 16, "h >> 60 picks a slot");
    nd_buffer *b = *slot;
    if (b && b->dtype == dtype && !memcmp(b->inline_host, &value, 8) && !b->named && !b->dead &&
        b->n_writers == 0 && b->version == 0 && (b->valid & 1u << ND_MEMORY_HOST)) {
        nd_buffer_ref(b);
        return b;
    }
    b = nd_buffer_new(dtype, 8);
    if (!b) return NULL;
    /* Eight bytes fit in the buffer itself: no host allocation per scalar
     * (expressions such as Black-Scholes make dozens per evaluation). */
    nd_buffer_use_inline_host(b);
    memcpy(b->inline_host, &value, 8);
    b->valid = 1u << ND_MEMORY_HOST;
    nd_buffer_unref(*slot);
    *slot = b;
    nd_buffer_ref(b);
    return b;
}

void nd_runtime_forget_weak_buffers(void) {
    for (size_t i = 0; i < sizeof nd_rt.weak_buffers / sizeof *nd_rt.weak_buffers; i++) {
        nd_buffer_unref(nd_rt.weak_buffers[i]);
        nd_rt.weak_buffers[i] = NULL;
    }
}

/* A weak scalar keeps its value in the handle (for promotion and constant
 * refs) and in a host buffer, so it can also be read and viewed like any
 * 0-d array. */
static nd_array *weak_scalar(const char *fn, nd_dtype dtype, nd_weakness weak,
                             nd_scalar_bits value) {
    (void)fn;
    nd_buffer *b = weak_buffer(dtype, value);
    if (!b) return NULL;
    nd_array *a = nd_array_new_contiguous(b, dtype, 0, NULL);
    nd_buffer_unref(b);
    if (!a) return NULL;
    a->weak = (uint8_t)weak;
    a->weak_value = value;
    a->readonly = ND_READONLY_WEAK; /* and every view of it (nd_fe_view) */
    return a;
}

nd_array *nd_fe_scalar(double v) {
    nd_scalar_bits b;
    b.f = v;
    return weak_scalar("nd_scalar", ND_FLOAT64, ND_WEAK_FLOAT, b);
}

nd_array *nd_fe_weak_scalar_call(const char *fn, nd_dtype dtype, nd_scalar_bits value) {
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(weak_scalar(fn, dtype, dtype == ND_INT64 ? ND_WEAK_INT : ND_WEAK_FLOAT, value));
}

/* nd_scalar and nd_scalar_int past the replay's divert (a frame of their
 * own, so that the public functions are two tail calls). */
static nd_array *scalar_call(const char *fn, nd_dtype dtype, nd_scalar_bits b) __attribute__((noinline));
static nd_array *scalar_call(const char *fn, nd_dtype dtype, nd_scalar_bits b) {
    ND_API_GUARD_AS(fn);
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(weak_scalar(fn, dtype, dtype == ND_INT64 ? ND_WEAK_INT : ND_WEAK_FLOAT, b));
}

nd_array *nd_scalar(double v) {
    ND_API_REPLAYABLE_IN(scalar_call, return nd_replay_scalar("nd_scalar", ND_FLOAT64, (nd_scalar_bits){.f = v}));
    return scalar_call("nd_scalar", ND_FLOAT64, (nd_scalar_bits){.f = v});
}

nd_array *nd_scalar_int(int64_t v) {
    ND_API_REPLAYABLE_IN(scalar_call, return nd_replay_scalar("nd_scalar_int", ND_INT64, (nd_scalar_bits){.i = v}));
    return scalar_call("nd_scalar_int", ND_INT64, (nd_scalar_bits){.i = v});
}

nd_array *nd_fe_astype_call(nd_array *a, nd_dtype dtype) {
    if (nd_fe_arg("nd_astype", "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_fe_check_dtype("nd_astype", dtype)) return NULL;
    return nd_runtime_track(nd_fe_astype("nd_astype", a, dtype));
}

nd_array *nd_astype(nd_array *a, nd_dtype dtype) {
    ND_API_REPLAYABLE_AS("nd_astype", return nd_replay_astype(a, dtype));
    return nd_fe_astype_call(a, dtype);
}

nd_array *nd_copy(nd_array *a) {
    ND_API_GUARD();
    if (nd_fe_arg("nd_copy", "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_astype("nd_copy", a, a->dtype));
}
