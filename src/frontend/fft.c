/* numpy.fft's transforms (include/nd/fft.h): argument checks, NumPy 2's
 * dtypes and sizes, then one ND_LIB_FFT call (common/lib_fft.h) per group
 * of up to three axes. Each call takes a packed operand whose transformed
 * axes are last: the copy that crops, zero-pads, converts and moves the
 * axes there is a lazy kernel that fuses with the input's producer, and
 * the result is seen through the inverse transposition (a free view). The
 * norm factor is a lazy multiply after the last call. */
#include <math.h>
#include <string.h>

#include "common/lib_fft.h"
#include "frontend/convolve.h"
#include "frontend/frontend.h"

/* What a public function asks for. */
typedef enum { FFT_C2C, FFT_R2C, FFT_C2R } fft_kind;

typedef struct {
    const char *fn;
    fft_kind kind;
    int sign;      /* -1 forward, +1 backward */
    int inverse;   /* the norm scales it as an inverse transform */
    int conj_in, conj_out; /* hfft, ihfft */
} fft_call;

static int single(nd_dtype t) {
    return t == ND_FLOAT16 || t == ND_BFLOAT16 || t == ND_FLOAT32 || t == ND_COMPLEX64;
}

static int check_norm(const char *fn, nd_fft_norm norm) {
    if ((unsigned)norm <= ND_FFT_FORWARD) return 0;
    nd_error_set(ND_ERR_ARG, "%s: norm %d is not one of ND_FFT_BACKWARD, ND_FFT_ORTHO, ND_FFT_FORWARD", fn,
                 (int)norm);
    return -1;
}

static int check_n(const char *fn, int64_t n) {
    if (n >= 1) return 0;
    nd_error_set(ND_ERR_ARG, "%s: Invalid number of FFT data points (%lld) specified", fn, (long long)n);
    return -1;
}

/* x with axes ax[0..na) moved last (in that order) and cut or zero-padded
 * to len[k] along ax[k], of dtype t, packed. perm receives the order. */
static nd_array *pack(const char *fn, nd_array *x, nd_dtype t, int na, const int *ax, const int64_t *len, int *perm) {
    int nd = x->ndim, np = 0;
    for (int d = 0; d < nd; d++) {
        int moved = 0;
        for (int k = 0; k < na; k++) moved |= ax[k] == d;
        if (!moved) perm[np++] = d;
    }
    for (int k = 0; k < na; k++) perm[np++] = ax[k];
    int64_t sh[ND_MAX_DIMS] = {0}, st[ND_MAX_DIMS] = {0}, want[ND_MAX_DIMS] = {0};
    int pad = 0;
    for (int d = 0; d < nd; d++) {
        sh[d] = want[d] = x->shape[perm[d]];
        st[d] = x->strides[perm[d]];
        if (d >= nd - na) {
            want[d] = len[d - (nd - na)];
            if (want[d] < sh[d]) sh[d] = want[d]; /* crop */
            pad |= want[d] > sh[d];
        }
    }
    nd_array *v = nd_fe_view(x, nd, sh, st, x->offset);
    if (!v) return NULL;
    if (!pad) {
        nd_array *p = v;
        if (v->dtype != t || !nd_array_is_contiguous(v)) p = nd_fe_astype(fn, v, t);
        else v->refs++;
        nd_fe_release(v);
        return p;
    }
    /* Zero-padded: v into the corner, zeros into the rest, slab by slab. */
    nd_array *out = nd_fe_empty(fn, t, nd, want);
    nd_array *zero = out ? nd_fe_full(fn, t, 0, NULL, nd_fe_double_bits(0.0, t)) : NULL;
    nd_status s = zero ? ND_OK : nd_last_status();
    if (s == ND_OK && nd_shape_size(nd, sh)) {
        nd_array *corner = nd_fe_view(out, nd, sh, out->strides, 0);
        s = corner ? nd_fe_store(fn, corner, v) : nd_last_status();
        nd_fe_release(corner);
    }
    for (int d = nd - na; s == ND_OK && d < nd; d++) {
        if (want[d] == sh[d]) continue;
        int64_t bsh[ND_MAX_DIMS];
        for (int e = 0; e < nd; e++) bsh[e] = e < d ? sh[e] : want[e];
        bsh[d] = want[d] - sh[d];
        if (!nd_shape_size(nd, bsh)) continue;
        nd_array *slab = nd_fe_view(out, nd, bsh, out->strides, sh[d] * out->strides[d]);
        s = slab ? nd_fe_store(fn, slab, zero) : nd_last_status();
        nd_fe_release(slab);
    }
    nd_fe_release(zero);
    nd_fe_release(v);
    if (s != ND_OK) {
        nd_fe_release(out);
        return NULL;
    }
    return out;
}

