/* Integer-array gathers and scatters along one axis (include/nd/indexing.h):
 * take, take_along_axis, choose, put, put_along_axis, add_at. Each builds
 * a geometry (frontend/gather.c) and records one ND_LIB_GATHER or
 * ND_LIB_SCATTER call; all stay lazy. */
#include "frontend/indexing_internal.h"
#include "frontend/shaping_internal.h"

/* NumPy's limit on choose's choices. */
#define MAX_CHOICES 32

/* ------------------------------------------------------ along an axis */

/* a[..., indices[...], ...] with indices of a's rank broadcast against a
 * on the other axes (NumPy's take_along_axis / put_along_axis). `*a` may
 * be replaced by its flattened self (ND_ALL_AXES; held in g). */
static int along_geom(const char *fn, nd_array *a, nd_array *indices, int axis, nd_fe_gather_geom *g) {
    memset(g, 0, sizeof *g);
    g->K = 1;
    int ax = 0;
    if (axis == ND_ALL_AXES) {
        if (!(a = g->held[g->n_held++] = nd_fe_flat(fn, a))) return nd_fe_geom_release(g), 1;
    } else if (nd_fe_axis(fn, axis, a->ndim, &ax)) {
        return 1;
    }
    nd_array *idx = g->held[g->n_held++] = nd_fe_index_array(fn, indices);
    if (!idx) return nd_fe_geom_release(g), 1;
    char as[200], is[200];
    nd_format_shape(as, sizeof as, a->ndim, a->shape);
    nd_format_shape(is, sizeof is, idx->ndim, idx->shape);
    if (idx->ndim != a->ndim) {
        nd_fe_geom_release(g);
        return nd_error_set(ND_ERR_SHAPE, "%s: indices of shape %s must have as many axes as the array of shape %s%s",
                            fn, is, as, axis == ND_ALL_AXES ? " flattened (1)" : ""), 1;
    }
    int n = a->ndim;
    if (n + 1 > ND_MAX_DIMS) {
        nd_fe_geom_release(g);
        return nd_error_set(ND_ERR_SHAPE, "%s: a %d-d array is one axis too many for this routine (at most %d)", fn, n,
                            ND_MAX_DIMS - 1), 1;
    }
    int64_t ish[ND_MAX_DIMS], ist[ND_MAX_DIMS], xsh[ND_MAX_DIMS], xst[ND_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        int64_t s = d == ax ? idx->shape[d] : a->shape[d] == 1 ? idx->shape[d] : a->shape[d];
        if (d != ax && idx->shape[d] != 1 && idx->shape[d] != s) {
            nd_fe_geom_release(g);
            return nd_error_set(ND_ERR_SHAPE, "%s: indices of shape %s do not broadcast against the array of shape %s "
                                "(axis %d: %lld and %lld)", fn, is, as, d, (long long)idx->shape[d],
                                (long long)a->shape[d]), 1;
        }
        g->shape[d] = xsh[d] = ish[d] = s;
        xst[d] = d == ax || (a->shape[d] == 1 && s != 1) ? 0 : a->strides[d];
        ist[d] = idx->shape[d] == 1 && s != 1 ? 0 : idx->strides[d];
    }
    xsh[n] = a->shape[ax];
    xst[n] = a->strides[ax];
    ish[n] = 1;
    ist[n] = 0;
    g->n = n;
    g->axes = ax;
    g->ind = g->held[g->n_held++] = nd_fe_view(a, n + 1, xsh, xst, a->offset);
    g->idx = g->ind ? (g->held[g->n_held++] = nd_fe_view(idx, n + 1, ish, ist, idx->offset)) : NULL;
    if (!g->idx) return nd_fe_geom_release(g), 1;
    return 0;
}

nd_array *nd_take(nd_array *a, nd_array *indices, int axis) {
    ND_API_GUARD();
    const char *fn = "nd_take";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "indices", indices) || nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_take(fn, ND_INDEX_FN_TAKE, a, indices, axis));
}

nd_array *nd_take_along_axis(nd_array *a, nd_array *indices, int axis) {
    ND_API_GUARD();
    const char *fn = "nd_take_along_axis";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "indices", indices) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_fe_gather_geom g;
    if (along_geom(fn, a, indices, axis, &g)) return NULL;
    nd_array *r = nd_fe_gather(fn, ND_INDEX_FN_TAKE_ALONG_AXIS, &g);
    nd_fe_geom_release(&g);
    return nd_runtime_track(r);
}

