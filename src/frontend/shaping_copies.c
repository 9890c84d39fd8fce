/* Shaping functions that copy: roll, tile, repeat, pad (and rot90, a view).
 * Each is built from views of the input stored into a fresh array (the
 * STORE nodes of nd_fe_concatenate/nd_fe_store) or from one copy of a
 * broadcast view, so the input is read once and nothing is gathered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frontend/shaping_internal.h"

/* A copy of x laid out as `view` strides describe (vn dims, stride 0 for
 * repeats), reshaped to the final (nd, shape): one lazy copy kernel. */
static nd_array *copy_expanded(const char *fn, nd_array *x, int vn, const int64_t *vsh,
                               const int64_t *vst, int nd, const int64_t *shape) {
    if (nd_shape_size(nd, shape) == 0) return nd_fe_empty(fn, x->dtype, nd, shape);
    nd_array *v = nd_fe_view(x, vn, vsh, vst, x->offset);
    if (!v) return NULL;
    nd_array *c = nd_fe_astype(fn, v, x->dtype);
    nd_fe_release(v);
    if (!c) return NULL;
    nd_array *r = nd_fe_reshape(fn, c, nd, shape);
    nd_fe_release(c);
    return r;
}

/* ---- roll */

static nd_array *roll_axis(const char *fn, nd_array *x, int64_t shift, int ax) {
    int64_t n = x->shape[ax], k = n ? shift % n : 0;
    if (k < 0) k += n;
    if (k == 0) return nd_fe_astype(fn, x, x->dtype);
    /* out = concatenate(x[n-k:], x[:n-k]) along ax */
    nd_array *parts[2] = {nd_fe_axis_slice(x, ax, n - k, k, 1),
                          nd_fe_axis_slice(x, ax, 0, n - k, 1)};
    nd_array *out = parts[0] && parts[1] ? nd_fe_concatenate(fn, 2, parts, ax) : NULL;
    nd_fe_release(parts[0]);
    nd_fe_release(parts[1]);
    return out;
}

nd_array *nd_roll(nd_array *a, int64_t shift, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_roll";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    int ax;
    if (axis != ND_ALL_AXES && nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
    nd_array *s = nd_fe_strong(fn, a), *out = NULL;
    if (!s) return NULL;
    if (axis != ND_ALL_AXES) {
        out = roll_axis(fn, s, shift, ax);
    } else {
        /* NumPy's axis=None: roll the flattened array, keep the shape. */
        nd_array *flat = nd_fe_flat(fn, s);
        nd_array *r = flat ? roll_axis(fn, flat, shift, 0) : NULL;
        out = r ? nd_fe_reshape(fn, r, s->ndim, s->shape) : NULL;
        nd_fe_release(flat);
        nd_fe_release(r);
    }
    nd_fe_release(s);
    return nd_runtime_track(out);
}

/* ---- rot90 */

nd_array *nd_rot90(nd_array *a, int k) {
    ND_API_GUARD();
    static const char fn[] = "nd_rot90";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (a->ndim < 2) {
        nd_error_set(ND_ERR_ARG, "%s: a is %d-d; rot90 rotates in the plane of axes 0 and 1 and "
                     "needs at least 2 dimensions (nd_reshape a 1-d array to (1, n) first)",
                     fn, a->ndim);
        return NULL;
    }
    int q = k % 4;
    if (q < 0) q += 4;
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS], off = a->offset;
    memcpy(sh, a->shape, sizeof sh);
    memcpy(st, a->strides, sizeof st);
    /* As NumPy: k=1 is flip(a, 1) then swap axes 0 and 1; k=2 flips both;
     * k=3 swaps then flips axis 1. A flip of axis d starts at its last
     * element with the stride negated. */
    int flip0 = q == 2 || q == 3, flip1 = q == 1 || q == 2;
    if (flip0 && sh[0] > 0) off += (sh[0] - 1) * st[0];
    if (flip1 && sh[1] > 0) off += (sh[1] - 1) * st[1];
    if (flip0) st[0] = -st[0];
    if (flip1) st[1] = -st[1];
    if (q == 1 || q == 3) {
        int64_t t = sh[0];
        sh[0] = sh[1];
        sh[1] = t;
        t = st[0];
        st[0] = st[1];
        st[1] = t;
    }
    return nd_runtime_track(nd_fe_view(a, a->ndim, sh, st, off));
}

