/* The error messages of the dense linear algebra routines
 * (common/lib_linalg.h), one wording on every backend. */
#include "common/lib_linalg.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "common/error.h"

nd_status nd_lib_la_error(int fn, int64_t index, int64_t batch, int64_t info) {
    static const char *const names[ND_LA_FN_COUNT] = {"nd_linalg_solve", "nd_linalg_inv", "nd_linalg_cholesky",
                                                      "nd_linalg_svd", "nd_linalg_eigh", "nd_linalg_eig"};
    const char *name = fn >= 0 && fn < ND_LA_FN_COUNT ? names[fn] : "nd_linalg";
    char which[96] = "";
    if (batch > 1) snprintf(which, sizeof which, " (matrix %lld of the batch of %lld)", (long long)index,
                            (long long)batch);
    switch (fn) {
    case ND_LA_FN_SOLVE:
    case ND_LA_FN_INV:
        return nd_error_set(ND_ERR_LINALG, "%s: singular matrix%s: U[%lld, %lld] of its LU factorisation is exactly "
                            "zero (use nd_linalg_lstsq or nd_linalg_pinv for a least-squares answer)", name, which,
                            (long long)info - 1, (long long)info - 1);
    case ND_LA_FN_CHOLESKY:
        return nd_error_set(ND_ERR_LINALG, "%s: matrix is not positive definite%s: its leading minor of order "
                            "%lld is not positive", name, which, (long long)info);
    default:
        if (info == ND_LA_INFO_NAN)
            return nd_error_set(ND_ERR_LINALG, "%s: %s%s: the matrix holds NaN%s", name,
                                fn == ND_LA_FN_EIG ? "array must not contain infs or NaNs" : "did not converge", which,
                                fn == ND_LA_FN_EIG ? " or inf" : "");
        if (fn == ND_LA_FN_EIG)
            return nd_error_set(ND_ERR_LINALG, "%s: eigenvalues did not converge%s (the QR algorithm failed to find "
                                "eigenvalue %lld and later; are there huge or tiny values?)", name, which,
                                (long long)info - 1);
        return nd_error_set(ND_ERR_LINALG, "%s: did not converge%s (%lld off-diagonal elements did not reach "
                            "zero; are there NaN or inf values?)", name, which, (long long)info);
    }
}

static double eig_at(const void *w, int f64, int64_t i) {
    return f64 ? ((const double *)w)[i] : (double)((const float *)w)[i];
}

int nd_lib_eigh_order(const void *w, int f64, int64_t n, int64_t *perm) {
    int sorted = 1;
    for (int64_t i = 0; i < n; i++) {
        if (eig_at(w, f64, i) != eig_at(w, f64, i)) return 0;
        if (i > 0 && eig_at(w, f64, i - 1) > eig_at(w, f64, i)) sorted = 0;
    }
    if (sorted) return 0;
    int64_t *tmp = nd_malloc((size_t)n * sizeof *tmp);
    if (!tmp) return -1;
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    /* bottom-up merge sort of the indices: stable (the left run wins ties) */
    int64_t *src = perm, *dst = tmp;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = eig_at(w, f64, src[j]) < eig_at(w, f64, src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != perm)
        for (int64_t i = 0; i < n; i++) perm[i] = src[i];
    free(tmp);
    return 1;
}
