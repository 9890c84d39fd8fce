/* Boolean masks (include/nd/indexing.h): selection and the functions whose
 * result length is a count of nonzero elements (nonzero, flatnonzero,
 * argwhere, extract, compress) synchronise: they run the ND_LIB_SELECT or
 * ND_LIB_SELECT_INDEX routine, which writes the selection and its count in
 * one pass, read the count, and return the first count elements. Assigning
 * through a mask is a where and stays lazy. */
#include "frontend/indexing_internal.h"
#include "frontend/shaping_internal.h"

/* mask must be bool with the shape of a's leading axes (NumPy's rule for
 * a[mask]). */
static int check_mask(const char *fn, const nd_array *a, const nd_array *mask) {
    if (mask->dtype != ND_BOOL || mask->weak)
        return nd_error_set(ND_ERR_DTYPE, "%s: the mask must be a bool array, got %s%s (integer index arrays go to "
                            "nd_take or nd_index; compare to make a mask, e.g. nd_gt)", fn,
                            mask->weak ? "a weak scalar of " : "", nd_dtype_name(mask->dtype)), 1;
    if (mask->ndim > a->ndim) {
        char ms[200], as[200];
        nd_format_shape(ms, sizeof ms, mask->ndim, mask->shape);
        nd_format_shape(as, sizeof as, a->ndim, a->shape);
        return nd_error_set(ND_ERR_INDEX, "%s: a mask of shape %s has more axes than the array of shape %s", fn, ms,
                            as), 1;
    }
    for (int d = 0; d < mask->ndim; d++)
        if (mask->shape[d] != a->shape[d])
            return nd_error_set(ND_ERR_INDEX, "%s: the mask does not match the array along axis %d: the axis has size "
                                "%lld but the mask's has %lld", fn, d, (long long)a->shape[d],
                                (long long)mask->shape[d]), 1;
    return 0;
}

/* Runs SELECT (data != NULL) or SELECT_INDEX over the flat mask m (bool)
 * and returns the first count elements; synchronises. */
static nd_array *select_flat(const char *fn, nd_array *data, nd_array *m) {
    int64_t n = m->shape[0];
    nd_dtype t = data ? data->dtype : ND_INT64;
    nd_kernel_output outs[2] = {{NULL, t, 1, &n}, {NULL, ND_INT64, 0, &n}};
    nd_array *in[2] = {data, m}, *res[2] = {NULL, NULL};
    nd_status s = data ? nd_fe_lib_call(fn, ND_LIB_SELECT, NULL, 2, in, 2, outs, res)
                       : nd_fe_lib_call(fn, ND_LIB_SELECT_INDEX, NULL, 1, &m, 2, outs, res);
    if (s != ND_OK) return NULL;
    int64_t count = -1;
    nd_array *r = NULL;
    if (nd_to_host(res[1], &count, sizeof count) == ND_OK) {
        /* Less than half kept: a compact copy, so the full-length buffer
         * is freed once it is made. */
        nd_array *head = nd_fe_axis_slice(res[0], 0, 0, count, 1);
        r = head && count < n / 2 ? nd_fe_astype(fn, head, t) : head ? nd_retain(head) : NULL;
        nd_fe_release(head);
    }
    nd_fe_release(res[0]);
    nd_fe_release(res[1]);
    return r;
}

/* a flattened, as a bool mask (a != 0). */
static nd_array *flat_mask(const char *fn, nd_array *a) {
    nd_array *x = a->weak ? nd_fe_strong(fn, a) : nd_retain(a);
    nd_array *f = x ? nd_fe_flat(fn, x) : NULL;
    nd_fe_release(x);
    if (!f || f->dtype == ND_BOOL) return f;
    nd_array *b = nd_fe_astype(fn, f, ND_BOOL);
    nd_fe_release(f);
    return b;
}

nd_array *nd_fe_flatnonzero(const char *fn, nd_array *a) {
    nd_array *m = flat_mask(fn, a);
    nd_array *r = m ? select_flat(fn, NULL, m) : NULL;
    nd_fe_release(m);
    return r;
}

nd_array *nd_flatnonzero(nd_array *a) {
    ND_API_GUARD();
    const char *fn = "nd_flatnonzero";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_flatnonzero(fn, a));
}

