/* Histograms (include/nd/statistics.h): bincount, histogram with a bin count
 * and range or with explicit edges, histogram_bin_edges, histogram2d. Each
 * count is one ND_LIB_HISTOGRAM call (common/hist_bins.h says which bin a
 * value falls in); histogram2d combines two ND_LIB_BIN_INDEX results
 * lazily into one flat index. What NumPy decides from the data (bincount's
 * length, a range left to the data, the edges' order) is read back at the
 * call: those functions synchronise. */
#include <math.h>

#include "common/hist_bins.h"
#include "frontend/compose.h"
#include "frontend/shaping_internal.h"

/* A 1-d packed array of dtype t holding x's elements in C order (a view of
 * x when it already is one). */
static nd_array *packed_1d(const char *fn, nd_array *x, nd_dtype t) {
    nd_array *flat = nd_fe_flat(fn, x);
    if (!flat || (flat->dtype == t && nd_array_is_contiguous(flat))) return flat;
    nd_array *c = nd_fe_astype(fn, flat, t);
    nd_fe_release(flat);
    return c;
}

/* Reads a 0-d reduction of x (min or max over every element) at the call. */
static int read_reduced(const char *fn, nd_reduce_kind k, nd_array *x, void *value) {
    nd_array *r = nd_fe_reduce(fn, k, x, ND_ALL_AXES, 0);
    if (!r) return -1;
    nd_status st = nd_to_host(r, value, 8);
    nd_fe_release(r);
    return st == ND_OK ? 0 : -1;
}

/* weights: NULL, or an array of x's shape (NumPy: the same shape), read as
 * float64. */
static nd_array *weights_1d(const char *fn, nd_array *x, nd_array *w) {
    if (!w) return NULL;
    if (nd_fe_arg(fn, "weights", w)) return NULL;
    int same = w->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++) same = w->shape[d] == x->shape[d];
    if (!same) {
        char s1[200], s2[200];
        nd_error_set(ND_ERR_SHAPE, "%s: weights of shape %s do not match the data's shape %s (give one weight per "
                     "value)", fn, nd_format_shape(s1, sizeof s1, w->ndim, w->shape),
                     nd_format_shape(s2, sizeof s2, x->ndim, x->shape));
        return NULL;
    }
    if (!nd_dtype_is_float(w->dtype) && !nd_dtype_is_int(w->dtype) && w->dtype != ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE, "%s: weights of dtype %s cannot be summed (use a real dtype)", fn,
                     nd_dtype_name(w->dtype));
        return NULL;
    }
    return packed_1d(fn, w, ND_FLOAT64);
}

/* One ND_LIB_HISTOGRAM call: x packed, edges packed or NULL, w packed
 * float64 or NULL; int64 counts or float64 sums. */
static nd_array *record_hist(const char *fn, int mode, nd_array *x, nd_array *edges, nd_array *w, int64_t bins,
                             double lo, double hi) {
    nd_lib_args args = {{{.i = mode | (w ? ND_HIST_WEIGHTED : 0)}, {.i = bins}, {.f = lo}, {.f = hi}}};
    nd_array *in[3] = {x, edges ? edges : x, w ? w : x};
    nd_kernel_output out = {NULL, w ? ND_FLOAT64 : ND_INT64, 1, &bins};
    nd_array *result = NULL;
    nd_fe_lib_call(fn, ND_LIB_HISTOGRAM, &args, 3, in, 1, &out, &result);
    return result;
}

/* NumPy's result dtype: int64 counts, or the weights' dtype. */
static nd_array *as_weights_dtype(const char *fn, nd_array *h, nd_array *weights) {
    if (!h || !weights || weights->dtype == h->dtype) return h;
    nd_array *c = nd_fe_astype(fn, h, weights->dtype);
    nd_fe_release(h);
    return c;
}

static int check_bins(const char *fn, int64_t bins) {
    if (bins > 0) return 0;
    nd_error_set(ND_ERR_ARG, "%s: bins must be positive, got %lld (give the number of bins, at least 1)", fn,
                 (long long)bins);
    return -1;
}

/* -------------------------------------------------------------- bincount */

