/* Random orderings and choices (include/nd/random.h): permutation,
 * shuffle (Generator.permuted) and choice. Every ordering is the stable
 * argsort of random 64-bit keys drawn like nd_random_integers (one random
 * call's stream, counter-based), so a seed gives the same result on every
 * backend and thread count; choice with probabilities searches uniforms in
 * the normalised cumulative sum of p, as NumPy's Generator does. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frontend/shaping_internal.h"
#include "frontend/sorting_internal.h"

/* A random ordering of each row (the last axis) of an array of `shape`:
 * the stable argsort of random keys. */
static nd_array *random_order(const char *fn, int ndim, const int64_t *shape) {
    nd_array *keys = nd_random_integers(ND_UINT64, ndim, shape, 0, INT64_MAX);
    if (!keys) return NULL;
    nd_array *perm = nd_fe_sort_last(fn, keys, ND_SORT_INDICES);
    nd_free(keys);
    return perm;
}

nd_array *nd_random_permutation(int64_t n) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_permutation";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (n < 0) {
        nd_error_set(ND_ERR_ARG, "%s: n = %" PRId64 " is negative (use n >= 0)", fn, n);
        return NULL;
    }
    return nd_runtime_track(random_order(fn, 1, &n));
}

/* a's slices along axis ax reordered by one ordering per row of the moved
 * array (rows_share: one ordering of axis ax shared by every slice). */
static nd_array *reorder_axis(const char *fn, nd_array *a, int ax, int rows_share) {
    int n = a->ndim, to_last[ND_MAX_DIMS], back[ND_MAX_DIMS];
    nd_fe_axis_last_maps(n, ax, to_last, back);
    nd_array *moved = nd_fe_with_axes(a, n, to_last), *perm = NULL, *ix = NULL, *taken = NULL, *r = NULL;
    if (moved) perm = random_order(fn, rows_share ? 1 : n, rows_share ? &moved->shape[n - 1] : moved->shape);
    if (perm && rows_share) { /* the one ordering seen by every row: stride 0 over the others */
        int64_t st[ND_MAX_DIMS] = {0};
        st[n - 1] = perm->strides[0];
        ix = nd_fe_view(perm, n, moved->shape, st, perm->offset);
    } else if (perm) {
        ix = perm;
        perm->refs++;
    }
    if (ix) taken = nd_fe_take_last(fn, moved, ix);
    if (taken) r = nd_fe_with_axes(taken, n, back);
    nd_array *held[] = {moved, perm, ix, taken};
    for (size_t i = 0; i < sizeof held / sizeof *held; i++)
        if (held[i]) nd_fe_release(held[i]);
    return r;
}

nd_array *nd_random_permutation_of(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_permutation_of";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (a->ndim == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is 0-d; it needs an axis 0 to permute (nd_random_permutation(n) "
                     "permutes 0..n-1)", fn);
        return NULL;
    }
    return nd_runtime_track(reorder_axis(fn, a, 0, 1));
}

nd_array *nd_random_shuffle(nd_array *a, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_shuffle";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (axis != ND_ALL_AXES) {
        int ax;
        if (nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
        return nd_runtime_track(reorder_axis(fn, a, ax, 0));
    }
    nd_array *flat = nd_fe_flat(fn, a), *shuffled = flat ? reorder_axis(fn, flat, 0, 0) : NULL, *r = NULL;
    if (shuffled) r = nd_fe_reshape(fn, shuffled, a->ndim, a->shape);
    if (shuffled) nd_fe_release(shuffled);
    if (flat) nd_fe_release(flat);
    return nd_runtime_track(r);
}

/* ------------------------------------------------------------- choice */

/* Reads p (1-d, length n) and checks it as NumPy's choice does; returns
 * its count of non-zero entries, or -1 with the error set. */
static int64_t check_p(const char *fn, nd_array *p, int64_t n) {
    if (nd_fe_arg(fn, "p", p)) return -1;
    if (p->ndim != 1 || p->shape[0] != n) {
        nd_error_set(ND_ERR_SHAPE, "%s: p must be 1-d of the population's length %" PRId64 " (it is %d-d%s)", fn, n,
                     p->ndim, p->ndim == 1 ? " of another length" : "");
        return -1;
    }
    double *v = nd_malloc((n ? (size_t)n : 1) * sizeof *v), sum = 0;
    nd_array *d = v ? nd_fe_astype(fn, p, ND_FLOAT64) : NULL;
    int64_t nonzero = -1;
    if (!v) nd_error_set(ND_ERR_OOM, "%s: out of host memory reading p", fn);
    if (d && nd_to_host(d, v, (size_t)n * sizeof *v) == ND_OK) {
        nonzero = 0;
        for (int64_t i = 0; i < n && nonzero >= 0; i++) {
            if (!(v[i] >= 0) || isinf(v[i])) {
                nd_error_set(ND_ERR_ARG, "%s: p[%" PRId64 "] = %g (probabilities must be finite and >= 0)", fn, i,
                             v[i]);
                nonzero = -1;
                break;
            }
            sum += v[i];
            nonzero += v[i] > 0;
        }
        if (nonzero >= 0 && fabs(sum - 1) > 1.4901161193847656e-08) { /* NumPy's sqrt(float64 eps) */
            nd_error_set(ND_ERR_ARG, "%s: probabilities sum to %.17g (they must sum to 1)", fn, sum);
            nonzero = -1;
        }
    }
    if (d) nd_fe_release(d);
    free(v);
    return nonzero;
}

