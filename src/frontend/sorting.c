/* Sorting and searching (include/nd/sorting.h): sort, argsort, partition,
 * lexsort, searchsorted, isin, digitize and unique, built on the library
 * routines ND_LIB_SORT (along the last axis of packed rows), TAKE_ROWS and
 * SEARCHSORTED. An axis is moved last by a view; the routine's output is
 * seen through the inverse move. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort_keys.h"
#include "frontend/shaping_internal.h"
#include "frontend/sorting_internal.h"

void nd_fe_axis_last_maps(int ndim, int ax, int *to_last, int *back) {
    for (int k = 0, j = 0; k < ndim; k++)
        if (k != ax) to_last[j++] = k;
    if (ndim) to_last[ndim - 1] = ax;
    for (int k = 0; k < ndim; k++) back[to_last[k]] = k;
}

nd_array *nd_fe_sort_last(const char *fn, nd_array *x, nd_lib_sort_mode mode) {
    /* float16 and bfloat16 values sort as float32 (exact both ways), so the
     * CUDA plugin instantiates no 16-bit float sort. */
    nd_dtype cd = x->dtype;
    if (mode == ND_SORT_VALUES && (cd == ND_FLOAT16 || cd == ND_BFLOAT16)) cd = ND_FLOAT32;
    nd_array *packed = x, *sorted = NULL, *result = NULL;
    /* The routine sorts packed rows: convert or pack first (one copy, fused
     * with whatever computes x). */
    if (x->weak || x->dtype != cd || !nd_array_is_contiguous(x)) packed = nd_fe_astype(fn, x, cd);
    if (!packed) return NULL;
    nd_lib_args args = {{{.i = mode}}};
    nd_kernel_output out = {NULL, mode == ND_SORT_VALUES ? cd : ND_INT64, packed->ndim, packed->shape};
    if (nd_fe_lib_call(fn, ND_LIB_SORT, &args, 1, &packed, 1, &out, &sorted) == ND_OK) {
        result = sorted;
        if (mode == ND_SORT_VALUES && cd != x->dtype) {
            result = nd_fe_astype(fn, sorted, x->dtype);
            nd_fe_release(sorted);
        }
    }
    if (packed != x) nd_fe_release(packed);
    return result;
}

nd_array *nd_fe_sort_along(const char *fn, nd_array *a, int axis, nd_lib_sort_mode mode) {
    nd_array *x = a;
    int ax = 0;
    if (axis == ND_ALL_AXES) {
        x = nd_fe_flat(fn, a);
        if (!x) return NULL;
    } else if (nd_fe_axis(fn, axis, a->ndim, &ax)) {
        return NULL;
    }
    int n = x->ndim, to_last[ND_MAX_DIMS], back[ND_MAX_DIMS];
    nd_fe_axis_last_maps(n, ax, to_last, back);
    nd_array *moved = nd_fe_with_axes(x, n, to_last), *sorted = NULL, *result = NULL;
    if (moved) sorted = nd_fe_sort_last(fn, moved, mode);
    if (sorted) result = nd_fe_with_axes(sorted, n, back);
    if (sorted) nd_fe_release(sorted);
    if (moved) nd_fe_release(moved);
    if (x != a) nd_fe_release(x);
    return result;
}

nd_array *nd_fe_take_last(const char *fn, nd_array *x, nd_array *ix) {
    nd_kernel_output out = {NULL, x->dtype, ix->ndim, ix->shape};
    nd_array *in[2] = {x, ix}, *r = NULL;
    if (nd_fe_lib_call(fn, ND_LIB_TAKE_ROWS, NULL, 2, in, 1, &out, &r) != ND_OK) return NULL;
    return r;
}

