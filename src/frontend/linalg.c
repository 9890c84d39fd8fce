/* Matrix products: one MATMUL node over (batch..., m, n). 1-d operands are
 * promoted NumPy-style (a: (k) -> (1,k), b: (k) -> (k,1)) through views, and
 * the added axes are removed from the result with a view. */
#include <string.h>

#include "frontend/frontend.h"

/* x's shape and strides as a matrix stack of ndim >= 2 (1-d promoted). */
static int as_matrix(const nd_array *x, int is_a, int64_t *sh, int64_t *st) {
    if (x->ndim != 1) {
        memcpy(sh, x->shape, sizeof(int64_t) * ND_MAX_DIMS);
        memcpy(st, x->strides, sizeof(int64_t) * ND_MAX_DIMS);
        return x->ndim;
    }
    int one = is_a ? 0 : 1, vec = 1 - one;
    sh[one] = 1;
    st[one] = 0;
    sh[vec] = x->shape[0];
    st[vec] = x->strides[0];
    return 2;
}

/* Node-shaped view of operand x: batch dims right-aligned into bn dims of
 * oshape (stride 0 where x has none or length 1), then its two matrix dims. */
static void operand_view(const nd_array *x, int is_a, int bn, const int64_t *oshape,
                         int64_t *vsh, int64_t *vst) {
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    int nd = as_matrix(x, is_a, sh, st), xb = nd - 2;
    for (int i = 0; i < bn; i++) {
        int j = i - (bn - xb);
        vsh[i] = oshape[i];
        vst[i] = (j >= 0 && sh[j] != 1) ? st[j] : 0;
    }
    vsh[bn] = sh[nd - 2];
    vsh[bn + 1] = sh[nd - 1];
    vst[bn] = st[nd - 2];
    vst[bn + 1] = st[nd - 1];
}

static nd_array *matmul_impl(const char *fn, nd_array *a, nd_array *b) {
    char s1[200], s2[200];
    if (a->ndim == 0 || b->ndim == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: operand %s is 0-d; matmul needs at least 1 dimension "
                     "(use nd_mul to scale by a scalar)", fn, a->ndim == 0 ? "a" : "b");
        return NULL;
    }
    int a1 = a->ndim == 1, b1 = b->ndim == 1;
    int64_t ash[ND_MAX_DIMS], ast[ND_MAX_DIMS], bsh[ND_MAX_DIMS], bst[ND_MAX_DIMS];
    int and_ = as_matrix(a, 1, ash, ast), bnd = as_matrix(b, 0, bsh, bst);
    int64_t m = ash[and_ - 2], k = ash[and_ - 1], k2 = bsh[bnd - 2], n = bsh[bnd - 1];
    if (k != k2) {
        nd_error_set(ND_ERR_SHAPE, "%s: a has shape %s and b has shape %s: the inner dimensions "
                     "%lld and %lld differ (a's last must equal b's %s)", fn,
                     nd_format_shape(s1, sizeof s1, a->ndim, a->shape),
                     nd_format_shape(s2, sizeof s2, b->ndim, b->shape), (long long)k,
                     (long long)k2, b1 ? "only" : "second-to-last");
        return NULL;
    }
    /* Batch dimensions broadcast. */
    int abn = and_ - 2, bbn = bnd - 2, bn = abn > bbn ? abn : bbn;
    int64_t oshape[ND_MAX_DIMS];
    for (int i = 0; i < bn; i++) {
        int ja = i - (bn - abn), jb = i - (bn - bbn);
        int64_t da = ja >= 0 ? ash[ja] : 1, db = jb >= 0 ? bsh[jb] : 1;
        if (da != db && da != 1 && db != 1) {
            nd_error_set(ND_ERR_SHAPE, "%s: batch dimensions of a %s and b %s cannot be broadcast "
                         "together", fn, nd_format_shape(s1, sizeof s1, a->ndim, a->shape),
                         nd_format_shape(s2, sizeof s2, b->ndim, b->shape));
            return NULL;
        }
        oshape[i] = da == 1 ? db : da;
    }
    oshape[bn] = m;
    oshape[bn + 1] = n;
    int ond = bn + 2;
    nd_dtype t = nd_fe_result_type(fn, a, b, 0);
    if (t == ND_NUM_DTYPES) return NULL;
    size_t nbytes;
    if (nd_fe_nbytes(fn, ond, oshape, t, &nbytes)) return NULL;
    /* Both operands in the result dtype (the cast fuses into a kernel). */
    nd_array *ca = a->dtype == t ? a : nd_fe_astype(fn, a, t);
    nd_array *cb = b->dtype == t ? b : nd_fe_astype(fn, b, t);
    nd_array *out = NULL;
    nd_fe_rec r;
    if (ca && cb && !nd_fe_begin(&r, fn, ND_NODE_MATMUL, 0, 2, t, t, ond, oshape, nbytes)) {
        int64_t vsh[ND_MAX_DIMS], vst[ND_MAX_DIMS];
        operand_view(ca, 1, bn, oshape, vsh, vst);
        nd_graph_set_input(r.node, 0, ca, ond, vsh, vst);
        operand_view(cb, 0, bn, oshape, vsh, vst);
        nd_graph_set_input(r.node, 1, cb, ond, vsh, vst);
        out = nd_fe_end(&r, ond, oshape);
    }
    if (ca && ca != a) nd_fe_release(ca);
    if (cb && cb != b) nd_fe_release(cb);
    if (!out || (!a1 && !b1)) return out;
    /* Drop the axes that the 1-d promotion added. */
    int64_t vs[ND_MAX_DIMS], vst[ND_MAX_DIMS];
    int vn = 0;
    for (int i = 0; i < ond; i++) {
        if ((a1 && i == bn) || (b1 && i == bn + 1)) continue;
        vs[vn] = out->shape[i];
        vst[vn++] = out->strides[i];
    }
    nd_array *v = nd_fe_view(out, vn, vs, vst, 0);
    nd_fe_release(out);
    return v;
}

