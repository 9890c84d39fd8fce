/* Views (index strings, reshape, transpose, broadcast_to: no node) and
 * joins (concatenate/stack: one STORE per input into a fresh array). */
#include <stdio.h>
#include <string.h>

#include "frontend/frontend.h"

nd_array *nd_view(nd_array *a, const char *index) {
    ND_API_GUARD();
    static const char fn[] = "nd_view";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (!index) {
        nd_error_set(ND_ERR_ARG, "%s: index is NULL (pass a string such as \"1:-1, ::2\", or "
                     "\"...\" for the whole array)", fn);
        return NULL;
    }
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_view_index(fn, a, index));
}

nd_array *nd_fe_view_index(const char *fn, nd_array *a, const char *index) {
    int nd;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], off;
    if (nd_index_apply(fn, index, a->ndim, a->shape, a->strides, a->offset, &nd, shape, strides,
                       &off))
        return NULL;
    return nd_fe_view(a, nd, shape, strides, off);
}

/* NumPy's _attempt_nocopy_reshape (C order): strides for the new shape over
 * the same memory, or 0 when the layout makes a view impossible. */
static int nocopy_strides(const nd_array *a, int nnd, const int64_t *nshape, int64_t *nstrides) {
    int64_t od[ND_MAX_DIMS], os[ND_MAX_DIMS];
    int ond = 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != 1) {
            od[ond] = a->shape[i];
            os[ond++] = a->strides[i];
        }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < nnd && oi < ond) {
        int64_t np = nshape[ni], op = od[oi];
        while (np != op) {
            if (np < op) np *= nshape[nj++];
            else op *= od[oj++];
        }
        for (int ok = oi; ok < oj - 1; ok++)
            if (os[ok] != od[ok + 1] * os[ok + 1]) return 0;
        nstrides[nj - 1] = os[oj - 1];
        for (int nk = nj - 1; nk > ni; nk--) nstrides[nk - 1] = nstrides[nk] * nshape[nk];
        ni = nj++;
        oi = oj++;
    }
    int64_t last = ni >= 1 ? nstrides[ni - 1] : 1;
    for (int nk = ni; nk < nnd; nk++) nstrides[nk] = last;
    return 1;
}

nd_array *nd_fe_reshape(const char *fn, nd_array *a, int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_ARG, "%s: ndim %d is out of range (use 0..%d)", fn, ndim, ND_MAX_DIMS);
        return NULL;
    }
    if (ndim > 0 && !shape) {
        nd_error_set(ND_ERR_ARG, "%s: shape is NULL but ndim is %d", fn, ndim);
        return NULL;
    }
    int64_t ns[ND_MAX_DIMS], size = nd_shape_size(a->ndim, a->shape), known = 1;
    int infer = -1;
    char s1[200], s2[200];
    for (int i = 0; i < ndim; i++) {
        ns[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0) {
                nd_error_set(ND_ERR_ARG, "%s: shape %s has more than one -1 (only one dimension "
                             "can be inferred)", fn, nd_format_shape(s1, sizeof s1, ndim, shape));
                return NULL;
            }
            infer = i;
        } else if (shape[i] < 0) {
            nd_error_set(ND_ERR_ARG, "%s: shape %s has a negative dimension %lld (use sizes >= 0, "
                         "or -1 once to infer one)", fn,
                         nd_format_shape(s1, sizeof s1, ndim, shape), (long long)shape[i]);
            return NULL;
        } else if (shape[i] != 0 && known > INT64_MAX / shape[i]) {
            known = -1; /* overflow: cannot match */
            break;
        } else {
            known *= shape[i];
        }
    }
    if (infer >= 0 && known > 0 && size % known == 0) ns[infer] = size / known;
    int ok = known >= 0 && (infer >= 0 ? known > 0 && size % known == 0 : known == size);
    if (!ok) {
        nd_error_set(ND_ERR_SHAPE, "%s: cannot reshape an array of shape %s (%lld elements) into "
                     "shape %s (the element counts must match)",
                     fn, nd_format_shape(s1, sizeof s1, a->ndim, a->shape), (long long)size,
                     nd_format_shape(s2, sizeof s2, ndim, shape));
        return NULL;
    }
    int64_t st[ND_MAX_DIMS];
    if (size == 0 || a->weak) {
        if (!a->weak) {
            nd_contiguous_strides(ndim, ns, st);
            return nd_fe_view(a, ndim, ns, st, a->offset);
        }
    } else if (nocopy_strides(a, ndim, ns, st)) {
        return nd_fe_view(a, ndim, ns, st, a->offset);
    }
    /* The layout does not allow a view (or a weak scalar): copy first. */
    nd_array *c = nd_fe_astype(fn, a, a->dtype);
    if (!c) return NULL;
    nd_contiguous_strides(ndim, ns, st);
    nd_array *v = nd_fe_view(c, ndim, ns, st, 0);
    nd_fe_release(c);
    return v;
}