/* ---- tile */

/* Tiles axes [from, d) of x (d dims) by reps, as many as fit in one view of
 * at most ND_MAX_DIMS dims; *done is where it stopped. */
static nd_array *tile_some(const char *fn, nd_array *x, const int64_t *reps, int from,
                           int *done) {
    int d = x->ndim, vn = 0, i;
    int64_t vsh[ND_MAX_DIMS], vst[ND_MAX_DIMS], fsh[ND_MAX_DIMS];
    for (i = 0; i < d; i++) {
        int64_t r = i >= from ? reps[i] : 1, s = x->shape[i];
        int two = r != 1 && s != 1;
        /* The dims still to come need at least one view dim each. */
        if (i >= from && vn + 1 + two + (d - i - 1) > ND_MAX_DIMS) {
            if (i > from) break;
            /* An 8-d x with this axis repeated: tile it alone, on x seen
             * as (before, s, after). */
            int64_t pre = 1, post = 1, three[3];
            for (int j = 0; j < d; j++) {
                fsh[j] = x->shape[j] * (j == i ? r : 1);
                if (j < i) pre *= x->shape[j];
                if (j > i) post *= x->shape[j];
            }
            three[0] = pre, three[1] = s, three[2] = post;
            *done = i + 1;
            nd_array *y = nd_fe_reshape(fn, x, 3, three);
            if (!y) return NULL;
            int64_t ysh[4] = {pre, r, s, post}, yst[4] = {y->strides[0], 0, y->strides[1],
                                                          y->strides[2]};
            nd_array *t = copy_expanded(fn, y, 4, ysh, yst, d, fsh);
            nd_fe_release(y);
            return t;
        }
        fsh[i] = r * s;
        if (two) {
            vsh[vn] = r;
            vst[vn++] = 0;
        }
        vsh[vn] = s == 1 ? r : s;
        vst[vn++] = s == 1 ? 0 : x->strides[i];
    }
    for (int j = i; j < d; j++) {
        fsh[j] = x->shape[j];
        vsh[vn] = x->shape[j];
        vst[vn++] = x->strides[j];
    }
    *done = i;
    return copy_expanded(fn, x, vn, vsh, vst, d, fsh);
}

nd_array *nd_tile(nd_array *a, int n, const int64_t *reps) {
    ND_API_GUARD();
    static const char fn[] = "nd_tile";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (n < 0 || (n > 0 && !reps)) {
        nd_error_set(ND_ERR_ARG, "%s: n = %d with reps %s (pass n >= 0 repetition counts, one per "
                     "axis)", fn, n, reps ? "given" : "NULL");
        return NULL;
    }
    int d = n > a->ndim ? n : a->ndim;
    if (d > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_ARG, "%s: %d repetition counts make a %d-d result, more than %d "
                     "dimensions", fn, n, d, ND_MAX_DIMS);
        return NULL;
    }
    /* As NumPy: reps and a's shape are both padded with leading 1s to d. */
    int64_t r[ND_MAX_DIMS], fsh[ND_MAX_DIMS];
    int map[ND_MAX_DIMS];
    for (int i = 0; i < d; i++) {
        int ri = i - (d - n), ai = i - (d - a->ndim);
        r[i] = ri >= 0 ? reps[ri] : 1;
        map[i] = ai >= 0 ? ai : -1;
        if (r[i] < 0) {
            nd_error_set(ND_ERR_ARG, "%s: reps[%d] = %lld is negative (use counts >= 0)", fn, ri,
                         (long long)r[i]);
            return NULL;
        }
        fsh[i] = (ai >= 0 ? a->shape[ai] : 1);
        if (r[i] && fsh[i] > INT64_MAX / r[i]) {
            nd_error_set(ND_ERR_SHAPE, "%s: reps[%d] = %lld makes axis %d too long", fn, ri,
                         (long long)r[i], i);
            return NULL;
        }
        fsh[i] *= r[i];
    }
    size_t nbytes;
    if (nd_fe_nbytes(fn, d, fsh, a->dtype, &nbytes)) return NULL;
    nd_array *s = nd_fe_strong(fn, a);
    nd_array *x = s ? nd_fe_with_axes(s, d, map) : NULL;
    nd_fe_release(s);
    int from = 0;
    while (x) { /* usually one pass; more when 2 view dims per axis exceed ND_MAX_DIMS */
        int done;
        nd_array *t = tile_some(fn, x, r, from, &done);
        nd_fe_release(x);
        x = t;
        if (done >= d) break;
        from = done;
    }
    return nd_runtime_track(x);
}

