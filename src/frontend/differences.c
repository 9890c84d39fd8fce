/* diff and ediff1d: differences of shifted views (a[1:] - a[:-1]), one
 * elementwise op per order, so an n-th difference is one fused kernel. */
#include <stdio.h>
#include <string.h>

#include "frontend/shaping_internal.h"

/* One difference along ax: bool uses != as NumPy (its xor); others sub. */
static nd_array *diff_once(const char *fn, nd_array *x, int ax) {
    int64_t n = x->shape[ax], m = n ? n - 1 : 0;
    nd_array *hi = nd_fe_axis_slice(x, ax, n ? 1 : 0, m, 1);
    nd_array *lo = hi ? nd_fe_axis_slice(x, ax, 0, m, 1) : NULL;
    nd_array *d = lo ? nd_fe_binary(fn, x->dtype == ND_BOOL ? ND_OP_NE : ND_OP_SUB, hi, lo) : NULL;
    nd_fe_release(lo);
    nd_fe_release(hi);
    return d;
}

nd_array *nd_diff(nd_array *a, int n, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_diff";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (n < 0) {
        nd_error_set(ND_ERR_ARG, "%s: order n = %d is negative (use n >= 0)", fn, n);
        return NULL;
    }
    if (a->ndim == 0) {
        nd_error_set(ND_ERR_ARG, "%s: a is 0-d; diff needs at least one dimension (nd_reshape it "
                     "to 1-d)", fn);
        return NULL;
    }
    int ax;
    if (nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
    /* n = 0 is a itself (NumPy returns the input): a view of it. */
    nd_array *x = nd_fe_view(a, a->ndim, a->shape, a->strides, a->offset);
    /* Past the axis length every further order is empty with the same
     * dtype: stop there rather than record n nodes. */
    for (int i = 0; x && i < n; i++) {
        int64_t len = x->shape[ax];
        nd_array *d = diff_once(fn, x, ax);
        nd_fe_release(x);
        x = d;
        if (len == 0) break;
    }
    return nd_runtime_track(x);
}

/* NumPy's same_kind casting between real dtypes: to an equal or higher
 * kind (bool < unsigned < signed < float), any width within a kind. */
static int same_kind(nd_dtype from, nd_dtype to) {
    static const int rank[] = {[ND_KIND_BOOL] = 0, [ND_KIND_UINT] = 1, [ND_KIND_INT] = 2,
                               [ND_KIND_FLOAT] = 3};
    return rank[nd_dtype_kind_of(from)] <= rank[nd_dtype_kind_of(to)];
}

nd_array *nd_ediff1d(nd_array *a, nd_array *to_end, nd_array *to_begin) {
    ND_API_GUARD();
    static const char fn[] = "nd_ediff1d";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (to_end && nd_fe_arg(fn, "to_end", to_end)) return NULL;
    if (to_begin && nd_fe_arg(fn, "to_begin", to_begin)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    nd_array *s = nd_fe_strong(fn, a);
    if (!s) return NULL;
    nd_dtype t = s->dtype;
    if (t == ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE, "%s: a is bool, which has no subtraction in NumPy (use "
                     "nd_diff, whose bool difference is !=, or nd_astype a to an integer dtype)",
                     fn);
        nd_fe_release(s);
        return NULL;
    }
    /* parts: to_begin, the differences, to_end (each flattened). */
    nd_array *parts[3] = {NULL, NULL, NULL}, *ends[2] = {to_begin, to_end}, *out = NULL;
    static const char *const end_names[2] = {"to_begin", "to_end"};
    for (int e = 0; e < 2; e++) {
        if (!ends[e]) continue;
        nd_array *se = nd_fe_strong(fn, ends[e]);
        if (!se) goto done;
        if (!same_kind(se->dtype, t)) {
            nd_error_set(ND_ERR_DTYPE, "%s: %s is %s, which does not cast to a's dtype %s under "
                         "the same_kind rule (nd_astype it to %s first)", fn, end_names[e],
                         nd_dtype_name(se->dtype), nd_dtype_name(t), nd_dtype_name(t));
            nd_fe_release(se);
            goto done;
        }
        parts[e ? 2 : 0] = nd_fe_flat(fn, se);
        nd_fe_release(se);
        if (!parts[e ? 2 : 0]) goto done;
    }
    nd_array *flat = nd_fe_flat(fn, s);
    parts[1] = flat ? diff_once(fn, flat, 0) : NULL;
    nd_fe_release(flat);
    if (!parts[1]) goto done;
    /* Joined in a's dtype (NumPy casts to_begin and to_end). */
    int64_t len = 0, pos = 0;
    for (int i = 0; i < 3; i++) len += parts[i] ? parts[i]->shape[0] : 0;
    out = nd_fe_empty(fn, t, 1, &len);
    for (int i = 0; out && i < 3; i++) {
        int64_t l = parts[i] ? parts[i]->shape[0] : 0;
        if (!l) continue;
        nd_array *dst = nd_fe_view(out, 1, &l, out->strides, pos);
        nd_status st = dst ? nd_fe_store(fn, dst, parts[i]) : nd_last_status();
        nd_fe_release(dst);
        if (st != ND_OK) {
            nd_fe_release(out);
            out = NULL;
        }
        pos += l;
    }
done:
    for (int i = 0; i < 3; i++) nd_fe_release(parts[i]);
    nd_fe_release(s);
    return nd_runtime_track(out);
}
