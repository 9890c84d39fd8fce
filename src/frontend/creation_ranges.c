/* Ranges and grids: linspace, logspace, geomspace (NumPy's formulas in float64 with
 * its exact endpoints, then a cast), meshgrid and indices. All composed
 * from ARANGE nodes, elementwise ops, views and stores. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontend/compose.h"

/* where(i == at, v, y) for the float64 index array i. */
static nd_array *set_at(const char *fn, nd_fe_temps *T, nd_array *i, nd_array *y, double at,
                        double v) {
    nd_array *at_s = nd_fe_tmp(T, nd_fe_scalar(at));
    nd_array *hit = at_s ? nd_fe_tmp(T, nd_fe_binary(fn, ND_OP_EQ, i, at_s)) : NULL;
    nd_array *val = hit ? nd_fe_tmp(T, nd_fe_scalar(v)) : NULL;
    if (!val) return NULL;
    nd_array *in[3] = {hit, val, y};
    nd_dtype consts[3] = {ND_BOOL, ND_FLOAT64, ND_FLOAT64};
    return nd_fe_tmp(T, nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, ND_FLOAT64, ND_FLOAT64));
}

/* NumPy's linspace(start, stop, num) in float64: i * step + start with
 * step = (stop - start) / (num - 1), and the last element exactly stop
 * (i * step + start may miss it by an ulp). *idx gets the float64 index
 * array 0..num-1 (a temporary in T) for further endpoint fixes. */
static nd_array *linspace_f64(const char *fn, nd_fe_temps *T, double start, double stop,
                              int64_t num, nd_array **idx) {
    const double step = num > 1 ? (stop - start) / (double)(num - 1) : 0.0;
    nd_array *i = nd_fe_tmp(T, nd_fe_arange(fn, ND_FLOAT64, 0.0, 1.0, num));
    nd_array *y = i ? nd_fe_tmp(T, nd_fe_arange(fn, ND_FLOAT64, start, step, num)) : NULL;
    *idx = i;
    if (y && num > 1) y = set_at(fn, T, i, y, (double)(num - 1), stop);
    return y;
}

static int check_range(const char *fn, nd_dtype dtype, double start, double stop, int64_t num) {
    if (nd_fe_check_dtype(fn, dtype)) return -1;
    if (num < 0) {
        nd_error_set(ND_ERR_ARG, "%s: num = %lld is negative (use num >= 0)", fn, (long long)num);
        return -1;
    }
    if (!isfinite(start) || !isfinite(stop)) {
        nd_error_set(ND_ERR_ARG, "%s: start %g and stop %g must be finite", fn, start, stop);
        return -1;
    }
    size_t nbytes;
    return nd_fe_check_shape(fn, 1, &num, dtype, &nbytes);
}

/* The float64 result r as dtype (r stays in T). */
static nd_array *as_dtype(const char *fn, nd_array *r, nd_dtype dtype) {
    if (!r) return NULL;
    if (dtype == ND_FLOAT64) {
        r->refs++;
        return r;
    }
    return nd_fe_astype(fn, r, dtype);
}

/* NumPy 2's linspace: float64 values with the exact endpoint, floored for
 * an integer dtype (NumPy rounds toward -inf there, so -3.7 gives -4, not
 * the -3 a cast alone gives), then cast. */
nd_array *nd_linspace(nd_dtype dtype, double start, double stop, int64_t num) {
    ND_API_GUARD();
    static const char fn[] = "nd_linspace";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (check_range(fn, dtype, start, stop, num)) return NULL;
    nd_fe_temps T = {0};
    nd_array *i;
    nd_array *y = linspace_f64(fn, &T, start, stop, num, &i);
    if (y && nd_dtype_is_int(dtype)) y = nd_fe_tmp(&T, nd_fe_unary(fn, ND_OP_FLOOR, y));
    nd_array *out = as_dtype(fn, y, dtype);
    nd_fe_temps_release(&T);
    return nd_runtime_track(out);
}