/* ---- repeat */

nd_array *nd_repeat(nd_array *a, int64_t repeats, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_repeat";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (repeats < 0) {
        nd_error_set(ND_ERR_ARG, "%s: repeats = %lld is negative (use a count >= 0)", fn,
                     (long long)repeats);
        return NULL;
    }
    int ax = 0;
    if (axis != ND_ALL_AXES && nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
    nd_array *s = nd_fe_strong(fn, a);
    if (!s) return NULL;
    /* NumPy's axis=None repeats the flattened array. */
    nd_array *x = axis == ND_ALL_AXES ? nd_fe_flat(fn, s) : (s->refs++, s);
    nd_fe_release(s);
    if (!x) return NULL;
    int nd = x->ndim;
    int64_t fsh[ND_MAX_DIMS];
    memcpy(fsh, x->shape, sizeof fsh);
    if (repeats && x->shape[ax] > INT64_MAX / repeats) {
        nd_error_set(ND_ERR_SHAPE, "%s: repeats = %lld makes axis %d too long", fn,
                     (long long)repeats, ax);
        nd_fe_release(x);
        return NULL;
    }
    fsh[ax] *= repeats;
    size_t nbytes;
    nd_array *out = NULL;
    if (nd_fe_nbytes(fn, nd, fsh, x->dtype, &nbytes)) goto done;
    if (nd == ND_MAX_DIMS) {
        /* No room for the repeat axis: work on (before, n, after). */
        int64_t pre = 1, post = 1;
        for (int i = 0; i < ax; i++) pre *= x->shape[i];
        for (int i = ax + 1; i < nd; i++) post *= x->shape[i];
        int64_t three[3] = {pre, x->shape[ax], post}, vsh[4] = {pre, x->shape[ax], repeats, post};
        nd_array *y = nd_fe_reshape(fn, x, 3, three);
        if (!y) goto done;
        int64_t vst[4] = {y->strides[0], y->strides[1], 0, y->strides[2]};
        out = copy_expanded(fn, y, 4, vsh, vst, nd, fsh);
        nd_fe_release(y);
        goto done;
    }
    /* x with a stride-0 axis of length `repeats` after ax, copied. */
    int64_t vsh[ND_MAX_DIMS], vst[ND_MAX_DIMS];
    for (int i = 0, j = 0; i <= nd; i++) {
        if (i == ax + 1) {
            vsh[i] = repeats;
            vst[i] = 0;
        } else {
            vsh[i] = x->shape[j];
            vst[i] = x->strides[j++];
        }
    }
    out = copy_expanded(fn, x, nd + 1, vsh, vst, nd, fsh);
done:
    nd_fe_release(x);
    return nd_runtime_track(out);
}

/* ---- pad */

/* A run of output positions along one axis: out[o0 .. o0+len) reads
 * input positions src0, src0+step, ... (step 1, -1, or 0 for an edge). */
typedef struct {
    int64_t o0, len, src0, step;
} pad_run;

/* Outward chunk c (0 = next to the data) of a non-constant mode on one
 * side, as (first source going outward, step outward) over an axis of
 * length n; every chunk but edge's has length chunk_len(). NumPy's
 * repeated application for widths beyond the axis is this periodic
 * extension: wrap has period n, symmetric 2n, reflect 2n-2. */