nd_array *nd_reshape(nd_array *a, int ndim, const int64_t *shape) {
    ND_API_GUARD();
    if (nd_fe_arg("nd_reshape", "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_reshape("nd_reshape", a, ndim, shape));
}

nd_array *nd_ravel(nd_array *a) {
    ND_API_GUARD();
    if (nd_fe_arg("nd_ravel", "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    int64_t n = -1;
    if (nd_array_is_contiguous(a)) return nd_runtime_track(nd_fe_reshape("nd_ravel", a, 1, &n));
    /* NumPy's ravel copies whenever the input is not C-contiguous, even where
     * a strided view would do (x[::2]): the result never aliases such an
     * input, and a broadcast input gives a writable array. The copy is lazy
     * and fuses into its consumers like nd_copy. */
    nd_array *c = nd_fe_astype("nd_ravel", a, a->dtype);
    if (!c) return NULL;
    nd_array *v = nd_fe_reshape("nd_ravel", c, 1, &n);
    nd_fe_release(c);
    return nd_runtime_track(v);
}

nd_array *nd_transpose(nd_array *a, const int *perm) {
    ND_API_GUARD();
    static const char fn[] = "nd_transpose";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    int nd = a->ndim, p[ND_MAX_DIMS], seen[ND_MAX_DIMS] = {0};
    for (int i = 0; i < nd; i++) {
        if (!perm) {
            p[i] = nd - 1 - i;
            continue;
        }
        int ax = perm[i] < 0 ? perm[i] + nd : perm[i];
        if (ax < 0 || ax >= nd || seen[ax]) {
            nd_error_set(ND_ERR_ARG, "%s: perm[%d] = %d is %s for an array of ndim %d (perm must "
                         "list each axis 0..%d exactly once)",
                         fn, i, perm[i], ax < 0 || ax >= nd ? "out of range" : "repeated", nd,
                         nd - 1);
            return NULL;
        }
        seen[ax] = 1;
        p[i] = ax;
    }
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        shape[i] = a->shape[p[i]];
        strides[i] = a->strides[p[i]];
    }
    if (a->weak) return nd_runtime_track(nd_fe_strong(fn, a));
    return nd_runtime_track(nd_fe_view(a, nd, shape, strides, a->offset));
}

nd_array *nd_broadcast_to(nd_array *a, int ndim, const int64_t *shape) {
    ND_API_GUARD();
    static const char fn[] = "nd_broadcast_to";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, a->dtype, &nbytes)) return NULL;
    int ok = ndim >= a->ndim;
    for (int j = 0; ok && j < a->ndim; j++) {
        int64_t d = a->shape[j], t = shape[ndim - a->ndim + j];
        if (d != t && d != 1) ok = 0;
    }
    if (!ok) {
        char s1[200], s2[200];
        nd_error_set(ND_ERR_SHAPE, "%s: cannot broadcast an array of shape %s to shape %s (each "
                     "dimension must match or be 1, and new dimensions go in front)",
                     fn, nd_format_shape(s1, sizeof s1, a->ndim, a->shape),
                     nd_format_shape(s2, sizeof s2, ndim, shape));
        return NULL;
    }
    nd_array *src = nd_fe_strong(fn, a);
    if (!src) return NULL;
    int64_t strides[ND_MAX_DIMS];
    nd_fe_broadcast_strides(src, ndim, shape, strides);
    nd_array *v = nd_fe_view(src, ndim, shape, strides, src->offset);
    nd_fe_release(src);
    if (v) v->readonly = ND_READONLY_BROADCAST;
    return nd_runtime_track(v);
}

nd_array *nd_fe_concatenate(const char *fn, int n, nd_array *const *arrays, int axis) {
    if (n <= 0 || !arrays) {
        nd_error_set(ND_ERR_ARG, "%s: needs at least one array (got n = %d%s)", fn, n,
                     arrays ? "" : " and a NULL list");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (!arrays[i] || arrays[i]->state != ND_ARRAY_LIVE || arrays[i]->buf->dead) {
            char name[32];
            snprintf(name, sizeof name, "arrays[%d]", i);
            (void)nd_fe_arg(fn, name, arrays[i]);
            return NULL;
        }
    const nd_array *a0 = arrays[0];
    int nd = a0->ndim, ax;
    if (nd == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: zero-dimensional arrays cannot be concatenated (use "
                     "nd_stack, or nd_reshape them to 1-d)", fn);
        return NULL;
    }
    if (nd_fe_axis(fn, axis, nd, &ax)) return NULL;
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, a0->shape, sizeof shape);
    shape[ax] = 0;
    nd_dtype t = a0->dtype;
    for (int i = 0; i < n; i++) {
        const nd_array *a = arrays[i];
        int ok = a->ndim == nd;
        for (int k = 0; ok && k < nd; k++)
            if (k != ax && a->shape[k] != a0->shape[k]) ok = 0;
        if (!ok) {
            char s1[200], s2[200];
            nd_error_set(ND_ERR_SHAPE, "%s: arrays[0] has shape %s and arrays[%d] has shape %s; "
                         "all dimensions except axis %d must match", fn,
                         nd_format_shape(s1, sizeof s1, a0->ndim, a0->shape), i,
                         nd_format_shape(s2, sizeof s2, a->ndim, a->shape), ax);
            return NULL;
        }
        if (shape[ax] > INT64_MAX - a->shape[ax]) {
            nd_error_set(ND_ERR_SHAPE, "%s: the joined axis is too long", fn);
            return NULL;
        }
        shape[ax] += a->shape[ax];
        if (i) t = nd_promote(t, a->dtype);
    }
    nd_array *out = nd_fe_empty(fn, t, nd, shape);
    if (!out) return NULL;
    int64_t pos = 0;
    for (int i = 0; i < n; i++) {
        nd_array *a = arrays[i];
        int64_t len = a->shape[ax];
        if (len == 0) continue;
        /* out[..., pos:pos+len, ...] = a */
        int64_t rshape[ND_MAX_DIMS];
        memcpy(rshape, out->shape, sizeof rshape);
        rshape[ax] = len;
        nd_array *region = nd_fe_view(out, nd, rshape, out->strides, pos * out->strides[ax]);
        if (!region || nd_fe_store(fn, region, a) != ND_OK) {
            nd_fe_release(region);
            nd_fe_release(out);
            return NULL;
        }
        nd_fe_release(region);
        pos += len;
    }
    return out;
}

nd_array *nd_concatenate(int n, nd_array *const *arrays, int axis) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_concatenate("nd_concatenate", n, arrays, axis));
}

