/* outer, inner, vdot: views and reshapes around one elementwise multiply
 * (outer) or one matmul (inner, vdot; two float vectors become a fused
 * sum of products, as nd_matmul). A weak scalar operand is a 0-d array of
 * its Python type's dtype, as NumPy's asarray makes it (np.inner(int8
 * array, 3) is int64). */
#include <stdio.h>
#include <string.h>

#include "frontend/shaping_internal.h"

/* Checks both operands and makes them strong; 0 on success. */
static int two_args(const char *fn, nd_array *a, nd_array *b, nd_array **sa, nd_array **sb) {
    *sa = *sb = NULL;
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b)) return -1;
    if (nd_runtime_ensure() != ND_OK) return -1;
    *sa = nd_fe_strong(fn, a);
    *sb = *sa ? nd_fe_strong(fn, b) : NULL;
    if (*sb) return 0;
    nd_fe_release(*sa);
    *sa = NULL;
    return -1;
}

nd_array *nd_outer(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_outer";
    nd_array *sa, *sb, *out = NULL;
    if (two_args(fn, a, b, &sa, &sb)) return NULL;
    nd_array *fa = nd_fe_flat(fn, sa), *fb = fa ? nd_fe_flat(fn, sb) : NULL;
    nd_array *col = fb ? nd_fe_with_axes(fa, 2, (const int[]){0, -1}) : NULL;
    nd_array *row = col ? nd_fe_with_axes(fb, 2, (const int[]){-1, 0}) : NULL;
    if (row) out = nd_fe_binary(fn, ND_OP_MUL, col, row);
    nd_fe_release(row);
    nd_fe_release(col);
    nd_fe_release(fb);
    nd_fe_release(fa);
    nd_fe_release(sb);
    nd_fe_release(sa);
    return nd_runtime_track(out);
}

nd_array *nd_inner(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_inner";
    nd_array *sa, *sb, *out = NULL;
    if (two_args(fn, a, b, &sa, &sb)) return NULL;
    int an = sa->ndim, bn = sb->ndim;
    char s1[200], s2[200];
    if (an == 0 || bn == 0) {
        out = nd_fe_binary(fn, ND_OP_MUL, sa, sb);
        goto done;
    }
    int64_t k = sa->shape[an - 1];
    if (sb->shape[bn - 1] != k) {
        nd_error_set(ND_ERR_SHAPE, "%s: a has shape %s and b has shape %s: their last dimensions "
                     "%lld and %lld differ (inner sums over both last axes)", fn,
                     nd_format_shape(s1, sizeof s1, an, sa->shape),
                     nd_format_shape(s2, sizeof s2, bn, sb->shape), (long long)k,
                     (long long)sb->shape[bn - 1]);
        goto done;
    }
    int on = an - 1 + bn - 1;
    if (on > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: a %d-d and a %d-d operand give a %d-d result, more than "
                     "%d dimensions", fn, an, bn, on, ND_MAX_DIMS);
        goto done;
    }
    if (bn == 1) { /* (..., k) @ (k): already the result's shape */
        out = nd_fe_matmul(fn, sa, sb);
        goto done;
    }
    /* (ma, k) @ (mb, k).T, then the batch axes of both as the shape. */
    int64_t osh[ND_MAX_DIMS];
    memcpy(osh, sa->shape, sizeof(int64_t) * (size_t)(an - 1));
    memcpy(osh + an - 1, sb->shape, sizeof(int64_t) * (size_t)(bn - 1));
    int64_t atwo[2] = {nd_shape_size(an - 1, sa->shape), k};
    int64_t btwo[2] = {nd_shape_size(bn - 1, sb->shape), k};
    nd_array *ma = nd_fe_reshape(fn, sa, 2, atwo);
    nd_array *mb = ma ? nd_fe_reshape(fn, sb, 2, btwo) : NULL;
    nd_array *mbt = mb ? nd_fe_with_axes(mb, 2, (const int[]){1, 0}) : NULL;
    nd_array *p = mbt ? nd_fe_matmul(fn, ma, mbt) : NULL;
    if (p) out = nd_fe_reshape(fn, p, on, osh);
    nd_fe_release(p);
    nd_fe_release(mbt);
    nd_fe_release(mb);
    nd_fe_release(ma);
done:
    nd_fe_release(sb);
    nd_fe_release(sa);
    return nd_runtime_track(out);
}

nd_array *nd_vdot(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_vdot";
    nd_array *sa, *sb, *out = NULL;
    if (two_args(fn, a, b, &sa, &sb)) return NULL;
    int64_t na = nd_shape_size(sa->ndim, sa->shape), nb = nd_shape_size(sb->ndim, sb->shape);
    if (na != nb) {
        char s1[200], s2[200];
        nd_error_set(ND_ERR_SHAPE, "%s: a has shape %s (%lld elements) and b has shape %s (%lld "
                     "elements); vdot needs the same number of elements", fn,
                     nd_format_shape(s1, sizeof s1, sa->ndim, sa->shape), (long long)na,
                     nd_format_shape(s2, sizeof s2, sb->ndim, sb->shape), (long long)nb);
    } else {
        nd_array *fa = nd_fe_flat(fn, sa), *fb = fa ? nd_fe_flat(fn, sb) : NULL;
        /* np.vdot conjugates its first argument (a complex one) */
        if (fb && nd_dtype_is_complex(fa->dtype)) {
            nd_array *c = nd_fe_map(fn, ND_OP_CONJ, 1, &fa, NULL, fa->dtype, fa->dtype);
            nd_fe_release(fa);
            fa = c;
        }
        if (fa && fb) out = nd_fe_matmul(fn, fa, fb);
        nd_fe_release(fb);
        nd_fe_release(fa);
    }
    nd_fe_release(sb);
    nd_fe_release(sa);
    return nd_runtime_track(out);
}
