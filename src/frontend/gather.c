/* Gather and scatter through integer index arrays (frontend/indexing_internal.h):
 * the geometry that every indexing function reduces to, and the recording
 * of the ND_LIB_GATHER / ND_LIB_SCATTER routines over it. Index arrays are
 * never materialised in the iteration space: the views carry stride 0
 * along the axes they do not vary over, so a[idx] over a broadcast index
 * reads each index once per output element and nothing more. */
#include "frontend/indexing_internal.h"
#include "frontend/shaping_internal.h"

void nd_fe_geom_release(nd_fe_gather_geom *g) {
    for (int i = 0; i < g->n_held; i++) nd_fe_release(g->held[i]);
    g->n_held = 0;
    g->ind = g->idx = NULL;
}

nd_array *nd_fe_index_array(const char *fn, nd_array *indices) {
    if (nd_fe_arg(fn, "indices", indices)) return NULL;
    nd_array *x = indices->weak ? nd_fe_strong(fn, indices) : nd_retain(indices);
    if (!x) return NULL;
    if (!nd_dtype_is_int(x->dtype)) {
        nd_status st = nd_error_set(ND_ERR_DTYPE, "%s: index arrays must be of an integer dtype, got %s (a bool mask "
                                    "selects with nd_mask_select; convert float indices with nd_astype)",
                                    fn, nd_dtype_name(x->dtype));
        (void)st;
        nd_fe_release(x);
        return NULL;
    }
    if (x->dtype == ND_INT64) return x;
    nd_array *y = nd_fe_astype(fn, x, ND_INT64);
    nd_fe_release(x);
    return y;
}

/* The index view of the geometry: idx64[k] broadcast to (bnd, bshape),
 * placed at axes pos.. of the n-axis iteration space, with a last axis of
 * length K (a stack of the K arrays: one copy when K > 1). */
static int index_view(const char *fn, nd_fe_gather_geom *g, int K, nd_array *const *idx64, int bnd,
                      const int64_t *bshape, int pos) {
    nd_array *base;
    int64_t bst[ND_MAX_DIMS + 1], last = 0;
    if (K == 1) {
        base = idx64[0];
        nd_fe_broadcast_strides(base, bnd, bshape, bst);
    } else {
        nd_array *cols[ND_MAX_DIMS];
        int made = 0;
        int64_t sh[ND_MAX_DIMS + 1];
        for (int k = 0; k < bnd; k++) sh[k] = bshape[k];
        sh[bnd] = 1;
        for (; made < K; made++) {
            int64_t st[ND_MAX_DIMS + 1];
            nd_fe_broadcast_strides(idx64[made], bnd, bshape, st);
            st[bnd] = 0;
            cols[made] = nd_fe_view(idx64[made], bnd + 1, sh, st, idx64[made]->offset);
            if (!cols[made]) break;
        }
        base = made == K ? nd_fe_concatenate(fn, K, cols, bnd) : NULL;
        for (int k = 0; k < made; k++) nd_fe_release(cols[k]);
        if (!base) return 1;
        g->held[g->n_held++] = base;
        for (int k = 0; k < bnd; k++) bst[k] = base->strides[k];
        last = base->strides[bnd];
    }
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    for (int d = 0; d < g->n; d++) {
        sh[d] = g->shape[d];
        st[d] = d >= pos && d < pos + bnd ? bst[d - pos] : 0;
    }
    sh[g->n] = K;
    st[g->n] = last;
    g->idx = g->held[g->n_held++] = nd_fe_view(base, g->n + 1, sh, st, base->offset);
    return g->idx == NULL;
}

int nd_fe_adv_geom(const char *fn, nd_array *a, const nd_fe_adv_index *adv, nd_fe_gather_geom *g) {
    memset(g, 0, sizeof *g);
    int K = adv->K, used[ND_MAX_DIMS] = {0};
    nd_array *idx64[ND_MAX_DIMS];
    g->K = K;
    for (int k = 0; k < K; k++) {
        int ax = adv->axes[k];
        if (ax < 0 || ax >= a->ndim || used[ax])
            return nd_error_set(ND_ERR_STATE, "%s: bad indexed axis %d (an nd bug)", fn, ax), 1;
        used[ax] = 1;
        g->axes |= (int64_t)ax << (4 * k);
        idx64[k] = g->held[g->n_held++] = nd_fe_index_array(fn, adv->idx[k]);
        if (!idx64[k]) return nd_fe_geom_release(g), 1;
    }
    int bnd;
    int64_t bshape[ND_MAX_DIMS];
    if (nd_fe_broadcast(fn, K, idx64, &bnd, bshape)) return nd_fe_geom_release(g), 1;
    int nrem = a->ndim - K, n = nrem + bnd;
    if (n + K > ND_MAX_DIMS) {
        char s[200];
        nd_format_shape(s, sizeof s, a->ndim, a->shape);
        nd_fe_geom_release(g);
        return nd_error_set(ND_ERR_SHAPE, "%s: indexing an array of shape %s with %d-d index arrays needs %d axes (nd "
                            "arrays have at most %d); index fewer axes at once", fn, s, bnd, n + K, ND_MAX_DIMS), 1;
    }
    g->n = n;
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    int d = 0, pos = adv->pos, placed = 0;
    for (int ax = 0, r = 0; ax <= a->ndim; ax++) {
        if (ax < a->ndim && used[ax]) continue;
        if (r == pos && !placed) {
            for (int b = 0; b < bnd; b++, d++) sh[d] = bshape[b], st[d] = 0;
            placed = 1;
        }
        if (ax == a->ndim) break;
        sh[d] = a->shape[ax];
        st[d++] = a->strides[ax];
        r++;
    }
    for (int k = 0; k < n; k++) g->shape[k] = sh[k];
    for (int k = 0; k < K; k++) {
        sh[n + k] = a->shape[adv->axes[k]];
        st[n + k] = a->strides[adv->axes[k]];
    }
    g->ind = g->held[g->n_held++] = nd_fe_view(a, n + K, sh, st, a->offset);
    if (!g->ind || index_view(fn, g, K, idx64, bnd, bshape, pos)) return nd_fe_geom_release(g), 1;
    return 0;
}

