/* Scans (include/nd/scans.h): cumsum, cumprod and their NaN-skipping forms,
 * as one ND_LIB_CUMULATE call along the last axis of a view that moves the
 * scanned axis last; the result is the routine's output seen through the
 * inverse move. */
#include "frontend/frontend.h"
#include "frontend/shaping_internal.h"

/* NumPy's accumulate dtype: bool and narrower integers widen to 64 bits. */
static nd_dtype scan_dtype(nd_dtype t) {
    if (t == ND_BOOL || t == ND_INT8 || t == ND_INT16 || t == ND_INT32) return ND_INT64;
    if (t == ND_UINT8 || t == ND_UINT16 || t == ND_UINT32) return ND_UINT64;
    return t;
}

static nd_array *scan(const char *fn, nd_lib_scan_op op, nd_array *a, int axis) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_array *x = NULL, *held[4] = {0};
    int n_held = 0, ax = 0;
    /* NumPy scans a 0-d array as its 1-element ravel (axis 0 or -1). */
    if (axis != ND_ALL_AXES && nd_fe_axis(fn, axis, a->ndim ? a->ndim : 1, &ax)) return NULL;
    if (axis == ND_ALL_AXES || a->ndim == 0) {
        x = held[n_held++] = nd_fe_flat(fn, a);
        if (!x) return NULL;
    } else {
        x = a;
    }
    /* The routine runs in the result dtype (float16 and bfloat16 too: it
     * rounds every step to the format, as NumPy). */
    nd_dtype cd = scan_dtype(a->dtype);
    nd_array *result = NULL;
    int n = x->ndim, to_last[ND_MAX_DIMS], back[ND_MAX_DIMS];
    for (int k = 0, j = 0; k < n; k++)
        if (k != ax) to_last[j++] = k;
    if (n) to_last[n - 1] = ax;
    for (int k = 0; k < n; k++) back[to_last[k]] = k;
    nd_array *moved = held[n_held++] = nd_fe_with_axes(x, n, to_last);
    if (!moved) goto done;
    /* The routine scans packed rows of its dtype: convert or pack first
     * (one copy, fused with whatever computes x). */
    if (moved->dtype != cd || !nd_array_is_contiguous(moved)) moved = held[n_held++] = nd_fe_astype(fn, moved, cd);
    if (!moved) goto done;
    nd_lib_args args = {{{.i = op}}};
    nd_kernel_output out = {NULL, cd, n, moved->shape};
    nd_array *scanned = NULL;
    if (nd_fe_lib_call(fn, ND_LIB_CUMULATE, &args, 1, &moved, 1, &out, &scanned) != ND_OK) goto done;
    held[n_held++] = scanned;
    result = nd_fe_with_axes(scanned, n, back);
done:
    for (int i = 0; i < n_held; i++)
        if (held[i] != a) nd_fe_release(held[i]);
    return result;
}

/* cumsum and nancumsum of a complex array: the scans of its parts (NumPy
 * adds the parts apart too), put together exactly; nancumsum first turns
 * a value with a NaN part into 0 (np.isnan of a complex). The products
 * (cumprod, nancumprod) mix the parts: the routine scans them in the
 * complex dtype with NumPy's textbook product (scan() below). */
static nd_array *complex_scan(const char *fn, nd_lib_scan_op op, nd_array *a, int axis) {
    nd_array *x = a, *part[2] = {NULL, NULL}, *sums[2] = {NULL, NULL}, *out = NULL;
    if (op == ND_SCAN_NANSUM) {
        nd_array *isn = nd_fe_unary(fn, ND_OP_ISNAN, a), *zero = isn ? nd_fe_scalar(0.0) : NULL;
        nd_array *in[3] = {isn, zero, a};
        nd_dtype consts[3] = {ND_BOOL, a->dtype, a->dtype};
        x = zero ? nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, a->dtype, a->dtype) : NULL;
        nd_fe_release(zero);
        nd_fe_release(isn);
        if (!x) return NULL;
    }
    nd_dtype pt = nd_dtype_part(a->dtype);
    for (int k = 0; k < 2; k++) {
        part[k] = nd_fe_map(fn, k ? ND_OP_IMAG : ND_OP_REAL, 1, &x, NULL, x->dtype, pt);
        if (part[k]) sums[k] = scan(fn, ND_SCAN_SUM, part[k], axis);
    }
    if (sums[0] && sums[1]) out = nd_fe_map(fn, ND_OP_MAKE_COMPLEX, 2, sums, NULL, a->dtype, a->dtype);
    for (int k = 0; k < 2; k++) {
        nd_fe_release(part[k]);
        nd_fe_release(sums[k]);
    }
    if (x != a) nd_fe_release(x);
    return out;
}

static nd_array *scan_any(const char *fn, nd_lib_scan_op op, nd_array *a, int axis) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_dtype_is_complex(a->dtype) && (op == ND_SCAN_SUM || op == ND_SCAN_NANSUM))
        return complex_scan(fn, op, a, axis);
    return scan(fn, op, a, axis);
}

nd_array *nd_cumsum(nd_array *a, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(scan_any("nd_cumsum", ND_SCAN_SUM, a, axis));
}

nd_array *nd_cumprod(nd_array *a, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(scan_any("nd_cumprod", ND_SCAN_PROD, a, axis));
}

nd_array *nd_nancumsum(nd_array *a, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(scan_any("nd_nancumsum", ND_SCAN_NANSUM, a, axis));
}

nd_array *nd_nancumprod(nd_array *a, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(scan_any("nd_nancumprod", ND_SCAN_NANPROD, a, axis));
}