nd_array *nd_stack(int n, nd_array *const *arrays, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_stack";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (n <= 0 || !arrays) {
        nd_error_set(ND_ERR_ARG, "%s: needs at least one array (got n = %d)", fn, n);
        return NULL;
    }
    if (n > 4096) {
        nd_error_set(ND_ERR_ARG, "%s: n = %d arrays is more than 4096 (stack in groups)", fn, n);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (!arrays[i] || arrays[i]->state != ND_ARRAY_LIVE || arrays[i]->buf->dead) {
            char name[32];
            snprintf(name, sizeof name, "arrays[%d]", i);
            (void)nd_fe_arg(fn, name, arrays[i]);
            return NULL;
        }
    const nd_array *a0 = arrays[0];
    int nd = a0->ndim, ax;
    if (nd + 1 > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: stacking %d-d arrays would make more than %d dimensions",
                     fn, nd, ND_MAX_DIMS);
        return NULL;
    }
    if (nd_fe_axis(fn, axis, nd + 1, &ax)) return NULL;
    for (int i = 1; i < n; i++) {
        const nd_array *a = arrays[i];
        if (a->ndim != nd || memcmp(a->shape, a0->shape, (size_t)nd * sizeof(int64_t))) {
            char s1[200], s2[200];
            nd_error_set(ND_ERR_SHAPE, "%s: arrays[0] has shape %s but arrays[%d] has shape %s "
                         "(all must have the same shape)", fn,
                         nd_format_shape(s1, sizeof s1, a0->ndim, a0->shape), i,
                         nd_format_shape(s2, sizeof s2, a->ndim, a->shape));
            return NULL;
        }
    }
    /* Each input gains a length-1 axis, then they are concatenated on it. */
    nd_array *views[4096];
    int made = 0;
    nd_array *out = NULL;
    for (; made < n; made++) {
        nd_array *s = nd_fe_strong(fn, arrays[made]);
        if (!s) goto done;
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        for (int k = 0, j = 0; k <= nd; k++) {
            if (k == ax) {
                shape[k] = 1;
                strides[k] = 0;
            } else {
                shape[k] = s->shape[j];
                strides[k] = s->strides[j++];
            }
        }
        views[made] = nd_fe_view(s, nd + 1, shape, strides, s->offset);
        nd_fe_release(s);
        if (!views[made]) goto done;
    }
    out = nd_fe_concatenate(fn, n, views, ax);
done:
    for (int i = 0; i < made; i++) nd_fe_release(views[i]);
    return nd_runtime_track(out);
}
