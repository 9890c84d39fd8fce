/* numpy.fft's helpers (include/nd/fft.h): the sample frequencies and the
 * shifts of the zero frequency to the middle and back. */
#include <string.h>

#include "frontend/frontend.h"

/* k * (1 / (n d)) in float64 for the integers k of `parts` aranges
 * (NumPy: an int arange times the Python float val). */
static nd_array *freqs(const char *fn, int parts, const int64_t *start, const int64_t *count, int64_t n, double d) {
    if (n < 1 || d == 0) {
        nd_error_set(ND_ERR_ARG, "%s: n = %lld, d = %g: n must be >= 1 and d nonzero (NumPy divides by n * d)", fn,
                     (long long)n, d);
        return NULL;
    }
    double val = 1.0 / ((double)n * d);
    nd_array *k[2] = {NULL, NULL}, *all = NULL, *out = NULL;
    int want = 0, made = 0;
    for (int p = 0; p < parts; p++) {
        if (count[p] <= 0) continue; /* fftfreq(1): no negative part */
        want++;
        if ((k[made] = nd_fe_arange(fn, ND_FLOAT64, (double)start[p], 1.0, count[p]))) made++;
    }
    if (made == want) all = made == 1 ? (k[0]->refs++, k[0]) : nd_fe_concatenate(fn, 2, k, 0);
    nd_array *s = all ? nd_fe_scalar(val) : NULL;
    if (s) out = nd_fe_binary(fn, ND_OP_MUL, all, s);
    nd_fe_release(s);
    nd_fe_release(all);
    for (int p = 0; p < made; p++) nd_fe_release(k[p]);
    return out;
}

nd_array *nd_fft_fftfreq(int64_t n, double d) {
    ND_API_GUARD();
    static const char fn[] = "nd_fft_fftfreq";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    /* [0, 1, ..., (n - 1) / 2] then [-(n / 2), ..., -1] */
    int64_t start[2] = {0, -(n / 2)}, count[2] = {(n - 1) / 2 + 1, n / 2};
    return nd_runtime_track(freqs(fn, 2, start, count, n, d));
}

nd_array *nd_fft_rfftfreq(int64_t n, double d) {
    ND_API_GUARD();
    static const char fn[] = "nd_fft_rfftfreq";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    int64_t start[1] = {0}, count[1] = {n / 2 + 1};
    return nd_runtime_track(freqs(fn, 1, start, count, n, d));
}

/* x rolled by shift[d] (0 <= shift[d] < len) along every axis at once:
 * out[(i + shift) % len] = x[i], one store per combination of the two
 * runs of each rolled axis, so every element is written once. */
static nd_array *roll_all(const char *fn, nd_array *x, const int64_t *shift) {
    int nd = x->ndim, rolled[ND_MAX_DIMS], nr = 0;
    for (int d = 0; d < nd; d++)
        if (shift[d]) rolled[nr++] = d;
    if (nr == 0) return nd_fe_astype(fn, x, x->dtype);
    nd_array *out = nd_fe_empty(fn, x->dtype, nd, x->shape);
    nd_status s = out ? ND_OK : nd_last_status();
    for (int combo = 0; s == ND_OK && combo < (1 << nr); combo++) {
        int64_t sh[ND_MAX_DIMS], ist[ND_MAX_DIMS], ost[ND_MAX_DIMS], ioff = x->offset, ooff = 0;
        memcpy(sh, x->shape, sizeof sh);
        memcpy(ist, x->strides, sizeof ist);
        memcpy(ost, out->strides, sizeof ost);
        for (int r = 0; r < nr; r++) {
            int d = rolled[r];
            int64_t len = x->shape[d], k = shift[d];
            if (combo >> r & 1) { /* x[len - k:] -> out[:k] */
                sh[d] = k;
                ioff += (len - k) * x->strides[d];
            } else { /* x[:len - k] -> out[k:] */
                sh[d] = len - k;
                ooff += k * out->strides[d];
            }
        }
        if (nd_shape_size(nd, sh) == 0) continue;
        nd_array *src = nd_fe_view(x, nd, sh, ist, ioff), *dst = src ? nd_fe_view(out, nd, sh, ost, ooff) : NULL;
        s = dst ? nd_fe_store(fn, dst, src) : nd_last_status();
        nd_fe_release(src);
        nd_fe_release(dst);
    }
    if (s != ND_OK) {
        nd_fe_release(out);
        return NULL;
    }
    return out;
}

static nd_array *shift(const char *fn, nd_array *x, int axes_len, const int *axes, int inverse) {
    if (nd_fe_arg(fn, "x", x) || nd_runtime_ensure() != ND_OK) return NULL;
    int64_t sh[ND_MAX_DIMS] = {0};
    if (axes && (axes_len < 0 || axes_len > 64)) {
        nd_error_set(ND_ERR_ARG, "%s: axes_len %d (0 to 64)", fn, axes_len);
        return NULL;
    }
    int n = axes ? axes_len : x->ndim;
    for (int k = 0; k < n; k++) {
        int ax = k;
        if (axes && nd_fe_axis(fn, axes[k], x->ndim, &ax)) return NULL;
        int64_t len = x->shape[ax];
        if (len) sh[ax] = (sh[ax] + (inverse ? len - len / 2 : len / 2)) % len; /* repeated axes add, as np.roll */
    }
    nd_array *s = nd_fe_strong(fn, x);
    nd_array *out = s ? roll_all(fn, s, sh) : NULL;
    nd_fe_release(s);
    return nd_runtime_track(out);
}

nd_array *nd_fft_fftshift(nd_array *x, int axes_len, const int *axes) {
    ND_API_GUARD();
    return shift("nd_fft_fftshift", x, axes_len, axes, 0);
}

nd_array *nd_fft_ifftshift(nd_array *x, int axes_len, const int *axes) {
    ND_API_GUARD();
    return shift("nd_fft_ifftshift", x, axes_len, axes, 1);
}
