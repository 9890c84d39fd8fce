/* nd_convolve_nd: convolution along every axis, direct method. With the
 * signal a zero-padded to P (only as far as the mode reads), output
 * element i is sum over r of P[i + r] * v[m - 1 - r] on every axis (r
 * runs over the filter's shape). A small filter makes that a sum of
 * shifted views of P, each times one of v's values seen as a 0-d view
 * (a small operand, not a host read): one chain of multiplies and adds,
 * which the scheduler fuses into one kernel that reads P's neighbourhood
 * once per output. A large filter would give a chain past the fusion
 * limit; it becomes one reduction over a strided window view of P
 * instead (the 1-d nd_convolve's scheme), which needs 2 * ndim <= 8.
 * The FFT method and AUTO's choice between the two are convolve_fft.c's. */
#include <string.h>

#include "common/dtype.h"
#include "frontend/convolve.h"
#include "frontend/frontend.h"
#include "frontend/reduction.h"

/* Filters of up to this many elements are a fused sum of shifted views. */
#define SHIFTED_SUM_MAX 64

static int check_input(const char *fn, const char *name, nd_array *x) {
    if (nd_fe_arg(fn, name, x)) return -1;
    nd_dtype_kind k = nd_dtype_kind_of(x->dtype);
    if (x->dtype != ND_BOOL && k != ND_KIND_INT && k != ND_KIND_UINT && k != ND_KIND_FLOAT &&
        !nd_dtype_is_complex(x->dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: %s of dtype %s (give numbers)", fn, name, nd_dtype_name(x->dtype));
        return -1;
    }
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] == 0) {
            char s[200];
            nd_error_set(ND_ERR_SHAPE, "%s: %s of shape %s is empty (convolution needs values on every axis)",
                         fn, name, nd_format_shape(s, sizeof s, x->ndim, x->shape));
            return -1;
        }
    return 0;
}

/* x in dtype t as a new reference. */
static nd_array *as_type(const char *fn, nd_array *x, nd_dtype t) {
    if (x->dtype == t && !x->weak) {
        x->refs++;
        return x;
    }
    return nd_fe_astype(fn, x, t);
}

/* a with lo[d] zeros before and hi[d] after along every axis d. */
static nd_array *zero_padded(const char *fn, nd_array *a, const int64_t *lo, const int64_t *hi) {
    int nd = a->ndim, any = 0;
    int64_t shape[ND_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        shape[d] = lo[d] + a->shape[d] + hi[d];
        any |= lo[d] || hi[d];
    }
    if (!any) {
        a->refs++;
        return a;
    }
    nd_array *p = nd_fe_full(fn, a->dtype, nd, shape, (nd_scalar_bits){0});
    if (!p) return NULL;
    int64_t off = p->offset;
    for (int d = 0; d < nd; d++) off += lo[d] * p->strides[d];
    nd_array *mid = nd_fe_view(p, nd, a->shape, p->strides, off);
    nd_status st = mid ? nd_fe_store(fn, mid, a) : nd_last_status();
    if (mid) nd_fe_release(mid);
    if (st != ND_OK) {
        nd_fe_release(p);
        return NULL;
    }
    return p;
}

/* sum over r of P[i + r] * v[m - 1 - r], as a chain of shifted views. */
static nd_array *shifted_sum(const char *fn, nd_array *p, nd_array *v, int nd, const int64_t *out_shape) {
    int64_t r[ND_MAX_DIMS] = {0};
    const int64_t count = nd_shape_size(v->ndim, v->shape);
    nd_array *acc = NULL;
    for (int64_t t = 0; t < count; t++) {
        int64_t poff = p->offset, voff = v->offset;
        for (int d = 0; d < nd; d++) {
            poff += r[d] * p->strides[d];
            voff += (v->shape[d] - 1 - r[d]) * v->strides[d];
        }
        nd_array *win = nd_fe_view(p, nd, out_shape, p->strides, poff);
        nd_array *tap = win ? nd_fe_view(v, 0, out_shape, p->strides, voff) : NULL;
        nd_array *term = tap ? nd_fe_binary(fn, ND_OP_MUL, win, tap) : NULL;
        nd_array *next = term && acc ? nd_fe_binary(fn, ND_OP_ADD, acc, term) : term;
        if (win) nd_fe_release(win);
        if (tap) nd_fe_release(tap);
        if (term && next != term) nd_fe_release(term);
        if (acc) nd_fe_release(acc);
        acc = next;
        if (!acc) return NULL;
        for (int d = nd - 1; d >= 0; d--) { /* the next filter index, row-major */
            if (++r[d] < v->shape[d]) break;
            r[d] = 0;
        }
    }
    return acc;
}

