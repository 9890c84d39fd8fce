/* From CUB's radix order of float bits to nd's order (sort_keys.h): the
 * CUDA plugin (prims/sort.cu) sorts float values with CUB as they are,
 * with no pass before or after, and then fixes up only the NaNs; the
 * sorting suite checks this step on the host (tests/test_sorting.c).
 *
 * CUB orders a float's bits b by nd_sort_raw_key: -0.0 as +0.0, then a
 * positive value with its sign bit set and a negative one with all bits
 * flipped; equal keys keep their order. That is nd's order (-0.0 equal to
 * +0.0, stable, bits kept) except for NaNs: the negative ones (sign bit
 * set) come first, before -inf, and the positive ones last, after +inf,
 * each by payload, where nd wants every NaN last as the default NaN. So a
 * row sorted by CUB is: a leading run of `lead` negative NaNs, the
 * non-NaN values in nd's order, positive NaNs from `tail` on; nd's row is
 * the elements [lead, tail) moved to the front and n - (tail - lead)
 * default NaNs after them. Without NaNs (lead = 0, tail = n) it is the
 * row as CUB left it.
 *
 * lead and tail are found by a search with T probes per step (T threads
 * of a block; the host tests run it with any T): the predicate holds from
 * some index on; nd_sort_probe_at gives probe t's index in [lo, hi) and
 * nd_sort_probe_next narrows [lo, hi] from the number of probes where it
 * did not hold; the first index where it holds is lo once lo == hi. */
#ifndef ND_COMMON_SORT_RAW_H
#define ND_COMMON_SORT_RAW_H

#include "common/sort_keys.h"

/* CUB's key of float bits b (the low 8 * f.width). */
ND_SK_FN uint64_t nd_sort_raw_key(uint64_t b, nd_sort_key_info f) {
    uint64_t sign = (uint64_t)1 << (8 * f.width - 1);
    uint64_t all = f.width == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * f.width)) - 1);
    if (b == sign) b = 0;
    return (b & sign) ? (~b & all) : (b | sign);
}

/* Whether b is a NaN with the sign bit set (negative 1) or clear (0). */
ND_SK_FN int nd_sort_raw_nan(uint64_t b, nd_sort_key_info f, int negative) {
    uint64_t sign = (uint64_t)1 << (8 * f.width - 1);
    return (b & ~sign) > f.exp_mask && ((b & sign) != 0) == (negative != 0);
}

/* The predicates of the two searches in a row sorted by CUB: "not a
 * negative NaN" first holds at lead, "a positive NaN" at tail. */
ND_SK_FN int nd_sort_raw_past_lead(uint64_t b, nd_sort_key_info f) { return !nd_sort_raw_nan(b, f, 1); }
ND_SK_FN int nd_sort_raw_in_tail(uint64_t b, nd_sort_key_info f) { return nd_sort_raw_nan(b, f, 0); }

/* Probe t of T in [lo, hi) (lo < hi): non-decreasing in t. */
ND_SK_FN int64_t nd_sort_probe_at(int64_t lo, int64_t hi, int t, int T) {
    return lo + (int64_t)(t + 1) * (hi - lo) / (T + 1);
}

/* [lo, hi] after a step in which the predicate failed at `fails` of the T
 * probes (the first ones, as it is monotone). */
ND_SK_FN void nd_sort_probe_next(int64_t *lo, int64_t *hi, int fails, int T) {
    int64_t l = *lo, h = *hi;
    *lo = fails > 0 ? nd_sort_probe_at(l, h, fails - 1, T) + 1 : l;
    *hi = fails < T ? nd_sort_probe_at(l, h, fails, T) : h;
}

/* Element i of nd's row, from the row sorted by CUB: the bits to store. */
ND_SK_FN uint64_t nd_sort_raw_fixed(const void *row, int64_t i, int64_t lead, int64_t tail, nd_sort_key_info f) {
    if (i < tail - lead) return nd_sort_load_bits((const char *)row + (i + lead) * f.width, f);
    return f.qnan;
}

#endif