static int64_t chunk_len(nd_pad_mode m, int64_t n) {
    return m == ND_PAD_REFLECT ? n - 1 : m == ND_PAD_EDGE ? INT64_MAX : n;
}

static void chunk(nd_pad_mode m, int right, int64_t c, int64_t n, int64_t *s0, int64_t *step) {
    int odd = (int)(c & 1);
    switch (m) {
    case ND_PAD_EDGE:
        *s0 = right ? n - 1 : 0;
        *step = 0;
        return;
    case ND_PAD_WRAP: /* right: 0, 1, ...; left: n-1, n-2, ... */
        *s0 = right ? 0 : n - 1;
        *step = right ? 1 : -1;
        return;
    case ND_PAD_SYMMETRIC: /* right: n-1..0, 0..n-1, ...; left: 0..n-1, n-1..0, ... */
        *s0 = (right != odd) ? n - 1 : 0;
        *step = (right != odd) ? -1 : 1;
        return;
    default: /* REFLECT, right: n-2..0, 1..n-1, ...; left: 1..n-1, n-2..0, ... */
        *s0 = (right != odd) ? n - 2 : 1;
        *step = (right != odd) ? -1 : 1;
        return;
    }
}

/* The runs of one axis (length n, widths w[0], w[1]); returns the count,
 * or -1 (error set) when out of memory. reflect of a length-1 axis is edge
 * (NumPy). */
static int64_t axis_runs(const char *fn, nd_pad_mode m, int64_t n, const int64_t *w,
                         pad_run **out) {
    if (m == ND_PAD_REFLECT && n == 1) m = ND_PAD_EDGE;
    int64_t L = chunk_len(m, n), cnt = 1;
    for (int side = 0; side < 2; side++)
        if (w[side]) cnt += m == ND_PAD_EDGE ? 1 : (w[side] - 1) / L + 1;
    pad_run *r = nd_malloc((size_t)cnt * sizeof *r);
    if (!r) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for %lld pad runs", fn, (long long)cnt);
        return -1;
    }
    int64_t k = 0;
    /* Left side, chunks listed outward then reversed into output order. */
    int64_t nl = w[0] ? (m == ND_PAD_EDGE ? 1 : (w[0] - 1) / L + 1) : 0;
    for (int64_t c = 0, d = 0; c < nl; c++) {
        int64_t len = w[0] - d < L ? w[0] - d : L, s0, st;
        chunk(m, 0, c, n, &s0, &st);
        /* outward distances d+1 .. d+len sit at w0-d-len .. w0-d-1 */
        pad_run *p = &r[nl - 1 - c];
        p->o0 = w[0] - d - len;
        p->len = len;
        p->src0 = s0 + (len - 1) * st;
        p->step = -st;
        d += len;
    }
    k = nl;
    r[k++] = (pad_run){w[0], n, 0, 1};
    for (int64_t c = 0, d = 0; d < w[1]; c++) {
        int64_t len = w[1] - d < L ? w[1] - d : L, s0, st;
        chunk(m, 1, c, n, &s0, &st);
        r[k++] = (pad_run){w[0] + n + d, len, s0, st};
        d += len;
    }
    *out = r;
    return k;
}

/* out[region] = x[source] for every combination of the runs of axes in
 * [lo, hi) (other axes whole): one STORE per combination. */