nd_array *nd_bincount(nd_array *x, nd_array *weights, int64_t minlength) {
    ND_API_GUARD();
    static const char fn[] = "nd_bincount";
    if (nd_fe_arg(fn, "x", x) || nd_runtime_ensure() != ND_OK) return NULL;
    if (x->ndim != 1) {
        nd_error_set(ND_ERR_SHAPE, "%s: x must be 1-d, got a %d-d array (ravel it first)", fn, x->ndim);
        return NULL;
    }
    if (x->dtype != ND_BOOL && (!nd_dtype_is_int(x->dtype) || x->dtype == ND_UINT64)) {
        nd_error_set(ND_ERR_DTYPE, "%s: x must hold integers that fit int64, got %s (cast it with nd_astype)", fn,
                     nd_dtype_name(x->dtype));
        return NULL;
    }
    if (minlength < 0) {
        nd_error_set(ND_ERR_ARG, "%s: minlength must not be negative, got %lld", fn, (long long)minlength);
        return NULL;
    }
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *xi = nd_fe_tmp(&t, packed_1d(fn, x, ND_INT64));
    nd_array *w = weights ? nd_fe_tmp(&t, weights_1d(fn, x, weights)) : NULL;
    if (!xi || (weights && !w)) goto done;
    /* The length is max(x) + 1 (at least minlength): read at the call. */
    int64_t lo = 0, hi = -1;
    if (xi->shape[0] && (read_reduced(fn, ND_REDUCE_MIN, xi, &lo) || read_reduced(fn, ND_REDUCE_MAX, xi, &hi)))
        goto done;
    if (lo < 0) {
        nd_error_set(ND_ERR_ARG, "%s: x holds the negative value %lld (bincount counts values 0, 1, ...)", fn,
                     (long long)lo);
        goto done;
    }
    int64_t len = hi + 1 > minlength ? hi + 1 : minlength;
    result = record_hist(fn, ND_HIST_INDEX, xi, NULL, w, len, 0, 0);
done:
    nd_fe_temps_release(&t);
    return nd_runtime_track(result);
}

/* ------------------------------------------------------------- histogram */

/* NumPy's _get_outer_edges: the range, or the data's min and max when both
 * are NaN (read at the call); equal ends widen by 0.5 each way. */
static int outer_edges(const char *fn, nd_array *a, double *lo, double *hi) {
    if (isnan(*lo) && isnan(*hi)) {
        if (nd_shape_size(a->ndim, a->shape) == 0) {
            *lo = 0, *hi = 1;
        } else {
            unsigned char b1[8], b2[8];
            if (read_reduced(fn, ND_REDUCE_MIN, a, b1) || read_reduced(fn, ND_REDUCE_MAX, a, b2)) return -1;
            *lo = nd_load_double(b1, a->dtype), *hi = nd_load_double(b2, a->dtype);
            if (!isfinite(*lo) || !isfinite(*hi)) {
                nd_error_set(ND_ERR_ARG, "%s: the range taken from the data, [%g, %g], is not finite (give a "
                             "range, or drop the NaN and inf values)", fn, *lo, *hi);
                return -1;
            }
        }
    } else if (!isfinite(*lo) || !isfinite(*hi)) {
        nd_error_set(ND_ERR_ARG, "%s: the range [%g, %g] is not finite (give finite ends, or NaN for both to take "
                     "the data's min and max)", fn, *lo, *hi);
        return -1;
    } else if (*lo > *hi) {
        nd_error_set(ND_ERR_ARG, "%s: the range's max %g must not be below its min %g", fn, *hi, *lo);
        return -1;
    }
    if (*lo == *hi) *lo -= 0.5, *hi += 0.5;
    return 0;
}

/* NumPy's bin dtype for data of dtype t: float32 stays float32 (float16 and
 * bfloat16 are binned in float32 here), everything else in float64. */
static nd_dtype bin_dtype(nd_dtype t) {
    return t == ND_FLOAT32 || t == ND_FLOAT16 || t == ND_BFLOAT16 ? ND_FLOAT32 : ND_FLOAT64;
}