/* One index array: a MAP node (graph/node.h's ND_GATHER_MAP_OP) that the
 * scheduler fuses like any map, so that a gather feeding elementwise work
 * is one kernel (backends/kernel_ir.h's ND_IR_GATHER). */
static nd_array *fused_gather(const char *fn, int fn_flags, const nd_fe_gather_geom *g) {
    int n = g->n;
    nd_dtype t = g->ind->dtype;
    size_t nbytes;
    if (nd_fe_nbytes(fn, n, g->shape, t, &nbytes)) return NULL;
    nd_fe_rec r;
    if (nd_fe_begin(&r, fn, ND_NODE_MAP, ND_GATHER_MAP_OP, 2, t, t, n, g->shape, nbytes)) return NULL;
    nd_graph_set_input(r.node, 0, g->idx, n, g->shape, g->idx->strides);
    nd_graph_set_input(r.node, 1, g->ind, n, g->shape, g->ind->strides);
    r.node->u.gather.stride = g->ind->strides[n];
    r.node->u.gather.size = g->ind->shape[n];
    r.node->u.gather.axes = g->axes;
    r.node->u.gather.fn = fn_flags;
    return nd_fe_end(&r, n, g->shape);
}

/* The one place that chooses: one index array gathers in the generated
 * kernels where the backend's kernels gather; several (stacked on the
 * index view's last axis) go through the ND_LIB_GATHER routine, and so does
 * every gather under ND_FUSED_GATHER=0. */
nd_array *nd_fe_gather(const char *fn, int fn_flags, nd_fe_gather_geom *g) {
    if (g->K == 1 && !g->ind->weak && !g->idx->weak && nd_rt.fused_gather)
        return fused_gather(fn, fn_flags, g);
    nd_lib_args args = {{{.i = g->K}, {.i = fn_flags}, {.i = g->axes}, {.i = 0}}};
    nd_array *in[2] = {g->ind, g->idx}, *out = NULL;
    nd_kernel_output o = {NULL, g->ind->dtype, g->n, g->shape};
    if (nd_fe_lib_call(fn, ND_LIB_GATHER, &args, 2, in, 1, &o, &out) != ND_OK) return NULL;
    return out;
}

nd_status nd_fe_scatter(const char *fn, int fn_flags, int mode, nd_fe_gather_geom *g, nd_array *values) {
    nd_dtype t = g->ind->dtype;
    for (int d = 0; d < values->ndim; d++) {
        int e = g->n - values->ndim + d;
        if (values->ndim > g->n || (values->shape[d] != 1 && values->shape[d] != g->shape[e])) {
            char vs[200], is[200];
            nd_format_shape(vs, sizeof vs, values->ndim, values->shape);
            nd_format_shape(is, sizeof is, g->n, g->shape);
            return nd_error_set(ND_ERR_SHAPE, "%s: values of shape %s cannot be broadcast to the indexed shape %s", fn,
                                vs, is);
        }
    }
    nd_array *v = values->dtype == t && !values->weak ? nd_retain(values) : nd_fe_astype(fn, values, t);
    if (!v) return nd_last_status();
    int64_t st[ND_MAX_DIMS];
    nd_fe_broadcast_strides(v, g->n, g->shape, st);
    nd_array *vb = nd_fe_view(v, g->n, g->shape, st, v->offset);
    nd_fe_release(v);
    if (!vb) return nd_last_status();
    nd_lib_args args = {{{.i = g->K}, {.i = fn_flags}, {.i = g->axes}, {.i = mode}}};
    nd_array *in[2] = {g->idx, vb};
    nd_kernel_output o = {g->ind, t, g->ind->ndim, g->ind->shape};
    nd_array *none = NULL;
    nd_status s = nd_fe_lib_call(fn, ND_LIB_SCATTER, &args, 2, in, 1, &o, &none);
    nd_fe_release(vb);
    return s;
}

nd_array *nd_fe_take(const char *fn, int fn_id, nd_array *a, nd_array *indices, int axis) {
    nd_array *x = a->weak ? nd_fe_strong(fn, a) : nd_retain(a), *flat = NULL;
    if (!x) return NULL;
    int ax = 0;
    if (axis == ND_ALL_AXES) {
        flat = nd_fe_flat(fn, x);
        nd_fe_release(x);
        if (!(x = flat)) return NULL;
    } else if (nd_fe_axis(fn, axis, x->ndim, &ax)) {
        nd_fe_release(x);
        return NULL;
    }
    nd_fe_adv_index adv = {1, ax, {ax}, {indices}};
    nd_fe_gather_geom g;
    nd_array *r = nd_fe_adv_geom(fn, x, &adv, &g) ? NULL : nd_fe_gather(fn, fn_id, &g);
    nd_fe_geom_release(&g);
    nd_fe_release(x);
    return r;
}