static nd_status store_runs(const char *fn, nd_array *out, nd_array *x, int lo, int hi,
                            pad_run *const *runs, const int64_t *nruns) {
    int nd = out->ndim;
    int64_t idx[ND_MAX_DIMS] = {0};
    for (;;) {
        int64_t osh[ND_MAX_DIMS], xsh[ND_MAX_DIMS], xst[ND_MAX_DIMS];
        int64_t ooff = out->offset, xoff = x->offset;
        memcpy(osh, out->shape, sizeof osh);
        memcpy(xsh, x->shape, sizeof xsh);
        memcpy(xst, x->strides, sizeof xst);
        for (int k = lo; k < hi; k++) {
            const pad_run *p = &runs[k][idx[k]];
            osh[k] = xsh[k] = p->len;
            ooff += p->o0 * out->strides[k];
            xoff += p->src0 * x->strides[k];
            xst[k] = p->step * x->strides[k];
        }
        nd_array *dst = nd_fe_view(out, nd, osh, out->strides, ooff);
        nd_array *src = dst ? nd_fe_view(x, nd, xsh, xst, xoff) : NULL;
        nd_status st = src ? nd_fe_store(fn, dst, src) : nd_last_status();
        nd_fe_release(dst);
        nd_fe_release(src);
        if (st != ND_OK) return st;
        int k = hi - 1;
        while (k >= lo && ++idx[k] == nruns[k]) idx[k--] = 0;
        if (k < lo) return ND_OK;
    }
}

/* Constant mode: the input into the middle, then the border as 2*ndim
 * slabs (axis k's before/after part, middle of the axes before k, whole
 * of those after), so every element is written once. */
static nd_array *pad_constant(const char *fn, nd_array *x, const int64_t (*w)[2],
                              const int64_t *fsh, double value) {
    int nd = x->ndim;
    nd_array *out = nd_fe_empty(fn, x->dtype, nd, fsh);
    nd_array *c = out ? nd_fe_full(fn, x->dtype, 0, NULL, nd_fe_double_bits(value, x->dtype))
                      : NULL;
    if (!c) goto fail;
    int64_t st[ND_MAX_DIMS];
    memcpy(st, out->strides, sizeof st);
    int64_t off = 0, sh[ND_MAX_DIMS];
    for (int k = 0; k < nd; k++) {
        sh[k] = x->shape[k];
        off += w[k][0] * st[k];
    }
    if (nd_shape_size(nd, sh)) {
        nd_array *mid = nd_fe_view(out, nd, sh, st, off);
        nd_status s = mid ? nd_fe_store(fn, mid, x) : nd_last_status();
        nd_fe_release(mid);
        if (s != ND_OK) goto fail;
    }
    for (int k = 0; k < nd; k++) {
        for (int side = 0; side < 2; side++) {
            int64_t bsh[ND_MAX_DIMS], boff = 0;
            for (int j = 0; j < nd; j++) {
                bsh[j] = j < k ? x->shape[j] : fsh[j];
                if (j < k) boff += w[j][0] * st[j];
            }
            bsh[k] = w[k][side];
            if (side) boff += (w[k][0] + x->shape[k]) * st[k];
            if (!nd_shape_size(nd, bsh)) continue;
            nd_array *slab = nd_fe_view(out, nd, bsh, st, boff);
            nd_status s = slab ? nd_fe_store(fn, slab, c) : nd_last_status();
            nd_fe_release(slab);
            if (s != ND_OK) goto fail;
        }
    }
    nd_fe_release(c);
    return out;
fail:
    nd_fe_release(c);
    nd_fe_release(out);
    return NULL;
}

/* Pads axes [lo, hi) of x (other widths 0) in one output: a STORE per
 * combination of runs. */
static nd_array *pad_axes(const char *fn, nd_array *x, nd_pad_mode m, const int64_t (*w)[2],
                          int lo, int hi) {
    int nd = x->ndim;
    int64_t fsh[ND_MAX_DIMS], nruns[ND_MAX_DIMS] = {0};
    pad_run *runs[ND_MAX_DIMS] = {0};
    nd_array *out = NULL;
    for (int k = 0; k < nd; k++) fsh[k] = x->shape[k] + (k >= lo && k < hi ? w[k][0] + w[k][1] : 0);
    for (int k = lo; k < hi; k++)
        if ((nruns[k] = axis_runs(fn, m, x->shape[k], w[k], &runs[k])) < 0) goto done;
    out = nd_fe_empty(fn, x->dtype, nd, fsh);
    if (out && nd_shape_size(nd, fsh) && store_runs(fn, out, x, lo, hi, runs, nruns) != ND_OK) {
        nd_fe_release(out);
        out = NULL;
    }
done:
    for (int k = lo; k < hi; k++) free(runs[k]);
    return out;
}