nd_status nd_put_along_axis(nd_array *a, nd_array *indices, nd_array *values, int axis) {
    ND_API_GUARD();
    const char *fn = "nd_put_along_axis";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "indices", indices) || nd_fe_arg(fn, "values", values))
        return nd_last_status();
    nd_status s = nd_runtime_ensure();
    if (s == ND_OK) s = nd_fe_check_dst(fn, a);
    if (s != ND_OK) return s;
    if (axis == ND_ALL_AXES && !nd_array_is_contiguous(a))
        return nd_error_set(ND_ERR_ARG, "%s: with ND_ALL_AXES the array must be C-contiguous (its flattened view is "
                            "written); pass an axis or write into a contiguous array", fn);
    nd_fe_gather_geom g;
    if (along_geom(fn, a, indices, axis, &g)) return nd_last_status();
    s = nd_fe_scatter(fn, ND_INDEX_FN_PUT_ALONG_AXIS, ND_SCATTER_ASSIGN, &g, values);
    nd_fe_geom_release(&g);
    return s;
}

/* ---------------------------------------------------------------- put */

/* values flattened and repeated or cut to m elements (np.put's rule). */
static nd_array *cycled(const char *fn, nd_array *values, int64_t m) {
    nd_array *v = nd_fe_flat(fn, values);
    if (!v || v->shape[0] == m || v->shape[0] == 1) return v;
    nd_array *r = NULL;
    if (v->shape[0] > m) {
        r = nd_fe_axis_slice(v, 0, 0, m, 1);
    } else {
        /* Fewer values than indices: v[arange(m) % len(v)]. */
        nd_array *pos = nd_fe_arange(fn, ND_INT64, 0, 1, m), *len = nd_fe_full(fn, ND_INT64, 0, NULL,
                                                                                   (nd_scalar_bits){.i = v->shape[0]});
        nd_array *wrapped = pos && len ? nd_fe_binary(fn, ND_OP_REMAINDER, pos, len) : NULL;
        r = wrapped ? nd_fe_take(fn, ND_INDEX_FN_PUT, v, wrapped, 0) : NULL;
        nd_fe_release(pos);
        nd_fe_release(len);
        nd_fe_release(wrapped);
    }
    nd_fe_release(v);
    return r;
}

nd_status nd_put(nd_array *a, nd_array *indices, nd_array *values) {
    ND_API_GUARD();
    const char *fn = "nd_put";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "indices", indices) || nd_fe_arg(fn, "values", values))
        return nd_last_status();
    nd_status s = nd_runtime_ensure();
    if (s == ND_OK) s = nd_fe_check_dst(fn, a);
    if (s != ND_OK) return s;
    if (!nd_array_is_contiguous(a))
        return nd_error_set(ND_ERR_ARG, "%s: the array must be C-contiguous (nd_put writes its flattened view); use "
                            "nd_index_assign or nd_put_along_axis on a strided view", fn);
    int64_t size = nd_size(a), one = 1;
    nd_array *flat_a = nd_fe_view(a, 1, &size, &one, a->offset);
    nd_array *flat_i = flat_a ? nd_fe_flat(fn, indices) : NULL;
    int64_t m = flat_i ? flat_i->shape[0] : 0;
    if (flat_i && m > 0 && nd_size(values) == 0)
        s = nd_error_set(ND_ERR_ARG, "%s: values is empty but there are %lld indices to write", fn, (long long)m);
    nd_array *v = flat_i && s == ND_OK && m > 0 ? cycled(fn, values, m) : NULL;
    if (s == ND_OK && m > 0) {
        nd_fe_adv_index adv = {1, 0, {0}, {flat_i}};
        nd_fe_gather_geom g;
        if (!v || nd_fe_adv_geom(fn, flat_a, &adv, &g)) s = nd_last_status();
        else {
            s = nd_fe_scatter(fn, ND_INDEX_FN_PUT, ND_SCATTER_ASSIGN, &g, v);
            nd_fe_geom_release(&g);
        }
    } else if (!flat_i) {
        s = nd_last_status();
    }
    nd_fe_release(v);
    nd_fe_release(flat_i);
    nd_fe_release(flat_a);
    return s;
}

/* ------------------------------------------------------------- add_at */

