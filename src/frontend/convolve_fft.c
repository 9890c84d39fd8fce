/* The FFT method of convolution (frontend/convolve.h): both operands
 * zero-padded to a fast length per axis inside the forward transforms
 * (rfftn for real results, fftn for complex), the spectra multiplied
 * together with the 1/L of the inverse folded in (one elementwise kernel),
 * the inverse transform, and the mode's window of it as a view. Integer
 * and bool results are rounded to the nearest integer and cast.
 *
 * The transform length per axis need not hold the whole linear
 * convolution: circular convolution of length L aliases full-result index
 * t onto t mod L, and the window [s, e) of the mode reads only indices that
 * no other nonzero index aliases onto when L >= max(e, n + m - 1 - s):
 * 'valid' needs only L >= n, 'same' about n + m / 2. */
#include <math.h>

#include "common/dtype.h"
#include "frontend/compose.h"
#include "frontend/convolve.h"

/* ND_CONV_AUTO takes the FFT when out_size * taps (the direct method's
 * multiply-adds) exceeds FFT_WEIGHT * L log2 L (L: the product of the
 * padded lengths; three transforms of about L log2 L operations each at
 * a lower throughput than the fused direct kernel's, plus the padding
 * copies and the spectra's product). With 6, 'same' on a 2^22 signal
 * switches at 133 taps, on a 2048 x 2048 image at a 13 x 13 filter, on
 * 512 x 512 at 11 x 11. nd-cpu on 2^18 float32 (bench/convolve_bench.c,
 * which the GPU runs too): 64 taps direct 3.5 ms vs FFT 5.2 ms, 4096 taps
 * 276 ms vs 6.3 ms. */
#define FFT_WEIGHT 6.0

int64_t nd_conv_fast_len(int64_t n) {
    int64_t best = 1;
    while (best < n) best *= 2; /* a power of two always qualifies */
    for (int64_t p7 = 1; p7 < best; p7 *= 7)
        for (int64_t p5 = p7; p5 < best; p5 *= 5)
            for (int64_t p3 = p5; p3 < best; p3 *= 3) {
                int64_t p = p3;
                while (p < n) p *= 2;
                if (p < best) best = p;
            }
    return best;
}

/* Output start, extent and transform length of one axis. */
static void axis_plan(int64_t n, int64_t m, nd_conv_mode mode, int64_t *start, int64_t *out, int64_t *len) {
    const int64_t s = mode == ND_CONV_FULL ? 0 : mode == ND_CONV_SAME ? (m - 1) / 2 : m - 1;
    const int64_t o = mode == ND_CONV_FULL ? n + m - 1 : mode == ND_CONV_SAME ? n : n - m + 1;
    const int64_t need = s + o > n + m - 1 - s ? s + o : n + m - 1 - s;
    *start = s, *out = o, *len = nd_conv_fast_len(need);
}

int nd_conv_auto_fft(int nd, const int64_t *n, const int64_t *m, nd_conv_mode mode, nd_dtype rt) {
    /* Integer and bool results stay direct: exact, and wrapping as NumPy. */
    if (!nd_dtype_is_float(rt) && !nd_dtype_is_complex(rt)) return 0;
    double outs = 1, taps = 1, len = 1;
    for (int d = 0; d < nd; d++) {
        int64_t s, o, l;
        axis_plan(n[d], m[d], mode, &s, &o, &l);
        outs *= (double)o, taps *= (double)m[d], len *= (double)l;
    }
    return len > 1 && outs * taps > FFT_WEIGHT * len * log2(len);
}

static nd_array *as_dtype(const char *fn, nd_array *x, nd_dtype t) {
    if (x->dtype == t && !x->weak) {
        x->refs++;
        return x;
    }
    return nd_fe_astype(fn, x, t);
}

nd_array *nd_fe_convolve_fft(const char *fn, nd_array *a, nd_array *v, nd_conv_mode mode, nd_dtype rt) {
    const int nd = a->ndim, cplx = nd_dtype_is_complex(rt);
    /* The transforms' precision: single for complex64 and the float
     * formats up to float32 (as nd_fft), double for everything else. */
    const nd_dtype wt = cplx ? rt
                             : rt == ND_FLOAT16 || rt == ND_BFLOAT16 || rt == ND_FLOAT32 ? ND_FLOAT32 : ND_FLOAT64;
    int64_t start[ND_MAX_DIMS], out_shape[ND_MAX_DIMS], len[ND_MAX_DIMS];
    double total = 1;
    for (int d = 0; d < nd; d++) {
        axis_plan(a->shape[d], v->shape[d], mode, &start[d], &out_shape[d], &len[d]);
        total *= (double)len[d];
    }
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    const nd_fe_fft_which fwd = cplx ? ND_FE_FFTN : ND_FE_RFFTN, inv = cplx ? ND_FE_IFFTN : ND_FE_IRFFTN;
    /* The casts fuse into the transforms' zero-padding copies. */
    nd_array *ac = nd_fe_tmp(&t, as_dtype(fn, a, wt)), *vc = ac ? nd_fe_tmp(&t, as_dtype(fn, v, wt)) : NULL;
    nd_array *fa = vc ? nd_fe_tmp(&t, nd_fe_fft_all_axes(fn, fwd, ac, len)) : NULL;
    nd_array *fv = fa ? nd_fe_tmp(&t, nd_fe_fft_all_axes(fn, fwd, vc, len)) : NULL;
    nd_array *scale = fv ? nd_fe_tmp(&t, nd_fe_scalar(1.0 / total)) : NULL;
    nd_array *p1 = scale ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MUL, fa, fv)) : NULL;
    nd_array *prod = p1 ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MUL, p1, scale)) : NULL;
    nd_array *full = prod ? nd_fe_tmp(&t, nd_fe_fft_all_axes(fn, inv, prod, len)) : NULL;
    if (!full) goto done;
    int64_t off = full->offset;
    for (int d = 0; d < nd; d++) off += start[d] * full->strides[d];
    nd_array *win = nd_fe_tmp(&t, nd_fe_view(full, nd, out_shape, full->strides, off));
    if (!win) goto done;
    if (win->dtype == rt) {
        win->refs++;
        result = win;
    } else if (!nd_dtype_is_float(rt) && !cplx) {
        /* Integers and bool: the nearest integer of an inexact sum. */
        nd_array *r = nd_fe_tmp(&t, nd_fe_unary(fn, ND_OP_RINT, win));
        if (r) result = nd_fe_astype(fn, r, rt);
    } else {
        result = nd_fe_astype(fn, win, rt);
    }
done:
    nd_fe_temps_release(&t);
    return result;
}