nd_array *nd_logspace(nd_dtype dtype, double start, double stop, int64_t num, double base) {
    ND_API_GUARD();
    static const char fn[] = "nd_logspace";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (check_range(fn, dtype, start, stop, num)) return NULL;
    nd_fe_temps T = {0};
    nd_array *i, *r = NULL;
    nd_array *y = linspace_f64(fn, &T, start, stop, num, &i);
    nd_array *b = y ? nd_fe_tmp(&T, nd_fe_scalar(base)) : NULL;
    if (b) r = nd_fe_tmp(&T, nd_fe_binary(fn, ND_OP_POW, b, y));
    nd_array *out = as_dtype(fn, r, dtype);
    nd_fe_temps_release(&T);
    return nd_runtime_track(out);
}

nd_array *nd_geomspace(nd_dtype dtype, double start, double stop, int64_t num) {
    ND_API_GUARD();
    static const char fn[] = "nd_geomspace";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (check_range(fn, dtype, start, stop, num)) return NULL;
    if (start == 0 || stop == 0) {
        nd_error_set(ND_ERR_ARG, "%s: a geometric sequence cannot include zero (start %g, stop "
                     "%g; use non-zero endpoints)", fn, start, stop);
        return NULL;
    }
    /* NumPy: divide out start's sign, logspace between the log10s, put the
     * endpoints back exactly, multiply the sign in. Endpoints of opposite
     * signs give NaN between them (log10 of a negative), as NumPy. */
    const double sign = start < 0 ? -1.0 : 1.0, s = start / sign, t = stop / sign;
    nd_fe_temps T = {0};
    nd_array *i, *r = NULL;
    nd_array *y = linspace_f64(fn, &T, log10(s), log10(t), num, &i);
    nd_array *ten = y ? nd_fe_tmp(&T, nd_fe_scalar(10.0)) : NULL;
    if (ten) r = nd_fe_tmp(&T, nd_fe_binary(fn, ND_OP_POW, ten, y));
    if (r && num > 0) r = set_at(fn, &T, i, r, 0.0, s);
    if (r && num > 1) r = set_at(fn, &T, i, r, (double)(num - 1), t);
    if (r && sign < 0) {
        nd_array *m = nd_fe_tmp(&T, nd_fe_scalar(sign));
        r = m ? nd_fe_tmp(&T, nd_fe_binary(fn, ND_OP_MUL, r, m)) : NULL;
    }
    nd_array *out = as_dtype(fn, r, dtype);
    nd_fe_temps_release(&T);
    return nd_runtime_track(out);
}

/* ------------------------------------------------------------ meshgrid */