nd_status nd_add_at(nd_array *a, nd_array *indices, nd_array *values) {
    ND_API_GUARD();
    const char *fn = "nd_add_at";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "indices", indices) || nd_fe_arg(fn, "values", values))
        return nd_last_status();
    nd_status s = nd_runtime_ensure();
    if (s == ND_OK) s = nd_fe_check_dst(fn, a);
    if (s != ND_OK) return s;
    if (a->ndim == 0)
        return nd_error_set(ND_ERR_INDEX, "%s: a 0-d array cannot be indexed (use nd_add and nd_assign)", fn);
    nd_fe_adv_index adv = {1, 0, {0}, {indices}};
    nd_fe_gather_geom g;
    if (nd_fe_adv_geom(fn, a, &adv, &g)) return nd_last_status();
    s = nd_fe_scatter(fn, ND_INDEX_FN_ADD_AT, ND_SCATTER_ADD, &g, values);
    nd_fe_geom_release(&g);
    return s;
}

/* ------------------------------------------------------------- choose */

/* NumPy's result dtype of the choices (weak scalars as NEP 50 says). */
static nd_dtype choices_dtype(const char *fn, int n, nd_array *const *choices) {
    nd_dtype rd = ND_NUM_DTYPES;
    for (int i = 0; i < n; i++)
        if (!choices[i]->weak) rd = rd == ND_NUM_DTYPES ? choices[i]->dtype : nd_promote(rd, choices[i]->dtype);
    for (int i = 0; i < n && rd != ND_NUM_DTYPES; i++)
        if (choices[i]->weak) rd = nd_fe_weak_dtype(fn, choices[i], rd, 0);
    if (rd == ND_NUM_DTYPES) rd = choices[0]->weak == ND_WEAK_INT ? ND_INT64 : ND_FLOAT64;
    return rd;
}

nd_array *nd_choose(nd_array *a, int n, nd_array *const *choices) {
    ND_API_GUARD();
    const char *fn = "nd_choose";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (n < 1 || !choices) {
        nd_error_set(ND_ERR_ARG, "%s: needs at least one choice (n = %d)", fn, n);
        return NULL;
    }
    if (n > MAX_CHOICES) {
        nd_error_set(ND_ERR_ARG, "%s: %d choices are more than nd takes at once (%d)", fn, n, MAX_CHOICES);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "choices[%d]", i);
        if (nd_fe_arg(fn, name, choices[i])) return NULL;
    }
    nd_dtype rd = choices_dtype(fn, n, choices);
    if (rd == ND_NUM_DTYPES) return NULL;
    nd_array *idx = nd_fe_index_array(fn, a), *all[MAX_CHOICES + 1], *cols[MAX_CHOICES];
    if (!idx) return NULL;
    all[0] = idx;
    for (int i = 0; i < n; i++) all[i + 1] = choices[i];
    nd_fe_gather_geom g;
    memset(&g, 0, sizeof g);
    g.held[g.n_held++] = idx;
    int nd_, made = 0;
    nd_array *r = NULL;
    if (nd_fe_broadcast(fn, n + 1, all, &nd_, g.shape)) goto done;
    if (nd_ + 1 > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: a %d-d result is one axis too many for this routine (at most %d)", fn, nd_,
                     ND_MAX_DIMS - 1);
        goto done;
    }
    g.n = nd_;
    g.K = 1;
    /* The choices stacked on a last axis (one copy of each, broadcast),
     * indexed there by a. */
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    memcpy(sh, g.shape, sizeof sh);
    sh[nd_] = 1;
    for (; made < n; made++) {
        nd_array *c = choices[made]->dtype == rd && !choices[made]->weak ? nd_retain(choices[made])
                                                                          : nd_fe_astype(fn, choices[made], rd);
        if (!c) break;
        nd_fe_broadcast_strides(c, nd_, g.shape, st);
        st[nd_] = 0;
        cols[made] = nd_fe_view(c, nd_ + 1, sh, st, c->offset);
        nd_fe_release(c);
        if (!cols[made]) break;
    }
    if (made < n) goto done;
    g.ind = g.held[g.n_held++] = nd_fe_concatenate(fn, n, cols, nd_);
    if (!g.ind) goto done;
    nd_fe_broadcast_strides(idx, nd_, g.shape, st);
    st[nd_] = 0;
    g.idx = g.held[g.n_held++] = nd_fe_view(idx, nd_ + 1, sh, st, idx->offset);
    if (g.idx) r = nd_fe_gather(fn, ND_INDEX_FN_CHOOSE | ND_INDEX_NO_WRAP, &g);
done:
    for (int i = 0; i < made; i++) nd_fe_release(cols[i]);
    nd_fe_geom_release(&g);
    return nd_runtime_track(r);
}