/* NumPy's search: cdf = cumsum(p) / its last element; each uniform's
 * right insertion point. */
static nd_array *choice_replace_p(const char *fn, nd_array *p, int ndim, const int64_t *shape) {
    nd_array *p64 = nd_fe_astype(fn, p, ND_FLOAT64), *cdf = p64 ? nd_cumsum(p64, 0) : NULL;
    nd_array *last = cdf ? nd_fe_view_index(fn, cdf, "-1") : NULL;
    nd_array *norm = last ? nd_fe_binary(fn, ND_OP_DIV, cdf, last) : NULL;
    nd_array *u = norm ? nd_random_uniform(ND_FLOAT64, ndim, shape, 0, 1) : NULL;
    nd_array *r = u ? nd_fe_searchsorted(fn, norm, u, 1) : NULL;
    if (u) nd_free(u);
    if (norm) nd_fe_release(norm);
    if (last) nd_fe_release(last);
    if (cdf) nd_free(cdf);
    if (p64) nd_fe_release(p64);
    return r;
}

/* The first k of a random ordering of 0..n-1: uniform (p NULL) or the
 * smallest E_i / p_i (Efraimidis-Spirakis: weighted, without
 * replacement). */
static nd_array *choice_no_replace(const char *fn, int64_t n, int64_t k, nd_array *p) {
    nd_array *perm = NULL;
    if (!p) {
        perm = random_order(fn, 1, &n);
    } else {
        nd_array *e = nd_random_exponential(ND_FLOAT64, 1, &n, 1.0);
        nd_array *p64 = e ? nd_fe_astype(fn, p, ND_FLOAT64) : NULL;
        nd_array *keys = p64 ? nd_fe_binary(fn, ND_OP_DIV, e, p64) : NULL;
        if (keys) perm = nd_fe_sort_last(fn, keys, ND_SORT_INDICES);
        if (keys) nd_fe_release(keys);
        if (p64) nd_fe_release(p64);
        if (e) nd_free(e);
    }
    if (!perm) return NULL;
    nd_array *first = nd_fe_axis_slice(perm, 0, 0, k, 1);
    nd_fe_release(perm);
    return first;
}

static nd_array *choice_n(const char *fn, int64_t n, int ndim, const int64_t *shape, int replace, nd_array *p) {
    size_t nbytes;
    if (nd_runtime_ensure() != ND_OK || nd_fe_check_shape(fn, ndim, shape, ND_INT64, &nbytes)) return NULL;
    int64_t k = nd_shape_size(ndim, shape);
    if (n < 0 || (n == 0 && k > 0)) {
        nd_error_set(ND_ERR_ARG, "%s: a population of %" PRId64 " elements cannot give %" PRId64 " draws (use n > 0)",
                     fn, n, k);
        return NULL;
    }
    int64_t nonzero = p ? check_p(fn, p, n) : n;
    if (nonzero < 0) return NULL;
    if (!replace && k > nonzero) {
        nd_error_set(ND_ERR_ARG, "%s: %" PRId64 " draws without replacement from %" PRId64 " %s (use at most that "
                     "many, or replace)", fn, k, nonzero, p ? "elements of non-zero probability" : "elements");
        return NULL;
    }
    nd_array *flat;
    if (replace && !p) {
        nd_array *ints = nd_random_integers(ND_INT64, 1, &k, 0, n ? n : 1); /* tracked: seen through a view */
        flat = ints ? nd_fe_reshape(fn, ints, 1, &k) : NULL;
        if (ints) nd_free(ints);
    } else {
        flat = replace ? choice_replace_p(fn, p, 1, &k) : choice_no_replace(fn, n, k, p);
    }
    nd_array *r = flat ? nd_fe_reshape(fn, flat, ndim, shape) : NULL;
    if (flat) nd_fe_release(flat);
    return r;
}

nd_array *nd_random_choice_n(int64_t n, int ndim, const int64_t *shape, int replace, nd_array *p) {
    ND_API_GUARD();
    return nd_runtime_track(choice_n("nd_random_choice_n", n, ndim, shape, replace, p));
}

nd_array *nd_random_choice(nd_array *a, int ndim, const int64_t *shape, int replace, nd_array *p) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_choice";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (a->ndim != 1) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is %d-d; it must be 1-d (nd_random_choice_n draws indices)", fn, a->ndim);
        return NULL;
    }
    nd_array *ix = choice_n(fn, a->shape[0], ndim, shape, replace, p), *r = NULL;
    if (!ix) return NULL;
    /* One row: a as (1, n), the indices as (1, k). */
    int64_t k = nd_shape_size(ndim, shape), xs[2] = {1, a->shape[0]}, xst[2] = {0, a->strides[0]}, ks[2] = {1, k};
    nd_array *x2 = nd_fe_view(a, 2, xs, xst, a->offset), *i2 = x2 ? nd_fe_reshape(fn, ix, 2, ks) : NULL;
    nd_array *taken = i2 ? nd_fe_take_last(fn, x2, i2) : NULL;
    if (taken) r = nd_fe_reshape(fn, taken, ndim, shape);
    nd_array *held[] = {ix, x2, i2, taken};
    for (size_t i = 0; i < sizeof held / sizeof *held; i++)
        if (held[i]) nd_fe_release(held[i]);
    return nd_runtime_track(r);
}