static nd_status meshgrid(const char *fn, int n, nd_array *const *xi, const char *indexing,
                          nd_array **out) {
    if (n < 0 || n > ND_MAX_DIMS)
        return nd_error_set(ND_ERR_ARG, "%s: n = %d arrays is out of range (use 0..%d: the "
                            "grid has one dimension per array)", fn, n, ND_MAX_DIMS);
    if (n > 0 && (!xi || !out))
        return nd_error_set(ND_ERR_ARG, "%s: %s is NULL (pass %d arrays in xi and room for %d "
                            "handles in out)", fn, !xi ? "xi" : "out", n, n);
    for (int k = 0; k < n; k++) out[k] = NULL;
    int ij;
    if (!indexing || strcmp(indexing, "xy") == 0) ij = 0;
    else if (strcmp(indexing, "ij") == 0) ij = 1;
    else
        return nd_error_set(ND_ERR_ARG, "%s: indexing \"%s\" is not \"xy\" or \"ij\" (\"xy\", "
                            "the default, swaps the first two output axes; \"ij\" keeps them "
                            "in input order)", fn, indexing);
    for (int k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "xi[%d]", k);
        if (nd_fe_arg(fn, name, xi[k])) return nd_last_status();
    }
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    /* Each input is flattened (as NumPy's reshape(-1)); "xy" with two or
     * more inputs puts input 0 on axis 1 and input 1 on axis 0. */
    int64_t shape[ND_MAX_DIMS];
    int axis_of[ND_MAX_DIMS];
    for (int k = 0; k < n; k++) {
        axis_of[k] = ij || n < 2 || k > 1 ? k : 1 - k;
        shape[axis_of[k]] = nd_shape_size(xi[k]->ndim, xi[k]->shape);
    }
    size_t nbytes;
    for (int k = 0; k < n; k++)
        if (nd_fe_nbytes(fn, n, shape, xi[k]->dtype, &nbytes)) return nd_last_status();
    nd_fe_temps T = {0};
    int made = 0;
    for (; made < n; made++) {
        nd_array *s = nd_fe_tmp(&T, nd_fe_strong(fn, xi[made]));
        nd_array *flat = s ? nd_fe_tmp(&T, nd_fe_reshape(fn, s, 1, (int64_t[]){-1})) : NULL;
        if (!flat) break;
        int64_t strides[ND_MAX_DIMS] = {0};
        strides[axis_of[made]] = flat->strides[0];
        nd_array *v = nd_fe_tmp(&T, nd_fe_view(flat, n, shape, strides, flat->offset));
        /* NumPy's default copy=True: writable arrays of their own. */
        out[made] = v ? nd_fe_astype(fn, v, v->dtype) : NULL;
        if (!out[made]) break;
        nd_fe_temps_release(&T);
    }
    nd_fe_temps_release(&T);
    if (made == n) {
        for (int k = 0; k < n; k++) out[k] = nd_runtime_track(out[k]);
        return ND_OK;
    }
    for (int k = 0; k < made; k++) {
        nd_fe_release(out[k]);
        out[k] = NULL;
    }
    return nd_last_status();
}

nd_status nd_meshgrid(int n, nd_array *const *xi, const char *indexing, nd_array **out) {
    ND_API_GUARD();
    return meshgrid("nd_meshgrid", n, xi, indexing, out);
}

/* ------------------------------------------------------------ indices */

nd_array *nd_indices(nd_dtype dtype, int ndim, const int64_t *shape) {
    ND_API_GUARD();
    static const char fn[] = "nd_indices";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL;
    if (ndim + 1 > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_ARG, "%s: ndim %d gives a result of %d dimensions, more than %d (use "
                     "ndim <= %d)", fn, ndim, ndim + 1, ND_MAX_DIMS, ND_MAX_DIMS - 1);
        return NULL;
    }
    int64_t oshape[ND_MAX_DIMS];
    oshape[0] = ndim;
    for (int d = 0; d < ndim; d++) oshape[d + 1] = shape[d];
    nd_array *out = nd_fe_empty(fn, dtype, ndim + 1, oshape);
    if (!out) return NULL;
    /* out[d] = arange(shape[d]) along axis d: one store per axis, the
     * int64 range cast to dtype on the way (wrapping as NumPy's arange in
     * a narrow dtype does). */
    for (int d = 0; d < ndim; d++) {
        nd_fe_temps T = {0};
        nd_array *r = nd_fe_tmp(&T, nd_fe_arange(fn, ND_INT64, 0, 1, shape[d]));
        int64_t rs[ND_MAX_DIMS] = {0};
        rs[d] = 1;
        nd_array *src = r ? nd_fe_tmp(&T, nd_fe_view(r, ndim, shape, rs, 0)) : NULL;
        nd_array *dst =
            src ? nd_fe_tmp(&T, nd_fe_view(out, ndim, shape, out->strides + 1, d * out->strides[0]))
                : NULL;
        nd_status st = dst ? nd_fe_store(fn, dst, src) : ND_ERR_OOM;
        nd_fe_temps_release(&T);
        if (st != ND_OK) {
            nd_fe_release(out);
            return NULL;
        }
    }
    return nd_runtime_track(out);
}