static int check_data(const char *fn, nd_array *a) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return -1;
    if (!nd_dtype_is_float(a->dtype) && !nd_dtype_is_int(a->dtype) && a->dtype != ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE, "%s: data of dtype %s cannot be binned", fn, nd_dtype_name(a->dtype));
        return -1;
    }
    return 0;
}

nd_array *nd_histogram(nd_array *a, int64_t bins, double lo, double hi, nd_array *weights) {
    ND_API_GUARD();
    static const char fn[] = "nd_histogram";
    if (check_data(fn, a) || check_bins(fn, bins) || outer_edges(fn, a, &lo, &hi)) return NULL;
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *x = nd_fe_tmp(&t, packed_1d(fn, a, bin_dtype(a->dtype)));
    nd_array *w = weights ? nd_fe_tmp(&t, weights_1d(fn, a, weights)) : NULL;
    if (x && (!weights || w))
        result = as_weights_dtype(fn, record_hist(fn, ND_HIST_UNIFORM, x, NULL, w, bins, lo, hi), weights);
    nd_fe_temps_release(&t);
    return nd_runtime_track(result);
}

nd_array *nd_histogram_bin_edges(nd_array *a, int64_t bins, double lo, double hi) {
    ND_API_GUARD();
    static const char fn[] = "nd_histogram_bin_edges";
    if (check_data(fn, a) || check_bins(fn, bins) || outer_edges(fn, a, &lo, &hi)) return NULL;
    /* np.linspace: i * step + lo in float64, rounded once to the bin
     * dtype. */
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *e = nd_fe_tmp(&t, nd_fe_arange(fn, ND_FLOAT64, lo, (hi - lo) / (double)bins, bins + 1));
    nd_array *full = e ? nd_fe_tmp(&t, nd_fe_astype(fn, e, bin_dtype(a->dtype))) : NULL;
    if (full) {
        /* The last edge is hi exactly, as np.linspace's endpoint. */
        nd_array *last = nd_fe_tmp(&t, nd_fe_axis_slice(full, 0, bins, 1, 1));
        nd_array *h = nd_fe_tmp(&t, nd_fe_scalar(hi));
        if (last && h && nd_fe_store(fn, last, h) == ND_OK) {
            full->refs++;
            result = full;
        }
    }
    nd_fe_temps_release(&t);
    return nd_runtime_track(result);
}

nd_array *nd_histogram_by_edges(nd_array *a, nd_array *edges, nd_array *weights) {
    ND_API_GUARD();
    static const char fn[] = "nd_histogram_by_edges";
    if (check_data(fn, a) || nd_fe_arg(fn, "edges", edges)) return NULL;
    if (edges->ndim != 1 || edges->shape[0] < 2) {
        nd_error_set(ND_ERR_SHAPE, "%s: edges must be a 1-d array of at least 2 values, got %d-d with %lld", fn,
                     edges->ndim, (long long)nd_shape_size(edges->ndim, edges->shape));
        return NULL;
    }
    if (!nd_dtype_is_float(edges->dtype) && !nd_dtype_is_int(edges->dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: edges of dtype %s (give real numbers)", fn, nd_dtype_name(edges->dtype));
        return NULL;
    }
    /* Compared in the common dtype, as np.searchsorted. */
    nd_dtype ct = bin_dtype(a->dtype) == ND_FLOAT32 && bin_dtype(edges->dtype) == ND_FLOAT32 &&
                          edges->dtype != ND_FLOAT16 && edges->dtype != ND_BFLOAT16
                      ? ND_FLOAT32
                      : ND_FLOAT64;
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *x = nd_fe_tmp(&t, packed_1d(fn, a, ct)), *e = nd_fe_tmp(&t, packed_1d(fn, edges, ct));
    nd_array *w = weights ? nd_fe_tmp(&t, weights_1d(fn, a, weights)) : NULL;
    if (!x || !e || (weights && !w)) goto done;
    /* NumPy requires increasing edges: read them at the call. */
    int64_t ne = e->shape[0];
    double *host = nd_malloc((size_t)ne * sizeof(double));
    if (!host) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory reading %lld edges", fn, (long long)ne);
        goto done;
    }
    nd_array *e64 = nd_fe_tmp(&t, nd_fe_astype(fn, e, ND_FLOAT64));
    int ok = e64 && nd_to_host(e64, host, (size_t)ne * sizeof(double)) == ND_OK;
    for (int64_t i = 0; ok && i + 1 < ne; i++)
        if (host[i] > host[i + 1]) {
            nd_error_set(ND_ERR_ARG, "%s: edges must increase monotonically, but edge %lld (%g) is above edge %lld "
                         "(%g)", fn, (long long)i, host[i], (long long)(i + 1), host[i + 1]);
            ok = 0;
        }
    free(host);
    if (ok) result = as_weights_dtype(fn, record_hist(fn, ND_HIST_EDGES, x, e, w, ne - 1, 0, 0), weights);
done:
    nd_fe_temps_release(&t);
    return nd_runtime_track(result);
}