/* One routine call over axes ax[0..na) (na <= 3; C2R: 1) of x: returns
 * the result in x's axis order. len: the transform lengths (C2R: the
 * output length; the input is cut or padded to len / 2 + 1). */
static nd_array *call(const char *fn, nd_array *x, fft_kind kind, int sign, int single_prec, int na, const int *ax,
                      const int64_t *len) {
    nd_dtype ct = single_prec ? ND_COMPLEX64 : ND_COMPLEX128, rt = single_prec ? ND_FLOAT32 : ND_FLOAT64;
    int64_t in_len[ND_LIB_FFT_MAX_RANK];
    memcpy(in_len, len, (size_t)na * sizeof *len);
    if (kind == FFT_C2R) in_len[na - 1] = len[na - 1] / 2 + 1;
    int perm[ND_MAX_DIMS];
    nd_array *p = pack(fn, x, kind == FFT_R2C ? rt : ct, na, ax, in_len, perm);
    if (!p) return NULL;
    int nd = p->ndim;
    int64_t osh[ND_MAX_DIMS];
    memcpy(osh, p->shape, sizeof osh);
    if (kind == FFT_R2C) osh[nd - 1] = len[na - 1] / 2 + 1;
    if (kind == FFT_C2R) osh[nd - 1] = len[na - 1];
    nd_dtype ot = kind == FFT_C2R ? rt : ct;
    nd_array *r = NULL;
    if (nd_shape_size(nd, osh) == 0) {
        r = nd_fe_full(fn, ot, nd, osh, nd_fe_double_bits(0.0, ot)); /* an empty batch */
    } else {
        static const int kinds[3] = {ND_LIB_FFT_C2C, ND_LIB_FFT_R2C, ND_LIB_FFT_C2R};
        nd_kernel_output o = {NULL, ot, nd, osh};
        nd_lib_args args = {{{.i = kinds[kind]}, {.i = sign}, {.i = na}, {.i = 0}}};
        nd_fe_lib_call(fn, ND_LIB_FFT, &args, 1, &p, 1, &o, &r);
    }
    nd_fe_release(p);
    if (!r) return NULL;
    /* Back into x's axis order: result axis perm[d] is r's axis d. */
    int64_t sh[ND_MAX_DIMS] = {0}, st[ND_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) {
        sh[perm[d]] = r->shape[d];
        st[perm[d]] = r->strides[d];
    }
    nd_array *v = nd_fe_view(r, nd, sh, st, r->offset);
    nd_fe_release(r);
    return v;
}

/* The transform of c over axes ax[0..na) with lengths len (C2R: the
 * output lengths), scaled by the norm; a is checked, the axes distinct. */
