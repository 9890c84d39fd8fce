/* Writes into existing arrays: one STORE node into the region a view
 * covers, making a new version of its buffer. */
#include "common/callsite.h"
#include "frontend/frontend.h"
#include "frontend/interop.h"

nd_status nd_fe_check_dst(const char *fn, const nd_array *dst) {
    if (dst->weak || dst->readonly == ND_READONLY_WEAK)
        return nd_error_set(ND_ERR_ARG, "%s: dst is %s, which is read-only (ops use the "
                            "scalar's value, so a write could not reach them); make a writable "
                            "0-d array with nd_full, or nd_copy the scalar", fn,
                            dst->weak ? "a weak scalar from nd_scalar/nd_scalar_int"
                                      : "a view of a weak scalar from nd_scalar/nd_scalar_int");
    nd_status st = nd_fe_data_check_write(fn, dst->buf);
    if (st != ND_OK) return st;
    if (dst->readonly == ND_READONLY_IMPORTED)
        return nd_error_set(ND_ERR_ARG, "%s: dst is a read-only DLPack import (its producer set "
                            "DLPACK_FLAG_BITMASK_READ_ONLY); nd_copy it and write to the copy", fn);
    if (dst->readonly == ND_READONLY_IMAG_OF_REAL)
        return nd_error_set(ND_ERR_ARG, "%s: dst is nd_imag of a real array, read-only zeros that belong to no "
                            "array (as NumPy's); make the array complex (nd_astype) and write into its nd_imag", fn);
    if (dst->readonly)
        return nd_error_set(ND_ERR_ARG, "%s: dst is a read-only broadcast view (its elements "
                            "alias); write to the array it was broadcast from, or nd_copy it", fn);
    return ND_OK;
}

/* src == NULL: store the constant `value` (already in dst's dtype kind). */
static nd_status record_store(const char *fn, nd_array *dst, const nd_array *src,
                              const int64_t *src_strides, nd_scalar_bits value) {
    if (nd_shape_size(dst->ndim, dst->shape) == 0) return ND_OK;
    nd_runtime_before_record();
    nd_node *n = nd_graph_add_node(&nd_rt.graph, ND_NODE_STORE, 1, 0);
    if (!n)
        return nd_error_set(ND_ERR_OOM, "%s: out of host memory recording the store (free arrays you no "
                            "longer need)", fn);
    n->dtype = (uint8_t)dst->dtype;
    n->cdtype = (uint8_t)dst->dtype;
    n->ndim = dst->ndim;
    n->label = nd_site_label(fn);
    n->u.store.offset = dst->offset;
    for (int k = 0; k < dst->ndim; k++) {
        n->shape[k] = dst->shape[k];
        n->u.store.strides[k] = dst->strides[k];
    }
    /* Inputs before the output: the store reads the version before itself. */
    if (!src) {
        nd_graph_set_const_input(n, 0, dst->dtype, value, dst->ndim, dst->shape);
    } else if (src->weak) {
        nd_graph_set_const_input(n, 0, dst->dtype, nd_fe_weak_bits(src, dst->dtype), dst->ndim,
                                 dst->shape);
        n->inputs[0].weak = 1;
    } else {
        nd_graph_set_input(n, 0, src, dst->ndim, dst->shape, src_strides);
    }
    if (nd_graph_set_output(&nd_rt.graph, n, dst->buf))
        return nd_error_set(ND_ERR_OOM, "%s: out of host memory recording the store (free arrays you no "
                            "longer need)", fn);
    nd_runtime_after_record();
    return ND_OK;
}

nd_status nd_fe_store(const char *fn, nd_array *dst, nd_array *src) {
    nd_status st = nd_fe_check_dst(fn, dst);
    if (st != ND_OK) return st;
    if (src->weak && (st = nd_fe_weak_fits(fn, src, dst->dtype)) != ND_OK) return st;
    /* NumPy setitem: src may have extra leading length-1 dimensions. */
    int extra = src->ndim - dst->ndim, ok = 1;
    for (int j = 0; j < extra; j++)
        if (src->shape[j] != 1) ok = 0;
    int64_t strides[ND_MAX_DIMS] = {0};
    for (int k = 0; ok && k < dst->ndim; k++) {
        int j = k + extra;
        if (j < 0) continue; /* missing leading dim: broadcast */
        int64_t d = src->shape[j];
        if (d == dst->shape[k]) strides[k] = d == 1 ? 0 : src->strides[j];
        else if (d == 1) strides[k] = 0;
        else ok = 0;
    }
    if (!ok) {
        char s1[200], s2[200];
        return nd_error_set(ND_ERR_SHAPE, "%s: could not broadcast src of shape %s into dst of "
                            "shape %s (each src dimension must match or be 1)", fn,
                            nd_format_shape(s1, sizeof s1, src->ndim, src->shape),
                            nd_format_shape(s2, sizeof s2, dst->ndim, dst->shape));
    }
    nd_scalar_bits none = {0};
    return record_store(fn, dst, src, strides, none);
}

nd_status nd_assign(nd_array *dst, nd_array *src) {
    ND_API_GUARD();
    static const char fn[] = "nd_assign";
    if (nd_fe_arg(fn, "dst", dst) || nd_fe_arg(fn, "src", src)) return nd_last_status();
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    return nd_fe_store(fn, dst, src);
}

nd_status nd_fill(nd_array *dst, double value) {
    ND_API_GUARD();
    static const char fn[] = "nd_fill";
    if (nd_fe_arg(fn, "dst", dst)) return nd_last_status();
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    st = nd_fe_check_dst(fn, dst);
    if (st != ND_OK) return st;
    /* As NumPy's a.fill(v): an integer array takes int(v) only if it fits. */
    st = nd_fe_value_fits(fn, "value", value, dst->dtype);
    if (st != ND_OK) return st;
    return record_store(fn, dst, NULL, NULL, nd_fe_double_bits(value, dst->dtype));
}