/* Stores into out[..., o0 : o0+len, ...] (axis ax) the input elements
 * src0, src0+step, ..., repeated k times when k > 0: then the region is
 * k consecutive blocks of `period` elements each starting at o0, seen as
 * a (k, len) split of the axis, and the source is broadcast over k. */
static nd_status store_piece(const char *fn, nd_array *out, nd_array *x, int ax, int64_t o0,
                             int64_t len, int64_t src0, int64_t step, int64_t k,
                             int64_t period) {
    if (len == 0 || k == 0) return ND_OK;
    int nd = out->ndim, vn = 0;
    int64_t osh[ND_MAX_DIMS], ost[ND_MAX_DIMS], xsh[ND_MAX_DIMS], xst[ND_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        if (d == ax && k > 1) {
            osh[vn] = xsh[vn] = k;
            ost[vn] = period * out->strides[d];
            xst[vn++] = 0;
        }
        osh[vn] = xsh[vn] = d == ax ? len : out->shape[d];
        ost[vn] = out->strides[d];
        xst[vn++] = d == ax ? step * x->strides[d] : x->strides[d];
    }
    nd_array *dst = nd_fe_view(out, vn, osh, ost, out->offset + o0 * out->strides[ax]);
    nd_array *src = dst ? nd_fe_view(x, vn, xsh, xst, x->offset + src0 * x->strides[ax]) : NULL;
    nd_status st = src ? nd_fe_store(fn, dst, src) : nd_last_status();
    nd_fe_release(dst);
    nd_fe_release(src);
    return st;
}

/* One axis of reflect, symmetric or wrap, padded far beyond its length
 * (x has at most ND_MAX_DIMS - 1 dims): the output axis is the periodic
 * sequence s(m), m = phase, phase+1, ..., whose period is an ascending
 * piece (s = m for m < L) and, for reflect and symmetric, a descending one
 * (s = n-1 - (m-L)). A partial period at each end, and the whole periods
 * between as one store per piece, broadcast over the repeats: at most six
 * stores however wide the pad. */
static nd_array *pad_axis_periodic(const char *fn, nd_array *x, nd_pad_mode m, int ax,
                                   const int64_t *w) {
    int64_t n = x->shape[ax], L = chunk_len(m, n), p = m == ND_PAD_WRAP ? n : 2 * L;
    int64_t total = w[0] + n + w[1], fsh[ND_MAX_DIMS];
    memcpy(fsh, x->shape, sizeof fsh);
    fsh[ax] = total;
    nd_array *out = nd_fe_empty(fn, x->dtype, x->ndim, fsh);
    if (!out) return NULL;
    int64_t mm = ((-w[0]) % p + p) % p, pos = 0;
    nd_status st = ND_OK;
    /* the leading partial period, then whole periods, then the rest */
    for (int part = 0; part < 3 && st == ND_OK; part++) {
        int64_t len = part == 0 ? (mm ? p - mm : 0) : part == 1 ? (total - pos) / p * p
                                                                : total - pos;
        if (len > total - pos) len = total - pos;
        int64_t k = part == 1 ? len / p : 1, m0 = part == 1 ? 0 : mm, span = part == 1 ? p : len;
        /* each of the two pieces that [m0, m0 + span) covers */
        for (int64_t q = m0; q < m0 + span && st == ND_OK;) {
            int asc = q < L;
            int64_t end = asc ? L : p, l = (m0 + span < end ? m0 + span : end) - q;
            st = store_piece(fn, out, x, ax, pos + q - m0, l, asc ? q : n - 1 - (q - L),
                             asc ? 1 : -1, k, p);
            q += l;
        }
        pos += len;
        mm = 0;
    }
    if (st != ND_OK) {
        nd_fe_release(out);
        return NULL;
    }
    return out;
}

static const char *const pad_mode_names[] = {"constant", "edge", "reflect", "symmetric", "wrap"};