static nd_array *transform(const fft_call *c, nd_array *a, int na, const int *ax, const int64_t *len,
                           nd_fft_norm norm) {
    const char *fn = c->fn;
    nd_dtype t = a->dtype;
    int sp = single(t);
    if (nd_dtype_is_complex(t) && c->kind == FFT_R2C) {
        nd_error_set(ND_ERR_DTYPE, "%s: a is %s; this transform takes real input (NumPy 2 raises TypeError; "
                     "use the complex transform, or nd_real first)", fn, nd_dtype_name(t));
        return NULL;
    }
    double total = 1;
    for (int k = 0; k < na; k++) total *= (double)len[k];
    nd_array *x = a;
    a->refs++;
    if (c->conj_in && nd_dtype_is_complex(t)) {
        nd_array *cj = nd_fe_unary(fn, ND_OP_CONJ, x);
        nd_fe_release(x);
        if (!(x = cj)) return NULL;
    }
    /* Groups of up to three axes, the last group first (the group of a
     * real forward transform ends with the real axis). irfftn runs the
     * complex axes first and the real one last, as NumPy, so that any
     * input, Hermitian or not, gives NumPy's answer. */
    int end = c->kind == FFT_C2R ? na - 1 : na;
    while (x && end > 0) {
        int g = end < ND_LIB_FFT_MAX_RANK ? end : ND_LIB_FFT_MAX_RANK, begin = end - g;
        fft_kind k = c->kind == FFT_R2C && end == na ? FFT_R2C : FFT_C2C;
        nd_array *y = call(fn, x, k, c->sign, sp, g, ax + begin, len + begin);
        nd_fe_release(x);
        x = y;
        end = begin;
    }
    if (x && c->kind == FFT_C2R) {
        nd_array *y = call(fn, x, FFT_C2R, c->sign, sp, 1, ax + na - 1, len + na - 1);
        nd_fe_release(x);
        x = y;
    }
    if (!x) return NULL;
    /* The norm: forward transforms scale by 1 (backward), 1/sqrt(n)
     * (ortho), 1/n (forward); inverse ones the other way round. */
    double scale = 1;
    if (norm == ND_FFT_ORTHO) scale = 1 / sqrt(total);
    else if ((norm == ND_FFT_FORWARD) != c->inverse) scale = 1 / total;
    if (scale != 1) {
        nd_array *s = nd_fe_scalar(scale);
        nd_array *y = s ? nd_fe_binary(fn, ND_OP_MUL, x, s) : NULL;
        nd_fe_release(s);
        nd_fe_release(x);
        if (!(x = y)) return NULL;
    }
    if (c->conj_out) {
        nd_array *y = nd_fe_unary(fn, ND_OP_CONJ, x);
        nd_fe_release(x);
        if (!(x = y)) return NULL;
    }
    if (c->kind == FFT_C2R && (t == ND_FLOAT16 || t == ND_BFLOAT16)) {
        nd_array *y = nd_fe_astype(fn, x, t); /* NumPy: irfft of float16 is float16 */
        nd_fe_release(x);
        x = y;
    }
    return x;
}

/* Checks a and its axes (normalised into ax, distinct). */
static int check_axes(const char *fn, nd_array *a, int na, const int *axes, int *ax) {
    if (a->ndim == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is 0-d; a transform needs an axis (reshape it to 1-d)", fn);
        return -1;
    }
    if (na < 1 || na > a->ndim) {
        nd_error_set(ND_ERR_ARG, "%s: %d axes for a %d-d array (1 to %d)", fn, na, a->ndim, a->ndim);
        return -1;
    }
    for (int k = 0; k < na; k++) {
        if (nd_fe_axis(fn, axes[k], a->ndim, &ax[k])) return -1;
        for (int j = 0; j < k; j++)
            if (ax[j] == ax[k]) {
                nd_error_set(ND_ERR_ARG, "%s: axis %d is repeated in axes (each axis may be transformed once)", fn,
                             ax[k]);
                return -1;
            }
    }
    return 0;
}

static nd_array *one_axis(const fft_call *c, nd_array *a, int64_t n, int axis, nd_fft_norm norm) {
    const char *fn = c->fn;
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK || check_norm(fn, norm)) return NULL;
    int ax;
    if (check_axes(fn, a, 1, &axis, &ax)) return NULL;
    if (n == -1) n = c->kind == FFT_C2R ? 2 * (a->shape[ax] - 1) : a->shape[ax];
    if (check_n(fn, n)) return NULL;
    return nd_runtime_track(transform(c, a, 1, &ax, &n, norm));
}

nd_array *nd_fft_fft(nd_array *a, int64_t n, int axis, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_fft", FFT_C2C, -1, 0, 0, 0};
    return one_axis(&c, a, n, axis, norm);
}
nd_array *nd_fft_ifft(nd_array *a, int64_t n, int axis, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_ifft", FFT_C2C, 1, 1, 0, 0};
    return one_axis(&c, a, n, axis, norm);
}
nd_array *nd_fft_rfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_rfft", FFT_R2C, -1, 0, 0, 0};
    return one_axis(&c, a, n, axis, norm);
}
nd_array *nd_fft_irfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_irfft", FFT_C2R, 1, 1, 0, 0};
    return one_axis(&c, a, n, axis, norm);
}
/* hfft(a) = irfft(conj(a)) with the norm swapped: scaled as a forward
 * transform; ihfft(a) = conj(rfft(a)) scaled as an inverse one. */
nd_array *nd_fft_hfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_hfft", FFT_C2R, 1, 0, 1, 0};
    return one_axis(&c, a, n, axis, norm);
}
nd_array *nd_fft_ihfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_ihfft", FFT_R2C, -1, 1, 0, 1};
    return one_axis(&c, a, n, axis, norm);
}

/* The n-d functions: NumPy's _cook_nd_args. two: the *2 functions (axes
 * default (-2, -1)). */