/* The same sum as one reduction over the (out..., m...) window view. */
static nd_array *window_sum(const char *fn, nd_array *p, nd_array *v, int nd, const int64_t *out_shape,
                            nd_dtype rt) {
    int64_t wsh[ND_MAX_DIMS], wst[ND_MAX_DIMS], fst[ND_MAX_DIMS], voff = v->offset;
    for (int d = 0; d < nd; d++) {
        wsh[d] = out_shape[d], wsh[nd + d] = v->shape[d];
        wst[d] = wst[nd + d] = p->strides[d];
        fst[d] = 0, fst[nd + d] = -v->strides[d]; /* the filter reversed */
        voff += (v->shape[d] - 1) * v->strides[d];
    }
    nd_array *win = nd_fe_view(p, 2 * nd, wsh, wst, p->offset);
    nd_array *flt = win ? nd_fe_view(v, 2 * nd, wsh, fst, voff) : NULL;
    nd_array *prod = flt ? nd_fe_binary(fn, ND_OP_MUL, win, flt) : NULL;
    const uint32_t mask = ((1u << nd) - 1u) << nd;
    nd_array *sum = prod ? nd_fe_reduce_mask(fn, ND_REDUCE_SUM, prod, mask, 0, NULL) : NULL;
    nd_array *out = sum ? as_type(fn, sum, rt) : NULL; /* sums widen small ints and bool */
    nd_array *tmp[4] = {win, flt, prod, sum};
    for (int i = 0; i < 4; i++)
        if (tmp[i]) nd_fe_release(tmp[i]);
    return out;
}

static nd_array *convolve_direct(const char *fn, nd_array *a, nd_array *v, nd_conv_mode mode, nd_dtype rt) {
    const int nd = a->ndim;
    int64_t lo[ND_MAX_DIMS], hi[ND_MAX_DIMS], out_shape[ND_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        const int64_t n = a->shape[d], m = v->shape[d];
        const int64_t start = mode == ND_CONV_FULL ? 0 : mode == ND_CONV_SAME ? (m - 1) / 2 : m - 1;
        out_shape[d] = mode == ND_CONV_FULL ? n + m - 1 : mode == ND_CONV_SAME ? n : n - m + 1;
        lo[d] = m - 1 - start;
        hi[d] = out_shape[d] + m - 1 - lo[d] - n;
    }
    nd_array *ac = as_type(fn, a, rt), *vc = ac ? as_type(fn, v, rt) : NULL;
    nd_array *p = vc ? zero_padded(fn, ac, lo, hi) : NULL, *out = NULL;
    if (p) {
        const int64_t taps = nd_shape_size(nd, v->shape);
        out = taps <= SHIFTED_SUM_MAX || 2 * nd > ND_MAX_DIMS ? shifted_sum(fn, p, vc, nd, out_shape)
                                                              : window_sum(fn, p, vc, nd, out_shape, rt);
    }
    nd_array *tmp[3] = {ac, vc, p};
    for (int i = 0; i < 3; i++)
        if (tmp[i]) nd_fe_release(tmp[i]);
    return out;
}

nd_array *nd_convolve_nd(nd_array *a, nd_array *v, nd_conv_mode mode, nd_conv_method method) {
    ND_API_GUARD();
    static const char fn[] = "nd_convolve_nd";
    if (check_input(fn, "a", a) || check_input(fn, "v", v) || nd_runtime_ensure() != ND_OK) return NULL;
    if (mode != ND_CONV_FULL && mode != ND_CONV_SAME && mode != ND_CONV_VALID) {
        nd_error_set(ND_ERR_ARG, "%s: mode %d is not one of ND_CONV_FULL, ND_CONV_SAME, ND_CONV_VALID", fn,
                     (int)mode);
        return NULL;
    }
    if (method != ND_CONV_AUTO && method != ND_CONV_DIRECT && method != ND_CONV_FFT) {
        nd_error_set(ND_ERR_ARG, "%s: method %d is not one of ND_CONV_AUTO, ND_CONV_DIRECT, ND_CONV_FFT", fn,
                     (int)method);
        return NULL;
    }
    char s1[200], s2[200];
    if (a->ndim != v->ndim) {
        nd_error_set(ND_ERR_SHAPE, "%s: a has shape %s and v has shape %s: they need the same number of "
                     "dimensions", fn, nd_format_shape(s1, sizeof s1, a->ndim, a->shape),
                     nd_format_shape(s2, sizeof s2, v->ndim, v->shape));
        return NULL;
    }
    nd_dtype rt = nd_fe_result_type(fn, a, v, 0);
    if (rt == ND_NUM_DTYPES) return NULL;
    if (a->ndim == 0) return nd_runtime_track(nd_fe_binary(fn, ND_OP_MUL, a, v));
    int a_covers = 1, v_covers = 1;
    for (int d = 0; d < a->ndim; d++) {
        a_covers &= a->shape[d] >= v->shape[d];
        v_covers &= v->shape[d] >= a->shape[d];
    }
    if (mode == ND_CONV_VALID && !a_covers && !v_covers) {
        nd_error_set(ND_ERR_SHAPE, "%s: in valid mode one of a %s and v %s must be at least as large as the other "
                     "on every axis", fn, nd_format_shape(s1, sizeof s1, a->ndim, a->shape),
                     nd_format_shape(s2, sizeof s2, v->ndim, v->shape));
        return NULL;
    }
    /* NumPy swaps a shorter 1-d a with v; scipy swaps for 'valid' only
     * (convolution commutes, so only the output's extent changes). */
    if (!a_covers && (a->ndim == 1 || mode == ND_CONV_VALID)) {
        nd_array *t = a;
        a = v, v = t;
    }
    if (method == ND_CONV_AUTO) method = nd_conv_auto_fft(a->ndim, a->shape, v->shape, mode, rt) ? ND_CONV_FFT
                                                                                                 : ND_CONV_DIRECT;
    if (method == ND_CONV_FFT) return nd_runtime_track(nd_fe_convolve_fft(fn, a, v, mode, rt));
    return nd_runtime_track(convolve_direct(fn, a, v, mode, rt));
}