/* The multi-index columns of flat positions `flat` into shape. */
static nd_status unravel(const char *fn, nd_array *flat, int ndim, const int64_t *shape, nd_array **out) {
    int64_t stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        nd_array *q = NULL, *s = NULL, *len = NULL;
        if (d == 0) {
            s = nd_fe_full(fn, ND_INT64, 0, NULL, (nd_scalar_bits){.i = stride});
            out[d] = s ? (stride == 1 ? nd_retain(flat) : nd_fe_binary(fn, ND_OP_FLOOR_DIVIDE, flat, s)) : NULL;
        } else {
            s = nd_fe_full(fn, ND_INT64, 0, NULL, (nd_scalar_bits){.i = stride});
            len = nd_fe_full(fn, ND_INT64, 0, NULL, (nd_scalar_bits){.i = shape[d] ? shape[d] : 1});
            q = s && len ? (stride == 1 ? nd_retain(flat) : nd_fe_binary(fn, ND_OP_FLOOR_DIVIDE, flat, s)) : NULL;
            out[d] = q ? nd_fe_binary(fn, ND_OP_REMAINDER, q, len) : NULL;
        }
        nd_fe_release(q);
        nd_fe_release(s);
        nd_fe_release(len);
        if (!out[d]) {
            for (int e = d + 1; e < ndim; e++) nd_fe_release(out[e]);
            return nd_last_status();
        }
        stride *= shape[d];
    }
    return ND_OK;
}

nd_status nd_nonzero(nd_array *a, nd_array **out) {
    ND_API_GUARD();
    const char *fn = "nd_nonzero";
    if (nd_fe_arg(fn, "a", a)) return nd_last_status();
    if (!out) return nd_error_set(ND_ERR_ARG, "%s: out is NULL (pass room for nd_ndim(a) arrays)", fn);
    nd_status s = nd_runtime_ensure();
    if (s != ND_OK) return s;
    if (a->ndim == 0)
        return nd_error_set(ND_ERR_ARG, "%s: a 0-d array has no nonzero indices (as NumPy 2); nd_reshape it to 1-d "
                            "first", fn);
    int ndim = a->ndim;
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    nd_array *flat = nd_fe_flatnonzero(fn, a), *cols[ND_MAX_DIMS];
    if (!flat) return nd_last_status();
    s = unravel(fn, flat, ndim, shape, cols);
    nd_fe_release(flat);
    if (s != ND_OK) return s;
    for (int d = 0; d < ndim; d++) out[d] = nd_runtime_track(cols[d]);
    return ND_OK;
}

nd_array *nd_argwhere(nd_array *a) {
    ND_API_GUARD();
    const char *fn = "nd_argwhere";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_array *flat = nd_fe_flatnonzero(fn, a);
    if (!flat) return NULL;
    int ndim = a->ndim;
    if (ndim == 0) {
        /* NumPy: (1, 0) for a nonzero scalar, (0, 0) for zero. */
        int64_t sh[2] = {flat->shape[0], 0};
        nd_fe_release(flat);
        return nd_runtime_track(nd_fe_empty(fn, ND_INT64, 2, sh));
    }
    nd_array *cols[ND_MAX_DIMS], *r = NULL;
    if (unravel(fn, flat, ndim, a->shape, cols) == ND_OK) {
        nd_array *col2[ND_MAX_DIMS];
        int made = 0;
        int map[2] = {0, -1};
        for (; made < ndim; made++)
            if (!(col2[made] = nd_fe_with_axes(cols[made], 2, map))) break;
        if (made == ndim) r = nd_fe_concatenate(fn, ndim, col2, 1);
        for (int d = 0; d < made; d++) nd_fe_release(col2[d]);
        for (int d = 0; d < ndim; d++) nd_fe_release(cols[d]);
    }
    nd_fe_release(flat);
    return nd_runtime_track(r);
}

