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

/* The index views of the geometry: idx64[k] broadcast to (bnd, bshape),
 * placed at axes pos.. of the n-axis iteration space. One array: idx, with
 * a last axis of length 1. Several: each as ix[k] over the n axes (a view),
 * and idx (a stack of the K arrays: one copy) only when asked for
 * (nd_fe_geom_stack). */
static int index_view(nd_fe_gather_geom *g, int K, nd_array *const *idx64, int bnd, const int64_t *bshape,
                      int pos) {
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    g->bnd = bnd;
    g->pos = pos;
    for (int k = 0; k < bnd; k++) g->bshape[k] = bshape[k];
    for (int k = 0; k < K; k++) {
        int64_t bst[ND_MAX_DIMS + 1];
        g->idx64[k] = idx64[k];
        nd_fe_broadcast_strides(idx64[k], bnd, bshape, bst);
        for (int d = 0; d < g->n; d++) {
            sh[d] = g->shape[d];
            st[d] = d >= pos && d < pos + bnd ? bst[d - pos] : 0;
        }
        if (K == 1) {
            sh[g->n] = 1;
            st[g->n] = 0;
            g->idx = g->held[g->n_held++] = nd_fe_view(idx64[0], g->n + 1, sh, st, idx64[0]->offset);
            return g->idx == NULL;
        }
        g->ix[k] = g->held[g->n_held++] = nd_fe_view(idx64[k], g->n, sh, st, idx64[k]->offset);
        if (!g->ix[k]) return 1;
    }
    return 0;
}

int nd_fe_geom_stack(const char *fn, nd_fe_gather_geom *g) {
    if (g->idx) return 0;
    int K = g->K, bnd = g->bnd, made = 0;
    nd_array *cols[ND_MAX_DIMS] = {0};
    int64_t sh[ND_MAX_DIMS + 1], st[ND_MAX_DIMS + 1];
    for (int k = 0; k < bnd; k++) sh[k] = g->bshape[k];
    sh[bnd] = 1;
    for (; made < K; made++) {
        nd_fe_broadcast_strides(g->idx64[made], bnd, g->bshape, st);
        st[bnd] = 0;
        cols[made] = nd_fe_view(g->idx64[made], bnd + 1, sh, st, g->idx64[made]->offset);
        if (!cols[made]) break;
    }
    nd_array *base = made == K ? nd_fe_concatenate(fn, K, cols, bnd) : NULL;
    for (int k = 0; k < made; k++) nd_fe_release(cols[k]);
    if (!base) return 1;
    g->held[g->n_held++] = base;
    for (int d = 0; d < g->n; d++) {
        sh[d] = g->shape[d];
        st[d] = d >= g->pos && d < g->pos + bnd ? base->strides[d - g->pos] : 0;
    }
    sh[g->n] = K;
    st[g->n] = base->strides[bnd];
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
    if (!g->ind || index_view(g, K, idx64, bnd, bshape, pos)) return nd_fe_geom_release(g), 1;
    return 0;
}

/* Any number of index arrays: a MAP node (graph/node.h's
 * ND_GATHER_MAP_OP) that the scheduler fuses like any map, so that a
 * gather feeding elementwise work is one kernel (backends/kernel_ir.h's
 * ND_IR_GATHER). Each index array is read through its own broadcast view:
 * nothing is stacked or copied. */
static nd_array *fused_gather(const char *fn, int fn_flags, const nd_fe_gather_geom *g) {
    int n = g->n, K = g->K;
    nd_dtype t = g->ind->dtype;
    size_t nbytes;
    if (nd_fe_nbytes(fn, n, g->shape, t, &nbytes)) return NULL;
    nd_fe_rec r;
    if (nd_fe_begin(&r, fn, ND_NODE_MAP, ND_GATHER_MAP_OP, K + 1, t, t, n, g->shape, nbytes)) return NULL;
    for (int k = 0; k < K; k++) {
        const nd_array *x = K == 1 ? g->idx : g->ix[k];
        nd_graph_set_input(r.node, k, x, n, g->shape, x->strides);
    }
    nd_graph_set_input(r.node, K, g->ind, n, g->shape, g->ind->strides);
    int64_t *axes = nd_node_gather_axes(r.node); /* the node's tail (nd_fe_begin sized it) */
    for (int k = 0; k < K; k++) {
        axes[k] = g->ind->strides[n + k];
        axes[K + k] = g->ind->shape[n + k];
    }
    r.node->u.gather.axes = g->axes;
    r.node->u.gather.fn = fn_flags;
    r.node->u.gather.n_axes = K;
    return nd_fe_end(&r, n, g->shape);
}

/* The one place that chooses: gathers run in the generated kernels where
 * the backend's kernels gather, whatever the number of index arrays (at
 * most ND_MAX_DIMS: one an indexed axis; kernel_ir.h's ND_IR_GATHER takes
 * that many); a weak source or index, and every gather under
 * ND_FUSED_GATHER=0, go through the ND_LIB_GATHER routine (the index
 * arrays stacked on the index view's last axis). */
nd_array *nd_fe_gather(const char *fn, int fn_flags, nd_fe_gather_geom *g) {
    int weak = g->ind->weak || (g->K == 1 && g->idx->weak);
    for (int k = 0; g->K > 1 && k < g->K; k++) weak |= g->ix[k]->weak;
    if (!weak && nd_rt.fused_gather) return fused_gather(fn, fn_flags, g);
    if (nd_fe_geom_stack(fn, g)) return NULL;
    nd_lib_args args = {{{.i = g->K}, {.i = fn_flags}, {.i = g->axes}, {.i = 0}}};
    nd_array *in[2] = {g->ind, g->idx}, *out = NULL;
    nd_kernel_output o = {NULL, g->ind->dtype, g->n, g->shape};
    if (nd_fe_lib_call(fn, ND_LIB_GATHER, &args, 2, in, 1, &o, &out) != ND_OK) return NULL;
    return out;
}

nd_status nd_fe_scatter(const char *fn, int fn_flags, int mode, nd_fe_gather_geom *g, nd_array *values) {
    nd_dtype t = g->ind->dtype;
    if (nd_fe_geom_stack(fn, g)) return nd_last_status();
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