nd_array *nd_fe_searchsorted(const char *fn, nd_array *a, nd_array *v, int right) {
    if (a->ndim != 1) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is %d-d; it must be a sorted 1-d array (flatten or index it first)", fn,
                     a->ndim);
        return NULL;
    }
    nd_dtype cd = nd_fe_result_type(fn, a, v, 1);
    if (cd == ND_NUM_DTYPES) return NULL;
    nd_array *aa = a->weak || a->dtype != cd ? nd_fe_astype(fn, a, cd) : a;
    nd_array *vv = aa && (v->weak || v->dtype != cd) ? nd_fe_astype(fn, v, cd) : v, *r = NULL;
    if (aa && vv) {
        nd_lib_args args = {{{.i = right}}};
        nd_kernel_output out = {NULL, ND_INT64, vv->ndim, vv->shape};
        nd_array *in[2] = {aa, vv};
        nd_fe_lib_call(fn, ND_LIB_SEARCHSORTED, &args, 2, in, 1, &out, &r);
    }
    if (vv && vv != v) nd_fe_release(vv);
    if (aa && aa != a) nd_fe_release(aa);
    return r;
}

/* ------------------------------------------------------------ the API */

nd_array *nd_sort(nd_array *a, int axis) {
    ND_API_GUARD();
    if (nd_fe_arg("nd_sort", "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_sort_along("nd_sort", a, axis, ND_SORT_VALUES));
}

nd_array *nd_argsort(nd_array *a, int axis) {
    ND_API_GUARD();
    if (nd_fe_arg("nd_argsort", "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_sort_along("nd_argsort", a, axis, ND_SORT_INDICES));
}

/* A partition is a sort here (a valid partition for every kth at once);
 * the kth are checked against the axis first. NumPy checks nothing when
 * the array is empty. */
static nd_array *partition(const char *fn, nd_array *a, int64_t nkth, const int64_t *kth, int axis,
                           nd_lib_sort_mode mode) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (nkth < 0 || (nkth > 0 && !kth)) {
        nd_error_set(ND_ERR_ARG, "%s: %" PRId64 " kth given as %s", fn, nkth, kth ? "a count" : "NULL");
        return NULL;
    }
    int ax = 0;
    int64_t size = nd_shape_size(a->ndim, a->shape), n = size;
    if (axis != ND_ALL_AXES) {
        if (nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
        n = a->shape[ax];
    }
    for (int64_t i = 0; i < nkth && size > 0; i++)
        if (kth[i] < -n || kth[i] >= n) {
            nd_error_set(ND_ERR_ARG, "%s: kth = %" PRId64 "%s is out of bounds for an axis of length %" PRId64
                         " (use %" PRId64 "..%" PRId64 ")", fn, kth[i], nkth > 1 ? " (one of the kth)" : "", n, -n,
                         n - 1);
            return NULL;
        }
    return nd_fe_sort_along(fn, a, axis, mode);
}

nd_array *nd_partition(nd_array *a, int64_t kth, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(partition("nd_partition", a, 1, &kth, axis, ND_SORT_VALUES));
}

nd_array *nd_argpartition(nd_array *a, int64_t kth, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(partition("nd_argpartition", a, 1, &kth, axis, ND_SORT_INDICES));
}

nd_array *nd_partitions(nd_array *a, int64_t nkth, const int64_t *kth, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(partition("nd_partitions", a, nkth, kth, axis, ND_SORT_VALUES));
}

nd_array *nd_argpartitions(nd_array *a, int64_t nkth, const int64_t *kth, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(partition("nd_argpartitions", a, nkth, kth, axis, ND_SORT_INDICES));
}

/* Least significant key first: perm = perm[argsort(key[perm])], stable, so
 * ties of a later key keep the order of the earlier ones. */
static nd_array *lexsort(const char *fn, int k, nd_array *const *keys) {
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (k < 1 || !keys) {
        nd_error_set(ND_ERR_ARG, "%s: %d keys (pass k >= 1 arrays of one shape)", fn, keys ? k : 0);
        return NULL;
    }
    for (int i = 0; i < k; i++) {
        char name[32];
        snprintf(name, sizeof name, "keys[%d]", i);
        if (nd_fe_arg(fn, name, keys[i])) return NULL;
        const nd_array *f = keys[0], *g = keys[i];
        if (g->ndim != f->ndim || memcmp(g->shape, f->shape, sizeof(int64_t) * (size_t)f->ndim)) {
            nd_error_set(ND_ERR_SHAPE, "%s: keys[%d] is %d-d of another shape than keys[0] (%d-d); all keys must have "
                         "one shape", fn, i, g->ndim, f->ndim);
            return NULL;
        }
    }
    if (keys[0]->ndim == 0) { /* NumPy: index 0 of the one element */
        nd_scalar_bits zero = {.i = 0};
        return nd_fe_full(fn, ND_INT64, 0, NULL, zero);
    }
    nd_array *perm = nd_fe_sort_last(fn, keys[0], ND_SORT_INDICES);
    for (int i = 1; i < k && perm; i++) {
        nd_array *g = nd_fe_take_last(fn, keys[i], perm);
        nd_array *step = g ? nd_fe_sort_last(fn, g, ND_SORT_INDICES) : NULL;
        nd_array *next = step ? nd_fe_take_last(fn, perm, step) : NULL;
        if (g) nd_fe_release(g);
        if (step) nd_fe_release(step);
        nd_fe_release(perm);
        perm = next;
    }
    return perm;
}

nd_array *nd_lexsort(int k, nd_array *const *keys) {
    ND_API_GUARD();
    return nd_runtime_track(lexsort("nd_lexsort", k, keys));
}

nd_array *nd_searchsorted(nd_array *a, nd_array *v, nd_side side) {
    ND_API_GUARD();
    static const char fn[] = "nd_searchsorted";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "v", v) || nd_runtime_ensure() != ND_OK) return NULL;
    if (side != ND_SIDE_LEFT && side != ND_SIDE_RIGHT) {
        nd_error_set(ND_ERR_ARG, "%s: side = %d (use ND_SIDE_LEFT or ND_SIDE_RIGHT)", fn, (int)side);
        return NULL;
    }
    return nd_runtime_track(nd_fe_searchsorted(fn, a, v, side == ND_SIDE_RIGHT));
}

/* isin: test sorted once; an element is in it when its right insertion
 * point is past its left one, and it is not NaN (NaN equals nothing). */
static nd_array *isin(const char *fn, nd_array *e, nd_array *t) {
    nd_dtype cd = nd_fe_result_type(fn, e, t, 1);
    if (cd == ND_NUM_DTYPES) return NULL;
    nd_array *held[8] = {0}, *r = NULL;
    int n = 0;
    nd_array *tt = held[n++] = nd_fe_astype(fn, t, cd);
    nd_array *ee = tt ? (held[n++] = nd_fe_astype(fn, e, cd)) : NULL;
    nd_array *sorted = ee ? (held[n++] = nd_fe_sort_along(fn, tt, ND_ALL_AXES, ND_SORT_VALUES)) : NULL;
    nd_array *lo = sorted ? (held[n++] = nd_fe_searchsorted(fn, sorted, ee, 0)) : NULL;
    nd_array *hi = lo ? (held[n++] = nd_fe_searchsorted(fn, sorted, ee, 1)) : NULL;
    if (hi) r = nd_fe_binary(fn, ND_OP_GT, hi, lo);
    if (r && nd_dtype_is_float(cd)) {
        nd_array *not_nan = held[n++] = nd_fe_binary(fn, ND_OP_EQ, ee, ee);
        nd_array *both = not_nan ? nd_fe_binary(fn, ND_OP_LOGICAL_AND, r, not_nan) : NULL;
        nd_fe_release(r);
        r = both;
    }
    for (int i = 0; i < n; i++)
        if (held[i]) nd_fe_release(held[i]);
    return r;
}

nd_array *nd_isin(nd_array *element, nd_array *test_elements) {
    ND_API_GUARD();
    static const char fn[] = "nd_isin";
    if (nd_fe_arg(fn, "element", element) || nd_fe_arg(fn, "test_elements", test_elements) ||
        nd_runtime_ensure() != ND_OK)
        return NULL;
    return nd_runtime_track(isin(fn, element, test_elements));
}

/* bins' direction: 1 increasing, -1 decreasing (0 for fewer than two
 * bins: either), 2 neither; -2 when they could not be read. */
static int monotonicity(const char *fn, nd_array *bins) {
    int64_t n = bins->shape[0];
    if (n < 2) return 0;
    double *v = nd_malloc((size_t)n * sizeof *v);
    nd_array *d = v ? nd_fe_astype(fn, bins, ND_FLOAT64) : NULL;
    int dir = -2;
    if (!v) nd_error_set(ND_ERR_OOM, "%s: out of host memory reading %" PRId64 " bins", fn, n);
    if (d && nd_to_host(d, v, (size_t)n * sizeof *v) == ND_OK) {
        int inc = 1, dec = 1;
        for (int64_t i = 1; i < n; i++) {
            inc &= v[i] >= v[i - 1];
            dec &= v[i] <= v[i - 1];
        }
        dir = inc ? 1 : dec ? -1 : 2;
    }
    if (d) nd_fe_release(d);
    free(v);
    return dir;
}

static nd_array *digitize(const char *fn, nd_array *x, nd_array *bins, int right) {
    if (bins->ndim != 1) {
        nd_error_set(ND_ERR_SHAPE, "%s: bins is %d-d; it must be 1-d", fn, bins->ndim);
        return NULL;
    }
    int dir = monotonicity(fn, bins);
    if (dir == -2) return NULL;
    if (dir == 2) {
        nd_error_set(ND_ERR_ARG, "%s: bins must be monotonically increasing or decreasing", fn);
        return NULL;
    }
    /* NumPy: increasing bins search x on the other side than `right`;
     * decreasing ones are searched reversed and counted from the end. */
    if (dir >= 0) return nd_fe_searchsorted(fn, bins, x, !right);
    nd_array *rev = nd_fe_view_index(fn, bins, "::-1");
    nd_array *s = rev ? nd_fe_searchsorted(fn, rev, x, !right) : NULL, *r = NULL;
    nd_scalar_bits len = {.i = bins->shape[0]};
    nd_array *count = s ? nd_fe_full(fn, ND_INT64, 0, NULL, len) : NULL;
    if (count) r = nd_fe_binary(fn, ND_OP_SUB, count, s);
    if (count) nd_fe_release(count);
    if (s) nd_fe_release(s);
    if (rev) nd_fe_release(rev);
    return r;
}

nd_array *nd_digitize(nd_array *x, nd_array *bins, int right) {
    ND_API_GUARD();
    static const char fn[] = "nd_digitize";
    if (nd_fe_arg(fn, "x", x) || nd_fe_arg(fn, "bins", bins) || nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(digitize(fn, x, bins, right));
}

/* ------------------------------------------------------------- unique */

/* A new 1-d int64 host array of n elements filled from v. */
static nd_array *int64_array(const char *fn, int ndim, const int64_t *shape, const int64_t *v, int64_t n) {
    void *data = NULL;
    nd_array *r = nd_fe_host_array(fn, ND_INT64, ndim, shape, &data);
    if (r && n) memcpy(data, v, (size_t)n * sizeof *v);
    return r;
}

static nd_status unique(const char *fn, nd_array *a, int flags, nd_unique_result *out) {
    nd_dtype t = a->dtype;
    size_t w = nd_dtype_size(t);
    nd_sort_key_info f = nd_sort_key_info_of(t);
    nd_array *flat = nd_fe_flat(fn, a), *sorted = NULL, *perm = NULL;
    int64_t n = flat ? flat->shape[0] : 0, groups = 0;
    int need_perm = (flags & (ND_UNIQUE_INDEX | ND_UNIQUE_INVERSE)) != 0;
    size_t m = n ? (size_t)n : 1;
    char *vals = nd_malloc(m * w);
    int64_t *p = nd_malloc(m * sizeof *p), *first = nd_malloc((m + 1) * sizeof *first), *tmp = nd_malloc(m * sizeof *tmp);
    nd_status st = flat ? ND_OK : nd_last_status();
    if (st == ND_OK && (!vals || !p || !first || !tmp))
        st = nd_error_set(ND_ERR_OOM, "%s: out of host memory for %" PRId64 " elements", fn, n);
    if (st == ND_OK && !(sorted = nd_fe_sort_last(fn, flat, ND_SORT_VALUES))) st = nd_last_status();
    if (st == ND_OK && need_perm && !(perm = nd_fe_sort_last(fn, flat, ND_SORT_INDICES))) st = nd_last_status();
    if (st == ND_OK) st = nd_to_host(sorted, vals, (size_t)n * w);
    if (st == ND_OK && perm) st = nd_to_host(perm, p, (size_t)n * sizeof *p);
    if (st == ND_OK) {
        /* Groups of equal keys (-0.0 with +0.0, NaN with NaN) in sorted order. */
        for (int64_t i = 0; i < n; i++) {
            uint64_t k = nd_sort_key_bits(nd_sort_load_bits(vals + i * w, f), f);
            if (i == 0 || k != nd_sort_key_bits(nd_sort_load_bits(vals + (i - 1) * w, f), f)) {
                first[groups++] = i;
                if (groups - 1 != i) memcpy(vals + (groups - 1) * w, vals + i * w, w);
            }
        }
        first[groups] = n;
        void *data = NULL;
        out->values = nd_fe_host_array(fn, t, 1, &groups, &data);
        if (out->values && groups) memcpy(data, vals, (size_t)groups * w);
        if (!out->values) st = nd_last_status();
    }
    if (st == ND_OK && (flags & ND_UNIQUE_INDEX)) {
        for (int64_t g = 0; g < groups; g++) tmp[g] = p[first[g]]; /* stable: the smallest index of the group */
        if (!(out->index = int64_array(fn, 1, &groups, tmp, groups))) st = nd_last_status();
    }
    if (st == ND_OK && (flags & ND_UNIQUE_INVERSE)) {
        for (int64_t g = 0; g < groups; g++)
            for (int64_t i = first[g]; i < first[g + 1]; i++) tmp[p[i]] = g;
        if (!(out->inverse = int64_array(fn, a->ndim, a->shape, tmp, n))) st = nd_last_status();
    }
    if (st == ND_OK && (flags & ND_UNIQUE_COUNTS)) {
        for (int64_t g = 0; g < groups; g++) tmp[g] = first[g + 1] - first[g];
        if (!(out->counts = int64_array(fn, 1, &groups, tmp, groups))) st = nd_last_status();
    }
    if (perm) nd_fe_release(perm);
    if (sorted) nd_fe_release(sorted);
    if (flat) nd_fe_release(flat);
    free(vals);
    free(p);
    free(first);
    free(tmp);
    nd_array **fields[4] = {&out->values, &out->index, &out->inverse, &out->counts};
    for (int i = 0; i < 4; i++) {
        if (!*fields[i]) continue;
        if (st == ND_OK) *fields[i] = nd_runtime_track(*fields[i]);
        else {
            nd_fe_release(*fields[i]);
            *fields[i] = NULL;
        }
    }
    return st;
}

nd_status nd_unique_all(nd_array *a, int flags, nd_unique_result *out) {
    ND_API_GUARD();
    static const char fn[] = "nd_unique_all";
    if (out) memset(out, 0, sizeof *out);
    if (!out) return nd_error_set(ND_ERR_ARG, "%s: out is NULL (pass an nd_unique_result to fill)", fn);
    if (nd_fe_arg(fn, "a", a)) return nd_last_status();
    if (flags & ~(ND_UNIQUE_INDEX | ND_UNIQUE_INVERSE | ND_UNIQUE_COUNTS))
        return nd_error_set(ND_ERR_ARG, "%s: flags = %d has unknown bits (use ND_UNIQUE_INDEX | ND_UNIQUE_INVERSE | "
                            "ND_UNIQUE_COUNTS)", fn, flags);
    if (nd_runtime_ensure() != ND_OK) return nd_last_status();
    return unique(fn, a, flags, out);
}

nd_array *nd_unique(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_unique";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_unique_result r;
    memset(&r, 0, sizeof r);
    return unique(fn, a, 0, &r) == ND_OK ? r.values : NULL;
}
