/* Independent references for the sorting suites (test_sorting.c,
 * test_order_stats.c, test_random_perm.c): NumPy's sort order by plain
 * comparisons of values (not nd's keys), a stable merge sort, and the rows
 * of a reference array along an axis. */
#ifndef ND_TESTS_SORT_REF_H
#define ND_TESTS_SORT_REF_H

#include "common.h"

/* NumPy's order of elements i and j of a: -1, 0, 1 (NaN after
 * everything, NaNs equal, -0.0 == +0.0). */
static inline int sref_cmp(const ref_arr *a, int64_t i, int64_t j) {
    if (ref_is_float(a->dt)) {
        double x = ref_getd(a, i), y = ref_getd(a, j);
        int nx = isnan(x), ny = isnan(y);
        if (nx || ny) return nx - ny;
        return x < y ? -1 : x > y;
    }
    if (ref_is_signed(a->dt)) {
        int64_t x = (int64_t)ref_getu(a, i), y = (int64_t)ref_getu(a, j);
        return x < y ? -1 : x > y;
    }
    uint64_t x = ref_getu(a, i), y = ref_getu(a, j);
    return x < y ? -1 : x > y;
}

/* Stable merge sort of pos[0..n) (flat indices into a) by sref_cmp. */
static inline void sref_sort(const ref_arr *a, int64_t *pos, int64_t n) {
    if (n < 2) return;
    int64_t *tmp = malloc((size_t)n * sizeof *tmp);
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = sref_cmp(a, pos[j], pos[i]) < 0 ? pos[j++] : pos[i++];
            while (i < mid) tmp[k++] = pos[i++];
            while (j < hi) tmp[k++] = pos[j++];
        }
        memcpy(pos, tmp, (size_t)n * sizeof *tmp);
    }
    free(tmp);
}

/* Flat indices of row r along axis ax of a (rows numbered row-major over
 * the other axes); returns the row's length. */
static inline int64_t sref_row(const ref_arr *a, int ax, int64_t r, int64_t *pos) {
    int64_t other[ND_MAX_DIMS], idx[ND_MAX_DIMS];
    int no = 0;
    for (int d = 0; d < a->ndim; d++)
        if (d != ax) other[no++] = a->shape[d];
    ref_unravel(r, no, other, idx);
    int64_t full[ND_MAX_DIMS];
    for (int d = 0, k = 0; d < a->ndim; d++) full[d] = d == ax ? 0 : idx[k++];
    int64_t n = a->shape[ax];
    for (int64_t i = 0; i < n; i++) {
        full[ax] = i;
        pos[i] = ref_ravel(full, a->ndim, a->shape);
    }
    return n;
}

/* The bits of element i (itemsize bytes, zero-extended). */
static inline uint64_t sref_bits(const ref_arr *a, int64_t i) {
    uint64_t b = 0;
    memcpy(&b, a->data + (size_t)i * ref_itemsize(a->dt), ref_itemsize(a->dt));
    return b;
}
static inline void sref_set_bits(ref_arr *a, int64_t i, uint64_t b) {
    memcpy(a->data + (size_t)i * ref_itemsize(a->dt), &b, ref_itemsize(a->dt));
}
/* The dtype's default NaN, as NumPy's sort returns every NaN. */
static inline uint64_t sref_qnan(nd_dtype t) {
    switch (t) {
    case ND_FLOAT16: return 0x7E00;
    case ND_BFLOAT16: return 0x7FC0;
    case ND_FLOAT32: return 0x7FC00000u;
    default: return 0x7FF8000000000000ull;
    }
}

/* Puts NaNs of both signs and a payload, infinities and both zeros at
 * random places of a float array (ties and edge values for every test). */
static inline void sref_specials(ndt_rng *r, ref_arr *a) {
    if (!ref_is_float(a->dt) || a->size == 0) return;
    uint64_t s16[] = {0x7E00, 0xFE00, 0x7C01, 0x7C00, 0xFC00, 0x8000, 0x0000};
    uint64_t sbf[] = {0x7FC0, 0xFFC0, 0x7F81, 0x7F80, 0xFF80, 0x8000, 0x0000};
    uint64_t s32[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7F800000u, 0xFF800000u, 0x80000000u, 0};
    uint64_t s64[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0x7FF0000000000000ull,
                      0xFFF0000000000000ull, 0x8000000000000000ull, 0};
    const uint64_t *s = a->dt == ND_FLOAT16 ? s16 : a->dt == ND_BFLOAT16 ? sbf : a->dt == ND_FLOAT32 ? s32 : s64;
    int64_t count = a->size / 4 + 1;
    for (int64_t k = 0; k < count; k++) sref_set_bits(a, ndt_int(r, 0, a->size - 1), s[ndt_int(r, 0, 6)]);
}

#endif