nd_array *nd_pad(nd_array *a, int n, const int64_t (*widths)[2], nd_pad_mode mode,
                 double constant) {
    ND_API_GUARD();
    static const char fn[] = "nd_pad";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    int nd = a->ndim;
    if ((unsigned)mode > ND_PAD_WRAP) {
        nd_error_set(ND_ERR_ARG, "%s: mode %d is not a pad mode (use ND_PAD_CONSTANT, ND_PAD_EDGE, "
                     "ND_PAD_REFLECT, ND_PAD_SYMMETRIC or ND_PAD_WRAP)", fn, (int)mode);
        return NULL;
    }
    if ((n != nd && n != 1) || (n > 0 && !widths)) {
        nd_error_set(ND_ERR_ARG, "%s: got %d (before, after) width pairs%s for a %d-d array (pass "
                     "one pair per axis, or one pair for every axis)", fn, n,
                     widths ? "" : " and a NULL list", nd);
        return NULL;
    }
    int64_t w[ND_MAX_DIMS][2], fsh[ND_MAX_DIMS];
    for (int k = 0; k < nd; k++) {
        const int64_t *p = widths[n == 1 ? 0 : k];
        for (int side = 0; side < 2; side++) {
            if (p[side] < 0) {
                nd_error_set(ND_ERR_ARG, "%s: widths[%d][%d] = %lld is negative (pad widths are "
                             "counts >= 0)", fn, n == 1 ? 0 : k, side, (long long)p[side]);
                return NULL;
            }
            w[k][side] = p[side];
        }
        if (w[k][0] > INT64_MAX / 4 - a->shape[k] || w[k][1] > INT64_MAX / 4 - a->shape[k] - w[k][0]) {
            nd_error_set(ND_ERR_SHAPE, "%s: widths of axis %d make it too long", fn, k);
            return NULL;
        }
        fsh[k] = a->shape[k] + w[k][0] + w[k][1];
        if (mode != ND_PAD_CONSTANT && a->shape[k] == 0 && fsh[k]) {
            nd_error_set(ND_ERR_SHAPE, "%s: axis %d has length 0 and cannot be extended in mode "
                         "'%s' (there is nothing to copy; use ND_PAD_CONSTANT)", fn, k,
                         pad_mode_names[mode]);
            return NULL;
        }
    }
    size_t nbytes;
    if (nd_fe_nbytes(fn, nd, fsh, a->dtype, &nbytes)) return NULL;
    nd_array *x = nd_fe_strong(fn, a);
    if (!x) return NULL;
    nd_array *out;
    if (mode == ND_PAD_CONSTANT) {
        out = pad_constant(fn, x, (const int64_t(*)[2])w, fsh, constant);
        goto done;
    }
    /* All axes at once (every output element read straight from a) unless
     * wide pads make the product of runs large: then axis by axis. */
    double combos = 1; /* an upper bound of the runs' product */
    for (int k = 0; k < nd; k++) {
        double L = (double)chunk_len(mode, a->shape[k]);
        if (L < 1) L = 1;
        combos *= 3.0 + (double)w[k][0] / L + (double)w[k][1] / L;
    }
    if (combos <= 64) {
        out = pad_axes(fn, x, mode, (const int64_t(*)[2])w, 0, nd);
        goto done;
    }
    out = x;
    x->refs++;
    for (int k = 0; k < nd && out; k++) {
        if (!w[k][0] && !w[k][1]) continue;
        /* Widths of many periods: whole periods as broadcast stores. */
        int64_t n = a->shape[k], L = chunk_len(mode, n);
        int wide = mode != ND_PAD_EDGE && !(mode == ND_PAD_REFLECT && n == 1) && nd < ND_MAX_DIMS &&
                   (w[k][0] / L + w[k][1] / L) > 6;
        nd_array *t = wide ? pad_axis_periodic(fn, out, mode, k, w[k])
                           : pad_axes(fn, out, mode, (const int64_t(*)[2])w, k, k + 1);
        nd_fe_release(out);
        out = t;
    }
    if (out == x) { /* no width anywhere: still a new array */
        nd_fe_release(out);
        out = nd_fe_astype(fn, x, x->dtype);
    }
done:
    nd_fe_release(x);
    return nd_runtime_track(out);
}