/* matmul_impl, except for two float or complex vectors: sum(a*b), one fused
 * reduction (a complex one is two, of the parts)
 * (inputs that are themselves computed, random draws say, are never
 * written out), not a library call on materialised operands. */
static nd_array *product(const char *fn, nd_array *a, nd_array *b) {
    if (a->ndim == 1 && b->ndim == 1 && a->shape[0] == b->shape[0]) {
        nd_dtype t = nd_fe_result_type(fn, a, b, 0);
        if (t == ND_NUM_DTYPES) return NULL;
        if (t == ND_FLOAT32 || t == ND_FLOAT64 || nd_dtype_is_complex(t)) {
            nd_array *prod = nd_fe_binary(fn, ND_OP_MUL, a, b);
            nd_array *sum = prod ? nd_fe_reduce(fn, ND_REDUCE_SUM, prod, ND_ALL_AXES, 0) : NULL;
            nd_free(prod);
            return sum;
        }
    }
    return matmul_impl(fn, a, b);
}

nd_array *nd_fe_matmul(const char *fn, nd_array *a, nd_array *b) { return product(fn, a, b); }

nd_array *nd_matmul(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_matmul";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(product(fn, a, b));
}

nd_array *nd_dot(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_dot";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    /* NumPy dot: a 0-d operand multiplies. */
    if (a->ndim == 0 || b->ndim == 0) return nd_runtime_track(nd_fe_binary(fn, ND_OP_MUL, a, b));
    /* With b of ndim <= 2, dot(a, b) sums a's last axis against b's first
     * (or only) axis, which is exactly matmul; a higher-d b pairs every
     * batch of a with every batch of b, which matmul does not. */
    if (b->ndim > 2) {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: b has ndim %d: nd_dot supports b of up to 2 "
                     "dimensions (use nd_matmul for batched products)", fn, b->ndim);
        return NULL;
    }
    return nd_runtime_track(product(fn, a, b));
}