nd_array *nd_extract(nd_array *condition, nd_array *a) {
    ND_API_GUARD();
    const char *fn = "nd_extract";
    if (nd_fe_arg(fn, "condition", condition) || nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_array *idx = nd_fe_flatnonzero(fn, condition);
    nd_array *r = idx ? nd_fe_take(fn, ND_INDEX_FN_EXTRACT, a, idx, ND_ALL_AXES) : NULL;
    nd_fe_release(idx);
    return nd_runtime_track(r);
}

nd_array *nd_compress(nd_array *condition, nd_array *a, int axis) {
    ND_API_GUARD();
    const char *fn = "nd_compress";
    if (nd_fe_arg(fn, "condition", condition) || nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (condition->ndim != 1) {
        nd_error_set(ND_ERR_SHAPE, "%s: the condition must be 1-d, got %d-d", fn, condition->ndim);
        return NULL;
    }
    int ax;
    if (axis != ND_ALL_AXES && nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
    (void)ax; /* checked here, before synchronising; nd_fe_take uses axis */
    nd_array *idx = nd_fe_flatnonzero(fn, condition);
    nd_array *r = idx ? nd_fe_take(fn, ND_INDEX_FN_COMPRESS, a, idx, axis) : NULL;
    nd_fe_release(idx);
    return nd_runtime_track(r);
}

nd_array *nd_mask_select(nd_array *a, nd_array *mask) {
    ND_API_GUARD();
    const char *fn = "nd_mask_select";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "mask", mask) || nd_runtime_ensure() != ND_OK) return NULL;
    if (check_mask(fn, a, mask)) return NULL;
    nd_array *x = a->weak ? nd_fe_strong(fn, a) : nd_retain(a), *r = NULL;
    if (!x) return NULL;
    if (mask->ndim == 0) {
        /* a[True] is a[None], a[False] an empty a[None] (NumPy). */
        bool keep = false;
        if (nd_to_host(mask, &keep, sizeof keep) == ND_OK) {
            int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
            sh[0] = keep ? 1 : 0;
            st[0] = 0;
            for (int d = 0; d < x->ndim; d++) sh[d + 1] = x->shape[d], st[d + 1] = x->strides[d];
            r = nd_fe_view(x, x->ndim + 1, sh, st, x->offset);
        }
    } else if (mask->ndim == x->ndim) {
        nd_array *flat = nd_fe_flat(fn, x), *m = flat ? nd_fe_flat(fn, mask) : NULL;
        r = m ? select_flat(fn, flat, m) : NULL;
        nd_fe_release(flat);
        nd_fe_release(m);
    } else {
        /* The mask picks rows of a's leading axes: their flat positions
         * index a seen as (rows, rest...). */
        int64_t sh[ND_MAX_DIMS], rows = 1;
        int k = mask->ndim, n = x->ndim - k + 1;
        for (int d = 0; d < k; d++) rows *= x->shape[d];
        sh[0] = rows;
        for (int d = k; d < x->ndim; d++) sh[d - k + 1] = x->shape[d];
        nd_array *rowed = nd_fe_reshape(fn, x, n, sh), *idx = rowed ? nd_fe_flatnonzero(fn, mask) : NULL;
        r = idx ? nd_fe_take(fn, ND_INDEX_FN_MASK_SELECT, rowed, idx, 0) : NULL;
        nd_fe_release(rowed);
        nd_fe_release(idx);
    }
    nd_fe_release(x);
    return nd_runtime_track(r);
}

nd_status nd_mask_assign(nd_array *a, nd_array *mask, nd_array *values) {
    ND_API_GUARD();
    const char *fn = "nd_mask_assign";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "mask", mask) || nd_fe_arg(fn, "values", values))
        return nd_last_status();
    nd_status s = nd_runtime_ensure();
    if (s == ND_OK) s = nd_fe_check_dst(fn, a);
    if (s != ND_OK) return s;
    if (check_mask(fn, a, mask)) return nd_last_status();
    int rest = a->ndim - mask->ndim;
    for (int d = 0; d < values->ndim; d++) {
        int e = a->ndim - values->ndim + d;
        if (values->ndim > rest || (values->shape[d] != 1 && values->shape[d] != a->shape[e])) {
            char vs[200], rs[200];
            nd_format_shape(vs, sizeof vs, values->ndim, values->shape);
            nd_format_shape(rs, sizeof rs, rest, a->shape + mask->ndim);
            return nd_error_set(ND_ERR_SHAPE, "%s: values of shape %s must broadcast to the shape %s of one selected "
                                "element (a scalar for a full-shape mask); to write one value per selected element, "
                                "nd_put them at nd_flatnonzero(mask)", fn, vs, rs);
        }
    }
    /* a = where(mask, values, a): the mask seen over a's trailing axes. */
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        sh[d] = a->shape[d];
        st[d] = d < mask->ndim ? mask->strides[d] : 0;
    }
    nd_array *m = nd_fe_view(mask, a->ndim, sh, st, mask->offset);
    if (!m) return nd_last_status();
    nd_array *in[3] = {m, values, a};
    nd_dtype consts[3] = {ND_BOOL, a->dtype, a->dtype};
    nd_array *w = nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, a->dtype, a->dtype);
    nd_fe_release(m);
    if (!w) return nd_last_status();
    s = nd_fe_store(fn, a, w);
    nd_fe_release(w);
    return s;
}