static nd_array *n_axes(const fft_call *c, int two, nd_array *a, int s_len, const int64_t *s, int axes_len,
                        const int *axes, nd_fft_norm norm) {
    const char *fn = c->fn;
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK || check_norm(fn, norm)) return NULL;
    if (a->ndim == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is 0-d; a transform needs an axis (reshape it to 1-d)", fn);
        return NULL;
    }
    int def[ND_MAX_DIMS], na;
    if (s && (s_len < 1 || s_len > ND_MAX_DIMS)) {
        nd_error_set(ND_ERR_ARG, "%s: s has %d sizes (1 to %d)", fn, s_len, ND_MAX_DIMS);
        return NULL;
    }
    if (axes) {
        na = axes_len;
    } else if (two) {
        na = 2;
        def[0] = -2, def[1] = -1;
        axes = def;
    } else {
        na = s ? s_len : a->ndim;
        for (int k = 0; k < na; k++) def[k] = k - na;
        axes = def;
    }
    if (s && s_len != na) {
        nd_error_set(ND_ERR_ARG, "%s: Shape and axes have different lengths (s has %d, axes %d)", fn, s_len, na);
        return NULL;
    }
    int ax[ND_MAX_DIMS];
    if (check_axes(fn, a, na, axes, ax)) return NULL;
    int64_t len[ND_MAX_DIMS];
    for (int k = 0; k < na; k++) {
        len[k] = a->shape[ax[k]];
        if (c->kind == FFT_C2R && !s && k == na - 1) len[k] = 2 * (len[k] - 1);
        if (s) len[k] = s[k] == -1 ? a->shape[ax[k]] : s[k];
        if (check_n(fn, len[k])) return NULL;
    }
    return nd_runtime_track(transform(c, a, na, ax, len, norm));
}

nd_array *nd_fft_fftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_fftn", FFT_C2C, -1, 0, 0, 0};
    return n_axes(&c, 0, a, s_len, s, axes_len, axes, norm);
}
nd_array *nd_fft_ifftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_ifftn", FFT_C2C, 1, 1, 0, 0};
    return n_axes(&c, 0, a, s_len, s, axes_len, axes, norm);
}
nd_array *nd_fft_rfftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_rfftn", FFT_R2C, -1, 0, 0, 0};
    return n_axes(&c, 0, a, s_len, s, axes_len, axes, norm);
}
nd_array *nd_fft_irfftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_irfftn", FFT_C2R, 1, 1, 0, 0};
    return n_axes(&c, 0, a, s_len, s, axes_len, axes, norm);
}
nd_array *nd_fft_fft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_fft2", FFT_C2C, -1, 0, 0, 0};
    return n_axes(&c, 1, a, s_len, s, axes_len, axes, norm);
}
nd_array *nd_fft_ifft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_ifft2", FFT_C2C, 1, 1, 0, 0};
    return n_axes(&c, 1, a, s_len, s, axes_len, axes, norm);
}
nd_array *nd_fft_rfft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_rfft2", FFT_R2C, -1, 0, 0, 0};
    return n_axes(&c, 1, a, s_len, s, axes_len, axes, norm);
}
nd_array *nd_fft_irfft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes, nd_fft_norm norm) {
    ND_API_GUARD();
    static const fft_call c = {"nd_fft_irfft2", FFT_C2R, 1, 1, 0, 0};
    return n_axes(&c, 1, a, s_len, s, axes_len, axes, norm);
}

/* Unnormalised transforms over every axis for other frontend code (the
 * FFT convolution, frontend/convolve.h): neither direction is scaled (the
 * caller folds 1/n into its own elementwise work); lengths len, errors
 * named by fn. a is known good (numeric, at least 1-d, len >= 1). */
nd_array *nd_fe_fft_all_axes(const char *fn, nd_fe_fft_which which, nd_array *a, const int64_t *len) {
    static const fft_kind kinds[4] = {FFT_R2C, FFT_C2R, FFT_C2C, FFT_C2C};
    static const int signs[4] = {-1, 1, -1, 1}, inverse[4] = {0, 1, 0, 1};
    fft_call c = {fn, kinds[which], signs[which], inverse[which], 0, 0};
    int ax[ND_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) ax[d] = d;
    /* BACKWARD leaves forward transforms unscaled, FORWARD inverse ones. */
    return transform(&c, a, a->ndim, ax, len, inverse[which] ? ND_FFT_FORWARD : ND_FFT_BACKWARD);
}