/* ----------------------------------------------------------- histogram2d */

/* Marks a dropped value in the per-axis indices: any flat index built from
 * it (ix * ny + iy) stays negative while nx * ny < 2^40. */
#define DROPPED (-((int64_t)1 << 40))

static nd_array *axis_index(const char *fn, nd_array *v, int64_t bins, double lo, double hi) {
    nd_array *x = packed_1d(fn, v, ND_FLOAT64), *idx = NULL;
    if (!x) return NULL;
    nd_lib_args args = {{{.i = bins}, {.f = lo}, {.f = hi}, {.i = DROPPED}}};
    nd_kernel_output out = {NULL, ND_INT64, 1, x->shape};
    nd_fe_lib_call(fn, ND_LIB_BIN_INDEX, &args, 1, &x, 1, &out, &idx);
    nd_fe_release(x);
    return idx;
}

nd_array *nd_histogram2d(nd_array *x, nd_array *y, int64_t nx, int64_t ny, const double *range,
                         nd_array *weights) {
    ND_API_GUARD();
    static const char fn[] = "nd_histogram2d";
    if (check_data(fn, x) || check_data(fn, y) || check_bins(fn, nx) || check_bins(fn, ny)) return NULL;
    if (x->ndim != 1 || y->ndim != 1 || x->shape[0] != y->shape[0]) {
        nd_error_set(ND_ERR_SHAPE, "%s: x and y must be 1-d arrays of one length, got %d-d and %d-d with %lld and "
                     "%lld values", fn, x->ndim, y->ndim, (long long)nd_shape_size(x->ndim, x->shape),
                     (long long)nd_shape_size(y->ndim, y->shape));
        return NULL;
    }
    if (nx > ((int64_t)1 << 40) / ny) {
        nd_error_set(ND_ERR_ARG, "%s: %lld x %lld bins are too many", fn, (long long)nx, (long long)ny);
        return NULL;
    }
    double r[4] = {NAN, NAN, NAN, NAN};
    if (range) memcpy(r, range, sizeof r);
    if (outer_edges(fn, x, &r[0], &r[1]) || outer_edges(fn, y, &r[2], &r[3])) return NULL;
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *w = weights ? nd_fe_tmp(&t, weights_1d(fn, x, weights)) : NULL;
    nd_array *ix = nd_fe_tmp(&t, axis_index(fn, x, nx, r[0], r[1]));
    nd_array *iy = nd_fe_tmp(&t, axis_index(fn, y, ny, r[2], r[3]));
    nd_array *nys = nd_fe_tmp(&t, nd_fe_full(fn, ND_INT64, 0, NULL, (nd_scalar_bits){.i = ny}));
    nd_array *m = ix && nys ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MUL, ix, nys)) : NULL;
    nd_array *flat = m && iy ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_ADD, m, iy)) : NULL;
    if (!flat || (weights && !w)) goto done;
    /* histogramdd's result is float64 with or without weights. */
    nd_array *h = nd_fe_tmp(&t, record_hist(fn, ND_HIST_INDEX, flat, NULL, w, nx * ny, 0, 0));
    nd_array *hf = h ? nd_fe_tmp(&t, w ? (h->refs++, h) : nd_fe_astype(fn, h, ND_FLOAT64)) : NULL;
    int64_t shape[2] = {nx, ny};
    if (hf) result = nd_fe_reshape(fn, hf, 2, shape);
done:
    nd_fe_temps_release(&t);
    return nd_runtime_track(result);
}
